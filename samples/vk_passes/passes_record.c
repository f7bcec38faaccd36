/* Recording: the secondary command buffer (once) and each frame's
 * command buffer, with the name the layer must give each region and each
 * command inside it noted as they are recorded (passes_truth.c keeps them
 * when the program writes a truth file). */
#define _GNU_SOURCE
#include "vk_passes.h"

#include <stdio.h>
#include <string.h>

#define MAIN_CLEAR_RECT 16

const char *passes_format_name(VkFormat f)
{
    switch (f) {
    case VK_FORMAT_R8G8B8A8_UNORM:
        return "R8G8B8A8_UNORM";
    case VK_FORMAT_D32_SFLOAT:
        return "D32_SFLOAT";
    case VK_FORMAT_D16_UNORM:
        return "D16_UNORM";
    default:
        return "?";
    }
}

/* A size as zone names give it: "N B" below 1 KiB, else KiB or MiB, with
 * one decimal only when not whole ("1.5 KiB", "4 MiB"). */
static const char *size_text(uint64_t bytes, char out[24])
{
    uint64_t unit = bytes < (1u << 20) ? 1024 : 1024 * 1024;
    const char *name = unit == 1024 ? "KiB" : "MiB";
    if (bytes < 1024)
        snprintf(out, 24, "%llu B", (unsigned long long)bytes);
    else if (bytes % unit == 0)
        snprintf(out, 24, "%llu %s", (unsigned long long)(bytes / unit), name);
    else
        snprintf(out, 24, "%.1f %s", (double)bytes / (double)unit, name);
    return out;
}

/* The zone name's part for the pipeline bound: its debug name, else "pipeline
 * #k", k counting the device's pipelines in the order they were first
 * bound. */
static const char *pipeline_part(struct passes_app *app, VkPipeline p, char *out, size_t size)
{
    for (int i = 0; i < app->nnamed; i++)
        if (app->named[i].pipe == p)
            return app->named[i].name;
    for (int i = 0; i < app->nbound; i++)
        if (app->bound_order[i] == p) {
            snprintf(out, size, "pipeline #%d", i + 1);
            return out;
        }
    passes_die(2, "a pipeline used before it was bound");
}

static void bind(struct passes_app *app, VkCommandBuffer cb, VkPipelineBindPoint point, VkPipeline p)
{
    vkCmdBindPipeline(cb, point, p);
    bool seen = false;
    for (int i = 0; i < app->nbound && !seen; i++)
        seen = app->bound_order[i] == p;
    if (!seen) {
        if (app->nbound == PASSES_MAX_PIPELINES)
            passes_die(2, "too many pipelines");
        app->bound_order[app->nbound++] = p;
    }
    if (point == VK_PIPELINE_BIND_POINT_GRAPHICS)
        app->bound_draw = p;
    else
        app->bound_compute = p;
}

static void label_begin(struct passes_app *app, VkCommandBuffer cb, const char *name)
{
    VkDebugUtilsLabelEXT l = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = name};
    passes_region_settle(app, cb);
    app->begin_label(cb, &l);
    passes_truth_label(app, true, name);
}

static void label_end(struct passes_app *app, VkCommandBuffer cb)
{
    passes_region_settle(app, cb);
    app->end_label(cb);
    passes_truth_label(app, false, NULL);
}

static void set_area(VkCommandBuffer cb, uint32_t w, uint32_t h)
{
    VkViewport vp = {0.0f, 0.0f, (float)w, (float)h, 0.0f, 1.0f};
    VkRect2D sc = {{0, 0}, {w, h}};
    vkCmdSetViewport(cb, 0, 1, &vp);
    vkCmdSetScissor(cb, 0, 1, &sc);
}

static void push_color(struct passes_app *app, VkCommandBuffer cb, float r, float g, float b)
{
    float c[4] = {r, g, b, 1.0f};
    vkCmdPushConstants(cb, app->draw_layout, VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof c, c);
}

static void bind_cubes(struct passes_app *app, VkCommandBuffer cb)
{
    VkBuffer vbs[2] = {app->corners.buffer, app->instances.buffer};
    VkDeviceSize offs[2] = {0, 0};
    vkCmdBindVertexBuffers(cb, 0, 2, vbs, offs);
    vkCmdBindIndexBuffer(cb, app->indices.buffer, 0, VK_INDEX_TYPE_UINT16);
}

