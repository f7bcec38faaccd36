/* The explicit Vulkan context: creation from the app's handles and function
 * pointers (symbol table or volk: no libvulkan needed here), joining the
 * layer's queue track when the layer times the same VkQueue, clock
 * calibration (with the device context's reader), and the handles the
 * public API passes around. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_calibration.h"
#include "gz_vk_explicit.h"

/* Live contexts at once. A handle is no pointer: it is a slot of this table
 * and the slot's generation, (generation << SLOT_BITS) | slot, so that a
 * slot is used again by later contexts (a table whose entries were never
 * reused refused every context after the 256th created, destroyed or not)
 * while a destroyed context used again is still recognised and refused
 * rather than read after free or taken for the slot's next context. */
#define MAX_CONTEXTS 256u
#define SLOT_BITS 8u
_Static_assert(MAX_CONTEXTS == 1u << SLOT_BITS, "a slot index fits SLOT_BITS");
static struct {
    gz_vkx *impl; /* atomic; NULL: free (or destroyed) */
    uint64_t gen; /* atomic; the generation handed out with the slot last */
} handles[MAX_CONTEXTS];
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

gz_vkx *gz_vkx_from_handle(gpuzones_vk_ctx *h, const char *what)
{
    if (!h)
        return NULL;
    uintptr_t v = (uintptr_t)h;
    uint32_t slot = (uint32_t)(v & (MAX_CONTEXTS - 1));
    uint64_t gen = (uint64_t)(v >> SLOT_BITS);
    gz_vkx *c = __atomic_load_n(&handles[slot].gen, __ATOMIC_ACQUIRE) == gen
                    ? __atomic_load_n(&handles[slot].impl, __ATOMIC_ACQUIRE)
                    : NULL;
    if (!c) {
        static int once;
        gz_log_once(&once, "%s on a Vulkan context that was destroyed (or never created); "
                           "ignored",
                    what);
    }
    return c;
}

/* ---- calibration ------------------------------------------------------- */

/* The layer's reader and period (vk_device.c): one way to sample a device. */
void gz_vkx_calibrate(gz_vkx *c, bool force)
{
    if (c->shared || !c->host_domain || !gz_vk_calibration_due(&c->last_calibration_ns, force))
        return;
    gz_calib_pair p;
    if (!gz_vk_sample_calibrated(c->f.GetCalibratedTimestampsEXT, c->device, c->host_domain,
                                 &p, NULL)) {
        static int once;
        gz_log_once(&once, "vkGetCalibratedTimestampsEXT failed on %s; the explicit context "
                           "uses its start-up sync point and read-back bounds",
                    c->device_name);
        return;
    }
    gz_emit_calib(c->track, p.gpu_ns, p.host_ns, p.deviation_ns);
}

/* The host clock a calibrated pair can use, or 0. */
static VkTimeDomainEXT pick_host_domain(const gpuzones_vk_create_info *info,
                                        PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT gtd)
{
    VkTimeDomainEXT domains[16];
    uint32_t n = 16;
    if (!gtd || gtd(info->physical_device, &n, domains) < 0)
        return 0;
    return gz_vk_pick_host_domain(domains, n);
}

/* ---- creation ---------------------------------------------------------- */

/* Every function the list marks as an explicit context's, through the app's
 * vkGetDeviceProcAddr; false when one is missing. */
