/* A program with its own Tracy client (linked with libTracyClient.so): it
 * makes CPU zones of its own ("app frame", one per frame), takes a GPU
 * context id for itself the way TracyVkContext does and puts one GPU zone on
 * it, and then, on a second thread standing for gpuzones' worker, drives the
 * Tracy sink in auto mode with GPU zones that ran inside each frame's CPU
 * window. Prints for the checker:
 *   W <frame> <begin> <end>          a CPU window (host CLOCK_MONOTONIC ns)
 *   G <name> <frame> <begin> <dur>   a GPU zone (host ns)
 * Tracy's C API is declared here from TracyC.h's facts (no Tracy header). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gz_config.h"
#include "gz_tracy.h"

struct tracy_zone_ctx {
    uint32_t id;
    int32_t active;
};
struct tracy_new_context {
    int64_t gpuTime;
    float period;
    uint8_t context, flags, type;
};
struct tracy_zone_begin {
    uint64_t srcloc;
    uint16_t queryId;
    uint8_t context;
};
struct tracy_zone_end {
    uint16_t queryId;
    uint8_t context;
};
struct tracy_gpu_time {
    int64_t gpuTime;
    uint16_t queryId;
    uint8_t context;
};
uint64_t ___tracy_alloc_srcloc(uint32_t line, const char *source, size_t source_len,
                               const char *function, size_t function_len, uint32_t color);
struct tracy_zone_ctx ___tracy_emit_zone_begin_alloc(uint64_t srcloc, int32_t active);
void ___tracy_emit_zone_end(struct tracy_zone_ctx ctx);
int32_t ___tracy_connected(void);
void ___tracy_emit_gpu_new_context_serial(struct tracy_new_context);
void ___tracy_emit_gpu_zone_begin_alloc_serial(struct tracy_zone_begin);
void ___tracy_emit_gpu_zone_end_serial(struct tracy_zone_end);
void ___tracy_emit_gpu_time_serial(struct tracy_gpu_time);
/* tracy::GetGpuCtxCounter(): std::atomic<uint8_t>& */
uint8_t *tracy_gpu_ctx_counter(void) __asm__("_ZN5tracy16GetGpuCtxCounterEv");

#define FRAMES 20

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_until(uint64_t t)
{
    while (now_ns() < t) {
    }
}

static uint64_t win_begin[FRAMES], win_end[FRAMES];

static void gpu(gz_sink *s, uint16_t track, const char *name, int frame, uint64_t b, uint64_t dur)
{
    gz_sink_zone z = {
        .track = track, .name = name, .name_len = strlen(name), .begin_ns = b, .end_ns = b + dur};
    s->ops->gpu_zone(s->self, &z);
    printf("G %s %d %llu %llu\n", name, frame, (unsigned long long)b, (unsigned long long)dur);
}

/* gpuzones' worker: results come back after the frames ran. */
static void *worker(void *arg)
{
    (void)arg;
    gz_config cfg;
    gz_config_read(&cfg, "inproc", 0);
    gz_sink s;
    if (!gz_tracy_sink_open(&cfg, NULL, &s)) {
        printf("X sink did not open\n");
        return NULL;
    }
    gz_sink_track t = {.id = 1,
                       .api = GZ_API_VULKAN,
                       .name = "Graphics queue",
                       .name_len = 14,
                       .period_ns = 1.0,
                       .valid_bits = 64};
    s.ops->track_new(s.self, &t);
    /* As the worker: tracks are made long before their first zones, with
     * drain cycles in between. */
    for (int i = 0; i < 10; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
        s.ops->flush(s.self);
    }
    for (int f = 0; f < FRAMES; f++) {
        uint64_t b = win_begin[f];
        /* Nested two deep, then a zone that overlaps without nesting (it
         * goes to a second context, a lane). */
        gpu(&s, 1, "gpu frame", f, b + 200000, 1200000);
        gpu(&s, 1, "gpu pass", f, b + 300000, 500000);
        gpu(&s, 1, "async compute", f, b + 1000000, 600000);
        s.ops->flush(s.self);
    }
    gz_sink_totals tot = {0};
    s.ops->close(s.self, &tot);
    return NULL;
}

int main(void)
{
    /* Wait for the profiler (tracy-capture) so nothing is lost at exit. */
    for (int i = 0; i < 1000 && !___tracy_connected(); i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    /* The program's own GPU context, as TracyVkContext makes it. */
    uint8_t own = __atomic_fetch_add(tracy_gpu_ctx_counter(), 1, __ATOMIC_SEQ_CST);
    int64_t own_t = (int64_t)now_ns();
    ___tracy_emit_gpu_new_context_serial(
        (struct tracy_new_context){own_t, 1.0f, own, 0, 2 /* Vulkan */});
    uint64_t own_loc = ___tracy_alloc_srcloc(7, "app.c", 5, "own gpu zone", 12, 0);
    ___tracy_emit_gpu_zone_begin_alloc_serial((struct tracy_zone_begin){own_loc, 0, own});
    ___tracy_emit_gpu_time_serial((struct tracy_gpu_time){own_t + 100000, 0, own});
    ___tracy_emit_gpu_zone_end_serial((struct tracy_zone_end){1, own});
    ___tracy_emit_gpu_time_serial((struct tracy_gpu_time){own_t + 350000, 1, own});

    for (int f = 0; f < FRAMES; f++) {
        uint64_t loc = ___tracy_alloc_srcloc(42, "app.c", 5, "app frame", 9, 0);
        struct tracy_zone_ctx z = ___tracy_emit_zone_begin_alloc(loc, 1);
        win_begin[f] = now_ns();
        spin_until(win_begin[f] + 2000000);
        win_end[f] = now_ns();
        ___tracy_emit_zone_end(z);
        printf("W %d %llu %llu\n", f, (unsigned long long)win_begin[f],
               (unsigned long long)win_end[f]);
    }
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    pthread_join(th, NULL);
    fflush(stdout);
    return 0;
}
