/* The API test program: TracyVk… macros from the INSTALLED headers, built
 * by test_api.py as C (scoped zones through cleanup) and as C++ (RAII),
 * with and without GPUZONES_ENABLE. Lines that the trace's source
 * locations must point at carry an "@Name" comment.
 *
 *   api-zones MODE [frames]
 * MODE: zones | threads | end-twice | destroyed | overflow | collect-not-recording
 *       | churn N (N more contexts, each created, one zone, destroyed; prints
 *         "churn I t0 t1" and "rss FIRST LAST" in KiB, FIRST after N/10)
 *       | wrap F (F frames of WRAP_ZONES zones each, a collect, submit and
 *         wait each: the ring wraps around F times)
 *       | pipelined F (F frames of PIPE_ZONES zones recorded into F command
 *         buffers, each with its collect, submitted together: more collects
 *         in flight than copy regions; prints "pipelined t0 t1")
 * Built with -DAPI_SYMBOL_TABLE it makes its context with the symbol-table
 * form (TracyVkContextCalibrated from vkGetInstanceProcAddr), with
 * -DAPI_HOST_CALIBRATED with TracyVkContextHostCalibrated; else with the
 * plain TracyVkContext (uncalibrated).
 * Prints "frame N t0 t1" (host ns around each frame's submit and wait). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef API_SYMBOL_TABLE
#define GPUZONES_VK_USE_SYMBOL_TABLE 1
#endif
#include "api_vk.h"
#include "gpuzones/gpuzones.h"
#include "gpuzones/vulkan.h"

#define OVERFLOW_ZONES 3000
#define WRAP_ZONES 2000
#define PIPE_ZONES 40

static void record_frame(TracyVkCtx ctx, api_gpu *g, unsigned f)
{
    TracyVkZoneC(ctx, g->cb, "Outer", 0x00ff00); /*@Outer*/
    {
        TracyVkZone(ctx, g->cb, "Fill"); /*@Fill*/
        api_fill(g, f + 1);
    }
    api_barrier(g);
    {
        char name[32];
        snprintf(name, sizeof name, "Pass %u", f);
        TracyVkZoneTransient(ctx, pass, g->cb, name, 1); /*@Pass*/
        TracyVkNamedZone(ctx, off, g->cb, "Inactive", 0);
        TracyVkZoneBegin(ctx, manual, g->cb, "Manual"); /*@Manual*/
        api_copy(g);
        TracyVkZoneEnd(manual);
    }
    api_barrier(g);
}

#define THREADS 4
#define THREAD_ZONES 200

typedef struct worker {
    TracyVkCtx ctx;
    api_gpu *g;
    VkCommandPool pool;
    VkCommandBuffer cb;
    unsigned index;
} worker;

/* Zones from several threads at once, each in its own command buffer. */
static void *record_thread(void *arg)
{
    worker *w = (worker *)arg;
    TracyVkCtx ctx = w->ctx;
    char name[32];
    snprintf(name, sizeof name, "Thread %u", w->index);
    TracyVkZoneTransient(ctx, outer, w->cb, name, 1);
    for (unsigned i = 0; i < THREAD_ZONES; i++) {
        TracyVkZone(ctx, w->cb, "Work");
        api_fill_cb(w->g, w->cb, i);
    }
    return NULL;
}

static void frame(api_gpu *g, unsigned f)
{
    uint64_t t0, t1;
    api_submit_wait(g, &t0, &t1);
    printf("frame %u %llu %llu\n", f, (unsigned long long)t0, (unsigned long long)t1);
}

/* One more collect, alone in a submission: a collect's copy does not wait
 * for timestamps (it must never wait for work submitted later), so a zone
 * still running when the copy ran (lavapipe's timestamps can land after a
 * barrier) is read by the next one, as with Tracy. */
static void last_collect(TracyVkCtx ctx, api_gpu *g)
{
    api_begin(g);
    TracyVkCollect(ctx, g->cb);
    frame(g, 99);
}

