/* CPU cost per frame of an app that records and submits many small command
 * buffers on several threads (lavapipe, headless), for comparing layers.
 *
 *   gz-bench-vk-frame-cpu [--threads T] [--cmdbufs C] [--submits S] [--frames F]
 *                         [--warmup W]
 *
 * Each frame, T recording threads each reset their own command pool, record C
 * one-time command buffers (a "dispatch" debug label around one dispatch, a
 * "copy" label around a 256-byte buffer copy) and submit them in S
 * vkQueueSubmit calls (one queue, taken under a mutex), the last one with the
 * thread's fence, which the thread waits on before the next frame.
 *
 * What is measured is the CPU time of this program's own threads only
 * (CLOCK_THREAD_CPUTIME_ID, summed over the recording threads and the main
 * thread; and apart, the parts spent recording and in vkQueueSubmit), so the driver's rasterizer/queue threads and gpuzones' worker are
 * left out: the figure is what a layer costs the app's threads. Layers are
 * chosen by the caller through VK_INSTANCE_LAYERS. Prints one line:
 *   cpu_ns_per_frame=<n> record_ns_per_frame=<n> submit_ns_per_frame=<n>
 *   frames=<F> cmdbufs_per_frame=<T*C> submits_per_frame=<T*S>
 *   lane_tids=<tid>,<tid>...
 * lane_tids are the recording threads' kernel thread ids, so that a
 * profiler's samples (bench/run: perf) can be told apart from those of the
 * driver's and a layer's threads; they do all of the frames' recording and
 * submitting, warm-up frames included.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gz_vk_min.h"

static const uint32_t bump_spv[] =
#include "bump_comp.inc"
    ;

#define MAX_THREADS 16
#define MAX_CMDBUFS 256
#define BUF_BYTES 256

struct lane {
    struct app *app;
    pthread_t thread;
    VkCommandPool pool;
    VkCommandBuffer cb[MAX_CMDBUFS];
    VkFence fence;
    VkBuffer src, dst;
    VkDeviceMemory mem;
    VkDescriptorSet set;
    uint64_t cpu_ns;    /* this thread's CPU time over the timed frames */
    uint64_t record_ns; /* the part spent resetting the pool and recording */
    uint64_t submit_ns; /* the part spent in vkQueueSubmit (and its lock) */
    long tid;
};

struct app {
    gz_min_vk vk; /* one queue of a compute family */
    pthread_mutex_t queue_lock;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipe_layout;
    VkPipeline pipeline;
    VkDescriptorPool desc_pool;
    PFN_vkCmdBeginDebugUtilsLabelEXT begin_label;
    PFN_vkCmdEndDebugUtilsLabelEXT end_label;
    pthread_barrier_t start, done;
    uint32_t threads, cmdbufs, submits, frames, warmup;
    struct lane lanes[MAX_THREADS];
};

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void setup_instance_device(struct app *app)
{
    const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    if (!gz_min_vk_instance(&app->vk, "gz-bench-vk-frame-cpu", VK_API_VERSION_1_1, 1, &ext))
        exit(2);
    app->begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetInstanceProcAddr(
        app->vk.instance, "vkCmdBeginDebugUtilsLabelEXT");
    app->end_label = (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetInstanceProcAddr(
        app->vk.instance, "vkCmdEndDebugUtilsLabelEXT");
    if (!app->begin_label || !app->end_label) {
        fprintf(stderr, "gz-bench-vk-frame-cpu: no VK_EXT_debug_utils label entry points\n");
        exit(2);
    }
    app->vk.family = gz_min_vk_compute_family(app->vk.gpu);
    if (app->vk.family == UINT32_MAX) {
        fprintf(stderr, "gz-bench-vk-frame-cpu: no compute queue\n");
        exit(2);
    }
    gz_min_vk_device(&app->vk, 0, NULL);
}

static void setup_pipeline(struct app *app)
{
    gz_min_vk_storage_layout(app->vk.device, 0, &app->set_layout, &app->pipe_layout);
    app->pipeline = gz_min_vk_compute_pipeline(app->vk.device, app->pipe_layout, bump_spv,
                                               sizeof bump_spv);
    app->desc_pool = gz_min_vk_storage_pool(app->vk.device, MAX_THREADS);
}

static void setup_lane(struct app *app, struct lane *l)
{
    l->app = app;
    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
        .queueFamilyIndex = app->vk.family,
    };
    GZ_VK_CHECK(vkCreateCommandPool(app->vk.device, &pci, NULL, &l->pool));
    VkCommandBufferAllocateInfo cai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = l->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = app->cmdbufs,
    };
    GZ_VK_CHECK(vkAllocateCommandBuffers(app->vk.device, &cai, l->cb));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    GZ_VK_CHECK(vkCreateFence(app->vk.device, &fci, NULL, &l->fence));

    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = BUF_BYTES,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    GZ_VK_CHECK(vkCreateBuffer(app->vk.device, &bci, NULL, &l->src));
    GZ_VK_CHECK(vkCreateBuffer(app->vk.device, &bci, NULL, &l->dst));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(app->vk.device, l->src, &req);
    VkDeviceSize stride = (req.size + req.alignment - 1) / req.alignment * req.alignment;
    uint32_t type = 0;
    while (type < 32 && !(req.memoryTypeBits & (1u << type)))
        type++;
    VkMemoryAllocateInfo mai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = 2 * stride,
        .memoryTypeIndex = type,
    };
    GZ_VK_CHECK(vkAllocateMemory(app->vk.device, &mai, NULL, &l->mem));
    GZ_VK_CHECK(vkBindBufferMemory(app->vk.device, l->src, l->mem, 0));
    GZ_VK_CHECK(vkBindBufferMemory(app->vk.device, l->dst, l->mem, stride));

    l->set = gz_min_vk_storage_set(app->vk.device, app->desc_pool, app->set_layout, l->src);
}

