/* The device context: the queues' registry, how each family's results come
 * back, clock calibration (its calibrated-pair reader serves the explicit
 * context too), and the readback hook the worker calls. */
#include <stdlib.h>
#include <string.h>

#include "gz_calibration.h"
#include "gz_vk_internal.h"

/* Re-sample ten times a second: a sample costs a few microseconds, and
 * the drift is known (and zones released) 100 ms after the first tight one.
 * A sample keeps the tightest of up to CALIBRATION_TRIES reads (a thread
 * preempted inside one widens it), stopping at one within
 * CALIBRATION_GOOD_NS. The explicit context samples with these too. */
#define CALIBRATION_PERIOD_NS 100000000ull
#define CALIBRATION_TRIES 5u
#define CALIBRATION_GOOD_NS 1000u

static void report_untimed(gz_vk_device *dev);

static void collect_hook(void *user, bool final)
{
    gz_vk_device *dev = user;
    if (final)
        report_untimed(dev); /* a device the app never destroyed */
    gz_vk_calibrate(dev, final);
    pthread_mutex_lock(&dev->lock);
    uint32_t n = dev->nqueues;
    pthread_mutex_unlock(&dev->lock);
    for (uint32_t i = 0; i < n; i++)
        gz_vk_queue_collect(dev->queues[i], final);
    gz_vk_queries_recycle(dev);
}

gz_vk_queue_mode gz_vk_family_mode(const gz_vk_device *dev, uint32_t family)
{
    if (family >= dev->info.family_count || !dev->valid_bits[family])
        return GZ_VK_QUEUE_UNTIMED;
    uint32_t flags = dev->family_flags[family];
    /* Graphics and compute families may reset, copy and wait in command
     * buffers; the others (transfer, video) may only write timestamps:
     * their queries are reset and read on the host. */
    if (flags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT))
        return GZ_VK_QUEUE_COPY;
    bool writes = flags & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_VIDEO_DECODE_BIT_KHR |
                           0x00000040u /* VIDEO_ENCODE (a beta bit in older headers) */);
    return writes && dev->info.host_query_reset && dev->info.fns.GetQueryPoolResults
               ? GZ_VK_QUEUE_HOST
               : GZ_VK_QUEUE_UNTIMED;
}

bool gz_vk_family_can_copy(const gz_vk_device *dev, uint32_t family)
{
    return gz_vk_family_mode(dev, family) == GZ_VK_QUEUE_COPY;
}

gz_vk_readback gz_vk_family_readback(const gz_vk_device *dev, uint32_t family)
{
    /* Transfer-only families may not copy: their results are read on the
     * host, whatever the driver does with such reads. */
    return dev->readback == GZ_VK_READ_COPY && gz_vk_family_can_copy(dev, family)
               ? GZ_VK_READ_COPY
               : GZ_VK_READ_HOST;
}

void gz_vk_own_cmdbufs(gz_vk_device *dev, VkCommandBuffer *cbs, uint32_t n)
{
    /* Our command buffers are dispatchable objects the loader did not
     * make: give them the device's dispatch pointer. */
    for (uint32_t i = 0; dev->info.set_loader_data && i < n; i++)
        dev->info.set_loader_data(dev->info.device, cbs[i]);
}

/* Host reads, unless the driver's wait for the whole device in them
 * (lavapipe) asks for copies; GPUZONES_VK_READBACK forces either. */
static gz_vk_readback choose_readback(const gz_vk_device_info *info)
{
    switch (gz_client_vk_readback()) {
    case GZ_VK_READBACK_HOST:
        return GZ_VK_READ_HOST;
    case GZ_VK_READBACK_COPY:
        return GZ_VK_READ_COPY;
    default:
        return info->driver_reads_block ? GZ_VK_READ_COPY : GZ_VK_READ_HOST;
    }
}

