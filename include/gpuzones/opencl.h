/* gpuzones OpenCL API with Tracy's names (TracyOpenCL.hpp): device time of
 * the commands a program wraps in zones, on a timeline per TracyCLContext.
 *
 *   TracyCLCtx ctx = TracyCLContext(context, device);
 *   TracyCLContextName(ctx, "physics", 7);
 *   {
 *       TracyCLZone(ctx, "integrate");           // scope = one zone
 *       clEnqueueNDRangeKernel(queue, k, ..., &event);
 *       TracyCLZoneSetEvent(event);              // its START..END is the zone
 *   }
 *   clFinish(queue);
 *   TracyCLCollect(ctx);                         // optional: read back now
 *   TracyCLDestroy(ctx);
 *
 * Queues need CL_QUEUE_PROFILING_ENABLE (the layer forces it when it is
 * loaded). From TracyCLZoneSetEvent on, the zone holds a reference to the
 * event until it is read back, so the program may release its own at any
 * time (without the layer, the event's CL_EVENT_REFERENCE_COUNT shows that
 * reference meanwhile). Results are read back
 * without waiting, by the worker or at TracyCLCollect; zones carry their
 * source location (function, file, line).
 *
 * C scoped zones use __attribute__((cleanup)) (GCC, Clang); the
 * GpuzonesCLZoneBegin/End forms work anywhere. Without GPUZONES_ENABLE
 * every macro expands to no code (TracyCLContext to a null context); the
 * arguments are named, not evaluated, so that variables used only in the
 * macros draw no warning. */
#ifndef GPUZONES_OPENCL_H
#define GPUZONES_OPENCL_H

#include "gpuzones.h"

#ifdef GPUZONES_ENABLE

#include <CL/cl.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpuzones_cl_ctx gpuzones_cl_ctx;

/* The OpenCL functions the context calls, taken from the program (the
 * library itself does not link libOpenCL). */
typedef struct gpuzones_cl_fns {
    cl_int(CL_API_CALL *get_event_info)(cl_event, cl_event_info, size_t, void *, size_t *);
    cl_int(CL_API_CALL *get_event_profiling_info)(cl_event, cl_profiling_info, size_t, void *,
                                                  size_t *);
    cl_int(CL_API_CALL *retain_event)(cl_event);
    cl_int(CL_API_CALL *release_event)(cl_event);
    cl_int(CL_API_CALL *get_device_info)(cl_device_id, cl_device_info, size_t, void *,
                                         size_t *);
    cl_int(CL_API_CALL *get_device_and_host_timer)(cl_device_id, cl_ulong *, cl_ulong *);
} gpuzones_cl_fns;

/* A zone in flight: filled by begin, given its event, finished by end. */
typedef struct gpuzones_cl_zone {
    gpuzones_cl_ctx *ctx; /* NULL: inactive */
    cl_event event;
    uint32_t srcloc;
    uint64_t begin_ns;
} gpuzones_cl_zone;

/* NULL when gpuzones is disabled or failed to start. */
GPUZONES_API gpuzones_cl_ctx *gpuzones_cl_context(cl_context context, cl_device_id device,
                                                  const gpuzones_cl_fns *fns);
GPUZONES_API void gpuzones_cl_context_name(gpuzones_cl_ctx *ctx, const char *name, size_t len);
GPUZONES_API void gpuzones_cl_destroy(gpuzones_cl_ctx *ctx);
GPUZONES_API void gpuzones_cl_collect(gpuzones_cl_ctx *ctx);
GPUZONES_API gpuzones_cl_zone gpuzones_cl_zone_begin(gpuzones_cl_ctx *ctx, uint32_t srcloc,
                                                     int active);
/* A second event replaces the first (the last command is the zone). */
GPUZONES_API void gpuzones_cl_zone_set_event(gpuzones_cl_zone *zone, cl_event event);
/* Hands the zone to its context (a zone without an event is dropped and
 * counted, with one message). */
GPUZONES_API void gpuzones_cl_zone_end(gpuzones_cl_zone *zone);

#ifdef __cplusplus
}
#endif

#ifdef CL_VERSION_2_1
#define GPUZONES_CL_TIMER_FN_ clGetDeviceAndHostTimer
#else
#define GPUZONES_CL_TIMER_FN_ NULL
#endif

typedef gpuzones_cl_ctx *TracyCLCtx;

