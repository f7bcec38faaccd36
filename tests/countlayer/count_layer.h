/* VK_LAYER_GPUZONES_count: what reaches the driver, counted. Shared between
 * the layer's files: the counters (count_report.c) and the record of what
 * each command buffer holds (count_cmdbufs.c). */
#ifndef GZC_COUNT_LAYER_H
#define GZC_COUNT_LAYER_H

#include <stdint.h>
#include <vulkan/vulkan.h>

/* Commands recorded into a command buffer: counted once per execution of
 * the command buffer that holds them (each submission of a primary, each
 * time a submitted primary executes a secondary). They come first, so that
 * a command buffer's record is an array indexed by them. */
#define GZC_RECORDED(X)                                                                            \
    X(TIMESTAMPS, "timestamps")           /* vkCmdWriteTimestamp, vkCmdWriteTimestamp2 */        \
    X(QUERY_RESETS, "query_resets")       /* vkCmdResetQueryPool */                               \
    X(COPIES_WAIT, "copies_wait")         /* vkCmdCopyQueryPoolResults with WAIT_BIT */           \
    X(COPIES_NOWAIT, "copies_nowait")     /* vkCmdCopyQueryPoolResults without it */              \
    X(BARRIERS, "barriers")               /* vkCmdPipelineBarrier, vkCmdPipelineBarrier2 */       \
    X(EVENTS_SET, "events_set")           /* vkCmdSetEvent, vkCmdSetEvent2 */                     \
    X(EVENTS_WAITED, "events_waited")     /* vkCmdWaitEvents, vkCmdWaitEvents2 (calls) */         \
    X(EVENTS_RESET, "events_reset")       /* vkCmdResetEvent, vkCmdResetEvent2 */                 \
    X(FILLS, "fills")                     /* vkCmdFillBuffer */                                   \
    X(DISPATCHES, "dispatches")           /* vkCmdDispatch, ...Base, ...Indirect */               \
    X(DRAWS, "draws")                     /* vkCmdDraw* */                                        \
    X(BUFFER_COPIES, "buffer_copies")     /* vkCmdCopyBuffer, vkCmdCopyBuffer2 */                 \
    X(SECONDARIES, "secondaries_executed") /* command buffers of vkCmdExecuteCommands */

/* Calls counted as they are made. */
#define GZC_CALLED(X)                                                                              \
    X(SUBMIT_CALLS, "submit_calls")             /* vkQueueSubmit, vkQueueSubmit2(KHR) */          \
    X(BATCHES, "batches")                       /* VkSubmitInfo / VkSubmitInfo2 entries */        \
    X(CMDBUFS_SUBMITTED, "cmdbufs_submitted")   /* command buffers in those batches */            \
    X(BEGINS, "begins")                         /* vkBeginCommandBuffer */                        \
    X(CMDBUFS_ALLOCATED, "cmdbufs_allocated")   /* by vkAllocateCommandBuffers */                 \
    X(HOST_QUERY_RESETS, "host_query_resets")   /* vkResetQueryPool(EXT) */                       \
    X(GET_RESULTS, "get_results")               /* vkGetQueryPoolResults */                       \
    X(GET_RESULTS_WAIT, "get_results_wait")     /* ... of them with WAIT_BIT */                   \
    X(DEVICES, "devices")                       /* vkCreateDevice that succeeded */

#define GZC_ENUM(name, key) GZC_##name,
enum gzc_counter { GZC_RECORDED(GZC_ENUM) GZC_CALLED(GZC_ENUM) GZC_NCOUNTERS };
enum { GZC_NRECORDED = GZC_SECONDARIES + 1 };
#undef GZC_ENUM

/* count_report.c: the process-wide counters, and their file. */
void gzc_add(enum gzc_counter which, uint64_t n);
/* Writes every counter, one line of key=value pairs, to GZCOUNT_OUTPUT
 * (stderr where it is not set or cannot be written, with a line saying so). */
void gzc_report_write(void);

/* count_cmdbufs.c: what each command buffer holds, by handle. device_key
 * is the dispatch key shared by the device and its command buffers. */
void gzc_cmdbuf_allocated(VkCommandBuffer cb, VkCommandPool pool);
void gzc_cmdbuf_begun(VkCommandBuffer cb);
void gzc_cmdbuf_note(VkCommandBuffer cb, enum gzc_counter which, uint32_t n);
void gzc_cmdbuf_executes(VkCommandBuffer cb, uint32_t n, const VkCommandBuffer *secondaries);
/* Adds what cb holds (its secondaries' commands included) to the counters:
 * cb was just handed to the driver in a submission. */
void gzc_cmdbuf_submitted(VkCommandBuffer cb);
void gzc_cmdbuf_freed(VkCommandBuffer cb);
void gzc_cmdbufs_pool_destroyed(VkCommandPool pool);
void gzc_cmdbufs_device_destroyed(const void *device_key);

#endif
