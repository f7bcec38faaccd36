/* Recordings: the timestamps a command buffer carries inside its own
 * commands, written as the app records it.
 *
 * A primary's begin timestamp goes just before its first action command
 * (draw, dispatch, copy, barrier, render pass, …), not at
 * vkBeginCommandBuffer: a recording whose first action resumes a render
 * pass suspended by the command buffer before it may hold nothing before
 * that resumption, and only the first action tells. Labels begun before
 * that share the begin's timestamp (nothing ran between them). Its end
 * timestamp goes at vkEndCommandBuffer, unless the recording ends with a
 * render pass suspended. Labels in between get a timestamp where one may be
 * written: not between a suspension and its resumption; in a multiview
 * subpass one query per view, reserved together. Points with nothing
 * recorded between them share one timestamp (a label's end and the next
 * one's begin). Render pass instances and commands (the passes and
 * commands levels) are timed the same way (vk_passes.c).
 *
 * Every timestamp is BOTTOM_OF_PIPE: it waits for the work recorded before
 * it, so timestamps are monotonic in recording order, sibling regions never
 * overlap, and a command buffer's zone starts when the work before it on
 * the queue has finished. Nothing here waits on the GPU: a timestamp holds
 * back no later command.
 *
 * A SIMULTANEOUS_USE primary carries them like any other: its executions
 * rarely overlap (programs record one per swapchain image and wait for a
 * frame's fence before they submit it again), and where one is submitted
 * again while the previous execution may still run, a reset of ours goes
 * before it and both executions are counted as not timed (vk_uses.c).
 * SIMULTANEOUS_USE secondaries carry none: one may run several times
 * within one primary, where nothing can reset between the runs; so do
 * SIMULTANEOUS_USE primaries of transfer-only families, which cannot reset
 * queries in a command buffer. Their labels are not timed (counted, and
 * said in the summary). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_intern.h"
#include "gz_vk_internal.h"

/* Why a recording of cb carries no label timestamps (GZ_VK_TIMED: it
 * does), and whether it carries any timestamps at all. */
static gz_vk_untimed untimed_reason(gz_vk_device *dev, const gz_vk_cmdbuf *cb, bool simultaneous,
                                    gz_vk_untimed *cmdbuf_why)
{
    gz_vk_untimed why = GZ_VK_TIMED;
    if (cb->protected_pool)
        why = GZ_VK_UNTIMED_PROTECTED;
    else if (gz_vk_family_mode(dev, cb->family) == GZ_VK_QUEUE_UNTIMED)
        why = GZ_VK_UNTIMED_FAMILY;
    else if (simultaneous && (cb->secondary || !gz_vk_family_can_copy(dev, cb->family)))
        why = GZ_VK_UNTIMED_SIMULTANEOUS;
    *cmdbuf_why = why;
    if (why == GZ_VK_TIMED && dev->level < GZ_LEVEL_LABELS)
        why = GZ_VK_UNTIMED_LEVEL;
    return why;
}

/* The views of the render pass a secondary continues (multiview). */
static uint32_t inherited_views(const VkCommandBufferBeginInfo *info)
{
    const VkCommandBufferInheritanceInfo *inh = info->pInheritanceInfo;
    if (!inh || !(info->flags & VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT))
        return 0;
    for (const VkBaseInStructure *s = inh->pNext; s; s = s->pNext)
        if (s->sType == VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_RENDERING_INFO)
            return ((const VkCommandBufferInheritanceRenderingInfo *)s)->viewMask;
    uint32_t mask = 0;
    if (inh->renderPass)
        gz_vk_render_pass_views(inh->renderPass, inh->subpass, &mask);
    return mask;
}

/* Recordings gone, kept with their arrays for the next ones: a program
 * records its command buffers anew every frame, and the arrays they need
 * are the same frame after frame. */
#define SPARE_RECORDINGS 256u

/* A recording as new, its arrays (emptied) from a spare where there is
 * one. */
