/* The worker thread: the queue's only consumer.
 *
 * It turns raw GPU ticks into host ns through each track's clock model,
 * orders each track's zones parents first (so every track nests in every
 * viewer), counts what was produced, written and dropped, and hands it all
 * to its sinks (gz_sink.h), which format and write. It also drives
 * readback: collectors registered by the GPU contexts run on this thread
 * between drains. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_calibration.h"
#include "gz_client.h"
#include "gz_client_internal.h"
#include "gz_clock_record.h"
#include "gz_gpu_clock.h"
#include "gz_intern.h"
#include "gz_sinks.h"
#include "tracy/gz_tracy.h"
#include "gz_srcloc.h"

#define MAX_CYCLE_ZONES (1u << 20) /* per track per drain cycle */
#define CALIB_REPORT_NS 1000000000ull /* calibration events at most once a second per track */
#define MAX_SINKS 5

/* A zone received in this drain cycle; times are GPU ns until written. */
typedef struct cycle_zone {
    uint64_t begin_gpu_ns;
    uint64_t end_gpu_ns;
    uint64_t flow;
    uint64_t wait_flow; /* to the CPU wait that saw it done; 0 = none */
    uint32_t name;
    uint32_t detail; /* interned details, 0 = none */
    uint8_t kind;
    bool has_flow;
    bool has_args;
    bool has_srcloc; /* name is a gz_srcloc id */
    uint32_t batch, cmdbufs;
    uint64_t begin_raw, end_raw; /* as read, for GPUZONES_RAW_TICKS */
    uint64_t arrived_ns; /* when the worker received it */
} cycle_zone;

/* A GPU clock and how many tracks put their times on it: a queue's label
 * track shares the queue's, and either may end first. */
typedef struct shared_clock {
    gz_gpu_clock c;
    uint32_t refs;
} shared_clock;

typedef struct track {
    bool used;
    uint32_t name;
    uint32_t device;     /* interned name of its GPU; 0 = not said */
    gz_track_api api;
    uint16_t clock;      /* track whose clock this one's times are on (itself by default) */
    bool owns_clock;     /* reports the clock's calibration */
    shared_clock *clk;   /* NULL when none could be made: its zones are dropped */
    uint64_t calib_reported_samples;
    uint64_t calib_reported_at;
    uint64_t correction_reported_at;

    cycle_zone *cycle; /* zones received in this drain cycle */
    uint32_t ncycle, cap;
    uint32_t first;   /* cycle[first, ncycle) wait; those before were written */
    uint32_t nsorted; /* cycle[first, nsorted) is in write order (zones kept waiting) */
    bool arrival_mixed; /* in write order, a zone arrived before one ahead of it */
    bool in_dirty_list;

    uint64_t dropped; /* refused here (out of memory) */
} track;

#define SRCLOC_CACHE 256

typedef struct worker {
    gz_sink sinks[MAX_SINKS];
    uint32_t nsinks;
    /* What became of the trace files (JSON, Perfetto), for the summary. */
    gz_trace_outcome trace_outcome[GZ_TRACE_FILES];
    track tracks[GZ_MAX_TRACKS];
    uint64_t zones_received; /* zone items taken from the queue */
    uint64_t zones_written;
    uint64_t zones_dropped_here; /* for a track never created (a corrupt item) */
    /* Drops of tracks that have ended, whose counters were reset for the
     * next user of their id: the part counted before the queue (produced
     * and dropped) and all of it (dropped). */
    uint64_t ended_drops_before_queue, ended_drops;
    uint16_t dirty[GZ_MAX_TRACKS]; /* tracks with zones waiting to be written */
    uint64_t now;                  /* host time of the drain cycle being processed */
    uint32_t ndirty;
    uint32_t srcloc_cache[SRCLOC_CACHE][2]; /* source location id → its name's id */
} worker;

/* Every sink that has the operation, in the order they were opened. */
#define FOR_SINKS(w, op, ...)                                                                    \
    do {                                                                                         \
        for (uint32_t si_ = 0; si_ < (w)->nsinks; si_++)                                         \
            if ((w)->sinks[si_].ops->op)                                                         \
                (w)->sinks[si_].ops->op((w)->sinks[si_].self, __VA_ARGS__);                      \
    } while (0)

