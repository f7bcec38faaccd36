/* gz-test-vk: purpose-built Vulkan programs for the gpuzones layer tests.
 *
 * Each case does plain Vulkan work and writes a "truth" JSON file with what
 * the program knows on the CPU (host times around submissions, the expected
 * zone names, label nesting).  run_case.py compares the layer's trace with it.
 * Nothing here knows about gpuzones: the same binary runs with and without
 * the layer. */
#ifndef VKT_H
#define VKT_H

#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#define VKT_NAME_MAX 64
#define VKT_MAX_OPS 32
#define VKT_MAX_ZONE_OPS 48
#define VKT_MAX_CMDS 8
#define VKT_MAX_BATCHES 8
#define VKT_WORK_ELEMS (16 * 1024)
#define VKT_SPIN_GROUP 64 /* local_size_x of shaders/spin.comp */
#define VKT_SPIN_MAX_GROUPS (VKT_WORK_ELEMS / VKT_SPIN_GROUP)
#define VKT_SPIN_MAX_ITERATIONS 65535u /* llvmpipe's per-invocation loop limit */

/* ---- util ---------------------------------------------------------------- */

#define VKT_CHECK(expr) vkt_check((expr), #expr, __FILE__, __LINE__)
void vkt_check(VkResult r, const char *what, const char *file, int line);
_Noreturn void vkt_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t vkt_now_ns(void);
int vkt_gettid(void);
void vkt_sleep_ms(unsigned ms);
/* A size as the layer writes it in zone names: "512 B", "1.5 KiB", "4 MiB". */
const char *vkt_size_text(uint64_t bytes, char out[24]);

/* ---- instance / device ---------------------------------------------------- */

struct vkt_instance {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    int index; /* truth index: order of creation */
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
    PFN_vkSetDebugUtilsObjectNameEXT set_name;
    PFN_vkCmdBeginDebugUtilsLabelEXT cmd_begin_label;
    PFN_vkCmdEndDebugUtilsLabelEXT cmd_end_label;
    PFN_vkQueueBeginDebugUtilsLabelEXT queue_begin_label;
    PFN_vkQueueEndDebugUtilsLabelEXT queue_end_label;
};

/* How the app asks for device features: the layer has to enable hostQueryReset
 * on top of each of these shapes, so the cases use different ones. */
enum vkt_features {
    VKT_FEAT_NONE,           /* no pNext, no pEnabledFeatures */
    VKT_FEAT_FEATURES2_V12,  /* VkPhysicalDeviceFeatures2 -> Vulkan12Features */
    VKT_FEAT_V12_V13,        /* Vulkan12Features -> Vulkan13Features, sync2 ext */
    VKT_FEAT_HQR_STRUCT,     /* VkPhysicalDeviceHostQueryResetFeatures (false) */
    VKT_FEAT_DEBUG_MARKER,   /* VK_EXT_debug_marker (lavapipe: only from validation) */
    VKT_FEAT_FAMILIES,       /* FEATURES2_V12, every queue of the first family, and one
                                queue of each other family (vkt_device_view) */
    VKT_FEAT_READONLY,       /* FEATURES2_V12 (hostQueryReset off), the create info, its
                                chain and its queue infos in read-only memory */
    VKT_FEAT_RENDER,         /* FEATURES2 -> Vulkan11 (multiview) -> Vulkan12 -> Vulkan13
                                (dynamicRendering, synchronization2); vkt_render_support */
    VKT_FEAT_PROTECTED,      /* FEATURES2 -> Vulkan11 (protectedMemory) -> Vulkan12 -> Vulkan13
                                (synchronization2), and a protected-capable queue of the
                                same family beside the ordinary one
                                (vkt_device_protected_queue) */
};

struct vkt_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void *mapped; /* NULL unless host visible */
};

