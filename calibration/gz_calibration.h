/* Clock calibration: pure math, no graphics API headers, libc only.
 *
 *   ticks.c   raw ticks -> GPU ns, exactly (fixed-point period)
 *   unwrap.c  N-bit timestamps -> a monotonic count, near a prediction
 *   sample.c  the best of a few calibrated pairs, with a bounded retry
 *   model.c   the GPU -> host line: constraints in, window, fit, steps found
 *   model_step.c  where a step fell, and which times it leaves in doubt
 *   model_hull.c  which of the window's bounds can be an edge of the band */
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

/* ns → ticks, for predictions only (long double: exact enough to choose a
 * wrap count, not to convert results). */
uint64_t gz_ns_to_ticks(uint64_t ns, double ns_per_tick);

/* Unwrapping of timestamps with N valid bits into a monotonic 64-bit tick
 * count. The first value fixes the origin (wrap count 0). */
typedef struct gz_unwrap {
    uint32_t bits;
    uint64_t mask;
    bool started;
    uint64_t first;   /* first unwrapped value */
    uint64_t highest; /* highest unwrapped value so far */
} gz_unwrap;

void gz_unwrap_init(gz_unwrap *u, uint32_t bits);
/* The value k * 2^N + (raw & mask) nearest to predicted (unwrapped ticks):
 * right while the prediction is within half a wrap of the truth, however
 * many wraps passed since the last value. */
uint64_t gz_unwrap_near(gz_unwrap *u, uint64_t raw, uint64_t predicted);
/* Wraps crossed between the first value and the highest one. */
uint64_t gz_unwrap_wraps(const gz_unwrap *u);

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

/* The clock model: host_ns = gpu_ns + a + b * (gpu_ns - t_ref), an offset
 * and a drift, fitted to constraints on the offset host - gpu at GPU times:
 * a calibrated pair or a sync point bounds it on both sides, a submission
 * on one side each (its work starts after its submit, ends before the host
 * saw it complete). model.c fits the line with the largest margin to every
 * constraint in a window of recent ones (a merely loose outlier cannot move
 * it), holds or refuses bounds that contradict the tight samples, and
 * finds steps in the GPU counter and changes of drift where the window
 * cannot agree; model_step.c places each step found, from the bounds one
 * by one and the gaps between the zones' times, and marks the times it
 * cannot tell the side of. Constraints are kept per 10 ms bucket
 * (the tightest of each side), so memory is bounded at any submit rate;
 * the lines before the last GZ_MODEL_STEPS steps are kept for zones that
 * wait to be converted. */
#define GZ_MODEL_BUCKETS 1024
#define GZ_MODEL_BUCKET_NS 10000000ull /* 10 ms of GPU time */
/* ±10 %: a timestampPeriod off by a few percent is a driver bug seen in
 * the wild, and the data decides within that; beyond any real crystal's
 * ±100 ppm the fit is reported as a wrong period (gz_gpu_clock_drift_note). */
#define GZ_MODEL_MAX_DRIFT 0.1
#define GZ_MODEL_SUSPECTS 16 /* bounds held at once */
#define GZ_MODEL_SLACKS 64   /* recent slacks kept per side */
#define GZ_MODEL_RECENT 256  /* recent constraints kept one by one: 60 ms of a busy queue */
#define GZ_MODEL_STEPS 8     /* lines kept from before earlier steps */
#define GZ_MODEL_ZONES 256   /* recent zones' times kept: where in busy work a step fell */

/* A zone's GPU times and which work it ran (zones with one work_id run
 * like work and take a like time). */
typedef struct gz_model_zone {
    uint64_t begin_ns, end_ns;
    uint32_t work_id;
} gz_model_zone;

/* Where the data could not tell on which side of a step GPU times lie:
 * those in [from, to] (relative to t_ref), where set. They may be off by
 * as much as the lines on either side of the step are apart there. */
typedef struct gz_model_doubt {
    double from, to;
    bool set;
} gz_model_doubt;

/* A line that held before GPU time t (relative to t_ref), and the doubt
 * over where the step at t fell. */
typedef struct gz_model_line {
    double t, a, b;
    gz_model_doubt doubt;
} gz_model_line;

/* A bound that contradicted the line while sync points are recent. */
typedef struct gz_model_suspect {
    uint64_t gpu_ns;
    double v;   /* the offset bound */
    double cut; /* v - line: negative for an upper bound below the line */
    bool lower;
    bool pair; /* one side of a tight sample's bracket (recent only) */
} gz_model_suspect;

