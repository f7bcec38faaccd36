/* The Tracy side with no Tracy at all: the encoder against its decoder and
 * against the item sizes of Tracy's protocol 82, the lanes that keep GPU
 * zones nested, the string table, and listen mode end to end against a
 * fake profiler on a second thread (handshake, refused protocol, LZ4
 * frames decoded the way the profiler decodes them, queries answered,
 * termination). */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <poll.h>
#include <lz4.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../unit/gz_check.h"
#include "gz_tracy.h"
#include "gz_tracy_internal.h"
#include "gz_tracy_link.h"
#include "gz_tracy_nest.h"
#include "gz_tracy_strtab.h"
#include "gz_tracy_wire.h"

static int test_sizes(void)
{
    /* Item sizes from Tracy's QueueDataSize (header byte + payload). */
    gz_tracy_enc e;
    gz_tracy_enc_init(&e);
    gz_tracy_enc_zone_begin(&e, 7, 100, 1); /* ThreadContext 5 + ZoneBegin16 11 */
    CHECK_U64(e.len, 5 + 11);
    gz_tracy_enc_zone_end(&e, 7, 100 + 65536); /* ZoneEnd32 5 */
    CHECK_U64(e.len, 16 + 5);
    gz_tracy_enc_zone_end(&e, 7, 100 + 65536 + (1ll << 16) + (1ll << 32)); /* ZoneEnd 9 */
    CHECK_U64(e.len, 21 + 9);
    size_t l = e.len;
    gz_tracy_enc_gpu_new_context(&e, 1, 2, 0, 1.0f, 3, GZ_TGPU_VULKAN);
    CHECK_U64(e.len - l, 28);
    l = e.len;
    gz_tracy_enc_gpu_begin(&e, 5, 1, 2, 3, 4);
    CHECK_U64(e.len - l, 24);
    l = e.len;
    gz_tracy_enc_gpu_end(&e, 5, 1, 2, 3);
    CHECK_U64(e.len - l, 16);
    l = e.len;
    gz_tracy_enc_gpu_time(&e, 5, 2, 3);
    CHECK_U64(e.len - l, 12);
    l = e.len;
    gz_tracy_enc_srcloc(&e, 1, 2, 3, 4, 5);
    CHECK_U64(e.len - l, 32);
    l = e.len;
    gz_tracy_enc_frame_mark(&e, 1, 0);
    CHECK_U64(e.len - l, 17);
    l = e.len;
    gz_tracy_enc_message(&e, 7, 9, "hi", 2); /* SingleStringData8 2+2, Message 10 */
    CHECK_U64(e.len - l, 4 + 10);
    gz_tracy_enc_free(&e);
    uint8_t w[GZ_TRACY_WELCOME_SIZE];
    gz_tracy_welcome_info wi = {.init_begin = 5, .program = "prog"};
    gz_tracy_welcome(w, &wi);
    double mul;
    memcpy(&mul, w, 8);
    CHECK(mul == 1.0);
    CHECK_STR((const char *)w + 8 * 8 + 2 + 16, "prog");
    uint8_t b[GZ_TRACY_BROADCAST_SIZE];
    CHECK_U64(gz_tracy_broadcast(b, 8086, 1, 0, "prog"), 20 + 5);
    CHECK_U64(b[0] | b[1] << 8, GZ_TRACY_BROADCAST_VERSION);
    CHECK_U64(b[2] | b[3] << 8, 8086);
    return 0;
}

