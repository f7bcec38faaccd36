#!/usr/bin/env python3
"""Runs gz-sample-vk-passes under the gpuzones layer at a GPUZONES_LEVEL and
checks the trace against the sample's own truth (its own timestamps around
each render pass instance, dispatch, copy and fill, and the zone names the
layer must give them).

    check_passes.py --sample gz-sample-vk-passes --layer-dir DIR
                    [--level passes|commands] [--validation below]
                    [--readback host|copy] [--frames 4] [--keep]
    check_passes.py --sample gz-sample-vk-passes --no-layer --validation above

At the passes and commands levels: the queue's "... passes" track exists;
per frame its top-level zones are the sample's regions, in order, named as
docs/TRACE_FORMAT.md says, of args.level "pass" or "command", with the
details in args.detail; each lies inside the sample's own timestamps for
it, in the order of the timestamps in the command stream (give or take
--slack-us), and lasts as long (in one frame at least, within 25 % or 100 us and the
cost of two timestamps, which the sample measures),
inside the frame's command buffer zone and inside the label zone around it
(a render pass zone around those begun inside it);
a render pass instance holds the commands the truth lists (commands level)
or none (passes level); the labels are those of the labels level; the
summary lists the render pass and command zones, render passes first by
GPU time. Without --level (the default, labels): no "... passes" track,
no such zone. With --validation the validation layer must have run and
reported nothing. Exit status 0 pass, 1 fail, 2 the sample could not
run, 77 skipped (the device lacks what the sample needs).
"""

import argparse
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vk"))
import gztrace  # noqa: E402
import run_case  # noqa: E402

# Timing against the sample's own timestamps around the same work. The
# layer's timestamps sit next to the sample's in the command stream: a render
# pass zone inside the sample's pair (S_b, L_b, ..., L_e, S_e), a command zone
# shifted by one (S_b, L_b, ..., S_e, L_e, then the next sample timestamp), so
# each zone's ends are checked against the sample's timestamps in that order.
# Lavapipe gives a timestamp its value when its scene is run, not when the
# command is reached: two timestamps next to each other are usually some
# microseconds apart, but now and then hundreds (a shader compiled in
# between, a busy machine). Durations are therefore compared per region
# over the frames: the region must match in one of them at least.
DURATION_TOLERANCE = 0.25
DURATION_TOLERANCE_NS = 100_000

CMDBUF_NAME = "Frame commands"
SUMMARY_NAME_CHARS = 40  # the summary's zone column; longer names are cut


def queue_tracks(ck, t, truth):
    """(queue track, labels track, passes track) tids, None where missing."""
    names = t.thread_names()
    prefix = "VkQueue %d.%d " % (truth["family"], truth["queue_index"])
    suffixes = (" labels", " passes", " frames")
    queue = [tid for tid, n in names.items() if isinstance(n, str) and n.startswith(prefix)
             and not n.endswith(suffixes)]
    if not ck.expect(len(queue) == 1, "want one track named %r..., have %s" % (prefix, sorted(
            n for n in names.values() if isinstance(n, str)))):
        return None, None, None
    qname = names[queue[0]]

    def named(n):
        tids = [tid for tid, m in names.items() if m == n]
        return tids[0] if tids else None
    return queue[0], named(qname + " labels"), named(qname + " passes")


def frame_zones(ck, t, truth, qtid, slack):
    """Per frame its submit zone and its command buffer zone."""
    t.build_tree(qtid)
    subs = [z for z in t.track_order(qtid) if z.get("args", {}).get("level") == "submit"]
    frames = truth["frames"]
    if not ck.expect(len(subs) == len(frames), "%d submit zones for %d frames" % (len(subs), len(frames))):
        return []
    out = []
    for f, s in zip(frames, subs):
        where = "frame %d" % f["index"]
        ck.expect(run_case.in_window(s, f["host_submit_ns"], f["host_done_ns"], slack),
                  "%s: submit zone %s outside the host's window" % (where, gztrace.describe(s)))
        kids = t.children(s)
        if ck.expect([k["name"] for k in kids] == [CMDBUF_NAME], "%s: command buffer zones %s, expected %r"
                     % (where, [k["name"] for k in kids], CMDBUF_NAME)):
            out.append((f, s, kids[0]))
    return out


