/* Command buffer recordings: which debug labels a recording begins and ends,
 * and the timestamp queries written for them inside the app's commands.
 *
 * A recording's label queries are fixed when it is recorded, yet it may run
 * many times, several at once (SIMULTANEOUS_USE), and inside other
 * recordings (secondaries). So they are never reset on the host: the
 * layer's own command buffer just before each execution resets them, and
 * the batch's last command buffer copies them into entries that belong to
 * that execution alone (vk_queue.c). Resets and copies are ordered with the
 * app's timestamp writes by the queue's submission order, on any queue of a
 * family that can run them (graphics or compute).
 *
 * The command buffers themselves are kept here too, by handle and by pool,
 * so that the explicit API finds them as the layer's hooks do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_intern.h"
#include "gz_vk_internal.h"

static gz_vk_untimed untimed_reason(gz_vk_device *dev, const gz_vk_cmdbuf *cb,
                                    VkCommandBufferUsageFlags flags)
{
    if (dev->level < GZ_LEVEL_LABELS)
        return GZ_VK_UNTIMED_LEVEL;
    /* Resets and copies of label queries need a graphics or compute family. */
    if (gz_vk_family_mode(dev, cb->family) != GZ_VK_QUEUE_COPY)
        return GZ_VK_UNTIMED_FAMILY;
    /* A SIMULTANEOUS_USE secondary may run twice inside one primary, or in
     * two primaries at once, with no command of ours in between to reset
     * its queries: its timestamps would be written twice. */
    if (cb->secondary && (flags & VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT))
        return GZ_VK_UNTIMED_SIM_SECONDARY;
    if (!dev->labels_ready)
        return GZ_VK_UNTIMED_POOL;
    return GZ_VK_TIMED;
}

static gz_vk_recording *recording_new(gz_vk_device *dev, gz_vk_cmdbuf *cb,
                                      VkCommandBufferUsageFlags flags)
{
    gz_vk_recording *rec = calloc(1, sizeof *rec);
    if (!rec)
        return NULL;
    rec->refs = 1;
    rec->family = cb->family;
    rec->secondary = cb->secondary;
    rec->simultaneous = (flags & VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT) != 0;
    rec->untimed = untimed_reason(dev, cb, flags);
    return rec;
}

void gz_vk_recording_ref(gz_vk_recording *rec)
{
    __atomic_add_fetch(&rec->refs, 1, __ATOMIC_ACQ_REL);
}

void gz_vk_recording_unref(gz_vk_device *dev, gz_vk_recording *rec)
{
    if (!rec || __atomic_sub_fetch(&rec->refs, 1, __ATOMIC_ACQ_REL))
        return;
    /* No execution is left unread: every command that wrote, reset or
     * copied these queries has completed. */
    for (uint32_t i = 0; i < rec->nchunks; i++)
        gz_vk_label_chunk_free(dev, rec->chunks[i]);
    for (uint32_t i = 0; i < rec->nsecs; i++)
        gz_vk_recording_unref(dev, rec->secs[i]);
    free(rec->secs);
    free(rec->ranges);
    free(rec->chunks);
    free(rec->ops);
    free(rec);
}

void gz_vk_recording_cmd_reset(gz_vk_device *dev, const gz_vk_recording *rec, VkCommandBuffer cb)
{
    for (uint32_t i = 0; i < rec->nranges; i++)
        dev->info.fns.CmdResetQueryPool(cb, gz_vk_label_pool(dev, rec->ranges[i].first_query),
                                        gz_vk_label_query(rec->ranges[i].first_query),
                                        rec->ranges[i].count);
}

void gz_vk_recording_cmd_copy(gz_vk_device *dev, const gz_vk_recording *rec, VkCommandBuffer cb,
                              const gz_vk_hostbuf *results, uint32_t first_entry)
{
    uint32_t at = first_entry;
    for (uint32_t i = 0; i < rec->nranges; i++) {
        gz_vk_cmd_copy_results(&dev->info.fns, cb, gz_vk_label_pool(dev, rec->ranges[i].first_query),
                               gz_vk_label_query(rec->ranges[i].first_query),
                               rec->ranges[i].count, results, at);
        at += rec->ranges[i].count;
    }
}

static bool push_range(gz_vk_recording *rec, uint32_t *cap, uint32_t first, uint32_t count)
{
    if (!count)
        return true;
    const gz_vk_label_range *last = rec->nranges ? &rec->ranges[rec->nranges - 1] : NULL;
    if (last && last->first_query + last->count == first &&
        last->first_query / GZ_VK_LABEL_POOL_QUERIES == first / GZ_VK_LABEL_POOL_QUERIES) {
        rec->ranges[rec->nranges - 1].count += count;
        return true;
    }
    if (rec->nranges == *cap) {
        uint32_t c = *cap ? 2 * *cap : 4;
        gz_vk_label_range *r = realloc(rec->ranges, c * sizeof *r);
        if (!r)
            return false;
        rec->ranges = r;
        *cap = c;
    }
    rec->ranges[rec->nranges++] = (gz_vk_label_range){first, count};
    return true;
}

