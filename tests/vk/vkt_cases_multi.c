/* Several threads, devices and instances: design cases 6 and 11. */
#define _GNU_SOURCE
#include "vkt.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ---- case 6 -------------------------------------------------------------- */

#define THREADS_A 3
#define THREADS_B 2

struct recorder {
    pthread_t thread;
    struct vkt_device *dev;
    const char *device_tag;
    int index;
    int round;
    VkCommandPool pool; /* one pool per thread: pools are externally synchronised */
    struct vkt_cmd cmd;
};

static void *record_thread(void *arg)
{
    struct recorder *r = arg;
    char name[VKT_NAME_MAX];
    if (r->round == 0) {
        r->pool = vkt_pool_create(r->dev, 0);
        snprintf(name, sizeof name, "%s worker %d", r->device_tag, r->index);
        vkt_cmd_alloc(r->dev, r->pool, name, &r->cmd);
    } else {
        /* the pool has no reset-buffer flag: reset the whole pool */
        VKT_CHECK(vkResetCommandPool(r->dev->device, r->pool, 0));
        vkt_cmd_forget_ops(&r->cmd);
    }
    vkt_cmd_begin(&r->cmd, 0);
    snprintf(name, sizeof name, "%s round %d thread %d", r->device_tag, r->round, r->index);
    vkt_cmd_label_begin(&r->cmd, name);
    vkt_cmd_label_begin(&r->cmd, "Thread work");
    vkt_cmd_work(&r->cmd, (uint32_t)r->index);
    vkt_cmd_label_end(&r->cmd);
    vkt_cmd_label_end(&r->cmd);
    vkt_cmd_end(&r->cmd);
    return NULL;
}

static void record_all(struct recorder *r, int n, int round)
{
    for (int i = 0; i < n; i++) {
        r[i].round = round;
        if (pthread_create(&r[i].thread, NULL, record_thread, &r[i]) != 0)
            vkt_die("pthread_create failed");
    }
    for (int i = 0; i < n; i++)
        pthread_join(r[i].thread, NULL);
}

static void init_recorders(struct recorder *r, int n, struct vkt_device *d, const char *tag)
{
    memset(r, 0, (size_t)n * sizeof *r);
    for (int i = 0; i < n; i++) {
        r[i].dev = d;
        r[i].device_tag = tag;
        r[i].index = i;
    }
}

/* Device B's first submission comes from another thread than the main one,
 * so its CPU zone and flow start on that thread's track. */
static void *submit_b_thread(void *arg)
{
    struct recorder *r = arg;
    struct vkt_batch b[THREADS_B];
    for (int i = 0; i < THREADS_B; i++)
        b[i] = (struct vkt_batch){ 1, { &r[i].cmd } };
    vkt_submit(r[0].dev, VKT_SUBMIT1, THREADS_B, b, VKT_WAIT_FENCE, false);
    return NULL;
}

int case_threads(const struct vkt_args *a)
{
    struct vkt_instance *inst = vkt_instance_create();
    /* lavapipe has one queue: two devices are how this test gets two queues */
    struct vkt_device *da = vkt_device_create(inst, VKT_FEAT_V12_V13, "gz queue A");
    struct vkt_device *db = vkt_device_create(inst, VKT_FEAT_NONE, "gz queue B");
    struct recorder ra[THREADS_A], rb[THREADS_B];
    init_recorders(ra, THREADS_A, da, "A");
    init_recorders(rb, THREADS_B, db, "B");

    /* round 0: A's buffers in one batch from the main thread, B's from a
     * submitting thread, both devices busy at the same time */
    record_all(ra, THREADS_A, 0);
    record_all(rb, THREADS_B, 0);
    struct vkt_batch ba = { THREADS_A, { &ra[0].cmd, &ra[1].cmd, &ra[2].cmd } };
    int call_a = vkt_submit(da, VKT_SUBMIT1, 1, &ba, VKT_DEFER_FENCE, false);
    pthread_t submitter;
    if (pthread_create(&submitter, NULL, submit_b_thread, rb) != 0)
        vkt_die("pthread_create failed");
    vkt_finish_fence(da, call_a);
    pthread_join(submitter, NULL);

    /* round 1: re-recorded on the same threads; A gets one batch per thread
     * (vkQueueSubmit2, timeline), B one call per thread */
    record_all(ra, THREADS_A, 1);
    record_all(rb, THREADS_B, 1);
    struct vkt_batch b3[THREADS_A];
    for (int i = 0; i < THREADS_A; i++)
        b3[i] = (struct vkt_batch){ 1, { &ra[i].cmd } };
    vkt_submit(da, VKT_SUBMIT2, THREADS_A, b3, VKT_WAIT_TIMELINE, false);
    for (int i = 0; i < THREADS_B; i++)
        vkt_submit1(&rb[i].cmd);

    for (int i = 0; i < THREADS_A; i++)
        vkDestroyCommandPool(da->device, ra[i].pool, NULL);
    for (int i = 0; i < THREADS_B; i++)
        vkDestroyCommandPool(db->device, rb[i].pool, NULL);
    vkt_device_destroy(da);
    vkt_device_destroy(db);
    vkt_instance_destroy(inst);
    return 0;
}

/* ---- case 11 -------------------------------------------------------------- */

static void labelled_submit(struct vkt_cmd *c, const char *label, uint32_t add)
{
    vkt_cmd_begin(c, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(c, label);
    vkt_cmd_work(c, add);
    vkt_cmd_label_end(c);
    vkt_cmd_end(c);
    vkt_submit1(c);
}

int case_instances(const struct vkt_args *a)
{
    /* two instances, each with a device, alive at the same time */
    struct vkt_instance *i0 = vkt_instance_create();
    struct vkt_instance *i1 = vkt_instance_create();
    struct vkt_device *d0 = vkt_device_create(i0, VKT_FEAT_V12_V13, NULL);
    struct vkt_device *d1 = vkt_device_create(i1, VKT_FEAT_NONE, NULL);
    struct vkt_cmd c0, c1;
    vkt_cmd_alloc(d0, d0->pool, "instance 0 cmdbuf", &c0);
    vkt_cmd_alloc(d1, d1->pool, "instance 1 cmdbuf", &c1);

    labelled_submit(&c0, "Instance 0 first", 1);
    labelled_submit(&c1, "Instance 1 first", 2);
    labelled_submit(&c0, "Instance 0 second", 3);
    labelled_submit(&c1, "Instance 1 last", 4);
    /* destroyed right after the fence wait: the layer has not read the
     * results yet, and still has to either write them or drop them cleanly */
    vkt_device_destroy(d1);
    labelled_submit(&c0, "Instance 0 after device 1", 5);
    vkt_instance_destroy(i1);
    labelled_submit(&c0, "Instance 0 after instance 1", 6);

    /* a device created and destroyed straight away after one submission */
    struct vkt_device *d2 = vkt_device_create(i0, VKT_FEAT_FEATURES2_V12, NULL);
    struct vkt_cmd c2;
    vkt_cmd_alloc(d2, d2->pool, "short-lived cmdbuf", &c2);
    labelled_submit(&c2, "Short-lived device", 7);
    vkt_device_destroy(d2);
    labelled_submit(&c0, "Instance 0 last", 8);

    vkt_cmd_free(&c0);
    vkt_device_destroy(d0);
    vkt_instance_destroy(i0);
    return 0;
}
