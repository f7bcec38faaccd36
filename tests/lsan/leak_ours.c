/* Test-only: linked into a copy of gpuzones' Vulkan layer
 * (libVkLayer_gpuzones_leaky.so, never installed) to make a leak of ours in
 * a library that the loader loads and unloads, as it does the real layer:
 * check_lsan.py asks that the sanitized run still reports it and fails,
 * whatever tests/lsan.supp suppresses.
 *
 * The layer binds its own calls to its own definitions (-Bsymbolic), so
 * this gz_client_start takes the place of libgpuzones' for the copy's
 * calls: the first one (in vkCreateInstance) leaks 128 bytes, then every
 * call goes on to the real one. The leak's stack is the layer's
 * vkCreateInstance, called by the loader and the layers above ours: a
 * suppression naming any library on that path would wrongly hide it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

bool gz_client_start(void);

__attribute__((noinline)) static void leak_ours(void)
{
    char *p = malloc(128);
    if (p)
        memset(p, 0x5a, 128);
    __asm__ volatile("" : : "r"(p) : "memory");
}

bool gz_client_start(void)
{
    static int leaked;
    if (!__atomic_exchange_n(&leaked, 1, __ATOMIC_RELAXED))
        leak_ours();
    bool (*real)(void) = (bool (*)(void))dlsym(RTLD_NEXT, "gz_client_start");
    return real && real();
}
