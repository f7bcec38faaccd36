/* Command pools, command buffers, debug labels and object names: keeps the
 * context's view of each command buffer in step with the app's. */
#include <stdlib.h>
#include <string.h>

#include "gz_layer.h"

void gz_layer_pool_free(layer_pool *p)
{
    gz_vk_cmdpool_free(p->ctx);
    free(p);
}

static layer_pool *pool_of(VkCommandPool pool)
{
    return GZ_LAYER_FIND(&gz_layer_pools, GZ_HANDLE_KEY(pool), layer_pool);
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_CreateCommandPool(VkDevice device,
                                                         const VkCommandPoolCreateInfo *info,
                                                         const VkAllocationCallbacks *alloc,
                                                         VkCommandPool *pool)
{
    layer_device *dev = gz_layer_device(device);
    VkResult r = dev->fns.CreateCommandPool(device, info, alloc, pool);
    if (r != VK_SUCCESS || !dev->ctx)
        return r;
    layer_pool *p = calloc(1, sizeof *p);
    if (p)
        p->ctx = gz_vk_cmdpool_new(dev->ctx, info->queueFamilyIndex,
                                   (info->flags & VK_COMMAND_POOL_CREATE_PROTECTED_BIT) != 0,
                                   dev);
    if (!p || !p->ctx) {
        free(p);
        return r; /* its command buffers go untracked: timed, without names or labels */
    }
    p->dev = dev;
    pthread_mutex_lock(&dev->lock);
    p->next = dev->pools;
    if (dev->pools)
        dev->pools->prev = p;
    dev->pools = p;
    pthread_mutex_unlock(&dev->lock);
    gz_handle_map_put(&gz_layer_pools, GZ_HANDLE_KEY(*pool), &p->node);
    return r;
}

VKAPI_ATTR void VKAPI_CALL gz_hook_DestroyCommandPool(VkDevice device, VkCommandPool pool,
                                                      const VkAllocationCallbacks *alloc)
{
    layer_device *dev = gz_layer_device(device);
    gz_handle_node *n = pool ? gz_handle_map_remove(&gz_layer_pools, GZ_HANDLE_KEY(pool)) : NULL;
    if (n) {
        layer_pool *p = gz_container_of(n, layer_pool, node);
        pthread_mutex_lock(&dev->lock);
        if (p->prev)
            p->prev->next = p->next;
        else
            dev->pools = p->next;
        if (p->next)
            p->next->prev = p->prev;
        pthread_mutex_unlock(&dev->lock);
        gz_layer_pool_free(p);
    }
    dev->fns.DestroyCommandPool(device, pool, alloc);
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_ResetCommandPool(VkDevice device, VkCommandPool pool,
                                                        VkCommandPoolResetFlags flags)
{
    layer_device *dev = gz_layer_device(device);
    layer_pool *p = pool_of(pool);
    if (p)
        gz_vk_cmdpool_reset(p->ctx);
    return dev->fns.ResetCommandPool(device, pool, flags);
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_AllocateCommandBuffers(
    VkDevice device, const VkCommandBufferAllocateInfo *info, VkCommandBuffer *cbs)
{
    layer_device *dev = gz_layer_device(device);
    VkResult r = dev->fns.AllocateCommandBuffers(device, info, cbs);
    layer_pool *p = r == VK_SUCCESS && dev->ctx ? pool_of(info->commandPool) : NULL;
    for (uint32_t i = 0; p && i < info->commandBufferCount; i++)
        gz_vk_cmdbuf_new(p->ctx, cbs[i], info->level == VK_COMMAND_BUFFER_LEVEL_SECONDARY);
    return r;
}

VKAPI_ATTR void VKAPI_CALL gz_hook_FreeCommandBuffers(VkDevice device, VkCommandPool pool,
                                                      uint32_t count, const VkCommandBuffer *cbs)
{
    layer_device *dev = gz_layer_device(device);
    for (uint32_t i = 0; i < count; i++)
        gz_vk_cmdbuf_free(cbs[i]);
    dev->fns.FreeCommandBuffers(device, pool, count, cbs);
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_BeginCommandBuffer(VkCommandBuffer cb,
                                                          const VkCommandBufferBeginInfo *info)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    VkResult r = dev->fns.BeginCommandBuffer(cb, info);
    /* After the call down: the recording's commands go after its begin. A
     * failed begin leaves the command buffer as it was. */
    if (c && r == VK_SUCCESS)
        gz_vk_cmdbuf_begin(c, info);
    return r;
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_EndCommandBuffer(VkCommandBuffer cb)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    if (c)
        gz_vk_cmdbuf_end(c);
    return dev->fns.EndCommandBuffer(cb);
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_ResetCommandBuffer(VkCommandBuffer cb,
                                                          VkCommandBufferResetFlags flags)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    if (c)
        gz_vk_cmdbuf_reset(c);
    return dev->fns.ResetCommandBuffer(cb, flags);
}

VKAPI_ATTR void VKAPI_CALL gz_hook_CmdExecuteCommands(VkCommandBuffer cb, uint32_t count,
                                                      const VkCommandBuffer *secondaries)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    if (c && count) {
        gz_vk_cmdbuf *stack[16];
        gz_vk_cmdbuf **sec = count <= 16 ? stack : malloc(count * sizeof *sec);
        if (sec) {
            for (uint32_t i = 0; i < count; i++)
                sec[i] = gz_vk_cmdbuf_find(secondaries[i]);
            gz_vk_cmdbuf_execute(c, sec, count);
            if (sec != stack)
                free(sec);
        }
    }
    dev->fns.CmdExecuteCommands(cb, count, secondaries);
}

VKAPI_ATTR void VKAPI_CALL gz_hook_CmdBeginDebugUtilsLabelEXT(VkCommandBuffer cb,
                                                              const VkDebugUtilsLabelEXT *label)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    if (c)
        gz_vk_cmdbuf_label_begin(c, label->pLabelName);
    dev->fns.CmdBeginDebugUtilsLabelEXT(cb, label);
}

VKAPI_ATTR void VKAPI_CALL gz_hook_CmdEndDebugUtilsLabelEXT(VkCommandBuffer cb)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    dev->fns.CmdEndDebugUtilsLabelEXT(cb);
    if (c)
        gz_vk_cmdbuf_label_end(c);
}

