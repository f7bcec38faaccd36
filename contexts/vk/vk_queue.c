/* A queue's timeline: the log of its submissions in order, with the
 * command buffers of each batch in a ring beside it, and the readback loop
 * that turns completed batches into zones (vk_harvest.c).
 *
 * The app's thread puts a batch's record on the log under the queue's lock,
 * briefly, as not yet submitted, calls down without any lock, then marks it
 * submitted (or takes it back when the call failed). The worker reads
 * records in order, each once it is submitted and its work has completed:
 * the queue's timeline semaphore has reached the record's value, or a wait
 * of the app's saw it complete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_calibration.h"
#include "gz_vk_internal.h"

#define LOG_MAX (1u << 20)

static void default_name(const gz_vk_queue *q, char *out, size_t size)
{
    const gz_vk_device_info *info = &q->dev->info;
    /* "llvmpipe (LLVM 15.0.6, 256 bits)" → "llvmpipe": the details are in
     * the device, the track needs a short readable name. */
    int len = (int)strcspn(info->device_name, "(");
    while (len > 0 && info->device_name[len - 1] == ' ')
        len--;
    char serial[16] = "";
    if (info->serial > 1)
        snprintf(serial, sizeof serial, " #%u", info->serial);
    snprintf(out, size, "VkQueue %u.%u %.*s%s", q->family, q->index, len, info->device_name,
             serial);
}

gz_vk_queue *gz_vk_queue_new(gz_vk_device *dev, VkQueue handle, uint32_t family, uint32_t index)
{
    gz_vk_queue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->dev = dev;
    q->handle = handle;
    q->family = family;
    q->index = index;
    q->valid_bits = family < dev->info.family_count ? dev->valid_bits[family] : 0;
    q->mode = gz_vk_family_mode(dev, family);
    q->readback = gz_vk_family_readback(dev, family);
    pthread_mutex_init(&q->lock, NULL);
    if (q->mode == GZ_VK_QUEUE_UNTIMED) {
        /* Called under the device lock (gz_vk_queue_get): one message per
         * device and family. */
        uint64_t bit = family < 64 ? 1ull << family : 0;
        if (!(dev->families_warned & bit)) {
            if (!q->valid_bits)
                gz_log("queue family %u of %s has no timestamps (timestampValidBits = 0): its "
                       "queues get no zones",
                       family, dev->info.device_name);
            else
                gz_log("queue family %u of %s can only write timestamps (a transfer queue) and "
                       "the device has no host query reset to reuse them: its queues get no "
                       "zones",
                       family, dev->info.device_name);
        }
        dev->families_warned |= bit;
        return q;
    }
    default_name(q, q->name, sizeof q->name);
    q->track = gz_track_new_on_device(GZ_API_VULKAN, q->name, dev->info.device_name,
                                      dev->info.timestamp_period, q->valid_bits, 0);
    gz_vk_calibrate_track(dev, q->track);
    if (gz_client_verbose())
        gz_log("%s: %s; completion from %s; queries reset %s", q->name,
               q->readback == GZ_VK_READ_COPY
                   ? "results copied to host memory by the GPU at each command buffer's end "
                     "(the driver's host read waits for the whole device)"
                   : "results read on the host (vkGetQueryPoolResults, no wait)",
               dev->info.timeline ? "the layer's timeline semaphore" : "the app's waits and the "
                                                                       "results themselves",
               dev->info.host_query_reset ? "on the host" : "by command buffers of the layer's");
    return q;
}

static void frame_track_name(const gz_vk_queue *q, char *out, size_t size)
{
    snprintf(out, size, "%s frames", q->name);
}

void gz_vk_queue_set_name(gz_vk_queue *q, const char *name)
{
    if (!q || !q->track || !name || !*name)
        return;
    pthread_mutex_lock(&q->lock);
    snprintf(q->name, sizeof q->name, "%s", name);
    gz_track_set_name(q->track, q->name);
    if (q->label_track) {
        char label_name[sizeof q->name + 8];
        snprintf(label_name, sizeof label_name, "%s labels", q->name);
        gz_track_set_name(q->label_track, label_name);
    }
    if (q->passes_track) {
        char passes_name[sizeof q->name + 8];
        snprintf(passes_name, sizeof passes_name, "%s passes", q->name);
        gz_track_set_name(q->passes_track, passes_name);
    }
    if (q->frame_track) {
        char frame_name[sizeof q->name + 8];
        frame_track_name(q, frame_name, sizeof frame_name);
        gz_track_set_name(q->frame_track, frame_name);
    }
    pthread_mutex_unlock(&q->lock);
}

