/* Ctrl-C: a program ended by SIGINT, SIGTERM or SIGHUP, which
 * never runs atexit, still gets its trace closed and its summary.
 *
 * At client start, for each of those signals left at its default action,
 * a handler of ours is installed. It does only async-signal-safe things:
 * it posts the signal for the worker (an atomic), which notices it after
 * its next take (every GPUZONES_POLL_MS), runs the collectors a last time,
 * closes the sinks and says it is done. The handler waits for that, a
 * bounded time, then restores the default action and raises the signal
 * again, so the program ends exactly as it would have without us (same
 * exit status, core dump rules and all).
 *
 * A program that had its own handler when the client started keeps it:
 * ours only passes the signal on to it (the program decides what the
 * signal does; if it then exits, atexit stops the client as usual). A
 * handler the program installs later simply replaces ours. */
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

static struct sigaction previous[NSIG_HANDLED];
static bool chained[NSIG_HANDLED]; /* the program's own handler, called instead */
static pid_t owner;                /* a fork child is not the process that started us */
static int requested;              /* the signal that asked for a stop (atomic) */
static int done;                   /* the worker has closed the outputs (atomic) */
static int handling;               /* a handler is waiting for the worker (atomic) */

/* The handler waits this long for the worker, longer only while the worker
 * visibly gets on (a large trace being written), never more than
 * WAIT_MAX_NS: an interrupted thread may hold a lock the worker needs. */
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

/* What the signal would have done without us: its default action, raised
 * again. It is blocked while its handler runs, so it lands as the handler
 * returns. */
static void default_action(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

static void wait_for_worker(void)
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
        if (now - still_since >= WAIT_STUCK_NS || now - start >= WAIT_MAX_NS) {
            static const char msg[] = "gpuzones: the trace could not be closed in time; the "
                                      "signal ends the program without it\n";
            ssize_t ignored = write(2, msg, sizeof msg - 1);
            (void)ignored;
            return;
        }
        nanosleep(&slice, NULL);
    }
}

static void on_signal(int sig, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    int i = index_of(sig);
    if (i >= 0 && chained[i]) {
        const struct sigaction *p = &previous[i];
        if (p->sa_flags & SA_SIGINFO)
            p->sa_sigaction(sig, info, context);
        else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN)
            p->sa_handler(sig);
        errno = saved_errno;
        return;
    }
    /* A signal while another is handled (timeout(1) signals the program
     * and then its whole process group; a second Ctrl-C): the first
     * handler ends the program within its bounded wait. */
    if (getpid() == owner && __atomic_load_n(&handling, __ATOMIC_ACQUIRE)) {
        errno = saved_errno;
        return;
    }
    /* A fork child, or a client already stopping or stopped (the program
     * is exiting): end now, as the signal would. */
    if (getpid() != owner || !gz_client_running() ||
        __atomic_exchange_n(&handling, 1, __ATOMIC_ACQ_REL)) {
        default_action(sig);
        errno = saved_errno;
        return;
    }
    /* An output nobody reads must not keep the worker from noticing. */
    __atomic_store_n(&gz_the_client.output_deadline_ns,
                     (uint64_t)mono_ns() + OUTPUT_GIVE_UP_NS, __ATOMIC_RELEASE);
    __atomic_store_n(&requested, sig, __ATOMIC_RELEASE);
    wait_for_worker();
    default_action(sig);
    errno = saved_errno;
}

void gz_signals_install(void)
{
    owner = getpid();
    for (unsigned i = 0; i < NSIG_HANDLED; i++) {
        struct sigaction ours;
        memset(&ours, 0, sizeof ours);
        ours.sa_sigaction = on_signal;
        ours.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&ours.sa_mask);
        for (unsigned k = 0; k < NSIG_HANDLED; k++)
            sigaddset(&ours.sa_mask, signals[k]); /* one stop at a time per thread */
        if (sigaction(signals[i], NULL, &previous[i]) != 0)
            continue;
        bool is_default = !(previous[i].sa_flags & SA_SIGINFO) &&
                          previous[i].sa_handler == SIG_DFL;
        bool is_ignored = !(previous[i].sa_flags & SA_SIGINFO) &&
                          previous[i].sa_handler == SIG_IGN;
        if (is_ignored)
            continue; /* it does nothing: nothing to add */
        chained[i] = !is_default;
        if (chained[i])
            ours.sa_flags |= previous[i].sa_flags & SA_NODEFER;
        sigaction(signals[i], &ours, NULL);
    }
}

void gz_signals_block_in_thread(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (unsigned i = 0; i < NSIG_HANDLED; i++)
        sigaddset(&set, signals[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

int gz_signals_requested(void)
{
    return __atomic_load_n(&requested, __ATOMIC_ACQUIRE);
}

void gz_signals_worker_done(void)
{
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}