struct vkt_device {
    struct vkt_instance *inst;
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    int queue_key; /* truth queue index */
    bool timeline;
    bool sync2;
    PFN_vkQueueSubmit2KHR submit2_khr; /* NULL unless VK_KHR_synchronization2 enabled */
    /* VK_EXT_debug_marker, NULL unless enabled: names and labels then go
     * through it instead of VK_EXT_debug_utils */
    PFN_vkCmdDebugMarkerBeginEXT cmd_marker_begin;
    PFN_vkCmdDebugMarkerEndEXT cmd_marker_end;
    PFN_vkDebugMarkerSetObjectNameEXT marker_set_name;
    VkPhysicalDeviceMemoryProperties memprops;

    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipe_layout;
    VkPipeline add_pipe;
    VkPipeline spin_pipe;
    VkDescriptorPool desc_pool;
    VkDescriptorSet set;
    struct vkt_buffer work;   /* storage buffer used by the shaders */
    struct vkt_buffer result; /* host-visible copy target */
    VkCommandPool pool;       /* main thread's pool (resettable buffers) */
    VkFence fence;
    VkSemaphore timeline_sem; /* VK_NULL_HANDLE unless timeline */
    uint64_t timeline_value;
    VkSemaphore chain_sem[VKT_MAX_BATCHES]; /* binary semaphores between batches */
    bool view; /* another queue of a device (vkt_device_view) */
};

struct vkt_instance *vkt_instance_create(void);
/* with one more instance extension (VK_EXT_debug_report for debug markers) */
struct vkt_instance *vkt_instance_create_with(const char *extra_ext);
void vkt_instance_destroy(struct vkt_instance *inst);
struct vkt_device *vkt_device_create(struct vkt_instance *inst, enum vkt_features feat,
                                     const char *queue_name);
void vkt_device_destroy(struct vkt_device *d);
/* Another queue of base's device (created with VKT_FEAT_FAMILIES): its own
 * pool, fence and semaphores, a truth queue of its own; timed: whether the
 * layer can time it (its family has timestamps). */
struct vkt_device *vkt_device_view(struct vkt_device *base, uint32_t family, uint32_t index,
                                   const char *queue_name, bool timed);
void vkt_device_view_destroy(struct vkt_device *v);
/* The protected-capable queue of base's device (created with
 * VKT_FEAT_PROTECTED), as a view: vkGetDeviceQueue2, its own (unprotected)
 * pool, fence and semaphores, a truth queue of its own. */
struct vkt_device *vkt_device_protected_queue(struct vkt_device *base, const char *queue_name);
/* What vkt_device_create picks: the first physical device, its queue family. */
VkPhysicalDevice vkt_physical_device(struct vkt_instance *inst);
uint32_t vkt_queue_family(VkPhysicalDevice phys);
void vkt_set_name(struct vkt_device *d, VkObjectType type, uint64_t handle, const char *name);
void vkt_buffer_create(struct vkt_device *d, VkDeviceSize size, VkBufferUsageFlags usage,
                       bool host_visible, struct vkt_buffer *b);
void vkt_buffer_destroy(struct vkt_device *d, struct vkt_buffer *b);
VkCommandPool vkt_pool_create(struct vkt_device *d, VkCommandPoolCreateFlags flags);
uint32_t vkt_memory_type(const struct vkt_device *d, uint32_t bits, VkMemoryPropertyFlags need,
                         VkMemoryPropertyFlags prefer);

/* ---- command buffers with a record of their label operations -------------- */

/* Why the layer cannot time a zone: where the API leaves no room for a
 * timestamp of its own, or where two executions of one command buffer
 * write the same timestamps. The summary says how many, by reason. */
enum vkt_untimed {
    VKT_TIMED = 0,
    VKT_UNTIMED_SIMULTANEOUS, /* a SIMULTANEOUS_USE secondary may run twice at once */
    VKT_UNTIMED_SUSPENDED,    /* between a suspended render pass instance and its resumption */
    VKT_UNTIMED_PROTECTED,    /* a protected command buffer: no queries allowed */
    VKT_UNTIMED_OVERLAP,      /* a SIMULTANEOUS_USE primary submitted again while its
                                 previous execution may still have been running */
};
const char *vkt_untimed_name(enum vkt_untimed why);

struct vkt_label_op {
    bool begin;
    enum vkt_untimed untimed; /* no timestamp of its own in any execution, and why */
    char name[VKT_NAME_MAX];
};

