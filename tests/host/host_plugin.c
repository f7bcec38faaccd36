/* A plugin that times its own Vulkan work with the public TracyVk* API
 * (include/gpuzones/vulkan.h), as a renderer loaded into a host
 * application does: it makes an instance and a device, a context, a few
 * frames with a zone and a collect each, and destroys all of it before the
 * host unloads it. Built twice: with GPUZONES_ENABLE (linked with
 * libgpuzones) and without (the macros are nothing), for the run without
 * gpuzones. */
#include <gpuzones/vulkan.h>

#include "host_vk.h"

int plugin_run(int frames);

__attribute__((visibility("default"))) int plugin_run(int frames)
{
    host_vk v = {0};
    host_vk_instance(&v, VK_API_VERSION_1_3);
    host_vk_device(&v);
    VkCommandBuffer init;
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = v.pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    HOST_CHECK(vkAllocateCommandBuffers(v.device, &cai, &init));
    TracyVkCtx ctx = TracyVkContext(v.gpu, v.device, v.queue, init);
    (void)ctx;
    TracyVkContextName(ctx, "plugin", 6);
    for (int f = 0; f <= frames; f++) {
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        HOST_CHECK(vkBeginCommandBuffer(v.cmd, &bi));
        if (f < frames) {
            TracyVkZone(ctx, v.cmd, "plugin frame");
            vkCmdFillBuffer(v.cmd, v.buf, 0, VK_WHOLE_SIZE, (uint32_t)f);
        }
        TracyVkCollect(ctx, v.cmd); /* the last frame only reads the one before */
        HOST_CHECK(vkEndCommandBuffer(v.cmd));
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &v.cmd};
        HOST_CHECK(vkQueueSubmit(v.queue, 1, &si, v.fence));
        HOST_CHECK(vkWaitForFences(v.device, 1, &v.fence, VK_TRUE, UINT64_MAX));
        HOST_CHECK(vkResetFences(v.device, 1, &v.fence));
    }
    TracyVkDestroy(ctx);
    host_vk_close(&v);
    return frames;
}
