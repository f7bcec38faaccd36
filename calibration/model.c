/* The GPU → host clock model: a plain offset for now.
 *
 * Offsets are host_ns - gpu_ns. Both are unsigned 64-bit, so the difference
 * is formed in 128 bits and clamped to int64: real clocks are far from that
 * range, but garbage from a driver must not be undefined behaviour. */
#include "gz_calibration.h"

#include <stddef.h>
#include <string.h>

static int64_t clamp_i64(__int128 v)
{
    if (v > INT64_MAX)
        return INT64_MAX;
    if (v < INT64_MIN)
        return INT64_MIN;
    return (int64_t)v;
}

static int64_t offset_of(uint64_t host_ns, uint64_t gpu_ns)
{
    return clamp_i64((__int128)host_ns - (__int128)gpu_ns);
}

static bool is_pair_method(gz_calib_method method)
{
    return method == GZ_CALIB_CALIBRATED || method == GZ_CALIB_SYNC_POINT;
}

void gz_model_init(gz_clock_model *m)
{
    if (!m)
        return;
    memset(m, 0, sizeof(*m));
    m->method = GZ_CALIB_NONE; /* offset 0: identity mapping */
}

void gz_model_add_pair(gz_clock_model *m, gz_calib_method method, const gz_calib_pair *p)
{
    bool take;

    /* Bounds have their own entry point; NONE or an unknown value carries
     * no information. */
    if (!m || !p || !is_pair_method(method))
        return;

    /* A sync point is a bracket: the GPU time happened between host_ns -
     * deviation and host_ns + deviation. Its middle is biased by whatever
     * part of the bracket is submission latency, so it is intersected with
     * every other bound instead of being trusted on its own. */
    if (method == GZ_CALIB_SYNC_POINT) {
        if (m->method == GZ_CALIB_CALIBRATED)
            return;
        uint64_t before = p->host_ns > p->deviation_ns ? p->host_ns - p->deviation_ns : 1;
        uint64_t after =
            p->host_ns > UINT64_MAX - p->deviation_ns ? UINT64_MAX : p->host_ns + p->deviation_ns;
        m->method = GZ_CALIB_SYNC_POINT;
        gz_model_add_bounds(m, p->gpu_ns, before, p->gpu_ns, after);
        return;
    }

    if (!is_pair_method(m->method) || method < m->method) {
        take = true; /* first pair, or a better kind of sample */
    } else if (method > m->method) {
        take = false; /* e.g. a sync point while calibrated pairs exist */
    } else {
        /* Same method. Taking only strictly better deviations would freeze
         * the offset at one lucky old sample while the clocks drift apart;
         * taking every sample would let one wide outlier move it. So a newer
         * sample wins when it is at most twice as wide as the one in use.
         * (A slow run of ever wider samples can still walk the deviation up;
         * the drift model that replaces this keeps a window instead.) */
        uint64_t limit = m->deviation_ns > UINT64_MAX / 2 ? UINT64_MAX : m->deviation_ns * 2;
        take = p->deviation_ns <= limit;
    }
    if (!take)
        return;

    m->method = method;
    m->deviation_ns = p->deviation_ns;
    m->offset_ns = offset_of(p->host_ns, p->gpu_ns);
    m->samples++;
}

/* The offset from causality bounds alone: the middle of [lo, hi] when both
 * sides are known, else the side that is. */
static void use_bounds(gz_clock_model *m)
{
    if (m->have_lo && m->have_hi) {
        __int128 lo = m->bound_lo, hi = m->bound_hi;
        /* hi < lo means the bounds contradict each other (drift, or a wrong
         * unwrap upstream); the middle is still the least wrong guess and
         * the deviation then shows how bad things are. */
        __int128 width = hi >= lo ? hi - lo : lo - hi;
        m->offset_ns = clamp_i64(lo + (hi - lo) / 2);
        m->deviation_ns = (uint64_t)((width + 1) / 2); /* width <= 2^64 - 1 */
    } else if (m->have_lo) {
        m->offset_ns = m->bound_lo;
        m->deviation_ns = UINT64_MAX; /* one side only: no bound on the error */
    } else if (m->have_hi) {
        m->offset_ns = m->bound_hi;
        m->deviation_ns = UINT64_MAX;
    } else {
        return;
    }
    if (m->method != GZ_CALIB_SYNC_POINT)
        m->method = GZ_CALIB_BOUNDS;
}

void gz_model_add_bounds(gz_clock_model *m, uint64_t gpu_begin_ns, uint64_t host_ns_not_before,
                         uint64_t gpu_end_ns, uint64_t host_ns_not_after)
{
    bool tightened = false;

    if (!m)
        return;

    /* A side is unknown when its host time is 0 (CLOCK_MONOTONIC is never 0
     * by the time anything is submitted); a GPU time of 0 is a valid time. */
    if (host_ns_not_before) {
        /* gpu_begin + offset >= host_not_before */
        int64_t lo = offset_of(host_ns_not_before, gpu_begin_ns);
        if (!m->have_lo || lo > m->bound_lo) {
            m->bound_lo = lo;
            m->have_lo = true;
            tightened = true;
        }
    }
    if (host_ns_not_after) {
        /* gpu_end + offset <= host_not_after */
        int64_t hi = offset_of(host_ns_not_after, gpu_end_ns);
        if (!m->have_hi || hi < m->bound_hi) {
            m->bound_hi = hi;
            m->have_hi = true;
            tightened = true;
        }
    }
    if (!tightened)
        return;
    m->samples++;

    /* Bounds are only the fallback: a calibrated offset is kept even when it
     * falls outside [lo, hi]; reconciling the two is the drift model's job.
     * Sync points are bounds themselves. */
    if (m->method != GZ_CALIB_CALIBRATED)
        use_bounds(m);
}

uint64_t gz_model_to_host(const gz_clock_model *m, uint64_t gpu_ns)
{
    if (!m)
        return gpu_ns;
    __int128 host = (__int128)gpu_ns + m->offset_ns;
    if (host < 0)
        return 0;
    if (host > UINT64_MAX)
        return UINT64_MAX;
    return (uint64_t)host;
}
