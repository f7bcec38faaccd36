/* EGL wrappers: swaps mark frames; creation, make-current and destroy
 * follow the contexts. Creation only registers the new context (its number
 * on the timeline is its place in creation order): query objects can be
 * made only with the context current, so its timing starts at its first
 * make-current. */
#include <EGL/egl.h>
#include <EGL/eglext.h>

#include "gz_gl_shim.h"

typedef EGLBoolean (*swap_fn)(EGLDisplay, EGLSurface);
typedef EGLBoolean (*swap_damage_fn)(EGLDisplay, EGLSurface, const EGLint *, EGLint);
typedef EGLContext (*create_fn)(EGLDisplay, EGLConfig, EGLContext, const EGLint *);
typedef EGLBoolean (*make_current_fn)(EGLDisplay, EGLSurface, EGLSurface, EGLContext);
typedef EGLBoolean (*destroy_fn)(EGLDisplay, EGLContext);
typedef EGLBoolean (*release_fn)(void);

GZ_EXPORT EGLBoolean eglSwapBuffers(EGLDisplay dpy, EGLSurface surface);
EGLBoolean eglSwapBuffers(EGLDisplay dpy, EGLSurface surface)
{
    swap_fn real = (swap_fn)gz_shim_real(GZ_SHIM_eglSwapBuffers);
    if (!real)
        return EGL_FALSE;
    /* No surface: the call fails (EGL_BAD_SURFACE) and swaps nothing, so it
     * is no frame boundary; the context stays timed by its flushes. */
    gz_gl_ctx *c = surface == EGL_NO_SURFACE ? NULL : gz_shim_current();
    gz_gl_frame_boundary(c, true);
    EGLBoolean r = real(dpy, surface);
    gz_gl_frame_boundary(c, false);
    gz_gl_swap_mark(c);
    return r;
}

static EGLBoolean swap_damage(gz_shim_fn fn, EGLDisplay dpy, EGLSurface surface,
                              const EGLint *rects, EGLint n)
{
    swap_damage_fn real = (swap_damage_fn)gz_shim_real(fn);
    if (!real)
        return EGL_FALSE;
    gz_gl_ctx *c = surface == EGL_NO_SURFACE ? NULL : gz_shim_current();
    gz_gl_frame_boundary(c, true);
    EGLBoolean r = real(dpy, surface, rects, n);
    gz_gl_frame_boundary(c, false);
    gz_gl_swap_mark(c);
    return r;
}

GZ_EXPORT EGLBoolean eglSwapBuffersWithDamageEXT(EGLDisplay dpy, EGLSurface surface,
                                                 const EGLint *rects, EGLint n);
EGLBoolean eglSwapBuffersWithDamageEXT(EGLDisplay dpy, EGLSurface surface, const EGLint *rects,
                                       EGLint n)
{
    return swap_damage(GZ_SHIM_eglSwapBuffersWithDamageEXT, dpy, surface, rects, n);
}

GZ_EXPORT EGLBoolean eglSwapBuffersWithDamageKHR(EGLDisplay dpy, EGLSurface surface,
                                                 const EGLint *rects, EGLint n);
EGLBoolean eglSwapBuffersWithDamageKHR(EGLDisplay dpy, EGLSurface surface, const EGLint *rects,
                                       EGLint n)
{
    return swap_damage(GZ_SHIM_eglSwapBuffersWithDamageKHR, dpy, surface, rects, n);
}

GZ_EXPORT EGLContext eglCreateContext(EGLDisplay dpy, EGLConfig config, EGLContext share,
                                      const EGLint *attribs);
EGLContext eglCreateContext(EGLDisplay dpy, EGLConfig config, EGLContext share,
                            const EGLint *attribs)
{
    create_fn real = (create_fn)gz_shim_real(GZ_SHIM_eglCreateContext);
    if (!real)
        return EGL_NO_CONTEXT;
    EGLContext ctx = real(dpy, config, share, attribs);
    /* A failed creation registers nothing and leaves eglGetError alone. */
    if (ctx != EGL_NO_CONTEXT)
        gz_gl_ctx_created(ctx);
    return ctx;
}

GZ_EXPORT EGLBoolean eglMakeCurrent(EGLDisplay dpy, EGLSurface draw, EGLSurface read,
                                    EGLContext ctx);
EGLBoolean eglMakeCurrent(EGLDisplay dpy, EGLSurface draw, EGLSurface read, EGLContext ctx)
{
    make_current_fn real = (make_current_fn)gz_shim_real(GZ_SHIM_eglMakeCurrent);
    if (!real)
        return EGL_FALSE;
    if (ctx != gz_shim_current_key())
        gz_shim_leaving(ctx == EGL_NO_CONTEXT);
    EGLBoolean r = real(dpy, draw, read, ctx);
    if (r)
        gz_shim_set_current(ctx == EGL_NO_CONTEXT ? NULL : ctx, GZ_SHIM_EGL);
    return r;
}

GZ_EXPORT EGLBoolean eglDestroyContext(EGLDisplay dpy, EGLContext ctx);
EGLBoolean eglDestroyContext(EGLDisplay dpy, EGLContext ctx)
{
    destroy_fn real = (destroy_fn)gz_shim_real(GZ_SHIM_eglDestroyContext);
    if (!real)
        return EGL_FALSE;
    /* Before the real call: while current here, the context can still be
     * read back. */
    gz_gl_ctx_retire(ctx, ctx == gz_shim_current_key());
    return real(dpy, ctx);
}

GZ_EXPORT EGLBoolean eglReleaseThread(void);
EGLBoolean eglReleaseThread(void)
{
    release_fn real = (release_fn)gz_shim_real(GZ_SHIM_eglReleaseThread);
    if (!real)
        return EGL_FALSE;
    gz_shim_leaving(true);
    EGLBoolean r = real();
    if (r)
        gz_shim_set_current(NULL, GZ_SHIM_EGL);
    return r;
}
