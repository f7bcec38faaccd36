/* A queue's timeline: the ring of timestamp slots that bracket the app's
 * command buffers, the log of submissions in order, and the readback that
 * turns completed submissions into zones without ever waiting. */
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
    pthread_mutex_init(&q->lock, NULL);
    if (!q->valid_bits) {
        /* Called under the device lock (gz_vk_queue_get): one message per
         * device and family. */
        uint64_t bit = family < 64 ? 1ull << family : 0;
        if (!(dev->families_warned & bit))
            gz_log("queue family %u of %s has no timestamps (timestampValidBits = 0): its "
                   "queues get no zones",
                   family, dev->info.device_name);
        dev->families_warned |= bit;
        return q;
    }
    default_name(q, q->name, sizeof q->name);
    q->track = gz_track_new(GZ_API_VULKAN, q->name, dev->info.timestamp_period, q->valid_bits, 0);
    gz_vk_calibrate_track(dev, q->track);
    return q;
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
    pthread_mutex_unlock(&q->lock);
}

/* Records the command buffers of one block of slots: each writes its
 * slot's timestamp (after resetting the query when the device has no host
 * query reset), so that a submission itself records nothing. */
static bool record_block(gz_vk_queue *q, uint32_t block)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    VkDevice d = dev->info.device;
    uint32_t first = block * GZ_VK_SLOT_BLOCK;
    VkCommandBuffer cbs[GZ_VK_SLOT_BLOCK];
    VkCommandBufferAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = q->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = GZ_VK_SLOT_BLOCK,
    };
    if (f->AllocateCommandBuffers(d, &alloc, cbs) != VK_SUCCESS)
        return false;
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    for (uint32_t i = 0; i < GZ_VK_SLOT_BLOCK; i++) {
        /* Our command buffers are dispatchable objects the loader did not
         * make: give them the device's dispatch pointer. */
        if (dev->info.set_loader_data)
            dev->info.set_loader_data(d, cbs[i]);
        if (f->BeginCommandBuffer(cbs[i], &begin) != VK_SUCCESS) {
            f->FreeCommandBuffers(d, q->cmd_pool, GZ_VK_SLOT_BLOCK, cbs);
            return false;
        }
        if (!dev->info.host_query_reset)
            f->CmdResetQueryPool(cbs[i], q->pool, first + i, 1);
        f->CmdWriteTimestamp(cbs[i], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, q->pool, first + i);
        gz_vk_cmd_copy_results(&dev->info.fns, cbs[i], q->pool, first + i, 1, &q->results_buf, first + i);
        if (f->EndCommandBuffer(cbs[i]) != VK_SUCCESS) {
            f->FreeCommandBuffers(d, q->cmd_pool, GZ_VK_SLOT_BLOCK, cbs);
            return false;
        }
    }
    for (uint32_t i = 0; i < GZ_VK_SLOT_BLOCK; i++)
        q->slots[first + i].cb = cbs[i];
    q->block_ready[block] = true;
    return true;
}

static bool slots_recorded(gz_vk_queue *q, uint32_t first, uint32_t n)
{
    for (uint32_t b = first / GZ_VK_SLOT_BLOCK; b <= (first + n - 1) / GZ_VK_SLOT_BLOCK; b++)
        if (!q->block_ready[b] && !record_block(q, b))
            return false;
    return true;
}

static bool ring_init(gz_vk_queue *q)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    VkDevice d = dev->info.device;
    VkQueryPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = GZ_VK_RING_SLOTS,
    };
    if (f->CreateQueryPool(d, &pool_info, NULL, &q->pool) != VK_SUCCESS)
        return false;
    VkCommandPoolCreateInfo cmd_pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .queueFamilyIndex = q->family,
    };
    if (f->CreateCommandPool(d, &cmd_pool_info, NULL, &q->cmd_pool) != VK_SUCCESS) {
        f->DestroyQueryPool(d, q->pool, NULL);
        return false;
    }
    q->log_cap = 2 * GZ_VK_RING_SLOTS;
    q->log = calloc(q->log_cap, sizeof *q->log);
    /* One entry per slot, and one for the sync point. */
    if (!q->log || !gz_vk_hostbuf_create(dev, GZ_VK_RING_SLOTS + 1, &q->results_buf)) {
        free(q->log);
        q->log = NULL;
        f->DestroyCommandPool(d, q->cmd_pool, NULL);
        f->DestroyQueryPool(d, q->pool, NULL);
        return false;
    }
    if (dev->info.host_query_reset)
        f->ResetQueryPool(d, q->pool, 0, GZ_VK_RING_SLOTS);
    return true;
}

