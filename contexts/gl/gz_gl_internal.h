/* The GL context's state, shared by gl_ctx.c and gl_zones.c only. */
#ifndef GZ_GL_INTERNAL_H
#define GZ_GL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "gz_gl.h"

/* Query objects per context: timestamps issued and not read back yet must
 * fit. A program that never reads back is not throttled by llvmpipe: while
 * the first frame's shaders compile it ran ahead by more than 4096 queries
 * (40 groups a frame: 0.7 % of its zones dropped); 16384 kept every zone of
 * the same run. A quarter of the ring issued since the program last
 * flushed, the context flushes (relieve() in gl_zones.c). When the driver
 * still falls behind (100 000 tiny groups with no flush, llvmpipe's
 * rasteriser threads on 2 busy cores: 32 % of them dropped at 16384), the
 * ring doubles, up to GZ_GL_RING_MAX (24 bytes a query); when full at
 * that, new zones are dropped and counted. */
#define GZ_GL_RING 16384u
#define GZ_GL_RING_MAX 262144u
/* Open zones (groups, explicit zones) nested at once. */
#define GZ_GL_STACK 64u
/* Ended zones waiting for their results (64 bytes each), doubled when full
 * up to the most the ring can keep waiting (two queries a zone). */
#define GZ_GL_PENDING 8192u
#define GZ_GL_PENDING_MAX (GZ_GL_RING_MAX / 2)
#define GZ_GL_NO_SEQ UINT64_MAX

/* A zone's begin: its query, the host time before the call that issued it,
 * and its value once read back. The value is kept here, so that the ring
 * slot is free as soon as it is read, however long the zone stays open. */
typedef struct gz_gl_stamp {
    uint64_t seq; /* GZ_GL_NO_SEQ: dropped */
    uint64_t host_ns;
    uint64_t value;
    bool have;
} gz_gl_stamp;

typedef struct gz_gl_slot {
    GLuint query;
    uint64_t value;   /* once read */
    uint64_t seen_ns; /* host time when its result was seen */
} gz_gl_slot;

typedef struct gz_gl_open {
    gz_gl_stamp begin;
    uint32_t name;
    uint32_t token;
    uint8_t kind;
    uint8_t tag;
    bool srcloc;
} gz_gl_open;

typedef struct gz_gl_pending {
    gz_gl_stamp begin;
    uint64_t end_seq;
    uint64_t wait_flow; /* to the glFinish that saw it done (0: none) */
    uint64_t done_ns;   /* when a glFinish returned after its end (0: none) */
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

    gz_gl_slot *slots; /* query seq lives in slots[seq % ring] */
    uint32_t ring;
    uint64_t head;    /* next query sequence number to issue */
    uint64_t read;    /* next one to read back: the oldest slot in use */
    uint64_t flushed; /* queries before this one were issued before a flush */

    gz_gl_open open[GZ_GL_STACK];
    uint32_t depth;
    uint32_t next_token;
    bool frame_open;
    gz_gl_stamp frame_begin;

    /* Zones between flushes, for a context that has not swapped (yet):
     * the open one, and the first one, held back until a second flush
     * shows that it is not just a flush before the first swap. */
    atomic_bool swapped;
    bool by_flushes; /* two flushes before any swap: no frame zone until one */
    bool iv_open;
    gz_gl_stamp iv_begin;
    uint64_t iv_ended;
    bool held;
    gz_gl_pending held_zone;
    uint8_t held_call;
    uint32_t sync_names[GZ_GL_SYNC_COUNT];

    /* The track's name and the note it carries (gl_ctx.c). */
    uint32_t number;
    char renderer[96];
    bool rasterises;   /* llvmpipe: stamps when it rasterises */
    bool app_named;    /* the program named the track: no note */
    bool made_frames;  /* a frame zone was made */
    uint8_t iv_calls;  /* bit per gz_gl_sync that ended a zone made */
    bool ended;        /* the context is gone (or the process ends) */
    char track_name[256];

    gz_gl_pending *pending; /* zone p lives in pending[p % pcap] */
    uint32_t pcap;
    uint64_t p_head, p_tail;

    uint64_t last_calib_ns;
};

/* The ring and the pending zones at their first size; false: out of
 * memory. Needs the context current. */
bool gz_gl_zones_init(gz_gl_ctx *c);
void gz_gl_zones_free(gz_gl_ctx *c);
/* Zones ended or open whose results were never read (at the end). */
uint64_t gz_gl_zones_unread(gz_gl_ctx *c);
/* The process ends and c is still alive (the worker's last collect, under
 * c->lock; no GL call): the zone held back is let go, and what was read
 * back is emitted. */
void gz_gl_at_exit_locked(gz_gl_ctx *c);
/* Names c's track after what its zones are (gl_ctx.c); under c->lock. */
void gz_gl_ctx_note(gz_gl_ctx *c);

#endif
