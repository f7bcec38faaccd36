/* GL zones: timestamp queries on a ring, begin/end pairing, frames and the
 * zones between flushes, the non-blocking readback and the clock samples.
 *
 * Sequence numbers name queries: query seq lives in queries[seq % RING].
 * Results are read in issue order (GL finishes commands in order). A
 * zone's begin value is copied into the zone's record as soon as it is
 * read, so the ring holds only queries not read yet: a slot is free once
 * read, however long its zone stays open (a frame, or a group around the
 * whole program, never holds the ring). */
#include <stdlib.h>
#include <time.h>

#include "gz_calibration.h"
#include "gz_gl_internal.h"

/* At most one clock sample per context this often: glGetInteger64v
 * (GL_TIMESTAMP) makes some drivers wait for the GPU. */
#define CALIB_PERIOD_NS 100000000ull
/* How long a context that goes away may wait for its last results. */
#define FINAL_WAIT_NS 20000000ull

static void collect_locked(gz_gl_ctx *c, bool all);

/* A quarter of the ring issued since the program last flushed: a program that
 * never swaps, flushes or reads back (llvmpipe then keeps every query
 * unstamped until its scene fills) would otherwise fill the ring and lose
 * every later zone. The context flushes and reads what is done (on
 * llvmpipe, what the flush a quarter ring earlier sent: the flush just made
 * is still being rasterised, so a half-ring step left the ring full and
 * dropped 31 % of 100 000 tiny groups). A flush is
 * not observable by the program (it splits the driver's batch, which only
 * a program issuing thousands of timestamps between flushes sees). */
static void relieve(gz_gl_ctx *c)
{
    c->fns.Flush();
    c->flushed = c->head;
    collect_locked(c, false);
}

bool gz_gl_zones_init(gz_gl_ctx *c)
{
    c->ring = GZ_GL_RING;
    c->pcap = GZ_GL_PENDING;
    c->slots = calloc(c->ring, sizeof *c->slots);
    c->pending = calloc(c->pcap, sizeof *c->pending);
    GLuint *names = malloc(c->ring * sizeof *names);
    if (!c->slots || !c->pending || !names) {
        free(names);
        gz_gl_zones_free(c);
        return false;
    }
    c->fns.GenQueries((GLsizei)c->ring, names);
    for (uint32_t i = 0; i < c->ring; i++)
        c->slots[i].query = names[i];
    free(names);
    return true;
}

void gz_gl_zones_free(gz_gl_ctx *c)
{
    free(c->slots);
    free(c->pending);
    c->slots = NULL;
    c->pending = NULL;
}

/* Doubles the ring when it is full (so head >= ring; the context is
 * current: new query names). Every slot moves to where its sequence number
 * now lives: the unread queries, and the values read last that a zone may
 * still copy (keep_value). */
static bool grow_ring(gz_gl_ctx *c)
{
    if (c->ring >= GZ_GL_RING_MAX)
        return false;
    uint32_t size = 2 * c->ring;
    gz_gl_slot *slots = calloc(size, sizeof *slots);
    GLuint *names = malloc(c->ring * sizeof *names);
    if (!slots || !names) {
        free(slots);
        free(names);
        return false;
    }
    for (uint64_t seq = c->head - c->ring; seq < c->head; seq++)
        slots[seq % size] = c->slots[seq % c->ring];
    /* The other half of the new ring gets new query objects. */
    c->fns.GenQueries((GLsizei)c->ring, names);
    uint32_t k = 0;
    for (uint64_t seq = c->head; seq < c->head + c->ring; seq++)
        slots[seq % size].query = names[k++];
    free(names);
    free(c->slots);
    c->slots = slots;
    c->ring = size;
    return true;
}

static bool grow_pending(gz_gl_ctx *c)
{
    if (c->pcap >= GZ_GL_PENDING_MAX)
        return false;
    uint32_t cap = 2 * c->pcap;
    gz_gl_pending *p = malloc(cap * sizeof *p);
    if (!p)
        return false;
    for (uint64_t i = c->p_tail; i < c->p_head; i++)
        p[i % cap] = c->pending[i % c->pcap];
    free(c->pending);
    c->pending = p;
    c->pcap = cap;
    return true;
}

/* One timestamp query; false when the ring is full of queries not read
 * and cannot grow. */
