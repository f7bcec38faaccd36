/* The Chrome trace JSON sink (docs/TRACE_FORMAT.md): one event per line,
 * written incrementally so that a killed process leaves a loadable file. */
#ifndef GZ_TRACE_H
#define GZ_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "gz_jsonw.h"

/* GPU tracks get synthetic tids from here up: above any kernel thread id
 * (pid_max is at most 2^22), so they never collide. */
#define GZ_TRACE_GPU_TID_BASE 0x40000000u

typedef struct gz_trace {
    bool open;
    bool failed;   /* a write failed: nothing more is written */
    bool rewindable; /* a regular file of ours: its end may be written and taken back */
    long long end_at; /* >= 0: an end was written (gz_trace_end_so_far) from here */
    int pid;
    uint64_t events;
    /* What every event head holds between its ph and its tid, and the
     * last tid written as text: formatted once, not per event. */
    char pid_text[32];
    size_t pid_len;
    uint32_t tid;
    char tid_text[20];
    size_t tid_len;
    char path[4096];
    gz_jsonw w;
} gz_trace;

/* Opens path (truncating); if that fails, tries the same file name in
 * $TMPDIR or /tmp. Says on stderr what happened. */
bool gz_trace_open(gz_trace *t, const char *path, int pid, const char *exe);

void gz_trace_thread_name(gz_trace *t, uint32_t tid, const char *name, size_t len, int sort_index);

/* An X event; the caller may add ,"args":{...} through gz_trace_writer()
 * before gz_trace_end_event. */
void gz_trace_zone(gz_trace *t, const char *cat, const char *name, size_t len, uint32_t tid,
                   uint64_t begin_ns, uint64_t end_ns);
/* A flow event: its start (s) or end (f, bound to the enclosing zone);
 * name: "submit" (CPU submit to GPU work) or "wait" (GPU work to the CPU
 * wait that saw it done), a literal. */
void gz_trace_flow(gz_trace *t, const char *name, bool start, uint64_t id, uint32_t tid,
                   uint64_t ns);
/* A thread-scoped instant event; args follow like for zones. */
void gz_trace_instant(gz_trace *t, const char *cat, const char *name, uint32_t tid, uint64_t ns);
void gz_trace_instant_n(gz_trace *t, const char *cat, const char *name, size_t len, uint32_t tid,
                        uint64_t ns);
void gz_trace_end_event(gz_trace *t);
gz_jsonw *gz_trace_writer(gz_trace *t);

/* Hands buffered events to the kernel; false once writing has failed. */
bool gz_trace_flush(gz_trace *t);

/* Makes the file complete as it stands: the totals so far and the closing
 * bracket, flushed. The next event takes them back (the file is cut to
 * where they began) and goes on. Only in a regular file of ours; anything
 * else (a FIFO, the program's stdout) is flushed only. */
void gz_trace_end_so_far(gz_trace *t, uint64_t zones_produced, uint64_t zones_written,
                         uint64_t zones_dropped, uint64_t items_dropped);

/* Writes the totals event and the closing bracket, and closes the file.
 * zones_produced = zones_written + zones_dropped when nothing was lost. */
void gz_trace_close(gz_trace *t, uint64_t zones_produced, uint64_t zones_written,
                    uint64_t zones_dropped, uint64_t items_dropped);

#endif
