"""What the Tracy tests share: finding the real Tracy tools (or skipping),
recording a program with tracy-capture, and reading tracy-csvexport."""

import csv
import io
import os
import socket
import subprocess
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def tools(tracy_dir, client=False, why=""):
    """(tracy-capture, tracy-csvexport, libTracyClient.so) in tracy_dir, or
    exit 77 with one line when they (or the client, if asked) are not there."""
    capture = os.path.join(tracy_dir, "bin", "tracy-capture")
    csvexport = os.path.join(tracy_dir, "bin", "tracy-csvexport")
    lib = os.path.join(tracy_dir, "lib", "libTracyClient.so")
    if not (os.access(capture, os.X_OK) and os.access(csvexport, os.X_OK)) or (
            client and not os.path.exists(lib)):
        print("SKIP: no tracy-capture/tracy-csvexport%s in %s (build them from Tracy "
              "v0.14.0's sources as README.md, \"Tracy\", says, or set -Dtracy_dir)%s"
              % ("/libTracyClient.so" if client else "", tracy_dir, why))
        sys.exit(77)
    return capture, csvexport, lib


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def record(capture, port, trace, cmd, env, timeout=60):
    """Runs tracy-capture on port into trace, then cmd; returns cmd's
    CompletedProcess (its stderr echoed) and tracy-capture's output once the
    capture has ended, or
    fails when either does not finish or tracy-capture fails."""
    cap = subprocess.Popen([capture, "-a", "127.0.0.1", "-p", str(port), "-o", trace, "-f"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        cap.kill()
        fail("%s did not finish within %d s" % (os.path.basename(cmd[0]), timeout))
    sys.stderr.write(run.stderr)
    try:
        cap_out, _ = cap.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        cap.kill()
        fail("tracy-capture did not finish within 30 s of the program")
    if run.returncode != 0 or cap.returncode != 0 or not os.path.exists(trace):
        fail("exit codes: program %d, tracy-capture %d: %s"
             % (run.returncode, cap.returncode, cap_out[-1000:]))
    return run, cap_out


def csv_rows(csvexport, flag, trace):
    """tracy-csvexport's table for flag (-g GPU zones, -u CPU zones, -m
    messages) as dicts."""
    out = subprocess.run([csvexport, flag, trace], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        fail("tracy-csvexport %s: exit %d: %s" % (flag, out.returncode, out.stderr[-500:]))
    return list(csv.DictReader(io.StringIO(out.stdout)))
