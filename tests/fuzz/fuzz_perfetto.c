/* libFuzzer target: the Perfetto trace writer (client/sink_perfetto.c).
 *
 * The input is a list of sink operations, as the worker would call them,
 * with whatever values it holds: names of any bytes and any length (past
 * the writer's 4 KiB cut), track ids past the table, times and counts up to
 * 2^64 - 1, zones that end before they begin, flows that never meet. The
 * writer must not crash, leak or overrun, and what it writes must be whole
 * protobuf: length-delimited Trace.packet fields, each a message whose
 * fields (and those of its messages) fit exactly. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gz_client_internal.h"
#include "gz_gpu_clock.h"
#include "gz_sinks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

static uint64_t take(input *in, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes && in->n; i++, in->p++, in->n--)
        v = v << 8 | *in->p;
    return v;
}

/* A name: a length (two bytes, so past 4 KiB) and that many bytes of the
 * input (fewer when it runs out). */
static const char *name(input *in, size_t *len)
{
    size_t want = (size_t)take(in, 2);
    const char *s = (const char *)in->p;
    *len = want < in->n ? want : in->n;
    in->p += *len;
    in->n -= *len;
    return s;
}

static uint64_t time_of(input *in)
{
    uint64_t v = take(in, 1);
    /* Mostly near each other, sometimes anywhere. */
    return v < 200 ? 1000000000ull + v * 1000 + take(in, 2) : take(in, 8);
}

/* Every field of a message fits it; nested ones (wire type 2 of the
 * fields known to hold messages) are checked the same way. */
static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*p >= end)
            return 0;
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 0);
        if (!(b & 0x80))
            return 1;
    }
    return 0;
}

/* The fields of a message fit it exactly; with known (the packet), the
 * fields that hold messages (clock snapshot, track event, interned data,
 * defaults, track descriptor) are checked the same way one level down. */
static int message_ok(const uint8_t *p, const uint8_t *end, int known)
{
    while (p < end) {
        uint64_t key, v;
        if (!varint(&p, end, &key) || (key >> 3) == 0)
            return 0;
        switch (key & 7) {
        case 0:
            if (!varint(&p, end, &v))
                return 0;
            break;
        case 1:
            if (end - p < 8)
                return 0;
            p += 8;
            break;
        case 2: {
            if (!varint(&p, end, &v) || v > (uint64_t)(end - p))
                return 0;
            uint64_t f = key >> 3;
            if (known && (f == 6 || f == 11 || f == 12 || f == 59 || f == 60) &&
                !message_ok(p, p + v, 0))
                return 0;
            p += v;
            break;
        }
        default:
            return 0;
        }
    }
    return p == end;
}

