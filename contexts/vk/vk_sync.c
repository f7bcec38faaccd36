/* Sync points for devices without calibrated timestamps.
 *
 * When the queue is idle, inside the app's own vkQueueSubmit (so we may use
 * the queue), submit one command buffer of ours that writes an "arrived"
 * word to host memory, waits for an event the host sets, writes a
 * timestamp and copies it to host memory. The spinner thread, woken just
 * before the submit, watches for the arrival, reads its clock and sets the
 * event, then watches for the timestamp and reads its clock again: the two
 * host times bracket the timestamp, and both are taken while the GPU is
 * known to be at the wait, by a thread that is running at that moment. The
 * app's thread never waits for any of it.
 *
 * What that costs the app: its work submitted after ours waits for the
 * spinner to see the arrival (microseconds), and only when the queue had
 * nothing else to do. Should the spinner not get a core, the event is set
 * by whoever comes first of the spinner, the app's next call on the queue,
 * or the worker's next poll; that sync point is then lost, never wrong.
 * When the app waits for work that comes after our command buffer (the
 * fence of the submit that carried it, its queue or its device idle), its
 * thread watches as the spinner does before it waits: that wait cannot
 * return before the GPU has passed our command buffer, so the watch delays
 * nothing (gz_vk_sync_wait). Any other wait, or a present, sets the event
 * at once.
 *
 * Watching memory rather than asking Vulkan (an event's status, a query's
 * availability) keeps the looks free of the driver's and lower layers'
 * locks, which the app's thread may hold in its own next call. At most one
 * sync point every 100 ms (sooner after a missed or wide one): tight
 * constraints that often are what keeps drift fits close. */
#include <sched.h>
#include <time.h>

#include "gz_calibration.h"
#include "gz_vk_internal.h"

#define SYNC_PERIOD_NS 100000000ull
/* After a sync point that was missed, or wider than SYNC_WIDE_NS (a thread
 * was descheduled), the next one comes sooner. */
#define SYNC_RETRY_NS 10000000ull
#define SYNC_WIDE_NS 100000ull
/* How long the spinner watches for each of the GPU's two steps. */
#define SPIN_MAX_NS 2000000ull
#define HOT_POLL_NS 20000ull
/* The event is set by anyone once the GPU may have waited this long. */
#define GO_LATE_NS (2 * SPIN_MAX_NS)

/* Result entries: the timestamp's copy, and the arrival word. */
#define ENTRY_TS 0u
#define ENTRY_ARRIVED 1u

/* ---- the spinner: one thread per process, one sync point at a time ---- */

static pthread_mutex_t spin_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spin_wake = PTHREAD_COND_INITIALIZER;
static gz_vk_queue *spin_job; /* under spin_lock */
static bool spin_started, spin_failed;

/* Sets the event once, whoever calls first (vkSetEvent needs the event
 * externally synchronized). Returns whether this caller set it. */
