/* gz-sample-vk-compute: a small headless Vulkan compute program.
 *
 * Plain Vulkan, no gpuzones code: it is what the layer is run on.  Each frame
 * the main command buffer (recorded once, reused every frame) integrates and
 * damps a toy particle system and copies the positions back; worker threads
 * each record their own command buffer from their own pool, every frame, for
 * a lane of their own.  Everything is wrapped in VK_EXT_debug_utils labels
 * and the command buffers are named, when the extension is there.  The host
 * recomputes every lane and exits non-zero if one element differs.
 *
 *   gz-sample-vk-compute [--frames N] [--threads N] [--sleep-ms N]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

static const uint32_t integrate_spv[] =
#include "integrate_comp.inc"
    ;
static const uint32_t damp_spv[] =
#include "damp_comp.inc"
    ;

#define ELEMS 4096u
#define GROUP 64u
#define MAX_THREADS 8
#define MAIN_ACC 3u
#define INIT_VEL 1000u

#define CHECK(expr) check((expr), #expr, __LINE__)

static void check(VkResult r, const char *what, int line)
{
    if (r != VK_SUCCESS) {
        fprintf(stderr, "gz-sample-vk-compute: line %d: %s returned %d\n", line, what, (int)r);
        exit(2);
    }
}

struct options {
    unsigned frames;
    unsigned threads;
    unsigned sleep_ms;
};

struct buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *mapped;
};

/* A lane: one particle system with its buffers, descriptor set and host copy. */
struct lane {
    struct buffer pos, vel, readback;
    VkDescriptorSet set;
    uint32_t host_pos[ELEMS], host_vel[ELEMS];
};

struct app {
    struct options opt;
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    bool debug_utils;
    PFN_vkCreateDebugUtilsMessengerEXT create_messenger;
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
    PFN_vkSetDebugUtilsObjectNameEXT set_name;
    PFN_vkCmdBeginDebugUtilsLabelEXT begin_label;
    PFN_vkCmdEndDebugUtilsLabelEXT end_label;
    VkPhysicalDevice phys;
    VkPhysicalDeviceMemoryProperties memprops;
    char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    uint32_t family;
    VkDevice device;
    VkQueue queue;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipe_layout;
    VkPipeline integrate, damp;
    VkDescriptorPool desc_pool;
    VkCommandPool pool;
    VkCommandBuffer main_cb;
    VkFence fence;
    struct lane *lanes; /* [0] main, [1 + k] worker k */
    unsigned dispatches, copies, fills;
    int validation_errors;
};

struct worker {
    struct app *app;
    unsigned index;
    unsigned frame;
    pthread_t thread;
    VkCommandPool pool; /* one pool per thread: pools are externally synchronised */
    VkCommandBuffer cb;
    pthread_barrier_t *start, *done;
    bool quit;
};

/* ---- setup -------------------------------------------------------------- */

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                 void *user)
{
    struct app *app = user;
    bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    if (error)
        __atomic_add_fetch(&app->validation_errors, 1, __ATOMIC_RELAXED);
    fprintf(stderr, "gz-sample-vk-compute: %s: %s\n", error ? "error" : "warning", data->pMessage);
    return VK_FALSE;
}

static bool has_instance_extension(const char *name)
{
    uint32_t n = 0;
    CHECK(vkEnumerateInstanceExtensionProperties(NULL, &n, NULL));
    VkExtensionProperties *p = calloc(n ? n : 1, sizeof *p);
    if (!p)
        exit(2);
    CHECK(vkEnumerateInstanceExtensionProperties(NULL, &n, p));
    bool found = false;
    for (uint32_t i = 0; i < n; i++)
        found = found || strcmp(p[i].extensionName, name) == 0;
    free(p);
    return found;
}

