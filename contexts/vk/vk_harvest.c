/* Completed batches into zones (the worker): a batch's values are read, all
 * of them or none, then its zones go out as one lot: the submission, each
 * command buffer, the debug labels replayed on the queue's label stack in
 * submission order (a label may begin in one command buffer and end in a
 * later one, or in a queue label), and, at the passes and commands levels,
 * render pass instances and commands on a track of their own (a suspended
 * render pass resumed in the next command buffer is one zone). Each value
 * comes from where the batch put it: a recording's own queries
 * (vk_uses.c) or a bracket slot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_vk_internal.h"

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

static void ensure_passes_track(gz_vk_queue *q)
{
    if (q->passes_track)
        return;
    char name[sizeof q->name + 8];
    snprintf(name, sizeof name, "%s passes", q->name);
    q->passes_track = gz_track_new(GZ_API_VULKAN, name, q->dev->info.timestamp_period,
                                   q->valid_bits, q->track);
}

typedef struct batch_out {
    uint32_t n; /* items in q->scratch */
    uint32_t zones, label_zones, frame_zones, pass_zones;
    uint64_t pass_drops;                     /* pass and command zones lost */
    uint64_t pass_untimed[GZ_VK_UNTIMED_COUNT];
    uint64_t label_drops;                    /* label zones lost for good */
    uint64_t untimed[GZ_VK_UNTIMED_COUNT];   /* label zones not timed, by reason */
    uint64_t cmdbuf_drops;                   /* command buffer zones lost */
    uint64_t cmdbuf_untimed[GZ_VK_UNTIMED_COUNT];
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
    else if (track == q->passes_track)
        o->pass_zones++;
    else
        o->frame_zones++;
}

/* ---- the label stack --------------------------------------------------- */

static void label_push(gz_vk_queue *q, label_frame f)
{
    if (q->label_depth == GZ_VK_LABEL_DEPTH || q->label_overflow) {
        q->label_overflow++;
        return;
    }
    q->labels[q->label_depth++] = f;
}

/* An op's timestamp, or why it has none. */
typedef struct op_value {
    bool known;
    uint16_t why; /* gz_vk_untimed, when !known: GZ_VK_TIMED means lost */
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
        o->untimed[f.begin_ticks]++; /* begin_ticks holds the reason */
        return;
    }
    if (f.lost || f.waiting) {
        o->label_drops++;
        return;
    }
    if (!end.known) {
        if (end.why == GZ_VK_TIMED)
            o->label_drops++;
        else
            o->untimed[end.why]++;
        return;
    }
    ensure_label_track(q);
    emit_zone(q, o, q->label_track, GZ_ZONE_LABEL, f.name, f.begin_ticks, end.ticks, 0);
}

/* ---- render pass instances and commands ---------------------------------- */

/* A pass or command zone that could not be timed: counted with its reason
 * (GZ_VK_TIMED: lost). */
static void pass_lost(batch_out *o, uint16_t why)
{
    if (why == GZ_VK_TIMED)
        o->pass_drops++;
    else
        o->pass_untimed[why]++;
}

static void open_at(gz_vk_queue *q, batch_out *o, open_zone *z, const gz_vk_recording *rec,
                    const gz_vk_op *op, op_value v)
{
    if (z->open)
        o->pass_drops++; /* begun again before its end: the first is lost */
    z->open = false;
    if (!v.known) {
        pass_lost(o, v.why);
        return;
    }
    z->open = true;
    z->begin_ticks = v.ticks;
    z->name = z->detail = 0;
    if (op->name < rec->ndescs)
        gz_vk_describe(q, &rec->descs[op->name], &z->name, &z->detail);
}

static void close_at(gz_vk_queue *q, batch_out *o, open_zone *z, gz_zone_kind kind, op_value v)
{
    if (!z->open)
        return;
    z->open = false;
    if (!v.known) {
        pass_lost(o, v.why);
        return;
    }
    ensure_passes_track(q);
    emit_zone(q, o, q->passes_track, kind, z->name, z->begin_ticks, v.ticks, 0);
    gz_item *it = z->detail ? item_push(q, &o->n) : NULL;
    if (it)
        *it = (gz_item){.type = GZ_ITEM_ZONE_DETAIL, .track = q->passes_track, .name = z->detail};
}