#define GpuzonesCLContext(context, device)                                                    \
    __extension__({                                                                           \
        static const gpuzones_cl_fns gpuzones_cl_fns_ = {                                     \
            clGetEventInfo, clGetEventProfilingInfo, clRetainEvent,                           \
            clReleaseEvent, clGetDeviceInfo,       GPUZONES_CL_TIMER_FN_};                    \
        gpuzones_cl_context((context), (device), &gpuzones_cl_fns_);                          \
    })
#define GpuzonesCLZoneBegin(ctx, name, color, active)                                         \
    gpuzones_cl_zone_begin((ctx), GPUZONES_SRCLOC_ID(name, color), (active))
#define GpuzonesCLZoneBeginTransient(ctx, name, active)                                       \
    gpuzones_cl_zone_begin((ctx),                                                             \
                           gpuzones_srcloc_transient((name), strlen(name), __func__, __FILE__, \
                                                     (uint32_t)__LINE__, 0),                  \
                           (active))
#define GpuzonesCLZoneEnd(zone) gpuzones_cl_zone_end(zone)

static inline void gpuzones_cl_zone_cleanup_(gpuzones_cl_zone *zone)
{
    gpuzones_cl_zone_end(zone);
}
/* unused: clang counts a variable only read by its cleanup as unused */
#define GPUZONES_CL_SCOPED_ __attribute__((cleanup(gpuzones_cl_zone_cleanup_), unused))

#ifndef GPUZONES_NO_TRACY_NAMES
#define TracyCLContext(context, device) GpuzonesCLContext(context, device)
#define TracyCLContextName(ctx, name, size) gpuzones_cl_context_name((ctx), (name), (size))
#define TracyCLDestroy(ctx) gpuzones_cl_destroy(ctx)
#define TracyCLCollect(ctx) gpuzones_cl_collect(ctx)
#define TracyCLNamedZoneC(ctx, varname, name, color, active)                                  \
    GPUZONES_CL_SCOPED_ gpuzones_cl_zone varname =                                            \
        GpuzonesCLZoneBegin(ctx, name, color, active)
#define TracyCLNamedZone(ctx, varname, name, active)                                          \
    TracyCLNamedZoneC(ctx, varname, name, 0, active)
#define TracyCLZoneTransient(ctx, varname, name, active)                                      \
    GPUZONES_CL_SCOPED_ gpuzones_cl_zone varname = GpuzonesCLZoneBeginTransient(ctx, name, active)
#define TracyCLZoneC(ctx, name, color)                                                        \
    TracyCLNamedZoneC(ctx, gpuzones_cl_scoped_zone_, name, color, 1)
#define TracyCLZone(ctx, name) TracyCLZoneC(ctx, name, 0)
#define TracyCLNamedZoneSetEvent(varname, event) gpuzones_cl_zone_set_event(&(varname), (event))
#define TracyCLZoneSetEvent(event) TracyCLNamedZoneSetEvent(gpuzones_cl_scoped_zone_, event)
#define TracyCLSetEvent(event) TracyCLZoneSetEvent(event)
#endif

#else /* !GPUZONES_ENABLE */

#define GpuzonesCLContext(context, device) (GPUZONES_UNUSED_(context, device), (void *)0)
#define GpuzonesCLZoneEnd(zone)
#ifndef GPUZONES_NO_TRACY_NAMES
typedef void *TracyCLCtx;
#define TracyCLContext(context, device) (GPUZONES_UNUSED_(context, device), (TracyCLCtx)0)
#define TracyCLContextName(ctx, name, size) GPUZONES_UNUSED_(ctx, name, size)
#define TracyCLDestroy(ctx) GPUZONES_UNUSED_(ctx)
#define TracyCLCollect(ctx) GPUZONES_UNUSED_(ctx)
#define TracyCLNamedZoneC(ctx, varname, name, color, active)                                  \
    GPUZONES_UNUSED_(ctx, name, color, active)
#define TracyCLNamedZone(ctx, varname, name, active) GPUZONES_UNUSED_(ctx, name, active)
#define TracyCLZoneTransient(ctx, varname, name, active) GPUZONES_UNUSED_(ctx, name, active)
#define TracyCLZoneC(ctx, name, color) GPUZONES_UNUSED_(ctx, name, color)
#define TracyCLZone(ctx, name) GPUZONES_UNUSED_(ctx, name)
#define TracyCLNamedZoneSetEvent(varname, event) GPUZONES_UNUSED_(event)
#define TracyCLZoneSetEvent(event) GPUZONES_UNUSED_(event)
#define TracyCLSetEvent(event) GPUZONES_UNUSED_(event)
#endif

#endif /* GPUZONES_ENABLE */

#endif /* GPUZONES_OPENCL_H */
