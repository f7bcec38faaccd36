/* Where a step in the GPU clock fell, and which times it leaves in doubt.
 *
 * The line fit (model.c) finds a step when its window cannot agree, and
 * knows the lines on either side; the step's time it knows only to a
 * bucket (10 ms) or to the constraints that contradicted. A zone between
 * the true time and that guess is a whole step (ms) off. Here the step is
 * placed from what the model keeps one by one: the newest bounds (each
 * proves a side, or weighs by how likely its latency is under either
 * line), the zones' GPU times (the gaps between them in busy work) and how
 * long zones of one work take. Where the data cannot tell between two
 * places (a host stall hid every bound near the step), the times between
 * them are marked as in doubt by the step (gz_model_doubt_ns).
 *
 * What it assumes: the GPU counter never goes back, so a forward step of S
 * lies in a gap of at least S between two GPU times; work on one queue runs
 * in order and back to back while more is queued; a bound's latency (work
 * begun after its submit, completion seen after the work) is mostly about
 * its side's typical one, now and then a stall of up to 20 ms; work runs
 * slower than usual now and then, never much faster; a step comes at any
 * moment, so it is likelier in a longer stretch of real time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gz_calibration.h"
#include "gz_model_internal.h"

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

/* Where in a busy queue a forward step fell, from the work's own times.
 * Work on one queue runs in order and back to back while more is queued:
 * between one timestamp and the next there is either a zone's own work
 * (its begin, then its end) or a gap of a few us (the next command, or the
 * next submission, which was submitted before the one ahead ended). A step
 * makes one such gap longer by the step: there it fell. The bounds cannot
 * say so when they are loose, and the middle between them would send zones
 * a step wrong, across a real idle of ms nearby (a host that did not
 * submit in time) or inside a long submission. Marks: submissions'
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
        double t = gz_model_rel(m, m->recent[i].gpu_ns);
        if (t > since)
            x[n++] = (gz_mark){t, m->recent[i].v, m->recent[i].lower ? MARK_SUBMIT : MARK_DONE};
    }
    for (uint32_t i = 0; i < m->nzones; i++) {
        double b = gz_model_rel(m, m->zones[i].begin_ns), e = gz_model_rel(m, m->zones[i].end_ns);
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
 * step inside would leave at less than half the shortest zone of the same
 * work (others of its work_id, at least LIKE_WORK_SEEN of them, in the
 * ring) ran work it never runs that fast, so the step is not in it (a
 * label of 2.9 ms in each of 40 submissions: a step inside one would leave
 * it 0.9 ms, and the real-time odds alone would put it there rather than
 * in the 90 us after the label). Work is often slower than usual (a driver
 * preempted; a host stall on lavapipe stretches 0.1 ms submissions to
 * 4 ms), never much faster: a step that leaves a zone long is no
 * evidence. */
