#define _GNU_SOURCE /* dl_iterate_phdr */
/* A headless GL program for the shim's tests: EGL surfaceless (Mesa's
 * llvmpipe), a desktop GL 4.5 core context, rendering into an FBO with a
 * pbuffer bound only so that eglSwapBuffers marks the frames. Built four
 * times: calling GL through libepoxy (GLT_EPOXY), linking libEGL/libGL
 * directly, through libepoxy on GLX (GLT_GLX: an X window on $DISPLAY,
 * Xvfb in the tests, a context from glXCreateContextAttribsARB, frames
 * marked by glXSwapBuffers), and through libepoxy on OpenGL ES 3.2
 * (GLT_GLES: timer queries from EXT_disjoint_timer_query; the groups mode
 * only, the state mode reads desktop-only state). It contains no gpuzones code; it writes what it knows on the
 * CPU (host times around its calls) as JSON lines for the checker.
 *
 *   glt groups TRUTH FRAMES   frames of nested debug groups
 *   glt state                 checks that no wrapped call changes the GL
 *                             state the program can observe; exit 1 if one does
 *   glt contexts              (EGL) two contexts made current in the other
 *                             order than created, a failed creation between
 *                             them; prints the failed creation's EGL error
 *   glt noswap TRUTH FRAMES END [HEAVY]
 *                             the groups' frames, never swapped (EGL: current
 *                             with no surface at all), each ended by END:
 *                             finish, flush, readpixels, fence (glFenceSync +
 *                             glClientWaitSync), or mixed (a glFlush between
 *                             the groups, another inside "pass B", then glFinish);
 *                             on EGL each frame also calls eglSwapBuffers with
 *                             no surface, which fails
 *   glt stress TRUTH N        "outer" { N tiny groups "g" }, no swap and no
 *                             flush at all, then one glFinish
 *   glt churn TRUTH N         (EGL) N contexts, each created, made current, a
 *                             group, glFinish, released and destroyed; the
 *                             resident memory after the first and the last */
#ifdef GLT_GLX
#include <epoxy/gl.h>
#include <epoxy/glx.h>
#elif defined(GLT_EPOXY)
#include <epoxy/egl.h>
#include <epoxy/gl.h>
#else
#define GL_GLEXT_PROTOTYPES
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#ifdef GLT_MACROS
#include <gpuzones/opengl.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "glt: %s\n", what);
    exit(2);
}

#ifdef GLT_GLX
static Display *xdpy;
static Window win;
static GLXContext ctx;
#define SWAP_CALL "glXSwapBuffers"
#else
static EGLDisplay dpy;
static EGLSurface pbuf;
static EGLContext ctx;
static EGLConfig cfg;
#define SWAP_CALL "eglSwapBuffers"
#endif
static GLuint prog, vao, fbo, tex;
static GLint iters_loc;
/* noswap, stress: on EGL the context is current with no surface at all
 * (EGL_KHR_surfaceless_context); on GLX on its window, never swapped. */
static int no_surface;

/* Mesa's driver (swrast_dri.so, llvmpipe) leaks a few allocations of its
 * own and is unloaded by eglTerminate, after which LeakSanitizer cannot
 * name it. Keeping it loaded lets the sanitized test run suppress exactly
 * the driver's leaks (tests/lsan.supp) and nothing of ours, also when the
 * run does not preload tests/lsan/keep_modules.c, which keeps every library. */
static int keep_driver(struct dl_phdr_info *info, size_t size, void *data)
{
    if (info->dlpi_name && strstr(info->dlpi_name, "_dri.so"))
        dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    return 0;
}

static GLuint shader(GLenum type, const char *src)
{
    GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok)
        die("shader compile failed");
    return s;
}

