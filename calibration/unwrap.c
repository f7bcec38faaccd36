/* N-bit timestamp unwrap.
 *
 * A counter with N valid bits wraps every 2^N ticks (36 bits at 52 ns: about
 * an hour). Guessing "the next wrap" from the previous value, as Tracy's
 * server does, goes wrong when several wraps pass between readings or when
 * a reading arrives out of order. Here the caller predicts where the value
 * should lie (from host times that bound it, through the clock model) and
 * the wrap count is the one that puts the value nearest that prediction:
 * right as long as the prediction is off by less than half a wrap. */
#include "gz_calibration.h"

void gz_unwrap_init(gz_unwrap *u, uint32_t bits)
{
    u->bits = bits > 64 ? 64 : bits;
    u->mask = gz_ticks_mask(u->bits);
    u->started = false;
    u->first = u->highest = 0;
}

static uint64_t distance(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

uint64_t gz_unwrap_near(gz_unwrap *u, uint64_t raw, uint64_t predicted)
{
    uint64_t r = raw & u->mask;
    uint64_t value;
    if (u->bits >= 64 || u->bits == 0) {
        value = r;
    } else if (!u->started) {
        value = r; /* the first value fixes the origin: wrap count 0 */
    } else {
        uint64_t period = u->mask + 1;
        uint64_t c = (predicted & ~u->mask) | r; /* same wrap as the prediction */
        value = c;
        if (c >= period && distance(c - period, predicted) < distance(value, predicted))
            value = c - period;
        if (c <= UINT64_MAX - period && distance(c + period, predicted) < distance(value, predicted))
            value = c + period;
    }
    if (!u->started) {
        u->started = true;
        u->first = u->highest = value;
    } else if (value > u->highest) {
        u->highest = value;
    }
    return value;
}

uint64_t gz_unwrap_wraps(const gz_unwrap *u)
{
    if (!u->started || u->bits >= 64 || u->bits == 0)
        return 0;
    return (u->highest >> u->bits) - (u->first >> u->bits);
}

uint64_t gz_ns_to_ticks(uint64_t ns, double ns_per_tick)
{
    if (!(ns_per_tick > 0))
        ns_per_tick = 1.0;
    long double t = (long double)ns / ns_per_tick;
    return t >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)t;
}
