/* The device's timestamp queries: pools made as needed, handed out in
 * chunks, and the sets of chunks that recordings write.
 *
 * A chunk is handed out reset: on devices with host query reset the worker
 * resets chunks given back (their last use has completed and been read)
 * before they are handed out again, so a recording's first use needs no
 * reset of any kind. Devices without it reset every use on the GPU, in a
 * command buffer of ours before the app's (vk_brackets.c), and their chunks
 * go straight back.
 *
 * Under copy readback each pool has a host-visible buffer with one entry
 * per query, which recordings copy their values into at their end; an
 * entry is marked unwritten whenever its query is reset, so that a value is
 * never read before the GPU wrote it for this use. */
#include <stdlib.h>
#include <string.h>

#include "gz_vk_internal.h"

#define CHUNKS_PER_POOL (GZ_VK_POOL_QUERIES / GZ_VK_CHUNK)

bool gz_vk_queries_init(gz_vk_device *dev)
{
    gz_vk_queries *qs = &dev->queries;
    pthread_mutex_init(&qs->lock, NULL);
    size_t chunks = (size_t)GZ_VK_MAX_POOLS * CHUNKS_PER_POOL;
    qs->clean = malloc(chunks * sizeof *qs->clean);
    qs->dirty = malloc(chunks * sizeof *qs->dirty);
    if (!qs->clean || !qs->dirty) {
        free(qs->clean);
        free(qs->dirty);
        qs->clean = qs->dirty = NULL;
        return false;
    }
    return true;
}

void gz_vk_queries_destroy(gz_vk_device *dev)
{
    gz_vk_queries *qs = &dev->queries;
    for (uint32_t i = 0; i < qs->npools; i++) {
        gz_vk_hostbuf_destroy(dev, &qs->results[i]);
        dev->info.fns.DestroyQueryPool(dev->info.device, qs->pools[i], NULL);
    }
    qs->npools = 0;
    free(qs->clean);
    free(qs->dirty);
    qs->clean = qs->dirty = NULL;
    pthread_mutex_destroy(&qs->lock);
}

/* Whether any family of dev reads its results from copies. */
static bool copies_anywhere(const gz_vk_device *dev)
{
    for (uint32_t i = 0; i < dev->info.family_count; i++)
        if (gz_vk_family_mode(dev, i) != GZ_VK_QUEUE_UNTIMED &&
            gz_vk_family_readback(dev, i) == GZ_VK_READ_COPY)
            return true;
    return false;
}

/* One more pool, its chunks made ready (under the lock). */
static bool add_pool(gz_vk_device *dev)
{
    gz_vk_queries *qs = &dev->queries;
    if (qs->npools == GZ_VK_MAX_POOLS || qs->failed)
        return false;
    const gz_vk_fns *f = &dev->info.fns;
    VkQueryPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                  .queryCount = GZ_VK_POOL_QUERIES};
    VkQueryPool pool;
    if (f->CreateQueryPool(dev->info.device, &info, NULL, &pool) != VK_SUCCESS)
        goto fail;
    gz_vk_hostbuf results = {0};
    if (copies_anywhere(dev) && !gz_vk_hostbuf_create(dev, GZ_VK_POOL_QUERIES, &results)) {
        f->DestroyQueryPool(dev->info.device, pool, NULL);
        goto fail;
    }
    if (results.results)
        gz_vk_hostbuf_clear(&results, 0, GZ_VK_POOL_QUERIES);
    /* A new pool's queries are in an undefined state until reset. */
    if (dev->info.host_query_reset)
        f->ResetQueryPool(dev->info.device, pool, 0, GZ_VK_POOL_QUERIES);
    uint32_t p = qs->npools++;
    qs->pools[p] = pool;
    qs->results[p] = results;
    /* Handed out lowest first. */
    for (uint32_t i = 0; i < CHUNKS_PER_POOL; i++)
        qs->clean[qs->nclean++] = p * CHUNKS_PER_POOL + CHUNKS_PER_POOL - 1 - i;
    return true;
fail:
    qs->failed = true;
    gz_log("cannot create more timestamp queries on %s (%u in use); further zones are not "
           "timed and are counted",
           dev->info.device_name, qs->npools * GZ_VK_POOL_QUERIES);
    return false;
}