static bool issue(gz_gl_ctx *c, gz_gl_stamp *at)
{
    if (c->head - c->flushed >= c->ring / 4)
        relieve(c);
    else if (c->head - c->read >= c->ring)
        collect_locked(c, false);
    if (c->head - c->read >= c->ring && !grow_ring(c))
        return false;
    at->host_ns = gz_host_now_ns();
    c->fns.QueryCounter(c->slots[c->head % c->ring].query, GL_TIMESTAMP);
    at->seq = c->head++;
    at->have = false;
    return true;
}

static void drop(gz_gl_ctx *c, uint64_t n)
{
    static int once;
    gz_log_once(&once, "GL query ring full (%u timestamps on a context not read back yet, "
                       "or %u zones waiting for them): zones dropped",
                GZ_GL_RING_MAX, GZ_GL_PENDING_MAX);
    gz_count_dropped_zones(c->track, n);
}

/* Copies a begin's value out of the ring once it was read. */
static void keep_value(const gz_gl_ctx *c, gz_gl_stamp *s)
{
    if (!s->have && s->seq != GZ_GL_NO_SEQ && s->seq < c->read) {
        s->value = c->slots[s->seq % c->ring].value;
        s->have = true;
    }
}

static bool pending_room(gz_gl_ctx *c)
{
    return c->p_head - c->p_tail < c->pcap || grow_pending(c);
}

static void push_pending(gz_gl_ctx *c, const gz_gl_pending *p)
{
    if (!pending_room(c)) {
        drop(c, 1);
        return;
    }
    c->pending[c->p_head++ % c->pcap] = *p;
}

/* Ends a zone that began at begin: issues its end query. False (counted)
 * when it cannot. */
static bool end_zone(gz_gl_ctx *c, const gz_gl_stamp *begin, uint32_t name, uint8_t kind,
                     bool srcloc, gz_gl_pending *out)
{
    gz_gl_stamp b = *begin, end;
    if (b.seq == GZ_GL_NO_SEQ)
        return false; /* counted when it was dropped */
    if (!pending_room(c) || !issue(c, &end)) {
        drop(c, 1);
        return false;
    }
    /* issue() may have read the begin back and reused its slot for the
     * end: its value is still there (values are written when read). */
    keep_value(c, &b);
    *out = (gz_gl_pending){.begin = b, .end_seq = end.seq, .name = name, .kind = kind,
                           .srcloc = srcloc};
    return true;
}

static void finish(gz_gl_ctx *c, const gz_gl_stamp *begin, uint32_t name, uint8_t kind,
                   bool srcloc)
{
    gz_gl_pending p;
    if (end_zone(c, begin, name, kind, srcloc, &p))
        push_pending(c, &p);
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
        /* No query yet: issue() may read back, and must not take this
         * record's begin for one it has. */
        *o = (gz_gl_open){.name = name, .token = token, .kind = (uint8_t)kind,
                          .tag = (uint8_t)tag, .srcloc = srcloc,
                          .begin = {.seq = GZ_GL_NO_SEQ}};
        /* A dropped begin still takes its place on the stack, so that
         * GL's pops (by position) end the right zones. */
        gz_gl_stamp at;
        if (issue(c, &at))
            o->begin = at;
        else
            drop(c, 1);
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
    finish(c, &o.begin, o.name, o.kind, o.srcloc);
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
    gz_emit_sync_point(c->track, (uint64_t)t & c->mask, a, b);
}

/* Every record whose begin was just read takes its value: the ring slot
 * may be used again from now on. */
static void keep_values(gz_gl_ctx *c)
{
    for (uint32_t i = 0; i < c->depth; i++)
        keep_value(c, &c->open[i].begin);
    if (c->frame_open)
        keep_value(c, &c->frame_begin);
    if (c->iv_open)
        keep_value(c, &c->iv_begin);
    if (c->held)
        keep_value(c, &c->held_zone.begin);
    for (uint64_t p = c->p_tail; p < c->p_head; p++)
        keep_value(c, &c->pending[p % c->pcap].begin);
}

