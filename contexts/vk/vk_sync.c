/* Sync points for devices without calibrated timestamps.
 *
 * When the queue is idle, inside the app's own vkQueueSubmit (so we may use
 * the queue), submit one command buffer of ours that waits for an event the
 * host sets, writes a timestamp and then sets a second event. The app's
 * thread reads its clock and sets the first event right after the submit;
 * the spinner thread, woken just before, watches the second one for at
 * most SPIN_MAX_NS. The two host times bracket the timestamp tightly. The
 * host-set event matters: without it the lower bound would be the time
 * before the submit, and the driver's latency from submit to execution
 * (tens to hundreds of microseconds on a loaded machine with lavapipe)
 * would widen every bracket. The GPU waits for nothing but the app's thread,
 * which sets the event at once, so no app work is held back; and the app's
 * thread never spins. Watching an event rather than the query's
 * availability matters too: event memory is visible at once, while some
 * drivers (lavapipe) make query results available only when the whole
 * submission has retired. The timestamp's value is read back later, without
 * waiting. At most one sync point every 100 ms: tight constraints that often
 * are what keeps drift fits close. */
#include <sched.h>
#include <time.h>

#include "gz_calibration.h"
#include "gz_vk_internal.h"

#define SYNC_PERIOD_NS 100000000ull
/* After a sync point the host did not see in time (the driver was slow to
 * start, a thread was descheduled), the next one comes sooner. */
#define SYNC_RETRY_NS 10000000ull
/* A bracket wider than this counts as missed (a thread was descheduled). */
#define SYNC_WIDE_NS 100000ull
#define SPIN_MAX_NS 2000000ull
#define HOT_POLL_NS 20000ull

/* ---- the spinner: one thread per process, one sync point at a time ---- */

static pthread_mutex_t spin_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spin_wake = PTHREAD_COND_INITIALIZER;
static gz_vk_queue *spin_job; /* under spin_lock */
static bool spin_started, spin_failed;

/* Waits (yielding) until the app's thread has set go and published the
 * time it read just before (or said the submit failed: ~0). */
