/* Reading GPUZONES_* variables. A bad value never stops the program: it is
 * named on stderr with the value used instead. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gz_config.h"

bool gz_config_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "on", "yes", "true"};
    static const char *const no[] = {"0", "off", "no", "false"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (!strcasecmp(s, yes[i])) {
            *out = true;
            return true;
        }
        if (!strcasecmp(s, no[i])) {
            *out = false;
            return true;
        }
    }
    return false;
}

bool gz_config_parse_level(const char *s, gz_level *out)
{
    static const struct {
        const char *name;
        gz_level level;
    } levels[] = {
        {"submit", GZ_LEVEL_SUBMIT},
        {"cmdbuf", GZ_LEVEL_CMDBUF},
        {"labels", GZ_LEVEL_LABELS},
        {"passes", GZ_LEVEL_PASSES},
        {"commands", GZ_LEVEL_COMMANDS},
    };
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        if (!strcasecmp(s, levels[i].name)) {
            *out = levels[i].level;
            return true;
        }
    }
    return false;
}

bool gz_config_parse_vk_readback(const char *s, gz_vk_readback_mode *out)
{
    static const struct {
        const char *name;
        gz_vk_readback_mode mode;
    } modes[] = {
        {"auto", GZ_VK_READBACK_AUTO},
        {"host", GZ_VK_READBACK_HOST},
        {"copy", GZ_VK_READBACK_COPY},
    };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (!strcasecmp(s, modes[i].name)) {
            *out = modes[i].mode;
            return true;
        }
    }
    return false;
}

bool gz_config_parse_addr(const char *s, char *out, size_t cap)
{
    unsigned char bin[sizeof(struct in6_addr)];
    size_t len = strlen(s);
    if (!len || len >= cap ||
        (inet_pton(AF_INET, s, bin) != 1 && inet_pton(AF_INET6, s, bin) != 1))
        return false;
    memcpy(out, s, len + 1);
    return true;
}

bool gz_config_parse_tracy(const char *s, gz_tracy_mode *out)
{
    static const struct {
        const char *name;
        gz_tracy_mode mode;
    } modes[] = {
        {"auto", GZ_TRACY_AUTO},
        {"listen", GZ_TRACY_LISTEN},
        {"off", GZ_TRACY_OFF},
    };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (!strcasecmp(s, modes[i].name)) {
            *out = modes[i].mode;
            return true;
        }
    }
    return false;
}

bool gz_config_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    if (!*s || *s == '-' || *s == '+')
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

bool gz_config_parse_format(const char *s, unsigned *out)
{
    unsigned formats = 0;
    for (;;) {
        size_t n = strcspn(s, ",");
        if (n == 4 && !strncasecmp(s, "json", 4))
            formats |= GZ_FORMAT_JSON;
        else if (n == 8 && !strncasecmp(s, "perfetto", 8))
            formats |= GZ_FORMAT_PERFETTO;
        else
            return false;
        if (!s[n])
            break;
        s += n + 1;
    }
    *out = formats;
    return true;
}

/* The extensions that name a format; a path without one is JSON. */
static const struct {
    const char *ext;
    unsigned format;
} trace_exts[] = {
    {".json", GZ_FORMAT_JSON},
    {".pftrace", GZ_FORMAT_PERFETTO},
    {".perfetto-trace", GZ_FORMAT_PERFETTO},
};

/* The length of the trace extension path ends in (0: none), and its format. */
static size_t trace_ext(const char *path, unsigned *format)
{
    size_t len = strlen(path);
    for (size_t i = 0; i < sizeof trace_exts / sizeof trace_exts[0]; i++) {
        size_t n = strlen(trace_exts[i].ext);
        if (len > n && !strcasecmp(path + len - n, trace_exts[i].ext) && path[len - n - 1] != '/') {
            *format = trace_exts[i].format;
            return n;
        }
    }
    *format = GZ_FORMAT_JSON;
    return 0;
}

unsigned gz_config_format_of_path(const char *path)
{
    unsigned format;
    trace_ext(path, &format);
    return format;
}

/* The path of one trace file: the one given when it is this format's (by
 * its extension) or the only format written; else the one given with its
 * trace extension replaced by ext (added when it has none); else the
 * default name. */
static void trace_path(char *out, size_t size, const char *given, unsigned format,
                       unsigned formats, const char *ext, const char *exe, int pid)
{
    if (given) {
        unsigned own;
        size_t n = strlen(given) - trace_ext(given, &own);
        if (own == format || formats == format) {
            snprintf(out, size, "%s", given);
            return;
        }
        int w = snprintf(out, size, "%.*s%s", (int)n, given, ext);
        if (w >= 0 && (size_t)w < size)
            return;
        gz_log("GPUZONES_OUTPUT with %s is longer than %zu bytes; using the default name", ext,
               size - 1);
    }
    snprintf(out, size, "gpuzones-%s-%d%s", exe, pid, ext);
}

