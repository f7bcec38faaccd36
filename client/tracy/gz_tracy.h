/* Zones in the Tracy profiler: the one entry point the worker calls. */
#ifndef GZ_TRACY_H
#define GZ_TRACY_H

#include <stdbool.h>
#include <stdint.h>

#include "gz_config.h"
#include "gz_sink.h"

/* Opens the Tracy sink that cfg->tracy asks for, saying in one "gpuzones:"
 * line which Tracy is used: the program's own Tracy client when its C API
 * resolves in the process (auto and listen), else, in listen mode, gpuzones
 * itself as a Tracy v0.14.0 client. Returns false, having done nothing,
 * when Tracy output is off or there is nothing to feed. */
/* progress (may be NULL): bumped while the exit waits for a profiler. */
bool gz_tracy_sink_open(const gz_config *cfg, uint64_t *progress, gz_sink *out);

#endif
