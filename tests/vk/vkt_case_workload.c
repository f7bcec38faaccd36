/* The "known workload": one dispatch whose duration the program measures on
 * the CPU, so the runner can compare the layer's zone with a time that did
 * not come from the layer.  The amount of work is calibrated here, at run
 * time, so the dispatch takes 15-30 ms whatever the machine. */
#define _GNU_SOURCE
#include "vkt.h"

#include <stdio.h>

#define TARGET_NS 20000000ull
#define LOW_NS 15000000ull
#define HIGH_NS 30000000ull
#define MAX_TRIES 10
#define SEED 12345u

struct spin_size {
    uint32_t groups;     /* workgroups of VKT_SPIN_GROUP invocations */
    uint32_t iterations; /* loop steps per invocation */
};

/* Must match shaders/spin.comp. */
static uint32_t spin_reference(uint32_t gid, uint32_t iterations)
{
    uint32_t x = SEED + gid;
    for (uint32_t i = 0; i < iterations; i++) {
        x = x * 1664525u + 1013904223u;
        x ^= x >> 13;
    }
    return x;
}

/* One submission with only the dispatch in it; returns its CPU duration. */
static uint64_t timed_spin(struct vkt_cmd *c, struct spin_size sz, const char *label, int *call)
{
    vkt_cmd_begin(c, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    if (label)
        vkt_cmd_label_begin(c, label);
    vkt_cmd_spin(c, sz.groups, sz.iterations, SEED);
    if (label)
        vkt_cmd_label_end(c);
    vkt_cmd_end(c);
    uint64_t t0 = vkt_now_ns();
    *call = vkt_submit1(c);
    return vkt_now_ns() - t0;
}

static void check_result(struct vkt_cmd *readback, struct spin_size sz)
{
    vkt_cmd_begin(readback, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_copy_result(readback);
    vkt_cmd_end(readback);
    vkt_submit1(readback);
    const uint32_t *data = readback->dev->result.mapped;
    uint32_t n = sz.groups * VKT_SPIN_GROUP;
    uint32_t probe[3] = { 0, n / 2, n - 1 }; /* the CPU is slower: check a few */
    for (int i = 0; i < 3; i++) {
        uint32_t want = spin_reference(probe[i], sz.iterations);
        if (data[probe[i]] != want)
            vkt_die("workload result [%u] %08x, expected %08x", probe[i], data[probe[i]], want);
    }
}

/* Scales the amount of work by target/measured, more groups first (they
 * run in parallel on lavapipe's threads), longer loops when groups run out. */
static struct spin_size rescale(struct spin_size sz, uint64_t ns)
{
    double f = (double)TARGET_NS / (double)(ns ? ns : 1);
    f = f > 20.0 ? 20.0 : f < 0.05 ? 0.05 : f;
    double work = (double)sz.groups * sz.iterations * f;
    double groups = work / sz.iterations;
    if (groups > VKT_SPIN_MAX_GROUPS) {
        sz.groups = VKT_SPIN_MAX_GROUPS;
        double it = work / VKT_SPIN_MAX_GROUPS;
        sz.iterations = it > VKT_SPIN_MAX_ITERATIONS ? VKT_SPIN_MAX_ITERATIONS : (uint32_t)it;
    } else if (groups < 1.0) {
        sz.groups = 1;
        sz.iterations = work < 64 ? 64 : (uint32_t)work;
    } else {
        sz.groups = (uint32_t)(groups + 0.5);
    }
    return sz;
}

int case_workload(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_FEATURES2_V12, NULL);
    struct vkt_cmd spin, readback;
    vkt_cmd_alloc(d, d->pool, "workload cmdbuf", &spin);
    vkt_cmd_alloc(d, d->pool, "readback cmdbuf", &readback);

    /* calibration runs are ordinary submissions (they get zones too) */
    struct spin_size sz = { a->count > 0 ? (uint32_t)a->count : 4, 16384 };
    int call = -1;
    /* lavapipe compiles the shader variant at its first dispatch: keep that
     * out of the measurements */
    struct spin_size warm = { 1, 64 };
    timed_spin(&spin, warm, NULL, &call);
    for (int i = 0; i < MAX_TRIES; i++) {
        uint64_t ns = timed_spin(&spin, sz, NULL, &call);
        if (ns >= LOW_NS && ns <= HIGH_NS)
            break;
        sz = rescale(sz, ns);
    }

    uint64_t ns = timed_spin(&spin, sz, "Workload", &call);
    truth_workload(call, "Workload", (uint64_t)sz.groups * VKT_SPIN_GROUP * sz.iterations);
    truth_note("workload_groups", sz.groups);
    truth_note("workload_iterations", sz.iterations);
    check_result(&readback, sz);
    printf("gz-test-vk: workload %u groups x %u iterations took %.3f ms on the CPU clock\n",
           sz.groups, sz.iterations, (double)ns / 1e6);

    vkt_cmd_free(&spin);
    vkt_cmd_free(&readback);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}
