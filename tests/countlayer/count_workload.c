/* gz-count-workload: a Vulkan program whose commands are known, for
 * checking VK_LAYER_GPUZONES_count (check_counts.py). It tallies each
 * command as it records and submits it, with the layer's keys, and prints
 * the tally on stdout at the end:
 *
 *   expected: timestamps=<n> query_resets=<n> ... devices=1
 *
 *   gz-count-workload [--rounds N]     (default 1)
 *
 * Each round: a primary with ONE_TIME_SUBMIT (debug labels, timestamps,
 * query resets, dispatches, barriers old and new, an event set, waited and
 * reset, a fill, a buffer copy, query copies with and without WAIT_BIT, a
 * secondary executed twice) and a reusable primary (the synchronization2
 * commands, the KHR aliases where the driver has VK_KHR_synchronization2,
 * a secondary with the same commands, once), submitted through vkQueueSubmit (two batches and an
 * empty one), vkQueueSubmit2 and vkQueueSubmit2KHR; then the one-time
 * primary recorded again with one timestamp and submitted alone (a
 * re-recording counts only what it holds); a command buffer recorded,
 * never submitted and freed (counts nothing but its recording); host query
 * resets and vkGetQueryPoolResults with and without WAIT_BIT.
 * Layers come from GZ_TEST_APP_LAYERS (tests/common/gz_vk_min.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_vk_min.h"

static const uint32_t bump_spv[] =
#include "bump_comp.inc"
    ;

/* The tally, in the layer's words. */
static struct {
    uint64_t timestamps, query_resets, copies_wait, copies_nowait, barriers, events_set,
        events_waited, events_reset, fills, dispatches, draws, buffer_copies,
        secondaries_executed, submit_calls, batches, cmdbufs_submitted, begins,
        cmdbufs_allocated, host_query_resets, get_results, get_results_wait, devices;
} want;

/* Per command buffer, what one execution of it adds (the recorded kinds). */
typedef struct recorded {
    uint64_t timestamps, query_resets, copies_wait, copies_nowait, barriers, events_set,
        events_waited, events_reset, fills, dispatches, buffer_copies, secondaries_executed;
} recorded;

static void add_executed(const recorded *r)
{
    want.timestamps += r->timestamps;
    want.query_resets += r->query_resets;
    want.copies_wait += r->copies_wait;
    want.copies_nowait += r->copies_nowait;
    want.barriers += r->barriers;
    want.events_set += r->events_set;
    want.events_waited += r->events_waited;
    want.events_reset += r->events_reset;
    want.fills += r->fills;
    want.dispatches += r->dispatches;
    want.buffer_copies += r->buffer_copies;
    want.secondaries_executed += r->secondaries_executed;
}

typedef struct app {
    gz_min_vk vk;
    bool khr_sync2;
    VkQueryPool queries;
    VkBuffer buf;
    VkDeviceMemory mem;
    VkEvent event;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipe_layout;
    VkPipeline pipeline;
    VkDescriptorPool desc_pool;
    VkDescriptorSet set;
    VkCommandPool pool;
    VkFence fence;
    VkCommandBuffer secondary, secondary_b, once, reused;
    recorded in_secondary, in_once, in_reused;
    PFN_vkCmdBeginDebugUtilsLabelEXT begin_label;
    PFN_vkCmdEndDebugUtilsLabelEXT end_label;
    PFN_vkQueueSubmit2KHR submit2_khr;
    PFN_vkCmdWriteTimestamp2KHR timestamp2_khr;
    PFN_vkCmdPipelineBarrier2KHR barrier2_khr;
} app;

static bool has_device_extension(VkPhysicalDevice gpu, const char *name)
{
    VkExtensionProperties props[512];
    uint32_t n = 512;
    if (vkEnumerateDeviceExtensionProperties(gpu, NULL, &n, props) < 0)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(props[i].extensionName, name))
            return true;
    return false;
}

