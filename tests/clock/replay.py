#!/usr/bin/env python3
"""Re-evaluates a kept clock run (accuracy_table.py or clockcheck.py with
--record) with the clock model of a build: the run's recorded model inputs
(GPUZONES_CLOCK_RECORD) are replayed through that build's model
(gz-clock-replay), each GPU zone of the trace takes the times and the doubt
the replayed model gives, and the run is checked again as clockcheck.py
checks it, against the same ground truth (the fault layer's log).

    replay.py --dir DIR --scenario steps-busy-drift --seed 201 [--replay BIN]

So a change to the model can be judged on the very inputs of runs that
failed, and on many recorded runs at once, without running them again.
"""
import argparse
import math
import os
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import clockcheck  # noqa: E402
from clockcheck import gztrace  # noqa: E402


def replayed_times(replay_bin, record):
    """{host ns the run wrote: [(host ns now, doubt ns now), ...]} in the
    order converted: two times the run wrote alike may differ now."""
    p = subprocess.run([replay_bin, record], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError("%s %s: exit %d: %s" % (replay_bin, record, p.returncode,
                                                    p.stderr.strip()))
    out = {}
    for line in p.stdout.splitlines():
        then, now, doubt = (int(x) for x in line.split())
        out.setdefault(then, []).append((now, doubt))
    return out


def reevaluate(directory, name, seed, replay_bin):
    """(result, failures) of the kept run in directory, its zones as the
    replayed model places them."""
    clockcheck.apply_seed(name, seed)
    sc = clockcheck.SCENARIOS[name]
    base = os.path.join(directory, name)
    times = replayed_times(replay_bin, base + ".rec")
    trace = gztrace.load(base + ".json", strict=False)
    pairs = clockcheck.read_log(base + ".log")
    with open(base + ".stderr") as f:
        banner = clockcheck.fault_banner(f.read())
    unmatched = 0
    for z in trace.gpu_zones():
        doubt = 0
        for key in ("_ts", "_end"):
            # The trace holds us with 3 decimals: the ns, give or take one.
            ns = int(round(z[key]))
            hit = next((ns + k for k in (0, -1, 1) if ns + k in times), None)
            if hit is None:
                unmatched += 1
                continue
            # The zones are in the order they were written, each converted
            # begin then end: the conversions of one written time in turn.
            got = times[hit]
            z[key], d = got.pop(0) if len(got) > 1 else got[0]
            doubt = max(doubt, d)
        args = z.setdefault("args", {})
        args.pop("clock_doubt_us", None)
        if doubt:
            args["clock_doubt_us"] = math.ceil(doubt / 1000)
    failures = []
    if unmatched:
        failures.append("%d zone times are not in the record's conversions: another run's record?"
                        % unmatched)
    res, more = clockcheck.analyse_scenario(name, sc, trace, pairs, failures, banner)
    res["ok"] = not more
    return res, more


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="the kept run's files (NAME.json, .log, .stderr, .rec)")
    ap.add_argument("--scenario", required=True, choices=sorted(clockcheck.SCENARIOS))
    ap.add_argument("--seed", type=int, default=1, help="the seed the run had (steps-* scenarios)")
    ap.add_argument("--replay", default=os.path.join(HERE, "..", "..", "build", "tools",
                                                      "gz-clock-replay"))
    args = ap.parse_args()
    res, failures = reevaluate(args.dir, args.scenario, args.seed, args.replay)
    print(clockcheck.TABLE_HEAD)
    print(clockcheck.row(res))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
