/* The host clock. CLOCK_MONOTONIC is the timeline of the trace: lavapipe's
 * device clock and llvmpipe's GL_TIMESTAMP are this clock, and other tools'
 * CLOCK_MONOTONIC data lines up with it. */
#include <time.h>

#include "gz_client.h"

static uint64_t read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t gz_host_now_ns(void)
{
    return read_clock(CLOCK_MONOTONIC);
}

uint64_t gz_host_now_raw_ns(void)
{
    return read_clock(CLOCK_MONOTONIC_RAW);
}

#define TRANSLATION_TRIES 3

int64_t gz_host_mono_minus_raw(uint64_t *uncertainty_ns)
{
    int64_t best = 0;
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < TRANSLATION_TRIES; i++) {
        uint64_t m1 = read_clock(CLOCK_MONOTONIC);
        uint64_t r = read_clock(CLOCK_MONOTONIC_RAW);
        uint64_t m2 = read_clock(CLOCK_MONOTONIC);
        if (m2 - m1 < best_width) {
            best_width = m2 - m1;
            best = (int64_t)(m1 + (m2 - m1) / 2 - r);
        }
    }
    *uncertainty_ns = (best_width + 1) / 2;
    return best;
}
