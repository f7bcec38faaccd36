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

#include "gz_tracy_answer.h"
#include "gz_tracy_internal.h"
#include "gz_tracy_link.h"
#include "gz_tracy_nest.h"
#include "gz_tracy_strtab.h"
#include "gz_tracy_wire.h"

#define STR_BASE GZ_TRACY_STR_BASE
#define SRCLOC_BASE GZ_TRACY_SRCLOC_BASE
#define LANE_TID_BASE GZ_TRACY_LANE_TID_BASE
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
    uint32_t name; /* in names.strings, to tell a later profiler again */
    gz_tracy_nest nest;
} ltrack;

typedef struct gz_tracy_listen {
    gz_tracy_link *link;
    gz_tracy_enc enc;
    size_t budget; /* bytes that may wait for a profiler */
    uint32_t exit_wait_ms;
    int64_t init_ns;

    gz_tracy_names names;     /* what the profiler asks for (gz_tracy_answer.h) */
    gz_tracy_strtab cpu_last; /* packed tid -> value: end of its last CPU zone */
    gz_tracy_strtab marks;    /* frame name id -> value: its last mark */
    uint64_t *progress;       /* bumped while the exit waits for a profiler */
    uint32_t turn;            /* the link's turn the encoder writes for */
    gz_tracy_counts pending;  /* what the items not yet cut hold */
    bool final;               /* the end of the data is in the items not yet cut */

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

    gz_tracy_counts sent;   /* every item encoded */
    gz_tracy_counts unsent; /* encoded for a profiler that left before they were handed over */
    uint64_t drop_budget, drop_contexts, drop_lanes, drop_cpu_order, drop_marks, drop_names;
} gz_tracy_listen;

static uint64_t str_id(gz_tracy_listen *s, const char *p, size_t len)
{
    if (len > GZ_TRACY_STRING_MAX)
        len = GZ_TRACY_STRING_MAX;
    uint32_t id = gz_tracy_strtab_put(&s->names.strings, p ? p : "", p ? len : 0, NULL);
    if (!id) {
        s->drop_names++;
        id = s->names.str_unknown;
    }
    return STR_BASE + id;
}

static uint64_t srcloc_id(gz_tracy_listen *s, const char *name, size_t name_len, const char *func,
                          size_t func_len, const char *file, size_t file_len, uint32_t line,
                          uint32_t color)
{
    uint64_t key[5] = {
        str_id(s, name, name_len), func_len ? str_id(s, func, func_len) : str_id(s, name, name_len),
        file_len ? str_id(s, file, file_len) : STR_BASE + s->names.str_gpuzones, line, color};
    uint32_t id = gz_tracy_strtab_put(&s->names.srclocs, key, sizeof key, NULL);
    if (!id) {
        s->drop_names++;
        key[0] = key[1] = STR_BASE + s->names.str_unknown;
        key[2] = STR_BASE + s->names.str_gpuzones;
        key[3] = key[4] = 0;
        /* Always there: added at open. */
        id = gz_tracy_strtab_find(&s->names.srclocs, key, sizeof key);
    }
    return SRCLOC_BASE + id;
}

