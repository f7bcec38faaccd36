/* Uses of a recording's queries: every execution of a recording (and of
 * each secondary it executes) writes the same queries, so each execution
 * is one use, and the next use may only start once the previous one's
 * values are out of the queries.
 *
 * The app may not submit a recording again while an earlier execution of
 * it is pending (only SIMULTANEOUS_USE ones may), so when a new use
 * begins, inside the app's vkQueueSubmit, the previous one has usually
 * completed: what the worker has not read of it yet is read there and kept
 * (a snapshot), and the queries are reset on the host for the new use.
 * That read is the only one an app's thread makes, and only for a command
 * buffer submitted again before the worker came by.
 *
 * Where the previous use may still be running (its values are not all
 * written, and nothing proves it complete), nothing is reset on the host
 * under it, and the previous use is lost (counted and said). A
 * SIMULTANEOUS_USE primary may do that: a command buffer of ours resets
 * the queries just before the new execution, in the queue's order, without
 * waiting for anything, and the new use is lost too (the previous one may
 * still write after that reset). Any other recording may not (the app's
 * error): the new use is kept only where the queue's order makes its
 * values its own.
 *
 * The worker reads a use from the queries under the lock a new use takes,
 * and only while no later use has begun; once one has, that use's begin
 * kept the values (a snapshot) or said they were lost. */
#include <stdlib.h>
#include <string.h>

#include "gz_vk_internal.h"

void gz_vk_use_unref(gz_vk_use *use)
{
    if (!use || use == &use->rec->first)
        return; /* the first use lives and dies with its recording */
    if (__atomic_sub_fetch(&use->refs, 1, __ATOMIC_ACQ_REL))
        return;
    free(use->snap);
    free(use);
}

/* Whether the layer can prove a use has completed: its queue's timeline
 * semaphore passed its value, or a wait of the app's saw its batch
 * complete, or its batch was read back (or never submitted). Resetting
 * queries a command buffer is still busy with breaks some drivers
 * (lavapipe). */
static bool use_complete(gz_vk_device *dev, const gz_vk_use *use, const gz_vk_queue *q,
                         uint64_t call)
{
    gz_vk_queue *pq = use->queue;
    if (pq == q && use->call == call)
        return false; /* twice in one call (the app's error): it has not even run */
    uint64_t v = 0;
    if (pq->timeline && !gz_vk_device_lost(dev) &&
        dev->info.fns.GetSemaphoreCounterValue(dev->info.device, pq->timeline, &v) == VK_SUCCESS &&
        v >= use->value)
        return true;
    bool done = true;
    pthread_mutex_lock(&pq->lock);
    for (uint32_t i = 0; pq->ring_ready && i < pq->log_count; i++) {
        const gz_vk_record *r = gz_vk_log_at(pq, i);
        if (r->kind == REC_BATCH && r->call == use->call) {
            done = r->done_ns != 0;
            break;
        }
    }
    pthread_mutex_unlock(&pq->lock);
    return done;
}

/* Under the use lock: the previous use is over; its values, if still in
 * the queries, are kept. Returns whether it has finished with the queries:
 * only then may they be reset. Its values all written prove it too (the
 * program may have waited in a way the layer does not see, a semaphore of
 * its own), but only when the use began on reset queries: otherwise they
 * may be an earlier use's. */
static bool settle(gz_vk_device *dev, gz_vk_use *prev, const gz_vk_queue *q, uint64_t call,
                   gz_vk_untimed lost_why)
{
    uint32_t state = __atomic_load_n(&prev->state, __ATOMIC_ACQUIRE);
    bool done = use_complete(dev, prev, q, call);
    /* Where the driver's host read waits for the whole device (lavapipe),
     * a SIMULTANEOUS_USE execution that may still run is not read here: the
     * program's thread would wait in its vkQueueSubmit for work that may
     * itself wait for the program (a semaphore it signals after this
     * call). Any other recording has completed, as Vulkan requires. */
    bool may_read = done || prev->copied || !dev->info.driver_reads_block ||
                    lost_why != GZ_VK_UNTIMED_OVERLAP;
    if ((done || prev->clean) && may_read && state == USE_PENDING) {
        gz_vk_recording *rec = prev->rec;
        if (!prev->snap)
            prev->snap = malloc(rec->set.nvalues * sizeof *prev->snap);
        bool lost = false;
        if (prev->snap && gz_vk_qset_read(dev, &rec->set, prev->copied, prev->snap, &lost)) {
            state = USE_SNAPSHOT;
            done = done || !(prev->queue == q && prev->call == call);
        }
    }
    if (state == USE_PENDING) {
        state = USE_LOST;
        prev->lost_why = (uint8_t)lost_why;
    }
    __atomic_store_n(&prev->state, state, __ATOMIC_RELEASE);
    return done;
}

