/* The Vulkan GPU context: one per VkDevice, with one timeline per VkQueue.
 *
 * It owns the timestamp queries, writes them inside the app's command
 * buffers as they are recorded (their begin and end, their debug labels),
 * puts small command buffers of its own between the app's only where a
 * recording cannot carry its own timestamps, and reads results back from
 * the worker thread once its timeline semaphore says the work completed,
 * never waiting and adding nothing that makes the GPU wait. It calls Vulkan
 * only through the function pointers it is given, so it needs no libvulkan
 * (a layer passes the next layer's functions; an app passes what volk or
 * its loader resolved). gz_vk_internal.h says how the parts fit. */
#ifndef GZ_VK_H
#define GZ_VK_H

#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "gz_client.h"

typedef VkResult (*gz_vk_set_loader_data_fn)(VkDevice device, void *object);

/* The use of a function of gz_vk_fns.h (a mask). */
enum {
    GZ_VK_FN_EXPLICIT = 1, /* an explicit context needs it */
    GZ_VK_FN_BY_HAND = 2,  /* its name depends on the device: loaded by the device code */
    GZ_VK_FN_RECORDING = 4, /* a hook needed only while recordings are timed (GPUZONES_LEVEL
                               cmdbuf and up): at the submit level the app's recording
                               calls go straight to the next layer */
};

/* Device-level functions, from the one list (gz_vk_fns.h). A context only
 * calls those it needs; ResetQueryPool and GetCalibratedTimestampsEXT may be
 * NULL. */
typedef struct gz_vk_fns {
#define GZ_VK_FN(name, use) PFN_vk##name name;
#define GZ_VK_HOOK GZ_VK_FN
#include "gz_vk_fns.h"
} gz_vk_fns;

typedef struct gz_vk_device_info {
    VkDevice device;
    gz_vk_fns fns;
    gz_vk_set_loader_data_fn set_loader_data; /* for our own command buffers; may be NULL */
    char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    float timestamp_period;
    uint32_t family_count;
    const uint32_t *family_valid_bits; /* timestampValidBits per queue family */
    const uint32_t *family_flags;      /* VkQueueFlags per queue family */
    bool host_query_reset;             /* fns.ResetQueryPool usable */
    bool timeline;                     /* timeline semaphores usable (fns.GetSemaphoreCounterValue) */
    bool driver_reads_block;           /* the driver's vkGetQueryPoolResults waits for the device */
    VkTimeDomainEXT host_domain;       /* for calibration: MONOTONIC, MONOTONIC_RAW or 0 */
    VkPhysicalDeviceMemoryProperties memory; /* to place the results buffers */
    uint32_t serial;                   /* 1 for the first device of the process, then 2… */
} gz_vk_device_info;

typedef struct gz_vk_device gz_vk_device;
typedef struct gz_vk_queue gz_vk_queue;
typedef struct gz_vk_cmdbuf gz_vk_cmdbuf;

GZ_EXPORT gz_vk_device *gz_vk_device_new(const gz_vk_device_info *info);
/* The host clock a device can be calibrated against, from the domains it
 * lists: CLOCK_MONOTONIC, else CLOCK_MONOTONIC_RAW (translated at each
 * sample), else 0 (also when it lists no device domain). */
GZ_EXPORT VkTimeDomainEXT gz_vk_pick_host_domain(const VkTimeDomainEXT *domains, uint32_t n);
/* Reads back what completed, releases everything. The app guarantees (spec)
 * that no work of the device is pending. */
GZ_EXPORT void gz_vk_device_destroy(gz_vk_device *dev);

/* The context of a queue, created on first sight (vkGetDeviceQueue*). */
GZ_EXPORT gz_vk_queue *gz_vk_queue_get(gz_vk_device *dev, VkQueue queue, uint32_t family, uint32_t index);
GZ_EXPORT void gz_vk_queue_set_name(gz_vk_queue *q, const char *name);

/* Command pools and buffers, tracked from the layer's hooks and found by
 * handle (the context keeps the map, so the explicit API finds them too).
 * The app synchronizes the calls on one pool (Vulkan's rule). */
