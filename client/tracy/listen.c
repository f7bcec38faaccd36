/* Listen mode's sink: gpuzones itself is the Tracy client. Each call from
 * the worker becomes Tracy items (wire.c), cut into frames of whole items
 * and handed to the network thread (link.c). Names go by reference: the
 * profiler asks for each string, thread name and source location once, and
 * the answers are written here, on the worker thread, at the next flush.
 *
 * Every gpuzones track is one Tracy GPU context (period 1 ns, GPU time =
 * host CLOCK_MONOTONIC ns, the same clock as every CPU time sent: the
 * profiler then needs no calibration). Zones of a track that overlap
 * without nesting go to lanes (gz_tracy_nest), which Tracy shows as the
 * context's threads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gz_tracy_internal.h"
#include "gz_tracy_link.h"
#include "gz_tracy_nest.h"
#include "gz_tracy_strtab.h"
#include "gz_tracy_wire.h"

/* Ids the profiler will ask about: strings and source locations live in
 * separate ranges so one can never be taken for the other. */
#define STR_BASE 0x100000000ull
#define SRCLOC_BASE 0x200000000ull
/* Threads standing for a GPU context's lanes: above any Linux tid. */
#define LANE_TID_BASE 0xF0000000u
#define MAX_CONTEXTS 256
/* Tracy keeps source locations in an int16 index. */
#define MAX_SRCLOCS 32000
/* A group of items never exceeds this: a frame is cut before it could. */
#define UNIT_MAX (GZ_TRACY_STRING_MAX + 512)

typedef struct ltrack {
    bool live;
    uint8_t ctx;
    uint8_t api;
    uint16_t query;
    gz_tracy_nest nest;
} ltrack;

typedef struct gz_tracy_listen {
    gz_tracy_link *link;
    gz_tracy_enc enc;
    size_t budget; /* bytes that may wait for a profiler */
    uint32_t exit_wait_ms;
    int64_t init_ns;

    gz_tracy_strtab strings;  /* names by content */
    gz_tracy_strtab srclocs;  /* packed (name, function, file, line, color) */
    gz_tracy_strtab threads;  /* packed tid -> value: name string id */
    gz_tracy_strtab cpu_last; /* packed tid -> value: end of its last CPU zone */
    gz_tracy_strtab marks;    /* frame name id -> value: its last mark */
    uint32_t str_unknown, str_gpuzones;

    /* Plain names (no function/file) seen lately, by where they are: the
     * worker passes the same interned strings again and again. Checked
     * against the table's copy before use, so a reused buffer is safe. */
    struct {
        const char *p;
        size_t len;
        uint32_t srcloc;
    } recent[1024];
    uint32_t last_tid, last_tid_entry; /* the CPU zone thread seen last */
    size_t queued; /* the link's queue at the last cut (it only shrinks between) */

    ltrack *tracks[65536];
    unsigned contexts;
    ltrack *cur; /* the track whose zone ends the nest callback writes */

    uint64_t gpu_zones, cpu_zones, messages, frame_marks;
    uint64_t drop_budget, drop_contexts, drop_lanes, drop_cpu_order, drop_marks, drop_names;
} gz_tracy_listen;

static uint64_t str_id(gz_tracy_listen *s, const char *p, size_t len)
{
    if (len > GZ_TRACY_STRING_MAX)
        len = GZ_TRACY_STRING_MAX;
    uint32_t id = gz_tracy_strtab_put(&s->strings, p ? p : "", p ? len : 0, NULL);
    if (!id) {
        s->drop_names++;
        id = s->str_unknown;
    }
    return STR_BASE + id;
}

