/* A program that brings its own libgpuzones.so.0 of another release
 * (other_release.c) loads our layers, as the Vulkan loader, ocl-icd or a
 * dlopen would:
 * each must be refused for the missing GPUZONES_PRIVATE_<release> version
 * instead of binding its calls to the program's copy.
 * argv[1]: the other release's copy; argv[2..]: the layers.
 * GZ_RELEASE: this build's release. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    /* Loaded by its path, not found by its soname: the test's library path
     * also leads to the real one. Once loaded, it is the process's
     * libgpuzones.so.0 for every library that needs one. */
    if (argc < 3 || !dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "FAIL: no other release's copy to load first: %s\n",
                argc < 3 ? "no arguments" : dlerror());
        return 1;
    }
    int failed = 0;
    for (int i = 2; i < argc; i++) {
        void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        const char *err = h ? "it loaded" : dlerror();
        if (h || !strstr(err, "GPUZONES_PRIVATE_" GZ_RELEASE) || !strstr(err, "not found")) {
            fprintf(stderr, "FAIL: %s was not refused for its version: %s\n", argv[i], err);
            failed = 1;
        } else {
            printf("ok, refused: %s\n", err);
        }
    }
    return failed;
}
