/* Command buffer recordings: which debug labels a recording begins and ends,
 * and the timestamp queries written for them inside the app's commands. */
#include <stdlib.h>
#include <string.h>

#include "gz_vk_internal.h"

static gz_vk_recording *recording_new(gz_vk_device *dev, gz_vk_cmdbuf *cb,
                                      VkCommandBufferUsageFlags flags)
{
    gz_vk_recording *rec = calloc(1, sizeof *rec);
    if (!rec)
        return NULL;
    rec->refs = 1;
    /* Label timestamps need: the labels level, host query reset (to reset
     * them before each execution without recording commands), a queue
     * family with timestamps, and one execution at a time (the queries are
     * shared by every execution of the recording). Secondaries are
     * executed inside other recordings, so their labels are only
     * structure. Untimed labels give no zones; they are never wrong. */
    rec->timed = dev->level >= GZ_LEVEL_LABELS && !cb->secondary &&
                 !(flags & VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT) &&
                 cb->family < dev->info.family_count && dev->valid_bits[cb->family] &&
                 dev->labels_ready;
    return rec;
}

void gz_vk_recording_unref(gz_vk_device *dev, gz_vk_recording *rec)
{
    if (!rec || __atomic_sub_fetch(&rec->refs, 1, __ATOMIC_ACQ_REL))
        return;
    for (uint32_t i = 0; i < rec->nchunks; i++)
        gz_vk_label_chunk_free(dev, rec->chunks[i]);
    free(rec->chunks);
    free(rec->ops);
    free(rec);
}

void gz_vk_recording_reset_queries(gz_vk_device *dev, gz_vk_recording *rec)
{
    /* Only the queries the recording writes (a whole chunk but the last):
     * the rest are never written, copied or read, and a host reset is not
     * free (lavapipe frees a query object per query; measured in bench/). */
    for (uint32_t i = 0; i < rec->nchunks; i++) {
        uint32_t count = gz_vk_recording_chunk_used(rec, i);
        if (!count)
            continue;
        dev->info.fns.ResetQueryPool(dev->info.device, dev->label_pool,
                                     rec->chunks[i] * GZ_VK_LABEL_CHUNK, count);
        gz_vk_hostbuf_clear(&dev->label_results, rec->chunks[i] * GZ_VK_LABEL_CHUNK, count);
    }
}

void gz_vk_cmdbuf_end(gz_vk_cmdbuf *cb)
{
    __atomic_store_n(&cb->recording, false, __ATOMIC_RELEASE);
    gz_vk_recording *rec = cb->rec;
    if (!rec || !rec->timed || !rec->nchunks)
        return;
    /* The recording is complete: copy its label timestamps out at the end
     * of every execution, so that reading them back is a memory read. */
    for (uint32_t c = 0; c < rec->nchunks; c++) {
        uint32_t count = gz_vk_recording_chunk_used(rec, c);
        uint32_t first = rec->chunks[c] * GZ_VK_LABEL_CHUNK;
        gz_vk_cmd_copy_results(&cb->dev->info.fns, cb->handle, cb->dev->label_pool, first, count,
                               &cb->dev->label_results, first);
    }
}

gz_vk_cmdbuf *gz_vk_cmdbuf_new(gz_vk_device *dev, VkCommandBuffer handle, uint32_t family,
                               bool secondary)
{
    gz_vk_cmdbuf *cb = calloc(1, sizeof *cb);
    if (!cb)
        return NULL;
    cb->dev = dev;
    cb->handle = handle;
    cb->family = family;
    cb->secondary = secondary;
    return cb;
}

void gz_vk_cmdbuf_reset(gz_vk_cmdbuf *cb)
{
    __atomic_store_n(&cb->recording, false, __ATOMIC_RELEASE);
    gz_vk_recording_unref(cb->dev, cb->rec);
    cb->rec = NULL;
}

void gz_vk_cmdbuf_free(gz_vk_cmdbuf *cb)
{
    if (!cb)
        return;
    gz_vk_cmdbuf_reset(cb);
    free(cb);
}

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

/* A query for the next label timestamp of the recording, or GZ_VK_NO_QUERY
 * when the label pool is exhausted (that zone is then counted as dropped). */
static uint32_t next_query(gz_vk_device *dev, gz_vk_recording *rec)
{
    if (!rec->nchunks || rec->used_in_chunk == GZ_VK_LABEL_CHUNK) {
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
        rec->used_in_chunk = 0;
    }
    return rec->chunks[rec->nchunks - 1] * GZ_VK_LABEL_CHUNK + rec->used_in_chunk++;
}

static void label_op(gz_vk_cmdbuf *cb, label_op_kind kind, uint32_t name)
{
    gz_vk_recording *rec = cb->rec;
    if (!rec)
        return; /* not recording: the app's error, the validation layer's to report */
    gz_vk_label_op *op = push_op(rec);
    if (!op)
        return;
    *op = (gz_vk_label_op){.kind = kind, .name = name, .query = GZ_VK_NO_QUERY};
    if (rec->timed) {
        op->query = next_query(cb->dev, rec);
        /* Bottom of pipe for begins as well as ends: every label timestamp
         * then waits for the work recorded before it, so timestamps are
         * monotonic in recording order and sibling regions never overlap. */
        if (op->query != GZ_VK_NO_QUERY)
            cb->dev->info.fns.CmdWriteTimestamp(cb->handle, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                                                cb->dev->label_pool, op->query);
    }
}

void gz_vk_cmdbuf_label_begin(gz_vk_cmdbuf *cb, const char *name)
{
    label_op(cb, LABEL_BEGIN, gz_intern_cstr(name));
}

void gz_vk_cmdbuf_label_end(gz_vk_cmdbuf *cb)
{
    label_op(cb, LABEL_END, 0);
}

void gz_vk_cmdbuf_execute(gz_vk_cmdbuf *primary, gz_vk_cmdbuf *const *secondaries, uint32_t n)
{
    if (!primary->rec)
        return;
    for (uint32_t i = 0; i < n; i++) {
        const gz_vk_recording *src = secondaries[i] ? secondaries[i]->rec : NULL;
        for (uint32_t j = 0; src && j < src->nops; j++) {
            gz_vk_label_op *op = push_op(primary->rec);
            if (!op)
                return;
            *op = src->ops[j];
            op->query = GZ_VK_NO_QUERY;
            op->untimed = 1; /* structure only: not a lost zone */
        }
    }
}