bool gz_vk_chunk_take(gz_vk_device *dev, uint32_t *chunk)
{
    gz_vk_queries *qs = &dev->queries;
    pthread_mutex_lock(&qs->lock);
    bool ok = qs->clean && (qs->nclean || add_pool(dev));
    if (ok)
        *chunk = qs->clean[--qs->nclean];
    pthread_mutex_unlock(&qs->lock);
    if (!ok && qs->npools == GZ_VK_MAX_POOLS) {
        static int once;
        gz_log_once(&once, "all %u timestamp queries of a device are in use (command buffers "
                           "recorded and kept without being submitted, or results not read "
                           "back?); further zones are not timed and are counted",
                    GZ_VK_MAX_POOLS * GZ_VK_POOL_QUERIES);
    }
    return ok;
}

void gz_vk_chunks_give(gz_vk_device *dev, const uint32_t *chunks, uint32_t n)
{
    if (!n)
        return;
    gz_vk_queries *qs = &dev->queries;
    /* Without host query reset, every use is reset on the GPU before it
     * runs: a chunk is ready once its copies are marked unwritten. */
    for (uint32_t i = 0; !dev->info.host_query_reset && i < n; i++) {
        gz_vk_hostbuf *b = gz_vk_query_results(dev, chunks[i] * GZ_VK_CHUNK);
        if (b->results)
            gz_vk_hostbuf_clear(b, gz_vk_query_index(chunks[i] * GZ_VK_CHUNK), GZ_VK_CHUNK);
    }
    pthread_mutex_lock(&qs->lock);
    uint32_t *to = dev->info.host_query_reset ? qs->dirty : qs->clean;
    uint32_t *count = dev->info.host_query_reset ? &qs->ndirty : &qs->nclean;
    memcpy(to + *count, chunks, n * sizeof *chunks);
    *count += n;
    pthread_mutex_unlock(&qs->lock);
}

/* Resets count queries from global index first on the host and marks their
 * copies unwritten. */
static void reset_host(gz_vk_device *dev, uint32_t first, uint32_t count)
{
    dev->info.fns.ResetQueryPool(dev->info.device, gz_vk_query_pool(dev, first),
                                 gz_vk_query_index(first), count);
    gz_vk_hostbuf *b = gz_vk_query_results(dev, first);
    if (b->results)
        gz_vk_hostbuf_clear(b, gz_vk_query_index(first), count);
}

static int by_value(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void gz_vk_queries_recycle(gz_vk_device *dev)
{
    gz_vk_queries *qs = &dev->queries;
    if (!dev->info.host_query_reset || !qs->dirty)
        return;
    /* Taken out under the lock, reset without it (the chunks belong to no
     * one meanwhile), then made ready; one device at a time uses the
     * scratch. */
    static uint32_t scratch[GZ_VK_MAX_POOLS * CHUNKS_PER_POOL];
    static pthread_mutex_t scratch_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&scratch_lock);
    pthread_mutex_lock(&qs->lock);
    uint32_t n = qs->ndirty;
    memcpy(scratch, qs->dirty, n * sizeof *scratch);
    qs->ndirty = 0;
    pthread_mutex_unlock(&qs->lock);
    if (n) {
        /* Neighbouring chunks in one call. */
        qsort(scratch, n, sizeof *scratch, by_value);
        for (uint32_t i = 0; i < n;) {
            uint32_t j = i + 1;
            while (j < n && scratch[j] == scratch[j - 1] + 1 &&
                   scratch[j] % CHUNKS_PER_POOL != 0)
                j++;
            if (!gz_vk_device_lost(dev))
                reset_host(dev, scratch[i] * GZ_VK_CHUNK, (j - i) * GZ_VK_CHUNK);
            i = j;
        }
        pthread_mutex_lock(&qs->lock);
        memcpy(qs->clean + qs->nclean, scratch, n * sizeof *scratch);
        qs->nclean += n;
        pthread_mutex_unlock(&qs->lock);
    }
    pthread_mutex_unlock(&scratch_lock);
}

static bool push_range(gz_vk_qset *set, uint32_t first, uint32_t count)
{
    gz_vk_range *last = set->nranges ? &set->ranges[set->nranges - 1] : NULL;
    if (last && last->first + last->count == first) {
        last->count += count;
        return true;
    }
    if (set->nranges == set->ranges_cap) {
        uint32_t cap = set->ranges_cap ? set->ranges_cap * 2 : 4;
        gz_vk_range *r = realloc(set->ranges, cap * sizeof *r);
        if (!r)
            return false;
        set->ranges = r;
        set->ranges_cap = cap;
    }
    set->ranges[set->nranges++] = (gz_vk_range){first, count};
    return true;
}

