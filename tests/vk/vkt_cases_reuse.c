/* Recordings that run again and again, where the layer must begin a new
 * use of their timestamps each time without losing the last one:
 *
 *   secondary-frames: secondaries recorded once (one that continues a
 *   render pass, one outside it) executed by the one-time primaries of
 *   successive frames, each recorded in its own frame once the last one
 *   completed: a new primary each frame (freed after), and one primary
 *   recorded again after its pool's reset. Every execution's labels are
 *   timed.
 *
 *   timeline-wait: reusable command buffers (one executes a secondary)
 *   submitted again as soon as the program saw the last submission signal
 *   its own timeline semaphore: through vkWaitSemaphores, through a
 *   vkWaitSemaphores that waits for any of two semaphores (then reads
 *   which), through polling
 *   vkGetSemaphoreCounterValue (no wait call at all); signalled from
 *   vkQueueSubmit and vkQueueSubmit2. No fence anywhere, so the layer sees
 *   no wait it knows: every execution must be timed all the same. */
#define _GNU_SOURCE
#include "vkt.h"

#include <stdio.h>

/* ---- secondary-frames -------------------------------------------------- */

struct shared {
    struct vkt_target t;
    struct vkt_cmd in_pass;  /* continues t's render pass */
    struct vkt_cmd compute;  /* outside any render pass */
};

static void record_shared(struct shared *s)
{
    vkt_cmd_begin_secondary_subpass(&s->in_pass, 0, &s->t, 0);
    vkt_cmd_label_begin(&s->in_pass, "Shared in pass");
    vkt_cmd_clear(&s->in_pass, 0, 0.5f);
    vkt_cmd_label_begin(&s->in_pass, "Shared in pass inner");
    vkt_cmd_clear(&s->in_pass, 0, 0.75f);
    vkt_cmd_label_end(&s->in_pass);
    vkt_cmd_label_end(&s->in_pass);
    vkt_cmd_end(&s->in_pass);

    vkt_cmd_begin_secondary(&s->compute, 0, NULL);
    vkt_cmd_label_begin(&s->compute, "Shared compute");
    vkt_cmd_work(&s->compute, 5);
    vkt_cmd_label_end(&s->compute);
    vkt_cmd_end(&s->compute);
}

/* One frame's primary: labels around the render pass that executes the
 * shared secondary, then the compute secondary. */
