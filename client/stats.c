/* Duration statistics with a log-linear histogram.
 *
 * Bucket layout, with S = GZ_STATS_SUB_BITS and N = 2^S sub-buckets:
 * values below 2N each get their own bucket (index = value); a value v with
 * its highest set bit at e >= S + 1 goes to range e - S, split linearly into
 * N buckets of width 2^(e - S) by the S bits below the top bit. The top
 * range (e = 63) ends at index 61 * N - 1, inside GZ_STATS_BUCKETS. A bucket
 * is at least N times narrower than its lowest value, so its midpoint is
 * within 1/(2N) of any value in it. */
#include "gz_stats.h"

#include <string.h>

#define SUB_COUNT (1u << GZ_STATS_SUB_BITS)

_Static_assert((65 - GZ_STATS_SUB_BITS) * SUB_COUNT <= GZ_STATS_BUCKETS,
               "the top range fits in the histogram");

static unsigned top_bit(uint64_t v) /* v != 0 */
{
    return 63u - (unsigned)__builtin_clzll(v);
}

static unsigned bucket_of(uint64_t v)
{
    if (v < 2 * SUB_COUNT)
        return (unsigned)v;
    unsigned e = top_bit(v);
    unsigned shift = e - GZ_STATS_SUB_BITS;
    unsigned sub = (unsigned)(v >> shift) & (SUB_COUNT - 1);
    return (e - GZ_STATS_SUB_BITS + 1) * SUB_COUNT + sub;
}

/* Lowest value and width of bucket i: the inverse of bucket_of. */
static void bucket_range(unsigned i, uint64_t *low, uint64_t *width)
{
    if (i < 2 * SUB_COUNT) {
        *low = i;
        *width = 1;
        return;
    }
    unsigned shift = i / SUB_COUNT - 1; /* = e - GZ_STATS_SUB_BITS */
    uint64_t sub = i % SUB_COUNT;
    *low = (SUB_COUNT + sub) << shift;
    *width = 1ull << shift;
}

void gz_stats_init(gz_stats *s)
{
    memset(s, 0, sizeof(*s));
}

void gz_stats_add(gz_stats *s, uint64_t ns)
{
    if (s->count == 0) {
        s->min_ns = ns;
        s->max_ns = ns;
    } else {
        if (ns < s->min_ns)
            s->min_ns = ns;
        if (ns > s->max_ns)
            s->max_ns = ns;
    }
    if (s->count != UINT64_MAX)
        s->count++;
    s->total_ns = ns > UINT64_MAX - s->total_ns ? UINT64_MAX : s->total_ns + ns;
    uint32_t *h = &s->hist[bucket_of(ns)];
    if (*h != UINT32_MAX)
        (*h)++;
}

uint64_t gz_stats_quantile(const gz_stats *s, double q)
{
    if (s->count == 0)
        return 0;

    /* Rank over the histogram's own total: it falls short of count once a
     * bucket has saturated, and the walk below must reach its rank. */
    uint64_t n = 0;
    for (unsigned i = 0; i < GZ_STATS_BUCKETS; i++)
        n += s->hist[i];

    /* Nearest rank: the smallest value with at least q * n values at or
     * below it, i.e. rank ceil(q * n) in 1..n. !(q > 0) also catches NaN. */
    if (!(q > 0))
        q = 0;
    if (q > 1)
        q = 1;
    double want = q * (double)n;
    uint64_t rank = (uint64_t)want;
    if ((double)rank < want)
        rank++;
    /* The extreme ranks are min and max, which are known exactly. */
    if (rank <= 1)
        return s->min_ns;
    if (rank >= n)
        return s->max_ns;

    uint64_t seen = 0;
    for (unsigned i = 0; i < GZ_STATS_BUCKETS; i++) {
        seen += s->hist[i];
        if (seen >= rank) {
            uint64_t low, width;
            bucket_range(i, &low, &width);
            uint64_t mid = low + (width - 1) / 2; /* no overflow at the top */
            if (mid < s->min_ns)
                return s->min_ns;
            if (mid > s->max_ns)
                return s->max_ns;
            return mid;
        }
    }
    return s->max_ns; /* not reached: seen ends at n >= rank */
}

uint64_t gz_stats_mean(const gz_stats *s)
{
    return s->count ? s->total_ns / s->count : 0;
}
