/* gpuzones Vulkan zones: Tracy's TracyVk… macros over a gpuzones context.
 * Usable from C11 (GNU extensions: scoped zones end with
 * __attribute__((cleanup))) and C++ (an RAII type).
 *
 * Include <vulkan/vulkan.h> or volk.h first (a program built with volk
 * defines VK_NO_PROTOTYPES; the plain context macros then use volk's
 * function pointers, which have the same names as the prototypes).
 * Define GPUZONES_VK_USE_SYMBOL_TABLE (or Tracy's TRACY_VK_USE_SYMBOL_TABLE)
 * to create contexts from vkGetInstanceProcAddr / vkGetDeviceProcAddr
 * instead: the context then calls Vulkan only through what they return.
 *
 * Without GPUZONES_ENABLE every macro expands to no code (contexts are
 * NULL; the arguments are named, not evaluated, so that variables used
 * only in the macros draw no warning) and the program need not link
 * libgpuzones.
 *
 *   TracyVkCtx ctx = TracyVkContextCalibrated(pd, dev, queue, cmd, gpdctd, gct);
 *   …  { TracyVkZone(ctx, cmd, "Shadows"); vkCmdDispatch(…); }   // ends at '}'
 *   TracyVkCollect(ctx, cmd);    // each frame, outside a render pass
 *   TracyVkDestroy(ctx);         // before vkDestroyDevice
 *
 * Zones are read back from what the collect command buffers copied, never
 * by waiting: a zone still running when a collect's copy ran is read by the
 * next collect, and zones not read by TracyVkDestroy are counted as dropped
 * (collect once more before destroying to keep them). TracyVkCollectHost
 * reads what earlier collects copied. A context holds 2048 zones between
 * collects; more are dropped and counted. Command buffers holding zones must
 * be submitted after the collect that precedes their recording (Tracy's
 * rule: the collect resets the queries that later zones reuse).
 */
#ifndef GPUZONES_VULKAN_H
#define GPUZONES_VULKAN_H

#include "gpuzones.h"

#if defined(TRACY_VK_USE_SYMBOL_TABLE) && !defined(GPUZONES_VK_USE_SYMBOL_TABLE)
#define GPUZONES_VK_USE_SYMBOL_TABLE 1
#endif

#ifdef GPUZONES_ENABLE

#include <vulkan/vulkan.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpuzones_vk_ctx gpuzones_vk_ctx;

/* What a context is made from. Functions left NULL are resolved through
 * get_instance_proc_addr(instance, …) and get_device_proc_addr(device, …). */
typedef struct gpuzones_vk_create_info {
    VkInstance instance;
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
    PFN_vkGetDeviceProcAddr get_device_proc_addr;
    PFN_vkGetPhysicalDeviceProperties get_physical_device_properties;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties get_queue_family_properties;
    PFN_vkGetPhysicalDeviceMemoryProperties get_memory_properties;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;          /* NULL for a host-calibrated context */
    VkCommandBuffer cmdbuf; /* initial state; left executable (Tracy's rule) */
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT get_time_domains; /* calibrated forms */
    PFN_vkGetCalibratedTimestampsEXT get_calibrated_timestamps;
    PFN_vkResetQueryPool reset_query_pool; /* host-calibrated form (host query reset) */
    int calibrated; /* symbol-table forms: look the calibration functions up */
} gpuzones_vk_create_info;

/* A zone in progress (what the …Begin macros declare). */
typedef struct gpuzones_vk_zone {
    gpuzones_vk_ctx *ctx;
    VkCommandBuffer cmdbuf;
    uint64_t seq;   /* the zone's slot sequence number */
    uint32_t state; /* 0: inactive, 1: open, 2: ended */
} gpuzones_vk_zone;

/* NULL when gpuzones is disabled or the device cannot be timed (said once
 * on stderr); every other call accepts NULL. */
