/* A command queue's timeline: the commands handed over with their events,
 * read back from the worker (or at the application's own blocking calls)
 * once the event says CL_COMPLETE, never by waiting.
 *
 * Clock: profiling values are ns (period 1, 64 bits) in the device's own
 * clock. pocl stamps CLOCK_MONOTONIC_RAW (measured here: QUEUED lies
 * inside a MONOTONIC_RAW bracket of the enqueue call, ~190 ms away from
 * CLOCK_MONOTONIC), so the values go to the client as GPU ticks and its
 * model fits offset and drift against our CLOCK_MONOTONIC host times from:
 *  - sync points: QUEUED is stamped inside the enqueue call, so the host
 *    times around that call bracket it;
 *  - causality bounds: START >= host time before the enqueue call, END <=
 *    host time the event was seen complete;
 *  - clGetDeviceAndHostTimer pairs where the device has them and its host
 *    timer is one of our clocks (pocl: CL_INVALID_OPERATION). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_calibration.h"
#include "gz_cl_internal.h"

/* Commands handed over and not read back yet, per queue: the array starts
 * small and doubles up to MAX_PENDING (48 bytes each). A program that
 * enqueues faster than the worker reads back (50 000 tiny kernels in
 * 0.4 s, read every 20 ms) lost 87 % of its zones at a fixed 4096. */
#define FIRST_PENDING 1024u
#define MAX_PENDING 65536u
/* A bracket wider than this says little about the clock. */
#define SYNC_MAX_WIDTH_NS 500000ull
/* Sync points per queue at most this often: the model needs a few, not
 * one per command. */
#define SYNC_EVERY_NS 20000000ull
#define TIMER_EVERY_NS 500000000ull

typedef struct pending {
    cl_event ev;
    uint32_t name;
    uint8_t flags; /* kind and GZ_ITEM_F_SRCLOC, as in the zone item */
    uint64_t before_ns, after_ns;
    uint64_t wait_flow; /* to the clFinish that saw it done (0: none) */
    uint64_t done_ns;   /* when a clFinish returned after it (0: none): its end was before */
} pending;

/* Commands are added to p under lock. A collector takes them all at once
 * (swapping p with its empty work array) and asks the driver about each
 * without the lock, so that the program's enqueues never wait for a
 * readback; what has not completed goes back into p. One collector at a
 * time per queue (collecting); another one finding it busy returns. */
struct gz_cl_queue {
    gz_cl_fns fns;
    cl_device_id device;
    uint16_t track;
    pthread_mutex_t lock;
    pending *p, *work;
    uint32_t n, cap, work_cap;
    bool collecting;
    uint64_t last_sync_ns;  /* the collector's */
    uint64_t last_timer_ns; /* the collector's */
    bool timer_ok;
    bool released;
    gz_cl_queue *next;
};

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static gz_cl_queue *queues;
static bool stopped;

static void collect_worker(void *user, bool final);

/* clGetDeviceAndHostTimer: a calibrated pair when the host value lies in
 * our CLOCK_MONOTONIC bracket (or in the MONOTONIC_RAW one, translated). */
static void timer_sample(gz_cl_queue *q, uint64_t now)
{
    if (!q->timer_ok || now - q->last_timer_ns < TIMER_EVERY_NS)
        return;
    q->last_timer_ns = now;
    cl_ulong dev = 0, host = 0;
    uint64_t b = gz_host_now_ns(), braw = gz_host_now_raw_ns();
    cl_int err = q->fns.GetDeviceAndHostTimer(q->device, &dev, &host);
    uint64_t araw = gz_host_now_raw_ns(), a = gz_host_now_ns();
    if (err != CL_SUCCESS) {
        static int once;
        gz_log_once(&once,
                    "opencl: clGetDeviceAndHostTimer failed (error %d): calibrating from "
                    "enqueue sync points instead",
                    (int)err);
        q->timer_ok = false;
        return;
    }
    uint64_t host_ns, deviation = (a - b + 1) / 2;
    if (host >= b && host <= a) {
        host_ns = host;
    } else if (host >= braw && host <= araw) {
        /* The RAW translation the Vulkan context uses: the tightest of a
         * few clock brackets, its uncertainty added (a preemption between
         * two plain reads would shift the pair silently). */
        uint64_t translation;
        host_ns = (uint64_t)((int64_t)host + gz_host_mono_minus_raw(&translation));
        deviation += translation;
    } else {
        static int once;
        gz_log_once(&once,
                    "opencl: the device's host timer is neither CLOCK_MONOTONIC nor "
                    "CLOCK_MONOTONIC_RAW: calibrating from enqueue sync points instead");
        q->timer_ok = false;
        return;
    }
    gz_emit_calib(q->track, dev, host_ns, deviation);
}

