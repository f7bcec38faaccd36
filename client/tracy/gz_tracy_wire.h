/* Tracy v0.14.0's wire format (protocol 82), written from the facts in
 * Tracy's TracyProtocol.hpp / TracyQueue.hpp: packed little-endian items,
 * each a one-byte type and a fixed payload, some followed by a string.
 * Times are nanoseconds (the welcome message says timerMul = 1); most are
 * deltas against a reference the receiver keeps, which the encoder mirrors.
 *
 * The encoder appends whole items to a growable buffer; the decoder reads
 * the same items back (for the tests and the bench: the profiler is the
 * real reader). Nothing here does I/O. */
#ifndef GZ_TRACY_WIRE_H
#define GZ_TRACY_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GZ_TRACY_PROTOCOL 82u
#define GZ_TRACY_VERSION_TEXT "0.14.0"
#define GZ_TRACY_BROADCAST_VERSION 3u
/* The receiver decompresses each LZ4 frame into a 256 KiB window: no frame
 * may hold more, and no item may straddle two frames. */
#define GZ_TRACY_FRAME_MAX (256u * 1024u)
#define GZ_TRACY_LZ4_BOUND(n) ((n) + (n) / 255u + 16u)
#define GZ_TRACY_WELCOME_SIZE 1170u
#define GZ_TRACY_BROADCAST_SIZE 84u
#define GZ_TRACY_QUERY_SIZE 13u
#define GZ_TRACY_SHIBBOLETH "TracyPrf"
/* Longest string an item carries here (the format allows 64 KiB - 1). */
#define GZ_TRACY_STRING_MAX 4096u

/* QueueType values used here (their index in Tracy's enum). */
enum {
    GZ_TQ_MESSAGE = 2,
    GZ_TQ_ZONE_BEGIN = 19,
    GZ_TQ_ZONE_BEGIN32 = 20,
    GZ_TQ_ZONE_BEGIN16 = 21,
    GZ_TQ_ZONE_END = 25,
    GZ_TQ_ZONE_END32 = 26,
    GZ_TQ_ZONE_END16 = 27,
    GZ_TQ_GPU_ZONE_BEGIN_SERIAL = 50,
    GZ_TQ_GPU_ZONE_END_SERIAL = 54,
    GZ_TQ_GPU_TIME = 60,
    GZ_TQ_GPU_CONTEXT_NAME = 61,
    GZ_TQ_TERMINATE = 73,
    GZ_TQ_KEEP_ALIVE = 74,
    GZ_TQ_THREAD_CONTEXT = 75,
    GZ_TQ_FRAME_MARK = 83,
    GZ_TQ_SOURCE_LOCATION = 87,
    GZ_TQ_GPU_NEW_CONTEXT = 95,
    GZ_TQ_ACK_QUERY_NOOP = 108,
    GZ_TQ_ACK_SOURCE_CODE_NA = 109,
    GZ_TQ_ACK_SYMBOL_CODE_NA = 110,
    GZ_TQ_SINGLE_STRING16 = 112,
    GZ_TQ_SINGLE_STRING8 = 114,
    GZ_TQ_STRING_DATA = 119, /* first of the types with a pointer + string */
    GZ_TQ_THREAD_NAME = 120,
    GZ_TQ_FRAME_NAME = 125,
};

/* ServerQuery values: what the profiler asks for. */
enum {
    GZ_TSQ_TERMINATE = 0,
    GZ_TSQ_STRING = 1,
    GZ_TSQ_THREAD_STRING = 2,
    GZ_TSQ_SOURCE_LOCATION = 3,
    GZ_TSQ_PLOT_NAME = 4,
    GZ_TSQ_FRAME_NAME = 5,
    GZ_TSQ_PARAMETER = 6,
    GZ_TSQ_FIBER_NAME = 7,
    GZ_TSQ_EXTERNAL_NAME = 8,
    GZ_TSQ_DISCONNECT = 9,
    GZ_TSQ_CALLSTACK_FRAME = 10,
    GZ_TSQ_SYMBOL = 11,
    GZ_TSQ_SYMBOL_CODE = 12,
    GZ_TSQ_SOURCE_CODE = 13,
    GZ_TSQ_DATA_TRANSFER = 14,
    GZ_TSQ_DATA_TRANSFER_PART = 15,
};

/* HandshakeStatus values. */
enum {
    GZ_THS_WELCOME = 1,
    GZ_THS_PROTOCOL_MISMATCH = 2,
    GZ_THS_NOT_AVAILABLE = 3,
};

/* GpuContextType values. */
enum {
    GZ_TGPU_OPENGL = 1,
    GZ_TGPU_VULKAN = 2,
    GZ_TGPU_OPENCL = 3,
};

typedef struct gz_tracy_query {
    uint8_t type;
    uint64_t ptr;
    uint32_t extra;
} gz_tracy_query;

/* Encoder: the receiver's reference times and current thread, mirrored. */
typedef struct gz_tracy_enc {
    uint8_t *buf;
    size_t len, cap;
    bool failed; /* out of memory once: everything after is lost */
    int64_t ref_thread, ref_serial, ref_gpu;
    uint32_t thread;
    bool have_thread;
} gz_tracy_enc;

