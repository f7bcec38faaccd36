/* Tracks that end (gz_track_end) through the public client API: more
 * tracks made and ended, one after the other, than the client has ids, each
 * with a label track that shares its clock and outlives it. Checks that ids
 * are reused (no gz_track_new returns 0), that every zone is written and
 * the totals balance, that every track got a tid of its own in the trace,
 * and that the summary folds the tracks of one name into one line. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gz_check.h"
#include "gz_client.h"

#define ROUNDS 2100 /* two tracks each: more than the 4095 ids */

static void sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* A new track; when every id is in use, waits for the worker to release
 * ended ones (10 s at most: a worker slowed down by a sanitizer on a busy
 * machine lags well behind this loop). */
static uint16_t new_track(const char *name, uint16_t clock)
{
    for (int i = 0; i < 1000; i++) {
        uint16_t id = gz_track_new(GZ_API_VULKAN, name, 1.0, 64, clock);
        if (id)
            return id;
        sleep_ms(10);
    }
    return 0;
}

static bool zone(uint16_t track, uint32_t name, uint64_t ticks)
{
    gz_item z = {.type = GZ_ITEM_GPU_ZONE, .track = track, .name = name,
                 .flags = GZ_ZONE_LABEL << GZ_ITEM_KIND_SHIFT,
                 .zone = {.begin_ticks = ticks, .end_ticks = ticks + 1000}};
    return gz_emit_calib(track, ticks, gz_host_now_ns(), 1) && gz_emit(&z);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t number_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : UINT64_MAX;
}

int main(void)
{
    char dir[] = "/tmp/gz-track-end-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char trace[256], summary[256];
    snprintf(trace, sizeof trace, "%s/trace.json", dir);
    snprintf(summary, sizeof summary, "%s/summary.txt", dir);
    setenv("GPUZONES_OUTPUT", trace, 1);
    setenv("GPUZONES_SUMMARY", "1", 1);
    CHECK(gz_client_start());
    uint32_t name = gz_intern_cstr("work");
    bool seen[65536] = {false};
    bool reused = false;
    uint64_t zones = 0;
    for (int r = 0; r < ROUNDS; r++) {
        uint16_t queue = new_track("churn queue", 0);
        uint16_t labels = queue ? new_track("churn labels", queue) : 0;
        CHECK(queue && labels);
        reused |= seen[queue] || seen[labels];
        seen[queue] = seen[labels] = true;
        CHECK(zone(queue, name, 1000000 + (uint64_t)r * 10000));
        CHECK(zone(labels, name, 1000100 + (uint64_t)r * 10000));
        /* The clock's owner ends first: its label track keeps using it. */
        gz_track_end(queue);
        CHECK(zone(labels, name, 1002000 + (uint64_t)r * 10000));
        gz_track_end(labels);
        zones += 3;
    }
    CHECK(reused);
    /* The summary goes to stderr at stop: keep it in a file to read it
     * back. */
    int saved_err = dup(2);
    int fd = open(summary, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && saved_err >= 0);
    dup2(fd, 2);
    close(fd);
    gz_client_stop();
    fflush(stderr);
    dup2(saved_err, 2);

    char *json = read_file(trace);
    char *text = read_file(summary);
    CHECK(json != NULL && text != NULL);
    CHECK_U64(number_after(json, "\"zones_written\":"), zones);
    CHECK_U64(number_after(json, "\"zones_produced\":"), zones);
    CHECK_U64(number_after(json, "\"zones_dropped\":"), 0);

    /* The tids of the GPU zones: one per track made. */
    uint64_t *tids = malloc(zones * sizeof *tids);
    CHECK(tids != NULL);
    uint64_t n = 0;
    for (const char *p = json; (p = strstr(p, "\"cat\":\"gpu\"")) != NULL; p++) {
        const char *line = p;
        while (line > json && line[-1] != '\n')
            line--;
        uint64_t tid = number_after(line, "\"tid\":");
        CHECK(n < zones && tid != UINT64_MAX);
        tids[n++] = tid;
    }
    CHECK_U64(n, zones);
    qsort(tids, n, sizeof *tids, by_value);
    uint64_t distinct = 0;
    for (uint64_t i = 0; i < n; i++)
        distinct += i == 0 || tids[i] != tids[i - 1];
    CHECK_U64(distinct, 2 * ROUNDS);

    char want[128];
    snprintf(want, sizeof want, "track \"churn queue\" (\u00d7%d): %d zones, 0 dropped", ROUNDS,
             ROUNDS);
    if (!strstr(text, want)) {
        fprintf(stderr, "no line '%s' in the summary:\n%s\n", want, text);
        return 1;
    }
    snprintf(want, sizeof want, "track \"churn labels\" (\u00d7%d): %d zones, 0 dropped", ROUNDS,
             2 * ROUNDS);
    CHECK(strstr(text, want) != NULL);
    printf("track end: %d tracks made and ended, ids reused, %llu zones written\n", 2 * ROUNDS,
           (unsigned long long)zones);
    free(tids);
    free(json);
    free(text);
    unlink(trace);
    unlink(summary);
    rmdir(dir);
    return 0;
}
