/* Sync points for devices without calibrated timestamps.
 *
 * When the queue is idle, inside the app's own vkQueueSubmit (so we may use
 * the queue), submit one command buffer of ours that waits for an event the
 * host sets, writes a timestamp and then sets a second event. The host
 * reads its clock, sets the first event, and spins on the second for at
 * most SYNC_WAIT_NS: the two host times bracket the timestamp tightly. The
 * host-set event matters: without it the lower bound would be the time
 * before the submit, and the driver's latency from submit to execution
 * (tens to hundreds of microseconds on a loaded machine with lavapipe)
 * would widen every bracket. The GPU waits on nothing but the host thread
 * that is already running the very next instruction, and the app's own
 * work is submitted only after we return, so no app work is held back.
 * Watching an event rather than the query's availability matters too:
 * event memory is visible at once, while some drivers (lavapipe) make query
 * results available only when the whole submission has retired, hundreds
 * of microseconds later. The timestamp's value is read back later, without
 * waiting. At most one sync point every 100 ms: tight constraints that
 * often are what keeps drift fits close. */
#include "gz_calibration.h"
#include "gz_vk_internal.h"

#define SYNC_PERIOD_NS 100000000ull
/* After a sync point the host did not see in time (the driver was slow to
 * start, the thread was descheduled), the next one comes sooner. */
#define SYNC_RETRY_NS 10000000ull
#define SYNC_ENTRY GZ_VK_RING_SLOTS /* its result's place, after the slots' */
#define SYNC_WAIT_NS 1000000ull

static bool sync_init(gz_vk_queue *q)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    VkDevice d = dev->info.device;
    if (!f->CreateEvent || !f->GetEventStatus || !f->ResetEvent || !f->CmdSetEvent ||
        !f->SetEvent || !f->CmdWaitEvents || !f->QueueSubmit)
        return false;
    VkQueryPoolCreateInfo pool_info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                       .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                       .queryCount = 1};
    VkEventCreateInfo event_info = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                         .commandPool = q->cmd_pool,
                                         .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                         .commandBufferCount = 1};
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (f->CreateQueryPool(d, &pool_info, NULL, &q->sync.pool) != VK_SUCCESS)
        return false;
    if (f->CreateEvent(d, &event_info, NULL, &q->sync.go) != VK_SUCCESS)
        goto fail_pool;
    if (f->CreateEvent(d, &event_info, NULL, &q->sync.event) != VK_SUCCESS)
        goto fail_go;
    if (f->AllocateCommandBuffers(d, &alloc, &q->sync.cb) != VK_SUCCESS)
        goto fail_event;
    if (dev->info.set_loader_data)
        dev->info.set_loader_data(d, q->sync.cb);
    if (f->BeginCommandBuffer(q->sync.cb, &begin) != VK_SUCCESS)
        goto fail_cb;
    if (!dev->info.host_query_reset)
        f->CmdResetQueryPool(q->sync.cb, q->sync.pool, 0, 1);
    /* Outside any render pass, so the host may set go after the submit. */
    f->CmdWaitEvents(q->sync.cb, 1, &q->sync.go, VK_PIPELINE_STAGE_HOST_BIT,
                     VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, NULL, 0, NULL, 0, NULL);
    f->CmdWriteTimestamp(q->sync.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, q->sync.pool, 0);
    /* The event before the copy: the copy's cost would otherwise widen the
     * bracket on its late side only, and bias its middle. */
    f->CmdSetEvent(q->sync.cb, q->sync.event, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    gz_vk_cmd_copy_results(&dev->info.fns, q->sync.cb, q->sync.pool, 0, 1, &q->results_buf, SYNC_ENTRY);
    if (f->EndCommandBuffer(q->sync.cb) != VK_SUCCESS)
        goto fail_cb;
    if (dev->info.host_query_reset)
        f->ResetQueryPool(d, q->sync.pool, 0, 1);
    return true;

fail_cb:
    f->FreeCommandBuffers(d, q->cmd_pool, 1, &q->sync.cb);
fail_event:
    f->DestroyEvent(d, q->sync.event, NULL);
fail_go:
    f->DestroyEvent(d, q->sync.go, NULL);
fail_pool:
    f->DestroyQueryPool(d, q->sync.pool, NULL);
    return false;
}

