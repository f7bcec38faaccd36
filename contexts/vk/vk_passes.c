/* Render pass instances and commands in a recording: where a timestamp may
 * go inside a render pass (multiview subpasses, suspended dynamic
 * rendering), and, at the passes and commands levels, their zones.
 *
 * A render pass instance's zone runs from a timestamp just before its
 * begin to one just after its end; a dynamic render pass suspended at the
 * end of one command buffer and resumed in the next is one instance, begun
 * by the first begin that does not resume and ended by the end that does
 * not suspend (the queue puts the pieces together in submission order,
 * vk_harvest.c), with no timestamp between the pieces. A command's zone
 * runs from a timestamp just before it to the next timestamp point: the
 * next command's, a label's, its render pass's end, its command buffer's
 * end. What a zone is called is kept as the command's arguments (a
 * gz_vk_desc) and named by the worker (vk_describe.c), not on the app's
 * thread. */
#include <string.h>

#include "gz_vk_internal.h"

bool gz_vk_recording_describes(const gz_vk_recording *rec)
{
    gz_level level = rec->dev->level;
    return !rec->ended &&
           (level >= GZ_LEVEL_COMMANDS || (level >= GZ_LEVEL_PASSES && !rec->in_pass));
}

/* An op that says a zone of this recording is not timed, and why: counted
 * when the worker replays it (not for the level: not asked for). */
static void untimed_op(gz_vk_recording *rec, op_kind kind, uint16_t flags, gz_vk_untimed why)
{
    if (why == GZ_VK_UNTIMED_LEVEL)
        return;
    gz_vk_op *op = gz_vk_rec_op(rec);
    if (op)
        *op = (gz_vk_op){.kind = (uint16_t)(kind | flags), .name = GZ_VK_NO_DESC,
                         .value = GZ_VK_NO_QUERY, .untimed = (uint16_t)why};
}

/* A timestamp point now, with an op of kind and description desc. */
static void stamped_op(gz_vk_recording *rec, VkCommandBuffer cb, op_kind kind, uint32_t desc)
{
    gz_vk_untimed why;
    uint32_t v = gz_vk_rec_stamp(rec, cb, &why);
    gz_vk_op *op = gz_vk_rec_op(rec);
    if (op)
        *op = (gz_vk_op){.kind = (uint16_t)kind, .name = desc, .value = v, .untimed = (uint16_t)why};
    if (kind == OP_CMD_BEGIN && v != GZ_VK_NO_QUERY)
        rec->open_cmd = true;
}

static bool is_dispatch(uint16_t type)
{
    return type == GZ_VK_DESC_DISPATCH || type == GZ_VK_DESC_DISPATCH_INDIRECT;
}

static bool is_draw(uint16_t type)
{
    return type >= GZ_VK_DESC_DRAW && type <= GZ_VK_DESC_DRAW_INDEXED_INDIRECT_COUNT;
}

void gz_vk_recording_command(gz_vk_recording *rec, VkCommandBuffer cb, const gz_vk_desc *d)
{
    if (rec->ended)
        return;
    gz_vk_rec_first_action(rec, cb, false);
    if (rec->passes_untimed != GZ_VK_TIMED) {
        untimed_op(rec, OP_CMD_BEGIN, 0, rec->passes_untimed);
    } else {
        gz_vk_desc full = *d;
        if (is_dispatch(d->type) || is_draw(d->type)) {
            uint32_t at = is_dispatch(d->type) ? 1 : 0;
            full.name = rec->bound_name[at];
            full.pipeline = rec->bound_number[at];
        }
        stamped_op(rec, cb, OP_CMD_BEGIN, gz_vk_rec_desc(rec, &full));
    }
    rec->point_valid = false; /* the command follows the point */
}

