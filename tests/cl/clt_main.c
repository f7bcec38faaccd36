/* gz-test-cl: an OpenCL program with no gpuzones code that writes what it
 * knows on the CPU ("truth") for check_cl.py to compare with the trace.
 *
 *   gz-test-cl TRUTH_FILE
 *
 * Truth lines (host times are CLOCK_MONOTONIC ns):
 *   queue N ASKED GOT        queue N (creation order) was asked for properties
 *                            ASKED and clGetCommandQueueInfo answered GOT
 *   kernel NAME N BEFORE SEEN
 *                            a kernel on queue N enqueued after BEFORE, seen
 *                            complete by SEEN
 *   hold N BEFORE SEEN STOPPED
 *                            a "hold" kernel on queue N that ran until
 *                            after STOPPED, HOLD_NS after BEFORE
 *   command NAME N           another command (a zone named NAME expected)
 *   refcount WHAT N          CL_EVENT_REFERENCE_COUNT of one of our events
 *                            (pending-*: while it cannot have run; the
 *                            others: once pocl has let its own go)
 *   result WHAT OK           1 when the results match the host's
 *   enqueues N               commands enqueued in all
 *
 * Phases: an in-order queue (NULL and non-NULL events, blocking read,
 * kernels of known duration), an out-of-order queue (two kernels and a marker
 * waited for together), and two threads with a queue each. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096
#define SPIN_TARGET_NS 40000000ull
#define HOLD_NS 60000000ull

static const char *source =
    "__kernel void spin(__global uint *out, uint n) {\n"
    "  uint x = get_global_id(0) + 1u;\n"
    "  for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u;\n"
    "  out[get_global_id(0)] = x;\n"
    "}\n"
    "__kernel void add(__global const float *a, __global const float *b, __global float *c) {\n"
    "  size_t i = get_global_id(0); c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void hold(volatile __global uint *f) {\n"
    "  while (atomic_add(&f[0], 0u) == 0u) {}\n"
    "}\n"
    "__kernel void scale(__global float *a, float k) {\n"
    "  size_t i = get_global_id(0); a[i] *= k;\n"
    "}\n";

static FILE *truth;
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned enqueues;
static cl_context ctx;
static cl_device_id dev;
static cl_program prog;
static cl_uint spin_iters = 100000;

#define CHECK(x)                                                                    \
    do {                                                                            \
        cl_int e_ = (x);                                                            \
        if (e_ != CL_SUCCESS) {                                                     \
            fprintf(stderr, "gz-test-cl: %s failed: %d (line %d)\n", #x, e_, __LINE__); \
            exit(2);                                                                \
        }                                                                           \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&truth_lock);
    vfprintf(truth, fmt, ap);
    pthread_mutex_unlock(&truth_lock);
    va_end(ap);
}

static void counted(void)
{
    __atomic_add_fetch(&enqueues, 1, __ATOMIC_RELAXED);
}

static cl_kernel kernel(const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);
    CHECK(err);
    return k;
}

static cl_mem buffer(size_t size)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    CHECK(err);
    return m;
}

static uint32_t spin_host(uint32_t gid, uint32_t n)
{
    uint32_t x = gid + 1u;
    for (uint32_t i = 0; i < n; i++)
        x = x * 1664525u + 1013904223u;
    return x;
}

static void record_queue(cl_command_queue q, unsigned n, cl_command_queue_properties asked)
{
    cl_command_queue_properties got = 0;
    CHECK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof got, &got, NULL));
    say("queue %u %llu %llu\n", n, (unsigned long long)asked, (unsigned long long)got);
}

static cl_uint refcount(cl_event ev)
{
    cl_uint rc = 0;
    CHECK(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof rc, &rc, NULL));
    return rc;
}

static void record_refcount(const char *what, cl_event ev)
{
    say("refcount %s %u\n", what, refcount(ev));
}

/* A completed event: pocl lets its own references go a little later, so
 * the count is read until it is ours alone (1), for up to a second. */
static void record_settled_refcount(const char *what, cl_event ev)
{
    cl_uint rc = refcount(ev);
    for (int i = 0; i < 1000 && rc > 1; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        rc = refcount(ev);
    }
    say("refcount %s %u\n", what, rc);
}

/* One spin kernel (one work item) on q, waited for with clFinish. */
static uint64_t spin_once(cl_command_queue q, unsigned qn, cl_kernel k, cl_mem out, cl_uint iters,
                          cl_event *ev)
{
    size_t one = 1;
    CHECK(clSetKernelArg(k, 0, sizeof out, &out));
    CHECK(clSetKernelArg(k, 1, sizeof iters, &iters));
    uint64_t before = now_ns();
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, ev));
    counted();
    CHECK(clFinish(q));
    uint64_t seen = now_ns();
    say("kernel spin %u %llu %llu\n", qn, (unsigned long long)before, (unsigned long long)seen);
    return seen - before;
}

