/* Render pass instances where the layer's timestamps need care:
 *
 *   multiview: inside a multiview subpass (or dynamic rendering with a view
 *   mask) a timestamp writes one query per view, so the layer reserves that
 *   many for each label there; every label must be timed and nested as
 *   recorded, in the primary's subpasses and in secondaries that continue
 *   them (inherited through the render pass or VkCommandBufferInheritance-
 *   RenderingInfo), render passes made with vkCreateRenderPass and
 *   vkCreateRenderPass2, views from 2 up to 6.
 *
 *   suspend: a dynamic render pass instance suspended at the end of one
 *   command buffer and resumed in the next of the same batch
 *   (VUID-VkSubmitInfo-pCommandBuffers-06015/06016: nothing may run between
 *   them). The suspending command buffer has no end timestamp and the
 *   resuming one no begin, so neither has a command buffer zone; labels
 *   recorded between the suspension and the resumption have no timestamp
 *   (all counted, by reason, in the summary); every other label is timed,
 *   also one that spans the suspension. One-time and reusable command
 *   buffers, vkQueueSubmit and vkQueueSubmit2, plain
 *   command buffers around the pair, and SIMULTANEOUS_USE ones (timed as
 *   the reusable ones: each submission is waited for before the next). */
#define _GNU_SOURCE
#include "vkt.h"

#include <stdio.h>

static int skip(const char *why)
{
    printf("gz-test-vk: skipped: %s\n", why);
    return VKT_SKIP;
}

/* The render cases need graphics, multiview (2 views or more) and dynamic
 * rendering; *max_views says how many views. */
static bool render_device(struct vkt_instance *inst, uint32_t *max_views, const char **why)
{
    VkPhysicalDevice phys = vkt_physical_device(inst);
    bool multiview, dynamic_rendering;
    vkt_render_support(phys, &multiview, &dynamic_rendering, max_views);
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, NULL);
    VkQueueFamilyProperties f[16];
    n = n > 16 ? 16 : n;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, f);
    uint32_t family = vkt_queue_family(phys);
    *why = !multiview || *max_views < 2 ? "the device has no multiview (2 views or more)"
           : !dynamic_rendering         ? "the device has no dynamic rendering"
           : family >= n || !(f[family].queueFlags & VK_QUEUE_GRAPHICS_BIT)
               ? "the queue family has no graphics"
               : NULL;
    return *why == NULL;
}

/* ---- multiview ----------------------------------------------------------- */

static uint32_t low_bits(uint32_t n)
{
    return n >= 32 ? ~0u : (1u << n) - 1;
}

static uint32_t layers_for(uint32_t mask)
{
    return 32u - (uint32_t)__builtin_clz(mask);
}

struct multiview {
    struct vkt_target a;   /* vkCreateRenderPass: subpass 0 views 0b11, subpass 1 0b1111 */
    struct vkt_target b;   /* vkCreateRenderPass2: subpass 0 views 0b110, subpass 1 0b111 */
    struct vkt_target dyn; /* dynamic rendering, two images (one instance each) */
    uint32_t masks_a[2], masks_b[2], dyn_mask;
    struct vkt_cmd sec_a;  /* continues a's subpass 1 */
    struct vkt_cmd sec_b;  /* continues b's subpass 0 */
    struct vkt_cmd sec_dyn; /* continues a dynamic instance of dyn_mask */
};

static void label_views(char *out, const char *what, uint32_t mask)
{
    snprintf(out, VKT_NAME_MAX, "%s (%d views)", what, __builtin_popcount(mask));
}

/* A secondary inside a multiview subpass: nested labels, a clear. */
static void record_view_secondary(struct vkt_cmd *s, const char *what, uint32_t mask)
{
    char label[VKT_NAME_MAX];
    label_views(label, what, mask);
    vkt_cmd_label_begin(s, label);
    vkt_cmd_clear(s, 0, 0.5f);
    vkt_cmd_label_begin(s, "Secondary inner");
    vkt_cmd_clear(s, 0, 0.25f);
    vkt_cmd_label_end(s);
    vkt_cmd_label_end(s);
    vkt_cmd_end(s);
}

/* Render pass a: labels in subpass 0 (inline), the secondary in subpass 1;
 * then two dynamic instances with the view mask: labels inline in the
 * first, the secondary in the second. Labels around each. */