gz_vk_use *gz_vk_use_begin(gz_vk_queue *q, gz_vk_recording *rec, uint64_t call, bool simultaneous)
{
    if (!rec->set.nvalues)
        return NULL;
    gz_vk_device *dev = rec->dev;
    pthread_mutex_lock(&dev->use_lock);
    uint32_t index = __atomic_load_n(&rec->uses, __ATOMIC_RELAXED);
    gz_vk_use *prev = rec->last;
    bool reset = index > 0, unordered = false, gpu_reset = false;
    gz_vk_untimed why = simultaneous ? GZ_VK_UNTIMED_OVERLAP : GZ_VK_UNTIMED_REUSED;
    if (prev) {
        reset = settle(dev, prev, q, call, why);
        /* Not reset under a use still running. A SIMULTANEOUS_USE one gets
         * a reset of ours in the queue just before it; otherwise this
         * one's values follow the previous use's in the queue's order, or,
         * on another queue, may mix with them. */
        gpu_reset = !reset && simultaneous;
        unordered = !reset && (simultaneous || prev->queue != q);
        rec->last = NULL;
        gz_vk_use_unref(prev);
    }
    gz_vk_use *use = index ? calloc(1, sizeof *use) : &rec->first;
    /* Published after the previous use's state: a worker that sees this
     * count knows that state is final. */
    __atomic_store_n(&rec->uses, index + 1, __ATOMIC_SEQ_CST);
    if (use) {
        *use = (gz_vk_use){.rec = rec, .refs = 2, .index = index, .queue = q, .call = call,
                           .value = q->timeline_next, .clean = index == 0 || reset,
                           .gpu_reset = gpu_reset, .lost_why = (uint8_t)why,
                           .state = unordered ? USE_LOST : USE_PENDING};
        rec->last = use;
    }
    /* The queries come reset for a first use. Later ones are reset here
     * on devices that can (the previous use has completed), else by a
     * command buffer of ours just before the execution; either way their
     * copies are marked unwritten. Under the lock the worker reads them
     * with. */
    if (reset && dev->info.host_query_reset)
        gz_vk_qset_reset_host(dev, &rec->set);
    else if (reset)
        gz_vk_qset_clear_copies(dev, &rec->set);
    pthread_mutex_unlock(&dev->use_lock);
    if (!use) {
        static int once;
        gz_log_once(&once, "out of memory for a command buffer execution's labels; they are "
                           "not timed");
    }
    return use;
}

use_read gz_vk_use_read(gz_vk_use *use, uint64_t *values, bool *lost)
{
    gz_vk_recording *rec = use->rec;
    uint32_t n = rec->set.nvalues;
    uint32_t state = __atomic_load_n(&use->state, __ATOMIC_ACQUIRE);
    bool ok = false;
    if (state == USE_PENDING) {
        /* Read under the lock a new use's reset takes: no driver sees the
         * queries read and reset at once, and no later use can begin
         * between the read and the check that none has. */
        pthread_mutex_lock(&rec->dev->use_lock);
        ok = gz_vk_qset_read(rec->dev, &rec->set, use->copied, values, lost);
        bool latest = __atomic_load_n(&rec->uses, __ATOMIC_ACQUIRE) <= use->index + 1;
        pthread_mutex_unlock(&rec->dev->use_lock);
        if (latest)
            return ok ? USE_READ_OK : USE_READ_NOT_READY;
        /* A later use began: it settled this one before it reset anything. */
        state = __atomic_load_n(&use->state, __ATOMIC_ACQUIRE);
    }
    if (state == USE_SNAPSHOT) {
        memcpy(values, use->snap, n * sizeof *values);
        return USE_READ_OK;
    }
    return USE_READ_LOST;
}
