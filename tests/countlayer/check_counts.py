#!/usr/bin/env python3
"""VK_LAYER_GPUZONES_count counts exactly what reaches the driver.

  alone    gz-count-workload alone on the driver: every counter equals the
           tally the program keeps of its own commands (secondaries executed
           twice, a reusable command buffer submitted three times, the
           synchronization2 commands and their KHR aliases, a re-recorded
           command buffer, one freed unsubmitted).
  threads  gz-bench-vk-frame-cpu, four threads recording and submitting at
           once: every counter equals what the benchmark's shape implies.
  levels   gz-count-workload below gpuzones at each GPUZONES_LEVEL the layer
           accepts: the loader chains the count layer below gpuzones; the
           program's work (dispatches, draws, buffer copies) arrives exactly
           once; no counter is below the program's own; gpuzones' timestamps
           are seen. What gpuzones adds per command buffer of the program is
           printed, for the log: this test measures, it does not hold gpuzones
           to a target (check_targets.py does).
"""

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import countlayer  # noqa: E402

ROUNDS = 3


def compare(name, got, want, failures, keys=None):
    for k in keys or want:
        if got.get(k) != want[k]:
            failures.append(f"{name}: {k} = {got.get(k)}, expected {want[k]}")


def case_alone(a, tmp, failures):
    env = countlayer.layer_env(a.count_dir, os.path.join(tmp, "alone.txt"))
    counts, out, _ = countlayer.run_counted([a.workload, "--rounds", str(ROUNDS)], env)
    want = countlayer.parse_kv_line(out, "expected: ")
    if not want:
        failures.append("alone: the program printed no tally")
        return
    print("alone:   ", " ".join(f"{k}={v}" for k, v in counts.items()))
    compare("alone", counts, want, failures)
    if set(counts) != set(want):
        failures.append(f"alone: keys differ: {sorted(set(counts) ^ set(want))}")


def case_threads(a, tmp, failures):
    threads, cmdbufs, submits, frames, warmup = 4, 8, 2, 5, 2
    env = countlayer.layer_env(a.count_dir, os.path.join(tmp, "threads.txt"))
    counts, _, _ = countlayer.run_counted(
        [a.bench, "--threads", str(threads), "--cmdbufs", str(cmdbufs), "--submits", str(submits),
         "--frames", str(frames), "--warmup", str(warmup)], env)
    print("threads: ", " ".join(f"{k}={v}" for k, v in counts.items()))
    cbs = threads * cmdbufs * (frames + warmup)
    subs = threads * submits * (frames + warmup)
    # Each command buffer: a dispatch, a buffer copy, two barriers.
    want = {k: 0 for k in counts}
    want.update(dispatches=cbs, buffer_copies=cbs, barriers=2 * cbs, cmdbufs_submitted=cbs,
                begins=cbs, cmdbufs_allocated=threads * cmdbufs, submit_calls=subs,
                batches=subs, devices=1)
    compare("threads", counts, want, failures)


def zones_in(trace):
    try:
        with open(trace) as f:
            lines = [l.strip().rstrip(",") for l in f if "gpuzones_totals" in l]
        return json.loads(lines[-1])["args"]["zones_written"] if lines else 0
    except (OSError, ValueError, KeyError):
        return 0


def case_levels(a, tmp, failures):
    cmd = [a.workload, "--rounds", str(ROUNDS)]
    base, out, _ = countlayer.run_counted(
        cmd, countlayer.layer_env(a.count_dir, os.path.join(tmp, "base.txt")))
    want = countlayer.parse_kv_line(out, "expected: ")
    compare("without gpuzones", base, want, failures)
    per = base["cmdbufs_submitted"]
    measured = []
    for level in countlayer.LEVELS:
        trace = os.path.join(tmp, f"{level}.json")
        env = countlayer.layer_env(a.count_dir, os.path.join(tmp, f"{level}.txt"), gz_dir=a.gz_dir,
                                   level=level, trace=trace)
        counts, _, err = countlayer.run_counted(cmd, env)
        if countlayer.level_rejected(err):
            print(f"level {level}: not accepted by this build, skipped")
            continue
        measured.append((level, countlayer.added_per(counts, base, per)))
        name = f"GPUZONES_LEVEL={level}"
        compare(name, counts, base, failures, countlayer.WORK_KEYS)
        low = [k for k in base if counts[k] < base[k]]
        if low:
            failures.append(f"{name}: below the program's own counts: {low}")
        if counts["timestamps"] <= base["timestamps"]:
            failures.append(f"{name}: no timestamp of gpuzones seen ({counts['timestamps']}): "
                            f"the count layer is not below it")
        if not zones_in(trace):
            failures.append(f"{name}: gpuzones wrote no zone to {trace}")
    if len(measured) < 3:
        failures.append(f"only {len(measured)} levels accepted: {[l for l, _ in measured]}")
    print(f"\nadded by gpuzones per command buffer of the program ({per} submitted):")
    for row, _ in countlayer.ADDED_ROWS:
        print(f"  {row:58s}" + "".join(f" {level}={v[row]:.2f}" for level, v in measured))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=("alone", "threads", "levels"))
    ap.add_argument("--count-dir", required=True, help="directory of the count layer's manifest")
    ap.add_argument("--gz-dir", help="directory of gpuzones' manifest")
    ap.add_argument("--workload", help="gz-count-workload")
    ap.add_argument("--bench", help="gz-bench-vk-frame-cpu")
    a = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="gz-count-") as tmp:
        try:
            {"alone": case_alone, "threads": case_threads, "levels": case_levels}[a.case](
                a, tmp, failures)
        except countlayer.CountError as e:
            failures.append(str(e))
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
