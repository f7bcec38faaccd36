/* Output files the worker writes: opened so that nothing of the program's
 * is destroyed and nothing blocks it. */
#ifndef GZ_OUTPUT_H
#define GZ_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

/* How long the worker waits at start for a reader of a FIFO. */
#define GZ_OUTPUT_FIFO_WAIT_MS 1000

/* An fd to write path from its start, or -1 with errno. The program's own
 * open files (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N) are
 * written through a copy of their fd, at the offset they share with the
 * program; FIFOs (waited for a reader up to GZ_OUTPUT_FIFO_WAIT_MS, then
 * ENXIO), character devices and sockets are appended to, non-blocking; a
 * regular file is truncated and locked (flock) while written, and one that
 * another process holds locked fails with EWOULDBLOCK. */
int gz_output_open(const char *path);
/* The same for a path that is (or will be) a regular file. */
int gz_output_open_file(const char *path);
/* Whether path names one of the program's own open files (/dev/stdout,
 * /dev/fd/N...): written at the offset the program shares, never rewound. */
bool gz_output_is_programs(const char *path);
/* A trace file's fd: path as gz_output_open opens it; when another process
 * writes it, the same name with "-<pid>" before its extension; when it
 * cannot be created (or a FIFO has no reader), the same file name in
 * $TMPDIR (or /tmp). Says on stderr what happened; actual gets the path
 * written. -1 when nothing can be written. */
int gz_output_open_trace(const char *path, int pid, char *actual, size_t size);

#endif
