/* Queues: every queue the application creates gets profiling forced on
 * and a timeline; the queue still answers CL_QUEUE_PROPERTIES (and
 * CL_QUEUE_PROPERTIES_ARRAY) with what the application asked for. The
 * application's references are counted here (the driver's own count also
 * includes the references our pending events hold on the queue), so the
 * timeline is let go exactly when the application lets the queue go.
 * The records are found by queue handle in a gz_handle_map. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_cl_layer.h"
#include "gz_handle_map.h"

#define MAX_PROPS 64u

typedef struct qrec {
    gz_handle_node node; /* key: the queue */
    gz_cl_queue *ctx;
    cl_command_queue_properties app_props;
    uint32_t app_refs;
    uint32_t nprops; /* entries of props incl. the terminating 0; 0: none given */
    cl_queue_properties props[MAX_PROPS];
} qrec;

/* A record is read, or its count changed, with the last release (which
 * takes it out and frees it) kept out meanwhile: a single map call does
 * not give that. */
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static gz_handle_map queues = GZ_HANDLE_MAP_INITIALIZER;
static uint32_t serial;

static qrec *find_locked(cl_command_queue q)
{
    gz_handle_node *node = gz_handle_map_get(&queues, GZ_HANDLE_KEY(q));
    return node ? gz_container_of(node, qrec, node) : NULL;
}

gz_cl_queue *gz_cl_layer_queue(cl_command_queue q)
{
    pthread_rwlock_rdlock(&lock);
    qrec *r = find_locked(q);
    gz_cl_queue *ctx = r ? r->ctx : NULL;
    pthread_rwlock_unlock(&lock);
    return ctx;
}

static void add_queue(cl_command_queue q, cl_device_id dev, cl_command_queue_properties app,
                      const cl_queue_properties *props, uint32_t nprops)
{
    qrec *r = calloc(1, sizeof *r);
    if (!r) {
        gz_log("opencl: out of memory: a command queue gets no zones");
        return;
    }
    static const gz_cl_fns fns_template; /* filled below: the table is known only now */
    gz_cl_fns fns = fns_template;
    fns.GetEventInfo = gz_cl_next->clGetEventInfo;
    fns.GetEventProfilingInfo = gz_cl_next->clGetEventProfilingInfo;
    fns.ReleaseEvent = gz_cl_next->clReleaseEvent;
    fns.GetDeviceInfo = gz_cl_next->clGetDeviceInfo;
    fns.GetDeviceAndHostTimer = gz_cl_next->clGetDeviceAndHostTimer;
    char label[64];
    snprintf(label, sizeof label, "queue %u (%s)", __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED),
             (app & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) ? "out-of-order" : "in-order");
    r->ctx = gz_cl_queue_new(&fns, dev, label);
    r->app_props = app;
    r->app_refs = 1;
    r->nprops = nprops;
    if (nprops)
        memcpy(r->props, props, nprops * sizeof *props);
    /* Nothing is under q: the last release took its record out before
     * the driver could reuse the handle. */
    pthread_rwlock_wrlock(&lock);
    gz_handle_map_put(&queues, GZ_HANDLE_KEY(q), &r->node);
    pthread_rwlock_unlock(&lock);
}

static cl_command_queue CL_API_CALL create_queue(cl_context context, cl_device_id device,
                                                 cl_command_queue_properties properties,
                                                 cl_int *errcode_ret)
{
    cl_int err = CL_SUCCESS;
    cl_command_queue q = gz_cl_next->clCreateCommandQueue(
        context, device, properties | CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS && !(properties & CL_QUEUE_PROFILING_ENABLE)) {
        /* The device refuses profiling: the application's queue unchanged. */
        static int once;
        gz_log_once(&once, "opencl: cannot enable profiling on a queue (error %d): it gets no "
                           "zones",
                    (int)err);
        q = gz_cl_next->clCreateCommandQueue(context, device, properties, &err);
    } else if (err == CL_SUCCESS) {
        add_queue(q, device, properties, NULL, 0);
    }
    if (errcode_ret)
        *errcode_ret = err;
    return q;
}

static cl_command_queue CL_API_CALL create_queue_props(cl_context context, cl_device_id device,
                                                       const cl_queue_properties *properties,
                                                       cl_int *errcode_ret)
{
    /* A copy of the application's list with PROFILING or'ed into its
     * CL_QUEUE_PROPERTIES entry (added when it has none). */
    cl_queue_properties mine[MAX_PROPS + 2];
    uint32_t n = 0, nprops = 0;
    cl_command_queue_properties app = 0;
    bool fits = true, has_props = false;
    if (properties) {
        while (properties[nprops] != 0 && nprops + 2 < MAX_PROPS)
            nprops += 2;
        fits = properties[nprops] == 0;
        nprops++; /* the terminating 0 */
    }
    if (!fits) {
        static int once;
        gz_log_once(&once, "opencl: a queue property list longer than %u entries is passed "
                           "through untouched: that queue gets no zones",
                    MAX_PROPS);
        return gz_cl_next->clCreateCommandQueueWithProperties(context, device, properties,
                                                              errcode_ret);
    }
    for (uint32_t i = 0; properties && properties[i] != 0; i += 2) {
        mine[n++] = properties[i];
        mine[n++] = properties[i + 1];
        if (properties[i] == CL_QUEUE_PROPERTIES) {
            has_props = true;
            app = (cl_command_queue_properties)properties[i + 1];
            mine[n - 1] |= CL_QUEUE_PROFILING_ENABLE;
        }
    }
    if (!has_props) {
        mine[n++] = CL_QUEUE_PROPERTIES;
        mine[n++] = CL_QUEUE_PROFILING_ENABLE;
    }
    mine[n] = 0;
    cl_int err = CL_SUCCESS;
    cl_command_queue q =
        gz_cl_next->clCreateCommandQueueWithProperties(context, device, mine, &err);
    if (err != CL_SUCCESS && !(app & CL_QUEUE_PROFILING_ENABLE)) {
        static int once;
        gz_log_once(&once, "opencl: cannot enable profiling on a queue (error %d): it gets no "
                           "zones",
                    (int)err);
        q = gz_cl_next->clCreateCommandQueueWithProperties(context, device, properties, &err);
    } else if (err == CL_SUCCESS) {
        add_queue(q, device, app, properties, nprops);
    }
    if (errcode_ret)
        *errcode_ret = err;
    return q;
}