VKAPI_ATTR void VKAPI_CALL gz_hook_CmdDebugMarkerBeginEXT(VkCommandBuffer cb,
                                                          const VkDebugMarkerMarkerInfoEXT *info)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    if (c)
        gz_vk_cmdbuf_label_begin(c, info->pMarkerName);
    dev->fns.CmdDebugMarkerBeginEXT(cb, info);
}

VKAPI_ATTR void VKAPI_CALL gz_hook_CmdDebugMarkerEndEXT(VkCommandBuffer cb)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    dev->fns.CmdDebugMarkerEndEXT(cb);
    if (c)
        gz_vk_cmdbuf_label_end(c);
}

static gz_vk_queue *queue_of(VkQueue queue)
{
    return gz_layer_queue(queue);
}

VKAPI_ATTR void VKAPI_CALL gz_hook_QueueBeginDebugUtilsLabelEXT(VkQueue queue,
                                                                const VkDebugUtilsLabelEXT *label)
{
    layer_device *dev = gz_layer_device(queue);
    gz_vk_queue_label_begin(queue_of(queue), label->pLabelName);
    dev->fns.QueueBeginDebugUtilsLabelEXT(queue, label);
}

VKAPI_ATTR void VKAPI_CALL gz_hook_QueueEndDebugUtilsLabelEXT(VkQueue queue)
{
    layer_device *dev = gz_layer_device(queue);
    dev->fns.QueueEndDebugUtilsLabelEXT(queue);
    gz_vk_queue_label_end(queue_of(queue));
}

/* A debug name of an object the layer names zones after (type: a
 * VkObjectType). */
static void set_name(layer_device *dev, VkObjectType type, uint64_t handle, const char *name)
{
    if (type == VK_OBJECT_TYPE_COMMAND_BUFFER) {
        gz_vk_cmdbuf *c = gz_vk_cmdbuf_find((VkCommandBuffer)(uintptr_t)handle);
        if (c)
            gz_vk_cmdbuf_set_name(c, name);
    } else if (type == VK_OBJECT_TYPE_QUEUE) {
        gz_vk_queue_set_name(queue_of((VkQueue)(uintptr_t)handle), name);
    } else if (dev->ctx) {
        gz_vk_object_named(type, handle, name);
    }
}

VKAPI_ATTR VkResult VKAPI_CALL
gz_hook_SetDebugUtilsObjectNameEXT(VkDevice device, const VkDebugUtilsObjectNameInfoEXT *info)
{
    layer_device *dev = gz_layer_device(device);
    set_name(dev, info->objectType, info->objectHandle, info->pObjectName);
    return dev->fns.SetDebugUtilsObjectNameEXT(device, info);
}

/* VK_EXT_debug_marker's object types, as VkObjectType. */
static VkObjectType object_type(VkDebugReportObjectTypeEXT t)
{
    switch (t) {
    case VK_DEBUG_REPORT_OBJECT_TYPE_COMMAND_BUFFER_EXT:
        return VK_OBJECT_TYPE_COMMAND_BUFFER;
    case VK_DEBUG_REPORT_OBJECT_TYPE_QUEUE_EXT:
        return VK_OBJECT_TYPE_QUEUE;
    case VK_DEBUG_REPORT_OBJECT_TYPE_RENDER_PASS_EXT:
        return VK_OBJECT_TYPE_RENDER_PASS;
    case VK_DEBUG_REPORT_OBJECT_TYPE_FRAMEBUFFER_EXT:
        return VK_OBJECT_TYPE_FRAMEBUFFER;
    case VK_DEBUG_REPORT_OBJECT_TYPE_PIPELINE_EXT:
        return VK_OBJECT_TYPE_PIPELINE;
    default:
        return VK_OBJECT_TYPE_UNKNOWN;
    }
}

VKAPI_ATTR VkResult VKAPI_CALL
gz_hook_DebugMarkerSetObjectNameEXT(VkDevice device, const VkDebugMarkerObjectNameInfoEXT *info)
{
    layer_device *dev = gz_layer_device(device);
    set_name(dev, object_type(info->objectType), info->object, info->pObjectName);
    return dev->fns.DebugMarkerSetObjectNameEXT(device, info);
}
