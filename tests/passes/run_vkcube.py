#!/usr/bin/env python3
"""`gpuzones run -l LEVEL -- vkcube --c N` on an Xvfb server of the test's
own (lavapipe presenting to it), and its trace and summary. vkcube records
one command buffer per swapchain image, once, with SIMULTANEOUS_USE, and
before each frame waits for the fence of the frame two before; here each
image's command buffer last ran no later than that frame, so no two
executions of one overlap and everything in them must be timed:
  - the queue's "... passes" track has one render pass zone in each of the
    N frame zones ("render pass WxH <swapchain format> + D16_UNORM": vkcube
    names neither its render pass nor its framebuffers), the same name
    every frame, inside a command buffer zone;
  - at the commands level each holds exactly one zone, vkcube's draw of
    the cube ("draw 36 ×1" and its pipeline's part), nested in it; at the
    passes level none;
  - the summary lists the render pass (kind pass) and, at the commands
    level, the draw (kind command) with those counts, render passes first,
    and no zone that was not timed.
vkcube (Debian's vulkan-tools) that is missing, or that cannot present
here without gpuzones either, makes the test skip (exit 77) and say why.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vk"))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import check_passes  # noqa: E402
import gztrace  # noqa: E402
from xvfb import Xvfb  # noqa: E402

LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
SKIP = 77
PASS_NAME = re.compile(r"^render pass (\d+)×(\d+) ([A-Z0-9_]+) \+ D16_UNORM$")
DRAW_NAME = re.compile(r"^draw 36 ×1( .+)?$")
UNTIMED_LINE = re.compile(r"^gpuzones: \d+ .* were not timed: ")
TIMEOUT_S = 120


def run(cmd, env):
    try:
        return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              errors="replace", timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None


def check(errors, t, err, level, frames_wanted):
    errors += t.accounting_errors()
    names = t.thread_names()
    passes = [tid for tid, n in names.items() if isinstance(n, str) and n.endswith(" passes")]
    frame_tracks = [tid for tid, n in names.items() if isinstance(n, str) and n.endswith(" frames")]
    if len(passes) != 1 or len(frame_tracks) != 1:
        errors.append("want one '... passes' and one '... frames' track, have %s" % sorted(
            n for n in names.values() if isinstance(n, str)))
        return
    frames = sorted(t.gpu_zones(tid=frame_tracks[0]), key=lambda z: z["_ts"])
    if len(frames) != frames_wanted:
        errors.append("%d frame zones for vkcube --c %d" % (len(frames), frames_wanted))
    for e in t.build_tree(passes[0]):
        errors.append("passes track: " + e)
    zones = t.track_order(passes[0])
    tops = [z for z in zones if z.get("_parent") is None]
    rpasses = [z for z in tops if z.get("args", {}).get("level") == "pass"]
    cmdbufs = t.gpu_zones(level="cmdbuf")
    pass_names = {z["name"] for z in rpasses}
    if len(pass_names) != 1 or not PASS_NAME.match(next(iter(pass_names))):
        errors.append("render pass zones named %s, want one name like 'render pass 500×500 B8G8R8A8_UNORM + "
                      "D16_UNORM'" % sorted(pass_names))
    for i, f in enumerate(frames):
        inside = [z for z in rpasses if f["_ts"] <= z["_ts"] and z["_end"] <= f["_end"]]
        if len(inside) != 1:
            errors.append("frame %d: %d render pass zones in its frame zone, want 1" % (i, len(inside)))
    if len(rpasses) != len(frames):
        errors.append("%d render pass zones for %d frames" % (len(rpasses), len(frames)))
    draws = []
    for z in rpasses:
        if not any(c["_ts"] <= z["_ts"] and z["_end"] <= c["_end"] for c in cmdbufs):
            errors.append("%s lies in no command buffer zone" % gztrace.describe(z))
        kids = t.children(z)
        if level == "commands":
            if len(kids) != 1 or not DRAW_NAME.match(kids[0]["name"]) or \
                    kids[0].get("args", {}).get("level") != "command":
                errors.append("%s holds %s, want vkcube's one draw ('draw 36 ×1 ...')"
                              % (gztrace.describe(z), [gztrace.describe(k) for k in kids]))
            draws += kids
        elif kids:
            errors.append("zones inside %s at the passes level: %s" % (gztrace.describe(z),
                                                                     [k["name"] for k in kids]))
    rows = check_passes.summary_rows(err)
    want = [(n, "pass", len(rpasses)) for n in pass_names]
    want += [(n, "command", sum(1 for d in draws if d["name"] == n)) for n in {d["name"] for d in draws}]
    for name, kind, n in want:
        hit = [r for r in rows if r[1] == kind and check_passes.shown_as(name, r[0])]
        if len(hit) != 1 or hit[0][2] != n:
            errors.append("summary: want a %s row %r counting %d, have %s" % (kind, name, n, hit))
    kinds = [r[1] for r in rows]
    if "pass" in kinds and kinds.index("pass") != 0:
        errors.append("summary: the render passes are not first: %s" % rows)
    untimed = [l for l in err.splitlines() if UNTIMED_LINE.match(l)]
    if untimed:
        errors.append("summary: zones of vkcube's SIMULTANEOUS_USE command buffers not timed: %s" % untimed)
    print("checked: %d frames, %d render pass zones (%s), %d draw zones (%s)"
          % (len(frames), len(rpasses), ", ".join(sorted(pass_names)), len(draws),
             ", ".join(sorted({d["name"] for d in draws}))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpuzones", required=True, help="the build tree's tools/gpuzones")
    ap.add_argument("--xvfb", required=True)
    ap.add_argument("--vkcube", default="vkcube")
    ap.add_argument("--level", choices=("passes", "commands"), required=True)
    ap.add_argument("--frames", type=int, default=30)
    a = ap.parse_args()
    vkcube = shutil.which(a.vkcube)
    if not vkcube:
        print("SKIP: %s not found (Debian: apt-get install vulkan-tools)" % a.vkcube)
        return SKIP
    errors = []
    x = Xvfb(a.xvfb)
    tmp = tempfile.mkdtemp(prefix="gz-vkcube-")
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUZONES_", "VK_"))}
        env.update(DISPLAY=x.display, VK_ICD_FILENAMES=LAVAPIPE_ICD)
        trace = os.path.join(tmp, "vkcube.json")
        cube = [vkcube, "--c", str(a.frames)]
        p = run([a.gpuzones, "run", "-o", trace, "-l", a.level, "--"] + cube, env)
        if p is None or p.returncode != 0:
            alone = run(cube, env)
            if alone is None or alone.returncode != 0:
                why = "timed out" if alone is None else "exit status %d: %s" % (alone.returncode,
                                                                                 alone.stderr.strip()[-500:])
                print("SKIP: vkcube does not run here without gpuzones either (%s)" % why)
                return SKIP
            errors.append("vkcube failed under gpuzones: %s" % (
                "timed out" if p is None else "exit status %d: %s" % (p.returncode, p.stderr[-2000:])))
        else:
            rejected = [l for l in p.stderr.splitlines() if l.startswith("gpuzones: GPUZONES_LEVEL=")]
            if rejected:
                errors.append("the layer does not take GPUZONES_LEVEL=%s: %s" % (a.level, rejected))
            check(errors, gztrace.load(trace, strict=True), p.stderr, a.level, a.frames)
    except (OSError, gztrace.TraceError) as e:
        errors.append("no loadable trace: %s" % e)
    finally:
        x.close()
    for e in errors:
        print("FAIL:", e)
    if errors:
        print("vkcube GPUZONES_LEVEL=%s: FAILED; files in %s" % (a.level, tmp))
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("vkcube GPUZONES_LEVEL=%s: PASS" % a.level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
