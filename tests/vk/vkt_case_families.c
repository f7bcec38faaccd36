/* Queue families as real drivers have them (design cases 6 and 9):
 * lavapipe has one family with one queue, so this case runs with the fault
 * layer playing a second queue of the first family, a transfer-only family
 * and a transfer-only family without timestamps on lavapipe's queue
 * (GZFAULT_EXTRA_QUEUES=1, GZFAULT_FAMILIES=transfer,transfer-notime).
 *
 *   - the transfer queue: uploads (fills and a copy), two command buffers a
 *     batch; submission and command buffer zones, no labels (labels are
 *     not allowed in transfer-only command buffers);
 *   - the family without timestamps: work, no zones, one warning;
 *   - the first family's second queue: a labelled reusable buffer;
 *   - one SIMULTANEOUS_USE buffer with labels pending on both graphics
 *     queues at once (a gate semaphore holds both): the two executions
 *     write the same timestamps, so both lose them (their command buffer
 *     and submit zones and labels absent, dropped, counted) or, if the
 *     first had run by the second's submission, both keep them: the truth
 *     accepts both; then run on each queue alone, one after the other,
 *     each waited for: timed. */
#include "vkt.h"

#include <stdio.h>

static int find_family(VkPhysicalDevice phys, bool with_timestamps)
{
    uint32_t n = 8;
    VkQueueFamilyProperties fams[8];
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, fams);
    for (uint32_t i = 0; i < n; i++) {
        VkQueueFlags f = fams[i].queueFlags;
        if ((f & VK_QUEUE_TRANSFER_BIT) && !(f & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) &&
            (fams[i].timestampValidBits != 0) == with_timestamps)
            return (int)i;
    }
    return -1;
}

static uint32_t family_queues(VkPhysicalDevice phys, uint32_t family)
{
    uint32_t n = 8;
    VkQueueFamilyProperties fams[8];
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, fams);
    return family < n ? fams[family].queueCount : 0;
}

/* Two uploads a batch on a transfer-capable queue, into halves of buf. */
static void uploads(struct vkt_device *q, const struct vkt_buffer *buf, const char *name, int calls)
{
    for (int k = 0; k < calls; k++) {
        struct vkt_cmd c[2];
        for (int i = 0; i < 2; i++) {
            char n[VKT_NAME_MAX];
            snprintf(n, sizeof n, "%s %d", name, i);
            vkt_cmd_alloc(q, q->pool, n, &c[i]);
            vkt_cmd_begin(&c[i], VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
            vkCmdFillBuffer(c[i].cb, buf->buffer, i * buf->size / 2, buf->size / 2, (uint32_t)k);
            vkt_cmd_end(&c[i]);
        }
        struct vkt_batch b = {2, {&c[0], &c[1]}};
        vkt_submit(q, VKT_SUBMIT1, 1, &b, VKT_WAIT_FENCE, false);
        vkt_cmd_free(&c[0]);
        vkt_cmd_free(&c[1]);
    }
}

/* sim pending on two queues at once: both submits wait for gate. */
static void pending_on_two(struct vkt_cmd *sim, struct vkt_device *q[2], VkSemaphore gate)
{
    static const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    uint64_t value = 1;
    int call[2];
    for (int i = 0; i < 2; i++) {
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
            .pCommandBuffers = &sim->cb,
        };
        struct vkt_batch b = {1, {sim}};
        uint64_t t0 = vkt_now_ns();
        VKT_CHECK(vkQueueSubmit(q[i]->queue, 1, &si, q[i]->fence));
        call[i] = truth_call_begin(q[i]->queue_key, "vkQueueSubmit", "fence", 1, &b, t0,
                                   vkt_now_ns());
    }
    VkSemaphoreSignalInfo signal = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                                    .semaphore = gate,
                                    .value = value};
    VKT_CHECK(vkSignalSemaphore(q[0]->device, &signal));
    VkFence f[2] = {q[0]->fence, q[1]->fence};
    VKT_CHECK(vkWaitForFences(q[0]->device, 2, f, VK_TRUE, UINT64_MAX));
    uint64_t done = vkt_now_ns();
    truth_call_done(call[0], done);
    truth_call_done(call[1], done);
    VKT_CHECK(vkResetFences(q[0]->device, 2, f));
}

