/* Submissions, presents and waits: the CPU side of each is a zone on the
 * calling thread, and each submitted batch gets its GPU zones through the
 * context's bracket command buffers. */
#include <stdlib.h>
#include <string.h>

#include "gz_layer.h"

static gz_vk_queue *queue_of(VkQueue queue)
{
    return gz_layer_queue(queue);
}

/* Batches whose command buffer list we must not change: device-group masks
 * are per command buffer, and protected batches run only protected ones.
 * Their zones are counted as not timed, with the reason. */
static bool batch_untouchable(gz_vk_submit *sub, uint32_t n, const void *pnext,
                              bool protected_submit)
{
    bool group = false;
    for (const VkBaseInStructure *s = pnext; s; s = s->pNext) {
        group |= s->sType == VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO;
        protected_submit |= s->sType == VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO &&
                            ((const VkProtectedSubmitInfo *)s)->protectedSubmit;
    }
    if (protected_submit || group)
        gz_vk_submit_untouched(sub, n, protected_submit);
    return protected_submit || group;
}

/* Per-call scratch, on the stack for common sizes. */
typedef struct scratch {
    void *heap;
    unsigned char stack[8192];
} scratch;

static void *scratch_get(scratch *s, size_t size)
{
    s->heap = NULL;
    if (size <= sizeof s->stack)
        return s->stack;
    return s->heap = malloc(size);
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_QueueSubmit(VkQueue queue, uint32_t count,
                                                   const VkSubmitInfo *submits, VkFence fence)
{
    static uint32_t name_id;
    layer_device *dev = gz_layer_device(queue);
    uint64_t t0 = gz_host_now_ns();
    gz_vk_submit *s =
        gz_vk_submit_begin(queue_of(queue), gz_intern_once(&name_id, "vkQueueSubmit"), fence);
    if (!s) {
        VkResult r = dev->fns.QueueSubmit(queue, count, submits, fence);
        gz_cpu_zone(gz_intern_once(&name_id, "vkQueueSubmit"), t0, gz_host_now_ns());
        return r;
    }
    size_t ncb = 0;
    for (uint32_t i = 0; i < count; i++)
        ncb += submits[i].commandBufferCount;
    scratch mem;
    /* The batches, one more for the timeline signal, and each batch's
     * command buffers as gz_vk_submit_batch lays them out. */
    VkSubmitInfo *out = scratch_get(&mem, (count + 1) * sizeof *out +
                                              (3 * ncb + count) * sizeof(VkCommandBuffer) +
                                              ncb * sizeof(gz_vk_cmdbuf *));
    const VkSubmitInfo *pass = submits;
    uint32_t npass = count;
    VkTimelineSemaphoreSubmitInfo signal_value;
    VkSemaphore timeline;
    uint64_t value;
    if (out) {
        VkCommandBuffer *cbs = (VkCommandBuffer *)(out + count + 1);
        gz_vk_cmdbuf **ctx = (gz_vk_cmdbuf **)(cbs + 3 * ncb + count);
        for (uint32_t i = 0; i < count; i++) {
            out[i] = submits[i];
            uint32_t n = submits[i].commandBufferCount;
            if (!n || batch_untouchable(s, n, submits[i].pNext, false))
                continue;
            for (uint32_t j = 0; j < n; j++)
                ctx[j] = gz_vk_cmdbuf_find(submits[i].pCommandBuffers[j]);
            out[i].commandBufferCount = gz_vk_submit_batch(s, i, submits[i].pCommandBuffers, ctx, n, cbs);
            out[i].pCommandBuffers = cbs;
            cbs += out[i].commandBufferCount;
        }
        /* The timeline signal in a batch of its own after the app's: no
         * command buffer, no wait; it completes with the work before it. */
        if (gz_vk_submit_timeline(s, &timeline, &value)) {
            signal_value = (VkTimelineSemaphoreSubmitInfo){
                .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                .signalSemaphoreValueCount = 1,
                .pSignalSemaphoreValues = &value};
            out[npass++] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                          .pNext = &signal_value,
                                          .signalSemaphoreCount = 1,
                                          .pSignalSemaphores = &timeline};
        }
        pass = out;
    }
    VkResult r = dev->fns.QueueSubmit(queue, npass, pass, fence);
    gz_vk_submit_end(s, r);
    free(mem.heap);
    gz_cpu_zone(name_id, t0, gz_host_now_ns());
    return r;
}

