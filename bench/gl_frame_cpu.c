/* CPU cost of OpenGL debug groups and swaps on the calling thread, for
 * comparing runs with and without the gpuzones GL shim (LD_PRELOAD):
 * frames of G debug groups, each around a small clear of a 64x64 pbuffer,
 * then eglSwapBuffers, on llvmpipe through EGL surfaceless and libepoxy.
 * The thread's CPU time in the groups (push + clear + pop) and in the swap
 * are taken apart; the clears run on llvmpipe's own threads.
 *
 *   gz-bench-gl-frame [frames per block] [blocks] [groups per frame]
 *
 * Prints one line of key=value pairs: medians over the blocks.
 */
#include <epoxy/egl.h>
#include <epoxy/gl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gz_bench.h"

static void die(const char *what)
{
    fprintf(stderr, "gz-bench-gl-frame: %s\n", what);
    exit(1);
}

static void setup(EGLDisplay *dpy_out, EGLSurface *surf_out)
{
    EGLDisplay dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY,
                                              NULL);
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, NULL, NULL))
        die("no EGL surfaceless display");
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
    const EGLint pb_attr[] = {EGL_WIDTH, 64, EGL_HEIGHT, 64, EGL_NONE};
    EGLSurface surf = eglCreatePbufferSurface(dpy, cfg, pb_attr);
    if (ctx == EGL_NO_CONTEXT || surf == EGL_NO_SURFACE || !eglMakeCurrent(dpy, surf, surf, ctx))
        die("no GL 4.5 core context");
    *dpy_out = dpy;
    *surf_out = surf;
}

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 100;
    int blocks = argc > 2 ? atoi(argv[2]) : 15;
    int groups = argc > 3 ? atoi(argv[3]) : 8;
    if (frames < 1 || blocks < 1 || blocks > 1000 || groups < 1) {
        fprintf(stderr, "usage: gz-bench-gl-frame [frames per block] [blocks <= 1000] "
                        "[groups per frame]\n");
        return 2;
    }
    EGLDisplay dpy;
    EGLSurface surf;
    setup(&dpy, &surf);

    double group_ns[1000], swap_ns[1000], frame_wall_ns[1000];
    for (int b = -2; b < blocks; b++) { /* two untimed blocks warm llvmpipe up */
        double in_groups = 0, in_swaps = 0;
        double w0 = gz_bench_clock_ns(CLOCK_MONOTONIC);
        for (int f = 0; f < frames; f++) {
            double c0 = gz_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
            for (int g = 0; g < groups; g++) {
                glPushDebugGroup(GL_DEBUG_SOURCE_APPLICATION, (GLuint)g, -1, "pass");
                glClearColor((float)g / (float)groups, 0.5f, 0.25f, 1.0f);
                glClear(GL_COLOR_BUFFER_BIT);
                glPopDebugGroup();
            }
            double c1 = gz_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
            eglSwapBuffers(dpy, surf);
            double c2 = gz_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
            in_groups += c1 - c0;
            in_swaps += c2 - c1;
        }
        glFinish();
        double w1 = gz_bench_clock_ns(CLOCK_MONOTONIC);
        if (b >= 0) {
            group_ns[b] = in_groups / ((double)frames * groups);
            swap_ns[b] = in_swaps / frames;
            frame_wall_ns[b] = (w1 - w0) / frames;
        }
    }
    if (glGetError() != GL_NO_ERROR)
        die("a GL error was raised");
    printf("frames=%d blocks=%d groups=%d cpu_ns_per_group=%.1f cpu_ns_per_swap=%.1f "
           "wall_ns_per_frame=%.1f\n",
           frames, blocks, groups, gz_bench_median(group_ns, blocks), gz_bench_median(swap_ns, blocks),
           gz_bench_median(frame_wall_ns, blocks));
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglTerminate(dpy);
    return 0;
}
