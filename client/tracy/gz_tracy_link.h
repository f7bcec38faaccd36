/* The network side of listen mode: one thread of its own that listens on
 * TCP, announces the program over UDP broadcast, does the handshake with
 * one Tracy profiler, and then sends the frames the sink hands over (LZ4,
 * as Tracy's stream format) and hands back the queries the profiler sends.
 *
 * The sink (on the worker thread) and this thread share only what is behind
 * the link's mutex: frames to send, queries received, the state and the
 * counters. The link never formats items and never blocks the sink: a
 * profiler that stops reading makes frames wait in memory, which the sink
 * bounds (gz_tracy_link_queued). */
#ifndef GZ_TRACY_LINK_H
#define GZ_TRACY_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gz_tracy_wire.h"

typedef struct gz_tracy_link gz_tracy_link;

typedef enum gz_tracy_link_state {
    GZ_TRACY_LINK_WAITING,   /* listening; no profiler yet */
    GZ_TRACY_LINK_CONNECTED, /* a profiler takes the data */
    GZ_TRACY_LINK_DONE,      /* it asked to terminate, or went away */
} gz_tracy_link_state;

typedef struct gz_tracy_link_totals {
    uint64_t bytes_in, bytes_out; /* before / after compression */
    uint64_t frames_lost;         /* frames pushed after the profiler left */
    uint32_t refused;             /* handshakes refused (other protocol) */
} gz_tracy_link_totals;

/* Listens on the first free TCP port of [port, port + 19] and starts the
 * thread. welcome: the message sent after the handshake (its program name
 * is broadcast too). NULL, with a "gpuzones:" line, when no port is free or
 * the thread cannot start. */
gz_tracy_link *gz_tracy_link_open(uint16_t port, const uint8_t welcome[GZ_TRACY_WELCOME_SIZE],
                                  const char *program, uint64_t pid);
uint16_t gz_tracy_link_port(const gz_tracy_link *l);
/* Hands over one frame of whole items (at most GZ_TRACY_FRAME_MAX bytes,
 * malloc'd; the link frees it). */
void gz_tracy_link_push(gz_tracy_link *l, uint8_t *frame, size_t len);
/* Bytes handed over and not yet sent. */
size_t gz_tracy_link_queued(gz_tracy_link *l);
/* Takes up to max received queries; returns how many. */
size_t gz_tracy_link_queries(gz_tracy_link *l, gz_tracy_query *out, size_t max);
gz_tracy_link_state gz_tracy_link_get_state(gz_tracy_link *l);
/* Waits up to ms for the state to change or a query to arrive. */
void gz_tracy_link_wait(gz_tracy_link *l, uint32_t ms);
/* Stops the thread (within a few tens of ms whatever the peer does),
 * closes the sockets, frees everything; *t: what went through. */
void gz_tracy_link_close(gz_tracy_link *l, gz_tracy_link_totals *t);

#endif
