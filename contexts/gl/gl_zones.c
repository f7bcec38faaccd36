/* GL zones: timestamp queries on a ring, begin/end pairing, frames, the
 * non-blocking readback and the clock samples.
 *
 * Sequence numbers name queries: query seq lives in queries[seq % RING].
 * A slot is free again once its zone has been emitted; results are read in
 * issue order (GL finishes commands in order), so the oldest query still
 * needed is the smallest of: the next one to read, the begins of open
 * zones and of the open frame, and the begins of ended zones that wait for
 * their end's result. */
#include <time.h>

#include "gz_calibration.h"
#include "gz_gl_internal.h"

/* At most one clock sample per context this often: glGetInteger64v
 * (GL_TIMESTAMP) makes some drivers wait for the GPU. */
#define CALIB_PERIOD_NS 100000000ull
/* How long a context that goes away may wait for its last results. */
#define FINAL_WAIT_NS 20000000ull

static uint64_t oldest_needed(const gz_gl_ctx *c)
{
    uint64_t t = c->read;
    for (uint32_t i = 0; i < c->depth; i++)
        if (c->open[i].begin_seq < t)
            t = c->open[i].begin_seq;
    if (c->frame_open && c->frame_begin_seq < t)
        t = c->frame_begin_seq;
    for (uint64_t p = c->p_tail; p < c->p_head; p++)
        if (c->pending[p % GZ_GL_PENDING].begin_seq < t)
            t = c->pending[p % GZ_GL_PENDING].begin_seq;
    return t;
}

/* One timestamp query; false when the ring is full. */
static bool issue(gz_gl_ctx *c, uint64_t *seq, uint64_t *host_ns)
{
    /* The oldest needed query only moves forward: a stale value is a safe
     * bound, recomputed only when it says the ring is full. */
    if (c->head - c->tail >= GZ_GL_RING) {
        c->tail = oldest_needed(c);
        if (c->head - c->tail >= GZ_GL_RING)
            return false;
    }
    *host_ns = gz_host_now_ns();
    c->fns.QueryCounter(c->queries[c->head % GZ_GL_RING], GL_TIMESTAMP);
    *seq = c->head++;
    return true;
}

static void drop(gz_gl_ctx *c, uint64_t n)
{
    static int once;
    gz_log_once(&once, "GL query ring full (more than %u open or unread timestamps on a "
                       "context): zones dropped",
                GZ_GL_RING);
    gz_count_dropped_zones(c->track, n);
}

static void finish(gz_gl_ctx *c, uint64_t begin_seq, uint64_t host_begin, uint32_t name,
                   uint8_t kind, bool srcloc)
{
    uint64_t end_seq, host_end;
    if (begin_seq == GZ_GL_NO_SEQ)
        return; /* counted when it was dropped */
    if (c->p_head - c->p_tail >= GZ_GL_PENDING || !issue(c, &end_seq, &host_end)) {
        drop(c, 1);
        return;
    }
    c->pending[c->p_head++ % GZ_GL_PENDING] = (gz_gl_pending){
        .begin_seq = begin_seq, .end_seq = end_seq, .host_begin = host_begin,
        .name = name, .kind = kind, .srcloc = srcloc};
}

