/* Timestamp masks and tick → ns conversion in fixed point. */
#include "gz_calibration.h"

#include <math.h>

uint64_t gz_ticks_mask(uint32_t valid_bits)
{
    /* 1ull << 64 is undefined (and on x86 gives 1, so the mask would be 0:
     * every GPU time would read as 0). */
    if (valid_bits == 0)
        return 0;
    if (valid_bits >= 64)
        return ~0ull;
    return (1ull << valid_bits) - 1;
}

gz_tick_period gz_tick_period_from_ns(double ns_per_tick)
{
    gz_tick_period p;

    /* Vulkan promises a positive period, but a broken driver or a bad
     * config must not give NaN arithmetic or a model where every time is 0:
     * 1 ns is what GL and most desktop GPUs use. !(x > 0) also catches NaN. */
    if (!(ns_per_tick > 0) || isinf(ns_per_tick))
        ns_per_tick = 1.0;

    /* Scaling by a power of two is exact in binary floating point, so
     * whole and frac below are the exact integer and fractional parts of
     * ns * 2^32 (x - floor(x) is always representable). */
    double scaled = ldexp(ns_per_tick, 32);
    if (scaled >= 18446744073709551616.0) { /* 2^64: period >= 2^32 ns */
        p.fx = UINT64_MAX;
        p.fx_lo = UINT32_MAX;
        return p;
    }
    double whole = floor(scaled);
    double frac = ldexp(scaled - whole, 32); /* in [0, 2^32) */
    double lo = round(frac);                 /* exact unless period < 2^-11 ns */

    p.fx = (uint64_t)whole;
    if (lo >= 4294967296.0) {
        /* Rounding carried into the integer part; whole < 2^64 - 1 here
         * because doubles that large have no fractional bits. */
        p.fx += 1;
        p.fx_lo = 0;
    } else {
        p.fx_lo = (uint32_t)lo;
    }
    return p;
}

uint64_t gz_ticks_to_ns(uint64_t ticks, gz_tick_period period)
{
    /* result = floor(ticks * (fx * 2^32 + fx_lo) / 2^64)
     *        = floor((ticks * fx + floor(ticks * fx_lo / 2^32)) / 2^32)
     * (nested floor divisions by integers compose exactly). */
    unsigned __int128 hi = (unsigned __int128)ticks * period.fx;
    unsigned __int128 lo = (unsigned __int128)ticks * period.fx_lo;

    /* No wrap: hi <= (2^64 - 1)^2 = 2^128 - 2^65 + 1 and lo >> 32 < 2^64. */
    unsigned __int128 ns = (hi + (lo >> 32)) >> 32;
    if (ns > UINT64_MAX)
        return UINT64_MAX;
    return (uint64_t)ns;
}
