/* Unit tests for calibration/: tick masks and conversion, best-of sampling,
 * the offset model. Plain C; exit status 0 when every group passes. */
#include "gz_calibration.h"
#include "gz_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* got is within tol ns of floor(ticks * period) computed in long double. */
#define CHECK_TICKS_NEAR(ticks, period_ns, tol)                                                    \
    do {                                                                                           \
        uint64_t t_ = (ticks);                                                                     \
        double p_ = (period_ns);                                                                   \
        long double want_ = floorl((long double)t_ * (long double)p_);                             \
        uint64_t got_ = gz_ticks_to_ns(t_, gz_tick_period_from_ns(p_));                            \
        long double diff_ = fabsl((long double)got_ - want_);                                      \
        if (!(diff_ <= (tol))) {                                                                   \
            fprintf(stderr, "%s:%d: %llu ticks at %.17g ns: got %llu, want %.3Lf (off %.3Lf)\n",   \
                    __FILE__, __LINE__, (unsigned long long)t_, p_, (unsigned long long)got_,      \
                    want_, diff_);                                                                 \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static int test_mask(void)
{
    CHECK_U64(gz_ticks_mask(0), 0);
    CHECK_U64(gz_ticks_mask(1), 1);
    CHECK_U64(gz_ticks_mask(36), 0xfffffffffull);
    CHECK_U64(gz_ticks_mask(63), 0x7fffffffffffffffull);
    CHECK_U64(gz_ticks_mask(64), 0xffffffffffffffffull);
    CHECK_U64(gz_ticks_mask(65), 0xffffffffffffffffull);
    CHECK_U64(gz_ticks_mask(UINT32_MAX), 0xffffffffffffffffull);
    return 0;
}

static int test_period_one(void)
{
    gz_tick_period p = gz_tick_period_from_ns(1.0);
    CHECK_U64(gz_ticks_to_ns(0, p), 0);
    CHECK_U64(gz_ticks_to_ns(1, p), 1);
    CHECK_U64(gz_ticks_to_ns(1ull << 63, p), 1ull << 63);
    CHECK_U64(gz_ticks_to_ns(UINT64_MAX, p), UINT64_MAX);
    CHECK_U64(gz_ticks_to_ns(UINT64_MAX - 1, p), UINT64_MAX - 1);

    /* Integer periods (GL, CL, some Vulkan drivers) are exact too. */
    p = gz_tick_period_from_ns(10.0);
    CHECK_U64(gz_ticks_to_ns(123456789, p), 1234567890);
    /* A binary fraction is exact and rounds down. */
    p = gz_tick_period_from_ns(0.5);
    CHECK_U64(gz_ticks_to_ns(3, p), 1);
    CHECK_U64(gz_ticks_to_ns(4, p), 2);
    CHECK_U64(gz_ticks_to_ns(UINT64_MAX, p), UINT64_MAX / 2);
    return 0;
}

static int test_period_fraction(void)
{
    /* 52.083333 is not a float, so 32 fractional bits would be 5 ns off at
     * 2^36 ticks and 82 ns off at 2^40. */
    CHECK_TICKS_NEAR(1ull << 36, 52.083333, 1.0L);
    CHECK_TICKS_NEAR(1ull << 40, 52.083333, 1.0L);
    CHECK_TICKS_NEAR((1ull << 40) - 1, 52.083333, 1.0L);
    CHECK_TICKS_NEAR(123456789012345ull, 52.083333, 1.0L);
    /* A 19.2 MHz counter, period from its frequency. */
    CHECK_TICKS_NEAR(1ull << 44, 1e9 / 19.2e6, 1.0L);
    /* What Vulkan really hands over: a float. */
    CHECK_TICKS_NEAR((1ull << 40) + 12345, (double)52.083333f, 1.0L);
    CHECK_TICKS_NEAR((1ull << 40) + 12345, (double)83.333333f, 1.0L);
    CHECK_TICKS_NEAR(1ull << 50, 83.333333, 1.0L);
    /* A sub-ns period, and one below 2^-11 ns that has to be rounded. */
    CHECK_TICKS_NEAR(1000000007ull, 0.1, 1.0L);
    CHECK_TICKS_NEAR(1000000000ull, 1e-6, 1.0L);

    /* Consecutive readings an hour apart differ by the exact product:
     * no drift from conversion, whatever the base. */
    gz_tick_period p = gz_tick_period_from_ns(52.083333);
    uint64_t hour = 69120000000ull; /* ~1 h of 52 ns ticks */
    uint64_t d1 = gz_ticks_to_ns(5 * hour, p) - gz_ticks_to_ns(4 * hour, p);
    uint64_t d2 = gz_ticks_to_ns(hour, p) - gz_ticks_to_ns(0, p);
    CHECK(d1 >= d2 - 1 && d1 <= d2 + 1);
    return 0;
}

static int test_period_bad(void)
{
    /* Negative, zero, NaN and infinite periods fall back to 1 ns. */
    const double bad[] = {-1.0, -0.0, 0.0, NAN, INFINITY, -INFINITY};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        gz_tick_period p = gz_tick_period_from_ns(bad[i]);
        CHECK_U64(gz_ticks_to_ns(123456789, p), 123456789);
        CHECK_U64(gz_ticks_to_ns(UINT64_MAX, p), UINT64_MAX);
    }
    return 0;
}

static int test_saturation(void)
{
    gz_tick_period p = gz_tick_period_from_ns(2.0);
    CHECK_U64(gz_ticks_to_ns((1ull << 63) - 1, p), UINT64_MAX - 1);
    CHECK_U64(gz_ticks_to_ns(1ull << 63, p), UINT64_MAX);
    CHECK_U64(gz_ticks_to_ns(UINT64_MAX, p), UINT64_MAX);

    p = gz_tick_period_from_ns(52.083333);
    CHECK_U64(gz_ticks_to_ns(UINT64_MAX, p), UINT64_MAX);
    CHECK_U64(gz_ticks_to_ns(1ull << 59, p), UINT64_MAX);
    CHECK(gz_ticks_to_ns(1ull << 58, p) < UINT64_MAX);

    /* A period of 2^32 ns or more saturates the period itself. */
    p = gz_tick_period_from_ns(1e12);
    CHECK_U64(gz_ticks_to_ns(0, p), 0);
    CHECK(gz_ticks_to_ns(1, p) >= 4294967295ull);
    CHECK_U64(gz_ticks_to_ns(1ull << 33, p), UINT64_MAX);
    CHECK_U64(gz_ticks_to_ns(UINT64_MAX, p), UINT64_MAX);
    return 0;
}

/* A scripted reader: each call takes the next step; past the end it fails. */
typedef struct fake_step {
    bool ok;
    uint64_t deviation_ns;
} fake_step;

typedef struct fake_reader {
    const fake_step *steps;
    unsigned n;
    unsigned calls;
} fake_reader;

static bool fake_read(void *user, gz_calib_pair *out)
{
    fake_reader *f = user;
    unsigned i = f->calls++;
    if (i >= f->n || !f->steps[i].ok)
        return false;
    /* gpu_ns says which call produced the pair. */
    out->gpu_ns = 1000 + i;
    out->host_ns = 5000 + i;
    out->deviation_ns = f->steps[i].deviation_ns;
    return true;
}

static int test_sample_best(void)
{
    const gz_calib_pair sentinel = {11, 22, 33};
    gz_calib_pair best;

    /* Failures mixed in; the smallest deviation wins, the newer on a tie. */
    const fake_step mixed[] = {{false, 0}, {true, 50}, {false, 0}, {true, 20},
                               {true, 30}, {true, 20}, {false, 0}};
    fake_reader f = {mixed, 7, 0};
    CHECK(gz_calib_sample_best(fake_read, &f, 7, 0, &best));
    CHECK_U64(f.calls, 7);
    CHECK_U64(best.deviation_ns, 20);
    CHECK_U64(best.gpu_ns, 1005);
    CHECK_U64(best.host_ns, 5005);

    /* max_tries bounds the calls even when the script is longer. */
    f = (fake_reader){mixed, 7, 0};
    CHECK(gz_calib_sample_best(fake_read, &f, 3, 0, &best));
    CHECK_U64(f.calls, 3);
    CHECK_U64(best.deviation_ns, 50);
    CHECK_U64(best.gpu_ns, 1001);

    /* A reader that always fails: false after exactly max_tries calls, and
     * the output is left alone. */
    f = (fake_reader){NULL, 0, 0};
    best = sentinel;
    CHECK(!gz_calib_sample_best(fake_read, &f, 5, 1000, &best));
    CHECK_U64(f.calls, 5);
    CHECK_U64(best.gpu_ns, 11);
    CHECK_U64(best.deviation_ns, 33);

    /* max_tries 0: false without a call. */
    f = (fake_reader){mixed, 7, 0};
    CHECK(!gz_calib_sample_best(fake_read, &f, 0, 1000, &best));
    CHECK_U64(f.calls, 0);

    /* Early exit once a pair is good enough (at most good_enough_ns). */
    const fake_step improving[] = {{true, 100}, {false, 0}, {true, 5}, {true, 1}, {true, 0}};
    f = (fake_reader){improving, 5, 0};
    CHECK(gz_calib_sample_best(fake_read, &f, 10, 5, &best));
    CHECK_U64(f.calls, 3);
    CHECK_U64(best.deviation_ns, 5);
    CHECK_U64(best.gpu_ns, 1002);

    /* Good enough at once: one call. */
    f = (fake_reader){improving, 5, 0};
    CHECK(gz_calib_sample_best(fake_read, &f, 10, 100, &best));
    CHECK_U64(f.calls, 1);
    CHECK_U64(best.gpu_ns, 1000);

    /* Never good enough: all tries used, the best one kept. */
    f = (fake_reader){improving, 5, 0};
    CHECK(gz_calib_sample_best(fake_read, &f, 4, 0, &best));
    CHECK_U64(f.calls, 4);
    CHECK_U64(best.deviation_ns, 1);
    return 0;
}

static int test_method_names(void)
{
    CHECK_STR(gz_calib_method_name(GZ_CALIB_NONE), "none");
    CHECK_STR(gz_calib_method_name(GZ_CALIB_CALIBRATED), "calibrated");
    CHECK_STR(gz_calib_method_name(GZ_CALIB_SYNC_POINT), "sync point");
    CHECK_STR(gz_calib_method_name(GZ_CALIB_BOUNDS), "bounds");
    CHECK(gz_calib_method_name((gz_calib_method)42) != NULL);
    return 0;
}

static gz_calib_pair pair(uint64_t gpu, uint64_t host, uint64_t dev)
{
    gz_calib_pair p = {gpu, host, dev};
    return p;
}

/* Deterministic pseudo-random numbers (xorshift64*): the tests must be
 * repeatable. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}
static double rnd01(void)
{
    return (double)(rnd() >> 11) / 9007199254740992.0;
}

#define SEC 1000000000ull
#define MS 1000000ull

/* A simulated clock: true host time → GPU ns, with an offset and a drift. */
typedef struct sim_clock {
    uint64_t host0;
    double offset; /* host - gpu at host0 */
    double ppm;
} sim_clock;

static uint64_t sim_gpu(const sim_clock *c, uint64_t host)
{
    double dt = (double)(host - c->host0);
    return (uint64_t)((double)c->host0 - c->offset + dt * (1.0 + c->ppm * 1e-6));
}

static int64_t err_ns(const gz_clock_model *m, const sim_clock *c, uint64_t host)
{
    return (int64_t)(gz_model_to_host(m, sim_gpu(c, host)) - host);
}

static int test_model_calibrated(void)
{
    gz_clock_model m;
    gz_model_init(&m);
    CHECK_U64(gz_model_to_host(&m, 1234), 1234); /* nothing known: identity */
    sim_clock c = {.host0 = 100 * SEC, .offset = 5000, .ppm = 0};
    for (uint64_t h = 100 * SEC; h < 103 * SEC; h += SEC / 4) {
        gz_calib_pair p = pair(sim_gpu(&c, h), h, 1);
        gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    }
    gz_model_fit(&m);
    CHECK_U64(m.method, GZ_CALIB_CALIBRATED);
    CHECK_U64(m.calib_deviation_ns, 1);
    CHECK(m.deviation_ns <= 1);
    CHECK_I64(m.offset_ns, 5000);
    CHECK(llabs(err_ns(&m, &c, 102 * SEC)) <= 1);
    CHECK_U64(gz_model_to_gpu(&m, gz_model_to_host(&m, 101 * SEC)), 101 * SEC);
    return 0;
}

static int test_model_drift(void)
{
    /* 100 ppm for 20 s: 2 ms apart at the end; pairs with 50 ns deviation
     * and their error spread inside it. */
    gz_clock_model m;
    gz_model_init(&m);
    sim_clock c = {.host0 = 50 * SEC, .offset = -7e6, .ppm = 100};
    for (uint64_t h = 50 * SEC; h <= 70 * SEC; h += SEC) {
        double noise = (rnd01() * 2 - 1) * 50;
        gz_calib_pair p = pair(sim_gpu(&c, h), (uint64_t)((double)h + noise), 50);
        gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
        gz_model_fit(&m);
    }
    CHECK(fabs(m.drift_ppm + 100.0 / 1.0001) < 0.1); /* host runs slower than GPU */
    CHECK(llabs(err_ns(&m, &c, 70 * SEC)) <= 100);
    CHECK(llabs(err_ns(&m, &c, 60 * SEC)) <= 100);
    CHECK_U64(m.jumps, 0);
    return 0;
}

/* gz-clock-load on lavapipe without calibration, as its inputs were
 * recorded, a phase every 700 ms: 200 ms idle (a frame every
 * 22 ms, begun 20-200 us after its submit and seen complete 50-300 us after
 * its end; a sync point every 100 ms with a bracket 0.6-1.3 ms wide, the
 * GPU's timestamp 10-30 us after its start), then 500 ms busy (work back
 * to back, submitted busy_ahead plus up to busy_spread ahead and seen
 * complete 20-200 us after its end). The counter may step ahead at one
 * moment, and the first completion after the step may be seen late. */
typedef struct load_sim {
    sim_clock c;
    uint64_t step_at, step;       /* real time and size of a forward step */
    uint64_t busy_ahead, busy_spread;
    uint64_t late;                /* the first completion after the step: seen this late */
    bool late_done;
    uint64_t begins[8000];        /* work's real begins, not straddling the step */
    uint32_t nbegins;
} load_sim;

static uint64_t load_gpu(const load_sim *s, uint64_t t)
{
    return sim_gpu(&s->c, t) + (t >= s->step_at ? s->step : 0);
}

static void load_work(gz_clock_model *m, load_sim *s, uint64_t submit, uint64_t b, uint64_t e,
                      uint64_t seen)
{
    if (s->late && e >= s->step_at && !s->late_done) {
        seen = e + s->late;
        s->late_done = true;
    }
    gz_model_add_bounds(m, load_gpu(s, b), submit, load_gpu(s, e), seen);
    gz_model_add_zone(m, load_gpu(s, b), load_gpu(s, e), 1);
    if ((e < s->step_at || b > s->step_at) && s->nbegins < sizeof s->begins / sizeof s->begins[0])
        s->begins[s->nbegins++] = b;
    gz_model_fit(m);
}

static void load_phase(gz_clock_model *m, load_sim *s, uint64_t start)
{
    const uint64_t us = 1000;
    for (uint64_t h = start; h < start + 200 * MS; h += 22 * MS) {
        if ((h - start) % (100 * MS) < 22 * MS) {
            uint64_t stamp = h + 10 * us + (uint64_t)(rnd01() * 20 * us);
            uint64_t half = 300 * us + (uint64_t)(rnd01() * 350 * us);
            gz_calib_pair p = pair(load_gpu(s, stamp), h + half, half);
            gz_model_add_pair(m, GZ_CALIB_SYNC_POINT, &p);
        }
        uint64_t submit = h + 2 * MS, b = submit + 20 * us + (uint64_t)(rnd01() * 180 * us);
        uint64_t e = b + 500 * us;
        load_work(m, s, submit, b, e, e + 50 * us + (uint64_t)(rnd01() * 250 * us));
    }
    for (uint64_t b = start + 200 * MS; b < start + 700 * MS; b += 450 * us) {
        uint64_t submit = b - s->busy_ahead - (uint64_t)(rnd01() * (double)s->busy_spread);
        uint64_t e = b + 440 * us;
        load_work(m, s, submit, b, e, e + 20 * us + (uint64_t)(rnd01() * 180 * us));
    }
}

static int test_model_drift_centred(void)
{
    /* With the load above (busy work submitted 0.5-1.5 ms
     * ahead) and the counter 1000 ppm slow, a slope that only stayed
     * inside the band sat at its edge: 46 ppm off after 1.5 s on lavapipe,
     * zones 50 us off. After three phases the slope is within 2 ppm (it
     * was 5.7 ppm off here). */
    gz_clock_model m;
    gz_model_init(&m);
    static load_sim s;
    s = (load_sim){.c = {.host0 = 20 * SEC, .offset = 4e5, .ppm = -1000},
                   .step_at = UINT64_MAX, .busy_ahead = 500000, .busy_spread = MS};
    double worst = 0;
    for (uint64_t phase = 0; phase < 8; phase++) {
        load_phase(&m, &s, 20 * SEC + phase * 700 * MS);
        if (phase >= 2)
            worst = fmax(worst, fabs(m.drift_ppm - 1000 / (1 - 1000e-6)));
    }
    if (worst > 2) {
        fprintf(stderr, "drift %.2f ppm off after three phases\n", worst);
        return 1;
    }
    return 0;
}

/* Submissions seen only through causality: GPU work starts 5-500 us after
 * its submit and is seen complete 2 us-20 ms after it ends; once a second a
 * sync point is seen within 1-5 us. */
static int test_model_bounds_only(void)
{
    gz_clock_model m;
    gz_model_init(&m);
    sim_clock c = {.host0 = 10 * SEC, .offset = 3e5, .ppm = -50};
    uint64_t next_sync = 10 * SEC;
    int64_t worst_late = 0;
    for (uint64_t h = 10 * SEC; h < 40 * SEC; h += 16 * 1000000ull) {
        uint64_t begin = h + 5000 + (uint64_t)(rnd01() * 495000);
        uint64_t end = begin + 1000000;
        uint64_t seen = end + 2000 + (uint64_t)(rnd01() * 2e7);
        gz_model_add_bounds(&m, sim_gpu(&c, begin), h, sim_gpu(&c, end), seen);
        if (h >= next_sync) {
            uint64_t stamp = h + 20000;
            uint64_t before = stamp - 1000 - (uint64_t)(rnd01() * 4000);
            uint64_t after = stamp + 1000 + (uint64_t)(rnd01() * 4000);
            gz_calib_pair p = pair(sim_gpu(&c, stamp), before + (after - before) / 2,
                                   (after - before) / 2);
            gz_model_add_pair(&m, GZ_CALIB_SYNC_POINT, &p);
            next_sync += SEC;
        }
        gz_model_fit(&m);
        if (h > 15 * SEC) {
            int64_t e = llabs(err_ns(&m, &c, end));
            if (e > worst_late)
                worst_late = e;
        }
    }
    CHECK_U64(m.method, GZ_CALIB_SYNC_POINT);
    if (worst_late > 50000) {
        fprintf(stderr, "bounds only: worst error %lld ns after 5 s\n", (long long)worst_late);
        return 1;
    }
    /* The GPU runs 50 ppm slow: host - gpu grows by 50 ns per ms. */
    if (fabs(m.drift_ppm - 50) > 5) {
        fprintf(stderr, "bounds only: drift %.2f ppm, want 50\n", m.drift_ppm);
        return 1;
    }
    return 0;
}

static int test_model_step(void)
{
    /* The GPU counter jumps 2 ms ahead at t = 5 s (a virtual timer
     * overflow): refitted from the first constraints after it. */
    gz_clock_model m;
    gz_model_init(&m);
    sim_clock c = {.host0 = 1 * SEC, .offset = 0, .ppm = 0};
    for (uint64_t h = 1 * SEC; h <= 8 * SEC; h += SEC / 4) {
        uint64_t g = sim_gpu(&c, h) + (h >= 5 * SEC ? 2000000 : 0);
        gz_calib_pair p = pair(g, h, 10);
        gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
        gz_model_fit(&m);
        if (h >= 5 * SEC + SEC / 4) { /* one sample after the step is enough */
            int64_t e = (int64_t)(gz_model_to_host(&m, g) - h);
            CHECK(llabs(e) <= 10);
        }
    }
    CHECK_U64(m.jumps, 1);
    /* Times from before the step still map with the line before it. */
    CHECK(llabs((int64_t)(gz_model_to_host(&m, sim_gpu(&c, 4 * SEC)) - 4 * SEC)) <= 10);
    return 0;
}

static int test_model_loose_outlier(void)
{
    /* A bound that is merely loose (a descheduled thread) changes nothing. */
    gz_clock_model m;
    gz_model_init(&m);
    for (uint64_t t = 0; t < 4; t++) {
        gz_calib_pair p = pair(1000 + t * SEC, 6000 + t * SEC, 100);
        gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    }
    gz_model_fit(&m);
    int64_t before = m.offset_ns;
    gz_model_add_bounds(&m, 2 * SEC, 2 * SEC - 50000000, 2 * SEC + 10, 2 * SEC + 90000000);
    gz_model_fit(&m);
    CHECK_I64(m.offset_ns, before);
    CHECK_I64(before, 5000);
    return 0;
}

static int test_model_wrong_wrap_bound(void)
{
    /* Calibrated pairs, then a submission's start bound unwrapped into the
     * wrong wrap (34 ms off, as with a counter that wraps every 34 ms and a
     * submission that started late): refused, no step, the line stays. */
    gz_clock_model m;
    gz_model_init(&m);
    for (uint64_t t = 0; t < 4; t++) {
        gz_calib_pair p = pair(1000 + t * SEC / 10, 6000 + t * SEC / 10, 100);
        gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    }
    gz_model_fit(&m);
    CHECK_I64(m.offset_ns, 5000);
    /* begin + offset >= not_before: with the GPU value 34 ms too small the
     * bound asks for an offset 34 ms larger. */
    uint64_t g = 1000 + 4 * SEC / 10;
    gz_model_add_bounds(&m, g - 34000000, g + 5000 - 10, 0, 0);
    gz_model_fit(&m);
    CHECK_U64(m.jumps, 0);
    CHECK_U64(m.bounds_refused, 1);
    CHECK_I64(m.offset_ns, 5000);
    /* A tight pair that shows a real 2 ms step is believed. */
    gz_calib_pair step = pair(g + SEC / 10, g + SEC / 10 + 5000 + 2000000, 100);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &step);
    gz_model_fit(&m);
    CHECK_U64(m.jumps, 1);
    CHECK_I64(m.offset_ns, 2005000);
    return 0;
}