typedef struct gz_model_bucket {
    int64_t id;       /* GPU time / GZ_MODEL_BUCKET_NS */
    double lo_t, lo;  /* tightest lower bound on the offset, at GPU time lo_t */
    double hi_t, hi;  /* tightest upper bound, at hi_t (times relative to t_ref) */
    bool has_lo, has_hi;
    uint8_t methods;  /* 1 << gz_calib_method that contributed */
} gz_model_bucket;

/* The buckets of a window whose bounds can be an edge of the band at
 * some slope (model_hull.c): a refit asks for the band at ~200 slopes, and
 * these few buckets give the very same edges as the whole window does.
 * Made from the same for each block of GZ_MODEL_HULL_BLOCK buckets and
 * each group of GZ_MODEL_HULL_GROUP blocks, kept until one of their
 * buckets changes: a refit merges a few dozen bounds, not the window's. */
#define GZ_MODEL_HULL_BLOCK 32
#define GZ_MODEL_HULL_BLOCKS (GZ_MODEL_BUCKETS / GZ_MODEL_HULL_BLOCK)
#define GZ_MODEL_HULL_GROUP 8
#define GZ_MODEL_HULL_GROUPS (GZ_MODEL_HULL_BLOCKS / GZ_MODEL_HULL_GROUP)
typedef struct gz_model_hull_block {
    bool made;
    uint64_t gen; /* the block's gen it was made for */
    uint8_t nlo, nhi;
    uint16_t lo[GZ_MODEL_HULL_BLOCK], hi[GZ_MODEL_HULL_BLOCK]; /* indices into buckets */
} gz_model_hull_block;

typedef struct gz_model_hull_group {
    bool made;
    uint64_t gen;
    uint16_t nlo, nhi;
    uint16_t lo[GZ_MODEL_HULL_BLOCK * GZ_MODEL_HULL_GROUP];
    uint16_t hi[GZ_MODEL_HULL_BLOCK * GZ_MODEL_HULL_GROUP];
} gz_model_hull_group;

/* A bound's GPU time and value, as its bucket holds them. */
typedef struct gz_model_hull_point {
    double t, v;
} gz_model_hull_point;

typedef struct gz_model_hull {
    bool valid;
    uint64_t gen;          /* the window's gen it was made for */
    uint32_t head, count;  /* and its buckets */
    uint32_t nlo, nhi;
    gz_model_hull_point lo[GZ_MODEL_BUCKETS], hi[GZ_MODEL_BUCKETS];
    uint64_t block_gen[GZ_MODEL_HULL_BLOCKS]; /* changes of each block's buckets */
    uint64_t group_gen[GZ_MODEL_HULL_GROUPS];
    gz_model_hull_block blocks[GZ_MODEL_HULL_BLOCKS];
    gz_model_hull_group groups[GZ_MODEL_HULL_GROUPS];
} gz_model_hull;