static gz_vk_recording *take_recording(gz_vk_device *dev)
{
    pthread_mutex_lock(&dev->spare_lock);
    gz_vk_recording *rec = dev->spare;
    if (rec) {
        dev->spare = rec->next_spare;
        dev->nspare--;
    }
    pthread_mutex_unlock(&dev->spare_lock);
    if (!rec)
        return calloc(1, sizeof *rec);
    gz_vk_recording keep = *rec;
    memset(rec, 0, sizeof *rec);
    rec->ops = keep.ops;
    rec->ops_cap = keep.ops_cap;
    rec->secs = keep.secs;
    rec->secs_cap = keep.secs_cap;
    rec->set.chunks = keep.set.chunks;
    rec->set.chunks_cap = keep.set.chunks_cap;
    rec->set.ranges = keep.set.ranges;
    rec->set.ranges_cap = keep.set.ranges_cap;
    rec->descs = keep.descs;
    rec->descs_cap = keep.descs_cap;
    return rec;
}

static void free_recording(gz_vk_recording *rec)
{
    free(rec->secs);
    free(rec->ops);
    free(rec->descs);
    free(rec->set.chunks);
    free(rec->set.ranges);
    free(rec);
}

void gz_vk_recordings_destroy(gz_vk_device *dev)
{
    while (dev->spare) {
        gz_vk_recording *rec = dev->spare;
        dev->spare = rec->next_spare;
        free_recording(rec);
    }
    dev->nspare = 0;
}

gz_vk_recording *gz_vk_recording_new(gz_vk_cmdbuf *cb, const VkCommandBufferBeginInfo *info)
{
    gz_vk_device *dev = cb->dev;
    gz_vk_recording *rec = take_recording(dev);
    if (!rec)
        return NULL;
    VkCommandBufferUsageFlags flags = info ? info->flags : 0;
    rec->refs = 1;
    rec->dev = dev;
    rec->family = cb->family;
    rec->secondary = cb->secondary;
    rec->simultaneous = (flags & VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT) != 0;
    rec->one_time = (flags & VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT) != 0;
    rec->untimed = untimed_reason(dev, cb, rec->simultaneous, &rec->cmdbuf_untimed);
    rec->timed = rec->cmdbuf_untimed == GZ_VK_TIMED &&
                 (!rec->secondary || rec->untimed == GZ_VK_TIMED);
    rec->passes_untimed = dev->level < GZ_LEVEL_PASSES ? GZ_VK_UNTIMED_LEVEL : rec->untimed;
    rec->begin_value = rec->end_value = GZ_VK_NO_QUERY;
    rec->first.rec = rec;
    if (rec->secondary && info) {
        rec->in_pass = (flags & VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT) != 0;
        rec->view_mask = inherited_views(info);
        rec->acted = true; /* a secondary has no begin of its own */
    }
    return rec;
}

void gz_vk_recording_ref(gz_vk_recording *rec)
{
    __atomic_add_fetch(&rec->refs, 1, __ATOMIC_ACQ_REL);
}

void gz_vk_recording_unref(gz_vk_recording *rec)
{
    if (!rec || __atomic_sub_fetch(&rec->refs, 1, __ATOMIC_ACQ_REL))
        return;
    /* No use is left unread: every command that wrote, reset or copied its
     * queries has completed. */
    gz_vk_device *dev = rec->dev;
    gz_vk_chunks_give(dev, rec->set.chunks, rec->set.nchunks);
    for (uint32_t i = 0; i < rec->nsecs; i++)
        gz_vk_recording_unref(rec->secs[i]);
    gz_vk_reset_cb_free(rec);
    gz_vk_use_unref(rec->last); /* the recording's own reference to its newest use */
    free(rec->first.snap);
    free(rec->sec_offset);
    pthread_mutex_lock(&dev->spare_lock);
    bool kept = dev->nspare < SPARE_RECORDINGS;
    if (kept) {
        rec->next_spare = dev->spare;
        dev->spare = rec;
        dev->nspare++;
    }
    pthread_mutex_unlock(&dev->spare_lock);
    if (!kept)
        free_recording(rec);
}

static uint32_t popcount(uint32_t v)
{
    return (uint32_t)__builtin_popcount(v);
}

/* Writes one timestamp into cb now: its value index, or GZ_VK_NO_QUERY with
 * the reason in *why. The point it marks is valid until the next action. */
