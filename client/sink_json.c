/* The Chrome JSON sink: formats what the worker hands it as trace events
 * (docs/TRACE_FORMAT.md) through trace.c, which owns the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_calibration.h"
#include "gz_client_internal.h"
#include "gz_intern.h"
#include "gz_sinks.h"
#include "gz_trace.h"

typedef struct json_sink {
    gz_trace trace;
    gz_trace_outcome *outcome;
    bool raw_ticks;
    uint64_t unwritten; /* zones received while the file was not writable */
    /* A track's tid: GZ_TRACE_GPU_TID_BASE + a serial given at track_new,
     * not the track id, so that a track that reuses an ended one's id
     * gets a thread of its own in the viewer instead of merging into it. */
    uint32_t serial[GZ_MAX_TRACKS];
    uint32_t next_serial;
    uint32_t name[GZ_MAX_TRACKS]; /* interned track names, for the frame-time counters */
    /* The newest frame mark of a few threads, for the CPU frame interval. */
    struct {
        uint32_t tid;
        uint64_t ns;
    } last_mark[8];
} json_sink;

/* ,"args":{"level":"<kind>" for each zone kind, with its length. */
#define LEVEL(kind) {",\"args\":{\"level\":\"" kind "\"", sizeof ",\"args\":{\"level\":\"" kind "\"" - 1}
static const struct {
    const char *text;
    size_t len;
} level_args[8] = {LEVEL("submit"), LEVEL("cmdbuf"), LEVEL("label"), LEVEL("zone"),
                   LEVEL("frame"),  LEVEL("flush"),  LEVEL("pass"),  LEVEL("command")};

static bool writable(const json_sink *j)
{
    return j->trace.open && !j->trace.failed;
}

static uint32_t tid_of(const json_sink *j, uint16_t id)
{
    return GZ_TRACE_GPU_TID_BASE + j->serial[id < GZ_MAX_TRACKS ? id : 0];
}

static void track_new(void *s, const gz_sink_track *t)
{
    json_sink *j = s;
    if (t->id < GZ_MAX_TRACKS)
        j->serial[t->id] = ++j->next_serial & (GZ_TRACE_GPU_TID_BASE - 1);
}

static void track_name(void *s, const gz_sink_track *t)
{
    json_sink *j = s;
    if (t->id < GZ_MAX_TRACKS)
        j->name[t->id] = gz_intern(t->name, t->name_len);
    gz_trace_thread_name(&j->trace, tid_of(j, t->id), t->name, t->name_len,
                         1000 + (int)(j->serial[t->id < GZ_MAX_TRACKS ? t->id : 0] & 0xffffff));
}

static void thread_name(void *s, uint32_t tid, const char *name, size_t len)
{
    json_sink *j = s;
    gz_trace_thread_name(&j->trace, tid, name, len, 0);
}

static void write_srcloc(gz_jsonw *w, const gz_srcloc_view *loc)
{
    gz_jsonw_lit(w, ",\"function\":");
    gz_jsonw_str(w, loc->function, loc->function_len);
    gz_jsonw_lit(w, ",\"file\":");
    gz_jsonw_str(w, loc->file, loc->file_len);
    gz_jsonw_lit(w, ",\"line\":");
    gz_jsonw_u64(w, loc->line);
    if (loc->color) {
        char hex[8];
        snprintf(hex, sizeof hex, "#%06x", loc->color & 0xffffffu);
        gz_jsonw_lit(w, ",\"color\":\"");
        gz_jsonw_lit(w, hex);
        gz_jsonw_lit(w, "\"");
    }
}

/* A counter event: a track of values in the viewer, one per name. */
static void counter(json_sink *j, const char *prefix, const char *name, size_t len,
                    const char *key, uint64_t ns, double value)
{
    if (!writable(j))
        return;
    gz_jsonw *w = gz_trace_writer(&j->trace);
    gz_jsonw_lit(w, "{\"ph\":\"C\",\"pid\":");
    gz_jsonw_i64(w, j->trace.pid);
    gz_jsonw_lit(w, ",\"name\":");
    char label[300];
    int n = snprintf(label, sizeof label, "%s%.*s", prefix, (int)(len > 256 ? 256 : len), name);
    gz_jsonw_str(w, label, (size_t)(n < 0 ? 0 : n));
    gz_jsonw_lit(w, ",\"ts\":");
    gz_jsonw_us(w, ns);
    gz_jsonw_lit(w, ",\"args\":{\"");
    gz_jsonw_lit(w, key);
    gz_jsonw_lit(w, "\":");
    char num[48];
    snprintf(num, sizeof num, "%.3f", value);
    gz_jsonw_lit(w, num);
    gz_jsonw_lit(w, "}");
    gz_trace_end_event(&j->trace);
}

