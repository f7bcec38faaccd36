/* VK_LAYER_GPUZONES_clockfault: a test layer placed between gpuzones and
 * the real driver that changes the driver's clocks as environment
 * variables say, so that tests know the ground truth (the real lavapipe
 * time, which is CLOCK_MONOTONIC ns) while gpuzones sees the fault.
 *
 *   GZFAULT_HIDE_CALIBRATION=1   the device has no calibrated timestamps
 *                                (VK_EXT/KHR_calibrated_timestamps hidden)
 *   GZFAULT_HIDE_HOST_QUERY_RESET=1
 *                                no host query reset: VK_EXT_host_query_reset
 *                                hidden, the hostQueryReset feature reported
 *                                false, and device creation refused if it is
 *                                asked for anyway
 *   GZFAULT_HIDE_TIMELINE=1      no timeline semaphores as far as feature
 *                                queries tell (VK_KHR_timeline_semaphore
 *                                hidden, timelineSemaphore reported false):
 *                                gpuzones then proves completion without
 *                                its own semaphore
 *   GZFAULT_HOST_DOMAIN_RAW=1    calibrated timestamps offer CLOCK_MONOTONIC_RAW
 *                                as the only host domain (as pocl and some
 *                                drivers do), in place of lavapipe's
 *                                CLOCK_MONOTONIC: the driver's MONOTONIC value
 *                                is handed up moved into the RAW domain, with
 *                                the offset between the two clocks read back
 *                                to back; gpuzones must translate it back
 *   GZFAULT_SUBMIT_ERROR=lost|oom, GZFAULT_SUBMIT_ERROR_FROM=N,
 *   GZFAULT_SUBMIT_ERROR_COUNT=K
 *                                the Nth vkQueueSubmit* call (from 1) and the
 *                                K-1 after it (default: all after it) return
 *                                VK_ERROR_DEVICE_LOST or
 *                                VK_ERROR_OUT_OF_DEVICE_MEMORY without reaching
 *                                the driver
 *   GZFAULT_CALIB_ERROR=lost     vkGetCalibratedTimestamps* return
 *                                VK_ERROR_DEVICE_LOST
 *   GZFAULT_VALID_BITS=N         every queue family reports timestampValidBits
 *                                N; 0 means "no timestamps", 1..64 also masks
 *                                every timestamp handed up to N bits
 *   GZFAULT_LEAK=1               each vkCreateInstance allocates 128 bytes and
 *                                drops them: a leak in a library the loader
 *                                unloads at vkDestroyInstance, as a driver's
 *                                leak is (tests/lsan checks that the sanitized
 *                                runs tell it from a leak of ours)
 *
 * A fake device counter (all read once, when the library is loaded):
 *
 *   GZFAULT_PERIOD_NS=P          timestampPeriod reported as P (a float); the
 *                                counter ticks once per P ns (default 1)
 *   GZFAULT_START_TICKS=S        the counter reads S at t0, the layer's
 *                                CLOCK_MONOTONIC when it was loaded (the
 *                                loader loads it per instance)
 *   GZFAULT_START_BEFORE_WRAP=D  S = 2^N - D (N the valid bits, default 64)
 *                                (default S: t0 / P, so that with nothing
 *                                else set the counter equals the real time)
 *   GZFAULT_DRIFT_PPM=R          the counter runs R ppm fast (negative: slow)
 *   GZFAULT_WOBBLE_PPM=A, GZFAULT_WOBBLE_PERIOD_S=W
 *                                plus a rate error of A ppm * sin(2 pi t / W)
 *   GZFAULT_JUMP_AT_MS=J, GZFAULT_JUMP_NS=K
 *                                from t0 + J ms on, the counter is K ns on
 *                                (a step; K may be negative)
 *   GZFAULT_JUMPS=J1:K1,J2:K2... more steps, each as above (up to 16; they
 *                                add up), so that one run can put steps at
 *                                several moments of an app's work
 *   GZFAULT_CALIB_DEVIATION_NS=D calibrated timestamps report maxDeviation D
 *                                (default: the driver's, widened to P when
 *                                P > 1 ns, as Mesa's drivers count the
 *                                longest tick period of the domains)
 *   Results copied with vkCmdCopyQueryPoolResults (gpuzones reads back that
 *   way) are rewritten too whenever a clock fault or GZFAULT_LOG is set: the
 *   copy goes to a staging buffer of ours and sets an event, and a thread
 *   of ours writes the fake values where it was to go (see "results copied
 *   by the GPU").
 *   GZFAULT_LOG=path             one line per value rewritten:
 *                                "<ticks as written> <real ns>" (appended);
 *                                then t0 and S are also printed on stderr
 *                                at load ("gzfault: t0 ...")
 *
 * With t = real ns - t0 and g(t) = t * (1 + R) + wobble(t) + step(t), the
 * counter reads (S + round(g(t) / P)) mod 2^N. It replaces every device
 * timestamp the layer above can see: the results of timestamp query pools
 * (vkGetQueryPoolResults, and vkCmdCopyQueryPoolResults into host-visible
 * memory) and the DEVICE domain of calibrated timestamps.
 *
 * Queue families and queues lavapipe does not have (fake_queues.c):
 *
 *   GZFAULT_FAMILIES=transfer,transfer-notime
 *                                transfer-only families appended after the
 *                                real ones (the second with no timestamps)
 *   GZFAULT_EXTRA_QUEUES=N       the first family offers N more queues
 *
 * A lower layer that refuses devices, as a layer does that runs out of
 * memory or meets a request it cannot serve:
 *
 *   GZFAULT_CREATE_DEVICE_ERROR=R, GZFAULT_CREATE_DEVICE_ERROR_COUNT=K
 *                                the first K vkCreateDevice calls (default
 *                                1) return VkResult R (negative) without
 *                                reaching the driver, after moving the
 *                                loader's layer link on as every layer does
 *                                before it calls down (so that a layer above
 *                                that calls again with the same link makes
 *                                this one read past the end of the chain)
 *
 * A lower layer whose callback comes back to the top of the chain:
 *
 *   GZFAULT_REENTER=1            inside each vkQueueSubmit*, before calling
 *                                down, names the queue "renamed in a
 *                                callback" and begins and ends a queue label
 *                                "callback label" on it, through the loader
 *                                (so through every layer above this one)
 *
 * Every other call passes straight through. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include "fake_queues.h"

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
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT GetPhysicalDeviceCalibrateableTimeDomainsEXT;
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT GetPhysicalDeviceCalibrateableTimeDomainsKHR;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties2 GetPhysicalDeviceQueueFamilyProperties2;
    PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties;
    PFN_vkGetPhysicalDeviceProperties2 GetPhysicalDeviceProperties2;
    PFN_vkGetPhysicalDeviceProperties2 GetPhysicalDeviceProperties2KHR;
} instance_data;

typedef struct device_data {
    void *key;
    VkDevice handle;
    PFN_vkGetDeviceProcAddr next_gdpa;
    PFN_vkDestroyDevice DestroyDevice;
    PFN_vkCreateQueryPool CreateQueryPool;
    PFN_vkDestroyQueryPool DestroyQueryPool;
    PFN_vkGetQueryPoolResults GetQueryPoolResults;
    PFN_vkGetCalibratedTimestampsEXT GetCalibratedTimestampsEXT; /* NULL unless enabled */
    PFN_vkGetCalibratedTimestampsEXT GetCalibratedTimestampsKHR;
    PFN_vkCreateEvent CreateEvent;
    PFN_vkDestroyEvent DestroyEvent;
    PFN_vkGetEventStatus GetEventStatus;
    PFN_vkResetEvent ResetEvent;
    PFN_vkCmdSetEvent CmdSetEvent;
    PFN_vkCmdCopyQueryPoolResults CmdCopyQueryPoolResults;
    PFN_vkBindBufferMemory BindBufferMemory;
    PFN_vkDestroyBuffer DestroyBuffer;
    PFN_vkCreateBuffer CreateBuffer;
    PFN_vkGetBufferMemoryRequirements GetBufferMemoryRequirements;
    PFN_vkAllocateMemory AllocateMemory;
    PFN_vkFreeMemory FreeMemory;
    PFN_vkCmdPipelineBarrier CmdPipelineBarrier;
    VkPhysicalDeviceMemoryProperties memory; /* for the copies' staging buffers */
    PFN_vkBeginCommandBuffer BeginCommandBuffer;
    PFN_vkFreeCommandBuffers FreeCommandBuffers;
    PFN_vkMapMemory MapMemory;
    PFN_vkUnmapMemory UnmapMemory;
    PFN_vkGetSemaphoreCounterValue GetSemaphoreCounterValue;
    PFN_vkGetSemaphoreCounterValue GetSemaphoreCounterValueKHR;
    PFN_vkWaitSemaphores WaitSemaphores;
    PFN_vkWaitSemaphores WaitSemaphoresKHR;
    PFN_vkWaitForFences WaitForFences;
    PFN_vkGetFenceStatus GetFenceStatus;
    PFN_vkDeviceWaitIdle DeviceWaitIdle;
    PFN_vkQueueSubmit QueueSubmit;
    PFN_vkQueueSubmit2 QueueSubmit2;
    PFN_vkQueueSubmit2 QueueSubmit2KHR;
    /* for fake queues */
    PFN_vkGetDeviceQueue GetDeviceQueue;
    PFN_vkGetDeviceQueue2 GetDeviceQueue2;
    PFN_vkCreateCommandPool CreateCommandPool;
    PFN_vkQueueWaitIdle QueueWaitIdle;
    PFN_vkQueueBeginDebugUtilsLabelEXT QueueBeginDebugUtilsLabelEXT;
    PFN_vkQueueEndDebugUtilsLabelEXT QueueEndDebugUtilsLabelEXT;
    PFN_vkQueueInsertDebugUtilsLabelEXT QueueInsertDebugUtilsLabelEXT;
    PFN_vkSetDebugUtilsObjectNameEXT SetDebugUtilsObjectNameEXT;
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

