/* gz-sample-vk-passes: a small headless Vulkan renderer of several passes.
 *
 * Plain Vulkan, no gpuzones code: it is what the layer is run on at
 * GPUZONES_LEVEL=passes and commands. Each frame is one command buffer:
 * uploads (buffer to buffer, buffer to image), a depth-only shadow render
 * pass, a main render pass (color and depth, two subpasses, the second
 * continued by a secondary command buffer), an unnamed render pass begun
 * with vkCmdBeginRenderPass2, a post pass with dynamic rendering, a
 * readback (image to buffer) and a compute pass (a fill, two dispatches),
 * with debug labels around most of it. The host checks what the GPU wrote.
 *
 * With --truth FILE it also times each render pass instance, dispatch,
 * copy and fill with timestamps of its own (BOTTOM_OF_PIPE) and writes
 * FILE: for every frame, each of those regions with the zone name the
 * layer must give it, its own GPU times on the host clock, and the
 * commands the layer must time inside it. A region begins just before its
 * render pass instance or command; a render pass instance's ends just
 * after it, a command's just before what comes next that has a timestamp
 * (the next region, whose beginning it is too, or a label), so that the
 * window holds the command's zone whether the layer ends it right after
 * the command or where the next one begins. */
#ifndef VK_PASSES_H
#define VK_PASSES_H

#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#define PASSES_NAME_MAX 96
#define PASSES_MAX_REGIONS 64          /* regions of one frame */
#define PASSES_MAX_REGION_COMMANDS 80  /* commands of one region */
#define PASSES_MAX_LABELS 16           /* labels of one frame */
#define PASSES_MAX_PIPELINES 16
#define PASSES_MAX_SECONDARY_OPS 8
#define PASSES_MAX_MESSAGES 2000

#define PASSES_CHECK(expr) passes_check((expr), #expr, __FILE__, __LINE__)
void passes_check(VkResult r, const char *what, const char *file, int line);
_Noreturn void passes_die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t passes_now_ns(void);

struct passes_options {
    unsigned frames;       /* timed frames */
    unsigned warmup;       /* frames before them, not timed */
    unsigned extra_draws;  /* more draws in the main render pass */
    unsigned extra_passes; /* more (empty) render pass instances */
    unsigned extra_dispatches; /* more dispatches in the compute pass */
    unsigned rounds;       /* the compute shaders' work per element */
    const char *truth;     /* the truth file, NULL: no timestamps of its own, no truth */
};

struct passes_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void *mapped; /* NULL unless host visible */
};

struct passes_image {
    VkImage image;
    VkDeviceMemory memory;
    VkImageView view;
    VkFormat format;
    uint32_t width, height;
};

/* One timed region of a frame: a render pass instance, or a command outside
 * render passes, and what the layer must make of it. */
struct passes_region {
    bool pass;
    char name[PASSES_NAME_MAX];
    char area[24];                 /* a render pass instance: "WxH" */
    char formats[PASSES_NAME_MAX]; /* its attachments' formats, "A,B" */
    char groups[24];               /* a dispatch: "XxYxZ" */
    char pipeline[PASSES_NAME_MAX]; /* a dispatch: its pipeline's debug name, "" if none */
    int label;                     /* the innermost label open around it (index in the frame), -1 */
    int nlabels_inside;
    int labels_inside[4];          /* labels begun inside a render pass instance */
    uint32_t begin_query, end_query; /* its timestamps in the frame's queries */
    uint64_t begin_ns, end_ns;     /* its own timestamps on the host clock */
    int ncommands;
    char commands[PASSES_MAX_REGION_COMMANDS][PASSES_NAME_MAX];
};

struct passes_label {
    char name[PASSES_NAME_MAX];
    int parent; /* index in the frame, -1 at the top */
};

struct passes_frame {
    uint64_t submit_ns, done_ns; /* host times around its submission and wait */
    int nregions;
    uint32_t nqueries; /* timestamps written */
    uint32_t pair_query; /* the first of two timestamps back to back */
    uint64_t stamp_gap_ns; /* how far apart they are: what one timestamp costs */
    struct passes_region regions[PASSES_MAX_REGIONS];
    int nlabels;
    struct passes_label labels[PASSES_MAX_LABELS];
    int depth;
    int stack[PASSES_MAX_LABELS]; /* open labels */
};

