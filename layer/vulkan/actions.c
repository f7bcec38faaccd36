/* Action and synchronization commands: each is passed down as it is, after
 * the context has had its say. A command buffer's begin timestamp goes just
 * before its first action; at the passes and commands levels a draw,
 * dispatch, copy, clear or resolve is described from its arguments for
 * its zone (gz_vk_cmdbuf_command). */
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

/* The same for a command that gets a zone of its own where the level asks
 * for it: describe fills gz_vk_desc d from the arguments. */
#define COMMAND(name, params, args, describe)                                                      \
    VKAPI_ATTR void VKAPI_CALL gz_hook_##name params                                              \
    {                                                                                              \
        gz_vk_cmdbuf *c;                                                                           \
        layer_device *dev = gz_layer_cmdbuf(cb, &c);                                               \
        if (c && gz_vk_cmdbuf_describes(c)) {                                                      \
            gz_vk_desc d = {0};                                                                    \
            describe;                                                                              \
            gz_vk_cmdbuf_command(c, &d);                                                           \
        } else if (c) {                                                                            \
            gz_vk_cmdbuf_action(c);                                                                \
        }                                                                                          \
        dev->fns.name args;                                                                        \
    }

#define DESC(t, ...) (d = (gz_vk_desc){.type = (t), __VA_ARGS__})

static void buffer_bytes(gz_vk_desc *d, uint64_t bytes)
{
    d->a = (uint32_t)bytes;
    d->b = (uint32_t)(bytes >> 32);
}

static uint64_t copy_bytes(uint32_t n, const VkBufferCopy *r)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += r[i].size;
    return sum;
}

static uint64_t copy2_bytes(uint32_t n, const VkBufferCopy2 *r)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += r[i].size;
    return sum;
}

COMMAND(CmdDraw, (VkCommandBuffer cb, uint32_t v, uint32_t i, uint32_t fv, uint32_t fi),
        (cb, v, i, fv, fi), DESC(GZ_VK_DESC_DRAW, .a = v, .b = i))
COMMAND(CmdDrawIndexed,
        (VkCommandBuffer cb, uint32_t n, uint32_t i, uint32_t fi, int32_t vo, uint32_t fin),
        (cb, n, i, fi, vo, fin), DESC(GZ_VK_DESC_DRAW_INDEXED, .a = n, .b = i))
COMMAND(CmdDrawIndirect, (VkCommandBuffer cb, VkBuffer b, VkDeviceSize o, uint32_t n, uint32_t s),
        (cb, b, o, n, s), DESC(GZ_VK_DESC_DRAW_INDIRECT, .a = n))
COMMAND(CmdDrawIndexedIndirect,
        (VkCommandBuffer cb, VkBuffer b, VkDeviceSize o, uint32_t n, uint32_t s), (cb, b, o, n, s),
        DESC(GZ_VK_DESC_DRAW_INDEXED_INDIRECT, .a = n))
COMMAND(CmdDrawIndirectCount,
        (VkCommandBuffer cb, VkBuffer b, VkDeviceSize o, VkBuffer cbuf, VkDeviceSize co,
         uint32_t n, uint32_t s),
        (cb, b, o, cbuf, co, n, s), DESC(GZ_VK_DESC_DRAW_INDIRECT_COUNT, .a = n))
COMMAND(CmdDrawIndexedIndirectCount,
        (VkCommandBuffer cb, VkBuffer b, VkDeviceSize o, VkBuffer cbuf, VkDeviceSize co,
         uint32_t n, uint32_t s),
        (cb, b, o, cbuf, co, n, s), DESC(GZ_VK_DESC_DRAW_INDEXED_INDIRECT_COUNT, .a = n))
COMMAND(CmdDispatch, (VkCommandBuffer cb, uint32_t x, uint32_t y, uint32_t z), (cb, x, y, z),
        DESC(GZ_VK_DESC_DISPATCH, .a = x, .b = y, .c = z))
COMMAND(CmdDispatchIndirect, (VkCommandBuffer cb, VkBuffer b, VkDeviceSize o), (cb, b, o),
        DESC(GZ_VK_DESC_DISPATCH_INDIRECT))
COMMAND(CmdDispatchBase,
        (VkCommandBuffer cb, uint32_t bx, uint32_t by, uint32_t bz, uint32_t x, uint32_t y,
         uint32_t z),
        (cb, bx, by, bz, x, y, z), DESC(GZ_VK_DESC_DISPATCH, .a = x, .b = y, .c = z))
