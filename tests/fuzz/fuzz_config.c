/* libFuzzer target: the environment parser (client/config.c).
 *
 * The input is up to ten lines, the values of the GPUZONES_* variables in a
 * fixed order (a missing line leaves the variable unset). Whatever they
 * hold, gz_config_read must return a configuration within its bounds: a
 * NUL-terminated, non-empty path for each trace file it writes (two
 * different ones when it writes both formats), a known level, queue and
 * poll sizes inside the ranges config.c accepts, a listen address inet_pton
 * reads. Bad values only cost a "gpuzones:" line. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gz_config.h"

static const char *const vars[] = {"GPUZONES_OUTPUT",      "GPUZONES_SUMMARY",
                                   "GPUZONES_LEVEL",       "GPUZONES_QUEUE_ITEMS",
                                   "GPUZONES_POLL_MS",     "GPUZONES_RAW_TICKS",
                                   "GPUZONES_TRACY",       "GPUZONES_TRACY_PORT",
                                   "GPUZONES_TRACY_EXIT_WAIT_MS", "GPUZONES_TRACY_ADDR",
                                   "GPUZONES_FORMAT", "GPUZONES_VK_READBACK"};
#define NVARS (sizeof vars / sizeof vars[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0'; /* an embedded NUL ends that value early, as in a real environment */
    char *line = text;
    for (size_t i = 0; i < NVARS; i++) {
        if (!line) {
            unsetenv(vars[i]);
            continue;
        }
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        setenv(vars[i], line, 1);
        line = nl ? nl + 1 : NULL;
    }
    gz_config cfg;
    gz_config_read(&cfg, "fuzz", 1234);
    if (memchr(cfg.output, '\0', sizeof cfg.output) == NULL ||
        memchr(cfg.perfetto_output, '\0', sizeof cfg.perfetto_output) == NULL)
        abort();
    if ((cfg.write_trace && !cfg.output[0]) || (cfg.write_perfetto && !cfg.perfetto_output[0]))
        abort();
    if (cfg.write_trace && cfg.write_perfetto && !strcmp(cfg.output, cfg.perfetto_output))
        abort(); /* both formats into one file */
    if (cfg.level > GZ_LEVEL_COMMANDS)
        abort();
    if (cfg.queue_items == 0 || cfg.poll_ms == 0)
        abort();
    if (cfg.tracy != GZ_TRACY_AUTO && cfg.tracy != GZ_TRACY_LISTEN && cfg.tracy != GZ_TRACY_OFF)
        abort();
    /* Listen mode tries 20 ports from the first: all of them must exist. */
    if (cfg.tracy_port == 0 || cfg.tracy_port > 65535 - 19 || cfg.tracy_exit_wait_ms > 600000)
        abort();
    unsigned char bin[16];
    if (memchr(cfg.tracy_addr, '\0', sizeof cfg.tracy_addr) == NULL ||
        (inet_pton(AF_INET, cfg.tracy_addr, bin) != 1 &&
         inet_pton(AF_INET6, cfg.tracy_addr, bin) != 1))
        abort();
    free(text);
    return 0;
}
