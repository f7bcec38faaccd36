/* The instance, the device and everything the frames use: buffers, images,
 * render passes and framebuffers, pipelines, the debug names. */
#define _GNU_SOURCE
#include "vk_passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t scene_vert[] =
#include "scene.vert.inc"
    ;
static const uint32_t quad_vert[] =
#include "quad.vert.inc"
    ;
static const uint32_t cover_vert[] =
#include "cover.vert.inc"
    ;
static const uint32_t color_frag[] =
#include "color.frag.inc"
    ;
static const uint32_t mix_comp[] =
#include "mix.comp.inc"
    ;
static const uint32_t scramble_comp[] =
#include "scramble.comp.inc"
    ;

#define SHADOW_SIZE 256
#define MAIN_W 128
#define MAIN_H 96
#define TEXTURE_W 64
#define TEXTURE_H 32
#define EXTRA_SIZE 32
#define INSTANCE_BYTES 1536 /* 96 instances of a vec4 (1.5 KiB: a size with a decimal) */
#define STORAGE_BYTES (16 * 1024)

/* ---- instance ------------------------------------------------------------- */

static const char *severity_name(VkDebugUtilsMessageSeverityFlagBitsEXT s)
{
    return s & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT     ? "error"
           : s & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT ? "warning"
           : s & VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT    ? "info"
                                                                 : "verbose";
}

static char *copy_text(const char *s)
{
    char *c = strdup(s ? s : "");
    if (!c)
        passes_die(2, "out of memory");
    return c;
}

/* Every message goes into the truth (the tests check that the validation
 * layer announced itself and reported nothing); warnings and errors to
 * stderr too. */
static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                 void *user)
{
    struct passes_app *app = user;
    const char *sev = severity_name(severity);
    __atomic_add_fetch(&app->messages_total, 1, __ATOMIC_RELAXED);
    int i = __atomic_fetch_add(&app->nmessages, 1, __ATOMIC_RELAXED);
    if (i < PASSES_MAX_MESSAGES) {
        struct passes_message *m = &app->messages[i];
        snprintf(m->severity, sizeof m->severity, "%s", sev);
        m->id = copy_text(data->pMessageIdName);
        m->text = copy_text(data->pMessage);
    }
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
        fprintf(stderr, "gz-sample-vk-passes: %s: %s\n", sev, data->pMessage ? data->pMessage : "");
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
        __atomic_add_fetch(&app->validation_errors, 1, __ATOMIC_RELAXED);
    return VK_FALSE;
}

static void messenger_info(struct passes_app *app, VkDebugUtilsMessengerCreateInfoEXT *ci)
{
    *ci = (VkDebugUtilsMessengerCreateInfoEXT){
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        /* info too: the validation layer announces itself at info level */
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_message,
        .pUserData = app,
    };
}

/* GZ_TEST_APP_LAYERS=A:B: layers the program enables itself, A nearest the
 * program. The loader puts them below the layers of VK_INSTANCE_LAYERS, in
 * this order, which is how the tests put the validation layer or a counting
 * layer below gpuzones. */
static uint32_t app_layers(char *buf, size_t size, const char *names[8])
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

static PFN_vkVoidFunction instance_fn(VkInstance in, const char *name)
{
    PFN_vkVoidFunction f = vkGetInstanceProcAddr(in, name);
    if (!f)
        passes_die(2, "%s is missing", name);
    return f;
}