uint32_t gz_gl_zone_begin(gz_gl_ctx *c, uint32_t name, gz_zone_kind kind, bool srcloc,
                          gz_gl_tag tag)
{
    if (!c || atomic_load(&c->dead))
        return 0;
    static int deep_once;
    pthread_mutex_lock(&c->lock);
    uint32_t token = 0;
    if (c->depth == GZ_GL_STACK) {
        gz_log_once(&deep_once, "GL zones nested deeper than %u: inner zones dropped",
                    GZ_GL_STACK);
        gz_count_dropped_zones(c->track, 1);
    } else {
        gz_gl_open *o = &c->open[c->depth++];
        if (++c->next_token == 0)
            c->next_token = 1;
        token = c->next_token;
        /* No begin_seq yet: 0 would make issue() below, when it recomputes
         * the ring's tail, think query 0 is still needed and the ring full. */
        *o = (gz_gl_open){.name = name, .token = token, .kind = (uint8_t)kind,
                          .tag = (uint8_t)tag, .srcloc = srcloc, .begin_seq = GZ_GL_NO_SEQ};
        /* A dropped begin still takes its place on the stack, so that
         * GL's pops (by position) end the right zones. */
        if (!issue(c, &o->begin_seq, &o->host_begin)) {
            o->begin_seq = GZ_GL_NO_SEQ;
            drop(c, 1);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return token;
}

static void end_at(gz_gl_ctx *c, uint32_t i)
{
    gz_gl_open o = c->open[i];
    for (uint32_t j = i + 1; j < c->depth; j++)
        c->open[j - 1] = c->open[j];
    c->depth--;
    finish(c, o.begin_seq, o.host_begin, o.name, o.kind, o.srcloc);
}

void gz_gl_zone_end(gz_gl_ctx *c, uint32_t token)
{
    if (!c || !token)
        return;
    pthread_mutex_lock(&c->lock);
    for (uint32_t i = c->depth; i-- > 0;)
        if (c->open[i].token == token) {
            end_at(c, i);
            break;
        }
    pthread_mutex_unlock(&c->lock);
}

void gz_gl_zone_end_tag(gz_gl_ctx *c, gz_gl_tag tag)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    for (uint32_t i = c->depth; i-- > 0;)
        if (c->open[i].tag == tag) {
            end_at(c, i);
            break;
        }
    pthread_mutex_unlock(&c->lock);
}

uint32_t gz_gl_zone_count_tag(gz_gl_ctx *c, gz_gl_tag tag)
{
    if (!c)
        return 0;
    pthread_mutex_lock(&c->lock);
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->depth; i++)
        n += c->open[i].tag == tag;
    pthread_mutex_unlock(&c->lock);
    return n;
}

/* A sync point: GL_TIMESTAMP is the GPU's time "now", taken between the two
 * host reads. */
static void calibrate(gz_gl_ctx *c, uint64_t now)
{
    if (!c->fns.GetInteger64v || now - c->last_calib_ns < CALIB_PERIOD_NS)
        return;
    c->last_calib_ns = now;
    GLint64 t = 0;
    uint64_t a = gz_host_now_ns();
    c->fns.GetInteger64v(GL_TIMESTAMP, &t);
    uint64_t b = gz_host_now_ns();
    gz_item it = {.type = GZ_ITEM_CALIB,
                  .flags = GZ_CALIB_SYNC_POINT,
                  .track = c->track,
                  .calib = {.ticks = (uint64_t)t & c->mask,
                            .host_ns = a + (b - a) / 2,
                            .deviation_ns = (b - a + 1) / 2}};
    gz_emit(&it);
}