static int test_roundtrip(void)
{
    /* Every delta class of the CPU zone encodings, both signs, thread
     * switches (the reference restarts), and the GPU deltas. */
    static const int64_t times[] = {1000,
                                    1000,
                                    1000 + 65535,
                                    1000 + 65536,
                                    2000 + (1ll << 16) + (1ll << 32) - 1,
                                    2000 + (1ll << 16) + (1ll << 32) + 5000,
                                    50,
                                    -7,
                                    1ll << 60,
                                    0};
    const size_t n = sizeof times / sizeof times[0];
    gz_tracy_enc e;
    gz_tracy_enc_init(&e);
    for (size_t i = 0; i < n; i++) {
        uint32_t tid = i % 3 == 2 ? 2 : 1;
        if (i % 2 == 0)
            gz_tracy_enc_zone_begin(&e, tid, times[i], 100 + i);
        else
            gz_tracy_enc_zone_end(&e, tid, times[i]);
        gz_tracy_enc_gpu_begin(&e, times[n - 1 - i], 9, (uint16_t)i, 4, 200 + i);
        gz_tracy_enc_gpu_time(&e, times[i] * 3, (uint16_t)i, 4);
    }
    char big[5000];
    memset(big, 'x', sizeof big);
    gz_tracy_enc_gpu_context_name(&e, 4, big, 256);
    gz_tracy_enc_message(&e, 3, 77, big, sizeof big); /* cut to the string limit */
    gz_tracy_enc_string(&e, GZ_TQ_THREAD_NAME, 55, "render", 6);
    gz_tracy_enc_srcloc(&e, 1, 2, 3, 42, 0x336699);
    /* A group written and taken back leaves nothing behind. */
    gz_tracy_enc_mark m = gz_tracy_enc_save(&e);
    gz_tracy_enc_zone_begin(&e, 99, 123456789, 1);
    gz_tracy_enc_undo(&e, &m);
    gz_tracy_enc_ack_source(&e, 77);
    gz_tracy_enc_bare(&e, GZ_TQ_TERMINATE);
    CHECK(!e.failed);

    gz_tracy_dec d;
    gz_tracy_dec_init(&d, e.buf, e.len);
    gz_tracy_item it;
    for (size_t i = 0; i < n; i++) {
        uint32_t tid = i % 3 == 2 ? 2 : 1;
        bool switched = i == 0 || (i % 3 == 2) != ((i - 1) % 3 == 2);
        if (switched) {
            CHECK(gz_tracy_dec_next(&d, &it) == 1);
            CHECK_U64(it.type, GZ_TQ_THREAD_CONTEXT);
            CHECK_U64(it.thread, tid);
        }
        CHECK(gz_tracy_dec_next(&d, &it) == 1);
        CHECK_U64(it.type, i % 2 == 0 ? GZ_TQ_ZONE_BEGIN : GZ_TQ_ZONE_END);
        CHECK_I64(it.time, times[i]);
        CHECK_U64(it.thread, tid);
        if (i % 2 == 0)
            CHECK_U64(it.ptr, 100 + i);
        CHECK(gz_tracy_dec_next(&d, &it) == 1);
        CHECK_U64(it.type, GZ_TQ_GPU_ZONE_BEGIN_SERIAL);
        CHECK_I64(it.time, times[n - 1 - i]);
        CHECK_U64(it.ptr, 200 + i);
        CHECK_U64(it.query, i);
        CHECK_U64(it.ctx, 4);
        CHECK_U64(it.thread, 9);
        CHECK(gz_tracy_dec_next(&d, &it) == 1);
        CHECK_U64(it.type, GZ_TQ_GPU_TIME);
        CHECK_I64(it.time, times[i] * 3);
    }
    CHECK(gz_tracy_dec_next(&d, &it) == 1);
    CHECK_U64(it.type, GZ_TQ_GPU_CONTEXT_NAME);
    CHECK_U64(it.str_len, 256); /* the 16-bit string form, length - 256 */
    CHECK(gz_tracy_dec_next(&d, &it) == 1);
    CHECK_U64(it.type, GZ_TQ_THREAD_CONTEXT);
    CHECK(gz_tracy_dec_next(&d, &it) == 1);
    CHECK_U64(it.type, GZ_TQ_MESSAGE);
    CHECK_I64(it.time, 77);
    CHECK_U64(it.str_len, GZ_TRACY_STRING_MAX);
    CHECK(gz_tracy_dec_next(&d, &it) == 1);
    CHECK_U64(it.type, GZ_TQ_THREAD_NAME);
    CHECK_U64(it.ptr, 55);
    CHECK(it.str_len == 6 && !memcmp(it.str, "render", 6));
    CHECK(gz_tracy_dec_next(&d, &it) == 1);
    CHECK_U64(it.type, GZ_TQ_SOURCE_LOCATION);
    CHECK_U64(it.ptr2, 2);
    CHECK_U64(it.line, 42);
    CHECK_U64(it.color, 0x336699);
    CHECK(gz_tracy_dec_next(&d, &it) == 1);
    CHECK_U64(it.type, GZ_TQ_ACK_SOURCE_CODE_NA);
    CHECK_U64(it.ptr, 77);
    CHECK(gz_tracy_dec_next(&d, &it) == 1);
    CHECK_U64(it.type, GZ_TQ_TERMINATE);
    CHECK(gz_tracy_dec_next(&d, &it) == 0);
    /* Cut short: refused, never read past the end. */
    gz_tracy_dec_init(&d, e.buf, 7);
    CHECK(gz_tracy_dec_next(&d, &it) == 1);
    CHECK(gz_tracy_dec_next(&d, &it) == -1);
    gz_tracy_enc_free(&e);

    gz_tracy_query q = {GZ_TSQ_SOURCE_LOCATION, 0x200000001ull, 7}, r;
    uint8_t qb[GZ_TRACY_QUERY_SIZE];
    gz_tracy_query_write(qb, &q);
    gz_tracy_query_parse(qb, &r);
    CHECK(r.type == q.type && r.ptr == q.ptr && r.extra == q.extra);
    return 0;
}

