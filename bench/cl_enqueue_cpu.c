/* CPU cost of an OpenCL enqueue on the calling thread, for comparing runs
 * with and without the gpuzones OpenCL layer (OPENCL_LAYERS): blocks of N
 * small kernel enqueues, each block followed by clFinish (not timed). The
 * enqueue thread's CPU time per enqueue is what a layer adds to the app;
 * the kernels run on pocl's own threads.
 *
 *   gz-bench-cl-enqueue [enqueues per block] [blocks]
 *
 * Prints one line of key=value pairs: medians over the blocks.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gz_bench.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cl_int e_ = (x);                                                                           \
        if (e_ != CL_SUCCESS) {                                                                    \
            fprintf(stderr, "gz-bench-cl-enqueue: %s failed: %d\n", #x, e_);                      \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const char *source = "__kernel void bump(__global int *a) { a[get_global_id(0)] += 1; }";

int main(int argc, char **argv)
{
    int per_block = argc > 1 ? atoi(argv[1]) : 1000;
    int blocks = argc > 2 ? atoi(argv[2]) : 15;
    if (per_block < 1 || blocks < 1 || blocks > 1000) {
        fprintf(stderr, "usage: gz-bench-cl-enqueue [enqueues per block] [blocks <= 1000]\n");
        return 2;
    }
    cl_platform_id platform;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "bump", &err);
    CHECK(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    size_t global = 64;

    double cpu[1000], wall[1000];
    for (int b = -2; b < blocks; b++) { /* two untimed blocks warm pocl up */
        double c0 = gz_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
        double w0 = gz_bench_clock_ns(CLOCK_MONOTONIC);
        for (int i = 0; i < per_block; i++)
            CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        double c1 = gz_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
        double w1 = gz_bench_clock_ns(CLOCK_MONOTONIC);
        CHECK(clFinish(q));
        if (b >= 0) {
            cpu[b] = (c1 - c0) / per_block;
            wall[b] = (w1 - w0) / per_block;
        }
    }
    printf("enqueues=%d blocks=%d cpu_ns_per_enqueue=%.1f wall_ns_per_enqueue=%.1f\n", per_block,
           blocks, gz_bench_median(cpu, blocks), gz_bench_median(wall, blocks));
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