typedef struct gz_clock_model {
    /* Results, for users and reports. */
    gz_calib_method method;  /* best kind of constraint in the window */
    uint64_t samples;        /* constraints accepted */
    uint64_t deviation_ns;   /* half the fitted band: the error bound at the fit */
    uint64_t calib_deviation_ns; /* smallest maxDeviation of a calibrated pair */
    int64_t offset_ns;       /* host - gpu at the newest constraint */
    double drift_ppm;
    uint64_t jumps;          /* steps detected */
    uint64_t bounds_refused; /* bounds that contradicted the tight samples */
    uint64_t refits;
    /* The line before the last step, for GPU times before it: zones from
     * just before a jump are converted after it (look-ahead). */
    bool has_before_step;
    double before_step_a, before_step_b, step_t;
    gz_model_doubt step_doubt; /* where that step may be instead */
    /* The steps before that, newest first: each line holds before its t. */
    uint32_t nolder;
    gz_model_line older[GZ_MODEL_STEPS];
    /* The line before a contradiction too small to be a step dropped the
     * window's history (t: the newest constraint dropped). */
    bool has_dropped;
    gz_model_line dropped;
    /* The fit. */
    bool have_ref, fitted, dirty;
    bool fit_lo, fit_hi;     /* the fit had constraints on that side */
    uint64_t t_ref;          /* GPU ns of the first constraint */
    /* host - gpu of the first constraint: offsets are kept relative to it
     * so that doubles hold them to the ns (NVIDIA's GPU clock counts from
     * the Unix epoch, 1.8e18 ns from CLOCK_MONOTONIC: a double holds that
     * only to 256 ns). */
    bool have_o_ref;
    int64_t o_ref;
    double a, b;
    double newest_t;
    bool has_tight;
    double tight_t;          /* newest GPU time of a calibrated pair or sync point */
    double fit_t;            /* newest_t at the last fit */
    /* Bounds held as suspects (see gz_model_add_bounds). */
    uint32_t nsuspects;
    double suspect_a, suspect_b; /* the line the first of them contradicted */
    gz_model_suspect suspects[GZ_MODEL_SUSPECTS];
    bool step_pending; /* suspects were confirmed: the next contradiction is a step */
    /* How far recent bounds of each side were from a line resting on tight
     * samples (ns, newest GZ_MODEL_SLACKS), and the smallest of them frozen
     * at a step that only bounds show (bounds_after_step). */
    double slack[2][GZ_MODEL_SLACKS];
    uint32_t nslack[2], slack_next[2];
    bool bounds_after_step;
    bool slope_known; /* tight samples 100 ms apart fixed the drift: it changes slowly now */
    double step_slack[2];
    /* The newest bounds and the two sides of tight samples, one by one
     * (a suspect's fields; cut unused). */
    uint32_t nrecent, recent_next;
    gz_model_suspect recent[GZ_MODEL_RECENT];
    /* The newest zones: the gaps between them inside a submission are
     * short unless a step fell there. */
    uint32_t nzones, zone_next;
    gz_model_zone zones[GZ_MODEL_ZONES];
    /* Times that came in after the last step was placed, older than the
     * newest it was placed with (completions are seen late, a sync point
     * may come first): it is placed again at the next fit. */
    double placed_upto;
    double placed_size; /* the step's size then (ns): where it fell depends on it */
    bool replace_step;
    /* After a step, the window's oldest time: a time older than that comes
     * late from before the step, or too late to matter, and is evidence
     * for where the step fell only, not a constraint on the line after. */
    double window_from;
    /* How closely the drift in use is known (half the slopes its window
     * allowed) and when: a later window replaces it only where it knows it
     * more closely (model.c, best_slope). */
    double slope_spread, spread_t;
    /* The window: a ring of buckets, oldest first; gen counts the changes
     * of their bounds (the hull is made again after one). */
    uint32_t head, count;
    uint64_t gen;
    gz_model_bucket buckets[GZ_MODEL_BUCKETS];
    gz_model_hull hull;
} gz_clock_model;

void gz_model_init(gz_clock_model *m);

/* A calibrated pair, or a sync point given as a pair: host_ns the middle of
 * the bracket and deviation_ns half its width. */
void gz_model_add_pair(gz_clock_model *m, gz_calib_method method, const gz_calib_pair *p);

/* Causality bounds: GPU time gpu_begin_ns happened at or after host time
 * host_ns_not_before, gpu_end_ns at or before host_ns_not_after. A host time
 * of 0 means that side is unknown. */
void gz_model_add_bounds(gz_clock_model *m, uint64_t gpu_begin_ns, uint64_t host_ns_not_before,
                         uint64_t gpu_end_ns, uint64_t host_ns_not_after);

/* A zone's GPU times and the work it ran (work_id: the same for the same
 * work, 0 for unknown): no constraint, but where in a busy queue's work a
 * step fell is read from the gaps between zones, and a step is not put
 * where it would leave a zone far shorter than others of its work_id
 * (model_step.c). */
void gz_model_add_zone(gz_clock_model *m, uint64_t begin_ns, uint64_t end_ns, uint32_t work_id);

/* Refits if constraints arrived since the last fit. Cost: ~200 band
 * widths over the window's hull (model_hull.c: a handful of buckets on a
 * calibrated clock, made again from the blocks that changed), a few
 * passes over the window where the window does not agree (a step). */
void gz_model_fit(gz_clock_model *m);

/* GPU ns → host ns with the current fit (saturating). */
uint64_t gz_model_to_host(const gz_clock_model *m, uint64_t gpu_ns);
/* How far gz_model_to_host may be off for gpu_ns because the data could
 * not tell on which side of a step it lies (0: it could). */
uint64_t gz_model_doubt_ns(const gz_clock_model *m, uint64_t gpu_ns);
/* host ns → GPU ns, the inverse: to predict where a timestamp should lie. */
uint64_t gz_model_to_gpu(const gz_clock_model *m, uint64_t host_ns);

#endif
