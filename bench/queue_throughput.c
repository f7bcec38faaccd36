/* Items per second through the serialized client queue (gz_queue_push) with
 * 1 and 2 producer threads, against the limit of copying the same 32-byte
 * items into a preallocated buffer with no lock, all in one run.
 *
 *   gz-bench-queue [--items N]
 *
 * A consumer thread takes halves as the worker does (gz_queue_take with a
 * 1 ms wait) and only counts them, so what is measured is the producers'
 * side. Each half holds 2^20 items (touched before timing), so refusals
 * (drops) are rare; they are printed. Prints one line: copy_mitems_s=…
 * q1_mitems_s=… q2_mitems_s=… b1_… b2_… (the same in batches of 16; millions of items a second over the
 * producers' wall time), the same per second of the producers' own CPU time
 * (*_cpu_s: what a shared, loaded machine does not distort), the copy into
 * a buffer that stays in cache (copy_small_mitems_cpu_s), drops=… */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gz_queue.h"

#define HALF (1u << 20)
/* A second limit: the same copy into a buffer that stays in cache (64 Ki
 * items, the client's default half), the cost of the copy alone. */
#define SMALL (1u << 16)
/* The contexts push what one harvested submission made in one call
 * (gz_emit_n): e.g. a submit zone, its bounds and a dozen label zones. */
#define BATCH 16u

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static gz_item make_item(uint64_t i)
{
    gz_item it = {.type = GZ_ITEM_GPU_ZONE, .track = 1, .name = (uint32_t)(i & 7)};
    it.zone.begin_ticks = i;
    it.zone.end_ticks = i + 1;
    return it;
}

/* The limit: the same items copied into a preallocated ring, no lock. */
static double copy_limit(uint64_t n, gz_item *buf, uint32_t size, double *cpu_rate)
{
    uint64_t t0 = now_ns(), c0 = thread_cpu_ns();
    for (uint64_t i = 0; i < n; i++) {
        gz_item it = make_item(i);
        memcpy(&buf[i & (size - 1)], &it, sizeof it);
        /* Keep the compiler from dropping or batching the stores. */
        __asm__ volatile("" : : "r"(buf) : "memory");
    }
    *cpu_rate = (double)n / ((double)(thread_cpu_ns() - c0) / 1e9);
    return (double)n / ((double)(now_ns() - t0) / 1e9);
}

struct run {
    gz_queue q;
    uint64_t per_producer;
    uint32_t batch; /* items per push: 1, or a harvested batch's worth */
    atomic_bool stop;
    atomic_uint_fast64_t taken;
    atomic_uint_fast64_t producer_cpu_ns;
};

static void *consumer(void *arg)
{
    struct run *r = arg;
    const gz_item *items;
    while (!atomic_load(&r->stop)) {
        uint32_t n = gz_queue_take(&r->q, 1, &items);
        atomic_fetch_add(&r->taken, n);
    }
    return NULL;
}

static void *producer(void *arg)
{
    struct run *r = arg;
    uint64_t c0 = thread_cpu_ns();
    gz_item items[BATCH];
    for (uint64_t i = 0; i < r->per_producer; i += r->batch) {
        for (uint32_t k = 0; k < r->batch; k++)
            items[k] = make_item(i + k);
        gz_queue_push_n(&r->q, items, r->batch);
    }
    atomic_fetch_add(&r->producer_cpu_ns, thread_cpu_ns() - c0);
    return NULL;
}

static double through_queue(uint64_t n, int producers, uint32_t batch, uint64_t *drops,
                            double *cpu_rate)
{
    static struct run r;
    memset(&r, 0, sizeof r);
    r.batch = batch;
    if (!gz_queue_init(&r.q, HALF)) {
        fprintf(stderr, "gz-bench-queue: out of memory\n");
        exit(2);
    }
    /* Touch both halves first, as a running client has: page faults are a
     * start-up cost, not the queue's. */
    memset(r.q.half[0], 0, HALF * sizeof(gz_item));
    memset(r.q.half[1], 0, HALF * sizeof(gz_item));
    r.per_producer = n / (uint64_t)producers / batch * batch;
    pthread_t c, p[2];
    pthread_create(&c, NULL, consumer, &r);
    uint64_t t0 = now_ns();
    for (int i = 0; i < producers; i++)
        pthread_create(&p[i], NULL, producer, &r);
    for (int i = 0; i < producers; i++)
        pthread_join(p[i], NULL);
    double s = (double)(now_ns() - t0) / 1e9;
    atomic_store(&r.stop, true);
    gz_queue_stop(&r.q);
    pthread_join(c, NULL);
    *drops += gz_queue_dropped(&r.q);
    *cpu_rate = (double)(r.per_producer * (uint64_t)producers) /
                ((double)atomic_load(&r.producer_cpu_ns) / 1e9);
    gz_queue_destroy(&r.q);
    return (double)(r.per_producer * (uint64_t)producers) / s;
}

int main(int argc, char **argv)
{
    uint64_t n = 4000000;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--items"))
            n = strtoull(argv[i + 1], NULL, 10);
    if (n < 2)
        n = 2;
    gz_item *buf = calloc(HALF, sizeof *buf);
    if (!buf)
        return 2;
    memset(buf, 0, HALF * sizeof *buf); /* preallocated: touched before timing */
    uint64_t drops = 0;
    double copy_cpu, small_cpu, q1_cpu, q2_cpu;
    double copy = copy_limit(n, buf, HALF, &copy_cpu);
    copy_limit(n, buf, SMALL, &small_cpu);
    double q1 = through_queue(n, 1, 1, &drops, &q1_cpu);
    double q2 = through_queue(n, 2, 1, &drops, &q2_cpu);
    double b1_cpu, b2_cpu;
    double b1 = through_queue(n, 1, BATCH, &drops, &b1_cpu);
    double b2 = through_queue(n, 2, BATCH, &drops, &b2_cpu);
    printf("copy_mitems_s=%.3f q1_mitems_s=%.3f q2_mitems_s=%.3f copy_mitems_cpu_s=%.3f "
           "copy_small_mitems_cpu_s=%.3f q1_mitems_cpu_s=%.3f q2_mitems_cpu_s=%.3f "
           "b1_mitems_s=%.3f b2_mitems_s=%.3f b1_mitems_cpu_s=%.3f b2_mitems_cpu_s=%.3f "
           "drops=%llu\n",
           copy / 1e6, q1 / 1e6, q2 / 1e6, copy_cpu / 1e6, small_cpu / 1e6, q1_cpu / 1e6,
           q2_cpu / 1e6, b1 / 1e6, b2 / 1e6, b1_cpu / 1e6, b2_cpu / 1e6,
           (unsigned long long)drops);
    free(buf);
    return 0;
}
