/* Rendering for the cases that need render pass instances: small color
 * images (array layers for multiview), classic render passes (created with
 * vkCreateRenderPass or vkCreateRenderPass2, multiview or not), dynamic
 * rendering (suspended and resumed, multiview), and secondaries that
 * continue either kind.  Nothing is drawn: vkCmdClearAttachments is the
 * work inside a render pass instance. */
#define _GNU_SOURCE
#include "vkt.h"

#include <stdio.h>
#include <string.h>

/* The attachment formats of the zone names (every attachment here is
 * VKT_RT_FORMAT). */
#define VKT_RT_FORMAT_NAME "R8G8B8A8_UNORM"

/* A suspension, resumption or end of the render pass instance: no name. */
static void pass_mark(struct vkt_cmd *c, enum vkt_zone_op_kind kind)
{
    vkt_cmd_zone_op(c, kind, "%s", "");
}

bool vkt_family_has_graphics(const struct vkt_device *d)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &n, NULL);
    VkQueueFamilyProperties f[16];
    if (n > 16)
        n = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &n, f);
    return d->family < n && (f[d->family].queueFlags & VK_QUEUE_GRAPHICS_BIT);
}

void vkt_render_support(VkPhysicalDevice phys, bool *multiview, bool *dynamic_rendering,
                        uint32_t *max_views)
{
    VkPhysicalDeviceVulkan13Features f13 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
    };
    VkPhysicalDeviceVulkan11Features f11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        .pNext = &f13,
    };
    VkPhysicalDeviceFeatures2 f2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                     .pNext = &f11 };
    vkGetPhysicalDeviceFeatures2(phys, &f2);
    VkPhysicalDeviceMultiviewProperties mv = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MULTIVIEW_PROPERTIES,
    };
    VkPhysicalDeviceProperties2 p2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                       .pNext = &mv };
    vkGetPhysicalDeviceProperties2(phys, &p2);
    *multiview = f11.multiview;
    *dynamic_rendering = f13.dynamicRendering;
    *max_views = f11.multiview ? mv.maxMultiviewViewCount : 0;
}

void vkt_target_images(struct vkt_device *d, int nimages, uint32_t layers, struct vkt_target *t)
{
    memset(t, 0, sizeof *t);
    if (nimages < 1 || nimages > VKT_MAX_SUBPASSES || layers < 1)
        vkt_die("bad target: %d images of %u layers", nimages, layers);
    VkFormatProperties fp;
    vkGetPhysicalDeviceFormatProperties(d->phys, VKT_RT_FORMAT, &fp);
    if (!(fp.optimalTilingFeatures & VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT))
        vkt_die("R8G8B8A8_UNORM is not a color attachment format here");
    t->nimages = nimages;
    t->layers = layers;
    for (int i = 0; i < nimages; i++) {
        VkImageCreateInfo ici = {
            .sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
            .imageType = VK_IMAGE_TYPE_2D,
            .format = VKT_RT_FORMAT,
            .extent = { VKT_RT_SIZE, VKT_RT_SIZE, 1 },
            .mipLevels = 1,
            .arrayLayers = layers,
            .samples = VK_SAMPLE_COUNT_1_BIT,
            .tiling = VK_IMAGE_TILING_OPTIMAL,
            .usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
            .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
            .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
        };
        VKT_CHECK(vkCreateImage(d->device, &ici, NULL, &t->images[i]));
        VkMemoryRequirements req;
        vkGetImageMemoryRequirements(d->device, t->images[i], &req);
        VkMemoryAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
            .allocationSize = req.size,
            .memoryTypeIndex = vkt_memory_type(d, req.memoryTypeBits, 0,
                                               VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT),
        };
        VKT_CHECK(vkAllocateMemory(d->device, &ai, NULL, &t->memory[i]));
        VKT_CHECK(vkBindImageMemory(d->device, t->images[i], t->memory[i], 0));
        VkImageViewCreateInfo vci = {
            .sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
            .image = t->images[i],
            .viewType = layers > 1 ? VK_IMAGE_VIEW_TYPE_2D_ARRAY : VK_IMAGE_VIEW_TYPE_2D,
            .format = VKT_RT_FORMAT,
            .subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, layers },
        };
        VKT_CHECK(vkCreateImageView(d->device, &vci, NULL, &t->views[i]));
    }
}