/* The sinks, opened in one place. The trace files come first and the
 * summary last: the summary's last lines say what became of the trace
 * files, which their sinks tell at their close. */
static void open_sinks(worker *w, const gz_client *c)
{
    if (c->cfg.write_trace &&
        gz_json_sink_open(&c->cfg, c->pid, c->exe, &w->trace_outcome[0], &w->sinks[w->nsinks]))
        w->nsinks++;
    if (c->cfg.write_perfetto &&
        gz_perfetto_sink_open(c->cfg.perfetto_output, c->pid, c->exe, c->cfg.raw_ticks,
                              &gz_the_client.output_deadline_ns, &gz_the_client.worker_progress,
                              &w->trace_outcome[1], &w->sinks[w->nsinks]))
        w->nsinks++;
    /* Tracy: the program's own client, or gpuzones speaking its protocol;
     * nothing when off, or when auto finds no client. */
    if (c->cfg.tracy != GZ_TRACY_OFF && gz_tracy_sink_open(&c->cfg, &gz_the_client.worker_progress, &w->sinks[w->nsinks]))
        w->nsinks++;
    if (c->cfg.summary &&
        gz_summary_sink_open(&c->cfg, w->trace_outcome, &w->sinks[w->nsinks]))
        w->nsinks++;
}

static gz_sink_track sink_track(const worker *w, uint16_t id)
{
    const track *t = &w->tracks[id];
    gz_sink_track st = {.id = id, .api = t->api, .clock_track = t->clock};
    st.name = gz_intern_str(t->name, &st.name_len);
    st.device = gz_intern_str(t->device, &st.device_len);
    if (t->clk) {
        st.period_ns = t->clk->c.period_ns;
        st.valid_bits = t->clk->c.valid_bits;
    }
    return st;
}

/* The clock a track's times are on; NULL when the owner could not get one. */
static gz_gpu_clock *clock_of(const track *t)
{
    return t->clk ? &t->clk->c : NULL;
}

static void report_calibration(worker *w, uint16_t id, track *t, uint64_t now)
{
    gz_sink_track st = sink_track(w, id);
    FOR_SINKS(w, calibration, &st, &t->clk->c, now);
    t->calib_reported_samples = t->clk->c.model.samples;
    t->calib_reported_at = now;
}

/* The correction applied (host - GPU ns at the newest constraint), for a
 * counter track. */
#define CORRECTION_REPORT_NS 100000000ull /* 10 points a second at most */
static void report_correction(worker *w, uint16_t id, track *t, uint64_t now)
{
    if (!t->clk->c.model.fitted || now - t->correction_reported_at < CORRECTION_REPORT_NS)
        return;
    t->correction_reported_at = now;
    gz_sink_track st = sink_track(w, id);
    FOR_SINKS(w, clock_correction, &st, &t->clk->c, now);
}

static void clock_unref(shared_clock *c)
{
    if (c && --c->refs == 0)
        free(c);
}

/* Frees what a track holds. Sharers of a clock it owned take it over: the
 * first of them reports its calibration from now on. */
static void track_clear(worker *w, uint16_t id)
{
    track *t = &w->tracks[id];
    if (t->owns_clock && t->clk && t->clk->refs > 1) {
        bool handed = false;
        for (uint16_t o = 1; o < GZ_MAX_TRACKS; o++) {
            track *u = &w->tracks[o];
            if (o == id || !u->used || u->clk != t->clk)
                continue;
            u->clock = o;
            if (!handed) {
                u->owns_clock = handed = true;
                u->calib_reported_samples = t->calib_reported_samples;
                u->calib_reported_at = t->calib_reported_at;
                u->correction_reported_at = t->correction_reported_at;
            }
        }
    }
    clock_unref(t->clk);
    free(t->cycle);
    memset(t, 0, sizeof *t);
}

