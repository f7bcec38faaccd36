/* gz-sample-vk-volk: Vulkan loaded through volk (no libvulkan at link
 * time), timed with gpuzones' TracyVk… macros.
 *
 * Each frame one command buffer fills a buffer and copies it to a
 * host-visible one inside nested zones ("Frame" > "Fill", "Copy" >
 * "Copy half"), then collects (TracyVkCollect, outside any render pass).
 * The context is calibrated when the device offers
 * VK_EXT_calibrated_timestamps. The host checks the copied data and exits
 * non-zero when it is wrong.
 *
 * It prints one line per frame, "frame N submit_ns done_ns", the host
 * times around the frame's submission and wait, for tests to compare.
 *
 *   gz-sample-vk-volk [--frames N] [--mb N]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <volk.h>

#include "gpuzones/gpuzones.h"
#include "gpuzones/vulkan.h"

#define CHECK(expr) check((expr), #expr, __LINE__)

static void check(VkResult r, const char *what, int line)
{
    if (r != VK_SUCCESS) {
        fprintf(stderr, "gz-sample-vk-volk: line %d: %s returned %d\n", line, what, (int)r);
        exit(2);
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct gpu {
    VkInstance instance;
    VkPhysicalDevice pd;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    bool calibrated;
    VkPhysicalDeviceMemoryProperties mem;
} gpu;

static bool has_extension(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL);
    VkExtensionProperties *p = calloc(n ? n : 1, sizeof *p);
    vkEnumerateDeviceExtensionProperties(pd, NULL, &n, p);
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++)
        found = !strcmp(p[i].extensionName, name);
    free(p);
    return found;
}

static void gpu_init(gpu *g)
{
    CHECK(volkInitialize());
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "gz-sample-vk-volk",
                             .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app};
    CHECK(vkCreateInstance(&ici, NULL, &g->instance));
    volkLoadInstanceOnly(g->instance);
    uint32_t n = 1;
    VkResult r = vkEnumeratePhysicalDevices(g->instance, &n, &g->pd);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || !n) {
        fprintf(stderr, "gz-sample-vk-volk: no Vulkan device\n");
        exit(2);
    }
    VkQueueFamilyProperties fams[16];
    uint32_t nf = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(g->pd, &nf, fams);
    g->family = UINT32_MAX;
    for (uint32_t i = 0; i < nf && g->family == UINT32_MAX; i++)
        if (fams[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT))
            g->family = i;
    if (g->family == UINT32_MAX) {
        fprintf(stderr, "gz-sample-vk-volk: no graphics or compute queue\n");
        exit(2);
    }
    g->calibrated = has_extension(g->pd, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
    const char *exts[] = {VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME};
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = g->family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = g->calibrated ? 1 : 0,
                              .ppEnabledExtensionNames = exts};
    CHECK(vkCreateDevice(g->pd, &dci, NULL, &g->device));
    volkLoadDevice(g->device);
    vkGetDeviceQueue(g->device, g->family, 0, &g->queue);
    vkGetPhysicalDeviceMemoryProperties(g->pd, &g->mem);
}

typedef struct buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *mapped;
} buffer;

static buffer buffer_new(const gpu *g, VkDeviceSize size, VkBufferUsageFlags usage, bool host)
{
    buffer b = {0};
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = size,
                              .usage = usage,
                              .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    CHECK(vkCreateBuffer(g->device, &bci, NULL, &b.buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(g->device, b.buffer, &req);
    VkMemoryPropertyFlags want = host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                            VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                      : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < g->mem.memoryTypeCount && type == UINT32_MAX; i++)
        if ((req.memoryTypeBits & (1u << i)) &&
            (g->mem.memoryTypes[i].propertyFlags & want) == want)
            type = i;
    if (type == UINT32_MAX) {
        fprintf(stderr, "gz-sample-vk-volk: no suitable memory type\n");
        exit(2);
    }
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = type};
    CHECK(vkAllocateMemory(g->device, &mai, NULL, &b.memory));
    CHECK(vkBindBufferMemory(g->device, b.buffer, b.memory, 0));
    if (host)
        CHECK(vkMapMemory(g->device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
    return b;
}

static void buffer_free(const gpu *g, buffer *b)
{
    vkDestroyBuffer(g->device, b->buffer, NULL);
    vkFreeMemory(g->device, b->memory, NULL);
}

static void transfer_barrier(VkCommandBuffer cb)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT |
                                           VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb,
                         0, NULL, 0, NULL);
}

/* One frame's work, zones nested as the trace should show them. */
static void record_frame(TracyVkCtx ctx, VkCommandBuffer cb, const buffer *src, const buffer *dst,
                         VkDeviceSize size, uint32_t value)
{
    TracyVkZoneC(ctx, cb, "Frame", 0x3366ff);
    {
        TracyVkZone(ctx, cb, "Fill");
        vkCmdFillBuffer(cb, src->buffer, 0, size, value);
    }
    transfer_barrier(cb);
    {
        TracyVkNamedZone(ctx, copy_zone, cb, "Copy", 1);
        VkBufferCopy whole = {.size = size / 2};
        {
            TracyVkZoneC(ctx, cb, "Copy half", 0xcc3300);
            vkCmdCopyBuffer(cb, src->buffer, dst->buffer, 1, &whole);
        }
        VkBufferCopy rest = {.srcOffset = size / 2, .dstOffset = size / 2, .size = size - size / 2};
        vkCmdCopyBuffer(cb, src->buffer, dst->buffer, 1, &rest);
    }
    transfer_barrier(cb);
}