/* bench/run and tests/countlayer/check_targets.py count the instructions
 * run inside record() and submit(), by shared object (valgrind
 * --tool=callgrind --toggle-collect=record): the measured frames' work.
 * The warm-up frames run the same commands through warmup_record() and
 * warmup_submit(), so that a count can leave out what happens once (the
 * first frame makes the layer create its first query pool and clear its
 * 8192 result entries) or take it in (both names). Kept apart: not
 * inlined, and not folded into one function by the compiler. */
#if defined(__has_attribute)
#if __has_attribute(no_icf)
#define COUNTED __attribute__((noinline, no_icf))
#endif
#endif
#ifndef COUNTED
#define COUNTED __attribute__((noinline))
#endif

static inline __attribute__((always_inline)) void record_commands(struct app *app,
                                                                  struct lane *l,
                                                                  VkCommandBuffer cb)
{
    static const VkDebugUtilsLabelEXT dispatch_label = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = "dispatch"};
    static const VkDebugUtilsLabelEXT copy_label = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = "copy"};
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    GZ_VK_CHECK(vkBeginCommandBuffer(cb, &bi));
    app->begin_label(cb, &dispatch_label);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, app->pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, app->pipe_layout, 0, 1, &l->set,
                            0, NULL);
    vkCmdDispatch(cb, 1, 1, 1);
    app->end_label(cb);
    /* The copy reads what the dispatch wrote. */
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
    };
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         0, 1, &mb, 0, NULL, 0, NULL);
    app->begin_label(cb, &copy_label);
    VkBufferCopy region = {0, 0, BUF_BYTES};
    vkCmdCopyBuffer(cb, l->src, l->dst, 1, &region);
    app->end_label(cb);
    /* The next command buffer's dispatch writes src again after this copy. */
    VkMemoryBarrier back = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
    };
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         0, 1, &back, 0, NULL, 0, NULL);
    GZ_VK_CHECK(vkEndCommandBuffer(cb));
}

COUNTED static void record(struct app *app, struct lane *l, VkCommandBuffer cb)
{
    record_commands(app, l, cb);
}

COUNTED static void warmup_record(struct app *app, struct lane *l, VkCommandBuffer cb)
{
    record_commands(app, l, cb);
}

/* The lane's s-th vkQueueSubmit of the frame, the last with its fence. */
static inline __attribute__((always_inline)) void submit_commands(struct app *app, struct lane *l,
                                                                  uint32_t s)
{
    uint32_t per = app->cmdbufs / app->submits;
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = per,
        .pCommandBuffers = &l->cb[s * per],
    };
    bool last = s + 1 == app->submits;
    pthread_mutex_lock(&app->queue_lock);
    GZ_VK_CHECK(vkQueueSubmit(app->vk.queue, 1, &si, last ? l->fence : VK_NULL_HANDLE));
    pthread_mutex_unlock(&app->queue_lock);
}

COUNTED static void submit(struct app *app, struct lane *l, uint32_t s)
{
    submit_commands(app, l, s);
}

COUNTED static void warmup_submit(struct app *app, struct lane *l, uint32_t s)
{
    submit_commands(app, l, s);
}

/* Adds the thread's CPU time spent recording and submitting to the lane's
 * counters (the wait for the fence is left out). */
static void frame(struct app *app, struct lane *l, bool timed)
{
    uint64_t t0 = thread_cpu_ns();
    GZ_VK_CHECK(vkResetCommandPool(app->vk.device, l->pool, 0));
    for (uint32_t i = 0; i < app->cmdbufs; i++)
        (timed ? record : warmup_record)(app, l, l->cb[i]);
    uint64_t t1 = thread_cpu_ns();
    for (uint32_t s = 0; s < app->submits; s++)
        (timed ? submit : warmup_submit)(app, l, s);
    uint64_t t2 = thread_cpu_ns();
    if (timed) {
        l->record_ns += t1 - t0;
        l->submit_ns += t2 - t1;
    }
    GZ_VK_CHECK(vkWaitForFences(app->vk.device, 1, &l->fence, VK_TRUE, UINT64_MAX));
    GZ_VK_CHECK(vkResetFences(app->vk.device, 1, &l->fence));
}