static void create_pass_v1(struct vkt_device *d, struct vkt_target *t, const uint32_t *masks)
{
    VkAttachmentDescription att[VKT_MAX_SUBPASSES];
    VkAttachmentReference ref[VKT_MAX_SUBPASSES];
    VkSubpassDescription sub[VKT_MAX_SUBPASSES];
    for (int i = 0; i < t->nimages; i++) {
        att[i] = (VkAttachmentDescription){
            .format = VKT_RT_FORMAT,
            .samples = VK_SAMPLE_COUNT_1_BIT,
            .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
            .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
            .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
            .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
            .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
            .finalLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
        };
        ref[i] = (VkAttachmentReference){ (uint32_t)i, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
        sub[i] = (VkSubpassDescription){
            .pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
            .colorAttachmentCount = 1,
            .pColorAttachments = &ref[i],
        };
    }
    VkRenderPassMultiviewCreateInfo mv = {
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO,
        .subpassCount = (uint32_t)t->nimages,
        .pViewMasks = masks,
    };
    VkRenderPassCreateInfo rci = {
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
        .pNext = masks ? &mv : NULL,
        .attachmentCount = (uint32_t)t->nimages,
        .pAttachments = att,
        .subpassCount = (uint32_t)t->nimages,
        .pSubpasses = sub,
    };
    VKT_CHECK(vkCreateRenderPass(d->device, &rci, NULL, &t->pass));
}

static void create_pass_v2(struct vkt_device *d, struct vkt_target *t, const uint32_t *masks)
{
    VkAttachmentDescription2 att[VKT_MAX_SUBPASSES];
    VkAttachmentReference2 ref[VKT_MAX_SUBPASSES];
    VkSubpassDescription2 sub[VKT_MAX_SUBPASSES];
    for (int i = 0; i < t->nimages; i++) {
        att[i] = (VkAttachmentDescription2){
            .sType = VK_STRUCTURE_TYPE_ATTACHMENT_DESCRIPTION_2,
            .format = VKT_RT_FORMAT,
            .samples = VK_SAMPLE_COUNT_1_BIT,
            .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
            .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
            .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
            .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
            .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
            .finalLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
        };
        ref[i] = (VkAttachmentReference2){
            .sType = VK_STRUCTURE_TYPE_ATTACHMENT_REFERENCE_2,
            .attachment = (uint32_t)i,
            .layout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
            .aspectMask = VK_IMAGE_ASPECT_COLOR_BIT,
        };
        sub[i] = (VkSubpassDescription2){
            .sType = VK_STRUCTURE_TYPE_SUBPASS_DESCRIPTION_2,
            .pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
            .viewMask = masks ? masks[i] : 0,
            .colorAttachmentCount = 1,
            .pColorAttachments = &ref[i],
        };
    }
    VkRenderPassCreateInfo2 rci = {
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO_2,
        .attachmentCount = (uint32_t)t->nimages,
        .pAttachments = att,
        .subpassCount = (uint32_t)t->nimages,
        .pSubpasses = sub,
    };
    VKT_CHECK(vkCreateRenderPass2(d->device, &rci, NULL, &t->pass));
}

void vkt_target_render_pass(struct vkt_device *d, struct vkt_target *t, const uint32_t *masks,
                            bool v2)
{
    if (v2)
        create_pass_v2(d, t, masks);
    else
        create_pass_v1(d, t, masks);
    /* A multiview framebuffer has one layer; each attachment has a layer
     * per view. */
    VkFramebufferCreateInfo fci = {
        .sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
        .renderPass = t->pass,
        .attachmentCount = (uint32_t)t->nimages,
        .pAttachments = t->views,
        .width = VKT_RT_SIZE,
        .height = VKT_RT_SIZE,
        .layers = masks ? 1 : t->layers,
    };
    VKT_CHECK(vkCreateFramebuffer(d->device, &fci, NULL, &t->fb));
}

void vkt_target_destroy(struct vkt_device *d, struct vkt_target *t)
{
    if (t->fb)
        vkDestroyFramebuffer(d->device, t->fb, NULL);
    if (t->pass)
        vkDestroyRenderPass(d->device, t->pass, NULL);
    for (int i = 0; i < t->nimages; i++) {
        vkDestroyImageView(d->device, t->views[i], NULL);
        vkDestroyImage(d->device, t->images[i], NULL);
        vkFreeMemory(d->device, t->memory[i], NULL);
    }
    memset(t, 0, sizeof *t);
}

void vkt_cmd_target_layout(struct vkt_cmd *c, const struct vkt_target *t)
{
    VkImageMemoryBarrier b[VKT_MAX_SUBPASSES];
    for (int i = 0; i < t->nimages; i++)
        b[i] = (VkImageMemoryBarrier){
            .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
            .srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
            .dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
            .oldLayout = VK_IMAGE_LAYOUT_UNDEFINED,
            .newLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
            .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .image = t->images[i],
            .subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, t->layers },
        };
    vkCmdPipelineBarrier(c->cb, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                         VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, 0, 0, NULL, 0, NULL,
                         (uint32_t)t->nimages, b);
}