static void emit(gz_gl_ctx *c, const gz_gl_pending *p)
{
    const gz_gl_slot *end = &c->slots[p->end_seq % c->ring];
    uint64_t b = p->begin.value, e = end->value;
    uint8_t flags = (uint8_t)((p->kind << GZ_ITEM_KIND_SHIFT) & GZ_ITEM_KIND_MASK);
    if (p->srcloc)
        flags |= GZ_ITEM_F_SRCLOC;
    gz_item items[4];
    items[0] = gz_item_bound(c->track, true, b, p->begin.host_ns);
    uint64_t seen = p->done_ns && p->done_ns < end->seen_ns ? p->done_ns : end->seen_ns;
    items[1] = gz_item_bound(c->track, false, e, seen);
    items[2] = (gz_item){.type = GZ_ITEM_GPU_ZONE, .flags = flags, .track = c->track,
                         .name = p->name, .zone = {.begin_ticks = b, .end_ticks = e}};
    items[3] = gz_item_wait_flow(c->track, p->wait_flow);
    if (!gz_emit_n(items, p->wait_flow ? 4 : 3))
        gz_count_dropped_zones(c->track, 1);
}

/* Emits the ended zones whose end was read (in end order); those ending
 * at or after discard_from are dropped (a disjoint event). */
static void emit_ready(gz_gl_ctx *c, uint64_t discard_from)
{
    while (c->p_tail < c->p_head) {
        const gz_gl_pending *p = &c->pending[c->p_tail % c->pcap];
        if (p->end_seq >= c->read)
            break;
        c->p_tail++;
        if (p->end_seq >= discard_from)
            gz_count_dropped_zones(c->track, 1);
        else
            emit(c, p);
    }
}

static void collect_locked(gz_gl_ctx *c, bool all)
{
    static int disjoint_once;
    const gz_gl_fns *f = &c->fns;
    uint64_t limit = all ? c->head : c->flushed;
    calibrate(c, gz_host_now_ns());
    if (c->read >= limit) {
        emit_ready(c, GZ_GL_NO_SEQ); /* a zone let go after its end was read */
        return;
    }
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
        gz_gl_slot *slot = &c->slots[c->read % c->ring];
        GLint avail = 0;
        f->GetQueryObjectiv(slot->query, GL_QUERY_RESULT_AVAILABLE, &avail);
        if (!avail)
            break;
        uint64_t seen = gz_host_now_ns();
        GLuint64 v = 0;
        f->GetQueryObjectui64v(slot->query, GL_QUERY_RESULT, &v);
        slot->value = (uint64_t)v & c->mask;
        slot->seen_ns = seen;
        c->read++;
    }
    if (qbuf)
        f->BindBuffer(GL_QUERY_BUFFER, (GLuint)qbuf);
    if (c->read == first) {
        emit_ready(c, GZ_GL_NO_SEQ); /* a zone let go after its end was read */
        return;
    }
    keep_values(c);
    bool discard = false;
    if (c->disjoint) {
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
    emit_ready(c, discard ? first : GZ_GL_NO_SEQ);
}

void gz_gl_collect(gz_gl_ctx *c, bool flush_all)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    collect_locked(c, flush_all);
    pthread_mutex_unlock(&c->lock);
}

/* The first zone between flushes is held back: a program that flushes
 * once before its first swap gets frames only. A second flush before any
 * swap (or the context's end) lets it go. */
static void release_held(gz_gl_ctx *c)
{
    if (!c->held)
        return;
    c->held = false;
    push_pending(c, &c->held_zone);
    c->iv_calls |= (uint8_t)(1u << c->held_call);
}

