/* The GL context's state, shared by gl_ctx.c and gl_zones.c only. */
#ifndef GZ_GL_INTERNAL_H
#define GZ_GL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "gz_gl.h"

/* Query objects per context: the zones issued before the driver has
 * finished the first of them must fit (two queries per zone). A program
 * that never reads back is not throttled by llvmpipe: while the first
 * frame's shaders compile it ran ahead by more than 4096 queries (40
 * groups a frame: 0.7 % of its zones dropped); 16384 kept every zone of
 * the same run. When the ring is full new zones are dropped and counted. */
#define GZ_GL_RING 16384u
/* Open zones (groups, explicit zones) nested at once. */
#define GZ_GL_STACK 64u
/* Ended zones waiting for their results. */
#define GZ_GL_PENDING 8192u
#define GZ_GL_NO_SEQ UINT64_MAX

typedef struct gz_gl_open {
    uint64_t begin_seq;  /* query sequence number, GZ_GL_NO_SEQ: dropped */
    uint64_t host_begin; /* host time before the glQueryCounter call */
    uint32_t name;
    uint32_t token;
    uint8_t kind;
    uint8_t tag;
    bool srcloc;
} gz_gl_open;

typedef struct gz_gl_pending {
    uint64_t begin_seq, end_seq;
    uint64_t host_begin;
    uint32_t name;
    uint8_t kind;
    bool srcloc;
} gz_gl_pending;

struct gz_gl_ctx {
    gz_gl_fns fns;
    atomic_int refs;
    atomic_bool dead; /* the GL context was destroyed: no new zones */
    pthread_mutex_t lock;
    bool gles, query_buffer, disjoint, khr_debug;
    uint32_t valid_bits;
    uint64_t mask;
    uint16_t track;
    uint32_t frame_name;

    GLuint queries[GZ_GL_RING];
    uint64_t head;    /* next query sequence number to issue */
    uint64_t read;    /* next one to read back */
    uint64_t flushed; /* queries before this one were issued before a swap */
    uint64_t tail;    /* a lower bound of the oldest query still needed */
    uint64_t values[GZ_GL_RING];
    uint64_t seen_ns[GZ_GL_RING]; /* host time when its result was seen */

    gz_gl_open open[GZ_GL_STACK];
    uint32_t depth;
    uint32_t next_token;
    bool frame_open;
    uint64_t frame_begin_seq, frame_host_begin;

    gz_gl_pending pending[GZ_GL_PENDING];
    uint64_t p_head, p_tail;

    uint64_t last_calib_ns;
};

/* Zones ended or open whose results were never read (at the end). */
uint64_t gz_gl_zones_unread(gz_gl_ctx *c);

#endif
