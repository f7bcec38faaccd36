/* Choosing the best of a few calibrated samples. */
#include "gz_calibration.h"

#include <stddef.h>

bool gz_calib_sample_best(gz_calib_read_fn read, void *user, unsigned max_tries,
                          uint64_t good_enough_ns, gz_calib_pair *best)
{
    gz_calib_pair kept = {0};
    bool have = false;

    if (!read || !best)
        return false;

    /* A fixed number of tries, not "until the deviation is good": a driver
     * that always fails or always reports a wide deviation must cost us at
     * most max_tries calls. */
    for (unsigned i = 0; i < max_tries; i++) {
        gz_calib_pair p;
        if (!read(user, &p))
            continue;
        /* On equal deviation take the newer pair: it is closer in time to
         * the work the caller is about to convert. */
        if (!have || p.deviation_ns <= kept.deviation_ns) {
            kept = p;
            have = true;
        }
        if (kept.deviation_ns <= good_enough_ns)
            break;
    }

    /* *best is left alone when nothing was read. */
    if (have)
        *best = kept;
    return have;
}

const char *gz_calib_method_name(gz_calib_method m)
{
    switch (m) {
    case GZ_CALIB_NONE:
        return "none";
    case GZ_CALIB_CALIBRATED:
        return "calibrated";
    case GZ_CALIB_SYNC_POINT:
        return "sync point";
    case GZ_CALIB_BOUNDS:
        return "bounds";
    }
    /* Values from a corrupted item or a newer writer. */
    return "unknown";
}
