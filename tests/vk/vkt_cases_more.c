/* Design cases 3 (a SIMULTANEOUS_USE primary, several executions pending
 * at once) and 5 (secondary command buffers, outside and inside a render
 * pass).  A SIMULTANEOUS_USE primary is timed as any reusable one, except
 * that two executions of it write the same timestamps: one submitted while
 * the one before may still be running makes both lose them (vkt_truth.c
 * says when that is certain and when a race).  A SIMULTANEOUS_USE
 * secondary, which one primary may execute twice, is never timed inside. */
#define _GNU_SOURCE
#include "vkt.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- case 3 -------------------------------------------------------------- */

/* Submits c in one batch that waits for gate >= value, signalling fence.
 * Returns the truth call; the caller waits. */
static int submit_gated(struct vkt_cmd *c, VkSemaphore gate, uint64_t value, VkFence fence)
{
    struct vkt_device *d = c->dev;
    static const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkTimelineSemaphoreSubmitInfo tsi = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .waitSemaphoreValueCount = 1,
        .pWaitSemaphoreValues = &value,
    };
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .pNext = &tsi,
        .waitSemaphoreCount = 1,
        .pWaitSemaphores = &gate,
        .pWaitDstStageMask = &stage,
        .commandBufferCount = 1,
        .pCommandBuffers = &c->cb,
    };
    struct vkt_batch b = { 1, { c } };
    uint64_t t_submit = vkt_now_ns();
    VkResult r = vkQueueSubmit(d->queue, 1, &si, fence);
    uint64_t t_return = vkt_now_ns();
    VKT_CHECK(r);
    return truth_call_begin(d->queue_key, "vkQueueSubmit", "fence", 1, &b, t_submit, t_return);
}

static VkSemaphore timeline_create(struct vkt_device *d)
{
    VkSemaphoreTypeCreateInfo tci = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
        .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
        .initialValue = 0,
    };
    VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &tci };
    VkSemaphore s;
    VKT_CHECK(vkCreateSemaphore(d->device, &sci, NULL, &s));
    return s;
}

/* Opens the gate itself if the main thread is still inside vkQueueSubmit
 * after WATCHDOG_MS: a submit that waits for earlier work to complete would
 * otherwise wait forever for a gate only the main thread opens. */
#define WATCHDOG_MS 1500

struct watchdog {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool submitted; /* the main thread is past both vkQueueSubmit calls */
    bool fired;     /* the watchdog opened the gate */
    struct vkt_device *dev;
    VkSemaphore gate;
    uint64_t value;
};

static void signal_gate(struct vkt_device *d, VkSemaphore gate, uint64_t value)
{
    VkSemaphoreSignalInfo si = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
        .semaphore = gate,
        .value = value,
    };
    VKT_CHECK(vkSignalSemaphore(d->device, &si));
}

static void *watchdog_main(void *arg)
{
    struct watchdog *w = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WATCHDOG_MS / 1000;
    until.tv_nsec += (long)(WATCHDOG_MS % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->lock);
    while (!w->submitted) {
        if (pthread_cond_timedwait(&w->cond, &w->lock, &until) == ETIMEDOUT && !w->submitted) {
            w->fired = true;
            break;
        }
    }
    pthread_mutex_unlock(&w->lock);
    if (w->fired) {
        fprintf(stderr, "gz-test-vk: vkQueueSubmit still blocked after %d ms: the watchdog opens "
                        "the gate\n", WATCHDOG_MS);
        signal_gate(w->dev, w->gate, w->value);
    }
    return NULL;
}

/* Two executions of sim pending at once: both wait on a gate the host opens
 * only after both were submitted (wait-before-signal is valid for timeline
 * semaphores), so neither can have completed in between.  Whether they
 * really were both pending goes into the truth (a submit that blocks until
 * earlier work is done breaks that, and the checker says so). */
