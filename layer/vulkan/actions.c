/* Action and synchronization commands, and render pass instances: each is
 * passed down as it is, after the context has had its say (a command
 * buffer's begin timestamp goes just before its first action; a timestamp
 * inside a render pass needs to know which one it is in). */
#include <stdlib.h>

#include "gz_layer.h"

/* A hook that tells the context an action comes, then passes it down. */
#define ACTION(name, params, args)                                                                 \
    VKAPI_ATTR void VKAPI_CALL gz_hook_##name params                                              \
    {                                                                                              \
        gz_vk_cmdbuf *c;                                                                           \
        layer_device *dev = gz_layer_cmdbuf(cb, &c);                                               \
        if (c)                                                                                     \
            gz_vk_cmdbuf_action(c);                                                                \
        dev->fns.name args;                                                                        \
    }

ACTION(CmdDraw, (VkCommandBuffer cb, uint32_t a, uint32_t b, uint32_t c_, uint32_t d),
       (cb, a, b, c_, d))
ACTION(CmdDrawIndexed,
       (VkCommandBuffer cb, uint32_t a, uint32_t b, uint32_t c_, int32_t d, uint32_t e),
       (cb, a, b, c_, d, e))
ACTION(CmdDrawIndirect, (VkCommandBuffer cb, VkBuffer b, VkDeviceSize o, uint32_t n, uint32_t s),
       (cb, b, o, n, s))
ACTION(CmdDrawIndexedIndirect,
       (VkCommandBuffer cb, VkBuffer b, VkDeviceSize o, uint32_t n, uint32_t s), (cb, b, o, n, s))
ACTION(CmdDrawIndirectCount,
       (VkCommandBuffer cb, VkBuffer b, VkDeviceSize o, VkBuffer cbuf, VkDeviceSize co,
        uint32_t n, uint32_t s),
       (cb, b, o, cbuf, co, n, s))
ACTION(CmdDrawIndexedIndirectCount,
       (VkCommandBuffer cb, VkBuffer b, VkDeviceSize o, VkBuffer cbuf, VkDeviceSize co,
        uint32_t n, uint32_t s),
       (cb, b, o, cbuf, co, n, s))
ACTION(CmdDispatch, (VkCommandBuffer cb, uint32_t x, uint32_t y, uint32_t z), (cb, x, y, z))
ACTION(CmdDispatchIndirect, (VkCommandBuffer cb, VkBuffer b, VkDeviceSize o), (cb, b, o))
ACTION(CmdDispatchBase,
       (VkCommandBuffer cb, uint32_t bx, uint32_t by, uint32_t bz, uint32_t x, uint32_t y,
        uint32_t z),
       (cb, bx, by, bz, x, y, z))
ACTION(CmdCopyBuffer,
       (VkCommandBuffer cb, VkBuffer s, VkBuffer d, uint32_t n, const VkBufferCopy *r),
       (cb, s, d, n, r))
ACTION(CmdCopyImage,
       (VkCommandBuffer cb, VkImage s, VkImageLayout sl, VkImage d, VkImageLayout dl, uint32_t n,
        const VkImageCopy *r),
       (cb, s, sl, d, dl, n, r))
ACTION(CmdBlitImage,
       (VkCommandBuffer cb, VkImage s, VkImageLayout sl, VkImage d, VkImageLayout dl, uint32_t n,
        const VkImageBlit *r, VkFilter f),
       (cb, s, sl, d, dl, n, r, f))
ACTION(CmdCopyBufferToImage,
       (VkCommandBuffer cb, VkBuffer s, VkImage d, VkImageLayout dl, uint32_t n,
        const VkBufferImageCopy *r),
       (cb, s, d, dl, n, r))
ACTION(CmdCopyImageToBuffer,
       (VkCommandBuffer cb, VkImage s, VkImageLayout sl, VkBuffer d, uint32_t n,
        const VkBufferImageCopy *r),
       (cb, s, sl, d, n, r))
ACTION(CmdUpdateBuffer,
       (VkCommandBuffer cb, VkBuffer d, VkDeviceSize o, VkDeviceSize n, const void *p),
       (cb, d, o, n, p))
