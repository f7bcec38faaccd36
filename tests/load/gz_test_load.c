/* gz-test-load: drives the real client (queue, worker, clock model, trace
 * file) with a known stream of GPU zones from several producer threads, at
 * a steady rate, so that load.py can check that every zone arrives exactly
 * once, in order, at its exact time, with none dropped under the default
 * bounds.
 *
 *   gz-test-load THREADS ZONES_PER_THREAD RATE_PER_THREAD
 *
 * Each thread owns a track whose clock is the host clock itself (one
 * calibrated pair at offset 0, zero deviation), and emits zones
 * "load <t>" back to back: zone i spans [base + 2000 i, base + 2000 i + 1000]
 * ns, so load.py knows every timestamp. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gz_client.h"

static uint64_t zones_per_thread, rate;
static uint64_t base_ns;

static void sleep_until(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static void *producer(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    char name[32];
    snprintf(name, sizeof name, "load track %u", (unsigned)t);
    uint16_t track = gz_track_new(GZ_API_VULKAN, name, 1.0, 64, 0);
    gz_emit_calib(track, base_ns, base_ns, 0);
    snprintf(name, sizeof name, "load %u", (unsigned)t);
    uint32_t zone_name = gz_intern_cstr(name);
    const uint64_t burst = 100; /* zones per wake-up */
    uint64_t start = gz_host_now_ns();
    uint64_t refused = 0;
    for (uint64_t i = 0; i < zones_per_thread; i += burst) {
        sleep_until(start + i * 1000000000u / rate);
        for (uint64_t j = i; j < i + burst && j < zones_per_thread; j++) {
            gz_item z = {.type = GZ_ITEM_GPU_ZONE, .track = track, .name = zone_name,
                         .flags = GZ_ZONE_EXPLICIT << GZ_ITEM_KIND_SHIFT,
                         .zone = {.begin_ticks = base_ns + 2000 * j,
                                  .end_ticks = base_ns + 2000 * j + 1000}};
            if (!gz_emit(&z))
                refused++;
        }
    }
    if (refused)
        gz_count_dropped_zones(track, refused);
    printf("thread %u: %llu zones, %llu refused\n", (unsigned)t,
           (unsigned long long)zones_per_thread, (unsigned long long)refused);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    unsigned threads = (unsigned)atoi(argv[1]);
    zones_per_thread = strtoull(argv[2], NULL, 10);
    rate = strtoull(argv[3], NULL, 10);
    if (!threads || threads > 64 || !rate || !gz_client_start())
        return 2;
    base_ns = gz_host_now_ns();
    printf("base %llu\n", (unsigned long long)base_ns);
    pthread_t th[64];
    for (unsigned t = 0; t < threads; t++)
        pthread_create(&th[t], NULL, producer, (void *)(uintptr_t)t);
    for (unsigned t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    gz_client_stop();
    return 0;
}
