#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gz_jsonw.h"

void gz_jsonw_init(gz_jsonw *w, int fd)
{
    w->fd = fd;
    w->error = 0;
    w->len = 0;
    w->written = 0;
    w->deadline_ns = NULL;
    w->progress = NULL;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The reader of a non-blocking fd is not ready: waits for room in slices,
 * so that a deadline set meanwhile (the program is exiting) is seen.
 * False once the deadline has passed. */
static bool wait_writable(gz_jsonw *w)
{
    if (!w->deadline_ns)
        return false;
    for (;;) {
        uint64_t deadline = __atomic_load_n(w->deadline_ns, __ATOMIC_ACQUIRE);
        uint64_t now = now_ns();
        if (deadline && now >= deadline)
            return false;
        int ms = 50;
        if (deadline && deadline - now < 50000000ull)
            ms = (int)((deadline - now) / 1000000ull) + 1;
        struct pollfd p = {.fd = w->fd, .events = POLLOUT};
        int r = poll(&p, 1, ms);
        if (r > 0)
            return true; /* room, or an error the next write reports */
        if (r < 0 && errno != EINTR)
            return false;
    }
}

bool gz_jsonw_flush(gz_jsonw *w)
{
    size_t off = 0;
    while (w->fd >= 0 && off < w->len) {
        ssize_t n = write(w->fd, w->buf + off, w->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_writable(w))
                continue;
            errno = ETIMEDOUT;
        }
        if (n <= 0) {
            w->error = n < 0 ? errno : EIO;
            w->fd = -1; /* the caller reports and closes */
            break;
        }
        off += (size_t)n;
        w->written += (uint64_t)n;
        if (w->progress)
            __atomic_fetch_add(w->progress, 1, __ATOMIC_RELAXED);
    }
    w->len = 0;
    return w->error == 0;
}

void gz_jsonw_raw_split(gz_jsonw *w, const char *s, size_t len)
{
    while (len) {
        if (w->len == sizeof w->buf)
            gz_jsonw_flush(w);
        size_t n = sizeof w->buf - w->len;
        if (n > len)
            n = len;
        memcpy(w->buf + w->len, s, n);
        w->len += n;
        s += n;
        len -= n;
    }
}