#ifdef GLT_GLX
static void setup_window_system(void)
{
    xdpy = XOpenDisplay(NULL);
    if (!xdpy)
        die("cannot open the X display ($DISPLAY)");
    const int fb_attr[] = {GLX_X_RENDERABLE, True, GLX_DRAWABLE_TYPE, GLX_WINDOW_BIT,
                           GLX_RENDER_TYPE, GLX_RGBA_BIT, GLX_DOUBLEBUFFER, True,
                           GLX_RED_SIZE, 8, GLX_GREEN_SIZE, 8, GLX_BLUE_SIZE, 8, None};
    int n = 0;
    GLXFBConfig *cfgs = glXChooseFBConfig(xdpy, DefaultScreen(xdpy), fb_attr, &n);
    if (!cfgs || n < 1)
        die("no GLX framebuffer config");
    GLXFBConfig cfg = cfgs[0];
    XFree(cfgs);
    XVisualInfo *vi = glXGetVisualFromFBConfig(xdpy, cfg);
    if (!vi)
        die("no visual for the GLX config");
    Window root = RootWindow(xdpy, vi->screen);
    XSetWindowAttributes swa = {.colormap = XCreateColormap(xdpy, root, vi->visual, AllocNone)};
    win = XCreateWindow(xdpy, root, 0, 0, 16, 16, 0, vi->depth, InputOutput, vi->visual,
                        CWColormap, &swa);
    XFree(vi);
    XMapWindow(xdpy, win);
    if (!epoxy_has_glx_extension(xdpy, DefaultScreen(xdpy), "GLX_ARB_create_context_profile"))
        die("no GLX_ARB_create_context_profile");
    const int ctx_attr[] = {GLX_CONTEXT_MAJOR_VERSION_ARB, 4, GLX_CONTEXT_MINOR_VERSION_ARB, 5,
                            GLX_CONTEXT_PROFILE_MASK_ARB, GLX_CONTEXT_CORE_PROFILE_BIT_ARB, None};
    ctx = glXCreateContextAttribsARB(xdpy, cfg, NULL, True, ctx_attr);
    if (!ctx || !glXMakeCurrent(xdpy, win, ctx))
        die("no GL 4.5 core context on GLX");
}

static void swap(void)
{
    glXSwapBuffers(xdpy, win);
}

static void teardown(void)
{
    glXMakeCurrent(xdpy, None, NULL);
    glXDestroyContext(xdpy, ctx);
    XDestroyWindow(xdpy, win);
    XCloseDisplay(xdpy);
}
#else
#ifdef GLT_GLES
/* OpenGL ES 3.2: timer queries from EXT_disjoint_timer_query. */
static const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 2,
                                  EGL_NONE};
#define GLT_RENDERABLE EGL_OPENGL_ES3_BIT
#define GLT_API EGL_OPENGL_ES_API
#else
static const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                                  EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                  EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
#define GLT_RENDERABLE EGL_OPENGL_BIT
#define GLT_API EGL_OPENGL_API
#endif

/* The display and the config, once. */
static void egl_init(void)
{
    if (dpy)
        return;
#ifdef GLT_EPOXY
    dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
#else
    /* An extension function: libEGL does not export it. */
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (!get_platform_display)
        die("no eglGetPlatformDisplayEXT");
    dpy = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
#endif
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, NULL, NULL))
        die("no EGL surfaceless display");
    const EGLint cfg_attr[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                               GLT_RENDERABLE, EGL_NONE};
    EGLint n = 0;
    if (!eglChooseConfig(dpy, cfg_attr, &cfg, 1, &n) || n < 1)
        die("no pbuffer config");
    eglBindAPI(GLT_API);
}

static void setup_window_system(void)
{
    egl_init();
    ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attr);
    if (no_surface) {
        pbuf = EGL_NO_SURFACE;
        if (ctx == EGL_NO_CONTEXT || !eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx))
            die("no surfaceless GL 4.5 core context");
        return;
    }
    const EGLint pb_attr[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
    pbuf = eglCreatePbufferSurface(dpy, cfg, pb_attr);
    if (ctx == EGL_NO_CONTEXT || pbuf == EGL_NO_SURFACE || !eglMakeCurrent(dpy, pbuf, pbuf, ctx))
        die("no GL 4.5 core context");
}

static void swap(void)
{
    eglSwapBuffers(dpy, pbuf);
}