static void create_instance(struct app *app)
{
    app->debug_utils = has_instance_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkApplicationInfo ai = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "gz-sample-vk-compute",
        .apiVersion = VK_API_VERSION_1_1,
    };
    VkDebugUtilsMessengerCreateInfoEXT mci = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_message,
        .pUserData = app,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = app->debug_utils ? &mci : NULL,
        .pApplicationInfo = &ai,
        .enabledExtensionCount = app->debug_utils ? 1 : 0,
        .ppEnabledExtensionNames = &ext,
    };
    CHECK(vkCreateInstance(&ci, NULL, &app->instance));
    if (!app->debug_utils)
        return;
    VkInstance in = app->instance;
    app->create_messenger =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(in, "vkCreateDebugUtilsMessengerEXT");
    app->destroy_messenger =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(in, "vkDestroyDebugUtilsMessengerEXT");
    app->set_name = (PFN_vkSetDebugUtilsObjectNameEXT)vkGetInstanceProcAddr(in, "vkSetDebugUtilsObjectNameEXT");
    app->begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetInstanceProcAddr(in, "vkCmdBeginDebugUtilsLabelEXT");
    app->end_label = (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetInstanceProcAddr(in, "vkCmdEndDebugUtilsLabelEXT");
    if (!app->create_messenger || !app->destroy_messenger || !app->set_name || !app->begin_label ||
        !app->end_label) {
        fprintf(stderr, "gz-sample-vk-compute: VK_EXT_debug_utils entry points missing\n");
        exit(2);
    }
    CHECK(app->create_messenger(in, &mci, NULL, &app->messenger));
}

static void pick_device(struct app *app)
{
    uint32_t n = 1;
    VkResult r = vkEnumeratePhysicalDevices(app->instance, &n, &app->phys);
    if (r != VK_INCOMPLETE)
        CHECK(r);
    if (n == 0) {
        fprintf(stderr, "gz-sample-vk-compute: no Vulkan device\n");
        exit(2);
    }
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(app->phys, &props);
    snprintf(app->device_name, sizeof app->device_name, "%s", props.deviceName);
    vkGetPhysicalDeviceMemoryProperties(app->phys, &app->memprops);

    uint32_t nf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(app->phys, &nf, NULL);
    VkQueueFamilyProperties *f = calloc(nf ? nf : 1, sizeof *f);
    if (!f)
        exit(2);
    vkGetPhysicalDeviceQueueFamilyProperties(app->phys, &nf, f);
    app->family = UINT32_MAX;
    for (uint32_t i = 0; i < nf && app->family == UINT32_MAX; i++)
        if (f[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            app->family = i;
    free(f);
    if (app->family == UINT32_MAX) {
        fprintf(stderr, "gz-sample-vk-compute: no compute queue\n");
        exit(2);
    }
}

static void create_device(struct app *app)
{
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = app->family,
        .queueCount = 1,
        .pQueuePriorities = &prio,
    };
    VkDeviceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &qci,
    };
    CHECK(vkCreateDevice(app->phys, &ci, NULL, &app->device));
    vkGetDeviceQueue(app->device, app->family, 0, &app->queue);
}

static void name_object(struct app *app, VkObjectType type, uint64_t handle, const char *name)
{
    if (!app->debug_utils)
        return;
    VkDebugUtilsObjectNameInfoEXT ni = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
        .objectType = type,
        .objectHandle = handle,
        .pObjectName = name,
    };
    CHECK(app->set_name(app->device, &ni));
}

static uint32_t memory_type(struct app *app, uint32_t bits, VkMemoryPropertyFlags need,
                            VkMemoryPropertyFlags prefer)
{
    for (int pass = 0; pass < 2; pass++) {
        VkMemoryPropertyFlags want = pass ? need : need | prefer;
        for (uint32_t i = 0; i < app->memprops.memoryTypeCount; i++)
            if ((bits & (1u << i)) && (app->memprops.memoryTypes[i].propertyFlags & want) == want)
                return i;
    }
    fprintf(stderr, "gz-sample-vk-compute: no suitable memory type\n");
    exit(2);
}

