/* The listen-mode network thread (see gz_tracy_link.h). Tracy's stream:
 * after the 8-byte shibboleth and the 4-byte protocol version from the
 * profiler, one status byte and the welcome message go out raw; then every
 * frame is LZ4-compressed against the frames before it and sent as a
 * 32-bit size and the compressed bytes. The profiler decompresses into a
 * window of three frames, restarting at its start once past two: the
 * compressor must see the same bytes at the same places, so frames are
 * copied into a window laid out the same way before compression. */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <lz4.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gz_client.h"
#include "gz_tracy_link.h"

#define PORTS 20
#define INBOX_MAX 16384 /* the profiler keeps at most 8 Ki queries in flight */
#define BROADCAST_PORT 8086
#define BROADCAST_EVERY_NS 3000000000ull
#define HANDSHAKE_MS 2000

typedef struct frame {
    struct frame *next;
    uint8_t *data;
    size_t len;
} frame;

struct gz_tracy_link {
    /* Shared with the sink, behind mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    frame *head, *tail;
    size_t queued;
    gz_tracy_query inbox[INBOX_MAX];
    size_t n_inbox;
    gz_tracy_link_state state;
    gz_tracy_link_totals totals;
    bool stop; /* also read without mu, atomically, inside long sends */

    /* The thread's own. */
    pthread_t thread;
    int lsock, usock, csock;
    uint16_t port;
    uint64_t pid, started_ns;
    char program[64];
    uint8_t welcome[GZ_TRACY_WELCOME_SIZE];
    LZ4_stream_t *lz;
    uint8_t *window; /* 3 frames, as the profiler's */
    size_t window_off;
    uint8_t *packet; /* size + compressed frame */
    uint8_t qbuf[GZ_TRACY_QUERY_SIZE];
    size_t qlen;
    uint32_t refused_version;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool stopping(gz_tracy_link *l)
{
    return __atomic_load_n(&l->stop, __ATOMIC_ACQUIRE);
}

static void set_state(gz_tracy_link *l, gz_tracy_link_state s)
{
    pthread_mutex_lock(&l->mu);
    l->state = s;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

/* Sends all of buf, or fails: peer gone, stop asked, or nothing moved for
 * timeout_ms (a profiler that stopped reading must not hold us forever). */
static bool send_all(gz_tracy_link *l, int fd, const uint8_t *buf, size_t len, int timeout_ms)
{
    int idle = 0;
    while (len) {
        if (stopping(l))
            return false;
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
            idle = 0;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return false;
        struct pollfd p = {fd, POLLOUT, 0};
        if (poll(&p, 1, 10) == 0 && (idle += 10) >= timeout_ms)
            return false;
    }
    return true;
}

/* Reads exactly len bytes within timeout_ms. */
static bool recv_all(gz_tracy_link *l, int fd, uint8_t *buf, size_t len, int timeout_ms)
{
    int waited = 0;
    while (len) {
        if (stopping(l) || waited >= timeout_ms)
            return false;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 10) <= 0) {
            waited += 10;
            continue;
        }
        ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
        if (n == 0)
            return false;
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                continue;
            return false;
        }
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

static void broadcast(gz_tracy_link *l, int32_t active_s)
{
    if (l->usock < 0)
        return;
    uint8_t msg[GZ_TRACY_BROADCAST_SIZE];
    size_t n = gz_tracy_broadcast(msg, l->port, l->pid, active_s, l->program);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(BROADCAST_PORT)};
    to.sin_addr.s_addr = htonl(INADDR_BROADCAST);
    /* Best effort: a host without a broadcast route still takes direct
     * connections. */
    (void)sendto(l->usock, msg, n, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to);
}

/* The profiler's side of the handshake; true when it may have the data. */
static bool handshake(gz_tracy_link *l, int fd)
{
    uint8_t hello[8 + 4];
    if (!recv_all(l, fd, hello, sizeof hello, HANDSHAKE_MS) ||
        memcmp(hello, GZ_TRACY_SHIBBOLETH, 8) != 0)
        return false;
    uint32_t version = (uint32_t)hello[8] | (uint32_t)hello[9] << 8 | (uint32_t)hello[10] << 16 |
                       (uint32_t)hello[11] << 24;
    if (version != GZ_TRACY_PROTOCOL) {
        uint8_t status = GZ_THS_PROTOCOL_MISMATCH;
        (void)send_all(l, fd, &status, 1, 100);
        /* A profiler may try again and again: one line per version. */
        if (version != l->refused_version)
            gz_log("Tracy: refused a profiler speaking protocol %u: gpuzones speaks Tracy v%s "
                   "(protocol %u) only",
                   version, GZ_TRACY_VERSION_TEXT, GZ_TRACY_PROTOCOL);
        l->refused_version = version;
        pthread_mutex_lock(&l->mu);
        l->totals.refused++;
        pthread_mutex_unlock(&l->mu);
        return false;
    }
    uint8_t status = GZ_THS_WELCOME;
    if (!send_all(l, fd, &status, 1, HANDSHAKE_MS) ||
        !send_all(l, fd, l->welcome, sizeof l->welcome, HANDSHAKE_MS))
        return false;
    LZ4_resetStream_fast(l->lz);
    l->window_off = 0;
    l->qlen = 0;
    return true;
}

