/* The 32-byte items that travel through the serialized client queue.
 *
 * Producers (contexts, the layer's CPU hooks, the public API) fill one item
 * per event; the worker thread is the only consumer, and the queue keeps a
 * total order across threads. A GPU zone travels as one item holding both
 * of its timestamps: the context pairs begin and end when it reads the
 * queries back, so a dropped item loses one zone and never unbalances a
 * begin/end stack. */
#ifndef GZ_ITEM_H
#define GZ_ITEM_H

#include <stdbool.h>
#include <stdint.h>

#include "gz_calibration.h"

typedef enum gz_item_type {
    GZ_ITEM_NONE = 0,
    GZ_ITEM_GPU_ZONE,    /* zone: a whole GPU zone, both ends in raw ticks */
    GZ_ITEM_GPU_BOUND,   /* bound: a causality bound between a GPU and a host time */
    GZ_ITEM_ZONE_ARGS,   /* args: details of the zone item just before it on the track */
    GZ_ITEM_CPU_ZONE,    /* cpu: a whole CPU zone on thread tid */
    GZ_ITEM_FLOW_OUT,    /* cpu: a flow leaves thread tid at ns (inside a CPU zone) */
    GZ_ITEM_CALIB,       /* calib: a calibrated pair or sync point for a track */
    GZ_ITEM_TRACK_NEW,   /* ctx: a GPU track (context) appears */
    GZ_ITEM_TRACK_NAME,  /* name: the track's display name (interned) */
    GZ_ITEM_THREAD_NAME, /* cpu.tid + name: a CPU thread's name */
    GZ_ITEM_FRAME_MARK,  /* cpu.tid, cpu.begin_ns + name: a frame boundary (public API) */
    GZ_ITEM_MESSAGE,     /* cpu.tid, cpu.begin_ns + name: a message's text (public API) */
    GZ_ITEM_FLOW_IN,     /* flow: a flow from the end of GPU work arrives at thread tid at
                            ns, inside the CPU wait zone that follows it on that thread */
    GZ_ITEM_ZONE_WAIT_FLOW, /* flow.flow: the zone item just before it on the track ends in
                               that flow (to the CPU wait that saw the work done) */
    GZ_ITEM_ZONE_DETAIL, /* name: the details of the zone item just before it on the track
                            (interned, "key=value ..."), for its args */
} gz_item_type;

enum {
    GZ_ITEM_F_NOT_BEFORE = 1u << 0, /* bound: GPU time ticks ≥ host_ns */
    GZ_ITEM_F_NOT_AFTER = 1u << 1,  /* bound: GPU time ticks ≤ host_ns */
    GZ_ITEM_F_FLOW = 1u << 2,       /* zone: the flow field links it to a CPU zone */
    GZ_ITEM_F_SRCLOC = 1u << 3,     /* zone: name is a gz_srcloc_intern id (file, line…) */
};

/* What a GPU zone stands for, in bits 4..6 of flags of GZ_ITEM_GPU_ZONE. */
typedef enum gz_zone_kind {
    GZ_ZONE_SUBMIT = 0,   /* a submission batch */
    GZ_ZONE_CMDBUF = 1,   /* a command buffer execution */
    GZ_ZONE_LABEL = 2,    /* a debug label / group region */
    GZ_ZONE_EXPLICIT = 3, /* a zone from the public API */
    GZ_ZONE_FRAME = 4,    /* a GL frame: the GPU work from one swap to the next */
    GZ_ZONE_FLUSH = 5,    /* GL work between two flushes (glFlush, glFinish, a fence,
                             glReadPixels) of a context that does not swap */
    GZ_ZONE_PASS = 6,     /* a render pass instance */
    GZ_ZONE_COMMAND = 7,  /* one command (a draw, a dispatch, a copy) */
} gz_zone_kind;

#define GZ_ITEM_KIND_SHIFT 4
#define GZ_ITEM_KIND_MASK (7u << GZ_ITEM_KIND_SHIFT)

