/* Plain Vulkan helpers shared by the cases: instance with a debug-utils
 * messenger (its messages go into the truth file, which is how the runner
 * proves validation was active and clean), a device with one compute queue,
 * two small pipelines, command buffers that remember their label operations,
 * and one submit function for every submission API and wait style. */
#define _GNU_SOURCE
#include "vkt.h"

#include "gz_vk_min.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const uint32_t add_spv[] =
#include "add_comp.inc"
    ;
static const uint32_t spin_spv[] =
#include "spin_comp.inc"
    ;

/* ---- instance ------------------------------------------------------------- */

static const char *severity_name(VkDebugUtilsMessageSeverityFlagBitsEXT s)
{
    if (s & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
        return "error";
    if (s & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
        return "warning";
    if (s & VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT)
        return "info";
    return "verbose";
}

static const char *type_name(VkDebugUtilsMessageTypeFlagsEXT t)
{
    if (t & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT)
        return "validation";
    if (t & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)
        return "performance";
    return "general";
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                 void *user)
{
    const char *sev = severity_name(severity);
    truth_message(sev, type_name(types), data->pMessageIdName, data->pMessage);
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
        fprintf(stderr, "gz-test-vk: %s: %s\n", sev, data->pMessage ? data->pMessage : "");
    return VK_FALSE;
}

static void messenger_info(VkDebugUtilsMessengerCreateInfoEXT *ci)
{
    memset(ci, 0, sizeof *ci);
    ci->sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    /* info too: the validation layer announces itself at info level */
    ci->messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    ci->messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    ci->pfnUserCallback = on_message;
}

static bool has_instance_extension(const char *name)
{
    uint32_t n = 0;
    VKT_CHECK(vkEnumerateInstanceExtensionProperties(NULL, &n, NULL));
    VkExtensionProperties *props = calloc(n ? n : 1, sizeof *props);
    if (!props)
        vkt_die("out of memory");
    VKT_CHECK(vkEnumerateInstanceExtensionProperties(NULL, &n, props));
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++)
        found = strcmp(props[i].extensionName, name) == 0;
    free(props);
    return found;
}

static PFN_vkVoidFunction instance_proc(VkInstance inst, const char *name)
{
    PFN_vkVoidFunction f = vkGetInstanceProcAddr(inst, name);
    if (!f)
        vkt_die("vkGetInstanceProcAddr(%s) returned NULL", name);
    return f;
}

/* GZ_TEST_APP_LAYERS=A:B makes the program enable layers A then B itself
 * (A nearest the application).  The runner needs this to put the validation
 * layer above or below gpuzones: loader 1.3.239 chains VK_INSTANCE_LAYERS in
 * manifest discovery order, not in the order the variable lists them, while
 * it keeps the order of ppEnabledLayerNames. */
#define MAX_APP_LAYERS 8

static uint32_t app_layers(char *buf, size_t size, const char **names)
{
    const char *env = getenv("GZ_TEST_APP_LAYERS");
    uint32_t n = 0;
    if (!env || !*env)
        return 0;
    snprintf(buf, size, "%s", env);
    for (char *save = NULL, *tok = strtok_r(buf, ":", &save); tok && n < MAX_APP_LAYERS;
         tok = strtok_r(NULL, ":", &save))
        names[n++] = tok;
    return n;
}

struct vkt_instance *vkt_instance_create(void)
{
    return vkt_instance_create_with(NULL);
}

struct vkt_instance *vkt_instance_create_with(const char *extra_ext)
{
    /* the tests are about debug-utils labels and names: no point without it */
    if (!has_instance_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
        vkt_die("VK_EXT_debug_utils is not available");
    if (extra_ext && !has_instance_extension(extra_ext))
        vkt_die("%s is not available", extra_ext);

    struct vkt_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        vkt_die("out of memory");
    inst->index = truth_add_instance();

    VkDebugUtilsMessengerCreateInfoEXT mci;
    messenger_info(&mci); /* chained: catches messages from vkCreateInstance itself */
    const char *exts[] = { VK_EXT_DEBUG_UTILS_EXTENSION_NAME, extra_ext };
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "gz-test-vk",
        .apiVersion = VK_API_VERSION_1_3,
    };
    char layer_buf[512];
    const char *layers[MAX_APP_LAYERS];
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = &mci,
        .pApplicationInfo = &app,
        .enabledLayerCount = app_layers(layer_buf, sizeof layer_buf, layers),
        .ppEnabledLayerNames = layers,
        .enabledExtensionCount = extra_ext ? 2 : 1,
        .ppEnabledExtensionNames = exts,
    };
    VKT_CHECK(vkCreateInstance(&ci, NULL, &inst->instance));

    VkInstance vi = inst->instance;
    PFN_vkCreateDebugUtilsMessengerEXT create_messenger =
        (PFN_vkCreateDebugUtilsMessengerEXT)instance_proc(vi, "vkCreateDebugUtilsMessengerEXT");
    inst->destroy_messenger =
        (PFN_vkDestroyDebugUtilsMessengerEXT)instance_proc(vi, "vkDestroyDebugUtilsMessengerEXT");
    inst->set_name = (PFN_vkSetDebugUtilsObjectNameEXT)instance_proc(vi, "vkSetDebugUtilsObjectNameEXT");
    inst->cmd_begin_label =
        (PFN_vkCmdBeginDebugUtilsLabelEXT)instance_proc(vi, "vkCmdBeginDebugUtilsLabelEXT");
    inst->cmd_end_label = (PFN_vkCmdEndDebugUtilsLabelEXT)instance_proc(vi, "vkCmdEndDebugUtilsLabelEXT");
    inst->queue_begin_label =
        (PFN_vkQueueBeginDebugUtilsLabelEXT)instance_proc(vi, "vkQueueBeginDebugUtilsLabelEXT");
    inst->queue_end_label =
        (PFN_vkQueueEndDebugUtilsLabelEXT)instance_proc(vi, "vkQueueEndDebugUtilsLabelEXT");
    VKT_CHECK(create_messenger(vi, &mci, NULL, &inst->messenger));
    return inst;
}