/* What the layer makes zones of at GPUZONES_LEVEL=passes and commands
 * (render pass instances, and the action commands in and out of them),
 * as recorded, for the truth to replay in submission order. A render pass
 * instance suspended in one command buffer and resumed in the next is one
 * zone: BEGIN, SUSPEND, RESUME, END. Names are what the layer must give
 * (docs/TRACE_FORMAT.md). */
enum vkt_zone_op_kind {
    VKT_ZOP_BEGIN,   /* a render pass instance begins */
    VKT_ZOP_SUSPEND, /* it is suspended at the end of the command buffer */
    VKT_ZOP_RESUME,  /* it is resumed */
    VKT_ZOP_END,     /* it ends */
    VKT_ZOP_COMMAND, /* an action command (a draw, clear, dispatch, copy, fill) */
};

struct vkt_zone_op {
    enum vkt_zone_op_kind kind;
    enum vkt_untimed untimed; /* no timestamp of its own in any execution, and why */
    int label_pos;            /* how many label operations came before it */
    char name[VKT_NAME_MAX];
};

struct vkt_cmd {
    struct vkt_device *dev;
    VkCommandPool pool;
    VkCommandBuffer cb;
    bool secondary;          /* VK_COMMAND_BUFFER_LEVEL_SECONDARY */
    bool simultaneous;       /* recorded with SIMULTANEOUS_USE */
    /* Which recording it holds (a new number at each vkBeginCommandBuffer):
     * the truth follows the executions of one recording of a
     * SIMULTANEOUS_USE primary, which may overwrite each other's
     * timestamps. */
    unsigned recording;
    bool protected_pool;     /* allocated from a VK_COMMAND_POOL_CREATE_PROTECTED_BIT pool */
    /* A dynamic render pass instance is suspended here (its resumption
     * comes later): label operations recorded now have no timestamp.
     * Set by vkt_cmd_end_rendering, and by a case for a command buffer
     * that starts by resuming one. */
    bool suspended;
    /* Why its command buffer zone cannot be timed: it ends with a render
     * pass instance suspended (no end of its own), or its first action
     * resumes one (no begin of its own, and nothing may go before it). */
    enum vkt_untimed zone_untimed;
    char name[VKT_NAME_MAX]; /* its debug name ("" = none) */
    int nops;
    struct vkt_label_op ops[VKT_MAX_OPS];
    int nzops;
    struct vkt_zone_op zops[VKT_MAX_ZONE_OPS];
};

void vkt_cmd_alloc(struct vkt_device *d, VkCommandPool pool, const char *name, struct vkt_cmd *c);
void vkt_cmd_alloc_secondary(struct vkt_device *d, VkCommandPool pool, const char *name,
                             struct vkt_cmd *c);
void vkt_cmd_free(struct vkt_cmd *c);
/* The command buffer zone name the layer must give c at place in its batch. */
void vkt_cmd_zone_name(const struct vkt_cmd *c, int place, char out[VKT_NAME_MAX]);
void vkt_cmd_begin(struct vkt_cmd *c, VkCommandBufferUsageFlags flags);
/* A secondary: inherit (NULL: outside a render pass, no inheritance). */
void vkt_cmd_begin_secondary(struct vkt_cmd *c, VkCommandBufferUsageFlags flags,
                             const VkCommandBufferInheritanceInfo *inherit);
/* vkCmdExecuteCommands; the secondaries' label operations join the primary's. */
void vkt_cmd_execute(struct vkt_cmd *primary, int n, struct vkt_cmd *const *secondaries);
void vkt_cmd_end(struct vkt_cmd *c);
void vkt_cmd_reset(struct vkt_cmd *c);
void vkt_cmd_forget_ops(struct vkt_cmd *c); /* after vkResetCommandPool */
void vkt_cmd_label_begin(struct vkt_cmd *c, const char *name);
void vkt_cmd_label_end(struct vkt_cmd *c);
/* Records what the layer makes a zone of (vkt_zone_op_kind); name is a
 * printf format. */