static uint64_t srcloc_id(gz_tracy_listen *s, const char *name, size_t name_len, const char *func,
                          size_t func_len, const char *file, size_t file_len, uint32_t line,
                          uint32_t color)
{
    uint64_t key[5] = {
        str_id(s, name, name_len), func_len ? str_id(s, func, func_len) : str_id(s, name, name_len),
        file_len ? str_id(s, file, file_len) : STR_BASE + s->str_gpuzones, line, color};
    uint32_t id = gz_tracy_strtab_put(&s->srclocs, key, sizeof key, NULL);
    if (!id) {
        s->drop_names++;
        key[0] = key[1] = STR_BASE + s->str_unknown;
        key[2] = STR_BASE + s->str_gpuzones;
        key[3] = key[4] = 0;
        /* Always there: added at open. */
        id = gz_tracy_strtab_find(&s->srclocs, key, sizeof key);
    }
    return SRCLOC_BASE + id;
}

/* The source location of a zone that has a name only. */
static uint64_t plain_srcloc(gz_tracy_listen *s, const char *name, size_t len)
{
    size_t h = (((uintptr_t)name >> 3) ^ len) & 1023;
    if (s->recent[h].p == name && s->recent[h].len == len && name) {
        const gz_tracy_strtab_entry *loc = gz_tracy_strtab_get(&s->srclocs, s->recent[h].srcloc);
        uint64_t name_id;
        memcpy(&name_id, loc->s, sizeof name_id);
        const gz_tracy_strtab_entry *e = gz_tracy_strtab_get(&s->strings, name_id - STR_BASE);
        if (e && e->len == len && !memcmp(e->s, name, len))
            return SRCLOC_BASE + s->recent[h].srcloc;
    }
    uint64_t id = srcloc_id(s, name, len, NULL, 0, NULL, 0, 0, 0);
    if (len <= GZ_TRACY_STRING_MAX) {
        s->recent[h].p = name;
        s->recent[h].len = len;
        s->recent[h].srcloc = (uint32_t)(id - SRCLOC_BASE);
    }
    return id;
}

/* Hands the items written so far to the link as one frame. */
static void cut(gz_tracy_listen *s)
{
    if (!s->enc.len || s->enc.failed)
        return;
    gz_tracy_link_push(s->link, s->enc.buf, s->enc.len);
    s->enc.buf = NULL;
    s->enc.len = s->enc.cap = 0;
    s->queued = gz_tracy_link_queued(s->link);
}

/* Before a group of items: cut the frame if the group might not fit, and
 * say whether there is room for data that may be dropped. */
static bool begin_unit(gz_tracy_listen *s, bool droppable)
{
    if (s->enc.len + UNIT_MAX > GZ_TRACY_FRAME_MAX)
        cut(s);
    if (!droppable)
        return true;
    return s->queued + s->enc.len + UNIT_MAX <= s->budget;
}

static void answer(gz_tracy_listen *s, const gz_tracy_query *q)
{
    begin_unit(s, false);
    switch (q->type) {
    case GZ_TSQ_STRING:
    case GZ_TSQ_FRAME_NAME: {
        const gz_tracy_strtab_entry *e =
            q->ptr >= STR_BASE ? gz_tracy_strtab_get(&s->strings, q->ptr - STR_BASE) : NULL;
        if (!e)
            e = gz_tracy_strtab_get(&s->strings, s->str_unknown);
        gz_tracy_enc_string(&s->enc,
                            q->type == GZ_TSQ_STRING ? GZ_TQ_STRING_DATA : GZ_TQ_FRAME_NAME, q->ptr,
                            e->s, e->len);
        break;
    }
    case GZ_TSQ_THREAD_STRING: {
        uint32_t tid = (uint32_t)q->ptr;
        char buf[64];
        const char *name = buf;
        size_t len;
        uint32_t tid_key = tid;
        uint32_t t = gz_tracy_strtab_find(&s->threads, &tid_key, sizeof tid_key);
        const gz_tracy_strtab_entry *e =
            t ? gz_tracy_strtab_get(&s->strings, gz_tracy_strtab_get(&s->threads, t)->value) : NULL;
        if (e) {
            name = e->s;
            len = e->len;
        } else if (tid >= LANE_TID_BASE) {
            len = (size_t)snprintf(buf, sizeof buf, "GPU lane %u", (tid & 15u) + 1);
        } else {
            len = (size_t)snprintf(buf, sizeof buf, "thread %u", tid);
        }
        gz_tracy_enc_string(&s->enc, GZ_TQ_THREAD_NAME, q->ptr, name, len);
        break;
    }
    case GZ_TSQ_SOURCE_LOCATION: {
        const gz_tracy_strtab_entry *e =
            q->ptr >= SRCLOC_BASE ? gz_tracy_strtab_get(&s->srclocs, q->ptr - SRCLOC_BASE) : NULL;
        uint64_t key[5] = {STR_BASE + s->str_unknown, STR_BASE + s->str_unknown,
                           STR_BASE + s->str_gpuzones, 0, 0};
        if (e)
            memcpy(key, e->s, sizeof key);
        gz_tracy_enc_srcloc(&s->enc, key[0], key[1], key[2], (uint32_t)key[3], (uint32_t)key[4]);
        break;
    }
    case GZ_TSQ_SYMBOL_CODE:
        gz_tracy_enc_bare(&s->enc, GZ_TQ_ACK_SYMBOL_CODE_NA);
        break;
    case GZ_TSQ_SOURCE_CODE:
        gz_tracy_enc_ack_source(&s->enc, (uint32_t)q->ptr);
        break;
    default:
        /* Nothing else is ever offered (no callstacks, plots, code): the
         * profiler still counts every query until it is acknowledged. */
        gz_tracy_enc_bare(&s->enc, GZ_TQ_ACK_QUERY_NOOP);
        break;
    }
}

