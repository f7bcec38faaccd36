/* Which events the context holds a reference to. The layer subtracts these
 * from CL_EVENT_REFERENCE_COUNT so that the application sees the count it
 * would see without us; the totals show a leak at exit. */
#include <pthread.h>
#include <stdlib.h>

#include "gz_cl_internal.h"
#include "gz_handle_map.h"

typedef struct hold {
    gz_handle_node node; /* key: the event */
    uint32_t n;
} hold;

/* A count is read and changed, and its entry added or freed, as one step;
 * the totals go with it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gz_handle_map holds = GZ_HANDLE_MAP_INITIALIZER;
static uint64_t taken, returned;

static hold *find_locked(cl_event ev)
{
    gz_handle_node *node = gz_handle_map_get(&holds, GZ_HANDLE_KEY(ev));
    return node ? gz_container_of(node, hold, node) : NULL;
}

void gz_cl_holds_add(cl_event ev)
{
    pthread_mutex_lock(&lock);
    taken++;
    hold *h = find_locked(ev);
    if (h) {
        h->n++;
    } else if ((h = malloc(sizeof *h))) {
        h->n = 1;
        gz_handle_map_put(&holds, GZ_HANDLE_KEY(ev), &h->node);
    }
    /* Out of memory: the count shown to the application is one too high
     * for this event, which is the only effect. */
    pthread_mutex_unlock(&lock);
}

void gz_cl_holds_remove(cl_event ev)
{
    pthread_mutex_lock(&lock);
    returned++;
    hold *h = find_locked(ev);
    if (h && --h->n == 0) {
        gz_handle_map_remove_node(&holds, &h->node);
        free(h);
    }
    pthread_mutex_unlock(&lock);
}

uint32_t gz_cl_event_holds(cl_event ev)
{
    pthread_mutex_lock(&lock);
    hold *h = find_locked(ev);
    uint32_t n = h ? h->n : 0;
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
