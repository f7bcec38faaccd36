/* Which of the window's bounds can be an edge of the band (model.c's
 * envelope): the lower edge at slope s is the largest lo - s t of the
 * window's lower bounds, the upper one the smallest hi - s t of its upper
 * bounds. A refit asks for them at ~200 slopes, over up to 1024 buckets;
 * only the bounds on the convex hull of each side can give them, and on a
 * calibrated clock those are a handful.
 *
 * The edges must come out the very same as from every bucket, to the last
 * bit: a bound is left out only where, as computed in doubles, it can
 * never be the largest (or tie it) at any slope up to GZ_MODEL_HULL_SLOPE.
 * Two ways prove that, for a lower bound b between a and c in time:
 *  - exactly: where a.v >= b.v and c.v >= b.v, a beats b at every slope
 *    >= 0 and c at every slope <= 0, since rounding is monotone (fl(s t)
 *    grows with t for s >= 0, fl(v - x) grows with v and falls with x).
 *    Calibrated pairs of a clock with no drift (lavapipe's) all lie on
 *    one level line, and only the ends of the window are kept;
 *  - with a margin: where b lies below the segment from a to c by d, at
 *    every slope max(a.v - s a.t, c.v - s c.t) >= b.v - s b.t + d (b's
 *    time is a mix of theirs, and so is its line), and each of the three
 *    is computed within u (|v| + 2 |s| |t|) of its exact value
 *    (u = 2^-53): a d above twice that leaves b below, however it rounds.
 *    The depth asked for (tol) is four times that.
 * A bound left out is below its neighbours of the time, which are kept or
 * below kept ones in turn: below the kept ones. So the hull can be made of
 * hulls of parts: each block of GZ_MODEL_HULL_BLOCK buckets, and each
 * group of GZ_MODEL_HULL_GROUP blocks, keeps its own until one of its
 * buckets changes, and the window's is made from those of the groups and
 * blocks it holds whole and the buckets at its ends (the tolerance of each
 * hull is that of the bounds it compares). Upper bounds are the same with
 * their values negated. */
#include <math.h>
#include <stdlib.h>

#include "gz_calibration.h"
#include "gz_model_internal.h"

typedef struct point {
    double t, v;
    uint32_t slot;
} point;

static int by_time(const void *x, const void *y)
{
    double a = ((const point *)x)->t, b = ((const point *)y)->t;
    return a < b ? -1 : a > b;
}

/* Whether b (a.t < b.t < c.t) is below a or c at every slope. */
static bool below(const point *a, const point *b, const point *c, double tol)
{
    if (a->v >= b->v && c->v >= b->v)
        return true;
    double ba = b->t - a->t, ca = c->t - a->t;
    /* b's depth below the segment, times ca; err bounds its rounding (some
     * 6 u of the terms) with room to spare. */
    double cross = (c->v - a->v) * ba - (b->v - a->v) * ca;
    double err = 1e-13 * (fabs(c->v - a->v) * ba + fabs(b->v - a->v) * ca);
    return cross > tol * ca + err;
}

/* Keeps those of p[0, n) that can be the largest v - s t, in time order,
 * at the start of p; returns how many, or -1 where a value is not finite
 * (it has no error bound). */
static int32_t upper_hull(point *p, uint32_t n)
{
    bool sorted = true;
    double vmax = 0, tmax = 0;
    for (uint32_t i = 0; i < n; i++) {
        double av = fabs(p[i].v), at = fabs(p[i].t);
        if (!(av < INFINITY && at < INFINITY))
            return -1;
        vmax = av > vmax ? av : vmax;
        tmax = at > tmax ? at : tmax;
        sorted &= !i || p[i - 1].t <= p[i].t;
    }
    if (!sorted)
        qsort(p, n, sizeof *p, by_time);
    double tol = 8 * 0x1p-53 * (vmax + 2.01 * GZ_MODEL_HULL_SLOPE * tmax) + 0x1p-1000;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (k && p[k - 1].t == p[i].t) {
            /* Same time: the larger value is the larger at every slope. */
            if (p[i].v <= p[k - 1].v)
                continue;
            k--;
        }
        while (k >= 2 && below(&p[k - 2], &p[k - 1], &p[i], tol))
            k--;
        p[k++] = p[i]; /* k <= i: nothing unread is overwritten */
    }
    return (int32_t)k;
}

/* Appends the bound of one side in bucket slot, if it has one (upper
 * bounds negated: their edge is the smallest hi - s t). */
static uint32_t add(const gz_clock_model *m, bool lower, uint32_t slot, point *p, uint32_t n)
{
    const gz_model_bucket *b = &m->buckets[slot];
    if (lower ? b->has_lo : b->has_hi)
        p[n++] = (point){lower ? b->lo_t : b->hi_t, lower ? b->lo : -b->hi, slot};
    return n;
}

/* Keeps the kept of p[0, n) in out (their slots), or all of them where a
 * value is not finite (the window's hull finds it); returns how many. */
