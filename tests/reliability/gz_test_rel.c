/* gz-test-rel: Vulkan programs that do what breaks timing layers (errors
 * from the driver, fork, exit while other threads submit, command buffers
 * freed before their zones are read back). Nothing here knows about
 * gpuzones: check_rel.py runs each mode with and without the layer and
 * compares what the program saw and printed.
 *
 *   gz-test-rel submit-errors N   N submits, one command buffer each, labelled
 *                                 "submit <i>"; prints "result <i> <VkResult>";
 *                                 carries on after errors
 *   gz-test-rel fork-noexec       submits, fork()s a child that exits, submits
 *   gz-test-rel fork-exec         submits, fork()s a child that execs
 *                                 "gz-test-rel exec-child", submits
 *   gz-test-rel exit-threads      two threads submit in a loop; main calls exit()
 *   gz-test-rel free-pending N    N command buffers submitted, each freed as soon
 *                                 as its fence signals
 *   gz-test-rel bad-names         labels with quotes, control characters,
 *                                 invalid UTF-8 and a megabyte of text
 *
 * Load on the layer's timestamp entries (each command buffer a small fill
 * inside a label "work"; prints what it submitted, "made <batches>
 * <command buffers>"):
 *   gz-test-rel batches N [M]     one batch of N command buffers; waits; then
 *                                 one batch of M (if given)
 *   gz-test-rel singles N         N + 1 one-buffer submits without waiting
 *                                 (each its own buffer), then vkQueueWaitIdle
 *   gz-test-rel loop N K          N one-buffer submits, a fence every K: the
 *                                 K buffers of a ring, each submitted again
 *                                 once the fence after it signalled
 *   gz-test-rel rate HZ S         the same paced at HZ per second for S
 *                                 seconds, a fence every 100
 *   gz-test-rel resubmit N K      N submits of ONE buffer, a fence every K:
 *                                 resubmitted while it is still pending,
 *                                 which Vulkan forbids without
 *                                 SIMULTANEOUS_USE (a program's bug the layer
 *                                 must survive)
 *
 *   gz-test-rel churn N           N devices one after the other, each with a
 *                                 queue, a pool and two labelled submits; every
 *                                 third destroyed with its pool still alive;
 *                                 prints "rss <kB after 10%> <kB at the end>"
 *   gz-test-rel small             one device, three labelled submits (the
 *                                 allocation-failure sweep's program) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vkt.h"

struct app {
    struct vkt_instance *inst;
    struct vkt_device *dev;
};

static void app_open(struct app *a, const char *queue_name)
{
    a->inst = vkt_instance_create();
    a->dev = vkt_device_create(a->inst, VKT_FEAT_NONE, queue_name);
}

static void app_close(struct app *a)
{
    vkt_device_destroy(a->dev);
    vkt_instance_destroy(a->inst);
}

/* Records "label" around a little work into c (allocated from pool). */
static void record(struct vkt_device *d, VkCommandPool pool, const char *label, struct vkt_cmd *c)
{
    vkt_cmd_alloc(d, pool, label, c);
    vkt_cmd_begin(c, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkt_cmd_label_begin(c, label);
    vkt_cmd_work(c, 1);
    vkt_cmd_label_end(c);
    vkt_cmd_end(c);
}

/* Submits c alone with fence; waits for it when the submit worked. */
static VkResult submit_wait(struct vkt_device *d, VkCommandBuffer cb, VkFence fence)
{
    VkSubmitInfo info = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                         .commandBufferCount = 1,
                         .pCommandBuffers = &cb};
    VkResult r = vkQueueSubmit(d->queue, 1, &info, fence);
    if (r == VK_SUCCESS) {
        VKT_CHECK(vkWaitForFences(d->device, 1, &fence, VK_TRUE, UINT64_MAX));
        VKT_CHECK(vkResetFences(d->device, 1, &fence));
    }
    return r;
}

static void submit_labelled(struct vkt_device *d, const char *label, int n)
{
    for (int i = 0; i < n; i++) {
        struct vkt_cmd c;
        record(d, d->pool, label, &c);
        VKT_CHECK(submit_wait(d, c.cb, d->fence));
        vkt_cmd_free(&c);
    }
}