/* A device with synchronization2 and host query reset: lavapipe has both. */
static void make_device(app *a)
{
    const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    if (!gz_min_vk_instance(&a->vk, "gz-count-workload", VK_API_VERSION_1_3, 1, &ext))
        exit(77);
    if (VK_API_VERSION_MINOR(a->vk.props.apiVersion) < 3) {
        fprintf(stderr, "gz-count-workload: the device is not Vulkan 1.3\n");
        exit(77);
    }
    a->vk.family = gz_min_vk_compute_family(a->vk.gpu);
    a->khr_sync2 = has_device_extension(a->vk.gpu, VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME);
    VkPhysicalDeviceVulkan13Features f13 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, .synchronization2 = VK_TRUE};
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &f13,
        .hostQueryReset = VK_TRUE};
    float prio = 1.0f;
    const char *dev_ext = VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME;
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &f12,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &(VkDeviceQueueCreateInfo){
            .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
            .queueFamilyIndex = a->vk.family,
            .queueCount = 1,
            .pQueuePriorities = &prio},
        .enabledExtensionCount = a->khr_sync2 ? 1 : 0,
        .ppEnabledExtensionNames = &dev_ext,
    };
    GZ_VK_CHECK(vkCreateDevice(a->vk.gpu, &dci, NULL, &a->vk.device));
    want.devices++;
    vkGetDeviceQueue(a->vk.device, a->vk.family, 0, &a->vk.queue);
    VkDevice d = a->vk.device;
    a->begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetInstanceProcAddr(
        a->vk.instance, "vkCmdBeginDebugUtilsLabelEXT");
    a->end_label = (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetInstanceProcAddr(
        a->vk.instance, "vkCmdEndDebugUtilsLabelEXT");
    if (a->khr_sync2) {
        a->submit2_khr = (PFN_vkQueueSubmit2KHR)vkGetDeviceProcAddr(d, "vkQueueSubmit2KHR");
        a->timestamp2_khr =
            (PFN_vkCmdWriteTimestamp2KHR)vkGetDeviceProcAddr(d, "vkCmdWriteTimestamp2KHR");
        a->barrier2_khr =
            (PFN_vkCmdPipelineBarrier2KHR)vkGetDeviceProcAddr(d, "vkCmdPipelineBarrier2KHR");
    }
}

static void make_objects(app *a)
{
    VkDevice d = a->vk.device;
    VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                 .queryCount = 16};
    GZ_VK_CHECK(vkCreateQueryPool(d, &qci, NULL, &a->queries));
    vkResetQueryPool(d, a->queries, 0, 16);
    want.host_query_resets++;

    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = 4096,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT};
    GZ_VK_CHECK(vkCreateBuffer(d, &bci, NULL, &a->buf));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(d, a->buf, &req);
    uint32_t type = 0;
    while (type < 32 && !(req.memoryTypeBits & (1u << type)))
        type++;
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = type};
    GZ_VK_CHECK(vkAllocateMemory(d, &mai, NULL, &a->mem));
    GZ_VK_CHECK(vkBindBufferMemory(d, a->buf, a->mem, 0));

    VkEventCreateInfo eci = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    GZ_VK_CHECK(vkCreateEvent(d, &eci, NULL, &a->event));
    gz_min_vk_storage_layout(d, 0, &a->set_layout, &a->pipe_layout);
    a->pipeline = gz_min_vk_compute_pipeline(d, a->pipe_layout, bump_spv, sizeof bump_spv);
    a->desc_pool = gz_min_vk_storage_pool(d, 1);
    a->set = gz_min_vk_storage_set(d, a->desc_pool, a->set_layout, a->buf);

    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = a->vk.family};
    GZ_VK_CHECK(vkCreateCommandPool(d, &pci, NULL, &a->pool));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    GZ_VK_CHECK(vkCreateFence(d, &fci, NULL, &a->fence));
}

static VkCommandBuffer allocate(app *a, VkCommandBufferLevel level)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = a->pool,
                                      .level = level,
                                      .commandBufferCount = 1};
    VkCommandBuffer cb;
    GZ_VK_CHECK(vkAllocateCommandBuffers(a->vk.device, &ai, &cb));
    want.cmdbufs_allocated++;
    return cb;
}

