/* The OpenGL LD_PRELOAD shim (libgpuzones_gl.so): shared declarations.
 *
 * The shim exports the wrapped EGL/GLX/GL entry points (caught when a
 * program links libEGL/libGL directly), eglGetProcAddress and
 * glXGetProcAddress[ARB] (which hand out the wrappers), and dlsym (libepoxy
 * and GLAD look entry points up with dlsym on the GL libraries' handles).
 * Each wrapper calls the real function it resolved from the real library,
 * never a symbol of its own name, so it cannot call itself. The timing work
 * is done by contexts/gl. */
#ifndef GZ_GL_SHIM_H
#define GZ_GL_SHIM_H

#include <stdbool.h>

#include "gz_gl.h"
#include "gz_gl_resolve.h"

/* The wrapped entry points, by index into the name table (shim_real.c). */
typedef enum gz_shim_fn {
    GZ_SHIM_eglGetProcAddress,
    GZ_SHIM_eglSwapBuffers,
    GZ_SHIM_eglSwapBuffersWithDamageEXT,
    GZ_SHIM_eglSwapBuffersWithDamageKHR,
    GZ_SHIM_eglCreateContext,
    GZ_SHIM_eglMakeCurrent,
    GZ_SHIM_eglDestroyContext,
    GZ_SHIM_eglReleaseThread,
    GZ_SHIM_glXGetProcAddress,
    GZ_SHIM_glXGetProcAddressARB,
    GZ_SHIM_glXSwapBuffers,
    GZ_SHIM_glXCreateContext,
    GZ_SHIM_glXCreateNewContext,
    GZ_SHIM_glXCreateContextAttribsARB,
    GZ_SHIM_glXMakeCurrent,
    GZ_SHIM_glXMakeContextCurrent,
    GZ_SHIM_glXDestroyContext,
    GZ_SHIM_glPushDebugGroup,
    GZ_SHIM_glPushDebugGroupKHR,
    GZ_SHIM_glPopDebugGroup,
    GZ_SHIM_glPopDebugGroupKHR,
    GZ_SHIM_glPushGroupMarkerEXT,
    GZ_SHIM_glPopGroupMarkerEXT,
    GZ_SHIM_glFlush,
    GZ_SHIM_glFinish,
    GZ_SHIM_glFenceSync,
    GZ_SHIM_glReadPixels,
    GZ_SHIM_glReadnPixels,
    GZ_SHIM_glReadnPixelsARB,
    GZ_SHIM_glReadnPixelsEXT,
    GZ_SHIM_glReadnPixelsKHR,
    GZ_SHIM_COUNT
} gz_shim_fn;

/* The real function (NULL when no loaded library has it). */
void *gz_shim_real(gz_shim_fn fn);
/* Our wrapper for name, or NULL when we do not wrap it. */
void *gz_shim_wrapper_for(const char *name, gz_shim_fn *fn);
/* Remembers where the real function is (from a dlsym or GetProcAddress the
 * program made) when we had not found it yet. */
void gz_shim_note_real(gz_shim_fn fn, void *real);
/* The real dlsym. */
void *gz_shim_real_dlsym(void *handle, const char *name);

/* The wrappers (defined in shim_egl.c, shim_glx.c, shim_gl.c, shim_sync.c). */
extern void *const gz_shim_wrappers[GZ_SHIM_COUNT];

/* The context current on the calling thread, as the shim saw it. */
typedef enum gz_shim_api { GZ_SHIM_EGL = 1, GZ_SHIM_GLX = 2 } gz_shim_api;
gz_gl_ctx *gz_shim_current(void);
void *gz_shim_current_key(void);
/* After a successful make-current (key NULL: none current now). */
void gz_shim_set_current(void *key, gz_shim_api api);
/* Before a make-current or a release: reads back the outgoing context;
 * release: no context will be current after it. */
void gz_shim_leaving(bool release);

#endif
