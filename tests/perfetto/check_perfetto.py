#!/usr/bin/env python3
"""Checks gpuzones' Perfetto traces (docs/TRACE_FORMAT.md, "Perfetto trace").

  check_perfetto.py same-run --tool gpuzones --protoc protoc --protos DIR -- PROGRAM [ARGS]
      runs PROGRAM under `gpuzones run --format json,perfetto` and checks that
      protoc decodes every packet against Perfetto's .proto files (no field
      unknown to them), that the Perfetto trace holds what the JSON trace of
      the same run holds (GPU tracks and their zones, nesting, CPU zones,
      flows both ways, counters, calibration, frame marks, totals), and that
      GPU tracks sit under a track per GPU device.
  check_perfetto.py merge --tool gpuzones ... -- PROGRAM [ARGS]
      concatenates the trace with one this script writes as a system trace
      would (its own sequences and clock snapshot, a few slices), both ways
      round, and checks that both stay intact and our zones keep their times.
  check_perfetto.py options --tool gpuzones ... -- PROGRAM [ARGS]
      each way to ask for a format (-o, --perfetto, --format, GPUZONES_FORMAT,
      GPUZONES_OUTPUT) writes that file and no other.
  check_perfetto.py kill --protoc ... -- PROGRAM [ARGS]
      SIGKILLs PROGRAM mid-run: the file loads up to its last whole packet;
      and a whole file cut anywhere loads up to the packet before the cut.
"""
import argparse
import decimal
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "vk"))
import gztrace  # noqa: E402
import pftrace  # noqa: E402

LEVELS = ("submit", "cmdbuf", "label", "zone", "frame", "flush")


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, cond, msg):
        if not cond:
            self.failures.append(msg)
        return cond

    def done(self):
        for f in self.failures[:40]:
            print("FAIL:", f)
        if len(self.failures) > 40:
            print("... and %d more" % (len(self.failures) - 40))
        print("%s" % ("FAILED" if self.failures else "pass"))
        return 1 if self.failures else 0


# ---- running -----------------------------------------------------------------

def run_program(args, tmp, env_extra, json_path):
    env = dict(os.environ)
    env.update(env_extra)
    cmd = [args.tool, "run", "--format", "json,perfetto", "-o", json_path, "--"] + args.program
    p = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True, timeout=240)
    return p


def protoc_decode(args, path, ck, what):
    """Every packet decodes against Perfetto's protos, with no field they
    do not know (a wrong number or wire type shows as a numbered field)."""
    with open(path, "rb") as f:
        p = subprocess.run([args.protoc, "--decode=perfetto.protos.Trace", "-I", args.protos,
                            "protos/perfetto/trace/trace.proto"], stdin=f, capture_output=True)
    out = p.stdout.decode("utf-8", "replace")
    ck.expect(p.returncode == 0, "%s: protoc --decode failed (%d): %s" % (
        what, p.returncode, p.stderr.decode("utf-8", "replace")[-500:]))
    unknown = [l for l in out.splitlines() if re.match(r"^\s*\d+\s*[:{]", l)]
    ck.expect(not unknown, "%s: fields Perfetto's protos do not know: %s" % (what, unknown[:5]))
    ck.expect(out.count("\npacket {") + out.startswith("packet {") > 0,
              "%s: protoc decoded no packet" % what)
    return out


# ---- the JSON trace, in the terms of the comparison ---------------------------

def ns(d):
    return gztrace.to_ns(d)[0]


