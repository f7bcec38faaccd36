/* KHR_debug groups and EXT_debug_marker markers as nested zones.
 *
 * A group's zone begins only when GL really pushed it (the depth grew) and
 * ends only when GL really popped one (the depth shrank): a push that GL
 * refused (stack overflow, bad length) raises its error for the program as
 * before, and our stack never drifts from GL's. Reading the depth cannot
 * raise an error in a context that has KHR_debug. */
#include <string.h>

#include "gz_gl_shim.h"

typedef void (APIENTRY *push_fn)(GLenum, GLuint, GLsizei, const GLchar *);
typedef void (APIENTRY *pop_fn)(void);
typedef void (APIENTRY *marker_fn)(GLsizei, const GLchar *);

/* The current context when group zones are wanted and GL can tell us its
 * group depth. */
static gz_gl_ctx *group_ctx(void)
{
    gz_gl_ctx *c = gz_shim_current();
    if (!c || gz_client_level() < GZ_LEVEL_LABELS || !gz_gl_ctx_has_debug(c))
        return NULL;
    return c;
}

static GLint group_depth(gz_gl_ctx *c)
{
    GLint d = 0;
    gz_gl_ctx_fns(c)->GetIntegerv(GL_DEBUG_GROUP_STACK_DEPTH, &d);
    return d;
}

static void push_group(gz_shim_fn fn, GLenum source, GLuint id, GLsizei length,
                       const GLchar *message)
{
    push_fn real = (push_fn)gz_shim_real(fn);
    if (!real)
        return;
    gz_gl_ctx *c = group_ctx();
    if (!c) {
        real(source, id, length, message);
        return;
    }
    GLint before = group_depth(c);
    real(source, id, length, message);
    if (group_depth(c) != before + 1)
        return;
    size_t len = message ? (length < 0 ? strlen(message) : (size_t)length) : 0;
    gz_gl_zone_begin(c, gz_intern(message ? message : "", len), GZ_ZONE_LABEL, false,
                     GZ_GL_TAG_DEBUG_GROUP);
}

static void pop_group(gz_shim_fn fn)
{
    pop_fn real = (pop_fn)gz_shim_real(fn);
    if (!real)
        return;
    gz_gl_ctx *c = group_ctx();
    if (!c) {
        real();
        return;
    }
    GLint before = group_depth(c);
    /* The zone ends before the pop: the pop itself is no work of the group.
     * Only when GL's stack (which starts at depth 1) and ours agree: a pop
     * of a group we did not time ends nothing of ours. */
    if (before > 1 && gz_gl_zone_count_tag(c, GZ_GL_TAG_DEBUG_GROUP) == (uint32_t)(before - 1))
        gz_gl_zone_end_tag(c, GZ_GL_TAG_DEBUG_GROUP);
    real();
}

GZ_EXPORT void APIENTRY glPushDebugGroup(GLenum source, GLuint id, GLsizei length,
                                         const GLchar *message);
void APIENTRY glPushDebugGroup(GLenum source, GLuint id, GLsizei length, const GLchar *message)
{
    push_group(GZ_SHIM_glPushDebugGroup, source, id, length, message);
}

GZ_EXPORT void APIENTRY glPushDebugGroupKHR(GLenum source, GLuint id, GLsizei length,
                                            const GLchar *message);
void APIENTRY glPushDebugGroupKHR(GLenum source, GLuint id, GLsizei length, const GLchar *message)
{
    push_group(GZ_SHIM_glPushDebugGroupKHR, source, id, length, message);
}

GZ_EXPORT void APIENTRY glPopDebugGroup(void);
void APIENTRY glPopDebugGroup(void)
{
    pop_group(GZ_SHIM_glPopDebugGroup);
}

GZ_EXPORT void APIENTRY glPopDebugGroupKHR(void);
void APIENTRY glPopDebugGroupKHR(void)
{
    pop_group(GZ_SHIM_glPopDebugGroupKHR);
}

/* EXT_debug_marker has no errors and no depth to ask for: its own stack. */
GZ_EXPORT void APIENTRY glPushGroupMarkerEXT(GLsizei length, const GLchar *marker);
void APIENTRY glPushGroupMarkerEXT(GLsizei length, const GLchar *marker)
{
    marker_fn real = (marker_fn)gz_shim_real(GZ_SHIM_glPushGroupMarkerEXT);
    if (!real)
        return;
    real(length, marker);
    gz_gl_ctx *c = gz_shim_current();
    if (!c || gz_client_level() < GZ_LEVEL_LABELS)
        return;
    size_t len = marker ? (length <= 0 ? strlen(marker) : (size_t)length) : 0;
    gz_gl_zone_begin(c, gz_intern(marker ? marker : "", len), GZ_ZONE_LABEL, false,
                     GZ_GL_TAG_MARKER);
}

GZ_EXPORT void APIENTRY glPopGroupMarkerEXT(void);
void APIENTRY glPopGroupMarkerEXT(void)
{
    pop_fn real = (pop_fn)gz_shim_real(GZ_SHIM_glPopGroupMarkerEXT);
    if (!real)
        return;
    gz_gl_ctx *c = gz_shim_current();
    if (c && gz_client_level() >= GZ_LEVEL_LABELS)
        gz_gl_zone_end_tag(c, GZ_GL_TAG_MARKER);
    real();
}