static void record_frame(struct vkt_cmd *p, struct shared *s, int k)
{
    char label[VKT_NAME_MAX];
    vkt_cmd_begin(p, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    snprintf(label, sizeof label, "Frame %d", k);
    vkt_cmd_label_begin(p, label);
    vkt_cmd_label_begin(p, "Pass");
    vkt_cmd_begin_render_pass(p, &s->t, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS, false);
    struct vkt_cmd *sec = &s->in_pass;
    vkt_cmd_execute(p, 1, &sec);
    vkt_cmd_end_render_pass(p, false);
    vkt_cmd_label_end(p);
    vkt_cmd_label_begin(p, "Compute");
    sec = &s->compute;
    vkt_cmd_execute(p, 1, &sec);
    vkt_cmd_label_end(p);
    vkt_cmd_label_end(p);
    vkt_cmd_end(p);
}

int case_secondary_frames(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_V12_V13, NULL);
    if (!vkt_family_has_graphics(d)) {
        vkt_device_destroy(d);
        vkt_instance_destroy(inst);
        printf("gz-test-vk: skipped: the queue family has no graphics\n");
        return VKT_SKIP;
    }
    struct shared s;
    vkt_target_images(d, 1, 1, &s.t);
    vkt_target_render_pass(d, &s.t, NULL, false);
    vkt_cmd_alloc_secondary(d, d->pool, "shared in pass", &s.in_pass);
    vkt_cmd_alloc_secondary(d, d->pool, "shared compute", &s.compute);
    record_shared(&s);
    VkCommandPool transient = vkt_pool_create(d, VK_COMMAND_POOL_CREATE_TRANSIENT_BIT);
    int frames = a->count > 0 ? a->count : 3;
    static const enum vkt_wait waits[] = { VKT_WAIT_FENCE, VKT_WAIT_TIMELINE, VKT_WAIT_IDLE };
    char name[VKT_NAME_MAX];
    int k = 0;

    /* each frame records its own primary, submits it and frees it */
    for (int i = 0; i < frames; i++, k++) {
        struct vkt_cmd p;
        snprintf(name, sizeof name, "frame %d", k);
        vkt_cmd_alloc(d, transient, name, &p);
        record_frame(&p, &s, k);
        struct vkt_batch b = { 1, { &p } };
        vkt_submit(d, i % 2 ? VKT_SUBMIT2 : VKT_SUBMIT1, 1, &b, waits[i % 3], false);
        vkt_cmd_free(&p);
    }

    /* one primary, recorded again each frame after its pool's reset (a
     * non-SIMULTANEOUS_USE secondary recorded into another primary makes
     * the one it was in invalid, so frames cannot be recorded ahead) */
    VkCommandPool pool = vkt_pool_create(d, 0);
    struct vkt_cmd p;
    vkt_cmd_alloc(d, pool, "frame (pool reset)", &p);
    for (int i = 0; i < frames; i++, k++) {
        VKT_CHECK(vkResetCommandPool(d->device, pool, 0));
        vkt_cmd_forget_ops(&p);
        record_frame(&p, &s, k);
        struct vkt_batch b = { 1, { &p } };
        vkt_submit(d, i % 2 ? VKT_SUBMIT1 : VKT_SUBMIT2, 1, &b, waits[(i + 1) % 3], false);
    }
    vkt_cmd_free(&p);
    vkDestroyCommandPool(d->device, pool, NULL);
    truth_note("frames", k);

    vkDestroyCommandPool(d->device, transient, NULL);
    vkt_cmd_free(&s.in_pass);
    vkt_cmd_free(&s.compute);
    vkt_target_destroy(d, &s.t);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}

/* ---- timeline-wait --------------------------------------------------------- */

enum seen_by { SEEN_WAIT, SEEN_WAIT_ANY, SEEN_POLL, SEEN_COUNT };

static VkSemaphore timeline_create(struct vkt_device *d)
{
    VkSemaphoreTypeCreateInfo tci = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
        .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
    };
    VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &tci };
    VkSemaphore s;
    VKT_CHECK(vkCreateSemaphore(d->device, &sci, NULL, &s));
    return s;
}

/* One batch that signals sem = value, no fence; returns the truth call. */
static int submit_signal(struct vkt_device *d, bool v2, struct vkt_batch *b, VkSemaphore sem,
                         uint64_t value)
{
    VkCommandBuffer cbs[VKT_MAX_CMDS];
    VkCommandBufferSubmitInfo cbi[VKT_MAX_CMDS];
    for (int i = 0; i < b->ncmds; i++) {
        cbs[i] = b->cmds[i]->cb;
        cbi[i] = (VkCommandBufferSubmitInfo){ .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                              .commandBuffer = cbs[i] };
    }
    uint64_t t_submit = vkt_now_ns();
    VkResult r;
    if (v2) {
        VkSemaphoreSubmitInfo ssi = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                      .semaphore = sem,
                                      .value = value,
                                      .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT };
        VkSubmitInfo2 si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                             .commandBufferInfoCount = (uint32_t)b->ncmds,
                             .pCommandBufferInfos = cbi,
                             .signalSemaphoreInfoCount = 1,
                             .pSignalSemaphoreInfos = &ssi };
        r = vkQueueSubmit2(d->queue, 1, &si, VK_NULL_HANDLE);
    } else {
        VkTimelineSemaphoreSubmitInfo tsi = {
            .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
            .signalSemaphoreValueCount = 1,
            .pSignalSemaphoreValues = &value,
        };
        VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                            .pNext = &tsi,
                            .commandBufferCount = (uint32_t)b->ncmds,
                            .pCommandBuffers = cbs,
                            .signalSemaphoreCount = 1,
                            .pSignalSemaphores = &sem };
        r = vkQueueSubmit(d->queue, 1, &si, VK_NULL_HANDLE);
    }
    uint64_t t_return = vkt_now_ns();
    VKT_CHECK(r);
    return truth_call_begin(d->queue_key, v2 ? "vkQueueSubmit2" : "vkQueueSubmit", "timeline", 1,
                            b, t_submit, t_return);
}

