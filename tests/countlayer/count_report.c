/* The counters of VK_LAYER_GPUZONES_count and the file they are written to:
 * GZCOUNT_OUTPUT=<path>, one line of key=value pairs, rewritten at every
 * vkDestroyDevice and once more when the library is unloaded (at
 * vkDestroyInstance or at exit), so that a program that never destroys its
 * device still leaves its counts. Counters are process-wide: every device
 * and every thread adds to the same ones. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count_layer.h"

static uint64_t counters[GZC_NCOUNTERS];

#define GZC_KEY(name, key) key,
static const char *const keys[GZC_NCOUNTERS] = {GZC_RECORDED(GZC_KEY) GZC_CALLED(GZC_KEY)};
#undef GZC_KEY

void gzc_add(enum gzc_counter which, uint64_t n)
{
    __atomic_add_fetch(&counters[which], n, __ATOMIC_RELAXED);
}

static void write_line(FILE *f)
{
    for (int i = 0; i < GZC_NCOUNTERS; i++)
        fprintf(f, "%s%s=%" PRIu64, i ? " " : "", keys[i],
                __atomic_load_n(&counters[i], __ATOMIC_RELAXED));
    fputc('\n', f);
}

void gzc_report_write(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    const char *path = getenv("GZCOUNT_OUTPUT");
    pthread_mutex_lock(&lock);
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (f) {
        write_line(f);
        if (fclose(f) == 0) {
            pthread_mutex_unlock(&lock);
            return;
        }
    }
    if (path && *path)
        fprintf(stderr, "gzcount: cannot write GZCOUNT_OUTPUT=%s (%s); the counts follow\n", path,
                strerror(errno));
    fputs("gzcount: ", stderr);
    write_line(stderr);
    pthread_mutex_unlock(&lock);
}

/* Only where something was counted: a process that loads the layer and
 * makes no device (vulkaninfo --summary) leaves no file behind. */
__attribute__((destructor)) static void write_at_unload(void)
{
    if (__atomic_load_n(&counters[GZC_DEVICES], __ATOMIC_RELAXED))
        gzc_report_write();
}
