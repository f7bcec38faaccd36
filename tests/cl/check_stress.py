#!/usr/bin/env python3
"""The OpenCL layer under load (gz-test-cl-stress, see cl_stress.c).

burst N [--ooo]: N tiny kernels enqueued back to back (about 7 us each),
then one clFinish: N zones named "tiny" on the queue's track, none dropped,
each inside the CPU window [first enqueue, clFinish returned]; on an
in-order queue they do not overlap.

queues N: N queues one after the other, each created, given 3 kernels,
finished and released: N tracks with 3 zones each, none dropped, and the
resident memory grows by less than QUEUE_KIB a queue once pocl has warmed
up.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vk"))
import gztrace  # noqa: E402

SLACK_NS = 200_000  # as check_cl.py: the clock model's error allowance
# Resident memory a queue created and released may leave behind. Measured:
# -3.3 KiB a queue as built, 17.9 on a loaded machine (a released queue
# ends its track and the client reuses it); 76 to 101 KiB under
# AddressSanitizer, with its quarantine off, which is its allocator's
# footprint (redzones, per-size-class caches), not memory we keep. A leak of the queue's own arrays (64 KiB at least) fails
# the bound as built; the one under ASan catches only a larger growth.
QUEUE_KIB = 50
QUEUE_KIB_ASAN = 200


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--layer", required=True)
    ap.add_argument("--mode", choices=["burst", "queues"], required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--ooo", action="store_true")
    a = ap.parse_args()
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        truth_path = os.path.join(tmp, "truth.json")
        env = dict(os.environ, OPENCL_LAYERS=os.path.abspath(a.layer),
                   GPUZONES_OUTPUT=os.path.join(tmp, "trace.json"))
        if a.mode == "queues" and "ASAN_OPTIONS" in env:
            # freed memory would wait in AddressSanitizer's quarantine
            env["ASAN_OPTIONS"] += ":quarantine_size_mb=0"
        cmd = [a.program, a.mode, truth_path, str(a.count)] + (["ooo"] if a.ooo else [])
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        if p.returncode != 0:
            print("FAIL: the program exited with %d" % p.returncode)
            return 1
        with open(truth_path) as f:
            truth = json.load(f)
        trace = gztrace.load(env["GPUZONES_OUTPUT"])
    names = trace.thread_names()
    tracks = [t for t in trace.gpu_tracks() if trace.gpu_zones(tid=t)]
    if a.mode == "burst":
        if len(tracks) != 1:
            errors.append("%d tracks with zones, want 1" % len(tracks))
        zones = trace.gpu_zones()
        tiny = [z for z in zones if z["name"] == "tiny"]
        if len(tiny) != len(zones) or len(tiny) != truth["kernels"]:
            errors.append("%d zones (%d tiny) for %d kernels" % (len(zones), len(tiny),
                                                                truth["kernels"]))
        outside = [z for z in tiny if z["_ts"] < truth["before"] - SLACK_NS
                   or z["_end"] > truth["seen"] + SLACK_NS]
        if outside:
            errors.append("%d zones outside the CPU's window, e.g. %s"
                          % (len(outside), gztrace.describe(outside[0])))
        if not a.ooo and tracks:
            errors.extend(trace.nesting_errors(tracks[0])[:5])
        print("%d kernels enqueued in %.1f ms, finished %.1f ms later; %d zones"
              % (truth["kernels"], (truth["enqueued"] - truth["before"]) / 1e6,
                 (truth["seen"] - truth["enqueued"]) / 1e6, len(tiny)))
    else:
        if len(tracks) != truth["queues"]:
            errors.append("%d tracks with zones for %d queues" % (len(tracks), truth["queues"]))
        bad = [(names.get(t), len(trace.gpu_zones(tid=t))) for t in tracks
               if len(trace.gpu_zones(tid=t, name="tiny")) != truth["kernels_each"]]
        if bad:
            errors.append("%d queues without their %d zones, e.g. %s"
                          % (len(bad), truth["kernels_each"], bad[0]))
        grown = truth["rss_last_kib"] - truth["rss_first_kib"]
        per = grown / max(1, truth["queues"] - truth["measured_from"])
        print("resident memory: +%d KiB over %d queues, %.1f KiB a queue"
              % (grown, truth["queues"] - truth["measured_from"], per))
        bound = QUEUE_KIB_ASAN if "ASAN_OPTIONS" in os.environ else QUEUE_KIB
        if per > bound:
            errors.append("resident memory grows by %.1f KiB a queue created and released "
                          "(at most %d expected)" % (per, bound))
    errors += trace.accounting_errors()
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print("PASS")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
