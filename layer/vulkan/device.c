/* vkCreateDevice / vkDestroyDevice and queues: enables what timing needs on
 * the app's device (host query reset, calibrated timestamps) without
 * breaking the app's own feature chain, and creates the device context.
 *
 * What the layer adds is decided before the one call down, from what the
 * device reports it supports: vkCreateDevice is never called twice. The
 * first call moves the loader's layer link on for every layer below, and a
 * second call would hand them a link already used up (each of them then
 * reads past the end of the chain). A failure is the app's to handle. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_chain_sizes.h"
#include "gz_layer.h"

#ifndef GZ_CHAIN_SIZES
#define GZ_CHAIN_SIZES(X) /* no registry at build time: chains are never copied */
#endif

static uint32_t device_serial;
static uint32_t live_devices; /* atomic */

static VkLayerDeviceCreateInfo *find_device_info(const VkDeviceCreateInfo *info,
                                                 VkLayerFunction function)
{
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
            ((const VkLayerDeviceCreateInfo *)s)->function == function)
            return (VkLayerDeviceCreateInfo *)s;
    }
    return NULL;
}

static const void *find_struct(const void *chain, VkStructureType type)
{
    for (const VkBaseInStructure *s = chain; s; s = s->pNext)
        if (s->sType == type)
            return s;
    return NULL;
}

typedef struct device_exts {
    bool host_query_reset;
    bool timeline;
    bool calibrated_ext;
    bool calibrated_khr;
} device_exts;

static device_exts query_extensions(layer_instance *inst, VkPhysicalDevice phys)
{
    device_exts e = {0};
    uint32_t n = 0;
    if (inst->EnumerateDeviceExtensionProperties(phys, NULL, &n, NULL) != VK_SUCCESS || !n)
        return e;
    VkExtensionProperties *props = calloc(n, sizeof *props);
    if (!props)
        return e;
    if (inst->EnumerateDeviceExtensionProperties(phys, NULL, &n, props) >= VK_SUCCESS) {
        for (uint32_t i = 0; i < n; i++) {
            const char *name = props[i].extensionName;
            e.host_query_reset |= !strcmp(name, VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME);
            e.timeline |= !strcmp(name, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
            e.calibrated_ext |= !strcmp(name, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
            e.calibrated_khr |= !strcmp(name, "VK_KHR_calibrated_timestamps");
        }
    }
    free(props);
    return e;
}

static bool app_enabled(const VkDeviceCreateInfo *info, const char *name)
{
    for (uint32_t i = 0; i < info->enabledExtensionCount; i++)
        if (!strcmp(info->ppEnabledExtensionNames[i], name))
            return true;
    return false;
}

/* What the layer asks of the device on top of the app's VkDeviceCreateInfo.
 * The app's structures are never written to (they may be const, in
 * read-only memory, or shared by threads): a structure that must change is
 * copied, with every structure before it in the chain. */
#define MAX_COPIES 64
typedef struct device_plan {
    VkDeviceCreateInfo info;
    const char *exts[256];
    VkPhysicalDeviceHostQueryResetFeatures hqr; /* put first when the app has none */
    VkPhysicalDeviceTimelineSemaphoreFeatures timeline; /* the same */
    void *copies[MAX_COPIES];                   /* our copies of the app's structures */
    uint32_t ncopies;
    bool host_query_reset;
    bool use_ext_reset; /* vkResetQueryPoolEXT rather than the 1.2 core name */
    bool timeline_on;   /* timeline semaphores on */
    bool use_khr_timeline; /* vkGetSemaphoreCounterValueKHR rather than the core name */
    const char *calibrated; /* extension enabled for calibration, or NULL */
    bool added_hqr, added_timeline, added_calibrated; /* what the layer asked for beyond the app */
} device_plan;

static void plan_free(device_plan *p)
{
    for (uint32_t i = 0; i < p->ncopies; i++)
        free(p->copies[i]);
    p->ncopies = 0;
}

/* The size of a structure that may be in a VkDeviceCreateInfo chain; 0 for
 * one unknown to the headers we were built with. */
static size_t struct_size(VkStructureType type)
{
    switch ((int)type) {
#define SIZE(stype, name)                                                                          \
    case stype:                                                                                    \
        return sizeof(name);
        GZ_CHAIN_SIZES(SIZE)
#undef SIZE
    case VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO:
        return sizeof(VkLayerDeviceCreateInfo);
    default:
        return 0;
    }
}

/* Copies p->info's chain from its head up to target (one of its
 * structures), so that the copy of target may be changed; the rest of the
 * chain stays the app's. Returns the copy of target, or NULL when a
 * structure before it cannot be copied (unknown size, no memory). */
static void *copy_chain_to(device_plan *p, const void *target)
{
    const VkBaseInStructure *src = p->info.pNext;
    VkBaseOutStructure *prev = NULL, *head = NULL;
    uint32_t first = p->ncopies;
    for (; src; src = src->pNext) {
        size_t size = struct_size(src->sType);
        VkBaseOutStructure *c = size && p->ncopies < MAX_COPIES ? malloc(size) : NULL;
        if (!c) {
            while (p->ncopies > first)
                free(p->copies[--p->ncopies]);
            return NULL;
        }
        memcpy(c, src, size);
        p->copies[p->ncopies++] = c;
        if (prev)
            prev->pNext = c;
        else
            head = c;
        prev = c;
        if (src == target) {
            p->info.pNext = head;
            return c;
        }
    }
    return NULL; /* not in the chain: cannot happen */
}

static bool add_extension(device_plan *p, const char *name)
{
    if (app_enabled(&p->info, name))
        return true;
    if (p->info.enabledExtensionCount >= sizeof p->exts / sizeof p->exts[0])
        return false;
    p->exts[p->info.enabledExtensionCount++] = name;
    p->info.ppEnabledExtensionNames = p->exts;
    return true;
}

/* Which of the features the layer uses the device has. Only asked through
 * vkGetPhysicalDeviceFeatures2: without it (a Vulkan 1.0 instance without
 * VK_KHR_get_physical_device_properties2) neither the features nor the
 * extensions that bring them may be enabled. */
typedef struct device_features {
    bool host_query_reset, timeline;
} device_features;

static device_features query_features(layer_instance *inst, VkPhysicalDevice phys)
{
    device_features f = {0};
    if (!inst->has_gpdp2)
        return f;
    VkPhysicalDeviceTimelineSemaphoreFeatures ts = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    VkPhysicalDeviceHostQueryResetFeatures hqr = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES, .pNext = &ts};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &hqr};
    inst->GetPhysicalDeviceFeatures2(phys, &f2);
    f.host_query_reset = hqr.hostQueryReset;
    f.timeline = ts.timelineSemaphore;
    return f;
}

