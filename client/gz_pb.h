/* A small protocol-buffers encoder into a caller's buffer, for the
 * Perfetto sink: varints, fixed64, doubles, strings and nested messages
 * (whose length is written once they end, in as few bytes as it needs).
 * A message that does not fit sets full and stops growing; the caller
 * drops it. */
#ifndef GZ_PB_H
#define GZ_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gz_pb {
    uint8_t *buf;
    size_t len, cap;
    bool full; /* something did not fit: the message is incomplete */
} gz_pb;

static inline void gz_pb_init(gz_pb *pb, uint8_t *buf, size_t cap)
{
    *pb = (gz_pb){.buf = buf, .cap = cap};
}

/* The bytes a varint of v takes (1 to 10). */
size_t gz_pb_varint_size(uint64_t v);

/* Writes v as a varint at o, which has room for it; returns the byte
 * after it. */
static inline uint8_t *gz_pb_varint_at(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

/* Fields: wire type 0 (varint: uint, int64 as two's complement, bool,
 * enum), 1 (fixed64, double) and 2 (length-delimited). A varint field is
 * written here where the buffer has room for the longest one (the common
 * case: a trace writes a few dozen a zone), else by gz_pb_varint_checked. */
void gz_pb_varint_checked(gz_pb *pb, uint32_t field, uint64_t v);
static inline void gz_pb_varint(gz_pb *pb, uint32_t field, uint64_t v)
{
    if (pb->full || pb->cap - pb->len < 15) {
        gz_pb_varint_checked(pb, field, v);
        return;
    }
    uint8_t *o = gz_pb_varint_at(pb->buf + pb->len, (uint64_t)field << 3); /* wire type 0 */
    pb->len = (size_t)(gz_pb_varint_at(o, v) - pb->buf);
}
void gz_pb_fixed64(gz_pb *pb, uint32_t field, uint64_t v);
void gz_pb_double(gz_pb *pb, uint32_t field, double v);
void gz_pb_bytes(gz_pb *pb, uint32_t field, const void *data, size_t len);
/* A string field: bytes that are not valid UTF-8 (proto strings must be)
 * become U+FFFD, as in the JSON trace; at most max_len bytes of s are
 * taken (cut at a character boundary). */
void gz_pb_string(gz_pb *pb, uint32_t field, const char *s, size_t len, size_t max_len);

/* A nested message: begin returns a mark for end, which writes its
 * length. */
size_t gz_pb_begin(gz_pb *pb, uint32_t field);
void gz_pb_end(gz_pb *pb, size_t mark);

#endif
