/* GLX wrappers: the same as EGL's for programs on X. */
#define GLX_GLXEXT_PROTOTYPES
#include <GL/glx.h>
#include <GL/glxext.h>

#include "gz_gl_shim.h"

typedef void (*swap_fn)(Display *, GLXDrawable);
typedef GLXContext (*create_fn)(Display *, XVisualInfo *, GLXContext, Bool);
typedef GLXContext (*create_new_fn)(Display *, GLXFBConfig, int, GLXContext, Bool);
typedef GLXContext (*create_attribs_fn)(Display *, GLXFBConfig, GLXContext, Bool, const int *);
typedef Bool (*make_current_fn)(Display *, GLXDrawable, GLXContext);
typedef Bool (*make_context_current_fn)(Display *, GLXDrawable, GLXDrawable, GLXContext);
typedef void (*destroy_fn)(Display *, GLXContext);

GZ_EXPORT void glXSwapBuffers(Display *dpy, GLXDrawable drawable);
void glXSwapBuffers(Display *dpy, GLXDrawable drawable)
{
    swap_fn real = (swap_fn)gz_shim_real(GZ_SHIM_glXSwapBuffers);
    if (!real)
        return;
    gz_gl_ctx *c = gz_shim_current();
    gz_gl_frame_boundary(c, true);
    real(dpy, drawable);
    gz_gl_frame_boundary(c, false);
    gz_gl_swap_mark(c);
}

/* Creation registers the context (see shim_egl.c); a failed one, nothing. */
static GLXContext created(GLXContext ctx)
{
    if (ctx)
        gz_gl_ctx_created(ctx);
    return ctx;
}

GZ_EXPORT GLXContext glXCreateContext(Display *dpy, XVisualInfo *vis, GLXContext share,
                                      Bool direct);
GLXContext glXCreateContext(Display *dpy, XVisualInfo *vis, GLXContext share, Bool direct)
{
    create_fn real = (create_fn)gz_shim_real(GZ_SHIM_glXCreateContext);
    return real ? created(real(dpy, vis, share, direct)) : NULL;
}

GZ_EXPORT GLXContext glXCreateNewContext(Display *dpy, GLXFBConfig config, int render_type,
                                         GLXContext share, Bool direct);
GLXContext glXCreateNewContext(Display *dpy, GLXFBConfig config, int render_type,
                               GLXContext share, Bool direct)
{
    create_new_fn real = (create_new_fn)gz_shim_real(GZ_SHIM_glXCreateNewContext);
    return real ? created(real(dpy, config, render_type, share, direct)) : NULL;
}

GZ_EXPORT GLXContext glXCreateContextAttribsARB(Display *dpy, GLXFBConfig config,
                                                GLXContext share, Bool direct,
                                                const int *attribs);
GLXContext glXCreateContextAttribsARB(Display *dpy, GLXFBConfig config, GLXContext share,
                                      Bool direct, const int *attribs)
{
    create_attribs_fn real = (create_attribs_fn)gz_shim_real(GZ_SHIM_glXCreateContextAttribsARB);
    return real ? created(real(dpy, config, share, direct, attribs)) : NULL;
}

GZ_EXPORT Bool glXMakeCurrent(Display *dpy, GLXDrawable drawable, GLXContext ctx);
Bool glXMakeCurrent(Display *dpy, GLXDrawable drawable, GLXContext ctx)
{
    make_current_fn real = (make_current_fn)gz_shim_real(GZ_SHIM_glXMakeCurrent);
    if (!real)
        return False;
    if ((void *)ctx != gz_shim_current_key())
        gz_shim_leaving(ctx == NULL);
    Bool r = real(dpy, drawable, ctx);
    if (r)
        gz_shim_set_current(ctx, GZ_SHIM_GLX);
    return r;
}

GZ_EXPORT Bool glXMakeContextCurrent(Display *dpy, GLXDrawable draw, GLXDrawable read,
                                     GLXContext ctx);
Bool glXMakeContextCurrent(Display *dpy, GLXDrawable draw, GLXDrawable read, GLXContext ctx)
{
    make_context_current_fn real =
        (make_context_current_fn)gz_shim_real(GZ_SHIM_glXMakeContextCurrent);
    if (!real)
        return False;
    if ((void *)ctx != gz_shim_current_key())
        gz_shim_leaving(ctx == NULL);
    Bool r = real(dpy, draw, read, ctx);
    if (r)
        gz_shim_set_current(ctx, GZ_SHIM_GLX);
    return r;
}

GZ_EXPORT void glXDestroyContext(Display *dpy, GLXContext ctx);
void glXDestroyContext(Display *dpy, GLXContext ctx)
{
    destroy_fn real = (destroy_fn)gz_shim_real(GZ_SHIM_glXDestroyContext);
    if (!real)
        return;
    gz_gl_ctx_retire(ctx, (void *)ctx == gz_shim_current_key());
    real(dpy, ctx);
}
