#include <math.h>
#include <stdio.h>

#include "gz_client.h"
#include "gz_clock_record.h"
#include "gz_gpu_clock.h"

/* Each input of the model goes through one of these, recorded where
 * GPUZONES_CLOCK_RECORD asks (gz_clock_record.h gives the lines). */
#define ULL(x) ((unsigned long long)(x))
static void model_fit(gz_gpu_clock *c)
{
    if (c->record_id)
        gz_clock_record_line("F %u\n", c->record_id);
    gz_model_fit(&c->model);
}

static void model_bounds(gz_gpu_clock *c, uint64_t gb, uint64_t hb, uint64_t ge, uint64_t he)
{
    if (c->record_id)
        gz_clock_record_line("B %u %llu %llu %llu %llu\n", c->record_id, ULL(gb), ULL(hb), ULL(ge),
                             ULL(he));
    gz_model_add_bounds(&c->model, gb, hb, ge, he);
}

/* Crystals are within ±100 ppm; 2000 ppm (0.2 %) is far beyond any, and
 * what the model allowed before it fitted up to GZ_MODEL_MAX_DRIFT. */
#define LARGE_DRIFT_PPM 2000.0
/* The origin sits this many ticks below the first value seen, so that
 * values read out of order (a zone older than the first calibration) stay
 * above it. */
#define ORIGIN_MARGIN_TICKS (1ull << 40)
/* Two samples this far apart in GPU time whose deviations add up to at
 * most SETTLE_PPM of the span give the drift to within that. A wide first
 * sample (a slow read on a loaded machine) must not count: with it the
 * model could keep a zero drift that a later tight sample does not refute,
 * and the first second of zones would be off by the real drift times the
 * distance to that sample. */
#define SETTLE_SPAN_NS 100000000ull
#define SETTLE_PPM 100.0

void gz_gpu_clock_init(gz_gpu_clock *c, double period_ns, uint32_t valid_bits)
{
    c->period_ns = period_ns > 0 ? period_ns : 1.0;
    c->valid_bits = valid_bits;
    c->period = gz_tick_period_from_ns(c->period_ns);
    c->ns_ticks = c->period.fx == 1ull << 32 && c->period.fx_lo == 0;
    gz_unwrap_init(&c->unwrap, valid_bits);
    c->have_origin = c->have_base = false;
    c->have_first_pair = c->settled = false;
    c->first_pair_ns = c->first_pair_dev_ns = 0;
    c->origin = c->base = 0;
    gz_model_init(&c->model);
    c->record_id = gz_clock_record_new_clock();
}

static uint64_t wrap_ticks(const gz_gpu_clock *c);

/* Unwrapped ticks where a timestamp taken at host time host_ns should be.
 * A counter that never wraps needs no prediction (gz_unwrap_near takes its
 * values as they are): only the first fit is made, as for any clock. */
static uint64_t predict(gz_gpu_clock *c, uint64_t host_ns)
{
    if (!c->model.fitted)
        model_fit(c); /* the very first predictions */
    if (!wrap_ticks(c))
        return 0;
    return c->origin + gz_ns_to_ticks(gz_model_to_gpu(&c->model, host_ns), c->period_ns);
}

/* The same for a timestamp read just now (the host clock read only where
 * the prediction is used: once per zone without a submission's start). */
static uint64_t predict_now(gz_gpu_clock *c)
{
    return predict(c, wrap_ticks(c) ? gz_host_now_ns() : 0);
}

static uint64_t unwrap(gz_gpu_clock *c, uint64_t raw, uint64_t predicted)
{
    uint64_t t = gz_unwrap_near(&c->unwrap, raw, predicted);
    if (!c->have_origin) {
        c->have_origin = true;
        c->origin = t > ORIGIN_MARGIN_TICKS ? t - ORIGIN_MARGIN_TICKS : 0;
    }
    return t;
}

/* Causality picks the wrap: a value known to lie at or after `from`
 * (a submission's first timestamp after its submit, a zone after its
 * submission's start) is unwrapped to the first candidate from there, a
 * value known to lie at or before `upto` to the last one up to there.
 * Asking for the value nearest `from` instead would be right only while the
 * GPU starts within half a wrap of the submit; this way it may start up to
 * 7/8 of a wrap later. A slack of 1/8 wrap allows for a prediction that is
 * a little late. (With unwrap_near: the candidate nearest the middle of
 * the allowed range is the one inside it.) */
static uint64_t wrap_ticks(const gz_gpu_clock *c)
{
    return c->valid_bits && c->valid_bits < 64 ? 1ull << c->valid_bits : 0;
}

static uint64_t unwrap_after(gz_gpu_clock *c, uint64_t raw, uint64_t from)
{
    uint64_t p = wrap_ticks(c);
    uint64_t slack = p / 8;
    uint64_t low = from > slack ? from - slack : 0;
    return unwrap(c, raw, p && low <= UINT64_MAX - p / 2 ? low + p / 2 : from);
}

