#!/usr/bin/env python3
"""Listen mode's wait for a profiler at exit, with the real tracy-capture.

GPUZONES_TRACY_EXIT_WAIT_MS=5000: the program waits up to 5 s at its end
for a profiler; the wait is progress, not a stuck worker (whose guard gives
up after 2 s). tracy-capture is started only 3 s into the wait and must
still get everything, the program must then end as it would have (exit 0;
with --signal, death by SIGINT sent while it loops), with the summary and
"the profiler took" line.

Usage: check_exit_wait.py TRACY_DIR GPUZONES_TOOL SAMPLE [--signal]
Exits 77 (skipped) when the Tracy tools are not built in TRACY_DIR.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracytools import csv_rows, fail, free_port, tools  # noqa: E402


def default_signals():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def main():
    tracy_dir, tool, sample = sys.argv[1:4]
    by_signal = "--signal" in sys.argv[4:]
    capture, csvexport, _ = tools(tracy_dir)
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "x.tracy")
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUZONES_")}
        env.update(GPUZONES_TRACY_PORT=str(port), GPUZONES_TRACY_EXIT_WAIT_MS="5000",
                   GPUZONES_OUTPUT=os.path.join(tmp, "x.json"))
        env.setdefault("VK_ICD_FILENAMES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
        args = ["--frames", "1000000", "--sleep-ms", "5"] if by_signal else []
        t0 = time.monotonic()
        prog = subprocess.Popen([tool, "run", "--tracy", "--", sample] + args, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=default_signals)
        if by_signal:
            time.sleep(1.0)
            prog.send_signal(signal.SIGINT)
            end = time.monotonic()
        else:
            # The sample's 5 frames take well under a second: by then it
            # waits at its exit.
            time.sleep(1.0)
            end = time.monotonic()
        if prog.poll() is not None:
            fail("the program ended before its wait for a profiler (%d): %s"
                 % (prog.returncode, prog.stderr.read()[-1500:]))
        time.sleep(3.0 - (time.monotonic() - end))
        if prog.poll() is not None:
            fail("the program ended (%d) less than 3 s into its 5 s wait for a profiler: %s"
                 % (prog.returncode, prog.stderr.read()[-1500:]))
        cap = subprocess.Popen([capture, "-a", "127.0.0.1", "-p", str(port), "-o", trace, "-f"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            out, err = prog.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            prog.kill()
            cap.kill()
            fail("the program did not end within 30 s of tracy-capture's start")
        took = time.monotonic() - t0
        try:
            cap_out, _ = cap.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            cap.kill()
            sys.stderr.write(err)
            fail("tracy-capture found nothing to connect to")
        sys.stderr.write(err)
        want = -signal.SIGINT if by_signal else 0
        print("the program ended by %d after %.1f s (wanted %d); tracy-capture %d"
              % (prog.returncode, took, want, cap.returncode))
        if prog.returncode not in (want, 128 - want):
            fail("the program ended by %d, not %d" % (prog.returncode, want))
        if "stuck" in err:
            fail("the wait for a profiler was taken for a stuck worker")
        if "gpuzones: Tracy: the profiler took" not in err:
            fail("no 'the profiler took' line: the profiler that came 3 s into the wait was not served")
        if "gpuzones: trace written to" not in err:
            fail("no summary")
        if cap.returncode != 0 or not os.path.exists(trace):
            fail("tracy-capture failed: %s" % cap_out[-1000:])
        gpu = csv_rows(csvexport, "-g", trace)
        print("ok: tracy-capture got %d GPU zones" % len(gpu))
        if not gpu:
            fail("the capture has no GPU zones")


main()
