/* Messages for the user: one line on stderr, always prefixed "gpuzones:" so
 * it can be told apart from the host program's own output. */
#include <stdarg.h>
#include <stdio.h>

#include "gz_client.h"

static void vlog(const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    /* One fprintf call: stdio locks the stream, so lines from several
     * threads do not interleave. */
    fprintf(stderr, "gpuzones: %s\n", line);
}

void gz_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void gz_log_once(int *key, const char *fmt, ...)
{
    if (__atomic_exchange_n(key, 1, __ATOMIC_RELAXED))
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}