static bool ensure_ring(gz_vk_queue *q)
{
    if (!q->ring_ready && !q->ring_failed) {
        q->ring_ready = ring_init(q);
        q->ring_failed = !q->ring_ready;
        if (q->ring_failed)
            gz_log("cannot create timestamp queries for queue %u.%u of %s: it is not timed",
                   q->family, q->index, q->dev->info.device_name);
    }
    return q->ring_ready;
}

static gz_vk_record *log_push(gz_vk_queue *q)
{
    if (q->log_count == q->log_cap) {
        /* Only label records can outgrow the initial size (batches are
         * bounded by the slots): grow, keeping order. */
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
    return r;
}

static void queue_label(gz_vk_queue *q, record_kind kind, const char *name)
{
    if (!q || !q->track || q->dev->level < GZ_LEVEL_LABELS)
        return;
    uint32_t id = kind == REC_QLABEL_BEGIN ? gz_intern_cstr(name) : 0;
    pthread_mutex_lock(&q->lock);
    gz_vk_record *r = ensure_ring(q) ? log_push(q) : NULL;
    if (r) {
        r->kind = kind;
        r->name = id;
    }
    pthread_mutex_unlock(&q->lock);
}

void gz_vk_queue_label_begin(gz_vk_queue *q, const char *name)
{
    queue_label(q, REC_QLABEL_BEGIN, name);
}

void gz_vk_queue_label_end(gz_vk_queue *q)
{
    queue_label(q, REC_QLABEL_END, NULL);
}

/* ---- readback ---------------------------------------------------------- */

static bool reserve(void **buf, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    uint32_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *p = realloc(*buf, (size_t)c * elem);
    if (!p)
        return false;
    *buf = p;
    *cap = c;
    return true;
}

static gz_item *item_push(gz_vk_queue *q, uint32_t *n)
{
    if (!reserve((void **)&q->scratch, &q->scratch_cap, *n + 1, sizeof(gz_item)))
        return NULL;
    gz_item *it = &q->scratch[(*n)++];
    memset(it, 0, sizeof *it);
    return it;
}

static void ensure_label_track(gz_vk_queue *q)
{
    if (q->label_track)
        return;
    char name[sizeof q->name + 8];
    snprintf(name, sizeof name, "%s labels", q->name);
    q->label_track = gz_track_new(GZ_API_VULKAN, name, q->dev->info.timestamp_period,
                                  q->valid_bits, q->track);
}

typedef struct batch_out {
    uint32_t n;             /* items in q->scratch */
    uint32_t zones, label_zones;
    uint64_t label_drops;   /* label zones lost for good */
} batch_out;

static void emit_zone(gz_vk_queue *q, batch_out *o, uint16_t track, gz_zone_kind kind,
                      uint32_t name, uint64_t begin, uint64_t end, uint64_t flow)
{
    gz_item *it = item_push(q, &o->n);
    if (!it) {
        gz_count_dropped_zones(track, 1);
        return;
    }
    it->type = GZ_ITEM_GPU_ZONE;
    it->flags = (uint8_t)(kind << GZ_ITEM_KIND_SHIFT) | (flow ? GZ_ITEM_F_FLOW : 0);
    it->track = track;
    it->name = name;
    it->zone.begin_ticks = begin;
    it->zone.end_ticks = end;
    it->zone.flow = flow;
    if (track == q->track)
        o->zones++;
    else
        o->label_zones++;
}

static void label_push(gz_vk_queue *q, label_frame f)
{
    if (q->label_depth == GZ_VK_LABEL_DEPTH || q->label_overflow) {
        q->label_overflow++;
        return;
    }
    q->labels[q->label_depth++] = f;
}

/* Closes the innermost label at end ticks (valid only when end_known). */
static void label_pop(gz_vk_queue *q, batch_out *o, uint64_t end, bool end_known)
{
    if (q->label_overflow) {
        q->label_overflow--;
        o->label_drops++;
        return;
    }
    if (!q->label_depth)
        return; /* an end without a begin: nothing to close */
    label_frame f = q->labels[--q->label_depth];
    if (f.untimed && !f.lost)
        return;
    if (f.lost || !end_known || f.waiting) {
        o->label_drops++;
        return;
    }
    ensure_label_track(q);
    emit_zone(q, o, q->label_track, GZ_ZONE_LABEL, f.name, f.begin_ticks, end, 0);
}

/* The label timestamps of one execution of a recording, in op order. */
static void replay_labels(gz_vk_queue *q, batch_out *o, const gz_vk_slot *slot)
{
    const gz_vk_recording *rec = slot->rec;
    uint64_t *values = NULL;
    bool timed = rec->timed && slot->labels_timed;
    uint32_t nq = rec->nchunks ? (rec->nchunks - 1) * GZ_VK_LABEL_CHUNK + rec->used_in_chunk : 0;
    if (timed && nq) {
        values = malloc(nq * sizeof *values);
        for (uint32_t c = 0; values && c < rec->nchunks; c++) {
            uint32_t count = gz_vk_recording_chunk_used(rec, c);
            if (!gz_vk_hostbuf_read(&q->dev->label_results, rec->chunks[c] * GZ_VK_LABEL_CHUNK,
                                    count, values + c * GZ_VK_LABEL_CHUNK)) {
                free(values);
                values = NULL;
            }
        }
    }
    uint32_t next = 0; /* index of the next timed query in values */
    for (uint32_t i = 0; i < rec->nops; i++) {
        const gz_vk_label_op *op = &rec->ops[i];
        bool has_query = op->query != GZ_VK_NO_QUERY;
        /* An op with a query whose result we could not read is lost; an op
         * that was never meant to be timed is untimed. */
        bool known = has_query && values;
        uint64_t ticks = known ? values[next] : 0;
        if (has_query)
            next++;
        bool meant = rec->timed && !op->untimed;
        if (op->kind == LABEL_BEGIN)
            label_push(q, (label_frame){.name = op->name,
                                        .begin_ticks = ticks,
                                        .untimed = !known && !meant,
                                        .lost = !known && meant});
        else
            label_pop(q, o, ticks, known);
    }
    free(values);
}

static void release_batch(gz_vk_queue *q, const gz_vk_record *r)
{
    for (uint32_t j = 0; j < r->nslots; j++) {
        gz_vk_slot *s = &q->slots[r->first + j];
        if (s->rec) {
            __atomic_sub_fetch(&s->rec->in_flight, 1, __ATOMIC_ACQ_REL);
            gz_vk_recording_unref(q->dev, s->rec);
            s->rec = NULL;
        }
    }
    q->used -= r->nslots + r->waste;
}

static void count_batch_drops(gz_vk_queue *q, const gz_vk_record *r)
{
    /* The submission zone, and one per command buffer at the cmdbuf level
     * (where a batch of n command buffers takes n + 1 slots). */
    uint32_t cmdbufs = q->dev->level >= GZ_LEVEL_CMDBUF ? r->nslots - 1 : 0;
    gz_count_dropped_zones(q->track, 1 + cmdbufs);
}

/* Whether the label timestamps the app's command buffers copied are all
 * in host memory. Their copies are separate commands from the batch's own
 * results copy, with no order between them that the host could rely on:
 * the batch waits until they are there too. */
static bool labels_ready(gz_vk_queue *q, const gz_vk_record *r)
{
    for (uint32_t j = 0; j + 1 < r->nslots; j++) {
        const gz_vk_slot *s = &q->slots[r->first + j];
        const gz_vk_recording *rec = s->rec;
        if (!rec || !rec->timed || !s->labels_timed)
            continue;
        for (uint32_t c = 0; c < rec->nchunks; c++) {
            uint32_t count = gz_vk_recording_chunk_used(rec, c);
            if (!gz_vk_hostbuf_ready(&q->dev->label_results, rec->chunks[c] * GZ_VK_LABEL_CHUNK,
                                     count))
                return false;
        }
    }
    return true;
}

/* One completed batch → items. Returns false when it is not complete. */
static bool harvest_batch(gz_vk_queue *q, const gz_vk_record *r, bool final)
{
    uint64_t ticks[GZ_VK_RING_SLOTS];
    if (!final && !labels_ready(q, r))
        return false;
    if (!gz_vk_hostbuf_read(&q->results_buf, r->first, r->nslots, ticks)) {
        if (!final)
            return false;
        /* The device is being destroyed and this batch never completed
         * (or the device was lost): its zones are lost. */
        count_batch_drops(q, r);
        return true;
    }
    uint64_t seen_ns = gz_host_now_ns();
    batch_out o = {0};
    uint32_t last = r->nslots - 1;
    gz_item *b = item_push(q, &o.n);
    if (b)
        *b = (gz_item){.type = GZ_ITEM_GPU_BOUND,
                       .flags = GZ_ITEM_F_NOT_BEFORE,
                       .track = q->track,
                       .bound = {.ticks = ticks[0], .host_ns = r->submit_ns}};
    b = item_push(q, &o.n);
    if (b)
        *b = (gz_item){.type = GZ_ITEM_GPU_BOUND,
                       .flags = GZ_ITEM_F_NOT_AFTER,
                       .track = q->track,
                       .bound = {.ticks = ticks[last], .host_ns = seen_ns}};
    emit_zone(q, &o, q->track, GZ_ZONE_SUBMIT, r->name, ticks[0], ticks[last], r->flow);
    gz_item *args = item_push(q, &o.n);
    if (args)
        *args = (gz_item){.type = GZ_ITEM_ZONE_ARGS,
                          .track = q->track,
                          .args = {.batch = r->batch, .cmdbufs = r->cmdbufs}};

    /* Queue labels begun since the last batch start with this one. */
    for (uint32_t i = 0; i < q->label_depth; i++) {
        if (q->labels[i].waiting) {
            q->labels[i].waiting = false;
            q->labels[i].begin_ticks = ticks[0];
        }
    }
    for (uint32_t j = 0; j < last; j++) {
        const gz_vk_slot *s = &q->slots[r->first + j];
        if (q->dev->level >= GZ_LEVEL_CMDBUF)
            emit_zone(q, &o, q->track, GZ_ZONE_CMDBUF, s->name, ticks[j], ticks[j + 1], 0);
        if (s->rec && s->rec->nops)
            replay_labels(q, &o, s);
    }
    q->last_ticks = ticks[last];
    q->have_last = true;

    if (o.n && !gz_emit_n(q->scratch, o.n)) {
        gz_count_dropped_zones(q->track, o.zones);
        gz_count_dropped_zones(q->label_track, o.label_zones);
    }
    if (o.label_drops) {
        ensure_label_track(q);
        gz_count_dropped_zones(q->label_track, o.label_drops);
    }
    return true;
}

static void harvest_locked(gz_vk_queue *q, bool final)
{
    /* Also after a device loss: what the GPU finished before it is in host
     * memory already (reading it is a memory read), and is no less true. */
    while (q->log_count) {
        gz_vk_record *r = &q->log[q->log_head];
        if (r->kind == REC_BATCH) {
            if (!harvest_batch(q, r, final))
                break;
            release_batch(q, r);
        } else if (r->kind == REC_QLABEL_BEGIN) {
            label_push(q, (label_frame){.name = r->name, .waiting = true});
        } else {
            batch_out o = {0};
            label_pop(q, &o, q->last_ticks, q->have_last);
            if (o.n && !gz_emit_n(q->scratch, o.n))
                gz_count_dropped_zones(q->label_track, o.label_zones);
            if (o.label_drops) {
                ensure_label_track(q);
                gz_count_dropped_zones(q->label_track, o.label_drops);
            }
        }
        q->log_head = (q->log_head + 1) % q->log_cap;
        q->log_count--;
    }
    if (gz_vk_device_lost(q->dev)) {
        /* Nothing more will be read: release what is still logged. */
        while (q->log_count) {
            gz_vk_record *r = &q->log[q->log_head];
            if (r->kind == REC_BATCH) {
                count_batch_drops(q, r);
                release_batch(q, r);
            }
            q->log_head = (q->log_head + 1) % q->log_cap;
            q->log_count--;
        }
    }
}

void gz_vk_queue_collect(gz_vk_queue *q, bool final)
{
    pthread_mutex_lock(&q->lock);
    if (q->ring_ready)
        harvest_locked(q, final);
    gz_vk_sync_collect(q, final);
    pthread_mutex_unlock(&q->lock);
}

void gz_vk_queue_destroy(gz_vk_queue *q)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    if (q->ring_ready) {
        while (q->log_count) { /* left over only when reads failed */
            gz_vk_record *r = &q->log[q->log_head];
            if (r->kind == REC_BATCH)
                release_batch(q, r);
            q->log_head = (q->log_head + 1) % q->log_cap;
            q->log_count--;
        }
        gz_vk_sync_destroy(q);
        gz_vk_hostbuf_destroy(dev, &q->results_buf);
        /* Destroying the pool frees the slot command buffers. */
        f->DestroyCommandPool(dev->info.device, q->cmd_pool, NULL);
        f->DestroyQueryPool(dev->info.device, q->pool, NULL);
    }
    /* Labels never ended by the app are lost zones. */
    uint64_t open = q->label_depth + q->label_overflow;
    if (open && q->label_track)
        gz_count_dropped_zones(q->label_track, open);
    pthread_mutex_destroy(&q->lock);
    free(q->log);
    free(q->scratch);
    free(q);
}