/* The context of the build's form (plain, symbol table, host-calibrated). */
static TracyVkCtx make_context(api_gpu *g)
{
#if defined(API_SYMBOL_TABLE)
    TracyVkCtx ctx = TracyVkContextCalibrated(g->instance, g->pd, g->device, g->queue, g->init_cb,
                                              vkGetInstanceProcAddr, vkGetDeviceProcAddr);
#elif defined(API_HOST_CALIBRATED)
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT gpdctd =
        (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)vkGetInstanceProcAddr(
            g->instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
    PFN_vkGetCalibratedTimestampsEXT gct = (PFN_vkGetCalibratedTimestampsEXT)vkGetDeviceProcAddr(
        g->device, "vkGetCalibratedTimestampsEXT");
    PFN_vkResetQueryPool reset = g->host_query_reset
                                     ? (PFN_vkResetQueryPool)vkGetDeviceProcAddr(g->device,
                                                                                 "vkResetQueryPool")
                                     : NULL;
    TracyVkCtx ctx = TracyVkContextHostCalibrated(g->pd, g->device, reset, gpdctd, gct);
#else
    TracyVkCtx ctx = TracyVkContext(g->pd, g->device, g->queue, g->init_cb);
#endif
    return ctx;
}

static long rss_kib(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2)
        abort();
    fclose(f);
    return resident * 4;
}

/* Contexts created and destroyed one after the other, each with a zone. */
static void churn(api_gpu *g, unsigned n)
{
    long first = 0;
    for (unsigned i = 0; i < n; i++) {
        TracyVkCtx c = make_context(g);
        TracyVkContextName(c, "churn", 5);
        uint64_t t0, t1, t2, t3;
        api_begin(g);
        {
            TracyVkZone(c, g->cb, "Churn");
            api_fill(g, i);
        }
        TracyVkCollect(c, g->cb);
        api_submit_wait(g, &t0, &t1);
        api_begin(g);
        TracyVkCollect(c, g->cb); /* as last_collect: a zone read late */
        api_submit_wait(g, &t2, &t3);
        TracyVkDestroy(c);
        printf("churn %u %llu %llu\n", i, (unsigned long long)t0, (unsigned long long)t1);
        if (i == n / 10)
            first = rss_kib();
    }
    printf("rss %ld %ld\n", first, rss_kib());
}