void vkt_instance_destroy(struct vkt_instance *inst)
{
    inst->destroy_messenger(inst->instance, inst->messenger, NULL);
    vkDestroyInstance(inst->instance, NULL);
    free(inst);
}

/* ---- device ----------------------------------------------------------------- */

static VkPhysicalDevice first_physical_device(VkInstance inst)
{
    uint32_t n = 0;
    VKT_CHECK(vkEnumeratePhysicalDevices(inst, &n, NULL));
    if (n == 0)
        vkt_die("no Vulkan physical device");
    VkPhysicalDevice *all = calloc(n, sizeof *all);
    if (!all)
        vkt_die("out of memory");
    VkResult r = vkEnumeratePhysicalDevices(inst, &n, all);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        vkt_check(r, "vkEnumeratePhysicalDevices", __FILE__, __LINE__);
    VkPhysicalDevice p = all[0];
    free(all);
    return p;
}

/* A compute family, with timestamps if there is one: the program itself
 * writes none, and the fault tests give it a device without any. */
static uint32_t compute_family(VkPhysicalDevice phys)
{
    uint32_t found = gz_min_vk_compute_family(phys);
    if (found == UINT32_MAX)
        vkt_die("no compute queue family");
    return found;
}

static bool has_device_extension(VkPhysicalDevice phys, const char *name)
{
    uint32_t n = 0;
    VKT_CHECK(vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL));
    VkExtensionProperties *props = calloc(n ? n : 1, sizeof *props);
    if (!props)
        vkt_die("out of memory");
    VKT_CHECK(vkEnumerateDeviceExtensionProperties(phys, NULL, &n, props));
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++)
        found = strcmp(props[i].extensionName, name) == 0;
    free(props);
    return found;
}

/* The whole create info in a page that is read-only during vkCreateDevice:
 * a layer may not write the app's structures (they are const). */
static void create_device_readonly(struct vkt_device *d, const VkDeviceQueueCreateInfo *queue)
{
    struct ro {
        VkDeviceCreateInfo ci;
        VkDeviceQueueCreateInfo qci;
        float prio;
        VkPhysicalDeviceFeatures2 f2;
        VkPhysicalDeviceVulkan12Features f12;
    };
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    struct ro *ro = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ro == MAP_FAILED)
        vkt_die("mmap failed");
    ro->prio = 1.0f;
    ro->qci = *queue;
    ro->qci.pQueuePriorities = &ro->prio;
    ro->f12 = (VkPhysicalDeviceVulkan12Features){
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .timelineSemaphore = VK_TRUE,
        .hostQueryReset = VK_FALSE, /* the layer turns it on, in a copy */
    };
    ro->f2 = (VkPhysicalDeviceFeatures2){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                         .pNext = &ro->f12};
    ro->ci = (VkDeviceCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                  .pNext = &ro->f2,
                                  .queueCreateInfoCount = 1,
                                  .pQueueCreateInfos = &ro->qci};
    struct ro before = *ro;
    if (mprotect(ro, page, PROT_READ) != 0)
        vkt_die("mprotect failed");
    VKT_CHECK(vkCreateDevice(d->phys, &ro->ci, NULL, &d->device));
    if (memcmp(&before, ro, sizeof before) != 0)
        vkt_die("vkCreateDevice changed the app's create info");
    munmap(ro, page);
    d->timeline = true;
}

