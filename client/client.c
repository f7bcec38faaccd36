/* Process-wide client: start-up, producer entry points, collectors, exit.
 *
 * The client starts on first use and stops at exit (atexit runs before
 * shared-library destructors, while the drivers are still loaded). A
 * program that ends without atexit (a Go program) gets its outputs
 * completed earlier, when it destroys its last device or instance
 * (gz_client_checkpoint). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gz_client.h"
#include "gz_client_internal.h"

gz_client gz_the_client;

enum { OFF = 0, RUNNING, STOPPED };
/* RUNNING until the worker has finished: the final readback at stop still
 * emits items. */
static int state;
static int stopping;
static int joining; /* one thread joins the worker; others wait for it to be done */
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static pthread_t worker;
/* Checkpoints asked for and made (gz_client_checkpoint), under
 * checkpoint_lock. */
static pthread_mutex_t checkpoint_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t checkpoint_cv = PTHREAD_COND_INITIALIZER;
static uint64_t checkpoints_asked, checkpoints_made;
static bool checkpoint_summary;
/* Track ids: fresh ones from next_track, then those the worker released
 * after a track's end (so a program that creates and destroys devices all
 * day never runs out). ending: tracks whose owner said they are done, for
 * the worker to finish after it has written their last zones. */
static pthread_mutex_t track_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_track = 1;
static uint16_t free_ids[GZ_MAX_TRACKS], ending_ids[GZ_MAX_TRACKS];
static uint32_t nfree, nending;
static uint64_t next_flow = 1;

typedef struct collector {
    gz_collect_fn fn;
    void *user;
} collector;

#define MAX_COLLECTORS 256
static pthread_mutex_t collect_lock = PTHREAD_MUTEX_INITIALIZER;
static collector collectors[MAX_COLLECTORS];

static void stop_at_exit(void)
{
    gz_client_stop();
}

/* In a child of fork() only the forking thread exists: no worker, and any
 * lock another thread held stays held. The child records nothing (the
 * trace belongs to the parent; a child that execs starts afresh) and its
 * exit must not wait for a worker it does not have. Only async-signal-safe
 * calls here: the child may be anywhere in another thread's stdio. */
static void forked_child(void)
{
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != RUNNING)
        return;
    __atomic_store_n(&state, STOPPED, __ATOMIC_RELEASE);
    __atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
    static const char msg[] =
        "gpuzones: timing is off in this child of fork() (the trace belongs to the parent; "
        "a program it execs is timed on its own)\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
}

static unsigned frontends; /* gz_frontend bits, atomic */

