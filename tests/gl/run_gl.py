#!/usr/bin/env python3
"""Runs a GL test program (glt.c) with the shim preloaded and checks the
trace against the CPU truth the program wrote.

groups: one track for the GL context; F "frame" zones (swap to swap) and F
each of "pass A" > "inner" and "pass B" (KHR_debug groups), nested so; each
zone begins after the host time before the call that began it and ends
before the host time at which the CPU had read the work's result back.

On llvmpipe a glQueryCounter is stamped when the rasteriser reaches it in
the binned scene, which happens when the scene is flushed (here: when the
program reads pixels, or swaps), not when the call was made. So begin
times lie after the calls by however long the work waited for the flush:
"begins after the call" holds trivially there, while durations are
meaningful: they measure the rasterisation of the work between the two
stamps. The checker therefore also asks that the heavy "inner" group last
at least half of the CPU's wait for that work and much longer than the
light "pass B" group.

state: the program checks its own GL state around every wrapped call (exit
status); the checker asks that the shim really was active (group zones in
the trace), else that check proves nothing.

contexts: a context created first but made current second, a failed
creation, and a context created second but made current first. The tracks
are numbered in creation order ("GL context 1" has the zone "on first",
"GL context 2" "on second"), the failed creation has no track, and the
program saw the same EGL error with the shim as without it.

sample: samples/gl_passes (no gpuzones code, or with --macros the build
with the TracyGpu* macros on). Each frame's "shadow", "gbuffer" and
"lighting" debug groups lie inside that frame's zone, in that order, and
the 10x heavier "lighting" pass lasts longer than "shadow" (medians); with
--macros also one "scene" around the three passes and one "draw" inside
each, on the track the program named "gl_passes"; with --no-shim only
those.

noswap END: the groups' frames of a program that never swaps (EGL: current
with no surface at all; GLX: on a window never swapped), each ended by END
(glFinish, glFlush, glFenceSync + glClientWaitSync, glReadPixels; mixed: a
glFlush between the groups and one inside "pass B", then glFinish). Zones
of kind "flush" named after the call that ended them ("until glFinish"):
one per frame (mixed: "until glFlush" holding "pass A", "until glFinish"
holding "pass B": the glFlush inside a group ends nothing), plus the one
the program's last glFinish ends; no "frame" zone; the groups nested in
them; each zone inside the CPU window of its work: it begins after the
call before it returned, and ends before the CPU saw the work done (the
call's return for glFinish, a fence wait or a read-back; the last glFinish
for glFlush). The track's name says which calls made its zones and, on
llvmpipe, that the times are those of rasterisation.

stress N: "outer" { N tiny groups "g" } with nothing that flushes until one
glFinish: every zone is there, nested, none dropped.

churn N: N contexts created, timed (a group, glFinish), released and
destroyed one after another: each has its track with its two zones, none
dropped, and the resident memory grows by less than CHURN_KIB_PER_CONTEXT a
context once the driver has warmed up.

--xvfb: the program is the GLX build; an Xvfb server of its own (a free
display number, no TCP) runs for it, and frames are glXSwapBuffers.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vk"))
import gztrace  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from xvfb import Xvfb  # noqa: E402

# GL_TIMESTAMP on llvmpipe is CLOCK_MONOTONIC; sync points bracket it within
# tens of microseconds. The conversion may place a time this far off.
ERR_NS = 500_000


def preload_for(program, shim):
    """With shim None, only what the caller had. The shim, after the ASan runtime when the program is instrumented
    (ASan must come first in the process), before the caller's."""
    libs = []
    try:
        out = subprocess.run(["ldd", program], capture_output=True, text=True).stdout
    except OSError:
        out = ""
    for line in out.splitlines():
        if ("libasan.so" in line or "libtsan.so" in line) and "=>" in line:
            libs.append(line.split("=>")[1].split()[0])
    if shim is None:
        return os.environ.get("LD_PRELOAD", "")
    libs.append(os.path.abspath(shim))
    if os.environ.get("LD_PRELOAD"):
        libs.append(os.environ["LD_PRELOAD"])
    return ":".join(libs)


trace_stdout = [""]  # the last run's stdout (the contexts check compares it)


