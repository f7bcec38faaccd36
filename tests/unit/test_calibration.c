/* Unit tests for calibration/: tick masks and conversion, best-of sampling,
 * the offset model. Plain C; exit status 0 when every group passes. */
#include "gz_calibration.h"
#include "gz_check.h"

#include <math.h>
#include <stdio.h>
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

static int test_model_bounds(void)
{
    gz_clock_model m;
    gz_model_init(&m);
    CHECK_U64(m.method, GZ_CALIB_NONE);
    CHECK_U64(gz_model_to_host(&m, 12345), 12345); /* identity */

    /* offset in [5000 - 1000, 8000 - 2000] = [4000, 6000] */
    gz_model_add_bounds(&m, 1000, 5000, 2000, 8000);
    CHECK_U64(m.method, GZ_CALIB_BOUNDS);
    CHECK_I64(m.offset_ns, 5000);
    CHECK_U64(m.deviation_ns, 1000);
    CHECK_U64(gz_model_to_host(&m, 1500), 6500);

    /* A tighter lower bound moves the middle; a looser upper one does not. */
    gz_model_add_bounds(&m, 1000, 5500, 0, 0);
    CHECK_I64(m.offset_ns, 5250);
    gz_model_add_bounds(&m, 0, 0, 2000, 9000);
    CHECK_I64(m.offset_ns, 5250);
    CHECK_I64(m.bound_hi, 6000);
    /* A tighter upper bound with a looser lower one in the same call. */
    gz_model_add_bounds(&m, 1000, 4000, 2000, 7800);
    CHECK_I64(m.bound_lo, 4500);
    CHECK_I64(m.bound_hi, 5800);
    CHECK_I64(m.offset_ns, 5150);
    CHECK_U64(m.samples, 3);

    /* One side only: that bound is the offset. */
    gz_model_init(&m);
    gz_model_add_bounds(&m, 100, 700, 0, 0);
    CHECK_U64(m.method, GZ_CALIB_BOUNDS);
    CHECK_I64(m.offset_ns, 600);
    gz_model_init(&m);
    gz_model_add_bounds(&m, 0, 0, 300, 200);
    CHECK_U64(m.method, GZ_CALIB_BOUNDS);
    CHECK_I64(m.offset_ns, -100);
    CHECK_U64(gz_model_to_host(&m, 1000), 900);

    /* Nothing known: no change. */
    gz_model_init(&m);
    gz_model_add_bounds(&m, 5, 0, 6, 0);
    CHECK_U64(m.method, GZ_CALIB_NONE);
    CHECK_U64(m.samples, 0);
    return 0;
}

