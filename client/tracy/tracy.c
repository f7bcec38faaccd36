/* Which Tracy, if any (see gz_tracy.h): the program's own client first (its
 * profiler shows our GPU zones with its own CPU zones, over its own
 * connection), gpuzones' listener only when asked and there is none. */
#include "gz_tracy.h"
#include "gz_tracy_internal.h"

bool gz_tracy_sink_open(const gz_config *cfg, uint64_t *progress, gz_sink *out)
{
    if (cfg->tracy == GZ_TRACY_OFF)
        return false;
    char where[512];
    int found = gz_tracy_inproc_find(where, sizeof where);
    if (found == 1) {
        if (!gz_tracy_inproc_open(cfg, out))
            return false;
        gz_log("Tracy: the program's own Tracy client (%s) takes the GPU zones%s", where,
               cfg->tracy == GZ_TRACY_LISTEN ? "; GPUZONES_TRACY=listen does not start a second one"
                                             : "");
        return true;
    }
    if (found == -1)
        gz_log("Tracy: the Tracy client in %s lacks part of the C API gpuzones needs "
               "(___tracy_emit_gpu_*_serial, tracy::GetGpuCtxCounter): no zones go into it",
               where);
    else if (found == -2)
        gz_log("Tracy: the Tracy client in %s is not started: no zones go into it", where);
    if (cfg->tracy != GZ_TRACY_LISTEN)
        return false;
    return gz_tracy_listen_open(cfg, GZ_TRACY_LISTEN_BUDGET, progress, out);
}