/* vkCmdDrawIndexed of the cube, 8 instances, with the zone name it gets. */
static void draw_cubes(struct passes_app *app, VkCommandBuffer cb, int region)
{
    char k[32];
    vkCmdDrawIndexed(cb, 36, 8, 0, 0, 0);
    passes_region_command(app, region, "draw indexed 36 ×8 %s",
                          pipeline_part(app, app->bound_draw, k, sizeof k));
}

static void draw(struct passes_app *app, VkCommandBuffer cb, int region, uint32_t vertices)
{
    char k[32];
    vkCmdDraw(cb, vertices, 1, 0, 0);
    passes_region_command(app, region, "draw %u ×1 %s", vertices,
                          pipeline_part(app, app->bound_draw, k, sizeof k));
}

static void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags src_access,
                    VkPipelineStageFlags dst, VkAccessFlags dst_access)
{
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = src_access,
        .dstAccessMask = dst_access,
    };
    vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void image_barrier(VkCommandBuffer cb, const struct passes_image *im, VkImageLayout from,
                          VkImageLayout to, VkPipelineStageFlags src, VkAccessFlags src_access,
                          VkPipelineStageFlags dst, VkAccessFlags dst_access)
{
    bool depth = im->format == VK_FORMAT_D16_UNORM || im->format == VK_FORMAT_D32_SFLOAT;
    VkImageMemoryBarrier b = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
        .srcAccessMask = src_access,
        .dstAccessMask = dst_access,
        .oldLayout = from,
        .newLayout = to,
        .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
        .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
        .image = im->image,
        .subresourceRange = {depth ? VK_IMAGE_ASPECT_DEPTH_BIT : VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1},
    };
    vkCmdPipelineBarrier(cb, src, dst, 0, 0, NULL, 0, NULL, 1, &b);
}

/* ---- the secondary -------------------------------------------------------------- */

static void note_secondary(struct passes_app *app, char kind, const char *name)
{
    if (app->nhud_ops == PASSES_MAX_SECONDARY_OPS)
        passes_die(2, "too many operations in the secondary");
    app->hud_ops[app->nhud_ops].kind = kind;
    snprintf(app->hud_ops[app->nhud_ops].name, PASSES_NAME_MAX, "%s", name);
    app->nhud_ops++;
}

/* The HUD: a label and a draw, continuing subpass 1 of the main render pass.
 * Recorded once, executed by every frame. */
void passes_record_secondary(struct passes_app *app)
{
    VkCommandBuffer cb = app->hud_cb;
    VkCommandBufferInheritanceInfo inh = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
        .renderPass = app->main_pass,
        .subpass = 1,
        .framebuffer = app->main_fb,
    };
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT,
        .pInheritanceInfo = &inh,
    };
    PASSES_CHECK(vkBeginCommandBuffer(cb, &bi));
    VkDebugUtilsLabelEXT l = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = "Overlay"};
    app->begin_label(cb, &l);
    note_secondary(app, 'b', "Overlay");
    bind(app, cb, VK_PIPELINE_BIND_POINT_GRAPHICS, app->hud_pipe);
    set_area(cb, app->main_color.width, app->main_color.height);
    push_color(app, cb, 0.1f, 0.9f, 0.1f);
    vkCmdDraw(cb, 3, 1, 0, 0);
    char k[32], name[PASSES_NAME_MAX];
    snprintf(name, sizeof name, "draw 3 ×1 %s", pipeline_part(app, app->hud_pipe, k, sizeof k));
    note_secondary(app, 'c', name);
    app->end_label(cb);
    note_secondary(app, 'e', "");
    PASSES_CHECK(vkEndCommandBuffer(cb));
}

/* vkCmdExecuteCommands of the HUD: its labels and its command join the frame. */
static void execute_secondary(struct passes_app *app, VkCommandBuffer cb, int region)
{
    vkCmdExecuteCommands(cb, 1, &app->hud_cb);
    for (int i = 0; i < app->nhud_ops; i++) {
        const struct passes_secondary_op *op = &app->hud_ops[i];
        if (op->kind == 'c')
            passes_region_command(app, region, "%s", op->name);
        else
            passes_truth_label(app, op->kind == 'b', op->name);
    }
}

/* ---- the frame ---------------------------------------------------------------------- */