static int test_model_bound_just_past_step(void)
{
    /* Calibrated pairs every 100 ms, then the counter steps 2 ms ahead. The
     * first constraint after the step is a submission's end bound whose
     * completion the CPU saw 1.85 ms late (a loaded machine): it contradicts
     * the line by only 150 us, less than a step. Taken as drift, it tilted
     * the line under the zones from just before the step by 140 us (CI,
     * clock-jump-calibrated). While pairs keep coming they decide: the
     * bound is refused and the next pair shows the step. */
    gz_clock_model m;
    gz_model_init(&m);
    uint64_t g;
    for (g = 0; g <= 3 * SEC; g += SEC / 10) {
        gz_calib_pair p = pair(g, g + 5000, 1);
        gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
        gz_model_add_bounds(&m, g + 1000, g + 1000 + 5000 - 20000, g + 50000, g + 50000 + 5000 + 300000);
        gz_model_fit(&m);
    }
    /* The step at 3.02 s: a zone ends at host 3.03 s (GPU 3.032 s), seen at
     * host 3.03185 s. */
    uint64_t end_host = 3 * SEC + 30000000 + 5000;
    gz_model_add_bounds(&m, 0, 0, end_host - 5000 + 2000000, end_host + 1850000);
    gz_model_fit(&m);
    CHECK_U64(m.bounds_refused, 1);
    CHECK_U64(m.jumps, 0);
    gz_calib_pair after = pair(3 * SEC + SEC / 10 + 2000000, 3 * SEC + SEC / 10 + 5000, 1);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &after);
    gz_model_fit(&m);
    CHECK_U64(m.jumps, 1);
    /* Before the step: the old line, to the pairs' 1 ns. */
    CHECK(llabs((int64_t)(gz_model_to_host(&m, 3 * SEC + 10000000) - (3 * SEC + 10000000 + 5000))) <= 2);
    CHECK(llabs((int64_t)(gz_model_to_host(&m, after.gpu_ns) - after.host_ns)) <= 2);
    return 0;
}

