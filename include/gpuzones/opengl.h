/* gpuzones OpenGL zones with Tracy's names (TracyGpuContext, TracyGpuZone…).
 *
 * The zones belong to the GL context current on the calling thread, timed
 * with GL_TIMESTAMP queries (desktop GL 3.3 / ARB_timer_query, GLES
 * EXT_disjoint_timer_query). When the LD_PRELOAD shim (libgpuzones_gl.so)
 * is active as well, these zones land on the same track as its frame and
 * debug-group zones. Results are read back at each swap (with the shim)
 * and by TracyGpuCollect, never waiting for the GPU.
 *
 * The program's GL may come from libEGL/libGL or through libepoxy or GLAD:
 * libgpuzones links no GL library and uses the program's EGL or GLX
 * (eglGetProcAddress, glXGetProcAddressARB) at run time.
 *
 * Without GPUZONES_ENABLE every macro expands to no code (arguments are
 * named, not evaluated, so that variables used only in the macros draw no
 * warning). In C, scoped
 * zones end at the end of the enclosing block (__attribute__((cleanup)));
 * GpuzonesGlZoneBegin/End are the explicit forms. */
#ifndef GPUZONES_OPENGL_H
#define GPUZONES_OPENGL_H

#include "gpuzones.h"

#ifdef GPUZONES_ENABLE

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An open zone; {NULL, 0} when it was not recorded. */
typedef struct gpuzones_gl_zone {
    void *ctx;
    uint32_t token;
} gpuzones_gl_zone;

/* Makes the current GL context a GPU context (it also becomes one on its
 * first zone). Returns 1 when its zones are timed. */
GPUZONES_API int gpuzones_gl_context(void);
/* Names the current context's track. */
GPUZONES_API void gpuzones_gl_context_name(const char *name, size_t size);
/* srcloc_id: from GPUZONES_SRCLOC_ID or gpuzones_srcloc_transient. */
GPUZONES_API gpuzones_gl_zone gpuzones_gl_zone_begin(uint32_t srcloc_id, int active);
/* Ends the zone (with its context current); resets *zone. */
GPUZONES_API void gpuzones_gl_zone_end(gpuzones_gl_zone *zone);
/* Reads back the current context's finished zones without waiting. */
GPUZONES_API void gpuzones_gl_collect(void);

#ifdef __cplusplus
}
struct gpuzones_gl_scoped_ {
    gpuzones_gl_zone z;
    explicit gpuzones_gl_scoped_(gpuzones_gl_zone zone) : z(zone) {}
    ~gpuzones_gl_scoped_() { gpuzones_gl_zone_end(&z); }
    gpuzones_gl_scoped_(const gpuzones_gl_scoped_ &) = delete;
    gpuzones_gl_scoped_ &operator=(const gpuzones_gl_scoped_ &) = delete;
};
#define GPUZONES_GL_SCOPED_(var, id, active) gpuzones_gl_scoped_ var(gpuzones_gl_zone_begin((id), (active)))
#else
#define GPUZONES_GL_SCOPED_(var, id, active)                                        \
    gpuzones_gl_zone var __attribute__((cleanup(gpuzones_gl_zone_end), unused)) =    \
        gpuzones_gl_zone_begin((id), (active))
#endif

#define GPUZONES_GL_TRANSIENT_ID_(name, active)                                        \
    ((active) ? gpuzones_srcloc_transient((name), strlen(name), __func__, __FILE__,    \
                                          (uint32_t)__LINE__, 0)                        \
              : 0u)

#define GpuzonesGlContext gpuzones_gl_context()
#define GpuzonesGlContextName(name, size) gpuzones_gl_context_name((name), (size))
#define GpuzonesGlZone(name)                                                           \
    GPUZONES_GL_SCOPED_(GPUZONES_CONCAT(gpuzones_glz_, __LINE__), GPUZONES_SRCLOC_ID(name, 0), 1)
#define GpuzonesGlZoneC(name, color)                                                   \
    GPUZONES_GL_SCOPED_(GPUZONES_CONCAT(gpuzones_glz_, __LINE__),                      \
                        GPUZONES_SRCLOC_ID(name, color), 1)
#define GpuzonesGlNamedZone(var, name, active)                                         \
    GPUZONES_GL_SCOPED_(var, GPUZONES_SRCLOC_ID(name, 0), active)
#define GpuzonesGlNamedZoneC(var, name, color, active)                                 \
    GPUZONES_GL_SCOPED_(var, GPUZONES_SRCLOC_ID(name, color), active)
#define GpuzonesGlZoneTransient(var, name, active)                                     \
    GPUZONES_GL_SCOPED_(var, GPUZONES_GL_TRANSIENT_ID_(name, active), active)
/* Explicit forms: gpuzones_gl_zone z = GpuzonesGlZoneBegin("name"); …
 * GpuzonesGlZoneEnd(z); */
#define GpuzonesGlZoneBegin(name) gpuzones_gl_zone_begin(GPUZONES_SRCLOC_ID(name, 0), 1)
#define GpuzonesGlZoneEnd(zone) gpuzones_gl_zone_end(&(zone))
#define GpuzonesGlCollect gpuzones_gl_collect()

#else /* !GPUZONES_ENABLE */

#define GpuzonesGlContext
#define GpuzonesGlContextName(name, size) GPUZONES_UNUSED_(name, size)
#define GpuzonesGlZone(name) GPUZONES_UNUSED_(name)
#define GpuzonesGlZoneC(name, color) GPUZONES_UNUSED_(name, color)
#define GpuzonesGlNamedZone(var, name, active) GPUZONES_UNUSED_(name, active)
#define GpuzonesGlNamedZoneC(var, name, color, active) GPUZONES_UNUSED_(name, color, active)
#define GpuzonesGlZoneTransient(var, name, active) GPUZONES_UNUSED_(name, active)
#define GpuzonesGlCollect

#endif /* GPUZONES_ENABLE */

#ifndef GPUZONES_NO_TRACY_NAMES
#define TracyGpuContext GpuzonesGlContext
#define TracyGpuContextName(name, size) GpuzonesGlContextName(name, size)
#define TracyGpuZone(name) GpuzonesGlZone(name)
#define TracyGpuZoneC(name, color) GpuzonesGlZoneC(name, color)
#define TracyGpuNamedZone(var, name, active) GpuzonesGlNamedZone(var, name, active)
#define TracyGpuNamedZoneC(var, name, color, active) GpuzonesGlNamedZoneC(var, name, color, active)
#define TracyGpuZoneTransient(var, name, active) GpuzonesGlZoneTransient(var, name, active)
#define TracyGpuCollect GpuzonesGlCollect
#endif

#endif /* GPUZONES_OPENGL_H */
