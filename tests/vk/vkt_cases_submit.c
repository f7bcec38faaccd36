/* Submission paths (design case 7) and debug-utils labels (design case 8). */
#define _GNU_SOURCE
#include "vkt.h"

#include <stdio.h>

/* ---- case 7 -------------------------------------------------------------- */

#define SUBMIT_CMDS 6

static void record_labelled(struct vkt_cmd *c, const char *label, uint32_t add)
{
    vkt_cmd_begin(c, 0);
    vkt_cmd_label_begin(c, label);
    vkt_cmd_work(c, add);
    vkt_cmd_label_end(c);
    vkt_cmd_end(c);
}

static struct vkt_batch batch(int n, struct vkt_cmd *a, struct vkt_cmd *b, struct vkt_cmd *c)
{
    struct vkt_batch out = { n, { a, b, c } };
    return out;
}

int case_submit(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_V12_V13, NULL);
    struct vkt_cmd cb[SUBMIT_CMDS];
    char name[VKT_NAME_MAX], label[VKT_NAME_MAX];
    for (int i = 0; i < SUBMIT_CMDS; i++) {
        snprintf(name, sizeof name, "cb%d", i);
        snprintf(label, sizeof label, "L%d", i);
        vkt_cmd_alloc(d, d->pool, name, &cb[i]);
        record_labelled(&cb[i], label, (uint32_t)i);
    }
    struct vkt_batch b[3];

    /* vkQueueSubmit: one batch with several command buffers, fence */
    b[0] = batch(3, &cb[0], &cb[1], &cb[2]);
    vkt_submit(d, VKT_SUBMIT1, 1, b, VKT_WAIT_FENCE, false);

    /* vkQueueSubmit: several batches in one call, chained by semaphores */
    b[0] = batch(1, &cb[0], NULL, NULL);
    b[1] = batch(2, &cb[1], &cb[2], NULL);
    b[2] = batch(1, &cb[3], NULL, NULL);
    vkt_submit(d, VKT_SUBMIT1, 3, b, VKT_WAIT_FENCE, true);

    /* vkQueueSubmit2 (core), two batches, fence */
    b[0] = batch(1, &cb[4], NULL, NULL);
    b[1] = batch(2, &cb[5], &cb[0], NULL);
    vkt_submit(d, VKT_SUBMIT2, 2, b, VKT_WAIT_FENCE, false);

    /* vkQueueSubmit2KHR when VK_KHR_synchronization2 is exposed */
    int khr = d->submit2_khr != NULL;
    if (khr) {
        b[0] = batch(1, &cb[1], NULL, NULL);
        b[1] = batch(1, &cb[2], NULL, NULL);
        vkt_submit(d, VKT_SUBMIT2_KHR, 2, b, VKT_WAIT_FENCE, true);
    }
    truth_note("submit2_khr", khr);

    /* timeline semaphore waited on the host, both APIs */
    b[0] = batch(1, &cb[3], NULL, NULL);
    vkt_submit(d, VKT_SUBMIT1, 1, b, VKT_WAIT_TIMELINE, false);
    b[0] = batch(1, &cb[4], NULL, NULL);
    b[1] = batch(1, &cb[5], NULL, NULL);
    vkt_submit(d, VKT_SUBMIT2, 2, b, VKT_WAIT_TIMELINE, true);

    /* no fence: vkQueueWaitIdle, both APIs */
    b[0] = batch(1, &cb[0], NULL, NULL);
    vkt_submit(d, VKT_SUBMIT1, 1, b, VKT_WAIT_IDLE, false);
    b[0] = batch(1, &cb[1], NULL, NULL);
    vkt_submit(d, VKT_SUBMIT2, 1, b, VKT_WAIT_IDLE, false);

    /* several calls in flight before anyone waits */
    b[0] = batch(1, &cb[2], NULL, NULL);
    vkt_submit(d, VKT_SUBMIT1, 1, b, VKT_DEFER, false);
    b[0] = batch(1, &cb[3], NULL, NULL);
    vkt_submit(d, VKT_SUBMIT2, 1, b, VKT_DEFER, false);
    b[0] = batch(2, &cb[4], &cb[5], NULL);
    vkt_submit(d, VKT_SUBMIT1, 1, b, VKT_DEFER, false);
    vkt_finish_idle(d);

    for (int i = 0; i < SUBMIT_CMDS; i++)
        vkt_cmd_free(&cb[i]);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}

/* ---- case 8 -------------------------------------------------------------- */