void vkt_cmd_begin_render_pass(struct vkt_cmd *c, const struct vkt_target *t,
                               VkSubpassContents contents, bool v2)
{
    VkClearValue clear[VKT_MAX_SUBPASSES];
    for (int i = 0; i < t->nimages; i++)
        clear[i] = (VkClearValue){ .color.float32 = { 0.0f, 0.0f, 0.0f, 1.0f } };
    VkRenderPassBeginInfo rbi = {
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
        .renderPass = t->pass,
        .framebuffer = t->fb,
        .renderArea = { { 0, 0 }, { VKT_RT_SIZE, VKT_RT_SIZE } },
        .clearValueCount = (uint32_t)t->nimages,
        .pClearValues = clear,
    };
    if (v2) {
        VkSubpassBeginInfo sbi = { .sType = VK_STRUCTURE_TYPE_SUBPASS_BEGIN_INFO,
                                   .contents = contents };
        vkCmdBeginRenderPass2(c->cb, &rbi, &sbi);
    } else {
        vkCmdBeginRenderPass(c->cb, &rbi, contents);
    }
    /* unnamed render pass and framebuffer: the area and the formats */
    char formats[VKT_NAME_MAX] = "";
    for (int i = 0; i < t->nimages; i++)
        snprintf(formats + strlen(formats), sizeof formats - strlen(formats), "%s%s", i ? " + " : "",
                 VKT_RT_FORMAT_NAME);
    vkt_cmd_zone_op(c, VKT_ZOP_BEGIN, "render pass %d×%d %s", VKT_RT_SIZE, VKT_RT_SIZE, formats);
}

void vkt_cmd_next_subpass(struct vkt_cmd *c, VkSubpassContents contents, bool v2)
{
    if (v2) {
        VkSubpassBeginInfo sbi = { .sType = VK_STRUCTURE_TYPE_SUBPASS_BEGIN_INFO,
                                   .contents = contents };
        VkSubpassEndInfo sei = { .sType = VK_STRUCTURE_TYPE_SUBPASS_END_INFO };
        vkCmdNextSubpass2(c->cb, &sbi, &sei);
    } else {
        vkCmdNextSubpass(c->cb, contents);
    }
}

void vkt_cmd_end_render_pass(struct vkt_cmd *c, bool v2)
{
    if (v2) {
        VkSubpassEndInfo sei = { .sType = VK_STRUCTURE_TYPE_SUBPASS_END_INFO };
        vkCmdEndRenderPass2(c->cb, &sei);
    } else {
        vkCmdEndRenderPass(c->cb);
    }
    pass_mark(c, VKT_ZOP_END);
}

