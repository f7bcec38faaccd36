/* The worker thread: the queue's only consumer.
 *
 * It turns raw GPU ticks into host ns through each track's clock model,
 * orders each track's zones parents first (so every track nests in every
 * viewer), writes them, and keeps the statistics for the exit summary. It also drives readback: collectors
 * registered by the GPU contexts run on this thread between drains. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_calibration.h"
#include "gz_client.h"
#include "gz_client_internal.h"
#include "gz_gpu_clock.h"
#include "gz_intern.h"
#include "gz_srcloc.h"
#include "gz_summary.h"
#include "gz_trace.h"

#define MAX_CYCLE_ZONES (1u << 20) /* per track per drain cycle */
#define CALIB_REPORT_NS 1000000000ull /* calibration events at most once a second per track */

/* A zone received in this drain cycle; times are GPU ns until written. */
typedef struct cycle_zone {
    uint64_t begin_gpu_ns;
    uint64_t end_gpu_ns;
    uint64_t flow;
    uint32_t name;
    uint8_t kind;
    bool has_flow;
    bool has_args;
    bool has_srcloc; /* name is a gz_srcloc id */
    uint32_t batch, cmdbufs;
    uint64_t begin_raw, end_raw; /* as read, for GPUZONES_RAW_TICKS */
    uint64_t arrived_ns; /* when the worker received it */
} cycle_zone;

typedef struct track {
    bool used;
    uint32_t name;
    gz_track_api api;
    uint16_t clock;      /* track owning the clock this one's times are on (itself by default) */
    gz_gpu_clock *owned; /* the clock, on the owning track */
    uint64_t calib_reported_samples;
    uint64_t calib_reported_at;
    uint64_t correction_reported_at;

    cycle_zone *cycle; /* zones received in this drain cycle */
    uint32_t ncycle, cap;
    uint32_t nsorted; /* cycle[0, nsorted) is in write order (zones kept waiting) */
    bool in_dirty_list;

    uint64_t zones;   /* written */
    uint64_t dropped; /* refused here (out of memory) */
} track;

#define SRCLOC_CACHE 256

typedef struct worker {
    gz_trace trace;
    gz_summary *summary;
    track tracks[GZ_MAX_TRACKS];
    uint64_t zones_received; /* zone items taken from the queue */
    uint64_t zones_written;
    uint64_t zones_dropped_here; /* for a track never created (a corrupt item) */
    uint64_t zones_unwritten; /* converted but the trace file had failed */
    uint16_t dirty[GZ_MAX_TRACKS]; /* tracks with zones waiting to be written */
    uint64_t now;                  /* host time of the drain cycle being processed */
    uint32_t ndirty;
    uint32_t srcloc_cache[SRCLOC_CACHE][2]; /* source location id → its name's id */
} worker;

static uint32_t gpu_tid(uint16_t id)
{
    return GZ_TRACE_GPU_TID_BASE + id;
}

/* The clock a track's times are on; NULL when the owner could not get one. */
static gz_gpu_clock *clock_of(worker *w, const track *t)
{
    return w->tracks[t->clock].owned;
}

