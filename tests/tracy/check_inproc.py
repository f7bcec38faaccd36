#!/usr/bin/env python3
"""Into the program's own Tracy client, checked with the real Tracy tools.

inproc_app (linked with libTracyClient.so) makes CPU zones of its own and
has the Tracy sink (auto mode) feed GPU zones into its client; tracy-capture
records it. The capture must hold every GPU zone with its name and count,
the program's own GPU zone too (context ids shared through Tracy's counter,
so neither overwrites the other), and each GPU zone where the program knows
it ran: its offset from the start of its frame's CPU zone and its duration
as sent, within TOL_NS, and inside that CPU zone: gpuzones' host-clock
times land on Tracy's CPU clock (TSC or CLOCK_MONOTONIC_RAW).

Usage: check_inproc.py TRACY_DIR APP   (APP empty: libTracyClient.so was
not found when configuring; the test is skipped).
"""
import collections
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracytools import csv_rows, fail, free_port, record, tools  # noqa: E402

TOL_NS = 2000  # 2 us past the pin's stated uncertainty

def main():
    tracy_dir, app = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    if not app:
        print("SKIP: libTracyClient.so not in %s when configured (build it from Tracy "
              "v0.14.0's sources as README.md, \"Tracy\", says, then reconfigure)" % tracy_dir)
        sys.exit(77)
    capture, csvexport, _ = tools(tracy_dir)
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "x.tracy")
        port = free_port()
        env = dict(os.environ, TRACY_PORT=str(port), GPUZONES_TRACY="auto")
        env.pop("GPUZONES_TRACY_PORT", None)
        run, _ = record(capture, port, trace, [app], env)
        if "the program's own Tracy client" not in run.stderr:
            fail("no 'gpuzones:' line naming the program's own Tracy client")

        m = re.search(r"pinned to Tracy's clock within (\d+) ns", run.stderr)
        if not m:
            fail("no 'pinned to Tracy's clock within N ns' line")
        pin_ns = int(m.group(1))
        windows, want = {}, collections.defaultdict(list)
        for line in run.stdout.splitlines():
            f = line.split(" ")
            if f[0] == "X":
                fail(line)
            if f[0] == "W":
                windows[int(f[1])] = (int(f[2]), int(f[3]))
            elif f[0] == "G":
                want[" ".join(f[1:-3])].append((int(f[-3]), int(f[-2]), int(f[-1])))

        cpu = sorted((int(r["ns_since_start"]), int(r["exec_time_ns"]))
                     for r in csv_rows(csvexport, "-u", trace) if r["name"] == "app frame")
        if len(cpu) != len(windows):
            fail("%d 'app frame' CPU zones in the capture, %d made" % (len(cpu), len(windows)))
        got = collections.defaultdict(list)
        for r in csv_rows(csvexport, "-g", trace):
            got[r["name"]].append((int(r["Time from start of program"]),
                                   int(r["GPU execution time"])))
        if len(got.get("own gpu zone", [])) != 1 or got["own gpu zone"][0][1] != 250000:
            fail("the program's own GPU zone: %r" % got.get("own gpu zone"))
        worst = 0
        for name, zones in want.items():
            have = sorted(got.get(name, []))
            if len(have) != len(zones):
                fail("%r: %d GPU zones in the capture, %d sent" % (name, len(have), len(zones)))
            for (frame, begin, dur), (t_begin, t_dur) in zip(sorted(zones), have):
                cpu_begin, cpu_dur = cpu[frame]
                w_begin, w_end = windows[frame]
                # Tracy's CPU zone starts before the program reads the clock
                # and ends after: its extra length bounds where w_begin is.
                slack = max(0, cpu_dur - (w_end - w_begin))
                off_want = begin - w_begin
                off_got = t_begin - cpu_begin
                off_err = off_got - off_want
                # The pin's uncertainty: GPU zones may land up to pin_ns late.
                err = max(0, -off_err, off_err - slack - pin_ns) + abs(t_dur - dur)
                worst = max(worst, err)
                if err > TOL_NS:
                    fail("%r frame %d: offset %d ns (sent %d), duration %d ns (sent %d)"
                         % (name, frame, off_got, off_want, t_dur, dur))
                if t_begin < cpu_begin or t_begin + t_dur > cpu_begin + cpu_dur:
                    fail("%r frame %d: [%d, %d] outside its CPU zone [%d, %d]"
                         % (name, frame, t_begin, t_begin + t_dur, cpu_begin, cpu_begin + cpu_dur))
            print("ok: %d %r GPU zones inside their CPU zones" % (len(zones), name))
        print("ok: the program's own GPU zone kept; worst time error %d ns past the pin's "
              "uncertainty (%d ns; limit %d)" % (worst, pin_ns, TOL_NS))

main()
