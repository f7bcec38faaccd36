/* VK_LAYER_GPUZONES_clockfault: a test layer placed between gpuzones and
 * the real driver that changes exactly one behaviour of the driver's
 * clocks, chosen by environment variables, so that tests know the ground
 * truth (the real lavapipe time) while gpuzones sees the fault.
 *
 *   GZFAULT_HIDE_CALIBRATION=1   the device has no calibrated timestamps
 *                                (VK_EXT/KHR_calibrated_timestamps hidden)
 *   GZFAULT_HIDE_HOST_QUERY_RESET=1
 *                                no host query reset: VK_EXT_host_query_reset
 *                                hidden, the hostQueryReset feature reported
 *                                false, and device creation refused if it is
 *                                asked for anyway
 *   GZFAULT_VALID_BITS=N         every queue family reports timestampValidBits
 *                                N (only 0 today: "no timestamps")
 *
 * Every other call passes straight through. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct instance_data {
    void *key;
    VkInstance handle;
    PFN_vkGetInstanceProcAddr next_gipa;
    /* Resolved at creation: asked later, the loader's terminator answers
     * vkDestroyInstance with the top of the chain. */
    PFN_vkDestroyInstance DestroyInstance;
    PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties;
    PFN_vkGetPhysicalDeviceFeatures2 GetPhysicalDeviceFeatures2;
    PFN_vkGetPhysicalDeviceFeatures2 GetPhysicalDeviceFeatures2KHR;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties2 GetPhysicalDeviceQueueFamilyProperties2;
} instance_data;

typedef struct device_data {
    void *key;
    PFN_vkGetDeviceProcAddr next_gdpa;
    PFN_vkDestroyDevice DestroyDevice;
} device_data;

#define MAX_OBJECTS 64
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static instance_data instances[MAX_OBJECTS];
static device_data devices[MAX_OBJECTS];

static void *key_of(const void *dispatchable)
{
    return *(void *const *)dispatchable;
}

static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static instance_data *find_instance(const void *dispatchable)
{
    void *key = key_of(dispatchable);
    instance_data *found = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OBJECTS && !found; i++)
        if (instances[i].key == key)
            found = &instances[i];
    pthread_mutex_unlock(&lock);
    return found;
}

static device_data *find_device(const void *dispatchable)
{
    void *key = key_of(dispatchable);
    device_data *found = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OBJECTS && !found; i++)
        if (devices[i].key == key)
            found = &devices[i];
    pthread_mutex_unlock(&lock);
    return found;
}

static VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo *info,
                                                     const VkAllocationCallbacks *alloc,
                                                     VkInstance *instance)
{
    VkLayerInstanceCreateInfo *link = (VkLayerInstanceCreateInfo *)info->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO &&
                     link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerInstanceCreateInfo *)link->pNext;
    if (!link)
        return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)next(NULL, "vkCreateInstance");
    VkResult r = create(info, alloc, instance);
    if (r != VK_SUCCESS)
        return r;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OBJECTS; i++) {
        if (!instances[i].key) {
            instances[i] = (instance_data){
                .key = key_of(*instance),
                .handle = *instance,
                .next_gipa = next,
                .DestroyInstance = (PFN_vkDestroyInstance)next(*instance, "vkDestroyInstance"),
                .EnumerateDeviceExtensionProperties = (PFN_vkEnumerateDeviceExtensionProperties)next(
                    *instance, "vkEnumerateDeviceExtensionProperties"),
                .GetPhysicalDeviceFeatures2 = (PFN_vkGetPhysicalDeviceFeatures2)next(
                    *instance, "vkGetPhysicalDeviceFeatures2"),
                .GetPhysicalDeviceFeatures2KHR = (PFN_vkGetPhysicalDeviceFeatures2)next(
                    *instance, "vkGetPhysicalDeviceFeatures2KHR"),
                .GetPhysicalDeviceQueueFamilyProperties =
                    (PFN_vkGetPhysicalDeviceQueueFamilyProperties)next(
                        *instance, "vkGetPhysicalDeviceQueueFamilyProperties"),
                .GetPhysicalDeviceQueueFamilyProperties2 =
                    (PFN_vkGetPhysicalDeviceQueueFamilyProperties2)next(
                        *instance, "vkGetPhysicalDeviceQueueFamilyProperties2"),
            };
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return r;
}

static VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance,
                                                  const VkAllocationCallbacks *alloc)
{
    instance_data *d = instance ? find_instance(instance) : NULL;
    if (!d)
        return;
    PFN_vkDestroyInstance destroy = d->DestroyInstance;
    pthread_mutex_lock(&lock);
    d->key = NULL;
    pthread_mutex_unlock(&lock);
    destroy(instance, alloc);
}

