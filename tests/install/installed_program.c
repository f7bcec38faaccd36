/* A program as a user builds it against an installed gpuzones: compiled
 * and linked with the flags of `pkg-config --cflags --libs gpuzones` alone
 * (test_install.py), as C and as C++, with and without GPUZONES_ENABLE,
 * -Wall -Wextra -Werror. Every variable and parameter named "only_*" is
 * used only as a macro argument: without GPUZONES_ENABLE the macros must
 * still name them, or the build fails on an unused variable. The Vulkan
 * work comes from tests/api/api_vk.c.
 *
 * Runs two submissions with a zone and a transient zone, collects them and
 * prints "gpuzones enabled" or "gpuzones disabled". */
#include <stdint.h>
#include <stdio.h>

#include "api_vk.h"
#include <gpuzones/gpuzones.h>
#include <gpuzones/opengl.h>
#include <gpuzones/vulkan.h>
#ifdef WITH_OPENCL
#include <CL/cl.h>
#include <gpuzones/opencl.h>
#endif

/* The GL and OpenCL macros, compiled both ways; run only without
 * GPUZONES_ENABLE (enabled they need a current GL context, a CL device). */
void installed_gl_cl_zones(int only_active);
void installed_gl_cl_zones(int only_active)
{
    const char *only_name = "transient";
    TracyGpuContextName(only_name, 9);
    {
        TracyGpuZone("gl zone");
    }
    {
        TracyGpuNamedZoneC(glz, "gl named", 0x00ff00, only_active);
    }
    {
        TracyGpuZoneTransient(glt, only_name, only_active);
    }
    TracyGpuCollect;
#ifdef WITH_OPENCL
    cl_context only_context = NULL;
    cl_device_id only_device = NULL;
    cl_event only_event = NULL;
    TracyCLCtx only_cl = TracyCLContext(only_context, only_device);
    TracyCLContextName(only_cl, only_name, 9);
    {
        TracyCLZone(only_cl, "cl zone");
        TracyCLZoneSetEvent(only_event);
    }
    {
        TracyCLZoneTransient(only_cl, clt, only_name, only_active);
        TracyCLNamedZoneSetEvent(clt, only_event);
    }
    TracyCLCollect(only_cl);
    TracyCLDestroy(only_cl);
#endif
}

int main(void)
{
    api_gpu g;
    api_gpu_init(&g, 1);
    VkCommandBuffer only_cmd = g.cb;
    TracyVkCtx only_ctx = TracyVkContext(g.pd, g.device, g.queue, g.init_cb);
    const char *only_name = "installed transient";
    int only_active = 1;
    uint64_t t0, t1;
    api_begin(&g);
    {
        TracyVkZone(only_ctx, only_cmd, "installed zone");
        api_fill(&g, 1);
    }
    api_barrier(&g);
    {
        TracyVkZoneTransient(only_ctx, transient, only_cmd, only_name, only_active);
        api_copy(&g);
    }
    TracyVkCollect(only_ctx, only_cmd);
    api_submit_wait(&g, &t0, &t1);
    /* A zone still running when the first collect copied is read here. */
    api_begin(&g);
    TracyVkCollect(only_ctx, only_cmd);
    api_submit_wait(&g, &t0, &t1);
    TracyVkDestroy(only_ctx);
#ifndef GPUZONES_ENABLE
    installed_gl_cl_zones(only_active);
#endif
    GpuzonesMessageL(only_name);
    api_gpu_destroy(&g);
    printf("gpuzones %s\n", GpuzonesIsEnabled() ? "enabled" : "disabled");
    return 0;
}
