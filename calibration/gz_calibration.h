/* Clock calibration: pure math, no graphics API headers, libc only.
 *
 * GPU timestamps arrive as raw ticks with N valid bits and a period in ns
 * (a float in Vulkan). This module turns ticks into GPU nanoseconds without
 * accumulating float error, picks the best calibrated sample, and maps GPU
 * ns onto host ns through a clock model. The model is a plain offset for
 * now; drift and wrap handling are added behind the same interface. */
#ifndef GZ_CALIBRATION_H
#define GZ_CALIBRATION_H

#include <stdbool.h>
#include <stdint.h>

/* Mask of the valid low bits of a timestamp: correct for bits == 64 (no
 * shift by 64) and 0 for bits == 0 (no timestamps). Bits above 64 clamp. */
uint64_t gz_ticks_mask(uint32_t valid_bits);

/* Period of one tick as fixed point with 32 integer and 64 fractional bits,
 * so that conversions of large tick counts are exact integer products instead
 * of float products. 64 fractional bits hold every double period from 2^-11
 * to 2^32 ns exactly: 32 would be off by up to 2^-33 ns per tick, which is
 * 128 ns after 2^40 ticks for a period that is not a float (1e9 / 19.2e6).
 * Use the functions; the fields are not meant to be read elsewhere. */
typedef struct gz_tick_period {
    uint64_t fx;    /* ns per tick * 2^32, rounded down */
    uint32_t fx_lo; /* the next 32 fractional bits, rounded to nearest */
} gz_tick_period;

/* A period that is negative, zero, NaN or infinite is taken as 1.0 ns (one
 * line in the caller's log is the caller's business). One of 2^32 ns or more
 * saturates. */
gz_tick_period gz_tick_period_from_ns(double ns_per_tick);

/* ticks * period, in ns, rounded down; saturates at UINT64_MAX. */
uint64_t gz_ticks_to_ns(uint64_t ticks, gz_tick_period period);

/* One calibrated pair: a GPU time and a host time taken together, with the
 * driver's bound on how far apart the two readings may be. */
typedef struct gz_calib_pair {
    uint64_t gpu_ns;
    uint64_t host_ns;
    uint64_t deviation_ns;
} gz_calib_pair;

/* Reads one calibrated pair; returns false when the read failed. */
typedef bool (*gz_calib_read_fn)(void *user, gz_calib_pair *out);

/* Calls read up to max_tries times (bounded: a driver that keeps failing or
 * keeps reporting a wide deviation must not hang us) and keeps the pair with
 * the smallest deviation. Stops early once a pair's deviation is at most
 * good_enough_ns. Returns false when no read succeeded. */
bool gz_calib_sample_best(gz_calib_read_fn read, void *user, unsigned max_tries,
                          uint64_t good_enough_ns, gz_calib_pair *best);

/* How the model's latest estimate was obtained, best first. */
typedef enum gz_calib_method {
    GZ_CALIB_NONE = 0,       /* nothing known yet: identity mapping */
    GZ_CALIB_CALIBRATED = 1, /* driver-calibrated pairs */
    GZ_CALIB_SYNC_POINT = 2, /* host time bracketing a known GPU timestamp */
    GZ_CALIB_BOUNDS = 3,     /* only causality bounds from submissions */
} gz_calib_method;

const char *gz_calib_method_name(gz_calib_method m);

/* Maps GPU ns to host ns. Today: offset taken from the most trustworthy
 * sample seen: a better method always wins; within one method a newer sample
 * wins unless its deviation is more than twice that of the sample in use
 * (model.c says why). Bounds only give the offset while no pair is known.
 * The fields are the model's private state. */
typedef struct gz_clock_model {
    gz_calib_method method;
    uint64_t samples;             /* samples accepted */
    uint64_t deviation_ns;        /* deviation of the sample in use */
    int64_t offset_ns;            /* host_ns - gpu_ns of the sample in use */
    /* bounds-only state: offset must lie in [lo, hi] */
    int64_t bound_lo;
    int64_t bound_hi;
    bool have_lo, have_hi;
} gz_clock_model;

void gz_model_init(gz_clock_model *m);

/* A calibrated pair or a bracketed sync point. For a sync point, host_ns is
 * the middle of the bracket and deviation_ns half its width; it is used as
 * the two bounds it is, intersected with all other bounds. */
void gz_model_add_pair(gz_clock_model *m, gz_calib_method method, const gz_calib_pair *p);

/* Causality bounds: the GPU time gpu_ns happened at or after host time
 * host_ns_not_before (a submit), or at or before host_ns_not_after (seen
 * complete). Pass 0 for an unknown side. */
void gz_model_add_bounds(gz_clock_model *m, uint64_t gpu_begin_ns, uint64_t host_ns_not_before,
                         uint64_t gpu_end_ns, uint64_t host_ns_not_after);

/* GPU ns → host ns with the current estimate (saturating at 0). */
uint64_t gz_model_to_host(const gz_clock_model *m, uint64_t gpu_ns);

#endif
