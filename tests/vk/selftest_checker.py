#!/usr/bin/env python3
"""Tests the checkers themselves, without the layer.

Runs each gz-test-vk case without any layer to get its truth, writes the trace
a perfect layer would write for it (following docs/TRACE_FORMAT.md), and
checks that run_case.py's checks pass on it.  Then breaks that trace in
specific ways and checks that each break is caught.  A checker that passes
everything proves nothing; this is what shows it does not.

    selftest_checker.py --program gz-test-vk [--case NAME]

The cases with render pass instances are checked at GPUZONES_LEVEL=passes
and commands too: the trace then has each queue's "... passes" track.
"""

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gztrace  # noqa: E402
import run_case  # noqa: E402

CASES = ("onetime", "reuse", "simultaneous", "unsubmitted", "secondary", "threads", "submit", "labels",
         "instances", "workload", "multiview", "suspend", "secondary-frames",
         "timeline-wait", "protected")
PID_FAKE_TID_BASE = gztrace.GPU_TID_BASE
# Checked at the passes and commands levels as well.
PASS_CASES = ("multiview", "suspend")


# ---- a perfect trace from the truth --------------------------------------------------


def step_times(lo, hi, kinds):
    """Increasing integer times strictly inside (lo, hi), one per step; the
    gap between two label operations is long (the work between them), every
    other gap short, so label zones last nearly as long as the call (the
    workload check compares one with the CPU-measured time)."""
    weights = [1] + [1000 if a == b == "label" else 1 for a, b in zip(kinds, kinds[1:])] + [1]
    total = sum(weights)
    out, acc = [], 0
    for w in weights[:-1]:
        acc += w
        out.append(lo + (hi - lo) * acc // total)
    assert all(a < b for a, b in zip([lo] + out, out + [hi])), "window too small for %d steps" % len(kinds)
    return out


def gpu_intervals(truth):
    """Per call, a GPU interval inside its host window; calls of one queue in
    order and disjoint (deferred calls share a completion time, so they get
    half of what is left each)."""
    out = {}
    last_end = {}
    for i, c in enumerate(truth["calls"]):
        q = c["queue"]
        start = max(c["host_submit_ns"], last_end.get(q, 0)) + 200
        shared = any(d["queue"] == q and d["host_done_ns"] == c["host_done_ns"] for d in truth["calls"][i + 1:])
        end = start + (c["host_done_ns"] - start) // 2 if shared else c["host_done_ns"] - 200
        assert end > start, "window too small in call %d" % c["index"]
        out[c["index"]] = (start, end)
        last_end[q] = end
    return out


def label_ops(truth):
    """The label forest walked depth first gives the order of the label
    operations, which is also submission order.  Returns the labels that
    have zones and, per call, where each operation goes: "pre" (queue label
    begins, before the call's first batch), (batch, index) (inside that
    command buffer execution), "post" (queue label ends, after the last
    batch)."""
    labels = [l for l in truth["labels"] if l["begin_call"] >= 0 and l["end_call"] >= 0]
    kids = {}
    for l in labels:
        kids.setdefault((l["queue"], l["parent"]), []).append(l)
    seq = []

    def walk(l):
        seq.append((l, "b"))
        for k in kids.get((l["queue"], l["id"]), []):
            walk(k)
        seq.append((l, "e"))

    for l in labels:
        if l["parent"] < 0:
            walk(l)
    ops = {}  # call -> {"pre": [...], (batch, index): [...], "post": [...]}
    for l, kind in seq:
        call = l["begin_call"] if kind == "b" else l["end_call"]
        ex = l.get("begin_exec") if kind == "b" else l.get("end_exec")
        where = (ex[1], ex[2]) if ex is not None else ("pre" if kind == "b" else "post")
        ops.setdefault(call, {}).setdefault(where, []).append((l, kind))
    return labels, ops


def fmt_us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


def x_event(name, cat, pid, tid, ts, end, args=None):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": end - ts}
    if args is not None:
        e["args"] = args
    return e


def zone_steps(batch, b, j, label_steps, level):
    """The steps of command buffer j of batch b on its "... passes" track
    at level, placed among its label steps: a render pass instance begins
    before the first label begun inside it and ends after the last one
    ends there, its commands inside it, everything in recording order.
    Returns [(position among label_steps, step)]."""
    present, _ = run_case.expected_pass_zones(batch, level)
    first_b = {op[0]["id"]: i for i, (_, op) in reversed(list(enumerate(label_steps))) if op[1] == "b"}
    last_e = {op[0]["id"]: i + 1 for i, (_, op) in enumerate(label_steps) if op[1] == "e"}
    out, cursor = [], 0
    for z, kids in present:
        first, last = z["cmdbufs"]
        if first == j:
            inside = [first_b[l] for l in z["labels"] if l in first_b]
            if inside:
                cursor = max(cursor, min(inside))
            out.append((cursor, ("zone", (b, z["index"], "b"))))
        if z["level"] == "pass":
            for k in kids:
                if k["cmdbufs"][0] == j:
                    out.append((cursor, ("zone", (b, k["index"], "b"))))
                    out.append((cursor, ("zone", (b, k["index"], "e"))))
        if last == j:
            cursor = max([last_e[l] for l in z["labels"] if l in last_e] + [cursor])
            out.append((cursor, ("zone", (b, z["index"], "e"))))
    return out


def synthesize(truth, level=None):
    """Events (with integer ns ts/dur) of the trace a correct layer writes
    at level (None: the default, labels)."""
    pid = truth["pid"]
    gpu = gpu_intervals(truth)
    qtid = {q["key"]: PID_FAKE_TID_BASE + 3 * q["key"] for q in truth["queues"]}
    meta = [{"ph": "M", "name": "process_name", "pid": pid, "args": {"name": "gz-test-vk"}}]
    for q in truth["queues"]:
        name = q["name"] or "VkQueue %d.%d %s%s" % (q["family"], q["index"], q["device_name"],
                                                    " #%d" % q["key"] if q["key"] else "")
        for off, suffix in ((0, ""), (1, " labels")) + (((2, " passes"),) if level else ()):
            tid = qtid[q["key"]] + off
            meta.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name + suffix}})
            meta.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                         "args": {"sort_index": 100 + tid - PID_FAKE_TID_BASE}})
        meta.append({"ph": "i", "s": "t", "cat": "calibration", "name": "calibration", "pid": pid,
                     "tid": qtid[q["key"]], "ts": truth["calls"][0]["host_submit_ns"] if truth["calls"] else 0,
                     "args": {"method": "calibrated", "max_deviation_ns": 1, "offset_ns": 0, "samples": 4,
                              "period_ns": 1.0, "valid_bits": 64}})
    for tid in sorted({c["tid"] for c in truth["calls"]}):
        meta.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": "thread %d" % tid}})

    ev = []
    flow_id = 1
    waits = {}
    labels, ops = label_ops(truth)
    label_ts = {}  # label id -> {"b": ns, "e": ns}
    for c in truth["calls"]:
        tid = qtid[c["queue"]]
        lo, hi = gpu[c["index"]]
        cpu = x_event(c["api"], "cpu", pid, c["tid"], c["host_submit_ns"] + 1, c["host_return_ns"] - 1)
        ev.append(cpu)
        # Everything that happens on the GPU in this call, in order: each
        # gets its own time, so label zones lie inside the command buffer
        # execution that recorded them and nothing ties.
        call_ops = ops.get(c["index"], {})
        steps = [("label", op) for op in call_ops.get("pre", [])]
        for b, batch in enumerate(c["batches"]):
            steps.append(("submit", b))
            for j in range(len(batch["cmdbufs"])):
                steps.append(("cmdbuf", (b, j)))
                lsteps = [("label", op) for op in call_ops.get((b, j), [])]
                zsteps = zone_steps(batch, b, j, lsteps, level) if level and not batch.get("batch_untimed") else []
                for i, step in enumerate(lsteps + [None]):
                    steps += [zs for pos, zs in zsteps if pos == i]
                    if step:
                        steps.append(step)
                steps.append(("cmdbuf_end", (b, j)))
            steps.append(("submit_end", b))
        steps += [("label", op) for op in call_ops.get("post", [])]
        at = {}
        for (what, key), ts in zip(steps, step_times(lo, hi, [w for w, _ in steps])):
            if what == "label":
                label_ts.setdefault(key[0]["id"], {})[key[1]] = ts
            else:
                at[(what, key)] = ts
        for b, batch in enumerate(c["batches"]):
            zones = batch.get("zones", [])
            for z, kids in run_case.expected_pass_zones(batch, level)[0] if level else []:
                for k in [z] + kids:
                    e = x_event(k["name"], "gpu", pid, tid + 2, at[("zone", (b, k["index"], "b"))],
                                at[("zone", (b, k["index"], "e"))],
                                {"level": k["level"], "detail": "fake=%d" % k["index"]})
                    e["_zone"] = (c["index"], b, k["index"])  # for the mutations; not written
                    e["_zone_of"] = zones[k["index"]]
                    ev.append(e)
        for b, batch in enumerate(c["batches"]):
            if batch.get("batch_untimed"):
                continue  # a protected batch: no zones at all
            if batch.get("submit_untimed"):
                continue  # its first or last command buffer lost its timestamps, and so all of them
            s0, s1 = at[("submit", b)], at[("submit_end", b)]
            api = "vkQueueSubmit2" if c["api"] == "vkQueueSubmit2KHR" else c["api"]
            sub = x_event(api, "gpu", pid, tid, s0, s1,
                          {"level": "submit", "batch": b, "cmdbufs": len(batch["cmdbufs"])})
            sub["_call"] = c["index"]  # for the mutations; not written
            ev.append(sub)
            for j, name in run_case.timed_cmdbufs(batch):
                z = x_event(name, "gpu", pid, tid, at[("cmdbuf", (b, j))], at[("cmdbuf_end", (b, j))],
                            {"level": "cmdbuf"})
                z["_exec"] = [c["index"], b, j]  # for the mutations; not written
                ev.append(z)
            ev.append({"ph": "s", "cat": "flow", "name": "submit", "id": flow_id, "pid": pid, "tid": c["tid"],
                       "ts": (cpu["ts"] + cpu["ts"] + cpu["dur"]) // 2})
            ev.append({"ph": "f", "bp": "e", "cat": "flow", "name": "submit", "id": flow_id, "pid": pid,
                       "tid": tid, "ts": s0})
            flow_id += 1
        wname = run_case.WAIT_ZONE.get(c["wait"])
        if wname:
            key = (wname, c["tid"], c["host_done_ns"])
            waits[key] = max(waits.get(key, 0), c["host_return_ns"])
    for (wname, wtid, done), start in waits.items():
        ev.append(x_event(wname, "cpu", pid, wtid, start + 1, done - 1))
    dropped = run_case.expected_drops(truth, level)  # what the layer cannot time: no zone, one drop
    for l in labels:
        if l.get("absent"):
            continue
        t = label_ts[l["id"]]
        z = x_event(l["name"], "gpu", pid, qtid[l["queue"]] + 1, t["b"], t["e"], {"level": "label"})
        z["_label"] = l["id"]  # for the mutations; not written
        ev.append(z)
    # parents first within each track: start time, longer first
    ev.sort(key=lambda e: (e.get("ts", 0), -e.get("dur", 0)))
    written = sum(1 for e in ev if e["ph"] == "X" and e["cat"] == "gpu")
    total = {"ph": "M", "name": "gpuzones_totals", "pid": pid,
             "args": {"zones_produced": written + dropped, "zones_written": written,
                      "zones_dropped": dropped, "items_dropped": 0}}
    return meta + ev + [total]


REASON_TEXT = {  # a phrase of the layer's own line for each reason (vk_device.c)
    "simultaneous": "recorded in SIMULTANEOUS_USE secondary command buffers",
    "overlap": "a SIMULTANEOUS_USE command buffer was submitted again while its previous execution was "
               "still running (both write the same timestamps)",
    "suspended": "between a render pass suspended at the end of one command buffer and its resumption",
    "protected": "recorded in protected command buffers",
}


def summary_lines(truth):
    """The summary's lines for what the layer cannot time, as a correct
    layer prints them (one device)."""
    device = truth["queues"][0]["device_name"] if truth["queues"] else "?"
    kinds = {"label": "debug-label", "cmdbuf": "submission and command buffer"}
    return ["gpuzones: %d %s zones on %s were not timed: %s" % (n, kinds[kind], device, REASON_TEXT[reason])
            for (kind, reason), n in sorted(run_case.untimed_counts(truth).items())]


def write_trace(events, path, cut=None):
    """TRACE_FORMAT.md shape; cut: stop after that many bytes (a kill)."""
    out = ["["]
    for i, e in enumerate(events):
        e = {k: v for k, v in e.items() if not k.startswith("_")}
        for k in ("ts", "dur"):
            if k in e and isinstance(e[k], int):
                e[k] = "@@%s@@" % fmt_us(e[k])
        text = json.dumps(e, separators=(",", ":")).replace('"@@', "").replace('@@"', "")
        out.append(text + ("," if i + 1 < len(events) else ""))
    out.append("]")
    data = "\n".join(out) + "\n"
    if cut is not None:
        data = data[:cut]
    with open(path, "w") as f:
        f.write(data)


# ---- running the checks ---------------------------------------------------------------


def check(truth, path, complete=True, summary=None, level=None, outcome=None):
    """run_case.py's checks of the trace at path against the truth, with the
    summary lines given (default: those of a correct layer whose racy
    executions came out as in outcome, a resolved truth; default: all
    timed, as the truth itself says)."""
    ck = run_case.Checks()
    t = gztrace.load(path)
    run_case.check_generic(ck, t, truth["pid"], require_complete=complete)
    if complete:
        lines = summary_lines(outcome or truth) if summary is None else summary
        run_case.check_outcomes(ck, t, truth, "\n".join(lines), run_case.DEFAULT_GPU_SLACK_NS, level=level)
    return ck


def first(events, pred):
    for e in events:
        if pred(e):
            return e
    raise LookupError("no event to break")


def level(e, lv):
    return e.get("ph") == "X" and e.get("args", {}).get("level") == lv


def label_zone(ev, label_id):
    return first(ev, lambda e: e.get("_label") == label_id)


def descendants(truth, label_id):
    out, to_visit = set(), [label_id]
    while to_visit:
        p = to_visit.pop()
        for l in truth["labels"]:
            if l["parent"] == p and l["id"] not in out:
                out.add(l["id"])
                to_visit.append(l["id"])
    return out


def timed_labels(truth):
    return [l for l in truth["labels"] if not l.get("absent") and l["begin_call"] >= 0 and l["end_call"] >= 0]


def absent_labels(truth):
    return [l for l in truth["labels"] if l.get("absent") and l["begin_call"] >= 0 and l["end_call"] >= 0]


def outside_candidate(truth):
    """A label that one command buffer execution began and ended, which can
    be moved just past the end of that execution's zone (with its
    descendants removed) without breaking anything else: nothing else
    begins after it in that execution and no ancestor ends there.  Then only
    the check that it lies inside its execution can catch the move."""
    by_id = {l["id"]: l for l in truth["labels"]}
    for l in timed_labels(truth):
        ex = l.get("begin_exec")
        if ex is None or ex != l.get("end_exec"):
            continue
        desc = descendants(truth, l["id"])
        if any(m["begin_exec"] == ex and m["id"] > l["id"] and m["id"] not in desc for m in truth["labels"]):
            continue
        anc, ok = l["parent"], True
        while anc >= 0:
            ok = ok and by_id[anc].get("end_exec") != ex
            anc = by_id[anc]["parent"]
        if ok:
            return l, desc
    return None, None


def mutations(truth):
    """(what, function that breaks a copy of the events)"""
    out = []

    if any(level(e, "cmdbuf") for e in synthesize(truth)):
        def drop_cmdbuf(ev):
            ev.remove(first(ev, lambda e: level(e, "cmdbuf")))
        out.append(("a missing command buffer zone", drop_cmdbuf))

        def cmdbuf_wrong_name(ev):
            first(ev, lambda e: level(e, "cmdbuf"))["name"] = "not the name"
        out.append(("a wrongly named command buffer", cmdbuf_wrong_name))

    def early_submit(ev):
        c = truth["calls"][0]
        z = first(ev, lambda e: level(e, "submit"))
        f = first(ev, lambda e: e.get("ph") == "f" and e["ts"] == z["ts"])
        new_ts = c["host_submit_ns"] - 200_000
        z["dur"] += z["ts"] - new_ts
        z["ts"] = f["ts"] = new_ts
    out.append(("a submit zone starting 200 us before the host submitted", early_submit))

    def late_submit(ev):
        c = truth["calls"][0]
        z = first(ev, lambda e: level(e, "submit"))
        z["dur"] = c["host_done_ns"] + 100_000 - z["ts"]
    out.append(("a submit zone ending after the host saw completion", late_submit))

    def drop_flow(ev):
        ev.remove(first(ev, lambda e: e.get("ph") == "f"))
    out.append(("a missing flow end", drop_flow))

    def zero_dur(ev):
        first(ev, lambda e: level(e, "submit"))["dur"] = 0
    out.append(("a zero-duration submit zone", zero_dur))

    def drop_cpu(ev):
        ev.remove(first(ev, lambda e: e.get("ph") == "X" and e.get("cat") == "cpu"
                        and e["name"].startswith("vkQueueSubmit")))
    out.append(("a missing CPU submit zone", drop_cpu))

    def extra_submit(ev):
        z = copy.deepcopy(first(ev, lambda e: level(e, "submit")))
        ev.append(z)
    out.append(("a duplicated submit zone", extra_submit))

    def float_tid(ev):
        first(ev, lambda e: level(e, "submit"))["tid"] += 0.5
    out.append(("a fractional tid", float_tid))

    def dropped(ev):
        ev[-1]["args"]["zones_dropped"] = 3
        ev[-1]["args"]["zones_produced"] += 3
    out.append(("dropped zones in the totals", dropped))

    def lost(ev):
        ev[-1]["args"]["zones_produced"] += 1
    out.append(("a zone produced but neither written nor dropped", lost))

    def unwritten(ev):
        ev.remove(first(ev, lambda e: level(e, "submit")))
    out.append(("a written zone missing from the file", unwritten))

    # labels nested in a label that has a zone too (an absent one has none)
    timed_ids = {l["id"] for l in timed_labels(truth)}
    nested = [l for l in timed_labels(truth) if l["parent"] in timed_ids]
    if nested:
        def overlap(ev):
            # A label nested in another one on its track, made to end 1 us
            # after that parent: a partial overlap whatever the two
            # durations. The parent must begin strictly before it:
            # stretched, a label that begins on its parent's tick would
            # contain it instead.
            for label in nested:
                child, parent = label_zone(ev, label["id"]), label_zone(ev, label["parent"])
                if parent["ts"] < child["ts"]:
                    child["dur"] = parent["ts"] + parent["dur"] + 1000 - child["ts"]
                    return
            raise LookupError("no nested label begins after its parent")
        out.append(("a label partially overlapping its parent", overlap))

        def child_first(ev):
            # A child that begins on its parent's tick, written before it.
            child, parent = label_zone(ev, nested[0]["id"]), label_zone(ev, nested[0]["parent"])
            end = child["ts"] + child["dur"]
            child["ts"] = parent["ts"]
            child["dur"] = end - parent["ts"]
            ev.remove(child)
            ev.insert(ev.index(parent), child)
        out.append(("a child written before its parent on the same tick", child_first))

    if truth["labels"]:
        def rename_label(ev):
            first(ev, lambda e: level(e, "label"))["name"] = "Renamed"
        out.append(("a wrongly named label", rename_label))

    timed = timed_labels(truth)
    if timed:
        def drop_timed(ev):
            ev.remove(label_zone(ev, timed[-1]["id"]))
            ev[-1]["args"]["zones_written"] -= 1
            ev[-1]["args"]["zones_dropped"] += 1
        out.append(("a label the layer can time missing (counted as dropped)", drop_timed))

        def duplicate_label(ev):
            z = copy.deepcopy(label_zone(ev, timed[0]["id"]))
            z["_label"] = None
            ev.insert(len(ev) - 1, z)  # before the totals, which stay last
        out.append(("a duplicated label", duplicate_label))

    absent = absent_labels(truth)

    def present(label):
        def add(ev):
            # a zone for a label the layer cannot time (its drop uncounted)
            z = copy.deepcopy(label_zone(ev, timed[-1]["id"]))
            z["name"], z["_label"] = label["name"], None
            ev.insert(ev.index(label_zone(ev, timed[-1]["id"])) + 1, z)
            ev[-1]["args"]["zones_written"] += 1
            ev[-1]["args"]["zones_dropped"] -= 1
        return add

    if absent and timed:
        out.append(("a zone for a label the layer cannot time", present(absent[0])))
        overlapped = [l for l in absent if l.get("untimed") == "overlap"]
        if overlapped:
            out.append(("a zone for label %r of an execution that lost its timestamps to another of its "
                        "SIMULTANEOUS_USE command buffer" % overlapped[-1]["name"], present(overlapped[-1])))

        def uncounted(ev):
            ev[-1]["args"]["zones_produced"] -= len(absent)
            ev[-1]["args"]["zones_dropped"] -= len(absent)
        out.append(("labels the layer cannot time, not counted as dropped", uncounted))

    parents = [l for l in timed if any(k["parent"] == l["id"] for k in timed)]
    if parents:
        def lose_child(ev):
            p = parents[0]
            child = next(k for k in timed if k["parent"] == p["id"])
            pz, cz = label_zone(ev, p["id"]), label_zone(ev, child["id"])
            pz["dur"] = cz["ts"] - 1 - pz["ts"]
        out.append(("a label that no longer contains its child", lose_child))

    cand, desc = outside_candidate(truth)
    if cand is not None:
        def outside(ev):
            cz = first(ev, lambda e: e.get("_exec") == cand["begin_exec"])
            ev[:] = [e for e in ev if e.get("_label") not in desc]
            z = label_zone(ev, cand["id"])
            z["ts"] = cz["ts"] + cz["dur"] + 1
            z["dur"] = 1
        out.append(("label %r just after the execution that recorded it" % cand["name"], outside))

    untimed_cmdbuf = next(((c, b, j, batch) for c in truth["calls"] for b, batch in enumerate(c["batches"])
                           if not batch.get("batch_untimed")
                           for j, u in enumerate(batch.get("untimed") or []) if u), None)
    if untimed_cmdbuf is not None:
        def timed_anyway(ev):
            # a zone for a command buffer the layer cannot time (the batch's
            # zones all there, in order; its drop uncounted)
            c, b, j, batch = untimed_cmdbuf
            sub = [e for e in ev if level(e, "submit") and e["_call"] == c["index"] and e["args"]["batch"] == b][0]
            z = x_event(batch["cmdbufs"][j], "gpu", sub["pid"], sub["tid"], sub["ts"] + 1, sub["ts"] + 2,
                        {"level": "cmdbuf"})
            ev.insert(ev.index(sub) + 1, z)
            ev[-1]["args"]["zones_written"] += 1
            ev[-1]["args"]["zones_dropped"] -= 1
        out.append(("a zone for a command buffer the layer cannot time", timed_anyway))

    lost_batch = next(((c, b, batch) for c in truth["calls"] for b, batch in enumerate(c["batches"])
                       if batch.get("submit_untimed") and not batch.get("batch_untimed")), None)
    if lost_batch is not None:
        def submit_anyway(ev):
            # a submit zone for a batch whose first command buffer lost its
            # timestamps (the batch's drop uncounted)
            c, b, batch = lost_batch
            lo = gpu_intervals(truth)[c["index"]][0]
            ev.insert(len(ev) - 1, x_event(c["api"], "gpu", truth["pid"], PID_FAKE_TID_BASE + 3 * c["queue"],
                                           lo + 1, lo + 2,
                                           {"level": "submit", "batch": b, "cmdbufs": len(batch["cmdbufs"])}))
            ev[-1]["args"]["zones_written"] += 1
            ev[-1]["args"]["zones_dropped"] -= 1
        out.append(("a submit zone for a batch whose command buffers lost their timestamps", submit_anyway))

    counts = run_case.untimed_counts(truth)
    if any(reason == "overlap" for _, reason in counts):
        out.append(("a summary that gives overlapping executions' zones another reason", None,
                    lambda lines: [l.replace(REASON_TEXT["overlap"], REASON_TEXT["simultaneous"]) for l in lines]))
    if counts:
        def say_less(lines):
            return [l.replace("gpuzones: %d " % n, "gpuzones: %d " % (n - 1), 1)
                    for l, n in zip(lines, [v for _, v in sorted(counts.items())])]
        out.append(("a summary that counts one untimed zone less", None, say_less))
        out.append(("a summary without its untimed lines", None, lambda lines: []))

        def other_reason(lines):
            return lines + ["gpuzones: 1 debug-label zones on x were not timed: a command buffer without "
                            "SIMULTANEOUS_USE was submitted again while an earlier submission of it was "
                            "still running"]
        out.append(("a summary with an untimed reason the truth does not know", None, other_reason))

    if truth.get("workload"):
        def slow(ev):
            z = first(ev, lambda e: level(e, "label") and e["name"] == truth["workload"]["label"])
            z["dur"] = truth["workload"]["host_ns"] * 14 // 10  # inside the window no more; still caught
        out.append(("a workload zone 40% too long", slow))

        def fast(ev):
            z = first(ev, lambda e: level(e, "label") and e["name"] == truth["workload"]["label"])
            z["dur"] = truth["workload"]["host_ns"] // 2
        out.append(("a workload zone half as long", fast))
    return out


def selftest_either(truth, case, path):
    """The truth's racy pairs of executions: every outcome passes (each
    pair both timed or both untimed, the totals and the summary saying
    so), and a pair decided half way does not (one execution timed, the
    other not, with totals and summary to match), nor a trace of one
    outcome with the drops or the summary of another."""
    pairs = truth.get("either") or []
    if not pairs:
        return []
    problems = []
    outs = run_case.outcomes(truth)
    for what, tr in outs:
        write_trace(synthesize(tr), path)
        ck = check(truth, path, outcome=tr)
        problems += ["%s: a correct trace of the outcome %s was rejected: %s" % (case, what, e)
                     for e in ck.errors[:5]]
    for pair in pairs:
        for lost, kept in ((pair[0], pair[1]), (pair[1], pair[0])):
            tr = run_case.resolve(truth, [[lost]])
            write_trace(synthesize(tr), path)
            if not check(truth, path, outcome=tr).errors:
                problems.append("%s: not caught: %s untimed (overlap), %s timed"
                                % (case, run_case.describe_exec(lost), run_case.describe_exec(kept)))
    timed, untimed = run_case.resolve(truth, []), run_case.resolve(truth, pairs)
    write_trace(synthesize(timed), path)
    if not check(truth, path, outcome=untimed).errors:
        problems.append("%s: not caught: racy executions all timed, the summary saying they were not" % case)
    ev = synthesize(untimed)
    drops = run_case.expected_drops(timed)
    ev[-1]["args"]["zones_produced"] += drops - ev[-1]["args"]["zones_dropped"]
    ev[-1]["args"]["zones_dropped"] = drops
    write_trace(ev, path)
    if not check(truth, path, outcome=untimed).errors:
        problems.append("%s: not caught: racy executions all untimed, not counted as dropped" % case)
    print("%s: %d outcomes of %d racy pairs of executions accepted, pairs decided half way caught"
          % (case, len(outs), len(pairs)))
    return problems


def pass_mutations(truth, level, good):
    """Breaks of the "... passes" track (level passes or commands)."""
    out = []
    zones = [e for e in good if e.get("_zone")]
    passes = [e for e in zones if e["args"]["level"] == "pass"]
    if not passes:
        return out

    def find(ev, key):
        return first(ev, lambda e: e.get("_zone") == key)

    def rename(ev):
        find(ev, passes[0]["_zone"])["name"] = "render pass 1×1"
    out.append(("a wrongly named render pass zone", rename))

    def as_label(ev):
        find(ev, passes[0]["_zone"])["args"]["level"] = "label"
    out.append(("a render pass zone of level label", as_label))

    def no_detail(ev):
        del find(ev, passes[0]["_zone"])["args"]["detail"]
    out.append(("a render pass zone without args.detail", no_detail))

    def drop_pass(ev):
        ev.remove(find(ev, passes[-1]["_zone"]))
        ev[:] = [e for e in ev if e.get("_zone_of", {}).get("parent") != passes[-1]["_zone"][2]
                 or e.get("_zone")[:2] != passes[-1]["_zone"][:2]]
        n = sum(1 for e in good if e.get("_zone")) - sum(1 for e in ev if e.get("_zone"))
        ev[-1]["args"]["zones_written"] -= n
        ev[-1]["args"]["zones_dropped"] += n
    out.append(("a render pass zone missing (counted as dropped)", drop_pass))

    def no_track(ev):
        gone = [e for e in ev if e.get("_zone")]
        ev[:] = [e for e in ev if not e.get("_zone")]
        ev[-1]["args"]["zones_written"] -= len(gone)
        ev[-1]["args"]["zones_dropped"] += len(gone)
    out.append(("no render pass or command zones at all", no_track))

    spanning = [e for e in passes if e["_zone_of"]["cmdbufs"][0] != e["_zone_of"]["cmdbufs"][1]]
    if spanning:
        def split(ev):
            # the suspended part and the resumed part as two zones
            z = find(ev, spanning[0]["_zone"])
            second = copy.deepcopy(z)
            half = z["dur"] // 2
            z["dur"] = half
            second["ts"] += half + 1
            second["dur"] -= half + 1
            second["_zone"] = None
            ev.insert(ev.index(z) + 1, second)
            ev[-1]["args"]["zones_written"] += 1
            ev[-1]["args"]["zones_produced"] += 1
        out.append(("a suspended and resumed render pass instance as two zones", split))

    with_labels = [e for e in passes if e["_zone_of"]["labels"]]
    if with_labels:
        def shrink(ev):
            # the render pass zone ends before the labels begun inside it
            z = find(ev, with_labels[0]["_zone"])
            kids = [e for e in ev if e.get("_zone") and e["_zone"][:2] == z["_zone"][:2]
                    and e["_zone_of"]["parent"] == z["_zone"][2]]
            for k in kids:
                ev.remove(k)
            z["dur"] = 1
            ev[-1]["args"]["zones_written"] -= len(kids)
            ev[-1]["args"]["zones_dropped"] += len(kids)
        out.append(("a render pass zone that ends before the labels inside it", shrink))

    commands = [e for e in zones if e["args"]["level"] == "command" and e["_zone_of"]["parent"] >= 0]
    if level == "passes":
        def draw(ev):
            z = find(ev, passes[0]["_zone"])
            k = x_event("draw 3 ×1", "gpu", z["pid"], z["tid"], z["ts"] + 1, z["ts"] + 2,
                        {"level": "command", "detail": "vertices=3"})
            ev.insert(ev.index(z) + 1, k)
            ev[-1]["args"]["zones_written"] += 1
            ev[-1]["args"]["zones_produced"] += 1
        out.append(("a command zone inside a render pass at the passes level", draw))
    elif commands:
        def outside(ev):
            # a command moved out of its render pass instance, just after it
            k = find(ev, commands[0]["_zone"])
            p = find(ev, commands[0]["_zone"][:2] + (commands[0]["_zone_of"]["parent"],))
            k["ts"] = p["ts"] + p["dur"] + 1
            k["dur"] = 1
        out.append(("a command zone outside its render pass zone", outside))

        def drop_command(ev):
            ev.remove(find(ev, commands[-1]["_zone"]))
            ev[-1]["args"]["zones_written"] -= 1
            ev[-1]["args"]["zones_dropped"] += 1
        out.append(("a command zone missing (counted as dropped)", drop_command))
    return out


def selftest_level(truth, case, level, path):
    """The checks at the passes or commands level: a correct trace passes,
    broken ones are caught, and the default-level checks catch a passes
    track where there must be none."""
    problems = []
    good = synthesize(truth, level)
    write_trace(good, path)
    ck = check(truth, path, level=level)
    if ck.errors:
        problems += ["%s (%s): a correct trace was rejected: %s" % (case, level, e) for e in ck.errors[:10]]
    print("%s (GPUZONES_LEVEL=%s): correct trace: %s"
          % (case, level, ", ".join("%d %s" % (v, k) for k, v in sorted(ck.counts.items()))))
    for what, breaker in pass_mutations(truth, level, good):
        ev = copy.deepcopy(good)
        breaker(ev)
        write_trace(ev, path)
        if not check(truth, path, level=level).errors:
            problems.append("%s (%s): not caught: %s" % (case, level, what))
    # the same trace checked as a default-level run: zones that must not be
    write_trace(good, path)
    if not check(truth, path).errors:
        problems.append("%s: not caught: render pass zones at the default level" % case)
    return problems


def selftest_case(program, case, tmp):
    truth_path = os.path.join(tmp, case + ".truth.json")
    env = {k: v for k, v in os.environ.items() if k not in run_case.SCRUB_ENV}
    env["VK_ICD_FILENAMES"] = run_case.LAVAPIPE_ICD
    p = subprocess.run([program, "--case", case, "--truth", truth_path], env=env, cwd=tmp,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=run_case.RUN_TIMEOUT_S)
    if p.returncode == run_case.SKIP_STATUS:
        print("%s: skipped: %s" % (case, p.stdout.decode().strip().splitlines()[0]))
        return []
    if p.returncode != 0:
        return ["%s: program failed (%d): %s" % (case, p.returncode, p.stderr.decode()[-2000:])]
    truth = run_case.load_truth(truth_path)
    good = synthesize(truth)
    path = os.path.join(tmp, case + ".trace.json")
    problems = []

    write_trace(good, path)
    ck = check(truth, path)
    if ck.errors:
        problems += ["%s: a correct trace was rejected: %s" % (case, e) for e in ck.errors[:10]]
    print("%s: correct trace: %s" % (case, ", ".join("%d %s" % (v, k) for k, v in sorted(ck.counts.items()))))

    for what, breaker, *summary in mutations(truth):
        ev = copy.deepcopy(good)
        if breaker:
            breaker(ev)
        write_trace(ev, path)
        ck = check(truth, path, summary=summary[0](summary_lines(truth)) if summary else None)
        if not ck.errors:
            problems.append("%s: not caught: %s" % (case, what))

    problems += selftest_either(truth, case, path)

    # a killed process: cut in the middle of a line (15 characters into the
    # line that holds the two-thirds point; every event line is longer)
    write_trace(good, path)
    with open(path) as f:
        text = f.read()
    write_trace(good, path, cut=text.rfind("\n", 0, len(text) * 2 // 3) + 1 + 15)
    t = gztrace.load(path)
    if t.complete or not t.dropped_partial or not t.gpu_zones():
        problems.append("%s: truncated file loaded wrongly (complete=%s partial=%s)"
                        % (case, t.complete, t.dropped_partial))
    ck = check(truth, path, complete=False)
    problems += ["%s: truncated trace: %s" % (case, e) for e in ck.errors[:5]]
    try:
        gztrace.load(path, strict=True)
        problems.append("%s: strict load accepted a truncated file" % case)
    except gztrace.TraceError:
        pass
    if case in PASS_CASES:
        for level in run_case.PASS_LEVELS:
            problems += selftest_level(truth, case, level, path)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--program", required=True)
    ap.add_argument("--case", action="append")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gz-vk-selftest-")
    problems = []
    for case in args.case or CASES:
        problems += selftest_case(os.path.abspath(args.program), case, tmp)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        print("checker selftest: FAILED; files in %s" % tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("checker selftest: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