typedef struct gz_vk_cmdpool gz_vk_cmdpool;
/* user: the layer's own record for the pool's device, handed back by
 * gz_vk_cmdbuf_user for its command buffers (one lookup per hooked call). */
GZ_EXPORT gz_vk_cmdpool *gz_vk_cmdpool_new(gz_vk_device *dev, uint32_t family,
                                          bool protected_pool, void *user);
/* vkDestroyCommandPool: its command buffers go with it. */
GZ_EXPORT void gz_vk_cmdpool_free(gz_vk_cmdpool *p);
/* vkResetCommandPool. */
GZ_EXPORT void gz_vk_cmdpool_reset(gz_vk_cmdpool *p);
/* vkAllocateCommandBuffers, for each: short of memory, cb goes untracked
 * (its submissions are still timed, without its name and labels). */
GZ_EXPORT void gz_vk_cmdbuf_new(gz_vk_cmdpool *p, VkCommandBuffer cb, bool secondary);
/* vkFreeCommandBuffers, for each. */
GZ_EXPORT void gz_vk_cmdbuf_free(VkCommandBuffer cb);
/* The context of cb; NULL when it is not tracked. */
GZ_EXPORT gz_vk_cmdbuf *gz_vk_cmdbuf_find(VkCommandBuffer cb);
/* The user pointer of cb's pool. */
GZ_EXPORT void *gz_vk_cmdbuf_user(const gz_vk_cmdbuf *cb);
/* vkBeginCommandBuffer (also an implicit reset), after it was passed down:
 * the recording may write commands from here. */
GZ_EXPORT void gz_vk_cmdbuf_begin(gz_vk_cmdbuf *cb, const VkCommandBufferBeginInfo *info);
/* vkEndCommandBuffer, before it is passed down: the recording's end
 * timestamp (and, where results are copied, their copy). */
GZ_EXPORT void gz_vk_cmdbuf_end(gz_vk_cmdbuf *cb);
/* An action or synchronization command (draw, dispatch, copy, barrier, …)
 * is about to be recorded: the recording's begin timestamp goes first. */
GZ_EXPORT void gz_vk_cmdbuf_action(gz_vk_cmdbuf *cb);
/* Render pass instances, around the calls down: begin and subpass_ending
 * before, the others after. A timestamp is never written where it would be
 * invalid: between a suspended dynamic render pass and the one that resumes
 * it, where a multiview subpass would write more queries than were
 * reserved, or in a subpass whose contents are secondary command buffers
 * (secondary_contents: VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS). */
GZ_EXPORT void gz_vk_cmdbuf_render_pass_begin(gz_vk_cmdbuf *cb, const VkRenderPassBeginInfo *info);
GZ_EXPORT void gz_vk_cmdbuf_render_pass_begun(gz_vk_cmdbuf *cb, VkRenderPass pass,
                                              bool secondary_contents);
GZ_EXPORT void gz_vk_cmdbuf_subpass_ending(gz_vk_cmdbuf *cb);
GZ_EXPORT void gz_vk_cmdbuf_next_subpass(gz_vk_cmdbuf *cb, bool secondary_contents);
GZ_EXPORT void gz_vk_cmdbuf_render_pass_end(gz_vk_cmdbuf *cb);
GZ_EXPORT void gz_vk_cmdbuf_rendering_begin(gz_vk_cmdbuf *cb, const VkRenderingInfo *info);
GZ_EXPORT void gz_vk_cmdbuf_rendering_begun(gz_vk_cmdbuf *cb, const VkRenderingInfo *info);
GZ_EXPORT void gz_vk_cmdbuf_rendering_ending(gz_vk_cmdbuf *cb);
GZ_EXPORT void gz_vk_cmdbuf_rendering_end(gz_vk_cmdbuf *cb);
/* Render passes, for the views of their subpasses (multiview) and their
 * attachments' formats (zones' names). */
GZ_EXPORT void gz_vk_render_pass_add(gz_vk_device *dev, VkRenderPass pass,
                                     const uint32_t *view_masks, uint32_t subpasses,
                                     const VkFormat *formats, uint32_t nformats);