static bool load_device_fns(gz_vkx *c, PFN_vkGetDeviceProcAddr gdpa)
{
    bool all = true;
#define GZ_VK_FN(name, use)                                                                        \
    if ((use) & GZ_VK_FN_EXPLICIT) {                                                               \
        c->f.name = (PFN_vk##name)gdpa(c->device, "vk" #name);                                     \
        all = all && c->f.name;                                                                    \
    }
#define GZ_VK_HOOK GZ_VK_FN
#include "gz_vk_fns.h"
    return all;
}

/* Without the queue's family (a VkQueue does not tell it), the smallest
 * nonzero timestampValidBits of the graphics and compute families: fewer
 * bits than the counter has only make the unwrap see more wraps, which the
 * worker's causality-based unwrap resolves. */
static uint32_t valid_bits_of(PFN_vkGetPhysicalDeviceQueueFamilyProperties gqfp, VkPhysicalDevice pd)
{
    VkQueueFamilyProperties props[32];
    uint32_t n = 32, bits = 0;
    gqfp(pd, &n, props);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = props[i].timestampValidBits;
        if ((props[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) && b &&
            (!bits || b < bits))
            bits = b;
    }
    return bits;
}

static void free_arrays(gz_vkx *c)
{
    free(c->state);
    free(c->seq);
    free(c->srcloc);
    free(c->begin);
    free(c->end);
    free(c->have);
    free(c->scratch);
}

/* One submission of cmdbuf that resets the pool and writes the sync
 * query; the host times around its submit and wait bracket the timestamp. */
static bool bracket_once(gz_vkx *c, VkQueue queue, VkCommandBuffer cb, uint64_t *ticks,
                         uint64_t *before, uint64_t *after)
{
    const gz_vk_fns *f = &c->f;
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (f->BeginCommandBuffer(cb, &begin) != VK_SUCCESS)
        return false;
    f->CmdResetQueryPool(cb, c->pool, 0, GZ_VKX_CALIB_QUERY + 1);
    f->CmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->pool, GZ_VKX_CALIB_QUERY);
    uint32_t entry = GZ_VKX_COPIES * GZ_VKX_REGION;
    gz_vk_cmd_copy_results(f, cb, c->pool, GZ_VKX_CALIB_QUERY, 1, &c->buf, entry);
    if (f->EndCommandBuffer(cb) != VK_SUCCESS)
        return false;
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cb};
    gz_vk_hostbuf_clear(&c->buf, entry, 1);
    *before = gz_host_now_ns();
    if (f->QueueSubmit(queue, 1, &submit, VK_NULL_HANDLE) != VK_SUCCESS ||
        f->QueueWaitIdle(queue) != VK_SUCCESS)
        return false;
    *after = gz_host_now_ns();
    return gz_vk_hostbuf_read(&c->buf, entry, 1, ticks);
}

/* Resets the pool and, for a context without calibrated pairs, takes the
 * start-up sync point: the narrowest of a few brackets (a descheduled
 * thread widens one), as Tracy's contexts do with one. Leaves cmdbuf
 * executable. */
#define SYNC_TRIES 5
#define SYNC_GOOD_NS 50000ull
static bool first_submit(gz_vkx *c, VkQueue queue, VkCommandBuffer cb, bool sync_point)
{
    uint64_t best_ticks = 0, best_before = 0, best_after = UINT64_MAX;
    for (int i = 0; i < (sync_point ? SYNC_TRIES : 1); i++) {
        uint64_t ticks, before, after;
        if (!bracket_once(c, queue, cb, &ticks, &before, &after))
            return false;
        if (after - before < best_after - best_before) {
            best_ticks = ticks;
            best_before = before;
            best_after = after;
        }
        if (best_after - best_before <= SYNC_GOOD_NS)
            break;
    }
    if (sync_point)
        gz_emit_sync_point(c->track, best_ticks, best_before, best_after);
    return true;
}

static void collect_hook(void *user, bool final)
{
    gz_vkx *c = user;
    gz_vkx_calibrate(c, false);
    pthread_mutex_lock(&c->lock);
    gz_vkx_harvest(c, final);
    pthread_mutex_unlock(&c->lock);
}