void gz_gl_frame_boundary(gz_gl_ctx *c, bool before_swap)
{
    static int open_once;
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    if (before_swap) {
        if (!atomic_load(&c->swapped)) {
            /* From the first swap on, frames are the zones: a zone between
             * flushes still open, or held back, is not one. */
            atomic_store(&c->swapped, true);
            c->iv_open = false;
            c->held = false;
        }
        if (c->frame_open) {
            c->frame_open = false;
            if (c->depth) {
                /* A group open across the swap: a frame zone would overlap
                 * it partially, so this frame has none. */
                gz_log_once(&open_once, "a GL debug group or zone is open across a swap: "
                                        "no frame zone for that frame");
            } else {
                finish(c, &c->frame_begin, c->frame_name, GZ_ZONE_FRAME, false);
                if (!c->made_frames) {
                    c->made_frames = true;
                    gz_gl_ctx_note(c);
                }
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
        bool swapped = atomic_load(&c->swapped);
        bool opened = false;
        if (!c->frame_open && !c->depth && !atomic_load(&c->dead) &&
            (swapped || !c->by_flushes))
            opened = c->frame_open = issue(c, &c->frame_begin);
        /* Before the first swap, a zone between flushes begins here too
         * (at the frame's begin, when one began). */
        if (!swapped && !c->iv_open && !c->depth && !atomic_load(&c->dead)) {
            if (opened) {
                c->iv_begin = c->frame_begin;
                c->iv_open = true;
            } else {
                c->iv_open = issue(c, &c->iv_begin);
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
}

void gz_gl_swap_mark(gz_gl_ctx *c)
{
    static uint32_t frame_name;
    if (c)
        gz_frame_mark(gz_intern_once(&frame_name, "frame"));
}

void gz_gl_waited(gz_gl_ctx *c, uint64_t done_ns)
{
    if (!c)
        return;
    uint64_t flow = 0;
    pthread_mutex_lock(&c->lock);
    /* Every zone that had ended was done when glFinish returned: a bound
     * for the clock as tight as the program's view. */
    for (uint64_t i = c->p_tail; i < c->p_head; i++)
        if (!c->pending[i % c->pcap].done_ns)
            c->pending[i % c->pcap].done_ns = done_ns;
    if (c->held && !c->held_zone.done_ns)
        c->held_zone.done_ns = done_ns;
    gz_gl_pending *z = c->p_head > c->p_tail ? &c->pending[(c->p_head - 1) % c->pcap] : NULL;
    if (c->held && (!z || c->held_zone.end_seq > z->end_seq))
        z = &c->held_zone; /* the first zone between flushes, held back */
    if (z && !z->wait_flow)
        flow = z->wait_flow = gz_flow_next();
    pthread_mutex_unlock(&c->lock);
    if (flow)
        gz_flow_in(flow, done_ns);
}

bool gz_gl_ctx_swapped(const gz_gl_ctx *c)
{
    return atomic_load(&c->swapped);
}

void gz_gl_sync_point(gz_gl_ctx *c, gz_gl_sync call, bool before_call)
{
    if (!c || call >= GZ_GL_SYNC_COUNT || atomic_load(&c->swapped) || atomic_load(&c->dead))
        return;
    pthread_mutex_lock(&c->lock);
    if (before_call) {
        /* A group open across the call: the zone goes on to the next one
         * (it would overlap the group partially). */
        gz_gl_pending z;
        if (c->iv_open && !c->depth) {
            c->iv_open = false;
            if (end_zone(c, &c->iv_begin, c->sync_names[call], GZ_ZONE_FLUSH, false, &z)) {
                if (c->iv_ended++ == 0) {
                    c->held = true;
                    c->held_zone = z;
                    c->held_call = (uint8_t)call;
                } else {
                    /* Timed by its flushes: frame 0, begun when the context
                     * was made current, is no frame of this program. */
                    release_held(c);
                    push_pending(c, &z);
                    c->iv_calls |= (uint8_t)(1u << call);
                    c->by_flushes = true;
                    c->frame_open = false;
                    gz_gl_ctx_note(c);
                }
            }
        }
    } else {
        /* glFlush and glFinish flushed what was issued before them; after a
         * fence or a read-back (which may use a pixel-pack buffer and not
         * flush), the context flushes, so that the zone just ended is read
         * back at the next such call at the latest. */
        if (call != GZ_GL_SYNC_FLUSH && call != GZ_GL_SYNC_FINISH)
            c->fns.Flush();
        c->flushed = c->head;
        collect_locked(c, false);
        if (!c->iv_open && !c->depth)
            c->iv_open = issue(c, &c->iv_begin);
    }
    pthread_mutex_unlock(&c->lock);
}

void gz_gl_collect_final(gz_gl_ctx *c)
{
    pthread_mutex_lock(&c->lock);
    /* A context that never swapped and flushed once: that zone is its
     * only one. */
    if (!atomic_load(&c->swapped) && c->held) {
        release_held(c);
        gz_gl_ctx_note(c);
    }
    c->frame_open = false;
    c->iv_open = false;
    c->fns.Flush();
    c->flushed = c->head;
    uint64_t want = c->p_head > c->p_tail ? c->pending[(c->p_head - 1) % c->pcap].end_seq + 1
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

void gz_gl_at_exit_locked(gz_gl_ctx *c)
{
    /* No GL here (the worker's thread): only what was read back already. */
    if (!atomic_load(&c->swapped))
        release_held(c);
    emit_ready(c, GZ_GL_NO_SEQ);
}

uint64_t gz_gl_zones_unread(gz_gl_ctx *c)
{
    return (c->p_head - c->p_tail) + c->depth + c->held;
}