static void create_logical_device(struct vkt_device *d, enum vkt_features feat)
{
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = d->family,
        .queueCount = 1,
        .pQueuePriorities = &prio,
    };
    VkPhysicalDeviceVulkan11Features f11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
    };
    VkPhysicalDeviceVulkan13Features f13 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
        .synchronization2 = VK_TRUE,
    };
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .timelineSemaphore = VK_TRUE,
    };
    VkPhysicalDeviceFeatures2 f2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 };
    VkPhysicalDeviceHostQueryResetFeatures hqr = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES,
        .hostQueryReset = VK_FALSE, /* present but off: the layer must turn it on */
    };
    const char *exts[1];
    VkDeviceQueueCreateInfo queues[8] = {qci};
    float prios[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    VkDeviceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = queues,
        .ppEnabledExtensionNames = exts,
    };
    switch (feat) {
    case VKT_FEAT_NONE:
        break;
    case VKT_FEAT_FEATURES2_V12:
        f2.pNext = &f12;
        ci.pNext = &f2;
        d->timeline = true;
        break;
    case VKT_FEAT_V12_V13:
        f12.pNext = &f13;
        ci.pNext = &f12;
        d->timeline = true;
        d->sync2 = true;
        if (has_device_extension(d->phys, VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME))
            exts[ci.enabledExtensionCount++] = VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME;
        break;
    case VKT_FEAT_HQR_STRUCT:
        ci.pNext = &hqr;
        break;
    case VKT_FEAT_FAMILIES: {
        f2.pNext = &f12;
        ci.pNext = &f2;
        d->timeline = true;
        uint32_t n = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &n, NULL);
        VkQueueFamilyProperties fams[8];
        n = n < 8 ? n : 8;
        vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &n, fams);
        queues[0].queueCount = fams[d->family].queueCount < 8 ? fams[d->family].queueCount : 8;
        queues[0].pQueuePriorities = prios;
        for (uint32_t i = 0; i < n; i++)
            if (i != d->family)
                queues[ci.queueCreateInfoCount++] = (VkDeviceQueueCreateInfo){
                    .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                    .queueFamilyIndex = i,
                    .queueCount = 1,
                    .pQueuePriorities = prios,
                };
        break;
    }
    case VKT_FEAT_READONLY: /* below, in create_device_readonly */
        break;
    case VKT_FEAT_RENDER:
        f11.multiview = VK_TRUE;
        f13.dynamicRendering = VK_TRUE;
        f2.pNext = &f11;
        f11.pNext = &f12;
        f12.pNext = &f13;
        ci.pNext = &f2;
        d->timeline = true;
        d->sync2 = true;
        break;
    case VKT_FEAT_PROTECTED:
        f11.protectedMemory = VK_TRUE;
        f2.pNext = &f11;
        f11.pNext = &f12;
        f12.pNext = &f13;
        ci.pNext = &f2;
        d->timeline = true;
        d->sync2 = true;
        /* An ordinary queue and a protected-capable one of the same family
         * (VUID-VkDeviceCreateInfo-queueFamilyIndex-02802 allows the pair). */
        queues[ci.queueCreateInfoCount++] = (VkDeviceQueueCreateInfo){
            .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
            .flags = VK_DEVICE_QUEUE_CREATE_PROTECTED_BIT,
            .queueFamilyIndex = d->family,
            .queueCount = 1,
            .pQueuePriorities = prios,
        };
        break;
    case VKT_FEAT_DEBUG_MARKER:
        /* A device extension of VK_LAYER_KHRONOS_validation on lavapipe: the
         * loader accepts it when that layer is enabled, though
         * vkEnumerateDeviceExtensionProperties(NULL) does not list it. */
        exts[ci.enabledExtensionCount++] = VK_EXT_DEBUG_MARKER_EXTENSION_NAME;
        break;
    }
    if (feat == VKT_FEAT_READONLY) {
        create_device_readonly(d, &qci);
        return;
    }
    VkResult r = vkCreateDevice(d->phys, &ci, NULL, &d->device);
    if (r == VK_ERROR_EXTENSION_NOT_PRESENT && feat == VKT_FEAT_DEBUG_MARKER)
        vkt_die("VK_EXT_debug_marker is not offered (on lavapipe it comes from "
                "VK_LAYER_KHRONOS_validation, which this case needs enabled)");
    VKT_CHECK(r);
    if (feat == VKT_FEAT_V12_V13 && ci.enabledExtensionCount)
        d->submit2_khr = (PFN_vkQueueSubmit2KHR)vkGetDeviceProcAddr(d->device, "vkQueueSubmit2KHR");
    if (feat == VKT_FEAT_DEBUG_MARKER) {
        d->cmd_marker_begin =
            (PFN_vkCmdDebugMarkerBeginEXT)vkGetDeviceProcAddr(d->device, "vkCmdDebugMarkerBeginEXT");
        d->cmd_marker_end =
            (PFN_vkCmdDebugMarkerEndEXT)vkGetDeviceProcAddr(d->device, "vkCmdDebugMarkerEndEXT");
        d->marker_set_name = (PFN_vkDebugMarkerSetObjectNameEXT)vkGetDeviceProcAddr(
            d->device, "vkDebugMarkerSetObjectNameEXT");
        if (!d->cmd_marker_begin || !d->cmd_marker_end || !d->marker_set_name)
            vkt_die("VK_EXT_debug_marker enabled but its functions are missing");
    }
}

static void create_pipelines(struct vkt_device *d)
{
    gz_min_vk_storage_layout(d->device, 2 * sizeof(uint32_t), &d->set_layout, &d->pipe_layout);
    d->add_pipe = gz_min_vk_compute_pipeline(d->device, d->pipe_layout, add_spv, sizeof add_spv);
    d->spin_pipe = gz_min_vk_compute_pipeline(d->device, d->pipe_layout, spin_spv, sizeof spin_spv);
}

/* Named, so that the layer's dispatch zones have names the truth knows
 * whichever thread binds a pipeline first (unnamed ones are numbered in
 * the order the device first sees them bound). */
static void name_pipelines(struct vkt_device *d)
{
    vkt_set_name(d, VK_OBJECT_TYPE_PIPELINE, (uint64_t)d->add_pipe, "add");
    vkt_set_name(d, VK_OBJECT_TYPE_PIPELINE, (uint64_t)d->spin_pipe, "spin");
}

static void create_descriptors(struct vkt_device *d)
{
    d->desc_pool = gz_min_vk_storage_pool(d->device, 1);
    d->set = gz_min_vk_storage_set(d->device, d->desc_pool, d->set_layout, d->work.buffer);
}

static void create_sync(struct vkt_device *d)
{
    VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    VKT_CHECK(vkCreateFence(d->device, &fci, NULL, &d->fence));
    VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO };
    for (int i = 0; i < VKT_MAX_BATCHES; i++)
        VKT_CHECK(vkCreateSemaphore(d->device, &sci, NULL, &d->chain_sem[i]));
    if (d->timeline) {
        VkSemaphoreTypeCreateInfo tci = {
            .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
            .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
            .initialValue = 0,
        };
        sci.pNext = &tci;
        VKT_CHECK(vkCreateSemaphore(d->device, &sci, NULL, &d->timeline_sem));
    }
}

VkPhysicalDevice vkt_physical_device(struct vkt_instance *inst)
{
    return first_physical_device(inst->instance);
}