const char *gz_client_frontend_names(char *buf, size_t size)
{
    static const char *const names[] = {"Vulkan layer", "OpenGL shim", "OpenCL layer",
                                        "gpuzones API"};
    unsigned bits = __atomic_load_n(&frontends, __ATOMIC_RELAXED);
    size_t n = 0;
    if (size)
        buf[0] = '\0';
    for (unsigned i = 0; i < 4; i++) {
        if (!(bits & (1u << i)) || n >= size)
            continue;
        int w = snprintf(buf + n, size - n, "%s%s", n ? ", " : "", names[i]);
        n += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* A program whose client never started (an OpenCL program that made no
 * queue: clinfo) still hears that the layer was there. */
static int noted_pid; /* a child of fork() inherits the handler: only the noter reports */

static void report_idle_at_exit(void)
{
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != OFF || getpid() != noted_pid)
        return;
    bool summary = true;
    const char *s = getenv("GPUZONES_SUMMARY");
    if (s)
        gz_config_parse_bool(s, &summary);
    if (summary) {
        char names[96];
        gz_log("%s loaded; no GPU work was timed", gz_client_frontend_names(names, sizeof names));
    }
}

void gz_client_note_frontend(gz_frontend f)
{
    if (!__atomic_fetch_or(&frontends, (unsigned)f, __ATOMIC_RELAXED)) {
        noted_pid = (int)getpid();
        atexit(report_idle_at_exit);
    }
}

static void start(void)
{
    gz_client *c = &gz_the_client;
    c->pid = (int)getpid();
    snprintf(c->exe, sizeof c->exe, "%s",
             program_invocation_short_name[0] ? program_invocation_short_name : "program");
    gz_config_read(&c->cfg, c->exe, c->pid);
    if (!gz_queue_init(&c->queue, c->cfg.queue_items)) {
        gz_log("out of memory for the event queue; timing is off for this process");
        __atomic_store_n(&state, STOPPED, __ATOMIC_RELEASE);
        return;
    }
    /* With the program's signals blocked: the stop handler waits for the
     * worker, and a program's handler must run on a thread of its own. */
    int err = gz_thread_start(&worker, NULL, gz_worker_main, NULL);
    if (err) {
        gz_log("cannot start the worker thread (%s); timing is off for this process",
               strerror(err));
        gz_queue_destroy(&c->queue);
        __atomic_store_n(&state, STOPPED, __ATOMIC_RELEASE);
        return;
    }
    atexit(stop_at_exit);
    pthread_atfork(NULL, NULL, forked_child);
    __atomic_store_n(&state, RUNNING, __ATOMIC_RELEASE);
    gz_signals_install();
}

bool gz_client_start(void)
{
    pthread_once(&start_once, start);
    return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == RUNNING;
}

static bool running(void)
{
    return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == RUNNING;
}

bool gz_client_running(void)
{
    return running() && !__atomic_load_n(&stopping, __ATOMIC_ACQUIRE);
}

/* An output nobody reads gets this long at exit before it is given up
 * (gz_jsonw.deadline_ns); a worker that does not move at all for
 * STUCK_NS is left behind. Together they bound what any output can add to
 * the program's exit to about 2 s. */
#define OUTPUT_GRACE_NS 1000000000ull
#define STUCK_NS 2000000000ull

/* Where a checkpoint left the worker stuck: its progress then (UINT64_MAX:
 * never) and since when it had not moved. Under checkpoint_lock. */
static uint64_t left_stuck_at = UINT64_MAX, left_stuck_since;

/* Waits for the worker while it gets on; false when it has not moved for
 * STUCK_NS (blocked in a write to a pipe nobody reads, in a driver),
 * counting the time a checkpoint already saw it stuck where it still is. */
static bool join_worker_bounded(void)
{
    uint64_t seen = __atomic_load_n(&gz_the_client.worker_progress, __ATOMIC_RELAXED);
    uint64_t still_since = gz_host_now_ns();
    pthread_mutex_lock(&checkpoint_lock);
    if (seen == left_stuck_at)
        still_since = left_stuck_since;
    pthread_mutex_unlock(&checkpoint_lock);
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        int err = pthread_timedjoin_np(worker, NULL, &until);
        if (err != ETIMEDOUT)
            return true;
        uint64_t now = gz_host_now_ns();
        uint64_t p = __atomic_load_n(&gz_the_client.worker_progress, __ATOMIC_RELAXED);
        if (p != seen) {
            seen = p;
            still_since = now;
        } else if (now - still_since >= STUCK_NS) {
            return false;
        }
    }
}

static void say_stuck(void)
{
    gz_log("the worker has been stuck for %llu s at exit (an output nobody reads?); "
           "exiting without it: the trace may lack its end and the summary is not printed",
           STUCK_NS / 1000000000ull);
}