/* The source location of a zone that has a name only. */
static uint64_t plain_srcloc(gz_tracy_listen *s, const char *name, size_t len)
{
    size_t h = (((uintptr_t)name >> 3) ^ len) & 1023;
    if (s->recent[h].p == name && s->recent[h].len == len && name) {
        const gz_tracy_strtab_entry *loc = gz_tracy_strtab_get(&s->names.srclocs, s->recent[h].srcloc);
        uint64_t name_id;
        memcpy(&name_id, loc->s, sizeof name_id);
        const gz_tracy_strtab_entry *e = gz_tracy_strtab_get(&s->names.strings, name_id - STR_BASE);
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
    gz_tracy_link_push(s->link, s->enc.buf, s->enc.len, s->turn, &s->pending, s->final);
    s->sent.gpu_zones += s->pending.gpu_zones;
    s->sent.cpu_zones += s->pending.cpu_zones;
    s->sent.frame_marks += s->pending.frame_marks;
    s->sent.messages += s->pending.messages;
    s->enc.buf = NULL;
    s->enc.len = s->enc.cap = 0;
    s->pending = (gz_tracy_counts){0};
    s->final = false;
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
    gz_tracy_answer(&s->enc, &s->names, q);
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
    lt->name = (uint32_t)(str_id(s, t->name, t->name_len) - STR_BASE);
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
    uint32_t t = gz_tracy_strtab_put(&s->names.threads, &key, sizeof key, NULL);
    if (t)
        gz_tracy_strtab_get(&s->names.threads, t)->value = str_id(s, name, len) - STR_BASE;
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
    s->pending.gpu_zones++;
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
    s->pending.cpu_zones++;
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
    s->pending.frame_marks++;
}

static void l_message(void *self, uint32_t tid, const char *text, size_t len, uint64_t ns)
{
    gz_tracy_listen *s = self;
    if (!begin_unit(s, true)) {
        s->drop_budget++;
        return;
    }
    gz_tracy_enc_message(&s->enc, tid, (int64_t)ns, text, len);
    s->pending.messages++;
}

static void drop_end(void *user, unsigned lane, uint64_t end_ns)
{
    (void)user;
    (void)lane;
    (void)end_ns;
}

/* The profiler the encoder wrote for has left: the next one starts from
 * nothing. What was encoded and not handed over is let go; the encoder's
 * references start afresh; every context still in use is made again (a
 * zone open in a lane belonged to the profiler that left: its end is not
 * sent). Names go by reference as before: the new profiler asks. */
static void new_turn(gz_tracy_listen *s, uint32_t turn)
{
    s->unsent.gpu_zones += s->pending.gpu_zones;
    s->unsent.cpu_zones += s->pending.cpu_zones;
    s->unsent.frame_marks += s->pending.frame_marks;
    s->unsent.messages += s->pending.messages;
    s->pending = (gz_tracy_counts){0};
    gz_tracy_enc_free(&s->enc);
    gz_tracy_enc_init(&s->enc);
    s->turn = turn;
    s->last_tid_entry = 0;
    int64_t now = (int64_t)gz_tracy_now_ns();
    for (unsigned i = 0; i < 65536; i++) {
        ltrack *lt = s->tracks[i];
        if (!lt || !lt->live)
            continue;
        gz_tracy_nest_finish(&lt->nest, drop_end, NULL);
        gz_tracy_nest_init(&lt->nest);
        begin_unit(s, false);
        gz_tracy_enc_gpu_new_context(&s->enc, now, now, 0, 1.0f, lt->ctx,
                                     gz_tracy_ctx_type((gz_track_api)lt->api));
        const gz_tracy_strtab_entry *e = gz_tracy_strtab_get(&s->names.strings, lt->name);
        if (e)
            gz_tracy_enc_gpu_context_name(&s->enc, lt->ctx, e->s, e->len);
    }
}

static void follow_turn(gz_tracy_listen *s)
{
    uint32_t now = gz_tracy_link_turn(s->link);
    if (now != s->turn)
        new_turn(s, now);
}

static void l_flush(void *self)
{
    gz_tracy_listen *s = self;
    follow_turn(s);
    answer_queries(s);
    cut(s);
    s->queued = gz_tracy_link_queued(s->link);
}

static void log_counts(const char *who, const gz_tracy_counts *c, const char *after)
{
    gz_log("Tracy: %s %llu GPU zones, %llu CPU zones, %llu frame marks, %llu messages%s", who,
           (unsigned long long)c->gpu_zones, (unsigned long long)c->cpu_zones,
           (unsigned long long)c->frame_marks, (unsigned long long)c->messages, after);
}

/* What each profiler took, what none took, and who was turned away. */
static void report(gz_tracy_listen *s, const gz_tracy_link_totals *lt)
{
    uint32_t shown = lt->npeers < GZ_TRACY_MAX_PEERS ? lt->npeers : GZ_TRACY_MAX_PEERS;
    gz_tracy_counts taken = {0};
    for (uint32_t i = 0; i < shown; i++) {
        const gz_tracy_peer_report *p = &lt->peers[i];
        char who[64], after[192];
        if (lt->npeers == 1)
            snprintf(who, sizeof who, "the profiler took");
        else
            snprintf(who, sizeof who, "profiler %u of %u took", i + 1, lt->npeers);
        snprintf(after, sizeof after, " (%llu bytes, %llu on the wire) from %s%s",
                 (unsigned long long)p->bytes_in, (unsigned long long)p->bytes_out, p->addr,
                 p->got_final && p->left ? "" : "; it did not take everything");
        log_counts(who, &p->took, after);
        taken.gpu_zones += p->took.gpu_zones;
        taken.cpu_zones += p->took.cpu_zones;
        taken.frame_marks += p->took.frame_marks;
        taken.messages += p->took.messages;
    }
    gz_tracy_counts none = {
        .gpu_zones = s->sent.gpu_zones - taken.gpu_zones + s->unsent.gpu_zones,
        .cpu_zones = s->sent.cpu_zones - taken.cpu_zones + s->unsent.cpu_zones,
        .frame_marks = s->sent.frame_marks - taken.frame_marks + s->unsent.frame_marks,
        .messages = s->sent.messages - taken.messages + s->unsent.messages,
    };
    if (!lt->npeers || none.gpu_zones || none.cpu_zones || none.frame_marks || none.messages)
        log_counts("no profiler took", &none, "");
    if (lt->no_handshake || lt->turned_away)
        gz_log("Tracy: %u connections closed without a Tracy handshake within %u ms, %u "
               "profilers turned away while another was connected",
               lt->no_handshake, GZ_TRACY_HANDSHAKE_MS, lt->turned_away);
    uint64_t dropped = s->drop_budget + s->drop_contexts + s->drop_lanes + s->drop_cpu_order;
    if (dropped || s->drop_marks || s->drop_names || s->enc.failed)
        gz_log("Tracy: dropped %llu zones (%llu while %zu MiB waited for a profiler, %llu past "
               "%u GPU contexts, %llu nested too deep, %llu CPU zones out of their thread's "
               "order), %llu frame marks out of order, %llu names past the table%s",
               (unsigned long long)dropped, (unsigned long long)s->drop_budget, s->budget >> 20,
               (unsigned long long)s->drop_contexts, MAX_CONTEXTS,
               (unsigned long long)s->drop_lanes, (unsigned long long)s->drop_cpu_order,
               (unsigned long long)s->drop_marks, (unsigned long long)s->drop_names,
               s->enc.failed ? "; out of memory" : "");
}

/* Tells the profiler this is all; it then asks for the names it still
 * lacks and leaves when it has everything. */
static void send_end(gz_tracy_listen *s)
{
    begin_unit(s, false);
    gz_tracy_enc_bare(&s->enc, GZ_TQ_TERMINATE);
    s->final = true;
    cut(s);
}

static void l_close(void *self, const gz_sink_totals *totals)
{
    gz_tracy_listen *s = self;
    for (unsigned i = 0; i < 65536; i++)
        if (s->tracks[i] && s->tracks[i]->live)
            finish_track(s, s->tracks[i]);
    follow_turn(s);
    send_end(s);
    /* Until the profiler has everything, or the wait is over. The wait is
     * progress to the exit's guard: the worker is not stuck. A profiler
     * that leaves early makes room for another, which gets the end. */
    uint64_t deadline = gz_tracy_now_ns() + (uint64_t)s->exit_wait_ms * 1000000ull;
    while (!gz_tracy_link_delivered(s->link, s->turn)) {
        uint64_t now = gz_tracy_now_ns();
        if (now >= deadline)
            break;
        if (s->progress)
            __atomic_fetch_add(s->progress, 1, __ATOMIC_RELAXED);
        if (gz_tracy_link_turn(s->link) != s->turn) {
            follow_turn(s);
            send_end(s);
        }
        answer_queries(s);
        cut(s);
        uint64_t left_ms = (deadline - now) / 1000000ull;
        gz_tracy_link_wait(s->link, left_ms < 10 ? (uint32_t)left_ms + 1 : 10);
    }
    gz_tracy_link_totals lt;
    gz_tracy_link_close(s->link, &lt);
    report(s, &lt);
    (void)totals;
    gz_tracy_enc_free(&s->enc);
    gz_tracy_names_free(&s->names);
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

bool gz_tracy_listen_open(const gz_config *cfg, size_t budget, uint64_t *progress, gz_sink *out)
{
    gz_tracy_listen *s = calloc(1, sizeof *s);
    if (!s)
        return false;
    gz_tracy_enc_init(&s->enc);
    bool ok = gz_tracy_names_init(&s->names, MAX_SRCLOCS);
    gz_tracy_strtab_init(&s->cpu_last, 1u << 16, 64u << 20);
    gz_tracy_strtab_init(&s->marks, 1u << 12, 64u << 20);
    s->budget = budget;
    s->progress = progress;
    s->turn = 1;
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
        s->link = gz_tracy_link_open(cfg->tracy_addr, cfg->tracy_port, welcome, program, w.pid);
    if (!s->link) {
        gz_tracy_enc_free(&s->enc);
        gz_tracy_names_free(&s->names);
        gz_tracy_strtab_free(&s->cpu_last);
        gz_tracy_strtab_free(&s->marks);
        free(s);
        return false;
    }
    bool wide = gz_tracy_link_widened(s->link);
    gz_log("Tracy: no Tracy client in the program; gpuzones is one: a Tracy v%s profiler "
           "(protocol %u) can connect to %s port %u%s",
           GZ_TRACY_VERSION_TEXT, GZ_TRACY_PROTOCOL, cfg->tracy_addr, gz_tracy_link_port(s->link),
           wide ? " (announced by UDP broadcast)"
                : " (this machine only: GPUZONES_TRACY_ADDR widens it)");
    out->ops = &listen_ops;
    out->self = s;
    return true;
}
