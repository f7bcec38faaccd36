/* gz-bench-tracy: what the Tracy sink costs the worker, and what a zone
 * weighs on the wire.
 *
 *   gz-bench-tracy [--zones N] [--reps R]
 *   gz-bench-tracy-inproc [--zones N] [--reps R]   (linked with libTracyClient.so)
 *
 * 1. The sink: worker CPU per GPU zone (and per CPU zone in listen mode),
 *    through the sink's ops as the worker calls them (nested zones, 3 per
 *    submission, a flush every 1000), medians of R repetitions. In the
 *    program linked with Tracy's client, the sink is the one feeding that
 *    client (inproc); otherwise listen mode with no profiler connected (what
 *    waits stays within its budget).
 * 2. Bytes per zone: the same zones encoded (wire.c) and LZ4-compressed in
 *    frames the way the network thread sends them, so the figure is what
 *    goes over TCP (names go once, by reference, when the profiler asks). */
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_bench.h"
#include "gz_config.h"
#include "gz_tracy.h"
#include "gz_tracy_internal.h"
#include "gz_tracy_wire.h"

static const char *const names[] = {"vkQueueSubmit", "main cmdbuf", "shadow pass", "gbuffer",
                                    "lighting",      "post",        "ui",          "copy"};

/* Submission i's three zones: a submit, its command buffer, a label. */
static void zone_times(uint64_t i, uint64_t base, uint64_t *b, uint64_t *e, int k)
{
    uint64_t t = base + i * 20000;
    b[0] = t, e[0] = t + 15000;
    b[1] = t + 100, e[1] = t + 14000;
    b[2] = t + 500 + (uint64_t)k * 10, e[2] = t + 5000;
}

static const char *mode = "listen";

#ifdef GZ_BENCH_WITH_TRACY
/* From libTracyClient.so: referenced so the library stays linked (the sink
 * itself finds Tracy with dlsym only). */
int32_t ___tracy_connected(void);
#endif

static double bench_sink(uint64_t zones, double *cpu_zone_ns)
{
    gz_config cfg = {.tracy = GZ_TRACY_LISTEN,
                     .tracy_addr = "127.0.0.1",
                     .tracy_port = 18086,
                     .tracy_exit_wait_ms = 0};
    gz_sink s;
    if (!gz_tracy_sink_open(&cfg, NULL, &s)) {
        fprintf(stderr, "gz-bench-tracy: the listen sink did not open\n");
        exit(1);
    }
    if (!s.ops->cpu_zone)
        mode = "inproc (the program's Tracy client)";
    gz_sink_track t = {.id = 1, .api = GZ_API_VULKAN, .name = "Graphics queue", .name_len = 14};
    s.ops->track_new(s.self, &t);
    uint64_t base = 1000000000ull;
    double t0 = gz_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (uint64_t i = 0; i < zones / 3; i++) {
        uint64_t b[3], e[3];
        zone_times(i, base, b, e, (int)(i & 7));
        for (int k = 0; k < 3; k++) {
            const char *n = names[(i + (uint64_t)k) & 7];
            gz_sink_zone z = {
                .track = 1, .name = n, .name_len = strlen(n), .begin_ns = b[k], .end_ns = e[k]};
            s.ops->gpu_zone(s.self, &z);
        }
        if (i % 333 == 0)
            s.ops->flush(s.self);
    }
    double t1 = gz_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (uint64_t i = 0; s.ops->cpu_zone && i < zones; i++)
        s.ops->cpu_zone(s.self, 1000, names[i & 7], strlen(names[i & 7]), base + i * 1000,
                        base + i * 1000 + 500);
    double t2 = gz_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    gz_sink_totals tot = {0};
    s.ops->close(s.self, &tot);
    *cpu_zone_ns = (t2 - t1) / (double)zones;
    return (t1 - t0) / (double)(zones / 3 * 3);
}

/* Encoded and compressed size of n GPU zones as listen mode sends them. */
static void wire_bytes(uint64_t zones, double *raw, double *lz)
{
    gz_tracy_enc e;
    gz_tracy_enc_init(&e);
    LZ4_stream_t *stream = LZ4_createStream();
    char *window = malloc(3 * GZ_TRACY_FRAME_MAX);
    char *out = malloc(GZ_TRACY_LZ4_BOUND(GZ_TRACY_FRAME_MAX));
    size_t off = 0, total_raw = 0, total_lz = 0;
    uint16_t q = 0;
    uint64_t base = 1000000000ull;
    for (uint64_t i = 0; i < zones / 3 || e.len; i++) {
        if (i < zones / 3) {
            uint64_t b[3], en[3];
            zone_times(i, base, b, en, (int)(i & 7));
            /* As listen.c writes them: begin + time now, end + time once
             * a later zone begins after it (here: child ends first). */
            for (int k = 0; k < 3; k++) {
                gz_tracy_enc_gpu_begin(&e, (int64_t)b[k], 0xF0000000u, q, 0,
                                       0x200000000ull + ((i + (uint64_t)k) & 7));
                gz_tracy_enc_gpu_time(&e, (int64_t)b[k], q++, 0);
            }
            for (int k = 2; k >= 0; k--) {
                gz_tracy_enc_gpu_end(&e, (int64_t)en[k], 0xF0000000u, q, 0);
                gz_tracy_enc_gpu_time(&e, (int64_t)en[k], q++, 0);
            }
            if (e.len + 512 <= GZ_TRACY_FRAME_MAX && i % 333 != 332)
                continue;
        }
        memcpy(window + off, e.buf, e.len);
        int n = LZ4_compress_fast_continue(stream, window + off, out, (int)e.len,
                                           (int)GZ_TRACY_LZ4_BOUND(GZ_TRACY_FRAME_MAX), 1);
        total_raw += e.len;
        total_lz += (size_t)n + 4;
        off += e.len;
        if (off > 2 * GZ_TRACY_FRAME_MAX)
            off = 0;
        e.len = 0;
    }
    *raw = (double)total_raw / (double)(zones / 3 * 3);
    *lz = (double)total_lz / (double)(zones / 3 * 3);
    gz_tracy_enc_free(&e);
    LZ4_freeStream(stream);
    free(window);
    free(out);
}

int main(int argc, char **argv)
{
    uint64_t zones = 300000;
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--zones"))
            zones = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
    }
    if (zones < 3 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: gz-bench-tracy [--zones N>=3] [--reps 1..100]\n");
        return 2;
    }
#ifdef GZ_BENCH_WITH_TRACY
    printf("Tracy client linked; a profiler is %sconnected\n", ___tracy_connected() ? "" : "not ");
#endif
    double gpu[100], cpu[100];
    for (int r = 0; r < reps; r++)
        gpu[r] = bench_sink(zones, &cpu[r]);
    double raw, lz;
    wire_bytes(zones, &raw, &lz);
    printf("Tracy sink, %s, %llu zones x %d repetitions (medians)\n", mode,
           (unsigned long long)zones, reps);
    printf("  worker CPU per GPU zone: %.1f ns\n", gz_bench_median(gpu, reps));
    if (!strcmp(mode, "listen"))
        printf("  worker CPU per CPU zone: %.1f ns\n", gz_bench_median(cpu, reps));
    printf("  listen mode, bytes per GPU zone: %.1f encoded, %.1f on the wire (LZ4)\n", raw, lz);
    return 0;
}