static int mode_submit_errors(int n)
{
    struct app a;
    app_open(&a, "rel queue");
    for (int i = 1; i <= n; i++) {
        char label[32];
        snprintf(label, sizeof label, "submit %d", i);
        struct vkt_cmd c;
        record(a.dev, a.dev->pool, label, &c);
        VkResult r = submit_wait(a.dev, c.cb, a.dev->fence);
        printf("result %d %d\n", i, (int)r);
        fflush(stdout);
        if (r == VK_ERROR_DEVICE_LOST) {
            /* A lost device: the app may only destroy things now. Leaking
             * the command buffer is what a real app would do in a hurry;
             * freeing it is allowed too. */
            vkt_cmd_free(&c);
            continue;
        }
        vkt_cmd_free(&c);
    }
    app_close(&a);
    return 0;
}

static int mode_fork(const char *self, bool exec_child)
{
    struct app a;
    app_open(&a, "rel queue");
    submit_labelled(a.dev, "before fork", 3);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        vkt_die("fork failed");
    if (pid == 0) {
        if (exec_child) {
            execl(self, self, "exec-child", (char *)NULL);
            _exit(127);
        }
        /* No Vulkan in a forked child (it is not fork-safe); exit() runs
         * the atexit handlers the child inherited. */
        printf("child %d done\n", (int)getpid());
        exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        vkt_die("waitpid failed");
    printf("child-exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    submit_labelled(a.dev, "after fork", 3);
    app_close(&a);
    return 0;
}

static int mode_exec_child(void)
{
    struct app a;
    app_open(&a, "child queue");
    submit_labelled(a.dev, "exec child", 3);
    app_close(&a);
    printf("exec-child %d done\n", (int)getpid());
    return 0;
}

struct thread_arg {
    struct vkt_device *d;
    pthread_mutex_t *queue_lock;
    int index;
};

static void *submitter(void *p)
{
    struct thread_arg *t = p;
    VkCommandPool pool = vkt_pool_create(t->d, 0);
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    VKT_CHECK(vkCreateFence(t->d->device, &fi, NULL, &fence));
    char label[32];
    snprintf(label, sizeof label, "thread %d", t->index);
    for (;;) { /* until main calls exit() */
        struct vkt_cmd c;
        record(t->d, pool, label, &c);
        VkSubmitInfo info = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                             .commandBufferCount = 1,
                             .pCommandBuffers = &c.cb};
        pthread_mutex_lock(t->queue_lock);
        VkResult r = vkQueueSubmit(t->d->queue, 1, &info, fence);
        pthread_mutex_unlock(t->queue_lock);
        if (r != VK_SUCCESS)
            vkt_die("submit failed: %d", (int)r);
        vkWaitForFences(t->d->device, 1, &fence, VK_TRUE, UINT64_MAX);
        vkResetFences(t->d->device, 1, &fence);
        vkt_cmd_free(&c);
    }
    return NULL;
}

static int mode_exit_threads(void)
{
    static struct app a;
    app_open(&a, "rel queue");
    static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
    static struct thread_arg args[2];
    for (int i = 0; i < 2; i++) {
        args[i] = (struct thread_arg){.d = a.dev, .queue_lock = &queue_lock, .index = i};
        pthread_t th;
        if (pthread_create(&th, NULL, submitter, &args[i]))
            vkt_die("pthread_create failed");
    }
    vkt_sleep_ms(300);
    printf("exiting\n");
    fflush(stdout);
    exit(0);
}

static int mode_free_pending(int n)
{
    struct app a;
    app_open(&a, "rel queue");
    for (int i = 0; i < n; i++) {
        char label[32];
        snprintf(label, sizeof label, "freed %d", i + 1);
        struct vkt_cmd c;
        record(a.dev, a.dev->pool, label, &c);
        VKT_CHECK(submit_wait(a.dev, c.cb, a.dev->fence));
        vkt_cmd_free(&c); /* before the layer's worker has read its labels back */
    }
    app_close(&a);
    printf("freed %d\n", n);
    return 0;
}

/* Labels no trace writer expects: JSON's own syntax, control characters,
 * bytes that are not UTF-8, and one of a megabyte. */
static int mode_bad_names(void)
{
    static const char *const names[] = {
        "quote \" and backslash \\ and slash /",
        "tab\there newline\nbell\a escape\x1b del\x7f",
        "not utf-8: \xff\xfe \xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80 end",
        "{\"ph\":\"X\",\"name\":\"injected\"},",
    };
    struct app a;
    app_open(&a, "rel queue");
    size_t big_len = 1u << 20;
    char *big = malloc(big_len + 1);
    if (!big)
        vkt_die("out of memory");
    for (size_t i = 0; i < big_len; i++)
        big[i] = (char)('a' + i % 26);
    big[big_len] = '\0';
    for (size_t i = 0; i <= sizeof names / sizeof names[0]; i++) {
        const char *label = i < sizeof names / sizeof names[0] ? names[i] : big;
        struct vkt_cmd c;
        vkt_cmd_alloc(a.dev, a.dev->pool, "bad names", &c);
        vkt_cmd_begin(&c, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
        vkt_cmd_label_begin(&c, label);
        vkt_cmd_work(&c, 1);
        vkt_cmd_label_end(&c);
        vkt_cmd_end(&c);
        VKT_CHECK(submit_wait(a.dev, c.cb, a.dev->fence));
        vkt_cmd_free(&c);
    }
    free(big);
    app_close(&a);
    printf("bad names done\n");
    return 0;
}

/* ---- load on the timestamp entries ------------------------------------- */

/* n command buffers, each a small fill inside a label "work"; reusable. */
static VkCommandBuffer *record_fills(struct vkt_device *d, VkCommandPool pool, uint32_t n)
{
    VkCommandBuffer *cbs = calloc(n, sizeof *cbs);
    if (!cbs)
        vkt_die("out of memory");
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = n};
    VKT_CHECK(vkAllocateCommandBuffers(d->device, &ai, cbs));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VkDebugUtilsLabelEXT label = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
                                  .pLabelName = "work"};
    for (uint32_t i = 0; i < n; i++) {
        VKT_CHECK(vkBeginCommandBuffer(cbs[i], &bi));
        d->inst->cmd_begin_label(cbs[i], &label);
        vkCmdFillBuffer(cbs[i], d->result.buffer, 0, 256, i);
        d->inst->cmd_end_label(cbs[i]);
        VKT_CHECK(vkEndCommandBuffer(cbs[i]));
    }
    return cbs;
}

