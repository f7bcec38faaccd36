/* gz-fault-selftest: the clock-fault layer alone on the driver (no gpuzones),
 * through the paths gpuzones does not take, so that the clock tests can
 * trust it: 32- and 64-bit results, availability, odd strides, VK_NOT_READY
 * with a query never written, the reported period and valid bits, and the
 * DEVICE domain of calibrated timestamps; every value checked against the
 * log and against the fake counter recomputed from the real time.
 *
 *   gz-fault-selftest <dir of VkLayer_gpuzones_clockfault.json>
 *
 * It sets the GZFAULT_ variables itself, before the layer is loaded. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#define BITS 36
#define MASK ((1ull << BITS) - 1)
#define PERIOD 0.5f
#define SENTINEL 0x5a5a5a5a5a5a5a5aull

static int failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL: line %d: ", __LINE__);                                                  \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define VK(expr)                                                                                   \
    do {                                                                                           \
        VkResult r_ = (expr);                                                                      \
        if (r_ != VK_SUCCESS) {                                                                    \
            printf("FAIL: line %d: %s returned %d\n", __LINE__, #expr, (int)r_);                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* The log: values handed up and the real ns they stand for. */
static struct {
    uint64_t written, real;
} logged[4096];
static size_t nlogged;

static void read_log(const char *path)
{
    FILE *f = fopen(path, "r");
    nlogged = 0;
    if (!f)
        return;
    while (nlogged < 4096 &&
           fscanf(f, "%" SCNu64 " %" SCNu64, &logged[nlogged].written, &logged[nlogged].real) == 2)
        nlogged++;
    fclose(f);
}

