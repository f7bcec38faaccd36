/* Queue families and queues lavapipe does not have, played on the one it
 * has (part of the fault layer; see fake_queues.c). */
#ifndef FAKE_QUEUES_H
#define FAKE_QUEUES_H

#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

/* Reads GZFAULT_FAMILIES and GZFAULT_EXTRA_QUEUES (once). */
void fq_init(void);
bool fq_active(void);

/* The families as the layers above see them, from the real ones: props may
 * be NULL (count query), *count is its capacity on the way in. */
void fq_families(PFN_vkGetPhysicalDeviceQueueFamilyProperties real, VkPhysicalDevice phys,
                 uint32_t *count, VkQueueFamilyProperties *props);
void fq_families2(PFN_vkGetPhysicalDeviceQueueFamilyProperties2 real, VkPhysicalDevice phys,
                  uint32_t *count, VkQueueFamilyProperties2 *props);

/* The create info the driver gets: the queues of fake families and fake
 * queues of real ones left out. *out and storage live until the call
 * returns; storage has room for info's queue create infos. */
void fq_device_info(PFN_vkGetPhysicalDeviceQueueFamilyProperties real, VkPhysicalDevice phys,
                    const VkDeviceCreateInfo *info, VkDeviceCreateInfo *out,
                    VkDeviceQueueCreateInfo *storage);
/* After the driver made the device: remember how to make its fake queues. */
void fq_device_created(VkDevice device, VkPhysicalDevice phys, const VkDeviceCreateInfo *info,
                       PFN_vkGetPhysicalDeviceQueueFamilyProperties real,
                       PFN_vkSetDeviceLoaderData set_loader_data);
void fq_device_destroyed(VkDevice device);

/* A queue of the layers above: the fake one of (family, index), or NULL
 * for a real one. */
VkQueue fq_get_queue(VkDevice device, uint32_t family, uint32_t index, VkQueue real_first);
/* The family a pool of the layers above is really made in. */
uint32_t fq_real_family(VkDevice device, uint32_t family);
/* The driver's queue behind a queue of the layers above. */
VkQueue fq_real(VkQueue queue);
/* Fake and real queues share the driver's queue: one call at a time. */
void fq_lock(void);
void fq_unlock(void);

#endif