gz_vk_device *gz_vk_device_new(const gz_vk_device_info *info)
{
    if (!gz_client_start())
        return NULL;
    uint32_t nfam = info->family_count ? info->family_count : 1;
    gz_vk_device *dev = calloc(1, sizeof *dev);
    uint32_t *bits = calloc(nfam, sizeof *bits);
    uint32_t *flags = calloc(nfam, sizeof *flags);
    if (!dev || !bits || !flags) {
        free(dev);
        free(bits);
        free(flags);
        gz_log("out of memory for a device context; this device is not timed");
        return NULL;
    }
    dev->info = *info;
    if (info->family_count) {
        memcpy(bits, info->family_valid_bits, info->family_count * sizeof *bits);
        if (info->family_flags)
            memcpy(flags, info->family_flags, info->family_count * sizeof *flags);
    }
    dev->valid_bits = bits;
    dev->family_flags = flags;
    dev->info.family_valid_bits = bits;
    dev->info.family_flags = flags;
    dev->level = gz_client_level();
    dev->readback = choose_readback(info);
    pthread_mutex_init(&dev->lock, NULL);
    pthread_mutex_init(&dev->use_lock, NULL);
    pthread_mutex_init(&dev->spare_lock, NULL);
    if (!gz_vk_queries_init(dev)) {
        pthread_mutex_destroy(&dev->lock);
        pthread_mutex_destroy(&dev->use_lock);
        free(dev);
        free(bits);
        free(flags);
        gz_log("out of memory for a device context; this device is not timed");
        return NULL;
    }
    if (!gz_vk_can_calibrate(dev))
        gz_vk_sync_prepare();
    dev->collector = gz_collector_add(collect_hook, dev);
    return dev;
}

/* Whether a wait for these fences lasts until the work submitted after a
 * sync point carried by the submit whose fence was f has run. */
static bool waits_for(VkFence f, const VkFence *fences, uint32_t n, bool all)
{
    if (!f)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (fences[i] == f)
            return all || n == 1;
    return false;
}

void gz_vk_before_wait(gz_vk_device *dev, gz_vk_queue *q, const VkFence *fences,
                       uint32_t nfences, bool all, bool present)
{
    if (!dev || gz_vk_can_calibrate(dev))
        return;
    if (q) {
        gz_vk_sync_wait(q, !present); /* a queue's idle covers everything on it */
        return;
    }
    pthread_mutex_lock(&dev->lock);
    uint32_t n = dev->nqueues;
    pthread_mutex_unlock(&dev->lock);
    for (uint32_t i = 0; i < n; i++) {
        gz_vk_queue *x = dev->queues[i];
        gz_vk_sync_wait(x, fences ? waits_for(x->sync.app_fence, fences, nfences, all) : true);
    }
}

void gz_vk_after_wait(gz_vk_device *dev, gz_vk_queue *q, const VkFence *fences,
                      uint32_t nfences, bool all, uint64_t done_ns)
{
    if (!dev)
        return;
    if (q) {
        gz_vk_queue_waited(q, NULL, 0, false, done_ns);
        return;
    }
    pthread_mutex_lock(&dev->lock);
    uint32_t n = dev->nqueues;
    pthread_mutex_unlock(&dev->lock);
    for (uint32_t i = 0; i < n; i++)
        gz_vk_queue_waited(dev->queues[i], fences, nfences, all, done_ns);
}

void gz_vk_device_collect(gz_vk_device *dev)
{
    pthread_mutex_lock(&dev->lock);
    uint32_t n = dev->nqueues;
    pthread_mutex_unlock(&dev->lock);
    for (uint32_t i = 0; i < n; i++)
        gz_vk_queue_collect(dev->queues[i], false);
}