static void add_collector(void)
{
    gz_collector_add(collect_worker, NULL);
}

gz_cl_queue *gz_cl_queue_new(const gz_cl_fns *fns, cl_device_id device, const char *label)
{
    if (!gz_client_start())
        return NULL;
    gz_cl_queue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->cap = q->work_cap = FIRST_PENDING;
    q->p = malloc(q->cap * sizeof *q->p);
    q->work = malloc(q->work_cap * sizeof *q->work);
    if (!q->p || !q->work) {
        free(q->p);
        free(q->work);
        free(q);
        return NULL;
    }
    q->fns = *fns;
    q->device = device;
    char dev_name[128] = "OpenCL device";
    size_t got = 0;
    if (fns->GetDeviceInfo(device, CL_DEVICE_NAME, sizeof dev_name, dev_name, &got) !=
            CL_SUCCESS ||
        got == 0)
        strcpy(dev_name, "OpenCL device");
    dev_name[sizeof dev_name - 1] = 0;
    char name[256];
    snprintf(name, sizeof name, "%s %s", dev_name, label ? label : "");
    q->track = gz_track_new_on_device(GZ_API_OPENCL, name, dev_name, 1.0, 64, 0);
    if (!q->track) {
        free(q->p);
        free(q->work);
        free(q);
        return NULL;
    }
    pthread_mutex_init(&q->lock, NULL);
    q->timer_ok = fns->GetDeviceAndHostTimer != NULL;
    timer_sample(q, gz_host_now_ns());

    /* The collector is registered once, and outside list_lock: the worker
     * holds the client's collector lock while a collector takes list_lock,
     * so taking them in the other order here could deadlock. */
    static pthread_once_t collector_once = PTHREAD_ONCE_INIT;
    pthread_once(&collector_once, add_collector);
    pthread_mutex_lock(&list_lock);
    q->next = queues;
    queues = q;
    pthread_mutex_unlock(&list_lock);
    return q;
}

void gz_cl_queue_set_name(gz_cl_queue *q, const char *name, size_t len)
{
    if (!q || !name)
        return;
    char buf[256];
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    memcpy(buf, name, len);
    buf[len] = 0;
    gz_track_set_name(q->track, buf);
}

void gz_cl_queue_release(gz_cl_queue *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->lock);
    q->released = true;
    pthread_mutex_unlock(&q->lock);
}

/* Room for n more commands in p (under lock): doubles it up to max. */
static bool room(gz_cl_queue *q, uint32_t n, uint32_t max)
{
    if (q->n + n <= q->cap)
        return true;
    uint32_t cap = q->cap;
    while (cap < q->n + n && cap < max)
        cap *= 2;
    if (q->n + n > cap)
        return false;
    pending *p = realloc(q->p, cap * sizeof *p);
    if (!p)
        return false;
    q->p = p;
    q->cap = cap;
    return true;
}

static void collect(gz_cl_queue *q, bool final);