/* The queue's timeline semaphore (where the device has them): the app's
 * submissions signal it, the worker reads how far it got. */
static VkSemaphore timeline_create(gz_vk_device *dev)
{
    const gz_vk_fns *f = &dev->info.fns;
    if (!dev->info.timeline || !f->CreateSemaphore || !f->GetSemaphoreCounterValue)
        return VK_NULL_HANDLE;
    VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                      .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
    VkSemaphore s;
    return f->CreateSemaphore(dev->info.device, &info, NULL, &s) == VK_SUCCESS ? s
                                                                              : VK_NULL_HANDLE;
}

bool gz_vk_queue_ready(gz_vk_queue *q)
{
    if (!q->ring_ready && !q->ring_failed) {
        q->log_cap = 256;
        q->log = calloc(q->log_cap, sizeof *q->log);
        q->exec_cap = 1024;
        q->execs = calloc(q->exec_cap, sizeof *q->execs);
        q->ring_ready = q->log && q->execs && gz_vk_brackets_init(q);
        q->ring_failed = !q->ring_ready;
        if (q->ring_failed) {
            free(q->log);
            free(q->execs);
            q->log = NULL;
            q->execs = NULL;
            gz_log("cannot create the layer's command pool for queue %u.%u of %s: it is not "
                   "timed",
                   q->family, q->index, q->dev->info.device_name);
        } else {
            q->timeline = timeline_create(q->dev);
            q->timeline_next = 1;
        }
    }
    return q->ring_ready;
}

/* A record at the log's tail (kept in order when the log grows). */
gz_vk_record *gz_vk_log_push(gz_vk_queue *q)
{
    if (q->log_count == q->log_cap) {
        uint32_t cap = q->log_cap * 2;
        gz_vk_record *log = cap <= LOG_MAX ? malloc(cap * sizeof *log) : NULL;
        if (!log)
            return NULL;
        for (uint32_t i = 0; i < q->log_count; i++)
            log[i] = q->log[(q->log_head + i) % q->log_cap];
        free(q->log);
        q->log = log;
        q->log_cap = cap;
        q->log_head = 0;
    }
    gz_vk_record *r = &q->log[(q->log_head + q->log_count++) % q->log_cap];
    memset(r, 0, sizeof *r);
    r->end_slot = GZ_VK_NO_SLOT;
    return r;
}

gz_vk_record *gz_vk_log_at(gz_vk_queue *q, uint32_t i)
{
    return &q->log[(q->log_head + i) % q->log_cap];
}

/* Execs are numbered from exec_head on; entry k lives at k % exec_cap. */
bool gz_vk_execs_push(gz_vk_queue *q, const gz_vk_exec *execs, uint32_t n, uint32_t *first)
{
    if (q->exec_count + n > q->exec_cap) {
        uint32_t cap = q->exec_cap;
        while (cap < q->exec_count + n)
            cap *= 2;
        if (cap > LOG_MAX * 4)
            return false;
        gz_vk_exec *ring = malloc(cap * sizeof *ring);
        if (!ring)
            return false;
        for (uint32_t i = 0; i < q->exec_count; i++) {
            uint32_t k = q->exec_head + i;
            ring[k % cap] = q->execs[k % q->exec_cap];
        }
        free(q->execs);
        q->execs = ring;
        q->exec_cap = cap;
    }
    *first = q->exec_head + q->exec_count;
    for (uint32_t i = 0; i < n; i++)
        q->execs[(*first + i) % q->exec_cap] = execs[i];
    q->exec_count += n;
    return true;
}