static void begin(VkCommandBuffer cb, VkCommandBufferUsageFlags flags,
                  const VkCommandBufferInheritanceInfo *inherit)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = flags,
                                   .pInheritanceInfo = inherit};
    GZ_VK_CHECK(vkBeginCommandBuffer(cb, &bi));
    want.begins++;
}

static void dispatch(app *a, VkCommandBuffer cb, recorded *r)
{
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, a->pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, a->pipe_layout, 0, 1, &a->set, 0,
                            NULL);
    vkCmdDispatch(cb, 1, 1, 1);
    r->dispatches++;
}

static void barrier(VkCommandBuffer cb, recorded *r)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    r->barriers++;
}

static const VkMemoryBarrier2 all_commands = {
    .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
    .srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
    .srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT,
    .dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
    .dstAccessMask = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT};
static const VkDependencyInfo all_dependency = {.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
                                                .memoryBarrierCount = 1,
                                                .pMemoryBarriers = &all_commands};

/* Two secondaries with the same commands: the first run twice by the
 * one-time primary, the second once by the reusable one (the validation
 * layer of Vulkan SDK 1.3.239 aborts when one secondary is executed by two
 * primaries of one submission). Each resets and writes its own query, so
 * that every execution is valid. */
static void record_secondary(app *a, VkCommandBuffer cb, uint32_t query)
{
    recorded r = {0};
    VkCommandBufferInheritanceInfo inherit = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    begin(cb, VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT, &inherit);
    vkCmdResetQueryPool(cb, a->queries, query, 1);
    r.query_resets++;
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, a->queries, query);
    r.timestamps++;
    dispatch(a, cb, &r);
    barrier(cb, &r);
    GZ_VK_CHECK(vkEndCommandBuffer(cb));
    a->in_secondary = r;
}

static void record_once(app *a)
{
    VkCommandBuffer cb = a->once;
    recorded *r = &a->in_once;
    *r = (recorded){0};
    VkDebugUtilsLabelEXT label = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
                                  .pLabelName = "one-time"};
    begin(cb, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL);
    if (a->begin_label)
        a->begin_label(cb, &label);
    vkCmdResetQueryPool(cb, a->queries, 0, 3);
    r->query_resets++;
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, a->queries, 0);
    r->timestamps++;
    dispatch(a, cb, r);
    dispatch(a, cb, r);
    barrier(cb, r);
    vkCmdPipelineBarrier2(cb, &all_dependency);
    r->barriers++;
    vkCmdFillBuffer(cb, a->buf, 2048, 256, 7);
    r->fills++;
    barrier(cb, r);
    VkBufferCopy region = {2048, 2304, 256};
    vkCmdCopyBuffer(cb, a->buf, a->buf, 1, &region);
    r->buffer_copies++;
    vkCmdSetEvent(cb, a->event, VK_PIPELINE_STAGE_TRANSFER_BIT);
    r->events_set++;
    vkCmdWaitEvents(cb, 1, &a->event, VK_PIPELINE_STAGE_TRANSFER_BIT,
                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, NULL, 0, NULL, 0, NULL);
    r->events_waited++;
    vkCmdResetEvent(cb, a->event, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    r->events_reset++;
    vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, a->queries, 1);
    r->timestamps++;
    vkCmdCopyQueryPoolResults(cb, a->queries, 0, 2, a->buf, 1024, 8,
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    r->copies_wait++;
    vkCmdCopyQueryPoolResults(cb, a->queries, 0, 2, a->buf, 1280, 16,
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    r->copies_nowait++;
    barrier(cb, r);
    VkCommandBuffer twice[2] = {a->secondary, a->secondary};
    vkCmdExecuteCommands(cb, 2, twice);
    r->secondaries_executed += 2;
    if (a->end_label)
        a->end_label(cb);
    GZ_VK_CHECK(vkEndCommandBuffer(cb));
}

/* Recorded once, submitted several times. */
static void record_reused(app *a)
{
    VkCommandBuffer cb = a->reused;
    recorded *r = &a->in_reused;
    begin(cb, 0, NULL);
    vkCmdResetQueryPool(cb, a->queries, 4, 3);
    r->query_resets++;
    vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, a->queries, 4);
    r->timestamps++;
    dispatch(a, cb, r);
    vkCmdSetEvent2(cb, a->event, &all_dependency);
    r->events_set++;
    vkCmdWaitEvents2(cb, 1, &a->event, &all_dependency);
    r->events_waited++;
    vkCmdResetEvent2(cb, a->event, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    r->events_reset++;
    vkCmdPipelineBarrier2(cb, &all_dependency);
    r->barriers++;
    if (a->khr_sync2) {
        a->barrier2_khr(cb, &all_dependency);
        r->barriers++;
        a->timestamp2_khr(cb, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, a->queries, 5);
        r->timestamps++;
    }
    vkCmdExecuteCommands(cb, 1, &a->secondary_b);
    r->secondaries_executed++;
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, a->queries, 6);
    r->timestamps++;
    GZ_VK_CHECK(vkEndCommandBuffer(cb));
}

