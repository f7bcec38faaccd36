#!/usr/bin/env python3
"""Tests check_passes.py itself, without the layer: runs the sample alone for
its truth, writes the trace (and the summary) a correct layer would write
at each level, checks that it passes, then breaks it in specific ways and
checks that each break is caught.

    selftest_passes.py --sample gz-sample-vk-passes
"""

import argparse
import copy
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vk"))
sys.path.insert(0, HERE)
import check_passes  # noqa: E402
import gztrace  # noqa: E402
import run_case  # noqa: E402
from selftest_checker import write_trace, x_event  # noqa: E402

TID = gztrace.GPU_TID_BASE + 1


def zone_span(b, e):
    """The layer's zone for the sample's own [b, e]: a little inside it."""
    cut = 100 if e - b > 1000 else (e - b) // 4
    return b + cut, e - cut


def label_spans(f):
    """Each label's zone: around the regions opened inside it and its
    children, a little wider the higher up it is; a label with neither (the
    HUD's, inside the main render pass) in the middle of its parent's
    render pass."""
    n = len(f["labels"])
    depth = [0] * n
    for i, l in enumerate(f["labels"]):
        depth[i] = depth[l["parent"]] + 1 if l["parent"] >= 0 else 0
    spans = [None] * n
    for r in f["regions"]:
        lab = r["label"]
        while lab >= 0:
            b, e = spans[lab] or (r["begin_ns"], r["end_ns"])
            spans[lab] = (min(b, r["begin_ns"]), max(e, r["end_ns"]))
            lab = f["labels"][lab]["parent"]
    for i, l in enumerate(f["labels"]):
        if spans[i] is None:
            host = next(r for r in f["regions"] if r["label"] == l["parent"] and r["level"] == "pass")
            third = (host["end_ns"] - host["begin_ns"]) // 3
            spans[i] = (host["begin_ns"] + third, host["end_ns"] - third)
            depth[i] = 9
    return [(b - 10 * (4 - min(d, 4)), e + 10 * (4 - min(d, 4))) for (b, e), d in zip(spans, depth)]


STRETCH_NS = 2_000_000


def stretched(truth, d):
    """The truth as if its longest region (the longest in its shortest
    frame) had taken d ns more in every frame, everything after it later by
    as much (and each frame after the one before by as much again):
    lavapipe's regions are short enough that a zone a tenth as long can
    hide in its timestamp noise, this one's cannot."""
    frames = truth["frames"]
    n = len(frames[0]["regions"])
    shortest = [min(f["regions"][i]["end_ns"] - f["regions"][i]["begin_ns"] for f in frames) for i in range(n)]
    k = shortest.index(max(shortest))
    for n, f in enumerate(frames):
        shift = n * d
        for i, r in enumerate(f["regions"]):
            r["begin_ns"] += shift + (d if i > k else 0)
            r["end_ns"] += shift + (d if i >= k else 0)
        f["host_submit_ns"] += shift
        f["host_done_ns"] += shift + d
    return truth


def synthesize(truth, level):
    pid = truth["pid"]
    qname = "VkQueue %d.%d %s" % (truth["family"], truth["queue_index"], truth["device"].split(" ")[0])
    tracks = [(TID, qname), (TID + 1, qname + " labels")] + ([(TID + 2, qname + " passes")] if level else [])
    ev = [{"ph": "M", "name": "process_name", "pid": pid, "args": {"name": "gz-sample-vk-passes"}}]
    for tid, name in tracks:
        ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})
        ev.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}})
    ev.append({"ph": "i", "s": "t", "cat": "calibration", "name": "calibration", "pid": pid, "tid": TID,
               "ts": truth["frames"][0]["host_submit_ns"],
               "args": {"method": "calibrated", "max_deviation_ns": 1, "offset_ns": 0, "samples": 4,
                        "period_ns": 1.0, "valid_bits": 64}})
    rows = {}
    for f in truth["frames"]:
        labels = label_spans(f)
        b = min(l[0] for l in labels) - 1000
        e = max(l[1] for l in labels) + 1000
        ev.append(x_event("vkQueueSubmit", "gpu", pid, TID, b - 10, e + 10, {"level": "submit", "batch": 0,
                                                                             "cmdbufs": 1}))
        ev.append(x_event(check_passes.CMDBUF_NAME, "gpu", pid, TID, b, e, {"level": "cmdbuf"}))
        for l, (lb, le) in zip(f["labels"], labels):
            ev.append(x_event(l["name"], "gpu", pid, TID + 1, lb, le, {"level": "label"}))
        for r in f["regions"] if level else []:
            zb, ze = zone_span(r["begin_ns"], r["end_ns"])
            facts = " ".join(check_passes.detail_wanted(r)) or "size=1"
            z = x_event(r["name"], "gpu", pid, TID + 2, zb, ze, {"level": r["level"], "detail": facts})
            z["_region"] = r["name"]
            ev.append(z)
            rows.setdefault((r["name"], r["level"]), []).append(ze - zb)
            cmds = r["commands"] if level == "commands" else []
            step = (ze - zb) // (len(cmds) + 1) if cmds else 0
            for i, c in enumerate(cmds):
                k = x_event(c, "gpu", pid, TID + 2, zb + i * step + 1, zb + (i + 1) * step,
                            {"level": "command", "detail": "n=%d" % i})
                k["_command"] = c
                ev.append(k)
                rows.setdefault((c, "command"), []).append(step - 1)
    ev.sort(key=lambda e: (e.get("ts", 0), -e.get("dur", 0)))
    written = sum(1 for e in ev if e.get("ph") == "X")
    ev.append({"ph": "M", "name": "gpuzones_totals", "pid": pid,
               "args": {"zones_produced": written, "zones_written": written, "zones_dropped": 0,
                        "items_dropped": 0}})
    return ev, summary(rows)


