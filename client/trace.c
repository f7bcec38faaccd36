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
#include "gz_trace.h"

bool gz_trace_open(gz_trace *t, const char *path, int pid, const char *exe)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
    int fd = gz_output_open_trace(path, pid, t->path, sizeof t->path);
    if (fd < 0)
        return false;
    t->open = true;
    t->end_at = -1;
    struct stat st;
    int fl = fcntl(fd, F_GETFL);
    t->rewindable = !gz_output_is_programs(path) && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                    fl >= 0 && !(fl & O_APPEND);
    t->pid_len = (size_t)snprintf(t->pid_text, sizeof t->pid_text, "\",\"pid\":%d,\"tid\":", pid);
    gz_jsonw_init(&t->w, fd);
    gz_jsonw_lit(&t->w, "[\n");
    gz_jsonw_lit(&t->w, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
    gz_jsonw_i64(&t->w, pid);
    gz_jsonw_lit(&t->w, ",\"args\":{\"name\":");
    gz_jsonw_str(&t->w, exe, strlen(exe));
    gz_jsonw_lit(&t->w, "}},\n");
    return true;
}

/* Takes back an end written by gz_trace_end_so_far: more comes. */
static void take_back_end(gz_trace *t)
{
    if (t->end_at < 0)
        return;
    off_t at = (off_t)t->end_at;
    t->end_at = -1;
    if (ftruncate(t->w.fd, at) != 0 || lseek(t->w.fd, at, SEEK_SET) != at) {
        t->failed = true;
        gz_log("cannot reopen trace file %s after the end written when the last device "
               "went (%s); later zones are counted as dropped",
               t->path, strerror(errno));
    }
}

static bool usable(const gz_trace *t)
{
    return t->open && !t->failed;
}

/* Before anything more is written. */
static bool writable(gz_trace *t)
{
    if (usable(t))
        take_back_end(t);
    return usable(t);
}

/* {"ph":"<ph>","pid":<pid>,"tid":<tid> (ph is one letter). */
static void event_head(gz_trace *t, char ph, uint32_t tid)
{
    char head[8] = {'{', '"', 'p', 'h', '"', ':', '"', ph};
    gz_jsonw_raw(&t->w, head, sizeof head);
    gz_jsonw_raw(&t->w, t->pid_text, t->pid_len);
    if (tid != t->tid || !t->tid_len) {
        t->tid = tid;
        t->tid_len = gz_json_format_u64(t->tid_text, tid);
    }
    gz_jsonw_raw(&t->w, t->tid_text, t->tid_len);
}

void gz_trace_end_event(gz_trace *t)
{
    if (writable(t)) {
        gz_jsonw_lit(&t->w, "},\n");
        t->events++;
    }
}

gz_jsonw *gz_trace_writer(gz_trace *t)
{
    writable(t);
    return &t->w;
}

