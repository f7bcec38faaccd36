/* GPUZONES_CLOCK_RECORD=path: every input of every GPU clock's model and
 * every time it converted, one line each, so that a run can be replayed
 * offline through a changed model (tools/clock_replay.c,
 * tests/clock/replay.py). Used by the worker thread only.
 *
 * Lines (GPU times in ns after unwrapping, host times CLOCK_MONOTONIC ns):
 *   C <clock>                          a new clock (a model from its start)
 *   P <clock> <method> <gpu> <host> <deviation>   gz_model_add_pair
 *   B <clock> <gpu begin> <host not before> <gpu end> <host not after>
 *                                      gz_model_add_bounds (0: side unknown)
 *   Z <clock> <gpu begin> <gpu end> <work id>      gz_model_add_zone
 *   F <clock>                          gz_model_fit
 *   H <clock> <gpu> <host>             gz_model_to_host returned host */
#ifndef GZ_CLOCK_RECORD_H
#define GZ_CLOCK_RECORD_H

#include <stdint.h>

/* Opens the record (truncating it) as the trace is opened; says why on
 * stderr and records nothing where it cannot. deadline_ns and progress as
 * in gz_jsonw (a FIFO's slow reader is waited for until the deadline). */
void gz_clock_record_open(const char *path, const uint64_t *deadline_ns, uint64_t *progress);
/* Flushes and closes it; says so where the record came out incomplete. */
void gz_clock_record_close(void);
/* A new clock's id for its lines, and its C line; 0 (no lines) while no
 * record is open. */
uint32_t gz_clock_record_new_clock(void);
/* One line, for a clock whose id is not 0. */
void gz_clock_record_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
