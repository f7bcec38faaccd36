/* Protected command buffers (VK_COMMAND_POOL_CREATE_PROTECTED_BIT): no
 * query may be written in one (VUID-vkCmdWriteTimestamp-commandBuffer-01915)
 * and a protected batch runs protected command buffers only, so the layer
 * times nothing there: neither their labels nor the batch's submission and
 * command buffer zones, all counted in the summary. The protected-capable
 * queue (VK_DEVICE_QUEUE_CREATE_PROTECTED_BIT) also runs unprotected
 * batches, which are timed as on any queue, and so is the ordinary queue
 * of the same family beside it.
 *
 * Needs the protectedMemory feature and a family with
 * VK_QUEUE_PROTECTED_BIT; without them (lavapipe) the case says so and
 * exits with VKT_SKIP. */
#define _GNU_SOURCE
#include "vkt.h"

#include <stdio.h>

static const char *protected_missing(VkPhysicalDevice phys)
{
    VkPhysicalDeviceProtectedMemoryFeatures pm = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROTECTED_MEMORY_FEATURES,
    };
    VkPhysicalDeviceFeatures2 f2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                     .pNext = &pm };
    vkGetPhysicalDeviceFeatures2(phys, &f2);
    if (!pm.protectedMemory)
        return "the device has no protectedMemory";
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, NULL);
    VkQueueFamilyProperties f[16];
    n = n > 16 ? 16 : n;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, f);
    uint32_t family = vkt_queue_family(phys);
    if (family >= n || !(f[family].queueFlags & VK_QUEUE_PROTECTED_BIT))
        return "the queue family has no protected queues";
    return NULL;
}

/* A protected command buffer: labels around a barrier (it may write no
 * unprotected memory, and needs none to be an action). */
static void record_protected(struct vkt_cmd *c, int k)
{
    char label[VKT_NAME_MAX];
    vkt_cmd_begin(c, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    snprintf(label, sizeof label, "Protected %d", k);
    vkt_cmd_label_begin(c, label);
    vkt_cmd_label_begin(c, "Protected inner");
    VkMemoryBarrier mb = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                           .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                           .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT };
    vkCmdPipelineBarrier(c->cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    vkt_cmd_label_end(c);
    vkt_cmd_label_end(c);
    vkt_cmd_end(c);
}

static void record_plain(struct vkt_cmd *c, const char *label, uint32_t add)
{
    vkt_cmd_begin(c, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(c, label);
    vkt_cmd_work(c, add);
    vkt_cmd_label_end(c);
    vkt_cmd_end(c);
}

/* A protected batch of n command buffers (VkProtectedSubmitInfo, or
 * VK_SUBMIT_PROTECTED_BIT through vkQueueSubmit2), waited for with the
 * queue's fence. */
static void submit_protected(struct vkt_device *q, bool v2, int n, struct vkt_cmd **cmds)
{
    struct vkt_batch b = { n, { NULL } };
    VkCommandBuffer cbs[VKT_MAX_CMDS];
    VkCommandBufferSubmitInfo cbi[VKT_MAX_CMDS];
    for (int i = 0; i < n; i++) {
        b.cmds[i] = cmds[i];
        cbs[i] = cmds[i]->cb;
        cbi[i] = (VkCommandBufferSubmitInfo){ .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                              .commandBuffer = cbs[i] };
    }
    uint64_t t_submit = vkt_now_ns();
    VkResult r;
    if (v2) {
        VkSubmitInfo2 si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                             .flags = VK_SUBMIT_PROTECTED_BIT,
                             .commandBufferInfoCount = (uint32_t)n,
                             .pCommandBufferInfos = cbi };
        r = vkQueueSubmit2(q->queue, 1, &si, q->fence);
    } else {
        VkProtectedSubmitInfo psi = { .sType = VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO,
                                      .protectedSubmit = VK_TRUE };
        VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                            .pNext = &psi,
                            .commandBufferCount = (uint32_t)n,
                            .pCommandBuffers = cbs };
        r = vkQueueSubmit(q->queue, 1, &si, q->fence);
    }
    uint64_t t_return = vkt_now_ns();
    VKT_CHECK(r);
    int call = truth_call_begin(q->queue_key, v2 ? "vkQueueSubmit2" : "vkQueueSubmit", "fence", 1,
                                &b, t_submit, t_return);
    vkt_finish_fence(q, call);
}

int case_protected(const struct vkt_args *a)
{
    (void)a;
    struct vkt_instance *inst = vkt_instance_create();
    const char *why = protected_missing(vkt_physical_device(inst));
    if (why) {
        printf("gz-test-vk: skipped: %s\n", why);
        vkt_instance_destroy(inst);
        return VKT_SKIP;
    }
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_PROTECTED, "ordinary queue");
    struct vkt_device *pq = vkt_device_protected_queue(d, "protected-capable queue");
    VkCommandPool protected_pool = vkt_pool_create(pq, VK_COMMAND_POOL_CREATE_PROTECTED_BIT |
                                                           VK_COMMAND_POOL_CREATE_TRANSIENT_BIT);

    struct vkt_cmd p0, p1, plain, plain_pq;
    vkt_cmd_alloc(pq, protected_pool, "protected 0", &p0);
    vkt_cmd_alloc(pq, protected_pool, "protected 1", &p1);
    p0.protected_pool = p1.protected_pool = true;
    vkt_cmd_alloc(d, d->pool, "ordinary", &plain);
    vkt_cmd_alloc(pq, pq->pool, "unprotected on protected-capable", &plain_pq);

    /* the ordinary queue, timed */
    record_plain(&plain, "Ordinary", 1);
    vkt_submit1(&plain);
    /* protected batches: one command buffer, then two */
    record_protected(&p0, 0);
    submit_protected(pq, false, 1, (struct vkt_cmd *[]){ &p0 });
    record_protected(&p0, 1);
    record_protected(&p1, 2);
    submit_protected(pq, true, 2, (struct vkt_cmd *[]){ &p0, &p1 });
    /* an unprotected batch on the protected-capable queue, timed */
    record_plain(&plain_pq, "Unprotected", 2);
    vkt_submit1(&plain_pq);
    /* the ordinary queue again, after all that */
    record_plain(&plain, "Ordinary again", 3);
    vkt_submit1(&plain);

    vkt_cmd_free(&p0);
    vkt_cmd_free(&p1);
    vkt_cmd_free(&plain);
    vkt_cmd_free(&plain_pq);
    vkDestroyCommandPool(d->device, protected_pool, NULL);
    vkt_device_view_destroy(pq);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}