static cl_int answer(const void *src, size_t size, size_t param_value_size, void *param_value,
                     size_t *param_value_size_ret)
{
    if (param_value) {
        if (param_value_size < size)
            return CL_INVALID_VALUE;
        memcpy(param_value, src, size);
    }
    if (param_value_size_ret)
        *param_value_size_ret = size;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL queue_info(cl_command_queue q, cl_command_queue_info param,
                                     size_t size, void *value, size_t *size_ret)
{
    if (param == CL_QUEUE_PROPERTIES || param == CL_QUEUE_PROPERTIES_ARRAY) {
        pthread_rwlock_rdlock(&lock);
        qrec *r = find_locked(q);
        qrec copy;
        if (r)
            copy = *r;
        pthread_rwlock_unlock(&lock);
        if (r && param == CL_QUEUE_PROPERTIES)
            return answer(&copy.app_props, sizeof copy.app_props, size, value, size_ret);
        if (r && copy.nprops)
            return answer(copy.props, copy.nprops * sizeof *copy.props, size, value, size_ret);
    }
    return gz_cl_next->clGetCommandQueueInfo(q, param, size, value, size_ret);
}

static cl_int CL_API_CALL retain_queue(cl_command_queue q)
{
    cl_int err = gz_cl_next->clRetainCommandQueue(q);
    if (err == CL_SUCCESS) {
        pthread_rwlock_wrlock(&lock);
        qrec *r = find_locked(q);
        if (r)
            r->app_refs++;
        pthread_rwlock_unlock(&lock);
    }
    return err;
}

static cl_int CL_API_CALL release_queue(cl_command_queue q)
{
    /* Unlinked before the driver may free the handle (and reuse it). */
    pthread_rwlock_wrlock(&lock);
    qrec *gone = find_locked(q);
    if (gone && --gone->app_refs == 0)
        gz_handle_map_remove_node(&queues, &gone->node);
    else
        gone = NULL;
    pthread_rwlock_unlock(&lock);
    if (gone) {
        /* The queue flushes itself on release; what it ran is read later. */
        gz_cl_queue_collect(gone->ctx);
        gz_cl_queue_release(gone->ctx);
        free(gone);
    }
    return gz_cl_next->clReleaseCommandQueue(q);
}

/* The application sees the reference count it would see without us. */
static cl_int CL_API_CALL event_info(cl_event ev, cl_event_info param, size_t size, void *value,
                                     size_t *size_ret)
{
    cl_int err = gz_cl_next->clGetEventInfo(ev, param, size, value, size_ret);
    if (err == CL_SUCCESS && param == CL_EVENT_REFERENCE_COUNT && value &&
        size >= sizeof(cl_uint)) {
        cl_uint *count = value;
        uint32_t ours = gz_cl_event_holds(ev);
        *count = *count > ours ? *count - ours : 0;
    }
    return err;
}

/* The application's own blocking calls: the host has just seen its work
 * complete, the tightest moment to read it back. clFinish on a timed queue
 * gets a CPU zone, and a flow to it from the end of the queue's last
 * command. */
static cl_int CL_API_CALL finish(cl_command_queue q)
{
    static uint32_t name_id;
    gz_cl_queue *ctx = gz_cl_layer_queue(q);
    uint64_t t0 = gz_host_now_ns();
    cl_int err = gz_cl_next->clFinish(q);
    uint64_t t1 = gz_host_now_ns();
    if (err == CL_SUCCESS && ctx) {
        gz_cl_queue_waited(ctx, t1);
        gz_cl_queue_collect(ctx);
    }
    if (ctx)
        gz_cpu_zone(gz_intern_once(&name_id, "clFinish"), t0, t1);
    return err;
}

static cl_int CL_API_CALL wait_for_events(cl_uint n, const cl_event *events)
{
    cl_int err = gz_cl_next->clWaitForEvents(n, events);
    if (err != CL_SUCCESS || !events)
        return err;
    cl_command_queue last = NULL;
    for (cl_uint i = 0; i < n; i++) {
        cl_command_queue q = NULL;
        if (gz_cl_next->clGetEventInfo(events[i], CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) !=
                CL_SUCCESS ||
            !q || q == last)
            continue;
        last = q;
        gz_cl_queue_collect(gz_cl_layer_queue(q));
    }
    return err;
}

void gz_cl_layer_queue_hooks(struct _cl_icd_dispatch *d)
{
    d->clCreateCommandQueue = create_queue;
    d->clCreateCommandQueueWithProperties = create_queue_props;
    d->clGetCommandQueueInfo = queue_info;
    d->clRetainCommandQueue = retain_queue;
    d->clReleaseCommandQueue = release_queue;
    d->clGetEventInfo = event_info;
    d->clFinish = finish;
    d->clWaitForEvents = wait_for_events;
}
