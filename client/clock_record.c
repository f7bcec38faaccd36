/* The clock models' inputs, for replays (gz_clock_record.h). Opened like
 * the trace (gz_output_open: the program's own stdout is written through,
 * never truncated; a FIFO nobody reads does not block), written through a
 * buffer. A failed write stops the record and says so: a partial record
 * that looked whole would replay wrong without a word. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gz_client.h"
#include "gz_clock_record.h"
#include "gz_jsonw.h"
#include "gz_output.h"

static gz_jsonw *record; /* NULL: no record */
static int record_fd = -1; /* its own copy: the writer drops its fd on an error */
static char record_path[4096];
static uint32_t clocks;

void gz_clock_record_open(const char *path, const uint64_t *deadline_ns, uint64_t *progress)
{
    int fd = gz_output_open(path);
    if (fd < 0) {
        char why[96];
        if (errno == EWOULDBLOCK)
            snprintf(why, sizeof why, "another process is writing it");
        else if (errno == ENXIO)
            snprintf(why, sizeof why, "nobody opened it for reading within %d ms",
                     GZ_OUTPUT_FIFO_WAIT_MS);
        else
            snprintf(why, sizeof why, "%s", strerror(errno));
        gz_log("GPUZONES_CLOCK_RECORD: cannot write %s (%s); no clock record is kept", path, why);
        return;
    }
    record = malloc(sizeof *record);
    if (!record) {
        close(fd);
        gz_log("GPUZONES_CLOCK_RECORD: out of memory; no clock record is kept");
        return;
    }
    gz_jsonw_init(record, fd);
    /* A FIFO's reader that falls behind is waited for as the trace's is,
     * until the program exits. */
    record->deadline_ns = deadline_ns;
    record->progress = progress;
    record_fd = fd;
    snprintf(record_path, sizeof record_path, "%s", path);
}

/* Closes the record; says so where it did not all reach the file. */
static void end_record(const char *what)
{
    bool whole = gz_jsonw_flush(record);
    int err = record->error;
    if (close(record_fd) != 0 && whole) {
        whole = false;
        err = errno;
    }
    record_fd = -1;
    if (!whole)
        gz_log("GPUZONES_CLOCK_RECORD: writing %s failed (%s); the record %s", record_path,
               strerror(err), what);
    free(record);
    record = NULL;
}

void gz_clock_record_close(void)
{
    if (record)
        end_record("is incomplete");
}

uint32_t gz_clock_record_new_clock(void)
{
    if (!record)
        return 0;
    uint32_t id = ++clocks;
    gz_clock_record_line("C %u\n", id);
    return record ? id : 0;
}

void gz_clock_record_line(const char *fmt, ...)
{
    if (!record)
        return;
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        gz_jsonw_raw(record, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    if (record->error)
        end_record("stops here, incomplete");
}
