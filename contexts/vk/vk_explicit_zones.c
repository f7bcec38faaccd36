/* Explicit zones (TracyVkZone…) and their read-back.
 *
 * A zone costs a slot reservation (one compare-and-swap), a few stores and
 * the two vkCmdWriteTimestamp calls: no lock, no allocation. Collect
 * records, in the app's command buffer, the reset of the queries already
 * read, then a copy of every unread zone's two results (with availability,
 * without waiting: a zone whose command buffer runs later shows as not
 * available and is copied again by the next collect) into a region of
 * host-visible memory, then a marker. The worker (or the next collect)
 * reads the regions whose marker is there. */
#include <stdlib.h>
#include <string.h>

#include "gz_vk_explicit.h"

/* A slot for the next zone: at most GZ_VKX_ZONES since the last collect,
 * and a slot whose queries were reset. false: full (*ring says which). */
static bool reserve_slot(gz_vkx *c, uint64_t *seq, bool *ring)
{
    uint64_t head = __atomic_load_n(&c->head, __ATOMIC_RELAXED);
    do {
        *ring = head - __atomic_load_n(&c->freed, __ATOMIC_ACQUIRE) >= GZ_VKX_SLOTS;
        if (*ring || head - __atomic_load_n(&c->collected, __ATOMIC_RELAXED) >= GZ_VKX_ZONES)
            return false;
    } while (!__atomic_compare_exchange_n(&c->head, &head, head + 1, true, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED));
    *seq = head;
    return true;
}

gpuzones_vk_zone gpuzones_vk_zone_begin(gpuzones_vk_ctx *h, VkCommandBuffer cmdbuf,
                                        uint32_t srcloc, int active)
{
    gpuzones_vk_zone z = {0};
    if (!active || !h)
        return z;
    gz_vkx *c = gz_vkx_from_handle(h, "TracyVkZone");
    if (!c || !cmdbuf)
        return z;
    uint64_t seq;
    bool ring;
    if (!reserve_slot(c, &seq, &ring)) {
        static int once, ring_once;
        if (ring)
            gz_log_once(&ring_once, "%u Vulkan zones of one context not read back yet (are "
                                    "the command buffers with TracyVkCollect submitted?); "
                                    "further zones are dropped (counted)",
                        GZ_VKX_SLOTS);
        else
            gz_log_once(&once, "more than %u Vulkan zones of one context between two collects "
                               "(TracyVkCollect); further zones are dropped (counted)",
                        GZ_VKX_ZONES);
        gz_count_dropped_zones(c->track, 1);
        return z;
    }
    uint32_t slot = (uint32_t)(seq % GZ_VKX_SLOTS);
    c->seq[slot] = seq;
    c->srcloc[slot] = srcloc;
    c->have[slot] = 0;
    __atomic_store_n(&c->state[slot], ZS_OPEN, __ATOMIC_RELEASE);
    c->f.CmdWriteTimestamp(cmdbuf, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, c->pool, 2 * slot);
    z = (gpuzones_vk_zone){.ctx = h, .cmdbuf = cmdbuf, .seq = seq, .state = 1};
    return z;
}

void gpuzones_vk_zone_end(gpuzones_vk_zone *z)
{
    if (!z || !z->state)
        return;
    if (z->state != 1) {
        static int once;
        gz_log_once(&once, "a Vulkan zone was ended twice (TracyVkZoneEnd after its end, or "
                           "on a scoped zone); the second end is ignored");
        return;
    }
    z->state = 2;
    gz_vkx *c = gz_vkx_from_handle(z->ctx, "TracyVkZone's end");
    if (!c)
        return;
    uint32_t slot = (uint32_t)(z->seq % GZ_VKX_SLOTS);
    if (c->seq[slot] != z->seq ||
        __atomic_load_n(&c->state[slot], __ATOMIC_ACQUIRE) != ZS_OPEN) {
        static int once;
        gz_log_once(&once, "a Vulkan zone ended that is not open (a copy of a zone "
                           "variable ended twice?); ignored");
        return;
    }
    c->f.CmdWriteTimestamp(z->cmdbuf, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->pool,
                              2 * slot + 1);
    __atomic_store_n(&c->state[slot], ZS_ENDED, __ATOMIC_RELEASE);
}

/* ---- read-back --------------------------------------------------------- */

static uint64_t marker_of(uint32_t id)
{
    return (uint64_t)id << 32 | id; /* vkCmdFillBuffer repeats the 32-bit word */
}

static bool copy_done(const gz_vkx *c, uint32_t i)
{
    const uint64_t *m = &c->buf.results[2 * ((size_t)i * GZ_VKX_REGION + 2 * GZ_VKX_SLOTS)];
    return c->copies[i].id &&
           __atomic_load_n(&m[1], __ATOMIC_ACQUIRE) == marker_of(c->copies[i].id);
}