def frame_labels(ck, t, ltid, f, cmdbuf):
    """The frame's label zones, in the truth's order (begin order); None
    where they differ from the truth."""
    where = "frame %d" % f["index"]
    if ltid is None:
        ck.fail("%s: no '... labels' track" % where)
        return None
    t.build_tree(ltid)
    got = [z for z in t.track_order(ltid) if cmdbuf["_ts"] <= z["_ts"] and z["_end"] <= cmdbuf["_end"]]
    want = f["labels"]
    if not ck.expect([z["name"] for z in got] == [l["name"] for l in want],
                     "%s: label zones %s, expected %s" % (where, [z["name"] for z in got],
                                                         [l["name"] for l in want])):
        return None
    for z, l in zip(got, want):
        ck.expect(z.get("args", {}).get("level") == "label", "%s: %s is not of level label"
                  % (where, gztrace.describe(z)))
        parent = got[l["parent"]] if l["parent"] >= 0 else None
        ck.expect(z.get("_parent") is parent, "%s: label %r nested in %s, expected in %s"
                  % (where, l["name"], gztrace.describe(z["_parent"]) if z.get("_parent") else "nothing",
                     gztrace.describe(parent) if parent else "nothing"))
        ck.count("label zones")
    return got


def detail_wanted(region):
    """The key=value facts args.detail must hold (docs/TRACE_FORMAT.md)."""
    d = region["detail"]
    if region["level"] == "pass":
        return ["area=" + d["area"], "formats=" + d["formats"]]
    out = []
    if "groups" in d:
        out.append("groups=" + d["groups"])
    if "pipeline" in d:
        out.append("pipeline=" + d["pipeline"])
    return out


def check_region(ck, t, level, where, region, z, cmdbuf, label_zone, slack, frame_labels=None):
    args = z.get("args", {})
    ck.expect(args.get("level") == region["level"], "%s: %s has level %r, expected %r"
              % (where, gztrace.describe(z), args.get("level"), region["level"]))
    detail = args.get("detail")
    if ck.expect(isinstance(detail, str) and detail, "%s: %s has no args.detail" % (where, gztrace.describe(z))):
        facts = detail.split()
        for want in detail_wanted(region):
            ck.expect(want in facts, "%s: args.detail %r of %s lacks %r" % (where, detail, z["name"], want))
    b, e = region["begin_ns"], region["end_ns"]
    if region["level"] == "pass":
        lo, hi = (b, e), (b, e)  # begin in [b, e], end in [b, e]
    else:
        after = region.get("next_ns") or cmdbuf["_end"]
        lo, hi = (b, e), (e, after)  # begin in [b, e], end in [e, the next one]
    ck.expect(lo[0] - slack <= z["_ts"] <= lo[1] + slack and hi[0] - slack <= z["_end"] <= hi[1] + slack,
              "%s: %s [%d, %d] out of order with the sample's own timestamps: begin not in [%d, %d] "
              "or end not in [%d, %d] (slack %s)"
              % (where, gztrace.describe(z), z["_ts"], z["_end"], lo[0], lo[1], hi[0], hi[1],
                 run_case.us(slack)))
    ck.expect(cmdbuf["_ts"] <= z["_ts"] and z["_end"] <= cmdbuf["_end"],
              "%s: %s lies outside its command buffer zone %s" % (where, gztrace.describe(z),
                                                                 gztrace.describe(cmdbuf)))
    if label_zone is not None:
        ck.expect(label_zone["_ts"] <= z["_ts"] and z["_end"] <= label_zone["_end"],
                  "%s: %s lies outside the label zone around it %s" % (where, gztrace.describe(z),
                                                                      gztrace.describe(label_zone)))
    for i in region.get("labels_inside", []) if frame_labels is not None else []:
        lz = frame_labels[i]
        ck.expect(z["_ts"] <= lz["_ts"] and lz["_end"] <= z["_end"],
                  "%s: label %s, begun inside %s, lies outside it" % (where, gztrace.describe(lz),
                                                                    gztrace.describe(z)))
        ck.count("label zones inside render pass zones")
    kids = t.children(z)
    want = region["commands"] if level == "commands" and region["level"] == "pass" else []
    ck.expect([k["name"] for k in kids] == want, "%s: commands %s inside %s, expected %s"
              % (where, [k["name"] for k in kids], gztrace.describe(z), want))
    for k in kids:
        ck.expect(k.get("args", {}).get("level") == "command" and isinstance(k.get("args", {}).get("detail"), str)
                  and not t.children(k), "%s: %s inside %s is not a command zone with args.detail and "
                  "nothing inside" % (where, gztrace.describe(k), gztrace.describe(z)))
        ck.expect(k["_dur"] > 0, "%s: %s has no duration" % (where, gztrace.describe(k)))
    ck.count("render pass zones" if region["level"] == "pass" else "command zones outside render passes")
    ck.count("command zones inside render passes", len(kids))
    ck.count("zones inside the sample's own timestamps")


