/* VK_LAYER_GPUZONES_count: a layer for tests and benchmarks, placed below
 * gpuzones (between it and the driver), that counts what reaches the
 * driver: command buffers in submissions and the commands they execute
 * (timestamps, query resets, query copies with and without WAIT_BIT,
 * barriers, events, fills, dispatches, draws, buffer copies, secondaries),
 * recordings begun, command buffers allocated, host query resets and
 * vkGetQueryPoolResults calls. A recorded command is counted each time it
 * executes: once per submission of the primary that holds it, and once per
 * vkCmdExecuteCommands of a submitted primary for a secondary's commands.
 * Everything passes through unchanged.
 *
 *   GZCOUNT_OUTPUT=<path>   where the counts go (count_report.c); stderr
 *                           where it is not set
 *
 * Commands are counted before the driver sees them, whatever it answers:
 * a submission that fails is counted as executed. The layer cannot tell
 * the application's command buffers from those of a layer above it; run a
 * program twice, with and without that layer, and subtract (bench/run,
 * tests/countlayer/check_counts.py). */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include "count_layer.h"

#define EXPORT __attribute__((visibility("default")))

/* Every device function the layer wraps. */
#define DEVICE_HOOKS(X)                                                                            \
    X(AllocateCommandBuffers) X(FreeCommandBuffers) X(DestroyCommandPool) X(BeginCommandBuffer)   \
    X(QueueSubmit) X(QueueSubmit2) X(QueueSubmit2KHR)                                              \
    X(CmdWriteTimestamp) X(CmdWriteTimestamp2) X(CmdWriteTimestamp2KHR)                            \
    X(CmdResetQueryPool) X(ResetQueryPool) X(ResetQueryPoolEXT)                                    \
    X(CmdCopyQueryPoolResults) X(GetQueryPoolResults)                                              \
    X(CmdPipelineBarrier) X(CmdPipelineBarrier2) X(CmdPipelineBarrier2KHR)                         \
    X(CmdSetEvent) X(CmdSetEvent2) X(CmdSetEvent2KHR)                                              \
    X(CmdWaitEvents) X(CmdWaitEvents2) X(CmdWaitEvents2KHR)                                        \
    X(CmdResetEvent) X(CmdResetEvent2) X(CmdResetEvent2KHR)                                        \
    X(CmdFillBuffer) X(CmdExecuteCommands)                                                         \
    X(CmdDispatch) X(CmdDispatchBase) X(CmdDispatchBaseKHR) X(CmdDispatchIndirect)                 \
    X(CmdDraw) X(CmdDrawIndexed) X(CmdDrawIndirect) X(CmdDrawIndexedIndirect)                      \
    X(CmdDrawIndirectCount) X(CmdDrawIndirectCountKHR) X(CmdDrawIndexedIndirectCount)              \
    X(CmdDrawIndexedIndirectCountKHR)                                                              \
    X(CmdCopyBuffer) X(CmdCopyBuffer2) X(CmdCopyBuffer2KHR)

typedef struct instance_data {
    void *key; /* the dispatch key of the instance and its physical devices */
    VkInstance handle;
    PFN_vkGetInstanceProcAddr next_gipa;
    PFN_vkDestroyInstance DestroyInstance;
} instance_data;

typedef struct device_data {
    void *key; /* the dispatch key of the device, its queues and command buffers */
    PFN_vkGetDeviceProcAddr next_gdpa;
    PFN_vkDestroyDevice DestroyDevice;
#define FIELD(name) PFN_vk##name name;
    DEVICE_HOOKS(FIELD)
#undef FIELD
} device_data;

/* Slots are claimed under the lock and their key published last, so that
 * the hooks find their device without taking it. */
#define MAX_OBJECTS 64
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static instance_data instances[MAX_OBJECTS];
static device_data devices[MAX_OBJECTS];

static void *key_of(const void *dispatchable)
{
    return *(void *const *)dispatchable;
}

static instance_data *find_instance(const void *dispatchable)
{
    void *key = key_of(dispatchable);
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (__atomic_load_n(&instances[i].key, __ATOMIC_ACQUIRE) == key)
            return &instances[i];
    return NULL;
}