static void teardown(void)
{
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(dpy, ctx);
    if (pbuf != EGL_NO_SURFACE)
        eglDestroySurface(dpy, pbuf);
    eglTerminate(dpy);
}
#endif

#ifdef GLT_GLES
#define GLSL_HEADER "#version 320 es\nprecision highp float;\n"
#else
#define GLSL_HEADER "#version 450\n"
#endif

static void setup(void)
{
    setup_window_system();
    dl_iterate_phdr(keep_driver, NULL);
    GLuint vs = shader(GL_VERTEX_SHADER,
                       GLSL_HEADER
                       "void main() { vec2 p = vec2((gl_VertexID & 1) * 4 - 1, (gl_VertexID & 2) * 2 - 1);\n"
                       "  gl_Position = vec4(p, 0.0, 1.0); }\n");
    GLuint fs = shader(GL_FRAGMENT_SHADER,
                       GLSL_HEADER
                       "uniform int iters; out vec4 color;\n"
                       "void main() { float x = gl_FragCoord.x * 0.001;\n"
                       "  for (int i = 0; i < iters; i++) x = sin(x) * 1.0001 + 0.01;\n"
                       "  color = vec4(x, 0.0, 0.0, 1.0); }\n");
    prog = glCreateProgram();
    glAttachShader(prog, vs);
    glAttachShader(prog, fs);
    glLinkProgram(prog);
    GLint ok = 0;
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok)
        die("program link failed");
    glDeleteShader(vs);
    glDeleteShader(fs);
    iters_loc = glGetUniformLocation(prog, "iters");
    glGenVertexArrays(1, &vao);
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    /* One 64x64 tile: llvmpipe stamps a timestamp query when the thread
     * that rasterises the scene's last tile reaches it, so with one tile a
     * zone spans all of its work (see run_gl.py). */
    glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, 64, 64);
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
        die("FBO incomplete");
    glViewport(0, 0, 64, 64);
    glUseProgram(prog);
    glBindVertexArray(vao);
}

static void draw(int iters)
{
    glUniform1i(iters_loc, iters);
    glDrawArrays(GL_TRIANGLES, 0, 3);
}

/* The CPU reads the frame's result: everything before it has finished. */
static uint64_t read_result(void)
{
    unsigned char px[4];
    glReadPixels(0, 0, 1, 1, GL_RGBA, GL_UNSIGNED_BYTE, px);
    return now_ns();
}

static void push(const char *name)
{
    glPushDebugGroup(GL_DEBUG_SOURCE_APPLICATION, 1, -1, name);
}

/* Each frame: "pass A" { light draw; "inner" { heavy draw } }, "pass B"
 * { light draw }, the CPU reads the result, swap. */