static VkResult submit2(VkQueue queue, uint32_t count, const VkSubmitInfo2 *submits, VkFence fence,
                        PFN_vkQueueSubmit2 next, uint32_t name_id)
{
    uint64_t t0 = gz_host_now_ns();
    gz_vk_submit *s = gz_vk_submit_begin(queue_of(queue), name_id, fence);
    if (!s) {
        VkResult r = next(queue, count, submits, fence);
        gz_cpu_zone(name_id, t0, gz_host_now_ns());
        return r;
    }
    size_t ncb = 0;
    for (uint32_t i = 0; i < count; i++)
        ncb += submits[i].commandBufferInfoCount;
    scratch mem;
    size_t room = 3 * ncb + count;
    VkSubmitInfo2 *out = scratch_get(&mem, (count + 1) * sizeof *out +
                                               room * sizeof(VkCommandBufferSubmitInfo) +
                                               room * sizeof(VkCommandBuffer) +
                                               2 * ncb * sizeof(void *));
    const VkSubmitInfo2 *pass = submits;
    uint32_t npass = count;
    VkSemaphoreSubmitInfo signal;
    if (out) {
        VkCommandBufferSubmitInfo *infos = (VkCommandBufferSubmitInfo *)(out + count + 1);
        VkCommandBuffer *handles = (VkCommandBuffer *)(infos + room);
        VkCommandBuffer *app = handles + room;
        gz_vk_cmdbuf **ctx = (gz_vk_cmdbuf **)(app + ncb);
        for (uint32_t i = 0; i < count; i++) {
            out[i] = submits[i];
            uint32_t n = submits[i].commandBufferInfoCount;
            if (!n || batch_untouchable(s, n, submits[i].pNext,
                                        submits[i].flags & VK_SUBMIT_PROTECTED_BIT))
                continue;
            /* Timing assumes one device mask for the whole batch. */
            bool masks = false;
            for (uint32_t j = 0; j < n; j++) {
                app[j] = submits[i].pCommandBufferInfos[j].commandBuffer;
                ctx[j] = gz_vk_cmdbuf_find(app[j]);
                masks |= submits[i].pCommandBufferInfos[j].deviceMask != 0 ||
                         submits[i].pCommandBufferInfos[j].pNext != NULL;
            }
            if (masks) {
                gz_vk_submit_untouched(s, n, false);
                continue;
            }
            uint32_t k = gz_vk_submit_batch(s, i, app, ctx, n, handles);
            for (uint32_t j = 0; j < k; j++)
                infos[j] = (VkCommandBufferSubmitInfo){
                    .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                    .commandBuffer = handles[j]};
            out[i].commandBufferInfoCount = k;
            out[i].pCommandBufferInfos = infos;
            infos += k;
            handles += k;
        }
        VkSemaphore timeline;
        uint64_t value;
        if (gz_vk_submit_timeline(s, &timeline, &value)) {
            signal = (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                             .semaphore = timeline,
                                             .value = value,
                                             .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
            out[npass++] = (VkSubmitInfo2){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                                           .signalSemaphoreInfoCount = 1,
                                           .pSignalSemaphoreInfos = &signal};
        }
        pass = out;
    }
    VkResult r = next(queue, npass, pass, fence);
    gz_vk_submit_end(s, r);
    free(mem.heap);
    gz_cpu_zone(name_id, t0, gz_host_now_ns());
    return r;
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_QueueSubmit2(VkQueue queue, uint32_t count,
                                                    const VkSubmitInfo2 *submits, VkFence fence)
{
    static uint32_t name_id;
    layer_device *dev = gz_layer_device(queue);
    return submit2(queue, count, submits, fence, dev->fns.QueueSubmit2,
                   gz_intern_once(&name_id, "vkQueueSubmit2"));
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_QueueSubmit2KHR(VkQueue queue, uint32_t count,
                                                       const VkSubmitInfo2 *submits, VkFence fence)
{
    static uint32_t name_id;
    layer_device *dev = gz_layer_device(queue);
    return submit2(queue, count, submits, fence, dev->fns.QueueSubmit2KHR,
                   gz_intern_once(&name_id, "vkQueueSubmit2"));
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_QueuePresentKHR(VkQueue queue, const VkPresentInfoKHR *info)
{
    layer_device *dev = gz_layer_device(queue);
    gz_vk_before_wait(dev->ctx, queue_of(queue), NULL, 0, false, true);
    static uint32_t name_id;
    uint64_t t0 = gz_host_now_ns();
    VkResult r = dev->fns.QueuePresentKHR(queue, info);
    gz_cpu_zone(gz_intern_once(&name_id, "vkQueuePresentKHR"), t0, gz_host_now_ns());
    /* A failed present (out of date, surface lost) still ends the app's
     * frame: it records the next one anew. */
    gz_vk_queue_present(queue_of(queue));
    return r;
}

/* Waits: a CPU zone each, and what they tell of the GPU: the work they
 * waited for was done when they returned (a bound as tight as the app's
 * own view, often much tighter than the worker's next look). */
VKAPI_ATTR VkResult VKAPI_CALL gz_hook_WaitForFences(VkDevice device, uint32_t count,
                                                     const VkFence *fences, VkBool32 all,
                                                     uint64_t timeout)
{
    static uint32_t name_id;
    layer_device *dev = gz_layer_device(device);
    gz_vk_before_wait(dev->ctx, NULL, fences, count, all, false);
    uint64_t t0 = gz_host_now_ns();
    VkResult r = dev->fns.WaitForFences(device, count, fences, all, timeout);
    uint64_t t1 = gz_host_now_ns();
    if (r == VK_SUCCESS)
        gz_vk_after_wait(dev->ctx, NULL, fences, count, all, t1);
    gz_cpu_zone(gz_intern_once(&name_id, "vkWaitForFences"), t0, t1);
    return r;
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_QueueWaitIdle(VkQueue queue)
{
    static uint32_t name_id;
    layer_device *dev = gz_layer_device(queue);
    gz_vk_before_wait(dev->ctx, queue_of(queue), NULL, 0, false, false);
    uint64_t t0 = gz_host_now_ns();
    VkResult r = dev->fns.QueueWaitIdle(queue);
    uint64_t t1 = gz_host_now_ns();
    if (r == VK_SUCCESS)
        gz_vk_after_wait(dev->ctx, queue_of(queue), NULL, 0, false, t1);
    gz_cpu_zone(gz_intern_once(&name_id, "vkQueueWaitIdle"), t0, t1);
    return r;
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_DeviceWaitIdle(VkDevice device)
{
    static uint32_t name_id;
    layer_device *dev = gz_layer_device(device);
    gz_vk_before_wait(dev->ctx, NULL, NULL, 0, false, false);
    uint64_t t0 = gz_host_now_ns();
    VkResult r = dev->fns.DeviceWaitIdle(device);
    uint64_t t1 = gz_host_now_ns();
    if (r == VK_SUCCESS)
        gz_vk_after_wait(dev->ctx, NULL, NULL, 0, false, t1);
    gz_cpu_zone(gz_intern_once(&name_id, "vkDeviceWaitIdle"), t0, t1);
    return r;
}