/* ---- submission -------------------------------------------------------- */

gz_vk_submit *gz_vk_submit_begin(gz_vk_queue *q, uint32_t call_name)
{
    if (!q || !q->track || gz_vk_device_lost(q->dev))
        return NULL;
    pthread_mutex_lock(&q->lock);
    if (!ensure_ring(q)) {
        pthread_mutex_unlock(&q->lock);
        return NULL;
    }
    if (!gz_vk_can_calibrate(q->dev)) {
        if (q->log_count)
            harvest_locked(q, false);
        if (!q->log_count) /* only an idle queue runs our timestamp at once */
            gz_vk_sync_point(q);
    }
    gz_vk_submit *s = &q->submit;
    *s = (gz_vk_submit){.q = q, .name = call_name, .submit_ns = gz_host_now_ns()};
    return s;
}

static uint32_t cmdbuf_name(gz_vk_cmdbuf *cb, VkCommandBuffer handle)
{
    if (cb && cb->name)
        return cb->name;
    if (cb && cb->default_name)
        return cb->default_name;
    char name[48];
    snprintf(name, sizeof name, "VkCommandBuffer 0x%llx", (unsigned long long)(uintptr_t)handle);
    uint32_t id = gz_intern_cstr(name);
    if (cb)
        cb->default_name = id;
    return id;
}

