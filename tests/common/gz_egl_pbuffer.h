/* For the test and benchmark programs: a desktop GL 4.5 core context on
 * Mesa's EGL surfaceless platform (llvmpipe), current on the calling
 * thread, with a pbuffer whose swaps mark frames. GL through libepoxy. */
#ifndef GZ_EGL_PBUFFER_H
#define GZ_EGL_PBUFFER_H

#include <epoxy/egl.h>
#include <stdbool.h>

typedef struct gz_egl_pbuffer {
    EGLDisplay display;
    EGLContext context;
    EGLSurface surface;
} gz_egl_pbuffer;

/* False (with *what saying which step) when there is no such context. */
static inline bool gz_egl_pbuffer_open(gz_egl_pbuffer *p, int size, const char **what)
{
    p->display = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY,
                                          NULL);
    if (p->display == EGL_NO_DISPLAY || !eglInitialize(p->display, NULL, NULL)) {
        *what = "no EGL surfaceless display";
        return false;
    }
    const EGLint cfg_attr[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                               EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig cfg;
    EGLint n = 0;
    if (!eglChooseConfig(p->display, cfg_attr, &cfg, 1, &n) || n < 1) {
        *what = "no pbuffer config";
        return false;
    }
    eglBindAPI(EGL_OPENGL_API);
    const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                               EGL_CONTEXT_OPENGL_PROFILE_MASK,
                               EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    p->context = eglCreateContext(p->display, cfg, EGL_NO_CONTEXT, ctx_attr);
    const EGLint pb_attr[] = {EGL_WIDTH, size, EGL_HEIGHT, size, EGL_NONE};
    p->surface = eglCreatePbufferSurface(p->display, cfg, pb_attr);
    if (p->context == EGL_NO_CONTEXT || p->surface == EGL_NO_SURFACE ||
        !eglMakeCurrent(p->display, p->surface, p->surface, p->context)) {
        *what = "no GL 4.5 core context";
        return false;
    }
    return true;
}

static inline void gz_egl_pbuffer_close(gz_egl_pbuffer *p)
{
    eglMakeCurrent(p->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(p->display, p->context);
    eglDestroySurface(p->display, p->surface);
    eglTerminate(p->display);
}

#endif