typedef struct ends {
    unsigned n;
    unsigned lane[64];
    uint64_t ns[64];
} ends;

static void on_end(void *user, unsigned lane, uint64_t ns)
{
    ends *e = user;
    e->lane[e->n] = lane;
    e->ns[e->n++] = ns;
}

static int test_nest(void)
{
    gz_tracy_nest n;
    ends e = {0};
    gz_tracy_nest_init(&n);
    CHECK(gz_tracy_nest_place(&n, 0, 100, on_end, &e) == 0);
    CHECK(gz_tracy_nest_place(&n, 0, 50, on_end, &e) == 0);  /* nested */
    CHECK(gz_tracy_nest_place(&n, 10, 20, on_end, &e) == 0); /* nested deeper */
    CHECK_U64(e.n, 0);
    CHECK(gz_tracy_nest_place(&n, 30, 80, on_end, &e) == 1); /* ends after its parent's end (50) */
    CHECK_U64(e.n, 1);                                       /* [10,20] ended at 30 */
    CHECK_U64(e.ns[0], 20);
    CHECK(gz_tracy_nest_place(&n, 60, 70, on_end, &e) == 0); /* 50 ended; nests in [0,100] */
    CHECK_U64(e.n, 2);
    CHECK_U64(e.ns[1], 50);
    gz_tracy_nest_finish(&n, on_end, &e);
    /* The rest in time order across lanes: 70 (lane 0), 80 (lane 1), 100. */
    CHECK_U64(e.n, 5);
    CHECK(e.ns[2] == 70 && e.lane[2] == 0);
    CHECK(e.ns[3] == 80 && e.lane[3] == 1);
    CHECK(e.ns[4] == 100 && e.lane[4] == 0);
    CHECK(!gz_tracy_nest_open(&n));
    /* Too deep for one lane spills to the next; no lane left: refused. */
    for (int i = 0; i < GZ_TRACY_NEST_DEPTH * GZ_TRACY_NEST_LANES; i++)
        CHECK(gz_tracy_nest_place(&n, 1000, 2000, on_end, &e) == i / GZ_TRACY_NEST_DEPTH);
    CHECK(gz_tracy_nest_place(&n, 1000, 2000, on_end, &e) == -1);
    return 0;
}

static int test_strtab(void)
{
    gz_tracy_strtab t;
    gz_tracy_strtab_init(&t, 1000, 1u << 20);
    bool added;
    char buf[16];
    for (int i = 0; i < 1000; i++) {
        int len = snprintf(buf, sizeof buf, "name %d", i);
        CHECK_U64(gz_tracy_strtab_put(&t, buf, (size_t)len, &added), (uint64_t)i + 1);
        CHECK(added);
    }
    CHECK_U64(gz_tracy_strtab_put(&t, "name 500", 8, &added), 501);
    CHECK(!added);
    CHECK_U64(gz_tracy_strtab_find(&t, "name 999", 8), 1000);
    CHECK_U64(gz_tracy_strtab_put(&t, "one more", 8, &added), 0); /* full */
    CHECK_U64(gz_tracy_strtab_find(&t, "absent", 6), 0);
    CHECK_STR(gz_tracy_strtab_get(&t, 7)->s, "name 6");
    CHECK(gz_tracy_strtab_get(&t, 1001) == NULL);
    gz_tracy_strtab_free(&t);
    return 0;
}

/* The fake profiler: does what tracy-capture does with our stream, as far
 * as the items sent here go. */
typedef struct fake {
    uint16_t port;
    bool skip_refused; /* connect with the right protocol only */
    int leave_after;   /* > 0: hang up after this many GPU zone begins */
    int refused_status;
    char ctx_name[64], zone_name[64], thread_name[64], srcloc_file[64];
    int gpu_begins, gpu_times, cpu_begins, terminated, bad;
    int contexts;        /* GpuNewContext items */
    int first_gpu_item;  /* the type of the first GPU item received */
    double welcome_secs; /* from its connect to the welcome */
} fake;