void gz_client_stop(void)
{
    if (!running())
        return;
    /* A stop a signal began (the worker stops on its own) still ends here:
     * the exit must not go on while the worker writes the trace's end. */
    if (!__atomic_exchange_n(&stopping, 1, __ATOMIC_ACQ_REL)) {
        /* An output a checkpoint already found taking nothing has had its
         * grace: given up now. */
        pthread_mutex_lock(&checkpoint_lock);
        bool still_stuck = left_stuck_at ==
                           __atomic_load_n(&gz_the_client.worker_progress, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&checkpoint_lock);
        __atomic_store_n(&gz_the_client.output_deadline_ns,
                         gz_host_now_ns() + (still_stuck ? 0 : OUTPUT_GRACE_NS), __ATOMIC_RELEASE);
        gz_queue_stop(&gz_the_client.queue);
    }
    if (pthread_equal(pthread_self(), worker))
        return; /* exit() from inside a collector: the worker finishes on return */
    if (__atomic_exchange_n(&joining, 1, __ATOMIC_ACQ_REL)) {
        /* Another thread joins (exit() on two threads at once): wait for
         * the worker all the same. */
        gz_signals_wait_worker(0);
        return;
    }
    /* Its state stays as it is when it is stuck: the worker may still use it. */
    if (!join_worker_bounded())
        say_stuck();
    __atomic_store_n(&state, STOPPED, __ATOMIC_RELEASE);
}

/* A checkpoint waits for a worker that gets on; one that has not moved for
 * this long is left to it (an output nobody reads, a stalled FIFO): the
 * program is not kept in vkDestroyDevice for it, and a later checkpoint
 * does not wait at all while the worker is still where it was left. */
#define CHECKPOINT_STUCK_NS 1000000000ull

/* Waits until checkpoint n is made or the worker has finished, while the
 * worker gets on. */
static void wait_checkpoint(uint64_t n)
{
    uint64_t seen = __atomic_load_n(&gz_the_client.worker_progress, __ATOMIC_RELAXED);
    uint64_t still_since = gz_host_now_ns();
    pthread_mutex_lock(&checkpoint_lock);
    if (seen == left_stuck_at) {
        pthread_mutex_unlock(&checkpoint_lock);
        return;
    }
    while (checkpoints_made < n && !gz_signals_worker_is_done()) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 20000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&checkpoint_cv, &checkpoint_lock, &until);
        uint64_t now = gz_host_now_ns();
        uint64_t p = __atomic_load_n(&gz_the_client.worker_progress, __ATOMIC_RELAXED);
        if (p != seen) {
            seen = p;
            still_since = now;
        } else if (now - still_since >= CHECKPOINT_STUCK_NS) {
            left_stuck_at = p;
            left_stuck_since = still_since;
            static int once;
            gz_log_once(&once, "the worker has not moved for %llu s (an output nobody "
                               "reads?); the trace could not be completed when the last "
                               "device or instance went",
                        CHECKPOINT_STUCK_NS / 1000000000ull);
            break;
        }
    }
    pthread_mutex_unlock(&checkpoint_lock);
}

void gz_client_checkpoint(bool summary)
{
    if (!gz_client_running() || pthread_equal(pthread_self(), worker))
        return;
    /* Another front end (GL, OpenCL) goes on timing: the summary waits
     * for the exit. */
    unsigned others = GZ_FRONTEND_OPENGL | GZ_FRONTEND_OPENCL;
    pthread_mutex_lock(&checkpoint_lock);
    uint64_t n = ++checkpoints_asked;
    if (summary && !(__atomic_load_n(&frontends, __ATOMIC_RELAXED) & others))
        checkpoint_summary = true;
    pthread_mutex_unlock(&checkpoint_lock);
    gz_queue_kick(&gz_the_client.queue);
    wait_checkpoint(n);
}

uint64_t gz_client_checkpoint_asked(bool *summary)
{
    pthread_mutex_lock(&checkpoint_lock);
    uint64_t n = checkpoints_asked;
    *summary = checkpoint_summary;
    checkpoint_summary = false;
    pthread_mutex_unlock(&checkpoint_lock);
    return n;
}

void gz_client_checkpoint_made(uint64_t n)
{
    pthread_mutex_lock(&checkpoint_lock);
    if (n > checkpoints_made)
        checkpoints_made = n;
    pthread_cond_broadcast(&checkpoint_cv);
    pthread_mutex_unlock(&checkpoint_lock);
}

