/* Encoding and decoding Tracy's items (see gz_tracy_wire.h). Every field is
 * written byte by byte, little-endian, so the layout never depends on the
 * compiler's struct packing. */
#include <stdlib.h>
#include <string.h>

#include "gz_tracy_wire.h"

/* Tracy's ProtocolOffset16Bit / 32Bit: a delta in [2^16, 2^16 + 2^32) is
 * sent as a 32-bit value minus 2^16; larger or negative ones in 64 bits,
 * non-negative ones minus the 32-bit offset. */
#define OFF16 (1ll << 16)
#define OFF32 ((1ll << 16) + (1ll << 32))

void gz_tracy_enc_init(gz_tracy_enc *e)
{
    memset(e, 0, sizeof *e);
}

void gz_tracy_enc_free(gz_tracy_enc *e)
{
    free(e->buf);
    memset(e, 0, sizeof *e);
}

gz_tracy_enc_mark gz_tracy_enc_save(const gz_tracy_enc *e)
{
    return (gz_tracy_enc_mark){e->len,     e->ref_thread, e->ref_serial,
                               e->ref_gpu, e->thread,     e->have_thread};
}

void gz_tracy_enc_undo(gz_tracy_enc *e, const gz_tracy_enc_mark *m)
{
    e->len = m->len;
    e->ref_thread = m->ref_thread;
    e->ref_serial = m->ref_serial;
    e->ref_gpu = m->ref_gpu;
    e->thread = m->thread;
    e->have_thread = m->have_thread;
}

/* Room for n more bytes; NULL (and failed set) when memory ran out. */
static uint8_t *room(gz_tracy_enc *e, size_t n)
{
    if (e->failed)
        return NULL;
    if (e->len + n > e->cap) {
        size_t cap = e->cap ? e->cap : 4096;
        while (cap < e->len + n)
            cap *= 2;
        uint8_t *b = realloc(e->buf, cap);
        if (!b) {
            e->failed = true;
            return NULL;
        }
        e->buf = b;
        e->cap = cap;
    }
    uint8_t *p = e->buf + e->len;
    e->len += n;
    return p;
}

