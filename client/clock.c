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
