/* Unit tests for the serialized client queue (client/queue.c): total order
 * and no loss with several producers, bounded size with counted drops, and
 * all-or-nothing groups. Built also with ThreadSanitizer. */
#include <pthread.h>
#include <stdlib.h>

#include "gz_check.h"
#include "gz_queue.h"

#define PRODUCERS 4
#define PER_PRODUCER 200000u

typedef struct producer {
    gz_queue *q;
    uint32_t id;
    uint64_t refused;
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    for (uint32_t i = 0; i < PER_PRODUCER; i++) {
        /* A pair that must arrive together: begin (seq) and end (seq). */
        gz_item pair[2] = {
            {.type = 1, .track = (uint16_t)p->id, .name = i},
            {.type = 2, .track = (uint16_t)p->id, .name = i},
        };
        if (!gz_queue_push_n(p->q, pair, 2))
            p->refused++;
    }
    return NULL;
}

/* Consumes until every producer has finished and the queue is empty;
 * checks per producer that items come in order and pairs are never split. */
static int consume_and_check(gz_queue *q, producer *ps, pthread_t *threads, uint64_t *taken)
{
    uint32_t next[PRODUCERS] = {0};
    bool open[PRODUCERS] = {false};
    int joined = 0;
    *taken = 0;
    for (;;) {
        const gz_item *items;
        uint32_t n = gz_queue_take(q, 1, &items);
        for (uint32_t i = 0; i < n; i++) {
            const gz_item *it = &items[i];
            CHECK(it->track < PRODUCERS);
            uint32_t t = it->track;
            if (it->type == 1) {
                CHECK(!open[t]);
                CHECK(it->name >= next[t]); /* in order; gaps are refused pairs */
                next[t] = it->name;
                open[t] = true;
            } else {
                CHECK_U64(it->type, 2);
                CHECK(open[t]);
                CHECK_U64(it->name, next[t]);
                open[t] = false;
                next[t]++;
            }
        }
        *taken += n;
        if (joined == PRODUCERS && n == 0)
            break;
        while (joined < PRODUCERS && n == 0) {
            pthread_join(threads[joined], NULL);
            joined++;
            break;
        }
    }
    for (int t = 0; t < PRODUCERS; t++)
        CHECK(!open[t]);
    (void)ps;
    return 0;
}

static int test_many_producers(void)
{
    gz_queue q;
    CHECK(gz_queue_init(&q, 1u << 16));
    producer ps[PRODUCERS];
    pthread_t threads[PRODUCERS];
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        ps[i] = (producer){.q = &q, .id = i};
        CHECK(pthread_create(&threads[i], NULL, produce, &ps[i]) == 0);
    }
    uint64_t taken;
    if (consume_and_check(&q, ps, threads, &taken))
        return 1;
    uint64_t refused = 0;
    for (int i = 0; i < PRODUCERS; i++)
        refused += ps[i].refused;
    /* Nothing lost silently: every item was taken or counted as dropped. */
    CHECK_U64(taken + 2 * refused, 2ull * PRODUCERS * PER_PRODUCER);
    CHECK_U64(gz_queue_dropped(&q), 2 * refused);
    gz_queue_destroy(&q);
    return 0;
}

static int test_bounded(void)
{
    gz_queue q;
    CHECK(gz_queue_init(&q, 1024));
    gz_item it = {.type = 1};
    for (int i = 0; i < 1024; i++)
        CHECK(gz_queue_push(&q, &it));
    CHECK(!gz_queue_push(&q, &it)); /* full: refused at once, not blocked */
    CHECK_U64(gz_queue_dropped(&q), 1);
    gz_item group[3] = {{.type = 1}, {.type = 2}, {.type = 3}};
    CHECK(!gz_queue_push_n(&q, group, 3));
    CHECK_U64(gz_queue_dropped(&q), 4);

    const gz_item *items;
    CHECK_U64(gz_queue_take(&q, 0, &items), 1024);
    /* The other half is empty and takes the next items. */
    CHECK(gz_queue_push_n(&q, group, 3));
    CHECK_U64(gz_queue_take(&q, 0, &items), 3);
    CHECK_U64(items[0].type, 1);
    CHECK_U64(items[2].type, 3);
    /* A group larger than the free room is refused whole. */
    for (int i = 0; i < 1023; i++)
        CHECK(gz_queue_push(&q, &it));
    CHECK(!gz_queue_push_n(&q, group, 2));
    CHECK(gz_queue_push_n(&q, group, 1));
    CHECK_U64(gz_queue_take(&q, 0, &items), 1024);
    gz_queue_destroy(&q);
    return 0;
}

