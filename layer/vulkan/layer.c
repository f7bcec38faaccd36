/* Entry points of VK_LAYER_GPUZONES_timing: loader negotiation, the
 * instance, and the one table of hooks that the proc-addr lookups read
 * (device.c, commands.c and submit.c define the device's hooks). The
 * exported names are thin wrappers around static functions, and the
 * library links with -Bsymbolic, so the loader's global
 * vkGetInstanceProcAddr can never be called in place of ours. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "gz_layer.h"

#define EXPORT __attribute__((visibility("default")))

/* The loader may unload the layer at vkDestroyInstance while our worker
 * thread runs, and reload it for the next instance, which would restart
 * the trace file. Keep the library (and libgpuzones with it) loaded. */
static void pin_library(void)
{
    Dl_info info;
    if (dladdr((void *)pin_library, &info) && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static uint32_t live_instances; /* atomic */

static VkLayerInstanceCreateInfo *find_link(const VkInstanceCreateInfo *info)
{
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO &&
            ((const VkLayerInstanceCreateInfo *)s)->function == VK_LAYER_LINK_INFO)
            return (VkLayerInstanceCreateInfo *)s;
    }
    return NULL;
}

static bool extension_enabled(const VkInstanceCreateInfo *info, const char *name)
{
    for (uint32_t i = 0; i < info->enabledExtensionCount; i++)
        if (!strcmp(info->ppEnabledExtensionNames[i], name))
            return true;
    return false;
}

static VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo *info,
                                                     const VkAllocationCallbacks *alloc,
                                                     VkInstance *instance)
{
    gz_layer_records_init();
    VkLayerInstanceCreateInfo *link = find_link(info);
    if (!link || !link->u.pLayerInfo)
        return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)next_gipa(NULL, "vkCreateInstance");
    if (!create)
        return VK_ERROR_INITIALIZATION_FAILED;
    /* The record first: an instance created without one would have no
     * dispatch through this layer. */
    layer_instance *inst = gz_layer_instance_alloc();
    if (!inst)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    VkResult r = create(info, alloc, instance);
    if (r != VK_SUCCESS) {
        gz_layer_instance_free(inst);
        return r;
    }
    inst->handle = *instance;
    inst->next_gipa = next_gipa;
    inst->api_version = info->pApplicationInfo && info->pApplicationInfo->apiVersion
                            ? info->pApplicationInfo->apiVersion
                            : VK_API_VERSION_1_0;
#define LOAD(field, name) inst->field = (void *)next_gipa(*instance, name)
    LOAD(DestroyInstance, "vkDestroyInstance");
    LOAD(EnumerateDeviceExtensionProperties, "vkEnumerateDeviceExtensionProperties");
    LOAD(GetPhysicalDeviceProperties, "vkGetPhysicalDeviceProperties");
    LOAD(GetPhysicalDeviceQueueFamilyProperties, "vkGetPhysicalDeviceQueueFamilyProperties");
    LOAD(GetPhysicalDeviceMemoryProperties, "vkGetPhysicalDeviceMemoryProperties");
    if (inst->api_version >= VK_API_VERSION_1_1)
        LOAD(GetPhysicalDeviceFeatures2, "vkGetPhysicalDeviceFeatures2");
    else if (extension_enabled(info, VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME))
        LOAD(GetPhysicalDeviceFeatures2, "vkGetPhysicalDeviceFeatures2KHR");
#undef LOAD
    inst->has_gpdp2 = inst->GetPhysicalDeviceFeatures2 != NULL;
    gz_handle_map_put(&gz_layer_instances, gz_dispatch_key(*instance), &inst->node);
    __atomic_add_fetch(&live_instances, 1, __ATOMIC_RELAXED);
    pin_library();
    gz_client_note_frontend(GZ_FRONTEND_VULKAN);
    gz_client_start();
    return r;
}

static VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance,
                                                  const VkAllocationCallbacks *alloc)
{
    if (!instance)
        return;
    gz_handle_node *n = gz_handle_map_remove(&gz_layer_instances, gz_dispatch_key(instance));
    if (!n)
        return;
    layer_instance *inst = gz_container_of(n, layer_instance, node);
    inst->DestroyInstance(instance, alloc);
    gz_layer_instance_free(inst);
    /* The program may end now without atexit (a Go program's exit): the
     * trace and the summary so far are made complete. */
    if (__atomic_sub_fetch(&live_instances, 1, __ATOMIC_ACQ_REL) == 0)
        gz_client_checkpoint(true);
}

/* Every function the layer intercepts, by name: the instance's, always
 * ours, and the device's (gz_vk_fns.h), ours only where the next layer has
 * the function, so that no hook calls a NULL pointer. */
typedef struct hook {
    const char *name;
    PFN_vkVoidFunction fn;
    bool device;
    bool recording; /* needed only where recordings are timed */
} hook;

static const hook hooks[] = {
    {"vkCreateInstance", (PFN_vkVoidFunction)CreateInstance, false, false},
    {"vkDestroyInstance", (PFN_vkVoidFunction)DestroyInstance, false, false},
    {"vkCreateDevice", (PFN_vkVoidFunction)gz_hook_CreateDevice, false, false},
#define GZ_VK_FN(name, use)
#define GZ_VK_HOOK(name, use)                                                                      \
    {"vk" #name, (PFN_vkVoidFunction)gz_hook_##name, true, ((use) & GZ_VK_FN_RECORDING) != 0},
#include "gz_vk_fns.h"
};

/* The hook for name, if the layer takes that call. At the submit level
 * nothing of the app's recording is timed: those calls go straight to the
 * next layer, and cost the app nothing of ours. */
static const hook *find_hook(const char *name)
{
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++)
        if (!strcmp(name, hooks[i].name))
            return hooks[i].recording && gz_client_level() < GZ_LEVEL_CMDBUF ? NULL : &hooks[i];
    return NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device,
                                                                  const char *name);

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetInstanceProcAddr(VkInstance instance,
                                                                    const char *name)
{
    if (!strcmp(name, "vkGetInstanceProcAddr"))
        return (PFN_vkVoidFunction)GetInstanceProcAddr;
    if (!strcmp(name, "vkGetDeviceProcAddr"))
        return (PFN_vkVoidFunction)GetDeviceProcAddr;
    const hook *h = find_hook(name);
    if (h && !h->device)
        return h->fn;
    if (!instance)
        return NULL;
    layer_instance *inst = gz_layer_instance(instance);
    if (!inst)
        return NULL;
    /* Device functions asked for through the instance too. */
    PFN_vkVoidFunction next = inst->next_gipa(instance, name);
    return h && next ? h->fn : next;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device,
                                                                  const char *name)
{
    if (!strcmp(name, "vkGetDeviceProcAddr"))
        return (PFN_vkVoidFunction)GetDeviceProcAddr;
    if (!device)
        return NULL;
    layer_device *dev = gz_layer_device(device);
    if (!dev)
        return NULL;
    PFN_vkVoidFunction next = dev->next_gdpa(device, name);
    const hook *h = next ? find_hook(name) : NULL;
    return h && h->device ? h->fn : next;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v)
{
    if (!v || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT)
        return VK_ERROR_INITIALIZATION_FAILED;
    if (v->loaderLayerInterfaceVersion > CURRENT_LOADER_LAYER_INTERFACE_VERSION)
        v->loaderLayerInterfaceVersion = CURRENT_LOADER_LAYER_INTERFACE_VERSION;
    if (v->loaderLayerInterfaceVersion >= 2) {
        v->pfnGetInstanceProcAddr = GetInstanceProcAddr;
        v->pfnGetDeviceProcAddr = GetDeviceProcAddr;
        v->pfnGetPhysicalDeviceProcAddr = NULL;
    }
    return VK_SUCCESS;
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance,
                                                                      const char *name)
{
    return GetInstanceProcAddr(instance, name);
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device,
                                                                    const char *name)
{
    return GetDeviceProcAddr(device, name);
}