static int test_model_sparse_sync_points(void)
{
    /* OpenCL sync points come only from enqueues that return quickly. A
     * device clock 500 ppm fast, sync points over the first 45 ms (60 us
     * brackets: the slope stays 0), then a kernel enqueued 1.2 s later
     * whose enqueue took 4 ms (no sync point). Its end bound contradicts
     * the line by 520 us; refused as "not a tight sample", it left the
     * zone ending 600 us after the CPU saw it complete (cl-fault-drift
     * under ASan). With no tight sample for that long, it is believed. */
    gz_clock_model m;
    gz_model_init(&m);
    const double drift = -500e-6;
#define HOST_OF(g) ((uint64_t)(5 * SEC + (g) + llround(drift * (double)(g))))
    uint64_t syncs[] = {0, 1600000, 5 * MS, 45 * MS};
    for (unsigned i = 0; i < sizeof syncs / sizeof syncs[0]; i++) {
        gz_calib_pair p = pair(syncs[i], HOST_OF(syncs[i]), 30000);
        gz_model_add_pair(&m, GZ_CALIB_SYNC_POINT, &p);
        gz_model_fit(&m);
    }
    CHECK(fabs(m.drift_ppm) < 100); /* the brackets allow the slope in use */
    uint64_t start = 1200 * MS, end = 1240 * MS;
    uint64_t seen = HOST_OF(end) + 100000;
    gz_model_add_bounds(&m, start, HOST_OF(start) - 100000, end, seen);
    gz_model_fit(&m);
    CHECK_U64(m.bounds_refused, 0);
    CHECK_U64(m.jumps, 0);
    CHECK(gz_model_to_host(&m, end) <= seen);
    CHECK(gz_model_to_host(&m, start) >= HOST_OF(start) - 100000);
    CHECK(m.drift_ppm < -300 && m.drift_ppm > -700);
#undef HOST_OF
    return 0;
}