/* A secondary command buffer recorded once: the labels and commands it
 * holds, replayed into the frame wherever it is executed. */
struct passes_secondary_op {
    char kind; /* 'b' label begin, 'e' label end, 'c' command */
    char name[PASSES_NAME_MAX];
};

struct passes_message {
    char severity[12];
    char *id, *text;
};

struct passes_app {
    struct passes_options opt;
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    PFN_vkSetDebugUtilsObjectNameEXT set_name;
    PFN_vkCmdBeginDebugUtilsLabelEXT begin_label;
    PFN_vkCmdEndDebugUtilsLabelEXT end_label;
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
    VkPhysicalDevice phys;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties memprops;
    uint32_t family;
    VkDevice device;
    VkQueue queue;

    /* the device clock on the host's (CLOCK_MONOTONIC): host = ticks * period + offset */
    double period_ns;
    uint64_t tick_mask;
    int64_t clock_offset_ns;
    const char *clock_source; /* "calibrated" or "assumed" */

    struct passes_buffer corners, indices, instances, staging_instances, staging_texture, readback,
        storage;
    struct passes_image shadow_depth, main_color, main_depth, id_color, id_depth, post_color,
        post_depth, texture, extra_color;
    VkRenderPass shadow_pass, main_pass, id_pass, extra_pass;
    VkFramebuffer shadow_fb, main_fb, id_fb, extra_fb;
    VkPipelineLayout draw_layout, compute_layout;
    VkDescriptorSetLayout compute_set_layout;
    VkDescriptorPool desc_pool;
    VkDescriptorSet compute_set;
    VkPipeline shadow_pipe, scene_pipe, ground_pipe, hud_pipe, id_pipe, tonemap_pipe, mix_pipe,
        scramble_pipe;

    /* pipelines with a debug name, and every pipeline in the order the
     * device first saw it bound (the layer numbers unnamed ones so) */
    int nnamed;
    struct {
        VkPipeline pipe;
        char name[PASSES_NAME_MAX];
    } named[PASSES_MAX_PIPELINES];
    int nbound;
    VkPipeline bound_order[PASSES_MAX_PIPELINES];

    VkCommandPool pool;
    VkCommandBuffer frame_cb, hud_cb;
    int nhud_ops;
    struct passes_secondary_op hud_ops[PASSES_MAX_SECONDARY_OPS];
    VkQueryPool queries;
    uint32_t nqueries;
    VkFence fence;

    /* the frame being recorded and the truth of the timed frames */
    struct passes_frame *frame;
    struct passes_frame *truth; /* opt.frames of them, when opt.truth */
    int unended;                /* the command region whose end is still to be written, -1: none */
    int open_pass;              /* the render pass region being recorded, -1: none */
    VkPipeline bound_draw, bound_compute; /* in the command buffer being recorded */

    /* what the program recorded (render pass instances, action commands),
     * and its own CPU time (timed frames only) */
    unsigned passes_recorded, commands_recorded;
    uint64_t record_cpu_ns, submit_cpu_ns;
    unsigned wrong_frames;

    int nmessages, messages_total, validation_errors;
    struct passes_message messages[PASSES_MAX_MESSAGES];
};

/* passes_setup.c */
void passes_create_instance(struct passes_app *app);
void passes_create_device(struct passes_app *app);
void passes_create_resources(struct passes_app *app);
void passes_create_pipelines(struct passes_app *app);
void passes_destroy(struct passes_app *app);
void passes_name(struct passes_app *app, VkObjectType type, uint64_t handle, const char *name);

/* passes_record.c */
void passes_record_secondary(struct passes_app *app);
void passes_record_frame(struct passes_app *app, unsigned frame);
const char *passes_format_name(VkFormat f);

/* passes_truth.c */
int passes_region_begin(struct passes_app *app, VkCommandBuffer cb, bool pass, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void passes_region_end(struct passes_app *app, VkCommandBuffer cb, int region);
void passes_region_settle(struct passes_app *app, VkCommandBuffer cb);
void passes_region_command(struct passes_app *app, int region, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void passes_truth_stamp_pair(struct passes_app *app, VkCommandBuffer cb);
void passes_truth_label(struct passes_app *app, bool begin, const char *name);
void passes_read_timestamps(struct passes_app *app);
void passes_calibrate(struct passes_app *app);
bool passes_write_truth(const struct passes_app *app);

#endif