void gz_vk_sync_collect(gz_vk_queue *q, bool final)
{
    if (!q->sync.pending)
        return;
    uint64_t r[1];
    bool ready = gz_vk_hostbuf_read(&q->results_buf, SYNC_ENTRY, 1, r);
    if (!ready && !final)
        return;
    q->sync.pending = false;
    if (!ready)
        return;
    if (q->sync.seen) {
        gz_item it = {.type = GZ_ITEM_CALIB,
                      .flags = GZ_CALIB_SYNC_POINT,
                      .track = q->track,
                      .calib = {.ticks = r[0],
                                .host_ns = q->sync.before + (q->sync.seen - q->sync.before) / 2,
                                .deviation_ns = (q->sync.seen - q->sync.before + 1) / 2}};
        gz_emit(&it);
    } else {
        /* The event was not seen in time: still a causality bound. */
        gz_item it = {.type = GZ_ITEM_GPU_BOUND,
                      .flags = GZ_ITEM_F_NOT_BEFORE,
                      .track = q->track,
                      .bound = {.ticks = r[0], .host_ns = q->sync.before}};
        gz_emit(&it);
    }
}

void gz_vk_sync_point(gz_vk_queue *q)
{
    gz_vk_device *dev = q->dev;
    const gz_vk_fns *f = &dev->info.fns;
    VkDevice d = dev->info.device;
    uint64_t now = gz_host_now_ns();
    gz_vk_sync_collect(q, false);
    if (q->sync.pending || q->sync.failed ||
        (q->sync.last_ns && now - q->sync.last_ns < SYNC_PERIOD_NS))
        return;
    if (!q->sync.ready) {
        q->sync.ready = sync_init(q);
        q->sync.failed = !q->sync.ready;
        if (q->sync.failed) {
            gz_log("cannot set up sync points on %s: its times rely on submission bounds alone",
                   dev->info.device_name);
            return;
        }
    }
    q->sync.last_ns = now;
    if (dev->info.host_query_reset)
        f->ResetQueryPool(d, q->sync.pool, 0, 1);
    gz_vk_hostbuf_clear(&q->results_buf, SYNC_ENTRY, 1);
    if (f->ResetEvent(d, q->sync.event) != VK_SUCCESS || f->ResetEvent(d, q->sync.go) != VK_SUCCESS)
        return;
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &q->sync.cb};
    if (f->QueueSubmit(q->handle, 1, &submit, VK_NULL_HANDLE) != VK_SUCCESS)
        return;
    /* The clock is read before go is set: the timestamp cannot precede it.
     * Should SetEvent fail, the GPU would wait forever; the event is then
     * left for the device's destruction and sync points stop. */
    uint64_t before = gz_host_now_ns();
    if (f->SetEvent(d, q->sync.go) != VK_SUCCESS) {
        q->sync.failed = true;
        gz_log("cannot set an event on %s: sync points stop, its times rely on submission "
               "bounds alone", dev->info.device_name);
        return;
    }
    q->sync.pending = true;
    q->sync.before = before;
    q->sync.seen = 0;
    /* The time is read after the status says set: read before, it could
     * precede the moment the event (and so the timestamp) was written. */
    for (;;) {
        VkResult status = f->GetEventStatus(d, q->sync.event);
        uint64_t t = gz_host_now_ns();
        if (status == VK_EVENT_SET) {
            q->sync.seen = t;
            break;
        }
        if (t - before >= SYNC_WAIT_NS)
            break;
    }
    if (!q->sync.seen)
        q->sync.last_ns = now - SYNC_PERIOD_NS + SYNC_RETRY_NS;
    gz_vk_sync_collect(q, false);
}

void gz_vk_sync_destroy(gz_vk_queue *q)
{
    if (!q->sync.ready)
        return;
    const gz_vk_fns *f = &q->dev->info.fns;
    VkDevice d = q->dev->info.device;
    f->FreeCommandBuffers(d, q->cmd_pool, 1, &q->sync.cb);
    f->DestroyEvent(d, q->sync.event, NULL);
    f->DestroyEvent(d, q->sync.go, NULL);
    f->DestroyQueryPool(d, q->sync.pool, NULL);
    q->sync.ready = false;
}