static int test_model_methods(void)
{
    gz_clock_model m;
    gz_model_init(&m);
    gz_model_add_bounds(&m, 1000, 5000, 2000, 8000); /* [4000, 6000] */

    /* A sync point is a bracket: offset in [5050, 5150], intersected with
     * the bounds [4000, 6000]; its method is reported. */
    gz_calib_pair p = pair(1000, 6100, 50);
    gz_model_add_pair(&m, GZ_CALIB_SYNC_POINT, &p);
    CHECK_U64(m.method, GZ_CALIB_SYNC_POINT);
    CHECK_I64(m.bound_lo, 5050);
    CHECK_I64(m.bound_hi, 5150);
    CHECK_I64(m.offset_ns, 5100);
    CHECK_U64(m.deviation_ns, 50);
    /* A looser bound changes nothing; a tighter one moves the middle even
     * though a sync point set the method (its own middle may be biased by
     * submission latency). */
    gz_model_add_bounds(&m, 1000, 5900, 0, 0);
    CHECK_I64(m.bound_lo, 5050);
    CHECK_I64(m.offset_ns, 5100);
    gz_model_add_bounds(&m, 0, 0, 2000, 7120); /* hi 5120 */
    CHECK_I64(m.offset_ns, 5085);
    CHECK_U64(m.method, GZ_CALIB_SYNC_POINT);

    /* Calibrated beats sync, even with a wider deviation ... */
    p = pair(1000, 6010, 100);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    CHECK_U64(m.method, GZ_CALIB_CALIBRATED);
    CHECK_I64(m.offset_ns, 5010);
    /* ... and a sync point no longer counts. */
    p = pair(1000, 6000, 1);
    gz_model_add_pair(&m, GZ_CALIB_SYNC_POINT, &p);
    CHECK_U64(m.method, GZ_CALIB_CALIBRATED);
    CHECK_I64(m.offset_ns, 5010);

    /* Same method: newer wins within twice the deviation in use. */
    p = pair(2000, 7020, 200);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    CHECK_I64(m.offset_ns, 5020);
    CHECK_U64(m.deviation_ns, 200);
    p = pair(2000, 9000, 401);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    CHECK_I64(m.offset_ns, 5020);
    p = pair(3000, 8030, 10);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    CHECK_I64(m.offset_ns, 5030);
    CHECK_U64(m.deviation_ns, 10);
    CHECK_U64(m.samples, 6); /* bounds, sync, tighter bound, calibrated x3 */

    /* Calibrated stays even far outside the bounds: bounds are a fallback. */
    gz_model_add_bounds(&m, 0, 0, 2000, 2500); /* hi = 500 */
    CHECK_U64(m.method, GZ_CALIB_CALIBRATED);
    CHECK_I64(m.offset_ns, 5030);
    CHECK_U64(gz_model_to_host(&m, 10000), 15030);

    /* add_pair ignores methods that are not pairs. */
    p = pair(0, 1, 0);
    gz_model_add_pair(&m, GZ_CALIB_BOUNDS, &p);
    gz_model_add_pair(&m, GZ_CALIB_NONE, &p);
    CHECK_I64(m.offset_ns, 5030);

    /* On a fresh model a sync point takes over from NONE. */
    gz_model_init(&m);
    p = pair(100, 50, 3);
    gz_model_add_pair(&m, GZ_CALIB_SYNC_POINT, &p);
    CHECK_U64(m.method, GZ_CALIB_SYNC_POINT);
    CHECK_I64(m.offset_ns, -50);
    return 0;
}

static int test_model_saturation(void)
{
    gz_clock_model m;
    gz_calib_pair p;

    /* Negative offset: early GPU times clamp at host 0. */
    gz_model_init(&m);
    p = pair(1000000000000ull, 5, 0);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    CHECK_U64(gz_model_to_host(&m, 0), 0);
    CHECK_U64(gz_model_to_host(&m, 999999999994ull), 0);
    CHECK_U64(gz_model_to_host(&m, 999999999995ull), 0);
    CHECK_U64(gz_model_to_host(&m, 999999999996ull), 1);
    CHECK_U64(gz_model_to_host(&m, 1000000000000ull), 5);

    /* Offsets beyond int64 clamp instead of overflowing. */
    gz_model_init(&m);
    p = pair(0, UINT64_MAX, 0);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    CHECK_I64(m.offset_ns, INT64_MAX);
    CHECK_U64(gz_model_to_host(&m, UINT64_MAX), UINT64_MAX);
    CHECK_U64(gz_model_to_host(&m, 1ull << 63), UINT64_MAX);
    gz_model_init(&m);
    p = pair(UINT64_MAX, 0, 0);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    CHECK_I64(m.offset_ns, INT64_MIN);
    CHECK_U64(gz_model_to_host(&m, 5), 0);
    CHECK_U64(gz_model_to_host(&m, UINT64_MAX), (1ull << 63) - 1);

    /* Absurd, contradicting bounds: defined results, no overflow. */
    gz_model_init(&m);
    gz_model_add_bounds(&m, 0, UINT64_MAX, UINT64_MAX, 1);
    CHECK_U64(m.method, GZ_CALIB_BOUNDS);
    CHECK_I64(m.bound_lo, INT64_MAX);
    CHECK_I64(m.bound_hi, INT64_MIN);
    CHECK_I64(m.offset_ns, 0);
    CHECK_U64(m.deviation_ns, 1ull << 63);

    /* The widening rule does not overflow on a huge deviation. */
    gz_model_init(&m);
    p = pair(0, 10, UINT64_MAX);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    p = pair(0, 20, UINT64_MAX);
    gz_model_add_pair(&m, GZ_CALIB_CALIBRATED, &p);
    CHECK_I64(m.offset_ns, 20);
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
    failed += run("model: bounds only", test_model_bounds);
    failed += run("model: calibrated > sync > bounds", test_model_methods);
    failed += run("model: saturation and overflow", test_model_saturation);
    printf("%d group(s) failed\n", failed);
    return failed ? 1 : 0;
}