static double now_secs(void)
{
    return (double)gz_tracy_now_ns() / 1e9;
}

static int connect_to(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < 500; i++) {
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            return fd;
        usleep(10000);
    }
    close(fd);
    return -1;
}

static bool read_n(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = recv(fd, p, n, 0);
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

static void query(int fd, uint8_t type, uint64_t ptr)
{
    gz_tracy_query q = {type, ptr, 0};
    uint8_t b[GZ_TRACY_QUERY_SIZE];
    gz_tracy_query_write(b, &q);
    send(fd, b, sizeof b, MSG_NOSIGNAL);
}

static void copy_str(char *dst, const gz_tracy_item *it)
{
    size_t n = it->str_len < 63 ? it->str_len : 63;
    memcpy(dst, it->str, n);
    dst[n] = 0;
}

static void *profiler(void *arg)
{
    fake *f = arg;
    int fd;
    uint8_t hello[12] = "TracyPrf";
    uint8_t status = 0;
    if (!f->skip_refused) {
        /* A profiler of another protocol is refused with status 2. */
        fd = connect_to(f->port);
        hello[8] = 76;
        send(fd, hello, sizeof hello, MSG_NOSIGNAL);
        f->refused_status = read_n(fd, &status, 1) ? status : -1;
        close(fd);
    }

    double t0 = now_secs();
    fd = connect_to(f->port);
    hello[8] = GZ_TRACY_PROTOCOL;
    send(fd, hello, sizeof hello, MSG_NOSIGNAL);
    uint8_t welcome[GZ_TRACY_WELCOME_SIZE];
    if (!read_n(fd, &status, 1) || status != GZ_THS_WELCOME ||
        !read_n(fd, welcome, sizeof welcome)) {
        f->bad = 1;
        close(fd);
        return NULL;
    }
    f->welcome_secs = now_secs() - t0;
    LZ4_streamDecode_t *lz = LZ4_createStreamDecode();
    char *window = malloc(3 * GZ_TRACY_FRAME_MAX);
    char *packet = malloc(GZ_TRACY_LZ4_BOUND(GZ_TRACY_FRAME_MAX));
    size_t off = 0;
    uint64_t pending_srcloc = 0, pending_name = 0;
    int pending = 0;
    for (;;) {
        uint8_t sz[4];
        if (!read_n(fd, sz, 4))
            break;
        uint32_t n =
            (uint32_t)sz[0] | (uint32_t)sz[1] << 8 | (uint32_t)sz[2] << 16 | (uint32_t)sz[3] << 24;
        if (n > GZ_TRACY_LZ4_BOUND(GZ_TRACY_FRAME_MAX) || !read_n(fd, packet, n)) {
            f->bad = 2;
            break;
        }
        int dn =
            LZ4_decompress_safe_continue(lz, packet, window + off, (int)n, (int)GZ_TRACY_FRAME_MAX);
        if (dn < 0) {
            f->bad = 3;
            break;
        }
        gz_tracy_dec d;
        gz_tracy_dec_init(&d, window + off, (size_t)dn);
        off += (size_t)dn;
        if (off > 2 * GZ_TRACY_FRAME_MAX)
            off = 0;
        gz_tracy_item it;
        int r;
        while ((r = gz_tracy_dec_next(&d, &it)) == 1) {
            switch (it.type) {
            case GZ_TQ_GPU_NEW_CONTEXT:
                f->contexts++;
                if (!f->first_gpu_item)
                    f->first_gpu_item = it.type;
                break;
            case GZ_TQ_GPU_CONTEXT_NAME:
                copy_str(f->ctx_name, &it);
                break;
            case GZ_TQ_GPU_ZONE_BEGIN_SERIAL:
                if (!f->first_gpu_item)
                    f->first_gpu_item = it.type;
                if (!f->gpu_begins++) {
                    query(fd, GZ_TSQ_SOURCE_LOCATION, it.ptr);
                    query(fd, GZ_TSQ_THREAD_STRING, 1001);
                    pending += 2;
                }
                break;
            case GZ_TQ_GPU_TIME:
                f->gpu_times++;
                break;
            case GZ_TQ_ZONE_BEGIN:
                f->cpu_begins++;
                break;
            case GZ_TQ_SOURCE_LOCATION:
                pending--;
                pending_srcloc = it.ptr3;
                pending_name = it.ptr;
                query(fd, GZ_TSQ_STRING, it.ptr);
                query(fd, GZ_TSQ_STRING, it.ptr3);
                pending += 2;
                break;
            case GZ_TQ_STRING_DATA:
                pending--;
                if (it.ptr == pending_name)
                    copy_str(f->zone_name, &it);
                if (it.ptr == pending_srcloc)
                    copy_str(f->srcloc_file, &it);
                break;
            case GZ_TQ_THREAD_NAME:
                pending--;
                copy_str(f->thread_name, &it);
                break;
            case GZ_TQ_TERMINATE:
                f->terminated = 1;
                break;
            default:
                break;
            }
        }
        if (r < 0) {
            f->bad = 4;
            break;
        }
        if (f->leave_after && f->gpu_begins >= f->leave_after)
            break; /* a profiler closed before the end */
        /* As the profiler: terminate once everything asked for came. */
        if (f->terminated && pending == 0) {
            query(fd, GZ_TSQ_TERMINATE, 0);
            break;
        }
    }
    LZ4_freeStreamDecode(lz);
    free(window);
    free(packet);
    close(fd);
    return NULL;
}

static uint16_t free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

static int test_listen(void)
{
    gz_config cfg = {.tracy = GZ_TRACY_OFF, .tracy_addr = "127.0.0.1", .tracy_port = free_port(), .tracy_exit_wait_ms = 10000};
    gz_sink s;
    CHECK(!gz_tracy_sink_open(&cfg, NULL, &s)); /* off: nothing */
    cfg.tracy = GZ_TRACY_LISTEN;
    CHECK(gz_tracy_sink_open(&cfg, NULL, &s));
    fake f = {.port = cfg.tracy_port};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, profiler, &f) == 0);

    s.ops->thread_name(s.self, 1001, "render thread", 13);
    gz_sink_track t = {.id = 1, .api = GZ_API_VULKAN, .name = "Graphics queue", .name_len = 14};
    s.ops->track_new(s.self, &t);
    gz_srcloc_view loc = {
        .function = "draw_all", .function_len = 8, .file = "scene.c", .file_len = 7, .line = 42};
    for (int i = 0; i < 1000; i++) {
        uint64_t b = 1000000000ull + (uint64_t)i * 1000;
        gz_sink_zone z = {.track = 1,
                          .name = "draw",
                          .name_len = 4,
                          .loc = &loc,
                          .begin_ns = b,
                          .end_ns = b + 500};
        s.ops->gpu_zone(s.self, &z);
        s.ops->cpu_zone(s.self, 1001, "vkQueueSubmit", 13, b, b + 100);
        if (i % 100 == 0)
            s.ops->flush(s.self);
    }
    s.ops->flush(s.self);
    gz_sink_totals tot = {0};
    s.ops->close(s.self, &tot); /* waits for the fake profiler's terminate */
    pthread_join(th, NULL);
    CHECK_I64(f.bad, 0);
    CHECK_I64(f.refused_status, GZ_THS_PROTOCOL_MISMATCH);
    CHECK_STR(f.ctx_name, "Graphics queue");
    CHECK_I64(f.gpu_begins, 1000);
    CHECK_I64(f.gpu_times, 2000);
    CHECK_I64(f.cpu_begins, 1000);
    CHECK_I64(f.terminated, 1);
    CHECK_STR(f.zone_name, "draw");
    CHECK_STR(f.srcloc_file, "scene.c");
    CHECK_STR(f.thread_name, "render thread");
    return 0;
}

