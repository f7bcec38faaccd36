/* What the clock model's two halves share, inside calibration/ only: the
 * line fit (model.c) finds a step in the GPU clock and calls the step
 * placement (model_step.c) to say where it fell and how sure that is. */
#ifndef GZ_MODEL_INTERNAL_H
#define GZ_MODEL_INTERNAL_H

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

/* Places the last step (step_t, step_doubt) from the evidence the model
 * keeps: its bounds one by one, its zones' times, the gaps between them.
 * at_jump: the step was just found, and may turn out to be the rest of the
 * step before it (the two are then made one). */
void gz_model_place_step(gz_clock_model *m, bool at_jump);

/* Whether the last step's size changed enough since it was placed that it
 * should be placed again (and the rings still hold the times around it). */
bool gz_model_step_resized(const gz_clock_model *m);

#endif