static void track_new(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    if (t->used)
        track_clear(w, it->track); /* never ended (a corrupt item): start afresh */
    t->used = true;
    t->api = (gz_track_api)it->ctx.api;
    t->device = it->ctx.device;
    t->clock = it->track;
    track *o = it->ctx.clock && it->ctx.clock < GZ_MAX_TRACKS ? &w->tracks[it->ctx.clock] : NULL;
    if (o && o->used && o->owns_clock && o->clk) {
        t->clock = it->ctx.clock;
        t->clk = o->clk;
        t->clk->refs++;
        if (!t->device)
            t->device = o->device;
    } else {
        t->clk = malloc(sizeof *t->clk);
        if (t->clk) {
            gz_gpu_clock_init(&t->clk->c, it->ctx.period_ns, it->ctx.valid_bits);
            t->clk->refs = 1;
            t->owns_clock = true;
        } else {
            gz_log("out of memory for a GPU clock: the zones of that track are dropped");
        }
    }
    gz_sink_track st = sink_track(w, it->track);
    FOR_SINKS(w, track_new, &st);
}

static void track_name(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    if (!t->used)
        return;
    t->name = it->name;
    gz_sink_track st = sink_track(w, it->track);
    FOR_SINKS(w, track_name, &st);
}

/* Parents first: earlier begin first, and for equal begins the longer zone
 * first, so that viewers nest zones that start on the same tick. */
static int by_begin_then_longer(const void *a, const void *b)
{
    const cycle_zone *x = a, *y = b;
    if (x->begin_gpu_ns != y->begin_gpu_ns)
        return x->begin_gpu_ns < y->begin_gpu_ns ? -1 : 1;
    if (x->end_gpu_ns != y->end_gpu_ns)
        return x->end_gpu_ns > y->end_gpu_ns ? -1 : 1;
    return 0;
}

/* Writes the track's zones of this cycle. They are converted only now, with
 * every calibration sample and bound of the cycle applied: a short
 * look-ahead that lets a zone use samples taken just after it. */
/* Zones wait this long before they are converted, so that the samples and
 * sync points taken just after them (every 100 ms without calibration)
 * place them by interpolation rather than extrapolation. */
#define LOOKAHEAD_NS 150000000ull
/* Until the clock has settled (two tight samples 100 ms apart), zones wait
 * longer, but never more than this: a clock that has only submission
 * bounds never settles. */
#define LOOKAHEAD_MAX_NS 1000000000ull

/* The plain name's id of a source location, for the summary: a small
 * direct-mapped cache spares an intern lookup per zone. */
static uint32_t srcloc_name(worker *w, uint32_t loc_id, const gz_srcloc_view *loc)
{
    uint32_t slot = loc_id % SRCLOC_CACHE;
    if (w->srcloc_cache[slot][0] != loc_id) {
        w->srcloc_cache[slot][0] = loc_id;
        w->srcloc_cache[slot][1] = gz_intern(loc->name, loc->name_len);
    }
    return w->srcloc_cache[slot][1];
}

/* Puts the track's zones in write order. Zones kept waiting from earlier
 * cycles are already in order, and new ones mostly arrive in time order:
 * sort only what is new (when it is out of order) and merge, rather than
 * sort every zone again on each of the ~8 cycles it waits (that sort was
 * a quarter of the worker's time in bench/worker_throughput.c). */
static void sort_cycle(track *t)
{
    cycle_zone *z = t->cycle + t->first;
    uint32_t s = t->nsorted - t->first, n = t->ncycle - t->first;
    if (s >= n)
        return;
    bool in_order = true;
    for (uint32_t i = s + 1; i < n && in_order; i++)
        in_order = by_begin_then_longer(&z[i - 1], &z[i]) <= 0;
    if (!in_order)
        qsort(z + s, n - s, sizeof *z, by_begin_then_longer);
    if (s && by_begin_then_longer(&z[s - 1], &z[s]) > 0) {
        t->arrival_mixed = true; /* new zones go before waiting ones */
        cycle_zone *tmp = malloc((size_t)n * sizeof *z);
        if (!tmp) {
            qsort(z, n, sizeof *z, by_begin_then_longer);
        } else {
            uint32_t a = 0, b = s, k = 0;
            while (a < s && b < n)
                tmp[k++] = by_begin_then_longer(&z[a], &z[b]) <= 0 ? z[a++] : z[b++];
            while (a < s)
                tmp[k++] = z[a++];
            while (b < n)
                tmp[k++] = z[b++];
            memcpy(z, tmp, (size_t)n * sizeof *z);
            free(tmp);
        }
    }
    t->nsorted = t->ncycle;
}

