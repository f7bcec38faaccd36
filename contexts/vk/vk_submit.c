/* Submission, on the app's thread inside its vkQueueSubmit*: what must
 * happen there and nothing more. For each batch: a use begins for each
 * recording it runs (the queries made ready for it, vk_uses.c), bracket
 * slots go where a recording cannot time itself, and one record describing
 * the batch goes on the queue's log. The layer then adds the queue's
 * timeline signal to the call and calls down. Reading results, clock
 * bounds and zones are the worker's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_vk_internal.h"

/* Whether the queue has nothing in flight as far as the layer knows
 * (for sync points, which only an idle queue runs at once). */
static bool queue_idle(gz_vk_queue *q)
{
    gz_vk_device *dev = q->dev;
    if (q->timeline) {
        uint64_t v = 0;
        return dev->info.fns.GetSemaphoreCounterValue(dev->info.device, q->timeline, &v) ==
                   VK_SUCCESS &&
               v + 1 >= q->timeline_next;
    }
    pthread_mutex_lock(&q->lock);
    bool idle = !q->log_count;
    pthread_mutex_unlock(&q->lock);
    return idle;
}

gz_vk_submit *gz_vk_submit_begin(gz_vk_queue *q, uint32_t call_name, VkFence fence)
{
    if (!q || !q->track || gz_vk_device_lost(q->dev))
        return NULL;
    pthread_mutex_lock(&q->lock);
    bool ready = gz_vk_queue_ready(q);
    pthread_mutex_unlock(&q->lock);
    if (!ready)
        return NULL;
    if (!gz_vk_can_calibrate(q->dev) && q->mode == GZ_VK_QUEUE_COPY)
        gz_vk_sync_maybe(q, queue_idle(q), fence);
    gz_vk_submit *s = &q->submit;
    *s = (gz_vk_submit){.q = q,
                        .name = call_name,
                        .fence = fence,
                        .submit_ns = gz_host_now_ns(),
                        .call = ++q->call_seq};
    return s;
}

/* The zone name of a command buffer execution: its debug name, else its
 * recording's first label, else its place in the batch. Interned once per
 * name, so names do not pile up with every command buffer ever allocated. */
static uint32_t cmdbuf_name(gz_vk_cmdbuf *cb, gz_vk_recording *rec, uint32_t j)
{
    if (cb && cb->name)
        return cb->name;
    if (rec && rec->default_name)
        return rec->default_name;
    static uint32_t by_place[16];
    uint32_t k = j < 16 ? j : 15;
    uint32_t id = __atomic_load_n(&by_place[k], __ATOMIC_RELAXED);
    if (!id) {
        char name[32];
        snprintf(name, sizeof name, k < 15 ? "cmdbuf #%u" : "cmdbuf #15+", k);
        id = gz_intern_cstr(name);
        __atomic_store_n(&by_place[k], id, __ATOMIC_RELAXED);
    }
    return id;
}

/* Per-call scratch, on the stack for common sizes. */
typedef struct scratch {
    void *heap;
    unsigned char stack[4096];
} scratch;

static void *scratch_get(scratch *s, size_t size)
{
    s->heap = NULL;
    if (size <= sizeof s->stack)
        return s->stack;
    return s->heap = malloc(size);
}

static uint32_t pass_untimed(gz_vk_queue *q, const VkCommandBuffer *app, uint32_t n,
                             VkCommandBuffer *out, bool per_cmdbuf, const char *why)
{
    static int once;
    gz_log_once(&once, "%s; some submissions are not timed (counted as dropped)", why);
    gz_count_dropped_zones(q->track, per_cmdbuf ? 1 + n : 1);
    if (n)
        memcpy(out, app, n * sizeof *out);
    return n;
}

/* The recording a submission of cb runs: NULL when untracked or not ended
 * (the app's error: the validation layer's to report). */
static gz_vk_recording *recording_of(gz_vk_cmdbuf *cb)
{
    gz_vk_recording *rec = cb ? cb->rec : NULL;
    return rec && __atomic_load_n(&rec->ended, __ATOMIC_ACQUIRE) ? rec : NULL;
}

