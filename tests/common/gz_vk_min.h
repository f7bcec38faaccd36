/* The few lines every small Vulkan test and benchmark program starts with:
 * a checked call, a monotonic clock, an instance and a device with one
 * queue on the first physical device, and a compute pipeline over one
 * storage buffer. Header-only so that each program stays one file to read;
 * for test and benchmark programs only. */
#ifndef GZ_VK_MIN_H
#define GZ_VK_MIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    uint32_t family; /* the queue's family: 0 unless the caller sets it */
    VkDevice device;
    VkQueue queue; /* index 0 of family */
} gz_min_vk;

/* GZ_TEST_APP_LAYERS=A:B: the layers the program enables itself, A nearest
 * the application (at most 8). The loader puts the layers a program
 * enables below those of VK_INSTANCE_LAYERS and the implicit ones, in the
 * order given, which is how a test or benchmark places a layer under the
 * ones it measures (tests/countlayer). buf keeps the names. */
static inline uint32_t gz_min_vk_app_layers(char *buf, size_t size, const char *names[8])
{
    const char *env = getenv("GZ_TEST_APP_LAYERS");
    uint32_t n = 0;
    if (!env || !*env)
        return 0;
    snprintf(buf, size, "%s", env);
    for (char *save = NULL, *tok = strtok_r(buf, ":", &save); tok && n < 8;
         tok = strtok_r(NULL, ":", &save))
        names[n++] = tok;
    return n;
}

/* The instance and the first physical device; false (with a line on
 * stderr) when there is none. */
static inline bool gz_min_vk_instance(gz_min_vk *v, const char *app, uint32_t api,
                                      uint32_t nexts, const char *const *exts)
{
    VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                            .pApplicationName = app,
                            .apiVersion = api};
    char layer_buf[512];
    const char *layers[8];
    uint32_t nlayers = gz_min_vk_app_layers(layer_buf, sizeof layer_buf, layers);
    GZ_VK_CHECK(vkCreateInstance(&(VkInstanceCreateInfo){.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                                         .pApplicationInfo = &ai,
                                                         .enabledLayerCount = nlayers,
                                                         .ppEnabledLayerNames = layers,
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

/* The first family with compute queues, one with timestamps first (the
 * layer's zones need them); UINT32_MAX where there is none. */
static inline uint32_t gz_min_vk_compute_family(VkPhysicalDevice gpu)
{
    VkQueueFamilyProperties fam[16];
    uint32_t n = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(gpu, &n, fam);
    for (int need_timestamps = 1; need_timestamps >= 0; need_timestamps--)
        for (uint32_t i = 0; i < n; i++)
            if ((fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
                (!need_timestamps || fam[i].timestampValidBits > 0))
                return i;
    return UINT32_MAX;
}

/* The device with one queue of v->family. */
static inline void gz_min_vk_device(gz_min_vk *v, uint32_t nexts, const char *const *exts)
{
    float prio = 1.0f;
    GZ_VK_CHECK(vkCreateDevice(v->gpu,
                               &(VkDeviceCreateInfo){
                                   .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                   .queueCreateInfoCount = 1,
                                   .pQueueCreateInfos = &(VkDeviceQueueCreateInfo){
                                       .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                       .queueFamilyIndex = v->family,
                                       .queueCount = 1,
                                       .pQueuePriorities = &prio},
                                   .enabledExtensionCount = nexts,
                                   .ppEnabledExtensionNames = exts},
                               NULL, &v->device));
    vkGetDeviceQueue(v->device, v->family, 0, &v->queue);
}

/* The layouts of a compute shader that reads and writes one storage buffer
 * at binding 0, with push_bytes of push constants (0: none). */
static inline void gz_min_vk_storage_layout(VkDevice dev, uint32_t push_bytes,
                                            VkDescriptorSetLayout *set_layout,
                                            VkPipelineLayout *layout)
{
    VkDescriptorSetLayoutBinding b = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                      VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo sci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = 1,
        .pBindings = &b,
    };
    GZ_VK_CHECK(vkCreateDescriptorSetLayout(dev, &sci, NULL, set_layout));
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                      .setLayoutCount = 1,
                                      .pSetLayouts = set_layout,
                                      .pushConstantRangeCount = push_bytes ? 1 : 0,
                                      .pPushConstantRanges = &push};
    GZ_VK_CHECK(vkCreatePipelineLayout(dev, &lci, NULL, layout));
}

/* A compute pipeline of the SPIR-V in spv (size bytes), entry point main. */
static inline VkPipeline gz_min_vk_compute_pipeline(VkDevice dev, VkPipelineLayout layout,
                                                    const uint32_t *spv, size_t size)
{
    VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = size,
                                    .pCode = spv};
    VkShaderModule module;
    GZ_VK_CHECK(vkCreateShaderModule(dev, &mci, NULL, &module));
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module,
                  .pName = "main"},
        .layout = layout,
    };
    VkPipeline p;
    GZ_VK_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, NULL, &p));
    vkDestroyShaderModule(dev, module, NULL);
    return p;
}

/* A descriptor pool for n sets of gz_min_vk_storage_layout's kind. */
static inline VkDescriptorPool gz_min_vk_storage_pool(VkDevice dev, uint32_t n)
{
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, n};
    VkDescriptorPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = n,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &size};
    VkDescriptorPool pool;
    GZ_VK_CHECK(vkCreateDescriptorPool(dev, &ci, NULL, &pool));
    return pool;
}

/* A set from pool whose binding 0 is the whole of buf. */
static inline VkDescriptorSet gz_min_vk_storage_set(VkDevice dev, VkDescriptorPool pool,
                                                    VkDescriptorSetLayout set_layout, VkBuffer buf)
{
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = pool,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &set_layout};
    VkDescriptorSet set;
    GZ_VK_CHECK(vkAllocateDescriptorSets(dev, &ai, &set));
    VkDescriptorBufferInfo bi = {buf, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                              .dstSet = set,
                              .descriptorCount = 1,
                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = &bi};
    vkUpdateDescriptorSets(dev, 1, &w, 0, NULL);
    return set;
}

static inline void gz_min_vk_close(gz_min_vk *v)
{
    if (v->device)
        vkDestroyDevice(v->device, NULL);
    vkDestroyInstance(v->instance, NULL);
}

#endif