static device_data *find_device(const void *dispatchable)
{
    void *key = key_of(dispatchable);
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (__atomic_load_n(&devices[i].key, __ATOMIC_ACQUIRE) == key)
            return &devices[i];
    return NULL;
}

/* ---- instance and device ------------------------------------------------ */

static VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo *info,
                                                     const VkAllocationCallbacks *alloc,
                                                     VkInstance *instance)
{
    VkLayerInstanceCreateInfo *link = (VkLayerInstanceCreateInfo *)info->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO &&
                     link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerInstanceCreateInfo *)link->pNext;
    if (!link)
        return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)next(NULL, "vkCreateInstance");
    VkResult r = create(info, alloc, instance);
    if (r != VK_SUCCESS)
        return r;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OBJECTS; i++) {
        if (!instances[i].key) {
            instances[i].handle = *instance;
            instances[i].next_gipa = next;
            instances[i].DestroyInstance =
                (PFN_vkDestroyInstance)next(*instance, "vkDestroyInstance");
            __atomic_store_n(&instances[i].key, key_of(*instance), __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return r;
}

static VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance,
                                                  const VkAllocationCallbacks *alloc)
{
    instance_data *d = instance ? find_instance(instance) : NULL;
    if (!d)
        return;
    PFN_vkDestroyInstance destroy = d->DestroyInstance;
    __atomic_store_n(&d->key, NULL, __ATOMIC_RELEASE);
    destroy(instance, alloc);
}

static VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice phys,
                                                   const VkDeviceCreateInfo *info,
                                                   const VkAllocationCallbacks *alloc,
                                                   VkDevice *device)
{
    instance_data *inst = find_instance(phys);
    VkLayerDeviceCreateInfo *link = (VkLayerDeviceCreateInfo *)info->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
                     link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerDeviceCreateInfo *)link->pNext;
    if (!link || !inst)
        return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    PFN_vkCreateDevice create = (PFN_vkCreateDevice)next_gipa(inst->handle, "vkCreateDevice");
    VkResult r = create(phys, info, alloc, device);
    if (r != VK_SUCCESS)
        return r;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OBJECTS; i++) {
        if (!devices[i].key) {
            device_data *d = &devices[i];
            d->next_gdpa = next_gdpa;
            d->DestroyDevice = (PFN_vkDestroyDevice)next_gdpa(*device, "vkDestroyDevice");
#define RESOLVE(name) d->name = (PFN_vk##name)next_gdpa(*device, "vk" #name);
            DEVICE_HOOKS(RESOLVE)
#undef RESOLVE
            __atomic_store_n(&d->key, key_of(*device), __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    gzc_add(GZC_DEVICES, 1);
    return r;
}

static VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks *alloc)
{
    device_data *d = device ? find_device(device) : NULL;
    if (!d)
        return;
    PFN_vkDestroyDevice destroy = d->DestroyDevice;
    void *key = d->key;
    __atomic_store_n(&d->key, NULL, __ATOMIC_RELEASE);
    destroy(device, alloc);
    gzc_cmdbufs_device_destroyed(key);
    gzc_report_write();
}

/* ---- command buffers ------------------------------------------------------ */

static VKAPI_ATTR VkResult VKAPI_CALL
AllocateCommandBuffers(VkDevice device, const VkCommandBufferAllocateInfo *info,
                       VkCommandBuffer *cbs)
{
    VkResult r = find_device(device)->AllocateCommandBuffers(device, info, cbs);
    if (r == VK_SUCCESS) {
        for (uint32_t i = 0; i < info->commandBufferCount; i++)
            gzc_cmdbuf_allocated(cbs[i], info->commandPool);
        gzc_add(GZC_CMDBUFS_ALLOCATED, info->commandBufferCount);
    }
    return r;
}

static VKAPI_ATTR void VKAPI_CALL FreeCommandBuffers(VkDevice device, VkCommandPool pool,
                                                     uint32_t n, const VkCommandBuffer *cbs)
{
    for (uint32_t i = 0; i < n; i++)
        if (cbs[i])
            gzc_cmdbuf_freed(cbs[i]);
    find_device(device)->FreeCommandBuffers(device, pool, n, cbs);
}

static VKAPI_ATTR void VKAPI_CALL DestroyCommandPool(VkDevice device, VkCommandPool pool,
                                                     const VkAllocationCallbacks *alloc)
{
    if (pool)
        gzc_cmdbufs_pool_destroyed(pool);
    find_device(device)->DestroyCommandPool(device, pool, alloc);
}

static VKAPI_ATTR VkResult VKAPI_CALL BeginCommandBuffer(VkCommandBuffer cb,
                                                         const VkCommandBufferBeginInfo *info)
{
    gzc_add(GZC_BEGINS, 1);
    gzc_cmdbuf_begun(cb);
    return find_device(cb)->BeginCommandBuffer(cb, info);
}

static VKAPI_ATTR void VKAPI_CALL CmdExecuteCommands(VkCommandBuffer cb, uint32_t n,
                                                     const VkCommandBuffer *secondaries)
{
    gzc_cmdbuf_executes(cb, n, secondaries);
    find_device(cb)->CmdExecuteCommands(cb, n, secondaries);
}

/* ---- submissions ----------------------------------------------------------- */

/* Counted before the driver sees them: once the driver has them, they may
 * complete and be recorded again by another thread before we look. */
static VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue queue, uint32_t count,
                                                  const VkSubmitInfo *submits, VkFence fence)
{
    gzc_add(GZC_SUBMIT_CALLS, 1);
    gzc_add(GZC_BATCHES, count);
    for (uint32_t i = 0; i < count; i++) {
        gzc_add(GZC_CMDBUFS_SUBMITTED, submits[i].commandBufferCount);
        for (uint32_t j = 0; j < submits[i].commandBufferCount; j++)
            gzc_cmdbuf_submitted(submits[i].pCommandBuffers[j]);
    }
    return find_device(queue)->QueueSubmit(queue, count, submits, fence);
}

