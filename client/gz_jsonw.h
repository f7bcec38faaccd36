/* A small buffered JSON text writer on a file descriptor: the trace sink
 * writes hundreds of thousands of events per second, so numbers and strings
 * are formatted by hand instead of through printf. */
#ifndef GZ_JSONW_H
#define GZ_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gz_jsonw {
    int fd;          /* -1 when closed or after a write error */
    int error;       /* errno of the first failed write, 0 if none */
    size_t len;      /* bytes in buf */
    uint64_t written; /* bytes handed to the kernel */
    /* For a non-blocking fd (a FIFO): a write the reader is not ready for
     * waits until CLOCK_MONOTONIC passes *deadline_ns (0: no deadline
     * yet, read again every 50 ms), then fails with ETIMEDOUT. NULL: no
     * waiting, EAGAIN fails at once. */
    const uint64_t *deadline_ns;
    uint64_t *progress; /* if set, bumped after each write that took bytes */
    char buf[1 << 16];
} gz_jsonw;

void gz_jsonw_init(gz_jsonw *w, int fd);
/* What gz_jsonw_raw does when the bytes do not fit: fills the buffer,
 * writes it out, goes on. */
void gz_jsonw_raw_split(gz_jsonw *w, const char *s, size_t len);
/* Appends bytes as they are. Inline: a trace event is some twenty pieces,
 * most of them a few bytes long. */
static inline void gz_jsonw_raw(gz_jsonw *w, const char *s, size_t len)
{
    if (len <= sizeof w->buf - w->len) {
        __builtin_memcpy(w->buf + w->len, s, len);
        w->len += len;
    } else {
        gz_jsonw_raw_split(w, s, len);
    }
}
/* NUL-terminated, no escaping (a literal's length is known at compile time). */
static inline void gz_jsonw_lit(gz_jsonw *w, const char *s)
{
    gz_jsonw_raw(w, s, __builtin_strlen(s));
}
void gz_jsonw_u64(gz_jsonw *w, uint64_t v);
void gz_jsonw_i64(gz_jsonw *w, int64_t v);
/* ns as microseconds with three decimals: 1234567 → 1234.567 */
void gz_jsonw_us(gz_jsonw *w, uint64_t ns);
/* A quoted JSON string; bytes that are not valid UTF-8 become U+FFFD,
 * control characters are escaped. */
void gz_jsonw_str(gz_jsonw *w, const char *s, size_t len);
/* Writes out the buffer; returns false once a write has failed. */
bool gz_jsonw_flush(gz_jsonw *w);

/* v in decimal into out (no NUL); returns the length. */
size_t gz_json_format_u64(char out[20], uint64_t v);

/* The escaping on its own, for tests and the fuzzer: writes at most cap
 * bytes of the quoted string into dst and returns the full length needed. */
size_t gz_json_escape(char *dst, size_t cap, const char *src, size_t len);

#endif
