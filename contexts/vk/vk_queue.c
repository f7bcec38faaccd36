/* A queue's timeline: the command buffers of ours that bracket the app's in
 * each batch, the log of submissions in order, and the readback that turns
 * completed submissions into zones.
 *
 * Submission (the app's thread): under the queue's lock, briefly, the
 * batch takes its entries and its record goes on the log as not yet
 * submitted; then, without any lock, our command buffers are prepared and
 * the layer calls down; then the record is marked submitted (or taken back
 * when the call failed). Nothing on the app's thread waits for the GPU or
 * reads results. Readback (the worker): records are read in order and each
 * only once it is submitted and every value it needs is written. */
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
    if (q->frame_track) {
        char frame_name[sizeof q->name + 8];
        frame_track_name(q, frame_name, sizeof frame_name);
        gz_track_set_name(q->frame_track, frame_name);
    }
    pthread_mutex_unlock(&q->lock);
}

static bool ensure_ring(gz_vk_queue *q)
{
    if (!q->ring_ready && !q->ring_failed) {
        q->log_cap = 256;
        q->log = calloc(q->log_cap, sizeof *q->log);
        q->ring_ready = q->log && gz_vk_pages_init(q);
        q->ring_failed = !q->ring_ready;
        if (q->ring_failed) {
            free(q->log);
            q->log = NULL;
            gz_log("cannot create timestamp queries for queue %u.%u of %s: it is not timed",
                   q->family, q->index, q->dev->info.device_name);
        }
    }
    return q->ring_ready;
}

/* A record at the log's tail (kept in order when the log grows). */
static gz_vk_record *log_push(gz_vk_queue *q)
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
    return r;
}

static gz_vk_record *log_at(gz_vk_queue *q, uint32_t i)
{
    return &q->log[(q->log_head + i) % q->log_cap];
}

