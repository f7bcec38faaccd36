/* Queue families and queues that lavapipe does not have, so that the tests
 * see what real drivers offer (part of the fault layer):
 *
 *   GZFAULT_FAMILIES=transfer,transfer-notime,...
 *       families appended after the real ones, one queue each:
 *       "transfer" (TRANSFER only, the first real family's timestamp bits)
 *       and "transfer-notime" (TRANSFER only, timestampValidBits 0)
 *   GZFAULT_EXTRA_QUEUES=N
 *       the first family offers N more queues
 *
 * Every fake queue is the driver's first queue underneath: a dispatchable
 * object of ours (the loader's dispatch pointer set through the device's
 * loader-data callback) that the queue calls of this layer translate, one
 * call at a time. Command pools of fake families are made in the first
 * family. The layers above (gpuzones, validation when it sits between)
 * see and check the fake families and queues as real. */
#include "fake_queues.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FAKE_FAMILIES 4
#define MAX_FAKE_QUEUES 16

typedef enum fake_kind { FAKE_TRANSFER, FAKE_TRANSFER_NOTIME } fake_kind;

static struct {
    bool active;
    fake_kind families[MAX_FAKE_FAMILIES];
    uint32_t nfamilies;
    uint32_t extra_queues; /* in the first family */
} cfg;

/* A fake queue: the loader's dispatch pointer comes first, as in every
 * dispatchable object. */
typedef struct fake_queue {
    void *loader_data;
    VkDevice device;
    VkQueue real;
    uint32_t family, index;
} fake_queue;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static fake_queue *queues[MAX_FAKE_QUEUES];
static struct {
    VkDevice device;
    uint32_t real_families;
    uint32_t real_first_queues; /* queues of the first family the driver has */
    PFN_vkSetDeviceLoaderData set_loader_data;
} devices[MAX_FAKE_QUEUES];

void fq_init(void)
{
    const char *f = getenv("GZFAULT_FAMILIES");
    for (const char *p = f; p && *p && cfg.nfamilies < MAX_FAKE_FAMILIES;) {
        size_t n = strcspn(p, ",");
        if (n == 8 && !strncmp(p, "transfer", n))
            cfg.families[cfg.nfamilies++] = FAKE_TRANSFER;
        else if (n == 15 && !strncmp(p, "transfer-notime", n))
            cfg.families[cfg.nfamilies++] = FAKE_TRANSFER_NOTIME;
        p += n + (p[n] == ',');
    }
    const char *e = getenv("GZFAULT_EXTRA_QUEUES");
    cfg.extra_queues = e && *e ? (uint32_t)strtoul(e, NULL, 10) : 0;
    cfg.active = cfg.nfamilies || cfg.extra_queues;
}

bool fq_active(void)
{
    return cfg.active;
}

static VkQueueFamilyProperties fake_props(fake_kind k, const VkQueueFamilyProperties *first)
{
    return (VkQueueFamilyProperties){
        .queueFlags = VK_QUEUE_TRANSFER_BIT,
        .queueCount = 1,
        .timestampValidBits = k == FAKE_TRANSFER ? first->timestampValidBits : 0,
        .minImageTransferGranularity = {1, 1, 1},
    };
}

/* The real families (at least the first). */
static VkQueueFamilyProperties *real_families(PFN_vkGetPhysicalDeviceQueueFamilyProperties real,
                                              VkPhysicalDevice phys, uint32_t *n)
{
    real(phys, n, NULL);
    VkQueueFamilyProperties *all = calloc(*n ? *n : 1, sizeof *all);
    if (all)
        real(phys, n, all);
    return all;
}

void fq_families(PFN_vkGetPhysicalDeviceQueueFamilyProperties real, VkPhysicalDevice phys,
                 uint32_t *count, VkQueueFamilyProperties *props)
{
    uint32_t n = 0;
    VkQueueFamilyProperties *all = real_families(real, phys, &n);
    if (!all || !n) {
        free(all);
        *count = 0;
        return;
    }
    all[0].queueCount += cfg.extra_queues;
    uint32_t total = n + cfg.nfamilies;
    if (!props) {
        *count = total;
        free(all);
        return;
    }
    uint32_t k = 0;
    for (; k < *count && k < total; k++)
        props[k] = k < n ? all[k] : fake_props(cfg.families[k - n], &all[0]);
    *count = k;
    free(all);
}

void fq_families2(PFN_vkGetPhysicalDeviceQueueFamilyProperties2 real, VkPhysicalDevice phys,
                  uint32_t *count, VkQueueFamilyProperties2 *props)
{
    uint32_t n = 0;
    real(phys, &n, NULL);
    uint32_t total = n + cfg.nfamilies;
    if (!props || !n) {
        *count = props ? 0 : total;
        return;
    }
    /* The real ones in place (their pNext chains filled by the driver). */
    uint32_t cap = *count;
    uint32_t got = cap < n ? cap : n;
    real(phys, &got, props);
    if (got)
        props[0].queueFamilyProperties.queueCount += cfg.extra_queues;
    uint32_t k = got;
    for (; k < cap && k < total && got == n; k++)
        props[k].queueFamilyProperties = fake_props(cfg.families[k - n],
                                                    &props[0].queueFamilyProperties);
    *count = k;
}