/* A feature the layer turns on: where its VkBool32 lives in its own
 * structure and in VkPhysicalDeviceVulkan12Features, and our structure for
 * it, filled in, to put first in the chain. */
typedef struct feature_ref {
    VkStructureType own_type;
    size_t own_offset;
    size_t v12_offset;
    VkBaseOutStructure *ours;
} feature_ref;

static VkBool32 *field(void *s, size_t offset)
{
    return (VkBool32 *)(void *)((char *)s + offset);
}

/* Turns a feature on: in the app's own structure where it has one (the 1.2
 * one where the device is 1.2, else the feature's own; copied), else in
 * ours put first. Returns whether it is on; *added: whether the layer turned
 * it on (not the app). */
static bool enable_feature(device_plan *p, const VkDeviceCreateInfo *app, bool core,
                           const feature_ref *f, bool *added)
{
    const void *v12 = find_struct(app->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    const void *own = find_struct(app->pNext, f->own_type);
    if (v12 && core) {
        if (*field((void *)v12, f->v12_offset))
            return true;
        void *c = copy_chain_to(
            p, find_struct(p->info.pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES));
        if (c)
            *field(c, f->v12_offset) = VK_TRUE;
        *added = c != NULL;
        return c != NULL;
    }
    if (own) {
        if (*field((void *)own, f->own_offset))
            return true;
        void *c = copy_chain_to(p, find_struct(p->info.pNext, f->own_type));
        if (c)
            *field(c, f->own_offset) = VK_TRUE;
        *added = c != NULL;
        return c != NULL;
    }
    if (v12)
        return false; /* the app's 1.2 structure excludes ours, and the feature is not core here */
    f->ours->pNext = (void *)p->info.pNext;
    p->info.pNext = f->ours;
    *added = true;
    return true;
}

static void plan_device(device_plan *p, layer_instance *inst, VkPhysicalDevice phys,
                        const VkDeviceCreateInfo *app, uint32_t device_api)
{
    memset(p, 0, sizeof *p);
    p->info = *app;
    if (app->enabledExtensionCount > sizeof p->exts / sizeof p->exts[0] - 4)
        return; /* absurdly many: leave the app's request alone */
    if (app->enabledExtensionCount)
        memcpy(p->exts, app->ppEnabledExtensionNames,
               app->enabledExtensionCount * sizeof(char *));
    device_exts e = query_extensions(inst, phys);
    device_features have = query_features(inst, phys);
    uint32_t api = inst->api_version < device_api ? inst->api_version : device_api;
    bool core = api >= VK_API_VERSION_1_2;

    if ((core || e.host_query_reset) && have.host_query_reset) {
        p->hqr = (VkPhysicalDeviceHostQueryResetFeatures){
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES,
            .hostQueryReset = VK_TRUE};
        feature_ref f = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES,
                         offsetof(VkPhysicalDeviceHostQueryResetFeatures, hostQueryReset),
                         offsetof(VkPhysicalDeviceVulkan12Features, hostQueryReset),
                         (VkBaseOutStructure *)&p->hqr};
        p->use_ext_reset = !core;
        p->host_query_reset = enable_feature(p, app, core, &f, &p->added_hqr);
        if (p->host_query_reset && !core)
            add_extension(p, VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME);
        if (!p->host_query_reset) {
            static int once;
            gz_log_once(&once, "the app's VkDeviceCreateInfo chain holds a structure gpuzones "
                               "does not know before its host query reset feature: left as it "
                               "is, so transfer-only queues are not timed and the layer resets "
                               "its queries with command buffers of its own");
        }
    }
    if ((core || e.timeline) && have.timeline) {
        p->timeline = (VkPhysicalDeviceTimelineSemaphoreFeatures){
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
            .timelineSemaphore = VK_TRUE};
        feature_ref f = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
                         offsetof(VkPhysicalDeviceTimelineSemaphoreFeatures, timelineSemaphore),
                         offsetof(VkPhysicalDeviceVulkan12Features, timelineSemaphore),
                         (VkBaseOutStructure *)&p->timeline};
        p->use_khr_timeline = !core;
        p->timeline_on = enable_feature(p, app, core, &f, &p->added_timeline);
        if (p->timeline_on && !core)
            add_extension(p, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
    }
    /* The application's own choice first; else the EXT name where the
     * device offers it: the same functions, and layers that predate the
     * KHR promotion warn on the KHR name (Debian 12's validation layer,
     * 1.3.239, below ours on NVIDIA's driver, which offers both). */
    const char *khr = "VK_KHR_calibrated_timestamps", *ext = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
    const char *pick = app_enabled(app, khr)                     ? khr
                       : app_enabled(app, ext)                   ? ext
                       : !inst->has_gpdp2                        ? NULL
                       : e.calibrated_ext                        ? ext
                       : e.calibrated_khr                        ? khr
                                                                 : NULL;
    if (pick && add_extension(p, pick)) {
        p->calibrated = pick;
        p->added_calibrated = !app_enabled(app, pick);
    }
}

