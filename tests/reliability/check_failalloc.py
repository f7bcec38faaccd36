#!/usr/bin/env python3
"""gpuzones short of memory: gz-test-rel small (one device, three labelled
submits) under the Vulkan layer with gz-failalloc preloaded, once to count
the allocations gpuzones makes, then once per allocation k with every one
from the kth on failing (and, for the first ones, only the kth). Each run
must do what the program does without the layer: exit 0, print the same,
never crash or hang; a trace file, when there is one, is complete JSON.

    check_failalloc.py --program gz-test-rel --failalloc libgz_failalloc.so --layer-dir json
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vk"))
import gztrace  # noqa: E402

LAYER = "VK_LAYER_GPUZONES_timing"
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"


def run(args, tmp, env_extra, preload=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUZONES_", "GZFAIL_", "VK_"))}
    env["VK_ICD_FILENAMES"] = LAVAPIPE_ICD
    env["VK_ADD_LAYER_PATH"] = os.path.abspath(args.layer_dir)
    env["VK_INSTANCE_LAYERS"] = LAYER
    env["GPUZONES_OUTPUT"] = os.path.join(tmp, "trace.json")
    env["GPUZONES_SUMMARY"] = "0"
    if preload:
        env["LD_PRELOAD"] = os.path.abspath(args.failalloc)
    env.update(env_extra)
    try:
        os.unlink(env["GPUZONES_OUTPUT"])
    except FileNotFoundError:
        pass
    return subprocess.run([os.path.abspath(args.program), "small"], env=env, capture_output=True,
                          text=True, errors="replace", timeout=60, cwd=tmp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--failalloc", required=True)
    ap.add_argument("--layer-dir", required=True)
    args = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="gz-failalloc-") as tmp:
        base = run(args, tmp, {"VK_INSTANCE_LAYERS": ""}, preload=False)
        counted = run(args, tmp, {})
        last = [l for l in counted.stderr.splitlines() if l.startswith("gz-failalloc:")]
        n = int(last[-1].split()[1]) if last else 0
        print("without the layer: exit %d; gpuzones allocates %d times in this run" % (base.returncode, n))
        if base.returncode != 0 or n < 10:
            print("FAIL: the baseline did not run (%d) or gpuzones allocated nothing (%d)" % (base.returncode, n))
            return 1
        plans = [{"GZFAIL_FROM": str(k)} for k in range(1, n + 1)]
        plans += [{"GZFAIL_FROM": str(k), "GZFAIL_COUNT": "1"} for k in range(1, min(n, 60) + 1)]
        said = {}
        for plan in plans:
            p = run(args, tmp, plan)
            what = " ".join("%s=%s" % kv for kv in sorted(plan.items()))
            if p.returncode != 0:
                failures.append("%s: exit %d: %s" % (what, p.returncode, p.stderr[-800:]))
                continue
            if p.stdout != base.stdout:
                failures.append("%s: printed %r, without the layer %r" % (what, p.stdout, base.stdout))
            for line in p.stderr.splitlines():
                if line.startswith("gpuzones:"):
                    said[line] = said.get(line, 0) + 1
            trace = os.path.join(tmp, "trace.json")
            if os.path.exists(trace):
                try:
                    t = gztrace.load(trace)
                    if not t.complete:
                        failures.append("%s: the trace file was not ended" % what)
                except Exception as e:  # noqa: BLE001 - any load failure is the finding
                    failures.append("%s: the trace does not load: %s" % (what, e))
        print("%d runs, each failing gpuzones' allocations from one on (or just one)" % len(plans))
        print("what gpuzones said, over all runs:")
        for line, k in sorted(said.items(), key=lambda x: -x[1])[:25]:
            print("  %5d x %s" % (k, line))
    for f in failures[:20]:
        print("FAIL: " + f)
    if failures:
        print("%d of %d runs failed" % (len(failures), len(plans)))
        return 1
    print("pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
