/* Reading timestamps back. On the copy path (drivers whose host read waits
 * for the whole device to go idle even without VK_QUERY_RESULT_WAIT_BIT,
 * such as lavapipe, or GPUZONES_VK_READBACK=copy) results are copied on the
 * GPU (vkCmdCopyQueryPoolResults) into host-visible buffers of ours, and
 * reading them back is a memory read. Otherwise, and on transfer-only
 * queue families where copies are not allowed, the worker reads them with
 * vkGetQueryPoolResults, without WAIT and without any of our locks held. */
#include <string.h>

#include "gz_vk_internal.h"

bool gz_vk_hostbuf_create(gz_vk_device *dev, uint32_t entries, gz_vk_hostbuf *out)
{
    return gz_vk_hostbuf_create_on(&dev->info.fns, dev->info.device, &dev->info.memory, entries,
                                   out);
}

bool gz_vk_hostbuf_create_on(const gz_vk_fns *f, VkDevice d,
                             const VkPhysicalDeviceMemoryProperties *mp, uint32_t entries,
                             gz_vk_hostbuf *out)
{
    memset(out, 0, sizeof *out);
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = (VkDeviceSize)entries * GZ_VK_RESULT_SIZE,
                               .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    if (f->CreateBuffer(d, &info, NULL, &out->buffer) != VK_SUCCESS)
        return false;
    VkMemoryRequirements req;
    f->GetBufferMemoryRequirements(d, out->buffer, &req);
    /* Coherent, so the host sees the copies without flushes; cached if
     * there is such a type, since the host only reads it. */
    const VkMemoryPropertyFlags need =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
        VkMemoryPropertyFlags fl = mp->memoryTypes[i].propertyFlags;
        if (!(req.memoryTypeBits & (1u << i)) || (fl & need) != need)
            continue;
        if (type == UINT32_MAX || (fl & VK_MEMORY_PROPERTY_HOST_CACHED_BIT))
            type = i;
    }
    VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  .allocationSize = req.size,
                                  .memoryTypeIndex = type};
    if (type == UINT32_MAX || f->AllocateMemory(d, &alloc, NULL, &out->memory) != VK_SUCCESS)
        goto fail_buffer;
    void *map;
    if (f->BindBufferMemory(d, out->buffer, out->memory, 0) != VK_SUCCESS ||
        f->MapMemory(d, out->memory, 0, VK_WHOLE_SIZE, 0, &map) != VK_SUCCESS)
        goto fail_memory;
    out->results = map;
    out->entries = entries;
    memset(map, 0, (size_t)entries * GZ_VK_RESULT_SIZE);
    return true;

fail_memory:
    f->FreeMemory(d, out->memory, NULL);
fail_buffer:
    f->DestroyBuffer(d, out->buffer, NULL);
    memset(out, 0, sizeof *out);
    return false;
}

void gz_vk_hostbuf_destroy(gz_vk_device *dev, gz_vk_hostbuf *b)
{
    gz_vk_hostbuf_destroy_on(&dev->info.fns, dev->info.device, b);
}

void gz_vk_hostbuf_destroy_on(const gz_vk_fns *f, VkDevice d, gz_vk_hostbuf *b)
{
    if (!b->buffer)
        return;
    f->UnmapMemory(d, b->memory);
    f->DestroyBuffer(d, b->buffer, NULL);
    f->FreeMemory(d, b->memory, NULL);
    memset(b, 0, sizeof *b);
}

/* A value word no timestamp can hold (with fewer than 64 valid bits the
 * top bits are zero; a 64-bit counter reaches it after centuries). Drivers
 * may write a result's availability before its value (lavapipe's copy
 * does), so an entry counts as written only when its availability is set
 * and its value is no longer this: a zone is never made of a value the GPU
 * has not written for this execution. */
#define UNWRITTEN UINT64_MAX

void gz_vk_hostbuf_clear(gz_vk_hostbuf *b, uint32_t first, uint32_t count)
{
    /* Only our GPU copies write here, and none is pending for these
     * entries: plain stores are enough before the submission that reuses
     * them (queue submission orders host writes before the device's). */
    uint64_t *e = &b->results[2 * (size_t)first];
    for (uint32_t i = 0; i < count; i++) {
        e[2 * i] = UNWRITTEN;
        e[2 * i + 1] = 0;
    }
}

static bool entry_read(const uint64_t *e, uint64_t *value)
{
    if (!__atomic_load_n(&e[1], __ATOMIC_ACQUIRE))
        return false;
    uint64_t v = __atomic_load_n(&e[0], __ATOMIC_ACQUIRE);
    if (v == UNWRITTEN)
        return false;
    *value = v;
    return true;
}

bool gz_vk_hostbuf_ready(const gz_vk_hostbuf *b, uint32_t first, uint32_t count)
{
    uint64_t v;
    for (uint32_t i = 0; i < count; i++)
        if (!entry_read(&b->results[2 * (size_t)(first + i)], &v))
            return false;
    return true;
}

bool gz_vk_hostbuf_read(const gz_vk_hostbuf *b, uint32_t first, uint32_t count, uint64_t *values)
{
    for (uint32_t i = 0; i < count; i++)
        if (!entry_read(&b->results[2 * (size_t)(first + i)], &values[i]))
            return false;
    return true;
}

void gz_vk_cmd_copy_results(const gz_vk_fns *f, VkCommandBuffer cb, VkQueryPool pool,
                            uint32_t first_query, uint32_t count, const gz_vk_hostbuf *b,
                            uint32_t first_entry)
{
    /* The timestamps come from earlier commands of this queue: WAIT makes
     * the copy wait for them. */
    f->CmdCopyQueryPoolResults(cb, pool, first_query, count, b->buffer,
                               (VkDeviceSize)first_entry * GZ_VK_RESULT_SIZE, GZ_VK_RESULT_SIZE,
                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT |
                                   VK_QUERY_RESULT_WAIT_BIT);
}

void gz_vk_cmd_results_to_host(const gz_vk_fns *f, VkCommandBuffer cb)
{
    /* Makes the copies visible to the host once the submission has run. */
    VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    f->CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                          &to_host, 0, NULL, 0, NULL);
}

bool gz_vk_query_read(const gz_vk_fns *f, VkDevice d, VkQueryPool pool, uint32_t first,
                      uint32_t count, uint64_t *values, bool *lost)
{
    /* Queues that cannot copy (transfer-only families) are read on the
     * host, without WAIT: not ready is simply "later". Pairs of (value,
     * availability), read into values two at a time. */
    uint64_t pair[2 * 64];
    for (uint32_t done = 0; done < count;) {
        uint32_t n = count - done < 64 ? count - done : 64;
        VkResult r = f->GetQueryPoolResults(d, pool, first + done, n, sizeof pair, pair,
                                            GZ_VK_RESULT_SIZE,
                                            VK_QUERY_RESULT_64_BIT |
                                                VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
        if (r == VK_ERROR_DEVICE_LOST) {
            *lost = true;
            return false;
        }
        if (r != VK_SUCCESS && r != VK_NOT_READY)
            return false;
        for (uint32_t i = 0; i < n; i++) {
            if (!pair[2 * i + 1])
                return false;
            values[done + i] = pair[2 * i];
        }
        done += n;
    }
    return true;
}
