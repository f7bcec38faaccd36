/* The GPU → host clock model: a windowed, largest-margin line through the
 * offset constraints (see gz_calibration.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gz_calibration.h"

#define MAX_DRIFT GZ_MODEL_MAX_DRIFT
#define MAX_DRIFT_CHANGE 2e-3 /* ±2000 ppm from the drift a window showed */
#define SLOPE_SPAN 1e8 /* 100 ms of tight samples on both sides show the drift */
#define FIRM_SPAN 5e8 /* 500 ms of them: a drift that changes by ppm only */
#define SPREAD_AGING 2e-6 /* per second: how fast a known drift may wander */
#define INITIAL_SPREAD 1e-4 /* 100 ppm */
#define TILT_STEP 3e-4 /* a change of a firm drift beyond this is a step seen in part */
#define FEASIBLE_SLACK 1.0       /* ns of rounding a fit may miss a constraint by */
#define JUMP_NS 200000.0 /* a contradiction larger than this is a step (real ones are ms) */
#define SEARCH_STEPS 50
#define REFIT_SPAN 1e8 /* 100 ms */
#define TRACK_DRIFT 3e-4 /* how fast the line may part from the clock after a tight sample */
#define TIGHT_HORIZON 3e8 /* 300 ms: three periods of the contexts' pairs and sync points */
/* Suspect bounds that make a step: a submission gives one bound of each
 * side, so this many agreeing are two or more submissions after the step. */
#define CONFIRM_SUSPECTS 4