ACTION(CmdFillBuffer,
       (VkCommandBuffer cb, VkBuffer d, VkDeviceSize o, VkDeviceSize n, uint32_t v),
       (cb, d, o, n, v))
ACTION(CmdClearColorImage,
       (VkCommandBuffer cb, VkImage i, VkImageLayout l, const VkClearColorValue *v, uint32_t n,
        const VkImageSubresourceRange *r),
       (cb, i, l, v, n, r))
ACTION(CmdClearDepthStencilImage,
       (VkCommandBuffer cb, VkImage i, VkImageLayout l, const VkClearDepthStencilValue *v,
        uint32_t n, const VkImageSubresourceRange *r),
       (cb, i, l, v, n, r))
ACTION(CmdClearAttachments,
       (VkCommandBuffer cb, uint32_t na, const VkClearAttachment *a, uint32_t nr,
        const VkClearRect *r),
       (cb, na, a, nr, r))
ACTION(CmdResolveImage,
       (VkCommandBuffer cb, VkImage s, VkImageLayout sl, VkImage d, VkImageLayout dl, uint32_t n,
        const VkImageResolve *r),
       (cb, s, sl, d, dl, n, r))
ACTION(CmdCopyBuffer2, (VkCommandBuffer cb, const VkCopyBufferInfo2 *i), (cb, i))
ACTION(CmdCopyImage2, (VkCommandBuffer cb, const VkCopyImageInfo2 *i), (cb, i))
ACTION(CmdBlitImage2, (VkCommandBuffer cb, const VkBlitImageInfo2 *i), (cb, i))
ACTION(CmdCopyBufferToImage2, (VkCommandBuffer cb, const VkCopyBufferToImageInfo2 *i), (cb, i))
ACTION(CmdCopyImageToBuffer2, (VkCommandBuffer cb, const VkCopyImageToBufferInfo2 *i), (cb, i))
ACTION(CmdResolveImage2, (VkCommandBuffer cb, const VkResolveImageInfo2 *i), (cb, i))
ACTION(CmdPipelineBarrier,
       (VkCommandBuffer cb, VkPipelineStageFlags s, VkPipelineStageFlags d,
        VkDependencyFlags f, uint32_t nm, const VkMemoryBarrier *m, uint32_t nb,
        const VkBufferMemoryBarrier *b, uint32_t ni, const VkImageMemoryBarrier *i),
       (cb, s, d, f, nm, m, nb, b, ni, i))
ACTION(CmdPipelineBarrier2, (VkCommandBuffer cb, const VkDependencyInfo *i), (cb, i))
ACTION(CmdPipelineBarrier2KHR, (VkCommandBuffer cb, const VkDependencyInfo *i), (cb, i))
ACTION(CmdWaitEvents,
       (VkCommandBuffer cb, uint32_t ne, const VkEvent *e, VkPipelineStageFlags s,
        VkPipelineStageFlags d, uint32_t nm, const VkMemoryBarrier *m, uint32_t nb,
        const VkBufferMemoryBarrier *b, uint32_t ni, const VkImageMemoryBarrier *i),
       (cb, ne, e, s, d, nm, m, nb, b, ni, i))
ACTION(CmdWaitEvents2,
       (VkCommandBuffer cb, uint32_t ne, const VkEvent *e, const VkDependencyInfo *i),
       (cb, ne, e, i))
ACTION(CmdSetEvent, (VkCommandBuffer cb, VkEvent e, VkPipelineStageFlags s), (cb, e, s))
ACTION(CmdSetEvent2, (VkCommandBuffer cb, VkEvent e, const VkDependencyInfo *i), (cb, e, i))
ACTION(CmdResetEvent, (VkCommandBuffer cb, VkEvent e, VkPipelineStageFlags s), (cb, e, s))
ACTION(CmdResetEvent2, (VkCommandBuffer cb, VkEvent e, VkPipelineStageFlags2 s), (cb, e, s))
ACTION(CmdBeginQuery, (VkCommandBuffer cb, VkQueryPool p, uint32_t q, VkQueryControlFlags f),
       (cb, p, q, f))
ACTION(CmdEndQuery, (VkCommandBuffer cb, VkQueryPool p, uint32_t q), (cb, p, q))
ACTION(CmdWriteTimestamp,
       (VkCommandBuffer cb, VkPipelineStageFlagBits s, VkQueryPool p, uint32_t q),
       (cb, s, p, q))