static void count_submit2(uint32_t count, const VkSubmitInfo2 *submits)
{
    gzc_add(GZC_SUBMIT_CALLS, 1);
    gzc_add(GZC_BATCHES, count);
    for (uint32_t i = 0; i < count; i++) {
        gzc_add(GZC_CMDBUFS_SUBMITTED, submits[i].commandBufferInfoCount);
        for (uint32_t j = 0; j < submits[i].commandBufferInfoCount; j++)
            gzc_cmdbuf_submitted(submits[i].pCommandBufferInfos[j].commandBuffer);
    }
}

static VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2(VkQueue queue, uint32_t count,
                                                   const VkSubmitInfo2 *submits, VkFence fence)
{
    count_submit2(count, submits);
    return find_device(queue)->QueueSubmit2(queue, count, submits, fence);
}

static VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2KHR(VkQueue queue, uint32_t count,
                                                      const VkSubmitInfo2 *submits, VkFence fence)
{
    count_submit2(count, submits);
    return find_device(queue)->QueueSubmit2KHR(queue, count, submits, fence);
}

/* ---- queries ----------------------------------------------------------------- */

static VKAPI_ATTR void VKAPI_CALL CmdWriteTimestamp(VkCommandBuffer cb,
                                                    VkPipelineStageFlagBits stage,
                                                    VkQueryPool pool, uint32_t query)
{
    gzc_cmdbuf_note(cb, GZC_TIMESTAMPS, 1);
    find_device(cb)->CmdWriteTimestamp(cb, stage, pool, query);
}

static VKAPI_ATTR void VKAPI_CALL CmdWriteTimestamp2(VkCommandBuffer cb,
                                                     VkPipelineStageFlags2 stage,
                                                     VkQueryPool pool, uint32_t query)
{
    gzc_cmdbuf_note(cb, GZC_TIMESTAMPS, 1);
    find_device(cb)->CmdWriteTimestamp2(cb, stage, pool, query);
}

static VKAPI_ATTR void VKAPI_CALL CmdWriteTimestamp2KHR(VkCommandBuffer cb,
                                                        VkPipelineStageFlags2 stage,
                                                        VkQueryPool pool, uint32_t query)
{
    gzc_cmdbuf_note(cb, GZC_TIMESTAMPS, 1);
    find_device(cb)->CmdWriteTimestamp2KHR(cb, stage, pool, query);
}

