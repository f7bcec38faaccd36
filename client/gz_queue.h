/* The serialized queue: many producers, one consumer (the worker).
 *
 * One mutex gives a total order across threads. Producers copy one 32-byte
 * item into the active half under the lock: O(1), no allocation. The worker
 * swaps halves under the lock (O(1)) and reads the full half outside it. The
 * size is bounded: when the active half is full the item is dropped and
 * counted, never blocking the producer. */
#ifndef GZ_QUEUE_H
#define GZ_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "gz_item.h"

typedef struct gz_queue {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* signalled when the active half is half full or on stop */
    gz_item *half[2];
    uint32_t capacity; /* items per half */
    uint32_t active;   /* index of the half producers write to */
    uint32_t count;    /* items in the active half */
    bool stop;
    uint64_t pushed;  /* items accepted */
    uint64_t dropped; /* items refused because the active half was full */
} gz_queue;

bool gz_queue_init(gz_queue *q, uint32_t capacity);
/* Items the active half can take now (read without the lock: a hint). */
static inline uint32_t gz_queue_room(const gz_queue *q)
{
    uint32_t count = __atomic_load_n(&q->count, __ATOMIC_RELAXED);
    return count < q->capacity ? q->capacity - count : 0;
}
void gz_queue_destroy(gz_queue *q);

/* Returns false (and counts a drop) when the active half is full. */
bool gz_queue_push(gz_queue *q, const gz_item *item);
/* All n items or none: a zone's begin and end must not be split by a drop,
 * or the worker would pair the wrong items. Refused groups count n drops. */
bool gz_queue_push_n(gz_queue *q, const gz_item *items, uint32_t n);

/* Consumer: waits up to timeout_ms for items (returns early when the active
 * half is half full or on stop), then takes the active half. *items stays
 * valid until the next call. Returns the number of items taken. */
uint32_t gz_queue_take(gz_queue *q, uint32_t timeout_ms, const gz_item **items);

/* Wakes the consumer and makes it return at once from now on. */
void gz_queue_stop(gz_queue *q);

uint64_t gz_queue_dropped(gz_queue *q);
bool gz_queue_stopped(gz_queue *q);

#endif