static void record_frame_a(struct vkt_cmd *p, struct multiview *m, VkCommandBufferUsageFlags flags)
{
    char label[VKT_NAME_MAX];
    vkt_cmd_begin(p, flags);
    vkt_cmd_label_begin(p, "Multiview frame");
    vkt_cmd_target_layout(p, &m->dyn);
    vkt_cmd_label_begin(p, "Around render pass");
    vkt_cmd_begin_render_pass(p, &m->a, VK_SUBPASS_CONTENTS_INLINE, false);
    label_views(label, "Subpass 0", m->masks_a[0]);
    vkt_cmd_label_begin(p, label);
    vkt_cmd_clear(p, 0, 0.1f);
    vkt_cmd_label_begin(p, "Subpass 0 inner");
    vkt_cmd_clear(p, 0, 0.2f);
    vkt_cmd_label_end(p);
    vkt_cmd_label_end(p);
    vkt_cmd_next_subpass(p, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS, false);
    struct vkt_cmd *sec = &m->sec_a;
    vkt_cmd_execute(p, 1, &sec);
    vkt_cmd_end_render_pass(p, false);
    vkt_cmd_label_end(p);

    vkt_cmd_label_begin(p, "Around dynamic rendering");
    vkt_cmd_begin_rendering(p, &m->dyn, 0, 0, m->dyn_mask);
    label_views(label, "Dynamic", m->dyn_mask);
    vkt_cmd_label_begin(p, label);
    vkt_cmd_clear(p, 0, 0.3f);
    vkt_cmd_label_end(p);
    vkt_cmd_end_rendering(p, false);
    vkt_cmd_begin_rendering(p, &m->dyn, 1, VK_RENDERING_CONTENTS_SECONDARY_COMMAND_BUFFERS_BIT,
                            m->dyn_mask);
    sec = &m->sec_dyn;
    vkt_cmd_execute(p, 1, &sec);
    vkt_cmd_end_rendering(p, false);
    vkt_cmd_label_end(p);
    vkt_cmd_label_end(p);
    vkt_cmd_end(p);
}

/* Render pass b (the *2 entry points): the secondary in subpass 0, labels
 * inline in subpass 1. */
static void record_frame_b(struct vkt_cmd *p, struct multiview *m)
{
    char label[VKT_NAME_MAX];
    vkt_cmd_begin(p, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(p, "RenderPass2 frame");
    vkt_cmd_begin_render_pass(p, &m->b, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS, true);
    struct vkt_cmd *sec = &m->sec_b;
    vkt_cmd_execute(p, 1, &sec);
    vkt_cmd_next_subpass(p, VK_SUBPASS_CONTENTS_INLINE, true);
    label_views(label, "RenderPass2 subpass 1", m->masks_b[1]);
    vkt_cmd_label_begin(p, label);
    vkt_cmd_clear(p, 0, 0.4f);
    vkt_cmd_label_end(p);
    vkt_cmd_end_render_pass(p, true);
    vkt_cmd_label_end(p);
    vkt_cmd_end(p);
}

int case_multiview(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    uint32_t max_views;
    const char *why;
    if (!render_device(inst, &max_views, &why)) {
        vkt_instance_destroy(inst);
        return skip(why);
    }
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_RENDER, NULL);
    struct multiview m;
    uint32_t views = max_views < 6 ? max_views : 6;
    m.masks_a[0] = 0x3;
    m.masks_a[1] = low_bits(views < 4 ? views : 4);
    m.masks_b[0] = views >= 3 ? 0x6 : 0x2;
    m.masks_b[1] = low_bits(views < 3 ? views : 3);
    m.dyn_mask = low_bits(views);
    truth_note("max_views", max_views);
    truth_note("dynamic_views", views);

    vkt_target_images(d, 2, layers_for(m.masks_a[1]), &m.a);
    vkt_target_render_pass(d, &m.a, m.masks_a, false);
    vkt_target_images(d, 2, layers_for(m.masks_b[0] | m.masks_b[1]), &m.b);
    vkt_target_render_pass(d, &m.b, m.masks_b, true);
    vkt_target_images(d, 2, layers_for(m.dyn_mask), &m.dyn);

    /* secondaries recorded once, executed by every frame */
    vkt_cmd_alloc_secondary(d, d->pool, "multiview secondary a", &m.sec_a);
    vkt_cmd_begin_secondary_subpass(&m.sec_a, 0, &m.a, 1);
    record_view_secondary(&m.sec_a, "Secondary subpass 1", m.masks_a[1]);
    vkt_cmd_alloc_secondary(d, d->pool, "multiview secondary b", &m.sec_b);
    vkt_cmd_begin_secondary_subpass(&m.sec_b, 0, &m.b, 0);
    record_view_secondary(&m.sec_b, "Secondary RenderPass2 subpass 0", m.masks_b[0]);
    vkt_cmd_alloc_secondary(d, d->pool, "multiview secondary dynamic", &m.sec_dyn);
    vkt_cmd_begin_secondary_rendering(&m.sec_dyn, 0, m.dyn_mask);
    record_view_secondary(&m.sec_dyn, "Secondary dynamic", m.dyn_mask);

    struct vkt_cmd fa, fb;
    vkt_cmd_alloc(d, d->pool, "multiview frame a", &fa);
    vkt_cmd_alloc(d, d->pool, "multiview frame b", &fb);
    record_frame_a(&fa, &m, 0); /* reusable */
    int frames = a->count > 0 ? a->count : 2;
    for (int i = 0; i < frames; i++) {
        vkt_submit1(&fa);
        record_frame_b(&fb, &m); /* one-time, recorded again each frame */
        struct vkt_batch b = { 1, { &fb } };
        vkt_submit(d, VKT_SUBMIT2, 1, &b, VKT_WAIT_FENCE, false);
    }
    /* both in one batch */
    record_frame_b(&fb, &m);
    struct vkt_batch both = { 2, { &fa, &fb } };
    vkt_submit(d, VKT_SUBMIT1, 1, &both, VKT_WAIT_TIMELINE, false);

    vkt_cmd_free(&fa);
    vkt_cmd_free(&fb);
    vkt_cmd_free(&m.sec_a);
    vkt_cmd_free(&m.sec_b);
    vkt_cmd_free(&m.sec_dyn);
    vkt_target_destroy(d, &m.a);
    vkt_target_destroy(d, &m.b);
    vkt_target_destroy(d, &m.dyn);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}