static VKAPI_ATTR void VKAPI_CALL CmdResetQueryPool(VkCommandBuffer cb, VkQueryPool pool,
                                                    uint32_t first, uint32_t count)
{
    gzc_cmdbuf_note(cb, GZC_QUERY_RESETS, 1);
    find_device(cb)->CmdResetQueryPool(cb, pool, first, count);
}

static VKAPI_ATTR void VKAPI_CALL ResetQueryPool(VkDevice device, VkQueryPool pool,
                                                 uint32_t first, uint32_t count)
{
    gzc_add(GZC_HOST_QUERY_RESETS, 1);
    find_device(device)->ResetQueryPool(device, pool, first, count);
}

static VKAPI_ATTR void VKAPI_CALL ResetQueryPoolEXT(VkDevice device, VkQueryPool pool,
                                                    uint32_t first, uint32_t count)
{
    gzc_add(GZC_HOST_QUERY_RESETS, 1);
    find_device(device)->ResetQueryPoolEXT(device, pool, first, count);
}

static VKAPI_ATTR void VKAPI_CALL CmdCopyQueryPoolResults(VkCommandBuffer cb, VkQueryPool pool,
                                                          uint32_t first, uint32_t count,
                                                          VkBuffer buffer, VkDeviceSize offset,
                                                          VkDeviceSize stride,
                                                          VkQueryResultFlags flags)
{
    gzc_cmdbuf_note(cb, flags & VK_QUERY_RESULT_WAIT_BIT ? GZC_COPIES_WAIT : GZC_COPIES_NOWAIT,
                    1);
    find_device(cb)->CmdCopyQueryPoolResults(cb, pool, first, count, buffer, offset, stride,
                                             flags);
}

static VKAPI_ATTR VkResult VKAPI_CALL GetQueryPoolResults(VkDevice device, VkQueryPool pool,
                                                          uint32_t first, uint32_t count,
                                                          size_t size, void *data,
                                                          VkDeviceSize stride,
                                                          VkQueryResultFlags flags)
{
    gzc_add(GZC_GET_RESULTS, 1);
    if (flags & VK_QUERY_RESULT_WAIT_BIT)
        gzc_add(GZC_GET_RESULTS_WAIT, 1);
    return find_device(device)->GetQueryPoolResults(device, pool, first, count, size, data, stride,
                                                    flags);
}

/* ---- synchronisation ------------------------------------------------------- */

static VKAPI_ATTR void VKAPI_CALL
CmdPipelineBarrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkPipelineStageFlags dst,
                   VkDependencyFlags dep, uint32_t nmem, const VkMemoryBarrier *mem,
                   uint32_t nbuf, const VkBufferMemoryBarrier *buf, uint32_t nimg,
                   const VkImageMemoryBarrier *img)
{
    gzc_cmdbuf_note(cb, GZC_BARRIERS, 1);
    find_device(cb)->CmdPipelineBarrier(cb, src, dst, dep, nmem, mem, nbuf, buf, nimg, img);
}

static VKAPI_ATTR void VKAPI_CALL CmdPipelineBarrier2(VkCommandBuffer cb,
                                                      const VkDependencyInfo *dep)
{
    gzc_cmdbuf_note(cb, GZC_BARRIERS, 1);
    find_device(cb)->CmdPipelineBarrier2(cb, dep);
}

static VKAPI_ATTR void VKAPI_CALL CmdPipelineBarrier2KHR(VkCommandBuffer cb,
                                                         const VkDependencyInfo *dep)
{
    gzc_cmdbuf_note(cb, GZC_BARRIERS, 1);
    find_device(cb)->CmdPipelineBarrier2KHR(cb, dep);
}

static VKAPI_ATTR void VKAPI_CALL CmdSetEvent(VkCommandBuffer cb, VkEvent event,
                                              VkPipelineStageFlags stage)
{
    gzc_cmdbuf_note(cb, GZC_EVENTS_SET, 1);
    find_device(cb)->CmdSetEvent(cb, event, stage);
}

static VKAPI_ATTR void VKAPI_CALL CmdSetEvent2(VkCommandBuffer cb, VkEvent event,
                                               const VkDependencyInfo *dep)
{
    gzc_cmdbuf_note(cb, GZC_EVENTS_SET, 1);
    find_device(cb)->CmdSetEvent2(cb, event, dep);
}

