/* Opening an output file (the trace, the clock record) without harming
 * anything of the program's (gz_output.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gz_client.h"
#include "gz_output.h"

/* Opens a regular file (or a new one) for writing from its start. The
 * file stays locked (flock) while we write it: a second process told to
 * write the same path (a child the program forks and execs inherits
 * GPUZONES_OUTPUT) must not truncate the first one's trace. EWOULDBLOCK
 * tells the caller so. Only a regular file is ever truncated. */
int gz_output_open_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        /* It changed under us since gz_output_open looked: append to it. */
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
            fcntl(fd, F_SETFL, fl | O_APPEND);
        return fd;
    }
    int fl = fcntl(fd, F_GETFL); /* O_NONBLOCK was only for a FIFO's open */
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(fd);
        errno = EWOULDBLOCK;
        return -1;
    } /* other flock errors (a file system without locks): write unlocked */
    if (ftruncate(fd, 0) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

/* The fd a path names when it is one of the process's own open files:
 * /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N; -1 otherwise. */
static int own_fd_of(const char *path)
{
    if (!strcmp(path, "/dev/stdout"))
        return 1;
    if (!strcmp(path, "/dev/stderr"))
        return 2;
    const char *n = NULL;
    if (!strncmp(path, "/dev/fd/", 8))
        n = path + 8;
    else if (!strncmp(path, "/proc/self/fd/", 14))
        n = path + 14;
    if (!n || *n < '0' || *n > '9')
        return -1;
    char *end;
    long fd = strtol(n, &end, 10);
    return *end || fd > 1 << 20 ? -1 : (int)fd;
}

bool gz_output_is_programs(const char *path)
{
    return own_fd_of(path) >= 0;
}

/* Opens the output without destroying anything of the program's: its own
 * open files (stdout redirected to a file) are written through a copy of
 * their fd, at the offset they share with the program, never reopened or
 * truncated; FIFOs, character devices and sockets are appended to, without
 * blocking (a FIFO nobody reads must not hang the program). */
int gz_output_open(const char *path)
{
    int own = own_fd_of(path);
    if (own >= 0)
        return fcntl(own, F_DUPFD_CLOEXEC, 3);
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
        return gz_output_open_file(path);
    for (int waited = 0;; waited += 10) {
        int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0 || errno != ENXIO || !S_ISFIFO(st.st_mode) || waited >= GZ_OUTPUT_FIFO_WAIT_MS)
            return fd;
        usleep(10000); /* a FIFO without a reader yet: the reader may be starting */
    }
}

/* path with "-<pid>" before its extension: a.json → a-123.json */
static void path_with_pid(char *out, size_t size, const char *path, int pid)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash))
        dot = path + strlen(path);
    snprintf(out, size, "%.*s-%d%s", (int)(dot - path), path, pid, dot);
}

int gz_output_open_trace(const char *path, int pid, char *actual, size_t size)
{
    int fd = gz_output_open(path);
    if (fd < 0 && errno == EWOULDBLOCK) {
        path_with_pid(actual, size, path, pid);
        fd = gz_output_open_file(actual);
        if (fd >= 0) {
            gz_log("trace file %s is being written by another process; writing %s instead",
                   path, actual);
            return fd;
        }
    }
    if (fd >= 0) {
        snprintf(actual, size, "%s", path);
    } else {
        int err = errno;
        struct stat st;
        /* ENXIO also comes from a socket or a device without its driver. */
        bool no_reader = err == ENXIO && stat(path, &st) == 0 && S_ISFIFO(st.st_mode);
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        const char *tmp = getenv("TMPDIR");
        if (!tmp || !*tmp)
            tmp = "/tmp";
        snprintf(actual, size, "%s/%s", tmp, *base ? base : "gpuzones.json");
        /* The same path again (a FIFO in $TMPDIR) would fail the same way. */
        fd = strcmp(actual, path) ? gz_output_open(actual) : (errno = err, -1);
        if (fd < 0) {
            if (no_reader)
                gz_log("nobody opened FIFO %s for reading within %d ms, and %s cannot be "
                       "written either (%s); no trace is written",
                       path, GZ_OUTPUT_FIFO_WAIT_MS, actual, strerror(errno));
            else
                gz_log("cannot create trace file %s (%s) nor %s (%s); no trace is written",
                       path, strerror(err), actual, strerror(errno));
            return -1;
        }
        if (no_reader)
            gz_log("nobody opened FIFO %s for reading within %d ms; writing %s instead", path,
                   GZ_OUTPUT_FIFO_WAIT_MS, actual);
        else
            gz_log("cannot create trace file %s (%s); writing %s instead", path, strerror(err),
                   actual);
    }
    return fd;
}