static bool hidden_extension(const char *name)
{
    if (env_on("GZFAULT_HIDE_CALIBRATION") &&
        (!strcmp(name, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) ||
         !strcmp(name, "VK_KHR_calibrated_timestamps")))
        return true;
    return env_on("GZFAULT_HIDE_HOST_QUERY_RESET") &&
           !strcmp(name, VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME);
}

/* The hostQueryReset flags in a features chain (queried or requested). */
static VkBool32 *next_hqr_flag(const void **chain)
{
    for (VkBaseOutStructure *s = (VkBaseOutStructure *)*chain; s; s = s->pNext) {
        *chain = s->pNext;
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES)
            return &((VkPhysicalDeviceHostQueryResetFeatures *)s)->hostQueryReset;
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)
            return &((VkPhysicalDeviceVulkan12Features *)s)->hostQueryReset;
    }
    return NULL;
}

static void features2(VkPhysicalDevice phys, VkPhysicalDeviceFeatures2 *f, bool khr)
{
    instance_data *d = find_instance(phys);
    (khr ? d->GetPhysicalDeviceFeatures2KHR : d->GetPhysicalDeviceFeatures2)(phys, f);
    if (env_on("GZFAULT_HIDE_HOST_QUERY_RESET")) {
        const void *chain = f->pNext;
        VkBool32 *flag;
        while ((flag = next_hqr_flag(&chain)))
            *flag = VK_FALSE;
    }
}

static VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceFeatures2(VkPhysicalDevice phys,
                                                             VkPhysicalDeviceFeatures2 *f)
{
    features2(phys, f, false);
}

static VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceFeatures2KHR(VkPhysicalDevice phys,
                                                                VkPhysicalDeviceFeatures2 *f)
{
    features2(phys, f, true);
}

static void fake_valid_bits(uint32_t *bits)
{
    const char *v = getenv("GZFAULT_VALID_BITS");
    if (v && *v)
        *bits = (uint32_t)strtoul(v, NULL, 10);
}

static VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceQueueFamilyProperties(
    VkPhysicalDevice phys, uint32_t *count, VkQueueFamilyProperties *props)
{
    find_instance(phys)->GetPhysicalDeviceQueueFamilyProperties(phys, count, props);
    for (uint32_t i = 0; props && i < *count; i++)
        fake_valid_bits(&props[i].timestampValidBits);
}

static VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceQueueFamilyProperties2(
    VkPhysicalDevice phys, uint32_t *count, VkQueueFamilyProperties2 *props)
{
    find_instance(phys)->GetPhysicalDeviceQueueFamilyProperties2(phys, count, props);
    for (uint32_t i = 0; props && i < *count; i++)
        fake_valid_bits(&props[i].queueFamilyProperties.timestampValidBits);
}