static void replay_pass_op(gz_vk_queue *q, batch_out *o, const gz_vk_recording *rec,
                           const gz_vk_op *op, op_value v)
{
    switch (OP_KIND(op)) {
    case OP_PASS_BEGIN:
        if (op->kind & OP_F_RESUMES)
            return; /* the instance suspended before goes on */
        if (op->name == GZ_VK_NO_DESC && !v.known && !q->pass.open) {
            pass_lost(o, v.why); /* not timed by design: no end follows */
            return;
        }
        open_at(q, o, &q->pass, rec, op, v);
        return;
    case OP_PASS_END:
        if (!(op->kind & OP_F_SUSPENDS))
            close_at(q, o, &q->pass, GZ_ZONE_PASS, v);
        return;
    case OP_CMD_BEGIN:
        if (op->name == GZ_VK_NO_DESC && !v.known) {
            pass_lost(o, v.why);
            return;
        }
        open_at(q, o, &q->cmd, rec, op, v);
        return;
    case OP_CMD_END:
        close_at(q, o, &q->cmd, GZ_ZONE_COMMAND, v);
        return;
    default:
        return;
    }
}

/* The label ops of one execution of rec, with its values (NULL: lost, for
 * the reason lost_why; GZ_VK_TIMED: none given). */
static void replay_labels(gz_vk_queue *q, batch_out *o, const gz_vk_recording *rec,
                          const uint64_t *values, gz_vk_untimed lost_why)
{
    for (uint32_t i = 0; i < rec->nops; i++) {
        const gz_vk_op *op = &rec->ops[i];
        op_value v = {.why = op->untimed};
        if (op->value != GZ_VK_NO_QUERY) {
            if (values) {
                v.known = true;
                v.ticks = values[op->value];
            } else {
                v.why = (uint16_t)lost_why; /* meant to be timed, values lost */
            }
        }
        if (OP_KIND(op) >= OP_PASS_BEGIN) {
            replay_pass_op(q, o, rec, op, v);
        } else if (OP_KIND(op) == OP_LABEL_BEGIN) {
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

/* ---- reading a batch's values ------------------------------------------ */

typedef enum value_state { VALUE_OK, VALUE_MISSING, VALUE_LATER } value_state;

/* Slot's timestamp: from its copy or its query. */
static value_state read_slot(gz_vk_queue *q, uint32_t slot, bool complete, uint64_t *ticks)
{
    if (slot == GZ_VK_NO_SLOT)
        return VALUE_MISSING;
    gz_vk_device *dev = q->dev;
    uint32_t query = q->slots.queries[slot];
    bool lost = false, ok;
    if (q->readback == GZ_VK_READ_COPY)
        ok = gz_vk_hostbuf_read(gz_vk_query_results(dev, query), gz_vk_query_index(query), 1,
                                ticks);
    else
        ok = gz_vk_query_read(&dev->info.fns, dev->info.device, gz_vk_query_pool(dev, query),
                              gz_vk_query_index(query), 1, ticks, &lost);
    if (lost && !gz_vk_device_lost(dev)) {
        gz_vk_device_set_lost(dev);
        gz_log("%s was lost (vkGetQueryPoolResults); timing stops for this device",
               dev->info.device_name);
    }
    return ok ? VALUE_OK : complete || lost ? VALUE_MISSING : VALUE_LATER;
}

/* One primary command buffer of a batch, as read. */
typedef struct primary {
    const gz_vk_exec *e;
    uint32_t nsecs;          /* secondaries after it in the batch */
    uint64_t *values;        /* its execution's values (NULL: none, or lost) */
    uint64_t slot_ticks;     /* the slot before it */
    value_state slot_state;
    gz_vk_untimed lost_why;  /* values NULL though it has some: why */
} primary;

/* The values of a primary's execution: its own use's, then each
 * secondary's at its offset. */
static value_state read_execution(gz_vk_queue *q, primary *p, uint64_t *values, bool complete)
{
    const gz_vk_recording *rec = p->e->rec;
    value_state st = VALUE_OK;
    bool lost = false;
    p->lost_why = GZ_VK_TIMED;
    if (p->e->use) {
        use_read u = gz_vk_use_read(p->e->use, values, &lost);
        st = u == USE_READ_OK ? VALUE_OK : u == USE_READ_LOST ? VALUE_MISSING : VALUE_LATER;
        if (u == USE_READ_LOST)
            p->lost_why = (gz_vk_untimed)p->e->use->lost_why;
    } else if (rec->set.nvalues) {
        st = VALUE_MISSING; /* no use: out of memory at submit */
    }
    for (uint32_t s = 0; s < p->nsecs && st == VALUE_OK; s++) {
        const gz_vk_exec *se = p->e + 1 + s;
        uint32_t at = s < rec->nsecs ? rec->sec_offset[s] : 0;
        if (!se->use || s >= rec->nsecs) {
            st = VALUE_MISSING;
            break;
        }
        use_read u = gz_vk_use_read(se->use, values + at, &lost);
        st = u == USE_READ_OK ? VALUE_OK : u == USE_READ_LOST ? VALUE_MISSING : VALUE_LATER;
        if (u == USE_READ_LOST)
            p->lost_why = (gz_vk_untimed)se->use->lost_why;
    }
    if (lost && !gz_vk_device_lost(q->dev)) {
        gz_vk_device_set_lost(q->dev);
        gz_log("%s was lost (vkGetQueryPoolResults); timing stops for this device",
               q->dev->info.device_name);
    }
    if (st == VALUE_LATER && (complete || lost))
        st = VALUE_MISSING;
    return st;
}

/* ---- a batch ------------------------------------------------------------ */

static uint32_t cmdbuf_zones(const gz_vk_queue *q, const gz_vk_record *r)
{
    return q->dev->level >= GZ_LEVEL_CMDBUF ? r->cmdbufs : 0;
}

void gz_vk_harvest_drop(gz_vk_queue *q, const gz_vk_record *r)
{
    gz_count_dropped_zones(q->track, 1 + cmdbuf_zones(q, r));
}

/* Items a batch may emit at most: its bounds, zones and arguments, and its
 * label ops. */
static uint32_t items_of(const gz_vk_record *r, const gz_vk_exec *execs)
{
    uint32_t n = 8 + 2 * r->nexecs;
    for (uint32_t i = 0; i < r->nexecs; i++)
        if (execs[i].kind == EXEC_PRIMARY && execs[i].rec)
            n += 2 * execs[i].rec->nops; /* a zone and its details at most */
    return n;
}

/* The begin and end of primary j, where known. */
static bool begin_of(const primary *p, uint64_t *ticks)
{
    const gz_vk_recording *rec = p->e->rec;
    if (rec && p->values && rec->begin_value != GZ_VK_NO_QUERY) {
        *ticks = p->values[rec->begin_value];
        return true;
    }
    *ticks = p->slot_ticks;
    return p->slot_state == VALUE_OK;
}

static bool end_of(const primary *p, const primary *next, uint64_t end_slot, bool end_slot_ok,
                   uint64_t *ticks)
{
    const gz_vk_recording *rec = p->e->rec;
    if (rec && p->values && rec->end_value != GZ_VK_NO_QUERY) {
        *ticks = p->values[rec->end_value];
        return true;
    }
    *ticks = next ? next->slot_ticks : end_slot;
    return next ? next->slot_state == VALUE_OK : end_slot_ok;
}

harvest_status gz_vk_harvest_batch(gz_vk_queue *q, const gz_vk_record *r,
                                   const gz_vk_exec *execs, bool final)
{
    gz_vk_device *dev = q->dev;
    if (!execs) {
        gz_vk_harvest_drop(q, r);
        return HARVEST_DONE;
    }
    /* Completed, as far as the layer can prove: its timeline value was
     * reached, a wait of the app's saw it, or the device is going. Without
     * a timeline semaphore, when all its values are written. */
    bool complete = final || gz_vk_device_lost(dev) || r->done_ns ||
                    (q->timeline && q->timeline_seen >= r->value);
    if (!complete && q->timeline)
        return HARVEST_LATER;
    if (!final && gz_emit_room() < items_of(r, execs))
        return HARVEST_LATER; /* the rest at the next poll: nothing dropped for a burst */

    /* The primaries, and how many values their executions hold. */
    primary *primaries = q->primaries;
    uint32_t np = 0, nvalues = 0;
    for (uint32_t i = 0; i < r->nexecs; i++) {
        if (execs[i].kind != EXEC_PRIMARY)
            continue;
        if (!reserve(&q->primaries, &q->primaries_cap, np + 1, sizeof *primaries)) {
            gz_vk_harvest_drop(q, r);
            return HARVEST_DONE;
        }
        primaries = q->primaries;
        primaries[np] = (primary){.e = &execs[i]};
        uint32_t k = i + 1;
        while (k < r->nexecs && execs[k].kind == EXEC_SECONDARY)
            k++;
        primaries[np].nsecs = k - i - 1;
        if (execs[i].rec)
            nvalues += execs[i].rec->nvalues;
        np++;
    }
    if (!reserve((void **)&q->values, &q->values_cap, nvalues + 1, sizeof *q->values)) {
        gz_vk_harvest_drop(q, r);
        return HARVEST_DONE;
    }
    /* Every value first, or none: a batch is emitted whole. */
    uint64_t *values = q->values;
    for (uint32_t j = 0; j < np; j++) {
        primary *p = &primaries[j];
        p->slot_state = read_slot(q, p->e->slot, complete, &p->slot_ticks);
        if (p->slot_state == VALUE_LATER)
            return HARVEST_LATER;
        const gz_vk_recording *rec = p->e->rec;
        if (rec && rec->nvalues) {
            value_state st = read_execution(q, p, values, complete);
            if (st == VALUE_LATER)
                return HARVEST_LATER;
            p->values = st == VALUE_OK ? values : NULL;
            values += rec->nvalues;
        }
    }
    uint64_t end_slot = 0;
    value_state end_state = read_slot(q, r->end_slot, complete, &end_slot);
    if (end_state == VALUE_LATER)
        return HARVEST_LATER;

    uint64_t begin_ticks, end_ticks;
    bool have_begin = np && begin_of(&primaries[0], &begin_ticks);
    bool have_end = np && end_of(&primaries[np - 1], NULL, end_slot, end_state == VALUE_OK,
                                 &end_ticks);
    batch_out o = {0};
    if (have_begin && have_end) {
        /* Done when the worker saw it, or earlier when the app's wait did. */
        uint64_t seen_ns = gz_host_now_ns();
        if (r->done_ns && r->done_ns < seen_ns)
            seen_ns = r->done_ns;
        gz_item *b = item_push(q, &o.n);
        if (b)
            *b = gz_item_bound(q->track, true, begin_ticks, r->submit_ns);
        b = item_push(q, &o.n);
        if (b)
            *b = gz_item_bound(q->track, false, end_ticks, seen_ns);
        emit_zone(q, &o, q->track, GZ_ZONE_SUBMIT, r->name, begin_ticks, end_ticks, r->flow);
        gz_item *args = item_push(q, &o.n);
        if (args)
            *args = (gz_item){.type = GZ_ITEM_ZONE_ARGS,
                              .track = q->track,
                              .args = {.batch = r->batch, .cmdbufs = r->cmdbufs}};
        gz_item *wf = r->wait_flow ? item_push(q, &o.n) : NULL;
        if (wf)
            *wf = gz_item_wait_flow(q->track, r->wait_flow);
        if (!q->frame_open) {
            q->frame_open = true;
            q->frame_begin_ticks = begin_ticks;
        }
        /* Queue labels begun since the last batch start with this one. */
        for (uint32_t i = 0; i < q->label_depth; i++) {
            if (q->labels[i].waiting) {
                q->labels[i].waiting = false;
                q->labels[i].begin_ticks = begin_ticks;
            }
        }
        q->last_ticks = end_ticks;
        q->have_last = true;
    } else if (np && primaries[0].lost_why != GZ_VK_TIMED) {
        o.cmdbuf_untimed[primaries[0].lost_why]++;
    } else if (np && primaries[np - 1].lost_why != GZ_VK_TIMED) {
        o.cmdbuf_untimed[primaries[np - 1].lost_why]++;
    } else {
        o.cmdbuf_drops++;
    }

    for (uint32_t j = 0; j < np && dev->level >= GZ_LEVEL_CMDBUF; j++) {
        const primary *p = &primaries[j];
        const gz_vk_recording *rec = p->e->rec;
        uint64_t b, e;
        if (begin_of(p, &b) &&
            end_of(p, j + 1 < np ? &primaries[j + 1] : NULL, end_slot, end_state == VALUE_OK, &e))
            emit_zone(q, &o, q->track, GZ_ZONE_CMDBUF, p->e->name, b, e, 0);
        else if (rec && rec->cmdbuf_untimed != GZ_VK_TIMED)
            o.cmdbuf_untimed[rec->cmdbuf_untimed]++;
        else if (p->lost_why != GZ_VK_TIMED)
            o.cmdbuf_untimed[p->lost_why]++;
        else
            o.cmdbuf_drops++;
        if (rec && rec->nops)
            replay_labels(q, &o, rec, p->values, p->lost_why);
    }

    if (o.n && !gz_emit_n(q->scratch, o.n)) {
        gz_count_dropped_zones(q->track, o.zones);
        gz_count_dropped_zones(q->label_track, o.label_zones);
        gz_count_dropped_zones(q->passes_track, o.pass_zones);
    }
    uint64_t untimed = 0, cmdbuf_untimed = 0, pass_untimed = 0;
    for (uint32_t k = 0; k < GZ_VK_UNTIMED_COUNT; k++) {
        if (k == GZ_VK_UNTIMED_LEVEL)
            continue; /* not asked for: not a loss */
        untimed += o.untimed[k];
        cmdbuf_untimed += o.cmdbuf_untimed[k];
        pass_untimed += o.pass_untimed[k];
        gz_vk_count_untimed(dev, UNTIMED_LABELS, (gz_vk_untimed)k, o.untimed[k]);
        gz_vk_count_untimed(dev, UNTIMED_CMDBUFS, (gz_vk_untimed)k, o.cmdbuf_untimed[k]);
        gz_vk_count_untimed(dev, UNTIMED_PASSES, (gz_vk_untimed)k, o.pass_untimed[k]);
    }
    if (o.pass_drops || pass_untimed) {
        ensure_passes_track(q);
        gz_count_dropped_zones(q->passes_track, o.pass_drops + pass_untimed);
    }
    if (o.label_drops || untimed) {
        ensure_label_track(q);
        gz_count_dropped_zones(q->label_track, o.label_drops + untimed);
    }
    if (o.cmdbuf_drops || cmdbuf_untimed)
        gz_count_dropped_zones(q->track, o.cmdbuf_drops + cmdbuf_untimed);
    return HARVEST_DONE;
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

void gz_vk_harvest_qlabel(gz_vk_queue *q, const gz_vk_record *r)
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

void gz_vk_harvest_end(gz_vk_queue *q)
{
    /* Labels never ended by the app are lost zones; so is a render pass
     * instance suspended and never resumed. */
    uint64_t open = q->label_depth + q->label_overflow;
    if (open && q->label_track)
        gz_count_dropped_zones(q->label_track, open);
    uint64_t open_passes = q->pass.open + q->cmd.open;
    if (open_passes && q->passes_track)
        gz_count_dropped_zones(q->passes_track, open_passes);
}
