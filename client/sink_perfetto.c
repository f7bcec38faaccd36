/* The Perfetto sink: Perfetto's own trace format, a stream of
 * length-delimited TracePackets (docs/TRACE_FORMAT.md, "Perfetto trace"),
 * encoded here by hand (gz_pb.h) and written at each flush, so that a
 * killed process leaves a file that loads up to its last whole packet.
 *
 * Layout:
 *  - one main packet sequence: the clock snapshots (CLOCK_MONOTONIC against
 *    BOOTTIME, Perfetto's trace clock), the track descriptors (the process;
 *    a track per GPU device; under it a track per GPU track, its label and
 *    frame tracks under it; the program's threads; counter tracks), the
 *    CPU zones on their threads, calibration instants, counters, frame
 *    marks, messages and the totals. Times there are absolute
 *    CLOCK_MONOTONIC ns (its packet defaults say so).
 *  - one sequence per GPU track, its zones only: its defaults name the
 *    track and a clock of the sequence's own that counts in ns from the
 *    previous packet's time, so that a zone's begin and end take a few
 *    bytes each. A time earlier than the previous one (a zone read back
 *    after later ones) is written absolute, on CLOCK_MONOTONIC.
 * Names, categories and annotation names are interned per sequence.
 *
 * GPU zones come parents first, each whole; they are written as a begin
 * and an end event, the ends held on a stack per lane of the track until a
 * later zone begins after them or the flush, so that at equal times an end
 * comes before the next begin and a child's end before its parent's (see
 * struct lane for zones that cannot nest). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gz_calibration.h"
#include "gz_client_internal.h"
#include "gz_jsonw.h"
#include "gz_output.h"
#include "gz_pb.h"
#include "gz_pf_strings.h"
#include "gz_sinks.h"

/* Field numbers from Perfetto's protos/perfetto/trace/ (trace.proto,
 * trace_packet.proto, clock_snapshot.proto, trace_packet_defaults.proto,
 * interned_data/interned_data.proto, the track_event/ files). */
enum {
    TRACE_PACKET = 1,

    PKT_CLOCK_SNAPSHOT = 6,
    PKT_TIMESTAMP = 8,
    PKT_SEQUENCE_ID = 10, /* trusted_packet_sequence_id */
    PKT_TRACK_EVENT = 11,
    PKT_INTERNED_DATA = 12,
    PKT_SEQUENCE_FLAGS = 13,
    PKT_TIMESTAMP_CLOCK_ID = 58,
    PKT_DEFAULTS = 59,
    PKT_TRACK_DESCRIPTOR = 60,

    SEQ_INCREMENTAL_STATE_CLEARED = 1,
    SEQ_NEEDS_INCREMENTAL_STATE = 2,

    SNAPSHOT_CLOCKS = 1,
    SNAPSHOT_PRIMARY_TRACE_CLOCK = 2,
    CLOCK_ID = 1,
    CLOCK_TIMESTAMP = 2,
    CLOCK_IS_INCREMENTAL = 3,
    BUILTIN_CLOCK_MONOTONIC = 3,
    BUILTIN_CLOCK_BOOTTIME = 6,
    SEQUENCE_CLOCK = 64, /* the first sequence-scoped clock id */

    DEFAULTS_TIMESTAMP_CLOCK_ID = 58,
    DEFAULTS_TRACK_EVENT = 11,
    TRACK_EVENT_DEFAULTS_TRACK_UUID = 11,

    INTERNED_CATEGORIES = 1,
    INTERNED_EVENT_NAMES = 2,
    INTERNED_ANNOTATION_NAMES = 3,
    INTERNED_SOURCE_LOCATIONS = 4,
    INTERNED_IID = 1, /* EventName, EventCategory, DebugAnnotationName */
    INTERNED_NAME = 2,
    SOURCE_LOCATION_FILE = 2,
    SOURCE_LOCATION_FUNCTION = 3,
    SOURCE_LOCATION_LINE = 4,

    TD_UUID = 1,
    TD_NAME = 2,
    TD_PROCESS = 3,
    TD_THREAD = 4,
    TD_PARENT_UUID = 5,
    TD_COUNTER = 8,
    TD_SIBLING_MERGE_BEHAVIOR = 15,
    SIBLING_MERGE_BEHAVIOR_NONE = 2,
    PROCESS_PID = 1,
    PROCESS_NAME = 6,
    THREAD_PID = 1,
    THREAD_TID = 2,
    THREAD_NAME = 5,
    COUNTER_UNIT = 3,
    UNIT_TIME_NS = 1,

    TE_CATEGORY_IIDS = 3,
    TE_DEBUG_ANNOTATIONS = 4,
    TE_TYPE = 9,
    TE_NAME_IID = 10,
    TE_TRACK_UUID = 11,
    TE_COUNTER_VALUE = 30,
    TE_SOURCE_LOCATION_IID = 34,
    TE_FLOW_IDS = 47,
    TE_TERMINATING_FLOW_IDS = 48,
    TYPE_SLICE_BEGIN = 1,
    TYPE_SLICE_END = 2,
    TYPE_INSTANT = 3,
    TYPE_COUNTER = 4,

    DA_NAME_IID = 1,
    DA_UINT = 3,
    DA_INT = 4,
    DA_DOUBLE = 5,
    DA_STRING = 6,
    DA_ARRAY_VALUES = 12,
};

#define MAX_STR 4096u        /* longest string written (a zone name, a path), in bytes */
#define PACKET_CAP (48u << 10) /* a packet: a few names at most MAX_STR each, and an event */
#define SEQ_BASE 8192u       /* sequence ids from here: two bytes each, and clear of the
                                small ids a system trace's sequences have */
#define STACK 64u            /* open GPU zones per lane whose ends wait */
#define LANES 1024u          /* per GPU track at most, made as they are needed */
#define HISTORY 64u          /* outermost zones a lane remembers apart */
#define PENDING 256u         /* flows waiting for their CPU zone */
#define FLOWS_PER_EVENT 32u
#define SNAPSHOT_DRIFT_NS 1000 /* BOOTTIME - MONOTONIC moved (a suspend): snapshot again */
#define DESCRIBED_TIDS 4096u
#define MAX_ANNOTS 12u

typedef struct seq {
    uint32_t id;
    bool started;        /* its state was cleared and its defaults sent */
    uint64_t track_uuid; /* a GPU track's sequence: its track (0: the main sequence) */
    uint64_t clock_base; /* a GPU track's sequence: the last time on its own clock */
    gz_pf_sent sent;
} seq;

typedef struct open_zone {
    uint64_t begin_ns, end_ns;
} open_zone;

typedef struct span {
    uint64_t begin_ns, end_ns;
} span;

