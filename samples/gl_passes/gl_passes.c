/* gz-sample-gl-passes: a headless OpenGL program, the shape of a renderer's
 * frame: a few passes, each in a KHR_debug group, drawn into an offscreen
 * framebuffer, then eglSwapBuffers. EGL surfaceless (Mesa's llvmpipe, no
 * window system), a GL 4.5 core context, every GL call through libepoxy.
 *
 * Without gpuzones code it is what the shim times with no recompiling:
 *     gpuzones run -- ./gz-sample-gl-passes
 * gives a "frame" zone per swap and a zone per debug group.
 * Built with GPUZONES_ENABLE (gz-sample-gl-macros) it also marks its passes
 * with the Tracy-style macros of gpuzones/opengl.h, which work with or
 * without the shim; compiled without it they are nothing. Built with
 * GL_PASSES_GLX (gz-sample-gl-passes-glx) it draws on an X window through
 * GLX instead (an X server is needed: Xvfb will do) and swaps with
 * glXSwapBuffers.
 *
 *   gz-sample-gl-passes [frames]
 */
#include <epoxy/gl.h>
#ifdef GL_PASSES_GLX
#include <epoxy/glx.h>
#else
#include <epoxy/egl.h>
#endif
#include <gpuzones/opengl.h>
#include <stdio.h>
#include <stdlib.h>

#define SIZE 128

static void die(const char *what)
{
    fprintf(stderr, "gz-sample-gl-passes: %s\n", what);
    exit(1);
}

#ifdef GL_PASSES_GLX
static Display *xdpy;
static Window win;
static GLXContext ctx;

static void open_context(void)
{
    xdpy = XOpenDisplay(NULL);
    if (!xdpy)
        die("cannot open the X display ($DISPLAY)");
    const int fb_attr[] = {GLX_X_RENDERABLE, True, GLX_DRAWABLE_TYPE, GLX_WINDOW_BIT,
                           GLX_RENDER_TYPE, GLX_RGBA_BIT, GLX_DOUBLEBUFFER, True, None};
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
    win = XCreateWindow(xdpy, root, 0, 0, SIZE, SIZE, 0, vi->depth, InputOutput, vi->visual,
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

static void close_context(void)
{
    glXMakeCurrent(xdpy, None, NULL);
    glXDestroyContext(xdpy, ctx);
    XDestroyWindow(xdpy, win);
    XCloseDisplay(xdpy);
}
#else
static EGLDisplay dpy;
static EGLSurface surface;

static void open_context(void)
{
    dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, NULL, NULL))
        die("no EGL surfaceless display (Mesa's EGL is needed)");
    const EGLint cfg_attr[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                               EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig cfg;
    EGLint n = 0;
    if (!eglChooseConfig(dpy, cfg_attr, &cfg, 1, &n) || n < 1)
        die("no pbuffer config");
    eglBindAPI(EGL_OPENGL_API);
    const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                               EGL_CONTEXT_OPENGL_PROFILE_MASK,
                               EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attr);
    /* A small pbuffer: surfaceless has no window, and a swap of the
     * pbuffer is what marks the end of each frame. */
    const EGLint pb_attr[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
    surface = eglCreatePbufferSurface(dpy, cfg, pb_attr);
    if (ctx == EGL_NO_CONTEXT || surface == EGL_NO_SURFACE ||
        !eglMakeCurrent(dpy, surface, surface, ctx))
        die("no GL 4.5 core context");
}

static void swap(void)
{
    eglSwapBuffers(dpy, surface);
}

static void close_context(void)
{
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglTerminate(dpy);
}
#endif

static GLuint compile(GLenum type, const char *src)
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

/* A full-screen triangle whose fragment shader loops `iters` times: the
 * passes differ in how much work they give the GPU. */
static GLuint make_program(void)
{
    GLuint p = glCreateProgram();
    GLuint vs = compile(GL_VERTEX_SHADER,
                        "#version 450\n"
                        "void main() { vec2 p = vec2((gl_VertexID & 1) * 4 - 1,"
                        " (gl_VertexID & 2) * 2 - 1); gl_Position = vec4(p, 0.0, 1.0); }\n");
    GLuint fs = compile(GL_FRAGMENT_SHADER,
                        "#version 450\n"
                        "uniform int iters; out vec4 color;\n"
                        "void main() { float x = gl_FragCoord.x * 0.01;\n"
                        "  for (int i = 0; i < iters; i++) x = sin(x) * 1.0001 + 0.01;\n"
                        "  color = vec4(x, 0.5, 0.25, 1.0); }\n");
    glAttachShader(p, vs);
    glAttachShader(p, fs);
    glLinkProgram(p);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok)
        die("program link failed");
    glDeleteShader(vs);
    glDeleteShader(fs);
    return p;
}

static void pass(const char *name, GLint iters_loc, int iters)
{
    glPushDebugGroup(GL_DEBUG_SOURCE_APPLICATION, 0, -1, name);
    {
        TracyGpuZone("draw");
        glUniform1i(iters_loc, iters);
        glDrawArrays(GL_TRIANGLES, 0, 3);
    }
    glPopDebugGroup();
}

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 30;
    if (frames < 1)
        die("frames must be at least 1");
    open_context();
    TracyGpuContext;
    TracyGpuContextName("gl_passes", 9);

    GLuint prog = make_program(), vao, fbo, tex;
    GLint iters_loc = glGetUniformLocation(prog, "iters");
    glGenVertexArrays(1, &vao);
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, SIZE, SIZE);
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
        die("framebuffer incomplete");
    glViewport(0, 0, SIZE, SIZE);
    glUseProgram(prog);
    glBindVertexArray(vao);

    unsigned char px[4] = {0};
    for (int f = 0; f < frames; f++) {
        {
            TracyGpuNamedZoneC(scene, "scene", 0x3080ff, 1);
            pass("shadow", iters_loc, 20);
            pass("gbuffer", iters_loc, 60);
            pass("lighting", iters_loc, 200);
        }
        glReadPixels(0, 0, 1, 1, GL_RGBA, GL_UNSIGNED_BYTE, px);
        swap();
        TracyGpuCollect;
    }
    glFinish();
    TracyGpuCollect;
    printf("gz-sample-gl-passes: %d frames, pixel %u %u %u\n", frames, px[0], px[1], px[2]);
    glDeleteFramebuffers(1, &fbo);
    glDeleteTextures(1, &tex);
    glDeleteVertexArrays(1, &vao);
    glDeleteProgram(prog);
    close_context();
    return 0;
}
