/* gz-sample-vk-passes: main loop, options, the host's checks of the
 * results (vk_passes.h says what a frame holds).
 *
 *   gz-sample-vk-passes [--frames N] [--warmup N] [--extra-draws N]
 *                       [--extra-passes N] [--extra-dispatches N] [--rounds N]
 *                       [--truth FILE]
 *
 * GZ_TEST_APP_LAYERS=A:B: layers the program enables itself (the tests
 * put the validation layer or a counting layer below gpuzones that way).
 * Exit status: 0, 1 when the GPU's results are wrong, 2 on a Vulkan
 * error, 3 when the validation layer reported errors, 77 when the device
 * lacks what the program needs. The last line of stdout is key=value
 * pairs: what a frame holds and the program's own CPU time. */
#define _GNU_SOURCE
#include "vk_passes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STORAGE_MIXED 1024u   /* elements the mix dispatch (4×4 groups of 64) works on */
#define STORAGE_SCRAMBLED 1024u /* elements the scramble dispatch (16 groups of 64) works on */

void passes_check(VkResult r, const char *what, const char *file, int line)
{
    if (r != VK_SUCCESS)
        passes_die(2, "%s:%d: %s returned %d", file, line, what, (int)r);
}

void passes_die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(status == 77 ? stdout : stderr, "gz-sample-vk-passes: %s", status == 77 ? "skipped: " : "");
    vfprintf(status == 77 ? stdout : stderr, fmt, ap);
    fputc('\n', status == 77 ? stdout : stderr);
    va_end(ap);
    exit(status);
}

uint64_t passes_now_ns(void)
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

/* ---- the host's checks -------------------------------------------------------- */

static uint32_t mixed(uint32_t x, uint32_t rounds, uint32_t salt)
{
    for (uint32_t r = 0; r < rounds; r++)
        x = x * 1664525u + 1013904223u + salt;
    return x;
}

/* What the compute pass leaves in the storage buffer, and the post pass in
 * the readback buffer (the tonemap color everywhere). */
static bool results_right(const struct passes_app *app, unsigned frame)
{
    const uint32_t *v = app->storage.mapped;
    uint32_t mix = mixed(frame, app->opt.rounds, frame);
    /* scrambling twice gives back what was there */
    bool scrambled = app->opt.extra_dispatches % 2 == 0;
    for (uint32_t i = 0; i < STORAGE_SCRAMBLED; i++) {
        uint32_t want = (i < STORAGE_MIXED ? mix : frame) ^ (scrambled ? (i * 2654435761u) ^ frame : 0);
        if (v[i] != want)
            return false;
    }
    for (uint32_t i = STORAGE_SCRAMBLED; i < app->storage.size / 4; i++)
        if (v[i] != frame)
            return false;
    const uint8_t want[4] = {64, 128, 191, 255}; /* 0.25, 0.5, 0.75, 1 */
    const uint8_t *px = app->readback.mapped;
    for (uint32_t i = 0; i < app->readback.size / 4; i++)
        for (int c = 0; c < 4; c++)
            if (px[4 * i + c] + 1 < want[c] || px[4 * i + c] > want[c] + 1)
                return false;
    return true;
}

/* ---- frames ------------------------------------------------------------------- */

/* One vkQueueSubmit of the frame's command buffer (the callgrind figures of
 * bench/run count what runs inside it). */
__attribute__((noinline)) void passes_submit_frame(struct passes_app *app)
{
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &app->frame_cb,
    };
    PASSES_CHECK(vkQueueSubmit(app->queue, 1, &si, app->fence));
}

static void run_frame(struct passes_app *app, unsigned frame)
{
    bool timed = frame >= app->opt.warmup;
    app->frame = app->truth ? &app->truth[frame] : NULL;
    if (app->queries)
        vkResetQueryPool(app->device, app->queries, 0, app->nqueries);
    uint64_t c0 = thread_cpu_ns();
    passes_record_frame(app, frame);
    uint64_t c1 = thread_cpu_ns();
    uint64_t submit_ns = passes_now_ns();
    passes_submit_frame(app);
    uint64_t c2 = thread_cpu_ns();
    PASSES_CHECK(vkWaitForFences(app->device, 1, &app->fence, VK_TRUE, UINT64_MAX));
    uint64_t done_ns = passes_now_ns();
    PASSES_CHECK(vkResetFences(app->device, 1, &app->fence));
    if (timed) {
        app->record_cpu_ns += c1 - c0;
        app->submit_cpu_ns += c2 - c1;
    }
    if (app->frame) {
        app->frame->submit_ns = submit_ns;
        app->frame->done_ns = done_ns;
        passes_read_timestamps(app);
    }
    if (!results_right(app, frame)) {
        fprintf(stderr, "gz-sample-vk-passes: frame %u: the GPU's results are not the host's\n", frame);
        app->wrong_frames++;
    }
}

