/* The OpenGL GPU context: one per GL context (EGL or GLX), one track each.
 *
 * Zones are bracketed with glQueryCounter(GL_TIMESTAMP) on a ring of query
 * objects and read back on the app's own thread, while the context is
 * current there, only once GL_QUERY_RESULT_AVAILABLE says so: GL may be
 * called only on the thread where the context is current, so the worker
 * thread never touches GL. The context calls GL only through the function
 * pointers it is given, which the GL resolver (gz_gl_resolve.h) finds in
 * the program's own EGL or GLX library at run time, for the LD_PRELOAD
 * shim and the explicit API alike (never the shim's wrappers, so the shim
 * never calls itself): libgpuzones links no GL library, so Vulkan and
 * OpenCL programs load none.
 *
 * Every call it makes is one that cannot raise a GL error in a valid state
 * (nothing it does is observable through glGetError), binds nothing the
 * program can see (glQueryCounter binds no query; a bound GL_QUERY_BUFFER
 * is unbound around the readback and put back), and leaves the debug-group
 * stack alone. */
#ifndef GZ_GL_H
#define GZ_GL_H

#include <stdbool.h>
#include <stdint.h>

#ifndef __gl_h_
#include <GL/gl.h>
#include <GL/glext.h>
#endif
#ifndef GL_GPU_DISJOINT_EXT
#define GL_GPU_DISJOINT_EXT 0x8FBB
#endif

#include "gz_client.h"

/* Our own pointer types, so that this header works after <GL/gl.h> or
 * after libepoxy's headers alike (the tests include it after libepoxy's). */
typedef struct gz_gl_fns {
    void (APIENTRY *GenQueries)(GLsizei n, GLuint *ids);
    void (APIENTRY *QueryCounter)(GLuint id, GLenum target);
    void (APIENTRY *GetQueryObjectiv)(GLuint id, GLenum pname, GLint *params);
    void (APIENTRY *GetQueryObjectui64v)(GLuint id, GLenum pname, GLuint64 *params);
    void (APIENTRY *GetQueryiv)(GLenum target, GLenum pname, GLint *params);
    void (APIENTRY *GetInteger64v)(GLenum pname, GLint64 *data);
    void (APIENTRY *GetIntegerv)(GLenum pname, GLint *data);
    const GLubyte *(APIENTRY *GetString)(GLenum name);
    const GLubyte *(APIENTRY *GetStringi)(GLenum name, GLuint index); /* NULL before 3.0 */
    void (APIENTRY *BindBuffer)(GLenum target, GLuint buffer);
    void (APIENTRY *Flush)(void);
} gz_gl_fns;

/* Resolves one GL entry point by name for the current context
 * (gz_gl_resolve_egl, gz_gl_resolve_glx). */
typedef void *(*gz_gl_resolve_fn)(const char *name);

typedef struct gz_gl_ctx gz_gl_ctx;

/* The context for a GL context handle (EGLContext, GLXContext), created on
 * first use with the handle's context current on the calling thread; NULL
 * when gpuzones is off or the context cannot time (then one message says
 * why, and later calls return NULL cheaply). The caller holds a reference
 * until gz_gl_ctx_put. resolve is called only at creation, once per GL
 * context (ES contexts take the EXT_disjoint_timer_query names). */
GZ_EXPORT gz_gl_ctx *gz_gl_ctx_acquire(void *key, gz_gl_resolve_fn resolve);
/* The GL context behind key was just created (no GL calls: it is not
 * current): its number on the timeline is its place in creation order.
 * Contexts first seen at a make-current are numbered then. */
GZ_EXPORT void gz_gl_ctx_created(void *key);
/* The context for key if one exists, referenced; never creates. */
gz_gl_ctx *gz_gl_ctx_find(void *key);
GZ_EXPORT void gz_gl_ctx_put(gz_gl_ctx *c);
/* The GL context behind key is destroyed: no new zones; when current on
 * the calling thread (current_here), what is finished is read back first
 * (waiting at most a few ms, as the context is going away). */
GZ_EXPORT void gz_gl_ctx_retire(void *key, bool current_here);

/* All the calls below need c's GL context current on the calling thread. */

/* Who opened a zone: GL pops debug groups and markers by position on
 * stacks of their own, so each stack ends its own innermost zone. */
