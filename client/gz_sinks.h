/* The sinks the worker opens (gz_sink.h says what a sink is). */
#ifndef GZ_SINKS_H
#define GZ_SINKS_H

#include <stdbool.h>
#include <stdint.h>

#include "gz_config.h"
#include "gz_sink.h"

/* What became of a trace file, for the summary's last lines: its sink
 * fills it at close, and the summary, closed after it, reads it. */
typedef struct gz_trace_outcome {
    bool closed;              /* the sink has closed (false: there was none) */
    bool written;             /* the file was opened and every write succeeded */
    uint64_t zones_unwritten; /* zones the sink got but could not write */
    char path[4096];
} gz_trace_outcome;

/* The trace files a run may write: JSON, Perfetto (in this order). */
#define GZ_TRACE_FILES 2

/* The Chrome JSON trace (sink_json.c). Opens even when the file cannot be
 * created (it then counts what it could not write); false only without
 * memory. */
bool gz_json_sink_open(const gz_config *cfg, int pid, const char *exe, gz_trace_outcome *outcome,
                       gz_sink *out);

/* The Perfetto trace (sink_perfetto.c) at path, opened as the JSON one is
 * (gz_output_open_trace); its writer waits for a slow reader until
 * *deadline and bumps *progress (gz_jsonw.h). raw_ticks: each zone's raw
 * GPU timestamps as data. Opens even when the file cannot be created (it
 * then counts what it could not write); false only without memory. */
bool gz_perfetto_sink_open(const char *path, int pid, const char *exe, bool raw_ticks,
                           const uint64_t *deadline, uint64_t *progress,
                           gz_trace_outcome *outcome, gz_sink *out);
/* The same on an open fd (-1: none), named path in messages: for the
 * fuzzer, which writes to a file of its own. */
bool gz_perfetto_sink_open_fd(int fd, const char *path, int pid, const char *exe,
                              bool raw_ticks, const uint64_t *deadline, uint64_t *progress,
                              gz_trace_outcome *outcome, gz_sink *out);

/* The exit summary on stderr (summary.c); traces: the GZ_TRACE_FILES
 * outcomes, read at close. */
bool gz_summary_sink_open(const gz_config *cfg, const gz_trace_outcome *traces, gz_sink *out);

#endif