static void pending_pair(struct vkt_cmd *sim, VkSemaphore gate, uint64_t value, VkFence f[2])
{
    struct vkt_device *d = sim->dev;
    struct watchdog w = { .dev = d, .gate = gate, .value = value };
    if (pthread_mutex_init(&w.lock, NULL) || pthread_cond_init(&w.cond, NULL) ||
        pthread_create(&w.thread, NULL, watchdog_main, &w))
        vkt_die("cannot start the watchdog thread");
    uint64_t t0 = vkt_now_ns();
    int call0 = submit_gated(sim, gate, value, f[0]);
    int call1 = submit_gated(sim, gate, value, f[1]);
    uint64_t submit_ns = vkt_now_ns() - t0;
    int pending = 0;
    for (int i = 0; i < 2; i++) {
        VkResult r = vkGetFenceStatus(d->device, f[i]);
        if (r != VK_SUCCESS && r != VK_NOT_READY)
            VKT_CHECK(r);
        pending += r == VK_NOT_READY;
    }
    pthread_mutex_lock(&w.lock);
    w.submitted = true;
    pthread_cond_signal(&w.cond);
    pthread_mutex_unlock(&w.lock);
    pthread_join(w.thread, NULL);
    pthread_mutex_destroy(&w.lock);
    pthread_cond_destroy(&w.cond);
    if (!w.fired)
        signal_gate(d, gate, value);
    /* the CPU zone of this wait covers both calls (their host_done_ns) */
    VKT_CHECK(vkWaitForFences(d->device, 2, f, VK_TRUE, UINT64_MAX));
    uint64_t done = vkt_now_ns();
    truth_call_done(call0, done);
    truth_call_done(call1, done);
    VKT_CHECK(vkResetFences(d->device, 2, f));
    truth_note("pending_at_once", pending);
    truth_note("gate_opened_by_watchdog", w.fired);
    truth_note("pair_submit_us", (long long)(submit_ns / 1000));
    if (pending != 2)
        fprintf(stderr, "gz-test-vk: only %d of 2 executions were pending after both submits%s\n",
                pending, w.fired ? " (vkQueueSubmit blocked until the watchdog opened the gate)" : "");
}

/* The same two submissions without a gate: what an app usually does. */
static void back_to_back(struct vkt_cmd *sim, VkFence f[2])
{
    struct vkt_device *d = sim->dev;
    struct vkt_batch b = { 1, { sim } };
    int call[2];
    for (int i = 0; i < 2; i++) {
        uint64_t t_submit = vkt_now_ns();
        VkSubmitInfo si = {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = 1,
            .pCommandBuffers = &sim->cb,
        };
        VkResult r = vkQueueSubmit(d->queue, 1, &si, f[i]);
        uint64_t t_return = vkt_now_ns();
        VKT_CHECK(r);
        call[i] = truth_call_begin(d->queue_key, "vkQueueSubmit", "fence", 1, &b, t_submit, t_return);
    }
    VKT_CHECK(vkWaitForFences(d->device, 2, f, VK_TRUE, UINT64_MAX));
    uint64_t done = vkt_now_ns();
    truth_call_done(call[0], done);
    truth_call_done(call[1], done);
    VKT_CHECK(vkResetFences(d->device, 2, f));
}

