/* Shared by the Tracy sinks (not by the rest of gpuzones). */
#ifndef GZ_TRACY_INTERNAL_H
#define GZ_TRACY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gz_config.h"
#include "gz_sink.h"
#include "gz_tracy_wire.h"

/* What listen mode lets wait for a profiler, at most: past it, zones are
 * dropped and counted. */
#define GZ_TRACY_LISTEN_BUDGET (32u << 20)

/* Host CLOCK_MONOTONIC ns, the clock every sink time is on. */
static inline uint64_t gz_tracy_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Tracy's GpuContextType for a gpuzones track API. */
static inline uint8_t gz_tracy_ctx_type(gz_track_api api)
{
    return api == GZ_API_OPENGL   ? GZ_TGPU_OPENGL
           : api == GZ_API_OPENCL ? GZ_TGPU_OPENCL
                                  : GZ_TGPU_VULKAN;
}

/* listen.c: gpuzones as a Tracy client; budget: bytes that may wait;
 * progress (may be NULL): bumped while the exit waits for a profiler, so
 * that the exit's guard against a stuck worker knows it is not. */
bool gz_tracy_listen_open(const gz_config *cfg, size_t budget, uint64_t *progress, gz_sink *out);

/* inproc.c: the program's own Tracy client. find: 1 when its C API
 * resolves (where: the library or program it is in), 0 when there is none,
 * -1 when some of the functions needed are missing, -2 when it is not
 * started (TRACY_MANUAL_LIFETIME). */
int gz_tracy_inproc_find(char *where, size_t cap);
bool gz_tracy_inproc_open(const gz_config *cfg, gz_sink *out);

#endif
