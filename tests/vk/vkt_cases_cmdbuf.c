/* Command buffer life cycles: design cases 1 (one-time submit), 2 (reusable,
 * submitted again and again) and 4 (recorded but never submitted, freed,
 * reset through the pool, the buffer or an implicit begin). */
#define _GNU_SOURCE
#include "vkt.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- case 1 -------------------------------------------------------------- */

static void record_one_time(struct vkt_cmd *c, const char *label, uint32_t add)
{
    vkt_cmd_begin(c, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(c, label);
    vkt_cmd_work(c, add);
    vkt_cmd_label_end(c);
    vkt_cmd_end(c);
}

int case_onetime(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    /* no feature structs at all: the layer adds what it needs on its own */
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_NONE, NULL);
    VkCommandPool pool = vkt_pool_create(d, VK_COMMAND_POOL_CREATE_TRANSIENT_BIT);
    int n = a->count > 0 ? a->count : 4;
    char name[VKT_NAME_MAX], label[VKT_NAME_MAX];

    for (int i = 0; i < n; i++) {
        struct vkt_cmd c;
        /* Named and unnamed alternate: a freed handle is often reused by the
         * next allocation, and a stale name must not stick to it. */
        snprintf(name, sizeof name, "one-time %d", i);
        vkt_cmd_alloc(d, pool, i % 2 == 0 ? name : NULL, &c);
        snprintf(label, sizeof label, "OneTime %d", i);
        record_one_time(&c, label, (uint32_t)i);
        vkt_submit1(&c);
        vkt_cmd_free(&c);
    }

    /* two one-time command buffers in one batch */
    struct vkt_cmd c0, c1;
    vkt_cmd_alloc(d, pool, "one-time pair 0", &c0);
    vkt_cmd_alloc(d, pool, "one-time pair 1", &c1);
    record_one_time(&c0, "Pair 0", 1);
    record_one_time(&c1, "Pair 1", 2);
    struct vkt_batch b = { 2, { &c0, &c1 } };
    vkt_submit(d, VKT_SUBMIT1, 1, &b, VKT_WAIT_FENCE, false);
    vkt_cmd_free(&c0);
    vkt_cmd_free(&c1);

    vkDestroyCommandPool(d->device, pool, NULL);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}

/* ---- case 2 -------------------------------------------------------------- */

int case_reuse(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_FEATURES2_V12, NULL);
    int n = a->count > 0 ? a->count : 8;

    /* recorded once, submitted n times: one cmdbuf zone per execution */
    struct vkt_cmd c;
    vkt_cmd_alloc(d, d->pool, "reused cmdbuf", &c);
    vkt_cmd_begin(&c, 0);
    vkt_cmd_label_begin(&c, "Reused");
    vkt_cmd_label_begin(&c, "Fill");
    vkt_cmd_work(&c, 7);
    vkt_cmd_label_end(&c);
    vkt_cmd_label_begin(&c, "Copy");
    vkt_cmd_copy_result(&c);
    vkt_cmd_label_end(&c);
    vkt_cmd_label_end(&c);
    vkt_cmd_end(&c);

    for (int i = 0; i < n; i++) {
        struct vkt_batch b = { 1, { &c } };
        /* alternate the ways completion is observed */
        vkt_submit(d, VKT_SUBMIT1, 1, &b, i % 2 ? VKT_WAIT_TIMELINE : VKT_WAIT_FENCE, false);
    }
    truth_note("executions", n);

    vkt_cmd_free(&c);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}

/* ---- case 4 -------------------------------------------------------------- */

#define GROUP 100

/* Labels that would corrupt a queue's label stack if the layer applied them
 * at record time: a dangling begin, an end without a begin. */
static void record_never_submitted(struct vkt_cmd *c, int i)
{
    vkt_cmd_begin(c, 0);
    vkt_cmd_label_begin(c, "Never submitted");
    vkCmdFillBuffer(c->cb, c->dev->work.buffer, 0, 256, (uint32_t)i);
    vkt_cmd_label_end(c);
    if (i % 7 == 0)
        vkt_cmd_label_begin(c, "Dangling");
    /* Valid to record in a primary (it would only be wrong at submit).  It
     * comes last because Mesa 22.3's common label stack underflows on it and
     * corrupts the next label recorded into the same command buffer. */
    if (i % 11 == 0)
        vkt_cmd_label_end(c);
    vkt_cmd_end(c);
}