static uint32_t write_timestamp(gz_vk_recording *rec, VkCommandBuffer cb, gz_vk_untimed *why)
{
    if (rec->suspended) {
        *why = GZ_VK_UNTIMED_SUSPENDED;
        return GZ_VK_NO_QUERY;
    }
    /* In a multiview subpass a timestamp writes one query per view. */
    uint32_t n = rec->in_pass && rec->view_mask ? popcount(rec->view_mask) : 1;
    if (n > GZ_VK_CHUNK) {
        *why = GZ_VK_UNTIMED_MULTIVIEW;
        return GZ_VK_NO_QUERY;
    }
    uint32_t value;
    uint32_t query = gz_vk_qset_take(rec->dev, &rec->set, n, &value);
    if (query == GZ_VK_NO_QUERY) {
        *why = rec->set.nvalues + 1 > GZ_VK_MAX_VALUES ? GZ_VK_UNTIMED_TOO_MANY
                                                       : GZ_VK_UNTIMED_POOL;
        return GZ_VK_NO_QUERY;
    }
    rec->dev->info.fns.CmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                                         gz_vk_query_pool(rec->dev, query),
                                         gz_vk_query_index(query));
    rec->point_valid = true;
    rec->point_value = value;
    rec->point_label = 0xff;
    return value;
}

gz_vk_op *gz_vk_rec_op(gz_vk_recording *rec)
{
    if (rec->nops == rec->ops_cap) {
        uint32_t cap = rec->ops_cap ? rec->ops_cap * 2 : 8;
        gz_vk_op *ops = realloc(rec->ops, cap * sizeof *ops);
        if (!ops)
            return NULL;
        rec->ops = ops;
        rec->ops_cap = cap;
    }
    return &rec->ops[rec->nops++];
}

uint32_t gz_vk_rec_stamp(gz_vk_recording *rec, VkCommandBuffer cb, gz_vk_untimed *why)
{
    *why = GZ_VK_TIMED;
    uint32_t v = rec->point_valid ? rec->point_value : write_timestamp(rec, cb, why);
    /* The command open since the last point ends here. */
    if (rec->open_cmd) {
        rec->open_cmd = false;
        gz_vk_op *op = gz_vk_rec_op(rec);
        if (op)
            *op = (gz_vk_op){.kind = OP_CMD_END, .value = v, .untimed = (uint16_t)*why};
    }
    return v;
}

/* The recording's first action: its begin, and the labels begun or ended
 * before it, get one timestamp here, unless this action resumes a suspended
 * render pass (nothing of ours may come before it). */
static void first_action(gz_vk_recording *rec, VkCommandBuffer cb, bool resumes)
{
    rec->acted = true;
    /* Known even where nothing is timed: no slot of the queue's may go
     * between this and the command buffer it resumes from. */
    rec->resumes = resumes;
    if (resumes && !rec->secondary)
        rec->cmdbuf_untimed = GZ_VK_UNTIMED_SUSPENDED;
    if (!rec->timed)
        return;
    gz_vk_untimed why = GZ_VK_UNTIMED_SUSPENDED;
    uint32_t v = resumes ? GZ_VK_NO_QUERY : gz_vk_rec_stamp(rec, cb, &why);
    rec->begin_value = v;
    if (v == GZ_VK_NO_QUERY)
        rec->cmdbuf_untimed = why;
    for (uint32_t i = rec->first_pending; rec->untimed == GZ_VK_TIMED && i < rec->nops; i++) {
        rec->ops[i].value = v;
        if (v == GZ_VK_NO_QUERY)
            rec->ops[i].untimed = (uint16_t)why;
    }
    rec->first_pending = rec->nops;
}

void gz_vk_recording_action(gz_vk_recording *rec, VkCommandBuffer cb)
{
    if (rec->ended)
        return;
    if (!rec->acted)
        first_action(rec, cb, false);
    rec->point_valid = false; /* work follows the last timestamp */
}

void gz_vk_rec_first_action(gz_vk_recording *rec, VkCommandBuffer cb, bool resumes)
{
    if (!rec->acted)
        first_action(rec, cb, resumes);
}