/* ---- the fake device counter ------------------------------------------- */

/* Read once at load: the counter must be one function of real time for the
 * whole run, or a test could not map values back. */
#define MAX_JUMPS 16
static struct {
    bool set_bits;       /* GZFAULT_VALID_BITS given */
    uint32_t bits;       /* reported timestampValidBits */
    uint64_t mask;       /* valid bits of every value handed up */
    bool set_period;     /* GZFAULT_PERIOD_NS given */
    float period;        /* reported timestampPeriod */
    long double tick_ns; /* the same float, which is what the layer above sees */
    uint64_t t0;         /* CLOCK_MONOTONIC ns at load: the anchor */
    uint64_t start;      /* counter at t0 */
    long double drift;   /* rate error, as a fraction */
    long double wobble_ns, wobble_period_ns;
    int64_t jump_at_ns, jump_ns;
    uint32_t njumps; /* GZFAULT_JUMPS */
    int64_t jumps_at_ns[MAX_JUMPS], jumps_ns[MAX_JUMPS];
    bool set_deviation;
    uint64_t deviation_ns;
    FILE *log;
    bool rewrite_copies; /* a clock fault or the log is on */
} fake;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* GZFAULT_JUMPS: "J:K" pairs, comma separated. A malformed list is fatal: a
 * test that meant to put steps in must not run without them. */
static void parse_jumps(const char *v)
{
    while (v && *v) {
        char *end;
        double at_ms = strtod(v, &end);
        if (end == v || *end != ':' || fake.njumps == MAX_JUMPS) {
            fprintf(stderr, "gzfault: GZFAULT_JUMPS: cannot read \"%s\" (J:K,J:K..., at most %d)\n",
                    v, MAX_JUMPS);
            abort();
        }
        v = end + 1;
        double ns = strtod(v, &end);
        if (end == v || (*end && *end != ',')) {
            fprintf(stderr, "gzfault: GZFAULT_JUMPS: cannot read \"%s\"\n", v);
            abort();
        }
        fake.jumps_at_ns[fake.njumps] = (int64_t)(at_ms * 1e6);
        fake.jumps_ns[fake.njumps++] = (int64_t)ns;
        v = *end ? end + 1 : end;
    }
}

static double env_num(const char *name, double fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtod(v, NULL) : fallback;
}

__attribute__((constructor)) static void fake_init(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    fake.t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    fq_init();

    const char *bits = getenv("GZFAULT_VALID_BITS");
    fake.set_bits = bits && *bits;
    fake.bits = fake.set_bits ? (uint32_t)strtoul(bits, NULL, 10) : 64;
    /* 1ull << 64 is undefined (x86 gives 1 and a mask of 0); 0 bits means
     * "no timestamps", nothing to mask then. */
    fake.mask = fake.bits == 0 || fake.bits >= 64 ? ~0ull : (1ull << fake.bits) - 1;

    const char *period = getenv("GZFAULT_PERIOD_NS");
    fake.set_period = period && *period && strtod(period, NULL) > 0;
    fake.period = fake.set_period ? (float)strtod(period, NULL) : 1.0f;
    /* Ticks from the float that is reported, not the double that was asked
     * for: a period that is not a float (52.08) would otherwise give a rate
     * error of up to 6e-8 that no model above could know about. */
    fake.tick_ns = fake.period;

    const char *start = getenv("GZFAULT_START_TICKS");
    const char *before = getenv("GZFAULT_START_BEFORE_WRAP");
    if (start && *start)
        fake.start = strtoull(start, NULL, 0);
    else if (before && *before)
        fake.start = ((fake.mask - strtoull(before, NULL, 0)) + 1) & fake.mask;
    else
        fake.start = (uint64_t)llroundl(fake.t0 / fake.tick_ns); /* as if counting from boot */

    fake.drift = env_num("GZFAULT_DRIFT_PPM", 0) * 1e-6L;
    fake.wobble_period_ns = env_num("GZFAULT_WOBBLE_PERIOD_S", 0) * 1e9L;
    if (fake.wobble_period_ns > 0)
        fake.wobble_ns = env_num("GZFAULT_WOBBLE_PPM", 0) * 1e-6L * fake.wobble_period_ns /
                         (2 * 3.14159265358979323846L);
    const char *jump_at = getenv("GZFAULT_JUMP_AT_MS");
    fake.jump_at_ns = jump_at && *jump_at ? (int64_t)(strtod(jump_at, NULL) * 1e6) : INT64_MAX;
    fake.jump_ns = (int64_t)env_num("GZFAULT_JUMP_NS", 0);
    parse_jumps(getenv("GZFAULT_JUMPS"));
    const char *deviation = getenv("GZFAULT_CALIB_DEVIATION_NS");
    fake.set_deviation = deviation && *deviation;
    fake.deviation_ns = fake.set_deviation ? strtoull(deviation, NULL, 10) : 0;

    fake.rewrite_copies = (fake.set_bits && fake.bits > 0) || fake.set_period ||
                          (start && *start) || (before && *before) || fake.drift != 0 ||
                          fake.wobble_ns != 0 || fake.jump_at_ns != INT64_MAX || fake.njumps ||
                          (getenv("GZFAULT_LOG") && *getenv("GZFAULT_LOG"));
    const char *log = getenv("GZFAULT_LOG");
    if (log && *log) {
        fake.log = fopen(log, "a");
        if (fake.log)
            setvbuf(fake.log, NULL, _IOFBF, 1 << 20);
        /* What a test needs to recompute every value from its real time. */
        fprintf(stderr, "gzfault: t0 %" PRIu64 " start %" PRIu64 " bits %u period %.9g\n",
                fake.t0, fake.start, fake.bits, (double)fake.period);
    }
}

/* The loader unloads layers at vkDestroyInstance; at exit this runs after
 * gpuzones' atexit handler has read back its last queries. */
static VkQueryPool *ts_pools;

__attribute__((destructor)) static void fake_fini(void)
{
    /* The loader unloads the layer at vkDestroyInstance: what only this
     * library points to must go with it (LeakSanitizer counts it). */
    free(ts_pools);
    ts_pools = NULL;
    pthread_mutex_lock(&log_lock);
    if (fake.log)
        fclose(fake.log);
    fake.log = NULL;
    pthread_mutex_unlock(&log_lock);
}

/* The counter at real device time real_ns (CLOCK_MONOTONIC on lavapipe). */
static uint64_t fake_ticks(uint64_t real_ns)
{
    long double t = (long double)(int64_t)(real_ns - fake.t0);
    long double g = t * (1 + fake.drift);
    if (fake.wobble_period_ns > 0) {
        /* The integral of a rate error A sin(2 pi t / W): a drift that
         * slowly changes sign, never a step. */
        g += fake.wobble_ns * (1 - cosl(2 * 3.14159265358979323846L * t / fake.wobble_period_ns));
    }
    if (t > fake.jump_at_ns)
        g += fake.jump_ns;
    for (uint32_t i = 0; i < fake.njumps; i++)
        if (t > fake.jumps_at_ns[i])
            g += fake.jumps_ns[i];
    /* Unsigned addition wraps mod 2^64, then the mask makes it mod 2^N.
     * long double keeps g / P exact to the tick for runs of days even at
     * sub-ns periods (64-bit mantissa). */
    return (fake.start + (uint64_t)llroundl(g / fake.tick_ns)) & fake.mask;
}