/* A kernel of known duration on a loaded machine too: it runs until the
 * host, HOLD_NS after the enqueue call, tells it to stop through memory
 * they share (pocl's CPU device uses a USE_HOST_PTR buffer in place). Its
 * end is after that moment, so its zone must end after STOPPED and last
 * about STOPPED - BEFORE: pocl stamps START within a millisecond of the
 * enqueue even on a busy machine (measured here), while its threads may
 * start running the kernel tens of ms later. */
static void hold_once(cl_command_queue q, unsigned qn, cl_kernel k, cl_event *ev)
{
    static cl_uint flags[32] __attribute__((aligned(128)));
    cl_int err;
    __atomic_store_n(&flags[0], 0, __ATOMIC_SEQ_CST);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, sizeof flags, flags,
                              &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    size_t one = 1;
    uint64_t before = now_ns();
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, ev));
    counted();
    CHECK(clFlush(q));
    struct timespec t = {0, (long)HOLD_NS};
    nanosleep(&t, NULL);
    uint64_t stopped = now_ns();
    __atomic_store_n(&flags[0], 1, __ATOMIC_SEQ_CST);
    CHECK(clFinish(q));
    uint64_t seen = now_ns();
    say("hold %u %llu %llu %llu\n", qn, (unsigned long long)before, (unsigned long long)seen,
        (unsigned long long)stopped);
    clReleaseMemObject(m);
}

static void phase_in_order(cl_command_queue q)
{
    cl_kernel add = kernel("add"), spin = kernel("spin");
    cl_mem a = buffer(N * 4), b = buffer(N * 4), c = buffer(N * 4), s = buffer(4);
    static float ha[N], hb[N], hc[N];
    for (int i = 0; i < N; i++) {
        ha[i] = (float)i;
        hb[i] = 2.0f * (float)i;
    }
    /* Size the spin kernel to about SPIN_TARGET_NS (the first run also
     * compiles whatever pocl compiles lazily: not a timed one). */
    for (int i = 0; i < 3; i++) {
        uint64_t t = spin_once(q, 1, spin, s, spin_iters, NULL);
        if (t > 0)
            spin_iters = (cl_uint)((double)spin_iters * (double)SPIN_TARGET_NS / (double)t);
        if (spin_iters < 1000)
            spin_iters = 1000;
    }
    /* NULL events, non-blocking writes, a kernel, a blocking read. */
    uint64_t before = now_ns();
    CHECK(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, N * 4, ha, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(q, b, CL_FALSE, 0, N * 4, hb, 0, NULL, NULL));
    uint64_t kbefore = now_ns();
    CHECK(clSetKernelArg(add, 0, sizeof a, &a));
    CHECK(clSetKernelArg(add, 1, sizeof b, &b));
    CHECK(clSetKernelArg(add, 2, sizeof c, &c));
    size_t n = N;
    CHECK(clEnqueueNDRangeKernel(q, add, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, N * 4, hc, 0, NULL, NULL));
    uint64_t seen = now_ns();
    enqueues += 4;
    (void)before;
    say("kernel add 1 %llu %llu\n", (unsigned long long)kbefore, (unsigned long long)seen);
    say("command WriteBuffer 1\ncommand ReadBuffer 1\n");
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= hc[i] == 3.0f * (float)i;
    say("result add %d\n", ok);

    /* Spins with an event of our own. */
    for (int i = 0; i < 3; i++) {
        cl_event ev;
        spin_once(q, 1, spin, s, spin_iters, &ev);
        record_settled_refcount("spin", ev);
        CHECK(clReleaseEvent(ev));
    }
    /* Kernels of known duration, one with an event of ours, two without. */
    cl_kernel hold = kernel("hold");
    for (int i = 0; i < 3; i++) {
        cl_event ev;
        hold_once(q, 1, hold, i == 0 ? &ev : NULL);
        if (i == 0) {
            record_settled_refcount("hold", ev);
            CHECK(clReleaseEvent(ev));
        }
    }
    clReleaseKernel(hold);
    cl_uint got = 0;
    CHECK(clEnqueueReadBuffer(q, s, CL_TRUE, 0, 4, &got, 0, NULL, NULL));
    counted();
    say("command ReadBuffer 1\n");
    say("result spin %d\n", got == spin_host(0, spin_iters));
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseMemObject(s);
    clReleaseKernel(add);
    clReleaseKernel(spin);
}