static void alloc_group(struct vkt_device *d, VkCommandPool pool, struct vkt_cmd *cmds, int n)
{
    for (int i = 0; i < n; i++)
        vkt_cmd_alloc(d, pool, NULL, &cmds[i]);
}

static void free_group(struct vkt_cmd *cmds, int n)
{
    for (int i = 0; i < n; i++)
        vkt_cmd_free(&cmds[i]);
}

/* One group of GROUP command buffers that never reach a queue, thrown away in
 * one of three ways. */
static void never_submitted_group(struct vkt_device *d, VkCommandPool plain_pool,
                                  VkCommandPool resettable_pool, int g)
{
    struct vkt_cmd cmds[GROUP];
    switch (g % 3) {
    case 0: /* record, free */
        alloc_group(d, plain_pool, cmds, GROUP);
        for (int i = 0; i < GROUP; i++)
            record_never_submitted(&cmds[i], g * GROUP + i);
        free_group(cmds, GROUP);
        break;
    case 1: /* record, reset the whole pool, free */
        alloc_group(d, plain_pool, cmds, GROUP);
        for (int i = 0; i < GROUP; i++)
            record_never_submitted(&cmds[i], g * GROUP + i);
        VKT_CHECK(vkResetCommandPool(d->device, plain_pool,
                                     g % 2 ? VK_COMMAND_POOL_RESET_RELEASE_RESOURCES_BIT : 0));
        free_group(cmds, GROUP);
        break;
    default: /* record, then reset explicitly or by beginning again, free */
        alloc_group(d, resettable_pool, cmds, GROUP);
        for (int i = 0; i < GROUP; i++) {
            record_never_submitted(&cmds[i], g * GROUP + i);
            if (i % 2)
                vkt_cmd_reset(&cmds[i]);
            else
                record_never_submitted(&cmds[i], g * GROUP + i + 1); /* implicit reset */
        }
        free_group(cmds, GROUP);
        break;
    }
}

/* A real submission after all that: its zones must be exact.  The command
 * buffer is re-recorded each time, reset three different ways. */
static void real_submission(struct vkt_cmd *real, int k)
{
    char label[VKT_NAME_MAX];
    switch (k % 3) {
    case 0:
        break; /* vkBeginCommandBuffer resets implicitly */
    case 1:
        vkt_cmd_reset(real);
        break;
    default:
        VKT_CHECK(vkResetCommandPool(real->dev->device, real->pool, 0));
        vkt_cmd_forget_ops(real);
        break;
    }
    snprintf(label, sizeof label, "Real %d", k);
    vkt_cmd_begin(real, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(real, label);
    vkt_cmd_label_begin(real, "Work");
    vkt_cmd_work(real, (uint32_t)k);
    vkt_cmd_label_end(real);
    vkt_cmd_label_end(real);
    vkt_cmd_end(real);
    vkt_submit1(real);
}

int case_unsubmitted(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_HQR_STRUCT, NULL);
    int total = a->count > 0 ? a->count : 5000;
    int groups = (total + GROUP - 1) / GROUP;
    VkCommandPool plain_pool = vkt_pool_create(d, VK_COMMAND_POOL_CREATE_TRANSIENT_BIT);
    VkCommandPool resettable_pool = vkt_pool_create(d, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
    VkCommandPool real_pool = vkt_pool_create(d, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
    struct vkt_cmd real;
    vkt_cmd_alloc(d, real_pool, "real cmdbuf", &real);

    int k = 0;
    for (int g = 0; g < groups; g++) {
        never_submitted_group(d, plain_pool, resettable_pool, g);
        if (g % 10 == 9)
            real_submission(&real, k++); /* interleaved with the throw-away ones */
    }
    for (int i = 0; i < 10; i++)
        real_submission(&real, k++);
    truth_note("never_submitted", (long long)groups * GROUP);
    truth_note("real_submissions", k);

    vkt_cmd_free(&real);
    vkDestroyCommandPool(d->device, plain_pool, NULL);
    vkDestroyCommandPool(d->device, resettable_pool, NULL);
    vkDestroyCommandPool(d->device, real_pool, NULL);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}
