/* Lanes of nested zones (see gz_tracy_nest.h). */
#include <string.h>

#include "gz_tracy_nest.h"

void gz_tracy_nest_init(gz_tracy_nest *n)
{
    memset(n->depth, 0, sizeof n->depth);
}

/* Ends open zones that end at or before limit, earliest first (each lane's
 * top ends first on that lane, so the earliest top is the earliest end). */
static void end_until(gz_tracy_nest *n, uint64_t limit, gz_tracy_nest_end_fn fn, void *user)
{
    for (;;) {
        int best = -1;
        uint64_t best_end = 0;
        for (int l = 0; l < GZ_TRACY_NEST_LANES; l++) {
            if (!n->depth[l])
                continue;
            uint64_t e = n->end_ns[l][n->depth[l] - 1];
            if (e <= limit && (best < 0 || e < best_end)) {
                best = l;
                best_end = e;
            }
        }
        if (best < 0)
            return;
        n->depth[best]--;
        fn(user, (unsigned)best, best_end);
    }
}

int gz_tracy_nest_place(gz_tracy_nest *n, uint64_t begin_ns, uint64_t end_ns,
                        gz_tracy_nest_end_fn fn, void *user)
{
    end_until(n, begin_ns, fn, user);
    for (int l = 0; l < GZ_TRACY_NEST_LANES; l++) {
        uint16_t d = n->depth[l];
        /* Every open zone on this lane began at or before begin_ns (zones
         * come in begin order) and ends after it: it nests when the top
         * ends at or after end_ns. */
        if (d && n->end_ns[l][d - 1] < end_ns)
            continue;
        if (d == GZ_TRACY_NEST_DEPTH)
            continue;
        n->end_ns[l][d] = end_ns;
        n->depth[l] = (uint16_t)(d + 1);
        return l;
    }
    return -1;
}

void gz_tracy_nest_finish(gz_tracy_nest *n, gz_tracy_nest_end_fn fn, void *user)
{
    end_until(n, UINT64_MAX, fn, user);
}

bool gz_tracy_nest_open(const gz_tracy_nest *n)
{
    for (int l = 0; l < GZ_TRACY_NEST_LANES; l++)
        if (n->depth[l])
            return true;
    return false;
}