def run(program, shim, args, tmp, tool=None, display=None):
    env = dict(os.environ)
    if display:
        env["DISPLAY"] = display
    env["LD_PRELOAD"] = preload_for(program, shim)
    if tool:
        # `gpuzones run` adds the shim itself: only the sanitizer runtime
        # (and the caller's preloads) go in, and the tool must keep them.
        # The TSan runtime cannot be preloaded into the tool's shell (it is
        # not built with it): the tool adds it before the shim by itself.
        env["LD_PRELOAD"] = ":".join(p for p in env["LD_PRELOAD"].split(":")
                                     if p and p != os.path.abspath(shim) and "libtsan.so" not in p)
        args = ["run", "-o", os.path.join(tmp, "trace.json"), "--", program] + args
        program = tool
    env["GPUZONES_OUTPUT"] = os.path.join(tmp, "trace.json")
    env["LIBGL_ALWAYS_SOFTWARE"] = "1"
    env.setdefault("EGL_LOG_LEVEL", "fatal")
    # Sanitized builds: the leaks of Mesa's driver are not ours (tests/lsan.supp).
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lsan.supp")
    env["LSAN_OPTIONS"] = ":".join(filter(None, [env.get("LSAN_OPTIONS"), "suppressions=" + supp]))
    if args and args[0] == "churn" and "libasan.so" in env["LD_PRELOAD"]:
        # Freed memory waits in AddressSanitizer's quarantine: without this
        # the resident memory would grow by every context freed.
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"),
                                                     "quarantine_size_mb=0"]))
    p = subprocess.run([program] + args, env=env, capture_output=True, text=True, timeout=200)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    trace_stdout[0] = p.stdout
    if not os.path.exists(env["GPUZONES_OUTPUT"]):
        # gpuzones writes its trace once it has started: no trace, no zone
        fail(["no trace file: gpuzones never started in %s (exit %d)" % (program, p.returncode)])
    return p.returncode, gztrace.load(env["GPUZONES_OUTPUT"])


def fail(errors):
    for e in errors:
        print("FAIL:", e)
    sys.exit(1)


def the_track(trace, errors, prefix="GL context"):
    tracks = [t for t in trace.gpu_tracks() if trace.gpu_zones(tid=t)]
    if len(tracks) != 1:
        errors.append("want 1 GPU track with zones, got %d" % len(tracks))
        return None
    tid = tracks[0]
    name = trace.thread_names().get(tid) or ""
    if not name.startswith(prefix):
        errors.append("track is named %r, want %r…" % (name, prefix))
    errors.extend(trace.nesting_errors(tid))
    return tid


