/* Vulkan set-up for the API test programs: plain libvulkan, lavapipe. */
#include "api_vk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(expr) check((expr), #expr, __LINE__)

static void check(VkResult r, const char *what, int line)
{
    if (r != VK_SUCCESS) {
        fprintf(stderr, "api test: line %d: %s returned %d\n", line, what, (int)r);
        exit(2);
    }
}

uint64_t api_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void buffer(api_gpu *g, VkBufferUsageFlags usage, VkBuffer *b, VkDeviceMemory *m)
{
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = g->size,
                              .usage = usage,
                              .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    CHECK(vkCreateBuffer(g->device, &bci, NULL, b));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(g->device, *b, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(g->pd, &mp);
    uint32_t type = 0;
    while (type < mp.memoryTypeCount && !(req.memoryTypeBits & (1u << type)))
        type++;
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = type};
    CHECK(vkAllocateMemory(g->device, &mai, NULL, m));
    CHECK(vkBindBufferMemory(g->device, *b, *m, 0));
}

void api_gpu_init(api_gpu *g, uint32_t mb)
{
    memset(g, 0, sizeof *g);
    g->size = (VkDeviceSize)mb << 20;
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app};
    CHECK(vkCreateInstance(&ici, NULL, &g->instance));
    uint32_t n = 1;
    VkResult r = vkEnumeratePhysicalDevices(g->instance, &n, &g->pd);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || !n)
        CHECK(VK_ERROR_INITIALIZATION_FAILED);
    /* Calibrated timestamps and host query reset when the device has them,
     * for the calibrated and host-calibrated contexts. */
    uint32_t next = 0;
    vkEnumerateDeviceExtensionProperties(g->pd, NULL, &next, NULL);
    VkExtensionProperties *exts = calloc(next ? next : 1, sizeof *exts);
    vkEnumerateDeviceExtensionProperties(g->pd, NULL, &next, exts);
    for (uint32_t i = 0; i < next; i++)
        g->calibrated |= !strcmp(exts[i].extensionName, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
    free(exts);
    const char *ext_names[] = {VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME};
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &f12};
    vkGetPhysicalDeviceFeatures2(g->pd, &f2);
    g->host_query_reset = f12.hostQueryReset;
    VkPhysicalDeviceVulkan12Features enable12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .hostQueryReset = f12.hostQueryReset};
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = 0,
                                   .queueCount = 1,
                                   .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = &enable12,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = g->calibrated ? 1 : 0,
                              .ppEnabledExtensionNames = ext_names};
    CHECK(vkCreateDevice(g->pd, &dci, NULL, &g->device));
    vkGetDeviceQueue(g->device, 0, 0, &g->queue);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = 0};
    CHECK(vkCreateCommandPool(g->device, &pci, NULL, &g->pool));
    VkCommandBuffer cbs[2];
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = g->pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 2};
    CHECK(vkAllocateCommandBuffers(g->device, &cai, cbs));
    g->cb = cbs[0];
    g->init_cb = cbs[1];
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    CHECK(vkCreateFence(g->device, &fci, NULL, &g->fence));
    buffer(g, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, &g->src,
           &g->src_mem);
    buffer(g, VK_BUFFER_USAGE_TRANSFER_DST_BIT, &g->dst, &g->dst_mem);
}

void api_gpu_destroy(api_gpu *g)
{
    vkDestroyBuffer(g->device, g->src, NULL);
    vkDestroyBuffer(g->device, g->dst, NULL);
    vkFreeMemory(g->device, g->src_mem, NULL);
    vkFreeMemory(g->device, g->dst_mem, NULL);
    vkDestroyFence(g->device, g->fence, NULL);
    vkDestroyCommandPool(g->device, g->pool, NULL);
    vkDestroyDevice(g->device, NULL);
    vkDestroyInstance(g->instance, NULL);
}

void api_begin(api_gpu *g)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    CHECK(vkBeginCommandBuffer(g->cb, &bi));
}

void api_submit_wait(api_gpu *g, uint64_t *t0, uint64_t *t1)
{
    CHECK(vkEndCommandBuffer(g->cb));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &g->cb};
    *t0 = api_now_ns();
    CHECK(vkQueueSubmit(g->queue, 1, &si, g->fence));
    CHECK(vkWaitForFences(g->device, 1, &g->fence, VK_TRUE, UINT64_MAX));
    *t1 = api_now_ns();
    CHECK(vkResetFences(g->device, 1, &g->fence));
}

void api_fill(api_gpu *g, uint32_t value)
{
    vkCmdFillBuffer(g->cb, g->src, 0, g->size, value);
}

void api_barrier(api_gpu *g)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    vkCmdPipelineBarrier(g->cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                         1, &mb, 0, NULL, 0, NULL);
}

void api_copy(api_gpu *g)
{
    VkBufferCopy region = {0, 0, g->size};
    vkCmdCopyBuffer(g->cb, g->src, g->dst, 1, &region);
}

void api_thread_cb(api_gpu *g, VkCommandPool *pool, VkCommandBuffer *cb)
{
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .queueFamilyIndex = 0};
    CHECK(vkCreateCommandPool(g->device, &pci, NULL, pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = *pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    CHECK(vkAllocateCommandBuffers(g->device, &cai, cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(*cb, &bi));
}

void api_fill_cb(api_gpu *g, VkCommandBuffer cb, uint32_t value)
{
    vkCmdFillBuffer(cb, g->dst, 0, 1 << 16, value);
}

void api_submit_all(api_gpu *g, const VkCommandBuffer *cbs, uint32_t n)
{
    VkCommandBuffer all[17];
    for (uint32_t i = 0; i < n && i < 16; i++) {
        CHECK(vkEndCommandBuffer(cbs[i]));
        all[i] = cbs[i];
    }
    CHECK(vkEndCommandBuffer(g->cb));
    all[n < 16 ? n : 16] = g->cb;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = (n < 16 ? n : 16) + 1,
                       .pCommandBuffers = all};
    CHECK(vkQueueSubmit(g->queue, 1, &si, g->fence));
    CHECK(vkWaitForFences(g->device, 1, &g->fence, VK_TRUE, UINT64_MAX));
    CHECK(vkResetFences(g->device, 1, &g->fence));
}
