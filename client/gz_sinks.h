/* The sinks the worker opens (gz_sink.h says what a sink is). */
#ifndef GZ_SINKS_H
#define GZ_SINKS_H

#include <stdbool.h>
#include <stdint.h>

#include "gz_config.h"
#include "gz_sink.h"

/* What became of the trace file, for the summary's last line: the JSON
 * sink fills it at close, and the summary, closed after it, reads it. */
typedef struct gz_trace_outcome {
    bool closed;              /* the JSON sink has closed (false: there was none) */
    bool written;             /* the file was opened and every write succeeded */
    uint64_t zones_unwritten; /* zones the sink got but could not write */
    char path[4096];
} gz_trace_outcome;

/* The Chrome JSON trace (sink_json.c). Opens even when the file cannot be
 * created (it then counts what it could not write); false only without
 * memory. */
bool gz_json_sink_open(const gz_config *cfg, int pid, const char *exe, gz_trace_outcome *outcome,
                       gz_sink *out);

/* The exit summary on stderr (summary.c); trace: read at close. */
bool gz_summary_sink_open(const gz_config *cfg, const gz_trace_outcome *trace, gz_sink *out);

#endif
