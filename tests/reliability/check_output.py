#!/usr/bin/env python3
"""Outputs that must neither hang the program nor destroy its own output,
on the Vulkan sample under the layer:

  fifo-no-reader   GPUZONES_OUTPUT is a FIFO nobody opens: the program
                   exits within a few seconds, with a gpuzones: line about
                   the FIFO, and its trace goes to $TMPDIR instead.
  fifo-stalled     a reader opens the FIFO and never reads: the program
                   still exits within a few seconds and says the rest of
                   the trace was given up.
  fd-stalled       GPUZONES_OUTPUT=/dev/fd/N, N a pipe nobody reads (not the
                   program's stdout: its own lines would block there too once
                   the trace has filled the pipe): the worker blocks in a write
                   to the program's own (blocking) fd; the exit gives up on it
                   within a few seconds and says so.
  dev-stdout       GPUZONES_OUTPUT=/dev/stdout with stdout redirected to a
                   file: every line the program (a shell around the sample)
                   printed survives, and the trace's events are there too.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

LAYER = "VK_LAYER_GPUZONES_timing"


def env_for(layer_dir, output, tmp):
    env = dict(os.environ)
    env.update(VK_ADD_LAYER_PATH=layer_dir, VK_INSTANCE_LAYERS=LAYER, GPUZONES_OUTPUT=output,
               TMPDIR=tmp)
    env.setdefault("VK_ICD_FILENAMES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
    return env


def fail(msg):
    print("FAIL: " + msg)
    return 1


def run_timed(cmd, env, limit, **kw):
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, env=env, stderr=subprocess.PIPE, text=True, timeout=limit, **kw)
    except subprocess.TimeoutExpired:
        return None, limit
    return r, time.monotonic() - start


def baseline(args, tmp, frames):
    """How long the program takes with a plain trace file, for the bound."""
    env = env_for(args.layer_dir, os.path.join(tmp, "plain.json"), tmp)
    r, took = run_timed([args.program, "--frames", str(frames)], env, 120,
                        stdout=subprocess.DEVNULL)
    if r is None or r.returncode != 0:
        return None
    return took


def fifo_no_reader(args, tmp):
    base = baseline(args, tmp, 3)
    if base is None:
        return fail("the sample does not run with a plain trace file")
    fifo = os.path.join(tmp, "fifo", "trace.json")
    os.mkdir(os.path.dirname(fifo))
    os.mkfifo(fifo)
    r, took = run_timed([args.program, "--frames", "3"], env_for(args.layer_dir, fifo, tmp),
                        base + 30, stdout=subprocess.DEVNULL)
    if r is None:
        return fail("with a FIFO nobody reads, the program did not exit in %.0f s" % took)
    print("FIFO without a reader: exit %d after %.2f s (%.2f s with a file)"
          % (r.returncode, took, base))
    if r.returncode != 0:
        return fail("exit %d: %s" % (r.returncode, r.stderr[-800:]))
    if took > base + 3:
        return fail("exit took %.2f s, %.2f s more than with a file (at most 3 s)"
                    % (took, took - base))
    lines = [l for l in r.stderr.splitlines() if l.startswith("gpuzones:") and fifo in l]
    if not lines:
        return fail("no gpuzones: line names the FIFO:\n" + r.stderr[-1500:])
    print(lines[0])
    if not os.path.exists(os.path.join(tmp, "trace.json")):
        return fail("the trace did not fall back to $TMPDIR")
    return 0


def fifo_stalled(args, tmp):
    frames = 300  # a trace well over a pipe's 64 KiB
    base = baseline(args, tmp, frames)
    if base is None:
        return fail("the sample does not run with a plain trace file")
    fifo = os.path.join(tmp, "stalled.json")
    os.mkfifo(fifo)
    # A reader that opens the FIFO and never reads from it.
    reader = subprocess.Popen([sys.executable, "-c",
                               "import sys,time; f=open(sys.argv[1],'rb'); time.sleep(120)",
                               fifo])
    try:
        r, took = run_timed([args.program, "--frames", str(frames)],
                            env_for(args.layer_dir, fifo, tmp), base + 60,
                            stdout=subprocess.DEVNULL)
    finally:
        reader.kill()
        reader.wait()
    if r is None:
        return fail("with a FIFO whose reader never reads, the program did not exit")
    print("FIFO whose reader never reads: exit %d after %.2f s (%.2f s with a file)"
          % (r.returncode, took, base))
    if r.returncode != 0:
        return fail("exit %d: %s" % (r.returncode, r.stderr[-800:]))
    if took > base + 3:
        return fail("exit took %.2f s more than with a file (at most 3 s)" % (took - base))
    lines = [l for l in r.stderr.splitlines() if l.startswith("gpuzones:") and "given up" in l]
    if not lines:
        return fail("no gpuzones: line says what was given up:\n" + r.stderr[-1500:])
    print(lines[0])
    return 0


def fd_stalled(args, tmp):
    frames = 300  # a trace well over a pipe's 64 KiB
    base = baseline(args, tmp, frames)
    if base is None:
        return fail("the sample does not run with a plain trace file")
    rd, wr = os.pipe()
    try:
        r, took = run_timed([args.program, "--frames", str(frames)],
                            env_for(args.layer_dir, "/dev/fd/%d" % wr, tmp), base + 60,
                            stdout=subprocess.DEVNULL, pass_fds=(wr,))
    finally:
        os.close(wr)
        os.close(rd)
    if r is None:
        return fail("with the output a pipe nobody reads, the program did not exit")
    print("output a pipe nobody reads: exit %d after %.2f s (%.2f s with a file)"
          % (r.returncode, took, base))
    if r.returncode != 0:
        return fail("exit %d: %s" % (r.returncode, r.stderr[-800:]))
    # The exit gives up after 2 s without progress; the rest of the margin
    # is the difference between two runs of the program on a loaded
    # machine under a sanitizer (seen: 2.5 s).
    if took > base + 5:
        return fail("exit took %.2f s more than with a file (at most 5 s)" % (took - base))
    lines = [l for l in r.stderr.splitlines() if l.startswith("gpuzones:") and "stuck" in l]
    if not lines:
        return fail("no gpuzones: line says the exit went on without the worker:\n"
                    + r.stderr[-1500:])
    print(lines[0])
    return 0


def dev_stdout(args, tmp):
    out = os.path.join(tmp, "stdout.txt")
    script = ('echo "program line 1"; echo "program line 2"; "$0" --frames 3; '
              'echo "program line 3"')
    with open(out, "w") as f:
        r, took = run_timed(["sh", "-c", script, args.program],
                            env_for(args.layer_dir, "/dev/stdout", tmp), 120, stdout=f)
    if r is None or r.returncode != 0:
        return fail("the program failed: %s" % (r.stderr[-800:] if r else "timeout"))
    text = open(out).read()
    missing = [l for l in ("program line 1", "program line 2", "program line 3")
               if l not in text.splitlines()]
    if missing:
        return fail("the program's own lines were lost: %s; stdout file:\n%s"
                    % (missing, text[:1500]))
    for needle in ('"name":"gpuzones_totals"', '"cat":"gpu"', '"name":"process_name"'):
        if needle not in text:
            return fail("the trace events (%s) are not in the stdout file" % needle)
    print("stdout redirected to a file: the program's 3 lines and the trace (%d bytes) are all"
          " there" % len(text))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--layer-dir", required=True)
    ap.add_argument("--scenario", required=True,
                    choices=["fifo-no-reader", "fifo-stalled", "fd-stalled", "dev-stdout"])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gz-output-") as tmp:
        return {"fifo-no-reader": fifo_no_reader, "fifo-stalled": fifo_stalled,
                "fd-stalled": fd_stalled,
                "dev-stdout": dev_stdout}[args.scenario](args, tmp)


if __name__ == "__main__":
    sys.exit(main())