def is_dispatch(region):
    return region["level"] == "command" and region["name"].startswith("dispatch")


def next_stamp(regions, i):
    """The sample's first timestamp after region i's end (None: none in
    the frame): where a command zone, ended by the layer's timestamp just
    after the sample's, must have ended."""
    e = regions[i]["end_ns"]
    later = [t for r in regions[i + 1:] for t in (r["begin_ns"], r["end_ns"]) if t > e]
    return min(later) if later else None


def check_pass_track(ck, t, truth, level, ptid, frames, labels, slack):
    if not ck.expect(ptid is not None, "no '... passes' track at GPUZONES_LEVEL=%s" % level):
        return
    for err in t.build_tree(ptid):
        ck.fail("passes track: " + err)
    tops = [z for z in t.track_order(ptid) if z.get("_parent") is None]
    used = set()
    durations = {}  # (region index, name): [(zone's, sample's, timestamp cost)] per frame
    for (f, _, cmdbuf), lz in zip(frames, labels):
        where = "frame %d" % f["index"]
        got = [z for z in tops if cmdbuf["_ts"] <= z["_ts"] and z["_end"] <= cmdbuf["_end"]]
        used.update(id(z) for z in got)
        want = f["regions"]
        if not ck.expect([z["name"] for z in got] == [r["name"] for r in want],
                         "%s: render pass and command zones %s, expected %s"
                         % (where, [z["name"] for z in got], [r["name"] for r in want])):
            continue
        for i, (r, z) in enumerate(zip(want, got)):
            label_zone = lz[r["label"]] if lz is not None and r["label"] >= 0 else None
            r = dict(r, next_ns=next_stamp(want, i))
            check_region(ck, t, level, where, r, z, cmdbuf, label_zone, slack, lz)
            # Lavapipe gives a timestamp its value at the next flush, and
            # runs a dispatch at once. The layer's timestamp in front of a
            # dispatch (after the sample's, with only the binds between)
            # therefore gets its value after the dispatch has run: the
            # zone before it may hold the dispatch's work (the sample's
            # window never does), and the dispatch's own zone may hold
            # none of it.
            nxt = want[i + 1] if i + 1 < len(want) else None
            theirs = r["end_ns"] - r["begin_ns"]
            folded = 0
            if r["level"] == "command":
                if nxt and is_dispatch(nxt):
                    folded += nxt["end_ns"] - nxt["begin_ns"]
                if is_dispatch(r):
                    folded += theirs
            durations.setdefault((i, r["name"]), []).append((z["_dur"], theirs,
                                                             f.get("stamp_gap_ns", 0) * 2 + folded))
    # Each end of a zone lies one timestamp of the layer's or the sample's
    # away from the sample's: what a timestamp costs in that frame is the
    # sample's pair written back to back. A frame where the driver's thread
    # was preempted between two of them says nothing of the layer: a region
    # must match in at least one frame (a layer that times it wrongly misses
    # in every one).
    for (i, name), runs in sorted(durations.items()):
        def off(run):
            ours, theirs, more = run
            return abs(ours - theirs) - max(DURATION_TOLERANCE * theirs, DURATION_TOLERANCE_NS) - more
        ours, theirs, more = min(runs, key=off)
        ck.expect(off((ours, theirs, more)) <= 0,
                  "region %d %r: in no frame as long as the sample's own timestamps say; closest: %s "
                  "against %s (allowed beyond the tolerance: %s, two timestamps and the dispatches "
                  "lavapipe may run before a timestamp gets its value)"
                  % (i, name, run_case.us(ours), run_case.us(theirs), run_case.us(more)))
    ck.count("regions whose zones last as long as the sample's own timestamps say", len(durations))
    stray = [z for z in tops if id(z) not in used]
    ck.expect(not stray, "render pass or command zones in no frame's command buffer zone: %s"
              % [gztrace.describe(z) for z in stray[:3]])


