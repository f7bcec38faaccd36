/* The calls that flush the driver's work: glFlush, glFinish, glFenceSync,
 * glReadPixels and glReadnPixels (core, ARB, EXT, KHR). For a context that
 * has not swapped they are its zone boundaries (gz_gl_sync_point); once it
 * swapped they pass straight through, but for glFinish's CPU zone and its
 * flow from the GPU work it waited for. */
#define GL_GLEXT_PROTOTYPES
#include "gz_gl_shim.h"

typedef void (APIENTRY *void_fn)(void);
typedef GLsync (APIENTRY *fence_fn)(GLenum, GLbitfield);
typedef void (APIENTRY *read_fn)(GLint, GLint, GLsizei, GLsizei, GLenum, GLenum, void *);
typedef void (APIENTRY *readn_fn)(GLint, GLint, GLsizei, GLsizei, GLenum, GLenum, GLsizei,
                                  void *);

/* Set while this thread is inside the context's code: the context calls
 * glFlush itself, and were it handed our wrapper (through a lookup of the
 * program's that we answered) it must get the real call only. */
static __thread bool inside;

/* The context to tell, or NULL: none current, swapped already, or we are
 * inside it. */
static gz_gl_ctx *sync_ctx(void)
{
    gz_gl_ctx *c = gz_shim_current();
    if (!c || inside || gz_gl_ctx_swapped(c))
        return NULL;
    return c;
}

static void point(gz_gl_ctx *c, gz_gl_sync call, bool before)
{
    inside = true;
    gz_gl_sync_point(c, call, before);
    inside = false;
}

static void flush_call(gz_shim_fn fn, gz_gl_sync call)
{
    void_fn real = (void_fn)gz_shim_real(fn);
    if (!real)
        return;
    gz_gl_ctx *c = sync_ctx();
    if (c)
        point(c, call, true);
    real();
    if (c)
        point(c, call, false);
}

GZ_EXPORT void APIENTRY glFlush(void);
void APIENTRY glFlush(void)
{
    flush_call(GZ_SHIM_glFlush, GZ_GL_SYNC_FLUSH);
}

/* glFinish also waits for the GPU: on a timed context it gets a CPU zone,
 * and a flow to it from the end of the newest zone that ended before it. */
GZ_EXPORT void APIENTRY glFinish(void);
void APIENTRY glFinish(void)
{
    static uint32_t name_id;
    void_fn real = (void_fn)gz_shim_real(GZ_SHIM_glFinish);
    if (!real)
        return;
    gz_gl_ctx *timed = inside ? NULL : gz_shim_current();
    gz_gl_ctx *c = sync_ctx();
    if (c)
        point(c, GZ_GL_SYNC_FINISH, true);
    uint64_t t0 = gz_host_now_ns();
    real();
    uint64_t t1 = gz_host_now_ns();
    if (timed)
        gz_gl_waited(timed, t1);
    if (c)
        point(c, GZ_GL_SYNC_FINISH, false);
    if (timed)
        gz_cpu_zone(gz_intern_once(&name_id, "glFinish"), t0, t1);
}

GZ_EXPORT GLsync APIENTRY glFenceSync(GLenum condition, GLbitfield flags);
GLsync APIENTRY glFenceSync(GLenum condition, GLbitfield flags)
{
    fence_fn real = (fence_fn)gz_shim_real(GZ_SHIM_glFenceSync);
    if (!real)
        return NULL;
    gz_gl_ctx *c = sync_ctx();
    if (c)
        point(c, GZ_GL_SYNC_FENCE, true);
    GLsync s = real(condition, flags);
    if (c)
        point(c, GZ_GL_SYNC_FENCE, false);
    return s;
}

GZ_EXPORT void APIENTRY glReadPixels(GLint x, GLint y, GLsizei width, GLsizei height,
                                     GLenum format, GLenum type, void *data);
void APIENTRY glReadPixels(GLint x, GLint y, GLsizei width, GLsizei height, GLenum format,
                           GLenum type, void *data)
{
    read_fn real = (read_fn)gz_shim_real(GZ_SHIM_glReadPixels);
    if (!real)
        return;
    gz_gl_ctx *c = sync_ctx();
    if (c)
        point(c, GZ_GL_SYNC_READ_PIXELS, true);
    real(x, y, width, height, format, type, data);
    if (c)
        point(c, GZ_GL_SYNC_READ_PIXELS, false);
}

static void readn(gz_shim_fn fn, GLint x, GLint y, GLsizei width, GLsizei height, GLenum format,
                  GLenum type, GLsizei size, void *data)
{
    readn_fn real = (readn_fn)gz_shim_real(fn);
    if (!real)
        return;
    gz_gl_ctx *c = sync_ctx();
    if (c)
        point(c, GZ_GL_SYNC_READ_PIXELS, true);
    real(x, y, width, height, format, type, size, data);
    if (c)
        point(c, GZ_GL_SYNC_READ_PIXELS, false);
}

GZ_EXPORT void APIENTRY glReadnPixels(GLint x, GLint y, GLsizei width, GLsizei height,
                                      GLenum format, GLenum type, GLsizei size, void *data);
void APIENTRY glReadnPixels(GLint x, GLint y, GLsizei width, GLsizei height, GLenum format,
                            GLenum type, GLsizei size, void *data)
{
    readn(GZ_SHIM_glReadnPixels, x, y, width, height, format, type, size, data);
}

GZ_EXPORT void APIENTRY glReadnPixelsARB(GLint x, GLint y, GLsizei width, GLsizei height,
                                         GLenum format, GLenum type, GLsizei size, void *data);
void APIENTRY glReadnPixelsARB(GLint x, GLint y, GLsizei width, GLsizei height, GLenum format,
                               GLenum type, GLsizei size, void *data)
{
    readn(GZ_SHIM_glReadnPixelsARB, x, y, width, height, format, type, size, data);
}

GZ_EXPORT void APIENTRY glReadnPixelsEXT(GLint x, GLint y, GLsizei width, GLsizei height,
                                         GLenum format, GLenum type, GLsizei size, void *data);
void APIENTRY glReadnPixelsEXT(GLint x, GLint y, GLsizei width, GLsizei height, GLenum format,
                               GLenum type, GLsizei size, void *data)
{
    readn(GZ_SHIM_glReadnPixelsEXT, x, y, width, height, format, type, size, data);
}

GZ_EXPORT void APIENTRY glReadnPixelsKHR(GLint x, GLint y, GLsizei width, GLsizei height,
                                         GLenum format, GLenum type, GLsizei size, void *data);
void APIENTRY glReadnPixelsKHR(GLint x, GLint y, GLsizei width, GLsizei height, GLenum format,
                               GLenum type, GLsizei size, void *data)
{
    readn(GZ_SHIM_glReadnPixelsKHR, x, y, width, height, format, type, size, data);
}
