/* The network side of listen mode: one thread of its own that listens on
 * TCP (127.0.0.1 unless GPUZONES_TRACY_ADDR widens it), announces the
 * program over UDP broadcast (only when widened: a loopback-only listener
 * has nobody else to tell), does the handshake with a Tracy profiler, and
 * then sends the frames the sink hands over (LZ4, as Tracy's stream format)
 * and hands back the queries the profiler sends.
 *
 * Peers: any number may be in their handshake at once, each for at most
 * GZ_TRACY_HANDSHAKE_MS; one that has not sent a Tracy handshake by then is
 * closed and never holds the place of a profiler. One profiler at a time
 * takes the data; one that comes while another is connected is told "not
 * available". When a profiler leaves, the next one may connect.
 *
 * Profilers take the link in turns, numbered from 1: a frame is encoded
 * for one turn (the receiver keeps references the encoder mirrors, and a
 * new profiler starts from none) and is sent only to that turn's profiler.
 * gz_tracy_link_turn says which turn frames are for now: the first until
 * its profiler leaves, then the next, and so on. Frames for a turn whose
 * profiler has left, or for one no profiler came to, are let go and
 * counted.
 *
 * The sink (on the worker thread) and this thread share only what is behind
 * the link's mutex: frames to send, queries received, the turn, the
 * counters. The link never formats items and never blocks the sink: a
 * profiler that stops reading makes frames wait in memory, which the sink
 * bounds (gz_tracy_link_queued). */
#ifndef GZ_TRACY_LINK_H
#define GZ_TRACY_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gz_tracy_wire.h"

#define GZ_TRACY_HANDSHAKE_MS 1500
#define GZ_TRACY_MAX_PEERS 16 /* profilers reported one by one; later ones with the last */

typedef struct gz_tracy_link gz_tracy_link;

/* What a frame holds, for the exit report of what each profiler took. */
typedef struct gz_tracy_counts {
    uint64_t gpu_zones, cpu_zones, frame_marks, messages;
} gz_tracy_counts;

/* One profiler that connected. */
typedef struct gz_tracy_peer_report {
    char addr[64];            /* its address and port */
    gz_tracy_counts took;     /* in the frames it was sent */
    uint64_t bytes_in, bytes_out; /* before / after compression */
    bool got_final;           /* it was sent the frame marked final */
    bool left;                /* its connection has ended */
} gz_tracy_peer_report;

typedef struct gz_tracy_link_totals {
    uint64_t bytes_in, bytes_out; /* to every profiler */
    uint64_t frames_lost;         /* frames no profiler took */
    gz_tracy_counts lost;         /* what they held */
    uint32_t refused;             /* handshakes refused (other protocol) */
    uint32_t no_handshake;        /* peers closed without a Tracy handshake in time */
    uint32_t turned_away;         /* profilers told "not available" (another was connected) */
    uint32_t npeers;              /* profilers that connected (up to GZ_TRACY_MAX_PEERS reported) */
    gz_tracy_peer_report peers[GZ_TRACY_MAX_PEERS];
} gz_tracy_link_totals;

/* Listens on addr (an IPv4 or IPv6 literal), on the first free TCP port of
 * [port, port + 19], and starts the thread. welcome: the message sent after
 * the handshake (its program name is broadcast too). NULL, with a
 * "gpuzones:" line, when no port is free or the thread cannot start. */
gz_tracy_link *gz_tracy_link_open(const char *addr, uint16_t port,
                                  const uint8_t welcome[GZ_TRACY_WELCOME_SIZE],
                                  const char *program, uint64_t pid);
uint16_t gz_tracy_link_port(const gz_tracy_link *l);
/* Whether the listener can be reached from other machines (not loopback). */
bool gz_tracy_link_widened(const gz_tracy_link *l);
/* Hands over one frame of whole items encoded for a turn (at most
 * GZ_TRACY_FRAME_MAX bytes, malloc'd; the link frees it); counts: what it
 * holds; final: it ends the data (its profiler then has everything). */
void gz_tracy_link_push(gz_tracy_link *l, uint8_t *frame, size_t len, uint32_t turn,
                        const gz_tracy_counts *counts, bool final);
/* The turn frames are for now (from 1). */
uint32_t gz_tracy_link_turn(gz_tracy_link *l);
/* Whether the profiler of that turn was sent the final frame and has left:
 * it has everything. */
bool gz_tracy_link_delivered(gz_tracy_link *l, uint32_t turn);
/* Bytes handed over and not yet sent or let go. */
size_t gz_tracy_link_queued(gz_tracy_link *l);
/* Takes up to max received queries (of the turn's profiler); returns
 * how many. */
size_t gz_tracy_link_queries(gz_tracy_link *l, gz_tracy_query *out, size_t max);
/* Waits up to ms for the turn to change, a profiler to leave or a query
 * to arrive. */
void gz_tracy_link_wait(gz_tracy_link *l, uint32_t ms);
/* Stops the thread (within a few tens of ms whatever the peers do), closes
 * the sockets, frees everything; *t: what went through. */
void gz_tracy_link_close(gz_tracy_link *l, gz_tracy_link_totals *t);

#endif