void gz_vk_recording_label(gz_vk_recording *rec, VkCommandBuffer cb, op_kind kind, uint32_t name)
{
    if (rec->ended)
        return; /* not recording: the app's error, the validation layer's to report */
    if (rec->untimed != GZ_VK_TIMED || !rec->acted) {
        /* Untimed, or waiting for the first action's timestamp. */
        gz_vk_op *op = gz_vk_rec_op(rec);
        if (op)
            *op = (gz_vk_op){.kind = (uint16_t)kind, .name = name, .value = GZ_VK_NO_QUERY,
                             .untimed = (uint16_t)rec->untimed};
        return;
    }
    /* Two begins (or two ends) in a row get a timestamp each: a region and
     * the one inside it must not look the same. An end and the next begin
     * share one. */
    if (rec->point_valid && rec->point_label == kind)
        rec->point_valid = false;
    gz_vk_untimed why;
    uint32_t v = gz_vk_rec_stamp(rec, cb, &why);
    rec->point_label = (uint8_t)kind;
    gz_vk_op *op = gz_vk_rec_op(rec);
    if (op)
        *op = (gz_vk_op){.kind = (uint16_t)kind, .name = name, .value = v,
                         .untimed = (uint16_t)why};
}

/* ---- secondaries ---------------------------------------------------------- */

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

void gz_vk_recording_execute(gz_vk_recording *rec, VkCommandBuffer cb,
                             gz_vk_recording *const *secs, uint32_t n)
{
    if (rec->ended)
        return;
    gz_vk_recording_action(rec, cb);
    /* The secondaries' commands are theirs: none of ours stays open across
     * them. */
    if (rec->open_cmd) {
        gz_vk_untimed why;
        gz_vk_rec_stamp(rec, cb, &why);
        rec->point_valid = false;
    }
    for (uint32_t i = 0; i < n; i++) {
        gz_vk_recording *src = secs[i];
        if (!src || !__atomic_load_n(&src->ended, __ATOMIC_ACQUIRE))
            continue; /* untracked, or executed before its end: the app's error */
        /* A secondary that writes values is read with each execution of
         * this primary, after the primary's own. */
        uint32_t block = 0;
        if (src->set.nvalues) {
            if (!add_secondary(rec, src)) {
                static int once;
                gz_log_once(&once, "out of memory for a secondary command buffer's labels; "
                                   "they are not timed");
            } else {
                block = rec->nsecs;
            }
        }
        uint32_t desc_base = rec->ndescs;
        for (uint32_t j = 0; j < src->ndescs; j++)
            gz_vk_rec_desc(rec, &src->descs[j]);
        for (uint32_t j = 0; j < src->nops; j++) {
            gz_vk_op *op = gz_vk_rec_op(rec);
            if (!op)
                return;
            *op = src->ops[j];
            op->block = block;
            if (OP_KIND(op) >= OP_PASS_BEGIN && op->name != GZ_VK_NO_DESC)
                op->name = op->name + desc_base < rec->ndescs ? op->name + desc_base
                                                               : GZ_VK_NO_DESC;
            if (!block && op->value != GZ_VK_NO_QUERY) {
                op->value = GZ_VK_NO_QUERY;
                op->untimed = GZ_VK_UNTIMED_POOL;
            }
        }
    }
}

uint32_t gz_vk_rec_desc(gz_vk_recording *rec, const gz_vk_desc *d)
{
    if (rec->ndescs == rec->descs_cap) {
        uint32_t cap = rec->descs_cap ? rec->descs_cap * 2 : 16;
        gz_vk_desc *descs = realloc(rec->descs, cap * sizeof *descs);
        if (!descs)
            return GZ_VK_NO_DESC;
        rec->descs = descs;
        rec->descs_cap = cap;
    }
    rec->descs[rec->ndescs] = *d;
    return rec->ndescs++;
}

/* ---- the end ---------------------------------------------------------------- */

/* The execution's layout: own values first, then each secondary's. */
static void finish_layout(gz_vk_recording *rec)
{
    uint32_t at = rec->set.nvalues;
    bool ok = true;
    if (rec->nsecs) {
        rec->sec_offset = malloc(rec->nsecs * sizeof *rec->sec_offset);
        ok = rec->sec_offset != NULL;
        for (uint32_t s = 0; ok && s < rec->nsecs; s++) {
            rec->sec_offset[s] = at;
            at += rec->secs[s]->set.nvalues;
        }
    }
    rec->nvalues = ok ? at : rec->set.nvalues;
    for (uint32_t i = 0; i < rec->nops; i++) {
        gz_vk_op *op = &rec->ops[i];
        if (op->block && op->value != GZ_VK_NO_QUERY) {
            if (ok) {
                op->value += rec->sec_offset[op->block - 1];
            } else {
                op->value = GZ_VK_NO_QUERY;
                op->untimed = GZ_VK_UNTIMED_POOL;
            }
        }
        op->block = 0;
    }
    if (!ok) {
        static int once;
        gz_log_once(&once, "out of memory for a command buffer's label layout; its "
                           "secondaries' labels are not timed");
    }
}