int case_simultaneous(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_FEATURES2_V12, NULL);

    /* recorded once, with real work and nested labels */
    struct vkt_cmd sim, before, after;
    vkt_cmd_alloc(d, d->pool, "simultaneous cmdbuf", &sim);
    vkt_cmd_begin(&sim, VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT);
    vkt_cmd_label_begin(&sim, "Sim outer");
    vkt_cmd_work(&sim, 3);
    vkt_cmd_label_begin(&sim, "Sim inner");
    vkt_cmd_spin(&sim, 16, 256, 7);
    vkt_cmd_label_end(&sim);
    vkt_cmd_label_end(&sim);
    vkt_cmd_end(&sim);

    /* ordinary reusable buffers around it: a label begun in one and ended in
     * the other, with the simultaneous-use buffer's labels inside */
    vkt_cmd_alloc(d, d->pool, "sim before", &before);
    vkt_cmd_begin(&before, 0);
    vkt_cmd_label_begin(&before, "Sim frame");
    vkt_cmd_work(&before, 1);
    vkt_cmd_end(&before);
    vkt_cmd_alloc(d, d->pool, "sim after", &after);
    vkt_cmd_begin(&after, 0);
    vkt_cmd_work(&after, 2);
    vkt_cmd_label_end(&after); /* ends "Sim frame"; last label op (Mesa 22.3, see README) */
    vkt_cmd_end(&after);

    VkSemaphore gate = timeline_create(d);
    VkFence f[2];
    VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    for (int i = 0; i < 2; i++)
        VKT_CHECK(vkCreateFence(d->device, &fci, NULL, &f[i]));
    int executions = 0;

    /* two calls, both pending before either can run: both untimed in
     * practice, but the truth, which knows only that the program had not
     * seen the first complete, accepts both timed too */
    pending_pair(&sim, gate, 1, f);
    executions += 2;

    /* twice in one batch, between the ordinary buffers: both untimed, the
     * ordinary ones and the label across them timed */
    struct vkt_batch b[2] = { { 4, { &before, &sim, &sim, &after } } };
    vkt_submit(d, VKT_SUBMIT1, 1, b, VKT_WAIT_FENCE, false);
    executions += 2;

    /* two batches of one call, no semaphores between them: both untimed,
     * and so the batches' submit zones */
    b[0] = (struct vkt_batch){ 1, { &sim } };
    b[1] = (struct vkt_batch){ 1, { &sim } };
    vkt_submit(d, VKT_SUBMIT1, 2, b, VKT_WAIT_TIMELINE, false);
    executions += 2;

    /* submitted twice back to back without a gate (a race: both timed or
     * both not), then once alone after the wait for both: timed */
    back_to_back(&sim, f);
    executions += 2;
    vkt_submit1(&sim);
    executions += 1;
    truth_note("executions", executions);

    for (int i = 0; i < 2; i++)
        vkDestroyFence(d->device, f[i], NULL);
    vkDestroySemaphore(d->device, gate, NULL);
    vkt_cmd_free(&sim);
    vkt_cmd_free(&before);
    vkt_cmd_free(&after);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}

/* ---- case 5 -------------------------------------------------------------- */

/* A secondary that continues the render pass and clears part of the
 * attachment (vkCmdClearAttachments is valid inside a render pass). */
static void record_clear_secondary(struct vkt_cmd *s, const struct vkt_target *t, int k, bool nested)
{
    char label[VKT_NAME_MAX];
    vkt_cmd_begin_secondary_subpass(s, 0, t, 0);
    snprintf(label, sizeof label, "Sec clear %d", k);
    vkt_cmd_label_begin(s, label);
    if (nested)
        vkt_cmd_label_begin(s, "Sec clear inner");
    vkt_cmd_clear(s, 0, 0.25f * (float)k);
    if (nested)
        vkt_cmd_label_end(s);
    vkt_cmd_label_end(s);
    vkt_cmd_end(s);
}

/* (a) outside a render pass: compute work in secondaries, labels around the
 * vkCmdExecuteCommands in the primary and nested labels inside the
 * secondaries.  No label crosses the primary/secondary boundary: a
 * secondary may neither end a label it did not begin
 * (VUID-vkCmdEndDebugUtilsLabelEXT-commandBuffer-01913) nor be ended with
 * one of its own still open (VUID-vkEndCommandBuffer-commandBuffer-01815),
 * although validation 1.3.239 reports neither. */
