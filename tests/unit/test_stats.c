/* Unit tests for client/stats.c: exact count/total/min/max/mean and
 * histogram percentiles within the relative error gz_stats.h promises. */
#include "gz_check.h"
#include "gz_stats.h"

#include <math.h>
#include <stdio.h>

#define CHECK_REL(got, want)                                                                       \
    do {                                                                                           \
        unsigned long long g_ = (got), w_ = (want);                                                \
        unsigned __int128 d_ = g_ > w_ ? g_ - w_ : w_ - g_;                                        \
        if ((d_ << (GZ_STATS_SUB_BITS + 1)) > w_) {                                                \
            fprintf(stderr, "%s:%d: %s ~ %s: %llu is too far from %llu\n", __FILE__, __LINE__,    \
                    #got, #want, g_, w_);                                                          \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static gz_stats s; /* large: keep it off the stack */

static int test_empty(void)
{
    gz_stats_init(&s);
    CHECK_U64(s.count, 0);
    CHECK_U64(gz_stats_mean(&s), 0);
    CHECK_U64(gz_stats_quantile(&s, 0.0), 0);
    CHECK_U64(gz_stats_quantile(&s, 0.5), 0);
    CHECK_U64(gz_stats_quantile(&s, 1.0), 0);
    CHECK_U64(gz_stats_quantile(&s, NAN), 0);
    return 0;
}

static int test_small_exact(void)
{
    gz_stats_init(&s);
    const uint64_t v[] = {15, 7, 3, 31, 7};
    for (unsigned i = 0; i < 5; i++)
        gz_stats_add(&s, v[i]);
    CHECK_U64(s.count, 5);
    CHECK_U64(s.total_ns, 63);
    CHECK_U64(s.min_ns, 3);
    CHECK_U64(s.max_ns, 31);
    CHECK_U64(gz_stats_mean(&s), 12);
    /* sorted: 3 7 7 15 31; nearest rank = ceil(q * 5) */
    CHECK_U64(gz_stats_quantile(&s, 0.0), 3);
    CHECK_U64(gz_stats_quantile(&s, 0.2), 3);
    CHECK_U64(gz_stats_quantile(&s, 0.21), 7);
    CHECK_U64(gz_stats_quantile(&s, 0.4), 7);
    CHECK_U64(gz_stats_quantile(&s, 0.5), 7);
    CHECK_U64(gz_stats_quantile(&s, 0.8), 15);
    CHECK_U64(gz_stats_quantile(&s, 0.95), 31);
    CHECK_U64(gz_stats_quantile(&s, 1.0), 31);
    /* out-of-range q clamps */
    CHECK_U64(gz_stats_quantile(&s, -3.0), 3);
    CHECK_U64(gz_stats_quantile(&s, 7.0), 31);

    /* Zero is a value like any other. */
    gz_stats_init(&s);
    gz_stats_add(&s, 0);
    gz_stats_add(&s, 0);
    gz_stats_add(&s, 9);
    CHECK_U64(s.min_ns, 0);
    CHECK_U64(gz_stats_quantile(&s, 0.5), 0);
    CHECK_U64(gz_stats_mean(&s), 3);
    return 0;
}

static int test_one_to_thousand(void)
{
    gz_stats_init(&s);
    /* Added in a scrambled order: 7 is coprime with 1000. */
    for (uint64_t i = 0; i < 1000; i++)
        gz_stats_add(&s, (i * 7) % 1000 + 1);
    CHECK_U64(s.count, 1000);
    CHECK_U64(s.total_ns, 500500);
    CHECK_U64(s.min_ns, 1);
    CHECK_U64(s.max_ns, 1000);
    CHECK_U64(gz_stats_mean(&s), 500);
    CHECK_REL(gz_stats_quantile(&s, 0.5), 500);
    CHECK_REL(gz_stats_quantile(&s, 0.95), 950);
    CHECK_REL(gz_stats_quantile(&s, 0.99), 990);
    CHECK_U64(gz_stats_quantile(&s, 0.0), 1);
    CHECK_U64(gz_stats_quantile(&s, 1.0), 1000);
    /* Every percentile, against the exact nearest rank. */
    for (unsigned k = 0; k <= 1000; k++) {
        double q = k / 1000.0;
        uint64_t rank = (uint64_t)ceil(q * 1000);
        uint64_t want = rank ? rank : 1;
        CHECK_REL(gz_stats_quantile(&s, q), want);
    }
    return 0;
}

/* {1, v, max}: the median is v's bucket, reported within the promised error;
 * run across the whole 64-bit range and around every power of two. */
static int test_bucket_edges(void)
{
    for (unsigned b = 0; b < 64; b++) {
        uint64_t p = 1ull << b;
        const uint64_t cand[] = {p - 1, p, p + 1, p + p / 3, p + p / 2 + 7};
        for (unsigned j = 0; j < 5; j++) {
            uint64_t v = cand[j];
            if (v < 2)
                continue;
            gz_stats_init(&s);
            gz_stats_add(&s, 1);
            gz_stats_add(&s, v);
            gz_stats_add(&s, UINT64_MAX);
            uint64_t got = gz_stats_quantile(&s, 0.5);
            CHECK_REL(got, v);
            if (v < (2u << GZ_STATS_SUB_BITS))
                CHECK_U64(got, v); /* small values are exact */
        }
    }
    return 0;
}

static int test_single_and_clamp(void)
{
    /* The bucket midpoint is clamped to [min, max]. */
    gz_stats_init(&s);
    for (int i = 0; i < 10; i++)
        gz_stats_add(&s, 1234567);
    CHECK_U64(gz_stats_quantile(&s, 0.0), 1234567);
    CHECK_U64(gz_stats_quantile(&s, 0.5), 1234567);
    CHECK_U64(gz_stats_quantile(&s, 1.0), 1234567);
    CHECK_U64(gz_stats_mean(&s), 1234567);

    /* Two values in one bucket: results stay inside [min, max]. */
    gz_stats_init(&s);
    for (int i = 0; i < 5; i++) {
        gz_stats_add(&s, 1000000);
        gz_stats_add(&s, 1000001);
    }
    uint64_t m = gz_stats_quantile(&s, 0.5);
    CHECK(m >= 1000000 && m <= 1000001);

    /* The first and last ranks are min and max exactly, not a midpoint:
     * min and 1012345 share a bucket whose middle lies between them, and
     * max sits above the middle of its bucket. */
    gz_stats_init(&s);
    gz_stats_add(&s, 984000);
    gz_stats_add(&s, 1012345);
    for (int i = 0; i < 3; i++)
        gz_stats_add(&s, 5200000);
    gz_stats_add(&s, 5190000);
    CHECK_U64(gz_stats_quantile(&s, 0.0), 984000);
    CHECK_U64(gz_stats_quantile(&s, 1.0 / 6), 984000);
    CHECK_U64(gz_stats_quantile(&s, 1.0), 5200000);
    CHECK_REL(gz_stats_quantile(&s, 0.5), 5200000);
    return 0;
}

static int test_saturation(void)
{
    gz_stats_init(&s);
    gz_stats_add(&s, UINT64_MAX);
    gz_stats_add(&s, UINT64_MAX);
    gz_stats_add(&s, 5);
    CHECK_U64(s.total_ns, UINT64_MAX);
    CHECK_U64(s.max_ns, UINT64_MAX);
    CHECK_U64(s.min_ns, 5);
    CHECK_U64(gz_stats_mean(&s), UINT64_MAX / 3);
    CHECK_U64(gz_stats_quantile(&s, 0.5), UINT64_MAX - (1ull << 58)); /* top bucket's middle */

    /* A histogram count stops at UINT32_MAX; quantiles still resolve. */
    gz_stats_init(&s);
    gz_stats_add(&s, 100);
    unsigned bucket = GZ_STATS_BUCKETS;
    for (unsigned i = 0; i < GZ_STATS_BUCKETS; i++)
        if (s.hist[i])
            bucket = i;
    CHECK(bucket < GZ_STATS_BUCKETS);
    s.hist[bucket] = UINT32_MAX - 1;
    gz_stats_add(&s, 100);
    gz_stats_add(&s, 100);
    CHECK_U64(s.hist[bucket], UINT32_MAX);
    gz_stats_add(&s, 5000);
    CHECK_REL(gz_stats_quantile(&s, 0.5), 100);
    CHECK_U64(gz_stats_quantile(&s, 1.0), 5000);

    /* The count saturates too. */
    s.count = UINT64_MAX;
    gz_stats_add(&s, 1);
    CHECK_U64(s.count, UINT64_MAX);
    CHECK_U64(s.min_ns, 1);
    return 0;
}

int main(void)
{
    int failed = 0;
    failed += run("empty set", test_empty);
    failed += run("small values exact", test_small_exact);
    failed += run("1..1000: min/max/mean exact, percentiles", test_one_to_thousand);
    failed += run("bucket edges over 64 bits", test_bucket_edges);
    failed += run("single value and clamping", test_single_and_clamp);
    failed += run("saturation", test_saturation);
    printf("%d group(s) failed\n", failed);
    return failed ? 1 : 0;
}