# ---- the summary -----------------------------------------------------------------------------


def summary_rows(err):
    """The zone table of the summary: [(name, kind, count, total ms)]."""
    rows, inside = [], False
    for line in err.splitlines():
        if line.startswith("gpuzones: GPU zones"):
            inside = True
            continue
        if not inside:
            continue
        if line.startswith("gpuzones:"):
            break
        parts = line.rsplit(None, 7)
        if len(parts) != 8 or parts[0].startswith("zone "):
            continue
        try:
            rows.append((parts[0].rstrip(), parts[1], int(parts[2]), float(parts[3])))
        except ValueError:
            continue
    return rows


def shown_as(name, shown):
    """Whether the summary's zone column shows name (cut to its width)."""
    return shown == name[:SUMMARY_NAME_CHARS].rstrip()


def check_columns(ck, err):
    """Every row of the zone table has its kind where the header has it,
    counted in characters: names hold multi-byte ones (×, →)."""
    lines = err.splitlines()
    try:
        header = lines.index("gpuzones: GPU zones (times in ms)") + 1
    except ValueError:
        return
    col = lines[header].find(" kind ")
    for line in lines[header + 1:]:
        if line.startswith("gpuzones:"):
            break
        ck.expect(line[col:col + 1] == " " and line[col + 1:col + 2] not in (" ", ""),
                  "summary: the kind column of %r is not at character %d, where the header has it"
                  % (line, col + 1))


def check_summary(ck, truth, level, err):
    rows = summary_rows(err)
    if not ck.expect(rows, "no zone table in the summary"):
        return
    check_columns(ck, err)
    want = {}
    for f in truth["frames"]:
        for r in f["regions"]:
            key = (r["name"], r["level"])
            want[key] = want.get(key, 0) + 1
            if level == "commands":
                for c in r["commands"]:
                    want[(c, "command")] = want.get((c, "command"), 0) + 1
    for (name, kind), n in sorted(want.items()):
        hit = [r for r in rows if r[1] == kind and shown_as(name, r[0])]
        ck.expect(len(hit) == 1 and hit[0][2] == n, "summary: want a %s row %r counting %d, have %s"
                  % (kind, name, n, hit))
    kinds = [r[1] for r in rows]
    npass = kinds.count("pass")
    ck.expect(kinds[:npass] == ["pass"] * npass, "summary: render passes are not first: kinds %s" % kinds)
    totals = [r[3] for r in rows[:npass]]
    ck.expect(totals == sorted(totals, reverse=True), "summary: render passes not by GPU time: %s"
              % rows[:npass])
    ck.count("summary rows", len(want))


def check_trace(ck, t, truth, level, err, slack):
    """Everything about the trace and the summary (err: the program's
    stderr) at level (None: the default, labels)."""
    run_case.check_generic(ck, t, truth["pid"])
    run_case.check_totals(ck, t, 0)
    qtid, ltid, ptid = queue_tracks(ck, t, truth)
    if qtid is None:
        return
    frames = frame_zones(ck, t, truth, qtid, slack)
    labels = [frame_labels(ck, t, ltid, f, cmdbuf) for f, _, cmdbuf in frames]
    if level:
        check_pass_track(ck, t, truth, level, ptid, frames, labels, slack)
        check_summary(ck, truth, level, err)
    else:
        run_case.check_no_pass_zones(ck, t)