static void create_buffer(struct app *app, VkBufferUsageFlags usage, bool host, struct buffer *b)
{
    VkBufferCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = ELEMS * sizeof(uint32_t),
        .usage = usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    CHECK(vkCreateBuffer(app->device, &ci, NULL, &b->buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(app->device, b->buffer, &req);
    VkMemoryPropertyFlags need =
        host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT : 0;
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = memory_type(app, req.memoryTypeBits, need,
                                       host ? 0 : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT),
    };
    CHECK(vkAllocateMemory(app->device, &ai, NULL, &b->memory));
    CHECK(vkBindBufferMemory(app->device, b->buffer, b->memory, 0));
    b->mapped = NULL;
    if (host)
        CHECK(vkMapMemory(app->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped));
}

static void destroy_buffer(struct app *app, struct buffer *b)
{
    if (b->mapped)
        vkUnmapMemory(app->device, b->memory);
    vkDestroyBuffer(app->device, b->buffer, NULL);
    vkFreeMemory(app->device, b->memory, NULL);
}

static VkPipeline create_pipeline(struct app *app, const uint32_t *code, size_t size)
{
    VkShaderModuleCreateInfo mci = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = size,
        .pCode = code,
    };
    VkShaderModule module;
    CHECK(vkCreateShaderModule(app->device, &mci, NULL, &module));
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
            .stage = VK_SHADER_STAGE_COMPUTE_BIT,
            .module = module,
            .pName = "main",
        },
        .layout = app->pipe_layout,
    };
    VkPipeline p;
    CHECK(vkCreateComputePipelines(app->device, VK_NULL_HANDLE, 1, &ci, NULL, &p));
    vkDestroyShaderModule(app->device, module, NULL);
    return p;
}

static void create_pipelines(struct app *app)
{
    VkDescriptorSetLayoutBinding bindings[2];
    for (uint32_t i = 0; i < 2; i++)
        bindings[i] = (VkDescriptorSetLayoutBinding){
            .binding = i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    VkDescriptorSetLayoutCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = 2,
        .pBindings = bindings,
    };
    CHECK(vkCreateDescriptorSetLayout(app->device, &dci, NULL, &app->set_layout));
    VkPushConstantRange push = { VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint32_t) };
    VkPipelineLayoutCreateInfo lci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &app->set_layout,
        .pushConstantRangeCount = 1,
        .pPushConstantRanges = &push,
    };
    CHECK(vkCreatePipelineLayout(app->device, &lci, NULL, &app->pipe_layout));
    app->integrate = create_pipeline(app, integrate_spv, sizeof integrate_spv);
    app->damp = create_pipeline(app, damp_spv, sizeof damp_spv);
}

static void create_lanes(struct app *app)
{
    unsigned n = 1 + app->opt.threads;
    app->lanes = calloc(n, sizeof *app->lanes);
    if (!app->lanes)
        exit(2);
    VkDescriptorPoolSize size = { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 * n };
    VkDescriptorPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = n,
        .poolSizeCount = 1,
        .pPoolSizes = &size,
    };
    CHECK(vkCreateDescriptorPool(app->device, &pci, NULL, &app->desc_pool));
    VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    for (unsigned l = 0; l < n; l++) {
        struct lane *lane = &app->lanes[l];
        create_buffer(app, storage, false, &lane->pos);
        create_buffer(app, storage, false, &lane->vel);
        create_buffer(app, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true, &lane->readback);
        VkDescriptorSetAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
            .descriptorPool = app->desc_pool,
            .descriptorSetCount = 1,
            .pSetLayouts = &app->set_layout,
        };
        CHECK(vkAllocateDescriptorSets(app->device, &ai, &lane->set));
        VkDescriptorBufferInfo bi[2] = { { lane->pos.buffer, 0, VK_WHOLE_SIZE },
                                         { lane->vel.buffer, 0, VK_WHOLE_SIZE } };
        VkWriteDescriptorSet w = {
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = lane->set,
            .descriptorCount = 2,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = bi,
        };
        vkUpdateDescriptorSets(app->device, 1, &w, 0, NULL);
        for (unsigned i = 0; i < ELEMS; i++) {
            lane->host_pos[i] = 0;
            lane->host_vel[i] = INIT_VEL;
        }
    }
}

