/* A program that submits forever, shortened: one small reusable command
 * buffer (a dispatch of one workgroup and a barrier, recorded once, without
 * ONE_TIME_SUBMIT) submitted N times on one queue. By default each
 * submission is waited on (its fence) before the next; with --wait-every K
 * the command buffer is recorded with SIMULTANEOUS_USE and only every K-th
 * submission carries the fence and is waited on, so that up to K are in
 * flight, as in a program that submits as fast as it can.
 * For comparing layers: time per submission, and resident memory as the
 * submissions add up (a layer that keeps something per submission grows).
 *
 *   gz-bench-vk-submit-loop [--submits N] [--wait-every K] [--rss-at A,B,...]
 *
 * Prints one line:
 *   submits=N wall_ns_per_submit=<n> thread_cpu_ns_per_submit=<n>
 *   process_cpu_ns_per_submit=<n> rss_kb_at_<A>=<n> rss_kb_at_<B>=<n> ...
 * thread CPU is the submitting thread's; process CPU adds every other thread
 * (the driver's, a layer's worker). Resident memory is read from
 * /proc/self/statm after the A-th submission (at the next wait with
 * --wait-every). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gz_vk_min.h"

static const uint32_t bump_spv[] =
#include "bump_comp.inc"
    ;

#define MAX_MARKS 16

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Resident set in KiB, or 0 where /proc/self/statm cannot be read. */
static uint64_t rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    if (!f)
        return 0;
    int n = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    return n == 2 ? resident * (uint64_t)sysconf(_SC_PAGESIZE) / 1024 : 0;
}

static uint64_t parse_count(const char *s, const char *what)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v < 1 || v > 1000000000ull) {
        fprintf(stderr, "gz-bench-vk-submit-loop: %s wants 1..1000000000, not \"%s\"\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    uint64_t submits = 10000, wait_every = 1, marks[MAX_MARKS], rss[MAX_MARKS];
    uint32_t nmarks = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--submits") && i + 1 < argc) {
            submits = parse_count(argv[++i], "--submits");
        } else if (!strcmp(argv[i], "--wait-every") && i + 1 < argc) {
            wait_every = parse_count(argv[++i], "--wait-every");
        } else if (!strcmp(argv[i], "--rss-at") && i + 1 < argc) {
            char *list = argv[++i];
            for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save)) {
                if (nmarks == MAX_MARKS) {
                    fprintf(stderr, "gz-bench-vk-submit-loop: at most %d marks\n", MAX_MARKS);
                    return 2;
                }
                marks[nmarks++] = parse_count(tok, "--rss-at");
            }
        } else {
            fprintf(stderr, "usage: gz-bench-vk-submit-loop [--submits N] [--wait-every K] "
                            "[--rss-at A,B,...]\n");
            return 2;
        }
    }
    for (uint32_t m = 0; m < nmarks; m++)
        if (marks[m] > submits) {
            fprintf(stderr, "gz-bench-vk-submit-loop: --rss-at %llu is past --submits %llu\n",
                    (unsigned long long)marks[m], (unsigned long long)submits);
            return 2;
        }

    gz_min_vk vk = {0};
    if (!gz_min_vk_instance(&vk, "gz-bench-vk-submit-loop", VK_API_VERSION_1_1, 0, NULL))
        return 2;
    vk.family = gz_min_vk_compute_family(vk.gpu);
    if (vk.family == UINT32_MAX) {
        fprintf(stderr, "gz-bench-vk-submit-loop: no compute queue\n");
        return 2;
    }
    gz_min_vk_device(&vk, 0, NULL);
    VkDevice dev = vk.device;

    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = 256,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    VkBuffer buf;
    GZ_VK_CHECK(vkCreateBuffer(dev, &bci, NULL, &buf));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, buf, &req);
    uint32_t type = 0;
    while (type < 32 && !(req.memoryTypeBits & (1u << type)))
        type++;
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = type};
    VkDeviceMemory mem;
    GZ_VK_CHECK(vkAllocateMemory(dev, &mai, NULL, &mem));
    GZ_VK_CHECK(vkBindBufferMemory(dev, buf, mem, 0));
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipe_layout;
    gz_min_vk_storage_layout(dev, 0, &set_layout, &pipe_layout);
    VkPipeline pipeline = gz_min_vk_compute_pipeline(dev, pipe_layout, bump_spv, sizeof bump_spv);
    VkDescriptorPool desc_pool = gz_min_vk_storage_pool(dev, 1);
    VkDescriptorSet set = gz_min_vk_storage_set(dev, desc_pool, set_layout, buf);

    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .queueFamilyIndex = vk.family};
    VkCommandPool pool;
    GZ_VK_CHECK(vkCreateCommandPool(dev, &pci, NULL, &pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VkCommandBuffer cb;
    GZ_VK_CHECK(vkAllocateCommandBuffers(dev, &cai, &cb));
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = wait_every > 1 ? VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT : 0};
    GZ_VK_CHECK(vkBeginCommandBuffer(cb, &bi));
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe_layout, 0, 1, &set, 0, NULL);
    vkCmdDispatch(cb, 1, 1, 1);
    /* The next submission's dispatch reads what this one wrote. */
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    GZ_VK_CHECK(vkEndCommandBuffer(cb));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    GZ_VK_CHECK(vkCreateFence(dev, &fci, NULL, &fence));

    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cb};
    uint64_t wall0 = clock_ns(CLOCK_MONOTONIC), thread0 = clock_ns(CLOCK_THREAD_CPUTIME_ID),
             process0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint32_t marked = 0;
    for (uint64_t n = 1; n <= submits; n++) {
        bool wait = n % wait_every == 0 || n == submits;
        GZ_VK_CHECK(vkQueueSubmit(vk.queue, 1, &si, wait ? fence : VK_NULL_HANDLE));
        if (!wait)
            continue;
        GZ_VK_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
        GZ_VK_CHECK(vkResetFences(dev, 1, &fence));
        for (uint32_t m = 0; m < nmarks; m++)
            if (marks[m] <= n && !(marked & (1u << m))) {
                rss[m] = rss_kb();
                marked |= 1u << m;
            }
    }
    uint64_t wall = clock_ns(CLOCK_MONOTONIC) - wall0,
             thread = clock_ns(CLOCK_THREAD_CPUTIME_ID) - thread0,
             process = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - process0;
    printf("submits=%llu wait_every=%llu wall_ns_per_submit=%llu thread_cpu_ns_per_submit=%llu "
           "process_cpu_ns_per_submit=%llu",
           (unsigned long long)submits, (unsigned long long)wait_every,
           (unsigned long long)(wall / submits),
           (unsigned long long)(thread / submits), (unsigned long long)(process / submits));
    for (uint32_t m = 0; m < nmarks; m++)
        printf(" rss_kb_at_%llu=%llu", (unsigned long long)marks[m], (unsigned long long)rss[m]);
    printf("\n");

    vkDestroyFence(dev, fence, NULL);
    vkDestroyCommandPool(dev, pool, NULL);
    vkDestroyDescriptorPool(dev, desc_pool, NULL);
    vkDestroyPipeline(dev, pipeline, NULL);
    vkDestroyPipelineLayout(dev, pipe_layout, NULL);
    vkDestroyDescriptorSetLayout(dev, set_layout, NULL);
    vkDestroyBuffer(dev, buf, NULL);
    vkFreeMemory(dev, mem, NULL);
    gz_min_vk_close(&vk);
    return 0;
}