static int run_groups(const char *truth_path, int frames, int heavy)
{
    FILE *t = fopen(truth_path, "w");
    if (!t)
        die("cannot write the truth file");
    uint64_t t0 = now_ns();
    setup();
    fprintf(t, "{\"ev\":\"current\",\"ns\":%llu}\n", (unsigned long long)t0);
    for (int f = 0; f < frames; f++) {
        uint64_t a = now_ns();
        push("pass A");
        draw(4);
        uint64_t b = now_ns();
        push("inner");
        draw(heavy);
        glPopDebugGroup();
        glPopDebugGroup();
        uint64_t c = now_ns();
        push("pass B");
        draw(4);
        glPopDebugGroup();
        uint64_t r = read_result();
        uint64_t s0 = now_ns();
        swap();
        uint64_t s1 = now_ns();
        fprintf(t,
                "{\"ev\":\"frame\",\"frame\":%d,\"push\":{\"pass A\":%llu,\"inner\":%llu,"
                "\"pass B\":%llu},\"read\":%llu,\"swap_begin\":%llu,\"swap_end\":%llu}\n",
                f, (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
                (unsigned long long)r, (unsigned long long)s0, (unsigned long long)s1);
    }
    glFinish();
    fprintf(t, "{\"ev\":\"finish\",\"ns\":%llu}\n", (unsigned long long)now_ns());
    teardown();
    fprintf(t, "{\"ev\":\"end\",\"ns\":%llu}\n", (unsigned long long)now_ns());
    fclose(t);
    return 0;
}

/* ---- programs that never swap -------------------------------------------- */

/* Ends a frame with the call END names; returns the host time by which the
 * work before it had certainly finished (0: not known, for glFlush). */
static uint64_t end_frame(const char *end)
{
    if (!strcmp(end, "finish") || !strcmp(end, "mixed")) {
        glFinish();
        return now_ns();
    }
    if (!strcmp(end, "flush")) {
        glFlush();
        return 0;
    }
    if (!strcmp(end, "readpixels"))
        return read_result();
    if (!strcmp(end, "fence")) {
        GLsync s = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        GLenum r = glClientWaitSync(s, GL_SYNC_FLUSH_COMMANDS_BIT, 5000000000ull);
        uint64_t t = now_ns();
        glDeleteSync(s);
        if (r != GL_ALREADY_SIGNALED && r != GL_CONDITION_SATISFIED)
            die("glClientWaitSync did not see the fence");
        return t;
    }
    die("unknown frame end");
    return 0;
}

/* The groups' frames of run_groups, never swapped, each ended by END
 * (mixed: a glFlush between the groups, one inside "pass B" that ends no
 * zone, then glFinish). Truth: per frame the host times around the calls. */
static int run_noswap(const char *truth_path, int frames, const char *end, int heavy)
{
    FILE *t = fopen(truth_path, "w");
    if (!t)
        die("cannot write the truth file");
    no_surface = 1;
    uint64_t t0 = now_ns();
    setup();
    fprintf(t, "{\"ev\":\"current\",\"ns\":%llu}\n", (unsigned long long)t0);
    for (int f = 0; f < frames; f++) {
        uint64_t a = now_ns();
        push("pass A");
        draw(4);
        push("inner");
        draw(heavy);
        glPopDebugGroup();
        glPopDebugGroup();
        uint64_t m0 = 0, m1 = 0;
        if (!strcmp(end, "mixed")) {
            m0 = now_ns();
            glFlush();
            m1 = now_ns();
        }
        push("pass B");
        draw(4);
        if (!strcmp(end, "mixed"))
            glFlush(); /* inside a group: ends no zone */
        glPopDebugGroup();
        uint64_t e0 = now_ns();
        uint64_t done = end_frame(end);
        uint64_t e1 = now_ns();
#ifndef GLT_GLX
        /* As a surfaceless program may: a swap with no surface fails and
         * swaps nothing (it must not make frames). */
        if (eglSwapBuffers(dpy, EGL_NO_SURFACE) || eglGetError() != EGL_BAD_SURFACE)
            die("a swap of no surface did not fail with EGL_BAD_SURFACE");
#endif
        fprintf(t,
                "{\"ev\":\"frame\",\"frame\":%d,\"begin\":%llu,\"flush_begin\":%llu,"
                "\"flush_end\":%llu,\"end_begin\":%llu,\"end_end\":%llu,\"done\":%llu}\n",
                f, (unsigned long long)a, (unsigned long long)m0, (unsigned long long)m1,
                (unsigned long long)e0, (unsigned long long)e1, (unsigned long long)done);
    }
    glFinish();
    fprintf(t, "{\"ev\":\"finish\",\"ns\":%llu}\n", (unsigned long long)now_ns());
    teardown();
    fclose(t);
    return 0;
}

/* Many tiny groups inside one, with nothing that flushes or swaps until
 * the end: the driver never gets a word from the program to flush. */
static int run_stress(const char *truth_path, int n)
{
    FILE *t = fopen(truth_path, "w");
    if (!t)
        die("cannot write the truth file");
    no_surface = 1;
    setup();
    uint64_t a = now_ns();
    push("outer");
    for (int i = 0; i < n; i++) {
        push("g");
        glClear(GL_COLOR_BUFFER_BIT);
        glPopDebugGroup();
    }
    glPopDebugGroup();
    uint64_t e0 = now_ns();
    glFinish();
    uint64_t done = now_ns();
    fprintf(t, "{\"ev\":\"stress\",\"groups\":%d,\"begin\":%llu,\"end_begin\":%llu,"
               "\"done\":%llu}\n",
            n, (unsigned long long)a, (unsigned long long)e0, (unsigned long long)done);
    teardown();
    fclose(t);
    return 0;
}

#ifdef GLT_MACROS
/* ---- the explicit API (include/gpuzones/opengl.h) --------------------------
 * Each frame: "scene" { debug group "pass A" { "heavy" (named, colored),
 * "transient N" (a transient name), "explicit" (Begin/End), "inactive"
 * (active = 0: no zone) } }, then the CPU reads the result, swaps and
 * collects. The source lines go to the truth file. */
static int run_macros(const char *truth_path, int frames, int heavy_iters)
{
    FILE *t = fopen(truth_path, "w");
    if (!t)
        die("cannot write the truth file");
    uint64_t t0 = now_ns();
    setup();
    TracyGpuContext;
    TracyGpuContextName("glt macros", 10);
    fprintf(t, "{\"ev\":\"current\",\"ns\":%llu}\n", (unsigned long long)t0);
    int l_scene = 0, l_heavy = 0, l_trans = 0, l_expl = 0;
    for (int f = 0; f < frames; f++) {
        uint64_t a = now_ns();
        {
            TracyGpuZone("scene"); l_scene = __LINE__;
            push("pass A");
            {
                TracyGpuNamedZoneC(heavy, "heavy", 0xff0000, 1); l_heavy = __LINE__;
                draw(heavy_iters);
            }
            {
                char name[32];
                snprintf(name, sizeof name, "transient %d", f % 2);
                TracyGpuZoneTransient(tz, name, 1); l_trans = __LINE__;
                draw(4);
            }
            gpuzones_gl_zone z = GpuzonesGlZoneBegin("explicit"); l_expl = __LINE__;
            draw(4);
            GpuzonesGlZoneEnd(z);
            {
                TracyGpuNamedZone(off, "inactive", 0);
                draw(4);
            }
            glPopDebugGroup();
        }
        uint64_t r = read_result();
        swap();
        TracyGpuCollect;
        fprintf(t, "{\"ev\":\"frame\",\"frame\":%d,\"begin\":%llu,\"read\":%llu}\n", f,
                (unsigned long long)a, (unsigned long long)r);
    }
    glFinish();
    TracyGpuCollect;
    fprintf(t, "{\"ev\":\"finish\",\"ns\":%llu}\n", (unsigned long long)now_ns());
    fprintf(t, "{\"ev\":\"lines\",\"function\":\"%s\",\"scene\":%d,\"heavy\":%d,"
               "\"transient\":%d,\"explicit\":%d}\n",
            __func__, l_scene, l_heavy, l_trans, l_expl);
    teardown();
    fclose(t);
    return 0;
}
#endif

/* ---- observable state ---------------------------------------------------- */

typedef struct state {
    GLint depth, samples_query, elapsed_query, query_buffer;
} state;

static state get_state(void)
{
    state s;
    glGetIntegerv(GL_DEBUG_GROUP_STACK_DEPTH, &s.depth);
    glGetQueryiv(GL_SAMPLES_PASSED, GL_CURRENT_QUERY, &s.samples_query);
    glGetQueryiv(GL_TIME_ELAPSED, GL_CURRENT_QUERY, &s.elapsed_query);
    /* Not (GL_TIMESTAMP, GL_CURRENT_QUERY): glQueryCounter makes no query
     * current, and NVIDIA's driver rejects that pair (GL_INVALID_ENUM)
     * where Mesa answers 0. */
    glGetIntegerv(GL_QUERY_BUFFER_BINDING, &s.query_buffer);
    return s;
}

static int failures;

/* Runs one wrapped call with a known pending error (or none) and checks
 * that exactly that error, and the same state, are seen afterwards. The
 * state reads themselves raise no error (checked first). */
#define CHECK_CALL(label, depth_change, call)                                              \
    do {                                                                                   \
        for (int with_error = 0; with_error < 2; with_error++) {                           \
            if (glGetError() != GL_NO_ERROR)                                               \
                die("an error was pending before " label);                                 \
            state before = get_state();                                                    \
            if (glGetError() != GL_NO_ERROR)                                               \
                die("reading the state raised an error");                                  \
            if (with_error)                                                                \
                glEnable(0xFFFF); /* GL_INVALID_ENUM, sticky until read */                 \
            call;                                                                          \
            GLenum e1 = glGetError(), e2 = glGetError();                                   \
            GLenum want = with_error ? GL_INVALID_ENUM : GL_NO_ERROR;                      \
            if (e1 != want || e2 != GL_NO_ERROR) {                                         \
                fprintf(stderr, "glt: after %s: glGetError gave 0x%x then 0x%x, want 0x%x\n", \
                        label, e1, e2, want);                                              \
                failures++;                                                                \
            }                                                                              \
            state after = get_state();                                                     \
            after.depth -= (depth_change);                                                 \
            if (memcmp(&before, &after, sizeof before)) {                                  \
                fprintf(stderr, "glt: after %s: state changed (depth %d→%d, samples %d→%d, " \
                        "elapsed %d→%d, query buffer %d→%d)\n",                              \
                        label, before.depth, after.depth, before.samples_query,            \
                        after.samples_query, before.elapsed_query, after.elapsed_query,    \
                        before.query_buffer, after.query_buffer);                          \
                failures++;                                                                \
            }                                                                              \
            if (with_error == 0 && (depth_change) != 0)                                    \
                break; /* push/pop once each: the error pass runs on the next call */      \
        }                                                                                  \
    } while (0)

static int run_state(void)
{
    setup();
    /* A query buffer bound and a samples query and a time-elapsed query
     * active, as a program might have them: the shim's readback must
     * neither write into the buffer nor disturb them. */
    GLuint qbuf, queries[2];
    const uint32_t pattern[4] = {0xdeadbeef, 0xdeadbeef, 0xdeadbeef, 0xdeadbeef};
    glGenBuffers(1, &qbuf);
    glBindBuffer(GL_QUERY_BUFFER, qbuf);
    glBufferData(GL_QUERY_BUFFER, sizeof pattern, pattern, GL_DYNAMIC_READ);
    glGenQueries(2, queries);
    for (int frame = 0; frame < 4; frame++) {
        glBeginQuery(GL_SAMPLES_PASSED, queries[0]);
        glBeginQuery(GL_TIME_ELAPSED, queries[1]);
        CHECK_CALL("glPushDebugGroup", 1, push("outer"));
        draw(4);
        CHECK_CALL("glPushDebugGroup (nested)", 1, push("inner"));
        draw(4);
        CHECK_CALL("glPopDebugGroup", -1, glPopDebugGroup());
        CHECK_CALL("glPopDebugGroup (outer)", -1, glPopDebugGroup());
        /* A pop of the default group: GL refuses it (GL_STACK_UNDERFLOW);
         * the program must see that error, and only that one. */
        glPopDebugGroup();
        GLenum e = glGetError();
        if (e != GL_STACK_UNDERFLOW || glGetError() != GL_NO_ERROR) {
            fprintf(stderr, "glt: a refused pop gave 0x%x, want GL_STACK_UNDERFLOW\n", e);
            failures++;
        }
        glEndQuery(GL_TIME_ELAPSED);
        glEndQuery(GL_SAMPLES_PASSED);
        glBeginQuery(GL_SAMPLES_PASSED, queries[0]);
        CHECK_CALL(SWAP_CALL, 0, swap());
        glEndQuery(GL_SAMPLES_PASSED);
    }
    glFinish();
    CHECK_CALL(SWAP_CALL " (after finish)", 0, swap());
    uint32_t got[4];
    glGetBufferSubData(GL_QUERY_BUFFER, 0, sizeof got, got);
    if (memcmp(got, pattern, sizeof got)) {
        fprintf(stderr, "glt: the bound query buffer was written to\n");
        failures++;
    }
    glDeleteQueries(2, queries);
    glDeleteBuffers(1, &qbuf);
    teardown();
    if (failures)
        fprintf(stderr, "glt: %d observable state changes\n", failures);
    else
        printf("glt: state unchanged across every wrapped call\n");
    return failures ? 1 : 0;
}

#ifndef GLT_GLX
/* Resident memory in KiB (/proc/self/statm: pages). */
static long rss_kib(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2)
        die("cannot read /proc/self/statm");
    fclose(f);
    return resident * 4;
}

