/* The explicit API (include/gpuzones/opengl.h): zones on the GL context
 * current on the calling thread, its GL calls made through libepoxy. When
 * the LD_PRELOAD shim is loaded too, it tells which context is current
 * (gz_gl_note_current) and both use the same gz_gl_ctx: one track, one
 * calibration per GL context. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#define GPUZONES_ENABLE
#include "gpuzones/opengl.h"
#include "gz_gl_internal.h"

/* The shim's view of the current context; once the shim has spoken, it is
 * the only source (it sees every make-current). */
static _Atomic bool shim_active;
static __thread void *shim_key;

GZ_EXPORT void gz_gl_note_current(void *key);
void gz_gl_note_current(void *key)
{
    shim_key = key;
    atomic_store_explicit(&shim_active, true, memory_order_relaxed);
}

/* Calls through libepoxy (its pointers are rewritten on first use, so the
 * table holds these small forwarders, not the pointers' first values). */
static void APIENTRY e_GenQueries(GLsizei n, GLuint *ids) { glGenQueries(n, ids); }
static void APIENTRY e_QueryCounter(GLuint id, GLenum target) { glQueryCounter(id, target); }
static void APIENTRY e_GetQueryObjectiv(GLuint id, GLenum p, GLint *v) { glGetQueryObjectiv(id, p, v); }
static void APIENTRY e_GetQueryObjectui64v(GLuint id, GLenum p, GLuint64 *v) { glGetQueryObjectui64v(id, p, v); }
static void APIENTRY e_GetQueryiv(GLenum t, GLenum p, GLint *v) { glGetQueryiv(t, p, v); }
static void APIENTRY e_GetInteger64v(GLenum p, GLint64 *v) { glGetInteger64v(p, v); }
static void APIENTRY e_GetIntegerv(GLenum p, GLint *v) { glGetIntegerv(p, v); }
static const GLubyte *APIENTRY e_GetString(GLenum n) { return glGetString(n); }
static const GLubyte *APIENTRY e_GetStringi(GLenum n, GLuint i) { return glGetStringi(n, i); }
static void APIENTRY e_BindBuffer(GLenum t, GLuint b) { glBindBuffer(t, b); }
static void APIENTRY e_Flush(void) { glFlush(); }

static const gz_gl_fns epoxy_fns = {
    .GenQueries = e_GenQueries,
    .QueryCounter = e_QueryCounter,
    .GetQueryObjectiv = e_GetQueryObjectiv,
    .GetQueryObjectui64v = e_GetQueryObjectui64v,
    .GetQueryiv = e_GetQueryiv,
    .GetInteger64v = e_GetInteger64v,
    .GetIntegerv = e_GetIntegerv,
    .GetString = e_GetString,
    .GetStringi = e_GetStringi,
    .BindBuffer = e_BindBuffer,
    .Flush = e_Flush,
};

/* The current GL context's handle: the shim's word, else EGL's, else GLX's. */
static void *current_key(void)
{
    if (atomic_load_explicit(&shim_active, memory_order_relaxed))
        return shim_key;
    static int has_egl = -1; /* epoxy_has_egl may try to load libEGL */
    if (has_egl < 0)
        has_egl = epoxy_has_egl();
    void *key = NULL;
    if (has_egl)
        key = eglGetCurrentContext();
    if (!key) {
        void *(*glx_current)(void) = (void *(*)(void))dlsym(RTLD_DEFAULT, "glXGetCurrentContext");
        if (glx_current)
            key = glx_current();
    }
    return key;
}

static gz_gl_ctx *current_ctx(void)
{
    void *key = current_key();
    if (!key)
        return NULL;
    gz_gl_ctx *c = gz_gl_ctx_acquire(key, &epoxy_fns);
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