void vkt_cmd_clear(struct vkt_cmd *c, uint32_t attachment, float shade)
{
    VkClearAttachment ca = {
        .aspectMask = VK_IMAGE_ASPECT_COLOR_BIT,
        .colorAttachment = attachment,
        .clearValue.color.float32 = { shade, 0.5f, 0.75f, 1.0f },
    };
    /* In a multiview instance baseArrayLayer 0 and layerCount 1: every view
     * clears its own layer (VUID-vkCmdClearAttachments-baseArrayLayer-00018). */
    VkClearRect rect = { { { 0, 0 }, { VKT_RT_SIZE, VKT_RT_SIZE } }, 0, 1 };
    vkCmdClearAttachments(c->cb, 1, &ca, 1, &rect);
    vkt_cmd_zone_op(c, VKT_ZOP_COMMAND, "clear attachments");
}

void vkt_cmd_begin_rendering(struct vkt_cmd *c, const struct vkt_target *t, int i,
                             VkRenderingFlags flags, uint32_t view_mask)
{
    /* A resumed instance must be described exactly as the suspended one
     * was, flags apart: loadOp CLEAR in both (a resumption loads nothing). */
    VkRenderingAttachmentInfo color = {
        .sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO,
        .imageView = t->views[i],
        .imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
        .resolveMode = VK_RESOLVE_MODE_NONE,
        .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
        .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
        .clearValue.color.float32 = { 0.0f, 0.0f, 0.0f, 1.0f },
    };
    VkRenderingInfo ri = {
        .sType = VK_STRUCTURE_TYPE_RENDERING_INFO,
        .flags = flags,
        .renderArea = { { 0, 0 }, { VKT_RT_SIZE, VKT_RT_SIZE } },
        .layerCount = 1,
        .viewMask = view_mask,
        .colorAttachmentCount = 1,
        .pColorAttachments = &color,
    };
    vkCmdBeginRendering(c->cb, &ri);
    c->suspended = false;
    if (flags & VK_RENDERING_RESUMING_BIT)
        pass_mark(c, VKT_ZOP_RESUME);
    else
        vkt_cmd_zone_op(c, VKT_ZOP_BEGIN, "rendering %d×%d %s", VKT_RT_SIZE, VKT_RT_SIZE,
                        VKT_RT_FORMAT_NAME);
}

void vkt_cmd_end_rendering(struct vkt_cmd *c, bool suspending)
{
    vkCmdEndRendering(c->cb);
    pass_mark(c, suspending ? VKT_ZOP_SUSPEND : VKT_ZOP_END);
    c->suspended = suspending;
}

void vkt_cmd_begin_resuming(struct vkt_cmd *c, VkCommandBufferUsageFlags flags)
{
    vkt_cmd_begin(c, flags);
    c->suspended = true;
    c->zone_untimed = VKT_UNTIMED_SUSPENDED;
}

void vkt_cmd_begin_secondary_subpass(struct vkt_cmd *s, VkCommandBufferUsageFlags flags,
                                     const struct vkt_target *t, uint32_t subpass)
{
    VkCommandBufferInheritanceInfo inh = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
        .renderPass = t->pass,
        .subpass = subpass,
        .framebuffer = t->fb,
    };
    vkt_cmd_begin_secondary(s, flags | VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT, &inh);
}

void vkt_cmd_begin_secondary_rendering(struct vkt_cmd *s, VkCommandBufferUsageFlags flags,
                                       uint32_t view_mask)
{
    static const VkFormat format = VKT_RT_FORMAT;
    VkCommandBufferInheritanceRenderingInfo rinh = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_RENDERING_INFO,
        .viewMask = view_mask,
        .colorAttachmentCount = 1,
        .pColorAttachmentFormats = &format,
        .rasterizationSamples = VK_SAMPLE_COUNT_1_BIT,
    };
    VkCommandBufferInheritanceInfo inh = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
        .pNext = &rinh,
    };
    vkt_cmd_begin_secondary(s, flags | VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT, &inh);
}