/* A lane of a GPU track: the zones open on it, each inside the one below,
 * and the outermost zones it ended lately. Perfetto pairs a track's begin
 * and end events as a stack, in time order (equal times in file order), so
 * every two zones of a lane must nest or not meet, and a zone written
 * after another that begins on the same tick cannot be its parent. A zone
 * that cannot go on a lane so (one that overlaps another without nesting:
 * an out-of-order OpenCL queue, a GL zone stamped before its frame's start;
 * or a parent read back after a child that begins on its tick) goes to the
 * next lane: a track of its own under the GPU track (describe_lane). */
typedef struct lane {
    open_zone stack[STACK];
    uint32_t depth;
    bool described;
    /* The outermost zones ended on it, oldest first, in a ring; when it is
     * full, the two oldest become one span from the first's begin to the
     * second's end (a zone that meets it then goes to another lane, even
     * where it fell between them: never wrong, sometimes one lane more). */
    span done[HISTORY];
    uint32_t first, ndone;
    uint64_t latest_end; /* the latest end of them all */
} lane;

typedef struct gpu_track {
    char *name; /* for its counter tracks' names */
    size_t name_len;
    uint32_t serial;
    uint64_t uuid;
    uint16_t clock_track;
    bool described;
    uint8_t counters; /* counter tracks described: bit per counter kind */
    seq s;
    lane **lanes; /* lanes[0] is first_lane; the others made when needed */
    uint32_t nlanes, lanes_cap;
    lane first_lane;
    lane *lane0[1];
} gpu_track;

/* Counter tracks: one per kind and GPU track (or thread). */
enum { CTR_FRAME_TIME = 0, CTR_CLOCK_OFFSET, CTR_CLOCK_UNCERTAINTY, CTR_FRAME_INTERVAL };

typedef struct pending_flow {
    uint64_t flow;
    uint64_t ns;
    uint32_t tid;
    bool in; /* from GPU work to a wait (else: from a submit to GPU work) */
} pending_flow;

/* A debug annotation of an event. */
typedef enum annot_type { A_UINT, A_INT, A_DOUBLE, A_STRING, A_UINT_PAIR } annot_type;
typedef struct annot {
    const char *name;
    annot_type type;
    uint64_t u, u2;
    int64_t i;
    double d;
    const char *s;
} annot;

/* One event to write. */
typedef struct event {
    seq *s;
    uint64_t ts;
    uint32_t type;
    uint64_t track_uuid; /* 0: the sequence's own track */
    const char *name;    /* NULL: none */
    size_t name_len;
    const char *category; /* NULL: none */
    const gz_srcloc_view *loc;
    const annot *annots;
    uint32_t nannots;
    const uint64_t *flows; /* begun (or continued) here */
    uint32_t nflows;
    const uint64_t *ends; /* ended here */
    uint32_t nends;
    bool counter;
    int64_t value;
} event;

typedef struct pf_sink {
    gz_jsonw w;
    bool open, failed;
    char path[4096];
    gz_trace_outcome *outcome;
    bool raw_ticks;
    int pid;
    char exe[256];
    uint64_t uuid_base; /* mixes this process and run into every uuid and flow id */
    uint64_t zones_unwritten;
    uint64_t zones_left_out; /* fitted no lane of their track (lane_for) */
    uint64_t packets_dropped; /* did not fit the packet buffer (never, with MAX_STR) */
    gz_pf_strings *strings;
    seq main;
    uint64_t process_uuid;
    int64_t boot_minus_mono; /* at the last clock snapshot */
    uint32_t next_serial;
    gpu_track *tracks[GZ_MAX_TRACKS];
    uint32_t described_tids[DESCRIBED_TIDS]; /* open addressing, 0 = empty */
    uint32_t ndescribed_tids;
    uint64_t devices[256]; /* device tracks described, by uuid (0 = empty) */
    pending_flow pending[PENDING];
    uint32_t npending;
    struct {
        uint32_t tid;
        uint64_t ns;
        bool described; /* its counter track */
    } last_mark[8]; /* the newest frame mark of a few threads, for the frame interval */
    uint8_t packet[PACKET_CAP];
} pf_sink;

static const char *const kind_names[8] = {"submit", "cmdbuf", "label", "zone",
                                          "frame",  "flush",  "pass",  "command"};

/* ---- ids ----------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull; /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A track uuid: unique in this run and, with the process and start time
 * mixed in, against any other trace it is merged with. Never 0. */
static uint64_t uuid_of(const pf_sink *p, uint64_t what, uint64_t n)
{
    return mix(p->uuid_base ^ mix(what << 56 ^ n)) | 1;
}

enum { U_PROCESS = 1, U_THREAD, U_GPU, U_DEVICE, U_COUNTER };

/* A flow id on the wire: the run's ids are small and start at 1 in every
 * process, Perfetto's are global. */
static uint64_t flow_id(const pf_sink *p, uint64_t flow)
{
    return p->uuid_base ^ flow;
}

/* ---- writing ------------------------------------------------------------- */

static bool writable(const pf_sink *p)
{
    return p->open && !p->failed;
}

static void write_packet(pf_sink *p, const gz_pb *pb)
{
    if (!writable(p))
        return;
    if (pb->full) {
        p->packets_dropped++;
        return;
    }
    /* Trace.packet: the field's tag, the packet's length, the packet. */
    uint8_t head[11];
    size_t n = 0;
    head[n++] = TRACE_PACKET << 3 | 2;
    for (uint64_t v = pb->len;; v >>= 7) {
        head[n++] = (uint8_t)(v < 0x80 ? v : (v & 0x7f) | 0x80);
        if (v < 0x80)
            break;
    }
    gz_jsonw_raw(&p->w, (const char *)head, n);
    gz_jsonw_raw(&p->w, (const char *)pb->buf, pb->len);
}

static void packet_start(pf_sink *p, gz_pb *pb)
{
    gz_pb_init(pb, p->packet, sizeof p->packet);
}

static void read_clocks(uint64_t *mono, uint64_t *boot)
{
    struct timespec a, b, c;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_BOOTTIME, &b);
    clock_gettime(CLOCK_MONOTONIC, &c);
    uint64_t m0 = (uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec;
    uint64_t m1 = (uint64_t)c.tv_sec * 1000000000ull + (uint64_t)c.tv_nsec;
    *mono = m0 + (m1 - m0) / 2; /* BOOTTIME was read between them */
    *boot = (uint64_t)b.tv_sec * 1000000000ull + (uint64_t)b.tv_nsec;
}

static void clock_pair(gz_pb *pb, uint32_t clock, uint64_t ts, bool incremental)
{
    size_t m = gz_pb_begin(pb, SNAPSHOT_CLOCKS);
    gz_pb_varint(pb, CLOCK_ID, clock);
    gz_pb_varint(pb, CLOCK_TIMESTAMP, ts);
    if (incremental)
        gz_pb_varint(pb, CLOCK_IS_INCREMENTAL, 1);
    gz_pb_end(pb, m);
}

/* CLOCK_MONOTONIC against BOOTTIME, read back to back: Perfetto's trace
 * clock is BOOTTIME, our times are CLOCK_MONOTONIC. */
