/* Cost of the clock model on the worker: one refit with a full window
 * (1024 buckets of constraints), and one GPU → host conversion. Printed as
 * a table of medians; the fit runs at most once per drain cycle (20 ms). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gz_calibration.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    enum { RUNS = 15 };
    double fit[RUNS], conv[RUNS];
    uint64_t refits = 0, adds = 0;
    static gz_clock_model m;
    volatile uint64_t sink = 0;
    for (int r = 0; r < RUNS; r++) {
        gz_model_init(&m);
        /* 20 s of submissions every 5 ms with bounds, sync points each
         * second, 30 ppm drift: the window fills up. */
        uint64_t host = 1000000000000ull;
        for (int i = 0; i < 4000; i++, host += 5000000) {
            uint64_t gpu = (uint64_t)((double)host * (1 + 30e-6)) - 777777;
            gz_model_add_bounds(&m, gpu + 20000, host, gpu + 400000, host + 2000000);
            if (i % 200 == 0) {
                gz_calib_pair p = {gpu + 50000, host + 50000 - 1500, 5000};
                gz_model_add_pair(&m, GZ_CALIB_SYNC_POINT, &p);
            }
        }
        m.dirty = true; /* time one full refit */
        double t0 = now_ns();
        gz_model_fit(&m);
        fit[r] = now_ns() - t0;
        /* And how many refits the same stream needs when fitted as the
         * worker does, after every few constraints. */
        gz_clock_model *live = malloc(sizeof *live);
        gz_model_init(live);
        host = 1000000000000ull;
        for (int i = 0; i < 4000; i++, host += 5000000) {
            uint64_t gpu = (uint64_t)((double)host * (1 + 30e-6)) - 777777;
            gz_model_add_bounds(live, gpu + 20000, host, gpu + 400000, host + 2000000);
            if (i % 200 == 0) {
                gz_calib_pair p = {gpu + 50000, host + 50000 - 1500, 5000};
                gz_model_add_pair(live, GZ_CALIB_SYNC_POINT, &p);
            }
            if (i % 4 == 0)
                gz_model_fit(live);
        }
        refits = live->refits;
        adds = 4000;
        free(live);
        t0 = now_ns();
        for (int i = 0; i < 100000; i++)
            sink += gz_model_to_host(&m, host + (uint64_t)i * 1000);
        conv[r] = (now_ns() - t0) / 100000;
    }
    qsort(fit, RUNS, sizeof fit[0], cmp);
    qsort(conv, RUNS, sizeof conv[0], cmp);
    printf("clock model, window of %u buckets (%u in use), medians of %d runs\n",
           GZ_MODEL_BUCKETS, m.count, RUNS);
    printf("%-36s %12s\n", "", "ns");
    printf("%-36s %12.0f\n", "one refit (full window)", fit[RUNS / 2]);
    printf("%-36s %12.1f\n", "one GPU ns -> host ns conversion", conv[RUNS / 2]);
    printf("%-36s %12.2f\n", "refit share of a 20 ms cycle (%)", fit[RUNS / 2] / 20e6 * 100);
    printf("%-36s %12llu\n", "refits for 4000 submissions (1000 fit calls)",
           (unsigned long long)refits);
    (void)adds;
    return (int)(sink & 0);
}
