/* What the clock model's two halves share, inside calibration/ only: the
 * line fit (model.c) finds a step in the GPU clock and calls the step
 * placement (model_step.c) to say where it fell and how sure that is. */
#ifndef GZ_MODEL_INTERNAL_H
#define GZ_MODEL_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "gz_calibration.h"

/* A contradiction larger than this is a step, not drift (real steps are
 * ms); also how much a step's size may change before it is placed again. */
#define GZ_MODEL_JUMP_NS 200000.0
/* 100 ms of GPU time: the longest host stall that hides completions, so
 * how far from a step a late time can still move it. */
#define GZ_MODEL_REPLACE_SPAN 1e8

/* GPU time relative to the model's first one (t_ref), as a double. */
static inline double gz_model_rel(const gz_clock_model *m, uint64_t gpu_ns)
{
    return (double)(int64_t)(gpu_ns - m->t_ref);
}

/* The last step's size at its place: the line before it less the line
 * after (positive for a forward step). */
static inline double gz_model_step_size(const gz_clock_model *m)
{
    return (m->before_step_a + m->before_step_b * m->step_t) - (m->a + m->b * m->step_t);
}

/* llround (halves away from zero), inline where every conversion rounds:
 * below 2^52 the truncation is exact and so is what it leaves; libm's for
 * the rest (larger, NaN). */
static inline long long gz_model_round(double x)
{
    if (!(x > -0x1p52 && x < 0x1p52))
        return llround(x);
    long long t = (long long)x;
    double f = x - (double)t;
    return t + (f >= 0.5) - (f <= -0.5);
}

/* The largest |slope| the hull answers for (the fit's are 0.1 at most). */
#define GZ_MODEL_HULL_SLOPE 1.0

/* Makes m->hull for the window as it is now (model_hull.c). */
void gz_model_hull_make(gz_clock_model *m);

/* A bucket's bounds changed (or it was made or dropped): hulls made with
 * them are stale. */
static inline void gz_model_bucket_changed(gz_clock_model *m, const gz_model_bucket *b)
{
    size_t block = (size_t)(b - m->buckets) / GZ_MODEL_HULL_BLOCK;
    m->gen++;
    m->hull.block_gen[block]++;
    m->hull.group_gen[block / GZ_MODEL_HULL_GROUP]++;
}

/* Places the last step (step_t, step_doubt) from the evidence the model
 * keeps: its bounds one by one, its zones' times, the gaps between them.
 * at_jump: the step was just found, and may turn out to be the rest of the
 * step before it (the two are then made one). */
void gz_model_place_step(gz_clock_model *m, bool at_jump);

/* Whether the last step's size changed enough since it was placed that it
 * should be placed again (and the rings still hold the times around it). */
bool gz_model_step_resized(const gz_clock_model *m);

#endif
