/* What an explicit zone (TracyVkZone) costs the recording thread beyond its
 * two vkCmdWriteTimestamp calls: blocks of N zones recorded through the
 * macros against blocks of N pairs of bare timestamp writes through the
 * same device-level function pointer, alternating so both see the same
 * machine load. Prints the median ns per zone of each and the difference.
 *
 *   gz-bench-api-zone-cost [zones per block] [blocks]
 */
#include "gz_vk_min.h"

#include "gpuzones/vulkan.h"

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int blocks = argc > 2 ? atoi(argv[2]) : 15;
    if (n < 1 || n > 1000 || blocks < 1 || blocks > 1000) {
        fprintf(stderr, "usage: gz-bench-api-zone-cost [zones per block <= 1000] [blocks]\n");
        return 1;
    }
    gz_min_vk v = {0};
    if (!gz_min_vk_instance(&v, "gz-bench-api-zone-cost", VK_API_VERSION_1_1, 0, NULL))
        return 1;
    gz_min_vk_device(&v, 0, NULL);
    VkPhysicalDevice pd = v.gpu;
    VkDevice dev = v.device;
    VkQueue queue = v.queue;
    PFN_vkCmdWriteTimestamp write_ts =
        (PFN_vkCmdWriteTimestamp)vkGetDeviceProcAddr(dev, "vkCmdWriteTimestamp");
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    VkCommandPool pool;
    GZ_VK_CHECK(vkCreateCommandPool(dev, &pci, NULL, &pool));
    VkCommandBuffer cbs[2];
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 2};
    GZ_VK_CHECK(vkAllocateCommandBuffers(dev, &cai, cbs));
    VkCommandBuffer cb = cbs[0];
    VkQueryPoolCreateInfo qpi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                 .queryCount = 2000};
    VkQueryPool qp;
    GZ_VK_CHECK(vkCreateQueryPool(dev, &qpi, NULL, &qp));
    TracyVkCtx ctx = TracyVkContext(pd, dev, queue, cbs[1]);
    if (!ctx) {
        fprintf(stderr, "no gpuzones context (GPUZONES_ENABLE=0?)\n");
        return 1;
    }

    double *zone_ns = calloc((size_t)blocks, sizeof *zone_ns);
    double *bare_ns = calloc((size_t)blocks, sizeof *bare_ns);
    double *own_ns = calloc((size_t)blocks, sizeof *own_ns);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cb};
    for (int b = 0; b < blocks; b++) {
        GZ_VK_CHECK(vkBeginCommandBuffer(cb, &bi));
        vkCmdResetQueryPool(cb, qp, 0, 2000);
        /* Which half comes first alternates: the driver's command memory
         * grows as the command buffer fills, and the later half would pay
         * for that more often. */
        double bare = 0, zone = 0;
        for (int half = 0; half < 2; half++) {
            double t0 = (double)gz_min_now_ns();
            if ((half == 0) == (b % 2 == 0)) {
                for (int i = 0; i < n; i++) {
                    write_ts(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 2 * (uint32_t)i);
                    write_ts(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 2 * (uint32_t)i + 1);
                }
                bare = (double)gz_min_now_ns() - t0;
            } else {
                for (int i = 0; i < n; i++) {
                    TracyVkZone(ctx, cb, "zone");
                }
                zone = (double)gz_min_now_ns() - t0;
            }
        }
        TracyVkCollect(ctx, cb);
        GZ_VK_CHECK(vkEndCommandBuffer(cb));
        GZ_VK_CHECK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
        GZ_VK_CHECK(vkQueueWaitIdle(queue));
        bare_ns[b] = bare / n;
        zone_ns[b] = zone / n;
        own_ns[b] = (zone - bare) / n;
    }
    qsort(bare_ns, (size_t)blocks, sizeof *bare_ns, gz_min_cmp_double);
    qsort(zone_ns, (size_t)blocks, sizeof *zone_ns, gz_min_cmp_double);
    qsort(own_ns, (size_t)blocks, sizeof *own_ns, gz_min_cmp_double);
    double bare = bare_ns[blocks / 2], zone = zone_ns[blocks / 2];
    printf("| per zone (median of %d blocks of %d) | ns |\n|---|---|\n", blocks, n);
    printf("| two bare vkCmdWriteTimestamp | %.1f |\n", bare);
    printf("| TracyVkZone (begin + end) | %.1f |\n", zone);
    printf("| gpuzones' own cost (median of the blocks' differences [min, max]) | %.1f [%.1f, "
           "%.1f] |\n",
           own_ns[blocks / 2], own_ns[0], own_ns[blocks - 1]);
    TracyVkDestroy(ctx);
    free(zone_ns);
    free(bare_ns);
    free(own_ns);
    vkDestroyQueryPool(dev, qp, NULL);
    vkDestroyCommandPool(dev, pool, NULL);
    gz_min_vk_close(&v);
    return 0;
}