void gz_trace_thread_name(gz_trace *t, uint32_t tid, const char *name, size_t len, int sort_index)
{
    if (!writable(t))
        return;
    event_head(t, 'M', tid);
    gz_jsonw_lit(&t->w, ",\"name\":\"thread_name\",\"args\":{\"name\":");
    gz_jsonw_str(&t->w, name, len);
    gz_jsonw_lit(&t->w, "}");
    gz_trace_end_event(t);
    event_head(t, 'M', tid);
    gz_jsonw_lit(&t->w, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
    gz_jsonw_i64(&t->w, sort_index);
    gz_jsonw_lit(&t->w, "}");
    gz_trace_end_event(t);
}

void gz_trace_zone(gz_trace *t, const char *cat, const char *name, size_t len, uint32_t tid,
                   uint64_t begin_ns, uint64_t end_ns)
{
    if (!writable(t))
        return;
    event_head(t, 'X', tid);
    gz_jsonw_lit(&t->w, ",\"cat\":\"");
    gz_jsonw_lit(&t->w, cat);
    gz_jsonw_lit(&t->w, "\",\"name\":");
    gz_jsonw_str(&t->w, name, len);
    gz_jsonw_lit(&t->w, ",\"ts\":");
    gz_jsonw_us(&t->w, begin_ns);
    gz_jsonw_lit(&t->w, ",\"dur\":");
    gz_jsonw_us(&t->w, end_ns > begin_ns ? end_ns - begin_ns : 0);
}

void gz_trace_flow(gz_trace *t, const char *name, bool start, uint64_t id, uint32_t tid,
                   uint64_t ns)
{
    if (!writable(t))
        return;
    event_head(t, start ? 's' : 'f', tid);
    gz_jsonw_lit(&t->w, start ? ",\"cat\":\"flow\",\"name\":\"" : ",\"bp\":\"e\",\"cat\":\"flow\",\"name\":\"");
    gz_jsonw_lit(&t->w, name);
    gz_jsonw_lit(&t->w, "\",\"id\":");
    gz_jsonw_u64(&t->w, id);
    gz_jsonw_lit(&t->w, ",\"ts\":");
    gz_jsonw_us(&t->w, ns);
    gz_trace_end_event(t);
}

void gz_trace_instant(gz_trace *t, const char *cat, const char *name, uint32_t tid, uint64_t ns)
{
    gz_trace_instant_n(t, cat, name, strlen(name), tid, ns);
}

void gz_trace_instant_n(gz_trace *t, const char *cat, const char *name, size_t len, uint32_t tid,
                        uint64_t ns)
{
    if (!writable(t))
        return;
    event_head(t, 'i', tid);
    gz_jsonw_lit(&t->w, ",\"s\":\"t\",\"cat\":\"");
    gz_jsonw_lit(&t->w, cat);
    gz_jsonw_lit(&t->w, "\",\"name\":");
    gz_jsonw_str(&t->w, name, len);
    gz_jsonw_lit(&t->w, ",\"ts\":");
    gz_jsonw_us(&t->w, ns);
}

bool gz_trace_flush(gz_trace *t)
{
    if (!usable(t))
        return false;
    if (!gz_jsonw_flush(&t->w)) {
        t->failed = true;
        if (t->w.error == ETIMEDOUT) {
            gz_log("nothing was read from trace output %s for too long at exit; the rest of "
                   "the trace is given up",
                   t->path);
            return false;
        }
        gz_log("writing trace file %s failed (%s); the trace stops here, later zones are "
               "counted as dropped",
               t->path, strerror(t->w.error));
        return false;
    }
    return true;
}

static void write_totals(gz_trace *t, uint64_t zones_produced, uint64_t zones_written,
                         uint64_t zones_dropped, uint64_t items_dropped)
{
    gz_jsonw_lit(&t->w, "{\"ph\":\"M\",\"name\":\"gpuzones_totals\",\"pid\":");
    gz_jsonw_i64(&t->w, t->pid);
    gz_jsonw_lit(&t->w, ",\"args\":{\"zones_produced\":");
    gz_jsonw_u64(&t->w, zones_produced);
    gz_jsonw_lit(&t->w, ",\"zones_written\":");
    gz_jsonw_u64(&t->w, zones_written);
    gz_jsonw_lit(&t->w, ",\"zones_dropped\":");
    gz_jsonw_u64(&t->w, zones_dropped);
    gz_jsonw_lit(&t->w, ",\"items_dropped\":");
    gz_jsonw_u64(&t->w, items_dropped);
    gz_jsonw_lit(&t->w, "}}\n]\n");
}

void gz_trace_end_so_far(gz_trace *t, uint64_t zones_produced, uint64_t zones_written,
                         uint64_t zones_dropped, uint64_t items_dropped)
{
    if (!writable(t) || !gz_trace_flush(t))
        return;
    if (!t->rewindable)
        return;
    off_t at = lseek(t->w.fd, 0, SEEK_CUR);
    if (at < 0)
        return;
    write_totals(t, zones_produced, zones_written, zones_dropped, items_dropped);
    if (gz_trace_flush(t))
        t->end_at = (long long)at;
}

void gz_trace_close(gz_trace *t, uint64_t zones_produced, uint64_t zones_written,
                    uint64_t zones_dropped, uint64_t items_dropped)
{
    if (writable(t)) {
        write_totals(t, zones_produced, zones_written, zones_dropped, items_dropped);
        gz_trace_flush(t);
    }
    if (t->open && t->w.fd >= 0)
        close(t->w.fd);
    t->w.fd = -1;
    t->open = false;
}
