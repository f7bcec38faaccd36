/* gz-clock-load: a Vulkan program for the clock suite whose queue is, for
 * long stretches, never idle.
 *
 *   gz-clock-load [--seconds S] [--busy-ms B] [--idle-ms I]
 *
 * It alternates two phases. Idle (I ms): a labelled frame of about 0.5 ms of
 * GPU work, waited for, then 20 ms of sleep, as the compute sample does, so
 * the layer takes its sync points (it takes them only when the queue is
 * idle at a submit). Busy (B ms): short unlabelled submissions kept two
 * deep in the queue, a labelled one every tenth, so the queue is never idle
 * at a submit and the clock has submission bounds only. A step of the GPU
 * clock (tests/faultlayer) falling in a busy phase is then seen by bounds
 * alone, for up to B ms, which the compute sample never shows: there, a
 * sync point follows every step within 100 ms.
 *
 * Each submission's fence is waited for only when its command buffer is
 * needed again, and the wait is the only host call between, so the layer's
 * completion bound is as tight as polling makes it. */
#define _GNU_SOURCE
#include "vkt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 3
#define DEPTH 2 /* submissions in flight in a busy phase */
#define TARGET_SPIN_NS 500000ull
#define FRAME_SLEEP_MS 20
#define LABEL_EVERY 10

struct slot {
    struct vkt_cmd cmd;
    VkFence fence;
    bool pending;
};

static uint32_t spin_groups = 1, spin_iterations = 256;

static void wait_slot(struct vkt_device *d, struct slot *s)
{
    if (!s->pending)
        return;
    VKT_CHECK(vkWaitForFences(d->device, 1, &s->fence, VK_TRUE, UINT64_MAX));
    VKT_CHECK(vkResetFences(d->device, 1, &s->fence));
    s->pending = false;
}

static void submit_slot(struct vkt_device *d, struct slot *s, const char *label)
{
    wait_slot(d, s);
    vkt_cmd_begin(&s->cmd, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    if (label)
        vkt_cmd_label_begin(&s->cmd, label);
    vkt_cmd_spin(&s->cmd, spin_groups, spin_iterations, 1u);
    if (label)
        vkt_cmd_label_end(&s->cmd);
    vkt_cmd_end(&s->cmd);
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &s->cmd.cb,
    };
    VKT_CHECK(vkQueueSubmit(d->queue, 1, &si, s->fence));
    s->pending = true;
}

/* Scales the loop so that one submission is about TARGET_SPIN_NS of GPU
 * time on this machine (lavapipe compiles the shader at its first use: the
 * first run is not measured). */
static void calibrate(struct vkt_device *d, struct slot *s)
{
    submit_slot(d, s, NULL);
    wait_slot(d, s);
    for (int i = 0; i < 6; i++) {
        uint64_t t0 = vkt_now_ns();
        submit_slot(d, s, NULL);
        wait_slot(d, s);
        uint64_t ns = vkt_now_ns() - t0;
        double f = (double)TARGET_SPIN_NS / (double)(ns ? ns : 1);
        f = f > 8 ? 8 : f < 0.125 ? 0.125 : f;
        double it = spin_iterations * f;
        spin_iterations = it < 64 ? 64 : it > VKT_SPIN_MAX_ITERATIONS ? VKT_SPIN_MAX_ITERATIONS
                                                                       : (uint32_t)it;
    }
}

static unsigned parse_uint(const char *s, const char *what)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v > 1000000)
        vkt_die("%s: bad value %s", what, s);
    return (unsigned)v;
}

int main(int argc, char **argv)
{
    unsigned seconds = 6, busy_ms = 400, idle_ms = 300;
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (next && strcmp(argv[i], "--seconds") == 0)
            seconds = parse_uint(next, argv[i++]);
        else if (next && strcmp(argv[i], "--busy-ms") == 0)
            busy_ms = parse_uint(next, argv[i++]);
        else if (next && strcmp(argv[i], "--idle-ms") == 0)
            idle_ms = parse_uint(next, argv[i++]);
        else {
            fprintf(stderr, "usage: gz-clock-load [--seconds S] [--busy-ms B] [--idle-ms I]\n");
            return 2;
        }
    }
    truth_init("clock-load"); /* the device helpers record a truth; none is written */
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_FEATURES2_V12, NULL);
    struct slot ring[RING];
    memset(ring, 0, sizeof ring);
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    for (int i = 0; i < RING; i++) {
        vkt_cmd_alloc(d, d->pool, NULL, &ring[i].cmd);
        VKT_CHECK(vkCreateFence(d->device, &fi, NULL, &ring[i].fence));
    }
    calibrate(d, &ring[0]);

    uint64_t start = vkt_now_ns(), end = start + seconds * 1000000000ull;
    unsigned frames = 0, busy_submits = 0, next = 0;
    for (bool busy = false; vkt_now_ns() < end; busy = !busy) {
        uint64_t phase_end = vkt_now_ns() + (busy ? busy_ms : idle_ms) * 1000000ull;
        while (vkt_now_ns() < phase_end && vkt_now_ns() < end) {
            if (busy) {
                /* Waits for the submission DEPTH back: DEPTH stay queued. */
                wait_slot(d, &ring[(next + RING - DEPTH) % RING]);
                submit_slot(d, &ring[next], busy_submits % LABEL_EVERY ? NULL : "Busy");
                busy_submits++;
            } else {
                submit_slot(d, &ring[next], "Frame");
                wait_slot(d, &ring[next]);
                frames++;
                vkt_sleep_ms(FRAME_SLEEP_MS);
            }
            next = (next + 1) % RING;
        }
        for (int i = 0; i < RING; i++)
            wait_slot(d, &ring[i]);
    }
    printf("gz-clock-load: %u frames, %u busy submissions of %u x %u iterations in %u s\n", frames,
           busy_submits, spin_groups, spin_iterations, seconds);
    for (int i = 0; i < RING; i++) {
        vkDestroyFence(d->device, ring[i].fence, NULL);
        vkt_cmd_free(&ring[i].cmd);
    }
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}
