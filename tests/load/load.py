#!/usr/bin/env python3
"""Load test of the client: gz-test-load pushes THREADS x ZONES zones at a
steady rate; the trace must hold each exactly once, on its thread's track,
in order, at its exact time (the clock is the host's, so conversion is the
identity), and the totals must say 0 dropped.  The trace is read one line
at a time (one event per line): a million zones are ~150 MB of JSON.

    load.py PROGRAM THREADS ZONES RATE"""
import json
import os
import re
import subprocess
import sys
import tempfile

prog, threads, zones, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
failures = []
with tempfile.TemporaryDirectory(prefix="gz-load-") as tmp:
    trace = os.path.join(tmp, "load.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUZONES_")}
    env.update(GPUZONES_OUTPUT=trace, GPUZONES_SUMMARY="1")
    p = subprocess.run([prog, str(threads), str(zones), str(rate)], env=env, capture_output=True,
                       text=True, timeout=600)
    print(p.stdout.strip())
    print("\n".join(l for l in p.stderr.splitlines() if "track" in l or "dropped" in l))
    if p.returncode:
        sys.exit("FAIL: the program exited %d: %s" % (p.returncode, p.stderr[-2000:]))
    base = int(re.search(r"^base (\d+)", p.stdout, re.M).group(1))
    tid_of = {}       # track tid -> thread index (from the thread_name metadata)
    next_i = {}       # thread index -> the next zone index expected
    totals = None
    size = os.path.getsize(trace)
    with open(trace) as f:
        for line in f:
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            ev = json.loads(line)
            if ev.get("ph") == "M" and ev.get("name") == "thread_name":
                m = re.match(r"load track (\d+)$", ev["args"]["name"])
                if m:
                    tid_of[ev["tid"]] = int(m.group(1))
            elif ev.get("ph") == "M" and ev.get("name") == "gpuzones_totals":
                totals = ev["args"]
            elif ev.get("ph") == "X" and ev.get("cat") == "gpu":
                t = tid_of.get(ev["tid"])
                if t is None or ev["name"] != "load %d" % t:
                    failures.append("zone %r on an unknown track %s" % (ev["name"], ev["tid"]))
                    break
                i = next_i.get(t, 0)
                want_ts = (base + 2000 * i) / 1000.0
                if abs(ev["ts"] - want_ts) > 0.0015 or abs(ev["dur"] - 1.0) > 0.0015:
                    failures.append("thread %d zone %d at ts %.3f dur %.3f, expected %.3f dur 1.000"
                                    % (t, i, ev["ts"], ev["dur"], want_ts))
                    break
                next_i[t] = i + 1
    got = sum(next_i.values())
    print("trace: %.1f MB, %d zones (%.0f bytes each); totals %s" % (size / 1e6, got, size / max(got, 1), totals))
    if got != threads * zones:
        failures.append("%d zones in the trace, expected %d: per thread %s"
                        % (got, threads * zones, dict(sorted(next_i.items()))))
    if not totals or totals.get("zones_dropped") or totals.get("items_dropped"):
        failures.append("the totals say something was dropped: %s" % totals)
    elif totals.get("zones_written") != threads * zones:
        failures.append("totals say %s zones written" % totals.get("zones_written"))
    elif totals.get("zones_produced") != threads * zones:
        failures.append("totals say %s zones produced" % totals.get("zones_produced"))
for f in failures:
    print("FAIL: " + f)
print("pass" if not failures else "")
sys.exit(1 if failures else 0)