static void answer_queries(gz_tracy_listen *s)
{
    gz_tracy_query q[256];
    size_t n;
    while ((n = gz_tracy_link_queries(s->link, q, 256)))
        for (size_t i = 0; i < n; i++)
            answer(s, &q[i]);
}

static void finish_track(gz_tracy_listen *s, ltrack *lt);

static void l_track_name(void *self, const gz_sink_track *t)
{
    gz_tracy_listen *s = self;
    ltrack *lt = s->tracks[t->id];
    if (!lt || !lt->live)
        return;
    begin_unit(s, false);
    gz_tracy_enc_gpu_context_name(&s->enc, lt->ctx, t->name, t->name_len);
}

static void l_track_new(void *self, const gz_sink_track *t)
{
    gz_tracy_listen *s = self;
    ltrack *lt = s->tracks[t->id];
    if (!lt && !(lt = s->tracks[t->id] = calloc(1, sizeof *lt)))
        return;
    if (lt->live)
        finish_track(s, lt); /* an id given again without track_end */
    lt->live = false;
    if (s->contexts >= MAX_CONTEXTS)
        return; /* its zones are counted as dropped */
    lt->live = true;
    lt->ctx = (uint8_t)s->contexts++;
    lt->api = (uint8_t)t->api;
    lt->query = 0;
    gz_tracy_nest_init(&lt->nest);
    int64_t now = (int64_t)gz_tracy_now_ns();
    begin_unit(s, false);
    gz_tracy_enc_gpu_new_context(&s->enc, now, now, 0, 1.0f, lt->ctx, gz_tracy_ctx_type(t->api));
    l_track_name(self, t);
}

static void end_zone(void *user, unsigned lane, uint64_t end_ns)
{
    gz_tracy_listen *s = user;
    ltrack *lt = s->cur;
    uint16_t q = lt->query++;
    uint32_t tid = LANE_TID_BASE + ((uint32_t)lt->ctx << 4) + lane;
    gz_tracy_enc_gpu_end(&s->enc, (int64_t)end_ns, tid, q, lt->ctx);
    gz_tracy_enc_gpu_time(&s->enc, (int64_t)end_ns, q, lt->ctx);
}

static void finish_track(gz_tracy_listen *s, ltrack *lt)
{
    s->cur = lt;
    begin_unit(s, false);
    gz_tracy_nest_finish(&lt->nest, end_zone, s);
}