/* The real time the log gives for a value, 0 if it is not there. */
static uint64_t real_of(uint64_t written)
{
    for (size_t i = nlogged; i-- > 0;)
        if (logged[i].written == written)
            return logged[i].real;
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gz-fault-selftest <fault layer manifest dir>\n");
        return 2;
    }
    char log_path[] = "/tmp/gz-fault-selftest-XXXXXX";
    int fd = mkstemp(log_path);
    if (fd < 0)
        return 2;
    close(fd);
    /* 2^36 ticks of 0.5 ns: 34 s.  Start: 2^37 - 4e6, which masked to 36
     * bits is 2 ms of ticks before the wrap: the values read a little
     * later have wrapped, and are above 2^36 if the mask is not applied. */
    setenv("VK_ADD_LAYER_PATH", argv[1], 1);
    setenv("VK_ICD_FILENAMES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json", 0);
    setenv("GZFAULT_VALID_BITS", "36", 1);
    setenv("GZFAULT_PERIOD_NS", "0.5", 1);
    setenv("GZFAULT_START_TICKS", "137434953472", 1); /* 2^37 - 4e6 */
    setenv("GZFAULT_CALIB_DEVIATION_NS", "777", 1);
    setenv("GZFAULT_LOG", log_path, 1);
    uint64_t before_load = now_ns();

    const char *layer = "VK_LAYER_GPUZONES_clockfault";
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app,
                                .enabledLayerCount = 1,
                                .ppEnabledLayerNames = &layer};
    VkInstance instance;
    VK(vkCreateInstance(&ici, NULL, &instance));
    uint32_t n = 1;
    VkPhysicalDevice phys;
    VkResult er = vkEnumeratePhysicalDevices(instance, &n, &phys);
    if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || n == 0) {
        printf("FAIL: no physical device\n");
        return 1;
    }

    /* What is reported. */
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(phys, &props);
    EXPECT(props.limits.timestampPeriod == PERIOD, "timestampPeriod %g", props.limits.timestampPeriod);
    VkPhysicalDeviceProperties2 props2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    vkGetPhysicalDeviceProperties2(phys, &props2);
    EXPECT(props2.properties.limits.timestampPeriod == PERIOD, "Properties2 timestampPeriod %g",
           props2.properties.limits.timestampPeriod);
    uint32_t nfam = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, NULL);
    VkQueueFamilyProperties fams[8];
    nfam = nfam > 8 ? 8 : nfam;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, fams);
    for (uint32_t i = 0; i < nfam; i++)
        EXPECT(fams[i].timestampValidBits == BITS, "family %u valid bits %u", i,
               fams[i].timestampValidBits);

    /* A device with calibrated timestamps when the driver has them. */
    uint32_t next = 0;
    vkEnumerateDeviceExtensionProperties(phys, NULL, &next, NULL);
    VkExtensionProperties *exts = calloc(next ? next : 1, sizeof *exts);
    vkEnumerateDeviceExtensionProperties(phys, NULL, &next, exts);
    bool calibrated = false;
    for (uint32_t i = 0; i < next; i++)
        calibrated |= !strcmp(exts[i].extensionName, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
    free(exts);
    const char *ext = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
    float prio = 1;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = 0,
                                   .queueCount = 1,
                                   .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = calibrated ? 1 : 0,
                              .ppEnabledExtensionNames = &ext};
    VkDevice device;
    VK(vkCreateDevice(phys, &dci, NULL, &device));
    VkQueue queue;
    vkGetDeviceQueue(device, 0, 0, &queue);

    /* Four timestamp queries, the last one never written. */
    VkQueryPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                 .queryCount = 4};
    VkQueryPool pool;
    VK(vkCreateQueryPool(device, &pci, NULL, &pool));
    VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    VkCommandPool cpool;
    VK(vkCreateCommandPool(device, &cpci, NULL, &cpool));
    VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                        .commandPool = cpool,
                                        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                        .commandBufferCount = 1};
    VkCommandBuffer cb;
    VK(vkAllocateCommandBuffers(device, &cbai, &cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK(vkBeginCommandBuffer(cb, &bi));
    vkCmdResetQueryPool(cb, pool, 0, 4);
    for (uint32_t q = 0; q < 3; q++)
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, q);
    VK(vkEndCommandBuffer(cb));
    uint64_t submit_ns = now_ns();
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cb};
    VK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
    VK(vkQueueWaitIdle(queue));
    uint64_t done_ns = now_ns();

    /* 64-bit with availability, stride 24: the third word is ours. */
    uint64_t r64[4][3];
    for (int i = 0; i < 4; i++)
        r64[i][0] = r64[i][1] = r64[i][2] = SENTINEL;
    VkResult r = vkGetQueryPoolResults(device, pool, 0, 4, sizeof r64, r64, 24,
                                       VK_QUERY_RESULT_64_BIT |
                                           VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    EXPECT(r == VK_NOT_READY, "64-bit, availability: %d, wanted VK_NOT_READY", (int)r);
    for (int i = 0; i < 3; i++) {
        EXPECT(r64[i][1] == 1, "query %d: availability %" PRIu64, i, r64[i][1]);
        EXPECT(r64[i][0] <= MASK, "query %d: %" PRIu64 " has more than %d bits", i, r64[i][0], BITS);
    }
    EXPECT(r64[3][1] == 0, "query 3 (never written): availability %" PRIu64, r64[3][1]);
    EXPECT(r64[3][0] == SENTINEL, "query 3 (never written): its value was written");
    for (int i = 0; i < 4; i++)
        EXPECT(r64[i][2] == SENTINEL, "stride: word 3 of query %d was written", i);

    /* 32-bit, no availability, all available: the low 32 bits. */
    uint32_t r32[3] = {0};
    r = vkGetQueryPoolResults(device, pool, 0, 3, sizeof r32, r32, 4, 0);
    EXPECT(r == VK_SUCCESS, "32-bit: %d", (int)r);
    for (int i = 0; i < 3; i++)
        EXPECT(r32[i] == (uint32_t)r64[i][0], "query %d: 32-bit %" PRIu32 ", 64-bit %" PRIu64, i,
               r32[i], r64[i][0]);

    /* 32-bit with availability, stride 12, the unwritten query included. */
    uint32_t r32a[4][3];
    memset(r32a, 0x5a, sizeof r32a);
    r = vkGetQueryPoolResults(device, pool, 0, 4, sizeof r32a, r32a, 12,
                              VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    EXPECT(r == VK_NOT_READY, "32-bit, availability: %d", (int)r);
    for (int i = 0; i < 3; i++)
        EXPECT(r32a[i][0] == (uint32_t)r64[i][0] && r32a[i][1] == 1,
               "query %d: 32-bit %" PRIu32 " availability %" PRIu32, i, r32a[i][0], r32a[i][1]);
    EXPECT(r32a[3][0] == 0x5a5a5a5au && r32a[3][1] == 0,
           "query 3: value %#" PRIx32 " availability %" PRIu32, r32a[3][0], r32a[3][1]);

    /* 64-bit without availability: VK_NOT_READY and the unwritten one
     * left alone. */
    uint64_t r64n[4] = {SENTINEL, SENTINEL, SENTINEL, SENTINEL};
    r = vkGetQueryPoolResults(device, pool, 0, 4, sizeof r64n, r64n, 8, VK_QUERY_RESULT_64_BIT);
    EXPECT(r == VK_NOT_READY, "64-bit, no availability: %d", (int)r);
    for (int i = 0; i < 3; i++)
        EXPECT(r64n[i] == r64[i][0], "query %d: %" PRIu64 " then %" PRIu64, i, r64n[i], r64[i][0]);
    EXPECT(r64n[3] == SENTINEL, "query 3 written without availability");

    /* Calibrated: the device value is the counter, the host one real. */
    uint64_t cal[2] = {0}, deviation = 0, cal_before = 0, cal_after = 0;
    if (calibrated) {
        PFN_vkGetCalibratedTimestampsEXT get = (PFN_vkGetCalibratedTimestampsEXT)vkGetDeviceProcAddr(
            device, "vkGetCalibratedTimestampsEXT");
        VkCalibratedTimestampInfoEXT infos[2] = {
            {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
             .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT},
            {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
             .timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT},
        };
        cal_before = now_ns();
        VK(get(device, 2, infos, cal, &deviation));
        cal_after = now_ns();
        EXPECT(deviation == 777, "maxDeviation %" PRIu64 ", wanted 777", deviation);
        EXPECT(cal[0] <= MASK, "calibrated device value has more than %d bits", BITS);
        EXPECT(cal[1] >= cal_before && cal[1] <= cal_after,
               "host value %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]: it must pass unchanged",
               cal[1], cal_before, cal_after);
    } else {
        printf("note: the driver has no VK_EXT_calibrated_timestamps; not checked\n");
    }

    vkDestroyCommandPool(device, cpool, NULL);
    vkDestroyQueryPool(device, pool, NULL);
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);

    /* Every value handed up is in the log with its real time, and is the
     * counter recomputed from it: start S = 2^36 - 4e6 at t0 (between
     * before_load and the first value), one tick per 0.5 ns, mod 2^36. */
    read_log(log_path);
    unlink(log_path);
    EXPECT(nlogged == 3 + 3 + 3 + 3 + (calibrated ? 1 : 0), "%zu values logged", nlogged);
    uint64_t real[3];
    for (int i = 0; i < 3; i++) {
        real[i] = real_of(r64[i][0]);
        EXPECT(real[i] >= submit_ns && real[i] <= done_ns,
               "query %d: real time %" PRIu64 " outside its submission [%" PRIu64 ", %" PRIu64 "]",
               i, real[i], submit_ns, done_ns);
        EXPECT(real_of(r32[i]) == real[i], "query %d: 32-bit value not logged as written", i);
        if (i > 0) {
            /* Ticks between two values: exactly the real gap / period. */
            uint64_t ticks = (r64[i][0] - r64[i - 1][0]) & MASK;
            int64_t want = llround((double)(int64_t)(real[i] - real[i - 1]) / PERIOD);
            EXPECT(llabs((long long)ticks - want) <= 1, "query %d: %" PRIu64 " ticks after the last, "
                   "%" PRId64 " wanted", i, ticks, want);
        }
    }
    /* The counter started 4e6 ticks (2 ms) before its wrap at t0, and
     * t0 < submit: every value read after t0 + 2 ms has wrapped. */
    uint64_t t0 = real[0] - (((r64[0][0] + 4000000ull) & MASK) * 1ull) / 2;
    EXPECT(t0 >= before_load && t0 <= submit_ns,
           "the counter does not start 4e6 ticks before its wrap at load: t0 would be %" PRIu64
           ", loaded after %" PRIu64, t0, before_load);
    if (calibrated) {
        uint64_t creal = real_of(cal[0]);
        EXPECT(creal >= cal_before && creal <= cal_after,
               "calibrated device value's real time %" PRIu64 " outside the call", creal);
        uint64_t ticks = (cal[0] - r64[2][0]) & MASK;
        int64_t want = llround((double)(int64_t)(creal - real[2]) / PERIOD);
        EXPECT(llabs((long long)ticks - want) <= 1,
               "calibrated device value is %" PRIu64 " ticks after query 2, %" PRId64 " wanted",
               ticks, want);
    }
    printf("%s: %zu values logged, %d failures\n", failures ? "FAILED" : "ok", nlogged, failures);
    return failures ? 1 : 0;
}