static uint32_t keep(point *p, uint32_t n, uint16_t *out)
{
    int32_t kept = upper_hull(p, n);
    uint32_t k = kept < 0 ? n : (uint32_t)kept;
    for (uint32_t i = 0; i < k; i++)
        out[i] = (uint16_t)p[i].slot;
    return k;
}

/* A block's own hull of both sides, made again where its buckets changed. */
static const gz_model_hull_block *block_hull(gz_clock_model *m, uint32_t k)
{
    gz_model_hull_block *bh = &m->hull.blocks[k];
    if (bh->made && bh->gen == m->hull.block_gen[k])
        return bh;
    point p[GZ_MODEL_HULL_BLOCK];
    uint32_t n = 0;
    for (uint32_t i = 0; i < GZ_MODEL_HULL_BLOCK; i++)
        n = add(m, true, k * GZ_MODEL_HULL_BLOCK + i, p, n);
    bh->nlo = (uint8_t)keep(p, n, bh->lo);
    n = 0;
    for (uint32_t i = 0; i < GZ_MODEL_HULL_BLOCK; i++)
        n = add(m, false, k * GZ_MODEL_HULL_BLOCK + i, p, n);
    bh->nhi = (uint8_t)keep(p, n, bh->hi);
    bh->made = true;
    bh->gen = m->hull.block_gen[k];
    return bh;
}

/* Appends the bounds of one side that block k keeps. */
static uint32_t add_block(gz_clock_model *m, bool lower, uint32_t k, point *p, uint32_t n)
{
    const gz_model_hull_block *bh = block_hull(m, k);
    const uint16_t *kept = lower ? bh->lo : bh->hi;
    for (uint32_t j = 0, nk = lower ? bh->nlo : bh->nhi; j < nk; j++)
        n = add(m, lower, kept[j], p, n);
    return n;
}

/* A group's hull of both sides, from its blocks' hulls. */
static const gz_model_hull_group *group_hull(gz_clock_model *m, uint32_t g)
{
    gz_model_hull_group *gh = &m->hull.groups[g];
    if (gh->made && gh->gen == m->hull.group_gen[g])
        return gh;
    point p[GZ_MODEL_HULL_BLOCK * GZ_MODEL_HULL_GROUP];
    uint32_t n = 0;
    for (uint32_t k = 0; k < GZ_MODEL_HULL_GROUP; k++)
        n = add_block(m, true, g * GZ_MODEL_HULL_GROUP + k, p, n);
    gh->nlo = (uint16_t)keep(p, n, gh->lo);
    n = 0;
    for (uint32_t k = 0; k < GZ_MODEL_HULL_GROUP; k++)
        n = add_block(m, false, g * GZ_MODEL_HULL_GROUP + k, p, n);
    gh->nhi = (uint16_t)keep(p, n, gh->hi);
    gh->made = true;
    gh->gen = m->hull.group_gen[g];
    return gh;
}

/* One side's hull of the window, its bounds copied to out (upper ones as
 * they are); -1 where a value is not finite. Whole groups and blocks give
 * their hulls, the ends of the window their buckets. */
static int32_t side_hull(gz_clock_model *m, bool lower, gz_model_hull_point *out)
{
    const uint32_t group = GZ_MODEL_HULL_BLOCK * GZ_MODEL_HULL_GROUP;
    point p[GZ_MODEL_BUCKETS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->count;) {
        uint32_t slot = (m->head + i) % GZ_MODEL_BUCKETS, left = m->count - i;
        if (slot % group == 0 && left >= group) {
            const gz_model_hull_group *gh = group_hull(m, slot / group);
            const uint16_t *kept = lower ? gh->lo : gh->hi;
            for (uint32_t j = 0, nk = lower ? gh->nlo : gh->nhi; j < nk; j++)
                n = add(m, lower, kept[j], p, n);
            i += group;
        } else if (slot % GZ_MODEL_HULL_BLOCK == 0 && left >= GZ_MODEL_HULL_BLOCK) {
            n = add_block(m, lower, slot / GZ_MODEL_HULL_BLOCK, p, n);
            i += GZ_MODEL_HULL_BLOCK;
        } else {
            n = add(m, lower, slot, p, n);
            i++;
        }
    }
    int32_t k = upper_hull(p, n);
    for (int32_t i = 0; i < k; i++)
        out[i] = (gz_model_hull_point){p[i].t, lower ? p[i].v : -p[i].v};
    return k;
}

void gz_model_hull_make(gz_clock_model *m)
{
    gz_model_hull *h = &m->hull;
    int32_t nlo = side_hull(m, true, h->lo), nhi = side_hull(m, false, h->hi);
    h->gen = m->gen;
    h->head = m->head;
    h->count = m->count;
    h->valid = nlo >= 0 && nhi >= 0;
    h->nlo = nlo > 0 ? (uint32_t)nlo : 0;
    h->nhi = nhi > 0 ? (uint32_t)nhi : 0;
}