/* An unnamed command buffer's zone is named after the first label it
 * records ("cmdbuf: Shadows"): what a user recognises. cache holds the
 * last label and name of this command buffer: a command buffer recorded
 * anew each frame names itself once. */
static void name_after_first_label(gz_vk_recording *rec, uint32_t cache[2])
{
    for (uint32_t i = 0; i < rec->nops; i++) {
        if (OP_KIND(&rec->ops[i]) != OP_LABEL_BEGIN)
            continue;
        if (cache[0] && cache[0] == rec->ops[i].name) {
            rec->default_name = cache[1];
            return;
        }
        size_t len;
        const char *label = gz_intern_str(rec->ops[i].name, &len);
        char name[128];
        int n = snprintf(name, sizeof name, "cmdbuf: %.*s", (int)(len > 100 ? 100 : len), label);
        rec->default_name =
            n > 0 ? gz_intern(name, (size_t)n < sizeof name ? (size_t)n : sizeof name - 1) : 0;
        cache[0] = rec->ops[i].name;
        cache[1] = rec->default_name;
        return;
    }
}

void gz_vk_recording_end(gz_vk_recording *rec, VkCommandBuffer cb, uint32_t name_cache[2])
{
    gz_vk_device *dev = rec->dev;
    /* Ending with a render pass suspended: no slot may follow it either. */
    if (rec->suspended && !rec->secondary)
        rec->cmdbuf_untimed = GZ_VK_UNTIMED_SUSPENDED;
    if (rec->timed && rec->secondary && rec->open_cmd && !rec->suspended) {
        /* Its last command ends here, inside it. */
        gz_vk_untimed why;
        gz_vk_rec_stamp(rec, cb, &why);
    }
    if (rec->timed && !rec->secondary) {
        if (!rec->acted)
            first_action(rec, cb, false); /* nothing was recorded: a zone of no length */
        gz_vk_untimed why = GZ_VK_TIMED;
        /* Not the point of a label's end: a queue label around the command
         * buffer would look the same as the label inside it. */
        if (rec->point_valid && rec->point_label == OP_LABEL_END)
            rec->point_valid = false;
        rec->end_value = rec->suspended ? (why = GZ_VK_UNTIMED_SUSPENDED, GZ_VK_NO_QUERY)
                                        : gz_vk_rec_stamp(rec, cb, &why);
        if (rec->end_value == GZ_VK_NO_QUERY && rec->cmdbuf_untimed == GZ_VK_TIMED)
            rec->cmdbuf_untimed = why;
        /* Where results are copied, its values and its secondaries' go to
         * host memory at its end: outside any render pass, and not after a
         * suspension (then the worker reads the queries instead). */
        bool any = rec->set.nvalues;
        for (uint32_t s = 0; s < rec->nsecs; s++)
            any |= rec->secs[s]->set.nvalues != 0;
        if (any && !rec->suspended && gz_vk_family_readback(dev, rec->family) == GZ_VK_READ_COPY) {
            gz_vk_qset_cmd_copy(dev, &rec->set, cb);
            for (uint32_t s = 0; s < rec->nsecs; s++)
                gz_vk_qset_cmd_copy(dev, &rec->secs[s]->set, cb);
            gz_vk_cmd_results_to_host(&dev->info.fns, cb);
            rec->copied = true;
        }
    }
    if (rec->open_cmd) {
        /* Ended with a render pass suspended: its last command's end
         * cannot be written. */
        rec->open_cmd = false;
        gz_vk_op *op = gz_vk_rec_op(rec);
        if (op)
            *op = (gz_vk_op){.kind = OP_CMD_END, .value = GZ_VK_NO_QUERY,
                             .untimed = GZ_VK_UNTIMED_SUSPENDED};
    }
    finish_layout(rec);
    name_after_first_label(rec, name_cache);
    __atomic_store_n(&rec->ended, true, __ATOMIC_RELEASE);
}
