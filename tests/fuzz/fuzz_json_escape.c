/* libFuzzer target: the JSON string writer (gz_json_escape, which every
 * name in the trace goes through). For any bytes (quotes, backslashes,
 * control characters, invalid UTF-8, any length) the result must be one
 * valid JSON string: quoted, no raw control character, only the escapes
 * JSON has, valid UTF-8 throughout; and the length it reports must be the
 * length it writes. The trace's writer (gz_jsonw_str, which copies plain
 * names as they are) must write the very same bytes, wherever in its
 * buffer the name falls (the first byte picks how full it is). */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gz_jsonw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Length of the UTF-8 sequence at p (1..4), or 0 when it is not valid. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
    unsigned c = p[0];
    size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (!n || n > left || (n == 2 && c < 0xc2) || (n == 4 && c > 0xf4))
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if (n == 3) {
        unsigned cp = ((c & 0x0f) << 12) | ((p[1] & 0x3f) << 6) | (p[2] & 0x3f);
        if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
    }
    if (n == 4) {
        unsigned cp = ((c & 0x07) << 18) | ((p[1] & 0x3f) << 12) | ((p[2] & 0x3f) << 6) | (p[3] & 0x3f);
        if (cp < 0x10000 || cp > 0x10ffff)
            return 0;
    }
    return n;
}

static void check_json_string(const unsigned char *s, size_t n)
{
    if (n < 2 || s[0] != '"' || s[n - 1] != '"')
        abort();
    for (size_t i = 1; i < n - 1;) {
        unsigned char c = s[i];
        if (c < 0x20 || c == '"')
            abort();
        if (c == '\\') {
            if (i + 1 >= n - 1)
                abort();
            char e = (char)s[i + 1];
            if (e == 'u') {
                if (i + 5 >= n - 1)
                    abort();
                for (int k = 2; k < 6; k++)
                    if (!strchr("0123456789abcdefABCDEF", s[i + k]))
                        abort();
                i += 6;
            } else if (strchr("\"\\/bfnrt", e) && e) {
                i += 2;
            } else {
                abort();
            }
            continue;
        }
        size_t len = utf8_len(s + i, n - 1 - i);
        if (!len)
            abort();
        i += len;
    }
}

static void check_writer(const uint8_t *data, size_t size, const char *want, size_t need)
{
    static gz_jsonw w;
    static int fd = -2;
    if (fd == -2)
        fd = memfd_create("gz-fuzz-jsonw", 0);
    if (fd < 0 || ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
        return;
    gz_jsonw_init(&w, fd);
    size_t fill = sizeof w.buf - (size ? data[0] % 64 : 0);
    memset(w.buf, '-', fill);
    w.len = fill;
    gz_jsonw_str(&w, (const char *)data, size);
    if (w.len > sizeof w.buf || !gz_jsonw_flush(&w) || w.written != fill + need)
        abort();
    char *got = malloc(need ? need : 1);
    if (!got)
        return;
    if (pread(fd, got, need, (off_t)fill) != (ssize_t)need || memcmp(got, want, need))
        abort();
    free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t need = gz_json_escape(NULL, 0, (const char *)data, size);
    char *out = malloc(need + 1);
    if (!out)
        return 0;
    size_t wrote = gz_json_escape(out, need + 1, (const char *)data, size);
    if (wrote != need)
        abort();
    check_json_string((const unsigned char *)out, need);
    check_writer(data, size, out, need);
    free(out);
    return 0;
}