static VKAPI_ATTR void VKAPI_CALL CmdSetEvent2KHR(VkCommandBuffer cb, VkEvent event,
                                                  const VkDependencyInfo *dep)
{
    gzc_cmdbuf_note(cb, GZC_EVENTS_SET, 1);
    find_device(cb)->CmdSetEvent2KHR(cb, event, dep);
}

static VKAPI_ATTR void VKAPI_CALL
CmdWaitEvents(VkCommandBuffer cb, uint32_t n, const VkEvent *events, VkPipelineStageFlags src,
              VkPipelineStageFlags dst, uint32_t nmem, const VkMemoryBarrier *mem, uint32_t nbuf,
              const VkBufferMemoryBarrier *buf, uint32_t nimg, const VkImageMemoryBarrier *img)
{
    gzc_cmdbuf_note(cb, GZC_EVENTS_WAITED, 1);
    find_device(cb)->CmdWaitEvents(cb, n, events, src, dst, nmem, mem, nbuf, buf, nimg, img);
}

static VKAPI_ATTR void VKAPI_CALL CmdWaitEvents2(VkCommandBuffer cb, uint32_t n,
                                                 const VkEvent *events,
                                                 const VkDependencyInfo *deps)
{
    gzc_cmdbuf_note(cb, GZC_EVENTS_WAITED, 1);
    find_device(cb)->CmdWaitEvents2(cb, n, events, deps);
}

static VKAPI_ATTR void VKAPI_CALL CmdWaitEvents2KHR(VkCommandBuffer cb, uint32_t n,
                                                    const VkEvent *events,
                                                    const VkDependencyInfo *deps)
{
    gzc_cmdbuf_note(cb, GZC_EVENTS_WAITED, 1);
    find_device(cb)->CmdWaitEvents2KHR(cb, n, events, deps);
}

static VKAPI_ATTR void VKAPI_CALL CmdResetEvent(VkCommandBuffer cb, VkEvent event,
                                                VkPipelineStageFlags stage)
{
    gzc_cmdbuf_note(cb, GZC_EVENTS_RESET, 1);
    find_device(cb)->CmdResetEvent(cb, event, stage);
}

static VKAPI_ATTR void VKAPI_CALL CmdResetEvent2(VkCommandBuffer cb, VkEvent event,
                                                 VkPipelineStageFlags2 stage)
{
    gzc_cmdbuf_note(cb, GZC_EVENTS_RESET, 1);
    find_device(cb)->CmdResetEvent2(cb, event, stage);
}

static VKAPI_ATTR void VKAPI_CALL CmdResetEvent2KHR(VkCommandBuffer cb, VkEvent event,
                                                    VkPipelineStageFlags2 stage)
{
    gzc_cmdbuf_note(cb, GZC_EVENTS_RESET, 1);
    find_device(cb)->CmdResetEvent2KHR(cb, event, stage);
}

/* ---- work ------------------------------------------------------------------ */

static VKAPI_ATTR void VKAPI_CALL CmdFillBuffer(VkCommandBuffer cb, VkBuffer buffer,
                                                VkDeviceSize offset, VkDeviceSize size,
                                                uint32_t data)
{
    gzc_cmdbuf_note(cb, GZC_FILLS, 1);
    find_device(cb)->CmdFillBuffer(cb, buffer, offset, size, data);
}

static VKAPI_ATTR void VKAPI_CALL CmdDispatch(VkCommandBuffer cb, uint32_t x, uint32_t y,
                                              uint32_t z)
{
    gzc_cmdbuf_note(cb, GZC_DISPATCHES, 1);
    find_device(cb)->CmdDispatch(cb, x, y, z);
}

static VKAPI_ATTR void VKAPI_CALL CmdDispatchBase(VkCommandBuffer cb, uint32_t bx, uint32_t by,
                                                  uint32_t bz, uint32_t x, uint32_t y, uint32_t z)
{
    gzc_cmdbuf_note(cb, GZC_DISPATCHES, 1);
    find_device(cb)->CmdDispatchBase(cb, bx, by, bz, x, y, z);
}