/* Takes the results of an executed copy for the zones still unread. */
static void apply_copy(gz_vkx *c, uint32_t i, uint64_t *max_end)
{
    const gz_vkx_copy *cp = &c->copies[i];
    const uint64_t *r = &c->buf.results[2 * (size_t)i * GZ_VKX_REGION];
    for (uint32_t k = 0; k < cp->count; k++) {
        uint64_t seq = cp->first + k;
        uint32_t slot = (uint32_t)(seq % GZ_VKX_SLOTS);
        if (seq < c->tail || c->seq[slot] != seq)
            continue;
        const uint64_t *b = &r[4 * (size_t)k], *e = b + 2;
        if (b[1]) {
            c->begin[slot] = b[0];
            c->have[slot] |= 1;
        }
        if (e[1]) {
            c->end[slot] = e[0];
            c->have[slot] |= 2;
            if (e[0] > *max_end)
                *max_end = e[0];
        }
    }
}

static gz_item *push(gz_vkx *c, uint32_t *n)
{
    if (*n == c->scratch_cap) {
        uint32_t cap = c->scratch_cap ? 2 * c->scratch_cap : 256;
        gz_item *p = realloc(c->scratch, cap * sizeof *p);
        if (!p)
            return NULL;
        c->scratch = p;
        c->scratch_cap = cap;
    }
    gz_item *it = &c->scratch[(*n)++];
    memset(it, 0, sizeof *it);
    return it;
}

void gz_vkx_harvest(gz_vkx *c, bool final)
{
    /* The newest executed copy supersedes older ones that never ran (their
     * command buffer was dropped, or runs late): each copy covers every zone
     * unread when it was recorded. */
    int newest = -1;
    for (uint32_t i = 0; i < GZ_VKX_COPIES; i++)
        if (copy_done(c, i) && (newest < 0 || c->copies[i].id - c->copies[newest].id < (1u << 31)))
            newest = (int)i;
    uint64_t max_end = 0, seen_ns = gz_host_now_ns();
    if (newest >= 0) {
        uint32_t newest_id = c->copies[newest].id;
        for (uint32_t i = 0; i < GZ_VKX_COPIES; i++) {
            if (!c->copies[i].id || newest_id - c->copies[i].id >= (1u << 31))
                continue; /* free, or newer than the newest executed */
            if (copy_done(c, i))
                apply_copy(c, i, &max_end);
            c->copies[i].id = 0;
        }
    }

    uint32_t n = 0, zones = 0;
    uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
    while (c->tail < head) {
        uint32_t slot = (uint32_t)(c->tail % GZ_VKX_SLOTS);
        uint8_t st = __atomic_load_n(&c->state[slot], __ATOMIC_ACQUIRE);
        if (st != ZS_ENDED || c->have[slot] != 3) {
            if (!final)
                break;
            c->dropped++; /* never ended or never ran: lost */
        } else {
            gz_item *it = push(c, &n);
            if (it) {
                *it = (gz_item){.type = GZ_ITEM_GPU_ZONE,
                                .flags = (uint8_t)(GZ_ZONE_EXPLICIT << GZ_ITEM_KIND_SHIFT) |
                                         GZ_ITEM_F_SRCLOC,
                                .track = c->track,
                                .name = c->srcloc[slot],
                                .zone = {.begin_ticks = c->begin[slot], .end_ticks = c->end[slot]}};
                zones++;
            } else {
                c->dropped++;
            }
        }
        __atomic_store_n(&c->state[slot], ZS_DONE, __ATOMIC_RELAXED);
        c->tail++;
    }
    /* The latest end seen complete: a free bound for a context of our own
     * (on the layer's track, the layer's bounds and calibration rule). */
    if (max_end && !c->shared) {
        gz_item *b = push(c, &n);
        if (b)
            *b = gz_item_bound(c->track, false, max_end, seen_ns);
    }
    if (n && !gz_emit_n(c->scratch, n))
        c->dropped += zones;
    if (c->dropped) {
        gz_count_dropped_zones(c->track, c->dropped);
        c->dropped = 0;
    }
    if (c->host_reset) {
        uint64_t freed = __atomic_load_n(&c->freed, __ATOMIC_RELAXED);
        while (freed < c->tail) {
            uint32_t slot = (uint32_t)(freed % GZ_VKX_SLOTS);
            uint32_t count = (uint32_t)(c->tail - freed);
            if (count > GZ_VKX_SLOTS - slot)
                count = GZ_VKX_SLOTS - slot;
            c->f.ResetQueryPool(c->device, c->pool, 2 * slot, 2 * count);
            freed += count;
        }
        __atomic_store_n(&c->freed, freed, __ATOMIC_RELEASE);
    }
}

void gz_vkx_drop_pending(gz_vkx *c)
{
    uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
    if (head > c->tail)
        gz_count_dropped_zones(c->track, head - c->tail);
    c->tail = head;
}

/* ---- collect ----------------------------------------------------------- */

/* Queries of zones [from, to) as at most two ranges of the ring. */
typedef struct ranges {
    uint32_t first[2], count[2], n;
} ranges;

