#include <string.h>

#include "gz_pb.h"

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LEN = 2 };

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

size_t gz_pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static bool room(gz_pb *pb, size_t n)
{
    if (pb->full || pb->cap - pb->len < n) {
        pb->full = true;
        return false;
    }
    return true;
}

static void put_varint(gz_pb *pb, uint64_t v)
{
    /* Room for the longest varint (10 bytes) is the common case: no need
     * to size this one first. */
    if ((pb->full || pb->cap - pb->len < 10) && !room(pb, gz_pb_varint_size(v)))
        return;
    pb->len = (size_t)(gz_pb_varint_at(pb->buf + pb->len, v) - pb->buf);
}

static void put_tag(gz_pb *pb, uint32_t field, unsigned wire)
{
    put_varint(pb, (uint64_t)field << 3 | wire);
}

static void put_raw(gz_pb *pb, const void *data, size_t len)
{
    if (room(pb, len)) {
        memcpy(pb->buf + pb->len, data, len);
        pb->len += len;
    }
}

void gz_pb_varint_checked(gz_pb *pb, uint32_t field, uint64_t v)
{
    put_tag(pb, field, WIRE_VARINT);
    put_varint(pb, v);
}

void gz_pb_fixed64(gz_pb *pb, uint32_t field, uint64_t v)
{
    put_tag(pb, field, WIRE_FIXED64);
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i)); /* little-endian on the wire */
    put_raw(pb, b, sizeof b);
}

void gz_pb_double(gz_pb *pb, uint32_t field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    gz_pb_fixed64(pb, field, bits);
}

void gz_pb_bytes(gz_pb *pb, uint32_t field, const void *data, size_t len)
{
    put_tag(pb, field, WIRE_LEN);
    put_varint(pb, len);
    put_raw(pb, data, len);
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when it is not
 * one: overlong forms, surrogates and code points past U+10FFFF are not. */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
    unsigned c = s[0], cp, min;
    size_t n;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, cp = c & 0x07, min = 0x10000;
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

/* Walks s as it will be written: calls emit (when given) per piece; returns
 * the bytes written, at most max_len. */
static size_t utf8_walk(gz_pb *pb, const char *s, size_t len, size_t max_len, bool emit)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t out = 0;
    while (len) {
        size_t run = 0;
        while (run < len && p[run] < 0x80 && out + run < max_len)
            run++;
        if (run) {
            if (emit)
                put_raw(pb, p, run);
            out += run;
            p += run;
            len -= run;
            continue;
        }
        size_t n = utf8_seq(p, len);
        size_t w = n ? n : sizeof replacement - 1;
        if (out + w > max_len)
            break;
        if (emit)
            put_raw(pb, n ? (const void *)p : replacement, w);
        out += w;
        p += n ? n : 1;
        len -= n ? n : 1;
    }
    return out;
}

void gz_pb_string(gz_pb *pb, uint32_t field, const char *s, size_t len, size_t max_len)
{
    put_tag(pb, field, WIRE_LEN);
    put_varint(pb, utf8_walk(pb, s, len, max_len, false));
    utf8_walk(pb, s, len, max_len, true);
}

size_t gz_pb_begin(gz_pb *pb, uint32_t field)
{
    put_tag(pb, field, WIRE_LEN);
    size_t mark = pb->len;
    if (room(pb, 1))
        pb->buf[pb->len++] = 0;
    return mark;
}

void gz_pb_end(gz_pb *pb, size_t mark)
{
    if (pb->full)
        return;
    size_t body = pb->len - mark - 1;
    size_t n = gz_pb_varint_size(body);
    if (n > 1) {
        if (!room(pb, n - 1))
            return;
        memmove(pb->buf + mark + n, pb->buf + mark + 1, body);
        pb->len += n - 1;
    }
    uint64_t v = body;
    uint8_t *o = pb->buf + mark;
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o = (uint8_t)v;
}