static void release(gz_vkx *c)
{
    gz_vk_hostbuf_destroy_on(&c->f, c->device, &c->buf);
    if (c->pool)
        c->f.DestroyQueryPool(c->device, c->pool, NULL);
    free_arrays(c);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static gz_vkx *create(const gpuzones_vk_create_info *info)
{
    PFN_vkGetInstanceProcAddr gipa = info->get_instance_proc_addr;
    PFN_vkGetDeviceProcAddr gdpa = info->get_device_proc_addr;
    if (!gdpa && gipa)
        gdpa = (PFN_vkGetDeviceProcAddr)gipa(info->instance, "vkGetDeviceProcAddr");
#define INST_FN(field, type, name) \
    type field = info->field ? info->field : gipa ? (type)gipa(info->instance, name) : NULL
    INST_FN(get_physical_device_properties, PFN_vkGetPhysicalDeviceProperties,
            "vkGetPhysicalDeviceProperties");
    INST_FN(get_queue_family_properties, PFN_vkGetPhysicalDeviceQueueFamilyProperties,
            "vkGetPhysicalDeviceQueueFamilyProperties");
    INST_FN(get_memory_properties, PFN_vkGetPhysicalDeviceMemoryProperties,
            "vkGetPhysicalDeviceMemoryProperties");
#undef INST_FN
    if (!gdpa || !get_physical_device_properties || !get_queue_family_properties ||
        !get_memory_properties || !info->physical_device || !info->device) {
        gz_log("TracyVkContext: a handle or a Vulkan entry point is missing (pass "
               "vkGetInstanceProcAddr and the VkInstance, or vkGetDeviceProcAddr); no context");
        return NULL;
    }
    if (!info->queue != !info->cmdbuf) {
        gz_log("TracyVkContext: give both a queue and a command buffer (or neither for the "
               "host-calibrated form); no context");
        return NULL;
    }

    gz_vkx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->device = info->device;
    pthread_mutex_init(&c->lock, NULL);
    c->state = calloc(GZ_VKX_SLOTS, 1);
    c->have = calloc(GZ_VKX_SLOTS, 1);
    c->seq = calloc(GZ_VKX_SLOTS, sizeof *c->seq);
    c->srcloc = calloc(GZ_VKX_SLOTS, sizeof *c->srcloc);
    c->begin = calloc(GZ_VKX_SLOTS, sizeof *c->begin);
    c->end = calloc(GZ_VKX_SLOTS, sizeof *c->end);
    if (!c->state || !c->have || !c->seq || !c->srcloc || !c->begin || !c->end ||
        !load_device_fns(c, gdpa)) {
        gz_log("TracyVkContext: out of memory or device functions missing; no context");
        release(c);
        return NULL;
    }

    VkPhysicalDeviceProperties props;
    get_physical_device_properties(info->physical_device, &props);
    snprintf(c->device_name, sizeof c->device_name, "%s", props.deviceName);
    VkPhysicalDeviceMemoryProperties memory;
    get_memory_properties(info->physical_device, &memory);

    /* The layer's queue track when the layer times this queue. */
    gz_vk_queue_share share = {0};
    c->shared = info->queue && gz_vk_queue_find(info->queue, &share);
    uint32_t bits = c->shared ? share.valid_bits
                              : valid_bits_of(get_queue_family_properties, info->physical_device);
    if (!bits) {
        gz_log("TracyVkContext: %s has no timestamps (timestampValidBits = 0); no context",
               c->device_name);
        release(c);
        return NULL;
    }

    PFN_vkResetQueryPool host_reset = info->reset_query_pool;
    if (!host_reset && c->shared && share.host_query_reset)
        host_reset = (PFN_vkResetQueryPool)gdpa(c->device, "vkResetQueryPool");
    c->f.ResetQueryPool = host_reset;
    c->host_reset = host_reset != NULL;

    if (info->calibrated && !c->shared) {
        PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT gtd = info->get_time_domains;
        c->f.GetCalibratedTimestampsEXT = info->get_calibrated_timestamps;
        if (!gtd && gipa)
            gtd = (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)gipa(
                info->instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
        if (!c->f.GetCalibratedTimestampsEXT)
            c->f.GetCalibratedTimestampsEXT =
                (PFN_vkGetCalibratedTimestampsEXT)gdpa(c->device, "vkGetCalibratedTimestampsEXT");
        if (c->f.GetCalibratedTimestampsEXT)
            c->host_domain = pick_host_domain(info, gtd);
        if (!c->host_domain)
            gz_log("TracyVkContextCalibrated: %s offers no calibrated DEVICE + CLOCK_MONOTONIC"
                   "[_RAW] timestamps (is VK_EXT_calibrated_timestamps enabled?); using a "
                   "sync point and read-back bounds instead",
                   c->device_name);
    }
    if (!info->queue && !c->host_domain) {
        gz_log("TracyVkContextHostCalibrated: needs calibrated timestamps; no context");
        release(c);
        return NULL;
    }
    if (!info->queue && !c->host_reset) {
        gz_log("TracyVkContextHostCalibrated: vkResetQueryPool is missing; no context");
        release(c);
        return NULL;
    }

    VkQueryPoolCreateInfo pool_info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                       .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                       .queryCount = GZ_VKX_CALIB_QUERY + 1};
    if (c->f.CreateQueryPool(c->device, &pool_info, NULL, &c->pool) != VK_SUCCESS ||
        !gz_vk_hostbuf_create_on(&c->f, c->device, &memory,
                                 GZ_VKX_COPIES * GZ_VKX_REGION + 1, &c->buf)) {
        gz_log("TracyVkContext: cannot create the timestamp queries on %s; no context",
               c->device_name);
        release(c);
        return NULL;
    }

    if (c->shared) {
        c->track = share.track;
    } else {
        char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE + 32];
        snprintf(name, sizeof name, "TracyVk %.*s", (int)strcspn(c->device_name, "("),
                 c->device_name);
        c->track = gz_track_new_on_device(GZ_API_VULKAN, name, c->device_name,
                                          props.limits.timestampPeriod, bits, 0);
    }
    gz_vkx_calibrate(c, true);
    if (c->host_reset)
        c->f.ResetQueryPool(c->device, c->pool, 0, GZ_VKX_CALIB_QUERY + 1);
    if (info->queue && !first_submit(c, info->queue, info->cmdbuf, !c->shared && !c->host_domain)) {
        gz_log("TracyVkContext: the first submission on %s failed; no context", c->device_name);
        release(c);
        return NULL;
    }
    c->collector = gz_collector_add(collect_hook, c);
    return c;
}