static void nested_in_one(struct vkt_device *d, struct vkt_cmd *c)
{
    vkt_cmd_begin(c, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(c, "Outer");
    vkt_cmd_label_begin(c, "Middle");
    vkt_cmd_label_begin(c, "Inner A");
    vkt_cmd_work(c, 1);
    vkt_cmd_label_end(c);
    vkt_cmd_label_begin(c, "Inner B");
    vkt_cmd_work(c, 2);
    vkt_cmd_label_end(c);
    vkt_cmd_label_end(c);
    vkt_cmd_label_begin(c, "Sibling");
    vkt_cmd_work(c, 3);
    vkt_cmd_label_end(c);
    vkt_cmd_label_end(c);
    /* deep nesting */
    char label[VKT_NAME_MAX];
    for (int i = 0; i < 8; i++) {
        snprintf(label, sizeof label, "Depth %d", i);
        vkt_cmd_label_begin(c, label);
        vkt_cmd_work(c, (uint32_t)i);
    }
    for (int i = 0; i < 8; i++)
        vkt_cmd_label_end(c);
    vkt_cmd_end(c);
    vkt_submit1(c);
}

/* The first command buffer opens a label, the second closes it. */
static void record_span(struct vkt_cmd *first, struct vkt_cmd *second, const char *span,
                        const char *part1, const char *part2)
{
    vkt_cmd_begin(first, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(first, span);
    vkt_cmd_label_begin(first, part1);
    vkt_cmd_work(first, 4);
    vkt_cmd_label_end(first);
    vkt_cmd_end(first);
    vkt_cmd_begin(second, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(second, part2);
    vkt_cmd_work(second, 5);
    vkt_cmd_label_end(second);
    vkt_cmd_label_end(second); /* ends `span`, begun in `first` */
    vkt_cmd_end(second);
}

static void spans(struct vkt_device *d, struct vkt_cmd *x, struct vkt_cmd *y)
{
    /* same batch */
    record_span(x, y, "Span batch", "Batch part 1", "Batch part 2");
    struct vkt_batch b[2] = { { 2, { x, y } } };
    vkt_submit(d, VKT_SUBMIT1, 1, b, VKT_WAIT_FENCE, false);

    /* two batches of one call */
    record_span(x, y, "Span batches", "Batches part 1", "Batches part 2");
    b[0] = (struct vkt_batch){ 1, { x } };
    b[1] = (struct vkt_batch){ 1, { y } };
    vkt_submit(d, VKT_SUBMIT1, 2, b, VKT_WAIT_FENCE, true);

    /* two submissions, the first one waited for before the second */
    record_span(x, y, "Span submits", "Submit part 1", "Submit part 2");
    vkt_submit1(x);
    vkt_submit1(y);
}

static void queue_labels(struct vkt_device *d, struct vkt_cmd *x, struct vkt_cmd *y)
{
    vkt_queue_label_begin(d, "Queue region");
    vkt_cmd_begin(x, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(x, "Q1");
    vkt_cmd_work(x, 6);
    vkt_cmd_label_end(x);
    vkt_cmd_end(x);
    vkt_submit1(x);
    vkt_queue_label_begin(d, "Queue inner");
    vkt_cmd_begin(y, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(y, "Q2");
    vkt_cmd_work(y, 7);
    vkt_cmd_label_end(y);
    vkt_cmd_end(y);
    vkt_submit1(y);
    vkt_queue_label_end(d);
    vkt_queue_label_end(d);
}

int case_labels(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_FEATURES2_V12, NULL);
    struct vkt_cmd x, y;
    vkt_cmd_alloc(d, d->pool, "labels x", &x);
    vkt_cmd_alloc(d, d->pool, "labels y", &y);

    nested_in_one(d, &x);
    spans(d, &x, &y);
    queue_labels(d, &x, &y);

    vkt_cmd_free(&x);
    vkt_cmd_free(&y);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}

/* The same label shapes through VK_EXT_debug_marker (older engines and
 * tools still use it), with the command buffers and the queue named by
 * vkDebugMarkerSetObjectNameEXT. */
int case_markers(const struct vkt_args *a)
{
    (void)a;
    /* VK_EXT_debug_marker requires VK_EXT_debug_report */
    struct vkt_instance *inst = vkt_instance_create_with(VK_EXT_DEBUG_REPORT_EXTENSION_NAME);
    struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_DEBUG_MARKER, "Marker queue");
    struct vkt_cmd x, y;
    vkt_cmd_alloc(d, d->pool, "markers x", &x);
    vkt_cmd_alloc(d, d->pool, "markers y", &y);

    nested_in_one(d, &x);
    spans(d, &x, &y);

    vkt_cmd_free(&x);
    vkt_cmd_free(&y);
    vkt_device_destroy(d);
    vkt_instance_destroy(inst);
    return 0;
}
