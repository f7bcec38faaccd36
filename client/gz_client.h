/* The process-wide client: one per process, shared by the Vulkan layer, the
 * GL/CL shims and the public API through libgpuzones.so.
 *
 * Everything here is safe to call from any thread. The client starts on
 * first use; it stops at exit (atexit), draining what is queued, writing
 * the trace's end and printing the summary. */
#ifndef GZ_CLIENT_H
#define GZ_CLIENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gz_item.h"

/* What the Vulkan layer and the GL/CL shims call from libgpuzones (its
 * private version node, libgpuzones.map.in); unmarked functions stay inside
 * the library (it is built with -fvisibility=hidden). */
#define GZ_EXPORT __attribute__((visibility("default")))

/* Host clock: CLOCK_MONOTONIC in ns. */
GZ_EXPORT uint64_t gz_host_now_ns(void);
/* CLOCK_MONOTONIC_RAW in ns (pocl stamps this domain). */
uint64_t gz_host_now_raw_ns(void);
/* CLOCK_MONOTONIC minus CLOCK_MONOTONIC_RAW now, to translate a RAW time
 * taken about now; *uncertainty_ns: how far off it may be (a thread
 * preempted between the clock reads makes one reading wrong by the time it
 * was away: the tightest of a few is kept, and its width reported). */
int64_t gz_host_mono_minus_raw(uint64_t *uncertainty_ns);

typedef enum gz_track_api {
    GZ_API_VULKAN = 1,
    GZ_API_OPENGL = 2,
    GZ_API_OPENCL = 3,
} gz_track_api;

/* Detail levels (GPUZONES_LEVEL), cheapest first. */
typedef enum gz_level {
    GZ_LEVEL_SUBMIT = 0, /* one zone per submission batch */
    GZ_LEVEL_CMDBUF = 1, /* plus one per command buffer */
    GZ_LEVEL_LABELS = 2, /* plus debug-label zones (default) */
    GZ_LEVEL_PASSES = 3, /* plus render pass instances, and commands outside them */
    GZ_LEVEL_COMMANDS = 4, /* plus every action command (draws too) */
} gz_level;

/* GPUZONES_VK_READBACK: how the Vulkan layer reads its timestamps back. */
typedef enum gz_vk_readback_mode {
    GZ_VK_READBACK_AUTO = 0, /* host reads, or GPU copies where the driver's host read blocks */
    GZ_VK_READBACK_HOST,     /* vkGetQueryPoolResults on the worker */
    GZ_VK_READBACK_COPY,     /* copies into host memory at the end of each command buffer */
} gz_vk_readback_mode;

/* Starts the client if needed. Returns false when it is disabled or failed
 * to start (then every other call is a cheap no-op). */
GZ_EXPORT bool gz_client_start(void);
/* Stops the worker, drains the queue, ends the trace, prints the summary.
 * Idempotent; called at exit (also when a stop signal already began it:
 * the exit then waits for the worker, bounded, as it does for its own). */
GZ_EXPORT void gz_client_stop(void);
/* The program has just destroyed its last Vulkan device (summary false) or
 * its last instance (summary true): it may now end without atexit (Go's
 * exit does not run it). Waits, bounded as the exit does, until the worker
 * has written everything so far and made the trace complete and loadable
 * (when it is a file of ours, which it can reopen after the end it wrote),
 * and with summary printed the summary (unless GL or OpenCL still time, or
 * a GPU track is still alive). Timing goes on if the program goes on; the
 * summary is printed again at exit only if something changed since. */
GZ_EXPORT void gz_client_checkpoint(bool summary);
/* Starts a thread of gpuzones' own, as pthread_create does, with every
 * asynchronous signal blocked in it: a signal meant for the program is then
 * always taken by one of the program's threads (its handlers may assume
 * so), and never by a thread the stop handler waits for. Every thread
 * gpuzones starts is started here. */