def check_groups(trace, truth, errors):
    frames = [e for e in truth if e["ev"] == "frame"]
    start = next(e["ns"] for e in truth if e["ev"] == "current")
    finish = next(e["ns"] for e in truth if e["ev"] == "finish")
    n = len(frames)
    tid = the_track(trace, errors)
    if tid is None:
        return
    trace.build_tree(tid)
    by = {}
    for z in trace.gpu_zones(tid=tid):
        by.setdefault(z["name"], []).append(z)
    for name in by:
        by[name].sort(key=lambda z: z["_ts"])
    want_names = {"frame", "pass A", "inner", "pass B"}
    if set(by) != want_names:
        errors.append("zone names %s, want %s" % (sorted(by), sorted(want_names)))
        return
    for name, zs in by.items():
        if len(zs) != n:
            errors.append("%d %r zones, want %d" % (len(zs), name, n))
            return
    # Each swap also marks a frame on the CPU, right after it returned.
    marks = sorted(e["_ts"] for e in trace.events if e.get("ph") == "i" and e.get("cat") == "frame")
    swaps = [fr["swap_begin"] for fr in frames if "swap_begin" in fr]
    if len(marks) != len(swaps):
        errors.append("%d CPU frame marks, want one per swap (%d)" % (len(marks), len(swaps)))
    else:
        for i, (m, sb) in enumerate(zip(marks, swaps)):
            nxt = swaps[i + 1] if i + 1 < len(swaps) else finish
            if not sb <= m <= nxt:
                errors.append("frame mark %d at %d ns: not after its swap began (%d) and before "
                              "the next (%d)" % (i, m, sb, nxt))
    ratios = []
    levels = {"frame": "frame", "pass A": "label", "inner": "label", "pass B": "label"}
    parents = {"frame": None, "pass A": "frame", "inner": "pass A", "pass B": "frame"}
    for i, fr in enumerate(frames):
        for name in want_names:
            z = by[name][i]
            where = "frame %d: %s" % (i, gztrace.describe(z))
            if z.get("args", {}).get("level") != levels[name]:
                errors.append("%s: level %r, want %r" % (where, z.get("args", {}).get("level"), levels[name]))
            parent = z.get("_parent")
            if (parent["name"] if parent else None) != parents[name]:
                errors.append("%s: parent %s, want %s" % (where, parent and parent["name"], parents[name]))
            elif parent is not None and parent is not by[parents[name]][i]:
                errors.append("%s: nested in another frame's %s" % (where, parents[name]))
            if name == "frame":
                began = start if i == 0 else frames[i - 1]["swap_begin"]
                done = frames[i + 1]["read"] if i + 1 < n else finish
            else:
                began = fr["push"][name]
                done = fr["read"]
            if z["_ts"] < began - ERR_NS:
                errors.append("%s begins %.3f ms before the CPU call that began it"
                              % (where, (began - z["_ts"]) / 1e6))
            if z["_end"] > done + ERR_NS:
                errors.append("%s ends %.3f ms after the CPU had read its result"
                              % (where, (z["_end"] - done) / 1e6))
        inner, light = by["inner"][i], by["pass B"][i]
        wait = fr["read"] - fr["push"]["pass B"]
        print("frame %d: frame %.3f ms, pass A %.3f ms, inner %.3f ms, pass B %.3f ms; "
              "CPU wait for the result %.3f ms"
              % (i, by["frame"][i]["_dur"] / 1e6, by["pass A"][i]["_dur"] / 1e6,
                 inner["_dur"] / 1e6, light["_dur"] / 1e6, wait / 1e6))
        ratios.append((inner["_dur"], light["_dur"], wait))
    # Medians over the frames: one frame's light pass may be descheduled on
    # a loaded machine (2 shared cores), which says nothing about us.
    if ratios:
        med = lambda xs: sorted(xs)[len(xs) // 2]
        heavy, light, wait = (med([r[k] for r in ratios]) for k in range(3))
        if heavy < wait / 2:
            errors.append("the heavy group lasts %.3f ms (median), less than half the CPU's "
                          "%.3f ms wait for it" % (heavy / 1e6, wait / 1e6))
        if heavy < 4 * light:
            errors.append("the heavy group (%.3f ms, median) is not much longer than the "
                          "light one (%.3f ms)" % (heavy / 1e6, light / 1e6))


SYNC_CALL = {"finish": "glFinish", "flush": "glFlush", "fence": "glFenceSync",
             "readpixels": "glReadPixels", "mixed": "glFinish"}


def by_name(trace, tid):
    by = {}
    for z in trace.gpu_zones(tid=tid):
        by.setdefault(z["name"], []).append(z)
    for zs in by.values():
        zs.sort(key=lambda z: z["_ts"])
    return by


def check_note(trace, tid, calls, errors):
    """The track's name says which calls made its zones, and on llvmpipe
    that the driver stamps at rasterisation."""
    name = trace.thread_names().get(tid) or ""
    want = "zones between flushes (%s)" % ", ".join(calls)
    if want not in name:
        errors.append("track %r does not say %r" % (name, want))
    if "llvmpipe" in name and "llvmpipe stamps at rasterisation" not in name:
        errors.append("track %r does not say that llvmpipe stamps at rasterisation" % name)
    print("track: %s" % name)


def check_noswap(trace, truth, end, errors):
    frames = [e for e in truth if e["ev"] == "frame"]
    start = next(e["ns"] for e in truth if e["ev"] == "current")
    finish = next(e["ns"] for e in truth if e["ev"] == "finish")
    n = len(frames)
    tid = the_track(trace, errors)
    if tid is None:
        return
    trace.build_tree(tid)
    by = by_name(trace, tid)
    call = "until " + SYNC_CALL[end]
    want = {"pass A": n, "inner": n, "pass B": n, "until glFinish": 1}
    want[call] = want.get(call, 0) + n
    if end == "mixed":
        want["until glFlush"] = n
    got = {k: len(v) for k, v in by.items()}
    if got != want:
        errors.append("zone counts %s, want %s" % (got, want))
        return
    calls = ["glFlush", "glFinish"] if end == "mixed" else \
        [SYNC_CALL[end], "glFinish"] if SYNC_CALL[end] != "glFinish" else ["glFinish"]
    order = ["glFlush", "glFinish", "glFenceSync", "glReadPixels"]
    check_note(trace, tid, sorted(calls, key=order.index), errors)
    for name, zs in by.items():
        level = "label" if name in ("pass A", "inner", "pass B") else "flush"
        for z in zs:
            if z.get("args", {}).get("level") != level:
                errors.append("%s: level %r, want %r" % (gztrace.describe(z),
                                                         z.get("args", {}).get("level"), level))
    ends = by[call]
    flushes = by.get("until glFlush", [])
    for i, fr in enumerate(frames):
        began = start if i == 0 else frames[i - 1]["end_end"]
        done = fr["done"] or finish
        if end == "mixed":
            # [previous glFinish, glFlush] holds pass A; [glFlush, glFinish] pass B
            windows = [(flushes[i], began, fr["done"], ["pass A"]),
                       (ends[i], fr["flush_end"], fr["done"], ["pass B"])]
        else:
            windows = [(ends[i], began, done, ["pass A", "pass B"])]
        for z, lo, hi, children in windows:
            where = "frame %d: %s" % (i, gztrace.describe(z))
            if z["_ts"] < lo - ERR_NS:
                errors.append("%s begins %.3f ms before the call before it returned"
                              % (where, (lo - z["_ts"]) / 1e6))
            if z["_end"] > hi + ERR_NS:
                errors.append("%s ends %.3f ms after the CPU saw its work done"
                              % (where, (z["_end"] - hi) / 1e6))
            if z.get("_parent") is not None:
                errors.append("%s: nested in %s" % (where, gztrace.describe(z["_parent"])))
            for c in children:
                g = by[c][i]
                if g.get("_parent") is not z:
                    errors.append("frame %d: %s is not inside %s (parent %s)"
                                  % (i, gztrace.describe(g), where,
                                     g.get("_parent") and gztrace.describe(g["_parent"])))
        inner = by["inner"][i]
        if (inner.get("_parent") or {}).get("name") != "pass A":
            errors.append("frame %d: inner is not inside pass A" % i)
        print("frame %d: %s %.3f ms (pass A %.3f, inner %.3f, pass B %.3f); CPU frame %.3f ms"
              % (i, call, ends[i]["_dur"] / 1e6, by["pass A"][i]["_dur"] / 1e6,
                 inner["_dur"] / 1e6, by["pass B"][i]["_dur"] / 1e6,
                 (fr["end_end"] - fr["begin"]) / 1e6))
    last = by["until glFinish"][-1]
    if last["_ts"] < frames[-1]["end_end"] - ERR_NS or last["_end"] > finish + ERR_NS:
        errors.append("the zone the last glFinish ended, %s, is not between the last frame's "
                      "end and that glFinish" % gztrace.describe(last))
    if "frame" in by:
        errors.append("frame zones in a program that never swaps")


def check_stress(trace, truth, errors):
    st = next(e for e in truth if e["ev"] == "stress")
    tid = the_track(trace, errors)
    if tid is None:
        return
    trace.build_tree(tid)
    by = by_name(trace, tid)
    got = {k: len(v) for k, v in by.items()}
    want = {"g": st["groups"], "outer": 1, "until glFinish": 1}
    if got != want:
        errors.append("zone counts %s, want %s" % (got, want))
        return
    outer = by["outer"][0]
    if outer["_ts"] < st["begin"] - ERR_NS or outer["_end"] > st["done"] + ERR_NS:
        errors.append("%s is not inside the CPU's [%d, %d]" % (gztrace.describe(outer),
                                                               st["begin"], st["done"]))
    if (outer.get("_parent") or {}).get("name") != "until glFinish":
        errors.append("outer is not inside the zone until glFinish")
    astray = [z for z in by["g"] if z.get("_parent") is not outer]
    if astray:
        errors.append("%d of the tiny groups are not inside outer, e.g. %s"
                      % (len(astray), gztrace.describe(astray[0])))
    check_note(trace, tid, ["glFinish"], errors)


# Resident memory a context created and destroyed may leave behind. Measured
# here: 58 to 70 KiB, the client's state of its track (the worker's clock model,
# 49.5 KiB, and its zone buffer), kept until the process ends for want of a
# call that ends a track; the GL context's own 0.8 MiB go with it.
CHURN_KIB_PER_CONTEXT = 100


def check_churn(trace, truth, errors):
    ch = next(e for e in truth if e["ev"] == "churn")
    names = trace.thread_names()
    tracks = [t for t in trace.gpu_tracks() if (names.get(t) or "").startswith("GL context")]
    if len(tracks) != ch["contexts"]:
        errors.append("%d GL context tracks, want %d" % (len(tracks), ch["contexts"]))
    bad = []
    for t in tracks:
        got = sorted(z["name"] for z in trace.gpu_zones(tid=t))
        if got != ["churn", "until glFinish"]:
            bad.append((names.get(t), got))
    if bad:
        errors.append("%d contexts without their two zones, e.g. %s" % (len(bad), bad[0]))
    grown = ch["rss_last_kib"] - ch["rss_first_kib"]
    per = grown / max(1, ch["contexts"] - ch["measured_from"])
    print("resident memory: +%d KiB over %d contexts, %.1f KiB a context"
          % (grown, ch["contexts"] - ch["measured_from"], per))
    if per > CHURN_KIB_PER_CONTEXT:
        errors.append("resident memory grows by %.1f KiB per context created and destroyed "
                      "(at most %d expected)" % (per, CHURN_KIB_PER_CONTEXT))


def check_macros(trace, truth, with_shim, errors):
    """TracyGpu* zones: names, source locations, nesting, causality; on the
    shim's track (one track per GL context) when the shim is active."""
    frames = [e for e in truth if e["ev"] == "frame"]
    lines = next(e for e in truth if e["ev"] == "lines")
    n = len(frames)
    tid = the_track(trace, errors, "glt macros")
    if tid is None:
        return
    track_name = trace.thread_names().get(tid)
    if track_name != "glt macros":
        errors.append("track named %r, want 'glt macros' (TracyGpuContextName)" % track_name)
    trace.build_tree(tid)
    by = {}
    for z in trace.gpu_zones(tid=tid):
        by.setdefault(z["name"], []).append(z)
    for zs in by.values():
        zs.sort(key=lambda z: z["_ts"])
    want = {"scene": n, "heavy": n, "transient 0": (n + 1) // 2, "transient 1": n // 2,
            "explicit": n}
    if with_shim:
        want.update({"frame": n, "pass A": n})
    got = {k: len(v) for k, v in by.items()}
    if got != want:
        errors.append("zone counts %s, want %s" % (got, want))
        return
    group = "pass A" if with_shim else "scene"
    parents = {"scene": "frame" if with_shim else None, "heavy": group, "explicit": group,
               "transient 0": group, "transient 1": group}
    for name, zs in by.items():
        if name in ("frame", "pass A"):
            continue
        key = "transient" if name.startswith("transient") else name
        for z in zs:
            args = z.get("args", {})
            where = gztrace.describe(z)
            if args.get("level") != "zone":
                errors.append("%s: level %r, want 'zone'" % (where, args.get("level")))
            if args.get("function") != lines["function"] or not str(args.get("file", "")).endswith("glt.c") \
                    or args.get("line") != lines[key]:
                errors.append("%s: source location %s:%s in %s, want glt.c:%d in %s"
                              % (where, args.get("file"), args.get("line"), args.get("function"),
                                 lines[key], lines["function"]))
            if name == "heavy" and args.get("color") != "#ff0000":
                errors.append("%s: color %r, want #ff0000" % (where, args.get("color")))
            parent = z.get("_parent")
            if (parent["name"] if parent else None) != parents[name]:
                errors.append("%s: parent %s, want %s" % (where, parent and parent["name"], parents[name]))
    for i, fr in enumerate(frames):
        for name in ("scene", "heavy", "explicit"):
            z = by[name][i]
            if z["_ts"] < fr["begin"] - ERR_NS or z["_end"] > fr["read"] + ERR_NS:
                errors.append("frame %d: %s outside [%d, %d], the CPU's begin and read"
                              % (i, gztrace.describe(z), fr["begin"], fr["read"]))
        print("frame %d: scene %.3f ms, heavy %.3f ms" % (i, by["scene"][i]["_dur"] / 1e6,
                                                         by["heavy"][i]["_dur"] / 1e6))


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if v else 0


def inside(inner, outer):
    return outer["_ts"] <= inner["_ts"] and inner["_end"] <= outer["_end"]


def check_sample(trace, frames, macros, shim, errors):
    tid = the_track(trace, errors, prefix="gl_passes" if macros else "GL context")
    if tid is None:
        return
    zones = trace.gpu_zones(tid=tid)
    by = {}
    for z in zones:
        by.setdefault(z["name"], []).append(z)
    for z in by.values():
        z.sort(key=lambda e: e["_ts"])
    want = {}
    if shim:
        want.update({"frame": frames, "shadow": frames, "gbuffer": frames, "lighting": frames})
    if macros:
        want.update({"scene": frames, "draw": 3 * frames})
    got = {k: len(v) for k, v in by.items()}
    if got != want:
        errors.append("zone counts %s, want %s" % (got, want))
        return
    for f in range(frames):
        if shim:
            passes = [by[n][f] for n in ("shadow", "gbuffer", "lighting")]
            for p in passes:
                if not inside(p, by["frame"][f]):
                    errors.append("frame %d: %s" % (f, "pass %s is not inside its frame %s"
                                                   % (gztrace.describe(p),
                                                      gztrace.describe(by["frame"][f]))))
            if not passes[0]["_end"] <= passes[1]["_ts"] <= passes[1]["_end"] <= passes[2]["_ts"]:
                errors.append("frame %d: the passes are not in order: %s"
                              % (f, [gztrace.describe(p) for p in passes]))
        if macros:
            draws = by["draw"][3 * f:3 * f + 3]
            for d in draws:
                if not inside(d, by["scene"][f]):
                    errors.append("frame %d: %s is not inside the scene %s"
                                  % (f, gztrace.describe(d), gztrace.describe(by["scene"][f])))
            if shim:
                for d, p in zip(draws, passes):
                    if not inside(d, p):
                        errors.append("frame %d: %s is not inside its pass %s"
                                      % (f, gztrace.describe(d), gztrace.describe(p)))
    if shim:
        light = median(z["_dur"] for z in by["lighting"])
        shadow = median(z["_dur"] for z in by["shadow"])
        print("median pass durations: shadow %.3f ms, lighting %.3f ms" % (shadow / 1e6, light / 1e6))
        if not light > shadow:
            errors.append("lighting (200 iterations a pixel, %.1f us) is not longer than shadow "
                          "(20, %.1f us)" % (light / 1e3, shadow / 1e3))


def check_contexts(trace, stdout_without, errors):
    names = trace.thread_names()
    tracks = {}
    for tid in trace.gpu_tracks():
        m = re.match(r"GL context (\d+) \(", names.get(tid) or "")
        if not m:
            errors.append("GPU track %r is not a GL context" % names.get(tid))
            continue
        tracks[int(m.group(1))] = sorted({z["name"] for z in trace.gpu_zones(tid=tid)})
    print("tracks by creation number: %s" % tracks)
    if sorted(tracks) != [1, 2]:
        errors.append("GL context tracks %s, want 1 and 2 (the failed creation takes no number)"
                      % sorted(tracks))
    if "on first" not in tracks.get(1, []) or "on second" not in tracks.get(2, []):
        errors.append("zones by track %s: want 'on first' on GL context 1 (created first) and "
                      "'on second' on GL context 2 (created second, made current first)"
                      % tracks)
    said = [l for l in stdout_without.splitlines() if "failed creation error" in l]
    if not said or said[0] not in trace_stdout[0]:
        errors.append("the failed creation's EGL error differs with the shim: %r without"
                      % said)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--mode", choices=["groups", "state", "macros", "contexts", "sample",
                                       "noswap", "stress", "churn"],
                    required=True)
    ap.add_argument("--end", choices=sorted(SYNC_CALL), default="finish",
                    help="noswap: the call that ends each frame")
    ap.add_argument("--count", type=int, default=100000, help="stress, churn: how many")
    ap.add_argument("--macros", action="store_true", help="sample: the build with the macros")
    ap.add_argument("--no-shim", action="store_true", help="run without the shim (macros)")
    ap.add_argument("--tool", help="run through `gpuzones run` (groups)")
    ap.add_argument("--frames", type=int, default=6)
    ap.add_argument("--heavy", type=int, default=1000)
    ap.add_argument("--xvfb", help="the Xvfb program: run the GLX build on a server of its own")
    a = ap.parse_args()
    errors = []
    xserver = Xvfb(a.xvfb) if a.xvfb else None
    display = xserver.display if xserver else None
    try:
        run_mode(a, display, errors)
    finally:
        if xserver:
            xserver.close()
    if errors:
        fail(errors)
    print("PASS")