static void queue_label(gz_vk_queue *q, record_kind kind, const char *name)
{
    if (!q || !q->track || (kind != REC_FRAME && q->dev->level < GZ_LEVEL_LABELS))
        return;
    uint32_t id = kind == REC_QLABEL_BEGIN ? gz_intern_cstr(name) : 0;
    pthread_mutex_lock(&q->lock);
    gz_vk_record *r = ensure_ring(q) ? log_push(q) : NULL;
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

/* ---- releasing a batch's resources --------------------------------------- */

/* The execution of rec in entry e is read back or taken back. */
static void release_execution(gz_vk_queue *q, gz_vk_entry *e)
{
    if (!e->rec)
        return;
    gz_vk_device *dev = q->dev;
    pthread_mutex_lock(&dev->lock);
    e->rec->pending--;
    pthread_mutex_unlock(&dev->lock);
    gz_vk_recording_unref(dev, e->rec);
    e->rec = NULL;
}

/* Under the queue's lock. */
static void release_batch(gz_vk_queue *q, const gz_vk_record *r)
{
    for (uint32_t k = 0; k < r->nruns; k++) {
        for (uint32_t i = 0; i < r->runs[k].count; i++)
            release_execution(q, gz_vk_entry_at(q, r->runs[k].page, r->runs[k].first + i));
        gz_vk_pages_give(q, &r->runs[k]);
    }
    for (uint32_t k = 0; k < r->nlabel_runs; k++)
        gz_vk_pages_give(q, &r->label_runs[k]);
}

static uint32_t cmdbuf_zones(const gz_vk_queue *q, const gz_vk_record *r)
{
    return q->dev->level >= GZ_LEVEL_CMDBUF ? r->cmdbufs : 0;
}

static void count_batch_drops(gz_vk_queue *q, const gz_vk_record *r)
{
    gz_count_dropped_zones(q->track, 1 + cmdbuf_zones(q, r));
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
    uint32_t zones, label_zones, frame_zones;
    uint64_t label_drops;   /* label zones lost for good */
    uint64_t untimed[GZ_VK_UNTIMED_TOO_MANY + 1]; /* label zones not timed, by reason */
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
    else if (track == q->label_track)
        o->label_zones++;
    else
        o->frame_zones++;
}

static void label_push(gz_vk_queue *q, label_frame f)
{
    if (q->label_depth == GZ_VK_LABEL_DEPTH || q->label_overflow) {
        q->label_overflow++;
        return;
    }
    q->labels[q->label_depth++] = f;
}

/* Why a label op has no usable value: 0 when it has one. */
typedef struct op_value {
    bool known;
    uint16_t why; /* gz_vk_untimed, when !known */
    uint64_t ticks;
} op_value;

/* Closes the innermost label with its end. */
static void label_pop(gz_vk_queue *q, batch_out *o, op_value end)
{
    if (q->label_overflow) {
        q->label_overflow--;
        o->label_drops++;
        return;
    }
    if (!q->label_depth)
        return; /* an end without a begin: nothing to close */
    label_frame f = q->labels[--q->label_depth];
    if (f.untimed) {
        /* begin_ticks holds the reason */
        if (f.begin_ticks != GZ_VK_UNTIMED_LEVEL)
            o->untimed[f.begin_ticks]++;
        return;
    }
    if (f.lost || f.waiting) {
        o->label_drops++;
        return;
    }
    if (!end.known) {
        if (end.why == GZ_VK_TIMED)
            o->label_drops++;
        else if (end.why != GZ_VK_UNTIMED_LEVEL)
            o->untimed[end.why]++;
        return;
    }
    ensure_label_track(q);
    emit_zone(q, o, q->label_track, GZ_ZONE_LABEL, f.name, f.begin_ticks, end.ticks, 0);
}

/* The label values of one execution (in entry e), in op order. */
static void replay_labels(gz_vk_queue *q, batch_out *o, const gz_vk_entry *e, const uint64_t *values)
{
    const gz_vk_recording *rec = e->rec;
    for (uint32_t i = 0; i < rec->nops; i++) {
        const gz_vk_label_op *op = &rec->ops[i];
        op_value v = {.why = op->untimed};
        if (op->value != GZ_VK_NO_QUERY) {
            if (values) {
                v.known = true;
                v.ticks = values[op->value];
            } else {
                v.why = GZ_VK_TIMED; /* meant to be timed, value lost: a drop */
            }
        }
        if (op->kind == LABEL_BEGIN) {
            label_frame f = {.name = op->name, .begin_ticks = v.ticks};
            if (!v.known && v.why != GZ_VK_TIMED) {
                f.untimed = true;
                f.begin_ticks = v.why;
            } else if (!v.known) {
                f.lost = true;
            }
            label_push(q, f);
        } else {
            label_pop(q, o, v);
        }
    }
}

/* Whether an execution's label values are its own: not overwritten by a
 * later execution of the same recording in the same batch or on another
 * queue (vk_queue.c's submit marks those). */
static bool execution_kept(gz_vk_queue *q, const gz_vk_entry *e)
{
    if (!e->labels_timed)
        return false;
    pthread_mutex_lock(&q->dev->lock);
    bool kept = e->serial > e->rec->conflict_upto;
    pthread_mutex_unlock(&q->dev->lock);
    return kept;
}

/* The bracket timestamps of a batch, in order. */
static bool read_brackets(gz_vk_queue *q, const gz_vk_record *r, uint64_t *ticks)
{
    uint32_t at = 0;
    for (uint32_t k = 0; k < r->nruns; k++) {
        const gz_vk_run *run = &r->runs[k];
        gz_vk_page *p = q->pages[run->page];
        bool ok;
        if (q->mode == GZ_VK_QUEUE_COPY) {
            ok = gz_vk_hostbuf_read(&p->results, run->first, run->count, ticks + at);
        } else {
            bool lost = false;
            ok = gz_vk_query_read(&q->dev->info.fns, q->dev->info.device, p->pool, run->first,
                                  run->count, ticks + at, &lost);
            if (lost && !gz_vk_device_lost(q->dev)) {
                gz_vk_device_set_lost(q->dev);
                gz_log("%s was lost (vkGetQueryPoolResults); timing stops for this device",
                       q->dev->info.device_name);
            }
        }
        if (!ok)
            return false;
        at += run->count;
    }
    return true;
}

/* Bracket entry j of r. */
static gz_vk_entry *bracket(gz_vk_queue *q, const gz_vk_record *r, uint32_t j)
{
    for (uint32_t k = 0; k < r->nruns; k++) {
        if (j < r->runs[k].count)
            return gz_vk_entry_at(q, r->runs[k].page, r->runs[k].first + j);
        j -= r->runs[k].count;
    }
    return NULL;
}

/* The label values of the executions of r that have their own, all
 * written? (Read into values at the executions' offsets.) */
static bool labels_ready(gz_vk_queue *q, const gz_vk_record *r)
{
    for (uint32_t j = 0; j + 1 < r->nbrackets; j++) {
        const gz_vk_entry *e = bracket(q, r, j);
        if (!e->rec || !e->labels_timed || !e->rec->nvalues)
            continue;
        if (!gz_vk_hostbuf_ready(&q->pages[e->label_page]->results, e->label_first,
                                 e->rec->nvalues))
            return false;
    }
    return true;
}

/* One completed batch → items. Returns false when it is not complete. */
static bool harvest_batch(gz_vk_queue *q, const gz_vk_record *r, bool final)
{
    if (!reserve((void **)&q->values, &q->values_cap, r->nbrackets + GZ_VK_MAX_EXEC_LABELS,
                 sizeof(uint64_t))) {
        count_batch_drops(q, r);
        return true;
    }
    uint64_t *ticks = q->values;
    bool complete = read_brackets(q, r, ticks) && labels_ready(q, r);
    if (!complete) {
        if (!final && !gz_vk_device_lost(q->dev))
            return false;
        /* The device is going (or was lost) and this batch never completed:
         * its zones are lost. Its labels still close what they close. */
        count_batch_drops(q, r);
        return true;
    }
    /* Done when the worker saw it, or earlier when the app's wait did. */
    uint64_t seen_ns = gz_host_now_ns();
    if (r->done_ns && r->done_ns < seen_ns)
        seen_ns = r->done_ns;
    batch_out o = {0};
    uint32_t last = r->nbrackets - 1;
    gz_item *b = item_push(q, &o.n);
    if (b)
        *b = gz_item_bound(q->track, true, ticks[0], r->submit_ns);
    b = item_push(q, &o.n);
    if (b)
        *b = gz_item_bound(q->track, false, ticks[last], seen_ns);
    emit_zone(q, &o, q->track, GZ_ZONE_SUBMIT, r->name, ticks[0], ticks[last], r->flow);
    gz_item *args = item_push(q, &o.n);
    if (args)
        *args = (gz_item){.type = GZ_ITEM_ZONE_ARGS,
                          .track = q->track,
                          .args = {.batch = r->batch, .cmdbufs = r->cmdbufs}};
    /* An app's wait saw this batch done first: a flow from its end to that
     * wait (the wait's thread has the other end, gz_vk_queue_waited). */
    gz_item *wf = r->wait_flow ? item_push(q, &o.n) : NULL;
    if (wf)
        *wf = gz_item_wait_flow(q->track, r->wait_flow);

    if (!q->frame_open) {
        q->frame_open = true;
        q->frame_begin_ticks = ticks[0];
    }
    /* Queue labels begun since the last batch start with this one. */
    for (uint32_t i = 0; i < q->label_depth; i++) {
        if (q->labels[i].waiting) {
            q->labels[i].waiting = false;
            q->labels[i].begin_ticks = ticks[0];
        }
    }
    uint64_t *labels = ticks + r->nbrackets;
    for (uint32_t j = 0; j < last && q->dev->level >= GZ_LEVEL_CMDBUF; j++) {
        const gz_vk_entry *e = bracket(q, r, j);
        emit_zone(q, &o, q->track, GZ_ZONE_CMDBUF, e->name, ticks[j], ticks[j + 1], 0);
        if (!e->rec || !e->rec->nops)
            continue;
        bool own = e->rec->nvalues && execution_kept(q, e) &&
                   gz_vk_hostbuf_read(&q->pages[e->label_page]->results, e->label_first,
                                      e->rec->nvalues, labels);
        replay_labels(q, &o, e, own ? labels : NULL);
    }
    q->last_ticks = ticks[last];
    q->have_last = true;

    if (o.n && !gz_emit_n(q->scratch, o.n)) {
        gz_count_dropped_zones(q->track, o.zones);
        gz_count_dropped_zones(q->label_track, o.label_zones);
    }
    uint64_t untimed = 0;
    for (uint32_t k = 0; k <= GZ_VK_UNTIMED_TOO_MANY; k++) {
        untimed += o.untimed[k];
        if (o.untimed[k])
            __atomic_add_fetch(&q->dev->untimed_labels[k], o.untimed[k], __ATOMIC_RELAXED);
    }
    if (o.label_drops || untimed) {
        ensure_label_track(q);
        gz_count_dropped_zones(q->label_track, o.label_drops + untimed);
    }
    return true;
}

/* A present: the frame opened by the first batch since the last one ends
 * with the newest batch read. */
static void harvest_frame(gz_vk_queue *q)
{
    static uint32_t frame_name;
    if (!q->frame_open || !q->have_last || !q->frame_track)
        return;
    q->frame_open = false;
    batch_out o = {0};
    emit_zone(q, &o, q->frame_track, GZ_ZONE_FRAME, gz_intern_once(&frame_name, "frame"),
              q->frame_begin_ticks, q->last_ticks, 0);
    if (o.n && !gz_emit_n(q->scratch, o.n))
        gz_count_dropped_zones(q->frame_track, o.frame_zones);
}

static void harvest_qlabel(gz_vk_queue *q, const gz_vk_record *r)
{
    if (r->kind == REC_FRAME) {
        harvest_frame(q);
        return;
    }
    if (r->kind == REC_QLABEL_BEGIN) {
        label_push(q, (label_frame){.name = r->name, .waiting = true});
        return;
    }
    batch_out o = {0};
    label_pop(q, &o, (op_value){.known = q->have_last, .ticks = q->last_ticks});
    if (o.n && !gz_emit_n(q->scratch, o.n))
        gz_count_dropped_zones(q->label_track, o.label_zones);
    if (o.label_drops) {
        ensure_label_track(q);
        gz_count_dropped_zones(q->label_track, o.label_drops);
    }
}

/* Items a batch's readback may emit at most: its bounds, zones and
 * arguments, and its label ops. */
static uint32_t items_of(gz_vk_queue *q, const gz_vk_record *r)
{
    uint32_t n = 8 + r->nbrackets;
    for (uint32_t j = 0; r->kind == REC_BATCH && j + 1 < r->nbrackets; j++) {
        const gz_vk_entry *e = bracket(q, r, j);
        if (e->rec)
            n += e->rec->nops;
    }
    return n;
}

void gz_vk_queue_collect(gz_vk_queue *q, bool final)
{
    /* Also after a device loss: what the GPU finished before it is in host
     * memory already (reading it is a memory read), and is no less true. */
    for (;;) {
        pthread_mutex_lock(&q->lock);
        if (!q->ring_ready || !q->log_count || !q->log[q->log_head].submitted) {
            pthread_mutex_unlock(&q->lock);
            break;
        }
        gz_vk_record r = q->log[q->log_head];
        pthread_mutex_unlock(&q->lock);
        if (!final && gz_emit_room() < items_of(q, &r))
            break; /* the rest at the next poll: nothing dropped for a burst */
        /* Read without the lock: the submitting thread never touches a
         * submitted batch's entries, and vkGetQueryPoolResults may wait
         * for the whole device on some drivers. */
        if (r.kind == REC_BATCH && !harvest_batch(q, &r, final))
            break;
        if (r.kind != REC_BATCH)
            harvest_qlabel(q, &r);
        pthread_mutex_lock(&q->lock);
        if (r.kind == REC_BATCH)
            release_batch(q, &r);
        q->log_head = (q->log_head + 1) % q->log_cap;
        q->log_count--;
        pthread_mutex_unlock(&q->lock);
    }
    gz_vk_sync_collect(q, final);
}

void gz_vk_queue_destroy(gz_vk_queue *q)
{
    if (q->ring_ready) {
        while (q->log_count) { /* left over only when reads failed */
            gz_vk_record *r = log_at(q, 0);
            if (r->kind == REC_BATCH) {
                count_batch_drops(q, r);
                release_batch(q, r);
            }
            q->log_head = (q->log_head + 1) % q->log_cap;
            q->log_count--;
        }
        gz_vk_sync_destroy(q);
        gz_vk_pages_destroy(q);
    }
    /* Labels never ended by the app are lost zones. */
    uint64_t open = q->label_depth + q->label_overflow;
    if (open && q->label_track)
        gz_count_dropped_zones(q->label_track, open);
    /* Every zone has been emitted or counted (the device's final collect ran
     * before this): the tracks end, labels first since they share the
     * queue's clock. */
    gz_track_end(q->label_track);
    gz_track_end(q->frame_track);
    gz_track_end(q->track);
    pthread_mutex_destroy(&q->lock);
    free(q->log);
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
    gz_vk_record *newest = NULL;
    for (uint32_t i = 0; q->ring_ready && i < q->log_count; i++) {
        gz_vk_record *r = log_at(q, i);
        if (r->kind != REC_BATCH || !r->submitted || r->done_ns)
            continue;
        bool waited = !fences;
        for (uint32_t k = 0; !waited && r->fence && k < nfences; k++)
            waited = fences[k] == r->fence && (all || nfences == 1);
        if (waited) {
            r->done_ns = done_ns;
            newest = r;
        }
    }
    /* The newest batch this wait saw done gets a flow from its end to the
     * wait (the wait's CPU zone, which ends at done_ns). */
    uint64_t flow = 0;
    if (newest)
        flow = newest->wait_flow = gz_flow_next();
    pthread_mutex_unlock(&q->lock);
    if (flow)
        gz_flow_in(flow, done_ns);
}

/* ---- submission -------------------------------------------------------- */

/* Whether the newest submitted batch has completed (the queue is idle as
 * far as we can tell without waiting). Under the lock. */
static bool idle_locked(gz_vk_queue *q)
{
    for (uint32_t i = q->log_count; i-- > 0;) {
        const gz_vk_record *r = log_at(q, i);
        if (r->kind != REC_BATCH)
            continue;
        const gz_vk_run *run = &r->runs[r->nruns - 1];
        return q->mode == GZ_VK_QUEUE_COPY &&
               gz_vk_hostbuf_ready(&q->pages[run->page]->results, run->first + run->count - 1, 1);
    }
    return true;
}

gz_vk_submit *gz_vk_submit_begin(gz_vk_queue *q, uint32_t call_name, VkFence fence)
{
    if (!q || !q->track || gz_vk_device_lost(q->dev))
        return NULL;
    pthread_mutex_lock(&q->lock);
    bool ready = ensure_ring(q);
    bool idle = ready && idle_locked(q);
    pthread_mutex_unlock(&q->lock);
    if (!ready)
        return NULL;
    if (!gz_vk_can_calibrate(q->dev) && q->mode == GZ_VK_QUEUE_COPY)
        gz_vk_sync_maybe(q, idle, fence);
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
static uint32_t cmdbuf_name(gz_vk_cmdbuf *cb, uint32_t j)
{
    if (cb && cb->name)
        return cb->name;
    if (cb && cb->rec && cb->rec->default_name)
        return cb->rec->default_name;
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

/* Takes the bracket entries of a batch (under the lock). */
static bool take_brackets(gz_vk_queue *q, gz_vk_record *r)
{
    uint32_t need = r->nbrackets;
    /* A small batch in one run, never split at a page's end: then a steady
     * program's batches fall on the same entries lap after lap, and the
     * command buffers recorded for them (the copy at each batch's end) are
     * found recorded already (dyn_digest). Split at a page's end, they moved
     * by a few entries each lap and every one was recorded again (~15 µs of
     * lavapipe's CPU per batch). */
    uint32_t min = need <= GZ_VK_PAGE_ENTRIES / 8 ? need : 1;
    while (need && r->nruns < GZ_VK_BATCH_RUNS) {
        if (!gz_vk_pages_take(q, need, min, &r->runs[r->nruns]))
            break;
        need -= r->runs[r->nruns++].count;
    }
    if (!need)
        return true;
    for (uint32_t k = 0; k < r->nruns; k++)
        gz_vk_pages_give(q, &r->runs[k]);
    r->nruns = 0;
    return false;
}

/* Label value entries for the execution in entry e of recording rec
 * (under the lock); merged into the record's runs where contiguous. */
static bool take_label_entries(gz_vk_queue *q, gz_vk_record *r, gz_vk_entry *e, uint32_t n)
{
    gz_vk_run run;
    if (!gz_vk_pages_take(q, n, n, &run))
        return false;
    gz_vk_run *prev = r->nlabel_runs ? &r->label_runs[r->nlabel_runs - 1] : NULL;
    if (prev && prev->page == run.page && prev->first + prev->count == run.first) {
        prev->count += run.count;
    } else if (r->nlabel_runs < GZ_VK_BATCH_RUNS) {
        r->label_runs[r->nlabel_runs++] = run;
    } else {
        gz_vk_pages_give(q, &run);
        return false;
    }
    e->label_page = run.page;
    e->label_first = run.first;
    return true;
}

/* An execution of rec on q, in entry e of the batch numbered batch_seq:
 * numbered in rec, and the executions whose label values it may overwrite
 * marked (under the device lock: one recording may be submitted on several
 * queues at once). */
static void execution_start(gz_vk_queue *q, gz_vk_recording *rec, gz_vk_entry *e,
                            uint64_t batch_seq, const gz_vk_run *last_run)
{
    gz_vk_device *dev = q->dev;
    pthread_mutex_lock(&dev->lock);
    e->serial = ++rec->next_serial;
    bool other_running = rec->pending && rec->pending_queue != q &&
                         !(rec->last_done_buf &&
                           gz_vk_hostbuf_ready(rec->last_done_buf, rec->last_done_entry, 1));
    if (other_running) {
        /* Another queue's unread execution: the two may write the same
         * queries at the same time. Every execution so far loses its
         * values (some needlessly: this is rare, and never wrong). */
        rec->conflict_upto = e->serial;
    } else if (rec->pending && rec->last_batch == batch_seq) {
        /* The same batch twice: our reset before this execution clears
         * the earlier one's values before the batch's end copies them. */
        rec->last_entry->labels_timed = false;
    }
    rec->pending++;
    rec->pending_queue = q;
    rec->last_batch = batch_seq;
    rec->last_entry = e;
    gz_vk_page *p = q->pages[last_run->page];
    rec->last_done_buf = p->results.results ? &p->results : NULL;
    rec->last_done_entry = last_run->first + last_run->count - 1u;
    pthread_mutex_unlock(&dev->lock);
}

/* A 64-bit digest of what a dynamic command buffer would record: when it
 * equals what the buffer holds already (a steady program gets the same
 * entries batch after batch), the buffer is submitted again as it is.
 * Recording costs more than the commands themselves on some drivers. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

/* Handles, not page numbers: a page may be replaced by a larger one. */
static uint64_t mix_page(uint64_t h, const gz_vk_page *p)
{
    return mix(mix(h, (uint64_t)(uintptr_t)p->pool), (uint64_t)(uintptr_t)p->results.buffer);
}

static uint64_t dyn_digest(gz_vk_queue *q, const gz_vk_record *r, const gz_vk_recording *resets,
                           const gz_vk_page *own, uint32_t at, bool last)
{
    uint64_t h = mix(mix_page(0x6770757a6f6e6573ull, own), at);
    if (resets)
        for (uint32_t i = 0; i < resets->nranges; i++)
            h = mix(mix(h, resets->ranges[i].first_query), resets->ranges[i].count);
    if (!last)
        return mix(h, 1);
    for (uint32_t m = 0; m < r->nruns; m++)
        h = mix(mix(mix_page(h, q->pages[r->runs[m].page]), r->runs[m].first), r->runs[m].count);
    for (uint32_t b = 0; b + 1 < r->nbrackets; b++) {
        const gz_vk_entry *e = bracket(q, r, b);
        if (!e->rec || !e->labels_timed || !e->rec->nvalues)
            continue;
        h = mix(mix(mix_page(mix(h, b), q->pages[e->label_page]), e->label_first), 3);
        for (uint32_t i = 0; i < e->rec->nranges; i++)
            h = mix(mix(h, e->rec->ranges[i].first_query), e->rec->ranges[i].count);
    }
    return mix(h, 2);
}

/* Begins recording one of our dynamic command buffers (entry i of page p). */
static VkCommandBuffer dyn_begin(gz_vk_queue *q, gz_vk_page *p, uint32_t i)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    if (!p->dyn[i]) {
        VkCommandBufferAllocateInfo alloc = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
            .commandPool = q->cmd_pool,
            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
            .commandBufferCount = 1,
        };
        if (f->AllocateCommandBuffers(dev->info.device, &alloc, &p->dyn[i]) != VK_SUCCESS) {
            p->dyn[i] = VK_NULL_HANDLE;
            return VK_NULL_HANDLE;
        }
        gz_vk_own_cmdbufs(dev, &p->dyn[i], 1);
    }
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    return f->BeginCommandBuffer(p->dyn[i], &begin) == VK_SUCCESS ? p->dyn[i] : VK_NULL_HANDLE;
}

/* Our command buffers of a taken batch: the bracket before app command
 * buffer j resets its label queries (when it writes any), the last one
 * copies every result of the batch to the host. Without any lock: the
 * submitting thread owns the batch's entries until its record is
 * submitted. Returns false when a Vulkan call failed. */
static bool record_brackets(gz_vk_queue *q, const gz_vk_record *r, uint32_t n,
                            VkCommandBuffer *out)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    uint32_t j = 0;
    for (uint32_t k = 0; k < r->nruns; k++) {
        const gz_vk_run *run = &r->runs[k];
        gz_vk_page *p = q->pages[run->page];
        if (!gz_vk_pages_prepare(q, run))
            return false;
        for (uint32_t i = 0; i < run->count; i++, j++) {
            uint32_t at = run->first + i;
            bool last = j == r->nbrackets - 1;
            /* Where it goes: before app command buffer j, or after the last. */
            VkCommandBuffer *mine = r->nbrackets == n + 1 ? &out[2 * j] : &out[j ? n + 1 : 0];
            const gz_vk_recording *rec = p->entries[at].rec;
            const gz_vk_recording *resets = rec && rec->nranges ? rec : NULL;
            if (!resets && (!last || q->mode != GZ_VK_QUEUE_COPY)) {
                *mine = p->ts[at];
                continue;
            }
            uint64_t digest = dyn_digest(q, r, resets, p, at, last);
            if (p->dyn[at] && p->dyn_digest[at] == digest) {
                *mine = p->dyn[at];
                continue;
            }
            p->dyn_digest[at] = 0;
            VkCommandBuffer cb = dyn_begin(q, p, at);
            if (!cb)
                return false;
            if (resets)
                gz_vk_recording_cmd_reset(dev, resets, cb);
            if (!dev->info.host_query_reset)
                f->CmdResetQueryPool(cb, p->pool, at, 1);
            f->CmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->pool, at);
            if (last) {
                for (uint32_t m = 0; m < r->nruns; m++)
                    gz_vk_cmd_copy_results(f, cb, q->pages[r->runs[m].page]->pool,
                                           r->runs[m].first, r->runs[m].count,
                                           &q->pages[r->runs[m].page]->results, r->runs[m].first);
                for (uint32_t b = 0; b + 1 < r->nbrackets; b++) {
                    const gz_vk_entry *e = bracket(q, r, b);
                    if (e->rec && e->labels_timed && e->rec->nvalues)
                        gz_vk_recording_cmd_copy(dev, e->rec, cb,
                                                 &q->pages[e->label_page]->results,
                                                 e->label_first);
                }
                gz_vk_cmd_results_to_host(f, cb);
            }
            if (f->EndCommandBuffer(cb) != VK_SUCCESS)
                return false;
            p->dyn_digest[at] = digest;
            *mine = cb;
        }
    }
    for (uint32_t k = 0; k < r->nlabel_runs; k++)
        gz_vk_hostbuf_clear(&q->pages[r->label_runs[k].page]->results, r->label_runs[k].first,
                            r->label_runs[k].count);
    return true;
}

