/* Finding the program's EGL, GLX and GL functions at run time, and the GL
 * context current on the calling thread: one resolver for the explicit API
 * (gl_api.c) and the LD_PRELOAD shim (layer/opengl) alike.
 *
 * libgpuzones links no GL library (the Vulkan layer and the OpenCL shim
 * load it into programs that have none): the program's own libraries are
 * found where they are loaded, and never loaded here (one the program has
 * not loaded has no current context). */
#ifndef GZ_GL_RESOLVE_H
#define GZ_GL_RESOLVE_H

#include "gz_gl.h"

/* Reads a symbol from a library handle: dlsym, or the shim's real dlsym
 * (the shim's own answers with its wrappers). */
typedef void *(*gz_gl_sym_fn)(void *handle, const char *name);

/* name from the first loaded library of its kind that has it (egl…:
 * libEGL; glX…: libGLX, libGL; other gl…: libGL, libOpenGL, libGLESv2).
 * They are asked by name: a library loaded with RTLD_LOCAL (libepoxy does
 * so) is out of the global scope's reach. */
GZ_EXPORT void *gz_gl_find_loaded(const char *name, gz_gl_sym_fn sym);

/* Finds the program's own function of this name. The default looks in the
 * global scope, then gz_gl_find_loaded with dlsym. The shim's own
 * definitions come first in the global scope, so it sets a finder of its
 * own that sees past them, once, when it is loaded. */
typedef void *(*gz_gl_find_fn)(const char *name);
GZ_EXPORT void gz_gl_use_finder(gz_gl_find_fn find);

/* Resolve functions for gz_gl_ctx_acquire: a GL entry point of the EGL
 * (GLX) context current on this thread. */
GZ_EXPORT void *gz_gl_resolve_egl(const char *name);
GZ_EXPORT void *gz_gl_resolve_glx(const char *name);

/* The shim tells which context it saw made current on this thread (NULL:
 * none); from then on its word is the only source (it sees every
 * make-current). */
GZ_EXPORT void gz_gl_note_current(void *key);
/* The handle of the GL context current on this thread (NULL: none) and
 * the resolve function for it: the shim's word, else EGL's, else GLX's. */
void *gz_gl_current_key(gz_gl_resolve_fn *resolve);

#endif