/* Contexts created and destroyed one after the other, each timed. */
static int run_churn(const char *truth_path, int n)
{
    FILE *t = fopen(truth_path, "w");
    if (!t)
        die("cannot write the truth file");
    egl_init();
    long first = 0;
    for (int i = 0; i < n; i++) {
        EGLContext c = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attr);
        if (c == EGL_NO_CONTEXT || !eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, c))
            die("a churn context");
        push("churn");
        glClear(GL_COLOR_BUFFER_BIT);
        glPopDebugGroup();
        glFinish();
        eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        eglDestroyContext(dpy, c);
        if (i == 0 || i == n / 10)
            first = rss_kib(); /* after the driver's first-use allocations */
    }
    long last = rss_kib();
    fprintf(t, "{\"ev\":\"churn\",\"contexts\":%d,\"rss_first_kib\":%ld,\"rss_last_kib\":%ld,"
               "\"measured_from\":%d}\n",
            n, first, last, n / 10);
    eglTerminate(dpy);
    fclose(t);
    return 0;
}

/* Context creation: the timeline numbers contexts in creation order. The
 * first context created is made current only after the second one, and a
 * failed creation (a version no driver has) between them takes no number
 * and leaves the program its EGL error. */
static int run_contexts(void)
{
    egl_init();
    EGLContext first = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attr);
    const EGLint bad_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 99, EGL_NONE};
    EGLContext bad = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, bad_attr);
    EGLint bad_error = eglGetError();
    if (first == EGL_NO_CONTEXT || bad != EGL_NO_CONTEXT)
        die("the first context");
    setup(); /* the second context, current first */
    push("on second");
    draw(4);
    glPopDebugGroup();
    swap();
    glFinish();
    if (!eglMakeCurrent(dpy, pbuf, pbuf, first))
        die("the first context, made current");
    push("on first");
    glClear(GL_COLOR_BUFFER_BIT);
    glPopDebugGroup();
    swap();
    glFinish();
    if (!eglMakeCurrent(dpy, pbuf, pbuf, ctx))
        die("the second context again");
    eglDestroyContext(dpy, first);
    teardown();
    printf("glt: failed creation error 0x%x\n", (unsigned)bad_error);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "groups"))
        return run_groups(argv[2], atoi(argv[3]), argc >= 5 ? atoi(argv[4]) : 1000);
#ifdef GLT_MACROS
    if (argc >= 4 && !strcmp(argv[1], "macros"))
        return run_macros(argv[2], atoi(argv[3]), argc >= 5 ? atoi(argv[4]) : 1000);
#endif
    if (argc >= 2 && !strcmp(argv[1], "state"))
        return run_state();
    if (argc >= 5 && !strcmp(argv[1], "noswap"))
        return run_noswap(argv[2], atoi(argv[3]), argv[4], argc >= 6 ? atoi(argv[5]) : 1000);
    if (argc >= 4 && !strcmp(argv[1], "stress"))
        return run_stress(argv[2], atoi(argv[3]));
#ifndef GLT_GLX
    if (argc >= 2 && !strcmp(argv[1], "contexts"))
        return run_contexts();
    if (argc >= 4 && !strcmp(argv[1], "churn"))
        return run_churn(argv[2], atoi(argv[3]));
#endif
    fprintf(stderr, "usage: glt groups TRUTH FRAMES [HEAVY] | glt state\n");
    return 2;
}
