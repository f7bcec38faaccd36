/* gz-test-vk --case NAME --truth FILE [--count N]
 *
 * Runs one purpose-built Vulkan case and writes the truth JSON.  Exit codes:
 * 0 ok, 1 usage, 2 a Vulkan or program error (see stderr), 77 (VKT_SKIP)
 * the device lacks what the case needs (it says what on stdout).
 * GZ_TEST_APP_LAYERS=A:B: the program enables these layers itself, A nearest
 * the application (see vkt_vulkan.c). */
#define _GNU_SOURCE
#include "vkt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct case_entry {
    const char *name;
    int (*run)(const struct vkt_args *a);
    const char *what;
};

static const struct case_entry cases[] = {
    { "onetime", case_onetime, "1: one-time-submit primary command buffers" },
    { "reuse", case_reuse, "2: one command buffer submitted N times" },
    { "unsubmitted", case_unsubmitted, "4: recorded, never submitted, freed, reset; then real work" },
    { "threads", case_threads, "6: recording on several threads, two devices" },
    { "submit", case_submit, "7: vkQueueSubmit/2/2KHR, fence, timeline, no fence, batches" },
    { "labels", case_labels, "8: nested labels, labels across command buffers and submits, queue labels" },
    { "markers", case_markers, "8 through VK_EXT_debug_marker (needs the validation layer on lavapipe)" },
    { "instances", case_instances, "11: two instances, devices destroyed right after their work" },
    { "simultaneous", case_simultaneous, "3: a SIMULTANEOUS_USE buffer, two executions pending at once" },
    { "secondary", case_secondary, "5: secondary command buffers, outside and inside a render pass" },
    { "readonly", case_readonly, "the device's create info in read-only memory" },
    { "families", case_families, "6, 9: a second queue, transfer-only families, one without "
                                 "timestamps (needs the fault layer's families)" },
    { "workload", case_workload, "a ~20 ms dispatch timed on the CPU" },
    { "multiview", case_multiview, "labels in multiview subpasses, secondaries and dynamic "
                                   "rendering with a view mask" },
    { "suspend", case_suspend, "dynamic rendering suspended in one command buffer, resumed in "
                               "the next" },
    { "protected", case_protected, "a protected command pool and a protected-capable queue "
                                   "(needs protectedMemory)" },
    { "secondary-frames", case_secondary_frames, "5: one secondary executed by the one-time "
                                                 "primaries of successive frames" },
    { "timeline-wait", case_timeline_wait, "2: reusable command buffers submitted again after "
                                           "waits on the app's timeline semaphores" },
};

static void usage(void)
{
    fprintf(stderr, "usage: gz-test-vk --case NAME --truth FILE [--count N]\ncases:\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        fprintf(stderr, "  %-16s %s\n", cases[i].name, cases[i].what);
    exit(1);
}

static void parse_args(int argc, char **argv, struct vkt_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--case") == 0 && next) {
            a->case_name = next;
            i++;
        } else if (strcmp(argv[i], "--truth") == 0 && next) {
            a->truth_path = next;
            i++;
        } else if (strcmp(argv[i], "--count") == 0 && next) {
            a->count = atoi(next);
            i++;
        } else {
            usage();
        }
    }
    if (!a->case_name)
        usage();
}

int main(int argc, char **argv)
{
    struct vkt_args a = { 0 };
    parse_args(argc, argv, &a);
    const struct case_entry *c = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(cases[i].name, a.case_name) == 0)
            c = &cases[i];
    if (!c)
        usage();

    truth_init(c->name);
    int rc = c->run(&a);
    if (rc == VKT_SKIP) {
        printf("gz-test-vk: case %s skipped\n", c->name);
        return VKT_SKIP;
    }
    if (truth_error_count() > 0) {
        fprintf(stderr, "gz-test-vk: the case itself nested its labels wrongly\n");
        rc = 2;
    }
    if (a.truth_path && !truth_write(a.truth_path))
        rc = 2;
    printf("gz-test-vk: case %s done (%s)\n", c->name, rc == 0 ? "ok" : "FAILED");
    return rc;
}
