/* What the host-compatibility programs share: an instance that enables the
 * layers GZ_HOST_LAYERS names, in that order (first nearest the program:
 * the loader keeps the order of ppEnabledLayerNames, not that of
 * VK_INSTANCE_LAYERS), with a debug messenger that counts the validation
 * layer's complaints; a device with one compute queue; and labelled work
 * (a fill inside a debug label) submitted and waited for. Header-only; for
 * the test programs of tests/host only. */
#ifndef GZ_HOST_VK_H
#define GZ_HOST_VK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#define HOST_CHECK(x)                                                                              \
    do {                                                                                           \
        VkResult r_ = (x);                                                                         \
        if (r_ != VK_SUCCESS) {                                                                    \
            fprintf(stderr, "%s failed: %d\n", #x, r_);                                            \
            exit(70);                                                                              \
        }                                                                                          \
    } while (0)

typedef struct host_vk {
    VkInstance instance;
    VkPhysicalDevice gpu;
    VkDebugUtilsMessengerEXT messenger;
    VkDevice device;
    VkQueue queue;
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkBuffer buf;
    VkDeviceMemory mem;
    VkFence fence;
    PFN_vkCmdBeginDebugUtilsLabelEXT begin_label;
    PFN_vkCmdEndDebugUtilsLabelEXT end_label;
} host_vk;

/* Complaints of the layers below the program (the validation layer's
 * warnings and errors), and whether the validation layer said it runs. */
static int host_vk_complaints;
static int host_vk_validation_active;

static VKAPI_ATTR VkBool32 VKAPI_CALL host_vk_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT type,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)type;
    (void)user;
    const char *id = data->pMessageIdName ? data->pMessageIdName : "";
    const char *text = data->pMessage ? data->pMessage : "";
    if (strstr(id, "createinstance-status-message") || strstr(text, "Validation Layer Active"))
        host_vk_validation_active = 1;
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        host_vk_complaints++;
        fprintf(stderr, "validation: %s: %.600s\n", id, text);
    }
    return VK_FALSE;
}

/* api: the instance's apiVersion (VK_API_VERSION_1_0 asks for no
 * VK_KHR_get_physical_device_properties2 either). */
static inline void host_vk_instance(host_vk *v, uint32_t api)
{
    const char *layers[8];
    uint32_t nlayers = 0;
    char buf[512];
    const char *env = getenv("GZ_HOST_LAYERS");
    if (env && *env) {
        snprintf(buf, sizeof buf, "%s", env);
        for (char *save = NULL, *tok = strtok_r(buf, ":", &save); tok && nlayers < 8;
             tok = strtok_r(NULL, ":", &save))
            layers[nlayers++] = tok;
    }
    const char *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    VkDebugUtilsMessengerCreateInfoEXT mci = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = host_vk_message,
    };
    VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                            .pApplicationName = "gz-host",
                            .apiVersion = api};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pNext = &mci,
                               .pApplicationInfo = &ai,
                               .enabledLayerCount = nlayers,
                               .ppEnabledLayerNames = layers,
                               .enabledExtensionCount = 1,
                               .ppEnabledExtensionNames = exts};
    HOST_CHECK(vkCreateInstance(&ci, NULL, &v->instance));
    PFN_vkCreateDebugUtilsMessengerEXT create_messenger =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            v->instance, "vkCreateDebugUtilsMessengerEXT");
    HOST_CHECK(create_messenger(v->instance, &mci, NULL, &v->messenger));
    uint32_t n = 1;
    VkResult r = vkEnumeratePhysicalDevices(v->instance, &n, &v->gpu);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || !n) {
        fprintf(stderr, "no Vulkan device\n");
        exit(70);
    }
}

/* vkCreateDevice with one queue of family 0 and, when features is not
 * NULL, those features; the driver's answer. */
static inline VkResult host_vk_try_device(host_vk *v, const VkPhysicalDeviceFeatures *features,
                                          VkDevice *out)
{
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                  .queueFamilyIndex = 0,
                                  .queueCount = 1,
                                  .pQueuePriorities = &prio};
    VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &qi,
                             .pEnabledFeatures = features};
    return vkCreateDevice(v->gpu, &ci, NULL, out);
}

/* The device, its queue, and a 64 KiB buffer to fill. */
static inline void host_vk_device(host_vk *v)
{
    HOST_CHECK(host_vk_try_device(v, NULL, &v->device));
    vkGetDeviceQueue(v->device, 0, 0, &v->queue);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = 0};
    HOST_CHECK(vkCreateCommandPool(v->device, &pci, NULL, &v->pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = v->pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    HOST_CHECK(vkAllocateCommandBuffers(v->device, &cai, &v->cmd));
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = 65536,
                              .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
    HOST_CHECK(vkCreateBuffer(v->device, &bci, NULL, &v->buf));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(v->device, v->buf, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(v->gpu, &mp);
    uint32_t type = 0;
    while (type < mp.memoryTypeCount && !(req.memoryTypeBits & (1u << type)))
        type++;
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = type};
    HOST_CHECK(vkAllocateMemory(v->device, &mai, NULL, &v->mem));
    HOST_CHECK(vkBindBufferMemory(v->device, v->buf, v->mem, 0));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    HOST_CHECK(vkCreateFence(v->device, &fci, NULL, &v->fence));
    v->begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetDeviceProcAddr(
        v->device, "vkCmdBeginDebugUtilsLabelEXT");
    v->end_label =
        (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetDeviceProcAddr(v->device, "vkCmdEndDebugUtilsLabelEXT");
}

/* One submission: a fill inside a debug label of that name, waited for. */
static inline void host_vk_work_labelled(host_vk *v, const char *name)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    HOST_CHECK(vkBeginCommandBuffer(v->cmd, &bi));
    VkDebugUtilsLabelEXT label = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
                                  .pLabelName = name};
    if (v->begin_label)
        v->begin_label(v->cmd, &label);
    vkCmdFillBuffer(v->cmd, v->buf, 0, VK_WHOLE_SIZE, 0x5a5a5a5a);
    if (v->end_label)
        v->end_label(v->cmd);
    HOST_CHECK(vkEndCommandBuffer(v->cmd));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &v->cmd};
    HOST_CHECK(vkQueueSubmit(v->queue, 1, &si, v->fence));
    HOST_CHECK(vkWaitForFences(v->device, 1, &v->fence, VK_TRUE, UINT64_MAX));
    HOST_CHECK(vkResetFences(v->device, 1, &v->fence));
}

/* The same with the label "host work". */
static inline void host_vk_work(host_vk *v)
{
    host_vk_work_labelled(v, "host work");
}

static inline void host_vk_close(host_vk *v)
{
    if (v->device) {
        vkDestroyFence(v->device, v->fence, NULL);
        vkDestroyBuffer(v->device, v->buf, NULL);
        vkFreeMemory(v->device, v->mem, NULL);
        vkDestroyCommandPool(v->device, v->pool, NULL);
        vkDestroyDevice(v->device, NULL);
    }
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            v->instance, "vkDestroyDebugUtilsMessengerEXT");
    destroy_messenger(v->instance, v->messenger, NULL);
    vkDestroyInstance(v->instance, NULL);
}

#endif