def summary(rows):
    """The zone table as the layer prints it: render passes first by GPU
    time, then the rest by GPU time; names cut and padded to the column's
    characters."""
    out = ["gpuzones: GPU zones (times in ms)",
           "%-40s %-6s %9s %11s %11s %11s %11s %11s" % ("zone", "kind", "count", "total", "mean", "p50",
                                                        "p95", "max")]
    order = sorted(rows.items(), key=lambda kv: (kv[0][1] != "pass", -sum(kv[1])))
    for (name, kind), durs in order:
        shown = name[:check_passes.SUMMARY_NAME_CHARS]
        ms = [d / 1e6 for d in durs]
        out.append("%s%s %-6s %9d %11.3f %11.3f %11.3f %11.3f %11.3f"
                   % (shown, " " * (check_passes.SUMMARY_NAME_CHARS - len(shown)), kind, len(ms),
                      sum(ms), sum(ms) / len(ms), sorted(ms)[len(ms) // 2], max(ms), max(ms)))
    out.append("gpuzones: trace written")
    return "\n".join(out)


def check(truth, events, err, level, path):
    write_trace(events, path)
    ck = run_case.Checks()
    check_passes.check_trace(ck, gztrace.load(path), truth, level, err, run_case.DEFAULT_GPU_SLACK_NS)
    return ck


def mutations(truth, level, events):
    """(what, breaks a copy of the events, or of the summary)"""
    out = []

    def zone(ev, name):
        return next(e for e in ev if e.get("_region") == name)

    regions = truth["frames"][0]["regions"]
    passes = [r["name"] for r in regions if r["level"] == "pass"]
    # The region whose shortest run over the frames is the longest.
    frames = truth["frames"]
    shortest = [min(f["regions"][i]["end_ns"] - f["regions"][i]["begin_ns"] for f in frames)
                for i in range(len(regions))]
    longest = regions[shortest.index(max(shortest))]
    longest_ns = max(shortest)

    def rename(ev):
        zone(ev, passes[0])["name"] = "render pass 1×1"
    out.append(("a wrongly named render pass zone", rename, None))

    def as_command(ev):
        zone(ev, passes[0])["args"]["level"] = "command"
    out.append(("a render pass zone of level command", as_command, None))

    def no_formats(ev):
        z = zone(ev, passes[0])
        z["args"]["detail"] = " ".join(f for f in z["args"]["detail"].split() if not f.startswith("formats="))
    out.append(("args.detail without the formats", no_formats, None))

    def later(ev):
        zone(ev, passes[-1])["ts"] += 200_000
    out.append(("a render pass zone 200 us after the sample's own timestamps", later, None))

    if longest_ns >= STRETCH_NS:
        def short(ev):
            for z in [e for e in ev if e.get("_region") == longest["name"]]:
                for k in [e for e in ev if e.get("_command") and z["ts"] <= e["ts"] <= z["ts"] + z["dur"]]:
                    ev.remove(k)
                    ev[-1]["args"]["zones_written"] -= 1
                    ev[-1]["args"]["zones_produced"] -= 1
                z["dur"] //= 10
        out.append(("a region's zones a tenth as long as the sample's own timestamps say, in every frame",
                    short, None))

    def no_track(ev):
        gone = [e for e in ev if e.get("_region") or e.get("_command")]
        ev[:] = [e for e in ev if e not in gone]
        ev[-1]["args"]["zones_written"] -= len(gone)
        ev[-1]["args"]["zones_produced"] -= len(gone)
    out.append(("no render pass or command zones", no_track, None))

    def rename_label(ev):
        next(e for e in ev if e.get("args", {}).get("level") == "label" and e["name"] == "Shadow")["name"] = "X"
    out.append(("a renamed label", rename_label, None))

    def label_elsewhere(ev):
        lab = next(e for e in ev if e.get("args", {}).get("level") == "label" and e["name"] == "Shadow")
        lab["dur"] = zone(ev, "Shadow pass")["ts"] - lab["ts"] - 1
    out.append(("a render pass zone outside the label zone around it", label_elsewhere, None))

    hosting = [r for r in regions if r.get("labels_inside")]
    if hosting:
        def label_out_of_pass(ev):
            # the label of the secondary executed inside a render pass, moved
            # just after that render pass's zone (still inside its parent label)
            z = zone(ev, hosting[0]["name"])
            name = truth["frames"][0]["labels"][hosting[0]["labels_inside"][0]]["name"]
            lab = next(e for e in ev if e.get("args", {}).get("level") == "label" and e["name"] == name)
            lab["ts"], lab["dur"] = z["ts"] + z["dur"] + 1, 50
        out.append(("a label begun inside a render pass lying outside its zone", label_out_of_pass, None))

    with_cmds = next(r for r in regions if r["commands"])
    if level == "passes":
        def draw(ev):
            z = zone(ev, with_cmds["name"])
            k = x_event("draw 1 ×1", "gpu", z["pid"], z["tid"], z["ts"] + 1, z["ts"] + 2,
                        {"level": "command", "detail": "vertices=1"})
            ev.insert(ev.index(z) + 1, k)
            ev[-1]["args"]["zones_written"] += 1
            ev[-1]["args"]["zones_produced"] += 1
        out.append(("a draw zone at the passes level", draw, None))
    else:
        def drop_command(ev):
            k = next(e for e in ev if e.get("_command") == with_cmds["commands"][-1])
            ev.remove(k)
            ev[-1]["args"]["zones_written"] -= 1
            ev[-1]["args"]["zones_produced"] -= 1
        out.append(("a command zone missing", drop_command, None))

        def command_outside(ev):
            z = zone(ev, with_cmds["name"])
            k = next(e for e in ev if e.get("_command") == with_cmds["commands"][0]
                     and z["ts"] <= e["ts"] <= z["ts"] + z["dur"])
            k["ts"] = z["ts"] + z["dur"] + 1
            k["dur"] = 1
        out.append(("a command zone after its render pass zone", command_outside, None))

    def summary_without_passes(err):
        return "\n".join(l for l in err.splitlines() if " pass " not in l)
    out.append(("a summary without the render passes", None, summary_without_passes))

    def summary_passes_last(err):
        lines = err.splitlines()
        body = lines[2:-1]
        body.sort(key=lambda l: " pass " in l)
        return "\n".join(lines[:2] + body + lines[-1:])
    out.append(("a summary with the render passes last", None, summary_passes_last))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sample", required=True)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gz-passes-selftest-")
    truth_path = os.path.join(tmp, "truth.json")
    env = {k: v for k, v in os.environ.items() if k not in run_case.SCRUB_ENV and not k.startswith("GPUZONES_")}
    env["VK_ICD_FILENAMES"] = run_case.LAVAPIPE_ICD
    p = subprocess.run([os.path.abspath(args.sample), "--frames", "3", "--truth", truth_path], env=env,
                       cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=run_case.RUN_TIMEOUT_S)
    if p.returncode == run_case.SKIP_STATUS:
        print(p.stdout.decode().strip())
        return run_case.SKIP_STATUS
    if p.returncode:
        print("the sample failed (%d): %s" % (p.returncode, p.stderr.decode()[-2000:]))
        return 2
    truth = stretched(run_case.load_truth(truth_path), STRETCH_NS)
    path = os.path.join(tmp, "trace.json")
    problems = []
    for level in (None,) + run_case.PASS_LEVELS:
        events, err = synthesize(truth, level)
        ck = check(truth, events, err, level, path)
        problems += ["%s: a correct trace was rejected: %s" % (level, e) for e in ck.errors[:10]]
        print("%s: correct trace: %s" % (level or "labels", ", ".join("%d %s" % (v, k)
                                                                    for k, v in sorted(ck.counts.items()))))
        if not level:
            continue
        breaks = mutations(truth, level, events)
        for what, breaker, summary_breaker in breaks:
            ev = copy.deepcopy(events)
            if breaker:
                breaker(ev)
            e2 = summary_breaker(err) if summary_breaker else err
            if not check(truth, ev, e2, level, path).errors:
                problems.append("%s: not caught: %s" % (level, what))
        print("%s: %d broken traces: %s" % (level, len(breaks), "; ".join(w for w, _, _ in breaks)))
        # the passes level's trace is wrong at the labels level, and the
        # commands level's at the passes level
        lower = None if level == "passes" else "passes"
        if not check(truth, events, err, lower, path).errors:
            problems.append("%s: its trace passes as %s" % (level, lower or "labels"))
    for p_ in problems:
        print("FAIL: " + p_)
    if problems:
        print("passes checker selftest: FAILED; files in %s" % tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("passes checker selftest: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