/* GPUZONES_OUTPUT and GPUZONES_FORMAT: which trace files, and where. */
static void read_outputs(gz_config *cfg, const char *exe, int pid)
{
    const char *out = getenv("GPUZONES_OUTPUT");
    if (out && !strcasecmp(out, "none"))
        return; /* no trace file at all */
    if (out && *out && strlen(out) >= sizeof cfg->output) {
        gz_log("GPUZONES_OUTPUT is longer than %zu bytes; using the default name",
               sizeof cfg->output - 1);
        out = NULL;
    } else if (out && !*out) {
        out = NULL;
    }
    cfg->output_is_default = !out;
    unsigned by_path = GZ_FORMAT_JSON, own_ext = 0; /* own_ext: a trace extension's format */
    if (out && trace_ext(out, &by_path))
        own_ext = by_path;
    unsigned formats = 0;
    const char *fmt = getenv("GPUZONES_FORMAT");
    if (fmt && *fmt && !gz_config_parse_format(fmt, &formats))
        gz_log("GPUZONES_FORMAT=\"%.64s\" is not json, perfetto or json,perfetto; using %s", fmt,
               by_path == GZ_FORMAT_PERFETTO ? "perfetto" : "json");
    if (!formats)
        formats = by_path;
    else if (own_ext && !(formats & own_ext))
        gz_log("GPUZONES_FORMAT=%.64s: the trace goes to %s as GPUZONES_OUTPUT says, whatever "
               "its extension",
               fmt, out);
    if (formats & GZ_FORMAT_JSON) {
        cfg->write_trace = true;
        trace_path(cfg->output, sizeof cfg->output, out, GZ_FORMAT_JSON, formats, ".json", exe,
                   pid);
    }
    if (formats & GZ_FORMAT_PERFETTO) {
        cfg->write_perfetto = true;
        trace_path(cfg->perfetto_output, sizeof cfg->perfetto_output, out, GZ_FORMAT_PERFETTO,
                   formats, ".pftrace", exe, pid);
    }
}

static void read_bool(const char *var, bool *value)
{
    const char *s = getenv(var);
    if (s && !gz_config_parse_bool(s, value))
        gz_log("%s=\"%.64s\" is not 0/1/on/off/yes/no/true/false; using %s", var, s,
               *value ? "1" : "0");
}

static void read_u32(const char *var, uint32_t min, uint32_t max, uint32_t *value)
{
    const char *s = getenv(var);
    if (s && !gz_config_parse_u32(s, min, max, value))
        gz_log("%s=\"%.64s\" is not a whole number in [%u, %u]; using %u", var, s, min, max,
               *value);
}

void gz_config_read(gz_config *cfg, const char *exe, int pid)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->summary = true;
    cfg->level = GZ_LEVEL_LABELS;
    cfg->queue_items = 1u << 16;
    cfg->poll_ms = 20;
    cfg->tracy = GZ_TRACY_AUTO;
    cfg->tracy_port = 8086;
    cfg->tracy_exit_wait_ms = 2000;
    snprintf(cfg->tracy_addr, sizeof cfg->tracy_addr, "127.0.0.1");

    read_outputs(cfg, exe, pid);

    /* 2 (or "verbose"): the summary with each track's clock in full. */
    const char *summary = getenv("GPUZONES_SUMMARY");
    if (summary && (!strcmp(summary, "2") || !strcasecmp(summary, "verbose")))
        cfg->summary = cfg->summary_verbose = true;
    else if (summary && !gz_config_parse_bool(summary, &cfg->summary))
        gz_log("GPUZONES_SUMMARY=\"%.64s\" is not 0/1/2/on/off/verbose; using 1", summary);
    read_bool("GPUZONES_RAW_TICKS", &cfg->raw_ticks);
    const char *record = getenv("GPUZONES_CLOCK_RECORD");
    if (record && strlen(record) >= sizeof cfg->clock_record)
        gz_log("GPUZONES_CLOCK_RECORD is longer than %zu bytes; no clock record is kept",
               sizeof cfg->clock_record - 1);
    else if (record && ((cfg->write_trace && !strcmp(record, cfg->output)) ||
                        (cfg->write_perfetto && !strcmp(record, cfg->perfetto_output))))
        gz_log("GPUZONES_CLOCK_RECORD names the trace file %s; no clock record is kept", record);
    else if (record)
        snprintf(cfg->clock_record, sizeof cfg->clock_record, "%s", record);

    const char *lvl = getenv("GPUZONES_LEVEL");
    if (lvl && !gz_config_parse_level(lvl, &cfg->level))
        gz_log("GPUZONES_LEVEL=\"%.64s\" is not submit, cmdbuf, labels, passes or commands; "
               "using labels",
               lvl);

    const char *readback = getenv("GPUZONES_VK_READBACK");
    if (readback && !gz_config_parse_vk_readback(readback, &cfg->vk_readback))
        gz_log("GPUZONES_VK_READBACK=\"%.64s\" is not auto, host or copy; using auto", readback);

    /* Each half of the double-buffered queue holds this many 32-byte items:
     * 64 Ki items is 2 MiB per half. */
    read_u32("GPUZONES_QUEUE_ITEMS", 1024, 1u << 24, &cfg->queue_items);
    read_u32("GPUZONES_POLL_MS", 1, 1000, &cfg->poll_ms);

    const char *tracy = getenv("GPUZONES_TRACY");
    if (tracy && !gz_config_parse_tracy(tracy, &cfg->tracy))
        gz_log("GPUZONES_TRACY=\"%.64s\" is not auto, listen or off; using auto", tracy);
    /* Tracy searches 20 ports up from the first: keep that range valid. */
    uint32_t port = cfg->tracy_port;
    read_u32("GPUZONES_TRACY_PORT", 1, 65535 - 19, &port);
    cfg->tracy_port = (uint16_t)port;
    read_u32("GPUZONES_TRACY_EXIT_WAIT_MS", 0, 600000, &cfg->tracy_exit_wait_ms);
    const char *addr = getenv("GPUZONES_TRACY_ADDR");
    if (addr && !gz_config_parse_addr(addr, cfg->tracy_addr, sizeof cfg->tracy_addr))
        gz_log("GPUZONES_TRACY_ADDR=\"%.64s\" is not an IPv4 or IPv6 address; listening on "
               "%s only",
               addr, cfg->tracy_addr);
}
