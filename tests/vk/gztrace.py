"""Load and query gpuzones Chrome trace files (see docs/TRACE_FORMAT.md).

Python 3 standard library only.  Times are converted to integer nanoseconds
exactly (the file has microseconds with three decimals), so comparisons with
CLOCK_MONOTONIC values taken by a program need no float slack.

    t = gztrace.load("trace.json")          # complete or killed-process file
    t.complete                              # True if the array was closed
    t.gpu_zones(level="submit")             # X events, cat "gpu"
    t.nesting_errors(tid)                   # partial overlaps on one track
"""

import decimal
import json
import re

GPU_TID_BASE = 1 << 30
# The GPU zone levels the Vulkan tests meet (docs/TRACE_FORMAT.md):
# GPUZONES_LEVEL=passes adds "pass" (render pass instances) and "command"
# (action commands), on the queue's "... passes" track.
LEVELS = ("submit", "cmdbuf", "label", "pass", "command")


class TraceError(Exception):
    """The file is not a trace in the documented shape."""


def to_ns(value):
    """Microseconds (int or Decimal from the parser) -> (int ns, exact?)."""
    if isinstance(value, bool) or not isinstance(value, (int, decimal.Decimal)):
        raise TraceError("time value %r is not a number" % (value,))
    ns = decimal.Decimal(value) * 1000
    whole = int(ns.to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
    return whole, ns == whole


def _parse_line(text):
    return json.loads(text, parse_float=decimal.Decimal)


class Trace:
    """Events of one trace file plus what the loader saw of its shape."""

    def __init__(self, events, complete, dropped_partial, shape_errors, path=None):
        self.path = path
        self.events = events
        self.complete = complete
        self.dropped_partial = dropped_partial
        self.shape_errors = shape_errors
        self.time_errors = []
        for ev in events:
            self._add_times(ev)

    def _add_times(self, ev):
        for key, out in (("ts", "_ts"), ("dur", "_dur")):
            if key in ev:
                try:
                    ns, exact = to_ns(ev[key])
                except TraceError as e:
                    self.time_errors.append("line %d: %s" % (ev["_line"], e))
                    continue
                ev[out] = ns
                if not exact:
                    self.time_errors.append(
                        "line %d: %s=%s has more than three decimals" % (ev["_line"], key, ev[key]))
        if "_ts" in ev and "_dur" in ev:
            ev["_end"] = ev["_ts"] + ev["_dur"]

    # ---- metadata ----------------------------------------------------------

    def metadata(self, name):
        return [e for e in self.events if e.get("ph") == "M" and e.get("name") == name]

    def process_names(self):
        return [e.get("args", {}).get("name") for e in self.metadata("process_name")]

    def thread_names(self):
        """tid -> name; a later thread_name event renames the track."""
        names = {}
        for e in self.metadata("thread_name"):
            names[e.get("tid")] = e.get("args", {}).get("name")
        return names

    def sort_indices(self):
        return {e.get("tid"): e.get("args", {}).get("sort_index")
                for e in self.metadata("thread_sort_index")}

    def totals(self):
        found = self.metadata("gpuzones_totals")
        return found[-1] if found else None

    def accounting_errors(self, produced=None, dropped=0):
        """Nothing lost: the totals event is there, zones produced = written +
        dropped, written = the GPU zone events in the file, and (where the
        test knows them) produced and dropped are what the program made and
        what it was meant to lose.  Returns a list of problems."""
        tot = self.totals()
        if tot is None:
            return ["no gpuzones_totals event"]
        a = tot.get("args", {})
        missing = [k for k in ("zones_produced", "zones_written", "zones_dropped",
                               "items_dropped") if not isinstance(a.get(k), int)]
        if missing:
            return ["gpuzones_totals lacks %s: %s" % (", ".join(missing), a)]
        errors = []
        n_p, n_w, n_d = a["zones_produced"], a["zones_written"], a["zones_dropped"]
        if n_p != n_w + n_d:
            errors.append("zones produced %d != written %d + dropped %d" % (n_p, n_w, n_d))
        in_file = len(self.zones(cat="gpu"))
        if in_file != n_w:
            errors.append("%d GPU zone events in the file, totals say %d written" % (in_file, n_w))
        if produced is not None and n_p != produced:
            errors.append("zones produced %d, the program made %d" % (n_p, produced))
        if dropped is not None and n_d != dropped:
            errors.append("%d zones dropped, expected %d" % (n_d, dropped))
        return errors

    # ---- zones ---------------------------------------------------------------

    def zones(self, cat=None, tid=None, name=None, level=None):
        out = []
        for e in self.events:
            if e.get("ph") != "X":
                continue
            if cat is not None and e.get("cat") != cat:
                continue
            if tid is not None and e.get("tid") != tid:
                continue
            if name is not None and e.get("name") != name:
                continue
            if level is not None and e.get("args", {}).get("level") != level:
                continue
            out.append(e)
        return out

    def gpu_zones(self, tid=None, level=None, name=None):
        return self.zones(cat="gpu", tid=tid, level=level, name=name)

    def cpu_zones(self, tid=None, name=None):
        return self.zones(cat="cpu", tid=tid, name=name)

    def tids(self, cat=None):
        return sorted({e.get("tid") for e in self.zones(cat=cat)}, key=repr)

    def gpu_tracks(self):
        """GPU track tids: named in metadata or carrying GPU zones."""
        tids = {t for t in self.thread_names() if isinstance(t, int) and t >= GPU_TID_BASE}
        tids.update(e.get("tid") for e in self.gpu_zones())
        return sorted(tids, key=repr)

    # ---- nesting -------------------------------------------------------------

    def track_order(self, tid):
        """Zones of one track, parents before children: by start, longer
        first, then file order (the writer puts parents first)."""
        zs = [z for z in self.zones(tid=tid) if "_ts" in z and "_dur" in z]
        return sorted(zs, key=lambda z: (z["_ts"], -z["_dur"], z["_line"]))

    def build_tree(self, tid):
        """Sets z["_parent"] (a zone or None) for every zone of the track and
        returns the partial overlaps found, as messages."""
        errors = []
        stack = []
        for z in self.track_order(tid):
            while stack and stack[-1]["_end"] <= z["_ts"]:
                stack.pop()
            parent = stack[-1] if stack else None
            if parent is not None and z["_end"] > parent["_end"]:
                errors.append("track %s: %s overlaps %s partially" % (tid, describe(z), describe(parent)))
            z["_parent"] = parent
            stack.append(z)
        return errors

    def nesting_errors(self, tid):
        return self.build_tree(tid)

    def parents_first_errors(self, tid):
        """TRACE_FORMAT.md: viewers order zones by ts, then longest first, so
        file order matters only for a parent and a child that begin on the
        same tick: then the parent must come first. (A label that spans
        submissions is read back after its children, so in general a child
        may be written first.)"""
        self.build_tree(tid)
        errors = []
        for z in self.zones(tid=tid):
            p = z.get("_parent")
            if p is not None and p["_line"] > z["_line"] and p["_ts"] == z["_ts"]:
                errors.append("track %s: %s is written before its parent %s, which begins "
                              "on the same tick" % (tid, describe(z), describe(p)))
        return errors

    def children(self, parent, tid=None):
        tid = parent.get("tid") if tid is None else tid
        return [z for z in self.track_order(tid) if z.get("_parent") is parent]

    # ---- flows -----------------------------------------------------------------

    def flows(self):
        """id -> {"s": [events], "f": [events]}"""
        out = {}
        for e in self.events:
            if e.get("ph") in ("s", "f") and e.get("cat") == "flow":
                out.setdefault(e.get("id"), {"s": [], "f": []})[e["ph"]].append(e)
        return out

    def calibration_events(self):
        return [e for e in self.events if e.get("ph") == "i" and e.get("cat") == "calibration"]


def describe(z):
    """Short text for error messages."""
    level = z.get("args", {}).get("level") if isinstance(z.get("args"), dict) else None
    return "%s%r (line %s, ts %s us, dur %s us)" % (
        (level + " ") if level else "", z.get("name"), z.get("_line"), z.get("ts"), z.get("dur"))


def loads(text, path=None):
    """Parses trace text: a complete file or one cut off by a killed process.

    Complete: "[", one event per line each followed by ",", the last event
    without a comma, "]".  Killed: the same without the end; its last line may
    be partial and is dropped.  Anything else is an error."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "[":
        raise TraceError("first line is not '['")
    events, shape = [], []
    complete = False
    dropped = False
    last_had_comma = None
    body = lines[1:]
    last_nonempty = max((i for i, l in enumerate(body) if l.strip()), default=-1)
    for i, raw in enumerate(body):
        lineno = i + 2
        line = raw.strip()
        if complete:
            if line:
                raise TraceError("line %d: text after the closing ']'" % lineno)
            continue
        if not line:
            if i < last_nonempty:
                shape.append("line %d: empty line inside the array" % lineno)
            continue
        if line == "]":
            complete = True
            if last_had_comma:
                shape.append("line %d: the last event before ']' ends with a comma" % (lineno - 1))
            continue
        has_comma = line.endswith(",")
        item = line[:-1] if has_comma else line
        try:
            ev = _parse_line(item)
        except ValueError as e:
            if i == last_nonempty:
                dropped = True  # the partial last line of a killed process
                continue
            raise TraceError("line %d: not one JSON event: %s" % (lineno, e))
        if not isinstance(ev, dict):
            raise TraceError("line %d: event is not an object" % lineno)
        if last_had_comma is False:
            shape.append("line %d: the event before this one has no trailing comma" % lineno)
        ev["_line"] = lineno
        events.append(ev)
        last_had_comma = has_comma
    return Trace(events, complete, dropped, shape, path)


def load(path, strict=False):
    """Loads a trace file.  strict: it must be complete and well shaped."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    t = loads(text, path)
    if strict:
        if not t.complete:
            raise TraceError("%s: the array is not closed (process killed?)" % path)
        if t.shape_errors:
            raise TraceError("%s: %s" % (path, "; ".join(t.shape_errors)))
    return t


def strict_parse_ok(path):
    """Whether the file is valid JSON as a whole (a clean exit's file)."""
    with open(path, encoding="utf-8") as f:
        try:
            return isinstance(json.load(f), list)
        except ValueError:
            return False


def loader_callstacks(stderr):
    """VK_LOADER_DEBUG=layer prints each chain as "vkCreateInstance layer
    callstack setup to:" then the layers from the application down.  Returns
    [(kind, [layer names])]."""
    stacks = []
    current = None
    for line in stderr.splitlines():
        m = re.search(r"(vkCreateInstance|vkCreateDevice) layer callstack setup to:", line)
        if m:
            current = (m.group(1), [])
            stacks.append(current)
            continue
        if current is None:
            continue
        body = line[len("LAYER:"):].strip() if line.startswith("LAYER:") else None
        if body is None:
            current = None
        elif body == "<Device>" or body.startswith("<Physical Device") or body.startswith("<Drivers>"):
            current = None
        elif re.fullmatch(r"VK_LAYER_\w+", body):
            current[1].append(body)
    return stacks