gpuzones_vk_ctx *gpuzones_vk_context_create(const gpuzones_vk_create_info *info)
{
    if (!info || !gz_client_start())
        return NULL;
    gz_vkx *c = create(info);
    if (!c)
        return NULL;
    pthread_mutex_lock(&handles_lock);
    uint32_t i = 0;
    while (i < MAX_CONTEXTS && __atomic_load_n(&handles[i].impl, __ATOMIC_RELAXED))
        i++;
    uintptr_t h = 0;
    if (i < MAX_CONTEXTS) {
        /* A new generation: handles of the slot's earlier contexts no
         * longer match. */
        uint64_t gen = __atomic_load_n(&handles[i].gen, __ATOMIC_RELAXED) + 1;
        __atomic_store_n(&handles[i].gen, gen, __ATOMIC_RELEASE);
        __atomic_store_n(&handles[i].impl, c, __ATOMIC_RELEASE);
        h = (uintptr_t)(gen << SLOT_BITS) | i;
    }
    pthread_mutex_unlock(&handles_lock);
    if (!h) {
        gz_log("TracyVkContext: more than %u Vulkan contexts alive at once in this process; "
               "no context",
               MAX_CONTEXTS);
        gz_collector_remove(c->collector);
        release(c);
        return NULL;
    }
    return (gpuzones_vk_ctx *)h;
}

void gpuzones_vk_context_name(gpuzones_vk_ctx *h, const char *name, size_t len)
{
    gz_vkx *c = gz_vkx_from_handle(h, "TracyVkContextName");
    if (!c || !name || !len)
        return;
    if (c->shared) {
        /* The layer names the queue's track; one name per track. */
        static int once;
        gz_log_once(&once, "TracyVkContextName: the context shares the layer's queue track, "
                           "which keeps the queue's name");
        return;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < 255 ? len : 255), name);
    gz_track_set_name(c->track, buf);
}

void gpuzones_vk_context_destroy(gpuzones_vk_ctx *h)
{
    gz_vkx *c = gz_vkx_from_handle(h, "TracyVkDestroy");
    if (!c)
        return;
    uint32_t slot = (uint32_t)((uintptr_t)h & (MAX_CONTEXTS - 1));
    pthread_mutex_lock(&handles_lock);
    __atomic_store_n(&handles[slot].impl, NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&handles_lock);
    /* The worker may be inside our collector: remove waits for it. */
    gz_collector_remove(c->collector);
    pthread_mutex_lock(&c->lock);
    gz_vkx_harvest(c, true);
    gz_vkx_drop_pending(c);
    pthread_mutex_unlock(&c->lock);
    /* Every zone of a track of its own has been emitted (or counted): the
     * track ends. A shared track is the layer's queue's, which ends it. */
    if (!c->shared)
        gz_track_end(c->track);
    release(c);
}