def json_model(jt):
    m = {"gpu": {}, "cpu": {}, "nest": {}, "args": {}, "unnested": set()}
    names = jt.thread_names()
    for tid in jt.gpu_tracks():
        track = names.get(tid)
        jt.build_tree(tid)
        for z in jt.gpu_zones(tid=tid):
            key = (track, z["_ts"], z["_end"], z["name"])
            m["gpu"].setdefault(track, []).append(key + (z["args"].get("level"),))
            p = z.get("_parent")
            pkey = (track, p["_ts"], p["_end"], p["name"]) if p else None
            m["nest"][key] = pkey
            if p and z["_end"] > p["_end"]:  # overlaps its "parent" partially: no tree there
                m["unnested"].update((key, pkey))
            a = {k: v for k, v in z["args"].items() if k != "level"}
            m["args"][key] = normalize_args(a)
    for z in jt.cpu_zones():
        m["cpu"].setdefault(z["tid"], []).append((z["_ts"], z["_end"], z["name"]))
    m["flows"] = json_flows(jt, names)
    m["counters"] = {}
    for e in jt.events:
        if e.get("ph") == "C":
            kind = e["name"].split(":")[0]
            (key, value), = e["args"].items()
            m["counters"].setdefault(kind, []).append((e["_ts"], key, value))
    m["calibration"] = sorted(
        (names.get(e["tid"]), e["_ts"], tuple(sorted((k, str(v)) for k, v in e["args"].items())))
        for e in jt.calibration_events())
    m["instants"] = sorted((e["cat"], e["tid"], e["_ts"], e["name"]) for e in jt.events
                           if e.get("ph") == "i" and e.get("cat") in ("frame", "message"))
    tot = jt.totals()
    m["totals"] = tot["args"] if tot else None
    m["threads"] = {t: n for t, n in names.items() if t < gztrace.GPU_TID_BASE}
    return m


def normalize_args(a):
    out = {}
    for k, v in a.items():
        if k in ("batch", "cmdbufs", "clock_doubt_us", "line"):
            out[k] = int(v)
        elif k == "gpu_ticks":
            out[k] = tuple(int(x) for x in v)
        else:
            out[k] = str(v)
    return out


def json_flows(jt, names):
    """{("submit"|"wait", from, to)}: a submit flow from the CPU zone it
    leaves to the submission zone it enters; a wait flow from the GPU
    zone's end (track, time) to the CPU wait zone it enters."""
    out = set()
    cpu = {}
    for z in jt.cpu_zones():
        cpu.setdefault(z["tid"], []).append(z)

    def cpu_at(tid, t):
        found = [z for z in cpu.get(tid, []) if z["_ts"] <= t <= z["_end"]]
        return ("cpu", tid, found[0]["_ts"], found[0]["name"]) if found else None

    for fid, ends in jt.flows().items():
        if len(ends["s"]) != 1 or len(ends["f"]) != 1:
            continue
        s, f = ends["s"][0], ends["f"][0]
        if s["name"] == "submit":
            gz = [z for z in jt.gpu_zones(tid=f["tid"], level="submit") if z["_ts"] == f["_ts"]]
            out.add(("submit", cpu_at(s["tid"], s["_ts"]),
                     ("gpu", names.get(f["tid"]), gz[0]["_ts"] if gz else None)))
        elif s["name"] == "wait":
            out.add(("wait", ("gpu", names.get(s["tid"]), s["_ts"]), cpu_at(f["tid"], f["_ts"])))
    return out


# ---- the Perfetto trace, in the same terms ------------------------------------

def is_gpu_track(pt, uuid):
    return pt.tracks[uuid].tid is None and any(s.category in LEVELS for s in pt.slices(uuid))


def lane_of(pt, t):
    """The GPU track a lane track (zones overlapping without nesting) is of."""
    owner = pt.tracks.get(t.parent)
    if t.name and owner is not None and owner.name and t.name == owner.name + " (overlapping)":
        return owner
    return None