static void queue_label(gz_vk_queue *q, record_kind kind, const char *name)
{
    if (!q || !q->track || (kind != REC_FRAME && q->dev->level < GZ_LEVEL_LABELS))
        return;
    uint32_t id = kind == REC_QLABEL_BEGIN ? gz_intern_cstr(name) : 0;
    pthread_mutex_lock(&q->lock);
    gz_vk_record *r = gz_vk_queue_ready(q) ? gz_vk_log_push(q) : NULL;
    if (r) {
        r->kind = (uint8_t)kind;
        r->name = id;
        r->submitted = true; /* nothing to wait for: it is read in its place */
    }
    pthread_mutex_unlock(&q->lock);
    if (!r) {
        static int once;
        gz_log_once(&once, "out of memory for a queue label; it is not timed");
    }
}

void gz_vk_queue_label_begin(gz_vk_queue *q, const char *name)
{
    queue_label(q, REC_QLABEL_BEGIN, name);
}

void gz_vk_queue_label_end(gz_vk_queue *q)
{
    queue_label(q, REC_QLABEL_END, NULL);
}

void gz_vk_queue_present(gz_vk_queue *q)
{
    static uint32_t frame_name;
    gz_frame_mark(gz_intern_once(&frame_name, "frame"));
    if (!q || !q->track)
        return;
    pthread_mutex_lock(&q->lock);
    if (!q->frame_track) {
        char name[sizeof q->name + 8];
        frame_track_name(q, name, sizeof name);
        q->frame_track = gz_track_new(GZ_API_VULKAN, name, q->dev->info.timestamp_period,
                                      q->valid_bits, q->track);
    }
    pthread_mutex_unlock(&q->lock);
    queue_label(q, REC_FRAME, NULL);
}

/* Drops the references a batch's command buffers held (no lock held: the
 * last reference to a recording frees its reset command buffer under its
 * queue's lock). */
static void release_execs(const gz_vk_exec *execs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        gz_vk_use_unref(execs[i].use);
        gz_vk_recording_unref(execs[i].rec);
    }
}

/* Under the lock: the record's slots are free again. */
static void give_slots(gz_vk_queue *q, const gz_vk_record *r)
{
    for (uint32_t i = 0; i < r->nexecs; i++) {
        const gz_vk_exec *e = &q->execs[(r->first_exec + i) % q->exec_cap];
        if (e->kind == EXEC_PRIMARY)
            gz_vk_slot_give(q, e->slot);
    }
    gz_vk_slot_give(q, r->end_slot);
}

/* Copies a record's execs out of the ring (under the lock). */
static const gz_vk_exec *copy_execs(gz_vk_queue *q, const gz_vk_record *r)
{
    if (r->nexecs > q->exec_scratch_cap) {
        gz_vk_exec *s = realloc(q->exec_scratch, r->nexecs * sizeof *s);
        if (!s)
            return NULL;
        q->exec_scratch = s;
        q->exec_scratch_cap = r->nexecs;
    }
    for (uint32_t i = 0; i < r->nexecs; i++)
        q->exec_scratch[i] = q->execs[(r->first_exec + i) % q->exec_cap];
    return q->exec_scratch;
}

void gz_vk_record_release(gz_vk_queue *q, const gz_vk_record *r)
{
    /* Taken back from the tail (a failed submission), under the lock; the
     * references go after it (release_execs). */
    give_slots(q, r);
    q->exec_count -= r->nexecs;
}

/* The timeline semaphore's value now (worker). */
static void read_timeline(gz_vk_queue *q)
{
    gz_vk_device *dev = q->dev;
    uint64_t v;
    /* Made at the queue's first submission, under its lock. */
    pthread_mutex_lock(&q->lock);
    VkSemaphore timeline = q->ring_ready ? q->timeline : VK_NULL_HANDLE;
    pthread_mutex_unlock(&q->lock);
    if (!timeline || gz_vk_device_lost(dev))
        return;
    VkResult r = dev->info.fns.GetSemaphoreCounterValue(dev->info.device, timeline, &v);
    if (r == VK_SUCCESS) {
        q->timeline_seen = v;
    } else if (r == VK_ERROR_DEVICE_LOST) {
        gz_vk_device_set_lost(dev);
        gz_log("%s was lost (vkGetSemaphoreCounterValue); timing stops for this device",
               dev->info.device_name);
    }
}