ACTION(CmdWriteTimestamp2,
       (VkCommandBuffer cb, VkPipelineStageFlags2 s, VkQueryPool p, uint32_t q), (cb, s, p, q))
ACTION(CmdResetQueryPool, (VkCommandBuffer cb, VkQueryPool p, uint32_t f, uint32_t n),
       (cb, p, f, n))
ACTION(CmdCopyQueryPoolResults,
       (VkCommandBuffer cb, VkQueryPool p, uint32_t f, uint32_t n, VkBuffer b, VkDeviceSize o,
        VkDeviceSize s, VkQueryResultFlags fl),
       (cb, p, f, n, b, o, s, fl))

/* ---- render pass instances ---------------------------------------------- */

static layer_device *begin_render_pass(VkCommandBuffer cb, VkRenderPass pass, gz_vk_cmdbuf **c)
{
    layer_device *dev = gz_layer_cmdbuf(cb, c);
    if (*c)
        gz_vk_cmdbuf_render_pass_begin(*c, pass);
    return dev;
}

VKAPI_ATTR void VKAPI_CALL gz_hook_CmdBeginRenderPass(VkCommandBuffer cb,
                                                      const VkRenderPassBeginInfo *info,
                                                      VkSubpassContents contents)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = begin_render_pass(cb, info->renderPass, &c);
    dev->fns.CmdBeginRenderPass(cb, info, contents);
    if (c)
        gz_vk_cmdbuf_render_pass_begun(c, info->renderPass);
}

#define BEGIN_RENDER_PASS2(name)                                                                   \
    VKAPI_ATTR void VKAPI_CALL gz_hook_##name(VkCommandBuffer cb,                                  \
                                              const VkRenderPassBeginInfo *info,                   \
                                              const VkSubpassBeginInfo *sub)                       \
    {                                                                                              \
        gz_vk_cmdbuf *c;                                                                           \
        layer_device *dev = begin_render_pass(cb, info->renderPass, &c);                           \
        dev->fns.name(cb, info, sub);                                                              \
        if (c)                                                                                     \
            gz_vk_cmdbuf_render_pass_begun(c, info->renderPass);                                   \
    }
BEGIN_RENDER_PASS2(CmdBeginRenderPass2)
BEGIN_RENDER_PASS2(CmdBeginRenderPass2KHR)

VKAPI_ATTR void VKAPI_CALL gz_hook_CmdNextSubpass(VkCommandBuffer cb, VkSubpassContents contents)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    dev->fns.CmdNextSubpass(cb, contents);
    if (c)
        gz_vk_cmdbuf_next_subpass(c);
}

#define NEXT_SUBPASS2(name)                                                                        \
    VKAPI_ATTR void VKAPI_CALL gz_hook_##name(VkCommandBuffer cb, const VkSubpassBeginInfo *b,     \
                                              const VkSubpassEndInfo *e)                           \
    {                                                                                              \
        gz_vk_cmdbuf *c;                                                   \
        layer_device *dev = gz_layer_cmdbuf(cb, &c);                                                   \
        dev->fns.name(cb, b, e);                                                                   \
        if (c)                                                                                     \
            gz_vk_cmdbuf_next_subpass(c);                                                          \
    }
NEXT_SUBPASS2(CmdNextSubpass2)
NEXT_SUBPASS2(CmdNextSubpass2KHR)

VKAPI_ATTR void VKAPI_CALL gz_hook_CmdEndRenderPass(VkCommandBuffer cb)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    dev->fns.CmdEndRenderPass(cb);
    if (c)
        gz_vk_cmdbuf_render_pass_end(c);
}

#define END_RENDER_PASS2(name)                                                                     \
    VKAPI_ATTR void VKAPI_CALL gz_hook_##name(VkCommandBuffer cb, const VkSubpassEndInfo *e)      \
    {                                                                                              \
        gz_vk_cmdbuf *c;                                                   \
        layer_device *dev = gz_layer_cmdbuf(cb, &c);                                                   \
        dev->fns.name(cb, e);                                                                      \
        if (c)                                                                                     \
            gz_vk_cmdbuf_render_pass_end(c);                                                       \
    }