static void upload(struct passes_app *app, VkCommandBuffer cb)
{
    label_begin(app, cb, "Upload");
    VkBufferCopy region = {0, 0, app->staging_instances.size};
    char size[24];
    int r = passes_region_begin(app, cb, false, "copy buffer→buffer %s", size_text(region.size, size));
    vkCmdCopyBuffer(cb, app->staging_instances.buffer, app->instances.buffer, 1, &region);
    passes_region_end(app, cb, r);

    image_barrier(cb, &app->texture, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                  VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                  VK_ACCESS_TRANSFER_WRITE_BIT);
    VkBufferImageCopy bic = {
        .imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
        .imageExtent = {app->texture.width, app->texture.height, 1},
    };
    r = passes_region_begin(app, cb, false, "copy buffer→image %u×%u", app->texture.width,
                            app->texture.height);
    vkCmdCopyBufferToImage(cb, app->staging_texture.buffer, app->texture.image,
                           VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &bic);
    passes_region_end(app, cb, r);
    barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_VERTEX_INPUT_BIT, VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT);
    label_end(app, cb);
}

static const VkClearValue clear_color_depth[2] = {{.color.float32 = {0.0f, 0.0f, 0.2f, 1.0f}},
                                                  {.depthStencil = {1.0f, 0}}};
static const VkClearValue clear_depth = {.depthStencil = {1.0f, 0}};

/* A classic render pass instance of area w×h from the corner of fb,
 * through vkCmdBeginRenderPass or, v2, vkCmdBeginRenderPass2. */
static void begin_pass(VkCommandBuffer cb, VkRenderPass pass, VkFramebuffer fb, uint32_t w, uint32_t h,
                       const VkClearValue *clear, uint32_t nclear, VkSubpassContents contents, bool v2)
{
    VkRenderPassBeginInfo rbi = {
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
        .renderPass = pass,
        .framebuffer = fb,
        .renderArea = {{0, 0}, {w, h}},
        .clearValueCount = nclear,
        .pClearValues = clear,
    };
    if (v2) {
        VkSubpassBeginInfo sbi = {.sType = VK_STRUCTURE_TYPE_SUBPASS_BEGIN_INFO, .contents = contents};
        vkCmdBeginRenderPass2(cb, &rbi, &sbi);
    } else {
        vkCmdBeginRenderPass(cb, &rbi, contents);
    }
}

static void shadow(struct passes_app *app, VkCommandBuffer cb)
{
    const struct passes_image *d = &app->shadow_depth;
    label_begin(app, cb, "Shadow");
    int r = passes_region_begin(app, cb, true, "Shadow pass");
    struct passes_region *reg = r >= 0 ? &app->frame->regions[r] : NULL;
    if (reg) {
        snprintf(reg->area, sizeof reg->area, "%ux%u", d->width, d->height);
        snprintf(reg->formats, sizeof reg->formats, "%s", passes_format_name(d->format));
    }
    begin_pass(cb, app->shadow_pass, app->shadow_fb, d->width, d->height, &clear_depth, 1,
               VK_SUBPASS_CONTENTS_INLINE, false);
    bind(app, cb, VK_PIPELINE_BIND_POINT_GRAPHICS, app->shadow_pipe);
    set_area(cb, d->width, d->height);
    bind_cubes(app, cb);
    draw_cubes(app, cb, r);
    vkCmdEndRenderPass(cb);
    passes_region_end(app, cb, r);
    label_end(app, cb);
}

/* Subpass 0 inline (cubes, the ground, a clear, the extra draws), subpass
 * 1 from the HUD secondary. */