/* Until sem reaches value, seen one way or another; `never` is a
 * semaphore nothing signals. */
static void see(struct vkt_device *d, enum seen_by how, VkSemaphore sem, VkSemaphore never,
                uint64_t value)
{
    VkSemaphore sems[2] = { sem, never };
    uint64_t values[2] = { value, 1 };
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = 1,
        .pSemaphores = sems,
        .pValues = values,
    };
    switch (how) {
    case SEEN_WAIT:
        VKT_CHECK(vkWaitSemaphores(d->device, &wi, UINT64_MAX));
        break;
    case SEEN_WAIT_ANY: {
        /* then which one: the value read (validation 1.3.239 retires the
         * submission only on that read, not on a wait for any) */
        wi.flags = VK_SEMAPHORE_WAIT_ANY_BIT;
        wi.semaphoreCount = 2;
        VKT_CHECK(vkWaitSemaphores(d->device, &wi, UINT64_MAX));
        uint64_t now = 0;
        VKT_CHECK(vkGetSemaphoreCounterValue(d->device, sem, &now));
        if (now < value)
            vkt_die("vkWaitSemaphores(ANY) returned before the only semaphore signalled");
        break;
    }
    case SEEN_POLL:
    case SEEN_COUNT: {
        uint64_t now = 0;
        for (;;) {
            VKT_CHECK(vkGetSemaphoreCounterValue(d->device, sem, &now));
            if (now >= value)
                break;
            vkt_sleep_ms(1);
        }
        break;
    }
    }
}

int case_timeline_wait(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_V12_V13, NULL);
    struct vkt_cmd r1, r2, sec;
    vkt_cmd_alloc_secondary(d, d->pool, "timeline secondary", &sec);
    vkt_cmd_begin_secondary(&sec, 0, NULL);
    vkt_cmd_label_begin(&sec, "Secondary");
    vkt_cmd_work(&sec, 1);
    vkt_cmd_label_end(&sec);
    vkt_cmd_end(&sec);

    vkt_cmd_alloc(d, d->pool, "timeline first", &r1);
    vkt_cmd_begin(&r1, 0);
    vkt_cmd_label_begin(&r1, "Again");
    vkt_cmd_label_begin(&r1, "Fill");
    vkt_cmd_work(&r1, 2);
    vkt_cmd_label_end(&r1);
    vkt_cmd_end(&r1); /* "Again" ends in r2 */

    vkt_cmd_alloc(d, d->pool, "timeline second", &r2);
    vkt_cmd_begin(&r2, 0);
    vkt_cmd_label_begin(&r2, "Executes");
    struct vkt_cmd *s = &sec;
    vkt_cmd_execute(&r2, 1, &s);
    vkt_cmd_label_end(&r2);
    vkt_cmd_label_begin(&r2, "Copy");
    vkt_cmd_copy_result(&r2);
    vkt_cmd_label_end(&r2);
    vkt_cmd_label_end(&r2); /* "Again" */
    vkt_cmd_end(&r2);

    VkSemaphore sem = timeline_create(d), never = timeline_create(d);
    int n = a->count > 0 ? a->count : 12;
    uint64_t value = 0;
    for (int i = 0; i < n; i++) {
        struct vkt_batch b = { 2, { &r1, &r2 } };
        enum seen_by how = (enum seen_by)(i % SEEN_COUNT);
        int call = submit_signal(d, i % 2 == 1, &b, sem, ++value);
        see(d, how, sem, never, value);
        truth_call_done(call, vkt_now_ns());
    }
    truth_note("executions", n);

    vkDestroySemaphore(d->device, sem, NULL);
    vkDestroySemaphore(d->device, never, NULL);
    vkt_cmd_free(&r1);
    vkt_cmd_free(&r2);
    vkt_cmd_free(&sec);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}