void gz_vk_recording_bind_pipeline(gz_vk_recording *rec, VkPipelineBindPoint point,
                                   VkPipeline pipeline)
{
    if (rec->ended || rec->dev->level < GZ_LEVEL_PASSES ||
        (point != VK_PIPELINE_BIND_POINT_GRAPHICS && point != VK_PIPELINE_BIND_POINT_COMPUTE))
        return;
    uint32_t at = point == VK_PIPELINE_BIND_POINT_COMPUTE ? 1 : 0;
    if (rec->bound[at] == pipeline)
        return;
    rec->bound[at] = pipeline;
    rec->bound_number[at] = gz_vk_pipeline_number(rec->dev, pipeline, &rec->bound_name[at]);
}

/* ---- classic render passes -------------------------------------------- */

void gz_vk_recording_render_pass_begin(gz_vk_recording *rec, VkCommandBuffer cb,
                                       const VkRenderPassBeginInfo *info)
{
    if (rec->ended)
        return;
    gz_vk_rec_first_action(rec, cb, false);
    if (rec->passes_untimed != GZ_VK_TIMED) {
        untimed_op(rec, OP_PASS_BEGIN, 0, rec->passes_untimed);
    } else {
        gz_vk_desc d = {.type = GZ_VK_DESC_RENDER_PASS,
                        .a = info->renderArea.extent.width,
                        .b = info->renderArea.extent.height};
        d.name = gz_vk_object_name(VK_OBJECT_TYPE_RENDER_PASS, (uint64_t)(uintptr_t)info->renderPass);
        if (!d.name)
            d.name = gz_vk_object_name(VK_OBJECT_TYPE_FRAMEBUFFER,
                                       (uint64_t)(uintptr_t)info->framebuffer);
        d.nformats = (uint16_t)gz_vk_render_pass_formats(info->renderPass, d.formats);
        stamped_op(rec, cb, OP_PASS_BEGIN, gz_vk_rec_desc(rec, &d));
    }
    rec->point_valid = false; /* its load operations follow */
}

void gz_vk_recording_render_pass_begun(gz_vk_recording *rec, VkRenderPass pass,
                                       bool secondary_contents)
{
    rec->in_pass = true;
    rec->secondary_contents = secondary_contents && !rec->secondary;
    rec->pass = pass;
    rec->subpass = 0;
    rec->view_mask = 0;
    gz_vk_render_pass_views(pass, 0, &rec->view_mask);
}

/* Before the next subpass: the last command of this one ends here, while a
 * timestamp may still be written (the next one may take its contents from
 * secondaries). */
void gz_vk_recording_subpass_ending(gz_vk_recording *rec, VkCommandBuffer cb)
{
    if (!rec->ended && rec->open_cmd && !rec->secondary_contents) {
        gz_vk_untimed why;
        gz_vk_rec_stamp(rec, cb, &why);
    }
}

void gz_vk_recording_next_subpass(gz_vk_recording *rec, bool secondary_contents)
{
    rec->secondary_contents = secondary_contents && !rec->secondary;
    rec->subpass++;
    rec->view_mask = 0;
    gz_vk_render_pass_views(rec->pass, rec->subpass, &rec->view_mask);
    rec->point_valid = false;
}

void gz_vk_recording_render_pass_end(gz_vk_recording *rec, VkCommandBuffer cb)
{
    rec->in_pass = false;
    rec->secondary_contents = false;
    rec->pass = VK_NULL_HANDLE;
    rec->view_mask = 0;
    rec->point_valid = false; /* its store operations came before */
    if (rec->ended)
        return;
    if (rec->passes_untimed == GZ_VK_TIMED)
        stamped_op(rec, cb, OP_PASS_END, GZ_VK_NO_DESC);
}

/* ---- dynamic rendering ------------------------------------------------- */

