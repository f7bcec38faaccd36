/* The GPU → host clock model: a windowed, largest-margin line through the
 * offset constraints (see gz_calibration.h). */
#include <math.h>
#include <string.h>

#include "gz_calibration.h"

#define MAX_DRIFT 2e-3           /* ±2000 ppm: far beyond any real clock */
#define FEASIBLE_SLACK 1.0       /* ns of rounding a fit may miss a constraint by */
#define JUMP_NS 200000.0 /* a contradiction larger than this is a step (real ones are ms) */
#define SEARCH_STEPS 50
#define REFIT_SPAN 1e8 /* 100 ms */
#define TRACK_DRIFT 3e-4 /* how fast the line may part from the clock after a tight sample */
#define TIGHT_HORIZON 3e8 /* 300 ms: three periods of the contexts' pairs and sync points */

void gz_model_init(gz_clock_model *m)
{
    memset(m, 0, sizeof *m);
    m->method = GZ_CALIB_NONE;
}

static double rel(const gz_clock_model *m, uint64_t gpu_ns)
{
    return (double)(int64_t)(gpu_ns - m->t_ref);
}

static gz_model_bucket *bucket_at(gz_clock_model *m, uint32_t i)
{
    return &m->buckets[(m->head + i) % GZ_MODEL_BUCKETS];
}

/* The bucket for GPU time gpu_ns: the newest one or a new one after it.
 * Out-of-order times within the window land in their bucket if it exists,
 * else in the newest (10 ms of smear at worst). */
static gz_model_bucket *bucket_for(gz_clock_model *m, uint64_t gpu_ns)
{
    if (!m->have_ref) {
        m->have_ref = true;
        m->t_ref = gpu_ns;
    }
    int64_t id = (int64_t)(gpu_ns / GZ_MODEL_BUCKET_NS);
    for (uint32_t i = m->count; i-- > 0;) {
        gz_model_bucket *b = bucket_at(m, i);
        if (b->id == id)
            return b;
        if (b->id < id)
            break;
    }
    if (m->count && bucket_at(m, m->count - 1)->id > id)
        return bucket_at(m, m->count - 1);
    if (m->count == GZ_MODEL_BUCKETS) {
        m->head = (m->head + 1) % GZ_MODEL_BUCKETS;
        m->count--;
    }
    gz_model_bucket *b = bucket_at(m, m->count++);
    memset(b, 0, sizeof *b);
    b->id = id;
    return b;
}

/* Whether a constraint can change the fit: a largest-margin line stays
 * the best when a constraint is added that does not cut into its band (the
 * margin cannot grow with more constraints, and it still has that one).
 * Most submission bounds are loose, so most additions refit nothing. */
static bool binding(const gz_clock_model *m, double t, double v, bool lower)
{
    if (!m->fitted || !(lower ? m->fit_lo : m->fit_hi))
        return true;
    double line = m->a + m->b * t;
    double half = m->fit_lo && m->fit_hi ? (double)m->deviation_ns : 0;
    return lower ? v > line - half - FEASIBLE_SLACK : v < line + half + FEASIBLE_SLACK;
}

static void add_lo(gz_clock_model *m, uint64_t gpu_ns, double lo, gz_calib_method method)
{
    gz_model_bucket *b = bucket_for(m, gpu_ns);
    double t = rel(m, gpu_ns);
    if (!b->has_lo || lo > b->lo) {
        b->lo = lo;
        b->lo_t = t;
        b->has_lo = true;
        m->dirty |= binding(m, t, lo, true);
    }
    b->methods |= (uint8_t)(1u << method);
    if (t > m->newest_t)
        m->newest_t = t;
    m->samples++;
}

static void add_hi(gz_clock_model *m, uint64_t gpu_ns, double hi, gz_calib_method method)
{
    gz_model_bucket *b = bucket_for(m, gpu_ns);
    double t = rel(m, gpu_ns);
    if (!b->has_hi || hi < b->hi) {
        b->hi = hi;
        b->hi_t = t;
        b->has_hi = true;
        m->dirty |= binding(m, t, hi, false);
    }
    b->methods |= (uint8_t)(1u << method);
    if (t > m->newest_t)
        m->newest_t = t;
    m->samples++;
}

