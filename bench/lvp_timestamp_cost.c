/* What one timestamp costs the driver, with no layer at all: N submissions
 * of an empty command buffer against N submissions of the same plus one
 * command buffer that writes a timestamp, each waited with a fence,
 * alternating in blocks so both see the same machine load. On lavapipe this
 * is the floor under any timestamp-based GPU timing (llvmpipe hands every
 * timestamp query to its rasterizer threads).
 *
 *   gz-bench-timestamp-cost [submissions per block] [blocks]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <vulkan/vulkan.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        VkResult r_ = (x);                                                                         \
        if (r_ != VK_SUCCESS) {                                                                    \
            fprintf(stderr, "%s failed: %d\n", #x, r_);                                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int per_block = argc > 1 ? atoi(argv[1]) : 200;
    int blocks = argc > 2 ? atoi(argv[2]) : 9;
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app};
    VkInstance inst;
    CHECK(vkCreateInstance(&ici, NULL, &inst));
    uint32_t n = 1;
    VkPhysicalDevice pd;
    vkEnumeratePhysicalDevices(inst, &n, &pd);
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    float prio = 1;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueCount = 1,
                                   .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci};
    VkDevice dev;
    CHECK(vkCreateDevice(pd, &dci, NULL, &dev));
    VkQueue q;
    vkGetDeviceQueue(dev, 0, 0, &q);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    VkCommandPool pool;
    CHECK(vkCreateCommandPool(dev, &pci, NULL, &pool));
    VkQueryPoolCreateInfo qpci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                  .queryCount = 1};
    VkQueryPool qp;
    CHECK(vkCreateQueryPool(dev, &qpci, NULL, &qp));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .commandBufferCount = 2};
    VkCommandBuffer cb[2]; /* 0: empty, 1: resets and writes one timestamp */
    CHECK(vkAllocateCommandBuffers(dev, &cai, cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(cb[0], &bi));
    CHECK(vkEndCommandBuffer(cb[0]));
    CHECK(vkBeginCommandBuffer(cb[1], &bi));
    vkCmdResetQueryPool(cb[1], qp, 0, 1);
    vkCmdWriteTimestamp(cb[1], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 0);
    CHECK(vkEndCommandBuffer(cb[1]));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(dev, &fci, NULL, &fence));

    double *plain = calloc(blocks, sizeof *plain), *stamped = calloc(blocks, sizeof *stamped);
    for (int b = 0; b < blocks; b++) {
        for (int with = 0; with < 2; with++) {
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                               .commandBufferCount = (uint32_t)(1 + with),
                               .pCommandBuffers = cb};
            double t0 = now_us();
            for (int i = 0; i < per_block; i++) {
                CHECK(vkQueueSubmit(q, 1, &si, fence));
                CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
                CHECK(vkResetFences(dev, 1, &fence));
            }
            (with ? stamped : plain)[b] = (now_us() - t0) / per_block;
        }
    }
    qsort(plain, blocks, sizeof *plain, cmp_double);
    qsort(stamped, blocks, sizeof *stamped, cmp_double);
    double p = plain[blocks / 2], s = stamped[blocks / 2];
    printf("%s: %d blocks of %d fenced submissions, medians\n", props.deviceName, blocks, per_block);
    printf("%-34s %10s\n", "", "us/submit");
    printf("%-34s %10.1f\n", "empty command buffer", p);
    printf("%-34s %10.1f\n", "plus one timestamp command buffer", s);
    printf("%-34s %10.1f\n", "cost of one timestamp", s - p);
    printf("%-34s %10.2f\n", "ratio", s / p);

    vkDestroyFence(dev, fence, NULL);
    vkDestroyQueryPool(dev, qp, NULL);
    vkDestroyCommandPool(dev, pool, NULL);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    free(plain);
    free(stamped);
    return 0;
}