static int test_model_step_inside_bucket(void)
{
    /* The constraints are kept per 10 ms bucket. A zone's start bound from
     * just before a 2 ms step and the first pair after it fell into the
     * same bucket: that bucket alone contradicted itself, the fit tilted to
     * the largest drift allowed and the zones before the step were placed
     * 1 ms off (clock-jump-calibrated under load). The bucket's older
     * constraint is from before the step: it goes, and the step lies
     * between the two. */
    gz_clock_model m;
    gz_model_init(&m);
    for (uint64_t g = 0; g <= 2900 * MS; g += 100 * MS) {
        gz_calib_pair p = pair(g, g + 5000, 1);
        gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
        gz_model_fit(&m);
    }
    /* A zone began at GPU 2.961 s, 3 us after its submit (host 2.961 s + 5 us - 3 us). */
    uint64_t zone_gpu = 2961 * MS;
    gz_model_add_bounds(&m, zone_gpu, zone_gpu + 5000 - 3000, 0, 0);
    gz_model_fit(&m);
    /* The step at host 2.9615 s; the pair at host 2.962 s reads GPU 2.964 s. */
    gz_calib_pair after = pair(2964 * MS, 2962 * MS + 5000, 1);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &after);
    gz_model_fit(&m);
    CHECK_U64(m.jumps, 1);
    CHECK(fabs(m.drift_ppm) < 1);
    CHECK(llabs((int64_t)(gz_model_to_host(&m, zone_gpu) - (zone_gpu + 5000))) <= 2);
    CHECK(llabs((int64_t)(gz_model_to_host(&m, after.gpu_ns) - after.host_ns)) <= 2);
    return 0;
}

static int test_model_step_in_busy_work(void)
{
    /* Sync points every 100 ms, then a queue kept busy with 3 ms
     * submissions, each submitted two ahead (6 ms before it begins) and
     * seen complete 30 us after its end, with a labelled zone inside. The
     * counter steps 2 ms ahead inside one submission, after its label
     * ended: the bounds say only that the step lies within that
     * submission, and its middle sent the label's end 2 ms early. The gap
     * between the label's end and the submission's end is 90 us of work
     * plus the step: there it is. */
    gz_clock_model m;
    gz_model_init(&m);
    const uint64_t o = 5000; /* host - gpu before the step */
    for (uint64_t g = 0; g <= 1000 * MS; g += 100 * MS) {
        gz_calib_pair p = pair(g, g + o - 1000, 2000);
        gz_model_add_pair(&m, GZ_CALIB_SYNC_POINT, &p);
        gz_model_fit(&m);
    }
    const uint64_t step = 2 * MS, us = 1000, len = 3000 * us;
    const uint64_t first = 1000 * MS + 10 * us;
    const uint64_t step_at = first + 20 * (len + 10 * us) + 2950 * us; /* real time */
    uint64_t label_end_gpu = 0, label_end_host = 0;
    for (uint64_t k = 0; k < 40; k++) {
        uint64_t b = first + k * (len + 10 * us), e = b + len - 10 * us; /* real times */
        uint64_t lb = b + 5 * us, le = b + 2900 * us;
#define GPU_OF(t) ((t) + ((t) >= step_at ? step : 0))
        gz_model_add_bounds(&m, GPU_OF(b), b + o - 6 * MS, GPU_OF(e), e + o + 30 * us);
        gz_model_add_zone(&m, GPU_OF(b), GPU_OF(e), 1);
        gz_model_add_zone(&m, GPU_OF(lb), GPU_OF(le), 2);
        if (k == 20) {
            label_end_gpu = GPU_OF(le);
            label_end_host = le + o;
        }
#undef GPU_OF
        gz_model_fit(&m);
    }
    CHECK_U64(m.jumps, 1);
    CHECK(llabs((int64_t)(gz_model_to_host(&m, label_end_gpu) - label_end_host)) < 50000);
    /* The next submission's begin, after the step. */
    uint64_t next = first + 21 * (len + 10 * us);
    CHECK(llabs((int64_t)(gz_model_to_host(&m, next + step) - (next + o))) < 50000);
    /* The label's length decided it: no doubt where the step fell. */
    CHECK_U64(gz_model_doubt_ns(&m, label_end_gpu), 0);
    CHECK_U64(gz_model_doubt_ns(&m, next + step), 0);
    return 0;
}

/* A model fed a second of sync points (one every 100 ms, 20 us brackets)
 * of a clock o ns behind the host: the drift is known and firm. */
static void synced_second(gz_clock_model *m, uint64_t o)
{
    gz_model_init(m);
    for (uint64_t g = 0; g <= 1000 * MS; g += 100 * MS) {
        gz_calib_pair p = pair(g, g + o, 20 * 1000);
        gz_model_add_pair(m, GZ_CALIB_SYNC_POINT, &p);
        gz_model_fit(m);
    }
}

/* A frame in an idle phase: its sync point's bracket (ns before and after
 * the sync point's timestamp; none where both are 0), and how long before
 * its work began it was submitted and after its work ended it was seen
 * complete. */
typedef struct idle_frame {
    uint64_t sync_before, sync_after, submit_before, seen_after;
} idle_frame;

/* An idle phase on lavapipe, after synced_second: 12 frames 22 ms apart,
 * each begun 160 us after its sync point's timestamp and 300 us long, as
 * usual says; the sixth as slow says and delay ns later than its turn
 * (the ones after it too). The counter steps 2 ms ahead step_from ns
 * after the sixth frame's sync point's timestamp would have been. Checks
 * one step is found, and the sixth frame's begin and end and the seventh's
 * begin map within 50 us. */
static int step_among_idle_frames(idle_frame usual, idle_frame slow, uint64_t delay,
                                  int64_t step_from)
{
    gz_clock_model m;
    const uint64_t o = 5000, us = 1000, step = 2 * MS, n = 5;
    synced_second(&m, o);
    const uint64_t step_at = 1010 * MS + n * 22 * MS + step_from; /* real */
    uint64_t slow_begin = 0, slow_end = 0, next_begin = 0;
#define GPU_OF(t) ((t) + ((t) >= step_at ? step : 0))
    for (uint64_t k = 0; k < 12; k++) {
        uint64_t s = 1010 * MS + k * 22 * MS + (k >= n ? delay : 0); /* the sync point's */
        const idle_frame *f = k == n ? &slow : &usual;
        if (f->sync_before || f->sync_after) {
            uint64_t lo = s - f->sync_before, hi = s + f->sync_after;
            gz_calib_pair p = pair(GPU_OF(s), o + (lo + hi) / 2, (hi - lo) / 2);
            gz_model_add_pair(&m, GZ_CALIB_SYNC_POINT, &p);
        }
        uint64_t b = s + 160 * us, e = b + 300 * us;
        gz_model_add_bounds(&m, GPU_OF(b), b - f->submit_before + o, GPU_OF(e),
                            e + f->seen_after + o);
        gz_model_add_zone(&m, GPU_OF(b), GPU_OF(e), 1);
        gz_model_fit(&m);
        if (k == n) {
            slow_begin = b;
            slow_end = e;
        } else if (k == n + 1) {
            next_begin = b;
        }
    }
    CHECK_U64(m.jumps, 1);
    CHECK(llabs((int64_t)(gz_model_to_host(&m, GPU_OF(slow_begin)) - (slow_begin + o))) < 50000);
    CHECK(llabs((int64_t)(gz_model_to_host(&m, GPU_OF(slow_end)) - (slow_end + o))) < 50000);
    CHECK(llabs((int64_t)(gz_model_to_host(&m, GPU_OF(next_begin)) - (next_begin + o))) < 50000);
#undef GPU_OF
    return 0;
}

