/* The explicit API (include/gpuzones/opengl.h): zones on the GL context
 * current on the calling thread. When the LD_PRELOAD shim is loaded too,
 * it tells which context is current (gz_gl_note_current) and both use the
 * same gz_gl_ctx: one track, one calibration per GL context.
 *
 * libgpuzones links no GL library (the Vulkan layer and the OpenCL shim
 * load it into programs that have none): the program's own EGL or GLX
 * library is found at run time. libepoxy, which programs using these
 * macros often use, opens libEGL and libGL with RTLD_LOCAL, so they are
 * looked up by name as well as in the global scope. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

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

static const char *const egl_libs[] = {"libEGL.so.1", NULL};
static const char *const glx_libs[] = {"libGLX.so.0", "libGL.so.1", NULL};
static const char *const gl_libs[] = {"libGL.so.1", "libOpenGL.so.0", "libGLESv2.so.2", NULL};

/* name in the global scope, else in the first of libs already loaded
 * (never loads one: a library the program has not loaded has no current
 * context). */
static void *lookup(const char *const *libs, const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    for (; !p && *libs; libs++) {
        void *h = dlopen(*libs, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = dlsym(h, name);
            dlclose(h); /* NOLOAD took a reference */
        }
    }
    return p;
}

/* Found once, then cached: the libraries stay loaded. */
static _Atomic(void *) egl_get_current, glx_get_current, egl_gpa, glx_gpa;

static void *cached(_Atomic(void *) *slot, const char *const *libs, const char *name)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);
    if (!p && (p = lookup(libs, name)))
        atomic_store_explicit(slot, p, memory_order_release);
    return p;
}

/* GL entry points for the current context: the window system's
 * GetProcAddress, else the GL libraries' exports (an EGL without
 * EGL_KHR_get_all_proc_addresses hands out extensions only). */
static void *egl_resolve(const char *name)
{
    void *(*gpa)(const char *) = (void *(*)(const char *))cached(&egl_gpa, egl_libs, "eglGetProcAddress");
    void *p = gpa ? gpa(name) : NULL;
    return p ? p : lookup(gl_libs, name);
}

static void *glx_resolve(const char *name)
{
    void *(*gpa)(const unsigned char *) =
        (void *(*)(const unsigned char *))cached(&glx_gpa, glx_libs, "glXGetProcAddressARB");
    void *p = gpa ? gpa((const unsigned char *)name) : NULL;
    return p ? p : lookup(gl_libs, name);
}

/* For a context the shim made current: it took the context up at that
 * make-current, so this is asked only if it could not. */
static void *any_resolve(const char *name)
{
    void *p = egl_resolve(name);
    return p ? p : glx_resolve(name);
}

/* The current GL context's handle and how to resolve its functions: the
 * shim's word, else EGL's, else GLX's. Libraries not found yet are looked
 * for only while no context is current through those already found. */
static void *current_key(gz_gl_resolve_fn *resolve)
{
    if (atomic_load_explicit(&shim_active, memory_order_relaxed)) {
        *resolve = any_resolve;
        return shim_key;
    }
    void *(*egl)(void) = (void *(*)(void))atomic_load_explicit(&egl_get_current, memory_order_acquire);
    void *(*glx)(void) = (void *(*)(void))atomic_load_explicit(&glx_get_current, memory_order_acquire);
    void *key;
    if (egl && (key = egl())) {
        *resolve = egl_resolve;
        return key;
    }
    if (glx && (key = glx())) {
        *resolve = glx_resolve;
        return key;
    }
    if (!egl && (egl = (void *(*)(void))cached(&egl_get_current, egl_libs, "eglGetCurrentContext")) &&
        (key = egl())) {
        *resolve = egl_resolve;
        return key;
    }
    if (!glx && (glx = (void *(*)(void))cached(&glx_get_current, glx_libs, "glXGetCurrentContext")) &&
        (key = glx())) {
        *resolve = glx_resolve;
        return key;
    }
    return NULL;
}

static gz_gl_ctx *current_ctx(void)
{
    gz_gl_resolve_fn resolve = NULL;
    void *key = current_key(&resolve);
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