int main(int argc, char **argv)
{
    unsigned frames = 8, mb = 32;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--frames"))
            frames = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--mb"))
            mb = (unsigned)atoi(argv[i + 1]);
    }
    gpu g = {0};
    gpu_init(&g);
    VkDeviceSize size = (VkDeviceSize)mb << 20;
    buffer src = buffer_new(&g, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, false);
    buffer dst = buffer_new(&g, size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);

    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = g.family};
    VkCommandPool pool;
    CHECK(vkCreateCommandPool(g.device, &pci, NULL, &pool));
    VkCommandBuffer cb;
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    CHECK(vkAllocateCommandBuffers(g.device, &cai, &cb));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(g.device, &fci, NULL, &fence));

    /* volk's function pointers are NULL where the extension is missing:
     * the context then says so and falls back to a sync point. */
    TracyVkCtx ctx = TracyVkContextCalibrated(g.pd, g.device, g.queue, cb,
                                              vkGetPhysicalDeviceCalibrateableTimeDomainsEXT,
                                              vkGetCalibratedTimestampsEXT);
    TracyVkContextName(ctx, "volk sample", strlen("volk sample"));

    int bad = 0;
    for (unsigned f = 0; f < frames; f++) {
        uint32_t value = 0x01010101u * (f + 1);
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        CHECK(vkBeginCommandBuffer(cb, &bi));
        record_frame(ctx, cb, &src, &dst, size, value);
        TracyVkCollect(ctx, cb);
        CHECK(vkEndCommandBuffer(cb));
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cb};
        uint64_t t0 = now_ns();
        CHECK(vkQueueSubmit(g.queue, 1, &si, fence));
        CHECK(vkWaitForFences(g.device, 1, &fence, VK_TRUE, UINT64_MAX));
        uint64_t t1 = now_ns();
        CHECK(vkResetFences(g.device, 1, &fence));
        printf("frame %u %llu %llu\n", f, (unsigned long long)t0, (unsigned long long)t1);
        FrameMark;
        const uint32_t *words = dst.mapped;
        size_t nwords = (size_t)(size / 4);
        if (words[0] != value || words[nwords / 2] != value || words[nwords - 1] != value)
            bad = 1;
    }
    /* One more collect so the last frame's zones are copied too. */
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(cb, &bi));
    TracyVkCollect(ctx, cb);
    CHECK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cb};
    CHECK(vkQueueSubmit(g.queue, 1, &si, VK_NULL_HANDLE));
    CHECK(vkQueueWaitIdle(g.queue));
    TracyVkCollectHost(ctx);
    TracyVkDestroy(ctx);

    vkDestroyFence(g.device, fence, NULL);
    vkDestroyCommandPool(g.device, pool, NULL);
    buffer_free(&g, &src);
    buffer_free(&g, &dst);
    vkDestroyDevice(g.device, NULL);
    vkDestroyInstance(g.instance, NULL);
    if (bad)
        fprintf(stderr, "gz-sample-vk-volk: the copied data is wrong\n");
    return bad;
}