/* host - gpu relative to the first constraint's (o_ref), so that the
 * double is small; unsigned arithmetic wraps where int64 would overflow. */
static double offset_of(gz_clock_model *m, uint64_t host_ns, uint64_t gpu_ns)
{
    uint64_t o = host_ns - gpu_ns;
    if (!m->have_o_ref) {
        m->have_o_ref = true;
        m->o_ref = (int64_t)o;
    }
    return (double)(int64_t)(o - (uint64_t)m->o_ref);
}

void gz_model_add_pair(gz_clock_model *m, gz_calib_method method, const gz_calib_pair *p)
{
    if (method != GZ_CALIB_CALIBRATED && method != GZ_CALIB_SYNC_POINT)
        return;
    double o = offset_of(m, p->host_ns, p->gpu_ns);
    double d = (double)p->deviation_ns;
    /* A sync point's middle is biased by whatever part of the bracket is
     * submission latency: it enters as the two bounds it is. */
    add_lo(m, p->gpu_ns, o - d, method);
    add_hi(m, p->gpu_ns, o + d, method);
    double t = rel(m, p->gpu_ns);
    if (!m->has_tight || t > m->tight_t)
        m->tight_t = t;
    m->has_tight = true;
    if (method == GZ_CALIB_CALIBRATED &&
        (!m->calib_deviation_ns || p->deviation_ns < m->calib_deviation_ns))
        m->calib_deviation_ns = p->deviation_ns ? p->deviation_ns : 1;
}

/* Whether a bound contradicts the band of the tight samples (calibrated
 * pairs or sync points, one every 100 ms): then the bound is wrong, not the
 * clock. A bound's GPU value was unwrapped from a host time, and a
 * submission that started most of a wrap after its submit (a loaded
 * machine and a counter that wraps every few tens of ms) lands in the
 * wrong wrap; taken for a step, it once moved the line under a zone by
 * 1.8 ms. After a real step the first bound may contradict the line by far
 * less than a step (the CPU saw the work complete nearly a step late);
 * taken for drift, it once tilted the line under the zones before the step
 * by 140 us. Only a tight sample can show a step or a change of drift; the
 * line may part from the clock by TRACK_DRIFT since the newest one, and
 * the zones wait a second for the next. That holds while tight samples
 * keep coming: OpenCL sync points come only with the application's
 * enqueues that return quickly, and a second without one left a 500 ppm
 * drift (cl-fault-drift) to bounds that were all refused, so a zone ended
 * 600 us after the CPU saw it complete. Past TIGHT_HORIZON from the
 * newest tight sample, the bounds are what there is. */
static bool refuse_bound(gz_clock_model *m, uint64_t gpu_ns, double v, bool lower)
{
    if (!m->fitted || !m->has_tight || !m->fit_lo || !m->fit_hi ||
        (m->method != GZ_CALIB_CALIBRATED && m->method != GZ_CALIB_SYNC_POINT))
        return false;
    double t = rel(m, gpu_ns);
    if (fabs(t - m->tight_t) > TIGHT_HORIZON)
        return false;
    double edge = (double)m->deviation_ns +
                  fmin(JUMP_NS, FEASIBLE_SLACK + TRACK_DRIFT * fabs(t - m->tight_t));
    double line = m->a + m->b * t;
    if (lower ? v <= line + edge : v >= line - edge)
        return false;
    m->bounds_refused++;
    return true;
}

void gz_model_add_bounds(gz_clock_model *m, uint64_t gpu_begin_ns, uint64_t host_ns_not_before,
                         uint64_t gpu_end_ns, uint64_t host_ns_not_after)
{
    /* gpu_begin + offset >= host_not_before; gpu_end + offset <= host_not_after */
    if (host_ns_not_before) {
        double lo = offset_of(m, host_ns_not_before, gpu_begin_ns);
        if (!refuse_bound(m, gpu_begin_ns, lo, true))
            add_lo(m, gpu_begin_ns, lo, GZ_CALIB_BOUNDS);
    }
    if (host_ns_not_after) {
        double hi = offset_of(m, host_ns_not_after, gpu_end_ns);
        if (!refuse_bound(m, gpu_end_ns, hi, false))
            add_hi(m, gpu_end_ns, hi, GZ_CALIB_BOUNDS);
    }
}

