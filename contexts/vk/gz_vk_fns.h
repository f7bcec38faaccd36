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
 * explicit context needs it: none is made without it) and GZ_VK_FN_BY_HAND
 * (no loading loop loads it: its name depends on the extension or version
 * the device has, so the device code picks it).
 *
 * A function of an extension or of a later core version may be absent: the
 * layer hands out a hook only where the next layer has its function, so no
 * hook calls a NULL pointer. */

/* Timestamps and their results. */
GZ_VK_FN(CreateQueryPool, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(DestroyQueryPool, GZ_VK_FN_EXPLICIT)
GZ_VK_HOOK(CmdCopyQueryPoolResults, GZ_VK_FN_EXPLICIT)
GZ_VK_HOOK(CmdPipelineBarrier, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(CreateBuffer, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(DestroyBuffer, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(GetBufferMemoryRequirements, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(AllocateMemory, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(FreeMemory, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(BindBufferMemory, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(MapMemory, GZ_VK_FN_EXPLICIT)
GZ_VK_FN(UnmapMemory, GZ_VK_FN_EXPLICIT)
GZ_VK_HOOK(CmdWriteTimestamp, GZ_VK_FN_EXPLICIT)
GZ_VK_HOOK(CmdResetQueryPool, GZ_VK_FN_EXPLICIT)
GZ_VK_HOOK(CmdFillBuffer, GZ_VK_FN_EXPLICIT)
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
GZ_VK_HOOK(CreateCommandPool, 0)
GZ_VK_HOOK(DestroyCommandPool, 0)
GZ_VK_HOOK(ResetCommandPool, 0)
GZ_VK_HOOK(AllocateCommandBuffers, 0)
GZ_VK_HOOK(FreeCommandBuffers, 0)
GZ_VK_HOOK(BeginCommandBuffer, GZ_VK_FN_EXPLICIT)
GZ_VK_HOOK(EndCommandBuffer, GZ_VK_FN_EXPLICIT)
GZ_VK_HOOK(ResetCommandBuffer, 0)
GZ_VK_HOOK(CmdExecuteCommands, 0)
/* Render passes: where a timestamp may go (suspended dynamic rendering,
 * multiview subpasses). */
GZ_VK_HOOK(CreateRenderPass, 0)
GZ_VK_HOOK(CreateRenderPass2, 0)
GZ_VK_HOOK(CreateRenderPass2KHR, 0)
GZ_VK_HOOK(DestroyRenderPass, 0)
GZ_VK_HOOK(CmdBeginRenderPass, 0)
GZ_VK_HOOK(CmdBeginRenderPass2, 0)
GZ_VK_HOOK(CmdBeginRenderPass2KHR, 0)
GZ_VK_HOOK(CmdNextSubpass, 0)
GZ_VK_HOOK(CmdNextSubpass2, 0)
GZ_VK_HOOK(CmdNextSubpass2KHR, 0)
GZ_VK_HOOK(CmdEndRenderPass, 0)
GZ_VK_HOOK(CmdEndRenderPass2, 0)
GZ_VK_HOOK(CmdEndRenderPass2KHR, 0)
GZ_VK_HOOK(CmdBeginRendering, 0)
GZ_VK_HOOK(CmdBeginRenderingKHR, 0)
GZ_VK_HOOK(CmdEndRendering, 0)
GZ_VK_HOOK(CmdEndRenderingKHR, 0)
/* Action and synchronization commands: a command buffer's begin timestamp
 * goes just before the first of them (layer/vulkan/actions.c). */
GZ_VK_HOOK(CmdDraw, 0)
GZ_VK_HOOK(CmdDrawIndexed, 0)
GZ_VK_HOOK(CmdDrawIndirect, 0)
GZ_VK_HOOK(CmdDrawIndexedIndirect, 0)
GZ_VK_HOOK(CmdDrawIndirectCount, 0)
GZ_VK_HOOK(CmdDrawIndexedIndirectCount, 0)
GZ_VK_HOOK(CmdDispatch, 0)
GZ_VK_HOOK(CmdDispatchIndirect, 0)
GZ_VK_HOOK(CmdDispatchBase, 0)
GZ_VK_HOOK(CmdCopyBuffer, 0)
GZ_VK_HOOK(CmdCopyImage, 0)
GZ_VK_HOOK(CmdBlitImage, 0)
GZ_VK_HOOK(CmdCopyBufferToImage, 0)
GZ_VK_HOOK(CmdCopyImageToBuffer, 0)
GZ_VK_HOOK(CmdUpdateBuffer, 0)
GZ_VK_HOOK(CmdClearColorImage, 0)
GZ_VK_HOOK(CmdClearDepthStencilImage, 0)
GZ_VK_HOOK(CmdClearAttachments, 0)
GZ_VK_HOOK(CmdResolveImage, 0)
GZ_VK_HOOK(CmdCopyBuffer2, 0)
GZ_VK_HOOK(CmdCopyImage2, 0)
GZ_VK_HOOK(CmdBlitImage2, 0)
GZ_VK_HOOK(CmdCopyBufferToImage2, 0)
GZ_VK_HOOK(CmdCopyImageToBuffer2, 0)
GZ_VK_HOOK(CmdResolveImage2, 0)
GZ_VK_HOOK(CmdPipelineBarrier2, 0)
GZ_VK_HOOK(CmdPipelineBarrier2KHR, 0)
GZ_VK_HOOK(CmdWaitEvents, 0)
GZ_VK_HOOK(CmdWaitEvents2, 0)
GZ_VK_HOOK(CmdSetEvent, 0)
GZ_VK_HOOK(CmdSetEvent2, 0)
GZ_VK_HOOK(CmdResetEvent, 0)
GZ_VK_HOOK(CmdResetEvent2, 0)
GZ_VK_HOOK(CmdBeginQuery, 0)
GZ_VK_HOOK(CmdEndQuery, 0)
GZ_VK_HOOK(CmdWriteTimestamp2, 0)
/* Labels and names (VK_EXT_debug_utils, VK_EXT_debug_marker). */
GZ_VK_HOOK(CmdBeginDebugUtilsLabelEXT, 0)
GZ_VK_HOOK(CmdEndDebugUtilsLabelEXT, 0)
GZ_VK_HOOK(CmdDebugMarkerBeginEXT, 0)
GZ_VK_HOOK(CmdDebugMarkerEndEXT, 0)
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