static const char *result_name(VkResult r)
{
    switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
        return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
        return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
        return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
        return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
        return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_TOO_MANY_OBJECTS:
        return "VK_ERROR_TOO_MANY_OBJECTS";
    default:
        return "an error";
    }
}

/* The device was not created: the app gets the driver's answer, as it
 * would without gpuzones. Said once, and only where the layer had added
 * something to the app's request (what it added, the device had said it
 * supports; the rest of the request is the app's). */
static void report_create_failure(const char *device_name, VkResult r, const device_plan *p)
{
    if (!p || (!p->added_hqr && !p->added_timeline && !p->added_calibrated))
        return;
    char added[160];
    snprintf(added, sizeof added, "%s%s%s%s%s", p->added_hqr ? "host query reset" : "",
             p->added_hqr && (p->added_timeline || p->added_calibrated) ? ", " : "",
             p->added_timeline ? "timeline semaphores" : "",
             p->added_timeline && p->added_calibrated ? ", " : "",
             p->added_calibrated ? p->calibrated : "");
    static int once;
    gz_log_once(&once,
                "vkCreateDevice on %s returned %s (%d) to the app; gpuzones had added to its "
                "request only what the device reports it supports (%s)",
                device_name, result_name(r), (int)r, added);
}

/* The host clock the device can be calibrated against, or 0. */
static VkTimeDomainEXT host_domain(layer_instance *inst, VkPhysicalDevice phys, bool khr)
{
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT get = (void *)inst->next_gipa(
        inst->handle, khr ? "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR"
                          : "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
    uint32_t n = 0;
    VkTimeDomainEXT domains[16];
    if (!get || get(phys, &n, NULL) != VK_SUCCESS)
        return 0;
    if (n > 16)
        n = 16;
    if (get(phys, &n, domains) < VK_SUCCESS)
        return 0;
    return gz_vk_pick_host_domain(domains, n);
}

/* Every function of the list but those whose name depends on what the
 * device enabled (create_context picks those for the context). */
static void load_device_fns(layer_device *dev)
{
#define GZ_VK_FN(name, use)                                                                        \
    if (!((use) & GZ_VK_FN_BY_HAND))                                                               \
        dev->fns.name = (PFN_vk##name)dev->next_gdpa(dev->handle, "vk" #name);
#define GZ_VK_HOOK GZ_VK_FN
#include "gz_vk_fns.h"
}

static gz_vk_device *create_context(layer_device *dev, VkPhysicalDevice phys,
                                    const device_plan *plan, PFN_vkSetDeviceLoaderData set_data)
{
    layer_instance *inst = dev->inst;
    VkPhysicalDeviceProperties props;
    inst->GetPhysicalDeviceProperties(phys, &props);
    uint32_t nfam = 0;
    inst->GetPhysicalDeviceQueueFamilyProperties(phys, &nfam, NULL);
    VkQueueFamilyProperties *fams = calloc(nfam ? nfam : 1, sizeof *fams);
    uint32_t *bits = calloc(nfam ? nfam : 1, sizeof *bits);
    uint32_t *flags = calloc(nfam ? nfam : 1, sizeof *flags);
    if (!fams || !bits || !flags) {
        free(fams);
        free(bits);
        free(flags);
        return NULL;
    }
    inst->GetPhysicalDeviceQueueFamilyProperties(phys, &nfam, fams);
    for (uint32_t i = 0; i < nfam; i++) {
        bits[i] = fams[i].timestampValidBits;
        flags[i] = fams[i].queueFlags;
    }

    VkDevice d = dev->handle;
    PFN_vkGetDeviceProcAddr gdpa = dev->next_gdpa;
    gz_vk_device_info info = {
        .device = d,
        .set_loader_data = (gz_vk_set_loader_data_fn)set_data,
        .timestamp_period = props.limits.timestampPeriod,
        .family_count = nfam,
        .family_valid_bits = bits,
        .family_flags = flags,
        .host_query_reset = plan->host_query_reset,
        .serial = __atomic_add_fetch(&device_serial, 1, __ATOMIC_RELAXED),
    };
    snprintf(info.device_name, sizeof info.device_name, "%s", props.deviceName);
    inst->GetPhysicalDeviceMemoryProperties(phys, &info.memory);
    info.fns = dev->fns;
#define LOAD(field, name) info.fns.field = (void *)gdpa(d, name)
    if (plan->host_query_reset)
        LOAD(ResetQueryPool, plan->use_ext_reset ? "vkResetQueryPoolEXT" : "vkResetQueryPool");
    if (plan->timeline_on)
        LOAD(GetSemaphoreCounterValue,
             plan->use_khr_timeline ? "vkGetSemaphoreCounterValueKHR" : "vkGetSemaphoreCounterValue");
    if (plan->calibrated) {
        bool khr = !strcmp(plan->calibrated, "VK_KHR_calibrated_timestamps");
        LOAD(GetCalibratedTimestampsEXT,
             khr ? "vkGetCalibratedTimestampsKHR" : "vkGetCalibratedTimestampsEXT");
        info.host_domain = host_domain(inst, phys, khr);
    }
#undef LOAD
    info.host_query_reset = info.host_query_reset && info.fns.ResetQueryPool;
    info.timeline = plan->timeline_on && info.fns.GetSemaphoreCounterValue;
    /* lavapipe's vkGetQueryPoolResults waits for the whole device to go
     * idle, WAIT_BIT or not: its results are copied instead. */
    info.driver_reads_block = !strncmp(props.deviceName, "llvmpipe", 8);
    gz_vk_device *ctx = gz_vk_device_new(&info);
    free(fams);
    free(bits);
    free(flags);
    return ctx;
}

VkResult gz_hook_CreateDevice(VkPhysicalDevice phys, const VkDeviceCreateInfo *info,
                              const VkAllocationCallbacks *alloc, VkDevice *device)
{
    layer_instance *inst = gz_layer_instance(phys);
    VkLayerDeviceCreateInfo *link = find_device_info(info, VK_LAYER_LINK_INFO);
    if (!inst || !link || !link->u.pLayerInfo)
        return VK_ERROR_INITIALIZATION_FAILED;
    VkLayerDeviceCreateInfo *data = find_device_info(info, VK_LOADER_DATA_CALLBACK);
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    PFN_vkCreateDevice create = (PFN_vkCreateDevice)next_gipa(inst->handle, "vkCreateDevice");
    if (!create)
        return VK_ERROR_INITIALIZATION_FAILED;

    VkPhysicalDeviceProperties props;
    inst->GetPhysicalDeviceProperties(phys, &props);
    /* The record first: a device created without one would have no
     * dispatch through this layer. */
    layer_device *dev = gz_layer_device_alloc();
    if (!dev)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    device_plan *plan = malloc(sizeof *plan);
    VkResult r;
    if (plan) {
        plan_device(plan, inst, phys, info, props.apiVersion);
        r = create(phys, &plan->info, alloc, device);
        plan_free(plan);
    } else {
        r = create(phys, info, alloc, device);
    }
    if (r != VK_SUCCESS) {
        report_create_failure(props.deviceName, r, plan);
        free(plan);
        gz_layer_device_free(dev);
        return r;
    }
    dev->handle = *device;
    dev->inst = inst;
    dev->next_gdpa = next_gdpa;
    load_device_fns(dev);
    if (plan)
        dev->ctx = create_context(dev, phys, plan, data ? data->u.pfnSetDeviceLoaderData : NULL);
    if (!dev->ctx && gz_client_running())
        gz_log("%s is not timed (out of memory for its context); the app's calls pass through",
               props.deviceName);
    free(plan);
    gz_handle_map_put(&gz_layer_devices, gz_dispatch_key(*device), &dev->node);
    __atomic_add_fetch(&live_devices, 1, __ATOMIC_RELAXED);
    return r;
}

/* Pools the app did not destroy before its device (an error, and a common
 * one): their records go with the device, before its context. */
static void free_pools(layer_device *dev)
{
    while (dev->pools) {
        layer_pool *p = dev->pools;
        dev->pools = p->next;
        gz_handle_map_remove_node(&gz_layer_pools, &p->node);
        gz_layer_pool_free(p);
    }
}

VKAPI_ATTR void VKAPI_CALL gz_hook_DestroyDevice(VkDevice device,
                                                 const VkAllocationCallbacks *alloc)
{
    if (!device)
        return;
    gz_handle_node *n = gz_handle_map_remove(&gz_layer_devices, gz_dispatch_key(device));
    if (!n)
        return;
    layer_device *dev = gz_container_of(n, layer_device, node);
    /* A later device may get the same queue and command buffer handles:
     * none of this one's may stay in the maps. */
    for (uint32_t i = 0; i < dev->nqueues; i++)
        gz_handle_map_remove_node(&gz_layer_queues, &dev->queues[i].node);
    free_pools(dev);
    /* Read back and free our objects while the device still exists. */
    gz_vk_device_destroy(dev->ctx);
    dev->fns.DestroyDevice(device, alloc);
    gz_layer_device_free(dev);
    /* The program may end now without atexit (a Go program's exit): the
     * trace is made complete while nothing of ours runs on the GPU. */
    if (__atomic_sub_fetch(&live_devices, 1, __ATOMIC_ACQ_REL) == 0)
        gz_client_checkpoint(false);
}

static void track_queue(layer_device *dev, VkQueue queue, uint32_t family, uint32_t index)
{
    if (!queue || !dev->ctx)
        return;
    gz_vk_queue *q = gz_vk_queue_get(dev->ctx, queue, family, index);
    if (!q)
        return;
    pthread_mutex_lock(&dev->lock);
    bool known = false;
    for (uint32_t i = 0; i < dev->nqueues && !known; i++)
        known = dev->queues[i].ctx == q;
    if (!known && dev->nqueues < GZ_LAYER_MAX_QUEUES) {
        layer_queue *lq = &dev->queues[dev->nqueues++];
        lq->ctx = q;
        gz_handle_map_put(&gz_layer_queues, GZ_HANDLE_KEY(queue), &lq->node);
    }
    pthread_mutex_unlock(&dev->lock);
}

VKAPI_ATTR void VKAPI_CALL gz_hook_GetDeviceQueue(VkDevice device, uint32_t family, uint32_t index,
                                                  VkQueue *queue)
{
    layer_device *dev = gz_layer_device(device);
    dev->fns.GetDeviceQueue(device, family, index, queue);
    track_queue(dev, *queue, family, index);
}

VKAPI_ATTR void VKAPI_CALL gz_hook_GetDeviceQueue2(VkDevice device, const VkDeviceQueueInfo2 *info,
                                                   VkQueue *queue)
{
    layer_device *dev = gz_layer_device(device);
    dev->fns.GetDeviceQueue2(device, info, queue);
    /* A queue created protection-capable runs unprotected batches too
     * (timed as any); its protected batches are passed through untouched
     * and counted (submit.c). */
    track_queue(dev, *queue, info->queueFamilyIndex, info->queueIndex);
}
