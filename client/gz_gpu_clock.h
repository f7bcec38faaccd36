/* One GPU clock as the worker sees it: raw N-bit ticks in, host ns out.
 *
 * Ticks are unwrapped with a prediction from the clock model (so any number
 * of wraps between readings is fine), counted from an origin a little below
 * the first value (so ticks * period never overflows), converted to ns, and
 * mapped to the host clock by the model, which is fitted from calibrated
 * pairs, sync points and the causality bounds of submissions. */
#ifndef GZ_GPU_CLOCK_H
#define GZ_GPU_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gz_calibration.h"

typedef struct gz_gpu_clock {
    double period_ns;
    uint32_t valid_bits;
    gz_tick_period period;
    bool ns_ticks; /* a period of exactly 1 ns: ticks are ns */
    gz_unwrap unwrap;
    bool have_origin;
    uint64_t origin; /* ticks */
    bool have_base;
    uint64_t base; /* unwrapped start of the latest submission: zones follow it */
    /* The anchor: an early pair or sync point (the tightest seen while no
     * other is far enough from it); settled once another one lies at least
     * SETTLE_SPAN after it and both together fix the drift to SETTLE_PPM
     * (the drift is known from then on). */
    bool have_first_pair, settled;
    uint64_t first_pair_ns, first_pair_dev_ns;
    gz_clock_model model;
    uint32_t record_id; /* its lines in GPUZONES_CLOCK_RECORD; 0: none */
} gz_gpu_clock;

void gz_gpu_clock_init(gz_gpu_clock *c, double period_ns, uint32_t valid_bits);

/* A calibrated pair or sync point (method) for raw ticks at host_ns. */
void gz_gpu_clock_add_pair(gz_gpu_clock *c, gz_calib_method method, uint64_t raw,
                           uint64_t host_ns, uint64_t deviation_ns);
/* Whether the model rests on two pairs or sync points far enough apart to
 * know the drift. Before that, zones wait for them (up to a bound): the
 * first ones of a run would otherwise be placed by the first sample alone,
 * or, where it failed, by loose submission bounds. */
bool gz_gpu_clock_settled(const gz_gpu_clock *c);
/* A causality bound: raw happened at or after (not_before) or at or before
 * host_ns. A not-before bound is a submission's start: the zones read after
 * it are unwrapped near it. */
void gz_gpu_clock_add_bound(gz_gpu_clock *c, uint64_t raw, uint64_t host_ns, bool not_before);
/* A zone's two timestamps → GPU ns: its end at or after the latest
 * submission's start, its begin at or before its end. work_id: which work
 * it ran (its name's id: zones of one name are like work, which the clock
 * model compares when it places a step). */
void gz_gpu_clock_zone_ns(gz_gpu_clock *c, uint64_t raw_begin, uint64_t raw_end, uint32_t work_id,
                          uint64_t *begin_ns, uint64_t *end_ns);
/* Refits the model (once per drain cycle) and maps GPU ns to host ns. */
void gz_gpu_clock_fit(gz_gpu_clock *c);
uint64_t gz_gpu_clock_to_host(const gz_gpu_clock *c, uint64_t gpu_ns);
/* How far that may be off because a step in the clock fell where the data
 * could not tell on which side of it gpu_ns lies (0: it could). */
uint64_t gz_gpu_clock_doubt_ns(const gz_gpu_clock *c, uint64_t gpu_ns);
/* For the summary: "" while the fitted drift is one a clock can have, else
 * a note (written to buf, size bytes) that it is beyond any crystal's, so
 * the device's timestamp period is likely off by that much. */
const char *gz_gpu_clock_drift_note(double drift_ppm, char *buf, size_t size);
/* host ns - GPU ns (raw ticks times the period) at the newest constraint:
 * the correction as a user would compute it from the driver's values. */
int64_t gz_gpu_clock_offset_ns(const gz_gpu_clock *c);

#endif