void passes_create_instance(struct passes_app *app)
{
    const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    char layer_buf[512];
    const char *layers[8];
    uint32_t nlayers = app_layers(layer_buf, sizeof layer_buf, layers);
    VkApplicationInfo ai = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "gz-sample-vk-passes",
        .apiVersion = VK_API_VERSION_1_3,
    };
    VkDebugUtilsMessengerCreateInfoEXT mci;
    messenger_info(app, &mci); /* chained: messages of vkCreateInstance itself */
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = &mci,
        .pApplicationInfo = &ai,
        .enabledLayerCount = nlayers,
        .ppEnabledLayerNames = layers,
        .enabledExtensionCount = 1,
        .ppEnabledExtensionNames = &ext,
    };
    VkResult r = vkCreateInstance(&ci, NULL, &app->instance);
    if (r == VK_ERROR_EXTENSION_NOT_PRESENT)
        passes_die(77, "VK_EXT_debug_utils is not available");
    PASSES_CHECK(r);
    VkInstance in = app->instance;
    PFN_vkCreateDebugUtilsMessengerEXT create_messenger =
        (PFN_vkCreateDebugUtilsMessengerEXT)instance_fn(in, "vkCreateDebugUtilsMessengerEXT");
    app->destroy_messenger =
        (PFN_vkDestroyDebugUtilsMessengerEXT)instance_fn(in, "vkDestroyDebugUtilsMessengerEXT");
    app->set_name = (PFN_vkSetDebugUtilsObjectNameEXT)instance_fn(in, "vkSetDebugUtilsObjectNameEXT");
    app->begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)instance_fn(in, "vkCmdBeginDebugUtilsLabelEXT");
    app->end_label = (PFN_vkCmdEndDebugUtilsLabelEXT)instance_fn(in, "vkCmdEndDebugUtilsLabelEXT");
    PASSES_CHECK(create_messenger(in, &mci, NULL, &app->messenger));
}

/* ---- device ---------------------------------------------------------------- */

static bool has_device_extension(VkPhysicalDevice phys, const char *name)
{
    uint32_t n = 0;
    PASSES_CHECK(vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL));
    VkExtensionProperties *p = calloc(n ? n : 1, sizeof *p);
    if (!p)
        passes_die(2, "out of memory");
    PASSES_CHECK(vkEnumerateDeviceExtensionProperties(phys, NULL, &n, p));
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++)
        found = strcmp(p[i].extensionName, name) == 0;
    free(p);
    return found;
}

/* The first physical device; its first family with graphics, compute and
 * timestamps. */
static void pick_device(struct passes_app *app)
{
    uint32_t n = 1;
    VkResult r = vkEnumeratePhysicalDevices(app->instance, &n, &app->phys);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0)
        passes_die(77, "no Vulkan device");
    vkGetPhysicalDeviceProperties(app->phys, &app->props);
    vkGetPhysicalDeviceMemoryProperties(app->phys, &app->memprops);
    if (app->props.apiVersion < VK_API_VERSION_1_3)
        passes_die(77, "the device has Vulkan %u.%u, not 1.3", VK_API_VERSION_MAJOR(app->props.apiVersion),
                   VK_API_VERSION_MINOR(app->props.apiVersion));
    VkQueueFamilyProperties fam[16];
    uint32_t nf = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(app->phys, &nf, fam);
    const VkQueueFlags need = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    app->family = UINT32_MAX;
    for (uint32_t i = 0; i < nf && app->family == UINT32_MAX; i++)
        if ((fam[i].queueFlags & need) == need && fam[i].timestampValidBits > 0)
            app->family = i;
    if (app->family == UINT32_MAX)
        passes_die(77, "no queue family with graphics, compute and timestamps");
    uint32_t bits = fam[app->family].timestampValidBits;
    app->tick_mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    app->period_ns = app->props.limits.timestampPeriod;
}

void passes_create_device(struct passes_app *app)
{
    pick_device(app);
    VkPhysicalDeviceVulkan13Features have13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features have12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                               .pNext = &have13};
    VkPhysicalDeviceFeatures2 have = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &have12};
    vkGetPhysicalDeviceFeatures2(app->phys, &have);
    if (!have13.dynamicRendering)
        passes_die(77, "the device has no dynamic rendering");
    if (!have12.hostQueryReset)
        passes_die(77, "the device has no host query reset");

    VkPhysicalDeviceVulkan13Features f13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                            .dynamicRendering = VK_TRUE};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            .pNext = &f13,
                                            .hostQueryReset = VK_TRUE};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12};
    /* Its own timestamps on the host clock: calibrated where the driver
     * can, else the device clock is taken as CLOCK_MONOTONIC (lavapipe's is). */
    const char *ext = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
    bool calibrated = app->opt.truth && has_device_extension(app->phys, ext);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = app->family,
        .queueCount = 1,
        .pQueuePriorities = &prio,
    };
    VkDeviceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &f2,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &qci,
        .enabledExtensionCount = calibrated ? 1 : 0,
        .ppEnabledExtensionNames = &ext,
    };
    PASSES_CHECK(vkCreateDevice(app->phys, &ci, NULL, &app->device));
    vkGetDeviceQueue(app->device, app->family, 0, &app->queue);
    app->clock_source = calibrated ? "calibrated" : "assumed";
    if (calibrated)
        passes_calibrate(app);
}