static int test_model_step_after_slow_sync_point(void)
{
    /* An idle phase on lavapipe: a frame every 22 ms, each
     * behind a sync point (bracket 0.8 ms wide), begun 160 us after the
     * sync point's timestamp, submitted 50 us before it began and seen
     * complete 50 us after its end. One frame's sync point took 4 ms: its
     * submit was 2 ms before its work began and its completion was seen
     * 3.4 ms late. The counter steps 2 ms ahead 13 ms after that frame.
     * Its begin then meets the line after the step as closely as the
     * prompt ones do, and the evidence put the step between the sync
     * point and that frame, 160 us of GPU time: the frame went 2 ms early.
     * A forward step of 2 ms lies in a gap of 2 ms or more: after the
     * frame. */
    const uint64_t us = 1000;
    return step_among_idle_frames((idle_frame){100 * us, 700 * us, 50 * us, 50 * us},
                                  (idle_frame){146 * us, 3860 * us, 2010 * us, 3400 * us}, 0,
                                  13 * MS);
}

static int test_model_step_seen_in_part(void)
{
    /* The load of test_model_drift_centred (busy work submitted
     * 20-100 us ahead), the counter 1000 ppm slow and stepping 2 ms ahead
     * in a busy phase, 410 ms after the last sync point. The first
     * submission that ends after the step is seen complete 1.85 ms late:
     * it cuts the line by 150 us only, less than a step. Taken for a
     * change of drift, it made the model drop the history that the line
     * rested on and refit on the newest 10 ms, with no step recorded, and
     * every zone before it that waited to be converted went 2 ms wrong (on
     * lavapipe, a line tilted by 460 ppm: 427 us). A firm drift does not
     * change that fast: it is a step, and the completions after it show
     * the rest of it. */
    gz_clock_model m;
    gz_model_init(&m);
    static load_sim s;
    s = (load_sim){.c = {.host0 = 20 * SEC, .offset = 4e5, .ppm = -1000},
                   .step_at = 20 * SEC + 3 * 700 * MS + 520 * MS + 123000, .step = 2 * MS,
                   .busy_ahead = 20000, .busy_spread = 80000, .late = 1850000};
    for (uint64_t phase = 0; phase < 5; phase++)
        load_phase(&m, &s, 20 * SEC + phase * 700 * MS);
    int64_t worst = 0;
    for (uint32_t i = 0; i < s.nbegins; i++) {
        if (s.begins[i] < 20 * SEC + 1400 * MS)
            continue; /* the drift's to learn */
        int64_t e = llabs((int64_t)(gz_model_to_host(&m, load_gpu(&s, s.begins[i])) - s.begins[i]));
        worst = e > worst ? e : worst;
    }
    CHECK_U64(m.jumps, 1);
    if (worst > 50000) {
        fprintf(stderr, "a zone %.1f us off\n", (double)worst / 1e3);
        return 1;
    }
    return 0;
}

/* On lavapipe beside a busy loop: submissions of 280 us of work, each
 * submitted as the one ahead begins and seen complete 300 us after its
 * end, until the host stalls. The submission running then takes 4 ms (the
 * driver's threads stall too), an empty one queued behind it runs 10 us
 * (submitted empty_after the long one's submit), the next begins 4.5 ms
 * later (submitted when the host wakes), and the counter steps 2 ms ahead
 * 1 ms into that idle. The completions of both are seen at the wake. A
 * step comes at any moment: in the idle's 4.5 ms rather than in the 2 ms
 * the submission would have run. Checks the long submission's end and the
 * next one's begin, and what is in doubt, after total submissions (and, if
 * late, a zone of the stall's neighbour read back only then). */
static int step_in_host_stall(uint64_t empty_after, uint64_t total, bool late)
{
    gz_clock_model m;
    const uint64_t o = 5000, us = 1000, step = 2 * MS;
    synced_second(&m, o);
    const uint64_t stalled = 100;
    uint64_t b = 1010 * MS, submit = b - 300 * us, step_at = UINT64_MAX;
    uint64_t long_end = 0, wake_begin = 0, late_begin = 0, late_end = 0;
#define GPU_OF(t) ((t) + ((t) >= step_at ? step : 0))
    for (uint64_t k = 0; k < total; k++) {
        uint64_t e = b + (k == stalled ? 4 * MS : 280 * us), next = e + 20 * us;
        uint64_t seen = e + 300 * us;
        if (k == stalled) {
            /* The empty submission behind it, then the idle. */
            uint64_t eb = e + 30 * us, ee = eb + 10 * us;
            next = ee + 4500 * us;
            seen = next - 290 * us; /* the host wakes, then submits */
            step_at = ee + 1 * MS;
            long_end = e;
            wake_begin = next;
            gz_model_add_bounds(&m, GPU_OF(b), submit + o, GPU_OF(e), seen + o);
            gz_model_add_zone(&m, GPU_OF(b), GPU_OF(e), 1);
            gz_model_add_bounds(&m, GPU_OF(eb), submit + empty_after + o, GPU_OF(ee),
                                seen + 20 * us + o);
            gz_model_add_zone(&m, GPU_OF(eb), GPU_OF(ee), 2);
        } else {
            gz_model_add_bounds(&m, GPU_OF(b), submit + o, GPU_OF(e), seen + o);
            gz_model_add_zone(&m, GPU_OF(b), GPU_OF(e), 1);
        }
        if (k == stalled + 2) {
            late_begin = b;
            late_end = e;
        }
        gz_model_fit(&m);
        submit = k == stalled ? next - 300 * us : b;
        b = next;
    }
    if (late) {
        gz_model_add_zone(&m, GPU_OF(late_begin), GPU_OF(late_end), 3);
        gz_model_fit(&m);
    }
    CHECK_U64(m.jumps, 1);
    CHECK(llabs((int64_t)(gz_model_to_host(&m, GPU_OF(long_end)) - (long_end + o))) < 50000);
    CHECK(llabs((int64_t)(gz_model_to_host(&m, GPU_OF(wake_begin)) - (wake_begin + o))) < 50000);
    /* Real time alone chose the idle (4.5 ms against 2): the long
     * submission's end may be a step off, and the model says so; the
     * begin after the idle, and the work long before, are sure. */
    uint64_t doubt = gz_model_doubt_ns(&m, GPU_OF(long_end));
    CHECK(doubt > 1900 * us && doubt < 2100 * us);
    CHECK_U64(gz_model_doubt_ns(&m, GPU_OF(wake_begin)), 0);
    CHECK_U64(gz_model_doubt_ns(&m, GPU_OF(long_end - 10 * MS)), 0);
#undef GPU_OF
    return 0;
}

static int test_model_step_in_host_stall_doubt_kept(void)
{
    /* A zone read back late, near the step, has the step placed again;
     * 300 submissions on, the rings no longer hold the times around it,
     * and the gaps cannot be weighed again. The doubt found before must
     * stay: it was dropped, and on lavapipe a zone then went 1993 us wrong
     * unmarked. */
    return step_in_host_stall(0, 300, true);
}

static int test_model_step_in_host_stall(void)
{
    /* The empty submission submitted with the long one. Every
     * bound of the two is a stall from either line: next to nothing says
     * whether the step fell inside the long submission or in the idle
     * after it. The model took the middle of the two, inside the
     * submission, and sent its end 2 ms early. */
    return step_in_host_stall(0, 200, false);
}

static int test_model_step_after_queued_work(void)
{
    /* The empty submission submitted 1.9 ms into the long one,
     * before the host stalled: it began 30 us after the long one ended,
     * 2.13 ms after its own submit by the line before the step and 0.13 ms
     * by the line after. Weighed as a latency, that put the step inside the
     * long submission (1980 us): work queued behind other work begins when
     * that ends, whatever its own latency. */
    return step_in_host_stall(2200 * 1000, 200, false);
}

