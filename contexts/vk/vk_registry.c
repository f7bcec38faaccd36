/* The queues the layer times, found by their VkQueue handle from anywhere
 * in the process. Dispatchable handles are the same pointers for the app
 * and the layer, so an explicit context (vk_explicit.c) created for a
 * queue the layer already times puts its zones on that queue's track and
 * shares its clock model: one timeline, one calibration per queue. */
#include "gz_vk_internal.h"

#define MAX_ENTRIES (4 * GZ_VK_MAX_QUEUES)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gz_vk_queue *entries[MAX_ENTRIES];
static uint32_t count;

void gz_vk_registry_add(gz_vk_queue *q)
{
    pthread_mutex_lock(&lock);
    if (count < MAX_ENTRIES)
        entries[count++] = q;
    pthread_mutex_unlock(&lock);
}

void gz_vk_registry_remove(gz_vk_queue *q)
{
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < count; i++) {
        if (entries[i] == q) {
            entries[i] = entries[--count];
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

bool gz_vk_queue_find(VkQueue handle, gz_vk_queue_share *out)
{
    bool found = false;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < count && !found; i++) {
        const gz_vk_queue *q = entries[i];
        if (q->handle != handle || !q->track || gz_vk_device_lost(q->dev))
            continue;
        *out = (gz_vk_queue_share){.track = q->track,
                                   .valid_bits = q->valid_bits,
                                   .host_query_reset = q->dev->info.host_query_reset};
        found = true;
    }
    pthread_mutex_unlock(&lock);
    return found;
}
