/* A thread-safe map from API handles (Vulkan objects, OpenCL queues and
 * events) to the structures that track them: the one map of the layers
 * and contexts. The node lives inside the caller's structure, so inserting
 * never allocates and never fails: a layer that cannot allocate still
 * dispatches every call. Lock striping keeps threads that work on
 * different objects from contending on one lock; the buckets grow when
 * memory allows, and stay correct (longer chains) when not. Each call is
 * atomic on its own: a caller that must look up and then change or free
 * what it found, with no other thread in between, holds a lock of its own
 * around both. */
#ifndef GZ_HANDLE_MAP_H
#define GZ_HANDLE_MAP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "gz_client.h"

#define GZ_HANDLE_MAP_STRIPES 16
#define GZ_HANDLE_MAP_INLINE 16 /* buckets per stripe before any allocation */

typedef struct gz_handle_node {
    struct gz_handle_node *next;
    uint64_t key;
} gz_handle_node;

typedef struct gz_handle_stripe {
    pthread_mutex_t lock;
    gz_handle_node **buckets; /* NULL: the inline ones */
    uint32_t nbuckets, count;
    gz_handle_node *inline_buckets[GZ_HANDLE_MAP_INLINE];
} gz_handle_stripe;

typedef struct gz_handle_map {
    gz_handle_stripe stripes[GZ_HANDLE_MAP_STRIPES];
} gz_handle_map;

#define GZ_HANDLE_KEY(h) ((uint64_t)(uintptr_t)(h))
/* The structure a node is the member `field` of. */
#define gz_container_of(node, type, field)                                                        \
    ((type *)(void *)((char *)(node) - offsetof(type, field)))

/* For a map of static storage, which then needs no gz_handle_map_init and
 * is ready before any code runs (a layer can be called first from any
 * thread). */
#define GZ_HANDLE_MAP_INITIALIZER                                                                 \
    {                                                                                             \
        .stripes = {[0 ... GZ_HANDLE_MAP_STRIPES - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER,      \
                                                         .nbuckets = GZ_HANDLE_MAP_INLINE}}      \
    }

GZ_EXPORT void gz_handle_map_init(gz_handle_map *m);
/* Frees the buckets; the nodes are the callers'. */
void gz_handle_map_destroy(gz_handle_map *m);
/* Puts node under key; returns the node it replaces (NULL: none). */
GZ_EXPORT gz_handle_node *gz_handle_map_put(gz_handle_map *m, uint64_t key, gz_handle_node *node);
GZ_EXPORT gz_handle_node *gz_handle_map_get(gz_handle_map *m, uint64_t key);
/* Takes the node under key out; NULL when there is none. */
GZ_EXPORT gz_handle_node *gz_handle_map_remove(gz_handle_map *m, uint64_t key);
/* Takes node out if it is the one under its key (a handle reused since
 * belongs to someone else). */
GZ_EXPORT void gz_handle_map_remove_node(gz_handle_map *m, gz_handle_node *node);

#endif