static ranges zone_ranges(uint64_t from, uint64_t to)
{
    ranges r = {0};
    while (from < to && r.n < 2) {
        uint32_t slot = (uint32_t)(from % GZ_VKX_SLOTS);
        uint64_t count = to - from;
        if (count > GZ_VKX_SLOTS - slot)
            count = GZ_VKX_SLOTS - slot;
        r.first[r.n] = slot;
        r.count[r.n++] = (uint32_t)count;
        from += count;
    }
    return r;
}

static void record_resets(gz_vkx *c, VkCommandBuffer cb)
{
    uint64_t freed = __atomic_load_n(&c->freed, __ATOMIC_RELAXED);
    ranges r = zone_ranges(freed, c->tail);
    for (uint32_t i = 0; i < r.n; i++)
        c->f.CmdResetQueryPool(cb, c->pool, 2 * r.first[i], 2 * r.count[i]);
    /* Zones recorded from now on run after this reset (Tracy's rule: the
     * collect command buffer is submitted before later zones' ones). */
    __atomic_store_n(&c->freed, c->tail, __ATOMIC_RELEASE);
}

static void record_copy(gz_vkx *c, VkCommandBuffer cb, uint64_t head)
{
    uint32_t region = GZ_VKX_COPIES;
    for (uint32_t i = 0; i < GZ_VKX_COPIES && region == GZ_VKX_COPIES; i++)
        if (!c->copies[i].id)
            region = i;
    if (region == GZ_VKX_COPIES) {
        /* Every region waits for a copy that has not run: the oldest one is
         * superseded by this one (it covers the same zones and more). */
        uint32_t oldest = 0;
        for (uint32_t i = 1; i < GZ_VKX_COPIES; i++)
            if (c->copies[i].id - c->copies[oldest].id >= (1u << 31))
                oldest = i;
        region = oldest;
    }
    uint32_t id = ++c->next_copy_id;
    if (!id)
        id = ++c->next_copy_id;
    c->copies_made++;
    c->copies[region] = (gz_vkx_copy){.first = c->tail, .count = (uint32_t)(head - c->tail), .id = id};
    size_t base = (size_t)region * GZ_VKX_REGION;
    gz_vk_hostbuf_clear(&c->buf, (uint32_t)base, GZ_VKX_REGION);

    const gz_vk_fns *f = &c->f;
    /* The timestamps of earlier commands must have been written before the
     * copy reads them (an execution dependency). */
    f->CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                          0, 0, NULL, 0, NULL, 0, NULL);
    ranges r = zone_ranges(c->tail, head);
    VkDeviceSize offset = base * GZ_VK_RESULT_SIZE;
    for (uint32_t i = 0; i < r.n; i++) {
        f->CmdCopyQueryPoolResults(cb, c->pool, 2 * r.first[i], 2 * r.count[i], c->buf.buffer,
                                   offset, GZ_VK_RESULT_SIZE,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
        offset += (VkDeviceSize)2 * r.count[i] * GZ_VK_RESULT_SIZE;
    }
    /* The marker goes after the results, so a host that sees it sees them. */
    VkMemoryBarrier ww = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
    f->CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                          1, &ww, 0, NULL, 0, NULL);
    f->CmdFillBuffer(cb, c->buf.buffer, (base + 2 * GZ_VKX_SLOTS) * GZ_VK_RESULT_SIZE,
                       GZ_VK_RESULT_SIZE, id);
    VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    f->CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                          &to_host, 0, NULL, 0, NULL);
}

void gpuzones_vk_collect(gpuzones_vk_ctx *h, VkCommandBuffer cb)
{
    gz_vkx *c = gz_vkx_from_handle(h, "TracyVkCollect");
    if (!c)
        return;
    bool host_only = !cb;
    if (cb && gz_vk_cmdbuf_recording(cb) == 0) {
        static int once;
        gz_log_once(&once, "TracyVkCollect with a command buffer that is not in the "
                           "recording state; nothing recorded (zones are read at the next "
                           "collect)");
        cb = VK_NULL_HANDLE;
    }
    pthread_mutex_lock(&c->lock);
    if (host_only && !c->copies_made) {
        /* Results reach host memory only through a copy in a command
         * buffer (vkGetQueryPoolResults can wait for the whole device). */
        static int once;
        gz_log_once(&once, "TracyVkCollectHost reads back what TracyVkCollect(ctx, cmdbuf) "
                           "copied; with no such collect yet, no zone is read");
    }
    gz_vkx_harvest(c, false);
    uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
    if (cb) {
        /* The next GZ_VKX_ZONES zones may begin (the ring has room for
         * them and for those before, which this copy will read). */
        __atomic_store_n(&c->collected, head, __ATOMIC_RELAXED);
        if (!c->host_reset)
            record_resets(c, cb);
        if (head > c->tail)
            record_copy(c, cb, head);
    }
    pthread_mutex_unlock(&c->lock);
}
