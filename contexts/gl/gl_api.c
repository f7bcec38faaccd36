/* The explicit API (include/gpuzones/opengl.h): zones on the GL context
 * current on the calling thread. Which context that is, and its GL
 * functions, the GL resolver says (gl_resolve.c): when the LD_PRELOAD shim
 * is loaded too, it tells the resolver which context is current, and both
 * use the same gz_gl_ctx: one track, one calibration per GL context. */
#include <stdatomic.h>

#define GPUZONES_ENABLE
#include "gpuzones/opengl.h"
#include "gz_gl_internal.h"
#include "gz_gl_resolve.h"

static gz_gl_ctx *current_ctx(void)
{
    gz_gl_resolve_fn resolve = NULL;
    void *key = gz_gl_current_key(&resolve);
    if (!key)
        return NULL;
    gz_gl_ctx *c = gz_gl_ctx_acquire(key, resolve);
    if (c && atomic_load(&c->dead)) {
        gz_gl_ctx_put(c);
        return NULL;
    }
    return c;
}

int gpuzones_gl_context(void)
{
    gz_gl_ctx *c = current_ctx();
    gz_gl_ctx_put(c);
    return c != NULL;
}

void gpuzones_gl_context_name(const char *name, size_t size)
{
    gz_gl_ctx *c = current_ctx();
    gz_gl_ctx_set_name(c, name, size);
    gz_gl_ctx_put(c);
}

gpuzones_gl_zone gpuzones_gl_zone_begin(uint32_t srcloc_id, int active)
{
    gpuzones_gl_zone z = {NULL, 0};
    if (!active)
        return z;
    gz_gl_ctx *c = current_ctx();
    if (!c)
        return z;
    z.token = gz_gl_zone_begin(c, srcloc_id, GZ_ZONE_EXPLICIT, true, GZ_GL_TAG_EXPLICIT);
    if (!z.token) {
        gz_gl_ctx_put(c);
        return z;
    }
    z.ctx = c; /* keeps its reference until the end */
    return z;
}

void gpuzones_gl_zone_end(gpuzones_gl_zone *z)
{
    static int moved_once;
    if (!z || !z->ctx)
        return;
    gz_gl_ctx *c = z->ctx;
    z->ctx = NULL;
    gz_gl_ctx *now = current_ctx();
    if (now == c) {
        gz_gl_zone_end(c, z->token);
    } else {
        /* Another context is current: GL must not be called for c here.
         * The zone stays open and is counted as lost with its context. */
        gz_log_once(&moved_once, "a GL zone ended while another GL context was current: "
                                 "zone dropped");
    }
    gz_gl_ctx_put(now);
    gz_gl_ctx_put(c);
}

void gpuzones_gl_collect(void)
{
    gz_gl_ctx *c = current_ctx();
    gz_gl_collect(c, true);
    gz_gl_ctx_put(c);
}