static VkCommandBuffer allocate_cb(struct app *app, VkCommandPool pool, const char *name)
{
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VkCommandBuffer cb;
    CHECK(vkAllocateCommandBuffers(app->device, &ai, &cb));
    name_object(app, VK_OBJECT_TYPE_COMMAND_BUFFER, (uint64_t)(uintptr_t)cb, name);
    return cb;
}

static VkCommandPool create_pool(struct app *app, VkCommandPoolCreateFlags flags)
{
    VkCommandPoolCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = flags,
        .queueFamilyIndex = app->family,
    };
    VkCommandPool pool;
    CHECK(vkCreateCommandPool(app->device, &ci, NULL, &pool));
    return pool;
}

/* ---- recording ---------------------------------------------------------- */

static void label_begin(struct app *app, VkCommandBuffer cb, const char *name)
{
    if (!app->debug_utils)
        return;
    VkDebugUtilsLabelEXT l = { .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = name };
    app->begin_label(cb, &l);
}

static void label_end(struct app *app, VkCommandBuffer cb)
{
    if (app->debug_utils)
        app->end_label(cb);
}

/* Shader and transfer writes before, shader/transfer/host access after. */
static void barrier(VkCommandBuffer cb)
{
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                         VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT,
    };
    VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(cb, stages, stages | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void dispatch(struct app *app, VkCommandBuffer cb, VkPipeline pipe, struct lane *lane, uint32_t acc)
{
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, app->pipe_layout, 0, 1, &lane->set, 0, NULL);
    vkCmdPushConstants(cb, app->pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof acc, &acc);
    vkCmdDispatch(cb, ELEMS / GROUP, 1, 1);
}

static void copy_results(struct app *app, VkCommandBuffer cb, struct lane *lane)
{
    VkBufferCopy region = { 0, 0, ELEMS * sizeof(uint32_t) };
    label_begin(app, cb, "Copy results");
    barrier(cb);
    vkCmdCopyBuffer(cb, lane->pos.buffer, lane->readback.buffer, 1, &region);
    barrier(cb);
    label_end(app, cb);
}

/* Frame > Simulate > (Integrate, Damp), Copy results.  Recorded once. */
static void record_main(struct app *app)
{
    struct lane *lane = &app->lanes[0];
    VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    CHECK(vkBeginCommandBuffer(app->main_cb, &bi));
    label_begin(app, app->main_cb, "Frame");
    label_begin(app, app->main_cb, "Simulate");
    label_begin(app, app->main_cb, "Integrate");
    barrier(app->main_cb);
    dispatch(app, app->main_cb, app->integrate, lane, MAIN_ACC);
    label_end(app, app->main_cb);
    label_begin(app, app->main_cb, "Damp");
    barrier(app->main_cb);
    dispatch(app, app->main_cb, app->damp, lane, 0);
    label_end(app, app->main_cb);
    label_end(app, app->main_cb);
    copy_results(app, app->main_cb, lane);
    label_end(app, app->main_cb);
    CHECK(vkEndCommandBuffer(app->main_cb));
}

static uint32_t worker_acc(unsigned worker, unsigned frame)
{
    return worker + frame + 1;
}

/* Worker k > Integrate, Copy results.  Re-recorded every frame (the push
 * constant changes), after resetting the thread's own pool. */
static void record_worker(struct worker *w)
{
    struct app *app = w->app;
    struct lane *lane = &app->lanes[1 + w->index];
    char label[32];
    CHECK(vkResetCommandPool(app->device, w->pool, 0));
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    CHECK(vkBeginCommandBuffer(w->cb, &bi));
    snprintf(label, sizeof label, "Worker %u", w->index);
    label_begin(app, w->cb, label);
    label_begin(app, w->cb, "Integrate");
    barrier(w->cb);
    dispatch(app, w->cb, app->integrate, lane, worker_acc(w->index, w->frame));
    label_end(app, w->cb);
    copy_results(app, w->cb, lane);
    label_end(app, w->cb);
    CHECK(vkEndCommandBuffer(w->cb));
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    for (;;) {
        pthread_barrier_wait(w->start);
        if (w->quit)
            return NULL;
        record_worker(w);
        pthread_barrier_wait(w->done);
    }
}