static bool has_values(const gz_vk_recording *rec)
{
    return rec && rec->nvalues;
}

/* The batch as submitted, from out[at] on: each of the app's command
 * buffers with the slot before it, the last slot, and the resets that go
 * just before a command buffer (or before the chain of render pass pieces
 * it is in, where nothing may go between). Returns the count. */
static uint32_t lay_out(gz_vk_queue *q, const VkCommandBuffer *app, gz_vk_cmdbuf *const *cbs,
                        uint32_t n, const VkCommandBuffer *slot_cbs, const bool *chained,
                        const bool *gpu_reset, VkCommandBuffer *out, uint32_t at)
{
    for (uint32_t j = 0; j < n; j++) {
        for (uint32_t k = j; !chained[j] && k < n && (k == j || chained[k]); k++) {
            VkCommandBuffer cb = gpu_reset[k] ? gz_vk_reset_cb(q, recording_of(cbs[k]))
                                              : VK_NULL_HANDLE;
            if (cb)
                out[at++] = cb;
        }
        if (slot_cbs[j])
            out[at++] = slot_cbs[j];
        out[at++] = app[j];
    }
    if (slot_cbs[n])
        out[at++] = slot_cbs[n];
    return at;
}

uint32_t gz_vk_submit_batch(gz_vk_submit *s, uint32_t batch, const VkCommandBuffer *app,
                            gz_vk_cmdbuf *const *cbs, uint32_t n, VkCommandBuffer *out)
{
    gz_vk_queue *q = s->q;
    gz_vk_device *dev = q->dev;
    bool per_cmdbuf = dev->level >= GZ_LEVEL_CMDBUF;
    if (!n)
        return 0;
    /* The batch's command buffers as the worker will read them: each
     * primary, followed by the secondaries it executes that write values. */
    uint32_t nexecs = 0;
    for (uint32_t j = 0; j < n; j++) {
        gz_vk_recording *rec = per_cmdbuf ? recording_of(cbs[j]) : NULL;
        nexecs += 1 + (rec ? rec->nsecs : 0);
    }
    if (!per_cmdbuf)
        nexecs = 1; /* one pseudo command buffer: the batch */
    scratch mem;
    gz_vk_exec *execs = scratch_get(&mem, nexecs * sizeof *execs +
                                              (n + 1) * (sizeof(VkCommandBuffer) +
                                                         sizeof(uint32_t) + 4 * sizeof(bool)));
    if (!execs)
        return pass_untimed(q, app, n, out, per_cmdbuf, "out of memory for a submission");
    VkCommandBuffer *slot_cbs = (VkCommandBuffer *)(execs + nexecs);
    uint32_t *slots = (uint32_t *)(slot_cbs + n + 1);
    bool *needs_slot = (bool *)(slots + n + 1);
    bool *gets_reset = needs_slot + n + 1;
    bool *chained = gets_reset + n + 1;
    bool *gpu_reset = chained + n + 1;
    memset(needs_slot, 0, 4 * (n + 1) * sizeof *needs_slot);

    /* Uses begin (queries made ready), and where a recording has no begin
     * or end of its own a slot goes: before command buffer j when it has
     * no begin, after it when it has no end, never between a command buffer
     * that suspends a render pass and the one that resumes it. */
    uint32_t k = 0;
    const gz_vk_recording *prev = NULL;
    for (uint32_t j = 0; per_cmdbuf && j < n; j++) {
        gz_vk_recording *rec = recording_of(cbs[j]);
        gz_vk_exec *e = &execs[k++];
        *e = (gz_vk_exec){.kind = EXEC_PRIMARY, .name = cmdbuf_name(cbs[j], rec, j),
                          .slot = GZ_VK_NO_SLOT, .rec = rec};
        if (rec) {
            gz_vk_recording_ref(rec);
            e->use = gz_vk_use_begin(q, rec, s->call, rec->simultaneous);
            if (e->use) {
                e->use->copied = rec->copied;
                gpu_reset[j] = e->use->gpu_reset;
            }
            for (uint32_t i = 0; i < rec->nsecs; i++) {
                gz_vk_recording *sec = rec->secs[i];
                gz_vk_recording_ref(sec);
                gz_vk_use *use = gz_vk_use_begin(q, sec, s->call, rec->simultaneous);
                if (use) {
                    use->copied = rec->copied;
                    gpu_reset[j] |= use->gpu_reset;
                }
                execs[k++] = (gz_vk_exec){.kind = EXEC_SECONDARY, .slot = GZ_VK_NO_SLOT,
                                          .rec = sec, .use = use};
            }
            gets_reset[j] = has_values(rec) && !dev->info.host_query_reset && !gpu_reset[j];
        }
        bool begins = rec && rec->begin_value != GZ_VK_NO_QUERY;
        bool prev_ends = prev && prev->end_value != GZ_VK_NO_QUERY;
        chained[j] = prev && prev->suspended && rec && rec->resumes;
        needs_slot[j] = !chained[j] && (!begins || (j > 0 && !prev_ends));
        prev = rec;
    }
    if (per_cmdbuf)
        needs_slot[n] = !(prev && prev->end_value != GZ_VK_NO_QUERY);
    else
        needs_slot[0] = needs_slot[n] = true;
    if (!per_cmdbuf)
        execs[k++] = (gz_vk_exec){.kind = EXEC_PRIMARY, .slot = GZ_VK_NO_SLOT};

    /* Without host query reset, the queries of each execution are reset by
     * a command buffer of ours first: at the head of the batch, where it
     * can never fall inside a suspended render pass. A SIMULTANEOUS_USE
     * execution whose previous one may still run gets its reset just
     * before it instead (an earlier execution of it may be in this batch),
     * or before the chain of render pass pieces it is in. */
    uint32_t at = 0;
    for (uint32_t j = 0; j < n; j++) {
        VkCommandBuffer cb = gets_reset[j] || gpu_reset[j]
                                 ? gz_vk_reset_cb(q, recording_of(cbs[j]))
                                 : VK_NULL_HANDLE;
        if (cb && gets_reset[j])
            out[at++] = cb;
        gpu_reset[j] = cb && gpu_reset[j];
    }

    pthread_mutex_lock(&q->lock);
    for (uint32_t j = 0; j <= n; j++) {
        slots[j] = needs_slot[j] ? gz_vk_slot_take(q) : GZ_VK_NO_SLOT;
        slot_cbs[j] = slots[j] != GZ_VK_NO_SLOT ? q->slots.cbs[slots[j]] : VK_NULL_HANDLE;
    }
    /* Slots, primaries in order. */
    for (uint32_t j = 0, x = 0; j < n && x < nexecs; x++) {
        if (execs[x].kind != EXEC_PRIMARY)
            continue;
        execs[x].slot = slots[per_cmdbuf ? j : 0];
        j++;
        if (!per_cmdbuf)
            break;
    }
    gz_vk_record *r = NULL;
    uint32_t first_exec;
    if (gz_vk_execs_push(q, execs, nexecs, &first_exec)) {
        r = gz_vk_log_push(q);
        if (!r)
            q->exec_count -= nexecs;
    }
    if (r) {
        *r = (gz_vk_record){.kind = REC_BATCH,
                            .name = s->name,
                            .batch = batch,
                            .cmdbufs = n,
                            .first_exec = first_exec,
                            .nexecs = nexecs,
                            .end_slot = slots[n],
                            .flow = gz_flow_next(),
                            .submit_ns = s->submit_ns,
                            .value = q->timeline_next,
                            .fence = s->fence,
                            .call = s->call};
        s->nrecords++;
    } else {
        for (uint32_t j = 0; j <= n; j++)
            gz_vk_slot_give(q, slots[j]);
    }
    pthread_mutex_unlock(&q->lock);
    if (!r) {
        for (uint32_t x = 0; x < nexecs; x++) {
            gz_vk_use_unref(execs[x].use);
            gz_vk_recording_unref(execs[x].rec);
        }
        free(mem.heap);
        /* The resets stay: they make the queries valid to write. */
        memset(slot_cbs, 0, (n + 1) * sizeof *slot_cbs);
        at = lay_out(q, app, cbs, n, slot_cbs, chained, gpu_reset, out, at);
        free(mem.heap);
        static int once;
        gz_log_once(&once, "out of memory for a submission's record; some submissions are not "
                           "timed (counted as dropped)");
        gz_count_dropped_zones(q->track, per_cmdbuf ? 1 + n : 1);
        return at;
    }
    at = lay_out(q, app, cbs, n, slot_cbs, chained, gpu_reset, out, at);
    free(mem.heap);
    return at;
}

