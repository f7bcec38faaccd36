#!/usr/bin/env python3
"""Runs every clock scenario (tests/clock/README.md) and prints the markdown
table for docs/PERFORMANCE.md: per scenario the faults, the zones checked,
the bound, the worst error of the trace and of an uncorrected mapping.

    accuracy_table.py [--build-dir build] [--scenario NAME ...]

Needs a build with GPUZONES_RAW_TICKS support in the layer.  Exits non-zero
when a scenario fails, after printing the whole table.
"""
import argparse
import contextlib
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import clockcheck  # noqa: E402

WHAT = {
    "all": "all zones",
    "last-second": "last 1 s",
    "second-half": "second half",
    "jump": "before, and from 1 s after",
    "steps": "all but those straddling a step",
    "settled": "from %.1f s" % clockcheck.SETTLE_S,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(HERE, "..", "..", "build"))
    ap.add_argument("--sample")
    ap.add_argument("--layer-dir")
    ap.add_argument("--fault-layer-dir")
    ap.add_argument("--load-program")
    ap.add_argument("--scenario", action="append", choices=sorted(clockcheck.SCENARIOS))
    ap.add_argument("--seed", type=int, default=1, help="the steps' moments (steps-* scenarios)")
    ap.add_argument("--busy-loop", action="store_true", help="a busy loop beside each scenario")
    ap.add_argument("--record", action="store_true",
                    help="keep each run's trace, fault log and clock record (GPUZONES_CLOCK_RECORD) "
                         "for replay.py")
    args = ap.parse_args()
    b = os.path.abspath(args.build_dir)
    args.sample = args.sample or os.path.join(b, "samples", "vk_compute", "gz-sample-vk-compute")
    args.layer_dir = args.layer_dir or os.path.join(b, "json")
    args.fault_layer_dir = args.fault_layer_dir or os.path.join(b, "tests", "faultlayer")
    args.load_program = args.load_program or os.path.join(b, "tests", "clock", "gz-clock-load")
    names = args.scenario or list(clockcheck.SCENARIOS)

    tmp = tempfile.mkdtemp(prefix="gz-clock-table-")
    # Details go to stderr, the table alone to stdout.
    with contextlib.redirect_stdout(sys.stderr):
        failures = ["self-check: " + f for f in clockcheck.self_check(args, tmp)]
    rows = []
    for name in names:
        sc = clockcheck.SCENARIOS[name]
        clockcheck.apply_seed(name, args.seed)
        print("%s: %s" % (name, clockcheck.env_line(name)), file=sys.stderr)
        with contextlib.redirect_stdout(sys.stderr):
            res, more = clockcheck.run_scenario(args, name, tmp)
        res["ok"] = not more
        failures += ["%s: %s" % (name, f) for f in more]
        rows.append("| %s | `%s` | %s | %d | %d | %s | %s | %s |" % (
            name, clockcheck.env_line(name), WHAT[sc["check"]], res["checked"], sc["limit_us"],
            clockcheck.us(res["worst"]), clockcheck.us(res["naive"]), clockcheck.outcome(res)))
    print("| scenario | faults | zones checked | count | bound (us) | worst error (us) "
          "| without correction (us) | result |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        print(r)
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    if failures or args.record:
        print("files kept in", tmp, file=sys.stderr)
    else:
        shutil.rmtree(tmp)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
