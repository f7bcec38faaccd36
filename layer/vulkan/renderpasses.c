/* Render pass instances, and the objects that describe them: render passes
 * (the views of their subpasses for multiview, their attachments' formats),
 * image views (their formats), framebuffers and pipelines (their names).
 * The calls are passed down as they are; the context learns where a
 * timestamp may go and what the zones are called. */
#include <stdlib.h>

#include "gz_layer.h"

static layer_device *begin_render_pass(VkCommandBuffer cb, const VkRenderPassBeginInfo *info,
                                       gz_vk_cmdbuf **c)
{
    layer_device *dev = gz_layer_cmdbuf(cb, c);
    if (*c)
        gz_vk_cmdbuf_render_pass_begin(*c, info);
    return dev;
}

VKAPI_ATTR void VKAPI_CALL gz_hook_CmdBeginRenderPass(VkCommandBuffer cb,
                                                      const VkRenderPassBeginInfo *info,
                                                      VkSubpassContents contents)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = begin_render_pass(cb, info, &c);
    dev->fns.CmdBeginRenderPass(cb, info, contents);
    if (c)
        gz_vk_cmdbuf_render_pass_begun(c, info->renderPass,
                                       contents == VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
}

#define BEGIN_RENDER_PASS2(name)                                                                   \
    VKAPI_ATTR void VKAPI_CALL gz_hook_##name(VkCommandBuffer cb,                                  \
                                              const VkRenderPassBeginInfo *info,                   \
                                              const VkSubpassBeginInfo *sub)                       \
    {                                                                                              \
        gz_vk_cmdbuf *c;                                                                           \
        layer_device *dev = begin_render_pass(cb, info, &c);                                       \
        dev->fns.name(cb, info, sub);                                                              \
        if (c)                                                                                     \
            gz_vk_cmdbuf_render_pass_begun(                                                        \
                c, info->renderPass,                                                               \
                sub && sub->contents == VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);            \
    }
BEGIN_RENDER_PASS2(CmdBeginRenderPass2)
BEGIN_RENDER_PASS2(CmdBeginRenderPass2KHR)

VKAPI_ATTR void VKAPI_CALL gz_hook_CmdNextSubpass(VkCommandBuffer cb, VkSubpassContents contents)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    if (c)
        gz_vk_cmdbuf_subpass_ending(c);
    dev->fns.CmdNextSubpass(cb, contents);
    if (c)
        gz_vk_cmdbuf_next_subpass(c, contents == VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
}

#define NEXT_SUBPASS2(name)                                                                        \
    VKAPI_ATTR void VKAPI_CALL gz_hook_##name(VkCommandBuffer cb, const VkSubpassBeginInfo *b,     \
                                              const VkSubpassEndInfo *e)                           \
    {                                                                                              \
        gz_vk_cmdbuf *c;                                                                           \
        layer_device *dev = gz_layer_cmdbuf(cb, &c);                                               \
        if (c)                                                                                     \
            gz_vk_cmdbuf_subpass_ending(c);                                                        \
        dev->fns.name(cb, b, e);                                                                   \
        if (c)                                                                                     \
            gz_vk_cmdbuf_next_subpass(                                                             \
                c, b && b->contents == VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);             \
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
        gz_vk_cmdbuf *c;                                                                           \
        layer_device *dev = gz_layer_cmdbuf(cb, &c);                                               \
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
        gz_vk_cmdbuf *c;                                                                           \
        layer_device *dev = gz_layer_cmdbuf(cb, &c);                                               \
        if (c)                                                                                     \
            gz_vk_cmdbuf_rendering_ending(c);                                                      \
        dev->fns.name(cb);                                                                         \
        if (c)                                                                                     \
            gz_vk_cmdbuf_rendering_end(c);                                                         \
    }
END_RENDERING(CmdEndRendering)
END_RENDERING(CmdEndRenderingKHR)