static uint8_t *put8(uint8_t *p, uint8_t v)
{
    *p = v;
    return p + 1;
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + 4;
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + 8;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void thread_ctx(gz_tracy_enc *e, uint32_t tid)
{
    if (e->have_thread && e->thread == tid)
        return;
    uint8_t *p = room(e, 5);
    if (!p)
        return;
    put32(put8(p, GZ_TQ_THREAD_CONTEXT), tid);
    e->thread = tid;
    e->have_thread = true;
    /* The receiver restarts its thread reference at every ThreadContext. */
    e->ref_thread = 0;
}

/* A CPU zone's begin or end: the shortest of the three encodings. */
static void zone_time(gz_tracy_enc *e, uint8_t type64, int64_t ns, bool has_srcloc, uint64_t srcloc)
{
    int64_t dt = ns - e->ref_thread;
    e->ref_thread = ns;
    size_t extra = has_srcloc ? 8 : 0;
    uint8_t *p;
    if (dt >= 0 && dt < OFF16) {
        if (!(p = room(e, 3 + extra)))
            return;
        p = put16(put8(p, (uint8_t)(type64 + 2)), (uint16_t)dt);
    } else if (dt >= 0 && dt < OFF32) {
        if (!(p = room(e, 5 + extra)))
            return;
        p = put32(put8(p, (uint8_t)(type64 + 1)), (uint32_t)(dt - OFF16));
    } else {
        if (!(p = room(e, 9 + extra)))
            return;
        p = put64(put8(p, type64), (uint64_t)(dt >= 0 ? dt - OFF32 : dt));
    }
    if (has_srcloc)
        put64(p, srcloc);
}

void gz_tracy_enc_zone_begin(gz_tracy_enc *e, uint32_t tid, int64_t ns, uint64_t srcloc)
{
    thread_ctx(e, tid);
    zone_time(e, GZ_TQ_ZONE_BEGIN, ns, true, srcloc);
}

void gz_tracy_enc_zone_end(gz_tracy_enc *e, uint32_t tid, int64_t ns)
{
    thread_ctx(e, tid);
    zone_time(e, GZ_TQ_ZONE_END, ns, false, 0);
}

/* The string an item that follows refers to (SingleStringData). */
static void single_string(gz_tracy_enc *e, const char *s, size_t len)
{
    if (len > GZ_TRACY_STRING_MAX)
        len = GZ_TRACY_STRING_MAX;
    uint8_t *p;
    if (len <= 255) {
        if (!(p = room(e, 2 + len)))
            return;
        p = put8(put8(p, GZ_TQ_SINGLE_STRING8), (uint8_t)len);
    } else {
        if (!(p = room(e, 3 + len)))
            return;
        p = put16(put8(p, GZ_TQ_SINGLE_STRING16), (uint16_t)(len - 256));
    }
    if (len)
        memcpy(p, s, len);
}

void gz_tracy_enc_message(gz_tracy_enc *e, uint32_t tid, int64_t ns, const char *text, size_t len)
{
    thread_ctx(e, tid);
    single_string(e, text, len);
    uint8_t *p = room(e, 10);
    if (!p)
        return;
    /* Metadata: severity Info (2) in the high nibble, source User (0). */
    put8(put64(put8(p, GZ_TQ_MESSAGE), (uint64_t)ns), 2u << 4);
}

void gz_tracy_enc_frame_mark(gz_tracy_enc *e, int64_t ns, uint64_t name)
{
    uint8_t *p = room(e, 17);
    if (p)
        put64(put64(put8(p, GZ_TQ_FRAME_MARK), (uint64_t)ns), name);
}

void gz_tracy_enc_gpu_new_context(gz_tracy_enc *e, int64_t cpu_ns, int64_t gpu_time,
                                  uint32_t thread, float period, uint8_t ctx, uint8_t type)
{
    uint8_t *p = room(e, 28);
    if (!p)
        return;
    uint32_t bits;
    memcpy(&bits, &period, 4);
    p = put64(put64(put8(p, GZ_TQ_GPU_NEW_CONTEXT), (uint64_t)cpu_ns), (uint64_t)gpu_time);
    p = put32(put32(p, thread), bits);
    put8(put8(put8(p, ctx), 0 /* no calibration */), type);
}

void gz_tracy_enc_gpu_context_name(gz_tracy_enc *e, uint8_t ctx, const char *name, size_t len)
{
    single_string(e, name, len);
    uint8_t *p = room(e, 2);
    if (p)
        put8(put8(p, GZ_TQ_GPU_CONTEXT_NAME), ctx);
}

void gz_tracy_enc_gpu_begin(gz_tracy_enc *e, int64_t cpu_ns, uint32_t thread, uint16_t query,
                            uint8_t ctx, uint64_t srcloc)
{
    uint8_t *p = room(e, 24);
    if (!p)
        return;
    p = put64(put8(p, GZ_TQ_GPU_ZONE_BEGIN_SERIAL), (uint64_t)(cpu_ns - e->ref_serial));
    e->ref_serial = cpu_ns;
    put64(put8(put16(put32(p, thread), query), ctx), srcloc);
}

void gz_tracy_enc_gpu_end(gz_tracy_enc *e, int64_t cpu_ns, uint32_t thread, uint16_t query,
                          uint8_t ctx)
{
    uint8_t *p = room(e, 16);
    if (!p)
        return;
    p = put64(put8(p, GZ_TQ_GPU_ZONE_END_SERIAL), (uint64_t)(cpu_ns - e->ref_serial));
    e->ref_serial = cpu_ns;
    put8(put16(put32(p, thread), query), ctx);
}

void gz_tracy_enc_gpu_time(gz_tracy_enc *e, int64_t gpu_time, uint16_t query, uint8_t ctx)
{
    uint8_t *p = room(e, 12);
    if (!p)
        return;
    p = put64(put8(p, GZ_TQ_GPU_TIME), (uint64_t)(gpu_time - e->ref_gpu));
    e->ref_gpu = gpu_time;
    put8(put16(p, query), ctx);
}

void gz_tracy_enc_string(gz_tracy_enc *e, uint8_t type, uint64_t ptr, const char *s, size_t len)
{
    if (len > GZ_TRACY_STRING_MAX)
        len = GZ_TRACY_STRING_MAX;
    uint8_t *p = room(e, 11 + len);
    if (!p)
        return;
    p = put16(put64(put8(p, type), ptr), (uint16_t)len);
    if (len)
        memcpy(p, s, len);
}

void gz_tracy_enc_srcloc(gz_tracy_enc *e, uint64_t name, uint64_t function, uint64_t file,
                         uint32_t line, uint32_t color)
{
    uint8_t *p = room(e, 32);
    if (!p)
        return;
    p = put64(put64(put64(put8(p, GZ_TQ_SOURCE_LOCATION), name), function), file);
    p = put32(p, line);
    put8(put8(put8(p, (uint8_t)color), (uint8_t)(color >> 8)), (uint8_t)(color >> 16));
}

void gz_tracy_enc_bare(gz_tracy_enc *e, uint8_t type)
{
    uint8_t *p = room(e, 1);
    if (p)
        *p = type;
}

void gz_tracy_enc_ack_source(gz_tracy_enc *e, uint32_t id)
{
    uint8_t *p = room(e, 5);
    if (p)
        put32(put8(p, GZ_TQ_ACK_SOURCE_CODE_NA), id);
}

static size_t cpy_str(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strnlen(src, cap - 1) : 0;
    memset(dst, 0, cap);
    if (n)
        memcpy(dst, src, n);
    return n;
}

void gz_tracy_welcome(uint8_t out[GZ_TRACY_WELCOME_SIZE], const gz_tracy_welcome_info *w)
{
    double mul = 1.0; /* times are nanoseconds already */
    uint64_t mulbits;
    memcpy(&mulbits, &mul, 8);
    uint8_t *p = put64(out, mulbits);
    p = put64(put64(p, (uint64_t)w->init_begin), (uint64_t)w->init_end);
    p = put64(put64(p, w->resolution_ns), w->epoch_s);
    p = put64(put64(p, w->exec_mtime_s), w->pid);
    p = put64(p, 0); /* sampling period: no sampling */
    p = put8(p, 0);  /* flags: not on demand, no code transfer */
#if defined(__x86_64__)
    p = put8(p, 2); /* CpuArchX64 */
#elif defined(__aarch64__)
    p = put8(p, 4); /* CpuArchArm64 */
#else
    p = put8(p, 0);
#endif
    memset(p, 0, 12 + 4); /* CPU manufacturer and id: not needed to read zones */
    p += 16;
    cpy_str((char *)p, 64, w->program);
    p += 64;
    cpy_str((char *)p, 1024, w->host_info);
}

size_t gz_tracy_broadcast(uint8_t out[GZ_TRACY_BROADCAST_SIZE], uint16_t port, uint64_t pid,
                          int32_t active_s, const char *program)
{
    uint8_t *p = put16(put16(out, GZ_TRACY_BROADCAST_VERSION), port);
    p = put32(put64(put32(p, GZ_TRACY_PROTOCOL), pid), (uint32_t)active_s);
    size_t n = cpy_str((char *)p, 64, program);
    return 20 + n + 1;
}

void gz_tracy_query_parse(const uint8_t in[GZ_TRACY_QUERY_SIZE], gz_tracy_query *q)
{
    q->type = in[0];
    q->ptr = get64(in + 1);
    q->extra = get32(in + 9);
}

void gz_tracy_query_write(uint8_t out[GZ_TRACY_QUERY_SIZE], const gz_tracy_query *q)
{
    put32(put64(put8(out, q->type), q->ptr), q->extra);
}

void gz_tracy_dec_init(gz_tracy_dec *d, const void *data, size_t len)
{
    memset(d, 0, sizeof *d);
    d->p = data;
    d->end = d->p + len;
}

static bool need(const gz_tracy_dec *d, size_t n)
{
    return (size_t)(d->end - d->p) >= n;
}

int gz_tracy_dec_next(gz_tracy_dec *d, gz_tracy_item *it)
{
    for (;;) {
        if (d->p == d->end)
            return 0;
        memset(it, 0, sizeof *it);
        const uint8_t *p = d->p;
        uint8_t t = *p++;
        it->type = t;
        it->thread = d->thread;
        size_t n; /* payload size */
        switch (t) {
        case GZ_TQ_SINGLE_STRING8:
            if (!need(d, 2) || !need(d, 2 + (size_t)p[0]))
                return -1;
            d->single = (const char *)p + 1;
            d->single_len = p[0];
            d->p = p + 1 + p[0];
            continue;
        case GZ_TQ_SINGLE_STRING16:
            if (!need(d, 3))
                return -1;
            n = (size_t)get16(p) + 256;
            if (!need(d, 3 + n))
                return -1;
            d->single = (const char *)p + 2;
            d->single_len = n;
            d->p = p + 2 + n;
            continue;
        case GZ_TQ_THREAD_CONTEXT:
            n = 4;
            if (!need(d, 1 + n))
                return -1;
            d->thread = it->thread = get32(p);
            d->ref_thread = 0;
            break;
        case GZ_TQ_ZONE_BEGIN16:
        case GZ_TQ_ZONE_BEGIN32:
        case GZ_TQ_ZONE_BEGIN:
        case GZ_TQ_ZONE_END16:
        case GZ_TQ_ZONE_END32:
        case GZ_TQ_ZONE_END: {
            bool begin = t <= GZ_TQ_ZONE_BEGIN16;
            int w = (t == GZ_TQ_ZONE_BEGIN16 || t == GZ_TQ_ZONE_END16)   ? 2
                    : (t == GZ_TQ_ZONE_BEGIN32 || t == GZ_TQ_ZONE_END32) ? 4
                                                                         : 8;
            n = (size_t)w + (begin ? 8 : 0);
            if (!need(d, 1 + n))
                return -1;
            int64_t dt = w == 2   ? (int64_t)get16(p)
                         : w == 4 ? (int64_t)get32(p) + OFF16
                                  : (int64_t)get64(p);
            if (w == 8 && dt >= 0)
                dt += OFF32;
            d->ref_thread += dt;
            it->time = d->ref_thread;
            if (begin)
                it->ptr = get64(p + w);
            it->type = begin ? GZ_TQ_ZONE_BEGIN : GZ_TQ_ZONE_END;
            break;
        }
        case GZ_TQ_MESSAGE:
            n = 9;
            if (!need(d, 1 + n))
                return -1;
            it->time = (int64_t)get64(p);
            it->str = d->single;
            it->str_len = d->single_len;
            break;
        case GZ_TQ_FRAME_MARK:
            n = 16;
            if (!need(d, 1 + n))
                return -1;
            it->time = (int64_t)get64(p);
            it->ptr = get64(p + 8);
            break;
        case GZ_TQ_GPU_NEW_CONTEXT: {
            n = 27;
            if (!need(d, 1 + n))
                return -1;
            it->time = (int64_t)get64(p);
            it->time2 = (int64_t)get64(p + 8);
            it->thread = get32(p + 16);
            uint32_t bits = get32(p + 20);
            memcpy(&it->period, &bits, 4);
            it->ctx = p[24];
            it->ctx_type = p[26];
            break;
        }
        case GZ_TQ_GPU_CONTEXT_NAME:
            n = 1;
            if (!need(d, 1 + n))
                return -1;
            it->ctx = p[0];
            it->str = d->single;
            it->str_len = d->single_len;
            break;
        case GZ_TQ_GPU_ZONE_BEGIN_SERIAL:
        case GZ_TQ_GPU_ZONE_END_SERIAL:
            n = t == GZ_TQ_GPU_ZONE_BEGIN_SERIAL ? 23 : 15;
            if (!need(d, 1 + n))
                return -1;
            d->ref_serial += (int64_t)get64(p);
            it->time = d->ref_serial;
            it->thread = get32(p + 8);
            it->query = get16(p + 12);
            it->ctx = p[14];
            if (t == GZ_TQ_GPU_ZONE_BEGIN_SERIAL)
                it->ptr = get64(p + 15);
            break;
        case GZ_TQ_GPU_TIME:
            n = 11;
            if (!need(d, 1 + n))
                return -1;
            d->ref_gpu += (int64_t)get64(p);
            it->time = d->ref_gpu;
            it->query = get16(p + 8);
            it->ctx = p[10];
            break;
        case GZ_TQ_SOURCE_LOCATION:
            n = 31;
            if (!need(d, 1 + n))
                return -1;
            it->ptr = get64(p);
            it->ptr2 = get64(p + 8);
            it->ptr3 = get64(p + 16);
            it->line = get32(p + 24);
            it->color = (uint32_t)p[28] | (uint32_t)p[29] << 8 | (uint32_t)p[30] << 16;
            break;
        case GZ_TQ_STRING_DATA:
        case GZ_TQ_THREAD_NAME:
        case GZ_TQ_FRAME_NAME:
            if (!need(d, 11))
                return -1;
            n = 10 + (size_t)get16(p + 8);
            if (!need(d, 1 + n))
                return -1;
            it->ptr = get64(p);
            it->str = (const char *)p + 10;
            it->str_len = n - 10;
            break;
        case GZ_TQ_TERMINATE:
        case GZ_TQ_KEEP_ALIVE:
        case GZ_TQ_ACK_QUERY_NOOP:
        case GZ_TQ_ACK_SYMBOL_CODE_NA:
            n = 0;
            break;
        case GZ_TQ_ACK_SOURCE_CODE_NA:
            n = 4;
            if (!need(d, 1 + n))
                return -1;
            it->ptr = get32(p);
            break;
        default:
            return -1;
        }
        d->p = p + n;
        return 1;
    }
}
