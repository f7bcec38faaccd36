/* libgz_lsan_keep.so: test-only, preloaded into the sanitized test runs
 * (scripts/test.sh) so that no shared library is unloaded before
 * LeakSanitizer looks at the heap at exit.
 *
 * Why: the Vulkan loader unloads the ICDs and layers at vkDestroyInstance,
 * Mesa's EGL unloads its DRI driver at eglTerminate. A leak allocated in a
 * library that is gone by exit is reported from "<unknown module>", which
 * no suppression can name, so a driver's leak could not be told from ours.
 * With every library kept, each frame of a leak's stack names its library,
 * and tests/lsan.supp suppresses the drivers' (by library name) and never
 * ours.
 *
 * How: every dlclose first re-opens its library with RTLD_NODELETE (the
 * re-open is dropped again at once), then closes as asked: the program's
 * reference counting and dlclose's result are unchanged; only the unload
 * never happens. Interposing dlclose works whoever calls it (the loader,
 * libglvnd, Mesa, ocl-icd), also when this library comes after the
 * AddressSanitizer runtime in LD_PRELOAD: the runtime's own dlclose
 * interceptor calls the next dlclose in the search order, this one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

typedef int (*dlclose_fn)(void *);

__attribute__((visibility("default"))) int dlclose(void *handle);
int dlclose(void *handle)
{
    static dlclose_fn next;
    dlclose_fn f = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
        __atomic_store_n(&next, f, __ATOMIC_RELEASE);
    }
    /* dlclose is declared nonnull, but a NULL handle must reach the real
     * one (which reports the error) rather than dlinfo. */
    void *h = handle;
    __asm__("" : "+r"(h));
    struct link_map *map = NULL;
    if (h && dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
        map->l_name[0]) {
        void *again = dlopen(map->l_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        if (again && f)
            f(again);
    }
    return f ? f(handle) : 0;
}
