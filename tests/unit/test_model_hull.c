/* The clock model's hull (calibration/model_hull.c) gives the band the
 * very same edges as the whole window, to the last bit. Built with
 * GZ_MODEL_CHECK_HULL: every edge the fit asks for is computed both ways
 * and the model aborts where they differ. The streams are the model's
 * usual inputs (calibrated pairs, sync points, submission bounds, steps)
 * and the ones that make hulls hard: bounds on one line, bounds at one
 * time, times out of order, clocks far from the host's. Also: on a
 * calibrated clock the hull is a handful of buckets (what makes a refit
 * cheap). */
#include "gz_calibration.h"
#include "gz_check.h"

#include <math.h>
#include <stdlib.h>

#define MS 1000000ull

/* A small deterministic generator (xorshift64*): the same streams every run. */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}
static uint64_t rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

/* A GPU clock: gpu = gpu0 + (host - host0) (1 + drift) + step after step_at. */
typedef struct clock_sim {
    uint64_t host0, gpu0;
    double drift;
    uint64_t step_at, step_ns; /* host time, 0: none */
} clock_sim;

static uint64_t gpu_at(const clock_sim *c, uint64_t host)
{
    double d = (double)(host - c->host0) * (1 + c->drift);
    uint64_t g = c->gpu0 + (uint64_t)llround(d);
    if (c->step_at && host >= c->step_at)
        g += c->step_ns;
    return g;
}

/* seconds of a queue: a submission every period_us (bounds: begin 5-50 us
 * after its submit, end seen 10-500 us after it ran 100 us), a pair every
 * 100 ms (calibrated: within dev_ns; sync points: a bracket 2-40 us wide),
 * zones, and a fit every 20 ms as the worker makes. */
static void run_queue(gz_clock_model *m, const clock_sim *c, double seconds, uint64_t period_us,
                      gz_calib_method pairs, uint64_t dev_ns)
{
    uint64_t end = c->host0 + (uint64_t)(seconds * 1e9);
    uint64_t next_pair = c->host0, next_fit = c->host0 + 20 * MS;
    for (uint64_t host = c->host0; host < end; host += period_us * 1000) {
        if (host >= next_pair) {
            gz_calib_pair p;
            if (pairs == GZ_CALIB_CALIBRATED) {
                uint64_t off = dev_ns ? rnd_below(dev_ns) : 0;
                p = (gz_calib_pair){gpu_at(c, host), host + off, dev_ns};
            } else {
                uint64_t w = 2000 + rnd_below(38000);
                p = (gz_calib_pair){gpu_at(c, host + rnd_below(w)), host + w / 2, w / 2};
            }
            gz_model_add_pair(m, pairs, &p);
            next_pair += 100 * MS;
        }
        uint64_t begin = host + 5000 + rnd_below(45000);
        uint64_t gb = gpu_at(c, begin), ge = gpu_at(c, begin + 100000);
        gz_model_add_bounds(m, gb, host, ge, begin + 100000 + 10000 + rnd_below(490000));
        gz_model_add_zone(m, gb, ge, 1);
        if (host >= next_fit) {
            gz_model_fit(m);
            (void)gz_model_to_host(m, gb);
            next_fit += 20 * MS;
        }
    }
    m->dirty = true; /* a last refit: the hull of the whole stream */
    gz_model_fit(m);
}

static gz_clock_model *new_model(void)
{
    gz_clock_model *m = malloc(sizeof *m);
    if (m)
        gz_model_init(m);
    return m;
}

static int test_calibrated_no_drift(void)
{
    /* lavapipe: the GPU clock is the host's, every pair exact. */
    gz_clock_model *m = new_model();
    CHECK(m != NULL);
    clock_sim c = {.host0 = 5000 * MS, .gpu0 = 5000 * MS};
    run_queue(m, &c, 30, 1000, GZ_CALIB_CALIBRATED, 1);
    CHECK_U64(m->count, GZ_MODEL_BUCKETS);
    CHECK(m->hull.valid && m->hull.gen == m->gen);
    /* Of 1024 buckets, each side keeps the first and last pair and a few
     * bounds at the window's ends. */
    CHECK(m->hull.nlo <= 6 && m->hull.nhi <= 6);
    free(m);
    return 0;
}

static int test_calibrated_drift(void)
{
    gz_clock_model *m = new_model();
    CHECK(m != NULL);
    clock_sim c = {.host0 = 5000 * MS, .gpu0 = 1800000000000000000ull, .drift = 30e-6};
    run_queue(m, &c, 25, 700, GZ_CALIB_CALIBRATED, 2000);
    CHECK(m->hull.valid);
    CHECK(m->hull.nlo + m->hull.nhi < 64);
    free(m);
    return 0;
}

static int test_sync_points(void)
{
    gz_clock_model *m = new_model();
    CHECK(m != NULL);
    clock_sim c = {.host0 = 7000 * MS, .gpu0 = 3 * MS, .drift = -1000e-6};
    run_queue(m, &c, 25, 3000, GZ_CALIB_SYNC_POINT, 0);
    CHECK(m->hull.valid);
    free(m);
    return 0;
}

static int test_steps(void)
{
    for (int calibrated = 0; calibrated < 2; calibrated++) {
        gz_clock_model *m = new_model();
        CHECK(m != NULL);
        clock_sim c = {.host0 = 9000 * MS, .gpu0 = 100 * MS, .drift = 200e-6,
                       .step_at = 15000 * MS, .step_ns = 2 * MS};
        run_queue(m, &c, 12, 2000, calibrated ? GZ_CALIB_CALIBRATED : GZ_CALIB_SYNC_POINT, 1000);
        CHECK(m->jumps >= 1);
        free(m);
    }
    return 0;
}

