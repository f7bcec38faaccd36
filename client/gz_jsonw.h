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
void gz_jsonw_raw(gz_jsonw *w, const char *s, size_t len);
void gz_jsonw_lit(gz_jsonw *w, const char *s); /* NUL-terminated, no escaping */
void gz_jsonw_u64(gz_jsonw *w, uint64_t v);
void gz_jsonw_i64(gz_jsonw *w, int64_t v);
/* ns as microseconds with three decimals: 1234567 → 1234.567 */
void gz_jsonw_us(gz_jsonw *w, uint64_t ns);
/* A quoted JSON string; bytes that are not valid UTF-8 become U+FFFD,
 * control characters are escaped. */
void gz_jsonw_str(gz_jsonw *w, const char *s, size_t len);
/* Writes out the buffer; returns false once a write has failed. */
bool gz_jsonw_flush(gz_jsonw *w);

/* The escaping on its own, for tests and the fuzzer: writes at most cap
 * bytes of the quoted string into dst and returns the full length needed. */
size_t gz_json_escape(char *dst, size_t cap, const char *src, size_t len);

#endif