static void gpu_zone(void *s, const gz_sink_zone *z)
{
    json_sink *j = s;
    if (!writable(j)) {
        j->unwritten++;
        return;
    }
    uint32_t tid = tid_of(j, z->track);
    gz_trace_zone(&j->trace, "gpu", z->name, z->name_len, tid, z->begin_ns, z->end_ns);
    gz_jsonw *w = gz_trace_writer(&j->trace);
    gz_jsonw_raw(w, level_args[z->kind & 7].text, level_args[z->kind & 7].len);
    if (z->loc)
        write_srcloc(w, z->loc);
    if (z->detail) {
        gz_jsonw_lit(w, ",\"detail\":");
        gz_jsonw_str(w, z->detail, z->detail_len);
    }
    if (z->has_args) {
        gz_jsonw_lit(w, ",\"batch\":");
        gz_jsonw_u64(w, z->batch);
        gz_jsonw_lit(w, ",\"cmdbufs\":");
        gz_jsonw_u64(w, z->cmdbufs);
    }
    if (j->raw_ticks) {
        gz_jsonw_lit(w, ",\"gpu_ticks\":[");
        gz_jsonw_u64(w, z->begin_raw);
        gz_jsonw_lit(w, ",");
        gz_jsonw_u64(w, z->end_raw);
        gz_jsonw_lit(w, "]");
    }
    if (z->clock_doubt_ns) {
        gz_jsonw_lit(w, ",\"clock_doubt_us\":");
        gz_jsonw_u64(w, (z->clock_doubt_ns + 999) / 1000);
    }
    gz_jsonw_lit(w, "}");
    gz_trace_end_event(&j->trace);
    if (z->flow)
        gz_trace_flow(&j->trace, "submit", false, z->flow, tid, z->begin_ns);
    /* From the zone's end to the CPU wait that saw it done (flow_in). */
    if (z->wait_flow)
        gz_trace_flow(&j->trace, "wait", true, z->wait_flow, tid, z->end_ns);
    /* Each frame's GPU time as a counter track: the frame-time graph. */
    if (z->kind == GZ_ZONE_FRAME && z->track < GZ_MAX_TRACKS) {
        size_t len;
        const char *track = gz_intern_str(j->name[z->track], &len);
        counter(j, "GPU frame time: ", track, len, "ms", z->begin_ns,
                (double)(z->end_ns - z->begin_ns) / 1e6);
    }
}

static void cpu_zone(void *s, uint32_t tid, const char *name, size_t len, uint64_t begin_ns,
                     uint64_t end_ns)
{
    json_sink *j = s;
    gz_trace_zone(&j->trace, "cpu", name, len, tid, begin_ns, end_ns);
    gz_trace_end_event(&j->trace);
}

static void flow_out(void *s, uint64_t flow, uint32_t tid, uint64_t ns)
{
    json_sink *j = s;
    gz_trace_flow(&j->trace, "submit", true, flow, tid, ns);
}

static void flow_in(void *s, uint64_t flow, uint32_t tid, uint64_t ns)
{
    json_sink *j = s;
    gz_trace_flow(&j->trace, "wait", false, flow, tid, ns);
}

static void frame_mark(void *s, uint32_t tid, const char *name, size_t len, uint64_t ns)
{
    json_sink *j = s;
    gz_trace_instant_n(&j->trace, "frame", name, len, tid, ns);
    gz_trace_end_event(&j->trace);
    /* The time since this thread's previous mark, as a counter track. */
    uint32_t k = 0;
    while (k < 8 && j->last_mark[k].tid && j->last_mark[k].tid != tid)
        k++;
    if (k == 8)
        k = tid % 8; /* more threads mark frames: one gives way */
    if (j->last_mark[k].tid == tid && ns > j->last_mark[k].ns) {
        char thread[32];
        int n = snprintf(thread, sizeof thread, "thread %u", tid);
        counter(j, "frame interval: ", thread, (size_t)(n < 0 ? 0 : n), "ms", ns,
                (double)(ns - j->last_mark[k].ns) / 1e6);
    }
    j->last_mark[k].tid = tid;
    j->last_mark[k].ns = ns;
}

static void message(void *s, uint32_t tid, const char *text, size_t len, uint64_t ns)
{
    json_sink *j = s;
    gz_trace_instant_n(&j->trace, "message", text, len, tid, ns);
    gz_trace_end_event(&j->trace);
}

