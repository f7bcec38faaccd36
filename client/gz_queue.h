/* The serialized queue: many producers, one consumer (the worker).
 *
 * One mutex gives a total order across threads. Producers copy one 32-byte
 * item into the active half under the lock: O(1), no allocation. The worker
 * swaps halves under the lock (O(1)) and reads the full half outside it. The
 * size is bounded: when the active half is full the item is dropped and
 * counted, never blocking the producer.
 *
 * One batch bigger than what is left of a half (a submission with more
 * zones and labels than a half holds) is still taken whole while the active
 * half is less than half full: that half grows for it, up to
 * GZ_QUEUE_BATCH_MAX items beyond its capacity. Only a batch past that is
 * refused (counted apart: raising the capacity would not help it). */
#ifndef GZ_QUEUE_H
#define GZ_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "gz_item.h"

#define GZ_QUEUE_BATCH_MAX (1u << 20)

typedef struct gz_queue {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* signalled when the active half is half full, on a kick or stop */
    gz_item *half[2];
    uint32_t size[2];  /* items each half has room for: capacity, or more after a big batch */
    uint32_t capacity; /* items per half */
    uint32_t active;   /* index of the half producers write to */
    uint32_t count;    /* items in the active half */
    bool stop;
    bool kicked;      /* the next take returns at once */
    uint64_t pushed;  /* items accepted */
    uint64_t dropped; /* items refused: the active half was full, or a batch too big */
    uint64_t batches_too_big; /* batches of more than GZ_QUEUE_BATCH_MAX items */
} gz_queue;

bool gz_queue_init(gz_queue *q, uint32_t capacity);
/* The largest batch the active half takes now (read without the lock: a
 * hint). A collector with more to emit goes on at its next call. */
static inline uint32_t gz_queue_room(const gz_queue *q)
{
    uint32_t count = __atomic_load_n(&q->count, __ATOMIC_RELAXED);
    if (count < q->capacity / 2)
        return GZ_QUEUE_BATCH_MAX > q->capacity ? GZ_QUEUE_BATCH_MAX : q->capacity;
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
/* Makes the consumer's current or next take return at once. */
void gz_queue_kick(gz_queue *q);

uint64_t gz_queue_dropped(gz_queue *q);
uint64_t gz_queue_batches_too_big(gz_queue *q);
bool gz_queue_stopped(gz_queue *q);

#endif