def pf_model(pt):
    m = {"gpu": {}, "cpu": {}, "nest": {}, "args": {}, "on_lanes": set()}
    for uuid, t in pt.tracks.items():
        sl = pt.slices(uuid)
        if t.tid is not None:
            m["cpu"].setdefault(t.tid, []).extend(
                (s.ts, s.end, s.name) for s in sl if s.category == "cpu")
            continue
        owner = lane_of(pt, t)
        name = owner.name if owner else t.name
        for s in sl:
            if s.category not in LEVELS:
                continue
            key = (name, s.ts, s.end, s.name)
            m["gpu"].setdefault(name, []).append(key + (s.category,))
            p = s.parent
            m["nest"][key] = (name, p.ts, p.end, p.name) if p else None
            if owner:
                m["on_lanes"].add(key)
            a = dict(s.annotations)
            if s.begin.loc:
                a["file"], a["function"], a["line"] = s.begin.loc
            m["args"][key] = normalize_args(a)
    m["flows"] = set()
    for a, b in pt.flows:
        ta, tb = pt.tracks.get(a.track), pt.tracks.get(b.track)
        if ta is None or tb is None:
            continue
        na = (lane_of(pt, ta) or ta).name
        nb = (lane_of(pt, tb) or tb).name
        if ta.tid is not None and tb.tid is None:
            m["flows"].add(("submit", ("cpu", ta.tid, a.ts, a.name), ("gpu", nb, b.ts)))
        elif ta.tid is None and tb.tid is not None:
            m["flows"].add(("wait", ("gpu", na, a.end), ("cpu", tb.tid, b.ts, b.name)))
    m["counters"] = {}
    for uuid, t in pt.tracks.items():
        if t.counter is not None:
            kind = (t.name or "").split(":")[0]
            m["counters"].setdefault(kind, []).extend(pt.counters(uuid))
    cal = []
    for uuid, t in pt.tracks.items():
        for s in pt.slices(uuid):
            if s.category == "calibration":
                a = {}
                for k, v in s.annotations.items():
                    if k == "drift_ppm":
                        v = "%.3f" % v
                    elif k == "period_ns":
                        v = "%.6f" % v
                    a[k] = str(v)
                cal.append((t.name, s.ts, tuple(sorted(a.items()))))
    m["calibration"] = sorted(cal)
    m["instants"] = sorted((s.category, pt.tracks[s.track].tid, s.ts, s.name)
                           for s in pt.slices() if s.category in ("frame", "message") and
                           pt.tracks[s.track].tid is not None)
    tot = [s for s in pt.slices() if s.name == "gpuzones_totals"]
    m["totals"] = tot[-1].annotations if tot else None
    m["threads"] = {t.tid: t.thread_name for t in pt.tracks.values()
                    if t.tid is not None and t.thread_name is not None}
    return m


COUNTER_SCALE = {"offset_us": 1000, "uncertainty_us": 1000, "ms": 1000000}


LANES = 1024  # a GPU track's lanes in the Perfetto trace (client/sink_perfetto.c)


def most_at_once(zones):
    """How many of the zones (key tuples: track, begin, end, ...) overlap at
    one time, at most."""
    ev = sorted([(z[1], 1) for z in zones] + [(z[2], -1) for z in zones])
    n = most = 0
    for _, d in ev:
        n += d
        most = max(most, n)
    return most