typedef enum gz_gl_tag {
    GZ_GL_TAG_EXPLICIT = 0, /* the public API: ended by token */
    GZ_GL_TAG_DEBUG_GROUP = 1,
    GZ_GL_TAG_MARKER = 2, /* EXT_debug_marker */
} gz_gl_tag;

/* Begins a zone; returns a token for gz_gl_zone_end (0: none, the zone was
 * dropped or timing is off). kind: gz_zone_kind; srcloc: name is a
 * gz_srcloc id. */
GZ_EXPORT uint32_t gz_gl_zone_begin(gz_gl_ctx *c, uint32_t name, gz_zone_kind kind, bool srcloc,
                                    gz_gl_tag tag);
void gz_gl_zone_end(gz_gl_ctx *c, uint32_t token);
/* Open zones with this tag. */
GZ_EXPORT uint32_t gz_gl_zone_count_tag(gz_gl_ctx *c, gz_gl_tag tag);
/* Ends the innermost open zone with this tag. */
GZ_EXPORT void gz_gl_zone_end_tag(gz_gl_ctx *c, gz_gl_tag tag);
/* The functions c calls (the shim reads the group depth with them). */
GZ_EXPORT const gz_gl_fns *gz_gl_ctx_fns(const gz_gl_ctx *c);
/* Whether c has KHR_debug (GL 4.3, GLES 3.2 or the extension): only then
 * may GL_DEBUG_GROUP_STACK_DEPTH be asked for. */
GZ_EXPORT bool gz_gl_ctx_has_debug(const gz_gl_ctx *c);

/* A frame boundary (a swap, or the context made current: then
 * before_swap is false and a frame begins unless one is open): the frame
 * zone (kind frame) that began at the previous boundary ends before the
 * swap (before_swap) and the next one begins after it (!before_swap). The
 * swap flushed the work, so the readback that follows reads what is
 * finished without making the driver flush early. */
GZ_EXPORT void gz_gl_frame_boundary(gz_gl_ctx *c, bool before_swap);
/* A swap of c's surface returned: a CPU frame mark on this thread (c NULL:
 * no timed context, or no surface: nothing). */
GZ_EXPORT void gz_gl_swap_mark(gz_gl_ctx *c);
/* The calls that end a zone of a context that does not swap: each makes
 * the driver flush what was issued before it (glFlush; glFinish also
 * waits; the context flushes after a fence or a read-back itself). */
typedef enum gz_gl_sync {
    GZ_GL_SYNC_FLUSH = 0,
    GZ_GL_SYNC_FINISH,
    GZ_GL_SYNC_FENCE,       /* glFenceSync */
    GZ_GL_SYNC_READ_PIXELS, /* glReadPixels, glReadnPixels* */
    GZ_GL_SYNC_COUNT
} gz_gl_sync;

/* Around such a call (before_call, then after it). Until the context
 * first swaps, its zone boundaries are these calls: a zone "until
 * glFinish" (kind flush) ends before the call and the next begins after
 * it, unless a group or zone is open across the call (then the zone goes
 * on to the next call). From the first swap on, frames take over and this
 * costs one atomic load. After the call, what was flushed is read back. */
GZ_EXPORT void gz_gl_sync_point(gz_gl_ctx *c, gz_gl_sync call, bool before_call);
/* glFinish returned at done_ns: every zone that had ended before it and is
 * not read back yet was done by then (a bound for the clock), and the
 * newest of them gets a flow from its end to this thread's glFinish CPU
 * zone (which must end at done_ns). No GL call. */
GZ_EXPORT void gz_gl_waited(gz_gl_ctx *c, uint64_t done_ns);
/* Whether c swapped already (the shim skips the sync points then). */
GZ_EXPORT bool gz_gl_ctx_swapped(const gz_gl_ctx *c);

/* Reads back what is available and emits finished zones; with flush_all,
 * polls every query issued so far (TracyGpuCollect), otherwise only those
 * issued before the last flush (a swap, a flushing call, ours). Never waits. */
GZ_EXPORT void gz_gl_collect(gz_gl_ctx *c, bool flush_all);
/* Reads back everything issued, waiting for the GPU a few ms at most:
 * for a context that is going away (destroyed, or released by its
 * thread); no frame is open after it. */
GZ_EXPORT void gz_gl_collect_final(gz_gl_ctx *c);
/* Renames c's track. */
void gz_gl_ctx_set_name(gz_gl_ctx *c, const char *name, size_t len);

#endif
