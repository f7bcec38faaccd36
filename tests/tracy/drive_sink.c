/* Drives the Tracy sink the way the worker does (every call from this one
 * thread, GPU zones parents first per track), with a fixed script, and
 * prints what a profiler must end up with, one line each:
 *   G <name> <begin> <duration>          a GPU zone
 *   C <name> <tid> <begin> <duration>    a CPU zone
 *   M <text> <time>                      a message
 *   F <time>                             a frame mark (default set)
 * Times are ns from the script's base. The sink's own "gpuzones:" lines go
 * to stderr. The configuration comes from the environment (GPUZONES_TRACY,
 * GPUZONES_TRACY_PORT, GPUZONES_TRACY_EXIT_WAIT_MS). Exits 2 when the
 * sink does not open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gz_config.h"
#include "gz_tracy.h"

static gz_sink sink;
static uint64_t base;

static void track(uint16_t id, gz_track_api api, const char *name)
{
    gz_sink_track t = {.id = id,
                       .api = api,
                       .clock_track = id,
                       .name = name,
                       .name_len = strlen(name),
                       .period_ns = 1.0,
                       .valid_bits = 64};
    sink.ops->track_new(sink.self, &t);
}

static void gpu(uint16_t track_id, const char *name, const gz_srcloc_view *loc, uint64_t begin,
                uint64_t dur)
{
    gz_sink_zone z = {.track = track_id,
                      .name = name,
                      .name_len = strlen(name),
                      .loc = loc,
                      .begin_ns = base + begin,
                      .end_ns = base + begin + dur};
    sink.ops->gpu_zone(sink.self, &z);
    printf("G %s %llu %llu\n", name, (unsigned long long)begin, (unsigned long long)dur);
}

static void cpu(uint32_t tid, const char *name, uint64_t begin, uint64_t dur)
{
    sink.ops->cpu_zone(sink.self, tid, name, strlen(name), base + begin, base + begin + dur);
    printf("C %s %u %llu %llu\n", name, tid, (unsigned long long)begin, (unsigned long long)dur);
}

int main(void)
{
    gz_config cfg;
    gz_config_read(&cfg, "drive", 0);
    if (!gz_tracy_sink_open(&cfg, NULL, &sink))
        return 2;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    base = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + 1000000;

    sink.ops->thread_name(sink.self, 1001, "render thread", 13);
    sink.ops->thread_name(sink.self, 1002, "upload thread", 13);
    track(1, GZ_API_VULKAN, "Graphics queue");
    track(2, GZ_API_OPENCL, "CL queue");
    track(3, GZ_API_OPENGL, "GL context");
    gz_srcloc_view shadow = {.name = "shadow pass",
                             .name_len = 11,
                             .function = "render_scene",
                             .function_len = 12,
                             .file = "scene.c",
                             .file_len = 7,
                             .line = 42,
                             .color = 0x336699};

    const int frames = 40;
    for (int f = 0; f < frames; f++) {
        uint64_t t = (uint64_t)f * 1000000; /* 1 ms per frame */
        cpu(1001, "vkQueueSubmit", t, 20000);
        /* Nested three deep, parents first. */
        gpu(1, "submit", NULL, t + 30000, 500000);
        gpu(1, "cmdbuf A", NULL, t + 30000, 200000);
        gpu(1, "draw", NULL, t + 40000, 50000);
        gpu(1, "draw", NULL, t + 100000, 50000);
        gpu(1, "cmdbuf B", NULL, t + 250000, 250000);
        /* Two kernels that overlap without nesting: the second needs a
         * lane of its own. */
        gpu(2, "kernel x", NULL, t + 10000, 100000);
        gpu(2, "kernel y", NULL, t + 60000, 100000);
        gpu(3, "shadow pass", &shadow, t + 5000, 70000);
        cpu(1002, "vkWaitForFences", t + 600000, 300000);
        sink.ops->frame_mark(sink.self, 1001, "Frame", 5, base + t + 999000);
        printf("F %llu\n", (unsigned long long)(t + 999000));
        if (f % 10 == 9) {
            char msg[64];
            int n = snprintf(msg, sizeof msg, "frame %d done", f);
            sink.ops->message(sink.self, 1001, msg, (size_t)n, base + t + 999500);
            printf("M %s %llu\n", msg, (unsigned long long)(t + 999500));
        }
        if (f == 19) {
            /* The CL queue goes away; its id comes back as a new track. */
            sink.ops->track_end(sink.self, 2);
            track(2, GZ_API_OPENCL, "CL queue (second)");
        }
        sink.ops->flush(sink.self);
    }
    /* Deltas past 32 bits (the 64-bit encodings), and a CPU zone that
     * arrives out of its thread's order (dropped, not sent). */
    uint64_t t = (uint64_t)frames * 1000000;
    cpu(1002, "long wait", t, 5000000000ull);
    gpu(1, "long copy", NULL, t + 6000000000ull, 123456);
    sink.ops->cpu_zone(sink.self, 1002, "late", 4, base + t + 10, base + t + 20);
    sink.ops->flush(sink.self);
    fflush(stdout);
    gz_sink_totals totals = {0};
    sink.ops->close(sink.self, &totals);
    return 0;
}