uint32_t vkt_queue_family(VkPhysicalDevice phys)
{
    return compute_family(phys);
}

struct vkt_device *vkt_device_create(struct vkt_instance *inst, enum vkt_features feat,
                                     const char *queue_name)
{
    struct vkt_device *d = calloc(1, sizeof *d);
    if (!d)
        vkt_die("out of memory");
    d->inst = inst;
    d->phys = first_physical_device(inst->instance);
    d->family = compute_family(d->phys);
    vkGetPhysicalDeviceMemoryProperties(d->phys, &d->memprops);
    create_logical_device(d, feat);
    vkGetDeviceQueue(d->device, d->family, 0, &d->queue);
    if (queue_name)
        vkt_set_name(d, VK_OBJECT_TYPE_QUEUE, (uint64_t)(uintptr_t)d->queue, queue_name);
    d->queue_key = truth_add_queue(inst->index, d, 0, queue_name);

    vkt_buffer_create(d, VKT_WORK_ELEMS * sizeof(uint32_t),
                      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                          VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                      false, &d->work);
    vkt_buffer_create(d, VKT_WORK_ELEMS * sizeof(uint32_t), VK_BUFFER_USAGE_TRANSFER_DST_BIT, true,
                      &d->result);
    create_pipelines(d);
    name_pipelines(d);
    create_descriptors(d);
    d->pool = vkt_pool_create(d, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
    create_sync(d);
    return d;
}

struct vkt_device *vkt_device_view(struct vkt_device *base, uint32_t family, uint32_t index,
                                   const char *queue_name, bool timed)
{
    struct vkt_device *v = malloc(sizeof *v);
    if (!v)
        vkt_die("out of memory");
    *v = *base;
    v->view = true;
    v->family = family;
    vkGetDeviceQueue(v->device, family, index, &v->queue);
    if (queue_name)
        vkt_set_name(v, VK_OBJECT_TYPE_QUEUE, (uint64_t)(uintptr_t)v->queue, queue_name);
    v->queue_key = truth_add_queue(base->inst->index, v, index, queue_name);
    if (!timed)
        truth_queue_untimed(v->queue_key);
    v->pool = vkt_pool_create(v, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
    v->timeline_value = 0;
    create_sync(v);
    return v;
}

struct vkt_device *vkt_device_protected_queue(struct vkt_device *base, const char *queue_name)
{
    struct vkt_device *v = malloc(sizeof *v);
    if (!v)
        vkt_die("out of memory");
    *v = *base;
    v->view = true;
    VkDeviceQueueInfo2 qi = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_INFO_2,
        .flags = VK_DEVICE_QUEUE_CREATE_PROTECTED_BIT,
        .queueFamilyIndex = base->family,
        .queueIndex = 0,
    };
    vkGetDeviceQueue2(v->device, &qi, &v->queue);
    if (queue_name)
        vkt_set_name(v, VK_OBJECT_TYPE_QUEUE, (uint64_t)(uintptr_t)v->queue, queue_name);
    v->queue_key = truth_add_queue(base->inst->index, v, 0, queue_name);
    truth_queue_protected(v->queue_key);
    v->pool = vkt_pool_create(v, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
    v->timeline_value = 0;
    create_sync(v);
    return v;
}

void vkt_device_view_destroy(struct vkt_device *v)
{
    VkDevice dev = v->device;
    vkDestroyFence(dev, v->fence, NULL);
    for (int i = 0; i < VKT_MAX_BATCHES; i++)
        vkDestroySemaphore(dev, v->chain_sem[i], NULL);
    if (v->timeline_sem)
        vkDestroySemaphore(dev, v->timeline_sem, NULL);
    vkDestroyCommandPool(dev, v->pool, NULL);
    free(v);
}

void vkt_device_destroy(struct vkt_device *d)
{
    VkDevice dev = d->device;
    vkDestroyFence(dev, d->fence, NULL);
    for (int i = 0; i < VKT_MAX_BATCHES; i++)
        vkDestroySemaphore(dev, d->chain_sem[i], NULL);
    if (d->timeline_sem)
        vkDestroySemaphore(dev, d->timeline_sem, NULL);
    vkDestroyCommandPool(dev, d->pool, NULL);
    vkDestroyDescriptorPool(dev, d->desc_pool, NULL);
    vkDestroyPipeline(dev, d->add_pipe, NULL);
    vkDestroyPipeline(dev, d->spin_pipe, NULL);
    vkDestroyPipelineLayout(dev, d->pipe_layout, NULL);
    vkDestroyDescriptorSetLayout(dev, d->set_layout, NULL);
    vkt_buffer_destroy(d, &d->work);
    vkt_buffer_destroy(d, &d->result);
    vkDestroyDevice(dev, NULL);
    free(d);
}

void vkt_set_name(struct vkt_device *d, VkObjectType type, uint64_t handle, const char *name)
{
    if (d->marker_set_name && (type == VK_OBJECT_TYPE_COMMAND_BUFFER || type == VK_OBJECT_TYPE_QUEUE)) {
        VkDebugMarkerObjectNameInfoEXT mi = {
            .sType = VK_STRUCTURE_TYPE_DEBUG_MARKER_OBJECT_NAME_INFO_EXT,
            .objectType = type == VK_OBJECT_TYPE_QUEUE ? VK_DEBUG_REPORT_OBJECT_TYPE_QUEUE_EXT
                                                       : VK_DEBUG_REPORT_OBJECT_TYPE_COMMAND_BUFFER_EXT,
            .object = handle,
            .pObjectName = name,
        };
        VKT_CHECK(d->marker_set_name(d->device, &mi));
        return;
    }
    VkDebugUtilsObjectNameInfoEXT ni = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
        .objectType = type,
        .objectHandle = handle,
        .pObjectName = name,
    };
    VKT_CHECK(d->inst->set_name(d->device, &ni));
}

/* ---- memory ---------------------------------------------------------------- */

uint32_t vkt_memory_type(const struct vkt_device *d, uint32_t bits, VkMemoryPropertyFlags need,
                         VkMemoryPropertyFlags prefer)
{
    for (int pass = 0; pass < 2; pass++) {
        VkMemoryPropertyFlags want = pass == 0 ? need | prefer : need;
        for (uint32_t i = 0; i < d->memprops.memoryTypeCount; i++)
            if ((bits & (1u << i)) && (d->memprops.memoryTypes[i].propertyFlags & want) == want)
                return i;
    }
    vkt_die("no suitable memory type");
}

void vkt_buffer_create(struct vkt_device *d, VkDeviceSize size, VkBufferUsageFlags usage,
                       bool host_visible, struct vkt_buffer *b)
{
    memset(b, 0, sizeof *b);
    b->size = size;
    VkBufferCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VKT_CHECK(vkCreateBuffer(d->device, &ci, NULL, &b->buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(d->device, b->buffer, &req);
    VkMemoryPropertyFlags need = host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                              : 0;
    VkMemoryPropertyFlags prefer = host_visible ? 0 : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = vkt_memory_type(d, req.memoryTypeBits, need, prefer),
    };
    VKT_CHECK(vkAllocateMemory(d->device, &ai, NULL, &b->memory));
    VKT_CHECK(vkBindBufferMemory(d->device, b->buffer, b->memory, 0));
    if (host_visible)
        VKT_CHECK(vkMapMemory(d->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped));
}

void vkt_buffer_destroy(struct vkt_device *d, struct vkt_buffer *b)
{
    if (b->mapped)
        vkUnmapMemory(d->device, b->memory);
    vkDestroyBuffer(d->device, b->buffer, NULL);
    vkFreeMemory(d->device, b->memory, NULL);
    memset(b, 0, sizeof *b);
}

VkCommandPool vkt_pool_create(struct vkt_device *d, VkCommandPoolCreateFlags flags)
{
    VkCommandPoolCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = flags,
        .queueFamilyIndex = d->family,
    };
    VkCommandPool pool;
    VKT_CHECK(vkCreateCommandPool(d->device, &ci, NULL, &pool));
    return pool;
}

/* ---- command buffers ----------------------------------------------------- */

/* A new number for each recording (threads record at once). */
static unsigned next_recording(void)
{
    static unsigned serial;
    return __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
}

static void cmd_alloc(struct vkt_device *d, VkCommandPool pool, const char *name,
                      VkCommandBufferLevel level, struct vkt_cmd *c)
{
    memset(c, 0, sizeof *c);
    c->dev = d;
    c->pool = pool;
    c->secondary = level == VK_COMMAND_BUFFER_LEVEL_SECONDARY;
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = pool,
        .level = level,
        .commandBufferCount = 1,
    };
    VKT_CHECK(vkAllocateCommandBuffers(d->device, &ai, &c->cb));
    if (name) {
        vkt_set_name(d, VK_OBJECT_TYPE_COMMAND_BUFFER, (uint64_t)(uintptr_t)c->cb, name);
        snprintf(c->name, sizeof c->name, "%s", name);
    }
}