/* Drops the newest batch of call s (in progress: nothing after it is
 * submitted, though a queue label may have been logged after it by a
 * callback re-entering us during the call down). */
static void untake_newest(gz_vk_submit *s)
{
    gz_vk_queue *q = s->q;
    pthread_mutex_lock(&q->lock);
    for (uint32_t i = q->log_count; i-- > 0;) {
        gz_vk_record *r = log_at(q, i);
        if (r->call != s->call)
            continue;
        release_batch(q, r);
        for (uint32_t k = i; k + 1 < q->log_count; k++)
            *log_at(q, k) = *log_at(q, k + 1);
        q->log_count--;
        break;
    }
    pthread_mutex_unlock(&q->lock);
}

static uint32_t pass_untimed(gz_vk_queue *q, const VkCommandBuffer *app, uint32_t n,
                             VkCommandBuffer *out, bool per_cmdbuf)
{
    static int once;
    gz_log_once(&once, "no timestamp entries left for a submission (%u pages of queries in "
                       "flight on one queue); some submissions are not timed (counted as "
                       "dropped)",
                GZ_VK_MAX_PAGES);
    gz_count_dropped_zones(q->track, per_cmdbuf ? 1 + n : 1);
    if (n)
        memcpy(out, app, n * sizeof *out);
    return n;
}