void passes_name(struct passes_app *app, VkObjectType type, uint64_t handle, const char *name)
{
    VkDebugUtilsObjectNameInfoEXT ni = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
        .objectType = type,
        .objectHandle = handle,
        .pObjectName = name,
    };
    PASSES_CHECK(app->set_name(app->device, &ni));
}

/* ---- memory, buffers, images ------------------------------------------------- */

static uint32_t memory_type(struct passes_app *app, uint32_t bits, VkMemoryPropertyFlags need,
                            VkMemoryPropertyFlags prefer)
{
    for (int pass = 0; pass < 2; pass++) {
        VkMemoryPropertyFlags want = pass ? need : need | prefer;
        for (uint32_t i = 0; i < app->memprops.memoryTypeCount; i++)
            if ((bits & (1u << i)) && (app->memprops.memoryTypes[i].propertyFlags & want) == want)
                return i;
    }
    passes_die(2, "no suitable memory type");
}

static VkDeviceMemory allocate(struct passes_app *app, VkMemoryRequirements req, bool host)
{
    VkMemoryPropertyFlags need =
        host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT : 0;
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = memory_type(app, req.memoryTypeBits, need,
                                       host ? 0 : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT),
    };
    VkDeviceMemory m;
    PASSES_CHECK(vkAllocateMemory(app->device, &ai, NULL, &m));
    return m;
}

static void create_buffer(struct passes_app *app, VkDeviceSize size, VkBufferUsageFlags usage, bool host,
                          struct passes_buffer *b)
{
    VkBufferCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    PASSES_CHECK(vkCreateBuffer(app->device, &ci, NULL, &b->buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(app->device, b->buffer, &req);
    b->memory = allocate(app, req, host);
    b->size = size;
    PASSES_CHECK(vkBindBufferMemory(app->device, b->buffer, b->memory, 0));
    b->mapped = NULL;
    if (host)
        PASSES_CHECK(vkMapMemory(app->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped));
}

static void destroy_buffer(struct passes_app *app, struct passes_buffer *b)
{
    if (b->mapped)
        vkUnmapMemory(app->device, b->memory);
    vkDestroyBuffer(app->device, b->buffer, NULL);
    vkFreeMemory(app->device, b->memory, NULL);
}

static bool is_depth(VkFormat f)
{
    return f == VK_FORMAT_D32_SFLOAT || f == VK_FORMAT_D16_UNORM;
}

static void create_image(struct passes_app *app, uint32_t w, uint32_t h, VkFormat format,
                         VkImageUsageFlags usage, struct passes_image *im)
{
    VkFormatProperties fp;
    vkGetPhysicalDeviceFormatProperties(app->phys, format, &fp);
    VkFormatFeatureFlags need = 0;
    if (usage & VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT)
        need |= VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT;
    if (usage & VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT)
        need |= VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT;
    if ((fp.optimalTilingFeatures & need) != need)
        passes_die(77, "the device cannot render to %s", passes_format_name(format));
    VkImageCreateInfo ici = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
        .imageType = VK_IMAGE_TYPE_2D,
        .format = format,
        .extent = {w, h, 1},
        .mipLevels = 1,
        .arrayLayers = 1,
        .samples = VK_SAMPLE_COUNT_1_BIT,
        .tiling = VK_IMAGE_TILING_OPTIMAL,
        .usage = usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
        .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
    };
    PASSES_CHECK(vkCreateImage(app->device, &ici, NULL, &im->image));
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(app->device, im->image, &req);
    im->memory = allocate(app, req, false);
    PASSES_CHECK(vkBindImageMemory(app->device, im->image, im->memory, 0));
    im->format = format;
    im->width = w;
    im->height = h;
    im->view = VK_NULL_HANDLE;
    if (!need)
        return; /* only copied to: no view */
    VkImageViewCreateInfo vci = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
        .image = im->image,
        .viewType = VK_IMAGE_VIEW_TYPE_2D,
        .format = format,
        .subresourceRange = {is_depth(format) ? VK_IMAGE_ASPECT_DEPTH_BIT : VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1},
    };
    PASSES_CHECK(vkCreateImageView(app->device, &vci, NULL, &im->view));
}