void vkt_cmd_zone_op(struct vkt_cmd *c, enum vkt_zone_op_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void vkt_cmd_work(struct vkt_cmd *c, uint32_t add);
void vkt_cmd_spin(struct vkt_cmd *c, uint32_t groups, uint32_t iterations, uint32_t seed);
void vkt_cmd_copy_result(struct vkt_cmd *c);

/* ---- rendering (vkt_render.c) -------------------------------------------- */

/* Color images of `layers` array layers, one view over all of them, and a
 * render pass of `subpasses` subpasses, subpass i drawing into image i
 * (view masks[i]: multiview when not 0; NULL: no multiview, one image). */
#define VKT_RT_SIZE 16
#define VKT_RT_FORMAT VK_FORMAT_R8G8B8A8_UNORM
#define VKT_MAX_SUBPASSES 4
struct vkt_target {
    int nimages;
    uint32_t layers;
    VkImage images[VKT_MAX_SUBPASSES];
    VkDeviceMemory memory[VKT_MAX_SUBPASSES];
    VkImageView views[VKT_MAX_SUBPASSES];
    VkRenderPass pass; /* VK_NULL_HANDLE: dynamic rendering only */
    VkFramebuffer fb;
};
/* Whether the queue family of d draws (graphics). */
bool vkt_family_has_graphics(const struct vkt_device *d);
/* Multiview and dynamic rendering: what the device offers (VKT_FEAT_RENDER
 * enables them). max_views: maxMultiviewViewCount. */
void vkt_render_support(VkPhysicalDevice phys, bool *multiview, bool *dynamic_rendering,
                        uint32_t *max_views);
/* One image of `layers` layers, no render pass. */
void vkt_target_images(struct vkt_device *d, int nimages, uint32_t layers, struct vkt_target *t);
/* A render pass with vkCreateRenderPass (+ VkRenderPassMultiviewCreateInfo
 * when masks) or, when v2, vkCreateRenderPass2 (VkSubpassDescription2's
 * viewMask), and its framebuffer; t->nimages subpasses. */
void vkt_target_render_pass(struct vkt_device *d, struct vkt_target *t, const uint32_t *masks,
                            bool v2);
void vkt_target_destroy(struct vkt_device *d, struct vkt_target *t);
/* Render pass instances of t->pass: vkCmd*RenderPass, or the *2 forms. */
void vkt_cmd_begin_render_pass(struct vkt_cmd *c, const struct vkt_target *t,
                               VkSubpassContents contents, bool v2);
void vkt_cmd_next_subpass(struct vkt_cmd *c, VkSubpassContents contents, bool v2);
void vkt_cmd_end_render_pass(struct vkt_cmd *c, bool v2);
/* The images to COLOR_ATTACHMENT_OPTIMAL (a barrier: an action command). */
void vkt_cmd_target_layout(struct vkt_cmd *c, const struct vkt_target *t);
/* Clears the whole attachment `attachment` of the subpass or rendering
 * instance c is in (vkCmdClearAttachments, one layer: in a multiview one
 * each view's). */
void vkt_cmd_clear(struct vkt_cmd *c, uint32_t attachment, float shade);
/* Dynamic rendering into image i of t (loadOp CLEAR unless resuming). */
void vkt_cmd_begin_rendering(struct vkt_cmd *c, const struct vkt_target *t, int i,
                             VkRenderingFlags flags, uint32_t view_mask);
/* suspending: the instance was begun with VK_RENDERING_SUSPENDING_BIT. */
void vkt_cmd_end_rendering(struct vkt_cmd *c, bool suspending);
/* vkt_cmd_begin for a command buffer whose first action resumes the render
 * pass instance the one before it suspended: until then its label
 * operations have no timestamp, nor has its command buffer zone a begin. */
void vkt_cmd_begin_resuming(struct vkt_cmd *c, VkCommandBufferUsageFlags flags);
/* A secondary that continues subpass `subpass` of t's render pass, or a
 * dynamic render pass instance of view_mask (RENDER_PASS_CONTINUE added). */
void vkt_cmd_begin_secondary_subpass(struct vkt_cmd *s, VkCommandBufferUsageFlags flags,
                                     const struct vkt_target *t, uint32_t subpass);
void vkt_cmd_begin_secondary_rendering(struct vkt_cmd *s, VkCommandBufferUsageFlags flags,
                                       uint32_t view_mask);

/* ---- submission --------------------------------------------------------- */

enum vkt_api { VKT_SUBMIT1, VKT_SUBMIT2, VKT_SUBMIT2_KHR };

enum vkt_wait {
    VKT_WAIT_FENCE,    /* submit with the device fence, vkWaitForFences */
    VKT_WAIT_TIMELINE, /* signal the timeline semaphore, vkWaitSemaphores */
    VKT_WAIT_IDLE,     /* no fence, vkQueueWaitIdle */
    VKT_DEFER_FENCE,   /* submit with the fence, caller calls vkt_finish_fence */
    VKT_DEFER,         /* no fence, caller calls vkt_finish_idle */
};

struct vkt_batch {
    int ncmds;
    struct vkt_cmd *cmds[VKT_MAX_CMDS];
};
/* A batch of protected command buffers (vkt_cmd.protected_pool) has no
 * zones at all: the layer may add nothing to it (truth_call_begin). */

/* Submits nbatches batches in one call. chain: batch i+1 waits on a binary
 * semaphore signalled by batch i. Returns the truth call index. */
int vkt_submit(struct vkt_device *d, enum vkt_api api, int nbatches, const struct vkt_batch *b,
               enum vkt_wait wait, bool chain);
int vkt_submit1(struct vkt_cmd *c); /* one batch, one cmdbuf, vkQueueSubmit, fence */
void vkt_finish_fence(struct vkt_device *d, int call);
void vkt_finish_idle(struct vkt_device *d);
void vkt_queue_label_begin(struct vkt_device *d, const char *name);
void vkt_queue_label_end(struct vkt_device *d);

/* ---- truth --------------------------------------------------------------- */

void truth_init(const char *case_name);
int truth_add_queue(int instance, struct vkt_device *d, uint32_t index, const char *name);
int truth_add_instance(void);
void truth_message(const char *severity, const char *type, const char *id, const char *text);
int truth_call_begin(int queue, const char *api, const char *wait, int nbatches,
                     const struct vkt_batch *b, uint64_t submit_ns, uint64_t return_ns);
void truth_call_done(int call, uint64_t done_ns);
void truth_queue_done(int queue, uint64_t done_ns);
/* The queue's family has no timestamps: no track, one warning. */
void truth_queue_untimed(int queue);
/* A protected-capable queue (VK_DEVICE_QUEUE_CREATE_PROTECTED_BIT). */
void truth_queue_protected(int queue);
void truth_queue_label(int queue, bool begin, const char *name);
void truth_workload(int call, const char *label, uint64_t iterations);
void truth_note(const char *key, long long value);
bool truth_write(const char *path);
int truth_error_count(void);

/* ---- cases ---------------------------------------------------------------- */

struct vkt_args {
    const char *case_name;
    const char *truth_path;
    int count; /* case-specific size knob (0 = default) */
};

int case_onetime(const struct vkt_args *a);
int case_reuse(const struct vkt_args *a);
int case_unsubmitted(const struct vkt_args *a);
int case_threads(const struct vkt_args *a);
int case_submit(const struct vkt_args *a);
int case_labels(const struct vkt_args *a);
int case_markers(const struct vkt_args *a);
int case_instances(const struct vkt_args *a);
int case_workload(const struct vkt_args *a);
int case_simultaneous(const struct vkt_args *a);
int case_secondary(const struct vkt_args *a);
int case_families(const struct vkt_args *a);
int case_readonly(const struct vkt_args *a);
int case_multiview(const struct vkt_args *a);
int case_suspend(const struct vkt_args *a);
int case_protected(const struct vkt_args *a);
int case_secondary_frames(const struct vkt_args *a);
int case_timeline_wait(const struct vkt_args *a);

/* A case returns this when the device lacks what it needs: the program
 * says so and exits with it, which meson reports as a skipped test. */
#define VKT_SKIP 77

#endif