/* Decimal digits, two at a time: half the divisions of one at a time. */
static const char two_digits[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

/* v < 10^8 without leading zeros, written from its last digit back (no
 * copy); returns the length. */
static size_t format_u32(char *out, uint32_t v)
{
    size_t n = v >= 10000000 ? 8 : v >= 1000000 ? 7 : v >= 100000 ? 6 : v >= 10000 ? 5
               : v >= 1000 ? 4 : v >= 100 ? 3 : v >= 10 ? 2 : 1;
    char *p = out + n;
    while (v >= 100) {
        p -= 2;
        memcpy(p, two_digits + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10)
        memcpy(p - 2, two_digits + 2 * v, 2);
    else
        p[-1] = (char)('0' + v);
    return n;
}

/* v < 10^8 as exactly 8 digits: four independent pairs. */
static void format_8(char *out, uint32_t v)
{
    uint32_t a = v / 10000, b = v % 10000;
    memcpy(out, two_digits + 2 * (a / 100), 2);
    memcpy(out + 2, two_digits + 2 * (a % 100), 2);
    memcpy(out + 4, two_digits + 2 * (b / 100), 2);
    memcpy(out + 6, two_digits + 2 * (b % 100), 2);
}

/* Eight digits at a time in 32-bit arithmetic: a timestamp's 13 digits
 * are two short chains, not one of thirteen 64-bit divisions. */
static size_t format_u64(char out[20], uint64_t v)
{
    if (v < 100000000)
        return format_u32(out, (uint32_t)v);
    uint64_t hi = v / 100000000;
    size_t n;
    if (hi < 100000000) {
        n = format_u32(out, (uint32_t)hi);
    } else {
        n = format_u32(out, (uint32_t)(hi / 100000000));
        format_8(out + n, (uint32_t)(hi % 100000000));
        n += 8;
    }
    format_8(out + n, (uint32_t)(v % 100000000));
    return n + 8;
}

size_t gz_json_format_u64(char out[20], uint64_t v)
{
    return format_u64(out, v);
}

/* Where a number of at most n bytes can be formatted in place: at the end
 * of the buffer, where it has the room (else in a copy that is then split
 * across a write). */
static char *room(gz_jsonw *w, size_t n)
{
    return sizeof w->buf - w->len >= n ? w->buf + w->len : NULL;
}

void gz_jsonw_u64(gz_jsonw *w, uint64_t v)
{
    char *p = room(w, 20);
    if (p) {
        w->len += format_u64(p, v);
        return;
    }
    char s[20];
    gz_jsonw_raw(w, s, format_u64(s, v));
}

void gz_jsonw_i64(gz_jsonw *w, int64_t v)
{
    if (v < 0) {
        gz_jsonw_raw(w, "-", 1);
        gz_jsonw_u64(w, (uint64_t)0 - (uint64_t)v);
    } else {
        gz_jsonw_u64(w, (uint64_t)v);
    }
}

static size_t format_us(char *out, uint64_t ns)
{
    uint64_t us = ns / 1000;
    unsigned frac = (unsigned)(ns - us * 1000);
    size_t n = format_u64(out, us);
    out[n] = '.';
    out[n + 1] = (char)('0' + frac / 100);
    memcpy(out + n + 2, two_digits + 2 * (frac % 100), 2);
    return n + 4;
}

void gz_jsonw_us(gz_jsonw *w, uint64_t ns)
{
    char *p = room(w, 24);
    if (p) {
        w->len += format_us(p, ns);
        return;
    }
    char s[24];
    gz_jsonw_raw(w, s, format_us(s, ns));
}

/* Length of the valid UTF-8 sequence at s (1–4), or 0 if it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_seq_len(const unsigned char *s, size_t len)
{
    unsigned char c = s[0];
    size_t n;
    unsigned min;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

typedef void (*emit_fn)(void *ctx, const char *piece, size_t len);

/* Emits the quoted, escaped form of src piece by piece: runs of plain ASCII
 * go out in one call. */
static void escape(const char *src, size_t len, emit_fn emit, void *ctx)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)src;
    emit(ctx, "\"", 1);
    while (len) {
        size_t run = 0;
        while (run < len && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
            run++;
        size_t step = run;
        if (run) {
            emit(ctx, (const char *)p, run);
        } else if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            emit(ctx, e, 2);
            step = 1;
        } else if (*p < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
            emit(ctx, e, 6);
            step = 1;
        } else if ((step = utf8_seq_len(p, len))) {
            emit(ctx, (const char *)p, step);
        } else {
            emit(ctx, "\\ufffd", 6);
            step = 1;
        }
        p += step;
        len -= step;
    }
    emit(ctx, "\"", 1);
}

static void emit_to_writer(void *ctx, const char *piece, size_t len)
{
    gz_jsonw_raw(ctx, piece, len);
}

void gz_jsonw_str(gz_jsonw *w, const char *s, size_t len)
{
    /* Most names are plain ASCII: they go out as they are, quoted. */
    const unsigned char *p = (const unsigned char *)s;
    size_t plain = 0;
    while (plain < len && p[plain] >= 0x20 && p[plain] < 0x80 && p[plain] != '"' &&
           p[plain] != '\\')
        plain++;
    size_t room = sizeof w->buf - w->len;
    if (plain < len || room < 2 || len > room - 2) {
        escape(s, len, emit_to_writer, w);
        return;
    }
    char *out = w->buf + w->len;
    out[0] = '"';
    memcpy(out + 1, s, len);
    out[len + 1] = '"';
    w->len += len + 2;
}

typedef struct bounded_buf {
    char *dst;
    size_t cap;
    size_t need;
} bounded_buf;

static void emit_to_buffer(void *ctx, const char *piece, size_t len)
{
    bounded_buf *b = ctx;
    if (b->need < b->cap)
        memcpy(b->dst + b->need, piece, b->need + len <= b->cap ? len : b->cap - b->need);
    b->need += len;
}

size_t gz_json_escape(char *dst, size_t cap, const char *src, size_t len)
{
    bounded_buf b = {dst, cap, 0};
    escape(src, len, emit_to_buffer, &b);
    return b.need;
}