static void destroy_image(struct passes_app *app, struct passes_image *im)
{
    if (im->view)
        vkDestroyImageView(app->device, im->view, NULL);
    vkDestroyImage(app->device, im->image, NULL);
    vkFreeMemory(app->device, im->memory, NULL);
}

/* A cube: 8 corners, 12 triangles. */
static void fill_geometry(struct passes_app *app)
{
    float *c = app->corners.mapped;
    for (int i = 0; i < 8; i++) {
        c[3 * i + 0] = (i & 1) ? 1.0f : -1.0f;
        c[3 * i + 1] = (i & 2) ? 1.0f : -1.0f;
        c[3 * i + 2] = (i & 4) ? 1.0f : -1.0f;
    }
    static const uint16_t tri[36] = {0, 1, 3, 0, 3, 2, 4, 6, 7, 4, 7, 5, 0, 4, 5, 0, 5, 1,
                                     2, 3, 7, 2, 7, 6, 0, 2, 6, 0, 6, 4, 1, 5, 7, 1, 7, 3};
    memcpy(app->indices.mapped, tri, sizeof tri);
    float *in = app->staging_instances.mapped;
    for (int i = 0; i < INSTANCE_BYTES / 16; i++) {
        in[4 * i + 0] = -0.8f + 0.2f * (float)(i % 8);
        in[4 * i + 1] = -0.8f + 0.2f * (float)(i / 8 % 8);
        in[4 * i + 2] = 0.1f * (float)(i % 5);
        in[4 * i + 3] = 0.08f;
    }
    memset(app->staging_texture.mapped, 0x5a, app->staging_texture.size);
}

/* ---- render passes ------------------------------------------------------------ */

static VkAttachmentDescription attachment(VkFormat format)
{
    VkImageLayout layout = is_depth(format) ? VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL
                                            : VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    return (VkAttachmentDescription){
        .format = format,
        .samples = VK_SAMPLE_COUNT_1_BIT,
        .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
        .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
        .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
        .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
        .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
        .finalLayout = layout,
    };
}

/* A render pass over `color` (VK_FORMAT_UNDEFINED: none) and `depth` (none
 * likewise), with `subpasses` subpasses that all use both, each after the
 * one before. */
static VkRenderPass create_pass(struct passes_app *app, VkFormat color, VkFormat depth, uint32_t subpasses)
{
    VkAttachmentDescription att[2];
    uint32_t n = 0;
    VkAttachmentReference cref = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkAttachmentReference dref = {0, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
    if (color != VK_FORMAT_UNDEFINED) {
        cref.attachment = n;
        att[n++] = attachment(color);
    }
    if (depth != VK_FORMAT_UNDEFINED) {
        dref.attachment = n;
        att[n++] = attachment(depth);
    }
    VkSubpassDescription sub[2];
    for (uint32_t i = 0; i < subpasses; i++)
        sub[i] = (VkSubpassDescription){
            .pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
            .colorAttachmentCount = color != VK_FORMAT_UNDEFINED ? 1 : 0,
            .pColorAttachments = &cref,
            .pDepthStencilAttachment = depth != VK_FORMAT_UNDEFINED ? &dref : NULL,
        };
    const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
                                        VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
                                        VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
    const VkAccessFlags access = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_COLOR_ATTACHMENT_READ_BIT |
                                 VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT |
                                 VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT;
    /* After the attachment writes of earlier instances (the extra passes
     * render one after another into one image), and subpass 1 after 0. */
    VkSubpassDependency deps[2] = {
        {
            .srcSubpass = VK_SUBPASS_EXTERNAL,
            .dstSubpass = 0,
            .srcStageMask = stages,
            .dstStageMask = stages,
            .srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
            .dstAccessMask = access,
        },
        {
            .srcSubpass = 0,
            .dstSubpass = 1,
            .srcStageMask = stages,
            .dstStageMask = stages,
            .srcAccessMask = access,
            .dstAccessMask = access,
            .dependencyFlags = VK_DEPENDENCY_BY_REGION_BIT,
        },
    };
    VkRenderPassCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
        .attachmentCount = n,
        .pAttachments = att,
        .subpassCount = subpasses,
        .pSubpasses = sub,
        .dependencyCount = subpasses > 1 ? 2 : 1,
        .pDependencies = deps,
    };
    VkRenderPass pass;
    PASSES_CHECK(vkCreateRenderPass(app->device, &ci, NULL, &pass));
    return pass;
}