GPUZONES_API gpuzones_vk_ctx *gpuzones_vk_context_create(const gpuzones_vk_create_info *info);
GPUZONES_API void gpuzones_vk_context_destroy(gpuzones_vk_ctx *ctx);
GPUZONES_API void gpuzones_vk_context_name(gpuzones_vk_ctx *ctx, const char *name, size_t len);
/* srcloc: from GPUZONES_SRCLOC_ID or gpuzones_srcloc_transient. */
GPUZONES_API gpuzones_vk_zone gpuzones_vk_zone_begin(gpuzones_vk_ctx *ctx, VkCommandBuffer cmdbuf,
                                                     uint32_t srcloc, int active);
GPUZONES_API void gpuzones_vk_zone_end(gpuzones_vk_zone *zone);
/* cmdbuf recording and outside a render pass; NULL: read back on the host
 * only (TracyVkCollectHost). */
GPUZONES_API void gpuzones_vk_collect(gpuzones_vk_ctx *ctx, VkCommandBuffer cmdbuf);

#ifdef __cplusplus
}

namespace gpuzones {
/* Ends its zone when it goes out of scope. */
class VkZoneScope {
public:
    VkZoneScope(gpuzones_vk_ctx *ctx, VkCommandBuffer cmdbuf, uint32_t srcloc, bool active)
        : zone_(gpuzones_vk_zone_begin(ctx, cmdbuf, srcloc, active))
    {
    }
    ~VkZoneScope() { gpuzones_vk_zone_end(&zone_); }
    VkZoneScope(const VkZoneScope &) = delete;
    VkZoneScope &operator=(const VkZoneScope &) = delete;

private:
    gpuzones_vk_zone zone_;
};
} // namespace gpuzones
#define GPUZONES_VK_SCOPE_(var, ctx, cmdbuf, id, active)                                   \
    gpuzones::VkZoneScope var((ctx), (cmdbuf), (id), (active))
#else
#define GPUZONES_VK_SCOPE_(var, ctx, cmdbuf, id, active)                                   \
    /* unused: clang counts a variable only read by its cleanup as unused */ \
    gpuzones_vk_zone var __attribute__((cleanup(gpuzones_vk_zone_end), unused)) =          \
        gpuzones_vk_zone_begin((ctx), (cmdbuf), (id), (active))
#endif

typedef gpuzones_vk_ctx *TracyVkCtx;

/* The plain forms take the physical-device functions by their global names
 * (libvulkan's prototypes or volk's pointers). */
static inline gpuzones_vk_ctx *gpuzones_vk_context_from_(gpuzones_vk_create_info info)
{
    return gpuzones_vk_context_create(&info);
}
#define GPUZONES_VK_GL_ON_                                                                      \
    vkGetPhysicalDeviceProperties, vkGetPhysicalDeviceQueueFamilyProperties,                    \
        vkGetPhysicalDeviceMemoryProperties
#define GPUZONES_VK_GL_OFF_ NULL, NULL, NULL
#define GPUZONES_VK_GDPA_ON_ vkGetDeviceProcAddr

#ifdef __cplusplus
/* C++ before C++20 has no designated initializers: a helper fills them. */
static inline gpuzones_vk_create_info gpuzones_vk_info_(VkInstance inst, PFN_vkGetInstanceProcAddr gipa,
                                                       PFN_vkGetDeviceProcAddr gdpa,
                                                       PFN_vkGetPhysicalDeviceProperties gpdp,
                                                       PFN_vkGetPhysicalDeviceQueueFamilyProperties gqfp,
                                                       PFN_vkGetPhysicalDeviceMemoryProperties gpmp,
                                                       VkPhysicalDevice pd, VkDevice dev, VkQueue q,
                                                       VkCommandBuffer cb,
                                                       PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT gtd,
                                                       PFN_vkGetCalibratedTimestampsEXT gct,
                                                       PFN_vkResetQueryPool rqp, int calibrated)
{
    gpuzones_vk_create_info i = {inst, gipa, gdpa, gpdp, gqfp, gpmp, pd, dev, q, cb,
                                 gtd, gct, rqp, calibrated};
    return i;
}
#define GPUZONES_VK_INFO_(inst, gipa, gdpa, gl, pd, dev, q, cb, gtd, gct, rqp, cal)              \
    gpuzones_vk_info_(inst, gipa, gdpa, gl, pd, dev, q, cb, gtd, gct, rqp, cal)