END_RENDER_PASS2(CmdEndRenderPass2)
END_RENDER_PASS2(CmdEndRenderPass2KHR)

#define BEGIN_RENDERING(name)                                                                      \
    VKAPI_ATTR void VKAPI_CALL gz_hook_##name(VkCommandBuffer cb, const VkRenderingInfo *info)     \
    {                                                                                              \
        gz_vk_cmdbuf *c;                                                                           \
        layer_device *dev = gz_layer_cmdbuf(cb, &c);                                               \
        if (c)                                                                                     \
            gz_vk_cmdbuf_rendering_begin(c, info);                                                 \
        dev->fns.name(cb, info);                                                                   \
        if (c)                                                                                     \
            gz_vk_cmdbuf_rendering_begun(c, info);                                                 \
    }
BEGIN_RENDERING(CmdBeginRendering)
BEGIN_RENDERING(CmdBeginRenderingKHR)

#define END_RENDERING(name)                                                                        \
    VKAPI_ATTR void VKAPI_CALL gz_hook_##name(VkCommandBuffer cb)                                  \
    {                                                                                              \
        gz_vk_cmdbuf *c;                                                   \
        layer_device *dev = gz_layer_cmdbuf(cb, &c);                                                   \
        dev->fns.name(cb);                                                                         \
        if (c)                                                                                     \
            gz_vk_cmdbuf_rendering_end(c);                                                         \
    }
END_RENDERING(CmdEndRendering)
END_RENDERING(CmdEndRenderingKHR)

/* ---- render passes, for the views of their subpasses --------------------- */

static void add_render_pass(layer_device *dev, VkRenderPass pass, uint32_t n,
                            const uint32_t *masks)
{
    if (dev->ctx && pass)
        gz_vk_render_pass_add(dev->ctx, pass, masks, n);
}

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_CreateRenderPass(VkDevice device,
                                                        const VkRenderPassCreateInfo *info,
                                                        const VkAllocationCallbacks *alloc,
                                                        VkRenderPass *pass)
{
    layer_device *dev = gz_layer_device(device);
    VkResult r = dev->fns.CreateRenderPass(device, info, alloc, pass);
    if (r != VK_SUCCESS)
        return r;
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext) {
        if (s->sType != VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO)
            continue;
        const VkRenderPassMultiviewCreateInfo *mv = (const VkRenderPassMultiviewCreateInfo *)s;
        if (mv->subpassCount == info->subpassCount)
            add_render_pass(dev, *pass, mv->subpassCount, mv->pViewMasks);
    }
    return r;
}

#define CREATE_RENDER_PASS2(name)                                                                  \
    VKAPI_ATTR VkResult VKAPI_CALL gz_hook_##name(VkDevice device,                                 \
                                                  const VkRenderPassCreateInfo2 *info,             \
                                                  const VkAllocationCallbacks *alloc,              \
                                                  VkRenderPass *pass)                              \
    {                                                                                              \
        layer_device *dev = gz_layer_device(device);                                               \
        VkResult r = dev->fns.name(device, info, alloc, pass);                                     \
        if (r == VK_SUCCESS)                                                                       \
            create_render_pass2(dev, info, *pass);                                                 \
        return r;                                                                                  \
    }

static void create_render_pass2(layer_device *dev, const VkRenderPassCreateInfo2 *info,
                                VkRenderPass pass)
{
    uint32_t stack[16];
    uint32_t n = info->subpassCount;
    uint32_t *masks = n <= 16 ? stack : malloc(n * sizeof *masks);
    if (!masks)
        return;
    for (uint32_t i = 0; i < n; i++)
        masks[i] = info->pSubpasses[i].viewMask;
    add_render_pass(dev, pass, n, masks);
    if (masks != stack)
        free(masks);
}
CREATE_RENDER_PASS2(CreateRenderPass2)
CREATE_RENDER_PASS2(CreateRenderPass2KHR)

VKAPI_ATTR void VKAPI_CALL gz_hook_DestroyRenderPass(VkDevice device, VkRenderPass pass,
                                                     const VkAllocationCallbacks *alloc)
{
    layer_device *dev = gz_layer_device(device);
    gz_vk_render_pass_remove(pass);
    dev->fns.DestroyRenderPass(device, pass, alloc);
}