static VKAPI_ATTR VkResult VKAPI_CALL EnumerateDeviceExtensionProperties(
    VkPhysicalDevice phys, const char *layer, uint32_t *count, VkExtensionProperties *props)
{
    instance_data *d = find_instance(phys);
    if (layer)
        return d->EnumerateDeviceExtensionProperties(phys, layer, count, props);
    uint32_t n = 0;
    VkResult r = d->EnumerateDeviceExtensionProperties(phys, NULL, &n, NULL);
    if (r != VK_SUCCESS)
        return r;
    VkExtensionProperties *all = calloc(n ? n : 1, sizeof *all);
    if (!all)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    r = d->EnumerateDeviceExtensionProperties(phys, NULL, &n, all);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!hidden_extension(all[i].extensionName))
            all[kept++] = all[i];
    if (!props) {
        *count = kept;
    } else {
        uint32_t copy = *count < kept ? *count : kept;
        memcpy(props, all, copy * sizeof *props);
        r = copy < kept ? VK_INCOMPLETE : VK_SUCCESS;
        *count = copy;
    }
    free(all);
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice phys,
                                                   const VkDeviceCreateInfo *info,
                                                   const VkAllocationCallbacks *alloc,
                                                   VkDevice *device)
{
    instance_data *inst = find_instance(phys);
    VkLayerDeviceCreateInfo *link = (VkLayerDeviceCreateInfo *)info->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
                     link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerDeviceCreateInfo *)link->pNext;
    if (!link || !inst)
        return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    PFN_vkCreateDevice create = (PFN_vkCreateDevice)next_gipa(inst->handle, "vkCreateDevice");
    if (env_on("GZFAULT_HIDE_HOST_QUERY_RESET")) {
        /* Like a driver without the feature: asking for it fails. */
        const void *chain = info->pNext;
        VkBool32 *flag;
        while ((flag = next_hqr_flag(&chain)))
            if (*flag)
                return VK_ERROR_FEATURE_NOT_PRESENT;
        for (uint32_t i = 0; i < info->enabledExtensionCount; i++)
            if (!strcmp(info->ppEnabledExtensionNames[i], VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME))
                return VK_ERROR_EXTENSION_NOT_PRESENT;
    }
    VkResult r = create(phys, info, alloc, device);
    if (r != VK_SUCCESS)
        return r;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OBJECTS; i++) {
        if (!devices[i].key) {
            devices[i] = (device_data){
                .key = key_of(*device),
                .next_gdpa = next_gdpa,
                .DestroyDevice = (PFN_vkDestroyDevice)next_gdpa(*device, "vkDestroyDevice"),
            };
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return r;
}

static VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks *alloc)
{
    device_data *d = device ? find_device(device) : NULL;
    if (!d)
        return;
    PFN_vkDestroyDevice destroy = d->DestroyDevice;
    pthread_mutex_lock(&lock);
    d->key = NULL;
    pthread_mutex_unlock(&lock);
    destroy(device, alloc);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char *name);

static PFN_vkVoidFunction own(const char *name)
{
    if (!strcmp(name, "vkCreateInstance"))
        return (PFN_vkVoidFunction)CreateInstance;
    if (!strcmp(name, "vkDestroyInstance"))
        return (PFN_vkVoidFunction)DestroyInstance;
    if (!strcmp(name, "vkEnumerateDeviceExtensionProperties"))
        return (PFN_vkVoidFunction)EnumerateDeviceExtensionProperties;
    if (!strcmp(name, "vkCreateDevice"))
        return (PFN_vkVoidFunction)CreateDevice;
    if (!strcmp(name, "vkGetPhysicalDeviceFeatures2"))
        return (PFN_vkVoidFunction)GetPhysicalDeviceFeatures2;
    if (!strcmp(name, "vkGetPhysicalDeviceFeatures2KHR"))
        return (PFN_vkVoidFunction)GetPhysicalDeviceFeatures2KHR;
    if (!strcmp(name, "vkGetPhysicalDeviceQueueFamilyProperties"))
        return (PFN_vkVoidFunction)GetPhysicalDeviceQueueFamilyProperties;
    if (!strcmp(name, "vkGetPhysicalDeviceQueueFamilyProperties2"))
        return (PFN_vkVoidFunction)GetPhysicalDeviceQueueFamilyProperties2;
    if (!strcmp(name, "vkDestroyDevice"))
        return (PFN_vkVoidFunction)DestroyDevice;
    if (!strcmp(name, "vkGetDeviceProcAddr"))
        return (PFN_vkVoidFunction)GetDeviceProcAddr;
    return NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetInstanceProcAddr(VkInstance instance,
                                                                    const char *name)
{
    if (!strcmp(name, "vkGetInstanceProcAddr"))
        return (PFN_vkVoidFunction)GetInstanceProcAddr;
    PFN_vkVoidFunction f = own(name);
    if (f)
        return f;
    instance_data *d = instance ? find_instance(instance) : NULL;
    return d ? d->next_gipa(instance, name) : NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char *name)
{
    if (!strcmp(name, "vkGetDeviceProcAddr") || !strcmp(name, "vkDestroyDevice"))
        return own(name);
    device_data *d = device ? find_device(device) : NULL;
    return d ? d->next_gdpa(device, name) : NULL;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v)
{
    if (v->loaderLayerInterfaceVersion > 2)
        v->loaderLayerInterfaceVersion = 2;
    v->pfnGetInstanceProcAddr = GetInstanceProcAddr;
    v->pfnGetDeviceProcAddr = GetDeviceProcAddr;
    v->pfnGetPhysicalDeviceProcAddr = NULL;
    return VK_SUCCESS;
}
