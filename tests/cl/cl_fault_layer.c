/* libgz_cl_clockfault.so: an OpenCL layer for tests, loaded below the
 * gpuzones layer (OPENCL_LAYERS=gpuzones:this), that changes exactly the
 * device clock the gpuzones layer sees, with known ground truth:
 *
 *   GZCLFAULT_OFFSET_NS=N     every profiling value + N
 *   GZCLFAULT_DRIFT_PPM=P     ... and stretched by P ppm around the first
 *                             value seen (device ns = v + (v - v0) * P/1e6)
 *   GZCLFAULT_HOST_TIMER=1    clGetDeviceAndHostTimer answers (pocl has
 *                             none): the faulted device time of now and
 *                             CLOCK_MONOTONIC
 *
 * A correct trace maps the faulted values back onto host time, so the
 * zones still lie inside their host windows. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

static const struct _cl_icd_dispatch *next;
static struct _cl_icd_dispatch table;
static int64_t offset_ns;
static double drift;
static int host_timer;
static uint64_t v0; /* the stretch's origin: the first raw value (atomic) */

static uint64_t fault(uint64_t v)
{
    uint64_t origin = __atomic_load_n(&v0, __ATOMIC_RELAXED);
    if (!origin) {
        uint64_t zero = 0;
        __atomic_compare_exchange_n(&v0, &zero, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        origin = __atomic_load_n(&v0, __ATOMIC_RELAXED);
    }
    double d = ((double)v - (double)origin) * drift;
    return (uint64_t)((int64_t)v + offset_ns + (int64_t)d);
}

static uint64_t now(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static cl_int CL_API_CALL profiling_info(cl_event ev, cl_profiling_info what, size_t size,
                                         void *value, size_t *size_ret)
{
    cl_int err = next->clGetEventProfilingInfo(ev, what, size, value, size_ret);
    if (err == CL_SUCCESS && value && size >= sizeof(cl_ulong)) {
        cl_ulong *v = value;
        *v = fault(*v);
    }
    return err;
}

static cl_int CL_API_CALL device_and_host_timer(cl_device_id dev, cl_ulong *device,
                                                cl_ulong *host)
{
    if (!host_timer)
        return next->clGetDeviceAndHostTimer(dev, device, host);
    if (!device || !host)
        return CL_INVALID_VALUE;
    /* pocl stamps CLOCK_MONOTONIC_RAW: read both clocks back to back. */
    uint64_t raw = now(CLOCK_MONOTONIC_RAW);
    *host = now(CLOCK_MONOTONIC);
    *device = fault(raw);
    return CL_SUCCESS;
}

EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param, size_t size,
                                                      void *value, size_t *size_ret)
{
    if (param != CL_LAYER_API_VERSION)
        return CL_INVALID_VALUE;
    cl_layer_api_version v = CL_LAYER_API_VERSION_100;
    if (value) {
        if (size < sizeof v)
            return CL_INVALID_VALUE;
        memcpy(value, &v, sizeof v);
    }
    if (size_ret)
        *size_ret = sizeof v;
    return CL_SUCCESS;
}

EXPORT CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries,
                                                   const cl_icd_dispatch *target,
                                                   cl_uint *num_entries_ret,
                                                   const cl_icd_dispatch **layer)
{
    if (num_entries < sizeof table / sizeof(void *))
        return CL_INVALID_VALUE;
    const char *s;
    offset_ns = (s = getenv("GZCLFAULT_OFFSET_NS")) ? strtoll(s, NULL, 10) : 0;
    drift = (s = getenv("GZCLFAULT_DRIFT_PPM")) ? strtod(s, NULL) * 1e-6 : 0.0;
    host_timer = (s = getenv("GZCLFAULT_HOST_TIMER")) && *s == '1';
    next = target;
    memcpy(&table, target, sizeof table);
    table.clGetEventProfilingInfo = profiling_info;
    table.clGetDeviceAndHostTimer = device_and_host_timer;
    *num_entries_ret = sizeof table / sizeof(void *);
    *layer = &table;
    return CL_SUCCESS;
}