void vkt_cmd_zone_name(const struct vkt_cmd *c, int place, char out[VKT_NAME_MAX])
{
    /* TRACE_FORMAT.md: an unnamed command buffer's zone is "cmdbuf: <its
     * first label>", else "cmdbuf #<its place in the batch>". */
    if (c->name[0]) {
        snprintf(out, VKT_NAME_MAX, "%s", c->name);
        return;
    }
    for (int i = 0; i < c->nops; i++) {
        if (c->ops[i].begin) {
            snprintf(out, VKT_NAME_MAX, "cmdbuf: %s", c->ops[i].name);
            return;
        }
    }
    if (place < 15)
        snprintf(out, VKT_NAME_MAX, "cmdbuf #%d", place);
    else
        snprintf(out, VKT_NAME_MAX, "cmdbuf #15+");
}

void vkt_cmd_alloc(struct vkt_device *d, VkCommandPool pool, const char *name, struct vkt_cmd *c)
{
    cmd_alloc(d, pool, name, VK_COMMAND_BUFFER_LEVEL_PRIMARY, c);
}

void vkt_cmd_alloc_secondary(struct vkt_device *d, VkCommandPool pool, const char *name,
                             struct vkt_cmd *c)
{
    cmd_alloc(d, pool, name, VK_COMMAND_BUFFER_LEVEL_SECONDARY, c);
}

void vkt_cmd_free(struct vkt_cmd *c)
{
    vkFreeCommandBuffers(c->dev->device, c->pool, 1, &c->cb);
    c->cb = VK_NULL_HANDLE;
    c->nops = 0;
    c->nzops = 0;
}

void vkt_cmd_begin(struct vkt_cmd *c, VkCommandBufferUsageFlags flags)
{
    if (c->secondary)
        vkt_die("vkt_cmd_begin on a secondary: use vkt_cmd_begin_secondary");
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = flags,
    };
    c->nops = 0; /* begin implicitly resets: the old labels are gone */
    c->nzops = 0;
    c->simultaneous = (flags & VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT) != 0;
    c->recording = next_recording();
    c->suspended = false;
    c->zone_untimed = VKT_TIMED;
    VKT_CHECK(vkBeginCommandBuffer(c->cb, &bi));
}