static void phase_out_of_order(cl_command_queue q)
{
    cl_int err;
    cl_kernel scale = kernel("scale"), add = kernel("add");
    cl_mem a = buffer(N * 4), b = buffer(N * 4), c = buffer(N * 4);
    static float ha[N], hc[N];
    for (int i = 0; i < N; i++)
        ha[i] = 1.0f + (float)i;
    cl_event w[2];
    CHECK(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, N * 4, ha, 0, NULL, &w[0]));
    CHECK(clEnqueueWriteBuffer(q, b, CL_FALSE, 0, N * 4, ha, 0, NULL, &w[1]));
    enqueues += 2;
    say("command WriteBuffer 2\n");
    float k = 3.0f;
    CHECK(clSetKernelArg(scale, 0, sizeof a, &a));
    CHECK(clSetKernelArg(scale, 1, sizeof k, &k));
    CHECK(clSetKernelArg(add, 0, sizeof b, &b));
    CHECK(clSetKernelArg(add, 1, sizeof b, &b));
    CHECK(clSetKernelArg(add, 2, sizeof c, &c));
    size_t n = N;
    cl_event ev[3];
    uint64_t before = now_ns();
    /* scale waits for a user event too, so its event is certainly still
     * pending (and held by the layer) when its count is read. */
    cl_event gate = clCreateUserEvent(ctx, &err);
    CHECK(err);
    cl_event deps[2] = {w[0], gate};
    CHECK(clEnqueueNDRangeKernel(q, scale, 1, NULL, &n, NULL, 2, deps, &ev[0]));
    record_refcount("pending-scale", ev[0]);
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK(clEnqueueNDRangeKernel(q, add, 1, NULL, &n, NULL, 1, &w[1], &ev[1]));
    CHECK(clEnqueueMarkerWithWaitList(q, 2, ev, &ev[2]));
    enqueues += 3;
    CHECK(clWaitForEvents(3, ev));
    uint64_t seen = now_ns();
    say("kernel scale 2 %llu %llu\nkernel add 2 %llu %llu\ncommand Marker 2\n",
        (unsigned long long)before, (unsigned long long)seen, (unsigned long long)before,
        (unsigned long long)seen);
    record_settled_refcount("scale", ev[0]);
    record_settled_refcount("add", ev[1]);
    record_settled_refcount("marker", ev[2]);
    CHECK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, N * 4, ha, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, N * 4, hc, 0, NULL, NULL));
    enqueues += 2;
    say("command ReadBuffer 2\n");
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= ha[i] == 3.0f * (1.0f + (float)i) && hc[i] == 2.0f * (1.0f + (float)i);
    say("result out-of-order %d\n", ok);
    for (int i = 0; i < 3; i++)
        clReleaseEvent(ev[i]);
    clReleaseEvent(w[0]);
    clReleaseEvent(w[1]);
    clReleaseEvent(gate);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseKernel(scale);
    clReleaseKernel(add);
}

typedef struct thread_arg {
    cl_command_queue q;
    unsigned qn;
    int ok;
} thread_arg;

static void *thread_main(void *p)
{
    thread_arg *t = p;
    cl_kernel spin = kernel("spin");
    cl_mem s = buffer(4);
    cl_uint iters = spin_iters / 4;
    for (int i = 0; i < 3; i++)
        spin_once(t->q, t->qn, spin, s, iters, NULL);
    cl_uint got = 0;
    CHECK(clEnqueueReadBuffer(t->q, s, CL_TRUE, 0, 4, &got, 0, NULL, NULL));
    counted();
    t->ok = got == spin_host(0, iters);
    clReleaseMemObject(s);
    clReleaseKernel(spin);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gz-test-cl TRUTH_FILE\n");
        return 2;
    }
    truth = fopen(argv[1], "w");
    if (!truth) {
        perror(argv[1]);
        return 2;
    }
    cl_platform_id plat;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));

    /* Created in this order: the layer numbers its tracks the same way. */
    cl_command_queue q1 = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    record_queue(q1, 1, 0);
    cl_queue_properties p2[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue q2 = clCreateCommandQueueWithProperties(ctx, dev, p2, &err);
    CHECK(err);
    record_queue(q2, 2, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    cl_command_queue q3 = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    record_queue(q3, 3, 0);
    cl_command_queue q4 = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    record_queue(q4, 4, CL_QUEUE_PROFILING_ENABLE);

    phase_in_order(q1);
    phase_out_of_order(q2);

    thread_arg t[2] = {{.q = q3, .qn = 3}, {.q = q4, .qn = 4}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, thread_main, &t[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    say("result threads %d\n", t[0].ok && t[1].ok);
    say("command ReadBuffer 3\ncommand ReadBuffer 4\n");
    say("enqueues %u\n", enqueues);

    clReleaseCommandQueue(q1);
    clReleaseCommandQueue(q2);
    clReleaseCommandQueue(q3);
    clReleaseCommandQueue(q4);
    clReleaseProgram(prog);
    clReleaseContext(ctx);
    fclose(truth);
    return 0;
}
