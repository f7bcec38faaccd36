/* A queue's result entries: pages of timestamp queries with their results
 * buffer and the small command buffers that write them.
 *
 * Entries are taken in runs from the current page (a bump allocator) and
 * given back when their batch has been read back; a page whose entries are
 * all given back starts again from its beginning. When no page has room a
 * new one is added, so the number of entries follows what is in flight (a
 * program that submits a thousand batches between two fence waits gets the
 * pages it needs) up to GZ_VK_MAX_PAGES; past that, batches go untimed and
 * are counted. Nothing here waits for the GPU or reads results back. */
#include <stdlib.h>
#include <string.h>

#include "gz_vk_internal.h"

static void page_free(gz_vk_queue *q, gz_vk_page *p)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    VkDevice d = dev->info.device;
    /* The queue's command pool is destroyed after the pages: it frees the
     * command buffers with it. */
    gz_vk_hostbuf_destroy(dev, &p->results);
    f->DestroyQueryPool(d, p->pool, NULL);
    free(p->ts);
    free(p->dyn);
    free(p->dyn_digest);
    free(p->block_ready);
    free(p->entries);
    free(p);
}

static gz_vk_page *page_new(gz_vk_queue *q, uint32_t size)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    VkDevice d = dev->info.device;
    gz_vk_page *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->size = size;
    p->ts = calloc(size, sizeof *p->ts);
    p->dyn = calloc(size, sizeof *p->dyn);
    p->dyn_digest = calloc(size, sizeof *p->dyn_digest);
    p->block_ready = calloc(size / GZ_VK_TS_BLOCK, sizeof *p->block_ready);
    p->entries = calloc(size, sizeof *p->entries);
    VkQueryPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                  .queryCount = size};
    if (!p->ts || !p->dyn || !p->dyn_digest || !p->block_ready || !p->entries ||
        f->CreateQueryPool(d, &info, NULL, &p->pool) != VK_SUCCESS)
        goto fail;
    /* Queues that copy their results need the buffer; the others read the
     * queries on the host. */
    if (q->mode == GZ_VK_QUEUE_COPY && !gz_vk_hostbuf_create(dev, size, &p->results)) {
        f->DestroyQueryPool(d, p->pool, NULL);
        goto fail;
    }
    if (dev->info.host_query_reset)
        f->ResetQueryPool(d, p->pool, 0, size);
    return p;
fail:
    free(p->ts);
    free(p->dyn);
    free(p->dyn_digest);
    free(p->block_ready);
    free(p->entries);
    free(p);
    return NULL;
}

bool gz_vk_pages_init(gz_vk_queue *q)
{
    const gz_vk_fns *f = &q->dev->info.fns;
    VkCommandPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        /* Dynamic command buffers are recorded again and again. */
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = q->family,
    };
    if (f->CreateCommandPool(q->dev->info.device, &info, NULL, &q->cmd_pool) != VK_SUCCESS)
        return false;
    q->pages[0] = page_new(q, GZ_VK_PAGE_ENTRIES);
    if (!q->pages[0]) {
        f->DestroyCommandPool(q->dev->info.device, q->cmd_pool, NULL);
        return false;
    }
    q->npages = 1;
    return true;
}

void gz_vk_pages_destroy(gz_vk_queue *q)
{
    for (uint32_t i = 0; i < q->npages; i++)
        page_free(q, q->pages[i]);
    q->npages = 0;
    q->dev->info.fns.DestroyCommandPool(q->dev->info.device, q->cmd_pool, NULL);
}

static uint32_t room(const gz_vk_page *p)
{
    return p->size - p->next;
}

static uint32_t page_size_for(uint32_t min)
{
    uint32_t size = GZ_VK_PAGE_ENTRIES;
    while (size < min)
        size *= 2;
    return size;
}

