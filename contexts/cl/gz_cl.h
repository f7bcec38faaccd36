/* The OpenCL context: one GPU timeline per cl_command_queue (layer) or per
 * TracyCLContext (public API). Commands are handed over with an event that
 * the context holds one reference to; the worker reads START/END once the
 * event is complete (never waiting for it) and releases that reference.
 *
 * The OpenCL functions come in as pointers (the layer's next dispatch
 * table, or the application's own symbols for the public API), so
 * libgpuzones does not link libOpenCL. */
#ifndef GZ_CL_H
#define GZ_CL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <stdbool.h>
#include <stdint.h>

#include "gz_client.h"

typedef struct gz_cl_fns {
    cl_int(CL_API_CALL *GetEventInfo)(cl_event, cl_event_info, size_t, void *, size_t *);
    cl_int(CL_API_CALL *GetEventProfilingInfo)(cl_event, cl_profiling_info, size_t, void *,
                                               size_t *);
    cl_int(CL_API_CALL *ReleaseEvent)(cl_event);
    cl_int(CL_API_CALL *GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void *, size_t *);
    /* may be NULL (OpenCL < 2.1) */
    cl_int(CL_API_CALL *GetDeviceAndHostTimer)(cl_device_id, cl_ulong *, cl_ulong *);
} gz_cl_fns;

typedef struct gz_cl_queue gz_cl_queue;

/* A timeline named "<device> <label>". NULL when the client is off or out
 * of memory (the caller then passes everything through untouched). */
GZ_EXPORT gz_cl_queue *gz_cl_queue_new(const gz_cl_fns *fns, cl_device_id device,
                                       const char *label);
void gz_cl_queue_set_name(gz_cl_queue *q, const char *name, size_t len);
/* The owner is done with it: the context frees it once the commands still
 * pending have been read (or at exit). */
GZ_EXPORT void gz_cl_queue_release(gz_cl_queue *q);

/* A command enqueued between host times before_ns and after_ns whose event
 * the context now holds one reference to (it releases it after readback).
 * name: an interned id, or a source-location id with srcloc set; kind: a
 * gz_zone_kind. Returns false when the context cannot take it (full, or
 * the client stopped): the reference is then still the caller's. */
GZ_EXPORT bool gz_cl_queue_add(gz_cl_queue *q, cl_event ev, uint32_t name, bool srcloc,
                               unsigned kind, uint64_t before_ns, uint64_t after_ns);
/* A zone lost before it reached the context (counted on its track). */
void gz_cl_queue_count_drop(gz_cl_queue *q);
/* clFinish returned at done_ns: every command not read back yet ended
 * before it (a bound for the clock), and the newest of them gets a flow
 * from its end to this thread's clFinish CPU zone (which must end at
 * done_ns). Commands the worker is reading back at that moment are left
 * as they are (then there may be no flow). */
GZ_EXPORT void gz_cl_queue_waited(gz_cl_queue *q, uint64_t done_ns);
/* Reads what has completed now (the host just saw work complete, at a
 * clFinish or a wait). Never waits. */
GZ_EXPORT void gz_cl_queue_collect(gz_cl_queue *q);
/* The same for every live timeline. */
void gz_cl_collect_all(void);

/* How many references to ev the context holds now (to answer the
 * application's CL_EVENT_REFERENCE_COUNT as if we held none). */
GZ_EXPORT uint32_t gz_cl_event_holds(cl_event ev);

#endif
