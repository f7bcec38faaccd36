/* Which events the context holds a reference to. The layer subtracts these
 * from CL_EVENT_REFERENCE_COUNT so that the application sees the count it
 * would see without us; the totals show a leak at exit. */
#include <pthread.h>
#include <stdlib.h>

#include "gz_cl_internal.h"

#define BUCKETS 1024u

typedef struct hold {
    struct hold *next;
    cl_event ev;
    uint32_t n;
} hold;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static hold *buckets[BUCKETS];
static uint64_t taken, returned;

static uint32_t bucket_of(cl_event ev)
{
    uintptr_t p = (uintptr_t)ev;
    return (uint32_t)((p >> 4) ^ (p >> 14)) % BUCKETS;
}

void gz_cl_holds_add(cl_event ev)
{
    pthread_mutex_lock(&lock);
    taken++;
    hold **b = &buckets[bucket_of(ev)];
    hold *h = *b;
    while (h && h->ev != ev)
        h = h->next;
    if (h) {
        h->n++;
    } else if ((h = malloc(sizeof *h))) {
        *h = (hold){.next = *b, .ev = ev, .n = 1};
        *b = h;
    }
    /* Out of memory: the count shown to the application is one too high
     * for this event, which is the only effect. */
    pthread_mutex_unlock(&lock);
}

void gz_cl_holds_remove(cl_event ev)
{
    pthread_mutex_lock(&lock);
    returned++;
    for (hold **p = &buckets[bucket_of(ev)]; *p; p = &(*p)->next) {
        hold *h = *p;
        if (h->ev != ev)
            continue;
        if (--h->n == 0) {
            *p = h->next;
            free(h);
        }
        break;
    }
    pthread_mutex_unlock(&lock);
}

uint32_t gz_cl_event_holds(cl_event ev)
{
    uint32_t n = 0;
    pthread_mutex_lock(&lock);
    for (hold *h = buckets[bucket_of(ev)]; h; h = h->next) {
        if (h->ev == ev) {
            n = h->n;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return n;
}

void gz_cl_holds_totals(uint64_t *t, uint64_t *r)
{
    pthread_mutex_lock(&lock);
    *t = taken;
    *r = returned;
    pthread_mutex_unlock(&lock);
}