static uint64_t await_go(gz_vk_sync *s)
{
    uint64_t before;
    uint64_t start = gz_host_now_ns();
    while (!(before = __atomic_load_n(&s->before, __ATOMIC_ACQUIRE))) {
        if (gz_host_now_ns() - start < SPIN_MAX_NS) {
            sched_yield();
        } else {
            struct timespec t = {0, 50000};
            nanosleep(&t, NULL);
        }
    }
    return before;
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

        gz_vk_sync *s = &q->sync;
        const gz_vk_fns *f = &q->dev->info.fns;
        VkDevice d = q->dev->info.device;
        uint64_t seen = 0, before = await_go(s);
        /* Hot first: on a GPU the event shows within microseconds. Then a
         * blocking wait on the sync point's fence, which gives the CPU to
         * whoever needs it (a software driver's thread runs the GPU's work)
         * and still bounds the timestamp from above: the fence signals
         * after it was written. The time is always read after the status
         * says set. */
        while (before != UINT64_MAX) {
            VkResult status = f->GetEventStatus(d, s->done);
            uint64_t t = gz_host_now_ns();
            if (status == VK_EVENT_SET) {
                seen = t;
                break;
            }
            if (status != VK_EVENT_RESET)
                break;
            if (t - before >= HOT_POLL_NS) {
                uint64_t left = t - before < SPIN_MAX_NS ? SPIN_MAX_NS - (t - before) : 0;
                if (f->WaitForFences(d, 1, &s->fence, VK_TRUE, left) == VK_SUCCESS)
                    seen = gz_host_now_ns();
                break;
            }
        }
        __atomic_store_n(&s->seen, seen, __ATOMIC_RELEASE);
        pthread_mutex_lock(&spin_lock);
        spin_job = NULL;
        __atomic_store_n(&s->spinning, 0, __ATOMIC_RELEASE);
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
        spin_started = pthread_create(&t, &attr, spinner, NULL) == 0;
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
        __atomic_store_n(&q->sync.seen, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&q->sync.before, 0, __ATOMIC_RELAXED);
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
    if (!f->CreateEvent || !f->GetEventStatus || !f->ResetEvent || !f->CmdSetEvent ||
        !f->SetEvent || !f->CmdWaitEvents || !f->QueueSubmit || !f->CreateFence ||
        !f->WaitForFences || !f->GetFenceStatus || !f->ResetFences)
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
    if (!gz_vk_hostbuf_create(dev, 1, &s->result))
        goto fail_pool;
    if (f->CreateEvent(d, &event_info, NULL, &s->go) != VK_SUCCESS)
        goto fail_buf;
    if (f->CreateEvent(d, &event_info, NULL, &s->done) != VK_SUCCESS)
        goto fail_go;
    if (f->CreateFence(d, &fence_info, NULL, &s->fence) != VK_SUCCESS)
        goto fail_done;
    if (f->AllocateCommandBuffers(d, &alloc, &s->cb) != VK_SUCCESS)
        goto fail_fence;
    gz_vk_own_cmdbufs(dev, &s->cb, 1);
    if (f->BeginCommandBuffer(s->cb, &begin) != VK_SUCCESS)
        goto fail_cb;
    if (!dev->info.host_query_reset)
        f->CmdResetQueryPool(s->cb, s->pool, 0, 1);
    /* Outside any render pass, so the host may set go after the submit. */
    f->CmdWaitEvents(s->cb, 1, &s->go, VK_PIPELINE_STAGE_HOST_BIT,
                     VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, NULL, 0, NULL, 0, NULL);
    f->CmdWriteTimestamp(s->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->pool, 0);
    /* The event before the copy: the copy's cost would otherwise widen the
     * bracket on its late side only, and bias its middle. */
    f->CmdSetEvent(s->cb, s->done, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    gz_vk_cmd_copy_results(f, s->cb, s->pool, 0, 1, &s->result, 0);
    gz_vk_cmd_results_to_host(f, s->cb);
    if (f->EndCommandBuffer(s->cb) != VK_SUCCESS)
        goto fail_cb;
    return true;

fail_cb:
    f->FreeCommandBuffers(d, q->cmd_pool, 1, &s->cb);
fail_fence:
    f->DestroyFence(d, s->fence, NULL);
fail_done:
    f->DestroyEvent(d, s->done, NULL);
fail_go:
    f->DestroyEvent(d, s->go, NULL);
fail_buf:
    gz_vk_hostbuf_destroy(dev, &s->result);
fail_pool:
    f->DestroyQueryPool(d, s->pool, NULL);
    return false;
}

/* Emits a finished sync point (whichever thread comes first: the worker,
 * or the app's thread about to start the next one). Returns its bracket's
 * width, 0 when there was none (not seen, not finished). */
static uint64_t collect(gz_vk_queue *q, bool final)
{
    gz_vk_sync *s = &q->sync;
    if (!__atomic_load_n(&s->pending, __ATOMIC_ACQUIRE))
        return 0;
    if (__atomic_load_n(&s->spinning, __ATOMIC_ACQUIRE) && !final)
        return 0;
    uint64_t r[1];
    bool ready = gz_vk_hostbuf_read(&s->result, 0, 1, r);
    if (!ready && !final)
        return 0;
    if (!__atomic_exchange_n(&s->pending, false, __ATOMIC_ACQ_REL))
        return 0; /* the other thread took it */
    uint64_t seen = __atomic_load_n(&s->seen, __ATOMIC_ACQUIRE);
    uint64_t before = __atomic_load_n(&s->before, __ATOMIC_ACQUIRE);
    if (!ready || !before || before == UINT64_MAX)
        return 0;
    if (seen) {
        gz_item it = {.type = GZ_ITEM_CALIB,
                      .flags = GZ_CALIB_SYNC_POINT,
                      .track = q->track,
                      .calib = {.ticks = r[0],
                                .host_ns = before + (seen - before) / 2,
                                .deviation_ns = (seen - before + 1) / 2}};
        gz_emit(&it);
        return seen - before;
    }
    /* The event was not seen in time: still a causality bound. */
    gz_item it = {.type = GZ_ITEM_GPU_BOUND,
                  .flags = GZ_ITEM_F_NOT_BEFORE,
                  .track = q->track,
                  .bound = {.ticks = r[0], .host_ns = before}};
    gz_emit(&it);
    return 0;
}

void gz_vk_sync_collect(gz_vk_queue *q, bool final)
{
    collect(q, final);
}

void gz_vk_sync_maybe(gz_vk_queue *q, bool idle)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    VkDevice d = dev->info.device;
    gz_vk_sync *s = &q->sync;
    uint64_t now = gz_host_now_ns();
    if (__atomic_load_n(&s->pending, __ATOMIC_ACQUIRE)) {
        /* The last one, if it has finished: a wide or missed one is tried
         * again sooner (tight ones are what keeps the fit close). */
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
        s->failed = !s->ready;
        if (s->failed) {
            gz_log("cannot set up sync points on %s: its times rely on submission bounds alone",
                   dev->info.device_name);
            return;
        }
    }
    s->last_ns = now;
    /* The last one has finished on the GPU (its fence), and both events
     * are unset before anyone watches them. */
    if (f->GetFenceStatus(d, s->fence) != VK_SUCCESS && s->used)
        return;
    if (f->ResetFences(d, 1, &s->fence) != VK_SUCCESS || f->ResetEvent(d, s->done) != VK_SUCCESS ||
        f->ResetEvent(d, s->go) != VK_SUCCESS)
        return;
    s->used = true;
    if (dev->info.host_query_reset)
        f->ResetQueryPool(d, s->pool, 0, 1);
    gz_vk_hostbuf_clear(&s->result, 0, 1);
    if (!spin_post(q)) {
        s->last_ns = now - SYNC_PERIOD_NS + SYNC_RETRY_NS;
        return;
    }
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &s->cb};
    if (f->QueueSubmit(q->handle, 1, &submit, s->fence) != VK_SUCCESS) {
        __atomic_store_n(&s->before, UINT64_MAX, __ATOMIC_RELEASE); /* the spinner stops */
        return;
    }
    /* The clock is read before go is set: the timestamp cannot precede it.
     * The GPU waits for nothing but this thread, which sets go at once. */
    uint64_t before = gz_host_now_ns();
    VkResult r = f->SetEvent(d, s->go);
    for (int i = 0; r != VK_SUCCESS && r != VK_ERROR_DEVICE_LOST && i < 3; i++)
        r = f->SetEvent(d, s->go);
    __atomic_store_n(&s->before, r == VK_SUCCESS ? before : UINT64_MAX, __ATOMIC_RELEASE);
    if (r != VK_SUCCESS) {
        /* The GPU would wait for go forever: the device is gone or about
         * to be; sync points stop, the event stays for its destruction. */
        __atomic_store_n(&s->failed, true, __ATOMIC_RELEASE);
        gz_log("cannot set an event on %s (VkResult %d): sync points stop, its times rely on "
               "submission bounds alone",
               dev->info.device_name, (int)r);
        return;
    }
    __atomic_store_n(&s->pending, true, __ATOMIC_RELEASE);
}

void gz_vk_sync_destroy(gz_vk_queue *q)
{
    gz_vk_sync *s = &q->sync;
    if (!s->ready)
        return;
    /* The spinner gives a sync point up after SPIN_MAX_NS. */
    while (__atomic_load_n(&s->spinning, __ATOMIC_ACQUIRE)) {
        struct timespec ms = {0, 100000};
        nanosleep(&ms, NULL);
    }
    const gz_vk_fns *f = &q->dev->info.fns;
    VkDevice d = q->dev->info.device;
    f->FreeCommandBuffers(d, q->cmd_pool, 1, &s->cb);
    f->DestroyFence(d, s->fence, NULL);
    f->DestroyEvent(d, s->done, NULL);
    f->DestroyEvent(d, s->go, NULL);
    gz_vk_hostbuf_destroy(q->dev, &s->result);
    f->DestroyQueryPool(d, s->pool, NULL);
    s->ready = false;
}