/* Runs close with stderr captured; returns the seconds it took and the
 * "gpuzones:" lines in out. */
static double close_captured(gz_sink *s, char *out, size_t cap)
{
    fflush(stderr);
    FILE *f = tmpfile();
    int saved = dup(2);
    dup2(fileno(f), 2);
    uint64_t t0 = gz_tracy_now_ns();
    gz_sink_totals tot = {0};
    s->ops->close(s->self, &tot);
    double secs = (double)(gz_tracy_now_ns() - t0) / 1e9;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = 0;
    fclose(f);
    fputs(out, stderr);
    return secs;
}

static void zones(gz_sink *s, int n)
{
    gz_sink_track t = {.id = 1, .api = GZ_API_VULKAN, .name = "q", .name_len = 1};
    s->ops->track_new(s->self, &t);
    for (int i = 0; i < n; i++) {
        uint64_t b = 1000000000ull + (uint64_t)i * 1000;
        gz_sink_zone z = {.track = 1, .name = "z", .name_len = 1, .begin_ns = b, .end_ns = b + 500};
        s->ops->gpu_zone(s->self, &z);
        if (i % 1000 == 999)
            s->ops->flush(s->self);
    }
}

static int test_bounded(void)
{
    /* Nobody connects: 64 KiB may wait, the rest is dropped and said; close
     * waits the configured time for a profiler, no longer. */
    gz_config cfg = {
        .tracy = GZ_TRACY_LISTEN, .tracy_addr = "127.0.0.1", .tracy_port = free_port(), .tracy_exit_wait_ms = 300};
    gz_sink s;
    CHECK(gz_tracy_listen_open(&cfg, 64u << 10, NULL, &s));
    zones(&s, 100000);
    char out[4096];
    double secs = close_captured(&s, out, sizeof out);
    CHECK(secs >= 0.29 && secs < 1.5);
    unsigned long long sent = 0, dropped = 0, budget = 0;
    const char *p = strstr(out, "no profiler took ");
    CHECK(p && sscanf(p, "no profiler took %llu GPU zones", &sent) == 1);
    p = strstr(out, "dropped ");
    CHECK(p && sscanf(p, "dropped %llu zones (%llu while", &dropped, &budget) == 2);
    CHECK_U64(sent + dropped, 100000);
    CHECK_U64(budget, dropped);
    /* 64 bytes a zone: what waited fits the budget. */
    CHECK(sent > 0 && sent * 64 <= (64u << 10));
    return 0;
}

