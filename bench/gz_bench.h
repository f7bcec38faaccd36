/* Helpers the benchmark programs share: a clock read and a median. */
#ifndef GZ_BENCH_H
#define GZ_BENCH_H

#include <stdlib.h>
#include <time.h>

static inline double gz_bench_clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int gz_bench_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place. */
static inline double gz_bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, gz_bench_by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