typedef struct envelope {
    double lo_max, hi_min; /* of lo - b t and hi - b t */
    bool has_lo, has_hi;
} envelope;

static envelope envelope_at(const gz_clock_model *m, double slope)
{
    envelope e = {-INFINITY, INFINITY, false, false};
    for (uint32_t i = 0; i < m->count; i++) {
        const gz_model_bucket *b = &m->buckets[(m->head + i) % GZ_MODEL_BUCKETS];
        if (b->has_lo) {
            double v = b->lo - slope * b->lo_t;
            if (v > e.lo_max)
                e.lo_max = v;
            e.has_lo = true;
        }
        if (b->has_hi) {
            double v = b->hi - slope * b->hi_t;
            if (v < e.hi_min)
                e.hi_min = v;
            e.has_hi = true;
        }
    }
    return e;
}

/* The band's width at a slope: concave in the slope (a minimum of lines
 * minus a maximum of lines), so a ternary search finds its maximum. */
static double width_at(const gz_clock_model *m, double slope)
{
    envelope e = envelope_at(m, slope);
    if (!e.has_lo || !e.has_hi)
        return INFINITY;
    return e.hi_min - e.lo_max;
}

static double best_slope(const gz_clock_model *m)
{
    /* The slope changes only when the constraints force it: while the one
     * in use leaves a band (0 at first), it stays. Maximizing the margin is
     * right for the offset but ill-conditioned for the slope: two tight
     * constraints a few ms apart would let a tilted line widen the band and
     * win. Once they contradict the slope in use, the slope with the
     * largest margin is the one the tight constraints allow. */
    envelope e = envelope_at(m, m->b);
    if (!e.has_lo || !e.has_hi || e.hi_min - e.lo_max >= 0)
        return m->b;
    double lo = -MAX_DRIFT, hi = MAX_DRIFT;
    for (int i = 0; i < SEARCH_STEPS; i++) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        if (width_at(m, m1) < width_at(m, m2))
            lo = m1;
        else
            hi = m2;
    }
    return (lo + hi) / 2;
}

static gz_calib_method best_method(const gz_clock_model *m)
{
    uint8_t all = 0;
    for (uint32_t i = 0; i < m->count; i++)
        all |= m->buckets[(m->head + i) % GZ_MODEL_BUCKETS].methods;
    for (int k = GZ_CALIB_CALIBRATED; k <= GZ_CALIB_BOUNDS; k++)
        if (all & (1u << k))
            return (gz_calib_method)k;
    return GZ_CALIB_NONE;
}

