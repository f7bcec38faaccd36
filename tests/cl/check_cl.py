#!/usr/bin/env python3
"""Runs gz-test-cl without and with the gpuzones OpenCL layer (pocl) and
compares the trace with the program's CPU truth (see clt_main.c).

    check_cl.py --program gz-test-cl --layer libgpuzones_cl.so [--fault-layer LIB]

Checks, per kernel: a zone named after it on its queue's track, beginning
after the host time before its enqueue call and ending before the host saw
it complete (within SLACK_NS, the clock model's error allowance), and for
the "hold" kernels (they run until the host stops them 60 ms after their
enqueue call), a zone ending after that and lasting within 25 % of it.
Behaviour: same results, the queues' CL_QUEUE_PROPERTIES as asked, the same
CL_EVENT_REFERENCE_COUNT with and without the layer, every event the layer
held given back, one zone per enqueued command.

Exit status 0: all checks passed; 1: a check failed; 2: could not run.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vk"))
import gztrace  # noqa: E402

# The trace maps pocl's CLOCK_MONOTONIC_RAW stamps onto CLOCK_MONOTONIC with
# a model fitted from enqueue brackets (a few us wide here): 200 us covers
# the model's error with room for a loaded machine and the sanitizers.
SLACK_NS = 200_000
DURATION_TOLERANCE = 0.25
RUN_TIMEOUT_S = 120


def parse_truth(path):
    t = {"queue": {}, "kernel": [], "command": [], "refcount": [], "result": {}, "enqueues": None}
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "queue":
                t["queue"][int(w[1])] = (int(w[2]), int(w[3]))
            elif w[0] == "kernel":
                t["kernel"].append({"name": w[1], "queue": int(w[2]), "before": int(w[3]),
                                    "seen": int(w[4]), "stopped": None})
            elif w[0] == "hold":
                t["kernel"].append({"name": "hold", "queue": int(w[1]), "before": int(w[2]),
                                    "seen": int(w[3]), "stopped": int(w[4])})
            elif w[0] == "command":
                t["command"].append((w[1], int(w[2])))
            elif w[0] == "refcount":
                t["refcount"].append((w[1], int(w[2])))
            elif w[0] == "result":
                t["result"][w[1]] = w[2] == "1"
            elif w[0] == "enqueues":
                t["enqueues"] = int(w[1])
    return t


def run(program, truth, env):
    p = subprocess.run([program, truth], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=RUN_TIMEOUT_S)
    return p.returncode, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--layer", required=True)
    ap.add_argument("--fault-layer", help="a layer below ours that changes the clock")
    args = ap.parse_args()
    # kept on failure (and removed on success) so a flaky run can be studied
    tmp = tempfile.mkdtemp(prefix="gz-cl-")
    status = check_run(args, tmp)
    if status == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print("files kept in", tmp)
    return status


def check_run(args, tmp):
    errors = []

    def check(cond, msg):
        if not cond:
            errors.append(msg)
        return cond

    env = {k: v for k, v in os.environ.items()
           if k != "OPENCL_LAYERS" and not k.startswith("GPUZONES_")}
    truth0 = os.path.join(tmp, "truth0")
    rc, out = run(args.program, truth0, env)
    if rc != 0:
        print("program failed without the layer (%d):\n%s" % (rc, out))
        return 2
    # ocl-icd: the first layer listed is nearest the driver, so the
    # fault layer goes first, below ours.
    layers = [os.path.abspath(args.layer)]
    if args.fault_layer:
        layers.insert(0, os.path.abspath(args.fault_layer))
    env["OPENCL_LAYERS"] = ":".join(layers)
    trace_path = os.path.join(tmp, "trace.json")
    env["GPUZONES_OUTPUT"] = trace_path
    truth1 = os.path.join(tmp, "truth1")
    rc, out = run(args.program, truth1, env)
    sys.stdout.write(out)
    with open(os.path.join(tmp, "stderr"), "w") as f:
        f.write(out)
    if not check(rc == 0, "program failed under the layer (exit %d)" % rc):
        print("\n".join("FAIL: " + e for e in errors))
        return 1
    if not check(os.path.exists(trace_path),
                 "no trace file: the layer was never loaded (does this libOpenCL read OPENCL_LAYERS?)"):
        print("\n".join("FAIL: " + e for e in errors))
        return 1
    t0, t1 = parse_truth(truth0), parse_truth(truth1)
    trace = gztrace.load(trace_path)
    for e in trace.accounting_errors():
        check(False, e)

    # behaviour unchanged
    for name, ok in sorted(t1["result"].items()):
        check(ok, "result %s differs from the host's under the layer" % name)
    check(t1["result"].keys() == t0["result"].keys(), "different result lines")
    for n, (asked, got) in sorted(t1["queue"].items()):
        check(asked == got, "queue %d: CL_QUEUE_PROPERTIES answers %#x, the program asked for %#x"
              % (n, got, asked))
    check(t0["refcount"] == t1["refcount"],
          "CL_EVENT_REFERENCE_COUNT differs: without the layer %s, with it %s"
          % (t0["refcount"], t1["refcount"]))
    check("were not given back" not in out, "the layer kept event references at exit")
    check(trace.complete, "the trace was not closed")

    # tracks: "<device> queue N (...)"
    names = trace.thread_names()
    tid_of = {}
    for tid, name in names.items():
        if isinstance(tid, int) and tid >= gztrace.GPU_TID_BASE and name:
            for n in t1["queue"]:
                if (" queue %d (" % n) in name:
                    tid_of[n] = tid
    for n in t1["queue"]:
        check(n in tid_of, "no track named after queue %d (tracks: %s)" % (n, sorted(names.values(), key=str)))
    if errors:
        print("\n".join("FAIL: " + e for e in errors))
        return 1

    zones = trace.gpu_zones()
    check(len(zones) == t1["enqueues"], "%d GPU zones for %d enqueued commands"
          % (len(zones), t1["enqueues"]))
    for n, asked in t1["queue"].items():
        if not asked[0] & 1:  # in order: one command after another
            for e in trace.nesting_errors(tid_of[n]):
                errors.append(e)

    # kernels, matched in enqueue order to the zones of their name and track
    durations = []
    by_key = {}
    for k in sorted(t1["kernel"], key=lambda k: k["before"]):
        by_key.setdefault((k["name"], k["queue"]), []).append(k)
    for (name, n), ks in sorted(by_key.items()):
        zs = sorted(trace.gpu_zones(tid=tid_of[n], name=name), key=lambda z: z["_ts"])
        if not check(len(zs) == len(ks), "kernel %s on queue %d: %d zones for %d runs"
                     % (name, n, len(zs), len(ks))):
            continue
        for k, z in zip(ks, zs):
            check(z["_ts"] >= k["before"] - SLACK_NS,
                  "%s begins %.1f us before its enqueue call" % (gztrace.describe(z), (k["before"] - z["_ts"]) / 1e3))
            check(z["_end"] <= k["seen"] + SLACK_NS,
                  "%s ends %.1f us after the host saw it complete" % (gztrace.describe(z), (z["_end"] - k["seen"]) / 1e3))
            if k["stopped"]:
                known = k["stopped"] - k["before"]
                ratio = z["_dur"] / known
                durations.append("%.2f/%.2f ms" % (z["_dur"] / 1e6, known / 1e6))
                check(z["_end"] >= k["stopped"] - SLACK_NS,
                      "%s ends before the host stopped it" % gztrace.describe(z))
                check(abs(ratio - 1) <= DURATION_TOLERANCE,
                      "%s lasts %.1f %% of its known time %.3f ms" % (gztrace.describe(z), 100 * ratio, known / 1e6))
    for name, n in t1["command"]:
        check(trace.gpu_zones(tid=tid_of[n], name=name), "no %s zone on queue %d" % (name, n))

    check(len(durations) == 3, "%d hold kernels checked, expected 3" % len(durations))
    print("hold kernels (zone/known): " + ", ".join(durations))
    if errors:
        print("\n".join("FAIL: " + e for e in errors))
        return 1
    print("ok: %d zones, %d kernels checked" % (len(zones), len(t1["kernel"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