static void calibration(void *s, const gz_sink_track *t, const gz_gpu_clock *c, uint64_t ns)
{
    json_sink *j = s;
    if (!writable(j))
        return;
    const gz_clock_model *m = &c->model;
    gz_trace_instant(&j->trace, "calibration", "calibration", tid_of(j, t->id), ns);
    gz_jsonw *w = gz_trace_writer(&j->trace);
    char num[64];
    gz_jsonw_lit(w, ",\"args\":{\"method\":\"");
    gz_jsonw_lit(w, gz_calib_method_name(m->method));
    gz_jsonw_lit(w, "\",\"max_deviation_ns\":");
    gz_jsonw_u64(w, m->calib_deviation_ns);
    gz_jsonw_lit(w, ",\"uncertainty_ns\":");
    gz_jsonw_i64(w, m->deviation_ns == UINT64_MAX ? -1 : (int64_t)m->deviation_ns);
    gz_jsonw_lit(w, ",\"offset_ns\":");
    gz_jsonw_i64(w, gz_gpu_clock_offset_ns(c));
    gz_jsonw_lit(w, ",\"drift_ppm\":");
    snprintf(num, sizeof num, "%.3f", m->drift_ppm);
    gz_jsonw_lit(w, num);
    gz_jsonw_lit(w, ",\"wraps\":");
    gz_jsonw_u64(w, gz_unwrap_wraps(&c->unwrap));
    gz_jsonw_lit(w, ",\"jumps\":");
    gz_jsonw_u64(w, m->jumps);
    gz_jsonw_lit(w, ",\"samples\":");
    gz_jsonw_u64(w, m->samples);
    gz_jsonw_lit(w, ",\"period_ns\":");
    snprintf(num, sizeof num, "%.6f", c->period_ns);
    gz_jsonw_lit(w, num);
    gz_jsonw_lit(w, ",\"valid_bits\":");
    gz_jsonw_u64(w, c->valid_bits);
    gz_jsonw_lit(w, "}");
    gz_trace_end_event(&j->trace);
}

/* Counter tracks per GPU clock, so that a user sees the drift the model
 * follows and how sure it is: the offset applied and the uncertainty (when
 * both sides are bounded). */
static void clock_correction(void *s, const gz_sink_track *t, const gz_gpu_clock *c, uint64_t ns)
{
    counter(s, "clock correction: ", t->name, t->name_len, "offset_us", ns,
            (double)gz_gpu_clock_offset_ns(c) / 1000.0);
    if (c->model.deviation_ns != UINT64_MAX)
        counter(s, "clock uncertainty: ", t->name, t->name_len, "uncertainty_us", ns,
                (double)c->model.deviation_ns / 1000.0);
}

static void flush(void *s)
{
    json_sink *j = s;
    gz_trace_flush(&j->trace);
}

static void close_sink(void *s, const gz_sink_totals *t)
{
    json_sink *j = s;
    bool was_open = j->trace.open;
    gz_trace_close(&j->trace, t->zones_produced, t->zones_written, t->zones_dropped,
                   t->items_dropped);
    gz_trace_outcome *o = j->outcome;
    o->closed = true;
    o->written = was_open && !j->trace.failed;
    o->zones_unwritten = j->unwritten;
    snprintf(o->path, sizeof o->path, "%s", j->trace.path);
    free(j);
}

static void checkpoint(void *s, const gz_sink_totals *t, bool summary)
{
    (void)summary;
    json_sink *j = s;
    gz_trace_end_so_far(&j->trace, t->zones_produced, t->zones_written, t->zones_dropped,
                        t->items_dropped);
    /* For a summary printed now: what the file holds so far. */
    gz_trace_outcome *o = j->outcome;
    o->closed = true;
    o->written = j->trace.open && !j->trace.failed;
    o->zones_unwritten = j->unwritten;
    snprintf(o->path, sizeof o->path, "%s", j->trace.path);
}

static const gz_sink_ops json_ops = {
    .what = "trace file",
    .track_new = track_new,
    .track_name = track_name,
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

bool gz_json_sink_open(const gz_config *cfg, int pid, const char *exe, gz_trace_outcome *outcome,
                       gz_sink *out)
{
    json_sink *j = calloc(1, sizeof *j);
    if (!j) {
        gz_log("out of memory for the trace writer; no trace is written");
        return false;
    }
    j->outcome = outcome;
    j->raw_ticks = cfg->raw_ticks;
    gz_trace_open(&j->trace, cfg->output, pid, exe);
    j->trace.w.deadline_ns = &gz_the_client.output_deadline_ns;
    j->trace.w.progress = &gz_the_client.worker_progress;
    *out = (gz_sink){.ops = &json_ops, .self = j};
    return true;
}