/* Whether the copy thread runs, flushing the log (under log_lock). */
static bool log_flusher;

/* One line per value. Called where the values are read, often by a thread
 * about to report completion: a write to the file there would delay that
 * report, and the host time the layer above reads after it. So the log is
 * flushed here only until the copy thread runs; from then on that thread
 * flushes it every 500 naps (tens of milliseconds), and the destructor
 * closes it. */
static void log_values(const uint64_t *written, const uint64_t *real, uint32_t n)
{
    pthread_mutex_lock(&log_lock);
    if (fake.log) {
        for (uint32_t i = 0; i < n; i++)
            fprintf(fake.log, "%" PRIu64 " %" PRIu64 "\n", written[i], real[i]);
        if (!log_flusher)
            fflush(fake.log);
    }
    pthread_mutex_unlock(&log_lock);
}

static void log_flush(void)
{
    pthread_mutex_lock(&log_lock);
    log_flusher = true;
    if (fake.log)
        fflush(fake.log);
    pthread_mutex_unlock(&log_lock);
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

/* GZFAULT_LEAK: 128 bytes nobody points to once this returns (written, so
 * that the allocation is not optimised away). */
__attribute__((noinline)) static void leak_once(void)
{
    char *p = malloc(128);
    if (p)
        memset(p, 0x5a, 128);
    __asm__ volatile("" : : "r"(p) : "memory");
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
    const char *leak = getenv("GZFAULT_LEAK");
    if (leak && !strcmp(leak, "1"))
        leak_once();
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
                .GetPhysicalDeviceCalibrateableTimeDomainsEXT =
                    (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)next(
                        *instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"),
                .GetPhysicalDeviceCalibrateableTimeDomainsKHR =
                    (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)next(
                        *instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR"),
                .GetPhysicalDeviceQueueFamilyProperties =
                    (PFN_vkGetPhysicalDeviceQueueFamilyProperties)next(
                        *instance, "vkGetPhysicalDeviceQueueFamilyProperties"),
                .GetPhysicalDeviceQueueFamilyProperties2 =
                    (PFN_vkGetPhysicalDeviceQueueFamilyProperties2)next(
                        *instance, "vkGetPhysicalDeviceQueueFamilyProperties2"),
                .GetPhysicalDeviceProperties = (PFN_vkGetPhysicalDeviceProperties)next(
                    *instance, "vkGetPhysicalDeviceProperties"),
                .GetPhysicalDeviceProperties2 = (PFN_vkGetPhysicalDeviceProperties2)next(
                    *instance, "vkGetPhysicalDeviceProperties2"),
                .GetPhysicalDeviceProperties2KHR = (PFN_vkGetPhysicalDeviceProperties2)next(
                    *instance, "vkGetPhysicalDeviceProperties2KHR"),
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
    if (env_on("GZFAULT_HIDE_TIMELINE") && !strcmp(name, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME))
        return true;
    return env_on("GZFAULT_HIDE_HOST_QUERY_RESET") &&
           !strcmp(name, VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME);
}

/* The timelineSemaphore flags in a queried features chain. */
static void hide_timeline(void *chain)
{
    for (VkBaseOutStructure *s = chain; s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES)
            ((VkPhysicalDeviceTimelineSemaphoreFeatures *)s)->timelineSemaphore = VK_FALSE;
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)
            ((VkPhysicalDeviceVulkan12Features *)s)->timelineSemaphore = VK_FALSE;
    }
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
    if (env_on("GZFAULT_HIDE_TIMELINE"))
        hide_timeline(f->pNext);
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
    if (fake.set_bits)
        *bits = fake.bits;
}

static VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceQueueFamilyProperties(
    VkPhysicalDevice phys, uint32_t *count, VkQueueFamilyProperties *props)
{
    PFN_vkGetPhysicalDeviceQueueFamilyProperties next =
        find_instance(phys)->GetPhysicalDeviceQueueFamilyProperties;
    if (fq_active())
        fq_families(next, phys, count, props);
    else
        next(phys, count, props);
    for (uint32_t i = 0; props && i < *count; i++)
        fake_valid_bits(&props[i].timestampValidBits);
}

static VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceQueueFamilyProperties2(
    VkPhysicalDevice phys, uint32_t *count, VkQueueFamilyProperties2 *props)
{
    PFN_vkGetPhysicalDeviceQueueFamilyProperties2 next =
        find_instance(phys)->GetPhysicalDeviceQueueFamilyProperties2;
    if (fq_active())
        fq_families2(next, phys, count, props);
    else
        next(phys, count, props);
    for (uint32_t i = 0; props && i < *count; i++)
        fake_valid_bits(&props[i].queueFamilyProperties.timestampValidBits);
}

static VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceProperties(VkPhysicalDevice phys,
                                                              VkPhysicalDeviceProperties *props)
{
    find_instance(phys)->GetPhysicalDeviceProperties(phys, props);
    if (fake.set_period)
        props->limits.timestampPeriod = fake.period;
}

static void properties2(VkPhysicalDevice phys, VkPhysicalDeviceProperties2 *props, bool khr)
{
    instance_data *d = find_instance(phys);
    /* The KHR name is only there when the app enabled the extension on a
     * 1.0 instance; the core one does the same. */
    PFN_vkGetPhysicalDeviceProperties2 get =
        khr && d->GetPhysicalDeviceProperties2KHR ? d->GetPhysicalDeviceProperties2KHR
                                                  : d->GetPhysicalDeviceProperties2;
    get(phys, props);
    if (fake.set_period)
        props->properties.limits.timestampPeriod = fake.period;
}

static VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceProperties2(VkPhysicalDevice phys,
                                                               VkPhysicalDeviceProperties2 *props)
{
    properties2(phys, props, false);
}

static VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceProperties2KHR(
    VkPhysicalDevice phys, VkPhysicalDeviceProperties2 *props)
{
    properties2(phys, props, true);
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
    const char *refuse = getenv("GZFAULT_CREATE_DEVICE_ERROR");
    if (refuse && *refuse) {
        static int refused; /* calls refused so far */
        const char *count = getenv("GZFAULT_CREATE_DEVICE_ERROR_COUNT");
        int most = count && *count ? atoi(count) : 1;
        if (__atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED) < most)
            return (VkResult)atoi(refuse);
    }
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
    VkDeviceCreateInfo faked;
    VkDeviceQueueCreateInfo *queue_infos = NULL;
    if (fq_active()) {
        queue_infos = calloc(info->queueCreateInfoCount + 1, sizeof *queue_infos);
        if (!queue_infos)
            return VK_ERROR_OUT_OF_HOST_MEMORY;
        fq_device_info(inst->GetPhysicalDeviceQueueFamilyProperties, phys, info, &faked,
                       queue_infos);
    }
    VkResult r = create(phys, queue_infos ? &faked : info, alloc, device);
    free(queue_infos);
    if (r != VK_SUCCESS)
        return r;
    if (fq_active()) {
        const VkLayerDeviceCreateInfo *data = (const VkLayerDeviceCreateInfo *)info->pNext;
        while (data && !(data->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
                         data->function == VK_LOADER_DATA_CALLBACK))
            data = (const VkLayerDeviceCreateInfo *)data->pNext;
        fq_device_created(*device, phys, info, inst->GetPhysicalDeviceQueueFamilyProperties,
                          data ? data->u.pfnSetDeviceLoaderData : NULL);
    }
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OBJECTS; i++) {
        if (!devices[i].key) {
            devices[i] = (device_data){
                .key = key_of(*device),
                .handle = *device,
                .next_gdpa = next_gdpa,
                .DestroyDevice = (PFN_vkDestroyDevice)next_gdpa(*device, "vkDestroyDevice"),
                .CreateQueryPool = (PFN_vkCreateQueryPool)next_gdpa(*device, "vkCreateQueryPool"),
                .DestroyQueryPool =
                    (PFN_vkDestroyQueryPool)next_gdpa(*device, "vkDestroyQueryPool"),
                .GetQueryPoolResults =
                    (PFN_vkGetQueryPoolResults)next_gdpa(*device, "vkGetQueryPoolResults"),
                .GetCalibratedTimestampsEXT = (PFN_vkGetCalibratedTimestampsEXT)next_gdpa(
                    *device, "vkGetCalibratedTimestampsEXT"),
                .GetCalibratedTimestampsKHR = (PFN_vkGetCalibratedTimestampsEXT)next_gdpa(
                    *device, "vkGetCalibratedTimestampsKHR"),
#define NEXT(name) .name = (PFN_vk##name)next_gdpa(*device, "vk" #name)
                NEXT(CreateEvent),
                NEXT(DestroyEvent),
                NEXT(GetEventStatus),
                NEXT(ResetEvent),
                NEXT(CmdSetEvent),
                NEXT(CmdCopyQueryPoolResults),
                NEXT(BindBufferMemory),
                NEXT(DestroyBuffer),
                NEXT(CreateBuffer),
                NEXT(GetBufferMemoryRequirements),
                NEXT(AllocateMemory),
                NEXT(FreeMemory),
                NEXT(CmdPipelineBarrier),
                NEXT(BeginCommandBuffer),
                NEXT(FreeCommandBuffers),
                NEXT(MapMemory),
                NEXT(UnmapMemory),
                NEXT(GetSemaphoreCounterValue),
                .GetSemaphoreCounterValueKHR = (PFN_vkGetSemaphoreCounterValue)next_gdpa(
                    *device, "vkGetSemaphoreCounterValueKHR"),
                NEXT(WaitSemaphores),
                .WaitSemaphoresKHR =
                    (PFN_vkWaitSemaphores)next_gdpa(*device, "vkWaitSemaphoresKHR"),
                NEXT(WaitForFences),
                NEXT(GetFenceStatus),
                NEXT(DeviceWaitIdle),
                NEXT(QueueSubmit),
                NEXT(QueueSubmit2),
                .QueueSubmit2KHR = (PFN_vkQueueSubmit2)next_gdpa(*device, "vkQueueSubmit2KHR"),
                NEXT(GetDeviceQueue),
                NEXT(GetDeviceQueue2),
                NEXT(CreateCommandPool),
                NEXT(QueueWaitIdle),
                NEXT(QueueBeginDebugUtilsLabelEXT),
                NEXT(QueueEndDebugUtilsLabelEXT),
                NEXT(QueueInsertDebugUtilsLabelEXT),
                NEXT(SetDebugUtilsObjectNameEXT),
#undef NEXT
            };
            PFN_vkGetPhysicalDeviceMemoryProperties memory_properties =
                (PFN_vkGetPhysicalDeviceMemoryProperties)next_gipa(
                    inst->handle, "vkGetPhysicalDeviceMemoryProperties");
            if (memory_properties)
                memory_properties(phys, &devices[i].memory);
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
    if (fq_active())
        fq_device_destroyed(device);
}

/* ---- timestamp values handed up ---------------------------------------- */

/* Timestamp query pools, the only ones whose results are rewritten. Handles
 * are unique across devices (non-dispatchable handles of live objects). */
static size_t ts_npools, ts_cap;

static bool is_timestamp_pool(VkQueryPool pool)
{
    bool found = false;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ts_npools && !found; i++)
        found = ts_pools[i] == pool;
    pthread_mutex_unlock(&lock);
    return found;
}

