/* gz-test-cl-stress: OpenCL programs that push the layer's limits, with no
 * gpuzones code; check_stress.py runs them under the layer.
 *
 *   gz-test-cl-stress burst TRUTH N [ooo]
 *       N tiny kernels enqueued back to back on one queue (out of order
 *       with "ooo"), without events, then one clFinish
 *   gz-test-cl-stress queues TRUTH N
 *       N queues one after the other: created, 3 tiny kernels, clFinish,
 *       released
 *
 * Truth (one JSON object): the host times around the work, the counts, and
 * for "queues" the resident memory (KiB) after the first tenth and at the
 * end. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *source = "__kernel void tiny(__global uint *out) {\n"
                            "  out[get_global_id(0)] += 1u;\n"
                            "}\n";

#define CHECK(x)                                                                        \
    do {                                                                                \
        cl_int e_ = (x);                                                                \
        if (e_ != CL_SUCCESS) {                                                         \
            fprintf(stderr, "gz-test-cl-stress: %s failed: %d (line %d)\n", #x, e_,     \
                    __LINE__);                                                          \
            exit(2);                                                                    \
        }                                                                               \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Resident memory once the layer's worker (which frees a released queue's
 * state at its next readback, every 20 ms) has caught up. */
static long rss_kib(void)
{
    nanosleep(&(struct timespec){0, 100000000}, NULL);
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2) {
        fprintf(stderr, "gz-test-cl-stress: cannot read /proc/self/statm\n");
        exit(2);
    }
    fclose(f);
    return resident * 4;
}

static cl_context ctx;
static cl_device_id dev;
static cl_kernel tiny;
static cl_mem buf;

static void setup(void)
{
    cl_platform_id plat;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
    tiny = clCreateKernel(prog, "tiny", &err);
    CHECK(err);
    clReleaseProgram(prog);
    buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(cl_uint), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(tiny, 0, sizeof buf, &buf));
}

static void enqueue_tiny(cl_command_queue q)
{
    size_t global = 64;
    CHECK(clEnqueueNDRangeKernel(q, tiny, 1, NULL, &global, NULL, 0, NULL, NULL));
}

static cl_command_queue new_queue(cl_command_queue_properties props)
{
    cl_int err;
    cl_queue_properties p[] = {CL_QUEUE_PROPERTIES, props, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, p, &err);
    CHECK(err);
    return q;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: gz-test-cl-stress burst|queues TRUTH N [ooo]\n");
        return 2;
    }
    FILE *truth = fopen(argv[2], "w");
    if (!truth) {
        perror(argv[2]);
        return 2;
    }
    int n = atoi(argv[3]);
    setup();
    if (!strcmp(argv[1], "burst")) {
        int ooo = argc > 4 && !strcmp(argv[4], "ooo");
        cl_command_queue q = new_queue(ooo ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0);
        uint64_t before = now_ns();
        for (int i = 0; i < n; i++)
            enqueue_tiny(q);
        uint64_t enqueued = now_ns();
        CHECK(clFinish(q));
        uint64_t seen = now_ns();
        clReleaseCommandQueue(q);
        fprintf(truth, "{\"mode\":\"burst\",\"kernels\":%d,\"before\":%llu,\"enqueued\":%llu,"
                       "\"seen\":%llu}\n",
                n, (unsigned long long)before, (unsigned long long)enqueued,
                (unsigned long long)seen);
    } else if (!strcmp(argv[1], "queues")) {
        long first = 0;
        uint64_t before = now_ns();
        for (int i = 0; i < n; i++) {
            cl_command_queue q = new_queue(0);
            for (int k = 0; k < 3; k++)
                enqueue_tiny(q);
            CHECK(clFinish(q));
            CHECK(clReleaseCommandQueue(q));
            if (i == n / 10)
                first = rss_kib();
        }
        uint64_t seen = now_ns();
        fprintf(truth, "{\"mode\":\"queues\",\"queues\":%d,\"kernels_each\":3,\"before\":%llu,"
                       "\"seen\":%llu,\"rss_first_kib\":%ld,\"rss_last_kib\":%ld,"
                       "\"measured_from\":%d}\n",
                n, (unsigned long long)before, (unsigned long long)seen, first, rss_kib(),
                n / 10);
    } else {
        fprintf(stderr, "gz-test-cl-stress: unknown mode %s\n", argv[1]);
        return 2;
    }
    clReleaseMemObject(buf);
    clReleaseKernel(tiny);
    clReleaseContext(ctx);
    fclose(truth);
    return 0;
}
