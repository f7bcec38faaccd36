#!/usr/bin/env python3
"""Runs gz-sample-cl-macros (TracyCL* macros, pocl) and checks its zones:
names, counts, order on the in-order queue, the context's name, and each
zone's source location (function, file, and the line of its macro in the
sample's source). The same sample compiled without GPUZONES_ENABLE must
run alike and write no trace. With --layer, the OpenCL layer runs too and
its queue track appears beside the explicit one, which stays the same.

    check_macros.py --sample BIN --sample-off BIN --source cl_macros.c [--layer LIB]
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vk"))
import gztrace  # noqa: E402

ITERATIONS = 4
# name -> (count, the macro text that opens it in the source)
EXPECTED = {
    "upload": (1, 'TracyCLZone(ctx, "upload")'),
    "saxpy": (1, 'TracyCLZoneC(ctx, "saxpy", 0x40a0ff)'),
    "saxpy-repeat": (ITERATIONS - 1, 'TracyCLNamedZone(ctx, repeat, "saxpy-repeat", 1)'),
    "transient-0": (1, "TracyCLZoneTransient(ctx, t, name, 1)"),
    "transient-1": (1, "TracyCLZoneTransient(ctx, t, name, 1)"),
    "download": (1, 'GpuzonesCLZoneBegin(ctx, "download", 0, 1)'),
}
ORDER = ["upload", "saxpy", "saxpy-repeat", "transient-0", "transient-1", "download"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", required=True)
    ap.add_argument("--sample-off", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--layer")
    args = ap.parse_args()
    errors = []
    lines = open(args.source).read().split("\n")

    def line_of(text):
        found = [i + 1 for i, s in enumerate(lines) if text in s]
        return found[0] if len(found) == 1 else None

    env = {k: v for k, v in os.environ.items()
           if k != "OPENCL_LAYERS" and not k.startswith("GPUZONES_")}
    with tempfile.TemporaryDirectory() as tmp:
        trace_path = os.path.join(tmp, "on.json")
        env_on = dict(env, GPUZONES_OUTPUT=trace_path)
        if args.layer:
            env_on["OPENCL_LAYERS"] = os.path.abspath(args.layer)
        p = subprocess.run([args.sample, str(ITERATIONS)], env=env_on, capture_output=True,
                           text=True, timeout=120)
        sys.stdout.write(p.stdout + p.stderr)
        if p.returncode != 0 or p.stdout.strip() != "ok":
            print("FAIL: the sample failed (exit %d)" % p.returncode)
            return 1
        trace = gztrace.load(trace_path)
        errors += trace.accounting_errors()

        off_path = os.path.join(tmp, "off.json")
        q = subprocess.run([os.path.abspath(args.sample_off), str(ITERATIONS)], cwd=tmp,
                           env=dict(env, GPUZONES_OUTPUT=off_path), capture_output=True,
                           text=True, timeout=120)
        if q.returncode != 0 or q.stdout.strip() != "ok":
            errors.append("the sample without GPUZONES_ENABLE failed (exit %d): %s"
                          % (q.returncode, q.stdout + q.stderr))
        if os.path.exists(off_path) or any(f.startswith("gpuzones-") for f in os.listdir(tmp)):
            errors.append("the sample without GPUZONES_ENABLE wrote a trace")
        if "gpuzones" in q.stderr:
            errors.append("the sample without GPUZONES_ENABLE printed gpuzones output")

    names = trace.thread_names()
    tids = [t for t, n in names.items() if n == "saxpy context"]
    if len(tids) != 1:
        print("FAIL: no single track named 'saxpy context' (tracks %s)" % names)
        return 1
    tid = tids[0]
    zones = sorted(trace.gpu_zones(tid=tid), key=lambda z: z["_ts"])
    for name, (count, macro) in EXPECTED.items():
        zs = [z for z in zones if z["name"] == name]
        if len(zs) != count:
            errors.append("%d zones named %s, expected %d" % (len(zs), name, count))
        want_line = line_of(macro)
        if want_line is None:
            errors.append("macro %r not found once in %s" % (macro, args.source))
        for z in zs:
            a = z.get("args", {})
            if a.get("level") != "zone":
                errors.append("%s: level %r, expected 'zone'" % (gztrace.describe(z), a.get("level")))
            if a.get("function") != "main":
                errors.append("%s: function %r" % (gztrace.describe(z), a.get("function")))
            if not str(a.get("file", "")).endswith("cl_macros.c"):
                errors.append("%s: file %r" % (gztrace.describe(z), a.get("file")))
            if a.get("line") != want_line:
                errors.append("%s: line %r, the macro is on line %s" % (gztrace.describe(z), a.get("line"), want_line))
    saxpy = [z for z in zones if z["name"] == "saxpy"]
    if saxpy and saxpy[0].get("args", {}).get("color") != "#40a0ff":
        errors.append("saxpy: color %r" % saxpy[0].get("args", {}).get("color"))
    got_order = []
    for z in zones:
        if not got_order or got_order[-1] != z["name"]:
            got_order.append(z["name"])
    if got_order != ORDER:
        errors.append("zones in the order %s, expected %s" % (got_order, ORDER))
    errors += trace.nesting_errors(tid)
    if args.layer:
        layer_tracks = [t for t, n in names.items() if n and " queue 1 (in-order)" in n]
        if len(layer_tracks) != 1 or not trace.gpu_zones(tid=layer_tracks[0], name="saxpy"):
            errors.append("the layer's queue track with a saxpy zone is missing")

    if errors:
        print("\n".join("FAIL: " + e for e in errors))
        return 1
    print("ok: %d explicit zones with names and source locations" % len(zones))
    return 0


if __name__ == "__main__":
    sys.exit(main())