static VkFramebuffer create_fb(struct passes_app *app, VkRenderPass pass, const struct passes_image *color,
                               const struct passes_image *depth)
{
    VkImageView views[2];
    uint32_t n = 0;
    const struct passes_image *any = color ? color : depth;
    if (color)
        views[n++] = color->view;
    if (depth)
        views[n++] = depth->view;
    VkFramebufferCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
        .renderPass = pass,
        .attachmentCount = n,
        .pAttachments = views,
        .width = any->width,
        .height = any->height,
        .layers = 1,
    };
    VkFramebuffer fb;
    PASSES_CHECK(vkCreateFramebuffer(app->device, &ci, NULL, &fb));
    return fb;
}

void passes_create_resources(struct passes_app *app)
{
    const VkBufferUsageFlags src = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    create_buffer(app, 8 * 3 * sizeof(float), VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, true, &app->corners);
    create_buffer(app, 36 * sizeof(uint16_t), VK_BUFFER_USAGE_INDEX_BUFFER_BIT, true, &app->indices);
    create_buffer(app, INSTANCE_BYTES, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                  false, &app->instances);
    create_buffer(app, INSTANCE_BYTES, src, true, &app->staging_instances);
    create_buffer(app, TEXTURE_W * TEXTURE_H * 4, src, true, &app->staging_texture);
    create_buffer(app, MAIN_W * MAIN_H * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true, &app->readback);
    create_buffer(app, STORAGE_BYTES, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                  true, &app->storage);
    fill_geometry(app);

    const VkImageUsageFlags color = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
    const VkImageUsageFlags depth = VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT;
    create_image(app, SHADOW_SIZE, SHADOW_SIZE, VK_FORMAT_D32_SFLOAT, depth, &app->shadow_depth);
    create_image(app, MAIN_W, MAIN_H, VK_FORMAT_R8G8B8A8_UNORM, color, &app->main_color);
    create_image(app, MAIN_W, MAIN_H, VK_FORMAT_D32_SFLOAT, depth, &app->main_depth);
    create_image(app, MAIN_W, MAIN_H, VK_FORMAT_R8G8B8A8_UNORM, color, &app->id_color);
    create_image(app, MAIN_W, MAIN_H, VK_FORMAT_D32_SFLOAT, depth, &app->id_depth);
    create_image(app, MAIN_W, MAIN_H, VK_FORMAT_R8G8B8A8_UNORM, color | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                 &app->post_color);
    create_image(app, MAIN_W, MAIN_H, VK_FORMAT_D16_UNORM, depth, &app->post_depth);
    create_image(app, TEXTURE_W, TEXTURE_H, VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                 &app->texture);
    create_image(app, EXTRA_SIZE, EXTRA_SIZE, VK_FORMAT_R8G8B8A8_UNORM, color, &app->extra_color);

    app->shadow_pass = create_pass(app, VK_FORMAT_UNDEFINED, VK_FORMAT_D32_SFLOAT, 1);
    app->main_pass = create_pass(app, VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_D32_SFLOAT, 2);
    app->id_pass = create_pass(app, VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_D32_SFLOAT, 1);
    app->extra_pass = create_pass(app, VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_UNDEFINED, 1);
    app->shadow_fb = create_fb(app, app->shadow_pass, NULL, &app->shadow_depth);
    app->main_fb = create_fb(app, app->main_pass, &app->main_color, &app->main_depth);
    app->id_fb = create_fb(app, app->id_pass, &app->id_color, &app->id_depth);
    app->extra_fb = create_fb(app, app->extra_pass, &app->extra_color, NULL);
    /* The shadow pass is known by its render pass's name, the main pass
     * by its framebuffer's (its render pass has none); the others by
     * nothing: the layer names them after their area and formats. */
    passes_name(app, VK_OBJECT_TYPE_RENDER_PASS, (uint64_t)app->shadow_pass, "Shadow pass");
    passes_name(app, VK_OBJECT_TYPE_FRAMEBUFFER, (uint64_t)app->main_fb, "Main framebuffer");

    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = app->family,
    };
    PASSES_CHECK(vkCreateCommandPool(app->device, &pci, NULL, &app->pool));
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = app->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    PASSES_CHECK(vkAllocateCommandBuffers(app->device, &ai, &app->frame_cb));
    passes_name(app, VK_OBJECT_TYPE_COMMAND_BUFFER, (uint64_t)(uintptr_t)app->frame_cb, "Frame commands");
    ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
    PASSES_CHECK(vkAllocateCommandBuffers(app->device, &ai, &app->hud_cb));
    passes_name(app, VK_OBJECT_TYPE_COMMAND_BUFFER, (uint64_t)(uintptr_t)app->hud_cb, "HUD commands");

    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    PASSES_CHECK(vkCreateFence(app->device, &fci, NULL, &app->fence));
    if (app->opt.truth) {
        /* two timestamps per region (the fixed ones, each extra pass and
         * dispatch), and the pair that shows what one costs */
        app->nqueries = 2 * (16 + app->opt.extra_passes + app->opt.extra_dispatches) + 2;
        VkQueryPoolCreateInfo qci = {
            .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
            .queryType = VK_QUERY_TYPE_TIMESTAMP,
            .queryCount = app->nqueries,
        };
        PASSES_CHECK(vkCreateQueryPool(app->device, &qci, NULL, &app->queries));
    }
}