/* n consecutive slots, skipping the ring's tail when they do not fit there.
 * Reads back what completed first when the ring is full. */
static bool slots_alloc(gz_vk_queue *q, uint32_t n, uint32_t *first, uint32_t *waste)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        *waste = q->head + n > GZ_VK_RING_SLOTS ? GZ_VK_RING_SLOTS - q->head : 0;
        if (n <= GZ_VK_RING_SLOTS && q->used + *waste + n <= GZ_VK_RING_SLOTS) {
            *first = (q->head + *waste) % GZ_VK_RING_SLOTS;
            q->head = (*first + n) % GZ_VK_RING_SLOTS;
            q->used += *waste + n;
            return true;
        }
        harvest_locked(q, false);
    }
    return false;
}

uint32_t gz_vk_submit_batch(gz_vk_submit *s, uint32_t batch, const VkCommandBuffer *app,
                            gz_vk_cmdbuf *const *cbs, uint32_t n, VkCommandBuffer *out)
{
    gz_vk_queue *q = s->q;
    gz_vk_device *dev = q->dev;
    bool per_cmdbuf = dev->level >= GZ_LEVEL_CMDBUF;
    uint32_t nslots = per_cmdbuf ? n + 1 : 2;
    uint32_t first, waste;
    gz_vk_record *r = NULL;
    if (n && (r = log_push(q)) && !slots_alloc(q, nslots, &first, &waste)) {
        q->log_count--; /* undo the push */
        r = NULL;
    }
    if (r && !slots_recorded(q, first, nslots)) {
        q->log_count--;
        q->head = (first + GZ_VK_RING_SLOTS - waste) % GZ_VK_RING_SLOTS;
        q->used -= waste + nslots;
        r = NULL;
    }
    if (!r) {
        if (n) {
            static int once;
            gz_log_once(&once, "timestamp slots of a queue are all in flight; some "
                               "submissions are not timed (counted as dropped)");
            gz_count_dropped_zones(q->track, per_cmdbuf ? 1 + n : 1);
        }
        if (n)
            memcpy(out, app, n * sizeof *out);
        return n;
    }
    *r = (gz_vk_record){.kind = REC_BATCH,
                        .name = s->name,
                        .first = first,
                        .nslots = nslots,
                        .waste = waste,
                        .batch = batch,
                        .cmdbufs = n,
                        .flow = gz_flow_next(),
                        .submit_ns = s->submit_ns};
    s->nrecords++;
    if (dev->info.host_query_reset)
        dev->info.fns.ResetQueryPool(dev->info.device, q->pool, first, nslots);
    gz_vk_hostbuf_clear(&q->results_buf, first, nslots);

    uint32_t k = 0;
    if (!per_cmdbuf) {
        out[k++] = q->slots[first].cb;
        memcpy(out + k, app, n * sizeof *out);
        k += n;
        out[k++] = q->slots[first + 1].cb;
        return k;
    }
    for (uint32_t j = 0; j < n; j++) {
        gz_vk_slot *slot = &q->slots[first + j];
        gz_vk_recording *rec = cbs[j] ? cbs[j]->rec : NULL;
        slot->name = cmdbuf_name(cbs[j], app[j]);
        slot->rec = NULL;
        slot->labels_timed = false;
        if (rec && rec->nops) {
            if (__atomic_load_n(&rec->in_flight, __ATOMIC_ACQUIRE))
                harvest_locked(q, false); /* the previous execution, if it ran here */
            __atomic_add_fetch(&rec->refs, 1, __ATOMIC_ACQ_REL);
            /* The label queries are shared by every execution of the
             * recording: time this one only if no other is unread. */
            slot->labels_timed = __atomic_add_fetch(&rec->in_flight, 1, __ATOMIC_ACQ_REL) == 1;
            if (slot->labels_timed && rec->timed)
                gz_vk_recording_reset_queries(dev, rec);
            slot->rec = rec;
        }
        out[k++] = slot->cb;
        out[k++] = app[j];
    }
    out[k++] = q->slots[first + n].cb;
    return k;
}