uint32_t gz_vk_qset_take(gz_vk_device *dev, gz_vk_qset *set, uint32_t n, uint32_t *value)
{
    if (!n || n > GZ_VK_CHUNK || set->nvalues + 1 > GZ_VK_MAX_VALUES)
        return GZ_VK_NO_QUERY;
    if (!set->nchunks || set->next + n > GZ_VK_CHUNK) {
        if (set->nchunks == set->chunks_cap) {
            uint32_t cap = set->chunks_cap ? set->chunks_cap * 2 : 2;
            uint32_t *c = realloc(set->chunks, cap * sizeof *c);
            if (!c)
                return GZ_VK_NO_QUERY;
            set->chunks = c;
            set->chunks_cap = cap;
        }
        uint32_t chunk;
        if (!gz_vk_chunk_take(dev, &chunk))
            return GZ_VK_NO_QUERY;
        set->chunks[set->nchunks++] = chunk;
        set->next = 0;
    }
    uint32_t first = set->chunks[set->nchunks - 1] * GZ_VK_CHUNK + set->next;
    /* A timestamp in a multiview subpass writes n queries, the value in the
     * first; drivers differ on whether the others become available
     * (lavapipe leaves them unavailable). All n are reserved, and reset with
     * their chunk; only the first is read and copied. */
    if (!push_range(set, first, 1))
        return GZ_VK_NO_QUERY;
    set->next += n;
    *value = set->nvalues;
    set->nvalues += 1;
    return first;
}

void gz_vk_qset_reset_host(gz_vk_device *dev, const gz_vk_qset *set)
{
    /* Whole chunks: every query a use may have written, and none other's. */
    for (uint32_t i = 0; i < set->nchunks; i++)
        reset_host(dev, set->chunks[i] * GZ_VK_CHUNK, GZ_VK_CHUNK);
}

void gz_vk_qset_cmd_reset(gz_vk_device *dev, const gz_vk_qset *set, VkCommandBuffer cb)
{
    for (uint32_t i = 0; i < set->nchunks; i++) {
        uint32_t first = set->chunks[i] * GZ_VK_CHUNK;
        dev->info.fns.CmdResetQueryPool(cb, gz_vk_query_pool(dev, first),
                                        gz_vk_query_index(first), GZ_VK_CHUNK);
    }
}

void gz_vk_qset_cmd_copy(gz_vk_device *dev, const gz_vk_qset *set, VkCommandBuffer cb)
{
    for (uint32_t i = 0; i < set->nranges; i++) {
        const gz_vk_range *r = &set->ranges[i];
        gz_vk_cmd_copy_results(&dev->info.fns, cb, gz_vk_query_pool(dev, r->first),
                               gz_vk_query_index(r->first), r->count,
                               gz_vk_query_results(dev, r->first), gz_vk_query_index(r->first));
    }
}

void gz_vk_qset_clear_copies(gz_vk_device *dev, const gz_vk_qset *set)
{
    for (uint32_t i = 0; i < set->nranges; i++) {
        gz_vk_hostbuf *b = gz_vk_query_results(dev, set->ranges[i].first);
        if (b->results)
            gz_vk_hostbuf_clear(b, gz_vk_query_index(set->ranges[i].first),
                                set->ranges[i].count);
    }
}

bool gz_vk_qset_read(gz_vk_device *dev, const gz_vk_qset *set, bool copied, uint64_t *values,
                     bool *lost)
{
    uint32_t at = 0;
    for (uint32_t i = 0; i < set->nranges; i++) {
        const gz_vk_range *r = &set->ranges[i];
        bool ok = copied ? gz_vk_hostbuf_read(gz_vk_query_results(dev, r->first),
                                              gz_vk_query_index(r->first), r->count, values + at)
                         : gz_vk_query_read(&dev->info.fns, dev->info.device,
                                            gz_vk_query_pool(dev, r->first),
                                            gz_vk_query_index(r->first), r->count, values + at,
                                            lost);
        if (!ok)
            return false;
        at += r->count;
    }
    return true;
}
