/* The explicit API of include/gpuzones/opencl.h (TracyCL…): a timeline per
 * TracyCLContext, zones handed to it with their events at scope end. */
#define GPUZONES_ENABLE 1
#include "gpuzones/opencl.h"

#include <stdio.h>
#include <stdlib.h>

#include "gz_cl.h"

struct gpuzones_cl_ctx {
    gz_cl_queue *q;
    cl_int(CL_API_CALL *retain_event)(cl_event);
    cl_int(CL_API_CALL *release_event)(cl_event);
};

gpuzones_cl_ctx *gpuzones_cl_context(cl_context context, cl_device_id device,
                                     const gpuzones_cl_fns *fns)
{
    static uint32_t serial;
    if (!fns || !fns->get_event_info || !fns->get_event_profiling_info || !fns->retain_event ||
        !fns->release_event || !fns->get_device_info) {
        gz_log("TracyCLContext: missing OpenCL functions: no zones for this context");
        return NULL;
    }
    gpuzones_cl_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    gz_cl_fns f = {
        .GetEventInfo = fns->get_event_info,
        .GetEventProfilingInfo = fns->get_event_profiling_info,
        .ReleaseEvent = fns->release_event,
        .GetDeviceInfo = fns->get_device_info,
        .GetDeviceAndHostTimer = fns->get_device_and_host_timer,
    };
    char label[48];
    snprintf(label, sizeof label, "context %u",
             __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
    c->q = gz_cl_queue_new(&f, device, label);
    if (!c->q) {
        free(c);
        return NULL;
    }
    c->retain_event = fns->retain_event;
    c->release_event = fns->release_event;
    return c;
}

void gpuzones_cl_context_name(gpuzones_cl_ctx *ctx, const char *name, size_t len)
{
    if (ctx)
        gz_cl_queue_set_name(ctx->q, name, len);
}

void gpuzones_cl_destroy(gpuzones_cl_ctx *ctx)
{
    if (!ctx)
        return;
    gz_cl_queue_collect(ctx->q);
    gz_cl_queue_release(ctx->q); /* freed once what is pending is read */
    free(ctx);
}

void gpuzones_cl_collect(gpuzones_cl_ctx *ctx)
{
    if (ctx)
        gz_cl_queue_collect(ctx->q);
}

gpuzones_cl_zone gpuzones_cl_zone_begin(gpuzones_cl_ctx *ctx, uint32_t srcloc, int active)
{
    gpuzones_cl_zone z = {0};
    if (ctx && active) {
        z.ctx = ctx;
        z.srcloc = srcloc;
        z.begin_ns = gz_host_now_ns();
    }
    return z;
}

/* The reference is taken here, while the event is certainly alive: the
 * program may release its own before the zone's scope ends. */
void gpuzones_cl_zone_set_event(gpuzones_cl_zone *zone, cl_event event)
{
    if (!zone || !zone->ctx || !event)
        return;
    gpuzones_cl_ctx *c = zone->ctx;
    if (c->retain_event(event) != CL_SUCCESS)
        return;
    if (zone->event)
        c->release_event(zone->event);
    zone->event = event;
}

void gpuzones_cl_zone_end(gpuzones_cl_zone *zone)
{
    if (!zone || !zone->ctx)
        return;
    gpuzones_cl_ctx *c = zone->ctx;
    zone->ctx = NULL;
    if (!zone->event) {
        static int once;
        gz_log_once(&once, "an OpenCL zone ended without TracyCLZoneSetEvent: it is dropped");
        gz_cl_queue_count_drop(c->q);
        return;
    }
    uint64_t end_ns = gz_host_now_ns();
    if (!gz_cl_queue_add(c->q, zone->event, zone->srcloc, true, GZ_ZONE_EXPLICIT, zone->begin_ns,
                         end_ns))
        c->release_event(zone->event);
    zone->event = NULL;
}