#define LIKE_WORK_SEEN 3
#define LIKE_WORK_WEIGHT 20.0 /* odds of e^20: beaten only by proofs */
static double like_work_odds(const gz_clock_model *m, double t1, double t2, double step)
{
    for (uint32_t i = 0; i < m->nzones; i++) {
        const gz_model_zone *z = &m->zones[i];
        double b = gz_model_rel(m, z->begin_ns), e = gz_model_rel(m, z->end_ns);
        if (!z->work_id || b > t1 || e < t2)
            continue;
        double shortest = INFINITY;
        uint32_t seen = 0;
        for (uint32_t k = 0; k < m->nzones; k++)
            if (k != i && m->zones[k].work_id == z->work_id) {
                shortest = fmin(shortest, (double)(m->zones[k].end_ns - m->zones[k].begin_ns));
                seen++;
            }
        if (seen >= LIKE_WORK_SEEN && e - b - step < shortest / 2 - GAP_SLACK)
            return -LIKE_WORK_WEIGHT;
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

/* Gaps within these log odds of the best are as good as it (odds of
 * about 3000 to 1). On lavapipe beside busy loops the evidence can be
 * wrong at e^5.4 (one begin a stall made look prompt) and, on a host
 * loaded twice over, at e^7.1 (both bounds of a frame); at 8 every
 * misplaced step of the recorded loaded runs (docs/PERFORMANCE.md, "Zones
 * in doubt") is marked, 2-9 zones in a run. */
#define DOUBT_ODDS 8.0
/* Where the gaps cannot be weighed again (the rings no longer hold the
 * times around the step), a doubt found before stays, and covers where the
 * step is now: a step placed again later would otherwise lose its doubt,
 * and a zone a whole step off would go unmarked. */
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
 * is a place the step is not. Where the evidence puts the step into a
 * shorter gap, it is wrong about which side some of it is on (a frame
 * submitted 2 ms before its work began, behind a slow sync point, looks
 * as if after the step; a completion seen late, as if before it). Each gap
 * of at least S/2 (the step's size is an estimate) is weighed by the
 * evidence that agrees with the step there, by how long it lasted in real
 * time (a step comes at any moment: it is likelier in an interval of 4 ms
 * than in one of 0.2 ms, where the evidence cannot tell) and by the zones
 * around it (like_work_odds); the best takes the step, the nearest of
 * equals. The nearer gap is no better a guess: where a host stall hid
 * every completion near a step, the nearer of two long submissions would
 * take it and put the zones between a whole step off. Gaps before the
 * oldest time kept may hide times: none there. */
static void snap_to_gap(gz_clock_model *m, double since, const double (*ev)[2], uint32_t n)
{
    double step = gz_model_step_size(m);
    if (step < 2 * GAP_SLACK)
        return; /* backward, or too small to tell from real gaps */
    double x[GZ_MODEL_RECENT + 2 * GZ_MODEL_ZONES];
    uint32_t nx = 0;
    double oldest[2] = {INFINITY, INFINITY}; /* of a ring that has wrapped */
    for (uint32_t i = 0; i < m->nrecent; i++) {
        double t = gz_model_rel(m, m->recent[i].gpu_ns);
        oldest[0] = fmin(oldest[0], t);
        if (t > since)
            x[nx++] = t;
    }
    for (uint32_t i = 0; i < m->nzones; i++)
        for (int k = 0; k < 2; k++) {
            double t = gz_model_rel(m, k ? m->zones[i].end_ns : m->zones[i].begin_ns);
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
    /* Each long gap (x index, score before like_work_odds), for the doubt. */
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
        score += like_work_odds(m, x[i], x[i + 1], step); /* <= 0: only for one that may win */
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
        if (gap[k].score + like_work_odds(m, x[i], x[i + 1], step) >= best - DOUBT_ODDS) {
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
 * fixed hint for the nearer line places a step wrong as often as right).
 * Past TYPICAL_SPAN times tau a latency is a stall, as likely as any
 * other: the tail of an exponential would make a completion seen 1.1 ms
 * late 30 times likelier than 3.1 ms late, where completions on lavapipe
 * beside a busy loop come 1-4 ms late about equally often (0.4-0.5 % per
 * ms; 97 % within 0.5 ms). */
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
 * submit: how far it is from either line says nothing of the step (a
 * submission queued behind one that a stalled host stretched to 2.2 ms
 * begins 2.2 ms after its submit; weighed as a latency, that would send
 * the step into the work ahead). */
static bool queued_behind(const gz_clock_model *m, double t)
{
    for (uint32_t i = 0; i < m->nrecent; i++) {
        double e = gz_model_rel(m, m->recent[i].gpu_ns);
        if (!m->recent[i].lower && e <= t && e > t - GAP_SLACK)
            return true;
    }
    for (uint32_t i = 0; i < m->nzones; i++) {
        double e = gz_model_rel(m, m->zones[i].end_ns);
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
        if (gz_model_rel(m, m->recent[i].gpu_ns) <= t)
            return true;
    return false;
}

/* How far a side's bounds typically are from the clock around the step:
 * the median slack of the recent ones since the step before, each from the
 * line on its side of the step, those within TYPICAL_GUARD of it left out
 * (their side is the question). The slacks noted as bounds came are
 * measured from the line before the step until it is found: after a
 * forward step of 2 ms every submit seems 2 ms from the clock, every begin
 * would weigh nothing, and a completion seen late could put the step after
 * work that began 67 us after its submit. Too few such bounds: the slacks
 * noted. */
#define TYPICAL_GUARD 1e7 /* 10 ms */
#define TYPICAL_MIN 8
static double typical_slack(const gz_clock_model *m, int side, double since)
{
    double v[GZ_MODEL_RECENT];
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nrecent; i++) {
        const gz_model_suspect *x = &m->recent[i];
        double t = gz_model_rel(m, x->gpu_ns);
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
void gz_model_place_step(gz_clock_model *m, bool at_jump)
{
    double since = m->nolder ? m->older[0].t : -INFINITY;
    m->placed_upto = m->newest_t;
    m->replace_step = false;
    m->placed_size = gz_model_step_size(m);
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
        double t = gz_model_rel(m, x->gpu_ns);
        if (t <= since)
            continue;
        double before = m->before_step_a + m->before_step_b * t, after = m->a + m->b * t;
        double step = fabs(after - before), cut = fmin(GZ_MODEL_JUMP_NS, step) / 2;
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
         * bracket (a sync point that a stalled host bracketed 2 ms wide,
         * 20 us inside one side by a line, would outweigh a completion
         * that proves that line wrong); a begin of work that waited for
         * the work ahead (queued_behind). */
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
     * came, and one placed 0.78 ms short is the second half of a 2 ms
     * step). One step: the line now holds from the step before, placed
     * anew with the lines on either side of it. Only when the step is
     * found, and the ring holds every time since the step before: placed
     * again later, or found late, the support may have left the ring (a
     * step found 60 ms late in a busy queue, the ring all after it, would
     * be made one with a step 1.1 s before it, and the zones of that
     * second still waiting would be 2 ms off). One bound is no support: the
     * line after a step that bounds show rests on the one that came
     * closest (a completion 1.4 ms late would hold a 0.6 ms line until the
     * rest of a 2 ms step shows, the zones there 1.4 ms off). */
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
        gz_model_place_step(m, true);
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
     * open on one side may hold gaps of ms that a starved driver left in
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
            double t = gz_model_rel(m, m->recent[i].gpu_ns);
            if (m->recent[i].lower && t > before_t && t < after_t && t > begin)
                begin = t;
        }
        /* And where the time before it is the begin of the work ahead,
         * right before the work's begin, after the newest time known
         * before it (the work ahead's end): the middle would cut that work
         * in two, and a step after it ended would send its end a step
         * wrong. */
        double last = before_t;
        for (uint32_t i = 0; begin > -INFINITY && i < m->nrecent; i++) {
            double t = gz_model_rel(m, m->recent[i].gpu_ns);
            if (t > last && t < begin)
                last = t;
        }
        for (uint32_t i = 0; begin > -INFINITY && i < m->nzones; i++)
            for (int k = 0; k < 2; k++) {
                double t = gz_model_rel(m, k ? m->zones[i].end_ns : m->zones[i].begin_ns);
                if (t > last && t < begin)
                    last = t;
            }
        m->step_t = (last + (begin > -INFINITY ? begin : after_t)) / 2;
    }
    snap_to_gap(m, since, ev, n);
}

/* Whether the step should be placed again because its size has changed
 * since: which bounds prove a side and which gaps are long enough depend
 * on it (a step first seen as 3.1 ms and placed after a 2.4 ms gap, which
 * a bound seemed to rule out, belongs elsewhere once it is 2 ms). Checked
 * right after the refit that changed it, before zones are converted; only
 * while the ring still holds the times around the step. */
bool gz_model_step_resized(const gz_clock_model *m)
{
    return m->has_before_step && fabs(gz_model_step_size(m) - m->placed_size) > GZ_MODEL_JUMP_NS &&
           m->newest_t - m->step_t < GZ_MODEL_REPLACE_SPAN &&
           ring_holds_since(m, m->step_t - GZ_MODEL_REPLACE_SPAN / 10);
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
    double t = gz_model_rel(m, gpu_ns), off = 0;
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
    return (uint64_t)gz_model_round(off);
}