static bool set_go(gz_vk_queue *q)
{
    gz_vk_sync *s = &q->sync;
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(&s->go_set, &expected, 1, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return false;
    const gz_vk_fns *f = &q->dev->info.fns;
    VkResult r = f->SetEvent(q->dev->info.device, s->go);
    for (int i = 0; r != VK_SUCCESS && r != VK_ERROR_DEVICE_LOST && i < 3; i++)
        r = f->SetEvent(q->dev->info.device, s->go);
    if (r != VK_SUCCESS && !__atomic_exchange_n(&s->failed, true, __ATOMIC_ACQ_REL))
        /* The GPU would wait forever: the device is gone or about to be. */
        gz_log("cannot set an event on %s (VkResult %d): sync points stop, its times rely on "
               "submission bounds alone",
               q->dev->info.device_name, (int)r);
    return true;
}

/* Polls entry i of the sync point's results until it is written: its
 * value, and the time read after it was seen (0: not within SPIN_MAX_NS). */
static uint64_t watch(gz_vk_sync *s, uint32_t entry, uint64_t *value)
{
    uint64_t start = gz_host_now_ns();
    for (;;) {
        bool written = gz_vk_hostbuf_read(&s->result, entry, 1, value);
        uint64_t t = gz_host_now_ns();
        if (written)
            return t;
        if (t - start >= SPIN_MAX_NS || __atomic_load_n(&s->cancelled, __ATOMIC_ACQUIRE))
            return 0;
        /* Hot at first; then yielding, so that a thread running the GPU's
         * work (a software driver) gets the core. */
        if (t - start >= HOT_POLL_NS)
            sched_yield();
    }
}

/* One look at a sync point from start to end, by the spinner or by the
 * app's thread in a wait that covers it, or both at once: whoever sees the
 * arrival first and sets go takes the bracket; the other gives up. */
static void observe(gz_vk_queue *q)
{
    gz_vk_sync *s = &q->sync;
    uint64_t value;
    if (watch(s, ENTRY_ARRIVED, &value)) {
        uint64_t before = gz_host_now_ns();
        if (set_go(q)) {
            uint64_t seen = watch(s, ENTRY_TS, &value);
            __atomic_store_n(&s->before, before, __ATOMIC_RELAXED);
            __atomic_store_n(&s->seen, seen, __ATOMIC_RELAXED);
        }
    }
    /* Never leave the GPU waiting. */
    set_go(q);
}

static void *spinner(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&spin_lock);
        while (!spin_job)
            pthread_cond_wait(&spin_wake, &spin_lock);
        gz_vk_queue *q = spin_job;
        pthread_mutex_unlock(&spin_lock);
        observe(q);
        pthread_mutex_lock(&spin_lock);
        spin_job = NULL;
        __atomic_store_n(&q->sync.spinning, 0, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&spin_lock);
    }
    return NULL;
}

/* Under spin_lock. */
static void spin_start_locked(void)
{
    if (!spin_started && !spin_failed) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        spin_started = gz_thread_start(&t, &attr, spinner, NULL) == 0;
        spin_failed = !spin_started;
        pthread_attr_destroy(&attr);
        if (spin_failed)
            gz_log("cannot start the sync-point thread; GPU times without calibrated "
                   "timestamps rely on submission bounds alone");
    }
}

void gz_vk_sync_prepare(void)
{
    /* Started with the first device that needs it, not with its first sync
     * point: a thread's start-up would widen that one's bracket. */
    pthread_mutex_lock(&spin_lock);
    spin_start_locked();
    pthread_mutex_unlock(&spin_lock);
}

/* Hands q's sync point to the spinner; false when it is busy (another
 * queue's sync point) or could not be started. */
static bool spin_post(gz_vk_queue *q)
{
    bool ok = false;
    pthread_mutex_lock(&spin_lock);
    spin_start_locked();
    if (spin_started && !spin_job) {
        __atomic_store_n(&q->sync.spinning, 1, __ATOMIC_RELEASE);
        spin_job = q;
        pthread_cond_signal(&spin_wake);
        ok = true;
    }
    pthread_mutex_unlock(&spin_lock);
    return ok;
}

/* ---- per queue ---------------------------------------------------------- */

