/* Ctrl-C: a program ended by SIGINT, SIGTERM or SIGHUP, which never runs
 * atexit, still gets its trace closed and its summary.
 *
 * At client start, for each of those signals whose action is the default
 * (SIG_DFL, whatever flags and mask the program saved with it: a reused
 * struct sigaction with SA_SIGINFO still means "default"), a handler of ours
 * is installed. It does only async-signal-safe things: it posts the signal
 * for the worker (an atomic), which notices it after its next take (every
 * GPUZONES_POLL_MS), runs the collectors a last time, closes the sinks and
 * says it is done. The handler waits for that, a bounded time, then puts
 * back the disposition the program had (the same SIG_DFL, flags and mask)
 * and raises the signal again, so the program ends exactly as it would
 * have without us (same exit status, core dump rules and all).
 *
 * Every other disposition is the program's and is never touched: its own
 * handler (with its SA_ONSTACK, SA_RESETHAND, SA_NODEFER and sa_mask) and
 * SIG_IGN stay exactly as it set them, and sigaction() reads them back
 * unchanged. Nothing of ours is ever put in front of a program's handler:
 * a wrapper would run the program's handler on the wrong stack, with the
 * wrong mask (a Go program aborts: its handlers must run on the signal
 * stack). Such a program ends as it decides; if it calls exit(), atexit
 * closes the trace as usual. A handler the program installs later simply
 * replaces ours.
 *
 * The threads gpuzones starts (gz_thread_start) block every asynchronous
 * signal, so that a signal meant for the process is always taken by one of
 * the program's threads, never run on ours: the program's handlers may
 * assume threads of their own (Go's do), and our handler waits for the
 * worker, which must never be the thread that waits. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gz_client.h"
#include "gz_client_internal.h"

static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSIG_HANDLED (sizeof signals / sizeof signals[0])

static struct sigaction program_action[NSIG_HANDLED]; /* SIG_DFL as the program left it */
static pid_t owner;   /* a fork child is not the process that started us */
static int requested; /* the signal that asked for a stop (atomic) */
static int done;      /* the worker has closed the outputs (atomic) */
static int handling;  /* a handler is waiting for the worker (atomic) */

/* The handler waits this long for the worker, longer only while the worker
 * visibly gets on (a large trace being written, listen mode waiting for a
 * profiler), never more than WAIT_MAX_NS plus the configured wait for a
 * profiler: an interrupted thread may hold a lock the worker needs. */
#define WAIT_STUCK_NS 2000000000ll
#define WAIT_MAX_NS 5000000000ll
#define OUTPUT_GIVE_UP_NS 1000000000ull

static int index_of(int sig)
{
    for (unsigned i = 0; i < NSIG_HANDLED; i++)
        if (signals[i] == sig)
            return (int)i;
    return -1;
}

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* What the signal would have done without us: the program's own (default)
 * disposition back in place, and the signal raised again. It is blocked
 * while its handler runs, so it lands as the handler returns. */
static void end_as_without_us(int sig)
{
    int i = index_of(sig);
    struct sigaction dfl;
    if (i >= 0) {
        dfl = program_action[i];
    } else {
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
    }
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

bool gz_signals_wait_worker(long long extra_ns)
{
    long long start = mono_ns(), still_since = start;
    uint64_t seen = __atomic_load_n(&gz_the_client.worker_progress, __ATOMIC_RELAXED);
    struct timespec slice = {0, 10000000};
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        long long now = mono_ns();
        uint64_t p = __atomic_load_n(&gz_the_client.worker_progress, __ATOMIC_RELAXED);
        if (p != seen) {
            seen = p;
            still_since = now;
        }
        if (now - still_since >= WAIT_STUCK_NS || now - start >= WAIT_MAX_NS + extra_ns)
            return false;
        nanosleep(&slice, NULL);
    }
    return true;
}

static void say_not_closed(void)
{
    static const char msg[] = "gpuzones: the trace could not be closed in time; the "
                              "signal ends the program without it\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
}

static void on_signal(int sig, siginfo_t *info, void *context)
{
    (void)info;
    (void)context;
    int saved_errno = errno;
    long long extra = gz_the_client.cfg.tracy == GZ_TRACY_LISTEN
                          ? (long long)gz_the_client.cfg.tracy_exit_wait_ms * 1000000ll
                          : 0;
    /* A fork child: the trace is the parent's. End now, as the signal would. */
    if (getpid() != owner) {
        end_as_without_us(sig);
        errno = saved_errno;
        return;
    }
    /* A signal while another is handled (timeout(1) signals the program
     * and then its whole process group; a second Ctrl-C): the first
     * handler ends the program within its bounded wait. */
    if (__atomic_exchange_n(&handling, 1, __ATOMIC_ACQ_REL)) {
        errno = saved_errno;
        return;
    }
    if (gz_client_running()) {
        /* An output nobody reads must not keep the worker from noticing. */
        __atomic_store_n(&gz_the_client.output_deadline_ns,
                         (uint64_t)mono_ns() + OUTPUT_GIVE_UP_NS, __ATOMIC_RELEASE);
        __atomic_store_n(&requested, sig, __ATOMIC_RELEASE);
    }
    /* Also when the client is already stopping (another thread is in
     * exit()): the worker is writing the trace's end, which the signal
     * must not cut. A client that never ran or has stopped is done. */
    if (!gz_signals_wait_worker(extra))
        say_not_closed();
    end_as_without_us(sig);
    errno = saved_errno;
}

void gz_signals_install(void)
{
    owner = getpid();
    for (unsigned i = 0; i < NSIG_HANDLED; i++) {
        struct sigaction now;
        if (sigaction(signals[i], NULL, &now) != 0)
            continue;
        /* sa_handler and sa_sigaction share their storage: SIG_DFL (0)
         * with or without SA_SIGINFO is the default action, SIG_IGN (1)
         * is ignoring, anything else is the program's handler. */
        if (now.sa_handler != SIG_DFL)
            continue;
        program_action[i] = now;
        struct sigaction ours;
        memset(&ours, 0, sizeof ours);
        ours.sa_sigaction = on_signal;
        /* SA_ONSTACK: on the thread's signal stack where the program set
         * one up (its stack may be nearly used up when the signal comes). */
        ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
        sigemptyset(&ours.sa_mask);
        for (unsigned k = 0; k < NSIG_HANDLED; k++)
            sigaddset(&ours.sa_mask, signals[k]); /* one stop at a time per thread */
        sigaction(signals[i], &ours, NULL);
    }
}

/* The signals a thread of ours leaves to the program's threads: all but
 * those the kernel sends to the thread that faulted (blocking those
 * would only turn a crash of ours into a silent kill). */
static void async_signals(sigset_t *set)
{
    sigfillset(set);
    static const int synchronous[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
    for (unsigned i = 0; i < sizeof synchronous / sizeof synchronous[0]; i++)
        sigdelset(set, synchronous[i]);
}

int gz_thread_start(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    sigset_t set, old;
    async_signals(&set);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    int err = pthread_create(thread, attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

int gz_signals_requested(void)
{
    return __atomic_load_n(&requested, __ATOMIC_ACQUIRE);
}

void gz_signals_worker_done(void)
{
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

bool gz_signals_worker_is_done(void)
{
    return __atomic_load_n(&done, __ATOMIC_ACQUIRE);
}
