/* Where the worker's output goes: one small interface, several outputs.
 *
 * The worker converts, orders and counts; a sink only formats and writes.
 * Every call comes from the worker thread, in queue order, so a sink needs
 * no locks of its own (a sink that talks to another thread, like a network
 * listener, owns that hand-over). Times are host CLOCK_MONOTONIC ns; GPU
 * zones arrive converted, each track's zones parents first (earlier begin
 * first, longer first on equal begins), never two tracks interleaved out of
 * a track's own order. Every operation may be NULL where a sink has nothing
 * to do with it. Implementations: sink_json.c (Chrome JSON, through
 * trace.c), sink_perfetto.c (Perfetto's protobuf format), summary.c (the
 * exit summary), tracy/ (the Tracy profiler). */
#ifndef GZ_SINK_H
#define GZ_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gz_client.h"
#include "gz_gpu_clock.h"
#include "gz_srcloc.h"

/* A GPU zone, converted to host time. */
typedef struct gz_sink_zone {
    uint16_t track;
    uint8_t kind; /* gz_zone_kind */
    const char *name;
    size_t name_len;
    const gz_srcloc_view *loc; /* function/file/line of explicit zones; NULL otherwise */
    uint32_t name_id;          /* interned plain name (for tables keyed by name) */
    uint64_t begin_ns, end_ns; /* host ns, begin <= end */
    uint64_t flow;             /* flow id from a CPU zone, 0 = none */
    uint64_t wait_flow;        /* flow id to the CPU wait that saw it done (flow_in), 0 = none */
    const char *detail;        /* its details ("key=value ..."); NULL: none */
    size_t detail_len;
    bool has_args;             /* batch/cmdbufs are meaningful (submit zones) */
    uint32_t batch, cmdbufs;
    uint64_t begin_raw, end_raw; /* raw GPU ticks as read (GPUZONES_RAW_TICKS) */
    /* How far begin_ns/end_ns may be off: a step in the GPU clock fell
     * where the data could not tell on which side of it the zone lies
     * (0: it could). */
    uint64_t clock_doubt_ns;
} gz_sink_zone;

/* A GPU track: one per VkQueue (and its label track), GL context, CL queue,
 * explicit context. Ids are reused after track_end. */
typedef struct gz_sink_track {
    uint16_t id;
    gz_track_api api;
    uint16_t clock_track; /* track whose clock this one's times are on (itself by default) */
    const char *name;     /* current name; may change (track_name) */
    size_t name_len;
    const char *device; /* the GPU it runs on ("" when not said) */
    size_t device_len;
    double period_ns;
    uint32_t valid_bits;
} gz_sink_track;

/* What the run produced and lost, at close. zones_produced = written +
 * dropped when nothing was lost unaccounted. */
typedef struct gz_sink_totals {
    uint64_t zones_produced, zones_written, zones_dropped, items_dropped;
    uint64_t names_dropped;
    uint64_t batches_too_big; /* of items_dropped: batches no queue half could take */
} gz_sink_totals;

typedef struct gz_sink_ops {
    const char *what; /* for messages: "trace file", "summary", "Tracy" */
    void (*track_new)(void *s, const gz_sink_track *t);
    void (*track_name)(void *s, const gz_sink_track *t);
    /* The track's last zone has been written; its id may be given to a
     * new track after this. */
    void (*track_end)(void *s, uint16_t id);
    void (*thread_name)(void *s, uint32_t tid, const char *name, size_t len);
    void (*gpu_zone)(void *s, const gz_sink_zone *z);
    void (*cpu_zone)(void *s, uint32_t tid, const char *name, size_t len, uint64_t begin_ns,
                     uint64_t end_ns);
    /* A flow leaves CPU thread tid at ns; the GPU zone with the same flow id
     * ends it. */
    void (*flow_out)(void *s, uint64_t flow, uint32_t tid, uint64_t ns);
    /* A frame boundary (present/swap, or the public API) on thread tid. */
    void (*frame_mark)(void *s, uint32_t tid, const char *name, size_t len, uint64_t ns);
    void (*message)(void *s, uint32_t tid, const char *text, size_t len, uint64_t ns);
    /* The track's clock model now (calibration quality, drift, wraps). */
    void (*calibration)(void *s, const gz_sink_track *t, const gz_gpu_clock *c, uint64_t ns);
    /* Once per drain cycle: hand buffered output on. */
    void (*flush)(void *s);
    /* At the end: totals, then release everything. Must return within a
     * bounded time whatever the output does (a FIFO nobody reads, a
     * profiler that stopped reading). */
    void (*close)(void *s, const gz_sink_totals *t);
    /* Added after the first version; NULL where a sink has no use for them. */
    /* The offset the track's clock model applies now, up to 10 times a
     * second while the model changes (a counter of the drift it follows). */
    void (*clock_correction)(void *s, const gz_sink_track *t, const gz_gpu_clock *c, uint64_t ns);
    /* Zones of the track lost before they reached any sink (rings or queue
     * full, out of memory); once before its track_end, and for a track
     * still alive at the end, once before close. */
    void (*track_drops)(void *s, uint16_t id, uint64_t dropped);
    /* The program has no Vulkan device (or instance) left: it may end
     * without running atexit (a Go program's exit does not). Make what was
     * written so far complete, as close would, with the totals so far: the
     * trace loadable, and with summary the summary printed. More may come
     * after it, and close still comes at the end. */
    void (*checkpoint)(void *s, const gz_sink_totals *t, bool summary);
    /* A flow from the end of a GPU zone (the zone's wait_flow) arrives on
     * CPU thread tid at ns, inside the wait zone that follows on tid. It
     * may come before or after that GPU zone. */
    void (*flow_in)(void *s, uint64_t flow, uint32_t tid, uint64_t ns);
} gz_sink_ops;

typedef struct gz_sink {
    const gz_sink_ops *ops;
    void *self;
} gz_sink;

#endif
