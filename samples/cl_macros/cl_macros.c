/* An OpenCL program timed with gpuzones' Tracy-named macros
 * (include/gpuzones/opencl.h). Built with -DGPUZONES_ENABLE it records
 * zones "upload", "saxpy", "saxpy-repeat" (named zone), "transient-<i>"
 * and "download" (Begin/End form) on a track named "saxpy context";
 * without it the macros compile to nothing.
 *
 *   gz-sample-cl-macros [ITERATIONS]   (prints "ok" when the results match) */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuzones/opencl.h"

#define N (1 << 16)

static const char *source =
    "__kernel void saxpy(__global float *y, __global const float *x, float a) {\n"
    "  size_t i = get_global_id(0); y[i] = a * x[i] + y[i];\n"
    "}\n";

#define CHECK(x)                                                                         \
    do {                                                                                 \
        cl_int e_ = (x);                                                                 \
        if (e_ != CL_SUCCESS) {                                                          \
            fprintf(stderr, "gz-sample-cl-macros: %s failed: %d\n", #x, e_);             \
            exit(2);                                                                     \
        }                                                                                \
    } while (0)

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 4;
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context context = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, dev, props, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
    cl_kernel saxpy = clCreateKernel(prog, "saxpy", &err);
    CHECK(err);
    cl_mem x = clCreateBuffer(context, CL_MEM_READ_WRITE, N * 4, NULL, &err);
    CHECK(err);
    cl_mem y = clCreateBuffer(context, CL_MEM_READ_WRITE, N * 4, NULL, &err);
    CHECK(err);

    TracyCLCtx ctx = TracyCLContext(context, dev);
    TracyCLContextName(ctx, "saxpy context", 13);

    static float hx[N], hy[N];
    for (int i = 0; i < N; i++) {
        hx[i] = 1.0f;
        hy[i] = (float)i;
    }
    {
        TracyCLZone(ctx, "upload");
        cl_event ev;
        CHECK(clEnqueueWriteBuffer(queue, x, CL_FALSE, 0, N * 4, hx, 0, NULL, NULL));
        CHECK(clEnqueueWriteBuffer(queue, y, CL_FALSE, 0, N * 4, hy, 0, NULL, &ev));
        TracyCLZoneSetEvent(ev); /* the zone is the last command */
        CHECK(clReleaseEvent(ev)); /* the zone keeps what it needs */
    }
    float a = 2.0f;
    size_t n = N;
    CHECK(clSetKernelArg(saxpy, 0, sizeof y, &y));
    CHECK(clSetKernelArg(saxpy, 1, sizeof x, &x));
    CHECK(clSetKernelArg(saxpy, 2, sizeof a, &a));
    {
        TracyCLZoneC(ctx, "saxpy", 0x40a0ff);
        cl_event ev;
        CHECK(clEnqueueNDRangeKernel(queue, saxpy, 1, NULL, &n, NULL, 0, NULL, &ev));
        TracyCLZoneSetEvent(ev);
        CHECK(clReleaseEvent(ev));
    }
    for (int i = 1; i < iterations; i++) {
        TracyCLNamedZone(ctx, repeat, "saxpy-repeat", 1);
        cl_event ev;
        CHECK(clEnqueueNDRangeKernel(queue, saxpy, 1, NULL, &n, NULL, 0, NULL, &ev));
        TracyCLNamedZoneSetEvent(repeat, ev);
        CHECK(clReleaseEvent(ev));
    }
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "transient-%d", i);
        TracyCLZoneTransient(ctx, t, name, 1);
        cl_event ev;
        CHECK(clEnqueueMarkerWithWaitList(queue, 0, NULL, &ev));
        TracyCLNamedZoneSetEvent(t, ev);
        CHECK(clReleaseEvent(ev));
    }
    CHECK(clFinish(queue));
    TracyCLCollect(ctx);

#ifdef GPUZONES_ENABLE
    gpuzones_cl_zone down = GpuzonesCLZoneBegin(ctx, "download", 0, 1);
#endif
    cl_event ev;
    CHECK(clEnqueueReadBuffer(queue, y, CL_TRUE, 0, N * 4, hy, 0, NULL, &ev));
#ifdef GPUZONES_ENABLE
    gpuzones_cl_zone_set_event(&down, ev);
    GpuzonesCLZoneEnd(&down);
#endif
    CHECK(clReleaseEvent(ev));
    TracyCLCollect(ctx);
    TracyCLDestroy(ctx);

    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= hy[i] == (float)i + 2.0f * (float)iterations;
    printf("%s\n", ok ? "ok" : "wrong results");

    clReleaseMemObject(x);
    clReleaseMemObject(y);
    clReleaseKernel(saxpy);
    clReleaseProgram(prog);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return ok ? 0 : 1;
}
