/* Which Tracy, if any (see gz_tracy.h). */
#include "gz_tracy.h"
#include "gz_tracy_internal.h"

bool gz_tracy_sink_open(const gz_config *cfg, gz_sink *out)
{
    if (cfg->tracy != GZ_TRACY_LISTEN)
        return false;
    return gz_tracy_listen_open(cfg, GZ_TRACY_LISTEN_BUDGET, out);
}