/* ---- pipelines ------------------------------------------------------------------ */

static VkShaderModule module(struct passes_app *app, const uint32_t *code, size_t size)
{
    VkShaderModuleCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = size,
        .pCode = code,
    };
    VkShaderModule m;
    PASSES_CHECK(vkCreateShaderModule(app->device, &ci, NULL, &m));
    return m;
}

/* What a graphics pipeline is made of here. */
struct draw_desc {
    const uint32_t *vert;
    size_t vert_size;
    bool fragment;           /* color.frag, else depth only */
    bool cubes;              /* vertex input: corners and instances */
    VkRenderPass pass;       /* VK_NULL_HANDLE: dynamic rendering */
    uint32_t subpass;
    VkFormat color, depth;   /* dynamic rendering: the formats */
    bool depth_test;
};

static VkPipeline draw_pipeline(struct passes_app *app, const struct draw_desc *d)
{
    VkShaderModule vs = module(app, d->vert, d->vert_size);
    VkShaderModule fs = module(app, color_frag, sizeof color_frag);
    VkPipelineShaderStageCreateInfo stages[2] = {
        {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
         .stage = VK_SHADER_STAGE_VERTEX_BIT, .module = vs, .pName = "main"},
        {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
         .stage = VK_SHADER_STAGE_FRAGMENT_BIT, .module = fs, .pName = "main"},
    };
    VkVertexInputBindingDescription bindings[2] = {
        {0, 3 * sizeof(float), VK_VERTEX_INPUT_RATE_VERTEX},
        {1, 4 * sizeof(float), VK_VERTEX_INPUT_RATE_INSTANCE},
    };
    VkVertexInputAttributeDescription attrs[2] = {
        {0, 0, VK_FORMAT_R32G32B32_SFLOAT, 0},
        {1, 1, VK_FORMAT_R32G32B32A32_SFLOAT, 0},
    };
    VkPipelineVertexInputStateCreateInfo vi = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO,
        .vertexBindingDescriptionCount = d->cubes ? 2 : 0,
        .pVertexBindingDescriptions = bindings,
        .vertexAttributeDescriptionCount = d->cubes ? 2 : 0,
        .pVertexAttributeDescriptions = attrs,
    };
    VkPipelineInputAssemblyStateCreateInfo ia = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
        .topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST,
    };
    VkPipelineViewportStateCreateInfo vp = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
        .viewportCount = 1,
        .scissorCount = 1,
    };
    VkPipelineRasterizationStateCreateInfo rs = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
        .polygonMode = VK_POLYGON_MODE_FILL,
        .cullMode = VK_CULL_MODE_NONE,
        .frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE,
        .lineWidth = 1.0f,
    };
    VkPipelineMultisampleStateCreateInfo ms = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
        .rasterizationSamples = VK_SAMPLE_COUNT_1_BIT,
    };
    VkPipelineDepthStencilStateCreateInfo ds = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO,
        .depthTestEnable = d->depth_test,
        .depthWriteEnable = d->depth_test,
        .depthCompareOp = VK_COMPARE_OP_LESS_OR_EQUAL,
    };
    VkPipelineColorBlendAttachmentState blend = {.colorWriteMask = 0xf};
    VkPipelineColorBlendStateCreateInfo cb = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
        .attachmentCount = d->fragment ? 1 : 0,
        .pAttachments = &blend,
    };
    VkDynamicState dyn[2] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
    VkPipelineDynamicStateCreateInfo dy = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO,
        .dynamicStateCount = 2,
        .pDynamicStates = dyn,
    };
    VkPipelineRenderingCreateInfo ri = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO,
        .colorAttachmentCount = 1,
        .pColorAttachmentFormats = &d->color,
        .depthAttachmentFormat = d->depth,
    };
    VkGraphicsPipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
        .pNext = d->pass ? NULL : &ri,
        .stageCount = d->fragment ? 2 : 1,
        .pStages = stages,
        .pVertexInputState = &vi,
        .pInputAssemblyState = &ia,
        .pViewportState = &vp,
        .pRasterizationState = &rs,
        .pMultisampleState = &ms,
        .pDepthStencilState = &ds,
        .pColorBlendState = &cb,
        .pDynamicState = &dy,
        .layout = app->draw_layout,
        .renderPass = d->pass,
        .subpass = d->subpass,
    };
    VkPipeline p;
    PASSES_CHECK(vkCreateGraphicsPipelines(app->device, VK_NULL_HANDLE, 1, &ci, NULL, &p));
    vkDestroyShaderModule(app->device, vs, NULL);
    vkDestroyShaderModule(app->device, fs, NULL);
    return p;
}