void gz_model_fit(gz_clock_model *m)
{
    /* Refit for binding constraints, and at least every REFIT_SPAN of GPU
     * time: drift that curves then never builds up into a contradiction
     * large enough to pass for a step. */
    if (!m->count || (!m->dirty && m->newest_t - m->fit_t < REFIT_SPAN))
        return;
    m->fit_t = m->newest_t;
    m->dirty = false;
    m->refits++;
    double slope = best_slope(m);
    double width = width_at(m, slope);
    /* Contradicting constraints: the clock stepped, or the drift changed.
     * The newest constraints describe the clock now: drop the fewest oldest
     * buckets that leaves the rest agreeing (fewer constraints never agree
     * less, so a binary search finds it in a few fits). */
    if (width < -FEASIBLE_SLACK) {
        double contradiction = -width;
        uint32_t head = m->head, count = m->count;
        uint32_t lo = 0, hi = count - 1; /* fewer buckets never agree less */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            m->head = (head + mid) % GZ_MODEL_BUCKETS;
            m->count = count - mid;
            if (width_at(m, best_slope(m)) >= -FEASIBLE_SLACK)
                hi = mid;
            else
                lo = mid + 1;
        }
        m->head = (head + lo) % GZ_MODEL_BUCKETS;
        m->count = count - lo;
        double dropped_t = -INFINITY; /* the newest constraint dropped */
        if (lo) {
            const gz_model_bucket *last = &m->buckets[(head + lo - 1) % GZ_MODEL_BUCKETS];
            dropped_t = fmax(last->has_lo ? last->lo_t : -INFINITY,
                             last->has_hi ? last->hi_t : -INFINITY);
        }
        /* One bucket (10 ms) that still contradicts itself straddles the
         * change: a bound from before a step and a pair from after it. Its
         * older side is from before. */
        gz_model_bucket *first = bucket_at(m, 0);
        if (m->count == 1 && width_at(m, best_slope(m)) < -FEASIBLE_SLACK) {
            bool lo_older = first->lo_t < first->hi_t;
            dropped_t = lo_older ? first->lo_t : first->hi_t;
            if (lo_older)
                first->has_lo = false;
            else
                first->has_hi = false;
        }
        if (contradiction > JUMP_NS && m->fitted) {
            /* A step: the line so far still holds before it. The step lies
             * after the newest dropped constraint (it contradicts what came
             * later) and before the oldest kept one that contradicts the
             * line so far; kept constraints loose enough to agree with both
             * lines say nothing about when it happened. */
            double after_t = INFINITY;
            for (uint32_t i = 0; i < m->count && after_t == INFINITY; i++) {
                const gz_model_bucket *b = bucket_at(m, i);
                if (b->has_lo && b->lo > m->a + m->b * b->lo_t + JUMP_NS / 2)
                    after_t = b->lo_t;
                if (b->has_hi && b->hi < m->a + m->b * b->hi_t - JUMP_NS / 2)
                    after_t = fmin(after_t, b->hi_t);
            }
            m->has_before_step = true;
            m->before_step_a = m->a;
            m->before_step_b = m->b;
            m->step_t = after_t == INFINITY     ? dropped_t
                        : dropped_t == -INFINITY ? after_t
                                                 : (dropped_t + after_t) / 2;
            m->jumps++;
        }
        slope = best_slope(m);
        width = width_at(m, slope);
    }
    envelope e = envelope_at(m, slope);
    double a;
    if (e.has_lo && e.has_hi)
        a = (e.lo_max + e.hi_min) / 2;
    else
        a = e.has_lo ? e.lo_max : e.hi_min; /* one side only: its tightest bound */
    m->a = a;
    m->b = slope;
    m->fitted = true;
    m->fit_lo = e.has_lo;
    m->fit_hi = e.has_hi;
    m->method = best_method(m);
    m->drift_ppm = slope * 1e6;
    m->deviation_ns = e.has_lo && e.has_hi && width > 0 ? (uint64_t)(width / 2 + 0.5)
                      : e.has_lo && e.has_hi         ? 0
                                                     : UINT64_MAX;
    m->offset_ns = (int64_t)((uint64_t)m->o_ref + (uint64_t)llround(a + slope * m->newest_t));
}

uint64_t gz_model_to_host(const gz_clock_model *m, uint64_t gpu_ns)
{
    if (!m->fitted)
        return gpu_ns;
    double t = rel(m, gpu_ns);
    double corr = m->has_before_step && t < m->step_t ? m->before_step_a + m->before_step_b * t
                                                      : m->a + m->b * t;
    __int128 host = (__int128)gpu_ns + (__int128)m->o_ref + (__int128)llround(corr);
    if (host < 0)
        return 0;
    if (host > (__int128)UINT64_MAX)
        return UINT64_MAX;
    return (uint64_t)host;
}

uint64_t gz_model_to_gpu(const gz_clock_model *m, uint64_t host_ns)
{
    if (!m->fitted)
        return host_ns;
    /* host = g + o_ref + a + b (g - t_ref)  →  g - t_ref = (host - t_ref - o_ref - a) / (1 + b) */
    double d = ((double)(int64_t)(host_ns - m->t_ref - (uint64_t)m->o_ref) - m->a) / (1.0 + m->b);
    __int128 g = (__int128)m->t_ref + (__int128)llround(d);
    if (g < 0)
        return 0;
    if (g > (__int128)UINT64_MAX)
        return UINT64_MAX;
    return (uint64_t)g;
}