static void wait_for_profiler(gz_tracy_link *l, uint64_t *last_broadcast)
{
    uint64_t now = now_ns();
    if (now - *last_broadcast >= BROADCAST_EVERY_NS) {
        *last_broadcast = now;
        broadcast(l, (int32_t)((now - l->started_ns) / 1000000000ull));
    }
    struct pollfd p = {l->lsock, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0)
        return;
    int fd = accept4(l->lsock, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    if (!handshake(l, fd)) {
        close(fd);
        return;
    }
    l->csock = fd;
    broadcast(l, -1); /* taken: profilers stop listing it as free */
    set_state(l, GZ_TRACY_LINK_CONNECTED);
}

static bool send_frame(gz_tracy_link *l, const frame *f)
{
    memcpy(l->window + l->window_off, f->data, f->len);
    int n = LZ4_compress_fast_continue(l->lz, (const char *)l->window + l->window_off,
                                       (char *)l->packet + 4, (int)f->len,
                                       (int)GZ_TRACY_LZ4_BOUND(GZ_TRACY_FRAME_MAX), 1);
    l->window_off += f->len;
    if (l->window_off > 2 * GZ_TRACY_FRAME_MAX)
        l->window_off = 0;
    if (n <= 0)
        return false;
    for (int i = 0; i < 4; i++)
        l->packet[i] = (uint8_t)((uint32_t)n >> (8 * i));
    /* A profiler that takes nothing for 10 s is as good as gone. */
    if (!send_all(l, l->csock, l->packet, (size_t)n + 4, 10000))
        return false;
    pthread_mutex_lock(&l->mu);
    l->totals.bytes_in += f->len;
    l->totals.bytes_out += (uint64_t)n + 4;
    pthread_mutex_unlock(&l->mu);
    return true;
}

/* Reads what queries have arrived; false when the profiler is done. */
static bool read_queries(gz_tracy_link *l, int timeout_ms)
{
    struct pollfd p = {l->csock, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0)
        return true;
    uint8_t buf[GZ_TRACY_QUERY_SIZE * 64];
    ssize_t n = recv(l->csock, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0)
        return false;
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    bool more = true;
    pthread_mutex_lock(&l->mu);
    for (ssize_t i = 0; i < n; i++) {
        l->qbuf[l->qlen++] = buf[i];
        if (l->qlen < GZ_TRACY_QUERY_SIZE)
            continue;
        l->qlen = 0;
        gz_tracy_query q;
        gz_tracy_query_parse(l->qbuf, &q);
        if (q.type == GZ_TSQ_TERMINATE || q.type == GZ_TSQ_DISCONNECT)
            more = false;
        else if (l->n_inbox < INBOX_MAX)
            l->inbox[l->n_inbox++] = q;
    }
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return more;
}

static frame *take_frame(gz_tracy_link *l)
{
    pthread_mutex_lock(&l->mu);
    frame *f = l->head;
    if (f) {
        l->head = f->next;
        if (!l->head)
            l->tail = NULL;
        l->queued -= f->len;
    }
    pthread_mutex_unlock(&l->mu);
    return f;
}

static void *run(void *arg)
{
    gz_tracy_link *l = arg;
    uint64_t last_broadcast = 0;
    while (!stopping(l)) {
        pthread_mutex_lock(&l->mu);
        gz_tracy_link_state s = l->state;
        pthread_mutex_unlock(&l->mu);
        if (s == GZ_TRACY_LINK_WAITING) {
            wait_for_profiler(l, &last_broadcast);
        } else if (s == GZ_TRACY_LINK_CONNECTED) {
            frame *f = take_frame(l);
            bool ok = true;
            if (f) {
                ok = send_frame(l, f);
                free(f->data);
                free(f);
            }
            if (ok)
                ok = read_queries(l, f ? 0 : 10);
            if (!ok) {
                close(l->csock);
                l->csock = -1;
                set_state(l, GZ_TRACY_LINK_DONE);
            }
        } else {
            /* One profiler per run, as Tracy's own client: what comes
             * after it left is let go. */
            frame *f;
            while ((f = take_frame(l))) {
                pthread_mutex_lock(&l->mu);
                l->totals.frames_lost++;
                pthread_mutex_unlock(&l->mu);
                free(f->data);
                free(f);
            }
            pthread_mutex_lock(&l->mu);
            if (!l->stop) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += 50000000;
                if (ts.tv_nsec >= 1000000000) {
                    ts.tv_sec++;
                    ts.tv_nsec -= 1000000000;
                }
                pthread_cond_timedwait(&l->cv, &l->mu, &ts);
            }
            pthread_mutex_unlock(&l->mu);
        }
    }
    if (l->csock >= 0 || l->state == GZ_TRACY_LINK_WAITING)
        broadcast(l, -1);
    return NULL;
}

