/* The Vulkan layer's shared state: dispatch data per instance and device,
 * the maps from the app's instances, devices, queues and command pools to
 * the layer's records, and the hooks. The layer only intercepts; the
 * timing work is done by contexts/vk, which also keeps the command buffers
 * (gz_vk_cmdbuf_find). */
#ifndef GZ_LAYER_H
#define GZ_LAYER_H

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include "gz_client.h"
#include "gz_handle_map.h"
#include "gz_vk.h"

#define GZ_LAYER_NAME "VK_LAYER_GPUZONES_timing"
#define GZ_LAYER_MAX_QUEUES 64

/* Every record below starts with its node in one of the maps: inserting
 * never allocates, so a layer short of memory still dispatches every call
 * (it just times less). */

typedef struct layer_instance {
    gz_handle_node node; /* gz_layer_instances, by dispatch key */
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

typedef struct layer_queue {
    gz_handle_node node; /* gz_layer_queues, by VkQueue */
    gz_vk_queue *ctx;
} layer_queue;

struct layer_pool;

typedef struct layer_device {
    gz_handle_node node; /* gz_layer_devices, by dispatch key */
    VkDevice handle;
    layer_instance *inst;
    gz_vk_device *ctx; /* NULL: not timed, pass-through only */
    PFN_vkGetDeviceProcAddr next_gdpa;
    pthread_mutex_t lock; /* queues, pools */
    layer_queue queues[GZ_LAYER_MAX_QUEUES]; /* removed from the map with the device */
    uint32_t nqueues;
    struct layer_pool *pools; /* live pools: freed with the device if the app did not */
    gz_vk_fns fns; /* the next layer's; the BY_HAND ones of gz_vk_fns.h stay NULL */
} layer_device;

/* A command pool: its command buffers are the context's (gz_vk_cmdpool). */
typedef struct layer_pool {
    gz_handle_node node; /* gz_layer_pools, by VkCommandPool */
    layer_device *dev;
    struct layer_pool *prev, *next; /* in dev->pools */
    gz_vk_cmdpool *ctx;
} layer_pool;

extern gz_handle_map gz_layer_instances; /* dispatch key → layer_instance */
extern gz_handle_map gz_layer_devices;   /* dispatch key → layer_device */
extern gz_handle_map gz_layer_queues;    /* VkQueue → layer_queue */
extern gz_handle_map gz_layer_pools;     /* VkCommandPool → layer_pool */

static inline uint64_t gz_dispatch_key(const void *dispatchable)
{
    return (uint64_t)(uintptr_t) * (void *const *)dispatchable;
}

#define GZ_LAYER_FIND(map, key, type)                                                              \
    ({                                                                                             \
        gz_handle_node *n_ = gz_handle_map_get(map, key);                                         \
        n_ ? gz_container_of(n_, type, node) : (type *)NULL;                                       \
    })

static inline layer_instance *gz_layer_instance(const void *dispatchable)
{
    return GZ_LAYER_FIND(&gz_layer_instances, gz_dispatch_key(dispatchable), layer_instance);
}

static inline layer_device *gz_layer_device(const void *dispatchable)
{
    return GZ_LAYER_FIND(&gz_layer_devices, gz_dispatch_key(dispatchable), layer_device);
}

/* A command buffer's device, and its context where the layer tracks it
 * (*c, else NULL): one lookup for a tracked one. */
static inline layer_device *gz_layer_cmdbuf(VkCommandBuffer cb, gz_vk_cmdbuf **c)
{
    *c = gz_vk_cmdbuf_find(cb);
    return *c ? (layer_device *)gz_vk_cmdbuf_user(*c) : gz_layer_device(cb);
}

static inline gz_vk_queue *gz_layer_queue(VkQueue queue)
{
    layer_queue *q = GZ_LAYER_FIND(&gz_layer_queues, GZ_HANDLE_KEY(queue), layer_queue);
    return q ? q->ctx : NULL;
}

/* records.c: the maps, made once before the first instance; records of
 * instances and devices, from a small reserve when memory is short (NULL
 * only when that is used up too). */
void gz_layer_records_init(void);
layer_instance *gz_layer_instance_alloc(void);
void gz_layer_instance_free(layer_instance *inst);
layer_device *gz_layer_device_alloc(void);
void gz_layer_device_free(layer_device *dev);

/* commands.c: a pool's record and its command buffers' (out of the maps). */
void gz_layer_pool_free(layer_pool *p);

/* The hooks: vkCreateDevice's (device.c), and one for each GZ_VK_HOOK of
 * gz_vk_fns.h (device.c, commands.c, submit.c), of the type of the Vulkan
 * function it stands for. */
VkResult gz_hook_CreateDevice(VkPhysicalDevice phys, const VkDeviceCreateInfo *info,
                              const VkAllocationCallbacks *alloc, VkDevice *device);
#define GZ_VK_FN(name, use)
#define GZ_VK_HOOK(name, use) extern __typeof__(*(PFN_vk##name)NULL) gz_hook_##name;
#include "gz_vk_fns.h"

#endif