bool gz_vk_pages_take(gz_vk_queue *q, uint32_t want, uint32_t min, gz_vk_run *out)
{
    if (!want || min > GZ_VK_PAGE_MAX)
        return false;
    if (min > want)
        min = want;
    gz_vk_page *p = q->pages[q->cur_page];
    if (room(p) < min) {
        /* The current page is done with: the first page with every entry
         * given back starts over, else a new page. */
        uint32_t found = UINT32_MAX;
        for (uint32_t i = 1; i <= q->npages && found == UINT32_MAX; i++) {
            uint32_t k = (q->cur_page + i) % q->npages;
            if (!q->pages[k]->outstanding && q->pages[k]->size >= min)
                found = k;
        }
        if (found == UINT32_MAX && q->npages < GZ_VK_MAX_PAGES) {
            gz_vk_page *np = page_new(q, page_size_for(min));
            if (np) {
                found = q->npages;
                q->pages[q->npages++] = np;
            }
        }
        for (uint32_t k = 0; found == UINT32_MAX && k < q->npages; k++) {
            /* Every page is there: an empty one too small gives way to a
             * larger one. */
            if (q->pages[k]->outstanding || k == q->cur_page)
                continue;
            gz_vk_page *np = page_new(q, page_size_for(min));
            if (np) {
                page_free(q, q->pages[k]);
                q->pages[k] = np;
                found = k;
                /* Command buffers recorded for reuse may name the old
                 * page's pool and buffer: record them again. */
                for (uint32_t i = 0; i < q->npages; i++)
                    memset(q->pages[i]->dyn_digest, 0,
                           q->pages[i]->size * sizeof *q->pages[i]->dyn_digest);
            }
        }
        if (found == UINT32_MAX)
            return false;
        q->cur_page = found;
        p = q->pages[found];
        p->next = 0;
    }
    uint32_t n = room(p) < want ? room(p) : want;
    *out = (gz_vk_run){.page = (uint16_t)q->cur_page, .first = (uint16_t)p->next, .count = (uint16_t)n};
    p->next += n;
    p->outstanding += n;
    return true;
}

void gz_vk_pages_give(gz_vk_queue *q, const gz_vk_run *run)
{
    if (!run->count)
        return;
    gz_vk_page *p = q->pages[run->page];
    p->outstanding -= run->count;
    /* The current page restarts as soon as it is empty: entries are reused
     * while they are warm, and the queue's steady state is one page. */
    if (!p->outstanding && run->page == q->cur_page)
        p->next = 0;
}

/* Records the timestamp-only command buffers of one block: each writes
 * its entry's timestamp (after resetting the query when the device has no
 * host query reset). Only timestamps: valid on every queue family with
 * timestamps, transfer-only ones included, and nothing that waits. */
static bool record_block(gz_vk_queue *q, gz_vk_page *p, uint32_t block)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    VkDevice d = dev->info.device;
    uint32_t first = block * GZ_VK_TS_BLOCK;
    VkCommandBuffer cbs[GZ_VK_TS_BLOCK];
    VkCommandBufferAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = q->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = GZ_VK_TS_BLOCK,
    };
    if (f->AllocateCommandBuffers(d, &alloc, cbs) != VK_SUCCESS)
        return false;
    gz_vk_own_cmdbufs(dev, cbs, GZ_VK_TS_BLOCK);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    for (uint32_t i = 0; i < GZ_VK_TS_BLOCK; i++) {
        if (f->BeginCommandBuffer(cbs[i], &begin) != VK_SUCCESS)
            goto fail;
        if (!dev->info.host_query_reset)
            f->CmdResetQueryPool(cbs[i], p->pool, first + i, 1);
        f->CmdWriteTimestamp(cbs[i], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->pool, first + i);
        if (f->EndCommandBuffer(cbs[i]) != VK_SUCCESS)
            goto fail;
    }
    memcpy(&p->ts[first], cbs, sizeof cbs);
    p->block_ready[block] = true;
    return true;
fail:
    f->FreeCommandBuffers(d, q->cmd_pool, GZ_VK_TS_BLOCK, cbs);
    return false;
}

bool gz_vk_pages_prepare(gz_vk_queue *q, const gz_vk_run *run)
{
    gz_vk_device *dev = q->dev;
    gz_vk_page *p = q->pages[run->page];
    uint32_t last = run->first + run->count - 1;
    for (uint32_t b = run->first / GZ_VK_TS_BLOCK; b <= last / GZ_VK_TS_BLOCK; b++)
        if (!p->block_ready[b] && !record_block(q, p, b))
            return false;
    /* These entries' previous batch has been read back (or was never
     * submitted): its commands have completed, so a host reset is valid. */
    if (dev->info.host_query_reset)
        dev->info.fns.ResetQueryPool(dev->info.device, p->pool, run->first, run->count);
    if (p->results.results)
        gz_vk_hostbuf_clear(&p->results, run->first, run->count);
    return true;
}
