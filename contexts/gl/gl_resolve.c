/* The one GL resolver (gz_gl_resolve.h): the program's EGL, GLX and GL
 * functions, found at run time for the explicit API and the shim, and the
 * GL context current on the calling thread. */
#include <dlfcn.h>
#include <stdatomic.h>

#include "gz_gl_resolve.h"

static const char *const egl_libs[] = {"libEGL.so.1", NULL};
static const char *const glx_libs[] = {"libGLX.so.0", "libGL.so.1", NULL};
static const char *const gl_libs[] = {"libGL.so.1", "libOpenGL.so.0", "libGLESv2.so.2", NULL};

void *gz_gl_find_loaded(const char *name, gz_gl_sym_fn sym)
{
    const char *const *libs = name[0] == 'e'                                      ? egl_libs
                              : name[0] == 'g' && name[1] == 'l' && name[2] == 'X' ? glx_libs
                                                                                   : gl_libs;
    void *p = NULL;
    for (; !p && *libs; libs++) {
        void *h = dlopen(*libs, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = sym(h, name);
            dlclose(h); /* NOLOAD took a reference */
        }
    }
    return p;
}

static void *find_default(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    return p ? p : gz_gl_find_loaded(name, dlsym);
}

static _Atomic(gz_gl_find_fn) finder = find_default;

void gz_gl_use_finder(gz_gl_find_fn find)
{
    atomic_store_explicit(&finder, find, memory_order_release);
}

static void *find(const char *name)
{
    return atomic_load_explicit(&finder, memory_order_acquire)(name);
}

/* Found once, then cached: the libraries stay loaded. */
static _Atomic(void *) egl_get_current, glx_get_current, egl_gpa, glx_gpa;

static void *cached(_Atomic(void *) *slot, const char *name)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);
    if (!p && (p = find(name)))
        atomic_store_explicit(slot, p, memory_order_release);
    return p;
}

/* The window system's GetProcAddress, else the GL libraries' exports (an
 * EGL without EGL_KHR_get_all_proc_addresses hands out extensions only). */
void *gz_gl_resolve_egl(const char *name)
{
    void *(*gpa)(const char *) = (void *(*)(const char *))cached(&egl_gpa, "eglGetProcAddress");
    void *p = gpa ? gpa(name) : NULL;
    return p ? p : find(name);
}

void *gz_gl_resolve_glx(const char *name)
{
    void *(*gpa)(const unsigned char *) =
        (void *(*)(const unsigned char *))cached(&glx_gpa, "glXGetProcAddressARB");
    void *p = gpa ? gpa((const unsigned char *)name) : NULL;
    return p ? p : find(name);
}

/* For a context the shim made current: it took the context up at that
 * make-current, so this is asked only if it could not. */
static void *resolve_any(const char *name)
{
    void *p = gz_gl_resolve_egl(name);
    return p ? p : gz_gl_resolve_glx(name);
}

static _Atomic bool shim_active;
static __thread void *shim_key;

void gz_gl_note_current(void *key)
{
    shim_key = key;
    atomic_store_explicit(&shim_active, true, memory_order_relaxed);
}

/* Libraries not found yet are looked for only while no context is current
 * through those already found. */
void *gz_gl_current_key(gz_gl_resolve_fn *resolve)
{
    if (atomic_load_explicit(&shim_active, memory_order_relaxed)) {
        *resolve = resolve_any;
        return shim_key;
    }
    void *(*egl)(void) = (void *(*)(void))atomic_load_explicit(&egl_get_current, memory_order_acquire);
    void *(*glx)(void) = (void *(*)(void))atomic_load_explicit(&glx_get_current, memory_order_acquire);
    void *key;
    if (egl && (key = egl())) {
        *resolve = gz_gl_resolve_egl;
        return key;
    }
    if (glx && (key = glx())) {
        *resolve = gz_gl_resolve_glx;
        return key;
    }
    if (!egl && (egl = (void *(*)(void))cached(&egl_get_current, "eglGetCurrentContext")) &&
        (key = egl())) {
        *resolve = gz_gl_resolve_egl;
        return key;
    }
    if (!glx && (glx = (void *(*)(void))cached(&glx_get_current, "glXGetCurrentContext")) &&
        (key = glx())) {
        *resolve = gz_gl_resolve_glx;
        return key;
    }
    return NULL;
}
