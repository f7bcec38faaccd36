/* The queue's own command buffers, put between the app's only where a
 * recording cannot time itself:
 * - slots: a timestamp between two of the app's command buffers, or at a
 *   batch's edge (the submit level; command buffers with no timestamps of
 *   their own, or none at one end; untracked ones). Each slot owns one query and one command buffer,
 *   recorded once, a block at a time, and used again once the batch that
 *   used it has been read back. It writes the timestamp and nothing that
 *   waits: on graphics and compute families it resets its query first, on
 *   transfer-only ones (no resets in command buffers there) the worker
 *   resets it on the host before its next use; under copy readback it
 *   copies its result to host memory after the timestamp.
 * - resets: the command buffer just before an execution of a recording
 *   that resets the queries that execution writes (its own and its
 *   secondaries'): before each one on devices without host query reset,
 *   and before a SIMULTANEOUS_USE primary's execution submitted while its
 *   previous one may still run (vk_uses.c). Recorded at the first
 *   submission that needs it. */
#include <stdlib.h>
#include <string.h>

#include "gz_vk_internal.h"

bool gz_vk_brackets_init(gz_vk_queue *q)
{
    const gz_vk_fns *f = &q->dev->info.fns;
    VkCommandPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .queueFamilyIndex = q->family,
    };
    return f->CreateCommandPool(q->dev->info.device, &info, NULL, &q->cmd_pool) == VK_SUCCESS;
}

void gz_vk_brackets_destroy(gz_vk_queue *q)
{
    gz_vk_device *dev = q->dev;
    gz_vk_slots *s = &q->slots;
    /* Destroying the pool frees its command buffers. */
    dev->info.fns.DestroyCommandPool(dev->info.device, q->cmd_pool, NULL);
    q->cmd_pool = VK_NULL_HANDLE;
    for (uint32_t i = 0; i < s->count; i += GZ_VK_CHUNK)
        gz_vk_chunks_give(dev, &(uint32_t){s->queries[i] / GZ_VK_CHUNK}, 1);
    free(s->queries);
    free(s->cbs);
    free(s->free);
    memset(s, 0, sizeof *s);
}

VkCommandBuffer gz_vk_own_cmdbuf_alloc(gz_vk_queue *q)
{
    gz_vk_device *dev = q->dev;
    VkCommandBufferAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = q->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VkCommandBuffer cb;
    if (dev->info.fns.AllocateCommandBuffers(dev->info.device, &alloc, &cb) != VK_SUCCESS)
        return VK_NULL_HANDLE;
    gz_vk_own_cmdbufs(dev, &cb, 1);
    return cb;
}

/* Records one slot's command buffer. */
static bool record_slot(gz_vk_queue *q, VkCommandBuffer cb, uint32_t query)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    VkQueryPool pool = gz_vk_query_pool(dev, query);
    uint32_t at = gz_vk_query_index(query);
    /* Simultaneous use: a slot is only submitted again once the batch that
     * used it was read back, but that need not mean the driver has retired
     * it yet. */
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
    if (f->BeginCommandBuffer(cb, &begin) != VK_SUCCESS)
        return false;
    bool can_copy = gz_vk_family_can_copy(dev, q->family);
    if (can_copy)
        f->CmdResetQueryPool(cb, pool, at, 1);
    f->CmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, at);
    if (q->readback == GZ_VK_READ_COPY) {
        gz_vk_cmd_copy_results(f, cb, pool, at, 1, gz_vk_query_results(dev, query), at);
        gz_vk_cmd_results_to_host(f, cb);
    }
    return f->EndCommandBuffer(cb) == VK_SUCCESS;
}

static bool grow(gz_vk_slots *s, uint32_t cap)
{
    uint32_t *queries = realloc(s->queries, cap * sizeof *queries);
    if (queries)
        s->queries = queries;
    VkCommandBuffer *cbs = realloc(s->cbs, cap * sizeof *cbs);
    if (cbs)
        s->cbs = cbs;
    uint32_t *fr = realloc(s->free, cap * sizeof *fr);
    if (fr)
        s->free = fr;
    if (!queries || !cbs || !fr)
        return false;
    s->cap = cap;
    return true;
}