static void main_pass(struct passes_app *app, VkCommandBuffer cb)
{
    const struct passes_image *c = &app->main_color;
    label_begin(app, cb, "Main");
    int r = passes_region_begin(app, cb, true, "Main framebuffer");
    if (r >= 0) {
        snprintf(app->frame->regions[r].area, sizeof app->frame->regions[r].area, "%ux%u", c->width, c->height);
        snprintf(app->frame->regions[r].formats, sizeof app->frame->regions[r].formats, "%s,%s",
                 passes_format_name(c->format), passes_format_name(app->main_depth.format));
    }
    begin_pass(cb, app->main_pass, app->main_fb, c->width, c->height, clear_color_depth, 2,
               VK_SUBPASS_CONTENTS_INLINE, false);
    bind(app, cb, VK_PIPELINE_BIND_POINT_GRAPHICS, app->scene_pipe);
    set_area(cb, c->width, c->height);
    push_color(app, cb, 0.8f, 0.3f, 0.2f);
    bind_cubes(app, cb);
    draw_cubes(app, cb, r);
    for (unsigned i = 0; i < app->opt.extra_draws; i++)
        draw(app, cb, r, 3);
    bind(app, cb, VK_PIPELINE_BIND_POINT_GRAPHICS, app->ground_pipe);
    push_color(app, cb, 0.3f, 0.6f, 0.3f);
    draw(app, cb, r, 6);
    VkClearAttachment ca = {
        .aspectMask = VK_IMAGE_ASPECT_COLOR_BIT,
        .colorAttachment = 0,
        .clearValue.color.float32 = {1.0f, 1.0f, 1.0f, 1.0f},
    };
    VkClearRect rect = {{{0, 0}, {MAIN_CLEAR_RECT, MAIN_CLEAR_RECT}}, 0, 1};
    vkCmdClearAttachments(cb, 1, &ca, 1, &rect);
    passes_region_command(app, r, "clear attachments");
    vkCmdNextSubpass(cb, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
    execute_secondary(app, cb, r);
    vkCmdEndRenderPass(cb);
    passes_region_end(app, cb, r);
    label_end(app, cb);
}

/* No label, no names: the layer names it after its area (smaller than
 * the framebuffer) and formats. Begun with vkCmdBeginRenderPass2. */
static void id_pass(struct passes_app *app, VkCommandBuffer cb)
{
    uint32_t w = app->id_color.width / 2, h = app->id_color.height / 2;
    const char *cf = passes_format_name(app->id_color.format), *df = passes_format_name(app->id_depth.format);
    int r = passes_region_begin(app, cb, true, "render pass %u×%u %s + %s", w, h, cf, df);
    if (r >= 0) {
        snprintf(app->frame->regions[r].area, sizeof app->frame->regions[r].area, "%ux%u", w, h);
        snprintf(app->frame->regions[r].formats, sizeof app->frame->regions[r].formats, "%s,%s", cf, df);
    }
    begin_pass(cb, app->id_pass, app->id_fb, w, h, clear_color_depth, 2, VK_SUBPASS_CONTENTS_INLINE, true);
    bind(app, cb, VK_PIPELINE_BIND_POINT_GRAPHICS, app->id_pipe);
    set_area(cb, w, h);
    push_color(app, cb, 0.0f, 0.0f, 1.0f);
    bind_cubes(app, cb);
    draw_cubes(app, cb, r);
    VkSubpassEndInfo sei = {.sType = VK_STRUCTURE_TYPE_SUBPASS_END_INFO};
    vkCmdEndRenderPass2(cb, &sei);
    passes_region_end(app, cb, r);
}

/* Render pass instances with nothing in them but their clear. */
static void extra_passes(struct passes_app *app, VkCommandBuffer cb)
{
    const struct passes_image *c = &app->extra_color;
    const char *cf = passes_format_name(c->format);
    for (unsigned i = 0; i < app->opt.extra_passes; i++) {
        int r = passes_region_begin(app, cb, true, "render pass %u×%u %s", c->width, c->height, cf);
        if (r >= 0) {
            snprintf(app->frame->regions[r].area, sizeof app->frame->regions[r].area, "%ux%u", c->width,
                     c->height);
            snprintf(app->frame->regions[r].formats, sizeof app->frame->regions[r].formats, "%s", cf);
        }
        begin_pass(cb, app->extra_pass, app->extra_fb, c->width, c->height, clear_color_depth, 1,
                   VK_SUBPASS_CONTENTS_INLINE, false);
        vkCmdEndRenderPass(cb);
        passes_region_end(app, cb, r);
    }
}

/* Dynamic rendering into the post image (color and a D16 depth), then its
 * readback into host memory. */
static void post(struct passes_app *app, VkCommandBuffer cb)
{
    const struct passes_image *c = &app->post_color, *d = &app->post_depth;
    const VkPipelineStageFlags tests = VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
                                       VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
    label_begin(app, cb, "Post");
    image_barrier(cb, c, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                  VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                  VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT);
    const VkAccessFlags depth_rw = VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT |
                                   VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT;
    image_barrier(cb, d, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL, tests, 0,
                  tests, depth_rw);
    VkRenderingAttachmentInfo color = {
        .sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO,
        .imageView = c->view,
        .imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
        .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
        .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
        .clearValue.color.float32 = {0.0f, 0.0f, 0.0f, 1.0f},
    };
    VkRenderingAttachmentInfo depth = {
        .sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO,
        .imageView = d->view,
        .imageLayout = VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
        .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
        .storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
        .clearValue.depthStencil = {1.0f, 0},
    };
    VkRenderingInfo ri = {
        .sType = VK_STRUCTURE_TYPE_RENDERING_INFO,
        .renderArea = {{0, 0}, {c->width, c->height}},
        .layerCount = 1,
        .colorAttachmentCount = 1,
        .pColorAttachments = &color,
        .pDepthAttachment = &depth,
    };
    const char *cf = passes_format_name(c->format), *df = passes_format_name(d->format);
    int r = passes_region_begin(app, cb, true, "rendering %u×%u %s + %s", c->width, c->height, cf, df);
    if (r >= 0) {
        snprintf(app->frame->regions[r].area, sizeof app->frame->regions[r].area, "%ux%u", c->width, c->height);
        snprintf(app->frame->regions[r].formats, sizeof app->frame->regions[r].formats, "%s,%s", cf, df);
    }
    vkCmdBeginRendering(cb, &ri);
    bind(app, cb, VK_PIPELINE_BIND_POINT_GRAPHICS, app->tonemap_pipe);
    set_area(cb, c->width, c->height);
    push_color(app, cb, 0.25f, 0.5f, 0.75f);
    draw(app, cb, r, 3);
    vkCmdEndRendering(cb);
    passes_region_end(app, cb, r);

    image_barrier(cb, c, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                  VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                  VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferImageCopy bic = {
        .imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
        .imageExtent = {c->width, c->height, 1},
    };
    r = passes_region_begin(app, cb, false, "copy image→buffer %u×%u", c->width, c->height);
    vkCmdCopyImageToBuffer(cb, c->image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, app->readback.buffer, 1, &bic);
    passes_region_end(app, cb, r);
    barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    label_end(app, cb);
}

static void dispatch(struct passes_app *app, VkCommandBuffer cb, VkPipeline p, uint32_t x, uint32_t y,
                     uint32_t salt)
{
    uint32_t push[2] = {app->opt.rounds, salt};
    char k[32];
    bind(app, cb, VK_PIPELINE_BIND_POINT_COMPUTE, p);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, app->compute_layout, 0, 1, &app->compute_set,
                            0, NULL);
    vkCmdPushConstants(cb, app->compute_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
    const char *part = pipeline_part(app, p, k, sizeof k);
    int r = passes_region_begin(app, cb, false, "dispatch %u×%u×1 %s", x, y, part);
    if (r >= 0) {
        struct passes_region *reg = &app->frame->regions[r];
        snprintf(reg->groups, sizeof reg->groups, "%ux%ux1", x, y);
        bool named = part != k;
        snprintf(reg->pipeline, sizeof reg->pipeline, "%s", named ? part : "");
    }
    vkCmdDispatch(cb, x, y, 1);
    passes_region_end(app, cb, r);
}

/* A fill, then two dispatches (and the extra ones, which scramble again)
 * over the storage buffer: what the host checks afterwards. */
static void compute(struct passes_app *app, VkCommandBuffer cb, unsigned frame)
{
    const VkPipelineStageFlags both = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    const VkAccessFlags rw = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    label_begin(app, cb, "Compute");
    char size[24];
    int r = passes_region_begin(app, cb, false, "fill buffer %s", size_text(app->storage.size, size));
    vkCmdFillBuffer(cb, app->storage.buffer, 0, app->storage.size, frame);
    passes_region_end(app, cb, r);
    barrier(cb, both, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, rw);
    dispatch(app, cb, app->mix_pipe, 4, 4, frame);
    barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, rw);
    dispatch(app, cb, app->scramble_pipe, 16, 1, frame);
    for (unsigned i = 0; i < app->opt.extra_dispatches; i++) {
        barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, rw);
        dispatch(app, cb, app->scramble_pipe, 16, 1, frame);
    }
    barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    label_end(app, cb);
}

void passes_record_frame(struct passes_app *app, unsigned frame)
{
    VkCommandBuffer cb = app->frame_cb;
    app->bound_draw = app->bound_compute = VK_NULL_HANDLE;
    app->unended = -1;
    app->open_pass = -1;
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    PASSES_CHECK(vkBeginCommandBuffer(cb, &bi));
    passes_truth_stamp_pair(app, cb);
    label_begin(app, cb, "Frame");
    upload(app, cb);
    shadow(app, cb);
    main_pass(app, cb);
    id_pass(app, cb);
    extra_passes(app, cb);
    post(app, cb);
    compute(app, cb, frame);
    label_end(app, cb);
    passes_region_settle(app, cb);
    PASSES_CHECK(vkEndCommandBuffer(cb));
}