static void write_cycle(worker *w, uint16_t id, track *t, uint64_t now, bool all)
{
    gz_gpu_clock *clock = clock_of(t);
    gz_gpu_clock_fit(clock);
    sort_cycle(t);
    uint64_t wait = gz_gpu_clock_settled(clock) ? LOOKAHEAD_NS : LOOKAHEAD_MAX_NS;
    /* Zones that wait stay, in write order; where they are in order of
     * arrival too, the first that waits is followed by waiting ones only,
     * and they stay where they are (not copied down each cycle). */
    uint32_t kept = t->first, i;
    bool arrival_ordered = true;
    for (i = t->first; i < t->ncycle; i++) {
        const cycle_zone *z = &t->cycle[i];
        if (!all && now - z->arrived_ns < wait) {
            if (kept == t->first && !t->arrival_mixed)
                break;
            arrival_ordered &= kept == t->first || t->cycle[kept - 1].arrived_ns <= z->arrived_ns;
            t->cycle[kept++] = *z; /* stays in begin order: kept <= i */
            continue;
        }
        uint64_t b = gz_gpu_clock_to_host(clock, z->begin_gpu_ns);
        uint64_t e = gz_gpu_clock_to_host(clock, z->end_gpu_ns);
        if (e < b)
            e = b;
        size_t sz_detail_len = 0;
        gz_sink_zone sz = {
            .track = id,
            .kind = z->kind,
            .name_id = z->name,
            .begin_ns = b,
            .end_ns = e,
            .flow = z->has_flow ? z->flow : 0,
            .wait_flow = z->wait_flow,
            .detail = z->detail ? gz_intern_str(z->detail, &sz_detail_len) : NULL,
            .has_args = z->has_args,
            .batch = z->batch,
            .cmdbufs = z->cmdbufs,
            .begin_raw = z->begin_raw,
            .end_raw = z->end_raw,
        };
        uint64_t db = gz_gpu_clock_doubt_ns(clock, z->begin_gpu_ns);
        uint64_t de = gz_gpu_clock_doubt_ns(clock, z->end_gpu_ns);
        sz.detail_len = sz_detail_len;
        sz.clock_doubt_ns = db > de ? db : de;
        sz.name = gz_intern_str(z->name, &sz.name_len);
        gz_srcloc_view loc;
        if (z->has_srcloc && gz_srcloc_decode(z->name, &loc)) {
            sz.name = loc.name;
            sz.name_len = loc.name_len;
            sz.loc = &loc;
            sz.name_id = srcloc_name(w, z->name, &loc);
        }
        FOR_SINKS(w, gpu_zone, &sz);
        w->zones_written++;
    }
    if (i < t->ncycle) {
        t->first = i;
    } else {
        t->ncycle = kept;
        t->arrival_mixed = !arrival_ordered;
    }
    if (t->first == t->ncycle)
        t->first = t->ncycle = 0, t->arrival_mixed = false;
    t->nsorted = t->ncycle;
}

/* Writes what has waited long enough (all of it at the end); tracks with
 * zones still waiting stay on the list. */
static void write_cycles(worker *w, bool all)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < w->ndirty; i++) {
        uint16_t id = w->dirty[i];
        track *t = &w->tracks[id];
        write_cycle(w, id, t, w->now, all);
        if (t->ncycle)
            w->dirty[kept++] = id;
        else
            t->in_dirty_list = false;
    }
    w->ndirty = kept;
}