/* ---- suspend ------------------------------------------------------------- */

/* The first part: labels before the pass, one that spans the suspension
 * ("Pass", ended by the resuming command buffer), one inside, and one after
 * the suspension (untimed). */
static void record_suspending(struct vkt_cmd *c, const struct vkt_target *t,
                              VkCommandBufferUsageFlags flags)
{
    vkt_cmd_begin(c, flags);
    vkt_cmd_label_begin(c, "Suspend frame");
    vkt_cmd_target_layout(c, t);
    vkt_cmd_label_begin(c, "Before pass");
    vkt_cmd_work(c, 1);
    vkt_cmd_label_end(c);
    vkt_cmd_label_begin(c, "Pass");
    vkt_cmd_begin_rendering(c, t, 0, VK_RENDERING_SUSPENDING_BIT, 0);
    vkt_cmd_label_begin(c, "Part A");
    vkt_cmd_clear(c, 0, 0.1f);
    vkt_cmd_label_end(c);
    vkt_cmd_end_rendering(c, true);
    vkt_cmd_label_begin(c, "Tail A");
    vkt_cmd_label_end(c);
    vkt_cmd_end(c);
}

/* The last part: a label before the resumption (untimed), one inside, one
 * after the pass; then it ends "Pass" and "Suspend frame", begun by the
 * first part (ends last: Mesa 22.3's label stack, see README). */
static void record_resuming(struct vkt_cmd *c, const struct vkt_target *t,
                            VkCommandBufferUsageFlags flags)
{
    vkt_cmd_begin_resuming(c, flags);
    vkt_cmd_label_begin(c, "Between");
    vkt_cmd_label_end(c);
    vkt_cmd_begin_rendering(c, t, 0, VK_RENDERING_RESUMING_BIT, 0);
    vkt_cmd_label_begin(c, "Part B");
    vkt_cmd_clear(c, 0, 0.3f);
    vkt_cmd_label_end(c);
    vkt_cmd_end_rendering(c, false);
    vkt_cmd_label_begin(c, "After pass");
    vkt_cmd_work(c, 2);
    vkt_cmd_label_end(c);
    vkt_cmd_label_end(c); /* Pass */
    vkt_cmd_label_end(c); /* Suspend frame */
    vkt_cmd_end(c);
}

