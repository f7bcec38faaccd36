/* What the layer adds on the GPU, measured by the program's own timestamps:
 * batches of two command buffers of independent work (A: timestamp, fill
 * buffer 1; B: fill buffer 2, timestamp), each batch submitted and waited.
 * The span between the two timestamps is the batch's GPU time as the
 * program sees it. Run it without and with VK_LAYER_GPUZONES_timing (bench/run
 * --only vkgpu does, alternating): the layer writes its timestamps into A and
 * B (A's end, B's begin; on lavapipe also its readback copy and barrier at
 * A's end), and whatever they cost on the GPU shows in the span. On a GPU
 * that overlaps consecutive command buffers a layer that waited or copied
 * between them would serialize A and B, and the span would grow by much
 * more than a timestamp.
 *
 *   gz-bench-vk-gpu-time [batches] [fill MiB]
 * Last line: key=value pairs (span_ns_p50, span_ns_p10, span_ns_p90, batches).
 */
#include "gz_vk_min.h"

static VkBuffer make_buffer(VkDevice dev, VkPhysicalDevice pd, VkDeviceSize size,
                            VkDeviceMemory *mem_out)
{
    VkBuffer buf;
    GZ_VK_CHECK(vkCreateBuffer(dev,
                         &(VkBufferCreateInfo){.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                               .size = size,
                                               .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT},
                         NULL, &buf));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, buf, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    uint32_t type = 0;
    while (type < mp.memoryTypeCount && !(req.memoryTypeBits & (1u << type)))
        type++;
    GZ_VK_CHECK(vkAllocateMemory(dev,
                           &(VkMemoryAllocateInfo){.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                                   .allocationSize = req.size,
                                                   .memoryTypeIndex = type},
                           NULL, mem_out));
    GZ_VK_CHECK(vkBindBufferMemory(dev, buf, *mem_out, 0));
    return buf;
}

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 200;
    VkDeviceSize size = (VkDeviceSize)(argc > 2 ? atoi(argv[2]) : 8) << 20;
    if (batches < 1 || size == 0) {
        fprintf(stderr, "usage: gz-bench-vk-gpu-time [batches] [fill MiB]\n");
        return 2;
    }
    gz_min_vk v = {0};
    if (!gz_min_vk_instance(&v, "gz-bench-vk-gpu-time", VK_API_VERSION_1_2, 0, NULL))
        return 1;
    gz_min_vk_device(&v, 0, NULL);
    VkPhysicalDevice pd = v.gpu;
    VkPhysicalDeviceProperties props = v.props;
    VkDevice dev = v.device;
    VkQueue q = v.queue;
    VkDeviceMemory mem[2];
    VkBuffer buf[2] = {make_buffer(dev, pd, size, &mem[0]), make_buffer(dev, pd, size, &mem[1])};
    VkQueryPool qp;
    GZ_VK_CHECK(vkCreateQueryPool(dev,
                            &(VkQueryPoolCreateInfo){.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                                     .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                                     .queryCount = 2},
                            NULL, &qp));
    VkCommandPool pool;
    GZ_VK_CHECK(vkCreateCommandPool(
        dev, &(VkCommandPoolCreateInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO}, NULL,
        &pool));
    VkCommandBuffer cb[2];
    GZ_VK_CHECK(vkAllocateCommandBuffers(
        dev,
        &(VkCommandBufferAllocateInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .commandBufferCount = 2},
        cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    /* A: reset both queries, the first timestamp, its fill. B: the other
     * fill (independent of A's: no barrier between them), the second
     * timestamp after all of it. */
    GZ_VK_CHECK(vkBeginCommandBuffer(cb[0], &bi));
    vkCmdResetQueryPool(cb[0], qp, 0, 2);
    vkCmdWriteTimestamp(cb[0], VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
    vkCmdFillBuffer(cb[0], buf[0], 0, size, 0x01010101u);
    GZ_VK_CHECK(vkEndCommandBuffer(cb[0]));
    GZ_VK_CHECK(vkBeginCommandBuffer(cb[1], &bi));
    vkCmdFillBuffer(cb[1], buf[1], 0, size, 0x02020202u);
    vkCmdWriteTimestamp(cb[1], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1);
    GZ_VK_CHECK(vkEndCommandBuffer(cb[1]));
    VkFence fence;
    GZ_VK_CHECK(vkCreateFence(dev, &(VkFenceCreateInfo){.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO},
                        NULL, &fence));

    uint64_t *span = calloc((size_t)batches, sizeof *span);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 2,
                       .pCommandBuffers = cb};
    for (int i = 0; i < batches; i++) {
        GZ_VK_CHECK(vkQueueSubmit(q, 1, &si, fence));
        GZ_VK_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
        GZ_VK_CHECK(vkResetFences(dev, 1, &fence));
        uint64_t ts[2];
        GZ_VK_CHECK(vkGetQueryPoolResults(dev, qp, 0, 2, sizeof ts, ts, sizeof ts[0],
                                    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        span[i] = (uint64_t)((double)(ts[1] - ts[0]) * props.limits.timestampPeriod);
    }
    qsort(span, (size_t)batches, sizeof *span, gz_min_cmp_u64);
    printf("%s: %d batches of 2 command buffers filling %llu MiB each\n", props.deviceName,
           batches, (unsigned long long)(size >> 20));
    printf("span_ns_p50=%llu span_ns_p10=%llu span_ns_p90=%llu batches=%d\n",
           (unsigned long long)span[batches / 2], (unsigned long long)span[batches / 10],
           (unsigned long long)span[batches * 9 / 10], batches);

    vkDestroyFence(dev, fence, NULL);
    vkDestroyCommandPool(dev, pool, NULL);
    vkDestroyQueryPool(dev, qp, NULL);
    for (int k = 0; k < 2; k++) {
        vkDestroyBuffer(dev, buf[k], NULL);
        vkFreeMemory(dev, mem[k], NULL);
    }
    gz_min_vk_close(&v);
    free(span);
    return 0;
}