def compare(ck, jm, pm):
    ck.expect(set(jm["gpu"]) == set(pm["gpu"]),
              "GPU tracks differ: JSON %s, Perfetto %s" % (sorted(jm["gpu"]), sorted(pm["gpu"])))
    left_out = int((pm["totals"] or {}).get("zones_left_out", 0))
    for track in jm["gpu"]:
        a, b = sorted(jm["gpu"][track]), sorted(pm["gpu"].get(track, []))
        if left_out and most_at_once(a) > LANES:
            # More zones at once than a track has lanes: those that fitted
            # none are left out, and counted; the rest are as in JSON.
            ck.expect(set(b) <= set(a) and len(a) - len(b) <= left_out,
                      "track %r: %d zones in JSON, %d in Perfetto, %d said left out" % (
                          track, len(a), len(b), left_out))
            continue
        if not ck.expect(a == b, "track %r: zones differ (%d in JSON, %d in Perfetto); first "
                         "difference %s" % (track, len(a), len(b),
                                            sorted(set(a) ^ set(b), key=repr)[:3])):
            continue
    skip = jm["unnested"] | pm["on_lanes"]
    for key, parent in jm["nest"].items():
        if key in pm["nest"] and key not in skip and parent not in skip:
            ck.expect(pm["nest"][key] == parent, "zone %s: parent %s in JSON, %s in Perfetto" % (
                key, parent, pm["nest"][key]))
        if key in pm["args"]:
            ck.expect(pm["args"][key] == jm["args"][key], "zone %s: args %s in JSON, %s in "
                      "Perfetto" % (key, jm["args"][key], pm["args"][key]))
    for tid, zs in jm["cpu"].items():
        ck.expect(sorted(zs) == sorted(pm["cpu"].get(tid, [])),
                  "thread %d: CPU zones differ: JSON %s, Perfetto %s" % (
                      tid, sorted(zs)[:4], sorted(pm["cpu"].get(tid, []))[:4]))
    ck.expect(set(pm["cpu"]) - set(jm["cpu"]) == {t for t in pm["cpu"] if not pm["cpu"][t]},
              "CPU zones on threads the JSON trace has none on")
    ck.expect(jm["flows"] == pm["flows"] or (left_out and pm["flows"] <= jm["flows"]),
              "flows differ: only in JSON %s; only in Perfetto %s" % (
        sorted(jm["flows"] - pm["flows"], key=repr)[:3],
        sorted(pm["flows"] - jm["flows"], key=repr)[:3]))
    ck.expect(set(jm["counters"]) == set(pm["counters"]), "counter kinds differ: JSON %s, "
              "Perfetto %s" % (sorted(jm["counters"]), sorted(pm["counters"])))
    for kind, vals in jm["counters"].items():
        pv = sorted(pm["counters"].get(kind, []))
        jv = sorted(vals)
        if not ck.expect(len(pv) == len(jv), "counter %r: %d values in JSON, %d in Perfetto" % (
                kind, len(jv), len(pv))):
            continue
        for (jts, unit, jval), (pts, pval) in zip(jv, pv):
            scale = COUNTER_SCALE[unit]
            ok = jts == pts and abs(decimal.Decimal(pval) / scale - jval) <= decimal.Decimal(
                "0.0015")
            if not ck.expect(ok, "counter %r: %s %s in JSON, %s %s ns in Perfetto" % (
                    kind, jts, jval, pts, pval)):
                break
    ck.expect(jm["calibration"] == pm["calibration"], "calibration differs: JSON %s, Perfetto %s"
              % (jm["calibration"][:2], pm["calibration"][:2]))
    ck.expect(jm["instants"] == pm["instants"], "frame marks or messages differ: JSON %s, "
              "Perfetto %s" % (jm["instants"][:3], pm["instants"][:3]))
    jt = {k: int(v) for k, v in (jm["totals"] or {}).items()}
    pt = dict(pm["totals"] or {})
    ck.expect(pt.pop("zones_left_out", None) == 0 or any(
        most_at_once(z) > LANES for z in jm["gpu"].values()),
        "zones left out of the Perfetto trace, with no more than %d zones at once on a track: "
        "%s" % (LANES, pm["totals"]))
    ck.expect(jt and jt == pt, "totals differ: JSON %s, Perfetto %s" % (jm["totals"], pt))
    for tid, name in jm["threads"].items():
        ck.expect(pm["threads"].get(tid) == name, "thread %d: named %r in JSON, %r in Perfetto"
                  % (tid, name, pm["threads"].get(tid)))


def check_structure(ck, pt, pid):
    """What only the Perfetto trace has: the tracks' tree and a clean load."""
    ck.expect(pt.complete, "the file does not end on a whole packet")
    ck.expect(not pt.errors, "reading it: %s" % pt.errors[:5])
    ck.expect(not pt.unterminated, "slices never ended: %s" % pt.unterminated[:3])
    ck.expect(not pt.dangling_flows, "%d flows begun and never ended" % len(pt.dangling_flows))
    tot = [s for s in pt.slices() if s.name == "gpuzones_totals"]
    left_out = tot[-1].annotations.get("zones_left_out", 0) if tot else 0
    ck.expect(not pt.unmatched_ends or left_out, "%d flows ended that never began (or after "
              "their end): %s" % (len(pt.unmatched_ends),
                                  [(e.offset, e.name) for e, _ in pt.unmatched_ends[:3]]))
    procs = [t for t in pt.tracks.values() if t.process_name is not None]
    ck.expect(len(procs) == 1 and procs[0].pid == pid, "one process track, pid %d: %s" % (
        pid, [(t.pid, t.process_name) for t in procs]))
    proc = procs[0].uuid if procs else None
    gpu = [u for u in pt.tracks if is_gpu_track(pt, u) and not lane_of(pt, pt.tracks[u])]
    ck.expect(gpu, "no GPU track")
    for u in gpu:
        t = pt.tracks[u]
        chain = []
        p = t.parent
        while p is not None and p in pt.tracks and len(chain) < 5:
            chain.append(pt.tracks[p])
            p = pt.tracks[p].parent
        devices = [c for c in chain if c.parent == proc and c.tid is None and c.name]
        ck.expect(devices and chain[-1].uuid == proc,
                  "GPU track %r is not under a device track under the process: %s" % (
                      t.name, [c.name for c in chain]))
        if t.name.endswith(" labels") or t.name.endswith(" frames"):
            owner = pt.track_named(t.name.rsplit(" ", 1)[0])
            ck.expect(owner is not None and t.parent == owner.uuid,
                      "%r is not under its queue's track" % t.name)
    for t in pt.tracks.values():
        if t.tid is not None:
            ck.expect(t.pid == pid, "thread track %d of pid %s" % (t.tid, t.pid))


