#!/usr/bin/env python3
"""Load test through the real drivers: gz-test-load-apis records on Vulkan
(two threads, one queue, lavapipe), OpenCL (pocl) and OpenGL (llvmpipe, EGL
surfaceless) at once in one process, under gpuzones' Vulkan layer, OpenCL
layer and GL shim.  The trace must hold exactly the zones the program
made, none dropped under the default bounds:

- Vulkan: per thread SUBMITS submit and command-buffer zones, and each of
  its LABELS labels SUBMITS times, every "inner" inside its "outer", the
  outer labels of one execution in order;
- OpenCL: ENQUEUES zones "bump", in order without overlap (in-order queue);
- OpenGL: FRAMES "frame" zones and each group "g<k>" FRAMES times, the
  groups of a frame in order and inside that frame's zone;
- the totals: zones produced = written = the sum above, 0 dropped.

The trace is read one line at a time (one event per line).

    load_apis.py PROGRAM SUBMITS LABELS ENQUEUES FRAMES GROUPS --build DIR"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gl"))
from run_gl import preload_for  # noqa: E402  (sanitizer runtime first, then the shim)

LVP_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
ORDER_SLACK_NS = 1000  # conversion rounding between neighbours on one track


def read_trace(path):
    names, zones, totals = {}, {}, None
    with open(path) as f:
        for line in f:
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            ev = json.loads(line)
            if ev.get("ph") == "M" and ev.get("name") == "thread_name":
                names[ev["tid"]] = ev["args"]["name"]
            elif ev.get("ph") == "M" and ev.get("name") == "gpuzones_totals":
                totals = ev["args"]
            elif ev.get("ph") == "X" and ev.get("cat") == "gpu":
                b = round(float(ev["ts"]) * 1000)
                zones.setdefault(ev["tid"], []).append(
                    (ev["name"], ev.get("args", {}).get("level"), b, b + round(float(ev["dur"]) * 1000)))
    return names, zones, totals


def by_name(zs):
    out = {}
    for name, _level, b, e in zs:
        out.setdefault(name, []).append((b, e))
    for v in out.values():
        v.sort()
    return out


def in_order(seq, what, failures):
    for i in range(1, len(seq)):
        if seq[i][0] + ORDER_SLACK_NS < seq[i - 1][1]:
            failures.append("%s: #%d begins at %d ns, before #%d ends at %d ns"
                            % (what, i, seq[i][0], i - 1, seq[i - 1][1]))
            return


def inside(inner, outer):
    return outer[0] <= inner[0] and inner[1] <= outer[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("program")
    ap.add_argument("submits", type=int)
    ap.add_argument("labels", type=int)
    ap.add_argument("enqueues", type=int)
    ap.add_argument("frames", type=int)
    ap.add_argument("groups", type=int)
    ap.add_argument("--build", required=True)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    shim = os.path.join(build, "layer", "opengl", "libgpuzones_gl.so")
    failures = []
    with tempfile.TemporaryDirectory(prefix="gz-load-apis-") as tmp:
        trace = os.path.join(tmp, "trace.json")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GPUZONES_", "VK_INSTANCE_LAYERS", "OPENCL_LAYERS"))}
        env.update(GPUZONES_OUTPUT=trace, GPUZONES_SUMMARY="1",
                   VK_ICD_FILENAMES=env.get("VK_ICD_FILENAMES", LVP_ICD),
                   VK_ADD_LAYER_PATH=os.path.join(build, "json"),
                   VK_INSTANCE_LAYERS="VK_LAYER_GPUZONES_timing",
                   OPENCL_LAYERS=os.path.join(build, "layer", "opencl", "libgpuzones_cl.so"),
                   LD_PRELOAD=preload_for(a.program, shim), EGL_LOG_LEVEL="fatal")
        # Sanitized build: LLVM (in llvmpipe and in pocl, both in this
        # process) installs its own alternate signal stacks on threads it
        # runs, and ASan's check at thread exit then fails on them
        # ("failed to deallocate"), with or without gpuzones.
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"),
                                                     "use_sigaltstack=0"]))
        supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gl", "lsan.supp")
        env["LSAN_OPTIONS"] = ":".join(filter(None, [env.get("LSAN_OPTIONS"),
                                                     "suppressions=" + supp]))
        t0 = time.monotonic()
        p = subprocess.run([a.program, str(a.submits), str(a.labels), str(a.enqueues),
                            str(a.frames), str(a.groups)], env=env, capture_output=True,
                           text=True, timeout=900)
        took = time.monotonic() - t0
        print(p.stdout.strip())
        print("\n".join(l for l in p.stderr.splitlines() if "track" in l or "dropped" in l
                        or "ring" in l))
        if p.returncode:
            sys.exit("FAIL: the program exited %d: %s" % (p.returncode, p.stderr[-2000:]))
        made = dict(kv.split("=") for kv in p.stdout.split()[-6:])
        threads, labels = int(made["vk_threads"]), int(made["labels"])
        size = os.path.getsize(trace)
        names, zones, totals = read_trace(trace)

    expect = {"vk submit": threads * a.submits, "vk cmdbuf": threads * a.submits,
              "vk label": threads * a.submits * labels, "cl": a.enqueues,
              "gl frame": a.frames, "gl group": a.frames * a.groups}
    got = dict.fromkeys(expect, 0)
    total = sum(expect.values())
    print("%d zones expected, %.1f MB of trace, %.1f s" % (total, size / 1e6, took))
    for tid, zs in zones.items():
        track = names.get(tid, "")
        named = by_name(zs)
        if track.startswith("VkQueue") and track.endswith(" labels"):
            got["vk label"] += len(zs)
            for t in range(threads):
                for k in range(labels // 2):
                    outer = named.get("t%d outer %d" % (t, k), [])
                    inner = named.get("t%d inner %d" % (t, k), [])
                    if len(outer) != a.submits or len(inner) != a.submits:
                        failures.append("thread %d label pair %d: %d outer, %d inner, want %d each"
                                        % (t, k, len(outer), len(inner), a.submits))
                        break
                    bad = [j for j in range(a.submits) if not inside(inner[j], outer[j])]
                    if bad:
                        failures.append("thread %d: 't%d inner %d' #%d is not inside its outer"
                                        % (t, t, k, bad[0]))
                        break
                    nxt = named.get("t%d outer %d" % (t, k + 1))
                    if nxt and any(nxt[j][0] + ORDER_SLACK_NS < outer[j][1]
                                   for j in range(a.submits)):
                        failures.append("thread %d: outer labels %d and %d out of order"
                                        % (t, k, k + 1))
                        break
        elif track.startswith("VkQueue"):
            for name, level, _b, _e in zs:
                if level in ("submit", "cmdbuf"):
                    got["vk " + level] += 1
        elif track.startswith("GL context"):
            got["gl frame"] += len(named.get("frame", []))
            frames = named.get("frame", [])
            for g in range(a.groups):
                groups = named.get("g%d" % g, [])
                got["gl group"] += len(groups)
                if len(groups) == len(frames) == a.frames:
                    bad = [j for j in range(a.frames) if not inside(groups[j], frames[j])]
                    if bad:
                        failures.append("GL group g%d of frame %d is not inside its frame"
                                        % (g, bad[0]))
                    if g:
                        prev = named["g%d" % (g - 1)]
                        in_order([x for j in range(a.frames) for x in (prev[j], groups[j])],
                                 "GL groups g%d, g%d" % (g - 1, g), failures)
        elif " queue " in track:
            got["cl"] += len(named.get("bump", []))
            in_order(named.get("bump", []), "OpenCL 'bump' zones", failures)
        else:
            failures.append("zones on an unexpected track %r" % track)
    print("zones by kind: %s" % got)
    for kind in expect:
        if got[kind] != expect[kind]:
            failures.append("%s: %d zones, want %d" % (kind, got[kind], expect[kind]))
    if not totals:
        failures.append("no gpuzones_totals event")
    else:
        print("totals: %s" % totals)
        if totals.get("zones_dropped") or totals.get("items_dropped"):
            failures.append("the totals say something was dropped: %s" % totals)
        if totals.get("zones_produced") != total or totals.get("zones_written") != total:
            failures.append("totals %s, want %d produced and written" % (totals, total))
    for f in failures:
        print("FAIL: " + f)
    print("pass" if not failures else "")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