static uint64_t unwrap_before(gz_gpu_clock *c, uint64_t raw, uint64_t upto)
{
    uint64_t p = wrap_ticks(c);
    uint64_t slack = p / 8;
    uint64_t high = upto <= UINT64_MAX - slack ? upto + slack : UINT64_MAX;
    return unwrap(c, raw, p && high >= p / 2 ? high - p / 2 : upto);
}

static uint64_t to_ns(const gz_gpu_clock *c, uint64_t ticks)
{
    uint64_t since = ticks > c->origin ? ticks - c->origin : 0;
    return c->ns_ticks ? since : gz_ticks_to_ns(since, c->period);
}

void gz_gpu_clock_add_pair(gz_gpu_clock *c, gz_calib_method method, uint64_t raw,
                           uint64_t host_ns, uint64_t deviation_ns)
{
    uint64_t t = unwrap(c, raw, predict(c, host_ns));
    /* A tick is a period long: a pair cannot be more exact than that, even
     * when a driver reports a smaller deviation (Mesa's include it). */
    uint64_t tick = (uint64_t)ceil(c->period_ns);
    gz_calib_pair p = {.gpu_ns = to_ns(c, t),
                       .host_ns = host_ns,
                       .deviation_ns = deviation_ns > tick ? deviation_ns : tick};
    if (c->record_id)
        gz_clock_record_line("P %u %d %llu %llu %llu\n", c->record_id, (int)method, ULL(p.gpu_ns),
                             ULL(p.host_ns), ULL(p.deviation_ns));
    gz_model_add_pair(&c->model, method, &p);
    if (c->settled)
        return;
    if (c->have_first_pair && p.gpu_ns >= c->first_pair_ns + SETTLE_SPAN_NS) {
        uint64_t span = p.gpu_ns - c->first_pair_ns;
        if ((double)c->first_pair_dev_ns + (double)p.deviation_ns <= span * (SETTLE_PPM * 1e-6)) {
            c->settled = true;
            return;
        }
    }
    /* A tighter sample is the better anchor, even though the span then
     * starts again: a wide anchor would take seconds to settle. */
    if (!c->have_first_pair || p.deviation_ns < c->first_pair_dev_ns) {
        c->have_first_pair = true;
        c->first_pair_ns = p.gpu_ns;
        c->first_pair_dev_ns = p.deviation_ns;
    }
}

bool gz_gpu_clock_settled(const gz_gpu_clock *c)
{
    return c->settled;
}

void gz_gpu_clock_add_bound(gz_gpu_clock *c, uint64_t raw, uint64_t host_ns, bool not_before)
{
    uint64_t t = not_before ? unwrap_after(c, raw, predict(c, host_ns))
                            : unwrap_before(c, raw, predict(c, host_ns));
    if (not_before) {
        c->base = t;
        c->have_base = true;
        model_bounds(c, to_ns(c, t), host_ns, 0, 0);
    } else {
        model_bounds(c, 0, 0, to_ns(c, t), host_ns);
    }
}

void gz_gpu_clock_zone_ns(gz_gpu_clock *c, uint64_t raw_begin, uint64_t raw_end, uint32_t work_id,
                          uint64_t *begin_ns, uint64_t *end_ns)
{
    /* A zone ends in the submission read back with it (after its start);
     * it may begin in an earlier one (a queue label), but not after its
     * end. Without a submission yet, it ended before now. */
    uint64_t end = c->have_base ? unwrap_after(c, raw_end, c->base)
                                : unwrap_before(c, raw_end, predict_now(c));
    uint64_t begin = unwrap_before(c, raw_begin, end);
    *begin_ns = to_ns(c, begin);
    *end_ns = to_ns(c, end);
    if (c->record_id)
        gz_clock_record_line("Z %u %llu %llu %u\n", c->record_id, ULL(*begin_ns), ULL(*end_ns),
                             work_id);
    gz_model_add_zone(&c->model, *begin_ns, *end_ns, work_id);
}

void gz_gpu_clock_fit(gz_gpu_clock *c)
{
    model_fit(c);
}

uint64_t gz_gpu_clock_to_host(const gz_gpu_clock *c, uint64_t gpu_ns)
{
    uint64_t host = gz_model_to_host(&c->model, gpu_ns);
    if (c->record_id)
        gz_clock_record_line("H %u %llu %llu\n", c->record_id, ULL(gpu_ns), ULL(host));
    return host;
}

uint64_t gz_gpu_clock_doubt_ns(const gz_gpu_clock *c, uint64_t gpu_ns)
{
    return gz_model_doubt_ns(&c->model, gpu_ns);
}

int64_t gz_gpu_clock_offset_ns(const gz_gpu_clock *c)
{
    return c->model.offset_ns - (int64_t)gz_ticks_to_ns(c->origin, c->period);
}

const char *gz_gpu_clock_drift_note(double ppm, char *buf, size_t size)
{
    if (!size)
        return "";
    buf[0] = '\0';
    if (fabs(ppm) >= LARGE_DRIFT_PPM)
        snprintf(buf, size,
                 " (the GPU clock runs %.2f %% %s than its reported period says: "
                 "timestampPeriod is likely wrong)",
                 fabs(ppm) / 1e4, ppm > 0 ? "slower" : "faster");
    return buf;
}