static VKAPI_ATTR void VKAPI_CALL CmdDispatchBaseKHR(VkCommandBuffer cb, uint32_t bx,
                                                     uint32_t by, uint32_t bz, uint32_t x,
                                                     uint32_t y, uint32_t z)
{
    gzc_cmdbuf_note(cb, GZC_DISPATCHES, 1);
    find_device(cb)->CmdDispatchBaseKHR(cb, bx, by, bz, x, y, z);
}

static VKAPI_ATTR void VKAPI_CALL CmdDispatchIndirect(VkCommandBuffer cb, VkBuffer buffer,
                                                      VkDeviceSize offset)
{
    gzc_cmdbuf_note(cb, GZC_DISPATCHES, 1);
    find_device(cb)->CmdDispatchIndirect(cb, buffer, offset);
}

static VKAPI_ATTR void VKAPI_CALL CmdDraw(VkCommandBuffer cb, uint32_t vertices,
                                          uint32_t instances_, uint32_t first_vertex,
                                          uint32_t first_instance)
{
    gzc_cmdbuf_note(cb, GZC_DRAWS, 1);
    find_device(cb)->CmdDraw(cb, vertices, instances_, first_vertex, first_instance);
}

static VKAPI_ATTR void VKAPI_CALL CmdDrawIndexed(VkCommandBuffer cb, uint32_t indices,
                                                 uint32_t instances_, uint32_t first_index,
                                                 int32_t vertex_offset, uint32_t first_instance)
{
    gzc_cmdbuf_note(cb, GZC_DRAWS, 1);
    find_device(cb)->CmdDrawIndexed(cb, indices, instances_, first_index, vertex_offset,
                                    first_instance);
}

static VKAPI_ATTR void VKAPI_CALL CmdDrawIndirect(VkCommandBuffer cb, VkBuffer buffer,
                                                  VkDeviceSize offset, uint32_t count,
                                                  uint32_t stride)
{
    gzc_cmdbuf_note(cb, GZC_DRAWS, 1);
    find_device(cb)->CmdDrawIndirect(cb, buffer, offset, count, stride);
}

static VKAPI_ATTR void VKAPI_CALL CmdDrawIndexedIndirect(VkCommandBuffer cb, VkBuffer buffer,
                                                         VkDeviceSize offset, uint32_t count,
                                                         uint32_t stride)
{
    gzc_cmdbuf_note(cb, GZC_DRAWS, 1);
    find_device(cb)->CmdDrawIndexedIndirect(cb, buffer, offset, count, stride);
}

static VKAPI_ATTR void VKAPI_CALL CmdDrawIndirectCount(VkCommandBuffer cb, VkBuffer buffer,
                                                       VkDeviceSize offset, VkBuffer count_buffer,
                                                       VkDeviceSize count_offset,
                                                       uint32_t max_count, uint32_t stride)
{
    gzc_cmdbuf_note(cb, GZC_DRAWS, 1);
    find_device(cb)->CmdDrawIndirectCount(cb, buffer, offset, count_buffer, count_offset,
                                          max_count, stride);
}

static VKAPI_ATTR void VKAPI_CALL CmdDrawIndirectCountKHR(VkCommandBuffer cb, VkBuffer buffer,
                                                          VkDeviceSize offset,
                                                          VkBuffer count_buffer,
                                                          VkDeviceSize count_offset,
                                                          uint32_t max_count, uint32_t stride)
{
    gzc_cmdbuf_note(cb, GZC_DRAWS, 1);
    find_device(cb)->CmdDrawIndirectCountKHR(cb, buffer, offset, count_buffer, count_offset,
                                             max_count, stride);
}

static VKAPI_ATTR void VKAPI_CALL CmdDrawIndexedIndirectCount(VkCommandBuffer cb, VkBuffer buffer,
                                                              VkDeviceSize offset,
                                                              VkBuffer count_buffer,
                                                              VkDeviceSize count_offset,
                                                              uint32_t max_count, uint32_t stride)
{
    gzc_cmdbuf_note(cb, GZC_DRAWS, 1);
    find_device(cb)->CmdDrawIndexedIndirectCount(cb, buffer, offset, count_buffer, count_offset,
                                                 max_count, stride);
}