static void gpu_zone(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    gz_gpu_clock *clock = t->used ? clock_of(t) : NULL;
    w->zones_received++;
    if (!clock) {
        if (t->used)
            t->dropped++;
        else
            w->zones_dropped_here++;
        return;
    }
    if (t->ncycle == t->cap && t->first) {
        /* Room from the zones written: the waiting ones move down. */
        memmove(t->cycle, t->cycle + t->first, (size_t)(t->ncycle - t->first) * sizeof *t->cycle);
        t->ncycle -= t->first;
        t->nsorted -= t->first;
        t->first = 0;
    }
    if (t->ncycle == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 256;
        cycle_zone *z = cap <= MAX_CYCLE_ZONES ? realloc(t->cycle, cap * sizeof *z) : NULL;
        if (!z) {
            t->dropped++;
            return;
        }
        t->cycle = z;
        t->cap = cap;
    }
    uint64_t begin_ns, end_ns;
    /* Which work the zone ran, for the clock model: its name (names and
     * source locations are interned apart, so their ids may meet). */
    uint32_t work_id = it->name ^ ((it->flags & GZ_ITEM_F_SRCLOC) ? 0x80000000u : 0);
    gz_gpu_clock_zone_ns(clock, it->zone.begin_ticks, it->zone.end_ticks, work_id, &begin_ns,
                         &end_ns);
    t->cycle[t->ncycle++] = (cycle_zone){
        .begin_gpu_ns = begin_ns,
        .end_gpu_ns = end_ns,

        .begin_raw = it->zone.begin_ticks,
        .end_raw = it->zone.end_ticks,
        .arrived_ns = w->now,
        .flow = it->zone.flow,
        .name = it->name,
        .kind = (uint8_t)((it->flags & GZ_ITEM_KIND_MASK) >> GZ_ITEM_KIND_SHIFT),
        .has_flow = (it->flags & GZ_ITEM_F_FLOW) != 0,
        .has_srcloc = (it->flags & GZ_ITEM_F_SRCLOC) != 0,
    };
    if (!t->in_dirty_list) {
        t->in_dirty_list = true;
        w->dirty[w->ndirty++] = it->track;
    }
}

static void zone_args(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    if (!t->used || !t->ncycle)
        return;
    cycle_zone *z = &t->cycle[t->ncycle - 1];
    z->has_args = true;
    z->batch = it->args.batch;
    z->cmdbufs = it->args.cmdbufs;
}

static void zone_detail(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    if (t->used && t->ncycle)
        t->cycle[t->ncycle - 1].detail = it->name;
}

static void zone_wait_flow(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    if (t->used && t->ncycle)
        t->cycle[t->ncycle - 1].wait_flow = it->flow.flow;
}

static void gpu_bound(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    gz_gpu_clock *clock = t->used ? clock_of(t) : NULL;
    if (clock && (it->flags & (GZ_ITEM_F_NOT_BEFORE | GZ_ITEM_F_NOT_AFTER)))
        gz_gpu_clock_add_bound(clock, it->bound.ticks, it->bound.host_ns,
                               (it->flags & GZ_ITEM_F_NOT_BEFORE) != 0);
}

static void calib(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    gz_gpu_clock *clock = t->used ? clock_of(t) : NULL;
    if (clock)
        gz_gpu_clock_add_pair(clock, (gz_calib_method)it->flags, it->calib.ticks,
                              it->calib.host_ns, it->calib.deviation_ns);
}

static void process(worker *w, const gz_item *items, uint32_t n)
{
    w->now = gz_host_now_ns();
    for (uint32_t i = 0; i < n; i++) {
        const gz_item *it = &items[i];
        if (it->track >= GZ_MAX_TRACKS)
            continue;
        switch ((gz_item_type)it->type) {
        case GZ_ITEM_GPU_ZONE:
            gpu_zone(w, it);
            break;
        case GZ_ITEM_GPU_BOUND:
            gpu_bound(w, it);
            break;
        case GZ_ITEM_ZONE_ARGS:
            zone_args(w, it);
            break;
        case GZ_ITEM_CPU_ZONE: {
            size_t len;
            const char *name = gz_intern_str(it->name, &len);
            FOR_SINKS(w, cpu_zone, it->cpu.tid, name, len, it->cpu.begin_ns, it->cpu.end_ns);
            break;
        }
        case GZ_ITEM_FLOW_OUT:
            FOR_SINKS(w, flow_out, it->flow.flow, it->flow.tid, it->flow.ns);
            break;
        case GZ_ITEM_FLOW_IN:
            FOR_SINKS(w, flow_in, it->flow.flow, it->flow.tid, it->flow.ns);
            break;
        case GZ_ITEM_ZONE_WAIT_FLOW:
            zone_wait_flow(w, it);
            break;
        case GZ_ITEM_ZONE_DETAIL:
            zone_detail(w, it);
            break;
        case GZ_ITEM_CALIB:
            calib(w, it);
            break;
        case GZ_ITEM_TRACK_NEW:
            track_new(w, it);
            break;
        case GZ_ITEM_TRACK_NAME:
            track_name(w, it);
            break;
        case GZ_ITEM_THREAD_NAME: {
            size_t len;
            const char *name = gz_intern_str(it->name, &len);
            FOR_SINKS(w, thread_name, it->cpu.tid, name, len);
            break;
        }
        case GZ_ITEM_FRAME_MARK: {
            size_t len;
            const char *text = gz_intern_str(it->name, &len);
            FOR_SINKS(w, frame_mark, it->cpu.tid, text, len, it->cpu.begin_ns);
            break;
        }
        case GZ_ITEM_MESSAGE: {
            size_t len;
            const char *text = gz_intern_str(it->name, &len);
            FOR_SINKS(w, message, it->cpu.tid, text, len, it->cpu.begin_ns);
            break;
        }
        case GZ_ITEM_NONE:
            break;
        }
    }
    write_cycles(w, false);
}