static void report_calibration(worker *w, uint16_t id, track *t, uint64_t now)
{
    const gz_gpu_clock *c = t->owned;
    const gz_clock_model *m = &c->model;
    gz_trace_instant(&w->trace, "calibration", "calibration", gpu_tid(id), now);
    gz_jsonw *j = gz_trace_writer(&w->trace);
    if (w->trace.open && !w->trace.failed) {
        char num[64];
        gz_jsonw_lit(j, ",\"args\":{\"method\":\"");
        gz_jsonw_lit(j, gz_calib_method_name(m->method));
        gz_jsonw_lit(j, "\",\"max_deviation_ns\":");
        gz_jsonw_u64(j, m->calib_deviation_ns);
        gz_jsonw_lit(j, ",\"uncertainty_ns\":");
        gz_jsonw_i64(j, m->deviation_ns == UINT64_MAX ? -1 : (int64_t)m->deviation_ns);
        gz_jsonw_lit(j, ",\"offset_ns\":");
        gz_jsonw_i64(j, gz_gpu_clock_offset_ns(c));
        gz_jsonw_lit(j, ",\"drift_ppm\":");
        snprintf(num, sizeof num, "%.3f", m->drift_ppm);
        gz_jsonw_lit(j, num);
        gz_jsonw_lit(j, ",\"wraps\":");
        gz_jsonw_u64(j, gz_unwrap_wraps(&c->unwrap));
        gz_jsonw_lit(j, ",\"jumps\":");
        gz_jsonw_u64(j, m->jumps);
        gz_jsonw_lit(j, ",\"samples\":");
        gz_jsonw_u64(j, m->samples);
        gz_jsonw_lit(j, ",\"period_ns\":");
        snprintf(num, sizeof num, "%.6f", c->period_ns);
        gz_jsonw_lit(j, num);
        gz_jsonw_lit(j, ",\"valid_bits\":");
        gz_jsonw_u64(j, c->valid_bits);
        gz_jsonw_lit(j, "}");
    }
    gz_trace_end_event(&w->trace);
    t->calib_reported_samples = m->samples;
    t->calib_reported_at = now;
}

/* The correction applied (host - GPU ns at the newest constraint) as a
 * counter track, so a user sees the drift the model follows. */
#define CORRECTION_REPORT_NS 100000000ull /* 10 points a second at most */
static void report_correction(worker *w, uint16_t id, track *t, uint64_t now)
{
    const gz_clock_model *m = &t->owned->model;
    if (!m->fitted || now - t->correction_reported_at < CORRECTION_REPORT_NS ||
        !w->trace.open || w->trace.failed)
        return;
    t->correction_reported_at = now;
    size_t len;
    const char *name = gz_intern_str(t->name, &len);
    gz_jsonw *j = gz_trace_writer(&w->trace);
    gz_jsonw_lit(j, "{\"ph\":\"C\",\"pid\":");
    gz_jsonw_i64(j, w->trace.pid);
    gz_jsonw_lit(j, ",\"name\":");
    char label[300];
    int n = snprintf(label, sizeof label, "clock correction: %.*s", (int)(len > 256 ? 256 : len), name);
    gz_jsonw_str(j, label, (size_t)(n < 0 ? 0 : n));
    gz_jsonw_lit(j, ",\"ts\":");
    gz_jsonw_us(j, now);
    gz_jsonw_lit(j, ",\"args\":{\"offset_us\":");
    char num[48];
    snprintf(num, sizeof num, "%.3f", (double)gz_gpu_clock_offset_ns(t->owned) / 1000.0);
    gz_jsonw_lit(j, num);
    gz_jsonw_lit(j, "}");
    gz_trace_end_event(&w->trace);
    (void)id;
}

static void track_new(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    free(t->cycle);
    free(t->owned);
    memset(t, 0, sizeof *t);
    t->used = true;
    t->api = (gz_track_api)it->ctx.api;
    t->clock = it->track;
    if (it->ctx.clock && it->ctx.clock < GZ_MAX_TRACKS && w->tracks[it->ctx.clock].owned) {
        t->clock = it->ctx.clock;
        return;
    }
    t->owned = malloc(sizeof *t->owned);
    if (t->owned)
        gz_gpu_clock_init(t->owned, it->ctx.period_ns, it->ctx.valid_bits);
    else
        gz_log("out of memory for a GPU clock: the zones of that track are dropped");
}

static void track_name(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    if (!t->used)
        return;
    t->name = it->name;
    size_t len;
    const char *s = gz_intern_str(it->name, &len);
    gz_trace_thread_name(&w->trace, gpu_tid(it->track), s, len, 1000 + it->track);
}

