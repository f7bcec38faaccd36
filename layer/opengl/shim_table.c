/* Our wrappers by name index, as the lookups hand them out. The system
 * headers declare the entry points (with default visibility); the KHR
 * forms exist only in the GLES headers, so they are declared here. */
#define EGL_EGLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>
#define GLX_GLXEXT_PROTOTYPES
#include <GL/glx.h>
#include <GL/glxext.h>

#include "gz_gl_shim.h"

void APIENTRY glPushDebugGroupKHR(GLenum source, GLuint id, GLsizei length, const GLchar *message);
void APIENTRY glPopDebugGroupKHR(void);
void APIENTRY glReadnPixelsKHR(GLint x, GLint y, GLsizei width, GLsizei height, GLenum format,
                               GLenum type, GLsizei bufSize, void *data);
void APIENTRY glReadnPixelsEXT(GLint x, GLint y, GLsizei width, GLsizei height, GLenum format,
                               GLenum type, GLsizei bufSize, void *data);

void *const gz_shim_wrappers[GZ_SHIM_COUNT] = {
    [GZ_SHIM_eglGetProcAddress] = (void *)eglGetProcAddress,
    [GZ_SHIM_eglSwapBuffers] = (void *)eglSwapBuffers,
    [GZ_SHIM_eglSwapBuffersWithDamageEXT] = (void *)eglSwapBuffersWithDamageEXT,
    [GZ_SHIM_eglSwapBuffersWithDamageKHR] = (void *)eglSwapBuffersWithDamageKHR,
    [GZ_SHIM_eglCreateContext] = (void *)eglCreateContext,
    [GZ_SHIM_eglMakeCurrent] = (void *)eglMakeCurrent,
    [GZ_SHIM_eglDestroyContext] = (void *)eglDestroyContext,
    [GZ_SHIM_eglReleaseThread] = (void *)eglReleaseThread,
    [GZ_SHIM_glXGetProcAddress] = (void *)glXGetProcAddress,
    [GZ_SHIM_glXGetProcAddressARB] = (void *)glXGetProcAddressARB,
    [GZ_SHIM_glXSwapBuffers] = (void *)glXSwapBuffers,
    [GZ_SHIM_glXCreateContext] = (void *)glXCreateContext,
    [GZ_SHIM_glXCreateNewContext] = (void *)glXCreateNewContext,
    [GZ_SHIM_glXCreateContextAttribsARB] = (void *)glXCreateContextAttribsARB,
    [GZ_SHIM_glXMakeCurrent] = (void *)glXMakeCurrent,
    [GZ_SHIM_glXMakeContextCurrent] = (void *)glXMakeContextCurrent,
    [GZ_SHIM_glXDestroyContext] = (void *)glXDestroyContext,
    [GZ_SHIM_glPushDebugGroup] = (void *)glPushDebugGroup,
    [GZ_SHIM_glPushDebugGroupKHR] = (void *)glPushDebugGroupKHR,
    [GZ_SHIM_glPopDebugGroup] = (void *)glPopDebugGroup,
    [GZ_SHIM_glPopDebugGroupKHR] = (void *)glPopDebugGroupKHR,
    [GZ_SHIM_glPushGroupMarkerEXT] = (void *)glPushGroupMarkerEXT,
    [GZ_SHIM_glPopGroupMarkerEXT] = (void *)glPopGroupMarkerEXT,
    [GZ_SHIM_glFlush] = (void *)glFlush,
    [GZ_SHIM_glFinish] = (void *)glFinish,
    [GZ_SHIM_glFenceSync] = (void *)glFenceSync,
    [GZ_SHIM_glReadPixels] = (void *)glReadPixels,
    [GZ_SHIM_glReadnPixels] = (void *)glReadnPixels,
    [GZ_SHIM_glReadnPixelsARB] = (void *)glReadnPixelsARB,
    [GZ_SHIM_glReadnPixelsEXT] = (void *)glReadnPixelsEXT,
    [GZ_SHIM_glReadnPixelsKHR] = (void *)glReadnPixelsKHR,
};