/* ---- running ------------------------------------------------------------- */

static void submit_and_wait(struct app *app, const VkSubmitInfo *si, uint32_t n)
{
    CHECK(vkQueueSubmit(app->queue, n, si, app->fence));
    CHECK(vkWaitForFences(app->device, 1, &app->fence, VK_TRUE, UINT64_MAX));
    CHECK(vkResetFences(app->device, 1, &app->fence));
}

/* Positions to 0, velocities to INIT_VEL, in every lane. */
static void initialise(struct app *app)
{
    VkCommandBuffer cb = allocate_cb(app, app->pool, "init cmdbuf");
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    CHECK(vkBeginCommandBuffer(cb, &bi));
    label_begin(app, cb, "Init");
    for (unsigned l = 0; l < 1 + app->opt.threads; l++) {
        vkCmdFillBuffer(cb, app->lanes[l].pos.buffer, 0, VK_WHOLE_SIZE, 0);
        vkCmdFillBuffer(cb, app->lanes[l].vel.buffer, 0, VK_WHOLE_SIZE, INIT_VEL);
        app->fills += 2;
    }
    barrier(cb);
    label_end(app, cb);
    CHECK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb };
    submit_and_wait(app, &si, 1);
    vkFreeCommandBuffers(app->device, app->pool, 1, &cb);
}

static void host_step(struct lane *lane, uint32_t acc, bool damp)
{
    for (uint32_t i = 0; i < ELEMS; i++) {
        uint32_t v = lane->host_vel[i] + acc + (i & 7u);
        lane->host_pos[i] += v;
        lane->host_vel[i] = damp ? v - (v >> 4) : v;
    }
}

static bool lane_matches(const struct lane *lane)
{
    return memcmp(lane->readback.mapped, lane->host_pos, sizeof lane->host_pos) == 0;
}

static bool run_frames(struct app *app, struct worker *workers, pthread_barrier_t *start,
                       pthread_barrier_t *done)
{
    unsigned nt = app->opt.threads;
    VkCommandBuffer worker_cbs[MAX_THREADS];
    for (unsigned f = 0; f < app->opt.frames; f++) {
        for (unsigned k = 0; k < nt; k++)
            workers[k].frame = f;
        pthread_barrier_wait(start); /* workers record */
        pthread_barrier_wait(done);
        for (unsigned k = 0; k < nt; k++)
            worker_cbs[k] = workers[k].cb;
        /* two batches: the reused main buffer, then the workers' buffers */
        VkSubmitInfo si[2] = {
            { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &app->main_cb },
            { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = nt, .pCommandBuffers = worker_cbs },
        };
        submit_and_wait(app, si, nt ? 2 : 1);
        app->dispatches += 2 + nt;
        app->copies += 1 + nt;

        host_step(&app->lanes[0], MAIN_ACC, true);
        bool ok = lane_matches(&app->lanes[0]);
        for (unsigned k = 0; k < nt; k++) {
            host_step(&app->lanes[1 + k], worker_acc(k, f), false);
            ok = ok && lane_matches(&app->lanes[1 + k]);
        }
        if (!ok) {
            fprintf(stderr, "gz-sample-vk-compute: frame %u: results differ from the host's\n", f);
            return false;
        }
        if (app->opt.sleep_ms) {
            struct timespec ts = { app->opt.sleep_ms / 1000, (long)(app->opt.sleep_ms % 1000) * 1000000L };
            nanosleep(&ts, NULL);
        }
    }
    return true;
}