static bool sync_init(gz_vk_queue *q)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    VkDevice d = dev->info.device;
    gz_vk_sync *s = &q->sync;
    if (!f->CreateEvent || !f->ResetEvent || !f->SetEvent || !f->CmdWaitEvents ||
        !f->CmdFillBuffer || !f->QueueSubmit || !f->CreateFence || !f->GetFenceStatus ||
        !f->ResetFences)
        return false;
    VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkQueryPoolCreateInfo pool_info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                       .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                       .queryCount = 1};
    VkEventCreateInfo event_info = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                         .commandPool = q->cmd_pool,
                                         .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                         .commandBufferCount = 1};
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (f->CreateQueryPool(d, &pool_info, NULL, &s->pool) != VK_SUCCESS)
        return false;
    if (!gz_vk_hostbuf_create(dev, 2, &s->result))
        goto fail_pool;
    if (f->CreateEvent(d, &event_info, NULL, &s->go) != VK_SUCCESS)
        goto fail_buf;
    if (f->CreateFence(d, &fence_info, NULL, &s->fence) != VK_SUCCESS)
        goto fail_go;
    if (f->AllocateCommandBuffers(d, &alloc, &s->cb) != VK_SUCCESS)
        goto fail_fence;
    gz_vk_own_cmdbufs(dev, &s->cb, 1);
    if (f->BeginCommandBuffer(s->cb, &begin) != VK_SUCCESS)
        goto fail_cb;
    if (!dev->info.host_query_reset)
        f->CmdResetQueryPool(s->cb, s->pool, 0, 1);
    /* The arrival: a whole entry filled, so that it reads as written. */
    f->CmdFillBuffer(s->cb, s->result.buffer, ENTRY_ARRIVED * GZ_VK_RESULT_SIZE,
                     GZ_VK_RESULT_SIZE, 1);
    gz_vk_cmd_results_to_host(f, s->cb);
    /* Outside any render pass, so the host may set go after the submit. */
    f->CmdWaitEvents(s->cb, 1, &s->go, VK_PIPELINE_STAGE_HOST_BIT,
                     VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, NULL, 0, NULL, 0, NULL);
    /* Top of pipe: nothing precedes it but the wait, so it means the same
     * as bottom, and a driver need not drain anything to take it (lavapipe
     * stamps it at once instead of flushing a scene to its rasterizer
     * threads, which may wait for a core). */
    f->CmdWriteTimestamp(s->cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s->pool, 0);
    gz_vk_cmd_copy_results(f, s->cb, s->pool, 0, 1, &s->result, ENTRY_TS);
    gz_vk_cmd_results_to_host(f, s->cb);
    if (f->EndCommandBuffer(s->cb) != VK_SUCCESS)
        goto fail_cb;
    return true;

fail_cb:
    f->FreeCommandBuffers(d, q->cmd_pool, 1, &s->cb);
fail_fence:
    f->DestroyFence(d, s->fence, NULL);
fail_go:
    f->DestroyEvent(d, s->go, NULL);
fail_buf:
    gz_vk_hostbuf_destroy(dev, &s->result);
fail_pool:
    f->DestroyQueryPool(d, s->pool, NULL);
    return false;
}

