"""Read Perfetto trace files: the packets gpuzones writes and those of a
system trace as the merge test writes one.  Python 3 standard library only.

A hand-written protobuf decoder (varints, fixed64, length-delimited) and
the part of Perfetto's semantics the tests need, as Perfetto's trace
processor applies it: packet sequences with their interned data and
defaults, sequence-scoped incremental clocks, clock snapshots, track
descriptors, slices built from begin/end events in timestamp order (ties in
file order), flows and counters.

    t = pftrace.load("run.pftrace")
    t.complete                       # the file ends on a whole packet
    t.tracks[uuid]                   # Track: name, parent, pid, tid, counter
    t.slices(uuid)                   # Slice: name, category, ts, end, depth, parent
    t.flows                          # [(from Slice, to Slice)]
    t.counters(uuid)                 # [(ts, value)]
Times of events are ns on CLOCK_MONOTONIC where the packet's clock maps to
it (t.to_boottime converts with the trace's clock snapshots).
"""

import struct

# Field numbers, from Perfetto's protos/perfetto/trace/ (see protos/ here).
TRACE_PACKET = 1
P_CLOCK_SNAPSHOT, P_TIMESTAMP, P_SEQ, P_TRACK_EVENT, P_INTERNED, P_FLAGS = 6, 8, 10, 11, 12, 13
P_CLOCK_ID, P_DEFAULTS, P_TRACK_DESCRIPTOR = 58, 59, 60
SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE = 1, 2
MONOTONIC, BOOTTIME = 3, 6
TYPE_SLICE_BEGIN, TYPE_SLICE_END, TYPE_INSTANT, TYPE_COUNTER = 1, 2, 3, 4


class TraceError(Exception):
    """The bytes are not a trace in Perfetto's format."""


def varint(buf, i):
    v = shift = 0
    while True:
        if i >= len(buf):
            raise TraceError("varint runs past the end")
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise TraceError("varint longer than 10 bytes")


def fields(buf):
    """(field, wire type, value) of one message: ints for varints and
    fixed64 (raw bits), bytes for length-delimited fields."""
    i = 0
    out = []
    while i < len(buf):
        key, i = varint(buf, i)
        num, wire = key >> 3, key & 7
        if num == 0:
            raise TraceError("field number 0")
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 1:
            if i + 8 > len(buf):
                raise TraceError("fixed64 runs past the end")
            v = struct.unpack_from("<Q", buf, i)[0]
            i += 8
        elif wire == 2:
            n, i = varint(buf, i)
            if i + n > len(buf):
                raise TraceError("field %d runs past the end of its message" % num)
            v = bytes(buf[i:i + n])
            i += n
        elif wire == 5:
            if i + 4 > len(buf):
                raise TraceError("fixed32 runs past the end")
            v = struct.unpack_from("<I", buf, i)[0]
            i += 4
        else:
            raise TraceError("wire type %d" % wire)
        out.append((num, wire, v))
    return out


def one(fs, num, default=None):
    for n, _, v in fs:
        if n == num:
            return v
    return default


def every(fs, num):
    return [v for n, _, v in fs if n == num]


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def split_packets(data):
    """The packets of a file: [(offset, bytes)], and whether it ends on a
    whole packet (a killed writer's last one may be cut)."""
    out = []
    i = 0
    while i < len(data):
        start = i
        try:
            key, i = varint(data, i)
            n, i = varint(data, i)
        except TraceError:
            return out, False
        if key != (TRACE_PACKET << 3 | 2):
            raise TraceError("offset %d: a top-level field other than Trace.packet (%d)" % (start, key))
        if i + n > len(data):
            return out, False
        out.append((start, data[i:i + n]))
        i += n
    return out, True


class Track:
    def __init__(self, uuid):
        self.uuid = uuid
        self.name = None
        self.parent = None
        self.pid = self.tid = None
        self.process_name = self.thread_name = None
        self.counter = None  # the CounterDescriptor's fields, for a counter track
        self.descriptors = 0