static bool run(struct app *app)
{
    unsigned nt = app->opt.threads;
    struct worker workers[MAX_THREADS];
    pthread_barrier_t start, done;
    pthread_barrier_init(&start, NULL, nt + 1);
    pthread_barrier_init(&done, NULL, nt + 1);
    char name[32];
    for (unsigned k = 0; k < nt; k++) {
        workers[k] = (struct worker){ .app = app, .index = k, .start = &start, .done = &done };
        workers[k].pool = create_pool(app, VK_COMMAND_POOL_CREATE_TRANSIENT_BIT);
        snprintf(name, sizeof name, "worker %u", k);
        workers[k].cb = allocate_cb(app, workers[k].pool, name);
        if (pthread_create(&workers[k].thread, NULL, worker_main, &workers[k]) != 0) {
            fprintf(stderr, "gz-sample-vk-compute: pthread_create failed\n");
            exit(2);
        }
    }
    bool ok = run_frames(app, workers, &start, &done);
    for (unsigned k = 0; k < nt; k++)
        workers[k].quit = true;
    pthread_barrier_wait(&start);
    for (unsigned k = 0; k < nt; k++) {
        pthread_join(workers[k].thread, NULL);
        vkDestroyCommandPool(app->device, workers[k].pool, NULL);
    }
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&done);
    return ok;
}

static void destroy(struct app *app)
{
    for (unsigned l = 0; l < 1 + app->opt.threads; l++) {
        destroy_buffer(app, &app->lanes[l].pos);
        destroy_buffer(app, &app->lanes[l].vel);
        destroy_buffer(app, &app->lanes[l].readback);
    }
    free(app->lanes);
    vkDestroyFence(app->device, app->fence, NULL);
    vkDestroyCommandPool(app->device, app->pool, NULL);
    vkDestroyDescriptorPool(app->device, app->desc_pool, NULL);
    vkDestroyPipeline(app->device, app->integrate, NULL);
    vkDestroyPipeline(app->device, app->damp, NULL);
    vkDestroyPipelineLayout(app->device, app->pipe_layout, NULL);
    vkDestroyDescriptorSetLayout(app->device, app->set_layout, NULL);
    vkDestroyDevice(app->device, NULL);
    if (app->debug_utils)
        app->destroy_messenger(app->instance, app->messenger, NULL);
    vkDestroyInstance(app->instance, NULL);
}

static unsigned parse_uint(const char *s, const char *opt)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v > 10000000ul) {
        fprintf(stderr, "gz-sample-vk-compute: bad value for %s: %s\n", opt, s);
        exit(1);
    }
    return (unsigned)v;
}

static void parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){ .frames = 5, .threads = 2 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 < argc && strcmp(a, "--frames") == 0)
            o->frames = parse_uint(argv[++i], a);
        else if (i + 1 < argc && strcmp(a, "--threads") == 0)
            o->threads = parse_uint(argv[++i], a);
        else if (i + 1 < argc && strcmp(a, "--sleep-ms") == 0)
            o->sleep_ms = parse_uint(argv[++i], a);
        else {
            fprintf(stderr, "usage: gz-sample-vk-compute [--frames N] [--threads N] [--sleep-ms N]\n");
            exit(1);
        }
    }
    if (o->threads > MAX_THREADS) {
        fprintf(stderr, "gz-sample-vk-compute: at most %d threads\n", MAX_THREADS);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    static struct app app; /* large (host copies of the lanes): not on the stack */
    parse_options(argc, argv, &app.opt);
    create_instance(&app);
    pick_device(&app);
    create_device(&app);
    create_pipelines(&app);
    create_lanes(&app);
    app.pool = create_pool(&app, 0);
    app.main_cb = allocate_cb(&app, app.pool, "main cmdbuf");
    VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    CHECK(vkCreateFence(app.device, &fci, NULL, &app.fence));

    initialise(&app);
    record_main(&app);
    bool ok = run(&app);
    destroy(&app);

    printf("gz-sample-vk-compute: %u frames on %s, %u recording threads, %u dispatches, %u copies, "
           "%u fills: results %s\n",
           app.opt.frames, app.device_name, app.opt.threads, app.dispatches, app.copies, app.fills,
           ok ? "OK" : "WRONG");
    if (app.validation_errors) {
        fprintf(stderr, "gz-sample-vk-compute: %d validation errors\n", app.validation_errors);
        return 3;
    }
    return ok ? 0 : 1;
}
