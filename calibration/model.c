/* The GPU → host clock model's line: constraints in, a window of them, the
 * fit, and the conversions both ways (gz_calibration.h gives the map).
 *
 * Every constraint bounds the offset host - gpu at one GPU time: a
 * calibrated pair or a sync point on both sides, a submission on one side
 * each. The line is the one with the largest margin to every constraint in
 * a window of recent ones, kept per 10 ms bucket; a loose constraint (a
 * descheduled thread, a late completion) cannot move it, and the window
 * follows slowly varying drift. Where the window cannot agree on any line
 * the clock changed: the oldest buckets go until it can, and a large
 * contradiction is a step in the GPU counter (model_step.c then places it;
 * the line before it is kept for the times before it).
 *
 * What it assumes: GPU time runs forward at a rate within ±10 % of the
 * nominal period, and once a window has shown that rate it changes slowly
 * (a crystal's temperature moves it by ppm; the fit allows 2000 ppm), never
 * by a step; the counter itself may step.
 * Calibrated pairs keep coming whatever the queue does, sync points only
 * while it is idle, so while tight samples are recent they alone may show
 * a step or a change of drift, and a bound that contradicts them is wrong
 * (calibrated) or held until others confirm it (sync points). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef GZ_MODEL_CHECK_HULL
#include <stdio.h>
#endif

#include "gz_calibration.h"
#include "gz_model_internal.h"

#define MAX_DRIFT GZ_MODEL_MAX_DRIFT
#define MAX_DRIFT_CHANGE 2e-3 /* ±2000 ppm from the drift a window showed */
#define SLOPE_SPAN 1e8 /* 100 ms of tight samples on both sides show the drift */
#define FIRM_SPAN 5e8 /* 500 ms of them: a drift that changes by ppm only */
#define SPREAD_AGING 2e-6 /* per second: how fast a known drift may wander */
#define INITIAL_SPREAD 1e-4 /* 100 ppm */
#define TILT_STEP 3e-4 /* a change of a firm drift beyond this is a step seen in part */
#define FEASIBLE_SLACK 1.0       /* ns of rounding a fit may miss a constraint by */
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
     * band among those can put a clock with no drift at -2000 ppm. */
    m->slope_spread = INITIAL_SPREAD;
    m->method = GZ_CALIB_NONE;
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
    gz_model_bucket_changed(m, b);
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
 * would send the line after it 2 ms back (a second, false step). */
static bool before_window(const gz_clock_model *m, uint64_t gpu_ns)
{
    return m->has_before_step && gz_model_rel(m, gpu_ns) < m->window_from;
}

