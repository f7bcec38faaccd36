#!/usr/bin/env python3
"""Frames on a real swapchain (vk_present.c on lavapipe, an Xvfb window):
each vkQueuePresentKHR marks a frame on the CPU (a "frame" instant event on
the presenting thread) and on the GPU (a "frame" zone on the queue's
"... frames" track, from the start of the frame's first submission to the
end of its last). Checks, for N frames of one submit each:
  - N CPU frame marks, each after its frame's present returned (and before
    the next submit);
  - N frame zones (the last may be cut only if the GPU never finished it:
    the program waits, so all N), in order, not overlapping;
  - frame zone i contains the submit zone of frame i (same GPU times) and
    lies inside frame i's CPU window [submit, fence wait returned] within
    ERR_NS;
  - the summary's first line is the frames' GPU span (first work to last,
    idle gaps included), with the count and the p50 and max of the frame
    zones.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import gztrace  # noqa: E402
from xvfb import Xvfb  # noqa: E402

ERR_NS = 200_000  # sync-point calibration on lavapipe: tens of µs; margin for a loaded machine
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--layer-dir", required=True)
    ap.add_argument("--xvfb", required=True)
    ap.add_argument("--frames", type=int, default=30)
    a = ap.parse_args()
    errors = []
    x = Xvfb(a.xvfb)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            trace_path = os.path.join(tmp, "present.json")
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith("GPUZONES_") and not k.startswith("VK_")}
            env.update(DISPLAY=x.display, VK_ICD_FILENAMES=LAVAPIPE_ICD,
                       VK_ADD_LAYER_PATH=os.path.abspath(a.layer_dir),
                       VK_INSTANCE_LAYERS="VK_LAYER_GPUZONES_timing",
                       GPUZONES_OUTPUT=trace_path)
            p = subprocess.run([a.program, str(a.frames)], env=env, capture_output=True,
                               text=True, timeout=120)
            if p.returncode == 77:
                print("SKIP:", p.stderr.strip())
                sys.exit(77)
            if p.returncode != 0:
                print(p.stdout, p.stderr)
                errors.append(f"program exit status {p.returncode}")
                raise SystemExit
            cpu = []
            for line in p.stdout.splitlines():
                f = line.split()
                if f and f[0] == "frame":
                    cpu.append(tuple(int(v) for v in f[2:5]))
            if len(cpu) != a.frames:
                errors.append(f"program reported {len(cpu)} frames, expected {a.frames}")
            trace = gztrace.load(trace_path, strict=True)
            errors += trace.accounting_errors()
            marks = sorted(e["_ts"] for e in trace.events
                           if e.get("ph") == "i" and e.get("cat") == "frame")
            if len(marks) != len(cpu):
                errors.append(f"{len(marks)} CPU frame marks, expected {len(cpu)}")
            for i, (m, (submit, present, done)) in enumerate(zip(marks, cpu)):
                nxt = cpu[i + 1][0] if i + 1 < len(cpu) else float("inf")
                if not (submit <= m <= nxt):
                    errors.append(f"frame mark {i} at {m} outside [{submit}, next submit {nxt}]")
            names = trace.thread_names()
            frame_tids = [t for t, n in names.items() if n.endswith(" frames")]
            if len(frame_tids) != 1:
                errors.append(f"expected one '... frames' track, found {frame_tids}")
                raise SystemExit
            frames = sorted(trace.gpu_zones(tid=frame_tids[0]), key=lambda z: z["_ts"])
            submits = sorted((z for z in trace.gpu_zones(level="submit")),
                             key=lambda z: z["_ts"])
            if len(frames) != len(cpu):
                errors.append(f"{len(frames)} GPU frame zones, expected {len(cpu)}")
            for i, z in enumerate(frames[:len(cpu)]):
                if z["name"] != "frame" or z["args"].get("level") != "frame":
                    errors.append(f"frame zone {i}: {gztrace.describe(z)}")
                b, e = z["_ts"], z["_ts"] + z["_dur"]
                submit, present, done = cpu[i]
                if b < submit - ERR_NS or e > done + ERR_NS:
                    errors.append(f"frame zone {i} [{b}, {e}] outside its CPU window "
                                  f"[{submit}, {done}] ± {ERR_NS} ns")
                if i and b < frames[i - 1]["_ts"] + frames[i - 1]["_dur"]:
                    errors.append(f"frame zone {i} overlaps the one before")
                if i < len(submits):
                    s = submits[i]
                    if abs(s["_ts"] - b) > 1000 or abs(s["_ts"] + s["_dur"] - e) > 1000:
                        errors.append(f"frame zone {i} [{b}, {e}] is not its one submit's "
                                      f"[{s['_ts']}, {s['_ts'] + s['_dur']}]")
            # The frame-time counter tracks: the GPU time of each frame zone,
            # and the interval between the presenting thread's marks.
            gpu_c = [e for e in trace.events if e.get("ph") == "C"
                     and str(e.get("name", "")).startswith("GPU frame time: ")]
            if len(gpu_c) != len(frames) or any(
                    abs(float(c["args"]["ms"]) * 1e6 - z["_dur"]) > 1000 for c, z in zip(
                        sorted(gpu_c, key=lambda c: c["_ts"]), frames)):
                errors.append("%d 'GPU frame time' counter events for %d frame zones, or values "
                              "that are not their durations" % (len(gpu_c), len(frames)))
            cpu_c = [e for e in trace.events if e.get("ph") == "C"
                     and str(e.get("name", "")).startswith("frame interval: ")]
            if len(cpu_c) != max(len(marks) - 1, 0):
                errors.append("%d 'frame interval' counter events for %d frame marks"
                              % (len(cpu_c), len(marks)))
            # The summary's first line: the frames' GPU span (first work to
            # last, idle gaps included), its count and its largest value
            # those of the frame zones; p50 the nearest-rank median, from a
            # histogram (within 3 %).
            summary = [ln for ln in p.stderr.splitlines() if ln.startswith("gpuzones:")]
            m = re.match(r'gpuzones: GPU span per frame, first GPU work to last, idle gaps '
                         r'included \("frame", (\d+) frames\): p50 ([\d.]+) ms, p95 ([\d.]+) ms, '
                         r'max ([\d.]+) ms$', summary[0] if summary else "")
            durs = sorted(z["_dur"] / 1e6 for z in frames)
            median = durs[(len(durs) + 1) // 2 - 1] if durs else 0
            if not m:
                errors.append("the summary does not begin with the frames' GPU span:\n  "
                              + "\n  ".join(summary))
            elif durs and (int(m.group(1)) != len(frames)
                           or abs(float(m.group(4)) - durs[-1]) > 0.0015
                           or abs(float(m.group(2)) - median) > 0.03 * median + 0.0015):
                errors.append("the summary's frame span (%s frames, p50 %s, max %s ms) is not "
                              "the frame zones' (%d, median %.3f, max %.3f ms)"
                              % (m.group(1), m.group(2), m.group(4), len(frames), median,
                                 durs[-1]))
    except SystemExit:
        pass
    finally:
        x.close()
    if errors:
        for e in errors:
            print("FAIL:", e)
        sys.exit(1)
    print(f"ok: {a.frames} frames, CPU marks and GPU frame zones in their windows")


if __name__ == "__main__":
    main()