static VKAPI_ATTR void VKAPI_CALL
CmdDrawIndexedIndirectCountKHR(VkCommandBuffer cb, VkBuffer buffer, VkDeviceSize offset,
                               VkBuffer count_buffer, VkDeviceSize count_offset,
                               uint32_t max_count, uint32_t stride)
{
    gzc_cmdbuf_note(cb, GZC_DRAWS, 1);
    find_device(cb)->CmdDrawIndexedIndirectCountKHR(cb, buffer, offset, count_buffer,
                                                    count_offset, max_count, stride);
}

static VKAPI_ATTR void VKAPI_CALL CmdCopyBuffer(VkCommandBuffer cb, VkBuffer src, VkBuffer dst,
                                                uint32_t n, const VkBufferCopy *regions)
{
    gzc_cmdbuf_note(cb, GZC_BUFFER_COPIES, 1);
    find_device(cb)->CmdCopyBuffer(cb, src, dst, n, regions);
}

static VKAPI_ATTR void VKAPI_CALL CmdCopyBuffer2(VkCommandBuffer cb,
                                                 const VkCopyBufferInfo2 *info)
{
    gzc_cmdbuf_note(cb, GZC_BUFFER_COPIES, 1);
    find_device(cb)->CmdCopyBuffer2(cb, info);
}

static VKAPI_ATTR void VKAPI_CALL CmdCopyBuffer2KHR(VkCommandBuffer cb,
                                                    const VkCopyBufferInfo2 *info)
{
    gzc_cmdbuf_note(cb, GZC_BUFFER_COPIES, 1);
    find_device(cb)->CmdCopyBuffer2KHR(cb, info);
}

/* ---- dispatch ----------------------------------------------------------------- */

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device,
                                                                  const char *name);

static PFN_vkVoidFunction own_instance(const char *name)
{
    static const struct {
        const char *name;
        PFN_vkVoidFunction fn;
    } fns[] = {
        {"vkCreateInstance", (PFN_vkVoidFunction)CreateInstance},
        {"vkDestroyInstance", (PFN_vkVoidFunction)DestroyInstance},
        {"vkCreateDevice", (PFN_vkVoidFunction)CreateDevice},
        {"vkDestroyDevice", (PFN_vkVoidFunction)DestroyDevice},
        {"vkGetDeviceProcAddr", (PFN_vkVoidFunction)GetDeviceProcAddr},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(name, fns[i].name))
            return fns[i].fn;
    return NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetInstanceProcAddr(VkInstance instance,
                                                                    const char *name)
{
    if (!strcmp(name, "vkGetInstanceProcAddr"))
        return (PFN_vkVoidFunction)GetInstanceProcAddr;
    PFN_vkVoidFunction f = own_instance(name);
    if (f)
        return f;
    instance_data *d = instance ? find_instance(instance) : NULL;
    return d ? d->next_gipa(instance, name) : NULL;
}

static PFN_vkVoidFunction own_device(const char *name)
{
    static const struct {
        const char *name;
        PFN_vkVoidFunction fn;
    } fns[] = {
#define ENTRY(fn_name) {"vk" #fn_name, (PFN_vkVoidFunction)fn_name},
        DEVICE_HOOKS(ENTRY)
#undef ENTRY
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(name, fns[i].name))
            return fns[i].fn;
    return NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char *name)
{
    if (!strcmp(name, "vkGetDeviceProcAddr") || !strcmp(name, "vkDestroyDevice"))
        return own_instance(name);
    device_data *d = device ? find_device(device) : NULL;
    if (!d)
        return NULL;
    PFN_vkVoidFunction next = d->next_gdpa(device, name);
    /* Only what the device really has (an extension not enabled stays
     * NULL), and only wrapped where there is a next to call. */
    PFN_vkVoidFunction f = next ? own_device(name) : NULL;
    return f ? f : next;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v)
{
    if (v->loaderLayerInterfaceVersion > 2)
        v->loaderLayerInterfaceVersion = 2;
    v->pfnGetInstanceProcAddr = GetInstanceProcAddr;
    v->pfnGetDeviceProcAddr = GetDeviceProcAddr;
    v->pfnGetPhysicalDeviceProcAddr = NULL;
    return VK_SUCCESS;
}