static void clock_snapshot(pf_sink *p)
{
    uint64_t mono, boot;
    read_clocks(&mono, &boot);
    p->boot_minus_mono = (int64_t)(boot - mono);
    gz_pb pb;
    packet_start(p, &pb);
    gz_pb_varint(&pb, PKT_SEQUENCE_ID, p->main.id);
    size_t m = gz_pb_begin(&pb, PKT_CLOCK_SNAPSHOT);
    clock_pair(&pb, BUILTIN_CLOCK_MONOTONIC, mono, false);
    clock_pair(&pb, BUILTIN_CLOCK_BOOTTIME, boot, false);
    gz_pb_varint(&pb, SNAPSHOT_PRIMARY_TRACE_CLOCK, BUILTIN_CLOCK_BOOTTIME);
    gz_pb_end(&pb, m);
    write_packet(p, &pb);
}

/* The first packet of a sequence (and after every restart of the
 * interning): it clears the sequence's state and sets its defaults. A GPU
 * track's sequence gets its own clock, counting from base. */
static void start_sequence(pf_sink *p, seq *s, uint64_t base)
{
    gz_pb pb;
    packet_start(p, &pb);
    gz_pb_varint(&pb, PKT_SEQUENCE_ID, s->id);
    gz_pb_varint(&pb, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    size_t d = gz_pb_begin(&pb, PKT_DEFAULTS);
    gz_pb_varint(&pb, DEFAULTS_TIMESTAMP_CLOCK_ID,
                 s->track_uuid ? SEQUENCE_CLOCK : BUILTIN_CLOCK_MONOTONIC);
    if (s->track_uuid) {
        size_t t = gz_pb_begin(&pb, DEFAULTS_TRACK_EVENT);
        gz_pb_varint(&pb, TRACK_EVENT_DEFAULTS_TRACK_UUID, s->track_uuid);
        gz_pb_end(&pb, t);
    }
    gz_pb_end(&pb, d);
    if (s->track_uuid) {
        s->clock_base = base;
        size_t m = gz_pb_begin(&pb, PKT_CLOCK_SNAPSHOT);
        clock_pair(&pb, SEQUENCE_CLOCK, base, true);
        clock_pair(&pb, BUILTIN_CLOCK_MONOTONIC, base, false);
        gz_pb_end(&pb, m);
    }
    write_packet(p, &pb);
    gz_pf_sent_clear(&s->sent);
    s->started = true;
}

/* The interning started afresh: every sequence clears its state again
 * before its next packet. */
static void restart_sequences(pf_sink *p)
{
    p->main.started = false;
    for (uint32_t i = 0; i < GZ_MAX_TRACKS; i++)
        if (p->tracks[i])
            p->tracks[i]->s.started = false;
}

/* The ids an event needs, interned; false when a name cannot be kept (no
 * memory at all). */
typedef struct event_ids {
    uint32_t name, category, loc;
    uint32_t annots[MAX_ANNOTS];
} event_ids;

static uint32_t intern(pf_sink *p, gz_pf_kind kind, const char *s, size_t len, bool *reset)
{
    if (len > MAX_STR)
        len = MAX_STR;
    return gz_pf_strings_id(p->strings, kind, s, len, reset);
}

/* A source location's key: the file's length, the file, the function's
 * length, the function, the line (lengths and line as 4 bytes each), so
 * that names of any bytes come back whole. */
static size_t srcloc_key(char *out, size_t cap, const gz_srcloc_view *loc)
{
    uint32_t file = loc->file_len > MAX_STR ? MAX_STR : (uint32_t)loc->file_len;
    uint32_t fn = loc->function_len > MAX_STR ? MAX_STR : (uint32_t)loc->function_len;
    if ((size_t)file + fn + 12 > cap)
        return 0;
    size_t n = 0;
    memcpy(out + n, &file, 4);
    memcpy(out + (n += 4), loc->file, file);
    memcpy(out + (n += file), &fn, 4);
    memcpy(out + (n += 4), loc->function, fn);
    memcpy(out + (n += fn), &loc->line, 4);
    return n + 4;
}

static bool intern_event(pf_sink *p, const event *e, event_ids *ids)
{
    char key[2 * MAX_STR + 12];
    for (int pass = 0; pass < 2; pass++) {
        bool reset = false;
        *ids = (event_ids){0};
        if (e->name)
            ids->name = intern(p, GZ_PF_EVENT_NAME, e->name, e->name_len, &reset);
        if (e->category)
            ids->category = intern(p, GZ_PF_CATEGORY, e->category, strlen(e->category), &reset);
        if (e->loc) {
            size_t n = srcloc_key(key, sizeof key, e->loc);
            ids->loc = intern(p, GZ_PF_SOURCE_LOCATION, key, n, &reset);
        }
        for (uint32_t i = 0; i < e->nannots && i < MAX_ANNOTS; i++)
            ids->annots[i] = intern(p, GZ_PF_ANNOTATION_NAME, e->annots[i].name,
                                    strlen(e->annots[i].name), &reset);
        if (!reset)
            return (!e->name || ids->name) && (!e->category || ids->category) &&
                   (!e->loc || ids->loc);
        restart_sequences(p); /* the ids of the first pass may be void */
    }
    return false;
}

static void interned_entry(pf_sink *p, gz_pb *pb, uint32_t field, uint32_t id)
{
    size_t len;
    const char *s = gz_pf_strings_str(p->strings, id, &len);
    size_t m = gz_pb_begin(pb, field);
    gz_pb_varint(pb, INTERNED_IID, id);
    if (field == INTERNED_SOURCE_LOCATIONS && len >= 12) { /* srcloc_key's layout */
        uint32_t file, fn, line;
        memcpy(&file, s, 4);
        memcpy(&fn, s + 4 + file, 4);
        memcpy(&line, s + 8 + file + fn, 4);
        gz_pb_string(pb, SOURCE_LOCATION_FILE, s + 4, file, MAX_STR);
        gz_pb_string(pb, SOURCE_LOCATION_FUNCTION, s + 8 + file, fn, MAX_STR);
        gz_pb_varint(pb, SOURCE_LOCATION_LINE, line);
    } else {
        gz_pb_string(pb, INTERNED_NAME, s, len, MAX_STR);
    }
    gz_pb_end(pb, m);
}

/* InternedData with the ids the sequence has not sent yet, gathered in its
 * fields' order (categories, event names, annotation names, source
 * locations), as a reader may expect. */
static void interned_data(pf_sink *p, gz_pb *pb, seq *s, const event *e, const event_ids *ids)
{
    struct {
        uint32_t field, id;
    } unsent[3 + MAX_ANNOTS];
    uint32_t n = 0;
    if (ids->category && gz_pf_sent_add(&s->sent, ids->category))
        unsent[n++] = (typeof(unsent[0])){INTERNED_CATEGORIES, ids->category};
    if (ids->name && gz_pf_sent_add(&s->sent, ids->name))
        unsent[n++] = (typeof(unsent[0])){INTERNED_EVENT_NAMES, ids->name};
    for (uint32_t i = 0; i < e->nannots && i < MAX_ANNOTS; i++)
        if (ids->annots[i] && gz_pf_sent_add(&s->sent, ids->annots[i]))
            unsent[n++] = (typeof(unsent[0])){INTERNED_ANNOTATION_NAMES, ids->annots[i]};
    if (ids->loc && gz_pf_sent_add(&s->sent, ids->loc))
        unsent[n++] = (typeof(unsent[0])){INTERNED_SOURCE_LOCATIONS, ids->loc};
    if (!n)
        return;
    size_t m = gz_pb_begin(pb, PKT_INTERNED_DATA);
    for (uint32_t i = 0; i < n; i++)
        interned_entry(p, pb, unsent[i].field, unsent[i].id);
    gz_pb_end(pb, m);
}

static void annotation(gz_pb *pb, const annot *a, uint32_t name_id)
{
    size_t m = gz_pb_begin(pb, TE_DEBUG_ANNOTATIONS);
    gz_pb_varint(pb, DA_NAME_IID, name_id);
    switch (a->type) {
    case A_UINT:
        gz_pb_varint(pb, DA_UINT, a->u);
        break;
    case A_INT:
        gz_pb_varint(pb, DA_INT, (uint64_t)a->i);
        break;
    case A_DOUBLE:
        gz_pb_double(pb, DA_DOUBLE, a->d);
        break;
    case A_STRING:
        gz_pb_string(pb, DA_STRING, a->s, strlen(a->s), MAX_STR);
        break;
    case A_UINT_PAIR:
        for (int k = 0; k < 2; k++) {
            size_t v = gz_pb_begin(pb, DA_ARRAY_VALUES);
            gz_pb_varint(pb, DA_UINT, k ? a->u2 : a->u);
            gz_pb_end(pb, v);
        }
        break;
    }
    gz_pb_end(pb, m);
}

static void write_event(pf_sink *p, const event *e)
{
    if (!writable(p))
        return;
    event_ids ids;
    if (!intern_event(p, e, &ids)) {
        p->packets_dropped++;
        return;
    }
    seq *s = e->s;
    if (!s->started)
        start_sequence(p, s, s->clock_base ? s->clock_base : e->ts);
    gz_pb pb;
    packet_start(p, &pb);
    if (s->track_uuid && e->ts >= s->clock_base) {
        gz_pb_varint(&pb, PKT_TIMESTAMP, e->ts - s->clock_base);
        s->clock_base = e->ts;
    } else {
        gz_pb_varint(&pb, PKT_TIMESTAMP, e->ts);
        if (s->track_uuid) /* earlier than the sequence's clock: absolute */
            gz_pb_varint(&pb, PKT_TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
    }
    gz_pb_varint(&pb, PKT_SEQUENCE_ID, s->id);
    gz_pb_varint(&pb, PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    interned_data(p, &pb, s, e, &ids);
    size_t m = gz_pb_begin(&pb, PKT_TRACK_EVENT);
    if (ids.category)
        gz_pb_varint(&pb, TE_CATEGORY_IIDS, ids.category);
    for (uint32_t i = 0; i < e->nannots && i < MAX_ANNOTS; i++)
        annotation(&pb, &e->annots[i], ids.annots[i]);
    gz_pb_varint(&pb, TE_TYPE, e->type);
    if (ids.name)
        gz_pb_varint(&pb, TE_NAME_IID, ids.name);
    if (e->track_uuid)
        gz_pb_varint(&pb, TE_TRACK_UUID, e->track_uuid);
    if (e->counter)
        gz_pb_varint(&pb, TE_COUNTER_VALUE, (uint64_t)e->value);
    if (ids.loc)
        gz_pb_varint(&pb, TE_SOURCE_LOCATION_IID, ids.loc);
    for (uint32_t i = 0; i < e->nflows; i++)
        gz_pb_fixed64(&pb, TE_FLOW_IDS, flow_id(p, e->flows[i]));
    for (uint32_t i = 0; i < e->nends; i++)
        gz_pb_fixed64(&pb, TE_TERMINATING_FLOW_IDS, flow_id(p, e->ends[i]));
    gz_pb_end(&pb, m);
    write_packet(p, &pb);
}

/* A track descriptor on the main sequence (it needs no incremental state). */
static void describe(pf_sink *p, uint64_t uuid, uint64_t parent, const char *name, size_t len,
                     void (*extra)(gz_pb *, const void *), const void *arg)
{
    if (!writable(p))
        return;
    if (!p->main.started)
        start_sequence(p, &p->main, 0);
    gz_pb pb;
    packet_start(p, &pb);
    gz_pb_varint(&pb, PKT_SEQUENCE_ID, p->main.id);
    size_t m = gz_pb_begin(&pb, PKT_TRACK_DESCRIPTOR);
    gz_pb_varint(&pb, TD_UUID, uuid);
    if (name)
        gz_pb_string(&pb, TD_NAME, name, len, MAX_STR);
    if (parent)
        gz_pb_varint(&pb, TD_PARENT_UUID, parent);
    if (extra)
        extra(&pb, arg);
    gz_pb_end(&pb, m);
    write_packet(p, &pb);
}

static void process_fields(gz_pb *pb, const void *arg)
{
    const pf_sink *p = arg;
    size_t m = gz_pb_begin(pb, TD_PROCESS);
    gz_pb_varint(pb, PROCESS_PID, (uint64_t)p->pid);
    gz_pb_string(pb, PROCESS_NAME, p->exe, strlen(p->exe), MAX_STR);
    gz_pb_end(pb, m);
}

typedef struct thread_arg {
    int pid;
    uint32_t tid;
    const char *name;
    size_t len;
} thread_arg;

static void thread_fields(gz_pb *pb, const void *arg)
{
    const thread_arg *t = arg;
    size_t m = gz_pb_begin(pb, TD_THREAD);
    gz_pb_varint(pb, THREAD_PID, (uint64_t)t->pid);
    gz_pb_varint(pb, THREAD_TID, t->tid);
    if (t->name)
        gz_pb_string(pb, THREAD_NAME, t->name, t->len, MAX_STR);
    gz_pb_end(pb, m);
}

static void gpu_fields(gz_pb *pb, const void *arg)
{
    (void)arg; /* sibling tracks of equal names stay apart */
    gz_pb_varint(pb, TD_SIBLING_MERGE_BEHAVIOR, SIBLING_MERGE_BEHAVIOR_NONE);
}

static void counter_fields(gz_pb *pb, const void *arg)
{
    (void)arg;
    size_t m = gz_pb_begin(pb, TD_COUNTER);
    gz_pb_varint(pb, COUNTER_UNIT, UNIT_TIME_NS);
    gz_pb_end(pb, m);
}

/* ---- threads --------------------------------------------------------------- */

static uint64_t thread_uuid(const pf_sink *p, uint32_t tid)
{
    return uuid_of(p, U_THREAD, tid);
}

/* Whether tid's track was described (and marks it so). */
static bool tid_described(pf_sink *p, uint32_t tid)
{
    uint32_t key = tid ? tid : 0xffffffffu;
    uint32_t k = (key * 2654435761u) & (DESCRIBED_TIDS - 1);
    for (; p->described_tids[k]; k = (k + 1) & (DESCRIBED_TIDS - 1))
        if (p->described_tids[k] == key)
            return true;
    if (p->ndescribed_tids * 2 >= DESCRIBED_TIDS) {
        /* Many threads: start the set again (a thread seen again gets one
         * more descriptor, without its name). */
        memset(p->described_tids, 0, sizeof p->described_tids);
        p->ndescribed_tids = 0;
        k = (key * 2654435761u) & (DESCRIBED_TIDS - 1);
    }
    p->described_tids[k] = key;
    p->ndescribed_tids++;
    return false;
}

static void describe_thread(pf_sink *p, uint32_t tid, const char *name, size_t len)
{
    thread_arg t = {.pid = p->pid, .tid = tid, .name = name, .len = len};
    describe(p, thread_uuid(p, tid), p->process_uuid, NULL, 0, thread_fields, &t);
}

static uint64_t thread_track(pf_sink *p, uint32_t tid)
{
    if (!tid_described(p, tid))
        describe_thread(p, tid, NULL, 0);
    return thread_uuid(p, tid);
}

/* ---- GPU tracks ------------------------------------------------------------ */

static gpu_track *gpu_track_of(pf_sink *p, uint16_t id)
{
    return id < GZ_MAX_TRACKS ? p->tracks[id] : NULL;
}

static uint64_t device_track(pf_sink *p, const char *device, size_t len)
{
    if (!len)
        return p->process_uuid;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)device[i]) * 1099511628211ull;
    uint64_t uuid = uuid_of(p, U_DEVICE, h);
    uint32_t k = (uint32_t)h & 255;
    for (uint32_t n = 0; n < 256; n++, k = (k + 1) & 255) {
        if (p->devices[k] == uuid)
            return uuid;
        if (!p->devices[k]) {
            p->devices[k] = uuid;
            break;
        }
    } /* more devices than slots: described again each time */
    describe(p, uuid, p->process_uuid, device, len, gpu_fields, NULL);
    return uuid;
}

static void describe_gpu_track(pf_sink *p, const gz_sink_track *t, gpu_track *g)
{
    uint64_t parent;
    gpu_track *owner = t->clock_track != t->id ? gpu_track_of(p, t->clock_track) : NULL;
    if (owner && owner->described)
        parent = owner->uuid; /* a queue's label and frame tracks go under it */
    else
        parent = device_track(p, t->device, t->device_len);
    describe(p, g->uuid, parent, t->name, t->name_len, gpu_fields, NULL);
    g->described = true;
    char *copy = malloc(t->name_len + 1);
    if (copy) {
        memcpy(copy, t->name, t->name_len);
        copy[t->name_len] = 0;
        free(g->name);
        g->name = copy;
        g->name_len = t->name_len;
    }
}

static void end_zones(pf_sink *p, gpu_track *g, uint64_t ns);

/* Ends what is open on the track and frees it. */
static void gpu_track_free(pf_sink *p, uint16_t id)
{
    gpu_track *g = p->tracks[id];
    end_zones(p, g, UINT64_MAX);
    gz_pf_sent_free(&g->s.sent);
    free(g->name);
    for (uint32_t k = 1; k < g->nlanes; k++)
        free(g->lanes[k]);
    if (g->lanes != g->lane0)
        free(g->lanes);
    free(g);
    p->tracks[id] = NULL;
}

static void track_new(void *s, const gz_sink_track *t)
{
    pf_sink *p = s;
    if (t->id >= GZ_MAX_TRACKS)
        return;
    if (p->tracks[t->id]) /* never ended (a corrupt item): start afresh */
        gpu_track_free(p, t->id);
    gpu_track *g = calloc(1, sizeof *g);
    if (!g) {
        gz_log("out of memory for a Perfetto track: its zones are not written");
        return;
    }
    p->tracks[t->id] = g;
    g->lane0[0] = &g->first_lane;
    g->lanes = g->lane0;
    g->nlanes = g->lanes_cap = 1;
    g->serial = ++p->next_serial;
    g->uuid = uuid_of(p, U_GPU, g->serial);
    g->clock_track = t->clock_track;
    g->s.id = SEQ_BASE + g->serial;
    g->s.track_uuid = g->uuid;
}

static void track_name(void *s, const gz_sink_track *t)
{
    pf_sink *p = s;
    gpu_track *g = gpu_track_of(p, t->id);
    if (g)
        describe_gpu_track(p, t, g);
}

/* Lane k's track: lane 0 is the GPU track itself. */
static uint64_t lane_uuid(const pf_sink *p, const gpu_track *g, uint32_t k)
{
    return k ? uuid_of(p, U_GPU, (uint64_t)k << 40 | g->serial) : g->uuid;
}

/* Ends lane k's zones that ended by ns (all of them for UINT64_MAX),
 * innermost first. */
static void end_lane(pf_sink *p, gpu_track *g, uint32_t k, uint64_t ns)
{
    lane *l = g->lanes[k];
    while (l->depth && l->stack[l->depth - 1].end_ns <= ns) {
        const open_zone *z = &l->stack[--l->depth];
        if (!l->depth) { /* an outermost zone: remembered */
            if (l->ndone == HISTORY) {
                span *a = &l->done[l->first], *b = &l->done[(l->first + 1) % HISTORY];
                b->begin_ns = a->begin_ns < b->begin_ns ? a->begin_ns : b->begin_ns;
                b->end_ns = a->end_ns > b->end_ns ? a->end_ns : b->end_ns;
                l->first = (l->first + 1) % HISTORY;
                l->ndone--;
            }
            l->done[(l->first + l->ndone++) % HISTORY] = (span){z->begin_ns, z->end_ns};
            if (z->end_ns > l->latest_end)
                l->latest_end = z->end_ns;
        }
        write_event(p, &(event){.s = &g->s, .ts = z->end_ns, .type = TYPE_SLICE_END,
                                .track_uuid = k ? lane_uuid(p, g, k) : 0});
    }
}

static void end_zones(pf_sink *p, gpu_track *g, uint64_t ns)
{
    for (uint32_t k = 0; k < g->nlanes; k++)
        end_lane(p, g, k, ns);
}

/* Whether [begin, end] can go on lane l: it nests in the zone open on top
 * (if any), and every zone the lane ended that it meets lies inside it,
 * beginning after it (then it is their late parent). */
static bool fits(const lane *l, uint64_t begin, uint64_t end)
{
    const open_zone *top = l->depth ? &l->stack[l->depth - 1] : NULL;
    if (l->depth == STACK || (top && (begin < top->begin_ns || end > top->end_ns)))
        return false;
    if (begin >= l->latest_end)
        return true; /* after all of them: the common case */
    for (uint32_t i = 0; i < l->ndone; i++) {
        const span *t = &l->done[(l->first + i) % HISTORY];
        /* A zone written before that begins where this one ends meets it:
         * at that time its begin comes first, in file order. */
        bool meet = t->end_ns > begin && t->begin_ns <= end;
        if (meet && !(begin < t->begin_ns && t->end_ns <= end))
            return false;
    }
    return true;
}

/* The lane a zone of [begin, end] goes on: the first where it fits, a new
 * one when none does; LANES when there is none to make (LANES of them, or
 * no memory): the zone is then left out, as a wrong pairing of begins and
 * ends would garble the lane. */
static uint32_t lane_for(pf_sink *p, gpu_track *g, uint64_t begin, uint64_t end)
{
    for (uint32_t k = 0; k < g->nlanes; k++) {
        end_lane(p, g, k, begin);
        if (fits(g->lanes[k], begin, end))
            return k;
    }
    if (g->nlanes == LANES)
        return LANES;
    if (g->nlanes == g->lanes_cap) {
        uint32_t cap = g->lanes_cap * 2 < 8 ? 8 : g->lanes_cap * 2;
        lane **grown = malloc(cap * sizeof *grown);
        if (!grown)
            return LANES;
        memcpy(grown, g->lanes, g->nlanes * sizeof *grown);
        if (g->lanes != g->lane0)
            free(g->lanes);
        g->lanes = grown;
        g->lanes_cap = cap;
    }
    lane *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return LANES;
    g->lanes[g->nlanes] = fresh;
    return g->nlanes++;
}

/* Lanes are tracks named "<track> (overlapping)" under the GPU track: the
 * same name, so that Perfetto UI shows them as one track with as many rows
 * as its zones need. */
static void describe_lane(pf_sink *p, gpu_track *g, uint32_t k)
{
    char name[MAX_STR + 32];
    int n = snprintf(name, sizeof name, "%.*s (overlapping)",
                     (int)(g->name_len > MAX_STR ? MAX_STR : g->name_len), g->name ? g->name : "");
    describe(p, lane_uuid(p, g, k), g->uuid, name, (size_t)(n < 0 ? 0 : n), NULL, NULL);
    g->lanes[k]->described = true;
}

static void track_end(void *s, uint16_t id)
{
    pf_sink *p = s;
    if (gpu_track_of(p, id))
        gpu_track_free(p, id);
}

/* A counter on the counter track of kind k under parent (n: its number
 * among the tracks of that kind). */
static void counter(pf_sink *p, uint64_t parent, int k, uint64_t n, bool *described,
                    const char *prefix, const char *name, size_t len, uint64_t ns,
                    int64_t value)
{
    uint64_t uuid = uuid_of(p, U_COUNTER, (uint64_t)k << 48 ^ n);
    if (!*described) {
        char label[MAX_STR + 64];
        int w = snprintf(label, sizeof label, "%s%.*s", prefix,
                         (int)(len > MAX_STR ? MAX_STR : len), name);
        describe(p, uuid, parent, label, (size_t)(w < 0 ? 0 : w), counter_fields, NULL);
        *described = true;
    }
    write_event(p, &(event){.s = &p->main,
                            .ts = ns,
                            .type = TYPE_COUNTER,
                            .track_uuid = uuid,
                            .counter = true,
                            .value = value});
}

/* A counter of the GPU track g's (its counter track described once). */
static void gpu_counter(pf_sink *p, gpu_track *g, int k, const char *prefix, const char *name,
                        size_t len, uint64_t ns, int64_t value)
{
    bool described = (g->counters >> k) & 1;
    counter(p, g->uuid, k, g->serial, &described, prefix, name, len, ns, value);
    g->counters |= (uint8_t)(1u << k);
}

static void gpu_zone(void *s, const gz_sink_zone *z)
{
    pf_sink *p = s;
    gpu_track *g = gpu_track_of(p, z->track);
    if (!writable(p) || !g) {
        p->zones_unwritten++;
        return;
    }
    if (!g->described) {
        gz_sink_track t = {.id = z->track, .clock_track = g->clock_track, .name = "",
                           .device = ""};
        describe_gpu_track(p, &t, g);
    }
    uint32_t k = lane_for(p, g, z->begin_ns, z->end_ns);
    if (k == LANES) {
        p->zones_left_out++;
        return;
    }
    if (k && !g->lanes[k]->described)
        describe_lane(p, g, k);
    annot a[6];
    uint32_t na = 0;
    char detail[512];
    if (z->detail) {
        snprintf(detail, sizeof detail, "%.*s", (int)z->detail_len, z->detail);
        a[na++] = (annot){.name = "detail", .type = A_STRING, .s = detail};
    }
    if (z->has_args) {
        a[na++] = (annot){.name = "batch", .type = A_UINT, .u = z->batch};
        a[na++] = (annot){.name = "cmdbufs", .type = A_UINT, .u = z->cmdbufs};
    }
    if (p->raw_ticks)
        a[na++] = (annot){.name = "gpu_ticks", .type = A_UINT_PAIR, .u = z->begin_raw,
                          .u2 = z->end_raw};
    if (z->clock_doubt_ns)
        a[na++] = (annot){.name = "clock_doubt_us", .type = A_UINT,
                          .u = z->clock_doubt_ns / 1000 + (z->clock_doubt_ns % 1000 != 0)};
    char color[8];
    if (z->loc && z->loc->color) {
        snprintf(color, sizeof color, "#%06x", z->loc->color & 0xffffffu);
        a[na++] = (annot){.name = "color", .type = A_STRING, .s = color};
    }
    event e = {.s = &g->s,
               .ts = z->begin_ns,
               .type = TYPE_SLICE_BEGIN,
               .track_uuid = k ? lane_uuid(p, g, k) : 0,
               .name = z->name,
               .name_len = z->name_len,
               .category = kind_names[z->kind & 7],
               .loc = z->loc,
               .annots = a,
               .nannots = na};
    /* The flow from the CPU submit ends at the zone; the one to the CPU wait
     * that saw it done leaves it. Both on its begin: a reader pairs flow ids
     * in time order, and the begin lies before the wait's end even where
     * the clock model puts the zone's end a little after it. */
    if (z->flow) {
        e.ends = &z->flow;
        e.nends = 1;
    }
    if (z->wait_flow) {
        e.flows = &z->wait_flow;
        e.nflows = 1;
    }
    write_event(p, &e);
    lane *l = g->lanes[k];
    l->stack[l->depth++] = (open_zone){.begin_ns = z->begin_ns, .end_ns = z->end_ns};
    if (z->kind == GZ_ZONE_FRAME)
        gpu_counter(p, g, CTR_FRAME_TIME, "GPU frame time: ", g->name ? g->name : "",
                    g->name_len, z->begin_ns, (int64_t)(z->end_ns - z->begin_ns));
}

/* ---- CPU side ---------------------------------------------------------------- */

/* A flow whose CPU zone never came (or no room to wait for it): on an
 * instant of its own on the thread, so that it still links. */
static void lone_flow(pf_sink *p, const pending_flow *f)
{
    event e = {.s = &p->main,
               .ts = f->ns,
               .type = TYPE_INSTANT,
               .track_uuid = thread_track(p, f->tid),
               .name = f->in ? "wait" : "submit",
               .name_len = f->in ? 4 : 6,
               .category = "flow"};
    if (f->in) {
        e.ends = &f->flow;
        e.nends = 1;
    } else {
        e.flows = &f->flow;
        e.nflows = 1;
    }
    write_event(p, &e);
}

static void add_pending(pf_sink *p, pending_flow f)
{
    if (p->npending == PENDING) {
        lone_flow(p, &p->pending[0]);
        memmove(p->pending, p->pending + 1, (PENDING - 1) * sizeof p->pending[0]);
        p->npending--;
    }
    p->pending[p->npending++] = f;
}

static void flow_out(void *s, uint64_t flow, uint32_t tid, uint64_t ns)
{
    add_pending(s, (pending_flow){.flow = flow, .ns = ns, .tid = tid, .in = false});
}

static void flow_in(void *s, uint64_t flow, uint32_t tid, uint64_t ns)
{
    add_pending(s, (pending_flow){.flow = flow, .ns = ns, .tid = tid, .in = true});
}

static void thread_name(void *s, uint32_t tid, const char *name, size_t len)
{
    pf_sink *p = s;
    tid_described(p, tid);
    describe_thread(p, tid, name, len);
}

/* A CPU zone on its thread, with the flows that wait for it: those that
 * leave inside it leave from its begin, those that arrive inside it
 * arrive at its end (a flow begins before it ends, in the trace's order). */
static void cpu_zone(void *s, uint32_t tid, const char *name, size_t len, uint64_t begin_ns,
                     uint64_t end_ns)
{
    pf_sink *p = s;
    uint64_t outs[FLOWS_PER_EVENT], ins[FLOWS_PER_EVENT];
    uint32_t nout = 0, nin = 0, kept = 0;
    for (uint32_t i = 0; i < p->npending; i++) {
        pending_flow *f = &p->pending[i];
        if (f->tid != tid || f->ns > end_ns) {
            p->pending[kept++] = *f;
        } else if (f->ns < begin_ns || (f->in ? nin : nout) == FLOWS_PER_EVENT) {
            lone_flow(p, f);
        } else if (f->in) {
            ins[nin++] = f->flow;
        } else {
            outs[nout++] = f->flow;
        }
    }
    p->npending = kept;
    uint64_t track = thread_track(p, tid);
    write_event(p, &(event){.s = &p->main,
                            .ts = begin_ns,
                            .type = TYPE_SLICE_BEGIN,
                            .track_uuid = track,
                            .name = name,
                            .name_len = len,
                            .category = "cpu",
                            .flows = outs,
                            .nflows = nout});
    write_event(p, &(event){.s = &p->main,
                            .ts = end_ns > begin_ns ? end_ns : begin_ns,
                            .type = TYPE_SLICE_END,
                            .track_uuid = track,
                            .ends = ins,
                            .nends = nin});
}

static void instant(pf_sink *p, uint64_t track, const char *category, const char *name,
                    size_t len, uint64_t ns, const annot *a, uint32_t na)
{
    write_event(p, &(event){.s = &p->main,
                            .ts = ns,
                            .type = TYPE_INSTANT,
                            .track_uuid = track,
                            .name = name,
                            .name_len = len,
                            .category = category,
                            .annots = a,
                            .nannots = na});
}

static void frame_mark(void *s, uint32_t tid, const char *name, size_t len, uint64_t ns)
{
    pf_sink *p = s;
    instant(p, thread_track(p, tid), "frame", name, len, ns, NULL, 0);
    /* The time since this thread's previous mark, as a counter track (as
     * the JSON trace's "frame interval"). */
    uint32_t k = 0;
    while (k < 8 && p->last_mark[k].tid && p->last_mark[k].tid != tid)
        k++;
    if (k == 8)
        k = tid % 8; /* more threads mark frames: one gives way */
    if (p->last_mark[k].tid != tid) {
        p->last_mark[k].tid = tid;
        p->last_mark[k].described = false;
    } else if (ns > p->last_mark[k].ns) {
        char thread[32];
        int n = snprintf(thread, sizeof thread, "thread %u", tid);
        counter(p, p->process_uuid, CTR_FRAME_INTERVAL, tid, &p->last_mark[k].described,
                "frame interval: ", thread, (size_t)(n < 0 ? 0 : n), ns,
                (int64_t)(ns - p->last_mark[k].ns));
    }
    p->last_mark[k].ns = ns;
}

static void message(void *s, uint32_t tid, const char *text, size_t len, uint64_t ns)
{
    pf_sink *p = s;
    instant(p, thread_track(p, tid), "message", text, len, ns, NULL, 0);
}

static void calibration(void *s, const gz_sink_track *t, const gz_gpu_clock *c, uint64_t ns)
{
    pf_sink *p = s;
    gpu_track *g = gpu_track_of(p, t->id);
    if (!g || !writable(p))
        return;
    if (!g->described)
        describe_gpu_track(p, t, g);
    const gz_clock_model *m = &c->model;
    annot a[] = {
        {.name = "method", .type = A_STRING, .s = gz_calib_method_name(m->method)},
        {.name = "max_deviation_ns", .type = A_UINT, .u = m->calib_deviation_ns},
        {.name = "uncertainty_ns",
         .type = A_INT,
         .i = m->deviation_ns == UINT64_MAX ? -1 : (int64_t)m->deviation_ns},
        {.name = "offset_ns", .type = A_INT, .i = gz_gpu_clock_offset_ns(c)},
        {.name = "drift_ppm", .type = A_DOUBLE, .d = m->drift_ppm},
        {.name = "wraps", .type = A_UINT, .u = gz_unwrap_wraps(&c->unwrap)},
        {.name = "jumps", .type = A_UINT, .u = m->jumps},
        {.name = "samples", .type = A_UINT, .u = m->samples},
        {.name = "period_ns", .type = A_DOUBLE, .d = c->period_ns},
        {.name = "valid_bits", .type = A_UINT, .u = c->valid_bits},
    };
    instant(p, g->uuid, "calibration", "calibration", 11, ns, a, sizeof a / sizeof a[0]);
}

static void clock_correction(void *s, const gz_sink_track *t, const gz_gpu_clock *c, uint64_t ns)
{
    pf_sink *p = s;
    gpu_track *g = gpu_track_of(p, t->id);
    if (!g || !writable(p))
        return;
    if (!g->described)
        describe_gpu_track(p, t, g);
    gpu_counter(p, g, CTR_CLOCK_OFFSET, "clock correction: ", t->name, t->name_len, ns,
                gz_gpu_clock_offset_ns(c));
    if (c->model.deviation_ns != UINT64_MAX)
        gpu_counter(p, g, CTR_CLOCK_UNCERTAINTY, "clock uncertainty: ", t->name, t->name_len,
                    ns, (int64_t)c->model.deviation_ns);
}

/* ---- flush, close, open ---------------------------------------------------- */

static void flush_writer(pf_sink *p)
{
    if (!writable(p) || gz_jsonw_flush(&p->w))
        return;
    p->failed = true;
    if (p->w.error == ETIMEDOUT)
        gz_log("nothing was read from trace output %s for too long at exit; the rest of the "
               "trace is given up",
               p->path);
    else
        gz_log("writing trace file %s failed (%s); the trace stops here, later zones are "
               "counted as dropped",
               p->path, strerror(p->w.error));
}

/* Each drain cycle: every zone written so far is ended (a zone that
 * encloses later ones is not known to yet), a new clock snapshot is taken
 * if BOOTTIME moved against CLOCK_MONOTONIC (a suspend), and the packets
 * go to the file, so that a killed process leaves whole zones. */
static void flush(void *s)
{
    pf_sink *p = s;
    if (!writable(p))
        return;
    for (uint32_t i = 0; i < GZ_MAX_TRACKS; i++)
        if (p->tracks[i])
            end_zones(p, p->tracks[i], UINT64_MAX);
    uint64_t mono, boot;
    read_clocks(&mono, &boot);
    int64_t d = (int64_t)(boot - mono) - p->boot_minus_mono;
    if (d > SNAPSHOT_DRIFT_NS || d < -SNAPSHOT_DRIFT_NS)
        clock_snapshot(p);
    flush_writer(p);
}

static void close_sink(void *s, const gz_sink_totals *t)
{
    pf_sink *p = s;
    bool was_open = p->open;
    for (uint32_t i = 0; i < p->npending; i++)
        lone_flow(p, &p->pending[i]);
    p->npending = 0;
    for (uint32_t i = 0; i < GZ_MAX_TRACKS; i++) {
        if (p->tracks[i])
            gpu_track_free(p, (uint16_t)i);
    }
    /* What the run produced, written and dropped, on the process's track
     * (the JSON trace's gpuzones_totals). */
    annot a[] = {
        {.name = "zones_produced", .type = A_UINT, .u = t->zones_produced},
        {.name = "zones_written", .type = A_UINT, .u = t->zones_written},
        {.name = "zones_dropped", .type = A_UINT, .u = t->zones_dropped},
        {.name = "items_dropped", .type = A_UINT, .u = t->items_dropped},
        {.name = "zones_left_out", .type = A_UINT, .u = p->zones_left_out},
    };
    uint64_t now, boot;
    read_clocks(&now, &boot);
    instant(p, p->process_uuid, "gpuzones", "gpuzones_totals", 15, now, a, 5);
    if (p->zones_left_out)
        gz_log("%llu zones of %s overlapped more zones of their track, without nesting, than "
               "its %u lanes hold: they are not in it",
               (unsigned long long)p->zones_left_out, p->path, LANES);
    flush_writer(p);
    if (p->packets_dropped)
        gz_log("%llu Perfetto packets did not fit the packet buffer and were left out",
               (unsigned long long)p->packets_dropped);
    if (p->open && p->w.fd >= 0)
        close(p->w.fd);
    gz_trace_outcome *o = p->outcome;
    o->closed = true;
    o->written = was_open && !p->failed;
    o->zones_unwritten = p->zones_unwritten;
    snprintf(o->path, sizeof o->path, "%s", p->path);
    gz_pf_sent_free(&p->main.sent);
    gz_pf_strings_free(p->strings);
    free(p);
}

/* The program has no device left and may end without atexit: every packet
 * so far goes to the file (which loads up to its last whole packet at any
 * time), and a summary printed now names it. */
static void checkpoint(void *s, const gz_sink_totals *t, bool summary)
{
    (void)t;
    (void)summary;
    pf_sink *p = s;
    flush(p);
    gz_trace_outcome *o = p->outcome;
    o->closed = true;
    o->written = p->open && !p->failed;
    o->zones_unwritten = p->zones_unwritten;
    snprintf(o->path, sizeof o->path, "%s", p->path);
}

static const gz_sink_ops perfetto_ops = {
    .what = "Perfetto trace file",
    .track_new = track_new,
    .track_name = track_name,
    .track_end = track_end,
    .thread_name = thread_name,
    .gpu_zone = gpu_zone,
    .cpu_zone = cpu_zone,
    .flow_out = flow_out,
    .flow_in = flow_in,
    .frame_mark = frame_mark,
    .message = message,
    .calibration = calibration,
    .clock_correction = clock_correction,
    .flush = flush,
    .close = close_sink,
    .checkpoint = checkpoint,
};

bool gz_perfetto_sink_open_fd(int fd, const char *path, int pid, const char *exe,
                              bool raw_ticks, const uint64_t *deadline, uint64_t *progress,
                              gz_trace_outcome *outcome, gz_sink *out)
{
    pf_sink *p = calloc(1, sizeof *p);
    gz_pf_strings *strings = gz_pf_strings_new();
    if (!p || !strings) {
        free(p);
        gz_pf_strings_free(strings);
        if (fd >= 0)
            close(fd);
        gz_log("out of memory for the Perfetto trace writer; it is not written");
        return false;
    }
    p->strings = strings;
    p->outcome = outcome;
    p->raw_ticks = raw_ticks;
    p->pid = pid;
    snprintf(p->exe, sizeof p->exe, "%s", exe);
    snprintf(p->path, sizeof p->path, "%s", path);
    uint64_t mono, boot;
    read_clocks(&mono, &boot);
    p->uuid_base = mix((uint64_t)pid << 32 ^ mono ^ (uint64_t)(uintptr_t)p);
    p->process_uuid = uuid_of(p, U_PROCESS, (uint64_t)pid);
    p->main.id = SEQ_BASE;
    *out = (gz_sink){.ops = &perfetto_ops, .self = p};
    if (fd < 0)
        return true; /* counts what it could not write */
    p->open = true;
    gz_jsonw_init(&p->w, fd);
    p->w.deadline_ns = deadline;
    p->w.progress = progress;
    clock_snapshot(p);
    start_sequence(p, &p->main, 0);
    describe(p, p->process_uuid, 0, NULL, 0, process_fields, p);
    flush_writer(p);
    return true;
}

bool gz_perfetto_sink_open(const char *path, int pid, const char *exe, bool raw_ticks,
                           const uint64_t *deadline, uint64_t *progress,
                           gz_trace_outcome *outcome, gz_sink *out)
{
    char actual[4096];
    int fd = gz_output_open_trace(path, pid, actual, sizeof actual);
    return gz_perfetto_sink_open_fd(fd, fd >= 0 ? actual : path, pid, exe, raw_ticks, deadline,
                                    progress, outcome, out);
}