static int test_model_step_before_late_completions(void)
{
    /* On lavapipe beside a busy loop: submissions of 100 us, each
     * begun 60 us after its submit and seen complete 30 us after its end,
     * 100 us apart, until the host stalls for 80 ms: it submits each 1.5 ms
     * after the one before ended and sees each complete 2.3 ms late. The
     * counter steps 2 ms ahead in the first of those idles. Until a prompt
     * completion shows the step, by the line before it each begin seems
     * 2.06 ms after its submit and each completion 0.3 ms after the end:
     * typical latencies measured so made the begins' odds count for
     * nothing and the completions' say "before the step", and the step
     * went to the end of the stall, 2 ms wrong for the work in it. */
    gz_clock_model m;
    const uint64_t o = 5000, us = 1000, step = 2 * MS;
    synced_second(&m, o);
    const uint64_t stall_from = 1030 * MS, stall_to = stall_from + 80 * MS;
    const uint64_t step_at = stall_from + 600 * us;
    uint64_t b = 1010 * MS, checked[2] = {0, 0};
#define GPU_OF(t) ((t) + ((t) >= step_at ? step : 0))
    for (uint64_t k = 0; k < 400; k++) {
        uint64_t e = b + 100 * us;
        bool stalled = e >= stall_from && e < stall_to;
        uint64_t seen = e + (stalled ? 2300 * us : 30 * us);
        gz_model_add_bounds(&m, GPU_OF(b), b - 60 * us + o, GPU_OF(e), seen + o);
        gz_model_add_zone(&m, GPU_OF(b), GPU_OF(e), 1);
        gz_model_fit(&m);
        if (b > step_at && !checked[0])
            checked[0] = b; /* the first work after the step */
        if (stalled)
            checked[1] = b; /* the last in the stall */
        b = e + (stalled ? 1500 * us : 100 * us);
    }
    CHECK_U64(m.jumps, 1);
    for (int i = 0; i < 2; i++) {
        uint64_t host = gz_model_to_host(&m, GPU_OF(checked[i]));
        CHECK(llabs((int64_t)(host - (checked[i] + o))) < 50000);
    }
#undef GPU_OF
    return 0;
}

/* A busy queue (100 us of work, begun 60 us after its submit, seen
 * complete 30 us after its end, 100 us apart) after sync points, the
 * counter stepping 2 ms ahead twice, 500 ms apart; the completions of the
 * late_for ns after the second step are seen late_by late. Checks both
 * steps are known at the end and the work between them, converted last,
 * is where it was. */
static int two_steps_in_busy_work(uint64_t late_for, uint64_t late_by)
{
    gz_clock_model m;
    const uint64_t o = 5000, us = 1000, step = 2 * MS;
    synced_second(&m, o);
    const uint64_t steps[2] = {1100 * MS + 150 * us, 1600 * MS + 150 * us};
    uint64_t b = 1010 * MS, between = 0;
#define GPU_OF(t) ((t) + ((t) >= steps[0] ? step : 0) + ((t) >= steps[1] ? step : 0))
    for (uint64_t k = 0; k < 4000; k++) {
        uint64_t e = b + 100 * us;
        uint64_t seen = e + (b > steps[1] && b < steps[1] + late_for ? late_by : 30 * us);
        gz_model_add_bounds(&m, GPU_OF(b), b - 60 * us + o, GPU_OF(e), seen + o);
        gz_model_add_zone(&m, GPU_OF(b), GPU_OF(e), 1);
        gz_model_fit(&m);
        if (b < steps[1] - 100 * MS)
            between = b;
        b = e + 100 * us;
    }
    CHECK_U64(m.jumps, 2);
    CHECK(llabs((int64_t)(gz_model_to_host(&m, GPU_OF(between)) - (between + o))) < 50000);
#undef GPU_OF
    return 0;
}

static int test_model_step_shown_small_first(void)
{
    /* After the first step the drift rests on bounds alone; the
     * first three completions after the second are seen 1.9 ms late, so it
     * first shows as 100 us. That was taken for a change of drift: the
     * history was dropped, the line moved by the rest of the step with
     * nothing left to contradict, no step was recorded, and the work
     * between the steps, converted after the second, went 2 ms wrong. */
    return two_steps_in_busy_work(500 * 1000, 1900 * 1000);
}

static int test_model_step_found_late(void)
{
    /* The completions of the 40 ms after the second step are
     * seen 2.5 ms late, within the line before it: the step is found when
     * every time the model holds one by one is after it. With nothing
     * there that agrees with the line between the steps, the second was
     * made one with the first, and the work between them went 2 ms
     * wrong. */
    return two_steps_in_busy_work(40 * MS, 2500 * 1000);
}

static int test_model_step_before_a_stalled_frame(void)
{
    /* An idle phase on lavapipe beside a busy loop: a frame every
     * 22 ms behind a sync point, begun 160 us after it, submitted 150 us
     * before it began and seen complete 150 us after its end. The counter
     * steps 2 ms ahead 3 ms before a frame that comes 25 ms after the one
     * before; the host stalls around it: no sync point, its submit 8.8 ms
     * before its begin, its completion seen 3.1 ms late (1.1 ms by the line
     * before the step). An exponential's tail made 1.1 ms late far likelier
     * than 3.1 ms, where stalls of either length are as common, and put
     * the step after that frame: 2 ms wrong. */
    const uint64_t us = 1000;
    return step_among_idle_frames((idle_frame){100 * us, 700 * us, 150 * us, 150 * us},
                                  (idle_frame){0, 0, 8800 * us, 3100 * us}, 3 * MS, 0);
}

static int test_model_step_placed_again(void)
{
    /* A host stall. Sync points every 100 ms, then submissions
     * of 300 us back to back, each submitted 1 ms ahead and seen complete
     * 20 us after its end; the counter steps 2 ms ahead in the 25th. A
     * sync point after the 40th comes in before the completions of the
     * 21st to the 40th (the host saw them late): the step was placed in
     * the middle of what it knew nothing of, near the 30th, and kept there
     * when the completions came; the 26th to the 30th went 2 ms early. */
    gz_clock_model m;
    gz_model_init(&m);
    const uint64_t o = 5000, us = 1000, step = 2 * MS, len = 300 * us;
    for (uint64_t g = 0; g <= 1000 * MS; g += 100 * MS) {
        gz_calib_pair p = pair(g, g + o, us);
        gz_model_add_pair(&m, GZ_CALIB_SYNC_POINT, &p);
        gz_model_fit(&m);
    }
    const uint64_t first = 1000 * MS + 10 * us, step_at = first + 24 * len + 150 * us; /* real */
#define GPU_OF(t) ((t) + ((t) >= step_at ? step : 0))
    for (uint64_t k = 0; k < 41; k++) {
        if (k == 21) {
            uint64_t s = first + 41 * len + 50 * us; /* after the 40th */
            gz_calib_pair p = pair(GPU_OF(s), s + o, us);
            gz_model_add_pair(&m, GZ_CALIB_SYNC_POINT, &p);
            gz_model_fit(&m);
        }
        uint64_t b = first + k * len, e = b + len - 5 * us;
        gz_model_add_bounds(&m, GPU_OF(b), b + o - MS, GPU_OF(e), e + o + 20 * us);
        gz_model_add_zone(&m, GPU_OF(b), GPU_OF(e), 1);
        gz_model_fit(&m);
    }
    CHECK_U64(m.jumps, 1);
    for (uint64_t k = 21; k < 41; k++) {
        uint64_t b = first + k * len, e = b + len - 5 * us;
        if (b < step_at && e >= step_at)
            continue; /* straddles the step */
        int64_t eb = (int64_t)(gz_model_to_host(&m, GPU_OF(b)) - (b + o));
        int64_t ee = (int64_t)(gz_model_to_host(&m, GPU_OF(e)) - (e + o));
        if (llabs(eb) > 50000 || llabs(ee) > 50000) {
            fprintf(stderr, "submission %llu: %lld us at its begin, %lld at its end\n",
                    (unsigned long long)k, (long long)eb / 1000, (long long)ee / 1000);
            return 1;
        }
    }
#undef GPU_OF
    return 0;
}

