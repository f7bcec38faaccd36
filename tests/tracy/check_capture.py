#!/usr/bin/env python3
"""Listen mode against the real Tracy v0.14.0 tools.

tracy-capture records the sink driver (drive_sink.c) through gpuzones'
own Tracy client; tracy-csvexport then lists what the profiler got: GPU
zones (-g), CPU zones (-u) and messages (-m). Every zone and message the
driver says it sent must be there, no other, with the same name, and with
times that agree exactly once shifted by one constant (the profiler counts
from the program's start, the driver from its own base): a zone whose end
went to the wrong begin (broken nesting) would show the wrong duration.

Usage: check_capture.py TRACY_DIR DRIVER [proto-mismatch]
Exits 77 (skipped) when the Tracy tools are not built in TRACY_DIR.
"""
import collections
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracytools import csv_rows, fail, free_port, record, tools  # noqa: E402

def main():
    tracy_dir, driver = sys.argv[1], sys.argv[2]
    capture, csvexport, _ = tools(tracy_dir)

    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "x.tracy")
        port = free_port()
        env = dict(os.environ, GPUZONES_TRACY="listen", GPUZONES_TRACY_PORT=str(port),
                   GPUZONES_TRACY_EXIT_WAIT_MS="20000")
        drv, cap_out = record(capture, port, trace, [driver], env)
        if "the profiler took" not in drv.stderr:
            fail("the sink did not say the profiler took the data")

        want_gpu, want_cpu, want_msg = [], [], []
        for line in drv.stdout.splitlines():
            f = line.split(" ")
            if f[0] == "G":
                want_gpu.append((" ".join(f[1:-2]), int(f[-2]), int(f[-1])))
            elif f[0] == "C":
                want_cpu.append((" ".join(f[1:-3]), int(f[-3]), int(f[-2]), int(f[-1])))
            elif f[0] == "M":
                want_msg.append((" ".join(f[1:-1]), int(f[-1])))

        gpu = [(r["name"], int(r["Time from start of program"]), int(r["GPU execution time"]))
               for r in csv_rows(csvexport, "-g", trace)]
        cpu_rows = csv_rows(csvexport, "-u", trace)
        cpu = [(r["name"], int(r["ns_since_start"]), int(r["exec_time_ns"])) for r in cpu_rows]
        msgs = [(r["MessageName"], int(r["total_ns"])) for r in csv_rows(csvexport, "-m", trace)]

        # One constant shift between the driver's base and the profiler's
        # start: take it from the first GPU zone, then everything must agree.
        first = min(want_gpu, key=lambda z: z[1])
        cands = [g for g in gpu if g[0] == first[0] and g[2] == first[2]]
        if not cands:
            fail("GPU zone %r not in the capture (%d GPU zones there)" % (first[0], len(gpu)))
        shift = min(c[1] for c in cands) - first[1]

        def compare(what, want, got):
            w = collections.Counter(want)
            g = collections.Counter(got)
            if w != g:
                missing = list((w - g).elements())[:5]
                extra = list((g - w).elements())[:5]
                fail("%s: %d expected, %d in the capture; missing %s; unexpected %s"
                     % (what, len(want), len(got), missing, extra))
            print("ok: %d %s, names, counts and times (exact, shift %d ns)"
                  % (len(want), what, shift))

        compare("GPU zones", [(n, b + shift, d) for n, b, d in want_gpu], gpu)
        compare("CPU zones", [(n, b + shift, d) for n, _, b, d in want_cpu], cpu)
        compare("messages", [(n, t + shift) for n, t in want_msg], msgs)
        # Threads: the CPU zones' thread column is Tracy's own thread index;
        # the two driver threads must stay two.
        threads = {r["thread"] for r in cpu_rows}
        if len(threads) != len({z[1] for z in want_cpu}):
            fail("CPU zones on %d threads, expected %d" % (len(threads), len({z[1] for z in want_cpu})))
        print("ok: CPU zones on %d threads" % len(threads))
        # tracy-capture's own count: the welcome message's two frame events
        # (program start, end of its initialisation) and every frame mark.
        marks = sum(1 for line in drv.stdout.splitlines() if line.startswith("F "))
        m = re.search(r"Frames: (\d+)", cap_out.replace("\r", "\n"))
        if not m or int(m.group(1)) != marks + 2:
            fail("tracy-capture counted %s frames, expected %d marks + 2"
                 % (m.group(1) if m else "no", marks))
        print("ok: %d frame marks" % marks)

main()