/* Zones that could not be timed, once per device, kind and reason. */
static void report_untimed(gz_vk_device *dev)
{
    static const char *const why[GZ_VK_UNTIMED_COUNT] = {
        [GZ_VK_UNTIMED_FAMILY] = "recorded for a queue family without usable timestamps",
        [GZ_VK_UNTIMED_SIMULTANEOUS] = "recorded in SIMULTANEOUS_USE secondary command buffers "
                                       "(or primaries of transfer-only queue families), whose "
                                       "runs may overlap with nothing between them to reset "
                                       "their timestamps",
        [GZ_VK_UNTIMED_POOL] = "the timestamp queries were exhausted (command buffers recorded "
                               "and kept without being submitted?)",
        [GZ_VK_UNTIMED_TOO_MANY] = "more timestamps in one command buffer than the layer keeps "
                                   "(65536)",
        [GZ_VK_UNTIMED_SUSPENDED] = "between a render pass suspended at the end of one command "
                                    "buffer and its resumption in the next, where no "
                                    "timestamp may be written",
        [GZ_VK_UNTIMED_MULTIVIEW] = "inside a multiview subpass with more views than the layer "
                                    "reserves queries for (16)",
        [GZ_VK_UNTIMED_PROTECTED] = "recorded in protected command buffers, where queries are "
                                    "not allowed",
        [GZ_VK_UNTIMED_DEVICE_GROUP] = "in batches with device masks (VkDeviceGroupSubmitInfo, or "
                                       "per command buffer masks), which the layer passes on "
                                       "untouched",
        [GZ_VK_UNTIMED_REUSED] = "a command buffer without SIMULTANEOUS_USE was submitted "
                                 "again while an earlier submission of it was still running "
                                 "(which Vulkan does not allow); that earlier run's timestamps "
                                 "were overwritten",
        [GZ_VK_UNTIMED_SECONDARY_CONTENTS] = "in a render pass subpass whose contents are "
                                             "secondary command buffers, where the primary "
                                             "may record nothing but their execution",
        [GZ_VK_UNTIMED_OVERLAP] = "a SIMULTANEOUS_USE command buffer was submitted again while "
                                  "its previous execution was still running (both write the "
                                  "same timestamps)",
    };
    for (uint32_t k = GZ_VK_UNTIMED_FAMILY; k < GZ_VK_UNTIMED_COUNT; k++) {
        uint64_t n = __atomic_exchange_n(&dev->untimed[k], 0, __ATOMIC_RELAXED);
        if (n)
            gz_log("%llu debug-label zones on %s were not timed: %s", (unsigned long long)n,
                   dev->info.device_name, why[k]);
        n = __atomic_exchange_n(&dev->untimed_passes[k], 0, __ATOMIC_RELAXED);
        if (n)
            gz_log("%llu render pass and command zones on %s were not timed: %s",
                   (unsigned long long)n, dev->info.device_name, why[k]);
        n = __atomic_exchange_n(&dev->untimed_cmdbufs[k], 0, __ATOMIC_RELAXED);
        if (n)
            gz_log("%llu submission and command buffer zones on %s were not timed: %s",
                   (unsigned long long)n, dev->info.device_name, why[k]);
    }
}

void gz_vk_device_destroy(gz_vk_device *dev)
{
    if (!dev)
        return;
    /* First make sure the worker is not inside our collector (remove waits
     * for it), then read back what completed: the spec says all of the
     * device's work has completed by now. */
    gz_collector_remove(dev->collector);
    gz_vk_calibrate(dev, true);
    for (uint32_t i = 0; i < dev->nqueues; i++) {
        gz_vk_registry_remove(dev->queues[i]);
        /* The app's work has completed, but a driver may still be
         * finishing the signal of our timeline semaphore that came with it
         * (lavapipe's queue thread signals the app's fence first): our
         * objects go only once the queue is idle. Also after a loss: a
         * wait returns at once on a lost device (the spec's promise), and a
         * loss a layer below reported may have left the driver's queue
         * still at work on what went before. */
        if (dev->queues[i]->ring_ready)
            dev->info.fns.QueueWaitIdle(dev->queues[i]->handle);
        gz_vk_queue_collect(dev->queues[i], true);
    }
    for (uint32_t i = 0; i < dev->nqueues; i++)
        gz_vk_queue_destroy(dev->queues[i]);
    report_untimed(dev);
    gz_vk_recordings_destroy(dev);
    gz_vk_queries_destroy(dev);
    pthread_mutex_destroy(&dev->lock);
    pthread_mutex_destroy(&dev->use_lock);
    pthread_mutex_destroy(&dev->spare_lock);
    free(dev->valid_bits);
    free(dev->family_flags);
    free(dev);
}

gz_vk_queue *gz_vk_queue_get(gz_vk_device *dev, VkQueue handle, uint32_t family, uint32_t index)
{
    if (!dev)
        return NULL;
    pthread_mutex_lock(&dev->lock);
    gz_vk_queue *q = NULL;
    for (uint32_t i = 0; i < dev->nqueues && !q; i++)
        if (dev->queues[i]->handle == handle)
            q = dev->queues[i];
    if (!q && dev->nqueues < GZ_VK_MAX_QUEUES) {
        q = gz_vk_queue_new(dev, handle, family, index);
        if (q) {
            dev->queues[dev->nqueues++] = q;
            gz_vk_registry_add(q);
        }
    }
    pthread_mutex_unlock(&dev->lock);
    return q;
}