def run_mode(a, display, errors):
    with tempfile.TemporaryDirectory() as tmp:
        if a.mode == "groups":
            truth_path = os.path.join(tmp, "truth.jsonl")
            rc, trace = run(a.program, a.shim, ["groups", truth_path, str(a.frames), str(a.heavy)],
                            tmp, a.tool, display)
            if rc != 0:
                fail(["program exited with %d" % rc])
            with open(truth_path) as f:
                truth = [json.loads(line) for line in f]
            check_groups(trace, truth, errors)
        elif a.mode in ("noswap", "stress", "churn"):
            truth_path = os.path.join(tmp, "truth.jsonl")
            args = {"noswap": ["noswap", truth_path, str(a.frames), a.end, str(a.heavy)],
                    "stress": ["stress", truth_path, str(a.count)],
                    "churn": ["churn", truth_path, str(a.count)]}[a.mode]
            rc, trace = run(a.program, a.shim, args, tmp, display=display)
            if rc != 0:
                fail(["program exited with %d" % rc])
            with open(truth_path) as f:
                truth = [json.loads(line) for line in f]
            if a.mode == "noswap":
                check_noswap(trace, truth, a.end, errors)
            elif a.mode == "stress":
                check_stress(trace, truth, errors)
            else:
                check_churn(trace, truth, errors)
        elif a.mode == "macros":
            truth_path = os.path.join(tmp, "truth.jsonl")
            rc, trace = run(a.program, None if a.no_shim else a.shim,
                            ["macros", truth_path, str(a.frames), str(a.heavy)], tmp,
                            display=display)
            if rc != 0:
                fail(["program exited with %d" % rc])
            with open(truth_path) as f:
                truth = [json.loads(line) for line in f]
            check_macros(trace, truth, not a.no_shim, errors)
        elif a.mode == "sample":
            rc, trace = run(a.program, None if a.no_shim else a.shim, [str(a.frames)], tmp,
                            display=display)
            if rc != 0:
                fail(["the sample exited with %d" % rc])
            check_sample(trace, a.frames, a.macros, not a.no_shim, errors)
        elif a.mode == "contexts":
            rc, trace = run(a.program, a.shim, ["contexts"], tmp, display=display)
            rc0 = subprocess.run([a.program, "contexts"], capture_output=True, text=True,
                                 env=dict(os.environ, LIBGL_ALWAYS_SOFTWARE="1",
                                          EGL_LOG_LEVEL="fatal"), timeout=100)
            if rc != 0 or rc0.returncode != 0:
                fail(["program exited with %d (%d without the shim)" % (rc, rc0.returncode)])
            check_contexts(trace, rc0.stdout, errors)
        else:
            rc, trace = run(a.program, a.shim, ["state"], tmp, display=display)
            if rc != 0:
                errors.append("the program saw GL state change across a wrapped call (exit %d)" % rc)
            tid = the_track(trace, errors)
            if tid is not None:
                names = {z["name"] for z in trace.gpu_zones(tid=tid)}
                if not {"outer", "inner", "frame"} <= names:
                    errors.append("the shim was not active: zones %s" % sorted(names))
        errors += trace.accounting_errors()


if __name__ == "__main__":
    main()