/* Frames submitted together: their collects are all in flight at once. */
static void pipelined(TracyVkCtx ctx, api_gpu *g, unsigned frames)
{
    VkCommandPool *pools = (VkCommandPool *)calloc(frames, sizeof *pools);
    VkCommandBuffer *cbs = (VkCommandBuffer *)calloc(frames, sizeof *cbs);
    if (!pools || !cbs)
        abort();
    for (unsigned f = 0; f < frames; f++) {
        api_thread_cb(g, &pools[f], &cbs[f]);
        for (unsigned z = 0; z < PIPE_ZONES; z++) {
            TracyVkZone(ctx, cbs[f], "Piped");
            api_fill_cb(g, cbs[f], z);
        }
        TracyVkCollect(ctx, cbs[f]);
        vkEndCommandBuffer(cbs[f]);
    }
    VkSubmitInfo si;
    memset(&si, 0, sizeof si); /* C and C++ alike */
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = frames;
    si.pCommandBuffers = cbs;
    uint64_t t0 = api_now_ns();
    if (vkQueueSubmit(g->queue, 1, &si, g->fence) != VK_SUCCESS ||
        vkWaitForFences(g->device, 1, &g->fence, VK_TRUE, UINT64_MAX) != VK_SUCCESS)
        abort();
    uint64_t t1 = api_now_ns();
    vkResetFences(g->device, 1, &g->fence);
    printf("pipelined %llu %llu\n", (unsigned long long)t0, (unsigned long long)t1);
    for (unsigned f = 0; f < frames; f++)
        vkDestroyCommandPool(g->device, pools[f], NULL);
    free(pools);
    free(cbs);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "zones";
    unsigned frames = argc > 2 ? (unsigned)atoi(argv[2]) : 3;
    api_gpu g;
    api_gpu_init(&g, 16);
    TracyVkCtx ctx = make_context(&g);
    TracyVkContextName(ctx, "api test", 8);
    printf("enabled %d\n", (int)GpuzonesIsEnabled());

    if (!strcmp(mode, "zones")) {
        for (unsigned f = 0; f < frames; f++) {
            api_begin(&g);
            record_frame(ctx, &g, f);
            TracyVkCollect(ctx, g.cb);
            frame(&g, f);
            FrameMark;
        }
    } else if (!strcmp(mode, "threads")) {
        worker w[THREADS];
        pthread_t th[THREADS];
        VkCommandBuffer cbs[THREADS];
        for (unsigned i = 0; i < THREADS; i++) {
            w[i].ctx = ctx;
            w[i].g = &g;
            w[i].index = i;
            api_thread_cb(&g, &w[i].pool, &w[i].cb);
            cbs[i] = w[i].cb;
        }
        for (unsigned i = 0; i < THREADS; i++)
            pthread_create(&th[i], NULL, record_thread, &w[i]);
        for (unsigned i = 0; i < THREADS; i++)
            pthread_join(th[i], NULL);
        api_begin(&g);
        TracyVkCollect(ctx, g.cb); /* submitted after the threads' work */
        api_submit_all(&g, cbs, THREADS);
        for (unsigned i = 0; i < THREADS; i++)
            vkDestroyCommandPool(g.device, w[i].pool, NULL);
    } else if (!strcmp(mode, "end-twice")) {
        api_begin(&g);
        TracyVkZoneBegin(ctx, twice, g.cb, "Twice");
        api_fill(&g, 7);
        TracyVkZoneEnd(twice);
        TracyVkZoneEnd(twice);
        TracyVkCollect(ctx, g.cb);
        frame(&g, 0);
    } else if (!strcmp(mode, "overflow")) {
        api_begin(&g);
        for (int i = 0; i < OVERFLOW_ZONES; i++) {
            TracyVkZone(ctx, g.cb, "Many");
        }
        TracyVkCollect(ctx, g.cb);
        frame(&g, 0);
        /* The next collect resets what the first one read: the ring is
         * free again after it. */
        api_begin(&g);
        TracyVkCollect(ctx, g.cb);
        frame(&g, 1);
        api_begin(&g);
        {
            TracyVkZone(ctx, g.cb, "After");
            api_fill(&g, 1);
        }
        TracyVkCollect(ctx, g.cb);
        frame(&g, 2);
    } else if (!strcmp(mode, "churn")) {
        churn(&g, frames);
    } else if (!strcmp(mode, "wrap")) {
        for (unsigned f = 0; f < frames; f++) {
            api_begin(&g);
            for (unsigned z = 0; z < WRAP_ZONES; z++) {
                TracyVkZone(ctx, g.cb, "Wrap");
                api_fill(&g, z);
            }
            TracyVkCollect(ctx, g.cb);
            frame(&g, f);
        }
    } else if (!strcmp(mode, "pipelined")) {
        pipelined(ctx, &g, frames);
    } else if (!strcmp(mode, "collect-not-recording")) {
        api_begin(&g);
        {
            TracyVkZone(ctx, g.cb, "Before");
            api_fill(&g, 1);
        }
        frame(&g, 0); /* ends g.cb: it is executable, not recording */
        TracyVkCollect(ctx, g.cb);
        api_begin(&g);
        TracyVkCollect(ctx, g.cb);
        frame(&g, 1);
    }

    if (!strcmp(mode, "destroyed")) {
        TracyVkDestroy(ctx);
        api_begin(&g);
        {
            TracyVkZone(ctx, g.cb, "Late");
            api_fill(&g, 1);
        }
        TracyVkCollect(ctx, g.cb);
        frame(&g, 0);
        TracyVkDestroy(ctx);
    } else {
        last_collect(ctx, &g);
        TracyVkDestroy(ctx);
    }
    api_gpu_destroy(&g);
    return 0;
}
