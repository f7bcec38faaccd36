#include <stdbool.h>
#include <stdlib.h>

#include "gz_handle_map.h"

static uint64_t mix(uint64_t k)
{
    /* Handles are aligned pointers or driver ids: spread their bits. */
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

void gz_handle_map_init(gz_handle_map *m)
{
    for (int i = 0; i < GZ_HANDLE_MAP_STRIPES; i++) {
        gz_handle_stripe *s = &m->stripes[i];
        pthread_mutex_init(&s->lock, NULL);
        s->buckets = NULL;
        s->nbuckets = GZ_HANDLE_MAP_INLINE;
        s->count = 0;
        for (int b = 0; b < GZ_HANDLE_MAP_INLINE; b++)
            s->inline_buckets[b] = NULL;
    }
}

void gz_handle_map_destroy(gz_handle_map *m)
{
    for (int i = 0; i < GZ_HANDLE_MAP_STRIPES; i++) {
        free(m->stripes[i].buckets);
        m->stripes[i].buckets = NULL;
        pthread_mutex_destroy(&m->stripes[i].lock);
    }
}

static gz_handle_stripe *stripe_of(gz_handle_map *m, uint64_t h)
{
    return &m->stripes[h % GZ_HANDLE_MAP_STRIPES];
}

static gz_handle_node **buckets_of(gz_handle_stripe *s)
{
    return s->buckets ? s->buckets : s->inline_buckets;
}

static gz_handle_node **slot_of(gz_handle_stripe *s, uint64_t h, uint64_t key)
{
    gz_handle_node **p = &buckets_of(s)[(h / GZ_HANDLE_MAP_STRIPES) & (s->nbuckets - 1)];
    while (*p && (*p)->key != key)
        p = &(*p)->next;
    return p;
}

/* Doubles the buckets when memory allows; the map works without. */
static void grow(gz_handle_stripe *s)
{
    uint32_t n = s->nbuckets * 2;
    gz_handle_node **b = calloc(n, sizeof *b);
    if (!b)
        return;
    gz_handle_node **old = buckets_of(s);
    for (uint32_t i = 0; i < s->nbuckets; i++) {
        for (gz_handle_node *node = old[i], *next; node; node = next) {
            next = node->next;
            gz_handle_node **head = &b[(mix(node->key) / GZ_HANDLE_MAP_STRIPES) & (n - 1)];
            node->next = *head;
            *head = node;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
}

gz_handle_node *gz_handle_map_get(gz_handle_map *m, uint64_t key)
{
    uint64_t h = mix(key);
    gz_handle_stripe *s = stripe_of(m, h);
    pthread_mutex_lock(&s->lock);
    gz_handle_node *node = *slot_of(s, h, key);
    pthread_mutex_unlock(&s->lock);
    return node;
}

gz_handle_node *gz_handle_map_put(gz_handle_map *m, uint64_t key, gz_handle_node *node)
{
    uint64_t h = mix(key);
    gz_handle_stripe *s = stripe_of(m, h);
    pthread_mutex_lock(&s->lock);
    if (s->count >= 2 * s->nbuckets)
        grow(s);
    gz_handle_node **p = slot_of(s, h, key);
    gz_handle_node *old = *p;
    node->key = key;
    node->next = old ? old->next : NULL;
    *p = node;
    if (!old)
        s->count++;
    pthread_mutex_unlock(&s->lock);
    return old;
}

gz_handle_node *gz_handle_map_remove(gz_handle_map *m, uint64_t key)
{
    uint64_t h = mix(key);
    gz_handle_stripe *s = stripe_of(m, h);
    pthread_mutex_lock(&s->lock);
    gz_handle_node **p = slot_of(s, h, key);
    gz_handle_node *node = *p;
    if (node) {
        *p = node->next;
        s->count--;
    }
    pthread_mutex_unlock(&s->lock);
    return node;
}

void gz_handle_map_remove_node(gz_handle_map *m, gz_handle_node *node)
{
    uint64_t h = mix(node->key);
    gz_handle_stripe *s = stripe_of(m, h);
    pthread_mutex_lock(&s->lock);
    gz_handle_node **p = slot_of(s, h, node->key);
    if (*p == node) {
        *p = node->next;
        s->count--;
    }
    pthread_mutex_unlock(&s->lock);
}