uint32_t gz_vk_submit_batch(gz_vk_submit *s, uint32_t batch, const VkCommandBuffer *app,
                            gz_vk_cmdbuf *const *cbs, uint32_t n, VkCommandBuffer *out)
{
    gz_vk_queue *q = s->q;
    gz_vk_device *dev = q->dev;
    bool per_cmdbuf = dev->level >= GZ_LEVEL_CMDBUF;
    if (!n)
        return 0;
    gz_vk_record rec = {.kind = REC_BATCH,
                        .name = s->name,
                        .nbrackets = per_cmdbuf ? n + 1 : 2,
                        .batch = batch,
                        .cmdbufs = n,
                        .submit_ns = s->submit_ns};

    pthread_mutex_lock(&q->lock);
    gz_vk_record *r = take_brackets(q, &rec) ? log_push(q) : NULL;
    if (!r) {
        for (uint32_t k = 0; k < rec.nruns; k++)
            gz_vk_pages_give(q, &rec.runs[k]);
        pthread_mutex_unlock(&q->lock);
        return pass_untimed(q, app, n, out, per_cmdbuf);
    }
    uint64_t batch_seq = ++q->batch_seq;
    for (uint32_t j = 0; j < rec.nbrackets; j++)
        *bracket(q, &rec, j) = (gz_vk_entry){0};
    /* Each execution of a recording with labels: numbered, and given its
     * own entries for the label values when they can be its own. */
    for (uint32_t j = 0; per_cmdbuf && j < n; j++) {
        gz_vk_entry *e = bracket(q, &rec, j);
        e->name = cmdbuf_name(cbs[j], j);
        gz_vk_recording *x = cbs[j] ? cbs[j]->rec : NULL;
        if (!x || !x->nops || !__atomic_load_n(&x->ended, __ATOMIC_ACQUIRE))
            continue;
        gz_vk_recording_ref(x);
        e->rec = x;
        e->labels_timed = x->nvalues && take_label_entries(q, &rec, e, x->nvalues);
        execution_start(q, x, e, batch_seq, &rec.runs[rec.nruns - 1]);
    }
    *r = rec;
    r->fence = s->fence;
    r->call = s->call;
    r->flow = gz_flow_next();
    r->submitted = false;
    s->nrecords++;
    pthread_mutex_unlock(&q->lock);

    if (!record_brackets(q, &rec, n, out)) {
        static int once;
        gz_log_once(&once, "recording the layer's command buffers failed on %s; that "
                           "submission is not timed (counted as dropped)",
                    dev->info.device_name);
        untake_newest(s);
        s->nrecords--;
        return pass_untimed(q, app, n, out, per_cmdbuf);
    }
    if (!per_cmdbuf) {
        memcpy(out + 1, app, n * sizeof *out);
        return n + 2;
    }
    for (uint32_t j = 0; j < n; j++)
        out[2 * j + 1] = app[j];
    return 2 * n + 1;
}