/* What executing a primary adds: its commands and its secondaries'. */
static void executed(app *a, const recorded *primary)
{
    add_executed(primary);
    for (uint64_t i = 0; i < primary->secondaries_executed; i++)
        add_executed(&a->in_secondary);
}

static void wait_fence(app *a)
{
    GZ_VK_CHECK(vkWaitForFences(a->vk.device, 1, &a->fence, VK_TRUE, UINT64_MAX));
    GZ_VK_CHECK(vkResetFences(a->vk.device, 1, &a->fence));
}

static void submit(app *a, uint32_t nbatches, const VkSubmitInfo *batches)
{
    GZ_VK_CHECK(vkQueueSubmit(a->vk.queue, nbatches, batches, a->fence));
    want.submit_calls++;
    want.batches += nbatches;
    for (uint32_t i = 0; i < nbatches; i++)
        want.cmdbufs_submitted += batches[i].commandBufferCount;
    wait_fence(a);
}

static void submit2(app *a, VkCommandBuffer cb, bool khr)
{
    VkCommandBufferSubmitInfo cbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                     .commandBuffer = cb};
    VkSubmitInfo2 si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                        .commandBufferInfoCount = 1,
                        .pCommandBufferInfos = &cbi};
    GZ_VK_CHECK(khr ? a->submit2_khr(a->vk.queue, 1, &si, a->fence)
                    : vkQueueSubmit2(a->vk.queue, 1, &si, a->fence));
    want.submit_calls++;
    want.batches++;
    want.cmdbufs_submitted++;
    wait_fence(a);
}