#else
#define GPUZONES_VK_INFO_(inst, gipa, gdpa, gl, pd, dev, q, cb, gtd, gct, rqp, cal)              \
    ((gpuzones_vk_create_info){inst, gipa, gdpa, gl, pd, dev, q, cb, gtd, gct, rqp, cal})
#endif

#ifdef GPUZONES_VK_USE_SYMBOL_TABLE
#define TracyVkContext(instance, physdev, device, queue, cmdbuf, gipa, gdpa)                    \
    gpuzones_vk_context_from_(GPUZONES_VK_INFO_(instance, gipa, gdpa, GPUZONES_VK_GL_OFF_,       \
                                                physdev, device, queue, cmdbuf, NULL, NULL, NULL, 0))
#define TracyVkContextCalibrated(instance, physdev, device, queue, cmdbuf, gipa, gdpa)          \
    gpuzones_vk_context_from_(GPUZONES_VK_INFO_(instance, gipa, gdpa, GPUZONES_VK_GL_OFF_,       \
                                                physdev, device, queue, cmdbuf, NULL, NULL, NULL, 1))
#define TracyVkContextHostCalibrated(instance, physdev, device, gipa, gdpa)                     \
    gpuzones_vk_context_from_(GPUZONES_VK_INFO_(instance, gipa, gdpa, GPUZONES_VK_GL_OFF_,       \
                                                physdev, device, NULL, NULL, NULL, NULL, NULL, 1))
#else
#define TracyVkContext(physdev, device, queue, cmdbuf)                                          \
    gpuzones_vk_context_from_(GPUZONES_VK_INFO_(NULL, NULL, GPUZONES_VK_GDPA_ON_,                \
                                                GPUZONES_VK_GL_ON_, physdev, device, queue,      \
                                                cmdbuf, NULL, NULL, NULL, 0))
#define TracyVkContextCalibrated(physdev, device, queue, cmdbuf, gpdctd, gct)                   \
    gpuzones_vk_context_from_(GPUZONES_VK_INFO_(NULL, NULL, GPUZONES_VK_GDPA_ON_,                \
                                                GPUZONES_VK_GL_ON_, physdev, device, queue,      \
                                                cmdbuf, gpdctd, gct, NULL, 1))
#define TracyVkContextHostCalibrated(physdev, device, qpreset, gpdctd, gct)                     \
    gpuzones_vk_context_from_(GPUZONES_VK_INFO_(NULL, NULL, GPUZONES_VK_GDPA_ON_,                \
                                                GPUZONES_VK_GL_ON_, physdev, device, NULL, NULL, \
                                                gpdctd, gct, qpreset, 1))
#endif

#define TracyVkContextName(ctx, name, size) gpuzones_vk_context_name((ctx), (name), (size))
#define TracyVkDestroy(ctx) gpuzones_vk_context_destroy(ctx)
#define TracyVkNamedZoneC(ctx, varname, cmdbuf, name, color, active)                            \
    GPUZONES_VK_SCOPE_(varname, ctx, cmdbuf, GPUZONES_SRCLOC_ID(name, color), active)
#define TracyVkNamedZone(ctx, varname, cmdbuf, name, active)                                    \
    TracyVkNamedZoneC(ctx, varname, cmdbuf, name, 0, active)
#define TracyVkZoneC(ctx, cmdbuf, name, color)                                                  \
    TracyVkNamedZoneC(ctx, GPUZONES_CONCAT(gpuzones_vkzone_, __LINE__), cmdbuf, name, color, 1)
#define TracyVkZone(ctx, cmdbuf, name) TracyVkZoneC(ctx, cmdbuf, name, 0)
#define TracyVkZoneTransient(ctx, varname, cmdbuf, name, active)                                \
    GPUZONES_VK_SCOPE_(varname, ctx, cmdbuf,                                                    \
                       gpuzones_srcloc_transient((name), __builtin_strlen(name), __func__,       \
                                                 __FILE__, (uint32_t)__LINE__, 0),               \
                       active)
