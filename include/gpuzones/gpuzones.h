/* gpuzones public API: start-up, shut-down, frame marks, messages, and the
 * source locations that GPU zone macros (gpuzones/vulkan.h, opengl.h,
 * opencl.h) carry. Usable from C11 and C++.
 *
 * Everything is compiled in only when GPUZONES_ENABLE is defined (before
 * the include, or with -DGPUZONES_ENABLE). Without it every macro expands
 * to no code, no gpuzones function is referenced and the program need not
 * link libgpuzones. The macros still name their arguments, unevaluated
 * (GPUZONES_UNUSED_), so that a variable used only as a macro argument
 * draws no unused-variable warning in either build.
 *
 * Tracy's names are provided as well (FrameMark, TracyMessage…), unless
 * GPUZONES_NO_TRACY_NAMES is defined, so that code written for Tracy's GPU
 * macros builds unchanged. */
#ifndef GPUZONES_GPUZONES_H
#define GPUZONES_GPUZONES_H

#include <stddef.h>
#include <stdint.h>

/* Names its arguments without evaluating them: what a disabled macro
 * expands to. gpuzones_unused_ is declared, never defined: it is only
 * named inside sizeof, whose operand is not evaluated, and its "..." takes
 * any argument (a handle, a string, a function name). */
#ifdef __cplusplus
extern "C" int gpuzones_unused_(int, ...);
#else
int gpuzones_unused_(int, ...);
#endif
#define GPUZONES_UNUSED_(...) ((void)sizeof(gpuzones_unused_(0, __VA_ARGS__)))

#ifdef GPUZONES_ENABLE

#ifdef __cplusplus
extern "C" {
#endif

#define GPUZONES_API __attribute__((visibility("default")))

/* Where a zone comes from. Macros keep one in static storage per call
 * site; the library copies the strings on first use. color: 0xRRGGBB, 0
 * for the viewer's default. */
typedef struct gpuzones_srcloc {
    const char *name;
    const char *function;
    const char *file;
    uint32_t line;
    uint32_t color;
} gpuzones_srcloc;

/* Starts the client now (it also starts on first use). Returns 0 when
 * gpuzones is disabled (GPUZONES_ENABLE=0 in the environment) or failed to
 * start; every other call is then a cheap no-op. */
GPUZONES_API int gpuzones_startup(void);
/* Drains what is queued, ends the trace file and prints the summary now
 * rather than at exit. Later zones are dropped (and counted). */
GPUZONES_API void gpuzones_shutdown(void);
/* 1 while the client runs and records. */
GPUZONES_API int gpuzones_is_enabled(void);
/* A frame boundary on the calling thread (name NULL: the main frame set). */
GPUZONES_API void gpuzones_frame_mark(const char *name);
/* A message on the calling thread's timeline; the text is copied. */
GPUZONES_API void gpuzones_message(const char *text, size_t len);

/* An id for a source location (0 when the table is full: the zone then
 * shows as "<name dropped>"). Equal contents give equal ids. */
GPUZONES_API uint32_t gpuzones_srcloc_id(const gpuzones_srcloc *loc);
/* The same for a name that lives only for the call (…Transient macros). */
GPUZONES_API uint32_t gpuzones_srcloc_transient(const char *name, size_t name_len,
                                                const char *function, const char *file,
                                                uint32_t line, uint32_t color);

/* The id of a static location, cached per call site: one relaxed atomic
 * load on every call after the first. */
static inline uint32_t gpuzones_srcloc_cached(const gpuzones_srcloc *loc, uint32_t *cache)
{
    uint32_t id = __atomic_load_n(cache, __ATOMIC_RELAXED);
    if (!id) {
        id = gpuzones_srcloc_id(loc);
        __atomic_store_n(cache, id, __ATOMIC_RELAXED);
    }
    return id;
}

#ifdef __cplusplus
}
#endif

#define GPUZONES_CONCAT_(a, b) a##b
#define GPUZONES_CONCAT(a, b) GPUZONES_CONCAT_(a, b)
/* A static source location and its cached id, as an expression. */
#define GPUZONES_SRCLOC_ID(name, color)                                                       \
    __extension__({                                                                           \
        static const gpuzones_srcloc gpuzones_loc_ = {(name), __func__, __FILE__,             \
                                                      (uint32_t)__LINE__, (uint32_t)(color)}; \
        static uint32_t gpuzones_id_;                                                         \
        gpuzones_srcloc_cached(&gpuzones_loc_, &gpuzones_id_);                                \
    })

#define GpuzonesStartup() gpuzones_startup()
#define GpuzonesShutdown() gpuzones_shutdown()
#define GpuzonesIsEnabled() gpuzones_is_enabled()
#define GpuzonesFrameMark gpuzones_frame_mark(NULL)
#define GpuzonesFrameMarkNamed(name) gpuzones_frame_mark(name)
#define GpuzonesMessage(text, size) gpuzones_message((text), (size))
#define GpuzonesMessageL(text) gpuzones_message((text), __builtin_strlen(text))

#else /* !GPUZONES_ENABLE */

#define GpuzonesStartup() 0
#define GpuzonesShutdown()
#define GpuzonesIsEnabled() 0
#define GpuzonesFrameMark
#define GpuzonesFrameMarkNamed(name) GPUZONES_UNUSED_(name)
#define GpuzonesMessage(text, size) GPUZONES_UNUSED_(text, size)
#define GpuzonesMessageL(text) GPUZONES_UNUSED_(text)

#endif /* GPUZONES_ENABLE */

#ifndef GPUZONES_NO_TRACY_NAMES
#define FrameMark GpuzonesFrameMark
#define FrameMarkNamed(name) GpuzonesFrameMarkNamed(name)
#define TracyMessage(text, size) GpuzonesMessage(text, size)
#define TracyMessageL(text) GpuzonesMessageL(text)
#define TracyIsConnected GpuzonesIsEnabled()
#endif

#endif /* GPUZONES_GPUZONES_H */