VkTimeDomainEXT gz_vk_pick_host_domain(const VkTimeDomainEXT *domains, uint32_t n)
{
    bool device = false, mono = false, raw = false;
    for (uint32_t i = 0; i < n; i++) {
        device |= domains[i] == VK_TIME_DOMAIN_DEVICE_EXT;
        mono |= domains[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
        raw |= domains[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT;
    }
    if (!device)
        return 0;
    return mono ? VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT : raw ? VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT : 0;
}

bool gz_vk_calibration_due(uint64_t *last_ns, bool force)
{
    uint64_t now = gz_host_now_ns();
    if (!force && now - *last_ns < CALIBRATION_PERIOD_NS)
        return false;
    *last_ns = now;
    return true;
}

typedef struct calib_reader {
    PFN_vkGetCalibratedTimestampsEXT get;
    VkDevice device;
    VkTimeDomainEXT host_domain;
    bool lost; /* a read returned VK_ERROR_DEVICE_LOST */
} calib_reader;

/* Reads one (device ticks, CLOCK_MONOTONIC ns) pair from the driver. */
static bool read_calibrated(void *user, gz_calib_pair *out)
{
    calib_reader *rd = user;
    VkCalibratedTimestampInfoEXT infos[2] = {
        {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
         .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT},
        {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
         .timeDomain = rd->host_domain},
    };
    uint64_t ts[2], deviation = 0, translation = 0;
    /* RAW is translated to MONOTONIC with their difference read just
     * before: fresh at every sample, and its own uncertainty widens the
     * pair's (a preemption between those reads can make a pair that looks
     * tight hundreds of microseconds wrong, and the fit would follow it). */
    int64_t mono_minus_raw = 0;
    if (rd->host_domain == VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT)
        mono_minus_raw = gz_host_mono_minus_raw(&translation);
    VkResult r = rd->get(rd->device, 2, infos, ts, &deviation);
    if (r != VK_SUCCESS) {
        rd->lost |= r == VK_ERROR_DEVICE_LOST;
        return false;
    }
    *out = (gz_calib_pair){.gpu_ns = ts[0],
                           .host_ns = (uint64_t)((int64_t)ts[1] + mono_minus_raw),
                           .deviation_ns = deviation + translation};
    return true;
}

bool gz_vk_sample_calibrated(PFN_vkGetCalibratedTimestampsEXT get, VkDevice device,
                             VkTimeDomainEXT host_domain, gz_calib_pair *best, bool *lost)
{
    calib_reader rd = {.get = get, .device = device, .host_domain = host_domain};
    bool ok = gz_calib_sample_best(read_calibrated, &rd, CALIBRATION_TRIES, CALIBRATION_GOOD_NS,
                                   best);
    if (lost)
        *lost = rd.lost;
    return ok;
}

/* This device's sample; a device lost on the way stops its timing. */
static bool sample(gz_vk_device *dev, gz_calib_pair *best)
{
    bool lost;
    bool ok = gz_vk_sample_calibrated(dev->info.fns.GetCalibratedTimestampsEXT, dev->info.device,
                                      dev->info.host_domain, best, &lost);
    if (lost && !gz_vk_device_lost(dev)) {
        gz_vk_device_set_lost(dev);
        gz_log("%s was lost (vkGetCalibratedTimestampsEXT); timing stops for this device",
               dev->info.device_name);
    }
    if (ok)
        return true;
    static int once;
    gz_log_once(&once, "vkGetCalibratedTimestampsEXT failed on %s; using submission bounds "
                       "instead",
                dev->info.device_name);
    return false;
}

static void emit_sample(uint16_t track, const gz_calib_pair *p)
{
    /* p->gpu_ns holds raw device ticks: the worker converts them with the
     * track's period like any other timestamp. */
    if (track)
        gz_emit_calib(track, p->gpu_ns, p->host_ns, p->deviation_ns);
}

bool gz_vk_can_calibrate(const gz_vk_device *dev)
{
    return dev->info.fns.GetCalibratedTimestampsEXT && dev->info.host_domain;
}

void gz_vk_calibrate_track(gz_vk_device *dev, uint16_t track)
{
    gz_calib_pair best;
    if (gz_vk_can_calibrate(dev) && sample(dev, &best))
        emit_sample(track, &best);
}

void gz_vk_calibrate(gz_vk_device *dev, bool force)
{
    if (!gz_vk_can_calibrate(dev) || gz_vk_device_lost(dev) ||
        !gz_vk_calibration_due(&dev->last_calibration_ns, force))
        return;
    gz_calib_pair best;
    if (!sample(dev, &best))
        return;
    pthread_mutex_lock(&dev->lock);
    for (uint32_t i = 0; i < dev->nqueues; i++)
        emit_sample(dev->queues[i]->track, &best);
    pthread_mutex_unlock(&dev->lock);
}