static VKAPI_ATTR VkResult VKAPI_CALL CreateQueryPool(VkDevice device,
                                                      const VkQueryPoolCreateInfo *info,
                                                      const VkAllocationCallbacks *alloc,
                                                      VkQueryPool *pool)
{
    device_data *d = find_device(device);
    VkResult r = d->CreateQueryPool(device, info, alloc, pool);
    if (r != VK_SUCCESS || info->queryType != VK_QUERY_TYPE_TIMESTAMP)
        return r;
    pthread_mutex_lock(&lock);
    if (ts_npools == ts_cap) {
        size_t cap = ts_cap ? 2 * ts_cap : 64;
        VkQueryPool *grown = realloc(ts_pools, cap * sizeof *grown);
        if (grown) {
            ts_pools = grown;
            ts_cap = cap;
        }
    }
    bool tracked = ts_npools < ts_cap;
    if (tracked)
        ts_pools[ts_npools++] = *pool;
    pthread_mutex_unlock(&lock);
    if (!tracked) {
        /* Handing up real times as if they were fake would be a wrong
         * ground truth: fail instead. */
        d->DestroyQueryPool(device, *pool, alloc);
        *pool = VK_NULL_HANDLE;
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    return r;
}

static VKAPI_ATTR void VKAPI_CALL DestroyQueryPool(VkDevice device, VkQueryPool pool,
                                                   const VkAllocationCallbacks *alloc)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ts_npools; i++) {
        if (ts_pools[i] == pool) {
            ts_pools[i] = ts_pools[--ts_npools];
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    find_device(device)->DestroyQueryPool(device, pool, alloc);
}

static void put_value(char *at, uint64_t v, bool wide)
{
    if (wide) {
        memcpy(at, &v, sizeof v);
    } else {
        uint32_t v32 = (uint32_t)v;
        memcpy(at, &v32, sizeof v32);
    }
}

static VKAPI_ATTR VkResult VKAPI_CALL GetQueryPoolResults(VkDevice device, VkQueryPool pool,
                                                          uint32_t first, uint32_t count,
                                                          size_t size, void *data,
                                                          VkDeviceSize stride,
                                                          VkQueryResultFlags flags)
{
    device_data *d = find_device(device);
    if (!count || !is_timestamp_pool(pool))
        return d->GetQueryPoolResults(device, pool, first, count, size, data, stride, flags);
    /* Read the real values into our own array, always 64-bit with
     * availability: 32 bits of real ns are too few to derive the counter
     * from, and without availability a VK_NOT_READY result does not say
     * which values were written. One driver call, like the caller's. */
    uint64_t *real = malloc(4 * (size_t)count * sizeof *real);
    if (!real)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    uint64_t *log_written = real + 2 * (size_t)count, *log_real = log_written + count;
    uint32_t logged = 0;
    VkResult r = d->GetQueryPoolResults(
        device, pool, first, count, 2 * (size_t)count * sizeof *real, real, 2 * sizeof *real,
        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT |
            (flags & VK_QUERY_RESULT_WAIT_BIT));
    if (r == VK_SUCCESS || r == VK_NOT_READY) {
        bool wide = flags & VK_QUERY_RESULT_64_BIT;
        bool with_availability = flags & VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;
        size_t elem = wide ? 8 : 4;
        for (uint32_t i = 0; i < count; i++) {
            char *at = (char *)data + i * stride;
            uint64_t available = real[2 * i + 1];
            if (available) {
                /* As a 32-bit result the counter wraps (the spec allows
                 * wrap or saturate); the log gets the value as written. */
                uint64_t v = fake_ticks(real[2 * i]);
                if (!wide)
                    v &= 0xffffffffull;
                put_value(at, v, wide);
                log_written[logged] = v;
                log_real[logged++] = real[2 * i];
            }
            /* An unavailable value is left unwritten, as the driver does. */
            if (with_availability)
                put_value(at + elem, available, wide);
        }
        log_values(log_written, log_real, logged);
    }
    free(real);
    return r;
}

/* ---- results copied by the GPU ------------------------------------------ */

/* gpuzones copies timestamps into its own mapped memory with
 * vkCmdCopyQueryPoolResults and reads them there. A GPU copy cannot be
 * rewritten on its way, so a timestamp copy is recorded as the same copy
 * into a staging buffer of ours, then the setting of an event of ours; a
 * thread watching those events (and each call that can show the work
 * complete, copies_land) reads the real results from the staging buffer and
 * writes each fake value and then its availability into the destination's
 * mapping, as the copy would have. */

typedef struct bound_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize offset;
} bound_buffer;

typedef struct mapping {
    VkDeviceMemory memory;
    char *base; /* where offset 0 of the memory would be */
} mapping;

typedef struct copy_watch {
    VkCommandBuffer cb; /* the recording it belongs to ends with the next begin or free */
    VkDevice device;
    device_data *d;
    VkEvent event;
    VkQueryPool pool;
    uint32_t first, count;
    VkBuffer dst;
    VkDeviceSize dst_offset, stride;
    VkQueryResultFlags flags;
    /* The real results, copied there by the GPU: value and availability,
     * 64 bits each, per query. */
    VkBuffer stage;
    VkDeviceMemory stage_memory;
    const uint64_t *staged;
    /* Whether the event may be set and not yet copied: from a submit of cb
     * to the copy. Only those are looked at, so that a look costs what the
     * copies in flight do, not what every recorded one would: the looks
     * delay each wait that shows completion (copies_land), and the host
     * time the layer above reads after it. A copy in a command buffer never
     * submitted itself (a secondary) is always looked at. */
    bool armed, submitted;
} copy_watch;