static int test_model_step_resized(void)
{
    /* On lavapipe (steps-busy-wrap-drift): a queue kept busy from
     * the last sync point on, work of 100-400 us back to back, begun
     * 60-700 us after its submit and seen complete 40-300 us after its
     * end. 400 ms on, the counter steps 2 ms ahead in an idle of 430 us.
     * The bounds of the two submissions after it and the submit of one
     * 13.5 ms on, begun 1.1 ms after it, come in first: the line after the
     * step rests on that one bound, 1.1 ms low, the step seems 3.1 ms, and
     * by that the prompt begins after it seem before it. It went past them
     * into the unknown 12 ms. The rest comes then, two completions seen 3
     * ms late and an idle of 1.8 ms 8 ms on among it: placed again at 3.1
     * ms, the step went into that idle, and the refit right after made it
     * 2 ms. Left there, the work of those 8 ms went 2 ms wrong; placed
     * again for its new size, it is back in the idle it fell in. */
    gz_clock_model m;
    const uint64_t o = 5000, us = 1000, step = 2 * MS;
    synced_second(&m, o);
    const uint64_t step_at = 1404 * MS + 600 * us; /* real */
    static uint64_t zb[2000], ze[2000];
    uint32_t nz = 0;
#define GPU_OF(t) ((t) + ((t) >= step_at ? step : 0))
    /* Before the step a fit after each submission; the last ends 200 us
     * before it, in the same 10 ms bucket as the two after it. */
    uint64_t b = 1010 * MS;
    for (uint64_t k = 0; b < step_at - 200 * us; k++) {
        uint64_t e = b + 100 * us + k * 37 % 31 * 10 * us;
        if (e + 100 * us > step_at - 200 * us)
            e = step_at - 200 * us;
        gz_model_add_bounds(&m, GPU_OF(b), b - 60 * us - k * 53 % 65 * 10 * us + o, GPU_OF(e),
                            e + 40 * us + k * 29 % 27 * 10 * us + o);
        gz_model_add_zone(&m, GPU_OF(b), GPU_OF(e), 1);
        gz_model_fit(&m);
        zb[nz] = b;
        ze[nz++] = e;
        b = e + 10 * us;
    }
    /* us after the step: begin, end, how long after the submit it began
     * and before the completion was seen. */
    const uint64_t first[2][4] = {{230, 486, 185, 87}, {596, 773, 462, 170}};
    for (int i = 0; i < 2; i++) {
        b = step_at + first[i][0] * us;
        uint64_t e = step_at + first[i][1] * us;
        gz_model_add_bounds(&m, GPU_OF(b), b - first[i][2] * us + o, GPU_OF(e),
                            e + first[i][3] * us + o);
        gz_model_add_zone(&m, GPU_OF(b), GPU_OF(e), 1);
        zb[nz] = b;
        ze[nz++] = e;
    }
    const uint64_t lone = step_at + 13500 * us;
    gz_model_add_bounds(&m, GPU_OF(lone), lone - 1131 * us + o, 0, 0);
    gz_model_fit(&m);
    /* The rest, to 21.5 ms after the step (the one submitted before, at
     * its place), then one fit. */
    b = ze[nz - 1] + 20 * us;
    for (uint64_t k = 0; b < step_at + 21500 * us; k++) {
        if (b <= lone && b + 410 * us > lone)
            b = lone;
        uint64_t e = b + 100 * us + k * 37 % 31 * 10 * us;
        uint64_t seen = e + (k == 5 || k == 11 ? 3 * MS : 40 * us + k * 29 % 27 * 10 * us);
        uint64_t submit = b == lone ? 0 : b - 50 * us - k * 53 % 50 * 10 * us + o;
        gz_model_add_bounds(&m, GPU_OF(b), submit, GPU_OF(e), seen + o);
        gz_model_add_zone(&m, GPU_OF(b), GPU_OF(e), 1);
        zb[nz] = b;
        ze[nz++] = e;
        bool idle = b < step_at + 8 * MS && e + 10 * us >= step_at + 8 * MS;
        b = e + (idle ? 1800 * us : 10 * us);
    }
    gz_model_fit(&m);
    CHECK_U64(m.jumps, 1);
    for (uint32_t i = 0; i < nz; i++) {
        if (zb[i] + 20 * MS < step_at)
            continue;
        int64_t eb = (int64_t)(gz_model_to_host(&m, GPU_OF(zb[i])) - (zb[i] + o));
        int64_t ee = (int64_t)(gz_model_to_host(&m, GPU_OF(ze[i])) - (ze[i] + o));
        if (llabs(eb) > 50000 || llabs(ee) > 50000) {
            fprintf(stderr, "zone at %lld us from the step: %lld us off at begin, %lld at end\n",
                    ((long long)zb[i] - (long long)step_at) / 1000, (long long)eb / 1000,
                    (long long)ee / 1000);
            return 1;
        }
    }
#undef GPU_OF
    return 0;
}

static int test_model_step_line_after_it(void)
{
    /* On lavapipe, on a host loaded twice over: after the sync
     * points, a frame every 25 ms, 1 ms of work begun 100-340 us after its
     * submit and seen complete 100-420 us after its end. The host stalls:
     * the last frame before a 2 ms step begins 1.85 ms after its submit
     * (150 us above the line after the step) and is seen complete 21 ms
     * late; the next comes 9.5 ms after the step, and the frames from
     * there begin 0.1-3.4 ms after their submits and are seen complete
     * 0.1-3.7 ms late. By the odds the step fell before the stalled frame,
     * and the gap after it is in doubt. The stalled begin stayed in the
     * window after the step: it agrees with the line after it only at a
     * slope hundreds of ppm off the drift known (950 at first), and the
     * frames of the 600 ms after the step went up to 230 us wrong (72 us
     * on lavapipe). */
    gz_clock_model m;
    const uint64_t o = 5000, us = 1000, step = 2 * MS;
    synced_second(&m, o);
    const uint64_t step_at = 1300 * MS + 500 * us, stalled = step_at - 42 * MS; /* real */
    uint64_t zb[32], ze[32];
    uint32_t nz = 0;
#define GPU_OF(t) ((t) + ((t) >= step_at ? step : 0))
    for (uint64_t k = 0; 1010 * MS + k * 25 * MS < step_at + 600 * MS; k++) {
        uint64_t submit = 1010 * MS + k * 25 * MS, began, late; /* us */
        if (submit < stalled) {
            began = 100 + k * 37 % 7 * 40;
            late = 100 + k * 29 % 9 * 40;
        } else if (submit < step_at) {
            if (submit >= stalled + 25 * MS)
                continue; /* the host stalls */
            submit = stalled;
            began = 1850;
            late = 21000;
        } else {
            uint64_t j = (submit - step_at) / (25 * MS); /* frames since the step */
            began = 100 + j * 53 % 14 * 250;
            late = 100 + j * 29 % 16 * 240;
        }
        uint64_t b = submit + began * us, e = b + MS;
        gz_model_add_bounds(&m, GPU_OF(b), submit + o, GPU_OF(e), e + late * us + o);
        gz_model_add_zone(&m, GPU_OF(b), GPU_OF(e), 1);
        gz_model_fit(&m);
        if (b > step_at) {
            zb[nz] = b;
            ze[nz++] = e;
        }
    }
    CHECK_U64(m.jumps, 1);
    /* Converted at the end, with the line the whole stretch gave. */
    int64_t worst = 0;
    uint64_t worst_at = 0;
    for (uint32_t i = 0; i < nz; i++) {
        int64_t eb = llabs((int64_t)(gz_model_to_host(&m, GPU_OF(zb[i])) - (zb[i] + o)));
        int64_t ee = llabs((int64_t)(gz_model_to_host(&m, GPU_OF(ze[i])) - (ze[i] + o)));
        if (eb > worst || ee > worst) {
            worst = eb > ee ? eb : ee;
            worst_at = zb[i];
        }
    }
    if (worst > 50000) {
        fprintf(stderr, "a zone %llu ms after the step: %.1f us off\n",
                (unsigned long long)(worst_at - step_at) / MS, (double)worst / 1e3);
        return 1;
    }
#undef GPU_OF
    return 0;
}

static int test_model_epoch_clock(void)
{
    /* NVIDIA's GPU clock counts ns from the Unix epoch (measured on an
     * H100: host CLOCK_MONOTONIC - GPU = -1.795e18 ns). A double holds an
     * offset that large only to 256 ns; the model keeps offsets relative
     * to its first, so pairs with a 1 ns deviation map to the ns. */
    gz_clock_model m;
    gz_model_init(&m);
    const uint64_t epoch_gpu = 1795376235893752266ull; /* GPU ns at host 0 */
    for (uint64_t h = 1 * SEC; h <= 3 * SEC; h += SEC / 10) {
        gz_calib_pair p = pair(epoch_gpu + h + 37, h, 1); /* + 37: off the 256 ns grid */
        gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
        gz_model_fit(&m);
    }
    for (uint64_t h = 1 * SEC; h <= 3 * SEC; h += 12345677) {
        uint64_t got = gz_model_to_host(&m, epoch_gpu + h + 37);
        CHECK(llabs((int64_t)(got - h)) <= 2);
        CHECK(llabs((int64_t)(gz_model_to_gpu(&m, h) - (epoch_gpu + h + 37))) <= 2);
    }
    CHECK(llabs(m.offset_ns - (-(int64_t)epoch_gpu - 37)) <= 2);
    return 0;
}

static int test_model_one_sided(void)
{
    gz_clock_model m;
    gz_model_init(&m);
    gz_model_add_bounds(&m, 100, 700, 0, 0); /* offset >= 600 */
    gz_model_fit(&m);
    CHECK_U64(m.method, GZ_CALIB_BOUNDS);
    CHECK_I64(m.offset_ns, 600);
    CHECK_U64(m.deviation_ns, UINT64_MAX);
    gz_model_add_bounds(&m, 0, 0, 300, 1200); /* offset <= 900 */
    gz_model_fit(&m);
    CHECK_I64(m.offset_ns, 750);
    CHECK_U64(m.deviation_ns, 150);
    return 0;
}

