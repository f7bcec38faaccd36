/* Duration statistics for the exit summary: exact count/total/min/max and
 * percentiles from a log-linear histogram, so memory per zone name is fixed
 * whatever the run length. */
#ifndef GZ_STATS_H
#define GZ_STATS_H

#include <stdint.h>

/* 64 power-of-two ranges, each split into 2^GZ_STATS_SUB_BITS linear
 * sub-buckets: a percentile is reported within 1/2^(GZ_STATS_SUB_BITS+1)
 * relative error (values below 2^GZ_STATS_SUB_BITS ns are exact). */
#define GZ_STATS_SUB_BITS 4
#define GZ_STATS_BUCKETS (64 << GZ_STATS_SUB_BITS)

typedef struct gz_stats {
    uint64_t count;
    uint64_t total_ns; /* saturating */
    uint64_t min_ns;
    uint64_t max_ns;
    uint32_t hist[GZ_STATS_BUCKETS]; /* saturating counts */
} gz_stats;

void gz_stats_init(gz_stats *s);
void gz_stats_add(gz_stats *s, uint64_t ns);
/* q in [0, 1]; 0 for an empty set. The result is clamped to [min, max]. */
uint64_t gz_stats_quantile(const gz_stats *s, double q);
uint64_t gz_stats_mean(const gz_stats *s);

#endif