static const char *const kind_names[8] = {"submit", "cmdbuf", "label", "zone",
                                          "frame",  "flush",  "?",     "?"};

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

static void write_srcloc(gz_jsonw *j, const gz_srcloc_view *loc)
{
    gz_jsonw_lit(j, ",\"function\":");
    gz_jsonw_str(j, loc->function, loc->function_len);
    gz_jsonw_lit(j, ",\"file\":");
    gz_jsonw_str(j, loc->file, loc->file_len);
    gz_jsonw_lit(j, ",\"line\":");
    gz_jsonw_u64(j, loc->line);
    if (loc->color) {
        char hex[8];
        snprintf(hex, sizeof hex, "#%06x", loc->color & 0xffffffu);
        gz_jsonw_lit(j, ",\"color\":\"");
        gz_jsonw_lit(j, hex);
        gz_jsonw_lit(j, "\"");
    }
}

/* Puts the track's zones in write order. Zones kept waiting from earlier
 * cycles are already in order, and new ones mostly arrive in time order:
 * sort only what is new (when it is out of order) and merge, rather than
 * sort every zone again on each of the ~8 cycles it waits (that sort was
 * a quarter of the worker's time in bench/worker_throughput.c). */
static void sort_cycle(track *t)
{
    cycle_zone *z = t->cycle;
    uint32_t s = t->nsorted, n = t->ncycle;
    if (s >= n)
        return;
    bool in_order = true;
    for (uint32_t i = s + 1; i < n && in_order; i++)
        in_order = by_begin_then_longer(&z[i - 1], &z[i]) <= 0;
    if (!in_order)
        qsort(z + s, n - s, sizeof *z, by_begin_then_longer);
    if (s && by_begin_then_longer(&z[s - 1], &z[s]) > 0) {
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
    t->nsorted = n;
}

static void write_cycle(worker *w, uint16_t id, track *t, uint64_t now, bool all)
{
    gz_gpu_clock *clock = clock_of(w, t);
    gz_gpu_clock_fit(clock);
    sort_cycle(t);
    uint64_t wait = gz_gpu_clock_settled(clock) ? LOOKAHEAD_NS : LOOKAHEAD_MAX_NS;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < t->ncycle; i++) {
        const cycle_zone *z = &t->cycle[i];
        if (!all && now - z->arrived_ns < wait) {
            t->cycle[kept++] = *z; /* stays in begin order: kept <= i */
            continue;
        }
        uint64_t b = gz_gpu_clock_to_host(clock, z->begin_gpu_ns);
        uint64_t e = gz_gpu_clock_to_host(clock, z->end_gpu_ns);
        if (e < b)
            e = b;
        size_t len;
        const char *name = gz_intern_str(z->name, &len);
        uint32_t summary_name = z->name;
        gz_srcloc_view loc;
        bool has_loc = z->has_srcloc && gz_srcloc_decode(z->name, &loc);
        if (has_loc) {
            name = loc.name;
            len = loc.name_len;
            summary_name = srcloc_name(w, z->name, &loc);
        }
        if (w->trace.open && !w->trace.failed) {
            gz_trace_zone(&w->trace, "gpu", name, len, gpu_tid(id), b, e);
            gz_jsonw *j = gz_trace_writer(&w->trace);
            gz_jsonw_lit(j, ",\"args\":{\"level\":\"");
            gz_jsonw_lit(j, kind_names[z->kind & 7]);
            gz_jsonw_lit(j, "\"");
            if (has_loc)
                write_srcloc(j, &loc);
            if (z->has_args) {
                gz_jsonw_lit(j, ",\"batch\":");
                gz_jsonw_u64(j, z->batch);
                gz_jsonw_lit(j, ",\"cmdbufs\":");
                gz_jsonw_u64(j, z->cmdbufs);
            }
            if (gz_the_client.cfg.raw_ticks) {
                gz_jsonw_lit(j, ",\"gpu_ticks\":[");
                gz_jsonw_u64(j, z->begin_raw);
                gz_jsonw_lit(j, ",");
                gz_jsonw_u64(j, z->end_raw);
                gz_jsonw_lit(j, "]");
            }
            gz_jsonw_lit(j, "}");
            gz_trace_end_event(&w->trace);
            if (z->has_flow)
                gz_trace_flow(&w->trace, false, z->flow, gpu_tid(id), b);
        } else {
            w->zones_unwritten++;
        }
        gz_summary_add(w->summary, summary_name, z->kind, e - b);
        t->zones++;
        w->zones_written++;
    }
    t->ncycle = kept;
    t->nsorted = kept;
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
    gz_gpu_clock *clock = t->used ? clock_of(w, t) : NULL;
    w->zones_received++;
    if (!clock) {
        if (t->used)
            t->dropped++;
        else
            w->zones_dropped_here++;
        return;
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
    gz_gpu_clock_zone_ns(clock, it->zone.begin_ticks, it->zone.end_ticks, &begin_ns, &end_ns);
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

static void gpu_bound(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    gz_gpu_clock *clock = t->used ? clock_of(w, t) : NULL;
    if (clock && (it->flags & (GZ_ITEM_F_NOT_BEFORE | GZ_ITEM_F_NOT_AFTER)))
        gz_gpu_clock_add_bound(clock, it->bound.ticks, it->bound.host_ns,
                               (it->flags & GZ_ITEM_F_NOT_BEFORE) != 0);
}

static void calib(worker *w, const gz_item *it)
{
    track *t = &w->tracks[it->track];
    gz_gpu_clock *clock = t->used ? clock_of(w, t) : NULL;
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
            gz_trace_zone(&w->trace, "cpu", name, len, it->cpu.tid, it->cpu.begin_ns,
                          it->cpu.end_ns);
            gz_trace_end_event(&w->trace);
            break;
        }
        case GZ_ITEM_FLOW_OUT:
            gz_trace_flow(&w->trace, true, it->flow.flow, it->flow.tid, it->flow.ns);
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
            gz_trace_thread_name(&w->trace, it->cpu.tid, name, len, 0);
            break;
        }
        case GZ_ITEM_FRAME_MARK:
        case GZ_ITEM_MESSAGE: {
            size_t len;
            const char *text = gz_intern_str(it->name, &len);
            gz_trace_instant_n(&w->trace, it->type == GZ_ITEM_FRAME_MARK ? "frame" : "message",
                               text, len, it->cpu.tid, it->cpu.begin_ns);
            gz_trace_end_event(&w->trace);
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
        if (!t->used || !t->owned)
            continue;
        gz_gpu_clock_fit(t->owned);
        bool changed = t->owned->model.samples != t->calib_reported_samples;
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

static void print_summary(worker *w, uint64_t zones_dropped, uint64_t items_dropped)
{
    FILE *f = stderr;
    gz_summary_print_zones(w->summary, f);
    for (uint16_t id = 1; id < GZ_MAX_TRACKS; id++) {
        const track *t = &w->tracks[id];
        if (!t->used)
            continue;
        const gz_gpu_clock *c = clock_of(w, t);
        fprintf(f, "gpuzones: track \"%s\": %llu zones, %llu dropped", gz_intern_str(t->name, NULL),
                (unsigned long long)t->zones, (unsigned long long)(t->dropped + track_drops(id)));
        if (c && t->owned) {
            const gz_clock_model *m = &c->model;
            fprintf(f, "; clock: %s", gz_calib_method_name(m->method));
            if (m->calib_deviation_ns)
                fprintf(f, ", max deviation %llu ns", (unsigned long long)m->calib_deviation_ns);
            if (m->deviation_ns != UINT64_MAX)
                fprintf(f, ", uncertainty %llu ns", (unsigned long long)m->deviation_ns);
            fprintf(f, ", offset %lld ns, drift %.2f ppm, %llu wraps, %llu jumps",
                    (long long)gz_gpu_clock_offset_ns(c), m->drift_ppm,
                    (unsigned long long)gz_unwrap_wraps(&c->unwrap), (unsigned long long)m->jumps);
            fputs(gz_gpu_clock_drift_note(c, (char[160]){0}, 160), f);
        }
        fputc('\n', f);
    }
    if (items_dropped)
        fprintf(f, "gpuzones: %llu queue items were dropped (queue full: raise "
                   "GPUZONES_QUEUE_ITEMS)\n",
                (unsigned long long)items_dropped);
    if (gz_intern_dropped())
        fprintf(f, "gpuzones: %llu zone names did not fit the name table\n",
                (unsigned long long)gz_intern_dropped());
    if (w->trace.path[0] && !w->trace.failed && gz_the_client.cfg.write_trace)
        fprintf(f, "gpuzones: trace written to %s (%llu zones, %llu dropped)\n", w->trace.path,
                (unsigned long long)w->zones_written, (unsigned long long)zones_dropped);
    else
        fprintf(f, "gpuzones: %llu zones, %llu dropped, %llu not written (no trace file)\n",
                (unsigned long long)w->zones_written, (unsigned long long)zones_dropped,
                (unsigned long long)w->zones_unwritten);
}

static void finish(worker *w)
{
    w->now = gz_host_now_ns();
    write_cycles(w, true);
    /* Produced: every zone a context made, whether it reached the queue
     * (received here) or was counted dropped before; each one is written
     * or dropped, which the tests check. */
    uint64_t zones_dropped = w->zones_dropped_here, zones_produced = w->zones_received;
    /* Track 0: zones of contexts that got no track (more than GZ_MAX_TRACKS). */
    zones_produced += track_drops(0);
    zones_dropped += track_drops(0);
    for (uint16_t id = 1; id < GZ_MAX_TRACKS; id++) {
        track *t = &w->tracks[id];
        zones_produced += track_drops(id);
        zones_dropped += track_drops(id) + (t->used ? t->dropped : 0);
        free(t->cycle);
        t->cycle = NULL;
    }
    uint64_t items_dropped = gz_queue_dropped(&gz_the_client.queue);
    report_calibrations(w, true);
    gz_trace_close(&w->trace, zones_produced, w->zones_written, zones_dropped, items_dropped);
    if (gz_the_client.cfg.summary)
        print_summary(w, zones_dropped, items_dropped);
}

void *gz_worker_main(void *arg)
{
    (void)arg;
    gz_client *c = &gz_the_client;
    worker *w = calloc(1, sizeof *w);
    if (!w) {
        gz_log("out of memory for the worker; timing is off for this process");
        return NULL;
    }
    w->summary = gz_summary_new();
    if (c->cfg.write_trace)
        gz_trace_open(&w->trace, c->cfg.output, c->pid, c->exe);

    const gz_item *items;
    while (!gz_queue_stopped(&c->queue)) {
        uint32_t n = gz_queue_take(&c->queue, c->cfg.poll_ms, &items);
        process(w, items, n);
        gz_client_run_collectors(false);
        report_calibrations(w, false);
        gz_trace_flush(&w->trace);
    }
    /* Stop: what producers queued, then the final readback, then what that
     * produced (two takes: one per half). */
    uint32_t n = gz_queue_take(&c->queue, 0, &items);
    process(w, items, n);
    gz_client_run_collectors(true);
    for (int half = 0; half < 2; half++) {
        n = gz_queue_take(&c->queue, 0, &items);
        process(w, items, n);
    }
    finish(w);
    for (uint32_t id = 1; id < GZ_MAX_TRACKS; id++)
        free(w->tracks[id].owned);
    gz_summary_free(w->summary);
    free(w);
    return NULL;
}
