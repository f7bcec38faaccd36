#define _GNU_SOURCE
#include "vkt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void vkt_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gz-test-vk: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    /* exit code 2 so the runner can tell a failed program from a failed check */
    exit(2);
}

void vkt_check(VkResult r, const char *what, const char *file, int line)
{
    if (r != VK_SUCCESS)
        vkt_die("%s:%d: %s returned VkResult %d", file, line, what, (int)r);
}

/* Same clock as the layer and lavapipe's device clock: CLOCK_MONOTONIC. */
uint64_t vkt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The trace uses kernel thread ids for CPU tracks. */
int vkt_gettid(void)
{
    return (int)syscall(SYS_gettid);
}

void vkt_sleep_ms(unsigned ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

const char *vkt_size_text(uint64_t bytes, char out[24])
{
    /* "N B" below 1 KiB, else KiB or MiB, one decimal only when not whole */
    const char *unit = bytes < (1u << 20) ? "KiB" : "MiB";
    uint64_t per = bytes < (1u << 20) ? 1024 : 1024 * 1024;
    if (bytes < 1024)
        snprintf(out, 24, "%llu B", (unsigned long long)bytes);
    else if (bytes % per == 0)
        snprintf(out, 24, "%llu %s", (unsigned long long)(bytes / per), unit);
    else
        snprintf(out, 24, "%.1f %s", (double)bytes / (double)per, unit);
    return out;
}