/* ---- options ------------------------------------------------------------------ */

static unsigned parse_uint(const char *s, const char *opt, unsigned max)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v > max) {
        fprintf(stderr, "gz-sample-vk-passes: bad value for %s: %s (0 to %u)\n", opt, s, max);
        exit(1);
    }
    return (unsigned)v;
}

static void parse_options(int argc, char **argv, struct passes_options *o)
{
    /* Little compute work by default: on lavapipe a dispatch's time shows up
     * before the timestamps around it (tests/passes/README.md), where it
     * would only blur the tests' comparisons. */
    *o = (struct passes_options){.frames = 5, .rounds = 16};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 < argc && strcmp(a, "--frames") == 0)
            o->frames = parse_uint(argv[++i], a, 1000000);
        else if (i + 1 < argc && strcmp(a, "--warmup") == 0)
            o->warmup = parse_uint(argv[++i], a, 1000000);
        else if (i + 1 < argc && strcmp(a, "--extra-draws") == 0)
            o->extra_draws = parse_uint(argv[++i], a, 100000);
        else if (i + 1 < argc && strcmp(a, "--extra-passes") == 0)
            o->extra_passes = parse_uint(argv[++i], a, 10000);
        else if (i + 1 < argc && strcmp(a, "--extra-dispatches") == 0)
            o->extra_dispatches = parse_uint(argv[++i], a, 10000);
        else if (i + 1 < argc && strcmp(a, "--rounds") == 0)
            o->rounds = parse_uint(argv[++i], a, 60000); /* llvmpipe stops a loop at 65535 */
        else if (i + 1 < argc && strcmp(a, "--truth") == 0)
            o->truth = argv[++i];
        else {
            fprintf(stderr, "usage: gz-sample-vk-passes [--frames N] [--warmup N] [--extra-draws N] "
                            "[--extra-passes N] [--extra-dispatches N] [--rounds N] [--truth FILE]\n");
            exit(1);
        }
    }
    if (o->frames == 0) {
        fprintf(stderr, "gz-sample-vk-passes: --frames must be at least 1\n");
        exit(1);
    }
    if (o->truth && (o->extra_draws > PASSES_MAX_REGION_COMMANDS - 8 ||
                     o->extra_passes + o->extra_dispatches > PASSES_MAX_REGIONS - 16 ||
                     o->warmup + o->frames > 10000)) {
        fprintf(stderr, "gz-sample-vk-passes: with --truth, at most %d extra draws, %d extra passes and "
                        "dispatches and 10000 frames\n", PASSES_MAX_REGION_COMMANDS - 8, PASSES_MAX_REGIONS - 16);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    static struct passes_app app;
    parse_options(argc, argv, &app.opt);
    unsigned nframes = app.opt.warmup + app.opt.frames;
    if (app.opt.truth) {
        app.truth = calloc(nframes, sizeof *app.truth);
        if (!app.truth)
            passes_die(2, "out of memory");
    }
    passes_create_instance(&app);
    passes_create_device(&app);
    passes_create_resources(&app);
    passes_create_pipelines(&app);
    passes_record_secondary(&app);
    for (unsigned f = 0; f < nframes; f++)
        run_frame(&app, f);
    PASSES_CHECK(vkDeviceWaitIdle(app.device));
    bool truth_ok = !app.opt.truth || passes_write_truth(&app);
    passes_destroy(&app);
    free(app.truth);

    printf("gz-sample-vk-passes: %u frames on %s: %u render pass instances and %u commands a frame, "
           "results %s\n", nframes, app.props.deviceName, app.passes_recorded / nframes,
           app.commands_recorded / nframes, app.wrong_frames ? "WRONG" : "OK");
    printf("frames=%u warmup=%u passes_per_frame=%u commands_per_frame=%u cmdbufs_per_frame=1 "
           "submits_per_frame=1 record_ns_per_frame=%llu submit_ns_per_frame=%llu main_tid=%ld\n",
           app.opt.frames, app.opt.warmup, app.passes_recorded / nframes, app.commands_recorded / nframes,
           (unsigned long long)(app.record_cpu_ns / app.opt.frames),
           (unsigned long long)(app.submit_cpu_ns / app.opt.frames), (long)syscall(SYS_gettid));
    if (app.validation_errors) {
        fprintf(stderr, "gz-sample-vk-passes: %d validation errors\n", app.validation_errors);
        return 3;
    }
    if (!truth_ok)
        return 2;
    return app.wrong_frames ? 1 : 0;
}
