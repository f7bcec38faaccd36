/* Configuration from the environment, read once at client start. */
#ifndef GZ_CONFIG_H
#define GZ_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gz_client.h"

/* GPUZONES_TRACY: where zones go in the Tracy profiler. */
typedef enum gz_tracy_mode {
    GZ_TRACY_AUTO = 0, /* into the program's own Tracy client when it has one */
    GZ_TRACY_LISTEN,   /* that, or else gpuzones itself is a Tracy client */
    GZ_TRACY_OFF,
} gz_tracy_mode;

/* GPUZONES_FORMAT: which trace files are written (bits). */
typedef enum gz_format {
    GZ_FORMAT_JSON = 1u << 0,     /* Chrome JSON (.json) */
    GZ_FORMAT_PERFETTO = 1u << 1, /* Perfetto's protobuf trace (.pftrace) */
} gz_format;

typedef struct gz_config {
    char output[4096];      /* the JSON trace's path (GPUZONES_OUTPUT, or derived from it) */
    bool output_is_default; /* no GPUZONES_OUTPUT given */
    bool write_trace;       /* the JSON trace is written (not for GPUZONES_OUTPUT=none) */
    char perfetto_output[4096]; /* the Perfetto trace's path */
    bool write_perfetto;        /* the Perfetto trace is written */
    bool summary;           /* GPUZONES_SUMMARY (default on) */
    bool summary_verbose;   /* GPUZONES_SUMMARY=2: every track's clock in full */
    gz_level level;         /* GPUZONES_LEVEL (default labels) */
    gz_vk_readback_mode vk_readback; /* GPUZONES_VK_READBACK (default auto) */
    bool raw_ticks;         /* GPUZONES_RAW_TICKS: raw timestamps in zone args (debugging) */
    char clock_record[4096]; /* GPUZONES_CLOCK_RECORD: the clock models' inputs; "" for none */
    uint32_t queue_items;   /* GPUZONES_QUEUE_ITEMS: capacity of each queue half */
    uint32_t poll_ms;       /* GPUZONES_POLL_MS: readback / flush period */
    gz_tracy_mode tracy;    /* GPUZONES_TRACY (default auto) */
    uint16_t tracy_port;    /* GPUZONES_TRACY_PORT: first TCP port tried (default 8086) */
    uint32_t tracy_exit_wait_ms; /* GPUZONES_TRACY_EXIT_WAIT_MS (default 2000) */
    /* GPUZONES_TRACY_ADDR: the address listen mode binds, an IPv4 or IPv6
     * literal (default 127.0.0.1: only this machine can connect). */
    char tracy_addr[64];
} gz_config;

/* Fills cfg from getenv; every bad value gets one "gpuzones:" line and the
 * default. exe is the program's short name, used in the default path. */
void gz_config_read(gz_config *cfg, const char *exe, int pid);

/* Parsers shared with the tests and the fuzzer: return false for bad input
 * and leave *out unchanged. */
bool gz_config_parse_bool(const char *s, bool *out);
bool gz_config_parse_level(const char *s, gz_level *out);
bool gz_config_parse_vk_readback(const char *s, gz_vk_readback_mode *out);
bool gz_config_parse_tracy(const char *s, gz_tracy_mode *out);
/* "json", "perfetto", or both joined by a comma ("json,perfetto"). */
bool gz_config_parse_format(const char *s, unsigned *out);
/* The format a path's extension names: GZ_FORMAT_PERFETTO for .pftrace
 * and .perfetto-trace, 0 for .json, 0 also for anything else. */
unsigned gz_config_format_of_path(const char *path);
bool gz_config_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);
/* An IPv4 or IPv6 address literal (what inet_pton takes), copied to out. */
bool gz_config_parse_addr(const char *s, char *out, size_t cap);

#endif