/* A profiler that shakes hands and then never reads. */
static void *stalled(void *arg)
{
    fake *f = arg;
    int fd = connect_to(f->port);
    uint8_t hello[12] = "TracyPrf";
    hello[8] = GZ_TRACY_PROTOCOL;
    send(fd, hello, sizeof hello, MSG_NOSIGNAL);
    uint8_t status = 0;
    __atomic_store_n(&f->refused_status, read_n(fd, &status, 1) ? status : -1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&f->terminated, __ATOMIC_ACQUIRE))
        usleep(10000);
    close(fd);
    return NULL;
}

static int test_stalled(void)
{
    /* Connected but stuck: close still returns after the wait. */
    gz_config cfg = {
        .tracy = GZ_TRACY_LISTEN, .tracy_addr = "127.0.0.1", .tracy_port = free_port(), .tracy_exit_wait_ms = 500};
    gz_sink s;
    CHECK(gz_tracy_listen_open(&cfg, 256u << 20, NULL, &s));
    fake f = {.port = cfg.tracy_port};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, stalled, &f) == 0);
    for (int i = 0; i < 500 && !__atomic_load_n(&f.refused_status, __ATOMIC_ACQUIRE); i++)
        usleep(10000);
    zones(&s, 300000); /* ~19 MB: far more than the socket buffers hold */
    char out[4096];
    double secs = close_captured(&s, out, sizeof out);
    __atomic_store_n(&f.terminated, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    CHECK_I64(__atomic_load_n(&f.refused_status, __ATOMIC_ACQUIRE), GZ_THS_WELCOME);
    CHECK(secs >= 0.49 && secs < 2.0);
    CHECK(strstr(out, "no profiler took") != NULL);
    return 0;
}

/* A peer that connects and sends part of a handshake, then nothing. */
static void *silent(void *arg)
{
    fake *f = arg;
    int fd = connect_to(f->port);
    send(fd, "Tra", 3, MSG_NOSIGNAL);
    uint8_t b;
    /* Returns when the listener closes it: -1. */
    __atomic_store_n(&f->refused_status, read_n(fd, &b, 1) ? b : -1, __ATOMIC_RELEASE);
    close(fd);
    return NULL;
}

static void produce(gz_sink *s, uint16_t track, int n, uint64_t *t)
{
    for (int i = 0; i < n; i++) {
        gz_sink_zone z = {.track = track, .name = "z", .name_len = 1, .begin_ns = *t,
                          .end_ns = *t + 500};
        s->ops->gpu_zone(s->self, &z);
        *t += 1000;
        if (i % 50 == 49)
            s->ops->flush(s->self);
    }
    s->ops->flush(s->self);
}