int gz_thread_start(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
/* What brought gpuzones into the process, for the summary of a program
 * that timed nothing ("Vulkan layer loaded; no GPU work was timed"). */
typedef enum gz_frontend {
    GZ_FRONTEND_VULKAN = 1u << 0, /* the Vulkan layer (an instance was made) */
    GZ_FRONTEND_OPENGL = 1u << 1, /* the GL shim (a context was made current) */
    GZ_FRONTEND_OPENCL = 1u << 2, /* the OpenCL layer (the loader initialised it) */
    GZ_FRONTEND_API = 1u << 3,    /* the public API */
} gz_frontend;
/* Notes a front end. Starts nothing: a program that loads a layer and never
 * starts the client still gets its one line at exit. */
GZ_EXPORT void gz_client_note_frontend(gz_frontend f);
/* "Vulkan layer, OpenCL layer" for the noted front ends. */
const char *gz_client_frontend_names(char *buf, size_t size);

/* Whether the client runs now (started and not stopped). */
GZ_EXPORT bool gz_client_running(void);
GZ_EXPORT gz_level gz_client_level(void);
GZ_EXPORT gz_vk_readback_mode gz_client_vk_readback(void);
/* GPUZONES_SUMMARY=2: say how each GPU context is timed, in full. */
GZ_EXPORT bool gz_client_verbose(void);

/* Interns a string (copies it): ids are stable for the process lifetime.
 * Returns 0 for the empty name, and for names that no longer fit the
 * bounded table (counted, shown as "<name dropped>"). */
GZ_EXPORT uint32_t gz_intern(const char *s, size_t len);
GZ_EXPORT uint32_t gz_intern_cstr(const char *s);
/* gz_intern_cstr of a constant name, cached in *cache (a static the caller
 * owns): the hot paths intern their fixed names once. */
GZ_EXPORT uint32_t gz_intern_once(uint32_t *cache, const char *name);

/* Registers a GPU track (one per VkQueue, GL context, CL queue). Returns its
 * id (>= 1), or 0 when the table is full (then zones for it are dropped).
 * clock_track: a track of the same GPU clock whose calibration this one
 * shares (a queue's label track shares the queue's), or 0 for its own. */
GZ_EXPORT uint16_t gz_track_new(gz_track_api api, const char *name, double period_ns,
                                uint32_t valid_bits, uint16_t clock_track);
/* The same, saying which GPU the track's work runs on (its name, as the
 * API reports it): tracks of one GPU are grouped under it in the Perfetto
 * trace. A track that shares another's clock is on that track's GPU. */
GZ_EXPORT uint16_t gz_track_new_on_device(gz_track_api api, const char *name, const char *device,
                                          double period_ns, uint32_t valid_bits,
                                          uint16_t clock_track);
void gz_track_set_name(uint16_t track, const char *name);
/* The track's owner is gone (queue, context, device destroyed) and has
 * emitted its last zones. The worker writes what is left of it, frees its
 * state and clock, and only then gives its id to a new track. A track whose
 * clock another shares (a queue's label track) ends with or after it. */
GZ_EXPORT void gz_track_end(uint16_t track);

/* Puts an item on the serialized queue; counts a drop when it is full. */
GZ_EXPORT bool gz_emit(const gz_item *item);
/* All of the items or none (a batch of zones must not lose half a pair).
 * When they are refused, the caller counts its zones as dropped. */
bool gz_emit_n(const gz_item *items, uint32_t n);

/* The clock items a context sends on their own (gz_item.h builds them; a
 * bound or sync point that travels with its zone goes in the zone's
 * gz_emit_n batch instead, all or none). False when the queue refused it. */

/* A calibrated pair: the GPU clock read ticks at host_ns ± deviation_ns. */
static inline bool gz_emit_calib(uint16_t track, uint64_t ticks, uint64_t host_ns,
                                 uint64_t deviation_ns)
{
    gz_item it = gz_item_calibrated(track, ticks, host_ns, deviation_ns);
    return gz_emit(&it);
}

/* A sync point: the GPU stamped ticks between host times before and after. */
static inline bool gz_emit_sync_point(uint16_t track, uint64_t ticks, uint64_t before,
                                      uint64_t after)
{
    gz_item it = gz_item_sync_point(track, ticks, before, after);
    return gz_emit(&it);
}

/* A causality bound: GPU time ticks is at or after (not_before) or at or
 * before host_ns. */
static inline bool gz_emit_bound(uint16_t track, bool not_before, uint64_t ticks,
                                 uint64_t host_ns)
{
    gz_item it = gz_item_bound(track, not_before, ticks, host_ns);
    return gz_emit(&it);
}

/* How many items the queue can take now (a hint). A collector about to
 * emit more stops and goes on at its next call: the worker takes the queue
 * in between, so a burst of finished work is delayed, never dropped. */
uint32_t gz_emit_room(void);

/* Zones lost before they reached the worker (rings full, results lost,
 * queue full). Kept in counters outside the queue so they are never lost. */
GZ_EXPORT void gz_count_dropped_zones(uint16_t track, uint64_t n);

/* A new process-unique flow id (never 0). A zone item with GZ_ITEM_F_FLOW
 * and the same id ends the flow. */
uint64_t gz_flow_next(void);

/* The calling thread's id; names the thread in the trace on first use. */
uint32_t gz_thread_id(void);

/* A frame boundary on the calling thread now (a present, a swap, the
 * public API's frame mark); name: an interned id. */
void gz_frame_mark(uint32_t name);

/* A finished CPU zone on the calling thread. */
GZ_EXPORT void gz_cpu_zone(uint32_t name, uint64_t begin_ns, uint64_t end_ns);
/* A flow leaving the calling thread at ns (inside one of its CPU zones) to
 * the GPU zone whose item carries the same flow id. */
void gz_flow_out(uint64_t flow, uint64_t ns);
/* A flow from the end of GPU work to the calling thread, arriving at ns:
 * its wait (a fence wait, an idle wait, glFinish, clFinish) saw the work
 * done then. The wait's CPU zone follows on this thread and must contain
 * ns; the work's zone item is followed by gz_item_wait_flow with the same
 * id. */
void gz_flow_in(uint64_t flow, uint64_t ns);

/* Readback hooks: the worker calls each registered collector about every
 * GPUZONES_POLL_MS and once more with final=true before it stops. Remove
 * waits until a call in progress has returned. */
typedef void (*gz_collect_fn)(void *user, bool final);
int gz_collector_add(gz_collect_fn fn, void *user);
void gz_collector_remove(int id);

/* One "gpuzones: ..." line on stderr. */
GZ_EXPORT void gz_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, at most once per key (a static int the caller owns). */
GZ_EXPORT void gz_log_once(int *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
