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
#include <epoxy/gl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gz_bench.h"
#include "gz_egl_pbuffer.h"

static void die(const char *what)
{
    fprintf(stderr, "gz-bench-gl-frame: %s\n", what);
    exit(1);
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
    gz_egl_pbuffer egl;
    const char *what;
    if (!gz_egl_pbuffer_open(&egl, 64, &what))
        die(what);

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
            eglSwapBuffers(egl.display, egl.surface);
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
    gz_egl_pbuffer_close(&egl);
    return 0;
}
