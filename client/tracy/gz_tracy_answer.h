/* Listen mode's answers to the profiler's queries: the names it asks for
 * by the ids the items carried (strings, thread names, source locations),
 * looked up in the sink's tables, and an acknowledgement for everything
 * else. A query's id comes from the peer and is never trusted: an id that
 * is not ours gets "<name dropped>". Pure (no I/O), so that it is fuzzed
 * with the reading of the queries (gz_tracy_peer.h). */
#ifndef GZ_TRACY_ANSWER_H
#define GZ_TRACY_ANSWER_H

#include "gz_tracy_strtab.h"
#include "gz_tracy_wire.h"

/* Ids the profiler will ask about: strings and source locations live in
 * separate ranges so one can never be taken for the other. */
#define GZ_TRACY_STR_BASE 0x100000000ull
#define GZ_TRACY_SRCLOC_BASE 0x200000000ull
/* Threads standing for a GPU context's lanes: above any Linux tid. */
#define GZ_TRACY_LANE_TID_BASE 0xF0000000u

typedef struct gz_tracy_names {
    gz_tracy_strtab strings; /* names by content */
    gz_tracy_strtab srclocs; /* packed (name, function, file, line, color): five u64 */
    gz_tracy_strtab threads; /* packed tid -> value: name string id */
    uint32_t str_unknown, str_gpuzones;
} gz_tracy_names;

/* Makes the tables with their fixed entries; false without memory. */
bool gz_tracy_names_init(gz_tracy_names *n, uint32_t max_srclocs);
void gz_tracy_names_free(gz_tracy_names *n);

/* Appends the answer to q. */
void gz_tracy_answer(gz_tracy_enc *e, const gz_tracy_names *n, const gz_tracy_query *q);

#endif
