/* gz-host-plugin-host: a host application that loads a plugin, lets it
 * run, unloads it (dlclose), then goes on with work of its own until a
 * signal ends it or its time is up.
 *
 *   gz-host-plugin-host PLUGIN.so [--seconds S]
 *
 * The host itself links neither Vulkan nor gpuzones: when the plugin goes,
 * whatever only it needed may go with it. Prints "ready" once the plugin
 * is unloaded; exits 0 when no signal came within S seconds (default 20),
 * else as the signal's (default) action decides. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gz-host-plugin-host PLUGIN.so [--seconds S]\n");
        return 64;
    }
    int seconds = argc > 3 && !strcmp(argv[2], "--seconds") ? atoi(argv[3]) : 20;
    void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 70;
    }
    int (*run)(int) = (int (*)(int))dlsym(plugin, "plugin_run");
    if (!run) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        return 70;
    }
    printf("plugin ran %d frames\n", run(5));
    if (dlclose(plugin) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 70;
    }
    printf("ready\n");
    fflush(stdout);
    /* The host's own work: it touches nothing of the plugin's. */
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    volatile unsigned long sum = 0;
    do {
        for (unsigned long i = 0; i < 1000000; i++)
            sum += i ^ (sum >> 3);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < seconds);
    printf("done: no signal ended the program\n");
    return 0;
}