static int listen_on(uint16_t first, uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    for (unsigned i = 0; i < PORTS && first + i <= 65535; i++) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(first + i))};
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 4) == 0) {
            *port = (uint16_t)(first + i);
            return fd;
        }
    }
    close(fd);
    return -1;
}

gz_tracy_link *gz_tracy_link_open(uint16_t port, const uint8_t welcome[GZ_TRACY_WELCOME_SIZE],
                                  const char *program, uint64_t pid)
{
    gz_tracy_link *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->csock = l->usock = -1;
    l->lsock = listen_on(port, &l->port);
    if (l->lsock < 0) {
        gz_log("Tracy: no free TCP port in %u..%u: listen mode is off", port,
               (unsigned)port + PORTS - 1);
        free(l);
        return NULL;
    }
    l->usock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (l->usock >= 0) {
        int one = 1;
        setsockopt(l->usock, SOL_SOCKET, SO_BROADCAST, &one, sizeof one);
    }
    memcpy(l->welcome, welcome, sizeof l->welcome);
    snprintf(l->program, sizeof l->program, "%s", program);
    l->pid = pid;
    l->started_ns = now_ns();
    l->lz = LZ4_createStream();
    l->window = malloc(3 * GZ_TRACY_FRAME_MAX);
    l->packet = malloc(4 + GZ_TRACY_LZ4_BOUND(GZ_TRACY_FRAME_MAX));
    pthread_mutex_init(&l->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&l->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (!l->lz || !l->window || !l->packet || pthread_create(&l->thread, NULL, run, l) != 0) {
        gz_log("Tracy: cannot start the listener: listen mode is off");
        LZ4_freeStream(l->lz);
        free(l->window);
        free(l->packet);
        close(l->lsock);
        if (l->usock >= 0)
            close(l->usock);
        pthread_mutex_destroy(&l->mu);
        pthread_cond_destroy(&l->cv);
        free(l);
        return NULL;
    }
    return l;
}

uint16_t gz_tracy_link_port(const gz_tracy_link *l)
{
    return l->port;
}

void gz_tracy_link_push(gz_tracy_link *l, uint8_t *data, size_t len)
{
    frame *f = malloc(sizeof *f);
    if (!f) {
        free(data);
        pthread_mutex_lock(&l->mu);
        l->totals.frames_lost++;
        pthread_mutex_unlock(&l->mu);
        return;
    }
    f->next = NULL;
    f->data = data;
    f->len = len;
    pthread_mutex_lock(&l->mu);
    if (l->tail)
        l->tail->next = f;
    else
        l->head = f;
    l->tail = f;
    l->queued += len;
    pthread_mutex_unlock(&l->mu);
}

size_t gz_tracy_link_queued(gz_tracy_link *l)
{
    pthread_mutex_lock(&l->mu);
    size_t n = l->queued;
    pthread_mutex_unlock(&l->mu);
    return n;
}

size_t gz_tracy_link_queries(gz_tracy_link *l, gz_tracy_query *out, size_t max)
{
    pthread_mutex_lock(&l->mu);
    size_t n = l->n_inbox < max ? l->n_inbox : max;
    memcpy(out, l->inbox, n * sizeof *out);
    memmove(l->inbox, l->inbox + n, (l->n_inbox - n) * sizeof *out);
    l->n_inbox -= n;
    pthread_mutex_unlock(&l->mu);
    return n;
}

gz_tracy_link_state gz_tracy_link_get_state(gz_tracy_link *l)
{
    pthread_mutex_lock(&l->mu);
    gz_tracy_link_state s = l->state;
    pthread_mutex_unlock(&l->mu);
    return s;
}

void gz_tracy_link_wait(gz_tracy_link *l, uint32_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)ms * 1000000ull;
    ts.tv_sec += (time_t)(ns / 1000000000ull);
    ts.tv_nsec = (long)(ns % 1000000000ull);
    pthread_mutex_lock(&l->mu);
    gz_tracy_link_state s = l->state;
    if (!l->n_inbox)
        while (l->state == s && !l->n_inbox && pthread_cond_timedwait(&l->cv, &l->mu, &ts) == 0) {
        }
    pthread_mutex_unlock(&l->mu);
}

void gz_tracy_link_close(gz_tracy_link *l, gz_tracy_link_totals *t)
{
    pthread_mutex_lock(&l->mu);
    __atomic_store_n(&l->stop, true, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->thread, NULL);
    frame *f;
    while ((f = take_frame(l))) {
        free(f->data);
        free(f);
    }
    if (t)
        *t = l->totals;
    if (l->csock >= 0)
        close(l->csock);
    close(l->lsock);
    if (l->usock >= 0)
        close(l->usock);
    LZ4_freeStream(l->lz);
    free(l->window);
    free(l->packet);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l);
}