static void l_track_end(void *self, uint16_t id)
{
    gz_tracy_listen *s = self;
    ltrack *lt = s->tracks[id];
    if (!lt || !lt->live)
        return;
    finish_track(s, lt);
    /* Tracy cannot retire a context: a new track with this id gets a new
     * one. */
    lt->live = false;
}

static void l_thread_name(void *self, uint32_t tid, const char *name, size_t len)
{
    gz_tracy_listen *s = self;
    uint32_t key = tid;
    uint32_t t = gz_tracy_strtab_put(&s->threads, &key, sizeof key, NULL);
    if (t)
        gz_tracy_strtab_get(&s->threads, t)->value = str_id(s, name, len) - STR_BASE;
}

static void l_gpu_zone(void *self, const gz_sink_zone *z)
{
    gz_tracy_listen *s = self;
    ltrack *lt = s->tracks[z->track];
    if (!lt || !lt->live) {
        s->drop_contexts++;
        return;
    }
    if (!begin_unit(s, true)) {
        s->drop_budget++;
        return;
    }
    uint64_t srcloc;
    if (z->loc)
        srcloc = srcloc_id(s, z->name, z->name_len, z->loc->function, z->loc->function_len,
                           z->loc->file, z->loc->file_len, z->loc->line, z->loc->color);
    else
        srcloc = plain_srcloc(s, z->name, z->name_len);
    s->cur = lt;
    int lane = gz_tracy_nest_place(&lt->nest, z->begin_ns, z->end_ns, end_zone, s);
    if (lane < 0) {
        s->drop_lanes++;
        return;
    }
    uint16_t q = lt->query++;
    uint32_t tid = LANE_TID_BASE + ((uint32_t)lt->ctx << 4) + (uint32_t)lane;
    gz_tracy_enc_gpu_begin(&s->enc, (int64_t)z->begin_ns, tid, q, lt->ctx, srcloc);
    gz_tracy_enc_gpu_time(&s->enc, (int64_t)z->begin_ns, q, lt->ctx);
    s->gpu_zones++;
}

static void l_cpu_zone(void *self, uint32_t tid, const char *name, size_t len, uint64_t begin_ns,
                       uint64_t end_ns)
{
    gz_tracy_listen *s = self;
    if (!begin_unit(s, true)) {
        s->drop_budget++;
        return;
    }
    /* Whole zones arrive as they end: one that began before the previous
     * zone of its thread ended would break Tracy's per-thread stack. */
    uint32_t t = s->last_tid_entry;
    if (!t || s->last_tid != tid) {
        uint32_t key = tid;
        t = gz_tracy_strtab_put(&s->cpu_last, &key, sizeof key, NULL);
        s->last_tid = tid;
        s->last_tid_entry = t;
    }
    gz_tracy_strtab_entry *last = gz_tracy_strtab_get(&s->cpu_last, t);
    if (!last || begin_ns < last->value) {
        s->drop_cpu_order++;
        return;
    }
    last->value = end_ns;
    uint64_t srcloc = plain_srcloc(s, name, len);
    gz_tracy_enc_zone_begin(&s->enc, tid, (int64_t)begin_ns, srcloc);
    gz_tracy_enc_zone_end(&s->enc, tid, (int64_t)end_ns);
    s->cpu_zones++;
}

static void l_frame_mark(void *self, uint32_t tid, const char *name, size_t len, uint64_t ns)
{
    gz_tracy_listen *s = self;
    if (!begin_unit(s, true)) {
        s->drop_budget++;
        return;
    }
    /* "Frame" (or no name) is Tracy's default frame set; the layers' own
     * marks at presents and swaps are "frame": the same frames. */
    uint64_t name_id =
        !len || (len == 5 && !strncasecmp(name, "frame", 5)) ? 0 : str_id(s, name, len);
    uint32_t t = gz_tracy_strtab_put(&s->marks, &name_id, sizeof name_id, NULL);
    gz_tracy_strtab_entry *last = gz_tracy_strtab_get(&s->marks, t);
    /* The profiler takes each set's marks in time order only. */
    if (!last || ns < last->value) {
        s->drop_marks++;
        return;
    }
    last->value = ns;
    gz_tracy_enc_frame_mark(&s->enc, (int64_t)ns, name_id);
    s->frame_marks++;
}