static VkPipeline compute_pipeline(struct passes_app *app, const uint32_t *code, size_t size)
{
    VkShaderModule m = module(app, code, size);
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = m, .pName = "main"},
        .layout = app->compute_layout,
    };
    VkPipeline p;
    PASSES_CHECK(vkCreateComputePipelines(app->device, VK_NULL_HANDLE, 1, &ci, NULL, &p));
    vkDestroyShaderModule(app->device, m, NULL);
    return p;
}

/* Sets the debug name and keeps it for the zone names of the truth. */
static void name_pipeline(struct passes_app *app, VkPipeline p, const char *name)
{
    passes_name(app, VK_OBJECT_TYPE_PIPELINE, (uint64_t)p, name);
    if (app->nnamed == PASSES_MAX_PIPELINES)
        passes_die(2, "too many named pipelines");
    app->named[app->nnamed].pipe = p;
    snprintf(app->named[app->nnamed].name, PASSES_NAME_MAX, "%s", name);
    app->nnamed++;
}

static void create_layouts(struct passes_app *app)
{
    VkPushConstantRange color = {VK_SHADER_STAGE_FRAGMENT_BIT, 0, 4 * sizeof(float)};
    VkPipelineLayoutCreateInfo lci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .pushConstantRangeCount = 1,
        .pPushConstantRanges = &color,
    };
    PASSES_CHECK(vkCreatePipelineLayout(app->device, &lci, NULL, &app->draw_layout));

    VkDescriptorSetLayoutBinding b = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo sci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = 1,
        .pBindings = &b,
    };
    PASSES_CHECK(vkCreateDescriptorSetLayout(app->device, &sci, NULL, &app->compute_set_layout));
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 2 * sizeof(uint32_t)};
    VkPipelineLayoutCreateInfo cci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &app->compute_set_layout,
        .pushConstantRangeCount = 1,
        .pPushConstantRanges = &push,
    };
    PASSES_CHECK(vkCreatePipelineLayout(app->device, &cci, NULL, &app->compute_layout));

    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo dpi = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = 1,
        .poolSizeCount = 1,
        .pPoolSizes = &size,
    };
    PASSES_CHECK(vkCreateDescriptorPool(app->device, &dpi, NULL, &app->desc_pool));
    VkDescriptorSetAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = app->desc_pool,
        .descriptorSetCount = 1,
        .pSetLayouts = &app->compute_set_layout,
    };
    PASSES_CHECK(vkAllocateDescriptorSets(app->device, &ai, &app->compute_set));
    VkDescriptorBufferInfo bi = {app->storage.buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet w = {
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = app->compute_set,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &bi,
    };
    vkUpdateDescriptorSets(app->device, 1, &w, 0, NULL);
}