static VkResult submit_n(struct vkt_device *d, const VkCommandBuffer *cbs, uint32_t n,
                         VkFence fence)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = n,
                       .pCommandBuffers = cbs};
    return vkQueueSubmit(d->queue, 1, &si, fence);
}

static int mode_batches(int n, int m)
{
    struct app a;
    app_open(&a, NULL);
    struct vkt_device *d = a.dev;
    uint32_t most = (uint32_t)(n > m ? n : m);
    VkCommandBuffer *cbs = record_fills(d, d->pool, most);
    VKT_CHECK(submit_n(d, cbs, (uint32_t)n, d->fence));
    VKT_CHECK(vkWaitForFences(d->device, 1, &d->fence, VK_TRUE, UINT64_MAX));
    VKT_CHECK(vkResetFences(d->device, 1, &d->fence));
    if (m > 0) {
        VKT_CHECK(submit_n(d, cbs, (uint32_t)m, d->fence));
        VKT_CHECK(vkWaitForFences(d->device, 1, &d->fence, VK_TRUE, UINT64_MAX));
    }
    vkFreeCommandBuffers(d->device, d->pool, most, cbs);
    free(cbs);
    app_close(&a);
    printf("made %d %d\n", m > 0 ? 2 : 1, n + (m > 0 ? m : 0));
    return 0;
}

static int mode_singles(int n)
{
    struct app a;
    app_open(&a, NULL);
    struct vkt_device *d = a.dev;
    VkCommandBuffer *cbs = record_fills(d, d->pool, (uint32_t)n + 1);
    for (int i = 0; i <= n; i++)
        VKT_CHECK(submit_n(d, &cbs[i], 1, VK_NULL_HANDLE));
    VKT_CHECK(vkQueueWaitIdle(d->queue));
    vkFreeCommandBuffers(d->device, d->pool, (uint32_t)n + 1, cbs);
    free(cbs);
    app_close(&a);
    printf("made %d %d\n", n + 1, n + 1);
    return 0;
}

/* n submits, a fence every k; hz > 0 paces them. ring: as many buffers as
 * submits between fences, each submitted again only after the fence that
 * follows it; else one buffer for all (resubmitted while pending). */