void fq_device_info(PFN_vkGetPhysicalDeviceQueueFamilyProperties real, VkPhysicalDevice phys,
                    const VkDeviceCreateInfo *info, VkDeviceCreateInfo *out,
                    VkDeviceQueueCreateInfo *storage)
{
    uint32_t n = 0;
    VkQueueFamilyProperties *all = real_families(real, phys, &n);
    *out = *info;
    uint32_t k = 0;
    for (uint32_t i = 0; i < info->queueCreateInfoCount; i++) {
        VkDeviceQueueCreateInfo q = info->pQueueCreateInfos[i];
        if (q.queueFamilyIndex >= n)
            continue; /* a fake family: played on the first family's queue */
        if (all && q.queueCount > all[q.queueFamilyIndex].queueCount)
            q.queueCount = all[q.queueFamilyIndex].queueCount;
        storage[k++] = q;
    }
    /* The first family's first queue plays every fake one: make sure the
     * driver has it. */
    bool first = false;
    for (uint32_t i = 0; i < k; i++)
        first |= storage[i].queueFamilyIndex == 0;
    static const float priority = 1.0f;
    if (!first)
        storage[k++] = (VkDeviceQueueCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                                 .queueFamilyIndex = 0,
                                                 .queueCount = 1,
                                                 .pQueuePriorities = &priority};
    out->queueCreateInfoCount = k;
    out->pQueueCreateInfos = storage;
    free(all);
}

void fq_device_created(VkDevice device, VkPhysicalDevice phys, const VkDeviceCreateInfo *info,
                       PFN_vkGetPhysicalDeviceQueueFamilyProperties real,
                       PFN_vkSetDeviceLoaderData set_loader_data)
{
    (void)info;
    uint32_t n = 0;
    VkQueueFamilyProperties *all = real_families(real, phys, &n);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_FAKE_QUEUES; i++) {
        if (!devices[i].device) {
            devices[i].device = device;
            devices[i].real_families = n;
            devices[i].real_first_queues = all && n ? all[0].queueCount : 1;
            devices[i].set_loader_data = set_loader_data;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    free(all);
}

void fq_device_destroyed(VkDevice device)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_FAKE_QUEUES; i++) {
        if (devices[i].device == device)
            devices[i].device = VK_NULL_HANDLE;
        if (queues[i] && queues[i]->device == device) {
            free(queues[i]);
            queues[i] = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
}

static int device_slot(VkDevice device)
{
    for (int i = 0; i < MAX_FAKE_QUEUES; i++)
        if (devices[i].device == device)
            return i;
    return -1;
}

VkQueue fq_get_queue(VkDevice device, uint32_t family, uint32_t index, VkQueue real_first)
{
    pthread_mutex_lock(&lock);
    int d = device_slot(device);
    bool fake = d >= 0 && (family >= devices[d].real_families ||
                           (family == 0 && index >= devices[d].real_first_queues));
    VkQueue out = VK_NULL_HANDLE;
    for (int i = 0; fake && i < MAX_FAKE_QUEUES && !out; i++)
        if (queues[i] && queues[i]->device == device && queues[i]->family == family &&
            queues[i]->index == index)
            out = (VkQueue)queues[i];
    for (int i = 0; fake && !out && i < MAX_FAKE_QUEUES; i++) {
        if (queues[i])
            continue;
        fake_queue *q = calloc(1, sizeof *q);
        if (!q)
            break;
        *q = (fake_queue){.device = device, .real = real_first, .family = family, .index = index};
        if (devices[d].set_loader_data(device, q) != VK_SUCCESS) {
            free(q);
            break;
        }
        queues[i] = q;
        out = (VkQueue)q;
    }
    pthread_mutex_unlock(&lock);
    return out;
}

uint32_t fq_real_family(VkDevice device, uint32_t family)
{
    pthread_mutex_lock(&lock);
    int d = device_slot(device);
    uint32_t real = d >= 0 && family >= devices[d].real_families ? 0 : family;
    pthread_mutex_unlock(&lock);
    return real;
}

VkQueue fq_real(VkQueue queue)
{
    pthread_mutex_lock(&lock);
    VkQueue real = queue;
    for (int i = 0; i < MAX_FAKE_QUEUES; i++)
        if (queues[i] && (VkQueue)queues[i] == queue)
            real = queues[i]->real;
    pthread_mutex_unlock(&lock);
    return real;
}

void fq_lock(void)
{
    pthread_mutex_lock(&queue_lock);
}

void fq_unlock(void)
{
    pthread_mutex_unlock(&queue_lock);
}
