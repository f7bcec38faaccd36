/* The one list of the Vulkan device functions gpuzones calls below itself:
 * the device contexts (through gz_vk_fns), the explicit TracyVk* contexts,
 * and the layer, which passes its hooks' calls down with them. From it come
 * the gz_vk_fns structure (gz_vk.h), the loading loops of the layer and of
 * the explicit contexts, and the layer's table of hooks (layer.c).
 *
 * An X-macro list without include guard: the includer defines both
 *   GZ_VK_FN(name, use)    a function gpuzones calls
 *   GZ_VK_HOOK(name, use)  one the layer also intercepts: its hook is
 *                          gz_hook_<name>, of the type PFN_vk<name>
 * and this file undefines them. use is a mask of GZ_VK_FN_EXPLICIT (an
 * explicit context needs it: none is made without it), GZ_VK_FN_BY_HAND
 * (no loading loop loads it: its name depends on the extension or version
 * the device has, so the device code picks it) and GZ_VK_FN_RECORDING (a
 * hook on the app's recording, handed out only where recordings are timed).
 *
 * A function of an extension or of a later core version may be absent: the
 * layer hands out a hook only where the next layer has its function, so no
 * hook calls a NULL pointer. */

/* Timestamps and their results. */
GZ_VK_FN(CreateQueryPool, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(DestroyQueryPool, GZ_VK_FN_EXPLICIT)
GZ_VK_HOOK(CmdCopyQueryPoolResults, GZ_VK_FN_EXPLICIT | GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdPipelineBarrier, GZ_VK_FN_EXPLICIT | GZ_VK_FN_RECORDING)
GZ_VK_FN(CreateBuffer, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(DestroyBuffer, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(GetBufferMemoryRequirements, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(AllocateMemory, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(FreeMemory, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(BindBufferMemory, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(MapMemory, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(UnmapMemory, GZ_VK_FN_EXPLICIT)
GZ_VK_HOOK(CmdWriteTimestamp, GZ_VK_FN_EXPLICIT | GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdResetQueryPool, GZ_VK_FN_EXPLICIT | GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdFillBuffer, GZ_VK_FN_EXPLICIT | GZ_VK_FN_RECORDING)
/* Optional: host query reset (vkResetQueryPool or ...EXT), calibrated
 * timestamps (...EXT or ...KHR) and timeline semaphores (core 1.2 or
 * ...KHR). */
GZ_VK_FN(ResetQueryPool, GZ_VK_FN_BY_HAND)
GZ_VK_FN(GetCalibratedTimestampsEXT, GZ_VK_FN_BY_HAND)
GZ_VK_FN(GetSemaphoreCounterValue, GZ_VK_FN_BY_HAND)
GZ_VK_FN(CreateSemaphore, 0)
GZ_VK_FN(DestroySemaphore, 0)
/* Host reads of results. */
GZ_VK_FN(GetQueryPoolResults, 0)
/* Sync points, for devices without calibrated timestamps. */
GZ_VK_FN(CreateEvent, 0)
GZ_VK_FN(DestroyEvent, 0)
GZ_VK_FN(ResetEvent, 0)
GZ_VK_FN(GetEventStatus, 0)
GZ_VK_FN(SetEvent, 0)
GZ_VK_FN(CreateFence, 0)
GZ_VK_FN(DestroyFence, 0)
GZ_VK_FN(ResetFences, 0)
GZ_VK_FN(GetFenceStatus, 0)

/* The device and its queues. */
GZ_VK_HOOK(DestroyDevice, 0)
GZ_VK_HOOK(GetDeviceQueue, 0)
GZ_VK_HOOK(GetDeviceQueue2, 0)
/* Command pools and buffers. */
GZ_VK_HOOK(CreateCommandPool, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(DestroyCommandPool, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(ResetCommandPool, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(AllocateCommandBuffers, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(FreeCommandBuffers, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(BeginCommandBuffer, GZ_VK_FN_EXPLICIT | GZ_VK_FN_RECORDING)
GZ_VK_HOOK(EndCommandBuffer, GZ_VK_FN_EXPLICIT | GZ_VK_FN_RECORDING)
GZ_VK_HOOK(ResetCommandBuffer, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdExecuteCommands, GZ_VK_FN_RECORDING)
/* Render passes: where a timestamp may go (suspended dynamic rendering,
 * multiview subpasses). */
GZ_VK_HOOK(CreateRenderPass, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CreateRenderPass2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CreateRenderPass2KHR, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(DestroyRenderPass, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CreateImageView, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(DestroyImageView, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(DestroyFramebuffer, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(DestroyPipeline, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdBindPipeline, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdBeginRenderPass, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdBeginRenderPass2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdBeginRenderPass2KHR, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdNextSubpass, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdNextSubpass2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdNextSubpass2KHR, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdEndRenderPass, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdEndRenderPass2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdEndRenderPass2KHR, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdBeginRendering, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdBeginRenderingKHR, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdEndRendering, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdEndRenderingKHR, GZ_VK_FN_RECORDING)
/* Action and synchronization commands: a command buffer's begin timestamp
 * goes just before the first of them (layer/vulkan/actions.c). */
GZ_VK_HOOK(CmdDraw, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdDrawIndexed, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdDrawIndirect, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdDrawIndexedIndirect, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdDrawIndirectCount, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdDrawIndexedIndirectCount, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdDispatch, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdDispatchIndirect, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdDispatchBase, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdCopyBuffer, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdCopyImage, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdBlitImage, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdCopyBufferToImage, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdCopyImageToBuffer, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdUpdateBuffer, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdClearColorImage, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdClearDepthStencilImage, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdClearAttachments, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdResolveImage, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdCopyBuffer2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdCopyImage2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdBlitImage2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdCopyBufferToImage2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdCopyImageToBuffer2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdResolveImage2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdPipelineBarrier2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdPipelineBarrier2KHR, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdWaitEvents, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdWaitEvents2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdSetEvent, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdSetEvent2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdResetEvent, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdResetEvent2, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdBeginQuery, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdEndQuery, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdWriteTimestamp2, GZ_VK_FN_RECORDING)
/* Labels and names (VK_EXT_debug_utils, VK_EXT_debug_marker). */
GZ_VK_HOOK(CmdBeginDebugUtilsLabelEXT, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdEndDebugUtilsLabelEXT, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdDebugMarkerBeginEXT, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(CmdDebugMarkerEndEXT, GZ_VK_FN_RECORDING)
GZ_VK_HOOK(QueueBeginDebugUtilsLabelEXT, 0)
GZ_VK_HOOK(QueueEndDebugUtilsLabelEXT, 0)
GZ_VK_HOOK(SetDebugUtilsObjectNameEXT, 0)
GZ_VK_HOOK(DebugMarkerSetObjectNameEXT, 0)
/* Submissions, presents and waits. */
GZ_VK_HOOK(QueueSubmit, GZ_VK_FN_EXPLICIT)
GZ_VK_HOOK(QueueSubmit2, 0)
GZ_VK_HOOK(QueueSubmit2KHR, 0)
GZ_VK_HOOK(QueuePresentKHR, 0)
GZ_VK_HOOK(WaitForFences, 0)
GZ_VK_HOOK(QueueWaitIdle, GZ_VK_FN_EXPLICIT)
GZ_VK_HOOK(DeviceWaitIdle, 0)

#undef GZ_VK_FN
#undef GZ_VK_HOOK
