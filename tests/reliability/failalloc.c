/* gz-failalloc: a test-only LD_PRELOAD library that makes gpuzones' own
 * allocations fail, to prove that a layer short of memory leaves the
 * program working. An allocation is gpuzones' when the code
 * that calls malloc, calloc or realloc lies in one of the libraries named
 * by GZFAIL_LIBS (comma-separated substrings of their paths; default
 * "libgpuzones,VkLayer_gpuzones_timing").
 *
 *   GZFAIL_FROM=N    gpuzones' allocations from the Nth (from 1) on fail
 *   GZFAIL_COUNT=K   only K of them (default: all after N)
 *
 * At exit it prints "gz-failalloc: <n> allocations by gpuzones, <f> failed"
 * on stderr, so that a run with GZFAIL_FROM unset counts the allocations a
 * sweep can fail. Not for sanitized builds (they own malloc). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The project builds with hidden visibility: these must interpose. */
#define EXPORT __attribute__((visibility("default")))

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);

static malloc_fn real_malloc;
static calloc_fn real_calloc;
static realloc_fn real_realloc;
static unsigned long fail_from, fail_count = (unsigned long)-1;
static unsigned long seen, failed; /* atomic */
static char libs[8][64];
static int nlibs;
static __thread bool inside; /* dladdr may allocate */

/* dlsym itself may call calloc before real_calloc is known. */
static char bootstrap[4096];
static size_t bootstrap_used;

static void init(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    inside = true;
    real_malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
    real_calloc = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
    real_realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
    const char *from = getenv("GZFAIL_FROM");
    const char *count = getenv("GZFAIL_COUNT");
    fail_from = from && *from ? strtoul(from, NULL, 10) : 0;
    if (count && *count)
        fail_count = strtoul(count, NULL, 10);
    const char *l = getenv("GZFAIL_LIBS");
    if (!l || !*l)
        l = "libgpuzones,VkLayer_gpuzones_timing";
    while (*l && nlibs < 8) {
        size_t n = strcspn(l, ",");
        snprintf(libs[nlibs++], sizeof libs[0], "%.*s", (int)n, l);
        l += n + (l[n] == ',');
    }
    inside = false;
}

/* Whether the allocation made from caller fails. */
static bool should_fail(const void *caller)
{
    if (inside || !fail_from)
        return false;
    inside = true;
    Dl_info info;
    bool ours = false;
    if (dladdr(caller, &info) && info.dli_fname)
        for (int i = 0; i < nlibs && !ours; i++)
            ours = strstr(info.dli_fname, libs[i]) != NULL;
    inside = false;
    if (!ours)
        return false;
    unsigned long k = __atomic_add_fetch(&seen, 1, __ATOMIC_RELAXED);
    if (k < fail_from || k - fail_from >= fail_count)
        return false;
    __atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
    return true;
}

/* Counting only (GZFAIL_FROM unset): every allocation of ours is seen. */
static void count(const void *caller)
{
    if (inside || fail_from)
        return;
    inside = true;
    Dl_info info;
    bool ours = false;
    if (dladdr(caller, &info) && info.dli_fname)
        for (int i = 0; i < nlibs && !ours; i++)
            ours = strstr(info.dli_fname, libs[i]) != NULL;
    inside = false;
    if (ours)
        __atomic_add_fetch(&seen, 1, __ATOMIC_RELAXED);
}

EXPORT void *malloc(size_t size)
{
    init();
    if (!real_malloc)
        return NULL;
    const void *caller = __builtin_return_address(0);
    count(caller);
    return should_fail(caller) ? NULL : real_malloc(size);
}

EXPORT void *calloc(size_t n, size_t size)
{
    if (!real_calloc) {
        /* dlsym's own first calloc, before real_calloc is known. */
        size_t want = (n * size + 15) & ~(size_t)15;
        if (bootstrap_used + want > sizeof bootstrap)
            return NULL;
        void *p = bootstrap + bootstrap_used;
        bootstrap_used += want;
        return p;
    }
    init();
    const void *caller = __builtin_return_address(0);
    count(caller);
    return should_fail(caller) ? NULL : real_calloc(n, size);
}

EXPORT void *realloc(void *p, size_t size)
{
    init();
    if (!real_realloc)
        return NULL;
    const void *caller = __builtin_return_address(0);
    count(caller);
    return should_fail(caller) ? NULL : real_realloc(p, size);
}

EXPORT void free(void *p)
{
    static void (*real_free)(void *);
    if ((char *)p >= bootstrap && (char *)p < bootstrap + sizeof bootstrap)
        return;
    if (!real_free)
        real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    real_free(p);
}

__attribute__((destructor)) static void report(void)
{
    char line[128];
    int n = snprintf(line, sizeof line, "gz-failalloc: %lu allocations by gpuzones, %lu failed\n",
                     __atomic_load_n(&seen, __ATOMIC_RELAXED),
                     __atomic_load_n(&failed, __ATOMIC_RELAXED));
    if (n > 0 && write(2, line, (size_t)n) < 0)
        return;
}
