/* Everything listen mode reads from a peer on its socket, as pure functions
 * over the bytes received (no I/O, so that they can be fuzzed): the 12-byte
 * handshake a Tracy profiler opens with (the shibboleth "TracyPrf" and its
 * protocol version), then a stream of 13-byte queries, which may arrive
 * split anywhere. A peer is anyone who can reach the port: nothing it sends
 * is trusted. */
#ifndef GZ_TRACY_PEER_H
#define GZ_TRACY_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gz_tracy_wire.h"

#define GZ_TRACY_HELLO_SIZE 12u

typedef struct gz_tracy_hello {
    uint8_t buf[GZ_TRACY_HELLO_SIZE];
    size_t len;
} gz_tracy_hello;

typedef enum gz_tracy_hello_result {
    GZ_TRACY_HELLO_MORE,      /* not all of it yet */
    GZ_TRACY_HELLO_DONE,      /* a Tracy profiler; *version is its protocol */
    GZ_TRACY_HELLO_NOT_TRACY, /* the first bytes are not the shibboleth */
} gz_tracy_hello_result;

/* Takes up to the bytes the handshake still lacks from data[0, n) (*used:
 * how many; what follows belongs to the query stream). */
gz_tracy_hello_result gz_tracy_hello_feed(gz_tracy_hello *h, const uint8_t *data, size_t n,
                                          size_t *used, uint32_t *version);
/* How many bytes the handshake still lacks (what to read at most). */
size_t gz_tracy_hello_missing(const gz_tracy_hello *h);

typedef struct gz_tracy_qreader {
    uint8_t buf[GZ_TRACY_QUERY_SIZE];
    size_t len;
    bool ended; /* the peer asked to end (Terminate or Disconnect) */
} gz_tracy_qreader;

/* Parses queries from data[0, n) into out (at most max; *used: the bytes
 * taken, which stop after the max-th query or at an end). Returns how many
 * queries; Terminate and Disconnect are not returned but set r->ended, and
 * nothing after them is read. */
size_t gz_tracy_qreader_feed(gz_tracy_qreader *r, const uint8_t *data, size_t n, size_t *used,
                             gz_tracy_query *out, size_t max);

#endif
