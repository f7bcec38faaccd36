/* Cost of the clock model on the worker: one refit with a full window
 * (1024 buckets of constraints), one GPU → host conversion, and all the
 * model costs per zone in a steady program, on a clock with calibrated
 * timestamps and on one with sync points only. Printed as a table of
 * medians; the fit runs at most once per drain cycle (20 ms). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gz_calibration.h"

enum { RUNS = 15 };

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

static double median(double *v)
{
    qsort(v, RUNS, sizeof v[0], cmp);
    return v[RUNS / 2];
}

/* What the worker hands the model, in order. */
typedef enum { OP_PAIR, OP_BOUNDS, OP_ZONE, OP_FIT, OP_CONVERT } op_kind;
typedef struct op {
    op_kind kind;
    uint64_t a, b, c, d;
} op;

typedef struct stream {
    op *ops;
    size_t n, cap, steady; /* ops[steady..n): after the window has filled */
    uint64_t zones, steady_zones;
} stream;

static void push(stream *s, op o)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4096;
        s->ops = realloc(s->ops, s->cap * sizeof *s->ops);
        if (!s->ops) {
            fprintf(stderr, "gz-bench-model-fit: out of memory\n");
            exit(2);
        }
    }
    s->ops[s->n++] = o;
}

/* A small deterministic generator: the same stream every run. */
static uint64_t rnd(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717ull;
}

/* 30 s of a program at 60 frames a second, 4 submissions a frame of
 * per_submit zones each (4: 960 zones a second), on a GPU clock 20 ppm
 * fast: each
 * submission's bounds (work begins 10-60 us after the submit, is seen
 * complete 20-520 us after it ends), a pair every 100 ms (calibrated:
 * within the driver's 1 us; else sync points in brackets 5-40 us wide),
 * and every 20 ms a drain cycle: a fit, then the zones converted (two
 * times and their doubt each). */
static stream program(bool calibrated, int per_submit)
{
    stream s = {0};
    uint64_t x = 88172645463325252ull;
    const uint64_t host0 = 1000000000000ull, frame = 16666667, drain = 20000000;
    uint64_t next_pair = host0, next_drain = host0 + drain, pending = 0;
    for (uint64_t f = 0; f < 30 * 60; f++) {
        uint64_t fh = host0 + f * frame;
        if (!s.steady && fh >= host0 + 10000000000ull) {
            s.steady = s.n;
            s.steady_zones = s.zones;
        }
        for (int sub = 0; sub < 4; sub++) {
            uint64_t submit = fh + (uint64_t)sub * 1000000;
            if (submit >= next_pair) {
                uint64_t w = calibrated ? 1000 : 5000 + rnd(&x) % 35000;
                uint64_t taken = submit + rnd(&x) % w;
                uint64_t gpu = (uint64_t)((double)taken * (1 + 20e-6)) - 777777;
                push(&s, (op){OP_PAIR, calibrated ? GZ_CALIB_CALIBRATED : GZ_CALIB_SYNC_POINT, gpu,
                              submit + w / 2, w / 2});
                next_pair += 100000000;
            }
            uint64_t begin = submit + 10000 + rnd(&x) % 50000, end = begin + 400000;
            uint64_t gb = (uint64_t)((double)begin * (1 + 20e-6)) - 777777;
            uint64_t ge = (uint64_t)((double)end * (1 + 20e-6)) - 777777;
            push(&s, (op){OP_BOUNDS, gb, submit, ge, end + 20000 + rnd(&x) % 500000});
            for (int z = 0; z < per_submit; z++) {
                uint64_t zb = gb + (uint64_t)z * 400000 / (uint64_t)per_submit;
                push(&s, (op){OP_ZONE, zb, zb + 300000 / (uint64_t)per_submit, 1 + (uint64_t)z, 0});
                s.zones++;
            }
            pending += (uint64_t)per_submit;
            if (submit >= next_drain) {
                push(&s, (op){OP_FIT, 0, 0, 0, 0});
                for (; pending; pending--)
                    push(&s, (op){OP_CONVERT, gb + pending * 100, 0, 0, 0});
                next_drain += drain;
            }
        }
    }
    s.steady_zones = s.zones - s.steady_zones;
    return s;
}

static void replay(gz_clock_model *m, const op *o, size_t n, volatile uint64_t *sink)
{
    for (size_t i = 0; i < n; i++) {
        switch (o[i].kind) {
        case OP_PAIR:
            gz_model_add_pair(m, (gz_calib_method)o[i].a,
                              &(gz_calib_pair){.gpu_ns = o[i].b, .host_ns = o[i].c,
                                               .deviation_ns = o[i].d});
            break;
        case OP_BOUNDS:
            gz_model_add_bounds(m, o[i].a, o[i].b, o[i].c, o[i].d);
            break;
        case OP_ZONE:
            gz_model_add_zone(m, o[i].a, o[i].b, (uint32_t)o[i].c);
            break;
        case OP_FIT:
            gz_model_fit(m);
            break;
        case OP_CONVERT:
            *sink += gz_model_to_host(m, o[i].a) + gz_model_doubt_ns(m, o[i].a) +
                     gz_model_to_host(m, o[i].a + 90000) + gz_model_doubt_ns(m, o[i].a + 90000);
            break;
        }
    }
}