/* The execution's layout: own queries first (chunk by chunk, in the order
 * they were written), then each executed secondary's, whole. Ops of a
 * secondary get their index in that layout. */
static void finish_layout(gz_vk_recording *rec)
{
    uint32_t cap = 0;
    bool ok = true;
    for (uint32_t c = 0; c < rec->nchunks && ok; c++) {
        uint32_t used = rec->own_queries - c * GZ_VK_LABEL_CHUNK;
        ok = push_range(rec, &cap, rec->chunks[c] * GZ_VK_LABEL_CHUNK,
                        used < GZ_VK_LABEL_CHUNK ? used : GZ_VK_LABEL_CHUNK);
    }
    uint32_t *offset = rec->nsecs ? calloc(rec->nsecs, sizeof *offset) : NULL;
    uint32_t at = rec->own_queries;
    ok = ok && (offset || !rec->nsecs);
    for (uint32_t s = 0; s < rec->nsecs && ok; s++) {
        const gz_vk_recording *sec = rec->secs[s];
        offset[s] = at;
        for (uint32_t i = 0; i < sec->nranges && ok; i++)
            ok = push_range(rec, &cap, sec->ranges[i].first_query, sec->ranges[i].count);
        at += sec->nvalues;
    }
    rec->nvalues = at;
    for (uint32_t i = 0; i < rec->nops; i++) {
        gz_vk_label_op *op = &rec->ops[i];
        if (op->block && op->value != GZ_VK_NO_QUERY)
            op->value = ok ? offset[op->block - 1] + op->value : GZ_VK_NO_QUERY;
        op->block = 0;
        if (!ok && op->value != GZ_VK_NO_QUERY) {
            op->value = GZ_VK_NO_QUERY;
            op->untimed = GZ_VK_UNTIMED_POOL;
        }
    }
    free(offset);
    if (!ok) {
        /* Out of memory for the layout: the queries written must still be
         * reset before every execution, so keep what the ranges hold and
         * time nothing. */
        static int once;
        gz_log_once(&once, "out of memory for a command buffer's label layout; its labels are "
                           "not timed");
    }
    if (rec->nvalues > GZ_VK_MAX_EXEC_LABELS) {
        static int once;
        gz_log_once(&once, "a command buffer writes %u label timestamps in one execution (more "
                           "than %u); its labels are not timed",
                    rec->nvalues, GZ_VK_MAX_EXEC_LABELS);
        for (uint32_t i = 0; i < rec->nops; i++) {
            if (rec->ops[i].value != GZ_VK_NO_QUERY) {
                rec->ops[i].value = GZ_VK_NO_QUERY;
                rec->ops[i].untimed = GZ_VK_UNTIMED_TOO_MANY;
            }
        }
    }
}

/* An unnamed command buffer's zone is named after the first label it
 * records ("cmdbuf: Shadows"): what a user recognises. */
static void name_after_first_label(gz_vk_recording *rec)
{
    for (uint32_t i = 0; i < rec->nops; i++) {
        if (rec->ops[i].kind != LABEL_BEGIN)
            continue;
        size_t len;
        const char *label = gz_intern_str(rec->ops[i].name, &len);
        char name[128];
        int n = snprintf(name, sizeof name, "cmdbuf: %.*s", (int)(len > 100 ? 100 : len), label);
        rec->default_name = n > 0 ? gz_intern(name, (size_t)n < sizeof name ? (size_t)n : sizeof name - 1) : 0;
        return;
    }
}