void gz_vk_submit_end(gz_vk_submit *s, VkResult result)
{
    gz_vk_queue *q = s->q;
    uint32_t tail = (q->log_head + q->log_count) % q->log_cap;
    for (uint32_t i = 0; i < s->nrecords; i++) {
        uint32_t at = (tail + q->log_cap - s->nrecords + i) % q->log_cap;
        gz_vk_record *r = &q->log[at];
        if (result == VK_SUCCESS)
            gz_flow_out(r->flow, s->submit_ns);
    }
    if (result != VK_SUCCESS) {
        /* Nothing was submitted: forget this call's batches, newest first,
         * giving their slots back. */
        for (uint32_t i = 0; i < s->nrecords; i++) {
            uint32_t at = (tail + q->log_cap - 1 - i) % q->log_cap;
            gz_vk_record *r = &q->log[at];
            release_batch(q, r);
            q->head = (r->first + GZ_VK_RING_SLOTS - r->waste) % GZ_VK_RING_SLOTS;
        }
        q->log_count -= s->nrecords;
        if (result == VK_ERROR_DEVICE_LOST) {
            gz_vk_device_set_lost(q->dev);
            gz_log("%s was lost; timing stops for this device", q->dev->info.device_name);
        }
    }
    pthread_mutex_unlock(&q->lock);
}
