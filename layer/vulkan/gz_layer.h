/* The Vulkan layer's shared state: dispatch data per instance and device,
 * and the maps from the app's handles to the context's objects. The layer
 * only intercepts; the timing work is done by contexts/vk. */
#ifndef GZ_LAYER_H
#define GZ_LAYER_H

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include "gz_client.h"
#include "gz_objmap.h"
#include "gz_vk.h"

#define GZ_LAYER_NAME "VK_LAYER_GPUZONES_timing"

typedef struct layer_instance {
    VkInstance handle;
    uint32_t api_version; /* what the app asked for (1.0 when it did not say) */
    bool has_gpdp2;       /* vkGetPhysicalDeviceFeatures2 usable */
    PFN_vkGetInstanceProcAddr next_gipa;
    PFN_vkDestroyInstance DestroyInstance;
    PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties;
    PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties;
    PFN_vkGetPhysicalDeviceFeatures2 GetPhysicalDeviceFeatures2;
    PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties;
} layer_instance;

typedef struct layer_device {
    VkDevice handle;
    layer_instance *inst;
    gz_vk_device *ctx; /* NULL: not timed, pass-through only */
    PFN_vkGetDeviceProcAddr next_gdpa;
#define GZ_DEVICE_FN(name) PFN_vk##name name;
#include "gz_layer_fns.h"
#undef GZ_DEVICE_FN
} layer_device;

/* A command pool and the command buffers allocated from it, so that
 * destroying or resetting the pool reaches them. */
typedef struct layer_pool {
    uint32_t family;
    struct layer_cmdbuf **cbs;
    uint32_t count, cap;
} layer_pool;

typedef struct layer_cmdbuf {
    VkCommandBuffer handle;
    gz_vk_cmdbuf *ctx;
    layer_pool *pool;
    uint32_t pool_index;
} layer_cmdbuf;

extern gz_objmap gz_layer_instances; /* dispatch key → layer_instance */
extern gz_objmap gz_layer_devices;   /* dispatch key → layer_device */
extern gz_objmap gz_layer_queues;    /* VkQueue → gz_vk_queue */
extern gz_objmap gz_layer_pools;     /* VkCommandPool → layer_pool */
extern gz_objmap gz_layer_cmdbufs;   /* VkCommandBuffer → layer_cmdbuf */

static inline uint64_t gz_dispatch_key(const void *dispatchable)
{
    return (uint64_t)(uintptr_t) * (void *const *)dispatchable;
}

static inline layer_instance *gz_layer_instance(const void *dispatchable)
{
    return gz_objmap_get(&gz_layer_instances, gz_dispatch_key(dispatchable));
}

static inline layer_device *gz_layer_device(const void *dispatchable)
{
    return gz_objmap_get(&gz_layer_devices, gz_dispatch_key(dispatchable));
}

static inline gz_vk_cmdbuf *gz_layer_cmdbuf(VkCommandBuffer cb)
{
    layer_cmdbuf *l = gz_objmap_get(&gz_layer_cmdbufs, GZ_HANDLE_KEY(cb));
    return l ? l->ctx : NULL;
}

/* Interned call names, looked up once. */
uint32_t gz_layer_name_id(uint32_t *cache, const char *name);

/* device.c */
VkResult gz_layer_CreateDevice(VkPhysicalDevice phys, const VkDeviceCreateInfo *info,
                               const VkAllocationCallbacks *alloc, VkDevice *device);
/* Our function for a device-level name, or NULL. */
PFN_vkVoidFunction gz_layer_device_proc(const char *name);

#endif