static void check_output(int fd)
{
    off_t size = lseek(fd, 0, SEEK_END);
    if (size <= 0)
        return;
    uint8_t *buf = malloc((size_t)size);
    if (!buf || pread(fd, buf, (size_t)size, 0) != size)
        abort();
    const uint8_t *p = buf, *end = buf + size;
    while (p < end) {
        uint64_t key, len;
        if (!varint(&p, end, &key) || key != (1u << 3 | 2) || !varint(&p, end, &len) ||
            len > (uint64_t)(end - p) || !message_ok(p, p + len, 1))
            abort(); /* not a whole Trace.packet */
        p += len;
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("gz-fuzz-perfetto", 0);
    if (fd < 0)
        return 0;
    gz_trace_outcome outcome = {0};
    gz_sink sink;
    uint64_t progress = 0;
    if (!gz_perfetto_sink_open_fd(dup(fd), "fuzz.pftrace", 1234, "fuzz", size && (data[0] & 1), NULL,
                                  &progress, &outcome, &sink)) {
        close(fd);
        return 0;
    }
    const gz_sink_ops *ops = sink.ops;
    void *s = sink.self;
    gz_gpu_clock clock;
    gz_gpu_clock_init(&clock, 1.0, 64);
    input in = {data, size};
    while (in.n) {
        unsigned op = (unsigned)take(&in, 1) % 14;
        uint16_t track = (uint16_t)(take(&in, 2) % (GZ_MAX_TRACKS + 8));
        size_t len, dlen;
        const char *n;
        switch (op) {
        case 0: {
            const char *dev = name(&in, &dlen);
            gz_sink_track t = {.id = track, .api = GZ_API_VULKAN,
                               .clock_track = (uint16_t)(take(&in, 2) % (GZ_MAX_TRACKS + 8)),
                               .name = "", .device = dev, .device_len = dlen};
            ops->track_new(s, &t);
            break;
        }
        case 1: {
            n = name(&in, &len);
            const char *dev = name(&in, &dlen);
            gz_sink_track t = {.id = track, .clock_track = (uint16_t)take(&in, 2), .name = n,
                               .name_len = len, .device = dev, .device_len = dlen};
            ops->track_name(s, &t);
            break;
        }
        case 2:
        case 3: {
            n = name(&in, &len);
            gz_srcloc_view loc;
            gz_sink_zone z = {.track = track, .kind = (uint8_t)take(&in, 1), .name = n,
                              .name_len = len, .begin_ns = time_of(&in)};
            z.end_ns = take(&in, 1) & 1 ? z.begin_ns + take(&in, 3) : time_of(&in);
            z.flow = take(&in, 1) & 1 ? take(&in, 8) : 0;
            z.wait_flow = take(&in, 1) & 1 ? take(&in, 8) : 0;
            z.has_args = take(&in, 1) & 1;
            z.batch = (uint32_t)take(&in, 4);
            z.cmdbufs = (uint32_t)take(&in, 4);
            z.begin_raw = take(&in, 8);
            z.end_raw = take(&in, 8);
            z.clock_doubt_ns = take(&in, 1) & 1 ? take(&in, 8) : 0;
            if (op == 3) {
                loc.name = n;
                loc.name_len = len;
                loc.function = name(&in, &loc.function_len);
                loc.file = name(&in, &loc.file_len);
                loc.line = (uint32_t)take(&in, 4);
                loc.color = (uint32_t)take(&in, 4);
                z.loc = &loc;
            }
            ops->gpu_zone(s, &z);
            break;
        }
        case 4: {
            uint32_t tid = (uint32_t)take(&in, 4);
            n = name(&in, &len);
            uint64_t b = time_of(&in);
            ops->cpu_zone(s, tid, n, len, b, take(&in, 1) & 1 ? b + take(&in, 3) : time_of(&in));
            break;
        }
        case 5:
            ops->flow_out(s, take(&in, 8), (uint32_t)take(&in, 4), time_of(&in));
            break;
        case 6:
            ops->flow_in(s, take(&in, 8), (uint32_t)take(&in, 4), time_of(&in));
            break;
        case 7: {
            uint32_t tid = (uint32_t)take(&in, 4);
            n = name(&in, &len);
            ops->thread_name(s, tid, n, len);
            break;
        }
        case 8: {
            uint32_t tid = (uint32_t)take(&in, 4);
            n = name(&in, &len);
            if (take(&in, 1) & 1)
                ops->frame_mark(s, tid, n, len, time_of(&in));
            else
                ops->message(s, tid, n, len, time_of(&in));
            break;
        }
        case 9:
        case 10: {
            clock.model.method = (gz_calib_method)(take(&in, 1) % 3);
            clock.model.deviation_ns = take(&in, 1) & 1 ? UINT64_MAX : take(&in, 8);
            clock.model.calib_deviation_ns = take(&in, 8);
            clock.model.samples = take(&in, 8);
            clock.model.jumps = take(&in, 4);
            n = name(&in, &len);
            gz_sink_track t = {.id = track, .clock_track = track, .name = n, .name_len = len,
                               .device = ""};
            if (op == 9)
                ops->calibration(s, &t, &clock, time_of(&in));
            else
                ops->clock_correction(s, &t, &clock, time_of(&in));
            break;
        }
        case 11:
            ops->flush(s);
            break;
        case 12:
            ops->track_end(s, track);
            break;
        default: {
            /* Many zones on one track at once: the stack of open ends, deep
             * nesting and the interning's bounds. */
            uint32_t count = (uint32_t)(take(&in, 2) % 4096);
            uint64_t t0 = time_of(&in);
            char buf[16];
            for (uint32_t k = 0; k < count; k++) {
                int w = snprintf(buf, sizeof buf, "z%u", k % 5000);
                gz_sink_zone z = {.track = track, .kind = (uint8_t)k, .name = buf,
                                  .name_len = (size_t)w, .begin_ns = t0 + k,
                                  .end_ns = t0 + 2u * count - k};
                ops->gpu_zone(s, &z);
            }
            break;
        }
        }
    }
    gz_sink_totals totals = {.zones_produced = UINT64_MAX, .zones_written = size,
                             .zones_dropped = UINT64_MAX - size, .items_dropped = 1};
    ops->close(s, &totals);
    check_output(fd);
    close(fd);
    return 0;
}