def same_run(args):
    ck = Checks()
    with tempfile.TemporaryDirectory(prefix="gz-pf-") as tmp:
        jpath = os.path.join(tmp, "run.json")
        ppath = os.path.join(tmp, "run.pftrace")
        p = run_program(args, tmp, {}, jpath)
        if not ck.expect(p.returncode == 0, "the program failed (%d): %s" % (
                p.returncode, p.stderr[-2000:])):
            return ck.done()
        ck.expect("trace written to %s" % ppath in p.stderr, "the summary does not name %s:\n%s"
                  % (ppath, p.stderr[-1500:]))
        protoc_decode(args, ppath, ck, "run.pftrace")
        jt = gztrace.load(jpath, strict=True)
        pt = pftrace.load(ppath)
        pid = jt.events[0]["pid"]
        check_structure(ck, pt, pid)
        jm, pm = json_model(jt), pf_model(pt)
        compare(ck, jm, pm)
        nz = sum(len(v) for v in jm["gpu"].values())
        kinds = {f[0] for f in pm["flows"]}
        for k in args.expect_flows:
            ck.expect(k in kinds, "no %s flow (%s)" % (k, "from GPU work to a CPU wait" if
                                                       k == "wait" else "from a CPU submit"))
        for k in args.expect_counters:
            ck.expect(k in pm["counters"], "no %r counter" % k)
        jsize, psize = os.path.getsize(jpath), os.path.getsize(ppath)
        print("zones %d, flows %s, JSON %d bytes, Perfetto %d bytes (%.1f x smaller)" % (
            nz, {k: sum(1 for f in pm["flows"] if f[0] == k) for k in kinds}, jsize, psize,
            jsize / max(psize, 1)))
    return ck.done()


# ---- a system trace, as Perfetto's service would write one --------------------

def pb_varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def pb_field(num, value):
    if isinstance(value, bytes):
        return pb_varint(num << 3 | 2) + pb_varint(len(value)) + value
    if isinstance(value, str):
        return pb_field(num, value.encode())
    return pb_varint(num << 3) + pb_varint(value)


def pb_msg(*parts):
    return b"".join(parts)


def system_trace(t0_boot, t1_boot):
    """A trace of another producer on this machine: the service's clock
    snapshot (sequence 1), and a TrackEvent writer (sequence 3) with a
    process, a thread and three slices named through interned ids 1 and 2,
    the ids our trace uses too. Times are BOOTTIME, the trace clock."""
    mono = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    boot = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
    real = time.clock_gettime_ns(time.CLOCK_REALTIME)

    def packet(*parts):
        body = pb_msg(*parts)
        return pb_field(1, body)

    clocks = pb_msg(pb_field(1, pb_msg(pb_field(1, 6), pb_field(2, boot))),
                    pb_field(1, pb_msg(pb_field(1, 3), pb_field(2, mono))),
                    pb_field(1, pb_msg(pb_field(1, 1), pb_field(2, real))),
                    pb_field(2, 6))
    out = packet(pb_field(10, 1), pb_field(6, clocks))
    proc, thread = 0x5157, 0x5158
    out += packet(pb_field(10, 3), pb_field(13, 1),
                  pb_field(60, pb_msg(pb_field(1, proc), pb_field(3, pb_msg(
                      pb_field(1, 4242), pb_field(6, "system-double"))))))
    out += packet(pb_field(10, 3), pb_field(60, pb_msg(pb_field(1, thread), pb_field(5, proc),
                                                      pb_field(4, pb_msg(pb_field(1, 4242),
                                                                         pb_field(2, 4243))))))
    span = max(t1_boot - t0_boot, 3000)
    slices = []
    for k, (name, iid) in enumerate((("sched: busy", 1), ("cpufreq: 2.1 GHz", 2),
                                     ("sched: busy", 1))):
        b = t0_boot + span * k // 3
        e = b + span // 4
        slices.append((name, b, e))
        interned = pb_field(12, pb_field(2, pb_msg(pb_field(1, iid), pb_field(2, name))))
        out += packet(pb_field(8, b), pb_field(10, 3), pb_field(13, 2), interned,
                      pb_field(11, pb_msg(pb_field(9, 1), pb_field(10, iid),
                                          pb_field(11, thread))))
        out += packet(pb_field(8, e), pb_field(10, 3), pb_field(13, 2),
                      pb_field(11, pb_msg(pb_field(9, 2), pb_field(11, thread))))
    return out, slices, boot - mono