# ---- running ---------------------------------------------------------------------------------


def run_sample(args, tmp):
    trace = os.path.join(tmp, "trace.json")
    truth_path = os.path.join(tmp, "truth.json")
    ns = argparse.Namespace(layer_dir=args.layer_dir, readback=args.readback, level=args.level, fault=[],
                            fault_layer_dir=None, validation=args.validation, icd=args.icd)
    env = run_case.layer_env(ns, tmp, trace, enable_layer=not args.no_layer)
    cmd = [os.path.abspath(args.sample), "--frames", str(args.frames), "--truth", truth_path]
    rc, out, err = run_case.run(cmd, env, tmp)
    with open(os.path.join(tmp, "stderr.txt"), "w") as f:
        f.write(err)
    return rc, out, err, trace, truth_path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", required=True, help="the gz-sample-vk-passes executable")
    ap.add_argument("--layer-dir", help="directory of the explicit manifest VkLayer_gpuzones_timing.json")
    ap.add_argument("--no-layer", action="store_true", help="the sample alone (with --validation above)")
    ap.add_argument("--level", choices=run_case.PASS_LEVELS, help="GPUZONES_LEVEL (default: the layer's)")
    ap.add_argument("--validation", choices=("above", "below"),
                    help="VK_LAYER_KHRONOS_validation above or below the layer, enabled by the sample")
    ap.add_argument("--readback", choices=("host", "copy"), help="GPUZONES_VK_READBACK")
    ap.add_argument("--frames", type=int, default=4)
    ap.add_argument("--slack-us", type=float, default=run_case.DEFAULT_GPU_SLACK_NS / 1000.0,
                    help="how far a zone may lie outside the sample's own timestamps (default %(default)s)")
    ap.add_argument("--icd", default=run_case.LAVAPIPE_ICD)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if not args.no_layer and not args.layer_dir:
        ap.error("needs --layer-dir (or --no-layer)")
    title = "vk passes sample%s%s%s%s" % (" GPUZONES_LEVEL=" + args.level if args.level else "",
                                          " (validation %s)" % args.validation if args.validation else "",
                                          " (readback %s)" % args.readback if args.readback else "",
                                          " (no layer)" if args.no_layer else "")
    tmp = tempfile.mkdtemp(prefix="gz-passes-")
    rc, out, err, trace, truth_path = run_sample(args, tmp)
    if rc == run_case.SKIP_STATUS:
        print(out.strip())
        print("%s: SKIP" % title)
        return run_case.SKIP_STATUS
    ck = run_case.Checks()
    if rc != 0:
        print(out + run_case.tail(err))
        print("%s: FAILED: the sample exited with status %d; files kept in %s" % (title, rc, tmp))
        return 2 if args.no_layer else 1
    truth = run_case.load_truth(truth_path)
    if not args.no_layer or args.validation:
        run_case.check_layer_order(ck, err, not args.no_layer, args.validation)
    run_case.check_messages(ck, truth, args.validation)
    for line in err.splitlines():
        if line.startswith("gpuzones:") and not line.startswith("gpuzones: track"):
            ck.note("layer said: " + line)
    if args.no_layer:
        ck.expect(not os.path.exists(trace), "a trace was written without the layer")
        return run_case.finish(ck, title, tmp, args.keep)
    if args.level:
        rejected = [l for l in err.splitlines() if l.startswith("gpuzones: GPUZONES_LEVEL=")]
        ck.expect(not rejected, "the layer does not take GPUZONES_LEVEL=%s: %s" % (args.level, rejected))
    try:
        t = gztrace.load(trace)
    except (OSError, gztrace.TraceError) as e:
        ck.fail("cannot load the trace: %s" % e)
        return run_case.finish(ck, title, tmp, True)
    check_trace(ck, t, truth, args.level, err, args.slack_us * 1000)
    return run_case.finish(ck, title, tmp, args.keep)


if __name__ == "__main__":
    sys.exit(main())
