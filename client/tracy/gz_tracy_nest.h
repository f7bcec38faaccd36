/* Tracy's GPU contexts keep each thread's zones as a strict stack: a zone's
 * end must come after the ends of every zone begun inside it. gpuzones
 * hands a track's zones over whole, parents first (earlier begin first,
 * longer first on equal begins), and zones of one track may overlap without
 * nesting (work of several submissions in flight). This places each zone on
 * a lane (a separate stack) where it nests, and says when a zone's end may
 * be sent: once a later zone begins at or after it, or at the end. Ends
 * come out in time order across all lanes, so the GPU times one context
 * receives never run backwards. */
#ifndef GZ_TRACY_NEST_H
#define GZ_TRACY_NEST_H

#include <stdbool.h>
#include <stdint.h>

#define GZ_TRACY_NEST_LANES 8
#define GZ_TRACY_NEST_DEPTH 64

typedef struct gz_tracy_nest {
    uint16_t depth[GZ_TRACY_NEST_LANES];
    uint64_t end_ns[GZ_TRACY_NEST_LANES][GZ_TRACY_NEST_DEPTH];
} gz_tracy_nest;

/* Called for each zone end that may go out now: its lane and end time. */
typedef void (*gz_tracy_nest_end_fn)(void *user, unsigned lane, uint64_t end_ns);

void gz_tracy_nest_init(gz_tracy_nest *n);
/* Ends (through fn) every open zone that ends at or before begin_ns, then
 * places [begin_ns, end_ns] on the first lane where it nests. Returns the
 * lane, or -1 when no lane has room (the zone is not placed: the caller
 * drops it and counts it). */
int gz_tracy_nest_place(gz_tracy_nest *n, uint64_t begin_ns, uint64_t end_ns,
                        gz_tracy_nest_end_fn fn, void *user);
/* Ends every open zone, in time order. */
void gz_tracy_nest_finish(gz_tracy_nest *n, gz_tracy_nest_end_fn fn, void *user);
/* Whether any zone is open. */
bool gz_tracy_nest_open(const gz_tracy_nest *n);

#endif