void vkt_cmd_begin_secondary(struct vkt_cmd *c, VkCommandBufferUsageFlags flags,
                             const VkCommandBufferInheritanceInfo *inherit)
{
    if (!c->secondary)
        vkt_die("vkt_cmd_begin_secondary on a primary");
    /* VUID-vkBeginCommandBuffer-commandBuffer-00051: a secondary always
     * needs inheritance info, empty outside a render pass. */
    VkCommandBufferInheritanceInfo none = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO };
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = flags,
        .pInheritanceInfo = inherit ? inherit : &none,
    };
    c->nops = 0;
    c->nzops = 0;
    c->simultaneous = (flags & VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT) != 0;
    c->recording = next_recording();
    c->suspended = false;
    c->zone_untimed = VKT_TIMED;
    VKT_CHECK(vkBeginCommandBuffer(c->cb, &bi));
}

void vkt_cmd_end(struct vkt_cmd *c)
{
    /* A primary that ends with a render pass instance suspended has no end
     * timestamp of its own, and none may follow it before the resumption. */
    if (c->suspended && !c->secondary)
        c->zone_untimed = VKT_UNTIMED_SUSPENDED;
    VKT_CHECK(vkEndCommandBuffer(c->cb));
}

void vkt_cmd_reset(struct vkt_cmd *c)
{
    VKT_CHECK(vkResetCommandBuffer(c->cb, 0));
    c->nops = 0;
    c->nzops = 0;
}

void vkt_cmd_forget_ops(struct vkt_cmd *c)
{
    c->nops = 0;
    c->nzops = 0;
}

/* Where the layer may write no timestamp, it leaves a zone untimed (and
 * counts it): in a protected command buffer (no queries there), in a
 * SIMULTANEOUS_USE secondary (one primary may execute it twice, and two
 * executions would write the same timestamps), and between a suspended
 * render pass instance and its resumption. A SIMULTANEOUS_USE primary has
 * timestamps of its own; whether an execution keeps them depends on the
 * executions around it, which the truth follows (truth_call_begin). */
static enum vkt_untimed untimed_here(const struct vkt_cmd *c)
{
    return c->protected_pool                  ? VKT_UNTIMED_PROTECTED
           : c->simultaneous && c->secondary  ? VKT_UNTIMED_SIMULTANEOUS
           : c->suspended                     ? VKT_UNTIMED_SUSPENDED
                                              : VKT_TIMED;
}

static void record_op(struct vkt_cmd *c, bool begin, const char *name)
{
    if (c->nops == VKT_MAX_OPS)
        vkt_die("too many label operations in one command buffer");
    c->ops[c->nops].begin = begin;
    c->ops[c->nops].untimed = untimed_here(c);
    snprintf(c->ops[c->nops].name, VKT_NAME_MAX, "%s", name ? name : "");
    c->nops++;
}

void vkt_cmd_zone_op(struct vkt_cmd *c, enum vkt_zone_op_kind kind, const char *fmt, ...)
{
    if (c->nzops == VKT_MAX_ZONE_OPS)
        vkt_die("too many render pass and command operations in one command buffer");
    struct vkt_zone_op *op = &c->zops[c->nzops++];
    op->kind = kind;
    op->untimed = untimed_here(c);
    op->label_pos = c->nops;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op->name, sizeof op->name, fmt, ap);
    va_end(ap);
}

void vkt_cmd_execute(struct vkt_cmd *primary, int n, struct vkt_cmd *const *secondaries)
{
    VkCommandBuffer cbs[VKT_MAX_CMDS];
    if (primary->secondary || n < 1 || n > VKT_MAX_CMDS)
        vkt_die("bad vkt_cmd_execute");
    for (int i = 0; i < n; i++) {
        if (!secondaries[i]->secondary)
            vkt_die("vkt_cmd_execute: %s is not a secondary", secondaries[i]->name);
        cbs[i] = secondaries[i]->cb;
    }
    vkCmdExecuteCommands(primary->cb, (uint32_t)n, cbs);
    /* The queue runs the secondaries' label commands and action commands
     * as part of the primary: they join its label stack and its render
     * pass instance here, in order. */
    for (int i = 0; i < n; i++) {
        const struct vkt_cmd *s = secondaries[i];
        for (int z = 0; z < s->nzops; z++) {
            if (primary->nzops == VKT_MAX_ZONE_OPS)
                vkt_die("too many render pass and command operations in one command buffer");
            primary->zops[primary->nzops] = s->zops[z];
            primary->zops[primary->nzops++].label_pos += primary->nops;
        }
        for (int o = 0; o < s->nops; o++) {
            if (primary->nops == VKT_MAX_OPS)
                vkt_die("too many label operations in one command buffer");
            primary->ops[primary->nops++] = s->ops[o];
        }
    }
}

void vkt_cmd_label_begin(struct vkt_cmd *c, const char *name)
{
    if (c->dev->cmd_marker_begin) {
        VkDebugMarkerMarkerInfoEXT marker = {
            .sType = VK_STRUCTURE_TYPE_DEBUG_MARKER_MARKER_INFO_EXT,
            .pMarkerName = name,
            .color = { 0.9f, 0.6f, 0.2f, 1.0f },
        };
        c->dev->cmd_marker_begin(c->cb, &marker);
    } else {
        VkDebugUtilsLabelEXT label = {
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
            .pLabelName = name,
            .color = { 0.2f, 0.6f, 0.9f, 1.0f },
        };
        c->dev->inst->cmd_begin_label(c->cb, &label);
    }
    record_op(c, true, name);
}

void vkt_cmd_label_end(struct vkt_cmd *c)
{
    if (c->dev->cmd_marker_end)
        c->dev->cmd_marker_end(c->cb);
    else
        c->dev->inst->cmd_end_label(c->cb);
    record_op(c, false, NULL);
}