def track_id(pt, uuid):
    t = pt.tracks[uuid]
    if t.tid is not None:
        return "thread %d" % t.tid
    return t.name or t.process_name or "%x" % uuid


def merge(args):
    ck = Checks()
    with tempfile.TemporaryDirectory(prefix="gz-pf-") as tmp:
        jpath = os.path.join(tmp, "run.json")
        ppath = os.path.join(tmp, "run.pftrace")
        p = run_program(args, tmp, {}, jpath)
        if not ck.expect(p.returncode == 0, "the program failed (%d): %s" % (
                p.returncode, p.stderr[-2000:])):
            return ck.done()
        jt = gztrace.load(jpath, strict=True)
        with open(ppath, "rb") as f:
            ours = f.read()
        alone = pftrace.loads(ours)
        zones = sorted(z["_ts"] for z in jt.gpu_zones())
        ends = sorted(z["_end"] for z in jt.gpu_zones())
        # The system's slices lie over our run, on BOOTTIME.
        offset = (time.clock_gettime_ns(time.CLOCK_BOOTTIME) -
                  time.clock_gettime_ns(time.CLOCK_MONOTONIC))
        sys_bytes, sys_slices, boot_minus_mono = system_trace(zones[0] + offset,
                                                             ends[-1] + offset)
        our_slices = sorted((track_id(alone, s.track), s.ts, s.end,
                             s.name, s.category) for s in alone.slices())
        # A service's own sequences (its clock snapshots, stats) do not clear
        # their state: a sequence of ours with the same id would lend them its
        # defaults. Ours keep clear of the small ids a service hands out.
        theirs_ids = set(pftrace.loads(sys_bytes).sequences)
        ck.expect(not (set(alone.sequences) & theirs_ids) and min(alone.sequences) >= 4096,
                  "our sequence ids %s meet the small ids a system trace uses" %
                  sorted(alone.sequences)[:5])
        for order, data in (("system first", sys_bytes + ours), ("ours first", ours + sys_bytes)):
            path = os.path.join(tmp, "merged.pftrace")
            with open(path, "wb") as f:
                f.write(data)
            protoc_decode(args, path, ck, "merged (%s)" % order)
            mt = pftrace.loads(data)
            ck.expect(mt.complete and not mt.errors, "%s: reading it: %s" % (order, mt.errors[:5]))
            ck.expect(not mt.unterminated and not mt.dangling_flows and not mt.unmatched_ends,
                      "%s: slices never ended or flows unlinked" % order)
            mine = [s for s in mt.slices() if s.track in alone.tracks]
            got = sorted((track_id(mt, s.track), s.ts, s.end, s.name,
                          s.category) for s in mine)
            ck.expect(got == our_slices, "%s: our slices changed (%d alone, %d merged)" % (
                order, len(our_slices), len(got)))
            ck.expect(len(mt.flows) == len(alone.flows), "%s: %d flows merged, %d alone" % (
                order, len(mt.flows), len(alone.flows)))
            theirs = sorted((s.name, mt.to_boottime(s.begin.clock, s.begin.value),
                             mt.to_boottime(s.end_event.clock, s.end_event.value))
                            for s in mt.slices() if s.track not in alone.tracks and s.end_event)
            ck.expect(theirs == sorted(sys_slices), "%s: the system trace's slices changed: %s, "
                      "wrote %s" % (order, theirs, sorted(sys_slices)))
            ck.expect(mt.tracks.get(0x5158) is not None and mt.tracks[0x5158].tid == 4243,
                      "%s: the system trace's thread track is gone" % order)
            # Our zones on the merged trace's clock (BOOTTIME): their JSON
            # times (CLOCK_MONOTONIC) plus BOOTTIME - MONOTONIC, within the
            # few hundred ns two back-to-back readings of both clocks differ.
            gpu = [s for s in mine if s.category in LEVELS]
            worst = 0
            for s in gpu:
                b = mt.to_boottime(s.begin.clock, s.begin.value)
                worst = max(worst, abs(b - (s.ts + boot_minus_mono)))
            ck.expect(gpu and worst <= 20000, "%s: our zones moved by up to %d ns on the trace "
                      "clock" % (order, worst))
            jz = sorted((z["_ts"], z["_end"], z["name"]) for z in jt.gpu_zones())
            ck.expect(jz == sorted((s.ts, s.end, s.name) for s in gpu),
                      "%s: our zones' CLOCK_MONOTONIC times are not the JSON trace's" % order)
        print("merged: %d of our slices, %d system slices, both orders" % (
            len(our_slices), len(sys_slices)))
    return ck.done()