void passes_create_pipelines(struct passes_app *app)
{
    create_layouts(app);
    const VkFormat none = VK_FORMAT_UNDEFINED;
    app->shadow_pipe = draw_pipeline(app, &(struct draw_desc){scene_vert, sizeof scene_vert, false, true,
                                                              app->shadow_pass, 0, none, none, true});
    app->scene_pipe = draw_pipeline(app, &(struct draw_desc){scene_vert, sizeof scene_vert, true, true,
                                                             app->main_pass, 0, none, none, true});
    app->ground_pipe = draw_pipeline(app, &(struct draw_desc){quad_vert, sizeof quad_vert, true, false,
                                                              app->main_pass, 0, none, none, true});
    app->hud_pipe = draw_pipeline(app, &(struct draw_desc){cover_vert, sizeof cover_vert, true, false,
                                                           app->main_pass, 1, none, none, false});
    app->id_pipe = draw_pipeline(app, &(struct draw_desc){scene_vert, sizeof scene_vert, true, true,
                                                          app->id_pass, 0, none, none, true});
    app->tonemap_pipe = draw_pipeline(app, &(struct draw_desc){cover_vert, sizeof cover_vert, true, false,
                                                               VK_NULL_HANDLE, 0, VK_FORMAT_R8G8B8A8_UNORM,
                                                               VK_FORMAT_D16_UNORM, false});
    app->mix_pipe = compute_pipeline(app, mix_comp, sizeof mix_comp);
    app->scramble_pipe = compute_pipeline(app, scramble_comp, sizeof scramble_comp);
    /* named ones, and unnamed ones (ground, id, scramble) */
    name_pipeline(app, app->shadow_pipe, "Shadow pipeline");
    name_pipeline(app, app->scene_pipe, "Scene pipeline");
    name_pipeline(app, app->hud_pipe, "HUD pipeline");
    name_pipeline(app, app->tonemap_pipe, "Tonemap");
    name_pipeline(app, app->mix_pipe, "Mix");
}

/* ---- teardown ------------------------------------------------------------------- */

void passes_destroy(struct passes_app *app)
{
    VkDevice d = app->device;
    VkPipeline pipes[] = {app->shadow_pipe, app->scene_pipe, app->ground_pipe, app->hud_pipe,
                          app->id_pipe, app->tonemap_pipe, app->mix_pipe, app->scramble_pipe};
    for (size_t i = 0; i < sizeof pipes / sizeof pipes[0]; i++)
        vkDestroyPipeline(d, pipes[i], NULL);
    vkDestroyPipelineLayout(d, app->draw_layout, NULL);
    vkDestroyPipelineLayout(d, app->compute_layout, NULL);
    vkDestroyDescriptorPool(d, app->desc_pool, NULL);
    vkDestroyDescriptorSetLayout(d, app->compute_set_layout, NULL);
    VkFramebuffer fbs[] = {app->shadow_fb, app->main_fb, app->id_fb, app->extra_fb};
    VkRenderPass passes[] = {app->shadow_pass, app->main_pass, app->id_pass, app->extra_pass};
    for (int i = 0; i < 4; i++) {
        vkDestroyFramebuffer(d, fbs[i], NULL);
        vkDestroyRenderPass(d, passes[i], NULL);
    }
    struct passes_image *images[] = {&app->shadow_depth, &app->main_color, &app->main_depth,
                                     &app->id_color, &app->id_depth, &app->post_color,
                                     &app->post_depth, &app->texture, &app->extra_color};
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++)
        destroy_image(app, images[i]);
    struct passes_buffer *buffers[] = {&app->corners, &app->indices, &app->instances,
                                       &app->staging_instances, &app->staging_texture,
                                       &app->readback, &app->storage};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        destroy_buffer(app, buffers[i]);
    if (app->queries)
        vkDestroyQueryPool(d, app->queries, NULL);
    vkDestroyFence(d, app->fence, NULL);
    vkDestroyCommandPool(d, app->pool, NULL);
    vkDestroyDevice(d, NULL);
    app->destroy_messenger(app->instance, app->messenger, NULL);
    vkDestroyInstance(app->instance, NULL);
    for (int i = 0; i < app->nmessages && i < PASSES_MAX_MESSAGES; i++) {
        free(app->messages[i].id);
        free(app->messages[i].text);
    }
}