static void l_message(void *self, uint32_t tid, const char *text, size_t len, uint64_t ns)
{
    gz_tracy_listen *s = self;
    if (!begin_unit(s, true)) {
        s->drop_budget++;
        return;
    }
    gz_tracy_enc_message(&s->enc, tid, (int64_t)ns, text, len);
    s->messages++;
}

static void l_flush(void *self)
{
    gz_tracy_listen *s = self;
    answer_queries(s);
    cut(s);
    s->queued = gz_tracy_link_queued(s->link);
}

static void report(gz_tracy_listen *s, const gz_tracy_link_totals *lt, bool delivered)
{
    uint64_t dropped = s->drop_budget + s->drop_contexts + s->drop_lanes + s->drop_cpu_order;
    gz_log("Tracy: %s %llu GPU zones, %llu CPU zones, %llu frame marks, %llu messages "
           "(%llu bytes, %llu on the wire)",
           delivered ? "the profiler took" : "no profiler took", (unsigned long long)s->gpu_zones,
           (unsigned long long)s->cpu_zones, (unsigned long long)s->frame_marks,
           (unsigned long long)s->messages, (unsigned long long)lt->bytes_in,
           (unsigned long long)lt->bytes_out);
    if (dropped || s->drop_marks || s->drop_names || lt->frames_lost || s->enc.failed)
        gz_log("Tracy: dropped %llu zones (%llu while %zu MiB waited for a profiler, %llu past "
               "%u GPU contexts, %llu nested too deep, %llu CPU zones out of their thread's "
               "order), %llu frame marks out of order, %llu names past the table, %llu frames "
               "after the profiler left%s",
               (unsigned long long)dropped, (unsigned long long)s->drop_budget, s->budget >> 20,
               (unsigned long long)s->drop_contexts, MAX_CONTEXTS,
               (unsigned long long)s->drop_lanes, (unsigned long long)s->drop_cpu_order,
               (unsigned long long)s->drop_marks, (unsigned long long)s->drop_names,
               (unsigned long long)lt->frames_lost, s->enc.failed ? "; out of memory" : "");
}

static void l_close(void *self, const gz_sink_totals *totals)
{
    gz_tracy_listen *s = self;
    for (unsigned i = 0; i < 65536; i++)
        if (s->tracks[i] && s->tracks[i]->live)
            finish_track(s, s->tracks[i]);
    begin_unit(s, false);
    /* Tells the profiler this is all; it then asks for the names it still
     * lacks and says when it has everything. */
    gz_tracy_enc_bare(&s->enc, GZ_TQ_TERMINATE);
    cut(s);
    uint64_t deadline = gz_tracy_now_ns() + (uint64_t)s->exit_wait_ms * 1000000ull;
    for (;;) {
        gz_tracy_link_state st = gz_tracy_link_get_state(s->link);
        if (st == GZ_TRACY_LINK_DONE)
            break;
        uint64_t now = gz_tracy_now_ns();
        if (now >= deadline)
            break;
        answer_queries(s);
        cut(s);
        uint64_t left_ms = (deadline - now) / 1000000ull;
        gz_tracy_link_wait(s->link, left_ms < 10 ? (uint32_t)left_ms + 1 : 10);
    }
    bool delivered = gz_tracy_link_get_state(s->link) == GZ_TRACY_LINK_DONE &&
                     gz_tracy_link_queued(s->link) == 0;
    gz_tracy_link_totals lt;
    gz_tracy_link_close(s->link, &lt);
    report(s, &lt, delivered);
    (void)totals;
    gz_tracy_enc_free(&s->enc);
    gz_tracy_strtab_free(&s->strings);
    gz_tracy_strtab_free(&s->srclocs);
    gz_tracy_strtab_free(&s->threads);
    gz_tracy_strtab_free(&s->cpu_last);
    gz_tracy_strtab_free(&s->marks);
    for (unsigned i = 0; i < 65536; i++)
        free(s->tracks[i]);
    free(s);
}