void gz_model_init(gz_clock_model *m)
{
    memset(m, 0, sizeof *m);
    /* Until a window pins the drift to this, it changes only when forced:
     * a few sync points 100 ms apart allow hundreds of ppm, and the widest
     * band among those put a clock with no drift at -2000 ppm. */
    m->slope_spread = INITIAL_SPREAD;
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

/* A time that came after the step that began the window, older than the
 * window (see window_from): a completion seen late from before the step
 * sent the line after it 2 ms back (a second, false step). */
static bool before_window(const gz_clock_model *m, uint64_t gpu_ns)
{
    return m->has_before_step && rel(m, gpu_ns) < m->window_from;
}

static void add_lo(gz_clock_model *m, uint64_t gpu_ns, double lo, gz_calib_method method)
{
    if (before_window(m, gpu_ns))
        return;
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
    if (before_window(m, gpu_ns))
        return;
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

/* A time from before the newest the last step was placed with, near it and
 * after the step before it: that step is placed again (gz_model_fit). A
 * sync point from after a step came before the completions of the 18 ms of
 * work ahead of it, and the step, placed in the middle of that work with
 * nothing known of it, stayed there: 25 zones 2 ms wrong. */
#define REPLACE_SPAN 1e8 /* 100 ms: the longest host stall that hides completions */
#define RESIZE_NS JUMP_NS /* a step's size that changed by this is placed again */
static void note_late(gz_clock_model *m, uint64_t gpu_ns)
{
    double t = rel(m, gpu_ns), since = m->nolder ? m->older[0].t : -INFINITY;
    if (m->has_before_step && t > since && t < m->placed_upto && fabs(t - m->step_t) < REPLACE_SPAN)
        m->replace_step = true;
}

/* The newest bounds one by one (the buckets keep only the tightest of 10
 * ms): where exactly a step fell (refine_step). */
static void note_recent(gz_clock_model *m, uint64_t gpu_ns, double v, bool lower, bool pair)
{
    note_late(m, gpu_ns);
    m->recent[m->recent_next] =
        (gz_model_suspect){.gpu_ns = gpu_ns, .v = v, .lower = lower, .pair = pair};
    m->recent_next = (m->recent_next + 1) % GZ_MODEL_RECENT;
    if (m->nrecent < GZ_MODEL_RECENT)
        m->nrecent++;
}

static void add_suspects(gz_clock_model *m)
{
    for (uint32_t i = 0; i < m->nsuspects; i++) {
        const gz_model_suspect *x = &m->suspects[i];
        note_recent(m, x->gpu_ns, x->v, x->lower, false);
        if (x->lower)
            add_lo(m, x->gpu_ns, x->v, GZ_CALIB_BOUNDS);
        else
            add_hi(m, x->gpu_ns, x->v, GZ_CALIB_BOUNDS);
    }
    m->step_pending = m->nsuspects > 0;
    m->nsuspects = 0;
}

static void drop_suspects(gz_clock_model *m)
{
    m->bounds_refused += m->nsuspects;
    m->nsuspects = 0;
}

/* A constraint [lo, hi] on the offset at t that is no suspect: the
 * suspects all say the line is off in one direction by at least their
 * smallest cut. One that holds the line where they say it cannot be
 * refutes them (a bound unwrapped into the wrong wrap is alone in what it
 * says); a tight sample that agrees with them shows the step itself. */
static void resolve_suspects(gz_clock_model *m, double t, double lo, double hi)
{
    if (!m->nsuspects)
        return;
    double line = m->suspect_a + m->suspect_b * t; /* the line they contradicted */
    bool down = !m->suspects[0].lower;
    double least = fabs(m->suspects[0].cut), first = rel(m, m->suspects[0].gpu_ns);
    for (uint32_t i = 1; i < m->nsuspects; i++) {
        least = fmin(least, fabs(m->suspects[i].cut));
        first = fmin(first, rel(m, m->suspects[i].gpu_ns));
    }
    /* The step, if any, lies before the first suspect: what is known of
     * earlier times says nothing about it. */
    if (t < first)
        return;
    if (down ? lo > line - least : hi < line + least)
        drop_suspects(m);
    else if (isfinite(lo) && isfinite(hi))
        add_suspects(m); /* a tight sample past the line, with them */
}

/* The slack of a bound: how far it is from a line that rests on tight
 * samples, kept for placing the line after a step that bounds alone show. */
static void note_slack(gz_clock_model *m, double t, double v, bool lower)
{
    if (!m->fitted || !m->fit_lo || !m->fit_hi || m->bounds_after_step ||
        (m->method != GZ_CALIB_CALIBRATED && m->method != GZ_CALIB_SYNC_POINT))
        return;
    double line = m->a + m->b * t;
    int side = lower ? 0 : 1;
    double slack = lower ? line - v : v - line;
    /* A bound that cuts into the line is news of a step or of drift (past
     * the tight samples' horizon bounds are taken as they come), not a
     * measure of how close bounds come: one from just after a step once
     * made this -1.9 ms, and the line after the step 1.9 ms off. */
    if (slack < -(double)m->deviation_ns - FEASIBLE_SLACK)
        return;
    m->slack[side][m->slack_next[side]] = fmax(slack, 0);
    m->slack_next[side] = (m->slack_next[side] + 1) % GZ_MODEL_SLACKS;
    if (m->nslack[side] < GZ_MODEL_SLACKS)
        m->nslack[side]++;
}

void gz_model_add_pair(gz_clock_model *m, gz_calib_method method, const gz_calib_pair *p)
{
    if (method != GZ_CALIB_CALIBRATED && method != GZ_CALIB_SYNC_POINT)
        return;
    double o = offset_of(m, p->host_ns, p->gpu_ns);
    double d = (double)p->deviation_ns;
    resolve_suspects(m, rel(m, p->gpu_ns), o - d, o + d);
    note_recent(m, p->gpu_ns, o - d, true, true);
    note_recent(m, p->gpu_ns, o + d, false, true);
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
/* Sync points, though, come only while the queue is idle: an app that
 * keeps it busy leaves a step to bounds for as long as it does, and every
 * zone meanwhile would be off by the step (issue 18). There a bound that
 * contradicts the band is held as a suspect. A step moves every bound
 * after it one way: CONFIRM_SUSPECTS suspects cutting the same way, with
 * no bound of the other side between them holding the line (see
 * resolve_suspects), are believed, and the contradiction they make is a
 * step however small it is (it is a hard fact, not drift: drift is what
 * TRACK_DRIFT allows). A wrong-wrap bound is refuted by the next bound of
 * the other side of its own or a later submission. Returns true when the
 * bound was refused or held. */
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
    if (m->method == GZ_CALIB_CALIBRATED) {
        m->bounds_refused++;
        return true;
    }
    if (m->nsuspects && m->suspects[0].lower != lower)
        drop_suspects(m); /* they disagree on the direction: neither is a step */
    if (!m->nsuspects) {
        m->suspect_a = m->a;
        m->suspect_b = m->b;
    }
    if (m->nsuspects < GZ_MODEL_SUSPECTS)
        m->suspects[m->nsuspects++] =
            (gz_model_suspect){.gpu_ns = gpu_ns, .v = v, .cut = v - line, .lower = lower};
    if (m->nsuspects >= CONFIRM_SUSPECTS)
        add_suspects(m);
    return true;
}

void gz_model_add_bounds(gz_clock_model *m, uint64_t gpu_begin_ns, uint64_t host_ns_not_before,
                         uint64_t gpu_end_ns, uint64_t host_ns_not_after)
{
    /* gpu_begin + offset >= host_not_before; gpu_end + offset <= host_not_after */
    if (host_ns_not_before) {
        double lo = offset_of(m, host_ns_not_before, gpu_begin_ns);
        if (!refuse_bound(m, gpu_begin_ns, lo, true)) {
            resolve_suspects(m, rel(m, gpu_begin_ns), lo, INFINITY);
            note_slack(m, rel(m, gpu_begin_ns), lo, true);
            note_recent(m, gpu_begin_ns, lo, true, false);
            add_lo(m, gpu_begin_ns, lo, GZ_CALIB_BOUNDS);
        }
    }
    if (host_ns_not_after) {
        double hi = offset_of(m, host_ns_not_after, gpu_end_ns);
        if (!refuse_bound(m, gpu_end_ns, hi, false)) {
            resolve_suspects(m, rel(m, gpu_end_ns), -INFINITY, hi);
            note_slack(m, rel(m, gpu_end_ns), hi, false);
            note_recent(m, gpu_end_ns, hi, false, false);
            add_hi(m, gpu_end_ns, hi, GZ_CALIB_BOUNDS);
        }
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

/* GPU time spanned by the window's tight samples (calibrated pairs and sync
 * points): over a long span they fix the drift better than any edge of the
 * band does. */
static double tight_span(const gz_clock_model *m)
{
    const uint8_t tight = (1u << GZ_CALIB_CALIBRATED) | (1u << GZ_CALIB_SYNC_POINT);
    double first = INFINITY, last = -INFINITY;
    for (uint32_t i = 0; i < m->count; i++) {
        const gz_model_bucket *b = &m->buckets[(m->head + i) % GZ_MODEL_BUCKETS];
        if (!(b->methods & tight) || !b->has_lo || !b->has_hi)
            continue;
        first = fmin(first, fmin(b->lo_t, b->hi_t));
        last = fmax(last, fmax(b->lo_t, b->hi_t));
    }
    return last > first ? last - first : 0;
}

/* The slope in [lo, hi] that leaves the band widest (width is concave). */
static double widest_slope(const gz_clock_model *m, double lo, double hi)
{
    for (int i = 0; i < SEARCH_STEPS; i++) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        if (width_at(m, m1) < width_at(m, m2))
            lo = m1;
        else
            hi = m2;
    }
    return (lo + hi) / 2;
}

/* The edge of the slopes that leave a band, from in (a band) toward out. */
static double band_edge(const gz_clock_model *m, double in, double out)
{
    if (width_at(m, out) >= 0)
        return out;
    for (int i = 0; i < SEARCH_STEPS; i++) {
        double mid = (in + out) / 2;
        if (width_at(m, mid) >= 0)
            in = mid;
        else
            out = mid;
    }
    return in;
}

/* How closely the slope in use is known: half the range of slopes that
 * the window it came from allowed, widened by SPREAD_AGING as the clock's
 * rate may wander since. */
static double slope_spread(const gz_clock_model *m)
{
    return m->slope_spread + SPREAD_AGING * fmax(m->newest_t - m->spread_t, 0) / 1e9;
}

/* The slopes a fit may take. Any drift the data supports at first (a
 * timestampPeriod a few percent off); once a window of tight samples has
 * shown it, it may change by MAX_DRIFT_CHANGE only (temperature moves a
 * crystal by ppm), so that two samples on either side of a step cannot
 * pass for a drift that joins them: 2 ms over 250 ms is 8000 ppm. */
static void slope_range(const gz_clock_model *m, double *lo, double *hi)
{
    *lo = -MAX_DRIFT;
    *hi = MAX_DRIFT;
    if (m->slope_known) {
        *lo = fmax(*lo, m->b - MAX_DRIFT_CHANGE);
        *hi = fmin(*hi, m->b + MAX_DRIFT_CHANGE);
    }
}

/* Whether some slope the fit may take leaves a band: what best_slope's
 * slope leaves, without the search for the edges of the band (the search
 * for how many buckets to drop asks this about ten times a refit). */
static bool window_agrees(const gz_clock_model *m)
{
    double lo, hi;
    slope_range(m, &lo, &hi);
    return width_at(m, widest_slope(m, lo, hi)) >= -FEASIBLE_SLACK;
}

/* The slope for the window. *spread, where not NULL, is set to half the
 * range of slopes the window allows when the slope comes from the window
 * alone, and to NAN when it does not. */
static double best_slope(const gz_clock_model *m, double *spread)
{
    if (spread)
        *spread = NAN;
    double lo, hi;
    slope_range(m, &lo, &hi);
    envelope e = envelope_at(m, m->b);
    if (!e.has_lo || !e.has_hi)
        return m->b;
    /* Until then, maximizing the margin is right for the offset but
     * ill-conditioned for the slope: two tight constraints a few ms apart
     * would let a tilted line widen the band and win. The slope changes
     * only when the constraints force it. */
    if (!m->slope_known)
        return e.hi_min - e.lo_max >= 0 ? m->b : widest_slope(m, lo, hi);
    double widest = widest_slope(m, lo, hi);
    if (width_at(m, widest) < 0)
        return widest; /* a contradiction (a step): gz_model_fit sees it */
    /* The slope of the widest band, where the window pins the slopes it
     * allows more closely than the slope in use was pinned: a slope that
     * merely stayed inside the band sat at its edge, 46 ppm off over the
     * first 1.5 s on lavapipe, and each step kept it (zones 50 us off).
     * Where it pins them less closely (the short window after a step, sync
     * points 1 ms wide), the slope in use, or the nearest one the window
     * allows: the widest band of 600 ms after a step was 100 ppm off where
     * the slope from before it was 13 ppm. */
    double f_lo = band_edge(m, widest, lo), f_hi = band_edge(m, widest, hi);
    bool pinned = f_lo > lo && f_hi < hi; /* else the widest band is at a limit */
    if (pinned && (f_hi - f_lo) / 2 < slope_spread(m)) {
        if (spread)
            *spread = (f_hi - f_lo) / 2;
        return widest;
    }
    return fmin(fmax(m->b, f_lo), f_hi);
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

/* Where exactly a step fell. The buckets place it only to their 10 ms, and
 * a zone between is off by the whole step; the newest bounds one by one
 * place it to a submission. Each bound since the step before is evidence:
 * one that a line breaks proves the time was on the other side of the
 * step; one that both lines meet weighs the log of the odds of its
 * latency under each (latency_odds), so a bound that is a step from the
 * one line and as close to the other as bounds usually come counts, and
 * one that a stall left far from both hardly does. The step goes where
 * the evidence agrees best: a proof outweighs any number of likelihoods,
 * so a bound now and then that is far looser than usual moves nothing. */
#define PROOF_WEIGHT 1e6
static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static int by_time(const void *x, const void *y)
{
    double a = ((const double *)x)[0], b = ((const double *)y)[0];
    return a < b ? -1 : a > b;
}

/* The median slack of one side's recent bounds (INFINITY without any). */
static double median_slack(const gz_clock_model *m, int side)
{
    uint32_t n = m->nslack[side];
    if (!n)
        return INFINITY;
    double v[GZ_MODEL_SLACKS];
    memcpy(v, m->slack[side], n * sizeof v[0]);
    qsort(v, n, sizeof v[0], by_value);
    return v[n / 2];
}

void gz_model_add_zone(gz_clock_model *m, uint64_t begin_ns, uint64_t end_ns, uint32_t kind)
{
    note_late(m, begin_ns);
    m->zones[m->zone_next] = (gz_model_zone){begin_ns, end_ns, kind};
    m->zone_next = (m->zone_next + 1) % GZ_MODEL_ZONES;
    if (m->nzones < GZ_MODEL_ZONES)
        m->nzones++;
}

/* Where in a busy queue a forward step fell, from the work's own times.
 * Work on one queue runs in order and back to back while more is queued:
 * between one timestamp and the next there is either a zone's own work
 * (its begin, then its end) or a gap of a few us (the next command, or the
 * next submission, which was submitted before the one ahead ended). A step
 * makes one such gap longer by the step: there it fell. The bounds cannot
 * say so when they are loose; the middle between them sent zones a step
 * wrong, across a real idle of ms nearby (a host that did not submit in
 * time) or inside a long submission (issue 18). Marks: submissions'
 * begins (lower bounds: v + t is the submit's host time) and ends (upper
 * bounds), and zones' begins and ends. Returns the middle of the gap in
 * [from, to] whose idle, were the step there, is shortest and less than
 * half the step; NAN where no gap fits (a step in an idle queue, or inside
 * one zone's work: the bounds place it then). */
#define GAP_SLACK 50000.0 /* ns the step's size may be misjudged by */
enum { MARK_SUBMIT, MARK_DONE, MARK_BEGIN, MARK_END };
typedef struct gz_mark {
    double t, v;
    int kind;
} gz_mark;

static int mark_by_time(const void *x, const void *y)
{
    const gz_mark *a = x, *b = y;
    return a->t < b->t ? -1 : a->t > b->t;
}

static double step_in_gap(const gz_clock_model *m, double since, double from, double to)
{
    gz_mark x[GZ_MODEL_RECENT + 2 * GZ_MODEL_ZONES];
    uint32_t n = 0;
    double zones_from = INFINITY; /* the oldest zone kept: gaps before it may hide work */
    for (uint32_t i = 0; i < m->nrecent; i++) {
        double t = rel(m, m->recent[i].gpu_ns);
        if (t > since)
            x[n++] = (gz_mark){t, m->recent[i].v, m->recent[i].lower ? MARK_SUBMIT : MARK_DONE};
    }
    for (uint32_t i = 0; i < m->nzones; i++) {
        double b = rel(m, m->zones[i].begin_ns), e = rel(m, m->zones[i].end_ns);
        zones_from = fmin(zones_from, b);
        if (e > since) {
            x[n++] = (gz_mark){b, 0, MARK_BEGIN};
            x[n++] = (gz_mark){e, 0, MARK_END};
        }
    }
    qsort(x, n, sizeof x[0], mark_by_time);
    double best = NAN, best_idle = INFINITY;
    bool inside = false; /* between a submission's begin and its end */
    for (uint32_t i = 0; i + 1 < n; i++) {
        if (x[i].kind == MARK_SUBMIT)
            inside = true;
        else if (x[i].kind == MARK_DONE)
            inside = false;
        double t1 = x[i].t, t2 = x[i + 1].t;
        if (t1 < from || t2 > to || t1 < zones_from)
            continue;
        /* A begin, then an end: work (zones nest; two zones with the same
         * times, a submission's and its command buffer's, may sort either
         * way). A step there splits a zone. */
        if ((x[i].kind == MARK_SUBMIT || x[i].kind == MARK_BEGIN) &&
            (x[i + 1].kind == MARK_DONE || x[i + 1].kind == MARK_END))
            continue;
        double before = m->before_step_a + m->before_step_b * t1;
        double step = before - (m->a + m->b * t2); /* forward: the offset falls */
        double idle = t2 - t1 - step;
        if (step < 2 * GAP_SLACK || idle <= -GAP_SLACK || idle >= step / 2 ||
            fabs(idle) >= best_idle)
            continue;
        if (!inside) {
            /* Between submissions: only where the next was submitted
             * before this one ended (host times by the line before the
             * step, which holds there if the step is in this gap). */
            uint32_t k = i + 1;
            while (k < n && x[k].kind != MARK_SUBMIT && x[k].t - t2 < GAP_SLACK)
                k++;
            if (k == n || x[k].kind != MARK_SUBMIT || x[k].v + x[k].t >= before + t1)
                continue;
        }
        best_idle = fabs(idle);
        best = (t1 + t2) / 2;
    }
    return best;
}

/* How much less likely a step is in the GPU-time gap [t1, t2] for what it
 * would make of the zones around the gap (log odds, <= 0): a zone that a
 * step inside would leave at less than half the shortest of its kind
 * (others of it, at least KIND_SEEN of them, in the ring) ran work it
 * never runs that fast, so the step is not in it (a label of 2.9 ms in
 * each of 40 submissions: a step inside one would leave it 0.9 ms, and
 * the real-time odds alone put it there rather than in the 90 us after
 * the label, where it fell). Work is often slower than usual (a driver
 * preempted, a host stall on lavapipe stretched 0.1 ms submissions to
 * 4 ms), never much faster: a step that leaves a zone long is no
 * evidence. */
#define KIND_SEEN 3
#define KIND_WEIGHT 20.0 /* odds of e^20: beaten only by proofs */
static double kind_odds(const gz_clock_model *m, double t1, double t2, double step)
{
    for (uint32_t i = 0; i < m->nzones; i++) {
        const gz_model_zone *z = &m->zones[i];
        double b = rel(m, z->begin_ns), e = rel(m, z->end_ns);
        if (!z->kind || b > t1 || e < t2)
            continue;
        double shortest = INFINITY;
        uint32_t seen = 0;
        for (uint32_t k = 0; k < m->nzones; k++)
            if (k != i && m->zones[k].kind == z->kind) {
                shortest = fmin(shortest, (double)(m->zones[k].end_ns - m->zones[k].begin_ns));
                seen++;
            }
        if (seen >= KIND_SEEN && e - b - step < shortest / 2 - GAP_SLACK)
            return -KIND_WEIGHT;
    }
    return 0;
}

/* Whether a gap scoring score, its middle at mid, beats the best so far
 * (best, at best_t): a higher score, or an equal one nearer the step as
 * placed (step_t). */
static bool beats(double score, double mid, double best, double best_t, double step_t)
{
    return score > best || (score == best && fabs(mid - step_t) < fabs(best_t - step_t));
}

/* The step's size at its place: the line before it less the line after
 * (positive for a forward step). */
static double step_size(const gz_clock_model *m)
{
    return (m->before_step_a + m->before_step_b * m->step_t) - (m->a + m->b * m->step_t);
}

/* Gaps within these log odds of the best are as good as it (odds of
 * about 3000 to 1). On lavapipe beside busy loops the evidence was wrong
 * at e^5.4 (one begin a stall made look prompt) and, on a host loaded
 * twice over, at e^7.1 (both bounds of a frame); replays of 258 recorded
 * loaded runs at 8: every step sent wrong marked, 2-9 zones in a run. */
#define DOUBT_ODDS 8.0
/* Where the gaps cannot be weighed again (the rings no longer hold the
 * times around the step), a doubt found before stays, and covers where the
 * step is now: a step placed again later lost its doubt this way, and a
 * zone went 1993 us wrong unmarked. */
static void keep_doubt(gz_clock_model *m)
{
    gz_model_doubt *d = &m->step_doubt;
    if (d->set) {
        d->from = fmin(d->from, m->step_t);
        d->to = fmax(d->to, m->step_t);
    }
}

/* A forward step of S can only lie between two GPU times at least S apart:
 * the counter never goes back, so two times on either side of the step
 * are parted by the step plus the real time between them. Every time the
 * model holds (bounds, sync points, zones: one counter, whichever queue)
 * is a place the step is not. Where the evidence put the step into a
 * shorter gap, it is wrong about which side some of it is on (a frame
 * submitted 2 ms before its work began, behind a slow sync point, looked
 * as if after the step; a completion seen late, as if before it). Each gap
 * of at least S/2 (the step's size is an estimate) is weighed by the
 * evidence that agrees with the step there, by how long it lasted in real
 * time (a step comes at any moment: it is likelier in an interval of 4 ms
 * than in one of 0.2 ms, where the evidence cannot tell) and by the zones
 * around it (kind_odds); the best takes the step, the nearest of equals.
 * Zones went a whole step wrong (issue 18: 1986.7 us, and 849 us for one
 * that causality clamped; 1994 us where a host stall hid every completion
 * near the step and the nearer of two long submissions took it). Gaps
 * before the oldest time kept may hide times: none there. */
static void snap_to_gap(gz_clock_model *m, double since, const double (*ev)[2], uint32_t n)
{
    double step = step_size(m);
    if (step < 2 * GAP_SLACK)
        return; /* backward, or too small to tell from real gaps */
    double x[GZ_MODEL_RECENT + 2 * GZ_MODEL_ZONES];
    uint32_t nx = 0;
    double oldest[2] = {INFINITY, INFINITY}; /* of a ring that has wrapped */
    for (uint32_t i = 0; i < m->nrecent; i++) {
        double t = rel(m, m->recent[i].gpu_ns);
        oldest[0] = fmin(oldest[0], t);
        if (t > since)
            x[nx++] = t;
    }
    for (uint32_t i = 0; i < m->nzones; i++)
        for (int k = 0; k < 2; k++) {
            double t = rel(m, k ? m->zones[i].end_ns : m->zones[i].begin_ns);
            oldest[1] = fmin(oldest[1], t);
            if (t > since)
                x[nx++] = t;
        }
    double from = since; /* the rings hold every time from here on */
    if (m->nrecent == GZ_MODEL_RECENT)
        from = fmax(from, oldest[0]);
    if (m->nzones == GZ_MODEL_ZONES)
        from = fmax(from, oldest[1]);
    if (nx < 2) {
        keep_doubt(m);
        return;
    }
    qsort(x, nx, sizeof x[0], by_value);
    /* The gap the step is in now: where nothing is known of one side of
     * it, it stays. */
    uint32_t at = 0;
    while (at < nx && x[at] <= m->step_t)
        at++;
    if (at == 0 || at == nx || x[at - 1] < from) {
        keep_doubt(m);
        return;
    }
    /* Each long gap: the weight of the evidence that agrees with the step
     * there (before it for negative weights, after it for positive ones). */
    double after = 0;
    for (uint32_t i = 0; i < n; i++)
        after += ev[i][1] > 0 ? ev[i][1] : 0;
    double before = 0, best = -INFINITY, best_t = NAN;
    /* Each long gap (x index, score before kind_odds), for the doubt. */
    struct { uint32_t i; double score; } gap[GZ_MODEL_RECENT + 2 * GZ_MODEL_ZONES];
    uint32_t ngaps = 0, e = 0;
    for (uint32_t i = 0; i + 1 < nx; i++) {
        for (; e < n && ev[e][0] <= x[i]; e++) {
            if (ev[e][1] > 0)
                after -= ev[e][1];
            else
                before -= ev[e][1];
        }
        if (x[i] < from || x[i + 1] - x[i] < step / 2)
            continue;
        double mid = (x[i] + x[i + 1]) / 2;
        double real = fmax(x[i + 1] - x[i] - step, GAP_SLACK);
        double score = before + after + log(real);
        gap[ngaps].i = i;
        gap[ngaps++].score = score;
        if (!beats(score, mid, best, best_t, m->step_t))
            continue;
        score += kind_odds(m, x[i], x[i + 1], step); /* <= 0: only for one that may win */
        if (beats(score, mid, best, best_t, m->step_t)) {
            best = score;
            best_t = mid;
        }
    }
    if (isnan(best_t)) {
        keep_doubt(m);
        return;
    }
    m->step_t = best_t;
    /* Gaps nearly as likely: the times between them and the one chosen may
     * be on the other side of the step. */
    double lo = best_t, hi = best_t;
    for (uint32_t k = 0; k < ngaps; k++) {
        uint32_t i = gap[k].i;
        double mid = (x[i] + x[i + 1]) / 2;
        if (gap[k].score < best - DOUBT_ODDS || (mid >= lo && mid <= hi))
            continue;
        if (gap[k].score + kind_odds(m, x[i], x[i + 1], step) >= best - DOUBT_ODDS) {
            lo = fmin(lo, mid);
            hi = fmax(hi, mid);
        }
    }
    /* A doubt found before over times the rings no longer hold stays
     * (they can no longer be weighed, and were in doubt). */
    const gz_model_doubt *had = &m->step_doubt;
    if (had->set && had->from < from) {
        lo = fmin(lo, had->from);
        hi = fmax(hi, fmin(had->to, from));
    }
    m->step_doubt = (gz_model_doubt){lo, hi, lo < hi};
}

/* How much likelier a bound's latency (how far it is from the clock: work
 * begun after its submit, completion seen after the work ended) is l1 than
 * l2, for a side whose latencies are typically tau: mostly about tau, now
 * and then a stall of up to STALL_NS (the host descheduled). A bound near
 * one line and a step from the other is good evidence; one a stall from
 * both says next to nothing (a completion seen 2.3 ms or 4.3 ms late: a
 * fixed hint for the nearer line sent a step a whole step wrong as often
 * as it placed one right). Past TYPICAL_SPAN times tau a latency is a
 * stall, as likely as any other: the tail of an exponential made a frame's
 * completion seen 1.1 ms late 30 times likelier than 3.1 ms late, where
 * completions on lavapipe beside a busy loop come 1-4 ms late about
 * equally often (0.4-0.5 % per ms; 97 % within 0.5 ms), and the frame went
 * 2 ms wrong (issue 18). */
#define STALL_SHARE 0.05
#define STALL_NS 2e7 /* 20 ms */
#define TYPICAL_SPAN 6.0
static double latency_density(double l, double tau)
{
    double typical = l < TYPICAL_SPAN * tau ? (1 - STALL_SHARE) / tau * exp(-fmax(l, 0) / tau) : 0;
    return typical + STALL_SHARE / STALL_NS;
}

static double latency_odds(double l1, double l2, double tau)
{
    tau = fmax(tau, 1000.0); /* no side is typically closer than 1 us */
    return latency_density(l1, tau) / latency_density(l2, tau);
}

/* Whether work that began at GPU time t waited for the work ahead of it
 * on its queue: something ended (a zone, a submission) right before it.
 * Its begin then came when that work ended, not a latency after its
 * submit: how far it is from either line says nothing of the step (issue
 * 18: a submission queued behind one that a stalled host stretched to
 * 2.2 ms began 2.2 ms after its submit; weighed as a latency, that sent
 * the step into the work ahead, 1980 us wrong). */
static bool queued_behind(const gz_clock_model *m, double t)
{
    for (uint32_t i = 0; i < m->nrecent; i++) {
        double e = rel(m, m->recent[i].gpu_ns);
        if (!m->recent[i].lower && e <= t && e > t - GAP_SLACK)
            return true;
    }
    for (uint32_t i = 0; i < m->nzones; i++) {
        double e = rel(m, m->zones[i].end_ns);
        if (e <= t && e > t - GAP_SLACK)
            return true;
    }
    return false;
}

/* Whether the ring of recent constraints holds every one after t. */
static bool ring_holds_since(const gz_clock_model *m, double t)
{
    if (m->nrecent < GZ_MODEL_RECENT)
        return true;
    for (uint32_t i = 0; i < m->nrecent; i++)
        if (rel(m, m->recent[i].gpu_ns) <= t)
            return true;
    return false;
}

/* How far a side's bounds typically are from the clock around the step:
 * the median slack of the recent ones since the step before, each from the
 * line on its side of the step, those within TYPICAL_GUARD of it left out
 * (their side is the question). The slacks noted as bounds came were
 * measured from the line before the step until it was found: a forward
 * step of 2 ms made every submit seem 2 ms from the clock, the odds of
 * every begin were then taken as none, and a completion seen late put a
 * step after work that began 67 us after its submit (issue 18, 2010 us).
 * Too few such bounds: the slacks noted. */
#define TYPICAL_GUARD 1e7 /* 10 ms */
#define TYPICAL_MIN 8
static double typical_slack(const gz_clock_model *m, int side, double since)
{
    double v[GZ_MODEL_RECENT];
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nrecent; i++) {
        const gz_model_suspect *x = &m->recent[i];
        double t = rel(m, x->gpu_ns);
        if (x->pair || x->lower != (side == 0) || t <= since || fabs(t - m->step_t) < TYPICAL_GUARD)
            continue;
        double line = t < m->step_t ? m->before_step_a + m->before_step_b * t : m->a + m->b * t;
        v[n++] = fmax(x->lower ? line - x->v : x->v - line, 0);
    }
    if (n < TYPICAL_MIN)
        return median_slack(m, side);
    qsort(v, n, sizeof v[0], by_value);
    return v[n / 2];
}

static void refine_step(gz_clock_model *m, bool at_jump)
{
    double since = m->nolder ? m->older[0].t : -INFINITY;
    m->placed_upto = m->newest_t;
    m->replace_step = false;
    m->placed_size = step_size(m);
    /* A likelihood counts only from a side whose bounds are usually
     * within a quarter of the step: in a busy queue work starts a
     * submission or more after its submit, and a start bound from before
     * the step can meet the line after it as closely as one from after. */
    double typical[2] = {typical_slack(m, 0, since), typical_slack(m, 1, since)};
    /* (t, weight): positive for "after the step", negative for "before". */
    double ev[GZ_MODEL_RECENT][2];
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nrecent; i++) {
        const gz_model_suspect *x = &m->recent[i];
        double t = rel(m, x->gpu_ns);
        if (t <= since)
            continue;
        double before = m->before_step_a + m->before_step_b * t, after = m->a + m->b * t;
        double step = fabs(after - before), cut = fmin(JUMP_NS, step) / 2;
        /* How far the bound cuts into each line (positive: it breaks it). */
        double into_before = x->lower ? x->v - before : before - x->v;
        double into_after = x->lower ? x->v - after : after - x->v;
        double w = 0;
        if (into_before > cut)
            w = PROOF_WEIGHT;
        else if (into_after > cut)
            w = -PROOF_WEIGHT;
        /* No latency to weigh: a side whose bounds are far from the clock
         * (above); a tight sample's side, its GPU time anywhere in its
         * bracket (a sync point that a stalled host bracketed 2 ms wide, 20
         * us inside one side by a line, outweighed the completion that
         * proved that line wrong; issue 18, 1754 us); a begin of work that
         * waited for the work ahead (queued_behind). */
        else if (typical[x->lower ? 0 : 1] > step / 4 || x->pair ||
                 (x->lower && queued_behind(m, t)))
            w = 0;
        else
            w = log(latency_odds(-into_after, -into_before, typical[x->lower ? 0 : 1]));
        if (w != 0) {
            ev[n][0] = t;
            ev[n++][1] = w;
        }
    }
    if (!n)
        return;
    /* Nothing since the step before agrees with the line after it that
     * this step ends: that line was wrong, not the clock again (the line
     * after a step that bounds alone show is placed by how close bounds
     * came, and one placed 0.78 ms short was the second half of a 2 ms
     * step). One step: the line now holds from the step before, placed
     * anew with the lines on either side of it. Only when the step is
     * found, and the ring holds every time since the step before: placed
     * again later, or found late, the support may have left the ring (a
     * step found 60 ms late in a busy queue, the ring all after it, was
     * made one with the step 1.1 s before it, and the zones of that second
     * still waiting went 2 ms wrong). One bound is no support: the line
     * after a step that bounds show rests on the one that came closest (a
     * completion 1.4 ms late kept a 0.6 ms line for the 24 ms until the
     * rest of a 2 ms step showed, and the zones there went 1.4 ms wrong). */
    uint32_t against = 0; /* odds of e or more: weaker is no support */
    for (uint32_t i = 0; i < n; i++)
        against += ev[i][1] <= -1;
    if (against < 2 && m->nolder && at_jump && ring_holds_since(m, since)) {
        m->before_step_a = m->older[0].a;
        m->before_step_b = m->older[0].b;
        m->step_t = m->older[0].t;
        m->step_doubt = m->older[0].doubt;
        memmove(&m->older[0], &m->older[1], (GZ_MODEL_STEPS - 1) * sizeof m->older[0]);
        m->nolder--;
        m->jumps--;
        refine_step(m, true);
        return;
    }
    qsort(ev, n, sizeof ev[0], by_time);
    /* Split k: evidence [0, k) before the step, [k, n) after it. */
    double score = 0;
    for (uint32_t i = 0; i < n; i++)
        score += ev[i][1] > 0 ? ev[i][1] : 0; /* k = 0: every "after" agrees */
    /* Of neighbouring splits that agree equally well (likelihoods that
     * contradict each other), the middle one. */
    double best = score;
    uint32_t best_k = 0, last_k = 0;
    for (uint32_t k = 1; k <= n; k++) {
        score -= ev[k - 1][1]; /* it moves to the "before" side */
        if (score > best) {
            best = score;
            best_k = last_k = k;
        } else if (score == best && last_k == k - 1) {
            last_k = k; /* the same plateau */
        }
    }
    best_k = best_k + (last_k - best_k) / 2;
    /* Between two pieces of evidence, the zones' gaps place it (a window
     * open on one side held gaps of ms that a starved driver left in
     * queued work, up to 100 ms before the step). */
    double gap = best_k > 0 && best_k < n ? step_in_gap(m, since, ev[best_k - 1][0], ev[best_k][0])
                                          : NAN;
    if (!isnan(gap))
        m->step_t = gap;
    else if (best_k == 0)
        m->step_t = fmin(m->step_t, ev[0][0]);
    else if (best_k == n)
        m->step_t = fmax(m->step_t, ev[n - 1][0]);
    else {
        /* Between the last time before the step and the first after it,
         * the middle; but where the first after it is the end of some
         * work, that work's zones are all after a step that came before
         * the work began, and straddle one that came within it: the step
         * goes between the time before it and the work's begin (the last
         * begin in between: work on one queue runs in order). In a busy
         * queue the work begins right after the one before it ends; the
         * middle would send the first half of its zones through the line
         * from before the step. */
        double before_t = ev[best_k - 1][0], after_t = ev[best_k][0], begin = -INFINITY;
        for (uint32_t i = 0; i < m->nrecent; i++) {
            double t = rel(m, m->recent[i].gpu_ns);
            if (m->recent[i].lower && t > before_t && t < after_t && t > begin)
                begin = t;
        }
        /* And where the time before it is the begin of the work ahead,
         * right before the work's begin, after the newest time known
         * before it (the work ahead's end): the middle cut that work in
         * two, and a step after it ended sent its end a step wrong. */
        double last = before_t;
        for (uint32_t i = 0; begin > -INFINITY && i < m->nrecent; i++) {
            double t = rel(m, m->recent[i].gpu_ns);
            if (t > last && t < begin)
                last = t;
        }
        for (uint32_t i = 0; begin > -INFINITY && i < m->nzones; i++)
            for (int k = 0; k < 2; k++) {
                double t = rel(m, k ? m->zones[i].end_ns : m->zones[i].begin_ns);
                if (t > last && t < begin)
                    last = t;
            }
        m->step_t = (last + (begin > -INFINITY ? begin : after_t)) / 2;
    }
    snap_to_gap(m, since, ev, n);
}

/* Records a step at GPU time t, the line (a, b) holding before it. Zones
 * wait up to a second to be converted: steps that close together must all
 * still be known. */
static void push_step(gz_clock_model *m, double t, double a, double b)
{
    if (m->has_before_step) {
        memmove(&m->older[1], &m->older[0], (GZ_MODEL_STEPS - 1) * sizeof m->older[0]);
        m->older[0] = (gz_model_line){m->step_t, m->before_step_a, m->before_step_b, m->step_doubt};
        if (m->nolder < GZ_MODEL_STEPS)
            m->nolder++;
    }
    m->has_before_step = true;
    m->before_step_a = a;
    m->before_step_b = b;
    m->step_t = t;
    m->step_doubt = (gz_model_doubt){0};
    m->placed_size = step_size(m);
    m->jumps++;
}

/* Drops the fewest oldest of the count buckets from head that leaves the
 * rest agreeing, at the best slope or at the one given (fewer constraints
 * never agree less, so a binary search finds it in a few fits). Returns
 * how many it dropped. */
static uint32_t drop_until_agree(gz_clock_model *m, uint32_t head, uint32_t count, double slope)
{
    uint32_t lo = 0, hi = count - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        m->head = (head + mid) % GZ_MODEL_BUCKETS;
        m->count = count - mid;
        if (isnan(slope) ? window_agrees(m) : width_at(m, slope) >= -FEASIBLE_SLACK)
            hi = mid;
        else
            lo = mid + 1;
    }
    m->head = (head + lo) % GZ_MODEL_BUCKETS;
    m->count = count - lo;
    return lo;
}

/* The line after a step comes from the times after it: every window time
 * older than the step as placed, or than the end of the gaps it may be in
 * (its doubt), is dropped. drop_until_agree keeps every older bucket that
 * agrees with some slope, and one that a later placement put before the
 * step tilted the line after it (issue 18: a submit bound from 40 ms
 * before a step, in doubt, held the line after it at 293 ppm against the
 * 1003 ppm known before, and its zones went up to 72 us wrong). Any bucket
 * may hold such a time: one that came late, its own bucket gone, went to
 * the newest. The newest keeps one side at least. Returns whether any time
 * was dropped. */
static bool drop_before_step(gz_clock_model *m)
{
    double cut = m->step_t;
    if (m->step_doubt.set)
        cut = fmax(cut, m->step_doubt.to);
    bool dropped = false;
    for (uint32_t i = 0; i < m->count; i++) {
        gz_model_bucket *b = bucket_at(m, i);
        bool lo_old = b->has_lo && b->lo_t < cut, hi_old = b->has_hi && b->hi_t < cut;
        bool keeps = (b->has_lo && !lo_old) || (b->has_hi && !hi_old);
        if (i + 1 == m->count && !keeps)
            break; /* the newest, wholly before the cut: kept */
        b->has_lo &= !lo_old;
        b->has_hi &= !hi_old;
        dropped |= lo_old || hi_old;
        if (!b->has_lo && !b->has_hi)
            b->methods = 0;
    }
    while (m->count > 1 && !bucket_at(m, 0)->has_lo && !bucket_at(m, 0)->has_hi) {
        m->head = (m->head + 1) % GZ_MODEL_BUCKETS;
        m->count--;
    }
    if (dropped) {
        m->window_from = fmax(m->window_from, cut);
        m->dirty = true;
    }
    return dropped;
}

/* Whether the step should be placed again because its size has changed
 * since: which bounds prove a side and which gaps are long enough depend
 * on it (a step first seen as 3.1 ms, placed after a 2.4 ms gap that a
 * bound then seemed to rule out, stayed there once it was 2 ms: a zone
 * 2018 us wrong). Checked right after the refit that changed it, before
 * zones are converted; only while the ring still holds the times around
 * the step. */
static bool resized(const gz_clock_model *m)
{
    return m->has_before_step && fabs(step_size(m) - m->placed_size) > RESIZE_NS &&
           m->newest_t - m->step_t < REPLACE_SPAN &&
           ring_holds_since(m, m->step_t - REPLACE_SPAN / 10);
}

/* One fit of the window; returns whether a step placed after it dropped
 * times the fit rested on (drop_before_step). */
static bool fit_window(gz_clock_model *m)
{
    if (m->replace_step) {
        refine_step(m, false);
        drop_before_step(m);
    }
    /* Refit for binding constraints, and at least every REFIT_SPAN of GPU
     * time: drift that curves then never builds up into a contradiction
     * large enough to pass for a step. */
    if (!m->count || (!m->dirty && m->newest_t - m->fit_t < REFIT_SPAN))
        return false;
    m->fit_t = m->newest_t;
    m->dirty = false;
    m->refits++;
    bool trimmed = false;
    double spread;
    double slope = best_slope(m, &spread);
    double width = width_at(m, slope);
    /* Contradicting constraints: the clock stepped, or the drift changed.
     * The newest constraints describe the clock now: drop the fewest oldest
     * buckets that leaves the rest agreeing (drop_until_agree). */
    bool was_tight = m->method == GZ_CALIB_CALIBRATED || m->method == GZ_CALIB_SYNC_POINT;
    bool step_pending = m->step_pending;
    uint64_t jumps = m->jumps;
    m->step_pending = false;
    if (width < -FEASIBLE_SLACK) {
        double contradiction = -width;
        uint32_t head = m->head, count = m->count;
        /* A drift that 500 ms of tight samples showed changes by ppm: a
         * contradiction that the rest of the window meets only with the
         * line tilted by more than TILT_STEP is a step that a late
         * completion showed in part (the line tilted by 460 ppm over the
         * 200 ms before a 2 ms step, and the zones of the second before it
         * went up to 427 us late). The drift stays, and the line after the
         * step comes from the constraints after it; the rest of the step
         * shows soon, and refine_step makes the two one. */
        bool firm = m->slope_known && tight_span(m) >= FIRM_SPAN;
        uint32_t lo = drop_until_agree(m, head, count, NAN);
        bool tilted = false;
        if (firm && contradiction <= JUMP_NS && !step_pending &&
            fabs(best_slope(m, NULL) - m->b) > TILT_STEP) {
            lo = drop_until_agree(m, head, count, m->b);
            tilted = true;
        }
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
        if (m->count == 1 && !window_agrees(m)) {
            bool lo_older = first->lo_t < first->hi_t;
            dropped_t = lo_older ? first->lo_t : first->hi_t;
            if (lo_older)
                first->has_lo = false;
            else
                first->has_hi = false;
        }
        if ((contradiction > JUMP_NS || step_pending || tilted) && m->fitted) {
            /* A step: the line so far still holds before it. The step lies
             * after the newest dropped constraint (it contradicts what came
             * later) and before the oldest kept one that contradicts the
             * line so far; kept constraints loose enough to agree with both
             * lines say nothing about when it happened. */
            double after_t = INFINITY, cut = fmin(JUMP_NS, contradiction) / 2;
            for (uint32_t i = 0; i < m->count && after_t == INFINITY; i++) {
                const gz_model_bucket *b = bucket_at(m, i);
                if (b->has_lo && b->lo > m->a + m->b * b->lo_t + cut)
                    after_t = b->lo_t;
                if (b->has_hi && b->hi < m->a + m->b * b->hi_t - cut)
                    after_t = fmin(after_t, b->hi_t);
            }
            push_step(m, after_t == INFINITY       ? dropped_t
                         : dropped_t == -INFINITY ? after_t
                                                  : (dropped_t + after_t) / 2,
                      m->a, m->b);
            /* Only bounds after it: keep the drift, and freeze how far
             * each side's bounds were from the line before (below). */
            if (was_tight && best_method(m) == GZ_CALIB_BOUNDS) {
                m->bounds_after_step = true;
                for (int side = 0; side < 2; side++) {
                    m->step_slack[side] = INFINITY;
                    for (uint32_t i = 0; i < m->nslack[side]; i++)
                        m->step_slack[side] = fmin(m->step_slack[side], m->slack[side][i]);
                }
            }
        }
        else if (m->fitted && dropped_t > -INFINITY) {
            m->dropped = (gz_model_line){.t = dropped_t, .a = m->a, .b = m->b};
            m->has_dropped = true;
        }
        spread = NAN;
        slope = m->bounds_after_step ? m->b : best_slope(m, &spread);
        width = width_at(m, slope);
    }
    if (m->bounds_after_step && best_method(m) != GZ_CALIB_BOUNDS)
        m->bounds_after_step = false; /* a tight sample after the step */
    envelope e = envelope_at(m, slope);
    double a;
    if (m->bounds_after_step && (e.has_lo || e.has_hi)) {
        /* The middle of the band is as far off as loose bounds are loose
         * (in a busy queue, work starts a submission or more after its
         * submit). The tighter side's bounds are about as far from the
         * clock as they were before the step: the line sits that far
         * inside them, and inside the band that they make. */
        double from_lo = e.has_lo && isfinite(m->step_slack[0]) ? e.lo_max + m->step_slack[0] : NAN;
        double from_hi = e.has_hi && isfinite(m->step_slack[1]) ? e.hi_min - m->step_slack[1] : NAN;
        if (!isnan(from_lo) && !isnan(from_hi))
            a = m->step_slack[0] < m->step_slack[1] ? from_lo : from_hi;
        else if (!isnan(from_lo) || !isnan(from_hi))
            a = isnan(from_lo) ? from_hi : from_lo;
        else
            a = e.has_lo && e.has_hi ? (e.lo_max + e.hi_min) / 2 : e.has_lo ? e.lo_max : e.hi_min;
        if (e.has_lo)
            a = fmax(a, e.lo_max);
        if (e.has_hi)
            a = fmin(a, e.hi_min);
    } else if (e.has_lo && e.has_hi) {
        a = (e.lo_max + e.hi_min) / 2;
    } else {
        a = e.has_lo ? e.lo_max : e.hi_min; /* one side only: its tightest bound */
    }
    m->a = a;
    m->b = slope;
    /* A contradiction too small to be a step dropped the history the line
     * rested on, as a change of drift: where the line since has moved by
     * more than a step's least at the time of the drop, it was the first
     * part of a step, seen late in full (issue 18: a 2 ms step first
     * showed as 112 us; the line then moved by the rest with nothing in the
     * window to contradict, no step was recorded, and the zones of the
     * 700 ms before it that waited to be converted went 2 ms wrong). */
    if (m->jumps != jumps) {
        m->has_dropped = false;
    } else if (m->has_dropped) {
        double t = m->dropped.t;
        if (fabs(a + slope * t - (m->dropped.a + m->dropped.b * t)) > JUMP_NS) {
            push_step(m, t, m->dropped.a, m->dropped.b);
            m->has_dropped = false;
        } else if (m->newest_t - t > REPLACE_SPAN) {
            m->has_dropped = false;
        }
    }
    if (!isnan(spread)) {
        m->slope_spread = spread;
        m->spread_t = m->newest_t;
    }
    m->fitted = true;
    m->fit_lo = e.has_lo;
    m->fit_hi = e.has_hi;
    m->method = best_method(m);
    if (m->jumps != jumps) {
        /* A step that a tight sample or old bounds showed: suspects that
         * the new line meets are bounds after it, the others are not. */
        for (uint32_t i = 0; i < m->nsuspects; i++) {
            const gz_model_suspect *x = &m->suspects[i];
            double line = m->a + m->b * rel(m, x->gpu_ns);
            double edge = (double)m->deviation_ns + JUMP_NS;
            note_recent(m, x->gpu_ns, x->v, x->lower, false);
            if (x->lower ? x->v <= line + edge : x->v >= line - edge) {
                if (x->lower)
                    add_lo(m, x->gpu_ns, x->v, GZ_CALIB_BOUNDS);
                else
                    add_hi(m, x->gpu_ns, x->v, GZ_CALIB_BOUNDS);
            } else {
                m->bounds_refused++;
            }
        }
        m->nsuspects = 0;
        m->window_from = INFINITY;
        for (uint32_t i = 0; i < m->count; i++) {
            const gz_model_bucket *b = bucket_at(m, i);
            if (b->has_lo)
                m->window_from = fmin(m->window_from, b->lo_t);
            if (b->has_hi)
                m->window_from = fmin(m->window_from, b->hi_t);
        }
        refine_step(m, true);
        trimmed = drop_before_step(m);
    } else if (resized(m)) {
        refine_step(m, false);
        trimmed = drop_before_step(m);
    }
    if (!m->slope_known && e.has_lo && e.has_hi && m->method != GZ_CALIB_BOUNDS) {
        const gz_model_bucket *first = bucket_at(m, 0);
        double oldest = fmin(first->has_lo ? first->lo_t : INFINITY,
                             first->has_hi ? first->hi_t : INFINITY);
        m->slope_known = m->newest_t - oldest >= SLOPE_SPAN;
    }
    m->drift_ppm = slope * 1e6;
    m->deviation_ns = e.has_lo && e.has_hi && width > 0 ? (uint64_t)(width / 2 + 0.5)
                      : e.has_lo && e.has_hi         ? 0
                                                     : UINT64_MAX;
    m->offset_ns = (int64_t)((uint64_t)m->o_ref + (uint64_t)llround(a + slope * m->newest_t));
    return trimmed;
}

/* The worker converts zones right after a fit: where placing a step after
 * the fit dropped times the line rested on, the line is fitted again at
 * once. */
void gz_model_fit(gz_clock_model *m)
{
    if (fit_window(m))
        fit_window(m);
}

uint64_t gz_model_to_host(const gz_clock_model *m, uint64_t gpu_ns)
{
    if (!m->fitted)
        return gpu_ns;
    double t = rel(m, gpu_ns);
    double corr = m->a + m->b * t;
    if (m->has_before_step && t < m->step_t) {
        corr = m->before_step_a + m->before_step_b * t;
        for (uint32_t i = 0; i < m->nolder && t < m->older[i].t; i++)
            corr = m->older[i].a + m->older[i].b * t;
    }
    __int128 host = (__int128)gpu_ns + (__int128)m->o_ref + (__int128)llround(corr);
    if (host < 0)
        return 0;
    if (host > (__int128)UINT64_MAX)
        return UINT64_MAX;
    return (uint64_t)host;
}

static bool in_doubt(const gz_model_doubt *d, double t)
{
    return d->set && t >= d->from && t <= d->to;
}

/* How far apart the lines on either side of a step are at t: how wrong a
 * time on the wrong side of it is. */
static double apart(double a1, double b1, double a2, double b2, double t)
{
    return fabs((a1 + b1 * t) - (a2 + b2 * t));
}

uint64_t gz_model_doubt_ns(const gz_clock_model *m, uint64_t gpu_ns)
{
    if (!m->fitted || !m->has_before_step)
        return 0;
    double t = rel(m, gpu_ns), off = 0;
    if (in_doubt(&m->step_doubt, t))
        off = apart(m->before_step_a, m->before_step_b, m->a, m->b, t);
    /* Older steps: the line after each is the one before the next. */
    double a = m->before_step_a, b = m->before_step_b;
    for (uint32_t i = 0; i < m->nolder; i++) {
        if (in_doubt(&m->older[i].doubt, t))
            off = fmax(off, apart(m->older[i].a, m->older[i].b, a, b, t));
        a = m->older[i].a;
        b = m->older[i].b;
    }
    return (uint64_t)llround(off);
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
