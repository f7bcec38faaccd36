/* gz-test-load-apis: one process recording GPU work on Vulkan, OpenCL and
 * OpenGL at once, through the real drivers (lavapipe, pocl, llvmpipe) and
 * gpuzones' real layers and shim, for load_apis.py to check that every
 * zone arrives exactly once and none is dropped. It has no gpuzones code.
 *
 *   gz-test-load-apis VK_SUBMITS LABELS CL_ENQUEUES GL_FRAMES GL_GROUPS
 *
 * Vulkan: two threads, each with its own command pool and one reusable
 * command buffer holding LABELS debug labels (pairs "t<i> outer <k>" >
 * "t<i> inner <k>" around a vkCmdFillBuffer), submitted VK_SUBMITS times
 * each on the one queue (a mutex: the queue is externally synchronized).
 * OpenCL: a thread enqueuing CL_ENQUEUES small kernels "bump" on an in-order
 * queue. OpenGL: a thread drawing GL_FRAMES frames of GL_GROUPS debug groups
 * "g<k>" (a clear each) on EGL surfaceless, eglSwapBuffers per frame. Prints
 * what it made, one key=value line. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <epoxy/gl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

#include "gz_egl_pbuffer.h"

#define VK_THREADS 2

static int vk_submits, labels, cl_enqueues, gl_frames, gl_groups;

static void die(const char *what, long code)
{
    fprintf(stderr, "gz-test-load-apis: %s (%ld)\n", what, code);
    exit(2);
}

#define VK_CHECK(x)                                                                                \
    do {                                                                                           \
        VkResult r_ = (x);                                                                         \
        if (r_ != VK_SUCCESS)                                                                      \
            die(#x, r_);                                                                           \
    } while (0)
#define CL_CHECK(x)                                                                                \
    do {                                                                                           \
        cl_int e_ = (x);                                                                           \
        if (e_ != CL_SUCCESS)                                                                      \
            die(#x, e_);                                                                           \
    } while (0)

/* ---- Vulkan ------------------------------------------------------------------ */

static struct {
    VkInstance instance;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    VkBuffer buffer;
    VkDeviceMemory memory;
    PFN_vkCmdBeginDebugUtilsLabelEXT begin_label;
    PFN_vkCmdEndDebugUtilsLabelEXT end_label;
    pthread_mutex_t queue_lock;
} vk = {.queue_lock = PTHREAD_MUTEX_INITIALIZER};