static void collect_locked(gz_gl_ctx *c, bool all)
{
    static int disjoint_once;
    const gz_gl_fns *f = &c->fns;
    uint64_t limit = all ? c->head : c->flushed;
    calibrate(c, gz_host_now_ns());
    if (c->read >= limit)
        return;
    /* With a buffer bound to GL_QUERY_BUFFER, glGetQueryObject* would write
     * into it: unbind it around the readback and put it back. */
    GLint qbuf = 0;
    if (c->query_buffer) {
        f->GetIntegerv(GL_QUERY_BUFFER_BINDING, &qbuf);
        if (qbuf)
            f->BindBuffer(GL_QUERY_BUFFER, 0);
    }
    uint64_t first = c->read;
    while (c->read < limit) {
        GLuint q = c->queries[c->read % GZ_GL_RING];
        GLint avail = 0;
        f->GetQueryObjectiv(q, GL_QUERY_RESULT_AVAILABLE, &avail);
        if (!avail)
            break;
        uint64_t seen = gz_host_now_ns();
        GLuint64 v = 0;
        f->GetQueryObjectui64v(q, GL_QUERY_RESULT, &v);
        c->values[c->read % GZ_GL_RING] = (uint64_t)v & c->mask;
        c->seen_ns[c->read % GZ_GL_RING] = seen;
        c->read++;
    }
    if (qbuf)
        f->BindBuffer(GL_QUERY_BUFFER, (GLuint)qbuf);
    bool discard = false;
    if (c->disjoint && c->read > first) {
        /* EXT_disjoint_timer_query: a disjoint event (frequency change,
         * power state) makes the results read since the last check
         * meaningless. Reading the flag clears it for the app as well:
         * there is no way to look without touching. */
        GLint dj = 0;
        f->GetIntegerv(GL_GPU_DISJOINT_EXT, &dj);
        if (dj) {
            discard = true;
            gz_log_once(&disjoint_once, "GL disjoint timer event: zones of that time dropped");
        }
    }
    gz_item items[3];
    while (c->p_tail < c->p_head) {
        const gz_gl_pending *p = &c->pending[c->p_tail % GZ_GL_PENDING];
        if (p->end_seq >= c->read)
            break;
        c->p_tail++;
        if (discard && p->end_seq >= first) {
            gz_count_dropped_zones(c->track, 1);
            continue;
        }
        uint64_t b = c->values[p->begin_seq % GZ_GL_RING];
        uint64_t e = c->values[p->end_seq % GZ_GL_RING];
        uint8_t flags = (uint8_t)((p->kind << GZ_ITEM_KIND_SHIFT) & GZ_ITEM_KIND_MASK);
        if (p->srcloc)
            flags |= GZ_ITEM_F_SRCLOC;
        items[0] = (gz_item){.type = GZ_ITEM_GPU_BOUND, .flags = GZ_ITEM_F_NOT_BEFORE,
                             .track = c->track, .bound = {.ticks = b, .host_ns = p->host_begin}};
        items[1] = (gz_item){.type = GZ_ITEM_GPU_BOUND, .flags = GZ_ITEM_F_NOT_AFTER,
                             .track = c->track,
                             .bound = {.ticks = e, .host_ns = c->seen_ns[p->end_seq % GZ_GL_RING]}};
        items[2] = (gz_item){.type = GZ_ITEM_GPU_ZONE, .flags = flags, .track = c->track,
                             .name = p->name, .zone = {.begin_ticks = b, .end_ticks = e}};
        if (!gz_emit_n(items, 3))
            gz_count_dropped_zones(c->track, 1);
    }
}

void gz_gl_collect(gz_gl_ctx *c, bool flush_all)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    collect_locked(c, flush_all);
    pthread_mutex_unlock(&c->lock);
}

void gz_gl_frame_boundary(gz_gl_ctx *c, bool before_swap)
{
    static int open_once;
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    if (before_swap) {
        if (c->frame_open) {
            c->frame_open = false;
            if (c->depth) {
                /* A group open across the swap: a frame zone would overlap
                 * it partially, so this frame has none. */
                gz_log_once(&open_once, "a GL debug group or zone is open across a swap: "
                                        "no frame zone for that frame");
            } else {
                finish(c, c->frame_begin_seq, c->frame_host_begin, c->frame_name,
                       GZ_ZONE_SUBMIT, false);
            }
        }
    } else {
        /* A swap of a window surface flushed everything issued before it;
         * a swap of a pbuffer does nothing at all (EGL), and on llvmpipe the
         * frame's queries then wait unflushed until the scene fills: they
         * never became available and the ring ran full (a pbuffer program
         * with 20 groups a frame and no readback lost 12 % of its zones).
         * A flush is not observable by the program and costs nothing
         * after a window swap. */
        c->fns.Flush();
        c->flushed = c->head;
        collect_locked(c, false);
        if (!c->frame_open && !c->depth && !atomic_load(&c->dead))
            c->frame_open = issue(c, &c->frame_begin_seq, &c->frame_host_begin);
    }
    pthread_mutex_unlock(&c->lock);
}

void gz_gl_collect_final(gz_gl_ctx *c)
{
    pthread_mutex_lock(&c->lock);
    c->frame_open = false;
    c->fns.Flush();
    uint64_t want = c->p_head > c->p_tail ? c->pending[(c->p_head - 1) % GZ_GL_PENDING].end_seq + 1
                                          : c->read;
    uint64_t start = gz_host_now_ns();
    for (;;) {
        collect_locked(c, true);
        if (c->read >= want || gz_host_now_ns() - start > FINAL_WAIT_NS)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    pthread_mutex_unlock(&c->lock);
}

uint64_t gz_gl_zones_unread(gz_gl_ctx *c)
{
    return (c->p_head - c->p_tail) + c->depth;
}