static int submit_loop(int n, int k, int hz, bool ring)
{
    struct app a;
    app_open(&a, NULL);
    struct vkt_device *d = a.dev;
    uint32_t nbufs = ring ? (uint32_t)k : 1;
    VkCommandBuffer *cbs = record_fills(d, d->pool, nbufs);
    uint64_t start = vkt_now_ns();
    for (int i = 1; i <= n; i++) {
        bool fenced = i % k == 0 || i == n;
        VKT_CHECK(submit_n(d, &cbs[(uint32_t)(i - 1) % nbufs], 1, fenced ? d->fence : VK_NULL_HANDLE));
        if (fenced) {
            VKT_CHECK(vkWaitForFences(d->device, 1, &d->fence, VK_TRUE, UINT64_MAX));
            VKT_CHECK(vkResetFences(d->device, 1, &d->fence));
        }
        if (hz > 0) {
            uint64_t due = start + (uint64_t)i * 1000000000ull / (uint64_t)hz;
            uint64_t now = vkt_now_ns();
            if (due > now) {
                struct timespec ts = {(time_t)((due - now) / 1000000000ull),
                                      (long)((due - now) % 1000000000ull)};
                nanosleep(&ts, NULL);
            }
        }
    }
    vkFreeCommandBuffers(d->device, d->pool, nbufs, cbs);
    free(cbs);
    app_close(&a);
    printf("made %d %d\n", n, n);
    return 0;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

/* Devices created and destroyed: the layer's records of each must go with
 * it (handles are reused by the next one), and its memory. */
static int mode_churn(int n)
{
    struct vkt_instance *inst = vkt_instance_create();
    long early = 0;
    for (int i = 0; i < n; i++) {
        struct vkt_device *d = vkt_device_create(inst, VKT_FEAT_NONE, NULL);
        VkCommandPool pool = vkt_pool_create(d, 0);
        for (int k = 0; k < 2; k++) {
            struct vkt_cmd c;
            record(d, pool, "churn", &c);
            VKT_CHECK(submit_wait(d, c.cb, d->fence));
        }
        /* Every third: the pool is left to vkDestroyDevice (the app's
         * mistake, and a common one; lavapipe frees it). */
        if (i % 3)
            vkDestroyCommandPool(d->device, pool, NULL);
        vkt_device_destroy(d);
        if (i + 1 == n / 10)
            early = rss_kb();
    }
    vkt_instance_destroy(inst);
    printf("churn done\n");
    fprintf(stderr, "rss %ld %ld\n", early, rss_kb());
    return 0;
}

static int mode_small(void)
{
    struct app a;
    app_open(&a, "small");
    submit_labelled(a.dev, "small", 3);
    app_close(&a);
    printf("small done\n");
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    truth_init("rel"); /* the vkt helpers note submits; nothing is written */
    const char *mode = argc > 1 ? argv[1] : "";
    int n = argc > 2 ? atoi(argv[2]) : 10;
    if (!strcmp(mode, "submit-errors"))
        return mode_submit_errors(n);
    if (!strcmp(mode, "fork-noexec"))
        return mode_fork(argv[0], false);
    if (!strcmp(mode, "fork-exec"))
        return mode_fork("/proc/self/exe", true);
    if (!strcmp(mode, "exec-child"))
        return mode_exec_child();
    if (!strcmp(mode, "exit-threads"))
        return mode_exit_threads();
    if (!strcmp(mode, "bad-names"))
        return mode_bad_names();
    if (!strcmp(mode, "free-pending"))
        return mode_free_pending(n);
    if (!strcmp(mode, "churn") && n > 0)
        return mode_churn(n);
    if (!strcmp(mode, "small"))
        return mode_small();
    int m = argc > 3 ? atoi(argv[3]) : 0;
    if (!strcmp(mode, "batches") && n > 0)
        return mode_batches(n, m);
    if (!strcmp(mode, "singles") && n > 0)
        return mode_singles(n);
    if (!strcmp(mode, "loop") && n > 0 && m > 0)
        return submit_loop(n, m, 0, true);
    if (!strcmp(mode, "resubmit") && n > 0 && m > 0)
        return submit_loop(n, m, 0, false);
    if (!strcmp(mode, "rate") && n > 0 && m > 0)
        return submit_loop(n * m, 100, n, true);
    fprintf(stderr, "usage: gz-test-rel submit-errors N | fork-noexec | fork-exec | "
                    "exit-threads | free-pending N | bad-names | batches N [M] | singles N | "
                    "loop N K | resubmit N K | rate HZ S\n");
    return 2;
}