class Event:
    """One TrackEvent, resolved: names from the interned data, track and
    time from the defaults, the time in ns on CLOCK_MONOTONIC when the
    packet's clock maps to it."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


class Slice:
    def __init__(self, track, begin, ts):
        self.track = track
        self.begin = begin  # the begin (or instant) Event
        self.name = begin.name
        self.category = begin.category
        self.annotations = begin.annotations
        self.ts = ts
        self.end = None
        self.end_event = None
        self.depth = 0
        self.parent = None

    def __repr__(self):
        return "%r [%s, %s] on %x" % (self.name, self.ts, self.end, self.track)


class Sequence:
    def __init__(self, seq_id):
        self.id = seq_id
        self.valid = False
        self.interned = {}  # (field of InternedData, iid) -> fields of the entry
        self.defaults = []  # fields of TracePacketDefaults
        self.clocks = {}  # sequence-scoped clock id -> [snapshot value, incremental?, last value]
        self.clock_to = {}  # sequence clock id -> (builtin clock id, its value at the snapshot)


def annotation_value(fs):
    for num, kind in ((3, "uint"), (4, "int"), (5, "double"), (6, "string"), (2, "bool")):
        v = one(fs, num)
        if v is None:
            continue
        if kind == "int":
            return signed(v)
        if kind == "double":
            return struct.unpack("<d", struct.pack("<Q", v))[0]
        if kind == "string":
            return v.decode("utf-8")
        if kind == "bool":
            return bool(v)
        return v
    arr = every(fs, 12)
    if arr:
        return [annotation_value(fields(a)) for a in arr]
    return None


class Trace:
    def __init__(self, data):
        packets, self.complete = split_packets(data)
        self.npackets = len(packets)
        self.sequences = {}
        self.tracks = {}
        self.events = []
        self.snapshots = []  # global: {builtin clock id: value}
        self.errors = []  # what Perfetto would refuse or skip
        for order, (offset, body) in enumerate(packets):
            self._packet(order, offset, fields(body))
        self._build()

    # ---- packets -------------------------------------------------------------

    def _seq(self, fs):
        sid = one(fs, P_SEQ, 0)
        if sid not in self.sequences:
            self.sequences[sid] = Sequence(sid)
        return self.sequences[sid]

    def _packet(self, order, offset, fs):
        s = self._seq(fs)
        flags = one(fs, P_FLAGS, 0)
        if flags & SEQ_INCREMENTAL_STATE_CLEARED:
            s.valid = True
            s.interned = {}
            s.defaults = []
        d = one(fs, P_DEFAULTS)
        if d is not None:
            s.defaults = fields(d)
        idata = one(fs, P_INTERNED)
        if idata is not None:
            if not s.valid:
                self.errors.append("offset %d: interned data before the sequence %d was cleared"
                                   % (offset, s.id))
            for num, _, entry in fields(idata):
                efs = fields(entry)
                s.interned[(num, one(efs, 1))] = efs
        snap = one(fs, P_CLOCK_SNAPSHOT)
        if snap is not None:
            self._snapshot(s, fields(snap))
            return
        if flags & SEQ_NEEDS_INCREMENTAL_STATE and not s.valid:
            self.errors.append("offset %d: a packet needing incremental state on sequence %d "
                               "before it was cleared (Perfetto skips it)" % (offset, s.id))
            return
        td = one(fs, P_TRACK_DESCRIPTOR)
        if td is not None:
            self._descriptor(fields(td))
        te = one(fs, P_TRACK_EVENT)
        if te is not None:
            self._track_event(order, offset, s, fs, fields(te))

    def _snapshot(self, s, fs):
        builtin = {}
        for c in every(fs, 1):
            cfs = fields(c)
            cid, ts, inc = one(cfs, 1), one(cfs, 2, 0), one(cfs, 3, 0)
            if cid >= 64:
                s.clocks[cid] = [ts, bool(inc), ts]
            else:
                builtin[cid] = ts
        for cid in list(s.clocks):
            for b in (MONOTONIC, BOOTTIME):
                if b in builtin:
                    s.clock_to[cid] = (b, builtin[b], s.clocks[cid][0])
                    break
        if len(builtin) >= 2:
            self.snapshots.append(builtin)

    def _descriptor(self, fs):
        uuid = one(fs, 1)
        t = self.tracks.setdefault(uuid, Track(uuid))
        t.descriptors += 1
        name = one(fs, 2)
        if name is not None:
            t.name = name.decode("utf-8")
        t.parent = one(fs, 5, t.parent)
        p = one(fs, 3)
        if p is not None:
            pfs = fields(p)
            t.pid = signed(one(pfs, 1, 0))
            n = one(pfs, 6)
            if n is not None:
                t.process_name = n.decode("utf-8")
        th = one(fs, 4)
        if th is not None:
            tfs = fields(th)
            t.pid, t.tid = signed(one(tfs, 1, 0)), signed(one(tfs, 2, 0))
            n = one(tfs, 5)
            if n is not None:
                t.thread_name = n.decode("utf-8")
        c = one(fs, 8)
        if c is not None:
            t.counter = fields(c)

    def _time(self, s, fs):
        """(clock, value) of the packet's time, the sequence clocks resolved
        to the builtin clock of their snapshot."""
        ts = one(fs, P_TIMESTAMP)
        if ts is None:
            return None, None
        clock = one(fs, P_CLOCK_ID) or one(s.defaults, 58) or BOOTTIME
        if clock >= 64:
            c = s.clocks.get(clock)
            if c is None:
                raise TraceError("sequence %d uses clock %d without a snapshot of it" % (s.id, clock))
            if c[1]:
                c[2] += signed(ts)
                v = c[2]
            else:
                v = ts
            builtin, at, own_at = s.clock_to[clock]
            return builtin, v - own_at + at
        return clock, ts

    def _name(self, s, fs, iid_field, name_field, interned_field):
        iid = one(fs, iid_field)
        if iid is not None:
            entry = s.interned.get((interned_field, iid))
            if entry is None:
                self.errors.append("sequence %d: interned %d id %d was never sent"
                                   % (s.id, interned_field, iid))
                return None
            return one(entry, 2, b"").decode("utf-8")
        v = one(fs, name_field)
        return v.decode("utf-8") if v is not None else None

    def _track_event(self, order, offset, s, pfs, fs):
        clock, value = self._time(s, pfs)
        tdef = one(s.defaults, 11)
        track = one(fs, 11)
        if track is None and tdef is not None:
            track = one(fields(tdef), 11)
        annotations = {}
        for a in every(fs, 4):
            afs = fields(a)
            annotations[self._name(s, afs, 1, 10, 3)] = annotation_value(afs)
        cats = [s.interned.get((1, c)) for c in every(fs, 3)]
        category = one(cats[0], 2, b"").decode("utf-8") if cats and cats[0] else None
        loc = None
        liid = one(fs, 34)
        if liid is not None:
            lfs = s.interned.get((4, liid))
            if lfs is None:
                self.errors.append("sequence %d: source location %d was never sent" % (s.id, liid))
            else:
                loc = (one(lfs, 2, b"").decode("utf-8"), one(lfs, 3, b"").decode("utf-8"),
                       one(lfs, 4, 0))
        cv = one(fs, 30)
        self.events.append(Event(
            order=order, offset=offset, seq=s.id, clock=clock, value=value,
            ts=self.to_monotonic(clock, value) if clock is not None else None,
            type=one(fs, 9, 0), track=track, name=self._name(s, fs, 10, 23, 2),
            category=category, annotations=annotations, loc=loc,
            flows=every(fs, 47), ends=every(fs, 48),
            counter=signed(cv) if cv is not None else None))

    # ---- clocks --------------------------------------------------------------

    def _convert(self, clock, value, to):
        """value on clock, on clock to: by the newest snapshot of both taken
        at or before value (the first one for a time before them all), as
        Perfetto maps clocks (an offset, no slope)."""
        if clock == to:
            return value
        both = [s for s in self.snapshots if clock in s and to in s]
        if not both:
            return None
        before = [s for s in both if s[clock] <= value]
        snap = max(before, key=lambda s: s[clock]) if before else min(both, key=lambda s: s[clock])
        return value - snap[clock] + snap[to]

    def to_monotonic(self, clock, value):
        return self._convert(clock, value, MONOTONIC)

    def to_boottime(self, clock, value):
        return self._convert(clock, value, BOOTTIME)

    # ---- slices, flows, counters ---------------------------------------------

    def _build(self):
        """Slices per track from the events in time order (ties in file
        order), as Perfetto's trace processor sorts and nests them; flows by
        id over the same order."""
        self._slices = {}
        self._counters = {}
        self.flows = []
        self.unterminated = []  # slices still open at the end
        self.unmatched_ends = []  # (event, flow id): a flow ended that never began
        stacks = {}
        active = {}
        timed = [e for e in self.events if e.ts is not None]
        for e in self.events:
            if e.ts is None:
                self.errors.append("offset %d: an event whose time cannot be placed" % e.offset)
        for e in sorted(timed, key=lambda e: (e.ts, e.order)):
            if e.type == TYPE_COUNTER:
                self._counters.setdefault(e.track, []).append((e.ts, e.counter))
                continue
            stack = stacks.setdefault(e.track, [])
            if e.type in (TYPE_SLICE_BEGIN, TYPE_INSTANT):
                sl = Slice(e.track, e, e.ts)
                sl.depth = len(stack)
                sl.parent = stack[-1] if stack else None
                self._slices.setdefault(e.track, []).append(sl)
                if e.type == TYPE_SLICE_BEGIN:
                    stack.append(sl)
                else:
                    sl.end = e.ts
            elif e.type == TYPE_SLICE_END:
                if not stack:
                    self.errors.append("offset %d: an end with no slice open on track %x"
                                       % (e.offset, e.track))
                    continue
                sl = stack.pop()
                sl.end = e.ts
                sl.end_event = e
            else:
                self.errors.append("offset %d: event type %d" % (e.offset, e.type))
                continue
            for f in e.flows:
                if f in active:
                    self.flows.append((active[f], sl))
                active[f] = sl
            for f in e.ends:
                if f in active:
                    self.flows.append((active.pop(f), sl))
                else:  # Perfetto ignores it: no flow
                    self.unmatched_ends.append((e, f))
        for stack in stacks.values():
            self.unterminated.extend(stack)
        self.dangling_flows = list(active)

    def slices(self, track=None):
        if track is None:
            return [s for v in self._slices.values() for s in v]
        return self._slices.get(track, [])

    def counters(self, track):
        return self._counters.get(track, [])

    def children_of(self, uuid):
        return [t for t in self.tracks.values() if t.parent == uuid]

    def track_named(self, name):
        found = [t for t in self.tracks.values() if t.name == name]
        return found[0] if len(found) == 1 else None

    def thread_track(self, tid):
        found = [t for t in self.tracks.values() if t.tid == tid]
        return found[0] if found else None


def loads(data):
    return Trace(data)


def load(path):
    with open(path, "rb") as f:
        return Trace(f.read())