/* Reference state alone, to undo a partly written group of items. */
typedef struct gz_tracy_enc_mark {
    size_t len;
    int64_t ref_thread, ref_serial, ref_gpu;
    uint32_t thread;
    bool have_thread;
} gz_tracy_enc_mark;

void gz_tracy_enc_init(gz_tracy_enc *e);
void gz_tracy_enc_free(gz_tracy_enc *e);
gz_tracy_enc_mark gz_tracy_enc_save(const gz_tracy_enc *e);
void gz_tracy_enc_undo(gz_tracy_enc *e, const gz_tracy_enc_mark *m);

/* CPU zones on thread tid (a ThreadContext item first when it changes). */
void gz_tracy_enc_zone_begin(gz_tracy_enc *e, uint32_t tid, int64_t ns, uint64_t srcloc);
void gz_tracy_enc_zone_end(gz_tracy_enc *e, uint32_t tid, int64_t ns);
void gz_tracy_enc_message(gz_tracy_enc *e, uint32_t tid, int64_t ns, const char *text, size_t len);
/* name 0: the default frame set ("Frame"). */
void gz_tracy_enc_frame_mark(gz_tracy_enc *e, int64_t ns, uint64_t name);
void gz_tracy_enc_gpu_new_context(gz_tracy_enc *e, int64_t cpu_ns, int64_t gpu_time,
                                  uint32_t thread, float period, uint8_t ctx, uint8_t type);
void gz_tracy_enc_gpu_context_name(gz_tracy_enc *e, uint8_t ctx, const char *name, size_t len);
void gz_tracy_enc_gpu_begin(gz_tracy_enc *e, int64_t cpu_ns, uint32_t thread, uint16_t query,
                            uint8_t ctx, uint64_t srcloc);
void gz_tracy_enc_gpu_end(gz_tracy_enc *e, int64_t cpu_ns, uint32_t thread, uint16_t query,
                          uint8_t ctx);
void gz_tracy_enc_gpu_time(gz_tracy_enc *e, int64_t gpu_time, uint16_t query, uint8_t ctx);
/* Answers: type is GZ_TQ_STRING_DATA, GZ_TQ_THREAD_NAME or GZ_TQ_FRAME_NAME. */
void gz_tracy_enc_string(gz_tracy_enc *e, uint8_t type, uint64_t ptr, const char *s, size_t len);
void gz_tracy_enc_srcloc(gz_tracy_enc *e, uint64_t name, uint64_t function, uint64_t file,
                         uint32_t line, uint32_t color);
/* An item that is its type byte alone (Terminate, AckServerQueryNoop...). */
void gz_tracy_enc_bare(gz_tracy_enc *e, uint8_t type);
/* AckSourceCodeNotAvailable for source query id. */
void gz_tracy_enc_ack_source(gz_tracy_enc *e, uint32_t id);

/* The fixed messages of the handshake. */
typedef struct gz_tracy_welcome_info {
    int64_t init_begin, init_end; /* ns */
    uint64_t resolution_ns, epoch_s, exec_mtime_s, pid;
    const char *program, *host_info;
} gz_tracy_welcome_info;
void gz_tracy_welcome(uint8_t out[GZ_TRACY_WELCOME_SIZE], const gz_tracy_welcome_info *w);
/* Returns the bytes to send (Tracy sends the name's bytes and its NUL). */
size_t gz_tracy_broadcast(uint8_t out[GZ_TRACY_BROADCAST_SIZE], uint16_t port, uint64_t pid,
                          int32_t active_s, const char *program);
void gz_tracy_query_parse(const uint8_t in[GZ_TRACY_QUERY_SIZE], gz_tracy_query *q);
void gz_tracy_query_write(uint8_t out[GZ_TRACY_QUERY_SIZE], const gz_tracy_query *q);

/* Decoder: one item at a time, times made absolute as the profiler does. */
typedef struct gz_tracy_item {
    uint8_t type;
    uint32_t thread;          /* thread context (CPU items) or the item's thread (GPU) */
    int64_t time, time2;      /* cpu/time; gpu time of GpuNewContext */
    uint64_t ptr, ptr2, ptr3; /* srcloc / name; function; file */
    uint32_t line, color;
    uint16_t query;
    uint8_t ctx, ctx_type;
    float period;
    const char *str; /* string carried by, or sent just before, the item */
    size_t str_len;
} gz_tracy_item;

typedef struct gz_tracy_dec {
    const uint8_t *p, *end;
    int64_t ref_thread, ref_serial, ref_gpu;
    uint32_t thread;
    const char *single;
    size_t single_len;
} gz_tracy_dec;

void gz_tracy_dec_init(gz_tracy_dec *d, const void *data, size_t len);
/* 1: *it filled; 0: end of data; -1: malformed or a type not written here. */
int gz_tracy_dec_next(gz_tracy_dec *d, gz_tracy_item *it);

#endif
