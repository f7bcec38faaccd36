/* The Vulkan side of the API test programs (no gpuzones code): a device,
 * a queue, a command buffer and two buffers with transfer work to time. */
#ifndef API_VK_H
#define API_VK_H

#include <stdint.h>
#include <vulkan/vulkan.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct api_gpu {
    VkInstance instance;
    VkPhysicalDevice pd;
    VkDevice device;
    VkQueue queue;
    VkCommandPool pool;
    VkCommandBuffer cb, init_cb;
    VkFence fence;
    VkBuffer src, dst;
    VkDeviceMemory src_mem, dst_mem;
    VkDeviceSize size;
    int calibrated;       /* VK_EXT_calibrated_timestamps enabled */
    int host_query_reset; /* hostQueryReset enabled */
} api_gpu;

void api_gpu_init(api_gpu *g, uint32_t mb);
void api_gpu_destroy(api_gpu *g);
void api_begin(api_gpu *g);
/* Ends, submits and waits; host times around it in *t0, *t1. */
void api_submit_wait(api_gpu *g, uint64_t *t0, uint64_t *t1);
void api_fill(api_gpu *g, uint32_t value);
void api_copy(api_gpu *g);
void api_barrier(api_gpu *g);
uint64_t api_now_ns(void);
/* A command buffer of its own pool, begun, for one recording thread. */
void api_thread_cb(api_gpu *g, VkCommandPool *pool, VkCommandBuffer *cb);
void api_fill_cb(api_gpu *g, VkCommandBuffer cb, uint32_t value);
/* Submits the given command buffers (ended) and then g->cb, and waits. */
void api_submit_all(api_gpu *g, const VkCommandBuffer *cbs, uint32_t n);

#ifdef __cplusplus
}
#endif
#endif