static int test_silent_peer(void)
{
    /* A peer in its handshake does not keep the profiler that comes next
     * waiting: that one is welcomed at once; the silent one is closed
     * after GZ_TRACY_HANDSHAKE_MS and counted. */
    gz_config cfg = {.tracy = GZ_TRACY_LISTEN, .tracy_addr = "127.0.0.1",
                     .tracy_port = free_port(), .tracy_exit_wait_ms = 10000};
    gz_sink s;
    CHECK(gz_tracy_listen_open(&cfg, 256u << 20, NULL, &s));
    fake quiet = {.port = cfg.tracy_port}, f = {.port = cfg.tracy_port, .skip_refused = true};
    pthread_t tq, tf;
    CHECK(pthread_create(&tq, NULL, silent, &quiet) == 0);
    usleep(200000);
    CHECK(pthread_create(&tf, NULL, profiler, &f) == 0);
    gz_sink_track t = {.id = 1, .api = GZ_API_VULKAN, .name = "q", .name_len = 1};
    s.ops->track_new(s.self, &t);
    uint64_t at = 1000000000ull;
    produce(&s, 1, 200, &at);
    usleep((GZ_TRACY_HANDSHAKE_MS + 300) * 1000);
    char out[4096];
    close_captured(&s, out, sizeof out);
    pthread_join(tq, NULL);
    pthread_join(tf, NULL);
    printf("  the profiler was welcomed %.3f s after it connected\n", f.welcome_secs);
    CHECK_I64(f.bad, 0);
    CHECK(f.welcome_secs < 0.5);
    CHECK_I64(f.gpu_begins, 200);
    CHECK_I64(__atomic_load_n(&quiet.refused_status, __ATOMIC_ACQUIRE), -1);
    CHECK(strstr(out, "1 connections closed without a Tracy handshake within 1500 ms") != NULL);
    CHECK(strstr(out, "the profiler took 200 GPU zones") != NULL);
    return 0;
}

static int test_second_profiler(void)
{
    /* A profiler that leaves makes room for the next, which gets the
     * contexts again and everything from then on; the report says what
     * each took. */
    gz_config cfg = {.tracy = GZ_TRACY_LISTEN, .tracy_addr = "127.0.0.1",
                     .tracy_port = free_port(), .tracy_exit_wait_ms = 10000};
    gz_sink s;
    CHECK(gz_tracy_listen_open(&cfg, 256u << 20, NULL, &s));
    fake a = {.port = cfg.tracy_port, .skip_refused = true, .leave_after = 100};
    fake b = {.port = cfg.tracy_port, .skip_refused = true};
    pthread_t ta, tb;
    CHECK(pthread_create(&ta, NULL, profiler, &a) == 0);
    gz_sink_track t = {.id = 1, .api = GZ_API_VULKAN, .name = "q", .name_len = 1};
    s.ops->track_new(s.self, &t);
    uint64_t at = 1000000000ull;
    produce(&s, 1, 150, &at);
    pthread_join(ta, NULL); /* it has left */
    usleep(200000);
    s.ops->flush(s.self); /* the sink follows the link to the next turn */
    CHECK(pthread_create(&tb, NULL, profiler, &b) == 0);
    produce(&s, 1, 300, &at);
    char out[4096];
    close_captured(&s, out, sizeof out);
    pthread_join(tb, NULL);
    CHECK_I64(a.bad, 0);
    CHECK(a.gpu_begins >= 100);
    CHECK_I64(b.bad, 0);
    CHECK_I64(b.contexts, 1);
    CHECK_I64(b.first_gpu_item, GZ_TQ_GPU_NEW_CONTEXT);
    CHECK_STR(b.ctx_name, "q");
    CHECK_I64(b.gpu_begins, 300);
    CHECK_I64(b.terminated, 1);
    CHECK(strstr(out, "profiler 1 of 2 took") != NULL);
    CHECK(strstr(out, "profiler 2 of 2 took 300 GPU zones") != NULL);
    CHECK(strstr(out, "did not take everything") != NULL);
    return 0;
}

/* This machine's first IPv4 address that is not loopback, or 0. */
static in_addr_t outside_address(void)
{
    struct ifaddrs *list, *i;
    in_addr_t found = 0;
    if (getifaddrs(&list) != 0)
        return 0;
    for (i = list; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        in_addr_t a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
        if ((ntohl(a) >> 24) != 127)
            found = a;
    }
    freeifaddrs(list);
    return found;
}