bool gz_cl_queue_add(gz_cl_queue *q, cl_event ev, uint32_t name, bool srcloc, unsigned kind,
                     uint64_t before_ns, uint64_t after_ns)
{
    if (!q || !ev)
        return false;
    pthread_mutex_lock(&q->lock);
    bool ok = !__atomic_load_n(&stopped, __ATOMIC_RELAXED) && room(q, 1, MAX_PENDING);
    if (!ok && !__atomic_load_n(&stopped, __ATOMIC_RELAXED)) {
        /* Full: read back what has completed here, on the program's thread
         * (never waiting for the device), then try once more. */
        pthread_mutex_unlock(&q->lock);
        collect(q, false);
        pthread_mutex_lock(&q->lock);
        ok = !__atomic_load_n(&stopped, __ATOMIC_RELAXED) && room(q, 1, MAX_PENDING);
    }
    if (ok) {
        q->p[q->n++] = (pending){
            .ev = ev,
            .name = name,
            .flags = (uint8_t)((kind << GZ_ITEM_KIND_SHIFT) | (srcloc ? GZ_ITEM_F_SRCLOC : 0)),
            .before_ns = before_ns,
            .after_ns = after_ns,
        };
        gz_cl_holds_add(ev);
    }
    pthread_mutex_unlock(&q->lock);
    if (!ok) {
        static int once;
        gz_log_once(&once, "opencl: %u commands are waiting for readback on one queue: "
                           "further commands get no zones until some complete",
                    MAX_PENDING);
        gz_count_dropped_zones(q->track, 1);
    }
    return ok;
}

void gz_cl_queue_count_drop(gz_cl_queue *q)
{
    if (q)
        gz_count_dropped_zones(q->track, 1);
}

static bool profile(gz_cl_queue *q, cl_event ev, cl_profiling_info what, uint64_t *out)
{
    cl_ulong v = 0;
    if (q->fns.GetEventProfilingInfo(ev, what, sizeof v, &v, NULL) != CL_SUCCESS)
        return false;
    *out = v;
    return true;
}

static void give_back(gz_cl_queue *q, cl_event ev)
{
    gz_cl_holds_remove(ev);
    q->fns.ReleaseEvent(ev);
}

/* One completed command: its clock information, then its zone. */
static void emit_command(gz_cl_queue *q, const pending *p, uint64_t seen_ns)
{
    uint64_t queued, start, end;
    if (!profile(q, p->ev, CL_PROFILING_COMMAND_QUEUED, &queued) ||
        !profile(q, p->ev, CL_PROFILING_COMMAND_START, &start) ||
        !profile(q, p->ev, CL_PROFILING_COMMAND_END, &end)) {
        static int once;
        gz_log_once(&once, "opencl: an event has no profiling information (queue created "
                           "without profiling?): its zone is dropped");
        gz_count_dropped_zones(q->track, 1);
        return;
    }
    if (start < queued || end < start) {
        /* A complete command's times out of order: values the driver had
         * not written (yet) when it said CL_COMPLETE. No zone is better
         * than a wrong one. */
        static int once;
        gz_log_once(&once, "opencl: a completed command reports its times out of order "
                           "(queued %llu, start %llu, end %llu): its zone is dropped",
                    (unsigned long long)queued, (unsigned long long)start,
                    (unsigned long long)end);
        gz_count_dropped_zones(q->track, 1);
        return;
    }
    gz_item it[5];
    uint32_t n = 0;
    uint64_t width = p->after_ns - p->before_ns;
    if (width <= SYNC_MAX_WIDTH_NS &&
        (!q->last_sync_ns || p->before_ns >= q->last_sync_ns + SYNC_EVERY_NS)) {
        q->last_sync_ns = p->before_ns;
        it[n++] = gz_item_sync_point(q->track, queued, p->before_ns, p->before_ns + width);
    }
    it[n++] = gz_item_bound(q->track, true, start, p->before_ns);
    it[n++] = gz_item_bound(q->track, false, end,
                            p->done_ns && p->done_ns < seen_ns ? p->done_ns : seen_ns);
    it[n++] = (gz_item){.type = GZ_ITEM_GPU_ZONE,
                        .flags = p->flags,
                        .track = q->track,
                        .name = p->name,
                        .zone = {.begin_ticks = start, .end_ticks = end}};
    if (p->wait_flow)
        it[n++] = gz_item_wait_flow(q->track, p->wait_flow);
    if (!gz_emit_n(it, n))
        gz_count_dropped_zones(q->track, 1);
}

/* Reads every completed command; final: gives the rest up. Out-of-order
 * queues complete in any order, so every command is looked at. The
 * driver is asked without the queue's lock (see struct gz_cl_queue). */