void gz_vk_queue_collect(gz_vk_queue *q, bool final)
{
    read_timeline(q);
    /* Also after a device loss: what the GPU finished before it is no less
     * true. */
    for (;;) {
        pthread_mutex_lock(&q->lock);
        if (!q->ring_ready || !q->log_count || !q->log[q->log_head].submitted) {
            pthread_mutex_unlock(&q->lock);
            break;
        }
        gz_vk_record r = q->log[q->log_head];
        const gz_vk_exec *execs = r.kind == REC_BATCH ? copy_execs(q, &r) : NULL;
        pthread_mutex_unlock(&q->lock);
        if (r.kind == REC_BATCH) {
            harvest_status st = gz_vk_harvest_batch(q, &r, execs, final);
            if (st == HARVEST_LATER)
                break;
        } else {
            gz_vk_harvest_qlabel(q, &r);
        }
        pthread_mutex_lock(&q->lock);
        if (r.kind == REC_BATCH) {
            give_slots(q, &r);
            q->exec_head += r.nexecs;
            q->exec_count -= r.nexecs;
        }
        q->log_head = (q->log_head + 1) % q->log_cap;
        q->log_count--;
        if (q->log_done)
            q->log_done--;
        pthread_mutex_unlock(&q->lock);
        if (execs)
            release_execs(execs, r.nexecs);
    }
    gz_vk_sync_collect(q, final);
}

void gz_vk_queue_destroy(gz_vk_queue *q)
{
    if (q->ring_ready) {
        while (q->log_count) { /* left over only when reads failed */
            gz_vk_record *r = gz_vk_log_at(q, 0);
            if (r->kind == REC_BATCH) {
                gz_vk_harvest_drop(q, r);
                const gz_vk_exec *execs = copy_execs(q, r);
                give_slots(q, r);
                q->exec_head += r->nexecs;
                q->exec_count -= r->nexecs;
                if (execs)
                    release_execs(execs, r->nexecs);
            }
            q->log_head = (q->log_head + 1) % q->log_cap;
            q->log_count--;
        }
        gz_vk_sync_destroy(q);
        gz_vk_brackets_destroy(q);
        if (q->timeline)
            q->dev->info.fns.DestroySemaphore(q->dev->info.device, q->timeline, NULL);
    }
    gz_vk_harvest_end(q);
    /* Every zone has been emitted or counted (the device's final collect ran
     * before this): the tracks end, labels first since they share the
     * queue's clock. */
    gz_track_end(q->label_track);
    gz_track_end(q->passes_track);
    gz_track_end(q->frame_track);
    gz_track_end(q->track);
    pthread_mutex_destroy(&q->lock);
    free(q->log);
    free(q->execs);
    free(q->exec_scratch);
    free(q->primaries);
    free(q->scratch);
    free(q->values);
    free(q);
}

void gz_vk_queue_waited(gz_vk_queue *q, const VkFence *fences, uint32_t nfences, bool all,
                        uint64_t done_ns)
{
    if (!q->track)
        return;
    pthread_mutex_lock(&q->lock);
    /* The newest batch the wait covers; a fence covers everything submitted
     * before it on the queue too. That one gets a flow from its end to the
     * wait (whose CPU zone ends at done_ns), unless an earlier wait saw it. */
    uint32_t upto = 0;
    for (uint32_t i = q->ring_ready ? q->log_count : 0; i-- > q->log_done && !upto;) {
        const gz_vk_record *r = gz_vk_log_at(q, i);
        if (r->kind != REC_BATCH || !r->submitted)
            continue;
        bool waited = !fences;
        for (uint32_t k = 0; !waited && r->fence && k < nfences; k++)
            waited = fences[k] == r->fence && (all || nfences == 1);
        if (waited)
            upto = i + 1;
    }
    for (uint32_t k = q->log_done; k < upto; k++) {
        gz_vk_record *e = gz_vk_log_at(q, k);
        if (e->kind == REC_BATCH && e->submitted && !e->done_ns)
            e->done_ns = done_ns;
    }
    uint64_t flow = 0;
    if (upto > q->log_done) {
        gz_vk_record *newest = gz_vk_log_at(q, upto - 1);
        if (!newest->wait_flow)
            flow = newest->wait_flow = gz_flow_next();
        q->log_done = upto;
    }
    pthread_mutex_unlock(&q->lock);
    if (flow)
        gz_flow_in(flow, done_ns);
}