/* A block of GZ_VK_SLOT_BLOCK more slots (under the lock). */
static bool add_block(gz_vk_queue *q)
{
    gz_vk_device *dev = q->dev;
    gz_vk_slots *s = &q->slots;
    if (s->count + GZ_VK_SLOT_BLOCK > GZ_VK_MAX_SLOTS ||
        (s->count + GZ_VK_SLOT_BLOCK > s->cap && !grow(s, s->cap ? 2 * s->cap : GZ_VK_SLOT_BLOCK)))
        return false;
    uint32_t chunks[GZ_VK_SLOT_BLOCK / GZ_VK_CHUNK], taken = 0;
    while (taken < GZ_VK_SLOT_BLOCK / GZ_VK_CHUNK && gz_vk_chunk_take(dev, &chunks[taken]))
        taken++;
    VkCommandBuffer cbs[GZ_VK_SLOT_BLOCK];
    VkCommandBufferAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = q->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = GZ_VK_SLOT_BLOCK,
    };
    if (taken < GZ_VK_SLOT_BLOCK / GZ_VK_CHUNK ||
        dev->info.fns.AllocateCommandBuffers(dev->info.device, &alloc, cbs) != VK_SUCCESS) {
        gz_vk_chunks_give(dev, chunks, taken);
        return false;
    }
    gz_vk_own_cmdbufs(dev, cbs, GZ_VK_SLOT_BLOCK);
    for (uint32_t i = 0; i < GZ_VK_SLOT_BLOCK; i++) {
        uint32_t query = chunks[i / GZ_VK_CHUNK] * GZ_VK_CHUNK + i % GZ_VK_CHUNK;
        if (!record_slot(q, cbs[i], query)) {
            dev->info.fns.FreeCommandBuffers(dev->info.device, q->cmd_pool, GZ_VK_SLOT_BLOCK,
                                             cbs);
            gz_vk_chunks_give(dev, chunks, taken);
            return false;
        }
    }
    /* Handed out lowest first. */
    for (uint32_t i = 0; i < GZ_VK_SLOT_BLOCK; i++) {
        uint32_t k = s->count + i;
        s->queries[k] = chunks[i / GZ_VK_CHUNK] * GZ_VK_CHUNK + i % GZ_VK_CHUNK;
        s->cbs[k] = cbs[i];
        s->free[s->nfree++] = s->count + GZ_VK_SLOT_BLOCK - 1 - i;
    }
    s->count += GZ_VK_SLOT_BLOCK;
    return true;
}

uint32_t gz_vk_slot_take(gz_vk_queue *q)
{
    gz_vk_slots *s = &q->slots;
    if (!s->nfree && !add_block(q))
        return GZ_VK_NO_SLOT;
    uint32_t slot = s->free[--s->nfree];
    /* Its last use was read back: its copy may be marked unwritten. */
    gz_vk_hostbuf *b = gz_vk_query_results(q->dev, s->queries[slot]);
    if (b->results)
        gz_vk_hostbuf_clear(b, gz_vk_query_index(s->queries[slot]), 1);
    return slot;
}

void gz_vk_slot_give(gz_vk_queue *q, uint32_t slot)
{
    gz_vk_device *dev = q->dev;
    gz_vk_slots *s = &q->slots;
    if (slot == GZ_VK_NO_SLOT)
        return;
    /* Transfer-only families cannot reset in the command buffer: the
     * slot's use has completed, so its query is reset here. */
    if (!gz_vk_family_can_copy(dev, q->family) && dev->info.host_query_reset &&
        !gz_vk_device_lost(dev))
        dev->info.fns.ResetQueryPool(dev->info.device, gz_vk_query_pool(dev, s->queries[slot]),
                                     gz_vk_query_index(s->queries[slot]), 1);
    s->free[s->nfree++] = slot;
}

/* Recorded once per queue family (two at most), under the use lock: two
 * threads may submit one SIMULTANEOUS_USE command buffer at once. */
VkCommandBuffer gz_vk_reset_cb(gz_vk_queue *q, gz_vk_recording *rec)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    pthread_mutex_lock(&dev->use_lock);
    uint32_t i = 0;
    while (i < 2 && rec->reset_q[i] && rec->reset_q[i]->family != q->family)
        i++;
    VkCommandBuffer cb = i < 2 ? rec->reset_cb[i] : VK_NULL_HANDLE;
    if (i < 2 && !cb) {
        pthread_mutex_lock(&q->lock);
        cb = gz_vk_own_cmdbuf_alloc(q);
        /* Submitted before every execution of rec, which may be pending
         * still when the next is submitted. */
        VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                          .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
        bool ok = cb && f->BeginCommandBuffer(cb, &begin) == VK_SUCCESS;
        if (ok) {
            gz_vk_qset_cmd_reset(dev, &rec->set, cb);
            for (uint32_t s = 0; s < rec->nsecs; s++)
                gz_vk_qset_cmd_reset(dev, &rec->secs[s]->set, cb);
            ok = f->EndCommandBuffer(cb) == VK_SUCCESS;
        }
        if (!ok && cb)
            f->FreeCommandBuffers(dev->info.device, q->cmd_pool, 1, &cb);
        pthread_mutex_unlock(&q->lock);
        if (ok) {
            rec->reset_cb[i] = cb;
            rec->reset_q[i] = q;
        } else {
            cb = VK_NULL_HANDLE;
        }
    }
    pthread_mutex_unlock(&dev->use_lock);
    return cb;
}

void gz_vk_reset_cb_free(gz_vk_recording *rec)
{
    for (uint32_t i = 0; i < 2; i++) {
        gz_vk_queue *q = rec->reset_q[i];
        if (!rec->reset_cb[i] || !q)
            continue;
        pthread_mutex_lock(&q->lock);
        if (q->cmd_pool)
            q->dev->info.fns.FreeCommandBuffers(q->dev->info.device, q->cmd_pool, 1,
                                                &rec->reset_cb[i]);
        pthread_mutex_unlock(&q->lock);
        rec->reset_cb[i] = VK_NULL_HANDLE;
        rec->reset_q[i] = NULL;
    }
}
