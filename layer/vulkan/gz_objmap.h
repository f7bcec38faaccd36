/* A thread-safe map from Vulkan handles to the layer's state. Lock striping
 * keeps threads that record on different command buffers from contending
 * on one lock. */
#ifndef GZ_OBJMAP_H
#define GZ_OBJMAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define GZ_OBJMAP_STRIPES 16

typedef struct gz_objmap_node gz_objmap_node;

typedef struct gz_objmap_stripe {
    pthread_mutex_t lock;
    gz_objmap_node **buckets;
    uint32_t nbuckets, count;
} gz_objmap_stripe;

typedef struct gz_objmap {
    gz_objmap_stripe stripes[GZ_OBJMAP_STRIPES];
} gz_objmap;

void gz_objmap_init(gz_objmap *m);
void *gz_objmap_get(gz_objmap *m, uint64_t key);
/* Inserts or replaces; false when out of memory. */
bool gz_objmap_put(gz_objmap *m, uint64_t key, void *value);
/* Removes and returns the value, NULL if absent. */
void *gz_objmap_remove(gz_objmap *m, uint64_t key);

#define GZ_HANDLE_KEY(h) ((uint64_t)(uintptr_t)(h))

#endif