void gz_client_stop_for_signal(int sig)
{
    if (__atomic_exchange_n(&stopping, 1, __ATOMIC_ACQ_REL))
        return;
    gz_log("%s: closing the trace, then the signal ends the program", strsignal(sig));
    __atomic_store_n(&gz_the_client.output_deadline_ns, gz_host_now_ns() + OUTPUT_GRACE_NS,
                     __ATOMIC_RELEASE);
    gz_queue_stop(&gz_the_client.queue);
}

gz_level gz_client_level(void)
{
    return gz_the_client.cfg.level;
}

gz_vk_readback_mode gz_client_vk_readback(void)
{
    return gz_the_client.cfg.vk_readback;
}

bool gz_client_verbose(void)
{
    return gz_the_client.cfg.summary_verbose;
}

bool gz_emit(const gz_item *item)
{
    return running() && gz_queue_push(&gz_the_client.queue, item);
}

uint32_t gz_emit_room(void)
{
    return running() ? gz_queue_room(&gz_the_client.queue) : 0;
}

bool gz_emit_n(const gz_item *items, uint32_t n)
{
    return running() && gz_queue_push_n(&gz_the_client.queue, items, n);
}

void gz_count_dropped_zones(uint16_t track, uint64_t n)
{
    if (track < GZ_MAX_TRACKS)
        __atomic_fetch_add(&gz_the_client.track_drops[track], n, __ATOMIC_RELAXED);
}

uint64_t gz_flow_next(void)
{
    return __atomic_fetch_add(&next_flow, 1, __ATOMIC_RELAXED);
}

static uint16_t track_id_take(void)
{
    uint16_t id = 0;
    pthread_mutex_lock(&track_lock);
    if (nfree)
        id = free_ids[--nfree];
    else if (next_track < GZ_MAX_TRACKS)
        id = (uint16_t)next_track++;
    pthread_mutex_unlock(&track_lock);
    return id;
}

static void track_id_give(uint16_t id)
{
    pthread_mutex_lock(&track_lock);
    if (nfree < GZ_MAX_TRACKS)
        free_ids[nfree++] = id;
    pthread_mutex_unlock(&track_lock);
}

uint16_t gz_track_new(gz_track_api api, const char *name, double period_ns, uint32_t valid_bits,
                      uint16_t clock_track)
{
    return gz_track_new_on_device(api, name, NULL, period_ns, valid_bits, clock_track);
}

uint16_t gz_track_new_on_device(gz_track_api api, const char *name, const char *device,
                                double period_ns, uint32_t valid_bits, uint16_t clock_track)
{
    if (!running())
        return 0;
    uint16_t id = track_id_take();
    if (!id) {
        static int once;
        gz_log_once(&once, "more than %u GPU tracks at once; zones of the others are dropped",
                    GZ_MAX_TRACKS - 1);
        return 0;
    }
    gz_item items[2] = {
        {.type = GZ_ITEM_TRACK_NEW,
         .track = id,
         .ctx = {.period_ns = period_ns,
                 .valid_bits = valid_bits,
                 .api = api,
                 .clock = clock_track,
                 .device = device && *device ? gz_intern_cstr(device) : 0}},
        {.type = GZ_ITEM_TRACK_NAME, .track = id, .name = gz_intern_cstr(name)},
    };
    if (!gz_emit_n(items, 2)) {
        track_id_give(id);
        return 0;
    }
    return id;
}

void gz_track_end(uint16_t track)
{
    if (!track || track >= GZ_MAX_TRACKS || !running())
        return;
    pthread_mutex_lock(&track_lock);
    if (nending < GZ_MAX_TRACKS)
        ending_ids[nending++] = track;
    pthread_mutex_unlock(&track_lock);
}

uint32_t gz_client_tracks_ending(uint16_t *out, uint32_t max)
{
    pthread_mutex_lock(&track_lock);
    uint32_t n = nending < max ? nending : max;
    memcpy(out, ending_ids + (nending - n), n * sizeof *out);
    nending -= n;
    pthread_mutex_unlock(&track_lock);
    return n;
}