static void collect(gz_cl_queue *q, bool final)
{
    pthread_mutex_lock(&q->lock);
    if (q->collecting) {
        pthread_mutex_unlock(&q->lock);
        return;
    }
    q->collecting = true;
    pending *work = q->p;
    uint32_t n = q->n, cap = q->cap;
    q->p = q->work;
    q->cap = q->work_cap;
    q->n = 0;
    pthread_mutex_unlock(&q->lock);

    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        pending *p = &work[i];
        cl_int status = CL_QUEUED;
        cl_int err = q->fns.GetEventInfo(p->ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                         sizeof status, &status, NULL);
        if (err == CL_SUCCESS && status == CL_COMPLETE && !final && gz_emit_room() < 8) {
            /* The client's queue is full for now: read it at the next
             * collect (a burst is delayed, never dropped). */
            work[kept++] = *p;
            continue;
        }
        if (err == CL_SUCCESS && status == CL_COMPLETE) {
            emit_command(q, p, gz_host_now_ns());
        } else if (err == CL_SUCCESS && status > CL_COMPLETE && !final) {
            work[kept++] = *p;
            continue;
        } else {
            /* failed command, unreadable event, or still running at exit */
            gz_count_dropped_zones(q->track, 1);
        }
        give_back(q, p->ev);
    }
    if (!final)
        timer_sample(q, gz_host_now_ns());

    /* What is still running goes back, after what was added meanwhile. */
    pthread_mutex_lock(&q->lock);
    if (kept && !room(q, kept, 2 * MAX_PENDING)) {
        /* Out of memory only (p holds at most MAX_PENDING added meanwhile):
         * those commands are let go without zones. */
        pthread_mutex_unlock(&q->lock);
        for (uint32_t i = 0; i < kept; i++) {
            gz_count_dropped_zones(q->track, 1);
            give_back(q, work[i].ev);
        }
        pthread_mutex_lock(&q->lock);
        kept = 0;
    }
    memcpy(q->p + q->n, work, kept * sizeof *work);
    q->n += kept;
    q->work = work;
    q->work_cap = cap;
    q->collecting = false;
    pthread_mutex_unlock(&q->lock);
}

void gz_cl_queue_waited(gz_cl_queue *q, uint64_t done_ns)
{
    if (!q)
        return;
    uint64_t flow = 0;
    pthread_mutex_lock(&q->lock);
    /* Every command pending ended before clFinish returned: a bound for the
     * clock as tight as the program's view. The newest by enqueue time gets
     * the flow (a collect puts what still runs back after what was added
     * meanwhile). */
    pending *newest = NULL;
    for (uint32_t i = 0; i < q->n; i++) {
        if (!q->p[i].done_ns)
            q->p[i].done_ns = done_ns;
        if (!newest || q->p[i].before_ns >= newest->before_ns)
            newest = &q->p[i];
    }
    if (newest && !newest->wait_flow)
        flow = newest->wait_flow = gz_flow_next();
    pthread_mutex_unlock(&q->lock);
    if (flow)
        gz_flow_in(flow, done_ns);
}

void gz_cl_queue_collect(gz_cl_queue *q)
{
    if (q)
        collect(q, false);
}

static void collect_list(bool final)
{
    pthread_mutex_lock(&list_lock);
    if (final)
        __atomic_store_n(&stopped, true, __ATOMIC_RELAXED);
    for (gz_cl_queue **pq = &queues; *pq;) {
        gz_cl_queue *q = *pq;
        collect(q, final);
        pthread_mutex_lock(&q->lock);
        bool done = q->released && q->n == 0 && !q->collecting;
        pthread_mutex_unlock(&q->lock);
        if (done) {
            /* Every zone of the queue has been emitted: its track ends. */
            gz_track_end(q->track);
            *pq = q->next;
            pthread_mutex_destroy(&q->lock);
            free(q->p);
            free(q->work);
            free(q);
        } else {
            pq = &q->next;
        }
    }
    pthread_mutex_unlock(&list_lock);
    if (final) {
        uint64_t taken, returned;
        gz_cl_holds_totals(&taken, &returned);
        if (taken != returned)
            gz_log("opencl: %llu of %llu event references were not given back at exit",
                   (unsigned long long)(taken - returned), (unsigned long long)taken);
    }
}

void gz_cl_collect_all(void)
{
    collect_list(false);
}

static void collect_worker(void *user, bool final)
{
    collect_list(final);
}