#define MAX_COPY_OBJECTS 4096
static pthread_mutex_t copy_lock = PTHREAD_MUTEX_INITIALIZER;
static bound_buffer buffers[MAX_COPY_OBJECTS];
static mapping mappings[MAX_COPY_OBJECTS];
static copy_watch watches[MAX_COPY_OBJECTS];
static uint32_t nbuffers, nmappings, nwatches;
static bool poller_started;

static char *destination(VkBuffer buffer, VkDeviceSize offset)
{
    for (uint32_t i = 0; i < nbuffers; i++) {
        if (buffers[i].buffer != buffer)
            continue;
        for (uint32_t j = 0; j < nmappings; j++)
            if (mappings[j].memory == buffers[i].memory)
                return mappings[j].base + buffers[i].offset + offset;
    }
    return NULL;
}

/* The results as the GPU's copy would have written them, with fake values:
 * read from the staging buffer that the GPU filled before it set the event,
 * not with vkGetQueryPoolResults, which on lavapipe waits for the whole
 * queue to drain (the work submitted since, too) and would make every wait
 * that runs this (copies_land) return that much late. */
static void copy_on_host(const copy_watch *w)
{
    uint64_t written[256], logged_real[256];
    char *dst = destination(w->dst, w->dst_offset);
    if (!dst || !w->staged)
        return;
    bool wide = w->flags & VK_QUERY_RESULT_64_BIT;
    bool availability = w->flags & VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;
    size_t elem = wide ? 8 : 4;
    uint32_t logged = 0;
    for (uint32_t i = 0; i < w->count; i++) {
        char *at = dst + i * w->stride;
        uint64_t real = w->staged[2 * i];
        bool available = __atomic_load_n(&w->staged[2 * i + 1], __ATOMIC_ACQUIRE) != 0;
        if (available) {
            uint64_t v = fake_ticks(real);
            if (!wide)
                v &= 0xffffffffull;
            put_value(at, v, wide);
            written[logged] = v;
            logged_real[logged++] = real;
        }
        if (availability) {
            /* the value before the flag: a release store (results are
             * aligned to their size, as the spec requires) */
            if (wide)
                __atomic_store_n((uint64_t *)(void *)(at + elem), available, __ATOMIC_RELEASE);
            else
                __atomic_store_n((uint32_t *)(void *)(at + elem), available, __ATOMIC_RELEASE);
        }
        if (logged == 256) {
            log_values(written, logged_real, logged);
            logged = 0;
        }
    }
    log_values(written, logged_real, logged);
}

/* Under copy_lock: the watch's objects go (the device's own calls, none of
 * them recorded as the app's). */
static void watch_free(copy_watch *w)
{
    w->d->DestroyEvent(w->device, w->event, NULL);
    if (w->stage)
        w->d->DestroyBuffer(w->device, w->stage, NULL);
    if (w->stage_memory)
        w->d->FreeMemory(w->device, w->stage_memory, NULL);
}

/* A host-visible, coherent buffer for count queries' real results. */
static bool stage_create(device_data *d, VkDevice device, uint32_t count, copy_watch *w)
{
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = (VkDeviceSize)count * 16,
                               .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    if (d->CreateBuffer(device, &info, NULL, &w->stage) != VK_SUCCESS)
        return false;
    VkMemoryRequirements req;
    d->GetBufferMemoryRequirements(device, w->stage, &req);
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t t = 0; t < d->memory.memoryTypeCount; t++) {
        if (!(req.memoryTypeBits & (1u << t)) ||
            (d->memory.memoryTypes[t].propertyFlags & want) != want)
            continue;
        VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                      .allocationSize = req.size,
                                      .memoryTypeIndex = t};
        void *map;
        if (d->AllocateMemory(device, &alloc, NULL, &w->stage_memory) != VK_SUCCESS)
            return false;
        if (d->BindBufferMemory(device, w->stage, w->stage_memory, 0) != VK_SUCCESS ||
            d->MapMemory(device, w->stage_memory, 0, VK_WHOLE_SIZE, 0, &map) != VK_SUCCESS)
            return false;
        memset(map, 0, (size_t)count * 16);
        w->staged = map;
        return true;
    }
    return false;
}

/* Under copy_lock. */
static void copy_if_set(copy_watch *w)
{
    if ((w->submitted && !w->armed) || w->d->GetEventStatus(w->device, w->event) != VK_EVENT_SET)
        return;
    /* Reset first: once the results are visible the layer above may run the
     * same commands again, setting the event anew. */
    w->d->ResetEvent(w->device, w->event);
    w->armed = false;
    copy_on_host(w);
}

/* Before each submit: its command buffers' copies may run from now on. */
static void arm_watches(uint32_t ncbs, const VkCommandBuffer *cbs)
{
    pthread_mutex_lock(&copy_lock);
    for (uint32_t i = 0; nwatches && i < ncbs; i++)
        for (uint32_t j = 0; j < nwatches; j++)
            if (watches[j].cb == cbs[i])
                watches[j].armed = watches[j].submitted = true;
    pthread_mutex_unlock(&copy_lock);
}

static void arm_submits(uint32_t count, const VkSubmitInfo *submits)
{
    for (uint32_t i = 0; i < count; i++)
        arm_watches(submits[i].commandBufferCount, submits[i].pCommandBuffers);
}

static void arm_submits2(uint32_t count, const VkSubmitInfo2 *submits)
{
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t j = 0; j < submits[i].commandBufferInfoCount; j++)
            arm_watches(1, &submits[i].pCommandBufferInfos[j].commandBuffer);
}

static void *poller(void *arg)
{
    (void)arg;
    /* From now on the log is written out here, every 500 naps. */
    log_flush();
    for (unsigned naps = 0;;) {
        pthread_mutex_lock(&copy_lock);
        for (uint32_t i = 0; i < nwatches; i++)
            copy_if_set(&watches[i]);
        pthread_mutex_unlock(&copy_lock);
        struct timespec nap = {0, 20000};
        nanosleep(&nap, NULL);
        if (++naps % 500 == 0)
            log_flush();
    }
    return NULL;
}

static VKAPI_ATTR void VKAPI_CALL CmdCopyQueryPoolResults(VkCommandBuffer cb, VkQueryPool pool,
                                                         uint32_t first, uint32_t count,
                                                         VkBuffer dst, VkDeviceSize dst_offset,
                                                         VkDeviceSize stride,
                                                         VkQueryResultFlags flags)
{
    device_data *d = find_device(cb);
    if (!fake.rewrite_copies || !is_timestamp_pool(pool)) {
        d->CmdCopyQueryPoolResults(cb, pool, first, count, dst, dst_offset, stride, flags);
        return;
    }
    VkDevice device = d->handle; /* found through the command buffer's dispatch key */
    VkEventCreateInfo info = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    copy_watch w = {.cb = cb, .device = device, .d = d, .pool = pool, .first = first,
                    .count = count, .dst = dst, .dst_offset = dst_offset, .stride = stride,
                    .flags = flags};
    pthread_mutex_lock(&copy_lock);
    if (nwatches == MAX_COPY_OBJECTS || d->CreateEvent(device, &info, NULL, &w.event) != VK_SUCCESS ||
        !stage_create(d, device, count, &w)) {
        pthread_mutex_unlock(&copy_lock);
        fprintf(stderr, "gzfault: cannot watch another copy: test results would be wrong\n");
        abort();
    }
    watches[nwatches++] = w;
    if (!poller_started) {
        /* The loader unloads layers at vkDestroyInstance; the thread's code
         * must stay. */
        Dl_info self;
        if (dladdr((void *)poller, &self) && self.dli_fname)
            dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        pthread_t t;
        poller_started = pthread_create(&t, NULL, poller, NULL) == 0;
    }
    pthread_mutex_unlock(&copy_lock);
    /* The real values, waited for as the app asked; the host reads them
     * once the event is set. */
    d->CmdCopyQueryPoolResults(cb, pool, first, count, w.stage, 0, 16,
                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT |
                                   (flags & VK_QUERY_RESULT_WAIT_BIT));
    VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    d->CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                          &to_host, 0, NULL, 0, NULL);
    d->CmdSetEvent(cb, w.event, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
}