/* µs of model per zone over the steady part of the program. */
static double per_zone_us(const stream *s, gz_clock_model *m, volatile uint64_t *sink)
{
    gz_model_init(m);
    replay(m, s->ops, s->steady, sink);
    double t0 = now_ns();
    replay(m, s->ops + s->steady, s->n - s->steady, sink);
    return (now_ns() - t0) / 1e3 / (double)s->steady_zones;
}

/* A full window: 20 s of submissions every 5 ms with bounds, 30 ppm
 * drift, fitted every 4 submissions, and a pair each second (sync points)
 * or every 100 ms (calibrated pairs, read within the driver's 1 us). */
static void fill(gz_clock_model *m, bool calibrated)
{
    gz_model_init(m);
    uint64_t host = 1000000000000ull, x = 2463534242ull;
    for (int i = 0; i < 4000; i++, host += 5000000) {
        uint64_t gpu = (uint64_t)((double)host * (1 + 30e-6)) - 777777;
        gz_model_add_bounds(m, gpu + 20000, host, gpu + 400000, host + 2000000);
        if (calibrated && i % 20 == 0) {
            uint64_t taken = host + rnd(&x) % 2000;
            gz_calib_pair p = {(uint64_t)((double)taken * (1 + 30e-6)) - 777777, host + 1000, 1000};
            gz_model_add_pair(m, GZ_CALIB_CALIBRATED, &p);
        } else if (!calibrated && i % 200 == 0) {
            gz_calib_pair p = {gpu + 50000, host + 50000 - 1500, 5000};
            gz_model_add_pair(m, GZ_CALIB_SYNC_POINT, &p);
        }
        if (i % 4 == 0)
            gz_model_fit(m);
    }
}

int main(void)
{
    double fit[RUNS], fit_cal[RUNS], conv[RUNS], zone_cal[RUNS], zone_sync[RUNS], zone_busy[RUNS];
    uint64_t refits = 0;
    gz_clock_model *m = malloc(sizeof *m);
    if (!m)
        return 2;
    volatile uint64_t sink = 0;
    stream cal = program(true, 4), sync = program(false, 4), busy = program(true, 64);
    for (int r = 0; r < RUNS; r++) {
        for (int calibrated = 0; calibrated < 2; calibrated++) {
            fill(m, calibrated);
            m->dirty = true; /* time one full refit */
            double t0 = now_ns();
            gz_model_fit(m);
            (calibrated ? fit_cal : fit)[r] = now_ns() - t0;
        }
        /* How many refits the sync point stream needs, fitted as the
         * worker does, after every few constraints. */
        fill(m, false);
        refits = m->refits;
        uint64_t host = 1000000000000ull + 4000ull * 5000000;
        double t0 = now_ns();
        for (int i = 0; i < 100000; i++)
            sink += gz_model_to_host(m, host + (uint64_t)i * 1000);
        conv[r] = (now_ns() - t0) / 100000;
        zone_cal[r] = per_zone_us(&cal, m, &sink);
        zone_sync[r] = per_zone_us(&sync, m, &sink);
        zone_busy[r] = per_zone_us(&busy, m, &sink);
    }
    printf("clock model, window of %u buckets (%u in use), medians of %d runs\n",
           GZ_MODEL_BUCKETS, m->count, RUNS);
    printf("%-52s %12s\n", "", "ns");
    printf("%-52s %12.0f\n", "one refit (full window, sync points)", median(fit));
    printf("%-52s %12.0f\n", "one refit (full window, calibrated pairs)", median(fit_cal));
    printf("%-52s %12.1f\n", "one GPU ns -> host ns conversion", median(conv));
    printf("%-52s %12.2f\n", "refit share of a 20 ms cycle (%)", fit[RUNS / 2] / 20e6 * 100);
    printf("%-52s %12llu\n", "refits for 4000 submissions (1000 fit calls)",
           (unsigned long long)refits);
    printf("%-52s %12.1f\n", "per zone, calibrated timestamps (960 zones/s)",
           median(zone_cal) * 1e3);
    printf("%-52s %12.1f\n", "per zone, sync points and bounds (960 zones/s)",
           median(zone_sync) * 1e3);
    printf("%-52s %12.1f\n", "per zone, calibrated timestamps (15 360 zones/s)",
           median(zone_busy) * 1e3);
    free(cal.ops);
    free(sync.ops);
    free(busy.ops);
    free(m);
    return (int)(sink & 0);
}