/* Explicit forms (gpuzones' own): the zone ends at …End, not at the block's end. */
#define TracyVkZoneBegin(ctx, varname, cmdbuf, name)                                            \
    gpuzones_vk_zone varname =                                                                  \
        gpuzones_vk_zone_begin((ctx), (cmdbuf), GPUZONES_SRCLOC_ID(name, 0), 1)
#define TracyVkZoneBeginC(ctx, varname, cmdbuf, name, color)                                    \
    gpuzones_vk_zone varname =                                                                  \
        gpuzones_vk_zone_begin((ctx), (cmdbuf), GPUZONES_SRCLOC_ID(name, color), 1)
#define TracyVkZoneEnd(varname) gpuzones_vk_zone_end(&(varname))
#define TracyVkCollect(ctx, cmdbuf) gpuzones_vk_collect((ctx), (cmdbuf))
#define TracyVkCollectHost(ctx) gpuzones_vk_collect((ctx), NULL)

#else /* !GPUZONES_ENABLE */

typedef void *TracyVkCtx;
#ifdef GPUZONES_VK_USE_SYMBOL_TABLE
#define TracyVkContext(instance, physdev, device, queue, cmdbuf, gipa, gdpa)                    \
    (GPUZONES_UNUSED_(instance, physdev, device, queue, cmdbuf, gipa, gdpa), (TracyVkCtx)NULL)
#define TracyVkContextCalibrated(instance, physdev, device, queue, cmdbuf, gipa, gdpa)          \
    (GPUZONES_UNUSED_(instance, physdev, device, queue, cmdbuf, gipa, gdpa), (TracyVkCtx)NULL)
#define TracyVkContextHostCalibrated(instance, physdev, device, gipa, gdpa)                     \
    (GPUZONES_UNUSED_(instance, physdev, device, gipa, gdpa), (TracyVkCtx)NULL)
#else
#define TracyVkContext(physdev, device, queue, cmdbuf)                                          \
    (GPUZONES_UNUSED_(physdev, device, queue, cmdbuf), (TracyVkCtx)NULL)
#define TracyVkContextCalibrated(physdev, device, queue, cmdbuf, gpdctd, gct)                   \
    (GPUZONES_UNUSED_(physdev, device, queue, cmdbuf, gpdctd, gct), (TracyVkCtx)NULL)
#define TracyVkContextHostCalibrated(physdev, device, qpreset, gpdctd, gct)                     \
    (GPUZONES_UNUSED_(physdev, device, qpreset, gpdctd, gct), (TracyVkCtx)NULL)
#endif
#define TracyVkContextName(ctx, name, size) GPUZONES_UNUSED_(ctx, name, size)
#define TracyVkDestroy(ctx) GPUZONES_UNUSED_(ctx)
#define TracyVkNamedZoneC(ctx, varname, cmdbuf, name, color, active)                            \
    GPUZONES_UNUSED_(ctx, cmdbuf, name, color, active)
#define TracyVkNamedZone(ctx, varname, cmdbuf, name, active)                                    \
    GPUZONES_UNUSED_(ctx, cmdbuf, name, active)
#define TracyVkZoneC(ctx, cmdbuf, name, color) GPUZONES_UNUSED_(ctx, cmdbuf, name, color)
#define TracyVkZone(ctx, cmdbuf, name) GPUZONES_UNUSED_(ctx, cmdbuf, name)
#define TracyVkZoneTransient(ctx, varname, cmdbuf, name, active)                                \
    GPUZONES_UNUSED_(ctx, cmdbuf, name, active)
/* varname is not declared here: …End names nothing. */
#define TracyVkZoneBegin(ctx, varname, cmdbuf, name) GPUZONES_UNUSED_(ctx, cmdbuf, name)
#define TracyVkZoneBeginC(ctx, varname, cmdbuf, name, color)                                    \
    GPUZONES_UNUSED_(ctx, cmdbuf, name, color)
#define TracyVkZoneEnd(varname)
#define TracyVkCollect(ctx, cmdbuf) GPUZONES_UNUSED_(ctx, cmdbuf)
#define TracyVkCollectHost(ctx) GPUZONES_UNUSED_(ctx)

#endif /* GPUZONES_ENABLE */

#endif /* GPUZONES_VULKAN_H */