GZ_EXPORT void gz_vk_render_pass_remove(VkRenderPass pass);
/* Image views, for their formats (dynamic rendering's zones' names). */
GZ_EXPORT void gz_vk_image_view_add(gz_vk_device *dev, VkImageView view, VkFormat format);
/* Debug names of render passes, framebuffers and pipelines (type: a
 * VkObjectType), for zones' names; gone: the object was destroyed. */
GZ_EXPORT void gz_vk_object_named(uint32_t type, uint64_t handle, const char *name);
GZ_EXPORT void gz_vk_object_gone(uint32_t type, uint64_t handle);

/* What one command does, for its zone's name and details (the passes and
 * commands levels): the layer fills it from the call's arguments. */
#define GZ_VK_DESC_FORMATS 4
typedef enum gz_vk_desc_type {
    GZ_VK_DESC_NONE = 0,
    GZ_VK_DESC_RENDER_PASS,    /* a: width, b: height; name: the pass's or framebuffer's */
    GZ_VK_DESC_RENDERING,      /* a: width, b: height */
    GZ_VK_DESC_DISPATCH,       /* a, b, c: group counts */
    GZ_VK_DESC_DISPATCH_INDIRECT,
    GZ_VK_DESC_DRAW,           /* a: vertices, b: instances */
    GZ_VK_DESC_DRAW_INDEXED,   /* a: indices, b: instances */
    GZ_VK_DESC_DRAW_INDIRECT,  /* a: draws */
    GZ_VK_DESC_DRAW_INDEXED_INDIRECT, /* a: draws */
    GZ_VK_DESC_DRAW_INDIRECT_COUNT,
    GZ_VK_DESC_DRAW_INDEXED_INDIRECT_COUNT,
    GZ_VK_DESC_COPY_BUFFER,    /* a, b: bytes (low, high 32 bits) */
    GZ_VK_DESC_COPY_BUFFER_IMAGE, /* a, b: the first region's width, height */
    GZ_VK_DESC_COPY_IMAGE_BUFFER,
    GZ_VK_DESC_COPY_IMAGE,
    GZ_VK_DESC_BLIT,           /* a, b: source width, height; c, d: destination's */
    GZ_VK_DESC_RESOLVE,        /* a, b: width, height */
    GZ_VK_DESC_CLEAR_COLOR,
    GZ_VK_DESC_CLEAR_DEPTH,
    GZ_VK_DESC_CLEAR_ATTACHMENTS,
    GZ_VK_DESC_FILL,           /* a, b: bytes (low, high; VK_WHOLE_SIZE: all ones) */
    GZ_VK_DESC_UPDATE,         /* a: bytes */
} gz_vk_desc_type;

typedef struct gz_vk_desc {
    uint16_t type;     /* gz_vk_desc_type */
    uint16_t nformats; /* render passes: attachments (the first GZ_VK_DESC_FORMATS in formats) */
    uint32_t a, b, c, d;
    uint32_t name;     /* interned debug name of its render pass, framebuffer or pipeline */
    uint32_t pipeline; /* the bound pipeline's number (1, 2, …), 0: none */
    uint32_t formats[GZ_VK_DESC_FORMATS];
} gz_vk_desc;

/* Whether cb's next command gets a zone of its own (the passes level
 * outside render passes, the commands level everywhere): then the layer
 * describes it with gz_vk_cmdbuf_command instead of gz_vk_cmdbuf_action. */
GZ_EXPORT bool gz_vk_cmdbuf_describes(const gz_vk_cmdbuf *cb);
GZ_EXPORT void gz_vk_cmdbuf_command(gz_vk_cmdbuf *cb, const gz_vk_desc *desc);
/* vkCmdBindPipeline: the pipeline later draws and dispatches name. */
GZ_EXPORT void gz_vk_cmdbuf_bind_pipeline(gz_vk_cmdbuf *cb, VkPipelineBindPoint point,
                                          VkPipeline pipeline);
/* vkResetCommandBuffer / vkResetCommandPool. */
GZ_EXPORT void gz_vk_cmdbuf_reset(gz_vk_cmdbuf *cb);
GZ_EXPORT void gz_vk_cmdbuf_set_name(gz_vk_cmdbuf *cb, const char *name);
/* Label regions inside the command buffer; call before passing the call
 * down for begin (the timestamp goes first) and after it for end. */