static void report_calibrations(worker *w, bool all)
{
    uint64_t now = gz_host_now_ns();
    for (uint16_t id = 1; id < GZ_MAX_TRACKS; id++) {
        track *t = &w->tracks[id];
        if (!t->used || !t->owns_clock || !t->clk)
            continue;
        gz_gpu_clock_fit(&t->clk->c);
        bool changed = t->clk->c.model.samples != t->calib_reported_samples;
        if (all || (changed && now - t->calib_reported_at >= CALIB_REPORT_NS))
            report_calibration(w, id, t, now);
        if (changed)
            report_correction(w, id, t, now);
    }
}

static uint64_t track_drops(uint16_t id)
{
    return __atomic_load_n(&gz_the_client.track_drops[id], __ATOMIC_RELAXED);
}

/* Finishes the tracks whose owners said they are done (gz_track_end):
 * their last zones came in the take just processed. Everything left of
 * them is written and counted before their ids go back to the client. */
static void end_tracks(worker *w, const uint16_t *ids, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        uint16_t id = ids[k];
        if (!id || id >= GZ_MAX_TRACKS)
            continue;
        track *t = &w->tracks[id];
        /* Ended twice, or never made: its id is not ours to give back
         * (giving it twice would hand one id to two tracks). */
        if (!t->used)
            continue;
        if (t->ncycle)
            write_cycle(w, id, t, w->now, true);
        for (uint32_t i = 0; i < w->ndirty; i++) {
            if (w->dirty[i] == id) {
                w->dirty[i] = w->dirty[--w->ndirty];
                break;
            }
        }
        if (t->owns_clock && t->clk) { /* its final clock, for the summary's line */
            gz_gpu_clock_fit(&t->clk->c);
            report_calibration(w, id, t, w->now);
        }
        /* The counter is reset here, not read and reset later, so that
         * nothing counted in between is lost. */
        uint64_t before_queue =
            __atomic_exchange_n(&gz_the_client.track_drops[id], 0, __ATOMIC_RELAXED);
        uint64_t dropped = before_queue + t->dropped;
        w->ended_drops_before_queue += before_queue;
        w->ended_drops += dropped;
        FOR_SINKS(w, track_drops, id, dropped);
        FOR_SINKS(w, track_end, id);
        track_clear(w, id);
        gz_client_track_release(id);
    }
}

/* What the run produced, wrote and lost so far. */
static gz_sink_totals totals_so_far(worker *w)
{
    /* Produced: every zone a context made, whether it reached the queue
     * (received here) or was counted dropped before; each one is written
     * or dropped, which the tests check. */
    uint64_t zones_dropped = w->zones_dropped_here + w->ended_drops;
    uint64_t zones_produced = w->zones_received + w->ended_drops_before_queue;
    /* Track 0: zones of contexts that got no track (more than GZ_MAX_TRACKS). */
    zones_produced += track_drops(0);
    zones_dropped += track_drops(0);
    for (uint16_t id = 1; id < GZ_MAX_TRACKS; id++) {
        track *t = &w->tracks[id];
        zones_produced += track_drops(id);
        zones_dropped += track_drops(id) + (t->used ? t->dropped : 0);
    }
    return (gz_sink_totals){
        .zones_produced = zones_produced,
        .zones_written = w->zones_written,
        .zones_dropped = zones_dropped,
        .items_dropped = gz_queue_dropped(&gz_the_client.queue),
        .names_dropped = gz_intern_dropped(),
        .batches_too_big = gz_queue_batches_too_big(&gz_the_client.queue),
    };
}