/* ---- the objects that describe them ----------------------------------- */

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_CreateRenderPass(VkDevice device,
                                                        const VkRenderPassCreateInfo *info,
                                                        const VkAllocationCallbacks *alloc,
                                                        VkRenderPass *pass)
{
    layer_device *dev = gz_layer_device(device);
    VkResult r = dev->fns.CreateRenderPass(device, info, alloc, pass);
    if (r != VK_SUCCESS || !dev->ctx)
        return r;
    const uint32_t *masks = NULL;
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext) {
        if (s->sType != VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO)
            continue;
        const VkRenderPassMultiviewCreateInfo *mv = (const VkRenderPassMultiviewCreateInfo *)s;
        if (mv->subpassCount == info->subpassCount)
            masks = mv->pViewMasks;
    }
    VkFormat stack[GZ_VK_DESC_FORMATS];
    uint32_t n = info->attachmentCount < GZ_VK_DESC_FORMATS ? info->attachmentCount
                                                            : GZ_VK_DESC_FORMATS;
    for (uint32_t i = 0; i < n; i++)
        stack[i] = info->pAttachments[i].format;
    gz_vk_render_pass_add(dev->ctx, *pass, masks, masks ? info->subpassCount : 0, stack,
                          info->attachmentCount);
    return r;
}

static void create_render_pass2(layer_device *dev, const VkRenderPassCreateInfo2 *info,
                                VkRenderPass pass)
{
    uint32_t stack[16];
    uint32_t n = info->subpassCount;
    uint32_t *masks = n <= 16 ? stack : malloc(n * sizeof *masks);
    for (uint32_t i = 0; masks && i < n; i++)
        masks[i] = info->pSubpasses[i].viewMask;
    VkFormat formats[GZ_VK_DESC_FORMATS];
    uint32_t nf = info->attachmentCount < GZ_VK_DESC_FORMATS ? info->attachmentCount
                                                             : GZ_VK_DESC_FORMATS;
    for (uint32_t i = 0; i < nf; i++)
        formats[i] = info->pAttachments[i].format;
    gz_vk_render_pass_add(dev->ctx, pass, masks, masks ? n : 0, formats, info->attachmentCount);
    if (masks != stack)
        free(masks);
}

#define CREATE_RENDER_PASS2(name)                                                                  \
    VKAPI_ATTR VkResult VKAPI_CALL gz_hook_##name(VkDevice device,                                 \
                                                  const VkRenderPassCreateInfo2 *info,             \
                                                  const VkAllocationCallbacks *alloc,              \
                                                  VkRenderPass *pass)                              \
    {                                                                                              \
        layer_device *dev = gz_layer_device(device);                                               \
        VkResult r = dev->fns.name(device, info, alloc, pass);                                     \
        if (r == VK_SUCCESS && dev->ctx)                                                           \
            create_render_pass2(dev, info, *pass);                                                 \
        return r;                                                                                  \
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

VKAPI_ATTR VkResult VKAPI_CALL gz_hook_CreateImageView(VkDevice device,
                                                       const VkImageViewCreateInfo *info,
                                                       const VkAllocationCallbacks *alloc,
                                                       VkImageView *view)
{
    layer_device *dev = gz_layer_device(device);
    VkResult r = dev->fns.CreateImageView(device, info, alloc, view);
    if (r == VK_SUCCESS && dev->ctx)
        gz_vk_image_view_add(dev->ctx, *view, info->format);
    return r;
}

VKAPI_ATTR void VKAPI_CALL gz_hook_DestroyImageView(VkDevice device, VkImageView view,
                                                    const VkAllocationCallbacks *alloc)
{
    layer_device *dev = gz_layer_device(device);
    gz_vk_object_gone(VK_OBJECT_TYPE_IMAGE_VIEW, (uint64_t)(uintptr_t)view);
    dev->fns.DestroyImageView(device, view, alloc);
}

VKAPI_ATTR void VKAPI_CALL gz_hook_DestroyFramebuffer(VkDevice device, VkFramebuffer fb,
                                                      const VkAllocationCallbacks *alloc)
{
    layer_device *dev = gz_layer_device(device);
    gz_vk_object_gone(VK_OBJECT_TYPE_FRAMEBUFFER, (uint64_t)(uintptr_t)fb);
    dev->fns.DestroyFramebuffer(device, fb, alloc);
}

VKAPI_ATTR void VKAPI_CALL gz_hook_DestroyPipeline(VkDevice device, VkPipeline pipeline,
                                                   const VkAllocationCallbacks *alloc)
{
    layer_device *dev = gz_layer_device(device);
    gz_vk_object_gone(VK_OBJECT_TYPE_PIPELINE, (uint64_t)(uintptr_t)pipeline);
    dev->fns.DestroyPipeline(device, pipeline, alloc);
}