typedef struct gz_item {
    uint8_t type;   /* gz_item_type */
    uint8_t flags;  /* GZ_ITEM_F_* */
    uint16_t track; /* GPU track id (0 = none) */
    uint32_t name;  /* interned string id */
    union {
        struct {
            uint64_t begin_ticks; /* raw timestamps as the API reported them */
            uint64_t end_ticks;
            uint64_t flow; /* flow id shared with a CPU zone, 0 = none */
        } zone;
        struct {
            uint64_t ticks;   /* raw GPU timestamp */
            uint64_t host_ns; /* CLOCK_MONOTONIC; see the flags for the direction */
            uint64_t reserved;
        } bound;
        struct {
            uint64_t begin_ns; /* CLOCK_MONOTONIC */
            uint64_t end_ns;
            uint32_t tid;
            uint32_t reserved;
        } cpu;
        struct {
            uint64_t ns;   /* CLOCK_MONOTONIC */
            uint64_t flow; /* flow id shared with a GPU zone */
            uint32_t tid;
            uint32_t reserved;
        } flow;
        struct {
            uint64_t ticks;        /* raw GPU timestamp */
            uint64_t host_ns;      /* CLOCK_MONOTONIC */
            uint64_t deviation_ns; /* maximum deviation of the pair */
        } calib;                   /* flags: the gz_calib_method */
        struct {
            double period_ns;    /* ns per tick */
            uint32_t valid_bits; /* timestamp valid bits */
            uint32_t api;        /* gz_track_api */
            uint16_t clock;      /* track whose clock model this one shares; 0 = its own */
            uint16_t reserved16;
            uint32_t device;     /* interned name of the GPU it runs on; 0 = not said */
        } ctx; /* for GZ_ITEM_TRACK_NEW */
        struct {
            uint32_t batch;   /* index of the batch in its submit call */
            uint32_t cmdbufs; /* command buffers in the batch */
            uint64_t reserved[2];
        } args;
    };
} gz_item;

_Static_assert(sizeof(gz_item) == 32, "queue items are 32 bytes");

/* The clock items every context makes, built in one place. */

/* A calibrated pair: the GPU clock read ticks at host_ns ± deviation_ns. */
static inline gz_item gz_item_calibrated(uint16_t track, uint64_t ticks, uint64_t host_ns,
                                         uint64_t deviation_ns)
{
    return (gz_item){.type = GZ_ITEM_CALIB,
                     .flags = GZ_CALIB_CALIBRATED,
                     .track = track,
                     .calib = {.ticks = ticks, .host_ns = host_ns, .deviation_ns = deviation_ns}};
}

/* A sync point: the GPU stamped ticks between host times before and after;
 * the pair is their middle, half the width (rounded up) either way. */
static inline gz_item gz_item_sync_point(uint16_t track, uint64_t ticks, uint64_t before,
                                         uint64_t after)
{
    return (gz_item){.type = GZ_ITEM_CALIB,
                     .flags = GZ_CALIB_SYNC_POINT,
                     .track = track,
                     .calib = {.ticks = ticks,
                               .host_ns = before + (after - before) / 2,
                               .deviation_ns = (after - before + 1) / 2}};
}

/* The zone item just before it on the track ends in a flow to the CPU wait
 * that saw its work done (the wait's thread got a GZ_ITEM_FLOW_IN with the
 * same id). */
static inline gz_item gz_item_wait_flow(uint16_t track, uint64_t flow)
{
    return (gz_item){.type = GZ_ITEM_ZONE_WAIT_FLOW, .track = track, .flow = {.flow = flow}};
}

/* A causality bound: the GPU time ticks is at or after (not_before) or at
 * or before host_ns. */
static inline gz_item gz_item_bound(uint16_t track, bool not_before, uint64_t ticks,
                                    uint64_t host_ns)
{
    return (gz_item){.type = GZ_ITEM_GPU_BOUND,
                     .flags = not_before ? GZ_ITEM_F_NOT_BEFORE : GZ_ITEM_F_NOT_AFTER,
                     .track = track,
                     .bound = {.ticks = ticks, .host_ns = host_ns}};
}

#endif