void gz_vk_submit_untouched(gz_vk_submit *s, uint32_t n, bool protected_batch)
{
    gz_vk_device *dev = s->q->dev;
    uint64_t zones = dev->level >= GZ_LEVEL_CMDBUF ? 1 + n : 1;
    gz_vk_count_untimed(dev, UNTIMED_CMDBUFS,
                        protected_batch ? GZ_VK_UNTIMED_PROTECTED : GZ_VK_UNTIMED_DEVICE_GROUP,
                        zones);
    gz_count_dropped_zones(s->q->track, zones);
}

bool gz_vk_submit_timeline(gz_vk_submit *s, VkSemaphore *semaphore, uint64_t *value)
{
    gz_vk_queue *q = s->q;
    if (!q->timeline || !s->nrecords)
        return false;
    *semaphore = q->timeline;
    *value = s->value = q->timeline_next;
    return true;
}

void gz_vk_submit_end(gz_vk_submit *s, VkResult result)
{
    gz_vk_queue *q = s->q;
    /* What a failed call leaves to release, after the lock. */
    gz_vk_exec *drop = NULL;
    uint32_t ndrop = 0;
    pthread_mutex_lock(&q->lock);
    if (result == VK_SUCCESS && s->value)
        q->timeline_next = s->value + 1;
    /* This call's records are the newest but for queue labels that a
     * callback re-entering us during the call down may have logged after
     * them: found from the tail. None is submitted yet, so the worker has
     * read nothing from the first of them on. */
    uint32_t found = 0, first_failed = q->log_count;
    for (uint32_t i = q->log_count; found < s->nrecords && i-- > 0;) {
        gz_vk_record *r = gz_vk_log_at(q, i);
        if (r->kind != REC_BATCH || r->call != s->call)
            continue;
        found++;
        if (result == VK_SUCCESS) {
            r->submitted = true;
            gz_flow_out(r->flow, s->submit_ns);
            continue;
        }
        /* Nothing was submitted: forgotten. Its execs are the ring's
         * newest, taken back from the tail. */
        gz_vk_exec *more = realloc(drop, (ndrop + r->nexecs) * sizeof *more);
        if (more) {
            drop = more;
            for (uint32_t x = 0; x < r->nexecs; x++)
                drop[ndrop++] = q->execs[(r->first_exec + x) % q->exec_cap];
        }
        gz_vk_record_release(q, r);
        r->call = UINT64_MAX;
        first_failed = i;
    }
    if (result != VK_SUCCESS) {
        uint32_t kept = 0;
        for (uint32_t i = 0; i < q->log_count; i++)
            if (gz_vk_log_at(q, i)->call != UINT64_MAX)
                *gz_vk_log_at(q, kept++) = *gz_vk_log_at(q, i);
        q->log_count = kept;
        if (q->log_done > first_failed)
            q->log_done = first_failed;
    }
    pthread_mutex_unlock(&q->lock);
    for (uint32_t x = 0; x < ndrop; x++) {
        gz_vk_use_unref(drop[x].use);
        gz_vk_recording_unref(drop[x].rec);
    }
    free(drop);
    if (result == VK_ERROR_DEVICE_LOST && !gz_vk_device_lost(q->dev)) {
        gz_vk_device_set_lost(q->dev);
        gz_log("%s was lost; timing stops for this device", q->dev->info.device_name);
    }
}
