/* The few lines every small Vulkan test and benchmark program starts with:
 * a checked call, a monotonic clock, an instance and a device with one
 * queue of family 0 on the first physical device. Header-only so that each
 * program stays one file to read; for test and benchmark programs only. */
#ifndef GZ_VK_MIN_H
#define GZ_VK_MIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <vulkan/vulkan.h>

#define GZ_VK_CHECK(x)                                                                             \
    do {                                                                                           \
        VkResult r_ = (x);                                                                         \
        if (r_ != VK_SUCCESS) {                                                                    \
            fprintf(stderr, "%s failed: %d\n", #x, r_);                                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static inline uint64_t gz_min_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int gz_min_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static inline int gz_min_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct gz_min_vk {
    VkInstance instance;
    VkPhysicalDevice gpu;
    VkPhysicalDeviceProperties props;
    VkDevice device;
    VkQueue queue; /* family 0, index 0 */
} gz_min_vk;

/* The instance and the first physical device; false (with a line on
 * stderr) when there is none. */
static inline bool gz_min_vk_instance(gz_min_vk *v, const char *app, uint32_t api,
                                      uint32_t nexts, const char *const *exts)
{
    VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                            .pApplicationName = app,
                            .apiVersion = api};
    GZ_VK_CHECK(vkCreateInstance(&(VkInstanceCreateInfo){.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                                         .pApplicationInfo = &ai,
                                                         .enabledExtensionCount = nexts,
                                                         .ppEnabledExtensionNames = exts},
                                 NULL, &v->instance));
    uint32_t n = 1;
    VkResult r = vkEnumeratePhysicalDevices(v->instance, &n, &v->gpu);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || !n) {
        fprintf(stderr, "%s: no Vulkan device\n", app);
        return false;
    }
    vkGetPhysicalDeviceProperties(v->gpu, &v->props);
    return true;
}

/* The device with one queue of family 0. */
static inline void gz_min_vk_device(gz_min_vk *v, uint32_t nexts, const char *const *exts)
{
    float prio = 1.0f;
    GZ_VK_CHECK(vkCreateDevice(v->gpu,
                               &(VkDeviceCreateInfo){
                                   .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                   .queueCreateInfoCount = 1,
                                   .pQueueCreateInfos = &(VkDeviceQueueCreateInfo){
                                       .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                       .queueCount = 1,
                                       .pQueuePriorities = &prio},
                                   .enabledExtensionCount = nexts,
                                   .ppEnabledExtensionNames = exts},
                               NULL, &v->device));
    vkGetDeviceQueue(v->device, 0, 0, &v->queue);
}

static inline void gz_min_vk_close(gz_min_vk *v)
{
    if (v->device)
        vkDestroyDevice(v->device, NULL);
    vkDestroyInstance(v->instance, NULL);
}

#endif