static const gz_sink_ops listen_ops = {
    .what = "Tracy",
    .track_new = l_track_new,
    .track_name = l_track_name,
    .track_end = l_track_end,
    .thread_name = l_thread_name,
    .gpu_zone = l_gpu_zone,
    .cpu_zone = l_cpu_zone,
    .frame_mark = l_frame_mark,
    .message = l_message,
    .flush = l_flush,
    .close = l_close,
};

static void program_name(char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/comm", "r");
    out[0] = 0;
    if (f) {
        if (fgets(out, (int)cap, f))
            out[strcspn(out, "\n")] = 0;
        fclose(f);
    }
    if (!out[0])
        snprintf(out, cap, "program");
}

bool gz_tracy_listen_open(const gz_config *cfg, size_t budget, gz_sink *out)
{
    gz_tracy_listen *s = calloc(1, sizeof *s);
    if (!s)
        return false;
    gz_tracy_enc_init(&s->enc);
    gz_tracy_strtab_init(&s->strings, 1u << 20, 64u << 20);
    gz_tracy_strtab_init(&s->srclocs, MAX_SRCLOCS, 64u << 20);
    gz_tracy_strtab_init(&s->threads, 1u << 16, 64u << 20);
    gz_tracy_strtab_init(&s->cpu_last, 1u << 16, 64u << 20);
    gz_tracy_strtab_init(&s->marks, 1u << 12, 64u << 20);
    s->str_unknown = gz_tracy_strtab_put(&s->strings, "<name dropped>", 14, NULL);
    s->str_gpuzones = gz_tracy_strtab_put(&s->strings, "gpuzones", 8, NULL);
    uint64_t fallback[5] = {STR_BASE + s->str_unknown, STR_BASE + s->str_unknown,
                            STR_BASE + s->str_gpuzones, 0, 0};
    bool ok = s->str_unknown && s->str_gpuzones &&
              gz_tracy_strtab_put(&s->srclocs, fallback, sizeof fallback, NULL);
    s->budget = budget;
    s->exit_wait_ms = cfg->tracy_exit_wait_ms;
    s->init_ns = (int64_t)gz_tracy_now_ns();

    char program[64];
    program_name(program, sizeof program);
    char host[256];
    snprintf(host, sizeof host, "OS: Linux\nClient: gpuzones (Tracy protocol %u)\n",
             GZ_TRACY_PROTOCOL);
    struct stat st;
    gz_tracy_welcome_info w = {
        .init_begin = s->init_ns,
        .init_end = s->init_ns,
        .resolution_ns = 1,
        .epoch_s = (uint64_t)time(NULL),
        .exec_mtime_s = stat("/proc/self/exe", &st) == 0 ? (uint64_t)st.st_mtime : 0,
        .pid = (uint64_t)getpid(),
        .program = program,
        .host_info = host,
    };
    uint8_t welcome[GZ_TRACY_WELCOME_SIZE];
    gz_tracy_welcome(welcome, &w);
    if (ok)
        s->link = gz_tracy_link_open(cfg->tracy_port, welcome, program, w.pid);
    if (!s->link) {
        gz_tracy_enc_free(&s->enc);
        gz_tracy_strtab_free(&s->strings);
        gz_tracy_strtab_free(&s->srclocs);
        gz_tracy_strtab_free(&s->threads);
        gz_tracy_strtab_free(&s->cpu_last);
        gz_tracy_strtab_free(&s->marks);
        free(s);
        return false;
    }
    gz_log("Tracy: no Tracy client in the program; gpuzones is one: a Tracy v%s profiler "
           "(protocol %u) can connect on port %u",
           GZ_TRACY_VERSION_TEXT, GZ_TRACY_PROTOCOL, gz_tracy_link_port(s->link));
    out->ops = &listen_ops;
    out->self = s;
    return true;
}