/* The copies whose events are set, done now. A GPU's copy has landed by
 * the time anything can see the work after it complete (a fence, a
 * semaphore, an idle queue): each way to see that runs this before it
 * answers, so that the host copies keep that promise too. */
static void copies_land(void)
{
    pthread_mutex_lock(&copy_lock);
    for (uint32_t i = 0; poller_started && i < nwatches; i++)
        copy_if_set(&watches[i]);
    pthread_mutex_unlock(&copy_lock);
}

static VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreCounterValue(VkDevice device,
                                                              VkSemaphore semaphore,
                                                              uint64_t *value)
{
    VkResult r = find_device(device)->GetSemaphoreCounterValue(device, semaphore, value);
    copies_land();
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreCounterValueKHR(VkDevice device,
                                                                 VkSemaphore semaphore,
                                                                 uint64_t *value)
{
    VkResult r = find_device(device)->GetSemaphoreCounterValueKHR(device, semaphore, value);
    copies_land();
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL WaitSemaphores(VkDevice device,
                                                    const VkSemaphoreWaitInfo *info,
                                                    uint64_t timeout)
{
    VkResult r = find_device(device)->WaitSemaphores(device, info, timeout);
    copies_land();
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL WaitSemaphoresKHR(VkDevice device,
                                                       const VkSemaphoreWaitInfo *info,
                                                       uint64_t timeout)
{
    VkResult r = find_device(device)->WaitSemaphoresKHR(device, info, timeout);
    copies_land();
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL WaitForFences(VkDevice device, uint32_t count,
                                                   const VkFence *fences, VkBool32 all,
                                                   uint64_t timeout)
{
    VkResult r = find_device(device)->WaitForFences(device, count, fences, all, timeout);
    copies_land();
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL GetFenceStatus(VkDevice device, VkFence fence)
{
    VkResult r = find_device(device)->GetFenceStatus(device, fence);
    copies_land();
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL DeviceWaitIdle(VkDevice device)
{
    VkResult r = find_device(device)->DeviceWaitIdle(device);
    copies_land();
    return r;
}

/* A command buffer recorded again, or freed, will never run its old copies:
 * their watches go (an app that records a copy into a new command buffer
 * every submit would otherwise run out of them within seconds). It is not
 * pending (the spec's rule for both calls), so neither is the event; but
 * its last run may have set the event after the poller's latest look: that
 * copy is done now, or the results it stands for are never written and
 * the app reads whatever the memory held before (values a wrap or two
 * old: clock-wrap36 failed so in three suite runs of five). */
static void forget_watches(VkCommandBuffer cb)
{
    pthread_mutex_lock(&copy_lock);
    for (uint32_t i = 0; i < nwatches; i++) {
        if (watches[i].cb == cb) {
            if (watches[i].d->GetEventStatus(watches[i].device, watches[i].event) == VK_EVENT_SET)
                copy_on_host(&watches[i]);
            watch_free(&watches[i]);
            watches[i--] = watches[--nwatches];
        }
    }
    pthread_mutex_unlock(&copy_lock);
}

static VKAPI_ATTR VkResult VKAPI_CALL BeginCommandBuffer(VkCommandBuffer cb,
                                                        const VkCommandBufferBeginInfo *info)
{
    forget_watches(cb);
    return find_device(cb)->BeginCommandBuffer(cb, info);
}

static VKAPI_ATTR void VKAPI_CALL FreeCommandBuffers(VkDevice device, VkCommandPool pool,
                                                    uint32_t count, const VkCommandBuffer *cbs)
{
    for (uint32_t i = 0; i < count; i++)
        if (cbs[i])
            forget_watches(cbs[i]);
    find_device(device)->FreeCommandBuffers(device, pool, count, cbs);
}

static VKAPI_ATTR VkResult VKAPI_CALL BindBufferMemory(VkDevice device, VkBuffer buffer,
                                                      VkDeviceMemory memory, VkDeviceSize offset)
{
    VkResult r = find_device(device)->BindBufferMemory(device, buffer, memory, offset);
    pthread_mutex_lock(&copy_lock);
    if (r == VK_SUCCESS && nbuffers < MAX_COPY_OBJECTS)
        buffers[nbuffers++] = (bound_buffer){buffer, memory, offset};
    pthread_mutex_unlock(&copy_lock);
    return r;
}

static VKAPI_ATTR void VKAPI_CALL DestroyBuffer(VkDevice device, VkBuffer buffer,
                                               const VkAllocationCallbacks *alloc)
{
    pthread_mutex_lock(&copy_lock);
    for (uint32_t i = 0; i < nbuffers; i++)
        if (buffers[i].buffer == buffer)
            buffers[i--] = buffers[--nbuffers];
    for (uint32_t i = 0; i < nwatches; i++) {
        if (watches[i].dst == buffer) {
            watch_free(&watches[i]);
            watches[i--] = watches[--nwatches];
        }
    }
    pthread_mutex_unlock(&copy_lock);
    find_device(device)->DestroyBuffer(device, buffer, alloc);
}

static VKAPI_ATTR VkResult VKAPI_CALL MapMemory(VkDevice device, VkDeviceMemory memory,
                                               VkDeviceSize offset, VkDeviceSize size,
                                               VkMemoryMapFlags flags, void **data)
{
    VkResult r = find_device(device)->MapMemory(device, memory, offset, size, flags, data);
    pthread_mutex_lock(&copy_lock);
    if (r == VK_SUCCESS && nmappings < MAX_COPY_OBJECTS)
        mappings[nmappings++] = (mapping){memory, (char *)*data - offset};
    pthread_mutex_unlock(&copy_lock);
    return r;
}

static VKAPI_ATTR void VKAPI_CALL UnmapMemory(VkDevice device, VkDeviceMemory memory)
{
    pthread_mutex_lock(&copy_lock);
    for (uint32_t i = 0; i < nmappings; i++)
        if (mappings[i].memory == memory)
            mappings[i--] = mappings[--nmappings];
    pthread_mutex_unlock(&copy_lock);
    find_device(device)->UnmapMemory(device, memory);
}

static VkResult calibrated(PFN_vkGetCalibratedTimestampsEXT next, VkDevice device,
                           uint32_t count, const VkCalibratedTimestampInfoEXT *infos,
                           uint64_t *timestamps, uint64_t *max_deviation)
{
    const char *calib_error = getenv("GZFAULT_CALIB_ERROR");
    if (calib_error && !strcmp(calib_error, "lost"))
        return VK_ERROR_DEVICE_LOST;
    bool raw_only = env_on("GZFAULT_HOST_DOMAIN_RAW");
    VkCalibratedTimestampInfoEXT asked[8];
    if (count > 8)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    for (uint32_t i = 0; i < count; i++) {
        asked[i] = infos[i];
        /* A domain the device did not list is a caller's error: refused,
         * so that a test sees a caller that ignored the list fall back. */
        if (raw_only && infos[i].timeDomain == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT)
            return VK_ERROR_UNKNOWN;
        if (raw_only && infos[i].timeDomain == VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT)
            asked[i].timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
    }
    /* RAW - MONOTONIC from the tightest of a few (mono, raw, mono)
     * brackets; its half width joins the maximum deviation, as a driver
     * that read RAW itself would count its own sampling interval. (One
     * plain pair of reads, preempted in between, once handed up a RAW
     * value 170 us off with a deviation of 1 ns.) */
    int64_t raw_minus_mono = 0;
    uint64_t width = UINT64_MAX;
    for (int k = 0; raw_only && k < 3; k++) {
        struct timespec m1, raw, m2;
        clock_gettime(CLOCK_MONOTONIC, &m1);
        clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
        clock_gettime(CLOCK_MONOTONIC, &m2);
        int64_t a = (int64_t)m1.tv_sec * 1000000000 + m1.tv_nsec;
        int64_t b = (int64_t)m2.tv_sec * 1000000000 + m2.tv_nsec;
        if ((uint64_t)(b - a) < width) {
            width = (uint64_t)(b - a);
            raw_minus_mono = (int64_t)raw.tv_sec * 1000000000 + raw.tv_nsec - (a + (b - a) / 2);
        }
    }
    VkResult r = next(device, count, asked, timestamps, max_deviation);
    if (r != VK_SUCCESS)
        return r;
    for (uint32_t i = 0; i < count; i++)
        if (raw_only && infos[i].timeDomain == VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT)
            timestamps[i] = (uint64_t)((int64_t)timestamps[i] + raw_minus_mono);
    /* The driver read the domains together: the device value is the
     * counter at that real time; host values are the truth already. */
    for (uint32_t i = 0; i < count; i++) {
        if (infos[i].timeDomain == VK_TIME_DOMAIN_DEVICE_EXT) {
            uint64_t real = timestamps[i];
            timestamps[i] = fake_ticks(real);
            log_values(&timestamps[i], &real, 1);
        }
    }
    if (raw_only)
        *max_deviation += (width + 1) / 2;
    if (fake.set_deviation)
        *max_deviation = fake.deviation_ns;
    else if (fake.period > 1)
        /* A maximum deviation includes the longest tick period of the
         * domains sampled (Mesa: sampling interval + that period): the
         * driver counted its own 1 ns tick, the counter handed up ticks
         * every P ns, so a device value is up to one tick old.
         * GZFAULT_CALIB_DEVIATION_NS=1 plays a driver that leaves it out. */
        *max_deviation += (uint64_t)ceilf(fake.period) - 1;
    return r;
}

/* The driver's domains, CLOCK_MONOTONIC left out under
 * GZFAULT_HOST_DOMAIN_RAW (the rest keep their order). */
static VkResult time_domains(VkPhysicalDevice phys, bool khr, uint32_t *count,
                             VkTimeDomainEXT *domains)
{
    instance_data *d = find_instance(phys);
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT next =
        khr ? d->GetPhysicalDeviceCalibrateableTimeDomainsKHR
            : d->GetPhysicalDeviceCalibrateableTimeDomainsEXT;
    if (!next)
        return VK_ERROR_EXTENSION_NOT_PRESENT;
    if (!env_on("GZFAULT_HOST_DOMAIN_RAW"))
        return next(phys, count, domains);
    VkTimeDomainEXT all[16];
    uint32_t n = 16;
    VkResult r = next(phys, &n, all);
    if (r < VK_SUCCESS)
        return r;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++)
        if (all[i] != VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT)
            all[kept++] = all[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT
                              ? VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT
                              : all[i];
    if (!domains) {
        *count = kept;
        return VK_SUCCESS;
    }
    uint32_t out = *count < kept ? *count : kept;
    memcpy(domains, all, out * sizeof *domains);
    *count = out;
    return out < kept ? VK_INCOMPLETE : VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL GetPhysicalDeviceCalibrateableTimeDomainsEXT(
    VkPhysicalDevice phys, uint32_t *count, VkTimeDomainEXT *domains)
{
    return time_domains(phys, false, count, domains);
}

static VKAPI_ATTR VkResult VKAPI_CALL GetPhysicalDeviceCalibrateableTimeDomainsKHR(
    VkPhysicalDevice phys, uint32_t *count, VkTimeDomainEXT *domains)
{
    return time_domains(phys, true, count, domains);
}

static VKAPI_ATTR VkResult VKAPI_CALL GetCalibratedTimestampsEXT(
    VkDevice device, uint32_t count, const VkCalibratedTimestampInfoEXT *infos,
    uint64_t *timestamps, uint64_t *max_deviation)
{
    return calibrated(find_device(device)->GetCalibratedTimestampsEXT, device, count, infos,
                      timestamps, max_deviation);
}

static VKAPI_ATTR VkResult VKAPI_CALL GetCalibratedTimestampsKHR(
    VkDevice device, uint32_t count, const VkCalibratedTimestampInfoEXT *infos,
    uint64_t *timestamps, uint64_t *max_deviation)
{
    return calibrated(find_device(device)->GetCalibratedTimestampsKHR, device, count, infos,
                      timestamps, max_deviation);
}

/* ---- errors from submissions ---------------------------------------- */

/* The error the next vkQueueSubmit* call must return, or VK_SUCCESS to
 * pass it down. Counts every call, the layers' above us included. */
static VkResult submit_fault(void)
{
    static uint64_t calls;
    const char *kind = getenv("GZFAULT_SUBMIT_ERROR");
    uint64_t n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    if (!kind || !*kind)
        return VK_SUCCESS;
    const char *from_s = getenv("GZFAULT_SUBMIT_ERROR_FROM");
    const char *count_s = getenv("GZFAULT_SUBMIT_ERROR_COUNT");
    uint64_t from = from_s ? strtoull(from_s, NULL, 10) : 1;
    uint64_t count = count_s ? strtoull(count_s, NULL, 10) : UINT64_MAX;
    if (n < from || n - from >= count)
        return VK_SUCCESS;
    return !strcmp(kind, "oom") ? VK_ERROR_OUT_OF_DEVICE_MEMORY : VK_ERROR_DEVICE_LOST;
}

/* A queue call on the driver's queue behind queue, one at a time when fake
 * queues share it. */
#define ON_REAL_QUEUE(d, queue, call)                                                             \
    do {                                                                                           \
        if (fq_active()) {                                                                         \
            fq_lock();                                                                             \
            queue = fq_real(queue);                                                                \
        }                                                                                          \
        call;                                                                                      \
        if (fq_active())                                                                           \
            fq_unlock();                                                                           \
    } while (0)

/* GZFAULT_REENTER: what a lower layer's callback into the app may do
 * during a submit (the layers above must not hold a lock across it). */
static void reenter(VkQueue queue)
{
    static int mode = -1;
    static PFN_vkGetDeviceProcAddr top;
    if (mode < 0) {
        mode = env_on("GZFAULT_REENTER");
        void *loader = mode ? dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD) : NULL;
        top = loader ? (PFN_vkGetDeviceProcAddr)dlsym(loader, "vkGetDeviceProcAddr") : NULL;
    }
    device_data *d = top ? find_device(queue) : NULL;
    if (!d)
        return;
    PFN_vkSetDebugUtilsObjectNameEXT set_name =
        (PFN_vkSetDebugUtilsObjectNameEXT)top(d->handle, "vkSetDebugUtilsObjectNameEXT");
    PFN_vkQueueBeginDebugUtilsLabelEXT begin =
        (PFN_vkQueueBeginDebugUtilsLabelEXT)top(d->handle, "vkQueueBeginDebugUtilsLabelEXT");
    PFN_vkQueueEndDebugUtilsLabelEXT end =
        (PFN_vkQueueEndDebugUtilsLabelEXT)top(d->handle, "vkQueueEndDebugUtilsLabelEXT");
    VkDebugUtilsObjectNameInfoEXT name = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
                                          .objectType = VK_OBJECT_TYPE_QUEUE,
                                          .objectHandle = (uint64_t)(uintptr_t)queue,
                                          .pObjectName = "renamed in a callback"};
    VkDebugUtilsLabelEXT label = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
                                  .pLabelName = "callback label"};
    if (set_name)
        set_name(d->handle, &name);
    if (begin && end) {
        begin(queue, &label);
        end(queue);
    }
}

static VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue queue, uint32_t count,
                                                  const VkSubmitInfo *submits, VkFence fence)
{
    reenter(queue);
    VkResult r = submit_fault();
    device_data *d = find_device(queue);
    if (r == VK_SUCCESS)
        arm_submits(count, submits);
    if (r == VK_SUCCESS)
        ON_REAL_QUEUE(d, queue, r = d->QueueSubmit(queue, count, submits, fence));
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2(VkQueue queue, uint32_t count,
                                                   const VkSubmitInfo2 *submits, VkFence fence)
{
    reenter(queue);
    VkResult r = submit_fault();
    device_data *d = find_device(queue);
    if (r == VK_SUCCESS)
        arm_submits2(count, submits);
    if (r == VK_SUCCESS)
        ON_REAL_QUEUE(d, queue, r = d->QueueSubmit2(queue, count, submits, fence));
    return r;
}

/* ---- fake queues ------------------------------------------------------- */

static VkQueue fake_or_real(device_data *d, VkDevice device, uint32_t family, uint32_t index)
{
    VkQueue first = VK_NULL_HANDLE;
    d->GetDeviceQueue(device, 0, 0, &first);
    return fq_get_queue(device, family, index, first);
}

static VKAPI_ATTR void VKAPI_CALL GetDeviceQueue(VkDevice device, uint32_t family, uint32_t index,
                                                 VkQueue *queue)
{
    device_data *d = find_device(device);
    VkQueue played = fake_or_real(d, device, family, index);
    if (played)
        *queue = played;
    else
        d->GetDeviceQueue(device, family, index, queue);
}

static VKAPI_ATTR void VKAPI_CALL GetDeviceQueue2(VkDevice device, const VkDeviceQueueInfo2 *info,
                                                  VkQueue *queue)
{
    device_data *d = find_device(device);
    VkQueue played = fake_or_real(d, device, info->queueFamilyIndex, info->queueIndex);
    if (played)
        *queue = played;
    else
        d->GetDeviceQueue2(device, info, queue);
}

static VKAPI_ATTR VkResult VKAPI_CALL CreateCommandPool(VkDevice device,
                                                       const VkCommandPoolCreateInfo *info,
                                                       const VkAllocationCallbacks *alloc,
                                                       VkCommandPool *pool)
{
    VkCommandPoolCreateInfo real = *info;
    real.queueFamilyIndex = fq_real_family(device, info->queueFamilyIndex);
    return find_device(device)->CreateCommandPool(device, &real, alloc, pool);
}

static VKAPI_ATTR VkResult VKAPI_CALL QueueWaitIdle(VkQueue queue)
{
    device_data *d = find_device(queue);
    VkResult r;
    ON_REAL_QUEUE(d, queue, r = d->QueueWaitIdle(queue));
    copies_land();
    return r;
}

static VKAPI_ATTR void VKAPI_CALL QueueBeginDebugUtilsLabelEXT(VkQueue queue,
                                                              const VkDebugUtilsLabelEXT *label)
{
    device_data *d = find_device(queue);
    ON_REAL_QUEUE(d, queue, d->QueueBeginDebugUtilsLabelEXT(queue, label));
}

static VKAPI_ATTR void VKAPI_CALL QueueEndDebugUtilsLabelEXT(VkQueue queue)
{
    device_data *d = find_device(queue);
    ON_REAL_QUEUE(d, queue, d->QueueEndDebugUtilsLabelEXT(queue));
}

static VKAPI_ATTR void VKAPI_CALL QueueInsertDebugUtilsLabelEXT(VkQueue queue,
                                                               const VkDebugUtilsLabelEXT *label)
{
    device_data *d = find_device(queue);
    ON_REAL_QUEUE(d, queue, d->QueueInsertDebugUtilsLabelEXT(queue, label));
}

static VKAPI_ATTR VkResult VKAPI_CALL
SetDebugUtilsObjectNameEXT(VkDevice device, const VkDebugUtilsObjectNameInfoEXT *info)
{
    VkDebugUtilsObjectNameInfoEXT real = *info;
    if (info->objectType == VK_OBJECT_TYPE_QUEUE)
        real.objectHandle = (uint64_t)(uintptr_t)fq_real((VkQueue)(uintptr_t)info->objectHandle);
    return find_device(device)->SetDebugUtilsObjectNameEXT(device, &real);
}

static VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2KHR(VkQueue queue, uint32_t count,
                                                      const VkSubmitInfo2 *submits, VkFence fence)
{
    VkResult r = submit_fault();
    if (r != VK_SUCCESS)
        return r;
    arm_submits2(count, submits);
    return find_device(queue)->QueueSubmit2KHR(queue, count, submits, fence);
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
    if (!strcmp(name, "vkGetPhysicalDeviceProperties"))
        return (PFN_vkVoidFunction)GetPhysicalDeviceProperties;
    if (!strcmp(name, "vkGetPhysicalDeviceProperties2"))
        return (PFN_vkVoidFunction)GetPhysicalDeviceProperties2;
    if (!strcmp(name, "vkGetPhysicalDeviceProperties2KHR"))
        return (PFN_vkVoidFunction)GetPhysicalDeviceProperties2KHR;
    if (!strcmp(name, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"))
        return (PFN_vkVoidFunction)GetPhysicalDeviceCalibrateableTimeDomainsEXT;
    if (!strcmp(name, "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR"))
        return (PFN_vkVoidFunction)GetPhysicalDeviceCalibrateableTimeDomainsKHR;
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

/* The device functions that hand up timestamps, or track what does. */
static PFN_vkVoidFunction own_device(const char *name)
{
    if (!strcmp(name, "vkQueueSubmit"))
        return (PFN_vkVoidFunction)QueueSubmit;
    if (!strcmp(name, "vkQueueSubmit2"))
        return (PFN_vkVoidFunction)QueueSubmit2;
    if (!strcmp(name, "vkQueueSubmit2KHR"))
        return (PFN_vkVoidFunction)QueueSubmit2KHR;
    if (!strcmp(name, "vkCreateQueryPool"))
        return (PFN_vkVoidFunction)CreateQueryPool;
    if (!strcmp(name, "vkDestroyQueryPool"))
        return (PFN_vkVoidFunction)DestroyQueryPool;
    if (!strcmp(name, "vkGetQueryPoolResults"))
        return (PFN_vkVoidFunction)GetQueryPoolResults;
    if (!strcmp(name, "vkGetCalibratedTimestampsEXT"))
        return (PFN_vkVoidFunction)GetCalibratedTimestampsEXT;
    if (!strcmp(name, "vkGetCalibratedTimestampsKHR"))
        return (PFN_vkVoidFunction)GetCalibratedTimestampsKHR;
    if (!strcmp(name, "vkCmdCopyQueryPoolResults"))
        return (PFN_vkVoidFunction)CmdCopyQueryPoolResults;
    if (!strcmp(name, "vkBindBufferMemory"))
        return (PFN_vkVoidFunction)BindBufferMemory;
    if (!strcmp(name, "vkDestroyBuffer"))
        return (PFN_vkVoidFunction)DestroyBuffer;
    if (!strcmp(name, "vkBeginCommandBuffer"))
        return (PFN_vkVoidFunction)BeginCommandBuffer;
    if (!strcmp(name, "vkFreeCommandBuffers"))
        return (PFN_vkVoidFunction)FreeCommandBuffers;
    if (!strcmp(name, "vkMapMemory"))
        return (PFN_vkVoidFunction)MapMemory;
    if (!strcmp(name, "vkQueueWaitIdle"))
        return (PFN_vkVoidFunction)QueueWaitIdle;
    static const struct {
        const char *name;
        PFN_vkVoidFunction fn;
    } completion_fns[] = {
        {"vkGetSemaphoreCounterValue", (PFN_vkVoidFunction)GetSemaphoreCounterValue},
        {"vkGetSemaphoreCounterValueKHR", (PFN_vkVoidFunction)GetSemaphoreCounterValueKHR},
        {"vkWaitSemaphores", (PFN_vkVoidFunction)WaitSemaphores},
        {"vkWaitSemaphoresKHR", (PFN_vkVoidFunction)WaitSemaphoresKHR},
        {"vkWaitForFences", (PFN_vkVoidFunction)WaitForFences},
        {"vkGetFenceStatus", (PFN_vkVoidFunction)GetFenceStatus},
        {"vkDeviceWaitIdle", (PFN_vkVoidFunction)DeviceWaitIdle},
    };
    for (size_t i = 0; i < sizeof completion_fns / sizeof completion_fns[0]; i++)
        if (!strcmp(name, completion_fns[i].name))
            return completion_fns[i].fn;
    if (!strcmp(name, "vkUnmapMemory"))
        return (PFN_vkVoidFunction)UnmapMemory;
    if (!fq_active())
        return NULL;
    static const struct {
        const char *name;
        PFN_vkVoidFunction fn;
    } queue_fns[] = {
#define F(n) {"vk" #n, (PFN_vkVoidFunction)n}
        F(GetDeviceQueue), F(GetDeviceQueue2), F(CreateCommandPool), F(QueueWaitIdle),
        F(QueueBeginDebugUtilsLabelEXT), F(QueueEndDebugUtilsLabelEXT),
        F(QueueInsertDebugUtilsLabelEXT), F(SetDebugUtilsObjectNameEXT),
#undef F
    };
    for (size_t i = 0; i < sizeof queue_fns / sizeof queue_fns[0]; i++)
        if (!strcmp(name, queue_fns[i].name))
            return queue_fns[i].fn;
    return NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char *name)
{
    if (!strcmp(name, "vkGetDeviceProcAddr") || !strcmp(name, "vkDestroyDevice"))
        return own(name);
    device_data *d = device ? find_device(device) : NULL;
    if (!d)
        return NULL;
    PFN_vkVoidFunction next = d->next_gdpa(device, name);
    /* Only what the device really has (an extension not enabled stays
     * NULL), and only wrapped where there is a next to call. */
    PFN_vkVoidFunction f = next ? own_device(name) : NULL;
    return f ? f : next;
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
