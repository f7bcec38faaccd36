/* The real client worker converting GPU zones and writing them to the trace.
 *
 *   gz-bench-worker --zones N [--rate R] [--rss-every-ms M]
 *
 * One GPU track on a calibrated clock (period 1 ns, 64 bits, a calibrated
 * pair every 10 ms as a Vulkan context would give), N zone items through
 * gz_emit in time order, 8 names: zones of 1 µs, 1 µs apart, none
 * overlapping another (as on a real track). --rate 0 (default): as fast as
 * the queue takes them (a refused item is retried after 20 µs, and
 * counted); --rate R: R zones a second, emitted every millisecond, as an
 * app would.
 *
 * The worker is the only other thread of this process, so once
 * gz_client_stop has joined it, its CPU time is the process's minus the main
 * thread's. Prints one line of key=value: zones, wall_s, worker_cpu_s,
 * main_cpu_s, retries, trace_bytes, vmrss_kb and vmhwm_kb (after the stop),
 * and with --rss-every-ms the VmRSS samples taken while it ran (rss_kb=a,b,…),
 * to show that memory stays flat at a steady rate.
 *
 * The trace goes where GPUZONES_OUTPUT says (the caller sets it; a name
 * ending in .pftrace gives Perfetto's format). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "gz_client.h"

#define NAMES 8
#define CALIB_EVERY_NS 10000000ull

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static double cpu_s(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

/* A field of /proc/self/status in kB, or 0. */
static unsigned long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long v = 0;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') {
            v = strtoul(line + n + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

static uint64_t arg_u64(int argc, char **argv, const char *name, uint64_t def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], name))
            return strtoull(argv[i + 1], NULL, 10);
    return def;
}

static void emit_calib(uint16_t track)
{
    uint64_t now = gz_host_now_ns();
    /* The GPU clock is the host clock here: exact pairs. */
    while (!gz_emit_calib(track, now, now, 1))
        nanosleep(&(struct timespec){0, 20000}, NULL);
}

int main(int argc, char **argv)
{
    uint64_t zones = arg_u64(argc, argv, "--zones", 100000);
    uint64_t rate = arg_u64(argc, argv, "--rate", 0);
    uint64_t rss_every_ms = arg_u64(argc, argv, "--rss-every-ms", 0);
    if (!gz_client_start()) {
        fprintf(stderr, "gz-bench-worker: the client did not start\n");
        return 2;
    }
    uint16_t track = gz_track_new(GZ_API_VULKAN, "bench queue", 1.0, 64, 0);
    uint32_t names[NAMES];
    for (int i = 0; i < NAMES; i++) {
        char s[32];
        snprintf(s, sizeof s, "zone %d", i);
        names[i] = gz_intern_cstr(s);
    }
    const char *out = getenv("GPUZONES_OUTPUT");

    static unsigned long rss[4096];
    unsigned nrss = 0;
    uint64_t retries = 0;
    uint64_t t0 = gz_host_now_ns();
    uint64_t next_calib = 0, next_rss = t0;
    uint64_t gpu_ns = t0; /* where the next zone begins */
    uint64_t per_ms = rate ? (rate + 999) / 1000 : 0;
    struct timespec tick;
    clock_gettime(CLOCK_MONOTONIC, &tick);
    for (uint64_t i = 0; i < zones;) {
        uint64_t now = gz_host_now_ns();
        if (now >= next_calib) {
            emit_calib(track);
            next_calib = now + CALIB_EVERY_NS;
        }
        if (rss_every_ms && now >= next_rss && nrss < sizeof rss / sizeof rss[0]) {
            rss[nrss++] = status_kb("VmRSS");
            next_rss = now + rss_every_ms * 1000000ull;
        }
        /* A burst of zones in time order, each after the one before (as
         * fast as the queue takes them, GPU time runs ahead of the host's). */
        uint64_t burst = per_ms ? per_ms : 256;
        if (gpu_ns + 10000000 < now)
            gpu_ns = now - 10000000;
        for (uint64_t k = 0; k < burst && i < zones; k++, i++) {
            gz_item it = {
                .type = GZ_ITEM_GPU_ZONE,
                .flags = (uint8_t)(GZ_ZONE_CMDBUF << GZ_ITEM_KIND_SHIFT),
                .track = track,
                .name = names[i % NAMES],
            };
            it.zone.begin_ticks = gpu_ns;
            it.zone.end_ticks = gpu_ns + 1000;
            gpu_ns += 2000;
            while (!gz_emit(&it)) {
                retries++;
                nanosleep(&(struct timespec){0, 20000}, NULL);
            }
        }
        if (per_ms) {
            tick.tv_nsec += 1000000;
            if (tick.tv_nsec >= 1000000000L) {
                tick.tv_nsec -= 1000000000L;
                tick.tv_sec++;
            }
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &tick, NULL);
        }
    }
    gz_client_stop();
    double wall = (double)(gz_host_now_ns() - t0) / 1e9;
    double main_cpu = cpu_s(RUSAGE_THREAD);
    double worker_cpu = cpu_s(RUSAGE_SELF) - main_cpu;
    struct stat st;
    long long bytes = out && !stat(out, &st) && S_ISREG(st.st_mode) ? (long long)st.st_size : -1;
    printf("zones=%llu wall_s=%.6f worker_cpu_s=%.6f main_cpu_s=%.6f retries=%llu "
           "trace_bytes=%lld vmrss_kb=%lu vmhwm_kb=%lu",
           (unsigned long long)zones, wall, worker_cpu, main_cpu, (unsigned long long)retries,
           bytes, status_kb("VmRSS"), status_kb("VmHWM"));
    if (nrss) {
        printf(" rss_kb=");
        for (unsigned k = 0; k < nrss; k++)
            printf("%s%lu", k ? "," : "", rss[k]);
    }
    printf("\n");
    return 0;
}