static void vk_open(void)
{
    const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app,
                                .enabledExtensionCount = 1,
                                .ppEnabledExtensionNames = &ext};
    VK_CHECK(vkCreateInstance(&ici, NULL, &vk.instance));
    uint32_t n = 1;
    VkPhysicalDevice pd;
    VkResult r = vkEnumeratePhysicalDevices(vk.instance, &n, &pd);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n < 1)
        die("no Vulkan device", r);
    VkQueueFamilyProperties fams[8];
    uint32_t nf = 8;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, fams);
    for (vk.family = 0; vk.family < nf && !(fams[vk.family].queueFlags & VK_QUEUE_COMPUTE_BIT);)
        vk.family++;
    if (vk.family == nf)
        die("no compute queue", 0);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = vk.family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci};
    VK_CHECK(vkCreateDevice(pd, &dci, NULL, &vk.device));
    vkGetDeviceQueue(vk.device, vk.family, 0, &vk.queue);
    vk.begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetInstanceProcAddr(
        vk.instance, "vkCmdBeginDebugUtilsLabelEXT");
    vk.end_label = (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetInstanceProcAddr(
        vk.instance, "vkCmdEndDebugUtilsLabelEXT");
    if (!vk.begin_label || !vk.end_label)
        die("no VK_EXT_debug_utils labels", 0);
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = 4096,
                              .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
    VK_CHECK(vkCreateBuffer(vk.device, &bci, NULL, &vk.buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(vk.device, vk.buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    uint32_t type = 0;
    while (type < mp.memoryTypeCount && !(req.memoryTypeBits & (1u << type)))
        type++;
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = type};
    VK_CHECK(vkAllocateMemory(vk.device, &mai, NULL, &vk.memory));
    VK_CHECK(vkBindBufferMemory(vk.device, vk.buffer, vk.memory, 0));
}

static void label(VkCommandBuffer cb, const char *name)
{
    VkDebugUtilsLabelEXT l = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
                              .pLabelName = name};
    vk.begin_label(cb, &l);
}

static void *vk_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .queueFamilyIndex = vk.family};
    VkCommandPool pool;
    VK_CHECK(vkCreateCommandPool(vk.device, &pci, NULL, &pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VkCommandBuffer cb;
    VK_CHECK(vkAllocateCommandBuffers(vk.device, &cai, &cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK_CHECK(vkBeginCommandBuffer(cb, &bi));
    for (int k = 0; k < labels / 2; k++) {
        char outer[32], inner[32];
        snprintf(outer, sizeof outer, "t%d outer %d", t, k);
        snprintf(inner, sizeof inner, "t%d inner %d", t, k);
        label(cb, outer);
        label(cb, inner);
        vkCmdFillBuffer(cb, vk.buffer, 0, 4096, (uint32_t)k);
        vk.end_label(cb);
        vk.end_label(cb);
    }
    VK_CHECK(vkEndCommandBuffer(cb));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    VK_CHECK(vkCreateFence(vk.device, &fci, NULL, &fence));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cb};
    for (int s = 0; s < vk_submits; s++) {
        pthread_mutex_lock(&vk.queue_lock);
        VkResult r = vkQueueSubmit(vk.queue, 1, &si, fence);
        pthread_mutex_unlock(&vk.queue_lock);
        VK_CHECK(r);
        VK_CHECK(vkWaitForFences(vk.device, 1, &fence, VK_TRUE, UINT64_MAX));
        VK_CHECK(vkResetFences(vk.device, 1, &fence));
    }
    vkDestroyFence(vk.device, fence, NULL);
    vkDestroyCommandPool(vk.device, pool, NULL);
    return NULL;
}

/* ---- OpenCL ------------------------------------------------------------------ */

static void *cl_thread(void *arg)
{
    (void)arg;
    cl_platform_id platform;
    cl_device_id dev;
    cl_int err;
    CL_CHECK(clGetPlatformIDs(1, &platform, NULL));
    CL_CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CL_CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CL_CHECK(err);
    const char *src = "__kernel void bump(__global int *a) { a[get_global_id(0)] += 1; }";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CL_CHECK(err);
    CL_CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "bump", &err);
    CL_CHECK(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
    CL_CHECK(err);
    CL_CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    size_t global = 64;
    for (int i = 0; i < cl_enqueues; i++) {
        CL_CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        if (i % 256 == 255)
            CL_CHECK(clFinish(q));
    }
    CL_CHECK(clFinish(q));
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return NULL;
}

/* ---- OpenGL ------------------------------------------------------------------ */

static void *gl_thread(void *arg)
{
    (void)arg;
    gz_egl_pbuffer egl;
    const char *what;
    if (!gz_egl_pbuffer_open(&egl, 16, &what))
        die(what, 0);
    for (int f = 0; f < gl_frames; f++) {
        for (int g = 0; g < gl_groups; g++) {
            char name[16];
            snprintf(name, sizeof name, "g%d", g);
            glPushDebugGroup(GL_DEBUG_SOURCE_APPLICATION, 0, -1, name);
            glClearColor((float)g / (float)gl_groups, 0.0f, 0.0f, 1.0f);
            glClear(GL_COLOR_BUFFER_BIT);
            glPopDebugGroup();
        }
        eglSwapBuffers(egl.display, egl.surface);
    }
    glFinish();
    gz_egl_pbuffer_close(&egl);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: gz-test-load-apis VK_SUBMITS LABELS CL_ENQUEUES GL_FRAMES "
                        "GL_GROUPS\n");
        return 2;
    }
    vk_submits = atoi(argv[1]);
    labels = atoi(argv[2]) / 2 * 2;
    cl_enqueues = atoi(argv[3]);
    gl_frames = atoi(argv[4]);
    gl_groups = atoi(argv[5]);
    if (vk_submits < 1 || labels < 2 || cl_enqueues < 1 || gl_frames < 1 || gl_groups < 1)
        die("every count must be positive (LABELS at least 2)", 0);
    vk_open();
    pthread_t th[VK_THREADS + 2];
    for (int t = 0; t < VK_THREADS; t++)
        pthread_create(&th[t], NULL, vk_thread, (void *)(intptr_t)t);
    pthread_create(&th[VK_THREADS], NULL, cl_thread, NULL);
    pthread_create(&th[VK_THREADS + 1], NULL, gl_thread, NULL);
    for (int t = 0; t < VK_THREADS + 2; t++)
        pthread_join(th[t], NULL);
    vkDestroyBuffer(vk.device, vk.buffer, NULL);
    vkFreeMemory(vk.device, vk.memory, NULL);
    vkDestroyDevice(vk.device, NULL);
    vkDestroyInstance(vk.instance, NULL);
    printf("vk_threads=%d vk_submits=%d labels=%d cl_enqueues=%d gl_frames=%d gl_groups=%d\n",
           VK_THREADS, vk_submits, labels, cl_enqueues, gl_frames, gl_groups);
    return 0;
}
