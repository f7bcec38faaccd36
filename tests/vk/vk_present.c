/* Frames on a real swapchain: an XCB window (on the Xvfb server the test
 * starts), lavapipe's swapchain, N frames of acquire → clear → submit →
 * present. For each frame it prints what the CPU knows of it, for
 * run_present.py to hold the trace's frame zones against:
 *
 *   frame <i> <submit_ns> <present_ns> <done_ns>
 *
 * submit_ns: just before vkQueueSubmit; present_ns: after vkQueuePresentKHR
 * returned; done_ns: after the frame's fence wait returned (the frame's GPU
 * work ended before it). CLOCK_MONOTONIC. */
#define VK_USE_PLATFORM_XCB_KHR /* before any Vulkan header */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xcb/xcb.h>

#include "gz_vk_min.h"

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 20;
    uint32_t clears = argc > 2 ? (uint32_t)atoi(argv[2]) : 4; /* GPU work per frame */

    xcb_connection_t *conn = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(conn)) {
        fprintf(stderr, "vk_present: no X server (DISPLAY)\n");
        return 77;
    }
    xcb_screen_t *screen = xcb_setup_roots_iterator(xcb_get_setup(conn)).data;
    xcb_window_t window = xcb_generate_id(conn);
    xcb_create_window(conn, XCB_COPY_FROM_PARENT, window, screen->root, 0, 0, 256, 256, 0,
                      XCB_WINDOW_CLASS_INPUT_OUTPUT, screen->root_visual, 0, NULL);
    xcb_map_window(conn, window);
    xcb_flush(conn);

    const char *inst_exts[] = {VK_KHR_SURFACE_EXTENSION_NAME, VK_KHR_XCB_SURFACE_EXTENSION_NAME};
    gz_min_vk v = {0};
    if (!gz_min_vk_instance(&v, "gz-test-vk-present", VK_API_VERSION_1_2, 2, inst_exts))
        return 77;
    VkInstance instance = v.instance;
    VkPhysicalDevice gpu = v.gpu;
    VkSurfaceKHR surface;
    GZ_VK_CHECK(vkCreateXcbSurfaceKHR(
        instance,
        &(VkXcbSurfaceCreateInfoKHR){.sType = VK_STRUCTURE_TYPE_XCB_SURFACE_CREATE_INFO_KHR,
                                     .connection = conn,
                                     .window = window},
        NULL, &surface));

    VkBool32 can_present = VK_FALSE;
    GZ_VK_CHECK(vkGetPhysicalDeviceSurfaceSupportKHR(gpu, 0, surface, &can_present));
    if (!can_present) {
        fprintf(stderr, "vk_present: queue family 0 cannot present\n");
        return 77;
    }
    const char *dev_exts[] = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
    gz_min_vk_device(&v, 1, dev_exts);
    VkDevice device = v.device;
    VkQueue queue = v.queue;

    VkSurfaceCapabilitiesKHR caps;
    GZ_VK_CHECK(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(gpu, surface, &caps));
    uint32_t nformats = 1;
    VkSurfaceFormatKHR format;
    VkResult er = vkGetPhysicalDeviceSurfaceFormatsKHR(gpu, surface, &nformats, &format);
    if (er != VK_SUCCESS && er != VK_INCOMPLETE) {
        fprintf(stderr, "vk_present: no surface format\n");
        return 1;
    }
    VkExtent2D extent = caps.currentExtent.width == UINT32_MAX ? (VkExtent2D){256, 256}
                                                              : caps.currentExtent;
    VkSwapchainKHR swapchain;
    GZ_VK_CHECK(vkCreateSwapchainKHR(
        device,
        &(VkSwapchainCreateInfoKHR){
            .sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR,
            .surface = surface,
            .minImageCount = caps.minImageCount,
            .imageFormat = format.format,
            .imageColorSpace = format.colorSpace,
            .imageExtent = extent,
            .imageArrayLayers = 1,
            .imageUsage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
            .imageSharingMode = VK_SHARING_MODE_EXCLUSIVE,
            .preTransform = caps.currentTransform,
            .compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR,
            .presentMode = VK_PRESENT_MODE_FIFO_KHR,
            .clipped = VK_TRUE},
        NULL, &swapchain));
    uint32_t nimages = 0;
    GZ_VK_CHECK(vkGetSwapchainImagesKHR(device, swapchain, &nimages, NULL));
    VkImage *images = calloc(nimages, sizeof *images);
    GZ_VK_CHECK(vkGetSwapchainImagesKHR(device, swapchain, &nimages, images));

    VkCommandPool pool;
    GZ_VK_CHECK(vkCreateCommandPool(
        device,
        &(VkCommandPoolCreateInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT},
        NULL, &pool));
    VkCommandBuffer cb;
    GZ_VK_CHECK(vkAllocateCommandBuffers(
        device,
        &(VkCommandBufferAllocateInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1},
        &cb));
    VkSemaphore acquired, rendered;
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    GZ_VK_CHECK(vkCreateSemaphore(device, &sci, NULL, &acquired));
    GZ_VK_CHECK(vkCreateSemaphore(device, &sci, NULL, &rendered));
    VkFence fence;
    GZ_VK_CHECK(vkCreateFence(device, &(VkFenceCreateInfo){.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO},
                        NULL, &fence));

    const VkImageSubresourceRange range = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    for (int f = 0; f < frames; f++) {
        uint32_t index;
        VkResult ar = vkAcquireNextImageKHR(device, swapchain, UINT64_MAX, acquired,
                                            VK_NULL_HANDLE, &index);
        if (ar != VK_SUCCESS && ar != VK_SUBOPTIMAL_KHR) {
            fprintf(stderr, "vk_present: vkAcquireNextImageKHR: %d\n", ar);
            return 1;
        }
        GZ_VK_CHECK(vkBeginCommandBuffer(
            cb, &(VkCommandBufferBeginInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                            .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT}));
        VkImageMemoryBarrier to_dst = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                                       .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                       .oldLayout = VK_IMAGE_LAYOUT_UNDEFINED,
                                       .newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                       .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                       .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                       .image = images[index],
                                       .subresourceRange = range};
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                             0, 0, NULL, 0, NULL, 1, &to_dst);
        for (uint32_t k = 0; k < clears; k++) {
            VkClearColorValue color = {.float32 = {(float)(f % 7) / 7.0f, (float)k / 8.0f, 0.5f, 1}};
            vkCmdClearColorImage(cb, images[index], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &color, 1,
                                 &range);
        }
        VkImageMemoryBarrier to_present = to_dst;
        to_present.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        to_present.dstAccessMask = 0;
        to_present.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        to_present.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, NULL, 0, NULL, 1,
                             &to_present);
        GZ_VK_CHECK(vkEndCommandBuffer(cb));

        VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
        uint64_t submit_ns = gz_min_now_ns();
        GZ_VK_CHECK(vkQueueSubmit(queue, 1,
                            &(VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                            .waitSemaphoreCount = 1,
                                            .pWaitSemaphores = &acquired,
                                            .pWaitDstStageMask = &wait_stage,
                                            .commandBufferCount = 1,
                                            .pCommandBuffers = &cb,
                                            .signalSemaphoreCount = 1,
                                            .pSignalSemaphores = &rendered},
                            fence));
        VkResult pr = vkQueuePresentKHR(queue,
                                        &(VkPresentInfoKHR){.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR,
                                                            .waitSemaphoreCount = 1,
                                                            .pWaitSemaphores = &rendered,
                                                            .swapchainCount = 1,
                                                            .pSwapchains = &swapchain,
                                                            .pImageIndices = &index});
        uint64_t present_ns = gz_min_now_ns();
        if (pr != VK_SUCCESS && pr != VK_SUBOPTIMAL_KHR) {
            fprintf(stderr, "vk_present: vkQueuePresentKHR: %d\n", pr);
            return 1;
        }
        GZ_VK_CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
        uint64_t done_ns = gz_min_now_ns();
        GZ_VK_CHECK(vkResetFences(device, 1, &fence));
        printf("frame %d %llu %llu %llu\n", f, (unsigned long long)submit_ns,
               (unsigned long long)present_ns, (unsigned long long)done_ns);
    }
    GZ_VK_CHECK(vkDeviceWaitIdle(device));
    vkDestroyFence(device, fence, NULL);
    vkDestroySemaphore(device, acquired, NULL);
    vkDestroySemaphore(device, rendered, NULL);
    vkDestroyCommandPool(device, pool, NULL);
    vkDestroySwapchainKHR(device, swapchain, NULL);
    vkDestroySurfaceKHR(instance, surface, NULL);
    gz_min_vk_close(&v);
    free(images);
    xcb_destroy_window(conn, window);
    xcb_disconnect(conn);
    return 0;
}
