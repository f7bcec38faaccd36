/* What one timestamp costs the driver, with no layer at all: N submissions
 * of an empty command buffer against N submissions of the same plus one
 * command buffer that writes a timestamp, each waited with a fence,
 * alternating in blocks so both see the same machine load. On lavapipe this
 * is the floor under any timestamp-based GPU timing (llvmpipe hands every
 * timestamp query to its rasterizer threads).
 *
 *   gz-bench-timestamp-cost [submissions per block] [blocks]
 */
#include "gz_vk_min.h"

int main(int argc, char **argv)
{
    int per_block = argc > 1 ? atoi(argv[1]) : 200;
    int blocks = argc > 2 ? atoi(argv[2]) : 9;
    gz_min_vk v = {0};
    if (!gz_min_vk_instance(&v, "gz-bench-timestamp-cost", VK_API_VERSION_1_2, 0, NULL))
        return 1;
    gz_min_vk_device(&v, 0, NULL);
    VkPhysicalDeviceProperties props = v.props;
    VkDevice dev = v.device;
    VkQueue q = v.queue;
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    VkCommandPool pool;
    GZ_VK_CHECK(vkCreateCommandPool(dev, &pci, NULL, &pool));
    VkQueryPoolCreateInfo qpci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                  .queryCount = 1};
    VkQueryPool qp;
    GZ_VK_CHECK(vkCreateQueryPool(dev, &qpci, NULL, &qp));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .commandBufferCount = 2};
    VkCommandBuffer cb[2]; /* 0: empty, 1: resets and writes one timestamp */
    GZ_VK_CHECK(vkAllocateCommandBuffers(dev, &cai, cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    GZ_VK_CHECK(vkBeginCommandBuffer(cb[0], &bi));
    GZ_VK_CHECK(vkEndCommandBuffer(cb[0]));
    GZ_VK_CHECK(vkBeginCommandBuffer(cb[1], &bi));
    vkCmdResetQueryPool(cb[1], qp, 0, 1);
    vkCmdWriteTimestamp(cb[1], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 0);
    GZ_VK_CHECK(vkEndCommandBuffer(cb[1]));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    GZ_VK_CHECK(vkCreateFence(dev, &fci, NULL, &fence));

    double *plain = calloc(blocks, sizeof *plain), *stamped = calloc(blocks, sizeof *stamped);
    for (int b = 0; b < blocks; b++) {
        for (int with = 0; with < 2; with++) {
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                               .commandBufferCount = (uint32_t)(1 + with),
                               .pCommandBuffers = cb};
            double t0 = (gz_min_now_ns() / 1e3);
            for (int i = 0; i < per_block; i++) {
                GZ_VK_CHECK(vkQueueSubmit(q, 1, &si, fence));
                GZ_VK_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
                GZ_VK_CHECK(vkResetFences(dev, 1, &fence));
            }
            (with ? stamped : plain)[b] = ((gz_min_now_ns() / 1e3) - t0) / per_block;
        }
    }
    qsort(plain, blocks, sizeof *plain, gz_min_cmp_double);
    qsort(stamped, blocks, sizeof *stamped, gz_min_cmp_double);
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
    gz_min_vk_close(&v);
    free(plain);
    free(stamped);
    return 0;
}