void gz_vk_sync_wait(gz_vk_queue *q, bool covers)
{
    gz_vk_sync *s = &q->sync;
    if (!__atomic_load_n(&s->spinning, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&s->go_set, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(&s->submitted_ns, __ATOMIC_ACQUIRE))
        return;
    if (!covers) {
        set_go(q);
        return;
    }
    __atomic_add_fetch(&s->watchers, 1, __ATOMIC_ACQ_REL);
    observe(q);
    __atomic_sub_fetch(&s->watchers, 1, __ATOMIC_ACQ_REL);
}

void gz_vk_sync_release(gz_vk_queue *q, bool now)
{
    gz_vk_sync *s = &q->sync;
    if (!__atomic_load_n(&s->spinning, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&s->go_set, __ATOMIC_ACQUIRE))
        return;
    uint64_t submitted = __atomic_load_n(&s->submitted_ns, __ATOMIC_ACQUIRE);
    if (submitted && (now || gz_host_now_ns() - submitted >= GO_LATE_NS))
        set_go(q);
}

/* Emits a finished sync point (whichever thread comes first: the worker,
 * or the app's thread about to start the next one). Returns its bracket's
 * width, 0 when there was none (missed, not finished). */
static uint64_t collect(gz_vk_queue *q, bool final)
{
    gz_vk_sync *s = &q->sync;
    if (!__atomic_load_n(&s->pending, __ATOMIC_ACQUIRE))
        return 0;
    if ((__atomic_load_n(&s->spinning, __ATOMIC_ACQUIRE) ||
         __atomic_load_n(&s->watchers, __ATOMIC_ACQUIRE)) &&
        !final)
        return 0;
    uint64_t r[1];
    bool ready = gz_vk_hostbuf_read(&s->result, ENTRY_TS, 1, r);
    if (!ready && !final)
        return 0;
    if (!__atomic_exchange_n(&s->pending, false, __ATOMIC_ACQ_REL))
        return 0; /* the other thread took it */
    uint64_t before = __atomic_load_n(&s->before, __ATOMIC_RELAXED);
    uint64_t seen = __atomic_load_n(&s->seen, __ATOMIC_RELAXED);
    if (!ready || !before)
        return 0;
    if (seen) {
        gz_emit_sync_point(q->track, r[0], before, seen);
        return seen - before;
    }
    /* The timestamp was not seen in time: still a causality bound. */
    gz_emit_bound(q->track, true, r[0], before);
    return 0;
}

void gz_vk_sync_collect(gz_vk_queue *q, bool final)
{
    gz_vk_sync_release(q, final);
    collect(q, final);
}

void gz_vk_sync_maybe(gz_vk_queue *q, bool idle, VkFence app_fence)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    VkDevice d = dev->info.device;
    gz_vk_sync *s = &q->sync;
    uint64_t now = gz_host_now_ns();
    gz_vk_sync_release(q, false);
    if (__atomic_load_n(&s->pending, __ATOMIC_ACQUIRE)) {
        /* The last one, if it has finished: a wide or missed one is tried
         * again sooner. */
        uint64_t width = collect(q, false);
        if (!__atomic_load_n(&s->pending, __ATOMIC_ACQUIRE) &&
            (!width || width > SYNC_WIDE_NS))
            s->last_ns = s->last_ns - SYNC_PERIOD_NS + SYNC_RETRY_NS;
    }
    /* Only an idle queue runs our timestamp at once. */
    if (!idle || __atomic_load_n(&s->failed, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&s->pending, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&s->spinning, __ATOMIC_ACQUIRE) ||
        (s->last_ns && now - s->last_ns < SYNC_PERIOD_NS))
        return;
    if (!s->ready) {
        s->ready = sync_init(q);
        if (!s->ready) {
            __atomic_store_n(&s->failed, true, __ATOMIC_RELEASE);
            gz_log("cannot set up sync points on %s: its times rely on submission bounds alone",
                   dev->info.device_name);
            return;
        }
    }
    s->last_ns = now;
    /* The last one has finished on the GPU (its fence): its command buffer
     * may be submitted again, its event reset. */
    if (s->used && f->GetFenceStatus(d, s->fence) != VK_SUCCESS)
        return;
    if (f->ResetFences(d, 1, &s->fence) != VK_SUCCESS || f->ResetEvent(d, s->go) != VK_SUCCESS)
        return;
    s->used = true;
    if (dev->info.host_query_reset)
        f->ResetQueryPool(d, s->pool, 0, 1);
    gz_vk_hostbuf_clear(&s->result, 0, 2);
    __atomic_store_n(&s->go_set, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->cancelled, false, __ATOMIC_RELAXED);
    __atomic_store_n(&s->submitted_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->before, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->seen, 0, __ATOMIC_RELAXED);
    if (!spin_post(q)) {
        s->last_ns = now - SYNC_PERIOD_NS + SYNC_RETRY_NS;
        return;
    }
    s->app_fence = app_fence;
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &s->cb};
    if (f->QueueSubmit(q->handle, 1, &submit, s->fence) != VK_SUCCESS) {
        /* Nothing waits for go: the spinner stops. */
        __atomic_store_n(&s->go_set, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&s->cancelled, true, __ATOMIC_RELEASE);
        return;
    }
    __atomic_store_n(&s->submitted_ns, gz_host_now_ns(), __ATOMIC_RELEASE);
    __atomic_store_n(&s->pending, true, __ATOMIC_RELEASE);
}

void gz_vk_sync_destroy(gz_vk_queue *q)
{
    gz_vk_sync *s = &q->sync;
    if (!s->ready)
        return;
    /* The spinner gives a sync point up after twice SPIN_MAX_NS. */
    while (__atomic_load_n(&s->spinning, __ATOMIC_ACQUIRE)) {
        set_go(q);
        struct timespec ms = {0, 100000};
        nanosleep(&ms, NULL);
    }
    const gz_vk_fns *f = &q->dev->info.fns;
    VkDevice d = q->dev->info.device;
    f->FreeCommandBuffers(d, q->cmd_pool, 1, &s->cb);
    f->DestroyFence(d, s->fence, NULL);
    f->DestroyEvent(d, s->go, NULL);
    gz_vk_hostbuf_destroy(q->dev, &s->result);
    f->DestroyQueryPool(d, s->pool, NULL);
    s->ready = false;
}