int case_families(const struct vkt_args *a)
{
    (void)a;
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_FAMILIES, "graphics 0");
    int transfer = find_family(d->phys, true), notime = find_family(d->phys, false);
    if (family_queues(d->phys, d->family) < 2 || transfer < 0 || notime < 0)
        vkt_die("the families case needs a second queue in the first family, a transfer-only "
                "family and one without timestamps (the fault layer: GZFAULT_EXTRA_QUEUES=1 "
                "GZFAULT_FAMILIES=transfer,transfer-notime)");
    struct vkt_device *g1 = vkt_device_view(d, d->family, 1, "graphics 1", true);
    struct vkt_device *tq = vkt_device_view(d, (uint32_t)transfer, 0, "transfer", true);
    struct vkt_device *nq = vkt_device_view(d, (uint32_t)notime, 0, "no timestamps", false);

    /* Transfer-only families: timed at the submission and command buffer
     * level; a family without timestamps: untimed. */
    struct vkt_buffer tbuf, nbuf;
    vkt_buffer_create(d, 1 << 20, VK_BUFFER_USAGE_TRANSFER_DST_BIT, false, &tbuf);
    vkt_buffer_create(d, 1 << 16, VK_BUFFER_USAGE_TRANSFER_DST_BIT, false, &nbuf);
    uploads(tq, &tbuf, "upload", 3);
    uploads(nq, &nbuf, "untimed upload", 2);

    /* The second queue of the first family, labels and all. */
    struct vkt_cmd r;
    vkt_cmd_alloc(g1, g1->pool, "graphics 1 frame", &r);
    vkt_cmd_begin(&r, 0);
    vkt_cmd_label_begin(&r, "G1 frame");
    vkt_cmd_work(&r, 1);
    vkt_cmd_label_end(&r);
    vkt_cmd_end(&r);
    for (int i = 0; i < 2; i++)
        vkt_submit1(&r);

    /* One SIMULTANEOUS_USE buffer on both graphics queues. */
    struct vkt_cmd sim;
    vkt_cmd_alloc(d, d->pool, "shared", &sim);
    vkt_cmd_begin(&sim, VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT);
    vkt_cmd_label_begin(&sim, "Shared outer");
    vkt_cmd_work(&sim, 2);
    vkt_cmd_label_begin(&sim, "Shared inner");
    vkt_cmd_work(&sim, 3);
    vkt_cmd_label_end(&sim);
    vkt_cmd_label_end(&sim);
    vkt_cmd_end(&sim);
    VkSemaphoreTypeCreateInfo tci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &tci};
    VkSemaphore gate;
    VKT_CHECK(vkCreateSemaphore(d->device, &sci, NULL, &gate));
    struct vkt_device *both[2] = {d, g1};
    pending_on_two(&sim, both, gate);
    /* Each alone, one after the other: the other's execution has run. */
    struct vkt_batch b = {1, {&sim}};
    vkt_submit(d, VKT_SUBMIT1, 1, &b, VKT_WAIT_FENCE, false);
    vkt_submit(g1, VKT_SUBMIT1, 1, &b, VKT_WAIT_FENCE, false);

    vkDestroySemaphore(d->device, gate, NULL);
    vkt_cmd_free(&sim);
    vkt_cmd_free(&r);
    vkt_buffer_destroy(d, &tbuf);
    vkt_buffer_destroy(d, &nbuf);
    vkt_device_view_destroy(nq);
    vkt_device_view_destroy(tq);
    vkt_device_view_destroy(g1);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}

/* The device's create info is read-only during vkCreateDevice (the layer
 * must copy the app's chain to turn host query reset on, never write to
 * it). Then a
 * labelled buffer, submitted twice: the layer times it with the feature it
 * turned on in its copy (validation below checks it was on). */
int case_readonly(const struct vkt_args *a)
{
    (void)a;
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_READONLY, "read-only create info");
    struct vkt_cmd c;
    vkt_cmd_alloc(d, d->pool, "readonly frame", &c);
    vkt_cmd_begin(&c, 0);
    vkt_cmd_label_begin(&c, "Frame");
    vkt_cmd_work(&c, 1);
    vkt_cmd_label_end(&c);
    vkt_cmd_end(&c);
    for (int i = 0; i < 2; i++)
        vkt_submit1(&c);
    vkt_cmd_free(&c);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}
