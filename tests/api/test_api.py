#!/usr/bin/env python3
"""The public Vulkan API (include/gpuzones/vulkan.h) as a user meets it.

--part installed: `meson install` into a staging directory; the installed
  gpuzones.pc must give the staged include dir and -lgpuzones; api_zones.c
  is compiled against the INSTALLED headers through pkg-config as C and as
  C++, with and without GPUZONES_ENABLE. Enabled: the zones appear with their
  names, colors, nesting, source locations (file, function, line of the
  macro) and inside the host window of their frame. Disabled: no gpuzones
  symbol, no libgpuzones in NEEDED, no trace. Misuse (a zone ended twice, a
  destroyed context used, more zones than the ring holds before a collect)
  gives a "gpuzones:" message, exit status 0 and the right counts. Under
  load: the ring wrapping around, collects in flight beyond the copy
  regions, 300 contexts created and destroyed (zones, resident memory).
--part layer: the volk sample (Vulkan through volk, no libvulkan linked)
  alone and under VK_LAYER_GPUZONES_timing: under the layer the explicit
  zones sit on the layer's queue track, inside the layer's command-buffer
  zone, each once, with one client and one calibration; alone they get a
  calibrated track of their own. And a collect with a command buffer the
  layer saw not recording is refused with a message.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vk"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import gztrace  # noqa: E402
import installed  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RING = 2048          # GZ_VKX_ZONES: zones one context holds between collects
OVERFLOW = 3000      # zones api_zones.c records before its first collect
# The plain TracyVkContext is uncalibrated: a start-up sync point (submit +
# wait, ~0.1 ms wide on lavapipe) and read-back bounds. A zone may sit that
# far outside the host window of its frame, and CI is a loaded 2-core VM.
SYNC_SLACK_NS = 2_000_000
# Calibrated pairs on lavapipe deviate by 1 ns; the window is exact ground
# truth (host times around submit and fence wait).
CALIBRATED_SLACK_NS = 100_000

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def run(cmd, env=None, timeout=120):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def base_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUZONES_", "VK_INSTANCE_LAYERS", "VK_ADD_LAYER_PATH",
                                "VK_LOADER_LAYERS"))}
    env.setdefault("VK_ICD_FILENAMES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
    return env


def layer_env(env, layer_dir):
    env = dict(env)
    env.update(VK_ADD_LAYER_PATH=layer_dir, VK_INSTANCE_LAYERS="VK_LAYER_GPUZONES_timing")
    return env


# ---- the installed package ---------------------------------------------------

def install(build, tmp):
    stage = os.path.join(tmp, "stage")
    r = installed.meson_install(build, stage)
    if not check(r.returncode == 0, "meson install failed: " + r.stderr[-500:]):
        return None
    pcs = installed.pc_dirs(stage)
    if not check(len(pcs) == 1, "gpuzones.pc not installed once: %s" % pcs):
        return None
    cflags = installed.pkg_config(stage, "--cflags", "gpuzones") or []
    libs = installed.pkg_config(stage, "--libs", "gpuzones") or []
    incdirs = [f[2:] for f in cflags if f.startswith("-I")]
    libdirs = [f[2:] for f in libs if f.startswith("-L")]
    check(len(incdirs) == 1 and os.path.isfile(os.path.join(incdirs[0], "gpuzones", "vulkan.h"))
          and os.path.isfile(os.path.join(incdirs[0], "gpuzones", "gpuzones.h")),
          "pkg-config --cflags %s does not point at the installed gpuzones/vulkan.h" % cflags)
    check("-lgpuzones" in libs and len(libdirs) == 1 and
          any(f.startswith("libgpuzones.so") for f in os.listdir(libdirs[0])),
          "pkg-config --libs %s does not point at the installed libgpuzones" % libs)
    if failures:
        return None
    return cflags, libs, libdirs[0]


def compile_programs(pkg, tmp, build):
    """api_zones as C and C++, enabled and not. Returns {name: path}."""
    cflags, libs, libdir = pkg
    warn = ["-Wall", "-Wextra", "-Werror"] + installed.sanitize_flags(build)
    vk_o = os.path.join(tmp, "api_vk.o")
    r = run(["cc", "-std=gnu11"] + warn + ["-c", os.path.join(HERE, "api_vk.c"), "-o", vk_o])
    if not check(r.returncode == 0, "api_vk.c does not build: " + r.stderr[-1500:]):
        return {}
    src = os.path.join(HERE, "api_zones.c")
    cc, cxx = ["cc", "-std=gnu11"], ["c++", "-std=c++17", "-x", "c++"]
    variants = [("c-on", cc, ["-DGPUZONES_ENABLE"]), ("c-off", cc, []),
                ("cxx-on", cxx, ["-DGPUZONES_ENABLE"]), ("cxx-off", cxx, []),
                ("c-symtab-on", cc, ["-DGPUZONES_ENABLE", "-DAPI_SYMBOL_TABLE"]),
                ("cxx-host-on", cxx, ["-DGPUZONES_ENABLE", "-DAPI_HOST_CALIBRATED"])]
    out = {}
    for name, driver, defines in variants:
        enabled = bool(defines)
        exe = os.path.join(tmp, "api-zones-" + name)
        cmd = driver + defines + warn + cflags + ["-I" + HERE, src, "-x", "none", vk_o, "-o", exe]
        if enabled:
            cmd += libs + ["-Wl,-rpath," + libdir]
        # Disabled: no -lgpuzones at all, so the link proves that nothing
        # refers to gpuzones.
        cmd += ["-lvulkan"]
        r = run(cmd)
        if check(r.returncode == 0, "%s does not build: %s\n%s" % (name, " ".join(cmd),
                                                                   r.stderr[-1500:])):
            out[name] = exe
    return out


def marker_lines():
    lines = {}
    with open(os.path.join(HERE, "api_zones.c")) as f:
        for i, text in enumerate(f, 1):
            m = re.search(r"/\*@(\w+)\*/", text)
            if m:
                lines[m.group(1)] = i
    return lines


def frames_of(stdout):
    out = []
    for line in stdout.splitlines():
        p = line.split()
        if len(p) == 4 and p[0] == "frame" and p[1] != "99":  # 99: the last collect
            out.append((int(p[2]), int(p[3])))
    return out


def inside(inner, outer, slack=0):
    return outer["_ts"] - slack <= inner["_ts"] and inner["_end"] <= outer["_end"] + slack


def run_traced(exe, args, tmp, tag, env=None):
    trace = os.path.join(tmp, tag + ".json")
    env = dict(env or base_env(), GPUZONES_OUTPUT=trace)
    r = run([exe] + args, env=env)
    return r, trace


def check_zones_trace(tag, r, trace, frames_n, clock):
    if not check(r.returncode == 0, "%s: exit %d: %s" % (tag, r.returncode, r.stderr[-800:])):
        return
    check("enabled 1" in r.stdout, "%s: GpuzonesIsEnabled() is not 1" % tag)
    t = gztrace.load(trace)
    for e in t.accounting_errors():
        check(False, "%s: %s" % (tag, e))
    tracks = t.gpu_tracks()
    if not check(len(tracks) == 1, "%s: %d GPU tracks, expected 1" % (tag, len(tracks))):
        return
    tid = tracks[0]
    check(t.thread_names().get(tid) == "api test", "%s: track named %r, not 'api test'"
          % (tag, t.thread_names().get(tid)))
    zones = t.gpu_zones(tid=tid)
    names = sorted(z["name"] for z in zones)
    expect = sorted(["Outer", "Fill", "Manual"] * frames_n + ["Pass %d" % f for f in range(frames_n)])
    check(names == expect, "%s: zones %s, expected %s" % (tag, names, expect))
    check(not t.gpu_zones(name="Inactive"), "%s: an inactive zone was recorded" % tag)
    lines = marker_lines()
    for z in zones:
        a = z.get("args", {})
        key = "Pass" if z["name"].startswith("Pass") else z["name"]
        check(a.get("level") == "zone", "%s: %s has level %r" % (tag, z["name"], a.get("level")))
        check(a.get("function") == "record_frame" and str(a.get("file", "")).endswith("api_zones.c")
              and a.get("line") == lines.get(key),
              "%s: %s has source location %s:%s:%s, expected record_frame api_zones.c:%s"
              % (tag, z["name"], a.get("function"), a.get("file"), a.get("line"), lines.get(key)))
        want_color = "#00ff00" if z["name"] == "Outer" else None
        check(a.get("color") == want_color, "%s: %s has color %r" % (tag, z["name"], a.get("color")))
    check(not t.nesting_errors(tid), "%s: nesting errors %s" % (tag, t.nesting_errors(tid)))
    windows = frames_of(r.stdout)
    outers = sorted(t.gpu_zones(tid=tid, name="Outer"), key=lambda z: z["_ts"])
    if not check(len(windows) == frames_n == len(outers), "%s: frames %d, windows %d, Outer %d"
                 % (tag, frames_n, len(windows), len(outers))):
        return
    for f, (outer, (t0, t1)) in enumerate(zip(outers, windows)):
        slack = CALIBRATED_SLACK_NS if clock == "calibrated" else SYNC_SLACK_NS
        check(t0 - slack <= outer["_ts"] and outer["_end"] <= t1 + slack,
              "%s: frame %d's Outer [%d, %d] is outside its host window [%d, %d] +- %d ns"
              % (tag, f, outer["_ts"], outer["_end"], t0, t1, slack))
        kids = [z for z in zones if z is not outer and inside(z, outer)]
        kid_names = sorted(z["name"] for z in kids)
        check(kid_names == sorted(["Fill", "Manual", "Pass %d" % f]),
              "%s: frame %d's Outer holds %s" % (tag, f, kid_names))
        pas = [z for z in kids if z["name"] == "Pass %d" % f]
        man = [z for z in kids if z["name"] == "Manual"]
        fil = [z for z in kids if z["name"] == "Fill"]
        if pas and man and fil:
            check(inside(man[0], pas[0]), "%s: frame %d: Manual is not inside Pass" % (tag, f))
            check(fil[0]["_end"] <= pas[0]["_ts"], "%s: frame %d: Fill does not end before Pass"
                  % (tag, f))
    # The clock's band is said with what sets it: not a measured error.
    band = {"calibrated": "the driver's maxDeviation",
            "sync point": "the sync points' brackets"}[clock]
    check(re.search(r'track "api test": %d zones, 0 dropped; clock: %s, \u00b1\d+ ns by %s'
                    % (4 * frames_n, clock, re.escape(band)), r.stderr),
          "%s: summary does not say %d zones, 0 dropped, clock %s, +-N ns by %s:\n%s"
          % (tag, 4 * frames_n, clock, band, r.stderr[-600:]))


def check_disabled(tag, exe, tmp):
    r = run(["nm", exe])
    check(r.returncode == 0 and not re.search(r"gpuzones", r.stdout, re.I),
          "%s: nm shows gpuzones symbols: %s" % (tag, re.findall(r".*gpuzones.*", r.stdout, re.I)))
    r = run(["readelf", "-d", exe])
    check("libgpuzones" not in r.stdout, "%s: links libgpuzones" % tag)
    r, trace = run_traced(exe, ["zones", "2"], tmp, tag)
    check(r.returncode == 0 and "enabled 0" in r.stdout, "%s: run failed: %s" % (tag, r.stderr[-500:]))
    check(not os.path.exists(trace), "%s: wrote a trace without GPUZONES_ENABLE" % tag)


def check_misuse(exe, tmp):
    r, trace = run_traced(exe, ["end-twice"], tmp, "end-twice")
    if check(r.returncode == 0, "end-twice: exit %d: %s" % (r.returncode, r.stderr[-500:])):
        check("gpuzones: a Vulkan zone was ended twice" in r.stderr, "end-twice: no message")
        check(len(gztrace.load(trace).gpu_zones(name="Twice")) == 1, "end-twice: not one zone")
    r, trace = run_traced(exe, ["destroyed"], tmp, "destroyed")
    if check(r.returncode == 0, "destroyed: exit %d: %s" % (r.returncode, r.stderr[-500:])):
        check(re.search(r"gpuzones: .*destroyed", r.stderr), "destroyed: no message")
        check(not gztrace.load(trace).gpu_zones(name="Late"), "destroyed: a zone was recorded")
    r, trace = run_traced(exe, ["overflow"], tmp, "overflow")
    if check(r.returncode == 0, "overflow: exit %d: %s" % (r.returncode, r.stderr[-500:])):
        t = gztrace.load(trace)
        many = len(t.gpu_zones(name="Many"))
        check("gpuzones: more than %d Vulkan zones" % RING in r.stderr, "overflow: no message")
        check(many == RING, "overflow: %d zones kept, expected the ring's %d" % (many, RING))
        check(len(t.gpu_zones(name="After")) == 1, "overflow: the ring was not free after collects")
        check(re.search(r'"api test": %d zones, %d dropped' % (RING + 1, OVERFLOW - RING), r.stderr),
              "overflow: the summary does not count %d dropped:\n%s" % (OVERFLOW - RING, r.stderr[-400:]))


def check_threads(exe, tmp):
    """Four threads record zones at once into their own command buffers."""
    r, trace = run_traced(exe, ["threads"], tmp, "threads")
    if not check(r.returncode == 0, "threads: exit %d: %s" % (r.returncode, r.stderr[-500:])):
        return
    t = gztrace.load(trace)
    works = t.gpu_zones(name="Work")
    check(len(works) == 4 * 200, "threads: %d Work zones, expected 800" % len(works))
    for i in range(4):
        outer = t.gpu_zones(name="Thread %d" % i)
        if check(len(outer) == 1, "threads: %d zones named Thread %d" % (len(outer), i)):
            inner = [z for z in works if inside(z, outer[0])]
            check(len(inner) == 200, "threads: Thread %d holds %d Work zones, expected 200"
                  % (i, len(inner)))
    check(re.search(r'"api test": 804 zones, 0 dropped', r.stderr), "threads: summary: "
          + r.stderr[-300:])


# A context created and destroyed may leave this much resident memory: the
# client's state of its track (its clock model alone is 49.5 KiB), kept
# until the process ends for want of a call that ends a track (measured
# here: 52 KiB). The context's own host buffer (1 MiB) and query pool go.
CHURN_KIB = 100


def check_stress(tag, exe, tmp, slack, churn, frames=20):
    """The ring wrapping around (20 frames of 2000 zones, each collected,
    submitted and waited for: none dropped), 40 frames with their collects
    submitted together (more than the copy regions), and with churn 300
    contexts created and destroyed one after the other."""
    # Fewer frames under the sanitizers (each takes seconds on lavapipe
    # there): 4096 zones of ring still wrap more than twice.
    r, trace = run_traced(exe, ["wrap", str(frames)], tmp, tag + "-wrap")
    if check(r.returncode == 0, "%s wrap: exit %d: %s" % (tag, r.returncode, r.stderr[-500:])):
        t = gztrace.load(trace)
        for e in t.accounting_errors():
            check(False, "%s wrap: %s" % (tag, e))
        zs = sorted(t.gpu_zones(name="Wrap"), key=lambda z: z["_ts"])
        windows = frames_of(r.stdout)
        if check(len(zs) == frames * 2000 and len(windows) == frames,
                 "%s wrap: %d zones in %d frames, expected %d in %d"
                 % (tag, len(zs), len(windows), frames * 2000, frames)):
            for f, (t0, t1) in enumerate(windows):
                out = [z for z in zs[2000 * f:2000 * (f + 1)]
                       if z["_ts"] < t0 - slack or z["_end"] > t1 + slack]
                check(not out, "%s wrap: frame %d: %d zones outside its host window, e.g. %s"
                      % (tag, f, len(out), out and gztrace.describe(out[0])))
    r, trace = run_traced(exe, ["pipelined", "40"], tmp, tag + "-pipelined")
    if check(r.returncode == 0, "%s pipelined: exit %d: %s" % (tag, r.returncode, r.stderr[-500:])):
        t = gztrace.load(trace)
        for e in t.accounting_errors():
            check(False, "%s pipelined: %s" % (tag, e))
        zs = t.gpu_zones(name="Piped")
        win = [l.split() for l in r.stdout.splitlines() if l.startswith("pipelined ")]
        if check(len(zs) == 40 * 40 and win, "%s pipelined: %d zones, expected 1600" % (tag, len(zs))):
            t0, t1 = int(win[0][1]), int(win[0][2])
            out = [z for z in zs if z["_ts"] < t0 - slack or z["_end"] > t1 + slack]
            check(not out, "%s pipelined: %d zones outside the host window" % (tag, len(out)))
    if not churn:
        return
    env = base_env()
    if "ASAN_OPTIONS" in env:  # freed memory would wait in the sanitizer's quarantine
        env["ASAN_OPTIONS"] += ":quarantine_size_mb=0"
    r, trace = run_traced(exe, ["churn", "300"], tmp, tag + "-churn", env=env)
    if check(r.returncode == 0, "%s churn: exit %d: %s" % (tag, r.returncode, r.stderr[-500:])):
        t = gztrace.load(trace)
        for e in t.accounting_errors():
            check(False, "%s churn: %s" % (tag, e))
        check("contexts alive at once" not in r.stderr and "more than" not in r.stderr,
              "%s churn: a context was refused: %s" % (tag, r.stderr[-300:]))
        zs = sorted(t.gpu_zones(name="Churn"), key=lambda z: z["_ts"])
        windows = [tuple(int(x) for x in l.split()[2:4]) for l in r.stdout.splitlines()
                   if l.startswith("churn ")]
        if check(len(zs) == 300 == len(windows), "%s churn: %d zones for %d contexts, expected 300"
                 % (tag, len(zs), len(windows))):
            out = [z for z, (t0, t1) in zip(zs, windows) if z["_ts"] < t0 - slack or z["_end"] > t1 + slack]
            check(not out, "%s churn: %d zones outside their context's window" % (tag, len(out)))
        rss = [l.split() for l in r.stdout.splitlines() if l.startswith("rss ")]
        if check(rss, "%s churn: no rss line" % tag):
            per = (int(rss[0][2]) - int(rss[0][1])) / 270
            print("%s churn: %.1f KiB of resident memory a context" % (tag, per))
            check(per <= CHURN_KIB, "%s churn: resident memory grows by %.1f KiB a context created "
                  "and destroyed (at most %d expected)" % (tag, per, CHURN_KIB))


def part_installed(args, tmp):
    pkg = install(args.build, tmp)
    if not pkg:
        return
    progs = compile_programs(pkg, tmp, args.build)
    # The plain context is uncalibrated (a sync point); the symbol-table
    # and host-calibrated ones take calibrated pairs (lavapipe has them).
    for name, clock in (("c-on", "sync point"), ("cxx-on", "sync point"),
                        ("c-symtab-on", "calibrated"), ("cxx-host-on", "calibrated")):
        if progs.get(name):
            r, trace = run_traced(progs[name], ["zones", "3"], tmp, name)
            check_zones_trace(name, r, trace, 3, clock)
    for name in ("c-off", "cxx-off"):
        if progs.get(name):
            check_disabled(name, progs[name], tmp)
    if progs.get("c-on"):
        check_misuse(progs["c-on"], tmp)
        check_threads(progs["c-on"], tmp)
        check_stress("c-on", progs["c-on"], tmp, SYNC_SLACK_NS, churn=True,
                     frames=6 if installed.sanitize_flags(args.build) else 20)
    if progs.get("cxx-host-on"):  # host query reset: slots freed at read-back
        check_stress("cxx-host-on", progs["cxx-host-on"], tmp, CALIBRATED_SLACK_NS, churn=False,
                     frames=6 if installed.sanitize_flags(args.build) else 20)


# ---- the volk sample, alone and under the layer ------------------------------

def sample_windows(stdout):
    return frames_of(stdout)


def part_layer(args, tmp):
    frames = 4
    r = run(["readelf", "-d", args.volk_sample])
    check("libvulkan" not in r.stdout, "the volk sample links libvulkan")

    # Alone: a calibrated track of its own.
    r, trace = run_traced(args.volk_sample, ["--frames", str(frames)], tmp, "volk-alone")
    if check(r.returncode == 0, "volk sample alone: exit %d: %s" % (r.returncode, r.stderr[-800:])):
        t = gztrace.load(trace)
        tracks = t.gpu_tracks()
        check(len(tracks) == 1 and t.thread_names().get(tracks[0]) == "volk sample",
              "volk alone: tracks %s" % t.thread_names())
        check(re.search(r'"volk sample": %d zones, 0 dropped; clock: calibrated, \u00b1\d+ ns '
                        r"by the driver's maxDeviation" % (4 * frames), r.stderr),
              "volk alone: summary: " + r.stderr[-500:])
        fr = sorted(t.gpu_zones(name="Frame"), key=lambda z: z["_ts"])
        for i, (z, (t0, t1)) in enumerate(zip(fr, sample_windows(r.stdout))):
            check(t0 - CALIBRATED_SLACK_NS <= z["_ts"] and z["_end"] <= t1 + CALIBRATED_SLACK_NS,
                  "volk alone: Frame %d [%d, %d] outside [%d, %d]" % (i, z["_ts"], z["_end"], t0, t1))

    # Under the layer: one timeline.
    env = layer_env(base_env(), args.layer_dir)
    r, trace = run_traced(args.volk_sample, ["--frames", str(frames)], tmp, "volk-layer", env)
    if check(r.returncode == 0, "volk under the layer: exit %d: %s" % (r.returncode, r.stderr[-800:])):
        check(r.stderr.count("trace written") == 1, "volk under the layer: not one client:\n"
              + r.stderr[-800:])
        t = gztrace.load(trace)
        tracks = t.gpu_tracks()
        if check(len(tracks) == 1, "volk under the layer: %d tracks (%s), expected the queue's"
                 % (len(tracks), t.thread_names())):
            tid = tracks[0]
            explicit = t.gpu_zones(tid=tid, level="zone")
            cmdbufs = t.gpu_zones(tid=tid, level="cmdbuf")
            submits = t.gpu_zones(tid=tid, level="submit")
            names = sorted(z["name"] for z in explicit)
            check(names == sorted(["Frame", "Fill", "Copy", "Copy half"] * frames),
                  "volk under the layer: explicit zones %s" % names)
            # context creation, each frame, the final collect
            check(len(submits) == frames + 2 and len(cmdbufs) == frames + 2,
                  "volk under the layer: %d submit and %d cmdbuf zones, expected %d"
                  % (len(submits), len(cmdbufs), frames + 2))
            keys = [(z["name"], z["_ts"], z["_dur"]) for z in t.gpu_zones(tid=tid)]
            check(len(keys) == len(set(keys)), "volk under the layer: a zone appears twice")
            check(not t.nesting_errors(tid), "volk under the layer: nesting errors %s"
                  % t.nesting_errors(tid))
            for z in explicit:
                check(sum(1 for c in cmdbufs if inside(z, c)) == 1,
                      "volk under the layer: %s at %d is not inside one command-buffer zone"
                      % (z["name"], z["_ts"]))
            fr = sorted((z for z in explicit if z["name"] == "Frame"), key=lambda z: z["_ts"])
            for f in fr:
                kids = sorted(z["name"] for z in explicit if z is not f and inside(z, f))
                check(kids == ["Copy", "Copy half", "Fill"], "volk under the layer: Frame holds %s"
                      % kids)
            for i, (z, (t0, t1)) in enumerate(zip(fr, sample_windows(r.stdout))):
                check(t0 - CALIBRATED_SLACK_NS <= z["_ts"] and z["_end"] <= t1 + CALIBRATED_SLACK_NS,
                      "volk under the layer: Frame %d outside its host window" % i)
            check(re.search(r'track "VkQueue [^"]*": %d zones, 0 dropped' % (4 * frames + 2 * (frames + 2)),
                            r.stderr), "volk under the layer: summary: " + r.stderr[-600:])
            check(len(re.findall(r'gpuzones: track "', r.stderr)) == 1,
                  "volk under the layer: more than one track (one calibration per queue)")

    # Under validation (above the layer): nothing the explicit context or
    # the layer records may be invalid. VK_ADD_LAYER_PATH keeps the system
    # layers; the loader's log shows validation really loaded.
    venv = dict(env, VK_INSTANCE_LAYERS="VK_LAYER_KHRONOS_validation:VK_LAYER_GPUZONES_timing",
                VK_LOADER_DEBUG="layer")
    r, trace = run_traced(args.volk_sample, ["--frames", "3", "--mb", "4"], tmp, "volk-validation",
                          venv)
    out = r.stdout + r.stderr
    if check(r.returncode == 0, "volk under validation: exit %d: %s" % (r.returncode, out[-800:])):
        check("libVkLayer_khronos_validation.so" in out, "volk under validation: validation did "
              "not load")
        bad = [l for l in out.splitlines() if "VUID" in l or "Validation Error" in l]
        check(not bad, "volk under validation: %s" % bad[:3])
        check(len(gztrace.load(trace).gpu_zones(level="zone")) == 12,
              "volk under validation: not 12 explicit zones")

    # A collect into a command buffer the layer saw end.
    pkg = install(args.build, tmp)
    progs = compile_programs(pkg, tmp, args.build) if pkg else {}
    if progs.get("c-on"):
        r, trace = run_traced(progs["c-on"], ["collect-not-recording"], tmp, "not-recording", env)
        if check(r.returncode == 0, "collect-not-recording: exit %d: %s" % (r.returncode, r.stderr[-500:])):
            check("gpuzones: TracyVkCollect with a command buffer that is not in the recording "
                  "state" in r.stderr, "collect-not-recording: no message")
            check(len(gztrace.load(trace).gpu_zones(name="Before")) == 1,
                  "collect-not-recording: the zone was not read at the next collect")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("installed", "layer"), required=True)
    ap.add_argument("--build")
    ap.add_argument("--volk-sample")
    ap.add_argument("--layer-dir")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gz-api-")
    if args.part == "installed":
        part_installed(args, tmp)
    else:
        part_layer(args, tmp)
    if failures:
        print("api test (%s): %d failed; files in %s" % (args.part, len(failures), tmp))
        return 1
    shutil.rmtree(tmp)
    print("api test (%s): ok" % args.part)
    return 0


if __name__ == "__main__":
    sys.exit(main())
