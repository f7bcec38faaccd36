/* Which GL context is current on each thread, as seen through the wrapped
 * make-current calls, and its gz_gl_ctx. GL is called only for that
 * context and only on that thread. */
#include "gz_gl_shim.h"

static __thread struct {
    void *key;
    gz_gl_ctx *ctx; /* referenced; NULL when the context cannot time */
    gz_shim_api api;
} cur;

gz_gl_ctx *gz_shim_current(void)
{
    return cur.ctx;
}

void *gz_shim_current_key(void)
{
    return cur.key;
}

void gz_shim_leaving(bool release)
{
    /* Still current: read back what the swaps already flushed. A release
     * (no context current after it) is usually the end: the context may
     * never be current again, and GL cannot be asked once it is not, so
     * the work already submitted is waited for, a few ms at most. */
    if (release && cur.ctx)
        gz_gl_collect_final(cur.ctx);
    else
        gz_gl_collect(cur.ctx, false);
}

void gz_shim_set_current(void *key, gz_shim_api api)
{
    gz_gl_note_current(key);
    if (key == cur.key) {
        if (cur.ctx)
            gz_gl_frame_boundary(cur.ctx, false);
        return;
    }
    gz_gl_ctx_put(cur.ctx);
    cur.ctx = NULL;
    cur.key = key;
    cur.api = api;
    if (!key)
        return;
    gz_gl_ctx *c = gz_gl_ctx_acquire(key, api == GZ_SHIM_EGL ? gz_gl_resolve_egl : gz_gl_resolve_glx);
    cur.ctx = c;
    /* Making a context current flushes the one before; this one's first
     * frame begins here, or its frame goes on. */
    if (c)
        gz_gl_frame_boundary(c, false);
}