static int test_model_saturation(void)
{
    gz_clock_model m;
    gz_model_init(&m);
    gz_calib_pair p = pair(1000000, 10, 1); /* offset about -1 ms */
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    gz_model_fit(&m);
    CHECK_U64(gz_model_to_host(&m, 5), 0);
    gz_model_init(&m);
    p = pair(10, 10 + SEC, 1); /* offset +1 s */
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    gz_model_fit(&m);
    CHECK_U64(gz_model_to_host(&m, UINT64_MAX - 5), UINT64_MAX);
    return 0;
}

static int test_unwrap(void)
{
    gz_unwrap u;
    gz_unwrap_init(&u, 36);
    uint64_t wrap = 1ull << 36;
    /* First value just under the wrap: origin. */
    CHECK_U64(gz_unwrap_near(&u, wrap - 10, 0), wrap - 10);
    /* Past the wrap: small raw value, predicted just after. */
    CHECK_U64(gz_unwrap_near(&u, 5, wrap - 10 + 20), wrap + 5);
    /* Three wraps later in one step, with the prediction 40 % of a wrap off. */
    uint64_t truth = 4 * wrap + 123;
    CHECK_U64(gz_unwrap_near(&u, truth & (wrap - 1), truth - wrap * 2 / 5), truth);
    CHECK_U64(gz_unwrap_wraps(&u), 4);
    /* An older value (out of order) is placed before, not a wrap later. */
    CHECK_U64(gz_unwrap_near(&u, (truth - 1000) & (wrap - 1), truth), truth - 1000);
    /* Raw bits above N are ignored. */
    CHECK_U64(gz_unwrap_near(&u, (7ull << 36) | 123, truth), truth);
    /* 64 bits: no unwrap at all; 0 bits: nothing to keep. */
    gz_unwrap_init(&u, 64);
    CHECK_U64(gz_unwrap_near(&u, UINT64_MAX - 1, 0), UINT64_MAX - 1);
    CHECK_U64(gz_unwrap_near(&u, 3, UINT64_MAX), 3);
    CHECK_U64(gz_unwrap_wraps(&u), 0);
    return 0;
}

/* The whole path the worker takes, on random clocks: any N, any period, any
 * wrap phase, drift in ±500 ppm; calibrated samples every 0.5 s; each
 * timestamp unwrapped with a prediction from the model, converted relative
 * to the first one (so that ns never overflow), mapped. Every time must
 * come out within the stated bound of the truth. */
static int test_property_random_clocks(void)
{
    static const uint32_t bits_choices[] = {32, 36, 40, 48, 64};
    static const double periods[] = {1.0, 52.083333, 83.333333, 0.5, 10.0};
    const int64_t bound_ns = 200;
    for (int trial = 0; trial < 200; trial++) {
        uint32_t bits = bits_choices[rnd() % 5];
        double period = periods[rnd() % 5];
        double ppm = (rnd01() * 2 - 1) * 500;
        uint64_t mask = gz_ticks_mask(bits);
        /* Any phase of an N-bit counter; a 64-bit one starts where real
         * ones do, some years of ticks from 0 at most. */
        uint64_t phase = rnd() & (bits < 64 ? mask : (1ull << 56) - 1);
        uint64_t host0 = 1000 * SEC + rnd() % (100 * SEC);
        /* GPU ticks as a function of host time (the truth). */
#define TRUE_TICKS(h) (phase + (uint64_t)((double)((h) - host0) * (1.0 + ppm * 1e-6) / period))
        gz_tick_period tp = gz_tick_period_from_ns(period);
        gz_unwrap u;
        gz_unwrap_init(&u, bits);
        gz_clock_model m;
        gz_model_init(&m);
        uint64_t origin = 0;
        for (uint64_t h = host0; h < host0 + 10 * SEC; h += SEC / 2) {
            uint64_t raw = TRUE_TICKS(h) & mask;
            uint64_t pred = origin + gz_ns_to_ticks(gz_model_to_gpu(&m, h), period);
            uint64_t ticks = gz_unwrap_near(&u, raw, pred);
            if (h == host0)
                origin = ticks;
            gz_calib_pair p = pair(gz_ticks_to_ns(ticks - origin, tp), h, 20);
            gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
            gz_model_fit(&m);
            /* A zone 1-300 ms later, read back with its submit as hint. */
            uint64_t zh = h + 1000000 + rnd() % 300000000;
            uint64_t zraw = TRUE_TICKS(zh) & mask;
            uint64_t zpred = origin + gz_ns_to_ticks(gz_model_to_gpu(&m, h), period);
            uint64_t zt = gz_unwrap_near(&u, zraw, zpred);
            int64_t e = (int64_t)(gz_model_to_host(&m, gz_ticks_to_ns(zt - origin, tp)) - zh);
            /* Extrapolating up to 300 ms with the drift still uncertain in
             * the first second: allow that, then hold to the bound. */
            int64_t allowed = h < host0 + SEC ? 300000 : bound_ns + (int64_t)(300e-3 * 1e3);
            if (llabs(e) > allowed) {
                fprintf(stderr,
                        "trial %d: bits %u period %g ppm %.1f: error %lld ns at %.3f s "
                        "(allowed %lld)\n",
                        trial, bits, period, ppm, (long long)e, (double)(zh - host0) / 1e9,
                        (long long)allowed);
                return 1;
            }
        }
#undef TRUE_TICKS
    }
    return 0;
}

int main(void)
{
    int failed = 0;
    failed += run("ticks mask", test_mask);
    failed += run("period 1 ns and other exact periods", test_period_one);
    failed += run("fractional periods vs long double", test_period_fraction);
    failed += run("bad periods fall back to 1 ns", test_period_bad);
    failed += run("tick conversion saturates", test_saturation);
    failed += run("best of calibrated samples", test_sample_best);
    failed += run("method names", test_method_names);
    failed += run("model: calibrated pairs", test_model_calibrated);
    failed += run("model: 100 ppm drift", test_model_drift);
    failed += run("model: bounds and sync points only", test_model_bounds_only);
    failed += run("model: drift over idle and busy phases, from the widest band",
                  test_model_drift_centred);
    failed += run("model: step in the GPU counter", test_model_step);
    failed += run("model: a loose outlier changes nothing", test_model_loose_outlier);
    failed += run("model: a bound in the wrong wrap is no step", test_model_wrong_wrap_bound);
    failed += run("model: a bound just past a step waits for the next pair", test_model_bound_just_past_step);
    failed += run("model: a step inside one bucket", test_model_step_inside_bucket);
    failed += run("model: a step inside busy work, placed by the zones' gaps",
                  test_model_step_in_busy_work);
    failed += run("model: a step after a frame behind a slow sync point",
                  test_model_step_after_slow_sync_point);
    failed += run("model: a step seen in part is a step, not a tilt", test_model_step_seen_in_part);
    failed += run("model: a step is placed again when completions come late",
                  test_model_step_placed_again);
    failed += run("model: a step in a host stall goes to the likelier gap",
                  test_model_step_in_host_stall);
    failed += run("model: a step placed again keeps its doubt",
                  test_model_step_in_host_stall_doubt_kept);
    failed += run("model: a step after work queued behind a stall",
                  test_model_step_after_queued_work);
    failed += run("model: a step before completions seen late, placed by the begins",
                  test_model_step_before_late_completions);
    failed += run("model: a step shown small first is still a step",
                  test_model_step_shown_small_first);
    failed += run("model: a step found late is not one with the step before",
                  test_model_step_found_late);
    failed += run("model: a step before a stalled frame, stalls alike",
                  test_model_step_before_a_stalled_frame);
    failed += run("model: a step re-sized after it was placed is placed again",
                  test_model_step_resized);
    failed += run("model: the line after a step rests on times after it only",
                  test_model_step_line_after_it);
    failed += run("model: sync points a second apart leave drift to the bounds",
                  test_model_sparse_sync_points);
    failed += run("model: a GPU clock from the Unix epoch, to the ns", test_model_epoch_clock);
    failed += run("model: one-sided bounds", test_model_one_sided);
    failed += run("model: saturation", test_model_saturation);
    failed += run("unwrap: N bits, several wraps, out of order", test_unwrap);
    failed += run("property: random clocks through the whole path", test_property_random_clocks);
    printf("%d group(s) failed\n", failed);
    return failed ? 1 : 0;
}