static void add_lo(gz_clock_model *m, uint64_t gpu_ns, double lo, gz_calib_method method)
{
    if (before_window(m, gpu_ns))
        return;
    gz_model_bucket *b = bucket_for(m, gpu_ns);
    double t = gz_model_rel(m, gpu_ns);
    if (!b->has_lo || lo > b->lo) {
        b->lo = lo;
        b->lo_t = t;
        b->has_lo = true;
        gz_model_bucket_changed(m, b);
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
    double t = gz_model_rel(m, gpu_ns);
    if (!b->has_hi || hi < b->hi) {
        b->hi = hi;
        b->hi_t = t;
        b->has_hi = true;
        gz_model_bucket_changed(m, b);
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
 * sync point from after a step can come before the completions of the work
 * ahead of it (18 ms of it in a busy queue); the step, first placed with
 * nothing known of that work, must move once its completions arrive, or
 * every zone of it is a step (2 ms) off. */
static void note_late(gz_clock_model *m, uint64_t gpu_ns)
{
    double t = gz_model_rel(m, gpu_ns), since = m->nolder ? m->older[0].t : -INFINITY;
    if (m->has_before_step && t > since && t < m->placed_upto && fabs(t - m->step_t) < GZ_MODEL_REPLACE_SPAN)
        m->replace_step = true;
}

/* The newest bounds one by one (the buckets keep only the tightest of 10
 * ms): where exactly a step fell (gz_model_place_step). */
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
    double least = fabs(m->suspects[0].cut), first = gz_model_rel(m, m->suspects[0].gpu_ns);
    for (uint32_t i = 1; i < m->nsuspects; i++) {
        least = fmin(least, fabs(m->suspects[i].cut));
        first = fmin(first, gz_model_rel(m, m->suspects[i].gpu_ns));
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
     * measure of how close bounds come: one from just after a 2 ms step
     * would make this -1.9 ms, and the line after the step 1.9 ms off. */
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
    resolve_suspects(m, gz_model_rel(m, p->gpu_ns), o - d, o + d);
    note_recent(m, p->gpu_ns, o - d, true, true);
    note_recent(m, p->gpu_ns, o + d, false, true);
    /* A sync point's middle is biased by whatever part of the bracket is
     * submission latency: it enters as the two bounds it is. */
    add_lo(m, p->gpu_ns, o - d, method);
    add_hi(m, p->gpu_ns, o + d, method);
    double t = gz_model_rel(m, p->gpu_ns);
    if (!m->has_tight || t > m->tight_t)
        m->tight_t = t;
    m->has_tight = true;
    if (method == GZ_CALIB_CALIBRATED &&
        (!m->calib_deviation_ns || p->deviation_ns < m->calib_deviation_ns))
        m->calib_deviation_ns = p->deviation_ns ? p->deviation_ns : 1;
}

/* Whether a bound contradicts the band of the tight samples (calibrated
 * pairs or sync points, one every 100 ms): then the bound is wrong, not the
 * clock. A bound's GPU value is unwrapped from a host time, and a
 * submission that starts most of a wrap after its submit (a loaded
 * machine and a counter that wraps every few tens of ms) lands in the
 * wrong wrap: taken for a step, it would move the line under a zone by
 * ms. After a real step the first bound may contradict the line by far
 * less than a step (the CPU saw the work complete nearly a step late):
 * taken for drift, it would tilt the line under the zones before the step
 * (by 140 us on lavapipe). Only a tight sample can show a step or a change
 * of drift; the line may part from the clock by TRACK_DRIFT since the
 * newest one, and the zones wait a second for the next. That holds while
 * tight samples keep coming: OpenCL sync points come only with the
 * application's enqueues that return quickly, and a second without one
 * would leave a 500 ppm drift to bounds that are all refused (a zone would
 * end 600 us after the CPU saw it complete). Past TIGHT_HORIZON from the
 * newest tight sample, the bounds are what there is. */
/* Sync points, though, come only while the queue is idle: an app that
 * keeps it busy leaves a step to bounds for as long as it does, and every
 * zone meanwhile would be off by the step. There a bound that
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
    double t = gz_model_rel(m, gpu_ns);
    if (fabs(t - m->tight_t) > TIGHT_HORIZON)
        return false;
    double edge = (double)m->deviation_ns +
                  fmin(GZ_MODEL_JUMP_NS, FEASIBLE_SLACK + TRACK_DRIFT * fabs(t - m->tight_t));
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
            resolve_suspects(m, gz_model_rel(m, gpu_begin_ns), lo, INFINITY);
            note_slack(m, gz_model_rel(m, gpu_begin_ns), lo, true);
            note_recent(m, gpu_begin_ns, lo, true, false);
            add_lo(m, gpu_begin_ns, lo, GZ_CALIB_BOUNDS);
        }
    }
    if (host_ns_not_after) {
        double hi = offset_of(m, host_ns_not_after, gpu_end_ns);
        if (!refuse_bound(m, gpu_end_ns, hi, false)) {
            resolve_suspects(m, gz_model_rel(m, gpu_end_ns), -INFINITY, hi);
            note_slack(m, gz_model_rel(m, gpu_end_ns), hi, false);
            note_recent(m, gpu_end_ns, hi, false, false);
            add_hi(m, gpu_end_ns, hi, GZ_CALIB_BOUNDS);
        }
    }
}

typedef struct envelope {
    double lo_max, hi_min; /* of lo - b t and hi - b t */
    bool has_lo, has_hi;
} envelope;

/* The band's edges at a slope from every bucket of the window. */
static envelope envelope_all(const gz_clock_model *m, double slope)
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

/* The same from the buckets that can hold an edge (model_hull.c). */
static envelope envelope_hull(const gz_clock_model *m, double slope)
{
    const gz_model_hull *h = &m->hull;
    envelope e = {-INFINITY, INFINITY, h->nlo > 0, h->nhi > 0};
    for (uint32_t i = 0; i < h->nlo; i++) {
        double v = h->lo[i].v - slope * h->lo[i].t;
        if (v > e.lo_max)
            e.lo_max = v;
    }
    for (uint32_t i = 0; i < h->nhi; i++) {
        double v = h->hi[i].v - slope * h->hi[i].t;
        if (v < e.hi_min)
            e.hi_min = v;
    }
    return e;
}

#ifdef GZ_MODEL_CHECK_HULL
/* A test's build: the hull's edges against the window's, bit for bit. */
static void check_hull_at(const gz_clock_model *m, double slope)
{
    if (!m->hull.valid || !(fabs(slope) <= GZ_MODEL_HULL_SLOPE))
        return;
    envelope e = envelope_hull(m, slope), all = envelope_all(m, slope);
    if (memcmp(&all.lo_max, &e.lo_max, sizeof e.lo_max) ||
        memcmp(&all.hi_min, &e.hi_min, sizeof e.hi_min) || all.has_lo != e.has_lo ||
        all.has_hi != e.has_hi) {
        fprintf(stderr, "model_hull: slope %a: edges %a %a from the hull, %a %a from the window\n",
                slope, e.lo_max, e.hi_min, all.lo_max, all.hi_min);
        abort();
    }
}

/* And at the slopes where two neighbouring bounds of the window tie (and
 * next to them), where rounding decides the edge: for small windows at
 * every hull made, for others now and then. */
static void check_hull_ties(const gz_clock_model *m)
{
    static unsigned made;
    if (made++ % 64 && m->count > 64)
        return;
    for (int lower = 0; lower < 2; lower++) {
        double pt = NAN, pv = NAN;
        for (uint32_t i = 0; i < m->count; i++) {
            const gz_model_bucket *b = &m->buckets[(m->head + i) % GZ_MODEL_BUCKETS];
            if (!(lower ? b->has_lo : b->has_hi))
                continue;
            double t = lower ? b->lo_t : b->hi_t, v = lower ? b->lo : b->hi;
            if (t != pt && !isnan(pt)) {
                double s = (v - pv) / (t - pt);
                check_hull_at(m, s);
                check_hull_at(m, nextafter(s, INFINITY));
                check_hull_at(m, nextafter(s, -INFINITY));
            }
            pt = t;
            pv = v;
        }
    }
}
#endif

/* The band's edges at a slope: from the hull, made once for the window
 * (GZ_MODEL_CHECK_HULL: checked against every bucket at each call). */
static envelope envelope_at(gz_clock_model *m, double slope)
{
    gz_model_hull *h = &m->hull;
    if (!(h->gen == m->gen && h->head == m->head && h->count == m->count)) {
        gz_model_hull_make(m);
#ifdef GZ_MODEL_CHECK_HULL
        check_hull_ties(m);
#endif
    }
    if (!h->valid || !(fabs(slope) <= GZ_MODEL_HULL_SLOPE))
        return envelope_all(m, slope);
#ifdef GZ_MODEL_CHECK_HULL
    check_hull_at(m, slope);
#endif
    return envelope_hull(m, slope);
}

/* The band's width at a slope: concave in the slope (a minimum of lines
 * minus a maximum of lines), so a ternary search finds its maximum. */
static double width_at(gz_clock_model *m, double slope)
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
static double widest_slope(gz_clock_model *m, double lo, double hi)
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
static double band_edge(gz_clock_model *m, double in, double out)
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
static bool window_agrees(gz_clock_model *m)
{
    double lo, hi;
    slope_range(m, &lo, &hi);
    return width_at(m, widest_slope(m, lo, hi)) >= -FEASIBLE_SLACK;
}

/* The slope for the window. *spread, where not NULL, is set to half the
 * range of slopes the window allows when the slope comes from the window
 * alone, and to NAN when it does not. */
static double best_slope(gz_clock_model *m, double *spread)
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
     * merely stays inside the band sits at its edge (on lavapipe 46 ppm
     * off over the first 1.5 s, zones 50 us off a second later), and each
     * step would keep it. Where it pins them less closely (the short
     * window after a step, sync points 1 ms wide), the slope in use, or
     * the nearest one the window allows: the widest band of 600 ms after a
     * step can be 100 ppm off where the slope from before it is 13 ppm. */
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


void gz_model_add_zone(gz_clock_model *m, uint64_t begin_ns, uint64_t end_ns, uint32_t work_id)
{
    note_late(m, begin_ns);
    m->zones[m->zone_next] = (gz_model_zone){begin_ns, end_ns, work_id};
    m->zone_next = (m->zone_next + 1) % GZ_MODEL_ZONES;
    if (m->nzones < GZ_MODEL_ZONES)
        m->nzones++;
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
    m->placed_size = gz_model_step_size(m);
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
 * agrees with some slope, and one that a later placement puts before the
 * step tilts the line after it (a submit bound from 40 ms before a step,
 * in doubt, can hold that line at 293 ppm where the drift is 1003 ppm:
 * zones up to 72 us off). Any bucket may hold such a time: one that comes
 * late, its own bucket gone, goes to the newest. The newest keeps one side at least. Returns whether any time
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
        if (lo_old || hi_old)
            gz_model_bucket_changed(m, b);
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

/* One fit of the window; returns whether a step placed after it dropped
 * times the fit rested on (drop_before_step). */
static bool fit_window(gz_clock_model *m)
{
    if (m->replace_step) {
        gz_model_place_step(m, false);
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
         * completion showed in part (tilted, the line would turn by 460 ppm
         * over the 200 ms before a 2 ms step, and the zones of the second
         * before it would be up to 427 us late). The drift stays, and the line after the
         * step comes from the constraints after it; the rest of the step
         * shows soon, and gz_model_place_step makes the two one. */
        bool firm = m->slope_known && tight_span(m) >= FIRM_SPAN;
        uint32_t lo = drop_until_agree(m, head, count, NAN);
        bool tilted = false;
        if (firm && contradiction <= GZ_MODEL_JUMP_NS && !step_pending &&
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
            gz_model_bucket_changed(m, first);
        }
        if ((contradiction > GZ_MODEL_JUMP_NS || step_pending || tilted) && m->fitted) {
            /* A step: the line so far still holds before it. The step lies
             * after the newest dropped constraint (it contradicts what came
             * later) and before the oldest kept one that contradicts the
             * line so far; kept constraints loose enough to agree with both
             * lines say nothing about when it happened. */
            double after_t = INFINITY, cut = fmin(GZ_MODEL_JUMP_NS, contradiction) / 2;
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
     * part of a step, seen late in full (a 2 ms step can first show as
     * 112 us and the line then move by the rest with nothing left in the
     * window to contradict it; unrecorded, the step would put the zones
     * still waiting to be converted, up to a second of them, 2 ms off). */
    if (m->jumps != jumps) {
        m->has_dropped = false;
    } else if (m->has_dropped) {
        double t = m->dropped.t;
        if (fabs(a + slope * t - (m->dropped.a + m->dropped.b * t)) > GZ_MODEL_JUMP_NS) {
            push_step(m, t, m->dropped.a, m->dropped.b);
            m->has_dropped = false;
        } else if (m->newest_t - t > GZ_MODEL_REPLACE_SPAN) {
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
            double line = m->a + m->b * gz_model_rel(m, x->gpu_ns);
            double edge = (double)m->deviation_ns + GZ_MODEL_JUMP_NS;
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
        gz_model_place_step(m, true);
        trimmed = drop_before_step(m);
    } else if (gz_model_step_resized(m)) {
        gz_model_place_step(m, false);
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
    m->offset_ns = (int64_t)((uint64_t)m->o_ref + (uint64_t)gz_model_round(a + slope * m->newest_t));
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
    double t = gz_model_rel(m, gpu_ns);
    double corr = m->a + m->b * t;
    if (m->has_before_step && t < m->step_t) {
        corr = m->before_step_a + m->before_step_b * t;
        for (uint32_t i = 0; i < m->nolder && t < m->older[i].t; i++)
            corr = m->older[i].a + m->older[i].b * t;
    }
    __int128 host = (__int128)gpu_ns + (__int128)m->o_ref + (__int128)gz_model_round(corr);
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
    __int128 g = (__int128)m->t_ref + (__int128)gz_model_round(d);
    if (g < 0)
        return 0;
    if (g > (__int128)UINT64_MAX)
        return UINT64_MAX;
    return (uint64_t)g;
}