COMMAND(CmdCopyBuffer,
        (VkCommandBuffer cb, VkBuffer s, VkBuffer dst, uint32_t n, const VkBufferCopy *r),
        (cb, s, dst, n, r), (DESC(GZ_VK_DESC_COPY_BUFFER), buffer_bytes(&d, copy_bytes(n, r))))
COMMAND(CmdCopyImage,
        (VkCommandBuffer cb, VkImage s, VkImageLayout sl, VkImage dst, VkImageLayout dl,
         uint32_t n, const VkImageCopy *r),
        (cb, s, sl, dst, dl, n, r),
        DESC(GZ_VK_DESC_COPY_IMAGE, .a = n ? r[0].extent.width : 0, .b = n ? r[0].extent.height : 0))
COMMAND(CmdBlitImage,
        (VkCommandBuffer cb, VkImage s, VkImageLayout sl, VkImage dst, VkImageLayout dl,
         uint32_t n, const VkImageBlit *r, VkFilter f),
        (cb, s, sl, dst, dl, n, r, f),
        DESC(GZ_VK_DESC_BLIT, .a = n ? (uint32_t)(r[0].srcOffsets[1].x - r[0].srcOffsets[0].x) : 0,
             .b = n ? (uint32_t)(r[0].srcOffsets[1].y - r[0].srcOffsets[0].y) : 0,
             .c = n ? (uint32_t)(r[0].dstOffsets[1].x - r[0].dstOffsets[0].x) : 0,
             .d = n ? (uint32_t)(r[0].dstOffsets[1].y - r[0].dstOffsets[0].y) : 0))
COMMAND(CmdCopyBufferToImage,
        (VkCommandBuffer cb, VkBuffer s, VkImage dst, VkImageLayout dl, uint32_t n,
         const VkBufferImageCopy *r),
        (cb, s, dst, dl, n, r),
        DESC(GZ_VK_DESC_COPY_BUFFER_IMAGE, .a = n ? r[0].imageExtent.width : 0,
             .b = n ? r[0].imageExtent.height : 0))
COMMAND(CmdCopyImageToBuffer,
        (VkCommandBuffer cb, VkImage s, VkImageLayout sl, VkBuffer dst, uint32_t n,
         const VkBufferImageCopy *r),
        (cb, s, sl, dst, n, r),
        DESC(GZ_VK_DESC_COPY_IMAGE_BUFFER, .a = n ? r[0].imageExtent.width : 0,
             .b = n ? r[0].imageExtent.height : 0))
COMMAND(CmdUpdateBuffer,
        (VkCommandBuffer cb, VkBuffer dst, VkDeviceSize o, VkDeviceSize n, const void *p),
        (cb, dst, o, n, p), DESC(GZ_VK_DESC_UPDATE, .a = (uint32_t)n))
COMMAND(CmdFillBuffer,
        (VkCommandBuffer cb, VkBuffer dst, VkDeviceSize o, VkDeviceSize n, uint32_t v),
        (cb, dst, o, n, v), (DESC(GZ_VK_DESC_FILL), buffer_bytes(&d, n)))
COMMAND(CmdClearColorImage,
        (VkCommandBuffer cb, VkImage i, VkImageLayout l, const VkClearColorValue *v, uint32_t n,
         const VkImageSubresourceRange *r),
        (cb, i, l, v, n, r), DESC(GZ_VK_DESC_CLEAR_COLOR))
COMMAND(CmdClearDepthStencilImage,
        (VkCommandBuffer cb, VkImage i, VkImageLayout l, const VkClearDepthStencilValue *v,
         uint32_t n, const VkImageSubresourceRange *r),
        (cb, i, l, v, n, r), DESC(GZ_VK_DESC_CLEAR_DEPTH))
COMMAND(CmdClearAttachments,
        (VkCommandBuffer cb, uint32_t na, const VkClearAttachment *a, uint32_t nr,
         const VkClearRect *r),
        (cb, na, a, nr, r), DESC(GZ_VK_DESC_CLEAR_ATTACHMENTS, .a = na))
COMMAND(CmdResolveImage,
        (VkCommandBuffer cb, VkImage s, VkImageLayout sl, VkImage dst, VkImageLayout dl,
         uint32_t n, const VkImageResolve *r),
        (cb, s, sl, dst, dl, n, r),
        DESC(GZ_VK_DESC_RESOLVE, .a = n ? r[0].extent.width : 0, .b = n ? r[0].extent.height : 0))
