/* State shared between client.c (entry points) and worker.c (consumer).
 * Not part of any API. */
#ifndef GZ_CLIENT_INTERNAL_H
#define GZ_CLIENT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "gz_config.h"
#include "gz_queue.h"

#define GZ_MAX_TRACKS 4096u

typedef struct gz_client {
    gz_config cfg;
    gz_queue queue;
    int pid;
    char exe[256];
    /* Zones dropped before they reached the queue, per track (index = id). */
    uint64_t track_drops[GZ_MAX_TRACKS];
    /* Set when the program exits: outputs that cannot take more by then
     * give up (gz_jsonw.deadline_ns). CLOCK_MONOTONIC ns, 0 = none. */
    uint64_t output_deadline_ns;
    /* Bumped by the worker as it gets on (cycles, writes): the exit waits
     * for a worker that moves, not for one that is stuck. */
    uint64_t worker_progress;
} gz_client;

extern gz_client gz_the_client;

/* For the worker. Takes the tracks that gz_track_end named since the last
 * call: call it before a queue take, so that the take holds their last
 * zones. */
uint32_t gz_client_tracks_ending(uint16_t *out, uint32_t max);
/* After the worker has finished a track (its drop count folded into the
 * totals): resets that count and lets gz_track_new reuse the id. */
void gz_client_track_release(uint16_t track);

/* For the worker: the number of the newest checkpoint asked for
 * (gz_client_checkpoint) and whether any asked since the last call wants
 * the summary; then, once it is made, tells the callers. */
uint64_t gz_client_checkpoint_asked(bool *summary);
void gz_client_checkpoint_made(uint64_t n);

/* Runs every collector once (final: the last time, before the worker stops). */
void gz_client_run_collectors(bool final);

/* Ctrl-C (signals.c): installs the handlers of SIGINT/SIGTERM/SIGHUP left
 * at their default action; the signal that asked for a stop, 0 if none;
 * the worker has closed its outputs (set by it, read by the waiters). */
void gz_signals_install(void);
int gz_signals_requested(void);
void gz_signals_worker_done(void);
bool gz_signals_worker_is_done(void);
/* Waits until the worker is done, while it gets on (it has not stood still
 * for 2 s) and for at most 5 s plus extra_ns; false when it gave up.
 * Async-signal-safe. */
bool gz_signals_wait_worker(long long extra_ns);
/* For the worker, when a signal asked for a stop: stops like
 * gz_client_stop without waiting for itself. */
void gz_client_stop_for_signal(int sig);

/* The worker thread's body: drains the queue until stop, then writes the
 * trace's end and the summary. */
void *gz_worker_main(void *arg);

#endif
