#include <stdlib.h>

#include "gz_objmap.h"

struct gz_objmap_node {
    gz_objmap_node *next;
    uint64_t key;
    void *value;
};

static uint64_t mix(uint64_t k)
{
    /* Handles are aligned pointers or driver ids: spread their bits. */
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

void gz_objmap_init(gz_objmap *m)
{
    for (int i = 0; i < GZ_OBJMAP_STRIPES; i++) {
        pthread_mutex_init(&m->stripes[i].lock, NULL);
        m->stripes[i].buckets = NULL;
        m->stripes[i].nbuckets = 0;
        m->stripes[i].count = 0;
    }
}

static gz_objmap_stripe *stripe_of(gz_objmap *m, uint64_t h)
{
    return &m->stripes[h % GZ_OBJMAP_STRIPES];
}

static gz_objmap_node **slot_of(gz_objmap_stripe *s, uint64_t h, uint64_t key)
{
    gz_objmap_node **p = &s->buckets[(h / GZ_OBJMAP_STRIPES) & (s->nbuckets - 1)];
    while (*p && (*p)->key != key)
        p = &(*p)->next;
    return p;
}

static bool grow(gz_objmap_stripe *s)
{
    uint32_t n = s->nbuckets ? s->nbuckets * 2 : 64;
    gz_objmap_node **b = calloc(n, sizeof *b);
    if (!b)
        return false;
    for (uint32_t i = 0; i < s->nbuckets; i++) {
        for (gz_objmap_node *node = s->buckets[i], *next; node; node = next) {
            next = node->next;
            gz_objmap_node **head = &b[(mix(node->key) / GZ_OBJMAP_STRIPES) & (n - 1)];
            node->next = *head;
            *head = node;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
    return true;
}

void *gz_objmap_get(gz_objmap *m, uint64_t key)
{
    uint64_t h = mix(key);
    gz_objmap_stripe *s = stripe_of(m, h);
    pthread_mutex_lock(&s->lock);
    void *v = NULL;
    if (s->nbuckets) {
        gz_objmap_node *node = *slot_of(s, h, key);
        v = node ? node->value : NULL;
    }
    pthread_mutex_unlock(&s->lock);
    return v;
}

bool gz_objmap_put(gz_objmap *m, uint64_t key, void *value)
{
    uint64_t h = mix(key);
    gz_objmap_stripe *s = stripe_of(m, h);
    pthread_mutex_lock(&s->lock);
    bool ok = true;
    if (!s->nbuckets || s->count >= s->nbuckets)
        ok = grow(s) || s->nbuckets;
    if (ok) {
        gz_objmap_node **p = slot_of(s, h, key);
        if (*p) {
            (*p)->value = value;
        } else if ((*p = malloc(sizeof **p))) {
            **p = (gz_objmap_node){NULL, key, value};
            s->count++;
        } else {
            ok = false;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return ok;
}

void *gz_objmap_remove(gz_objmap *m, uint64_t key)
{
    uint64_t h = mix(key);
    gz_objmap_stripe *s = stripe_of(m, h);
    pthread_mutex_lock(&s->lock);
    void *v = NULL;
    if (s->nbuckets) {
        gz_objmap_node **p = slot_of(s, h, key);
        gz_objmap_node *node = *p;
        if (node) {
            *p = node->next;
            v = node->value;
            free(node);
            s->count--;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return v;
}