static void record_plain(struct vkt_cmd *c, const char *label, uint32_t add)
{
    vkt_cmd_begin(c, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(c, label);
    vkt_cmd_work(c, add);
    vkt_cmd_label_end(c);
    vkt_cmd_end(c);
}

static void submit_batch(struct vkt_device *d, enum vkt_api api, int n, struct vkt_cmd **cmds)
{
    struct vkt_batch b = { n, { NULL } };
    for (int i = 0; i < n; i++)
        b.cmds[i] = cmds[i];
    vkt_submit(d, api, 1, &b, VKT_WAIT_FENCE, false);
}

int case_suspend(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    uint32_t max_views;
    const char *why;
    if (!render_device(inst, &max_views, &why)) {
        vkt_instance_destroy(inst);
        return skip(why);
    }
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_RENDER, NULL);
    struct vkt_target t;
    vkt_target_images(d, 1, 1, &t);
    const VkCommandBufferUsageFlags once = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    const VkCommandBufferUsageFlags sim = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    struct vkt_cmd sa, sb;             /* one-time, recorded again for each submission */
    struct vkt_cmd ra, rb;             /* reusable, recorded once */
    struct vkt_cmd xa, xb;             /* SIMULTANEOUS_USE, recorded once */
    struct vkt_cmd before, after;      /* plain one-time command buffers around a pair */
    vkt_cmd_alloc(d, d->pool, "suspending", &sa);
    vkt_cmd_alloc(d, d->pool, "resuming", &sb);
    vkt_cmd_alloc(d, d->pool, "reusable suspending", &ra);
    vkt_cmd_alloc(d, d->pool, "reusable resuming", &rb);
    vkt_cmd_alloc(d, d->pool, "simultaneous suspending", &xa);
    vkt_cmd_alloc(d, d->pool, "simultaneous resuming", &xb);
    vkt_cmd_alloc(d, d->pool, "plain before", &before);
    vkt_cmd_alloc(d, d->pool, "plain after", &after);
    record_suspending(&ra, &t, 0);
    record_resuming(&rb, &t, 0);
    record_suspending(&xa, &t, sim);
    record_resuming(&xb, &t, sim);

    /* one-time pairs, both submission APIs (no chain of three: a command
     * buffer that resumes one instance and suspends another trips
     * validation 1.3.239, which handles its suspension before its
     * resumption and then reports 06192 for the next one) */
    record_suspending(&sa, &t, once);
    record_resuming(&sb, &t, once);
    submit_batch(d, VKT_SUBMIT1, 2, (struct vkt_cmd *[]){ &sa, &sb });
    record_suspending(&sa, &t, once);
    record_resuming(&sb, &t, once);
    submit_batch(d, VKT_SUBMIT2, 2, (struct vkt_cmd *[]){ &sa, &sb });

    /* reusable pairs, twice, both APIs */
    submit_batch(d, VKT_SUBMIT1, 2, (struct vkt_cmd *[]){ &ra, &rb });
    submit_batch(d, VKT_SUBMIT2, 2, (struct vkt_cmd *[]){ &ra, &rb });

    /* plain command buffers around a pair: their zones are timed */
    record_plain(&before, "Plain before", 3);
    record_plain(&after, "Plain after", 4);
    submit_batch(d, VKT_SUBMIT1, 4, (struct vkt_cmd *[]){ &before, &ra, &rb, &after });

    /* SIMULTANEOUS_USE pairs, alone and mixed with one-time ones; each
     * submission waited for, so no two executions overlap */
    submit_batch(d, VKT_SUBMIT1, 2, (struct vkt_cmd *[]){ &xa, &xb });
    submit_batch(d, VKT_SUBMIT2, 2, (struct vkt_cmd *[]){ &xa, &xb });
    record_suspending(&sa, &t, once);
    submit_batch(d, VKT_SUBMIT1, 2, (struct vkt_cmd *[]){ &sa, &xb });
    record_resuming(&sb, &t, once);
    submit_batch(d, VKT_SUBMIT2, 2, (struct vkt_cmd *[]){ &xa, &sb });

    struct vkt_cmd *all[] = { &sa, &sb, &ra, &rb, &xa, &xb, &before, &after };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkt_cmd_free(all[i]);
    vkt_target_destroy(d, &t);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}