static void round_of_work(app *a)
{
    record_once(a);
    VkSubmitInfo batches[3] = {
        {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
         .pCommandBuffers = &a->once},
        {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO},
        {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
         .pCommandBuffers = &a->reused},
    };
    submit(a, 3, batches);
    executed(a, &a->in_once);
    executed(a, &a->in_reused);

    uint64_t results[2];
    GZ_VK_CHECK(vkGetQueryPoolResults(a->vk.device, a->queries, 0, 2, sizeof results, results,
                                      sizeof results[0],
                                      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    want.get_results++;
    want.get_results_wait++;

    submit2(a, a->reused, false);
    executed(a, &a->in_reused);
    if (a->khr_sync2) {
        submit2(a, a->reused, true);
        executed(a, &a->in_reused);
    }

    /* Recorded again: only the new recording counts. */
    begin(a->once, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL);
    vkCmdResetQueryPool(a->once, a->queries, 0, 1);
    vkCmdWriteTimestamp(a->once, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, a->queries, 0);
    GZ_VK_CHECK(vkEndCommandBuffer(a->once));
    submit(a, 1, batches);
    want.query_resets++;
    want.timestamps++;

    /* Recorded, never submitted, freed: nothing executed. */
    VkCommandBuffer dropped = allocate(a, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    begin(dropped, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL);
    vkCmdWriteTimestamp(dropped, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, a->queries, 7);
    vkCmdFillBuffer(dropped, a->buf, 3072, 256, 1);
    GZ_VK_CHECK(vkEndCommandBuffer(dropped));
    vkFreeCommandBuffers(a->vk.device, a->pool, 1, &dropped);

    vkResetQueryPool(a->vk.device, a->queries, 9, 7);
    want.host_query_resets++;
    VkResult r = vkGetQueryPoolResults(a->vk.device, a->queries, 4, 1, sizeof results, results,
                                       sizeof results[0], VK_QUERY_RESULT_64_BIT);
    if (r != VK_SUCCESS && r != VK_NOT_READY)
        GZ_VK_CHECK(r);
    want.get_results++;
}

int main(int argc, char **argv)
{
    unsigned rounds = 1;
    if (argc == 3 && !strcmp(argv[1], "--rounds"))
        rounds = (unsigned)strtoul(argv[2], NULL, 10);
    else if (argc != 1) {
        fprintf(stderr, "usage: gz-count-workload [--rounds N]\n");
        return 2;
    }
    static app a;
    make_device(&a);
    make_objects(&a);
    a.secondary = allocate(&a, VK_COMMAND_BUFFER_LEVEL_SECONDARY);
    a.secondary_b = allocate(&a, VK_COMMAND_BUFFER_LEVEL_SECONDARY);
    a.once = allocate(&a, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    a.reused = allocate(&a, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    record_secondary(&a, a.secondary, 3);
    record_secondary(&a, a.secondary_b, 8);
    record_reused(&a);
    for (unsigned i = 0; i < rounds; i++)
        round_of_work(&a);

    VkDevice d = a.vk.device;
    GZ_VK_CHECK(vkDeviceWaitIdle(d));
    vkDestroyCommandPool(d, a.pool, NULL);
    vkDestroyFence(d, a.fence, NULL);
    vkDestroyDescriptorPool(d, a.desc_pool, NULL);
    vkDestroyPipeline(d, a.pipeline, NULL);
    vkDestroyPipelineLayout(d, a.pipe_layout, NULL);
    vkDestroyDescriptorSetLayout(d, a.set_layout, NULL);
    vkDestroyEvent(d, a.event, NULL);
    vkDestroyBuffer(d, a.buf, NULL);
    vkFreeMemory(d, a.mem, NULL);
    vkDestroyQueryPool(d, a.queries, NULL);
    gz_min_vk_close(&a.vk);

    printf("expected: timestamps=%llu query_resets=%llu copies_wait=%llu copies_nowait=%llu "
           "barriers=%llu events_set=%llu events_waited=%llu events_reset=%llu fills=%llu "
           "dispatches=%llu draws=%llu buffer_copies=%llu secondaries_executed=%llu "
           "submit_calls=%llu batches=%llu cmdbufs_submitted=%llu begins=%llu "
           "cmdbufs_allocated=%llu host_query_resets=%llu get_results=%llu "
           "get_results_wait=%llu devices=%llu\n",
           (unsigned long long)want.timestamps, (unsigned long long)want.query_resets,
           (unsigned long long)want.copies_wait, (unsigned long long)want.copies_nowait,
           (unsigned long long)want.barriers, (unsigned long long)want.events_set,
           (unsigned long long)want.events_waited, (unsigned long long)want.events_reset,
           (unsigned long long)want.fills, (unsigned long long)want.dispatches,
           (unsigned long long)want.draws, (unsigned long long)want.buffer_copies,
           (unsigned long long)want.secondaries_executed, (unsigned long long)want.submit_calls,
           (unsigned long long)want.batches, (unsigned long long)want.cmdbufs_submitted,
           (unsigned long long)want.begins, (unsigned long long)want.cmdbufs_allocated,
           (unsigned long long)want.host_query_resets, (unsigned long long)want.get_results,
           (unsigned long long)want.get_results_wait, (unsigned long long)want.devices);
    return 0;
}