# ---- a killed writer -----------------------------------------------------------

def kill(args):
    ck = Checks()
    with tempfile.TemporaryDirectory(prefix="gz-pf-") as tmp:
        ppath = os.path.join(tmp, "run.pftrace")
        env = dict(os.environ, GPUZONES_OUTPUT=ppath)
        cmd = [args.tool, "run", "--"] + args.program
        p = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        seen = 0
        while time.monotonic() < deadline and p.poll() is None:
            try:
                with open(ppath, "rb") as f:
                    data = f.read()
                pkts, _ = pftrace.split_packets(data)
                seen = sum(1 for _, b in pkts if pftrace.one(pftrace.fields(b), 10, 0) > 8192)
            except (OSError, pftrace.TraceError):
                pass
            if seen > 20:
                break
            time.sleep(0.05)
        time.sleep(1.0)  # well into the run
        alive = p.poll() is None
        if alive:
            p.send_signal(signal.SIGKILL)
        p.wait()
        ck.expect(alive, "the program exited (%s) before it was killed" % p.returncode)
        ck.expect(seen > 20, "no GPU zone packets reached the file within 20 s")
        with open(ppath, "rb") as f:
            data = f.read()
        t = pftrace.loads(data)
        ck.expect(not t.errors, "the killed run's trace: %s" % t.errors[:5])
        # The waits of its last moments saw work whose zones it never wrote:
        # those flows end where none began (Perfetto leaves them out).
        last = max(e.ts for e in t.events if e.ts is not None)
        early = [e for e, _ in t.unmatched_ends if e.ts < last - 600000000]
        ck.expect(not early, "flows that never began, before the run's last 600 ms: %s" % [
            (e.offset, e.name) for e in early[:3]])
        gpu = [s for s in t.slices() if s.category in LEVELS]
        ck.expect(gpu, "no GPU zones in the killed run's trace")
        ck.expect(all(s.end is not None for s in gpu if s.end_event) and
                  len([s for s in t.unterminated if s.category in LEVELS]) <= 1,
                  "zones left open: %s" % t.unterminated[:3])
        # The whole packets, as a file of their own: protoc decodes every one.
        whole, _ = pftrace.split_packets(data)
        last_off, last = whole[-1]
        cut = os.path.join(tmp, "whole.pftrace")
        with open(cut, "wb") as f:
            f.write(data[:last_off + 1 + len(pb_varint(len(last))) + len(last)])
        protoc_decode(args, cut, ck, "the killed run's whole packets")
        # A trace cut anywhere loads up to the packet before the cut.
        full = data[:last_off + 1 + len(pb_varint(len(last))) + len(last)]
        pk, _ = pftrace.split_packets(full)
        starts = [off for off, _ in pk] + [len(full)]
        for k in range(1, len(pk), max(1, len(pk) // 40)):
            at = starts[k] + 3  # inside packet k
            part, complete = pftrace.split_packets(full[:at])
            ok = not complete and len(part) == k and part == pk[:k]
            if not ck.expect(ok, "cut at byte %d: %d whole packets read, %d before the cut" % (
                    at, len(part), k)):
                break
            pftrace.loads(full[:at])  # and it reads without an error
        print("killed: %d GPU zones in %d bytes; cut checks on %d packets" % (
            len(gpu), len(data), len(pk)))
    return ck.done()


# ---- choosing the format ---------------------------------------------------------

def options(args):
    """Each way of asking for a format gives that file and no other."""
    ck = Checks()

    def kind(path):
        with open(path, "rb") as f:
            head = f.read(1)
        return "perfetto" if head == b"\x0a" else "json" if head == b"[" else repr(head)

    cases = [
        ("-o run.pftrace", ["-o", "run.pftrace"], {}, {"run.pftrace": "perfetto"}, None),
        ("-o run.perfetto-trace", ["-o", "run.perfetto-trace"], {},
         {"run.perfetto-trace": "perfetto"}, None),
        ("GPUZONES_OUTPUT=run.pftrace", [], {"GPUZONES_OUTPUT": "run.pftrace"},
         {"run.pftrace": "perfetto"}, None),
        ("--perfetto", ["--perfetto"], {}, {"gpuzones-*.pftrace": "perfetto"}, None),
        ("GPUZONES_FORMAT=perfetto", [], {"GPUZONES_FORMAT": "perfetto"},
         {"gpuzones-*.pftrace": "perfetto"}, None),
        ("the default", [], {}, {"gpuzones-*.json": "json"}, None),
        ("--format json,perfetto -o run", ["--format", "json,perfetto", "-o", "run"], {},
         {"run": "json", "run.pftrace": "perfetto"}, None),
        ("GPUZONES_FORMAT=json -o run.pftrace", ["-o", "run.pftrace"],
         {"GPUZONES_FORMAT": "json"}, {"run.pftrace": "json"}, "as GPUZONES_OUTPUT says"),
        ("GPUZONES_FORMAT=protobuf", [], {"GPUZONES_FORMAT": "protobuf"},
         {"gpuzones-*.json": "json"}, 'GPUZONES_FORMAT="protobuf" is not json, perfetto'),
    ]
    import glob
    for what, opts, env_extra, want, message in cases:
        with tempfile.TemporaryDirectory(prefix="gz-pf-") as tmp:
            env = dict(os.environ)
            for k in ("GPUZONES_OUTPUT", "GPUZONES_FORMAT"):
                env.pop(k, None)
            env.update(env_extra)
            p = subprocess.run([args.tool, "run"] + opts + ["--"] + args.program, env=env,
                               cwd=tmp, capture_output=True, text=True, timeout=120)
            ck.expect(p.returncode == 0, "%s: the program failed: %s" % (what, p.stderr[-800:]))
            got = {}
            for pattern in want:
                for path in glob.glob(os.path.join(tmp, pattern)):
                    got[pattern] = kind(path)
            files = sorted(os.listdir(tmp))
            ck.expect(got == want and len(files) == len(want),
                      "%s: files %s, of kinds %s; wanted %s" % (what, files, got, want))
            if message:
                ck.expect(message in p.stderr, "%s: no %r on stderr:\n%s" % (
                    what, message, p.stderr[-800:]))
    return ck.done()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("same-run", "merge", "kill", "options"))
    ap.add_argument("--tool", required=True)
    ap.add_argument("--protoc", required=True)
    ap.add_argument("--protos", required=True)
    ap.add_argument("--expect-flows", action="append", default=[])
    ap.add_argument("--expect-counters", action="append", default=[])
    ap.add_argument("program", nargs="+")
    args = ap.parse_args()
    args.tool = os.path.abspath(args.tool)
    args.protos = os.path.abspath(args.protos)
    if "/" in args.program[0]:
        args.program[0] = os.path.abspath(args.program[0])
    return {"same-run": same_run, "merge": merge, "kill": kill,
            "options": options}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