/* Orders everything before against everything after (transfer, compute,
 * host): these programs care about timing zones, not about overlap. */
static void full_barrier(VkCommandBuffer cb)
{
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                         VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                         VK_ACCESS_HOST_READ_BIT,
    };
    VkPipelineStageFlags stages = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    vkCmdPipelineBarrier(cb, stages, stages | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void bind_and_push(struct vkt_cmd *c, VkPipeline pipe, uint32_t a, uint32_t b)
{
    struct vkt_device *d = c->dev;
    uint32_t push[2] = { a, b };
    vkCmdBindPipeline(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, d->pipe_layout, 0, 1, &d->set, 0,
                            NULL);
    vkCmdPushConstants(c->cb, d->pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
}

/* A fill and a dispatch over the work buffer: real work of some µs, so
 * zones around it have a positive duration. */
void vkt_cmd_work(struct vkt_cmd *c, uint32_t add)
{
    struct vkt_device *d = c->dev;
    char size[24];
    full_barrier(c->cb);
    vkCmdFillBuffer(c->cb, d->work.buffer, 0, d->work.size / 2, add);
    vkt_cmd_zone_op(c, VKT_ZOP_COMMAND, "fill buffer %s", vkt_size_text(d->work.size / 2, size));
    full_barrier(c->cb);
    bind_and_push(c, d->add_pipe, add, 0);
    vkCmdDispatch(c->cb, VKT_WORK_ELEMS / 64, 1, 1);
    vkt_cmd_zone_op(c, VKT_ZOP_COMMAND, "dispatch %u×1×1 add", VKT_WORK_ELEMS / 64);
}

void vkt_cmd_spin(struct vkt_cmd *c, uint32_t groups, uint32_t iterations, uint32_t seed)
{
    if (groups < 1 || groups > VKT_SPIN_MAX_GROUPS)
        vkt_die("bad spin group count %u", groups);
    full_barrier(c->cb);
    bind_and_push(c, c->dev->spin_pipe, iterations, seed);
    vkCmdDispatch(c->cb, groups, 1, 1);
    vkt_cmd_zone_op(c, VKT_ZOP_COMMAND, "dispatch %u×1×1 spin", groups);
}

void vkt_cmd_copy_result(struct vkt_cmd *c)
{
    struct vkt_device *d = c->dev;
    VkBufferCopy region = { 0, 0, d->work.size };
    full_barrier(c->cb);
    char size[24];
    vkCmdCopyBuffer(c->cb, d->work.buffer, d->result.buffer, 1, &region);
    vkt_cmd_zone_op(c, VKT_ZOP_COMMAND, "copy buffer→buffer %s", vkt_size_text(d->work.size, size));
    full_barrier(c->cb);
}

/* ---- submission ------------------------------------------------------------ */

static const char *api_name(enum vkt_api api)
{
    switch (api) {
    case VKT_SUBMIT1:
        return "vkQueueSubmit";
    case VKT_SUBMIT2:
        return "vkQueueSubmit2";
    case VKT_SUBMIT2_KHR:
        return "vkQueueSubmit2KHR";
    }
    return "?";
}

static const char *wait_name(enum vkt_wait w)
{
    switch (w) {
    case VKT_WAIT_FENCE:
    case VKT_DEFER_FENCE:
        return "fence";
    case VKT_WAIT_TIMELINE:
        return "timeline";
    case VKT_WAIT_IDLE:
    case VKT_DEFER:
        return "queue_idle";
    }
    return "?";
}

struct submit_plan {
    int nbatches;
    bool chain;
    uint64_t timeline_value; /* 0: no timeline signal */
    VkFence fence;
};

static VkResult submit_v1(struct vkt_device *d, const struct submit_plan *p,
                          VkCommandBuffer cbs[][VKT_MAX_CMDS], const struct vkt_batch *b)
{
    VkSubmitInfo si[VKT_MAX_BATCHES];
    VkSemaphore signal[VKT_MAX_BATCHES][2];
    uint64_t signal_values[2] = { 0, 0 };
    VkTimelineSemaphoreSubmitInfo tsi = { .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO };
    static const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    for (int i = 0; i < p->nbatches; i++) {
        bool last = i == p->nbatches - 1;
        si[i] = (VkSubmitInfo){
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = (uint32_t)b[i].ncmds,
            .pCommandBuffers = cbs[i],
            .pSignalSemaphores = signal[i],
        };
        if (p->chain && i > 0) {
            si[i].waitSemaphoreCount = 1;
            si[i].pWaitSemaphores = &d->chain_sem[i - 1];
            si[i].pWaitDstStageMask = &wait_stage;
        }
        if (p->chain && !last)
            signal[i][si[i].signalSemaphoreCount++] = d->chain_sem[i];
        if (last && p->timeline_value) {
            signal_values[si[i].signalSemaphoreCount] = p->timeline_value;
            signal[i][si[i].signalSemaphoreCount++] = d->timeline_sem;
            tsi.signalSemaphoreValueCount = si[i].signalSemaphoreCount;
            tsi.pSignalSemaphoreValues = signal_values;
            si[i].pNext = &tsi;
        }
    }
    return vkQueueSubmit(d->queue, (uint32_t)p->nbatches, si, p->fence);
}

static VkResult submit_v2(struct vkt_device *d, const struct submit_plan *p, bool khr,
                          VkCommandBuffer cbs[][VKT_MAX_CMDS], const struct vkt_batch *b)
{
    VkSubmitInfo2 si[VKT_MAX_BATCHES];
    VkCommandBufferSubmitInfo cbi[VKT_MAX_BATCHES][VKT_MAX_CMDS];
    VkSemaphoreSubmitInfo wait[VKT_MAX_BATCHES], signal[VKT_MAX_BATCHES][2];
    for (int i = 0; i < p->nbatches; i++) {
        bool last = i == p->nbatches - 1;
        for (int j = 0; j < b[i].ncmds; j++)
            cbi[i][j] = (VkCommandBufferSubmitInfo){
                .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                .commandBuffer = cbs[i][j],
            };
        si[i] = (VkSubmitInfo2){
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
            .commandBufferInfoCount = (uint32_t)b[i].ncmds,
            .pCommandBufferInfos = cbi[i],
            .pSignalSemaphoreInfos = signal[i],
        };
        VkSemaphoreSubmitInfo ssi = {
            .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
            .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
        };
        if (p->chain && i > 0) {
            wait[i] = ssi;
            wait[i].semaphore = d->chain_sem[i - 1];
            si[i].waitSemaphoreInfoCount = 1;
            si[i].pWaitSemaphoreInfos = &wait[i];
        }
        if (p->chain && !last) {
            signal[i][si[i].signalSemaphoreInfoCount] = ssi;
            signal[i][si[i].signalSemaphoreInfoCount++].semaphore = d->chain_sem[i];
        }
        if (last && p->timeline_value) {
            VkSemaphoreSubmitInfo *s = &signal[i][si[i].signalSemaphoreInfoCount++];
            *s = ssi;
            s->semaphore = d->timeline_sem;
            s->value = p->timeline_value;
        }
    }
    if (khr)
        return d->submit2_khr(d->queue, (uint32_t)p->nbatches, si, p->fence);
    return vkQueueSubmit2(d->queue, (uint32_t)p->nbatches, si, p->fence);
}

static void wait_timeline(struct vkt_device *d, uint64_t value)
{
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = 1,
        .pSemaphores = &d->timeline_sem,
        .pValues = &value,
    };
    VKT_CHECK(vkWaitSemaphores(d->device, &wi, UINT64_MAX));
}

int vkt_submit(struct vkt_device *d, enum vkt_api api, int nbatches, const struct vkt_batch *b,
               enum vkt_wait wait, bool chain)
{
    if (nbatches < 1 || nbatches > VKT_MAX_BATCHES)
        vkt_die("bad batch count %d", nbatches);
    if (api == VKT_SUBMIT2 && !d->sync2)
        vkt_die("vkQueueSubmit2 needs the synchronization2 feature");
    if (api == VKT_SUBMIT2_KHR && !d->submit2_khr)
        vkt_die("vkQueueSubmit2KHR needs VK_KHR_synchronization2");
    if (wait == VKT_WAIT_TIMELINE && !d->timeline)
        vkt_die("timeline wait needs the timelineSemaphore feature");

    VkCommandBuffer cbs[VKT_MAX_BATCHES][VKT_MAX_CMDS];
    for (int i = 0; i < nbatches; i++)
        for (int j = 0; j < b[i].ncmds; j++)
            cbs[i][j] = b[i].cmds[j]->cb;
    struct submit_plan plan = {
        .nbatches = nbatches,
        .chain = chain,
        .timeline_value = wait == VKT_WAIT_TIMELINE ? ++d->timeline_value : 0,
        .fence = wait == VKT_WAIT_FENCE || wait == VKT_DEFER_FENCE ? d->fence : VK_NULL_HANDLE,
    };

    uint64_t t_submit = vkt_now_ns();
    VkResult r = api == VKT_SUBMIT1 ? submit_v1(d, &plan, cbs, b)
                                    : submit_v2(d, &plan, api == VKT_SUBMIT2_KHR, cbs, b);
    uint64_t t_return = vkt_now_ns();
    VKT_CHECK(r);
    int call = truth_call_begin(d->queue_key, api_name(api), wait_name(wait), nbatches, b, t_submit,
                                t_return);

    switch (wait) {
    case VKT_WAIT_FENCE:
        vkt_finish_fence(d, call);
        break;
    case VKT_WAIT_TIMELINE:
        wait_timeline(d, plan.timeline_value);
        truth_call_done(call, vkt_now_ns());
        break;
    case VKT_WAIT_IDLE:
        vkt_finish_idle(d);
        break;
    case VKT_DEFER_FENCE:
    case VKT_DEFER:
        break;
    }
    return call;
}

int vkt_submit1(struct vkt_cmd *c)
{
    struct vkt_batch b = { 1, { c } };
    return vkt_submit(c->dev, VKT_SUBMIT1, 1, &b, VKT_WAIT_FENCE, false);
}

void vkt_finish_fence(struct vkt_device *d, int call)
{
    VKT_CHECK(vkWaitForFences(d->device, 1, &d->fence, VK_TRUE, UINT64_MAX));
    truth_call_done(call, vkt_now_ns());
    VKT_CHECK(vkResetFences(d->device, 1, &d->fence));
}

void vkt_finish_idle(struct vkt_device *d)
{
    VKT_CHECK(vkQueueWaitIdle(d->queue));
    truth_queue_done(d->queue_key, vkt_now_ns());
}

void vkt_queue_label_begin(struct vkt_device *d, const char *name)
{
    VkDebugUtilsLabelEXT label = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
        .pLabelName = name,
    };
    d->inst->queue_begin_label(d->queue, &label);
    truth_queue_label(d->queue_key, true, name);
}

void vkt_queue_label_end(struct vkt_device *d)
{
    d->inst->queue_end_label(d->queue);
    truth_queue_label(d->queue_key, false, NULL);
}