/* A submission with more zones and labels than a half holds: taken whole
 * while the half is less than half full (the half grows for it), refused
 * whole otherwise, so that the collector tries again after the next take;
 * only a batch past GZ_QUEUE_BATCH_MAX is refused for good, counted apart. */
static int test_big_batch(void)
{
    gz_queue q;
    CHECK(gz_queue_init(&q, 1024));
    gz_item it = {.type = 1};
    for (int i = 0; i < 10; i++)
        CHECK(gz_queue_push(&q, &it));
    enum { BIG = 3000 };
    gz_item *big = calloc(GZ_QUEUE_BATCH_MAX + 1, sizeof *big);
    CHECK(big != NULL);
    for (uint32_t i = 0; i < BIG; i++)
        big[i] = (gz_item){.type = 2, .name = i};
    CHECK(gz_queue_room(&q) >= BIG);
    CHECK(gz_queue_push_n(&q, big, BIG));
    const gz_item *items;
    CHECK_U64(gz_queue_take(&q, 0, &items), 10 + BIG);
    for (uint32_t i = 0; i < BIG; i++)
        CHECK_U64(items[10 + i].name, i);
    /* The other half, more than half full: the batch waits for a take. */
    for (int i = 0; i < 600; i++)
        CHECK(gz_queue_push(&q, &it));
    CHECK_U64(gz_queue_room(&q), 1024 - 600);
    CHECK(!gz_queue_push_n(&q, big, BIG));
    CHECK_U64(gz_queue_take(&q, 0, &items), 600);
    CHECK(gz_queue_push_n(&q, big, BIG));
    CHECK_U64(gz_queue_take(&q, 0, &items), BIG);
    CHECK_U64(gz_queue_batches_too_big(&q), 0);
    /* Past the bound: refused, and said so apart. */
    CHECK(!gz_queue_push_n(&q, big, GZ_QUEUE_BATCH_MAX + 1));
    CHECK_U64(gz_queue_batches_too_big(&q), 1);
    CHECK_U64(gz_queue_dropped(&q), BIG + GZ_QUEUE_BATCH_MAX + 1);
    free(big);
    gz_queue_destroy(&q);
    return 0;
}

static int test_kick(void)
{
    gz_queue q;
    CHECK(gz_queue_init(&q, 1024));
    gz_item it = {.type = 1};
    CHECK(gz_queue_push(&q, &it));
    gz_queue_kick(&q);
    const gz_item *items;
    /* A kicked take returns at once with what there is, even with a long
     * timeout; the next one waits again. */
    CHECK_U64(gz_queue_take(&q, 60000, &items), 1);
    CHECK_U64(gz_queue_take(&q, 20, &items), 0);
    gz_queue_destroy(&q);
    return 0;
}

static int test_stop_wakes(void)
{
    gz_queue q;
    CHECK(gz_queue_init(&q, 1024));
    gz_queue_stop(&q);
    CHECK(gz_queue_stopped(&q));
    const gz_item *items;
    /* A stopped queue returns at once even with a long timeout. */
    CHECK_U64(gz_queue_take(&q, 60000, &items), 0);
    gz_queue_destroy(&q);
    return 0;
}

int main(void)
{
    int failed = 0;
    failed += run("many producers: order, pairs kept, drops counted", test_many_producers);
    failed += run("bounded: refusals counted, groups all or nothing", test_bounded);
    failed += run("a batch bigger than a half: whole, or retried, or refused and counted",
                  test_big_batch);
    failed += run("a kick makes the next take return at once", test_kick);
    failed += run("stop wakes the consumer", test_stop_wakes);
    printf("%d group(s) failed\n", failed);
    return failed ? 1 : 0;
}