void gz_vk_cmdbuf_end(gz_vk_cmdbuf *cb)
{
    gz_vk_recording *rec = cb->rec;
    if (rec) {
        finish_layout(rec);
        name_after_first_label(rec);
        __atomic_store_n(&rec->ended, true, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&cb->recording, false, __ATOMIC_RELEASE);
}

void gz_vk_cmdbuf_reset(gz_vk_cmdbuf *cb)
{
    __atomic_store_n(&cb->recording, false, __ATOMIC_RELEASE);
    gz_vk_recording_unref(cb->dev, cb->rec);
    cb->rec = NULL;
}

/* ---- the command buffers the layer tracks, by handle ------------------- */

/* VkCommandBuffer -> gz_vk_cmdbuf, for the layer's hooks and for the
 * explicit API's checks, which see only handles. */
static gz_handle_map cmdbufs = GZ_HANDLE_MAP_INITIALIZER; /* no once-check per lookup */

/* A pool's command buffers, so that destroying or resetting the pool
 * reaches them. The app synchronizes the calls on a pool (Vulkan's rule):
 * no lock. */
struct gz_vk_cmdpool {
    gz_vk_device *dev;
    uint32_t family;
    gz_vk_cmdbuf **cbs;
    uint32_t count, cap;
};

gz_vk_cmdpool *gz_vk_cmdpool_new(gz_vk_device *dev, uint32_t family)
{
    gz_vk_cmdpool *p = calloc(1, sizeof *p);
    if (p) {
        p->dev = dev;
        p->family = family;
    }
    return p;
}

static bool pool_add(gz_vk_cmdpool *pool, gz_vk_cmdbuf *cb)
{
    if (pool->count == pool->cap) {
        uint32_t cap = pool->cap ? pool->cap * 2 : 8;
        gz_vk_cmdbuf **cbs = realloc(pool->cbs, cap * sizeof *cbs);
        if (!cbs)
            return false;
        pool->cbs = cbs;
        pool->cap = cap;
    }
    cb->pool = pool;
    cb->pool_index = pool->count;
    pool->cbs[pool->count++] = cb;
    return true;
}

static void pool_remove(gz_vk_cmdbuf *cb)
{
    gz_vk_cmdpool *pool = cb->pool;
    gz_vk_cmdbuf *last = pool->cbs[--pool->count];
    pool->cbs[cb->pool_index] = last;
    last->pool_index = cb->pool_index;
}

static void cmdbuf_free(gz_vk_cmdbuf *cb)
{
    gz_vk_cmdbuf_reset(cb);
    free(cb);
}

void gz_vk_cmdpool_free(gz_vk_cmdpool *p)
{
    if (!p)
        return;
    /* Destroying a pool frees its command buffers. */
    for (uint32_t i = 0; i < p->count; i++) {
        gz_handle_map_remove_node(&cmdbufs, &p->cbs[i]->node);
        cmdbuf_free(p->cbs[i]);
    }
    free(p->cbs);
    free(p);
}

void gz_vk_cmdpool_reset(gz_vk_cmdpool *p)
{
    for (uint32_t i = 0; p && i < p->count; i++)
        gz_vk_cmdbuf_reset(p->cbs[i]);
}

void gz_vk_cmdbuf_new(gz_vk_cmdpool *p, VkCommandBuffer handle, bool secondary)
{
    gz_vk_cmdbuf *cb = calloc(1, sizeof *cb);
    if (!cb || !pool_add(p, cb)) {
        /* Untracked: its submissions are still timed, with a default name
         * and without labels. */
        free(cb);
        return;
    }
    cb->dev = p->dev;
    cb->handle = handle;
    cb->family = p->family;
    cb->secondary = secondary;
    gz_handle_node *old = gz_handle_map_put(&cmdbufs, GZ_HANDLE_KEY(handle), &cb->node);
    if (old) {
        /* A handle the app freed without telling us (its pool reset by the
         * driver's rules, or an untracked free): the stale record goes. */
        gz_vk_cmdbuf *stale = gz_container_of(old, gz_vk_cmdbuf, node);
        pool_remove(stale);
        cmdbuf_free(stale);
    }
}

void gz_vk_cmdbuf_free(VkCommandBuffer handle)
{
    gz_handle_node *n = handle ? gz_handle_map_remove(&cmdbufs, GZ_HANDLE_KEY(handle)) : NULL;
    if (!n)
        return;
    gz_vk_cmdbuf *cb = gz_container_of(n, gz_vk_cmdbuf, node);
    pool_remove(cb);
    cmdbuf_free(cb);
}

gz_vk_cmdbuf *gz_vk_cmdbuf_find(VkCommandBuffer handle)
{
    gz_handle_node *n = gz_handle_map_get(&cmdbufs, GZ_HANDLE_KEY(handle));
    return n ? gz_container_of(n, gz_vk_cmdbuf, node) : NULL;
}

int gz_vk_cmdbuf_recording(VkCommandBuffer handle)
{
    gz_vk_cmdbuf *cb = gz_vk_cmdbuf_find(handle);
    if (!cb)
        return -1;
    return __atomic_load_n(&cb->recording, __ATOMIC_ACQUIRE) ? 1 : 0;
}

/* ---- recording ---------------------------------------------------------- */

void gz_vk_cmdbuf_begin(gz_vk_cmdbuf *cb, VkCommandBufferUsageFlags flags)
{
    gz_vk_cmdbuf_reset(cb);
    cb->rec = recording_new(cb->dev, cb, flags);
    __atomic_store_n(&cb->recording, true, __ATOMIC_RELEASE);
}

void gz_vk_cmdbuf_set_name(gz_vk_cmdbuf *cb, const char *name)
{
    cb->name = name && *name ? gz_intern_cstr(name) : 0;
}

static gz_vk_label_op *push_op(gz_vk_recording *rec)
{
    if (rec->nops == rec->ops_cap) {
        uint32_t cap = rec->ops_cap ? rec->ops_cap * 2 : 16;
        gz_vk_label_op *ops = realloc(rec->ops, cap * sizeof *ops);
        if (!ops)
            return NULL;
        rec->ops = ops;
        rec->ops_cap = cap;
    }
    return &rec->ops[rec->nops++];
}

/* The query for the recording's next own label timestamp, or
 * GZ_VK_NO_QUERY when the label pool is exhausted. */
static uint32_t next_query(gz_vk_device *dev, gz_vk_recording *rec)
{
    uint32_t in_chunk = rec->own_queries % GZ_VK_LABEL_CHUNK;
    if (!in_chunk) {
        if (rec->nchunks == rec->chunks_cap) {
            uint32_t cap = rec->chunks_cap ? rec->chunks_cap * 2 : 2;
            uint32_t *chunks = realloc(rec->chunks, cap * sizeof *chunks);
            if (!chunks)
                return GZ_VK_NO_QUERY;
            rec->chunks = chunks;
            rec->chunks_cap = cap;
        }
        uint32_t chunk;
        if (!gz_vk_label_chunk_alloc(dev, &chunk))
            return GZ_VK_NO_QUERY;
        rec->chunks[rec->nchunks++] = chunk;
    }
    rec->own_queries++;
    return rec->chunks[rec->nchunks - 1] * GZ_VK_LABEL_CHUNK + in_chunk;
}

static void label_op(gz_vk_cmdbuf *cb, label_op_kind kind, uint32_t name)
{
    gz_vk_recording *rec = cb->rec;
    if (!rec || rec->ended)
        return; /* not recording: the app's error, the validation layer's to report */
    gz_vk_label_op *op = push_op(rec);
    if (!op)
        return;
    *op = (gz_vk_label_op){.kind = kind, .name = name, .value = GZ_VK_NO_QUERY,
                           .untimed = (uint16_t)rec->untimed};
    if (rec->untimed != GZ_VK_TIMED)
        return;
    uint32_t own = rec->own_queries;
    uint32_t query = next_query(cb->dev, rec);
    if (query == GZ_VK_NO_QUERY) {
        op->untimed = GZ_VK_UNTIMED_POOL;
        return;
    }
    op->value = own;
    /* Bottom of pipe for begins as well as ends: every label timestamp
     * then waits for the work recorded before it, so timestamps are
     * monotonic in recording order and sibling regions never overlap. */
    cb->dev->info.fns.CmdWriteTimestamp(cb->handle, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                                        gz_vk_label_pool(cb->dev, query), gz_vk_label_query(query));
}

void gz_vk_cmdbuf_label_begin(gz_vk_cmdbuf *cb, const char *name)
{
    label_op(cb, LABEL_BEGIN, gz_intern_cstr(name));
}

void gz_vk_cmdbuf_label_end(gz_vk_cmdbuf *cb)
{
    label_op(cb, LABEL_END, 0);
}

static bool add_secondary(gz_vk_recording *rec, gz_vk_recording *sec)
{
    if (rec->nsecs == rec->secs_cap) {
        uint32_t cap = rec->secs_cap ? rec->secs_cap * 2 : 4;
        gz_vk_recording **s = realloc(rec->secs, cap * sizeof *s);
        if (!s)
            return false;
        rec->secs = s;
        rec->secs_cap = cap;
    }
    gz_vk_recording_ref(sec);
    rec->secs[rec->nsecs++] = sec;
    return true;
}

void gz_vk_cmdbuf_execute(gz_vk_cmdbuf *primary, gz_vk_cmdbuf *const *secondaries, uint32_t n)
{
    gz_vk_recording *rec = primary->rec;
    if (!rec || rec->ended)
        return;
    for (uint32_t i = 0; i < n; i++) {
        gz_vk_recording *src = secondaries[i] ? secondaries[i]->rec : NULL;
        if (!src || !__atomic_load_n(&src->ended, __ATOMIC_ACQUIRE))
            continue; /* untracked, or executed before its end: the app's error */
        /* A secondary that wrote timestamps joins the primary's resets and
         * copies (even if its values cannot be used: its queries must be
         * reset before every execution). */
        uint32_t block = 0;
        if (src->nranges) {
            if (!add_secondary(rec, src)) {
                static int once;
                gz_log_once(&once, "out of memory for a secondary command buffer's labels; "
                                   "the primary's labels are not timed");
                rec->untimed = GZ_VK_UNTIMED_POOL;
                continue;
            }
            block = rec->nsecs;
        }
        for (uint32_t j = 0; j < src->nops; j++) {
            gz_vk_label_op *op = push_op(rec);
            if (!op)
                return;
            *op = src->ops[j];
            op->block = block;
            if (!block)
                op->value = GZ_VK_NO_QUERY;
        }
    }
}