COMMAND(CmdCopyBuffer2, (VkCommandBuffer cb, const VkCopyBufferInfo2 *i), (cb, i),
        (DESC(GZ_VK_DESC_COPY_BUFFER), buffer_bytes(&d, copy2_bytes(i->regionCount, i->pRegions))))
COMMAND(CmdCopyImage2, (VkCommandBuffer cb, const VkCopyImageInfo2 *i), (cb, i),
        DESC(GZ_VK_DESC_COPY_IMAGE, .a = i->regionCount ? i->pRegions[0].extent.width : 0,
             .b = i->regionCount ? i->pRegions[0].extent.height : 0))
COMMAND(CmdBlitImage2, (VkCommandBuffer cb, const VkBlitImageInfo2 *i), (cb, i),
        DESC(GZ_VK_DESC_BLIT,
             .a = i->regionCount ? (uint32_t)(i->pRegions[0].srcOffsets[1].x -
                                              i->pRegions[0].srcOffsets[0].x)
                                 : 0,
             .b = i->regionCount ? (uint32_t)(i->pRegions[0].srcOffsets[1].y -
                                              i->pRegions[0].srcOffsets[0].y)
                                 : 0,
             .c = i->regionCount ? (uint32_t)(i->pRegions[0].dstOffsets[1].x -
                                              i->pRegions[0].dstOffsets[0].x)
                                 : 0,
             .d = i->regionCount ? (uint32_t)(i->pRegions[0].dstOffsets[1].y -
                                              i->pRegions[0].dstOffsets[0].y)
                                 : 0))
COMMAND(CmdCopyBufferToImage2, (VkCommandBuffer cb, const VkCopyBufferToImageInfo2 *i), (cb, i),
        DESC(GZ_VK_DESC_COPY_BUFFER_IMAGE,
             .a = i->regionCount ? i->pRegions[0].imageExtent.width : 0,
             .b = i->regionCount ? i->pRegions[0].imageExtent.height : 0))
COMMAND(CmdCopyImageToBuffer2, (VkCommandBuffer cb, const VkCopyImageToBufferInfo2 *i), (cb, i),
        DESC(GZ_VK_DESC_COPY_IMAGE_BUFFER,
             .a = i->regionCount ? i->pRegions[0].imageExtent.width : 0,
             .b = i->regionCount ? i->pRegions[0].imageExtent.height : 0))
COMMAND(CmdResolveImage2, (VkCommandBuffer cb, const VkResolveImageInfo2 *i), (cb, i),
        DESC(GZ_VK_DESC_RESOLVE, .a = i->regionCount ? i->pRegions[0].extent.width : 0,
             .b = i->regionCount ? i->pRegions[0].extent.height : 0))

ACTION(CmdPipelineBarrier,
       (VkCommandBuffer cb, VkPipelineStageFlags s, VkPipelineStageFlags dst,
        VkDependencyFlags f, uint32_t nm, const VkMemoryBarrier *m, uint32_t nb,
        const VkBufferMemoryBarrier *b, uint32_t ni, const VkImageMemoryBarrier *i),
       (cb, s, dst, f, nm, m, nb, b, ni, i))
ACTION(CmdPipelineBarrier2, (VkCommandBuffer cb, const VkDependencyInfo *i), (cb, i))
ACTION(CmdPipelineBarrier2KHR, (VkCommandBuffer cb, const VkDependencyInfo *i), (cb, i))
ACTION(CmdWaitEvents,
       (VkCommandBuffer cb, uint32_t ne, const VkEvent *e, VkPipelineStageFlags s,
        VkPipelineStageFlags dst, uint32_t nm, const VkMemoryBarrier *m, uint32_t nb,
        const VkBufferMemoryBarrier *b, uint32_t ni, const VkImageMemoryBarrier *i),
       (cb, ne, e, s, dst, nm, m, nb, b, ni, i))
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

VKAPI_ATTR void VKAPI_CALL gz_hook_CmdBindPipeline(VkCommandBuffer cb, VkPipelineBindPoint point,
                                                   VkPipeline pipeline)
{
    gz_vk_cmdbuf *c;
    layer_device *dev = gz_layer_cmdbuf(cb, &c);
    if (c)
        gz_vk_cmdbuf_bind_pipeline(c, point, pipeline);
    dev->fns.CmdBindPipeline(cb, point, pipeline);
}