void gz_vk_submit_end(gz_vk_submit *s, VkResult result)
{
    gz_vk_queue *q = s->q;
    pthread_mutex_lock(&q->lock);
    /* This call's records are the newest but for queue labels that a
     * callback re-entering us during the call down may have logged after
     * them: found from the tail. None is submitted yet, so the worker has
     * read nothing from the first of them on. */
    uint32_t first = q->log_count, found = 0;
    for (uint32_t i = q->log_count; found < s->nrecords && i-- > 0;) {
        gz_vk_record *r = log_at(q, i);
        if (r->call != s->call)
            continue;
        found++;
        first = i;
        if (result == VK_SUCCESS) {
            r->submitted = true;
            gz_flow_out(r->flow, s->submit_ns);
        } else {
            release_batch(q, r); /* nothing was submitted: forgotten */
            r->call = UINT64_MAX;
        }
    }
    if (result != VK_SUCCESS) {
        uint32_t kept = first;
        for (uint32_t i = first; i < q->log_count; i++)
            if (log_at(q, i)->call != UINT64_MAX)
                *log_at(q, kept++) = *log_at(q, i);
        q->log_count = kept;
    }
    pthread_mutex_unlock(&q->lock);
    if (result == VK_ERROR_DEVICE_LOST && !gz_vk_device_lost(q->dev)) {
        gz_vk_device_set_lost(q->dev);
        gz_log("%s was lost; timing stops for this device", q->dev->info.device_name);
    }
}
