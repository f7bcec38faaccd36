/* The layer's records of the app's objects: the maps from handles to them,
 * and the instance and device records, which come from a small reserve
 * when memory is short. */
#include <stdlib.h>
#include <string.h>

#include "gz_layer.h"

gz_handle_map gz_layer_instances;
gz_handle_map gz_layer_devices;
gz_handle_map gz_layer_queues;
gz_handle_map gz_layer_pools;

static void init_maps(void)
{
    gz_handle_map_init(&gz_layer_instances);
    gz_handle_map_init(&gz_layer_devices);
    gz_handle_map_init(&gz_layer_queues);
    gz_handle_map_init(&gz_layer_pools);
}

void gz_layer_records_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_maps);
}

/* Instance and device records kept aside for when malloc fails: without
 * its record a created object would have no dispatch, and every later
 * call through the loader would fail. */
#define RESERVE 4
static layer_instance reserve_instances[RESERVE];
static layer_device reserve_devices[RESERVE];
static bool reserve_instance_used[RESERVE], reserve_device_used[RESERVE]; /* atomic */

static void *from_reserve(void *base, size_t size, bool *used)
{
    for (int i = 0; i < RESERVE; i++) {
        if (!__atomic_exchange_n(&used[i], true, __ATOMIC_ACQ_REL)) {
            void *p = (char *)base + (size_t)i * size;
            memset(p, 0, size);
            return p;
        }
    }
    return NULL;
}

static bool to_reserve(void *p, void *base, size_t size, bool *used)
{
    char *c = p, *b = base;
    if (c < b || c >= b + RESERVE * size)
        return false;
    __atomic_store_n(&used[(size_t)(c - b) / size], false, __ATOMIC_RELEASE);
    return true;
}

layer_instance *gz_layer_instance_alloc(void)
{
    layer_instance *inst = calloc(1, sizeof *inst);
    return inst ? inst
                : from_reserve(reserve_instances, sizeof *inst, reserve_instance_used);
}

void gz_layer_instance_free(layer_instance *inst)
{
    if (!to_reserve(inst, reserve_instances, sizeof *inst, reserve_instance_used))
        free(inst);
}

layer_device *gz_layer_device_alloc(void)
{
    layer_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        dev = from_reserve(reserve_devices, sizeof *dev, reserve_device_used);
    if (dev)
        pthread_mutex_init(&dev->lock, NULL);
    return dev;
}

void gz_layer_device_free(layer_device *dev)
{
    pthread_mutex_destroy(&dev->lock);
    if (!to_reserve(dev, reserve_devices, sizeof *dev, reserve_device_used))
        free(dev);
}