/* The formats of its attachments' views, color then depth then stencil. */
static void rendering_formats(const VkRenderingInfo *info, gz_vk_desc *d)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < info->colorAttachmentCount; i++) {
        VkImageView v = info->pColorAttachments[i].imageView;
        if (!v)
            continue;
        if (n < GZ_VK_DESC_FORMATS)
            d->formats[n] = gz_vk_image_view_format(v);
        n++;
    }
    VkImageView depth = info->pDepthAttachment ? info->pDepthAttachment->imageView : VK_NULL_HANDLE;
    VkImageView stencil =
        info->pStencilAttachment ? info->pStencilAttachment->imageView : VK_NULL_HANDLE;
    VkImageView ds[2] = {depth, stencil != depth ? stencil : VK_NULL_HANDLE};
    for (uint32_t i = 0; i < 2; i++) {
        if (!ds[i])
            continue;
        if (n < GZ_VK_DESC_FORMATS)
            d->formats[n] = gz_vk_image_view_format(ds[i]);
        n++;
    }
    d->nformats = (uint16_t)n;
}

void gz_vk_recording_rendering_begin(gz_vk_recording *rec, VkCommandBuffer cb,
                                     const VkRenderingInfo *info)
{
    if (rec->ended)
        return;
    bool resumes = info->flags & VK_RENDERING_RESUMING_BIT;
    gz_vk_rec_first_action(rec, cb, resumes);
    if (resumes) {
        /* No timestamp may come between the suspension and this: the
         * instance stays open across. */
        gz_vk_op *op = rec->passes_untimed == GZ_VK_TIMED ? gz_vk_rec_op(rec) : NULL;
        if (op)
            *op = (gz_vk_op){.kind = OP_PASS_BEGIN | OP_F_RESUMES, .name = GZ_VK_NO_DESC,
                             .value = GZ_VK_NO_QUERY};
    } else if (rec->passes_untimed != GZ_VK_TIMED) {
        untimed_op(rec, OP_PASS_BEGIN, 0, rec->passes_untimed);
    } else {
        gz_vk_desc d = {.type = GZ_VK_DESC_RENDERING,
                        .a = info->renderArea.extent.width,
                        .b = info->renderArea.extent.height};
        rendering_formats(info, &d);
        stamped_op(rec, cb, OP_PASS_BEGIN, gz_vk_rec_desc(rec, &d));
    }
    rec->point_valid = false;
}

void gz_vk_recording_rendering_begun(gz_vk_recording *rec, VkRenderingFlags flags,
                                     uint32_t view_mask)
{
    rec->in_pass = rec->rendering = true;
    rec->secondary_contents =
        (flags & VK_RENDERING_CONTENTS_SECONDARY_COMMAND_BUFFERS_BIT) && !rec->secondary;
    rec->view_mask = view_mask;
    rec->suspended = false;
    /* Remembered until its end: a suspending instance leaves the
     * recording suspended. */
    rec->suspending = (flags & VK_RENDERING_SUSPENDING_BIT) != 0;
}

void gz_vk_recording_rendering_ending(gz_vk_recording *rec, VkCommandBuffer cb)
{
    /* About to suspend: the last command's end is written while a
     * timestamp still may be, inside the instance. */
    if (!rec->ended && rec->suspending && rec->open_cmd) {
        gz_vk_untimed why;
        gz_vk_rec_stamp(rec, cb, &why);
    }
}

void gz_vk_recording_rendering_end(gz_vk_recording *rec, VkCommandBuffer cb)
{
    bool suspends = rec->suspending;
    rec->in_pass = rec->rendering = false;
    rec->secondary_contents = false;
    rec->view_mask = 0;
    rec->suspended = suspends;
    rec->suspending = false;
    rec->point_valid = false;
    if (rec->ended || rec->passes_untimed != GZ_VK_TIMED)
        return;
    if (suspends) {
        gz_vk_op *op = gz_vk_rec_op(rec);
        if (op)
            *op = (gz_vk_op){.kind = OP_PASS_END | OP_F_SUSPENDS, .name = GZ_VK_NO_DESC,
                             .value = GZ_VK_NO_QUERY};
    } else {
        stamped_op(rec, cb, OP_PASS_END, GZ_VK_NO_DESC);
    }
}