static void finish(worker *w)
{
    w->now = gz_host_now_ns();
    write_cycles(w, true);
    gz_sink_totals totals = totals_so_far(w);
    for (uint16_t id = 1; id < GZ_MAX_TRACKS; id++) {
        track *t = &w->tracks[id];
        if (t->used)
            FOR_SINKS(w, track_drops, id, track_drops(id) + t->dropped);
    }
    report_calibrations(w, true);
    FOR_SINKS(w, close, &totals);
    w->nsinks = 0;
    for (uint16_t id = 1; id < GZ_MAX_TRACKS; id++)
        if (w->tracks[id].used)
            track_clear(w, id);
    gz_clock_record_close();
}

static void flush_sinks(worker *w)
{
    for (uint32_t i = 0; i < w->nsinks; i++)
        if (w->sinks[i].ops->flush)
            w->sinks[i].ops->flush(w->sinks[i].self);
}

/* One drain cycle: the tracks that ended before the take, the take, then
 * those tracks' end (their last zones were in it). */
static void cycle(worker *w, uint32_t wait_ms)
{
    static uint16_t ending[GZ_MAX_TRACKS]; /* only the worker thread uses it */
    __atomic_fetch_add(&gz_the_client.worker_progress, 1, __ATOMIC_RELAXED);
    uint32_t nend = gz_client_tracks_ending(ending, GZ_MAX_TRACKS);
    const gz_item *items;
    uint32_t n = gz_queue_take(&gz_the_client.queue, wait_ms, &items);
    process(w, items, n);
    end_tracks(w, ending, nend);
}

/* The last device or instance is gone (gz_client_checkpoint): what the
 * contexts have finished is read and everything taken so far is written
 * (tracks still alive lose the look-ahead for their newest zones), then
 * the sinks make their outputs complete. */
static void checkpoint(worker *w, bool summary)
{
    cycle(w, 0);
    gz_client_run_collectors(false);
    for (int half = 0; half < 2; half++)
        cycle(w, 0);
    w->now = gz_host_now_ns();
    write_cycles(w, true);
    gz_sink_totals totals = totals_so_far(w);
    FOR_SINKS(w, checkpoint, &totals, summary);
    __atomic_fetch_add(&gz_the_client.worker_progress, 1, __ATOMIC_RELAXED);
}

void *gz_worker_main(void *arg)
{
    (void)arg;
    gz_client *c = &gz_the_client;
    worker *w = calloc(1, sizeof *w);
    if (!w) {
        gz_log("out of memory for the worker; timing is off for this process");
        gz_signals_worker_done(); /* nothing to close: a signal need not wait */
        return NULL;
    }
    if (c->cfg.clock_record[0])
        gz_clock_record_open(c->cfg.clock_record, &c->output_deadline_ns, &c->worker_progress);
    open_sinks(w, c);

    uint64_t checkpoints = 0;
    while (!gz_queue_stopped(&c->queue)) {
        cycle(w, c->cfg.poll_ms);
        gz_client_run_collectors(false);
        report_calibrations(w, false);
        flush_sinks(w);
        bool summary;
        uint64_t asked = gz_client_checkpoint_asked(&summary);
        if (asked != checkpoints) {
            checkpoint(w, summary);
            checkpoints = asked;
            gz_client_checkpoint_made(asked);
        }
        int sig = gz_signals_requested();
        if (sig)
            gz_client_stop_for_signal(sig);
    }
    /* Stop: what producers queued, then the final readback, then what that
     * produced (two takes: one per half). */
    cycle(w, 0);
    gz_client_run_collectors(true);
    for (int half = 0; half < 2; half++)
        cycle(w, 0);
    __atomic_fetch_add(&c->worker_progress, 1, __ATOMIC_RELAXED);
    finish(w);
    free(w);
    gz_signals_worker_done();
    gz_client_checkpoint_made(UINT64_MAX);
    return NULL;
}
