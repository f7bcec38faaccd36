#!/usr/bin/env python3
"""Run time of the Vulkan compute sample with and without VK_LAYER_GPUZONES_timing.

Runs alternate (off, on, off, on, ...) so that both sides see the same machine
load, and the table gives medians and their ratio within this one run.

    python3 bench/sample_overhead.py [--build build] [--runs 9] [--frames 50]
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--frames", type=int, default=50)
    args = ap.parse_args()

    sample = os.path.join(args.build, "samples", "vk_compute", "gz-sample-vk-compute")
    layer_dir = os.path.abspath(os.path.join(args.build, "json"))
    cmd = [sample, "--frames", str(args.frames)]
    base = dict(os.environ)
    base.setdefault("VK_ICD_FILENAMES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
    base.pop("VK_INSTANCE_LAYERS", None)
    tmp = tempfile.mkdtemp(prefix="gz-bench-")
    on = dict(base, VK_ADD_LAYER_PATH=layer_dir, VK_INSTANCE_LAYERS="VK_LAYER_GPUZONES_timing",
              GPUZONES_OUTPUT=os.path.join(tmp, "trace.json"), GPUZONES_SUMMARY="0")

    results = {"without layer": [], "with layer": []}
    run_once(cmd, base)  # warm the disk cache and the shader cache
    run_once(cmd, on)
    for _ in range(args.runs):
        results["without layer"].append(run_once(cmd, base))
        results["with layer"].append(run_once(cmd, on))

    print(f"gz-sample-vk-compute --frames {args.frames}, {args.runs} runs each, alternating, "
          f"VK_ICD_FILENAMES={base['VK_ICD_FILENAMES']}")
    print(f"{'':16} {'wall median s':>14} {'cpu median s':>13}")
    med = {}
    for name, rs in results.items():
        wall = statistics.median(r[0] for r in rs)
        cpu = statistics.median(r[1] for r in rs)
        med[name] = (wall, cpu)
        print(f"{name:16} {wall:14.3f} {cpu:13.3f}")
    w0, c0 = med["without layer"]
    w1, c1 = med["with layer"]
    print(f"{'ratio':16} {w1 / w0:14.3f} {c1 / c0:13.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
