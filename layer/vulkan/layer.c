/* Entry points of VK_LAYER_GPUZONES_timing: loader negotiation, proc-addr
 * lookups and the instance. The exported names are thin wrappers around
 * static functions, and the library links with -Bsymbolic, so the loader's
 * global vkGetInstanceProcAddr can never be called in place of ours. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "gz_layer.h"

#define EXPORT __attribute__((visibility("default")))

gz_handle_map gz_layer_instances;
gz_handle_map gz_layer_devices;
gz_handle_map gz_layer_queues;
gz_handle_map gz_layer_pools;
gz_handle_map gz_layer_cmdbufs;

static pthread_once_t maps_once = PTHREAD_ONCE_INIT;

static void init_maps(void)
{
    gz_handle_map_init(&gz_layer_instances);
    gz_handle_map_init(&gz_layer_devices);
    gz_handle_map_init(&gz_layer_queues);
    gz_handle_map_init(&gz_layer_pools);
    gz_handle_map_init(&gz_layer_cmdbufs);
    gz_vk_set_cmdbuf_lookup(gz_layer_cmdbuf); /* for the explicit API's checks */
}

/* Instance and device records kept aside for when malloc fails: without
 * its record a created object would have no dispatch, and every later
 * call through the loader would fail. */
#define RESERVE 4
static layer_instance reserve_instances[RESERVE];
static layer_device reserve_devices[RESERVE];
static bool reserve_instance_used[RESERVE], reserve_device_used[RESERVE]; /* atomic */

static void *from_reserve(void *base, size_t size, bool *used)
{
    for (int i = 0; i < RESERVE; i++) {
        if (!__atomic_exchange_n(&used[i], true, __ATOMIC_ACQ_REL)) {
            void *p = (char *)base + (size_t)i * size;
            memset(p, 0, size);
            return p;
        }
    }
    return NULL;
}

static bool to_reserve(void *p, void *base, size_t size, bool *used)
{
    char *c = p, *b = base;
    if (c < b || c >= b + RESERVE * size)
        return false;
    __atomic_store_n(&used[(size_t)(c - b) / size], false, __ATOMIC_RELEASE);
    return true;
}

layer_instance *gz_layer_instance_alloc(void)
{
    layer_instance *inst = calloc(1, sizeof *inst);
    return inst ? inst
                : from_reserve(reserve_instances, sizeof *inst, reserve_instance_used);
}

void gz_layer_instance_free(layer_instance *inst)
{
    if (!to_reserve(inst, reserve_instances, sizeof *inst, reserve_instance_used))
        free(inst);
}

layer_device *gz_layer_device_alloc(void)
{
    layer_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        dev = from_reserve(reserve_devices, sizeof *dev, reserve_device_used);
    if (dev)
        pthread_mutex_init(&dev->lock, NULL);
    return dev;
}

void gz_layer_device_free(layer_device *dev)
{
    pthread_mutex_destroy(&dev->lock);
    if (!to_reserve(dev, reserve_devices, sizeof *dev, reserve_device_used))
        free(dev);
}

/* The loader unloads the layer when the last instance goes; libgpuzones
 * may stay (the app links it): it must not call into unmapped code. */
__attribute__((destructor)) static void forget_lookup(void)
{
    gz_vk_set_cmdbuf_lookup(NULL);
}

/* The loader may unload the layer at vkDestroyInstance while our worker
 * thread runs, and reload it for the next instance, which would restart
 * the trace file. Keep the library (and libgpuzones with it) loaded. */
static void pin_library(void)
{
    Dl_info info;
    if (dladdr((void *)pin_library, &info) && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

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
    pthread_once(&maps_once, init_maps);
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
}

static PFN_vkVoidFunction instance_proc(const char *name)
{
    static const struct {
        const char *name;
        PFN_vkVoidFunction fn;
    } procs[] = {
        {"vkCreateInstance", (PFN_vkVoidFunction)CreateInstance},
        {"vkDestroyInstance", (PFN_vkVoidFunction)DestroyInstance},
        {"vkCreateDevice", (PFN_vkVoidFunction)gz_layer_CreateDevice},
    };
    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
        if (!strcmp(name, procs[i].name))
            return procs[i].fn;
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
    PFN_vkVoidFunction ours = instance_proc(name);
    if (ours)
        return ours;
    if (!instance)
        return NULL;
    layer_instance *inst = gz_layer_instance(instance);
    if (!inst)
        return NULL;
    PFN_vkVoidFunction next = inst->next_gipa(instance, name);
    /* Device functions asked for through the instance: ours only where the
     * chain below has the function, so we never call a NULL next. */
    ours = next ? gz_layer_device_proc(name) : NULL;
    return ours ? ours : next;
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
    PFN_vkVoidFunction ours = next ? gz_layer_device_proc(name) : NULL;
    return ours ? ours : next;
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