void gz_client_track_release(uint16_t track)
{
    __atomic_store_n(&gz_the_client.track_drops[track], 0, __ATOMIC_RELAXED);
    track_id_give(track);
}

void gz_track_set_name(uint16_t track, const char *name)
{
    gz_item it = {.type = GZ_ITEM_TRACK_NAME, .track = track, .name = gz_intern_cstr(name)};
    if (track)
        gz_emit(&it);
}

uint32_t gz_thread_id(void)
{
    static __thread uint32_t tid;
    if (!tid) {
        tid = (uint32_t)syscall(SYS_gettid);
        char name[64] = "";
        if (pthread_getname_np(pthread_self(), name, sizeof name) || !name[0])
            snprintf(name, sizeof name, "thread %u", tid);
        gz_item it = {.type = GZ_ITEM_THREAD_NAME, .name = gz_intern_cstr(name), .cpu.tid = tid};
        gz_emit(&it);
    }
    return tid;
}

uint32_t gz_intern_once(uint32_t *cache, const char *name)
{
    uint32_t id = __atomic_load_n(cache, __ATOMIC_RELAXED);
    if (!id) {
        id = gz_intern_cstr(name);
        __atomic_store_n(cache, id, __ATOMIC_RELAXED);
    }
    return id;
}

void gz_frame_mark(uint32_t name)
{
    if (!running())
        return;
    gz_item it = {.type = GZ_ITEM_FRAME_MARK,
                  .name = name,
                  .cpu = {.begin_ns = gz_host_now_ns(), .tid = gz_thread_id()}};
    gz_emit(&it);
}

void gz_cpu_zone(uint32_t name, uint64_t begin_ns, uint64_t end_ns)
{
    if (!running())
        return;
    gz_item it = {.type = GZ_ITEM_CPU_ZONE,
                  .name = name,
                  .cpu = {.begin_ns = begin_ns, .end_ns = end_ns, .tid = gz_thread_id()}};
    gz_emit(&it);
}

void gz_flow_out(uint64_t flow, uint64_t ns)
{
    if (!running())
        return;
    gz_item it = {.type = GZ_ITEM_FLOW_OUT,
                  .flow = {.ns = ns, .flow = flow, .tid = gz_thread_id()}};
    gz_emit(&it);
}

void gz_flow_in(uint64_t flow, uint64_t ns)
{
    if (!running())
        return;
    gz_item it = {.type = GZ_ITEM_FLOW_IN,
                  .flow = {.ns = ns, .flow = flow, .tid = gz_thread_id()}};
    gz_emit(&it);
}

int gz_collector_add(gz_collect_fn fn, void *user)
{
    int id = -1;
    pthread_mutex_lock(&collect_lock);
    for (int i = 0; i < MAX_COLLECTORS; i++) {
        if (!collectors[i].fn) {
            collectors[i] = (collector){fn, user};
            id = i;
            break;
        }
    }
    pthread_mutex_unlock(&collect_lock);
    if (id < 0) {
        static int once;
        gz_log_once(&once, "more than %d GPU devices or contexts; results of the others are "
                           "read only when they are destroyed",
                    MAX_COLLECTORS);
    }
    return id;
}

void gz_collector_remove(int id)
{
    if (id < 0 || id >= MAX_COLLECTORS)
        return;
    /* Taking the lock waits for a collection in progress to return. */
    pthread_mutex_lock(&collect_lock);
    collectors[id] = (collector){0};
    pthread_mutex_unlock(&collect_lock);
}

void gz_client_run_collectors(bool final)
{
    pthread_mutex_lock(&collect_lock);
    for (int i = 0; i < MAX_COLLECTORS; i++)
        if (collectors[i].fn)
            collectors[i].fn(collectors[i].user, final);
    pthread_mutex_unlock(&collect_lock);
}