static void record_compute(struct vkt_cmd *p, struct vkt_cmd *s0, struct vkt_cmd *s1)
{
    /* executed twice in the primary: VUID-vkCmdExecuteCommands-pCommandBuffers-00092
     * asks for SIMULTANEOUS_USE then */
    vkt_cmd_begin_secondary(s0, VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT, NULL);
    vkt_cmd_label_begin(s0, "Sec compute 0");
    vkt_cmd_work(s0, 10);
    vkt_cmd_label_end(s0);
    vkt_cmd_end(s0);

    vkt_cmd_begin_secondary(s1, 0, NULL);
    vkt_cmd_label_begin(s1, "Sec compute 1");
    vkt_cmd_label_begin(s1, "Sec inner");
    vkt_cmd_work(s1, 11);
    vkt_cmd_label_end(s1);
    vkt_cmd_label_end(s1);
    vkt_cmd_work(s1, 12); /* work outside any of its labels */
    vkt_cmd_end(s1);

    vkt_cmd_begin(p, 0);
    vkt_cmd_label_begin(p, "Compute frame");
    vkt_cmd_label_begin(p, "Primary work");
    vkt_cmd_work(p, 13);
    vkt_cmd_label_end(p);
    vkt_cmd_label_begin(p, "Execute compute");
    vkt_cmd_execute(p, 1, &s0);
    vkt_cmd_label_end(p);
    vkt_cmd_label_begin(p, "Execute both");
    struct vkt_cmd *both[2] = { s1, s0 };
    vkt_cmd_execute(p, 2, both);
    vkt_cmd_label_begin(p, "Primary after");
    vkt_cmd_work(p, 14);
    vkt_cmd_label_end(p);
    vkt_cmd_label_end(p);
    vkt_cmd_label_end(p);
    vkt_cmd_end(p);
}

/* (b) inside a render pass instance: the primary may record nothing but
 * vkCmdExecuteCommands while the subpass contents are
 * SECONDARY_COMMAND_BUFFERS (VkSubpassContents), so its labels go around
 * the render pass instance. */
static void record_render(struct vkt_cmd *p, struct vkt_cmd *s0, struct vkt_cmd *s1,
                          const struct vkt_target *t)
{
    record_clear_secondary(s0, t, 0, false);
    record_clear_secondary(s1, t, 1, true);

    vkt_cmd_begin(p, 0);
    vkt_cmd_label_begin(p, "Render pass");
    vkt_cmd_begin_render_pass(p, t, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS, false);
    struct vkt_cmd *secs[2] = { s0, s1 };
    vkt_cmd_execute(p, 2, secs);
    vkt_cmd_end_render_pass(p, false);
    vkt_cmd_label_end(p);
    vkt_cmd_label_begin(p, "After pass");
    vkt_cmd_work(p, 15);
    vkt_cmd_label_end(p);
    vkt_cmd_end(p);
}

int case_secondary(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_V12_V13, NULL);
    struct vkt_cmd pc, sc0, sc1;
    vkt_cmd_alloc(d, d->pool, "primary compute", &pc);
    vkt_cmd_alloc_secondary(d, d->pool, "secondary compute 0", &sc0);
    vkt_cmd_alloc_secondary(d, d->pool, "secondary compute 1", &sc1);
    record_compute(&pc, &sc0, &sc1);

    bool graphics = vkt_family_has_graphics(d);
    struct vkt_target t;
    struct vkt_cmd pr, sr0, sr1;
    if (graphics) {
        vkt_target_images(d, 1, 1, &t);
        vkt_target_render_pass(d, &t, NULL, false);
        vkt_cmd_alloc(d, d->pool, "primary render", &pr);
        vkt_cmd_alloc_secondary(d, d->pool, "secondary render 0", &sr0);
        vkt_cmd_alloc_secondary(d, d->pool, "secondary render 1", &sr1);
        record_render(&pr, &sr0, &sr1, &t);
    } else {
        fprintf(stderr, "gz-test-vk: the queue family has no graphics: no render pass part\n");
    }
    truth_note("render_pass", graphics);

    vkt_submit1(&pc);
    if (graphics) {
        vkt_submit1(&pr);
        struct vkt_batch b = { 2, { &pc, &pr } };
        vkt_submit(d, VKT_SUBMIT2, 1, &b, VKT_WAIT_FENCE, false);
    }
    vkt_submit1(&pc);

    if (graphics) {
        vkt_cmd_free(&pr);
        vkt_cmd_free(&sr0);
        vkt_cmd_free(&sr1);
        vkt_target_destroy(d, &t);
    }
    vkt_cmd_free(&pc);
    vkt_cmd_free(&sc0);
    vkt_cmd_free(&sc1);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}