/* Bounds that tie: offsets on a few exact lines (so that many bounds are
 * collinear, or nearly, and which is the edge is a matter of rounding),
 * several at one GPU time, times out of order, times far from the first
 * constraint's. */
static int test_ties(void)
{
    for (int round = 0; round < 40; round++) {
        gz_clock_model *m = new_model();
        CHECK(m != NULL);
        uint64_t gpu0 = round % 2 ? 1800000000000000000ull : 1000 * MS;
        uint64_t host0 = 4000 * MS;
        int64_t tilt = (int64_t)rnd_below(5) - 2; /* ns of offset per ms */
        uint64_t n = 2000 + rnd_below(3000);
        if (round % 4 >= 2) {
            /* A first constraint an hour before: times of 3.6e12 ns, where
             * rounding is coarsest. */
            gz_calib_pair first = {gpu0 - 3600000 * MS, host0 - 3600000 * MS, 1000};
            gz_model_add_pair(m, GZ_CALIB_SYNC_POINT, &first);
            gz_model_fit(m);
        }
        for (uint64_t i = 0; i < n; i++) {
            uint64_t ms = i * (1 + rnd_below(4));
            if (rnd_below(10) == 0 && ms > 50)
                ms -= rnd_below(50); /* out of order */
            uint64_t g = gpu0 + ms * MS + (rnd_below(3) ? 0 : rnd_below(7));
            int64_t off = tilt * (int64_t)ms + (int64_t)(rnd_below(4) ? 0 : rnd_below(3));
            uint64_t h = host0 + ms * MS + (uint64_t)off;
            switch (rnd_below(4)) {
            case 0: {
                gz_calib_pair p = {g, h, 1 + rnd_below(2)};
                gz_model_add_pair(m, round % 3 ? GZ_CALIB_CALIBRATED : GZ_CALIB_SYNC_POINT, &p);
                break;
            }
            case 1:
                gz_model_add_bounds(m, g, h - rnd_below(3), 0, 0);
                break;
            case 2:
                gz_model_add_bounds(m, 0, 0, g, h + rnd_below(3));
                break;
            default:
                gz_model_add_bounds(m, g, h, g, h); /* both sides at one time */
                break;
            }
            if (rnd_below(8) == 0)
                gz_model_fit(m);
        }
        gz_model_fit(m);
        free(m);
    }
    return 0;
}

/* Three lower bounds a, b, c, 5 and 10 s apart, b below the segment from
 * a to c by 5e-8 ns (integer times and offsets: 500 / 1e10), an hour after
 * the first constraint and a second of offset away from it: computed at
 * the slopes near a to c, each value is off by far more than that, and
 * which of the three is the edge is rounding's choice. A hull that left b
 * out for being below the segment (with no margin for rounding) would give
 * another edge there. The same for upper bounds. */
static int test_rounding_ties(void)
{
    for (int k = 0; k < 32; k++) {
        gz_clock_model *m = new_model();
        CHECK(m != NULL);
        uint64_t gpu0 = 777 * MS, host0 = 5000 * MS;
        gz_model_add_bounds(m, gpu0, host0 - 50 * MS, gpu0, host0 + 50 * MS);
        uint64_t t0 = 3600000 * MS + (uint64_t)k * 7000 * MS;
        int64_t v0 = 1000000000 + 12345 * k;
        uint64_t ts[3] = {t0, t0 + 5000000500ull, t0 + 10000000000ull};
        int64_t vs[3] = {v0, v0 + 5000001, v0 + 10000001};
        bool upper = k % 2;
        for (int i = 0; i < 3; i++) {
            uint64_t gpu = gpu0 + ts[i];
            /* Upper bounds: offsets negated, so that b is above the segment. */
            if (upper)
                gz_model_add_bounds(m, 0, 0, gpu, host0 + ts[i] - (uint64_t)vs[i]);
            else
                gz_model_add_bounds(m, gpu, host0 + ts[i] + (uint64_t)vs[i], 0, 0);
        }
        /* The other side, 3 ms away, so that the fit asks for the band. */
        for (int i = 0; i < 3; i++) {
            uint64_t gpu = gpu0 + ts[i] + 5 * MS, host = host0 + ts[i] + 5 * MS;
            if (upper)
                gz_model_add_bounds(m, gpu, host - (uint64_t)vs[i] - 3 * MS, 0, 0);
            else
                gz_model_add_bounds(m, 0, 0, gpu, host + (uint64_t)vs[i] + 3 * MS);
        }
        gz_model_fit(m);
        CHECK(upper ? m->hull.nhi == 3 : m->hull.nlo == 3); /* b kept */
        free(m);
    }
    return 0;
}

int main(void)
{
    int failed = 0;
    failed += run("hull: calibrated clock without drift, a handful of buckets",
                  test_calibrated_no_drift);
    failed += run("hull: calibrated clock with drift, far from the host's", test_calibrated_drift);
    failed += run("hull: sync points and bounds, 1000 ppm", test_sync_points);
    failed += run("hull: steps in the GPU counter", test_steps);
    failed += run("hull: bounds that tie, at one time, out of order", test_ties);
    failed += run("hull: bounds that rounding alone tells apart", test_rounding_ties);
    printf("%d group(s) failed\n", failed);
    return failed ? 1 : 0;
}