GZ_EXPORT void gz_vk_cmdbuf_label_begin(gz_vk_cmdbuf *cb, const char *name);
GZ_EXPORT void gz_vk_cmdbuf_label_end(gz_vk_cmdbuf *cb);
/* vkCmdExecuteCommands: the secondaries' label begins and ends join the
 * primary's label stack (untimed), so that a label begun in a secondary and
 * ended in the primary closes the right region. */
GZ_EXPORT void gz_vk_cmdbuf_execute(gz_vk_cmdbuf *primary, gz_vk_cmdbuf *const *secondaries, uint32_t n);

/* Queue-level labels (vkQueueBegin/EndDebugUtilsLabelEXT). */
GZ_EXPORT void gz_vk_queue_label_begin(gz_vk_queue *q, const char *name);
GZ_EXPORT void gz_vk_queue_label_end(gz_vk_queue *q);

/* vkQueuePresentKHR returned: a frame of this queue ends with the work
 * submitted to it so far (GPU frame zones) and on this thread now (a CPU
 * frame mark). */
GZ_EXPORT void gz_vk_queue_present(gz_vk_queue *q);

/* Submission. The layer hands each batch's command buffers (already mapped
 * to their gz_vk_cmdbuf, NULL for untracked ones) to gz_vk_submit_batch,
 * which returns the list to submit instead: the app's command buffers, with
 * the context's own only where a recording cannot time itself. The call's
 * last batch that the layer may extend also signals the queue's timeline
 * semaphore (gz_vk_submit_timeline). Then the layer makes the call, holding
 * none of the context's locks, and reports its result with
 * gz_vk_submit_end. The app serializes submissions per queue (external
 * synchronization), so one call is in progress per queue. */
typedef struct gz_vk_submit gz_vk_submit;
/* call_name: interned name of the call (vkQueueSubmit…); fence: the call's. */
GZ_EXPORT gz_vk_submit *gz_vk_submit_begin(gz_vk_queue *q, uint32_t call_name, VkFence fence);
/* batch: the batch's index in the call. out has room for
 * GZ_VK_SUBMIT_OUT(n) handles; returns the count written (n when the batch
 * is not timed: then out is a copy of app). */
#define GZ_VK_SUBMIT_OUT(n) (3 * (size_t)(n) + 1)
GZ_EXPORT uint32_t gz_vk_submit_batch(gz_vk_submit *s, uint32_t batch, const VkCommandBuffer *app,
                                      gz_vk_cmdbuf *const *cbs, uint32_t n, VkCommandBuffer *out);
/* A batch of n command buffers the layer must pass on untouched: protected
 * (protected true) or with device masks. Its zones are counted as not
 * timed, with the reason. */
GZ_EXPORT void gz_vk_submit_untouched(gz_vk_submit *s, uint32_t n, bool protected_batch);
/* The semaphore and value the call signals (in its last batch the layer may
 * extend, with the other signal operations): false when the queue has none
 * or no batch of the call was timed. */
GZ_EXPORT bool gz_vk_submit_timeline(gz_vk_submit *s, VkSemaphore *semaphore, uint64_t *value);
/* result: what the driver returned; on failure the batches are forgotten. */
GZ_EXPORT void gz_vk_submit_end(gz_vk_submit *s, VkResult result);

/* The app is about to wait for GPU work or to present: no sync point of
 * ours may hold its work back while it does. vkWaitForFences: q NULL and
 * its fences; vkQueueWaitIdle: q; vkDeviceWaitIdle: neither; present: q
 * and present true. */
GZ_EXPORT void gz_vk_before_wait(gz_vk_device *dev, gz_vk_queue *q, const VkFence *fences,
                                 uint32_t nfences, bool all, bool present);

/* The same wait returned VK_SUCCESS at done_ns: the work it waited for
 * (the submits that carried those fences, q's work, or all of dev's) was
 * complete then. */
GZ_EXPORT void gz_vk_after_wait(gz_vk_device *dev, gz_vk_queue *q, const VkFence *fences,
                                uint32_t nfences, bool all, uint64_t done_ns);

/* Reads back every completed batch of every queue (never waits). */
void gz_vk_device_collect(gz_vk_device *dev);

#endif
