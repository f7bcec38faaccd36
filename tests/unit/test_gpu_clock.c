/* Unit tests for client/gpu_clock.c: when the model counts as settled, and
 * what a zone converted right then is off by. The case is the one CI hit:
 * the first calibrated sample came back wide (a slow read on a loaded
 * machine), the clock drifts 1000 ppm, and the zones of the first second
 * were placed by a zero drift that the wide sample did not refute. */
#include "gz_gpu_clock.h"
#include "gz_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define DRIFT 1e-3            /* GPU clock runs 1000 ppm fast */
#define HOST0 5000000000000ull /* host ns at GPU tick 0 */

/* GPU ticks (1 ns period, 64 bits) at host time h. */
static uint64_t gpu_at(uint64_t host_ns)
{
    return (uint64_t)llround((double)(host_ns - HOST0) * (1.0 + DRIFT)) + 7000000000ull;
}

static void add(gz_gpu_clock *c, uint64_t host_ns, uint64_t deviation_ns, int64_t error_ns)
{
    gz_gpu_clock_add_pair(c, GZ_CALIB_CALIBRATED, gpu_at(host_ns), (uint64_t)((int64_t)host_ns + error_ns),
                          deviation_ns);
}

/* Host ns the clock places GPU work at, that truly ran at host_ns. */
static double placed_error_us(gz_gpu_clock *c, uint64_t host_ns)
{
    uint64_t raw = gpu_at(host_ns), b, e;
    gz_gpu_clock_zone_ns(c, raw, raw, 0, &b, &e);
    gz_gpu_clock_fit(c);
    return ((double)gz_gpu_clock_to_host(c, b) - (double)host_ns) / 1000.0;
}

static int test_wide_first_sample(void)
{
    gz_gpu_clock c;
    gz_gpu_clock_init(&c, 1.0, 64);
    uint64_t t0 = HOST0 + 1000000000ull;
    /* 2 ms wide, and off by 1.5 ms inside that. */
    add(&c, t0, 2000000, 1500000);
    CHECK(!gz_gpu_clock_settled(&c));
    /* Tight samples every 100 ms: the first is the new anchor, the second
     * settles the clock. */
    add(&c, t0 + 100000000ull, 2000, 0);
    CHECK(!gz_gpu_clock_settled(&c));
    add(&c, t0 + 200000000ull, 2000, 0);
    CHECK(gz_gpu_clock_settled(&c));
    /* Work at the very start and between the samples lands within a few
     * microseconds (the drift is known to 40 ppm over 100 ms). */
    for (uint64_t dt = 0; dt <= 200000000ull; dt += 25000000ull) {
        double err = placed_error_us(&c, t0 + dt);
        if (fabs(err) > 10.0) {
            fprintf(stderr, "work at +%llu ms placed %.3f us off\n",
                    (unsigned long long)(dt / 1000000), err);
            return 1;
        }
    }
    return 0;
}

static int test_wide_samples_do_not_settle(void)
{
    gz_gpu_clock c;
    gz_gpu_clock_init(&c, 1.0, 64);
    uint64_t t0 = HOST0 + 1000000000ull;
    /* 1 s apart, each 60 us wide: the drift is known only to 120 ppm. */
    add(&c, t0, 60000, 0);
    add(&c, t0 + 1000000000ull, 60000, 0);
    CHECK(!gz_gpu_clock_settled(&c));
    /* 2 s apart: 60 ppm, settled. */
    add(&c, t0 + 2000000000ull, 60000, 0);
    CHECK(gz_gpu_clock_settled(&c));
    return 0;
}

static int test_close_samples_do_not_settle(void)
{
    gz_gpu_clock c;
    gz_gpu_clock_init(&c, 1.0, 64);
    uint64_t t0 = HOST0 + 1000000000ull;
    for (uint64_t dt = 0; dt < 100000000ull; dt += 10000000ull) {
        add(&c, t0 + dt, 1000, 0);
        CHECK(!gz_gpu_clock_settled(&c));
    }
    add(&c, t0 + 100000000ull, 1000, 0);
    CHECK(gz_gpu_clock_settled(&c));
    return 0;
}

int main(void)
{
    int failed = 0;
    failed += run("a wide first sample is not the anchor", test_wide_first_sample);
    failed += run("wide samples settle only far apart", test_wide_samples_do_not_settle);
    failed += run("samples closer than 100 ms do not settle", test_close_samples_do_not_settle);
    printf("%d group(s) failed\n", failed);
    return failed ? 1 : 0;
}