/* Whether a Tracy handshake through addr:port gets the welcome. */
static bool welcomed_at(in_addr_t addr, uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = addr;
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (ok) {
        uint8_t hello[12] = "TracyPrf", status = 0;
        hello[8] = GZ_TRACY_PROTOCOL;
        ok = send(fd, hello, sizeof hello, MSG_NOSIGNAL) == sizeof hello &&
             read_n(fd, &status, 1) && status == GZ_THS_WELCOME;
    }
    close(fd);
    return ok;
}

/* The local address /proc/net/tcp lists for a listening socket on port
 * (hex, as the kernel writes it), or "" when there is none. */
static void listening_on(uint16_t port, char *out, size_t cap)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    char line[512], local[64];
    unsigned lport, state;
    out[0] = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, " %*d: %63[0-9A-F]:%x %*[0-9A-F]:%*x %x", local, &lport, &state) == 3 &&
            lport == port && state == 0x0A)
            snprintf(out, cap, "%s", local);
    }
    if (f)
        fclose(f);
}

/* Our own UDP announcements (by pid) heard on Tracy's broadcast port
 * within ms. -1: nothing can be heard here (the port is taken). */
static int broadcasts_heard(int fd, uint32_t ms)
{
    int heard = 0;
    uint64_t until = gz_tracy_now_ns() + (uint64_t)ms * 1000000ull;
    while (gz_tracy_now_ns() < until) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        uint8_t msg[GZ_TRACY_BROADCAST_SIZE];
        ssize_t n = recv(fd, msg, sizeof msg, 0);
        uint64_t pid = 0;
        for (int k = 7; n >= 16 && k >= 0; k--)
            pid = pid << 8 | msg[8 + k];
        if (n >= 16 && pid == (uint64_t)getpid())
            heard++;
    }
    return heard;
}

static int test_loopback_only(void)
{
    /* By default only this machine can connect: the socket is bound to
     * 127.0.0.1, and a connection through another address of the machine
     * is refused; nothing is broadcast. GPUZONES_TRACY_ADDR=0.0.0.0
     * widens both. */
    in_addr_t outside = outside_address();
    int udp = socket(AF_INET, SOCK_DGRAM, 0);
    int one = 1;
    setsockopt(udp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(udp, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    struct sockaddr_in ua = {.sin_family = AF_INET, .sin_port = htons(8086)};
    bool can_hear = bind(udp, (struct sockaddr *)&ua, sizeof ua) == 0;

    for (int wide = 0; wide < 2; wide++) {
        gz_config cfg = {.tracy = GZ_TRACY_LISTEN, .tracy_port = free_port(),
                         .tracy_exit_wait_ms = 0};
        snprintf(cfg.tracy_addr, sizeof cfg.tracy_addr, "%s", wide ? "0.0.0.0" : "127.0.0.1");
        gz_sink s;
        CHECK(gz_tracy_listen_open(&cfg, 1u << 20, NULL, &s));
        char local[64];
        listening_on(cfg.tracy_port, local, sizeof local);
        CHECK_STR(local, wide ? "00000000" : "0100007F");
        if (outside) {
            bool through = welcomed_at(outside, cfg.tracy_port);
            printf("  %s: a connection through this machine's %s is %s\n", cfg.tracy_addr,
                   inet_ntoa((struct in_addr){outside}), through ? "welcomed" : "refused");
            CHECK(through == (wide == 1));
        } else {
            printf("  no address but loopback here: the bound address is checked alone\n");
        }
        int heard = can_hear ? broadcasts_heard(udp, 700) : -1;
        printf("  %s: %d UDP announcements heard\n", cfg.tracy_addr, heard);
        if (!wide)
            CHECK(heard <= 0);
        char out[4096];
        close_captured(&s, out, sizeof out);
    }
    close(udp);
    return 0;
}

int main(void)
{
    static const struct {
        const char *name;
        int (*fn)(void);
    } groups[] = {
        {"item sizes", test_sizes},
        {"encode/decode", test_roundtrip},
        {"nesting lanes", test_nest},
        {"string table", test_strtab},
        {"a silent peer does not hold the port", test_silent_peer},
        {"a second profiler after the first left", test_second_profiler},
        {"loopback only unless widened", test_loopback_only},
        {"listen vs fake profiler", test_listen},
        {"bounded while nobody connects", test_bounded},
        {"a profiler that stops reading", test_stalled},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        int r = groups[i].fn();
        printf("%s: %s\n", groups[i].name, r ? "FAIL" : "ok");
        failed |= r;
    }
    return failed;
}