static void *lane_main(void *arg)
{
    struct lane *l = arg;
    struct app *app = l->app;
    l->tid = syscall(SYS_gettid);
    uint64_t t0 = 0;
    for (uint32_t f = 0; f < app->warmup + app->frames; f++) {
        if (f == app->warmup)
            t0 = thread_cpu_ns();
        pthread_barrier_wait(&app->start);
        frame(app, l, f >= app->warmup);
        pthread_barrier_wait(&app->done);
    }
    l->cpu_ns = thread_cpu_ns() - t0;
    return NULL;
}

static uint32_t arg_u32(int argc, char **argv, const char *name, uint32_t def, uint32_t max)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], name))
            continue;
        char *end;
        unsigned long v = strtoul(argv[i + 1], &end, 10);
        if (*end || v < 1 || v > max) {
            fprintf(stderr, "gz-bench-vk-frame-cpu: %s wants 1..%u\n", name, max);
            exit(2);
        }
        return (uint32_t)v;
    }
    return def;
}

int main(int argc, char **argv)
{
    static struct app app;
    app.threads = arg_u32(argc, argv, "--threads", 4, MAX_THREADS);
    app.cmdbufs = arg_u32(argc, argv, "--cmdbufs", 16, MAX_CMDBUFS);
    app.submits = arg_u32(argc, argv, "--submits", 4, MAX_CMDBUFS);
    app.frames = arg_u32(argc, argv, "--frames", 30, 1000000);
    /* Untimed frames first: the layer records its own timestamp command
     * buffers once per ring slot on first use, a start-up cost that the
     * steady state does not pay. */
    app.warmup = arg_u32(argc, argv, "--warmup", 30, 1000000);
    if (app.cmdbufs % app.submits) {
        fprintf(stderr, "gz-bench-vk-frame-cpu: --cmdbufs must be a multiple of --submits\n");
        return 2;
    }
    setup_instance_device(&app);
    setup_pipeline(&app);
    pthread_mutex_init(&app.queue_lock, NULL);
    pthread_barrier_init(&app.start, NULL, app.threads + 1);
    pthread_barrier_init(&app.done, NULL, app.threads + 1);
    for (uint32_t t = 0; t < app.threads; t++)
        setup_lane(&app, &app.lanes[t]);
    for (uint32_t t = 0; t < app.threads; t++)
        if (pthread_create(&app.lanes[t].thread, NULL, lane_main, &app.lanes[t])) {
            fprintf(stderr, "gz-bench-vk-frame-cpu: cannot start a thread\n");
            return 2;
        }
    uint64_t t0 = 0;
    for (uint32_t f = 0; f < app.warmup + app.frames; f++) {
        if (f == app.warmup)
            t0 = thread_cpu_ns();
        pthread_barrier_wait(&app.start);
        pthread_barrier_wait(&app.done);
    }
    uint64_t total = thread_cpu_ns() - t0, recording = 0, submitting = 0;
    for (uint32_t t = 0; t < app.threads; t++) {
        pthread_join(app.lanes[t].thread, NULL);
        total += app.lanes[t].cpu_ns;
        recording += app.lanes[t].record_ns;
        submitting += app.lanes[t].submit_ns;
    }
    printf("cpu_ns_per_frame=%llu record_ns_per_frame=%llu submit_ns_per_frame=%llu frames=%u "
           "cmdbufs_per_frame=%u submits_per_frame=%u",
           (unsigned long long)(total / app.frames), (unsigned long long)(recording / app.frames),
           (unsigned long long)(submitting / app.frames),
           app.frames, app.threads * app.cmdbufs,
           app.threads * app.submits);
    printf(" lane_tids=");
    for (uint32_t t = 0; t < app.threads; t++)
        printf("%s%ld", t ? "," : "", app.lanes[t].tid);
    printf("\n");

    GZ_VK_CHECK(vkDeviceWaitIdle(app.vk.device));
    for (uint32_t t = 0; t < app.threads; t++) {
        struct lane *l = &app.lanes[t];
        vkDestroyFence(app.vk.device, l->fence, NULL);
        vkDestroyCommandPool(app.vk.device, l->pool, NULL);
        vkDestroyBuffer(app.vk.device, l->src, NULL);
        vkDestroyBuffer(app.vk.device, l->dst, NULL);
        vkFreeMemory(app.vk.device, l->mem, NULL);
    }
    vkDestroyDescriptorPool(app.vk.device, app.desc_pool, NULL);
    vkDestroyPipeline(app.vk.device, app.pipeline, NULL);
    vkDestroyPipelineLayout(app.vk.device, app.pipe_layout, NULL);
    vkDestroyDescriptorSetLayout(app.vk.device, app.set_layout, NULL);
    gz_min_vk_close(&app.vk);
    pthread_barrier_destroy(&app.start);
    pthread_barrier_destroy(&app.done);
    pthread_mutex_destroy(&app.queue_lock);
    return 0;
}
