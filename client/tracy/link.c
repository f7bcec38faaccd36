/* The listen-mode network thread (see gz_tracy_link.h). Tracy's stream:
 * after the 8-byte shibboleth and the 4-byte protocol version from the
 * profiler, one status byte and the welcome message go out raw; then every
 * frame is LZ4-compressed against the frames before it and sent as a
 * 32-bit size and the compressed bytes. The profiler decompresses into a
 * window of three frames, restarting at its start once past two: the
 * compressor must see the same bytes at the same places, so frames are
 * copied into a window laid out the same way before compression.
 *
 * Everything read from a peer goes through gz_tracy_peer.h (fuzzed). */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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
#include "gz_tracy_peer.h"

#define PORTS 20
#define INBOX_MAX 16384 /* the profiler keeps at most 8 Ki queries in flight */
#define MAX_PENDING 8   /* peers in their handshake at once */
#define BROADCAST_PORT 8086
#define BROADCAST_EVERY_NS 3000000000ull

typedef struct frame {
    struct frame *next;
    uint8_t *data;
    size_t len;
    uint32_t turn;
    gz_tracy_counts counts;
    bool final;
} frame;

/* A peer that has connected and not yet finished its handshake. */
typedef struct pending {
    int fd; /* -1: free */
    uint64_t deadline_ns;
    gz_tracy_hello hello;
    char addr[64];
} pending;

struct gz_tracy_link {
    /* Shared with the sink, behind mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    frame *head, *tail;
    size_t queued;
    gz_tracy_query inbox[INBOX_MAX];
    size_t n_inbox;
    uint32_t turn;              /* frames are for this turn now */
    bool connected;             /* its profiler is connected */
    uint32_t delivered_turn;    /* the last whose profiler got the final frame and left */
    uint64_t changes;           /* bumped on every connect and leave */
    gz_tracy_link_totals totals;
    bool stop; /* also read without mu, atomically, inside long sends */

    /* The thread's own. */
    pthread_t thread;
    int lsock, usock, csock;
    bool widened;
    uint16_t port;
    uint64_t pid, started_ns;
    char program[64];
    uint8_t welcome[GZ_TRACY_WELCOME_SIZE];
    LZ4_stream_t *lz;
    uint8_t *window; /* 3 frames, as the profiler's */
    size_t window_off;
    uint8_t *packet; /* size + compressed frame */
    gz_tracy_qreader qreader;
    pending pend[MAX_PENDING];
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

/* The record of the profiler of a turn (under mu). */
static gz_tracy_peer_report *peer_of(gz_tracy_link *l, uint32_t turn)
{
    uint32_t i = turn - 1 < GZ_TRACY_MAX_PEERS ? turn - 1 : GZ_TRACY_MAX_PEERS - 1;
    return &l->totals.peers[i];
}

static void add_counts(gz_tracy_counts *to, const gz_tracy_counts *c)
{
    to->gpu_zones += c->gpu_zones;
    to->cpu_zones += c->cpu_zones;
    to->frame_marks += c->frame_marks;
    to->messages += c->messages;
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

static void count(gz_tracy_link *l, uint32_t *counter)
{
    pthread_mutex_lock(&l->mu);
    (*counter)++;
    pthread_mutex_unlock(&l->mu);
}

static void drop_pending(gz_tracy_link *l, pending *p, bool no_handshake)
{
    close(p->fd);
    p->fd = -1;
    if (no_handshake)
        count(l, &l->totals.no_handshake);
}

/* A profiler has finished its handshake on fd: it takes the current turn's
 * frames from now on. */
static void start_turn(gz_tracy_link *l, int fd, const char *addr)
{
    LZ4_resetStream_fast(l->lz);
    l->window_off = 0;
    memset(&l->qreader, 0, sizeof l->qreader);
    l->csock = fd;
    pthread_mutex_lock(&l->mu);
    gz_tracy_peer_report *r = peer_of(l, l->turn);
    if (l->turn <= GZ_TRACY_MAX_PEERS)
        snprintf(r->addr, sizeof r->addr, "%s", addr);
    else
        snprintf(r->addr, sizeof r->addr, "later profilers");
    r->left = false;
    l->totals.npeers++;
    l->connected = true;
    l->n_inbox = 0;
    l->changes++;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    if (l->widened)
        broadcast(l, -1); /* taken: profilers stop listing it as free */
}

/* The profiler has left (or stopped reading): the next turn begins,
 * and the next profiler may connect. */
static void end_turn(gz_tracy_link *l)
{
    close(l->csock);
    l->csock = -1;
    pthread_mutex_lock(&l->mu);
    gz_tracy_peer_report *r = peer_of(l, l->turn);
    r->left = true;
    if (r->got_final)
        l->delivered_turn = l->turn;
    l->turn++;
    l->connected = false;
    l->n_inbox = 0;
    l->changes++;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

/* The peer in p has sent all of its handshake. */
static void handshake_done(gz_tracy_link *l, pending *p, uint32_t version)
{
    int fd = p->fd;
    p->fd = -1;
    if (version != GZ_TRACY_PROTOCOL) {
        uint8_t status = GZ_THS_PROTOCOL_MISMATCH;
        (void)send_all(l, fd, &status, 1, 100);
        close(fd);
        /* A profiler may try again and again: one line per version. */
        if (version != l->refused_version)
            gz_log("Tracy: refused a profiler speaking protocol %u: gpuzones speaks Tracy v%s "
                   "(protocol %u) only",
                   version, GZ_TRACY_VERSION_TEXT, GZ_TRACY_PROTOCOL);
        l->refused_version = version;
        count(l, &l->totals.refused);
        return;
    }
    if (l->csock >= 0) {
        uint8_t status = GZ_THS_NOT_AVAILABLE;
        (void)send_all(l, fd, &status, 1, 100);
        close(fd);
        count(l, &l->totals.turned_away);
        return;
    }
    uint8_t status = GZ_THS_WELCOME;
    if (!send_all(l, fd, &status, 1, GZ_TRACY_HANDSHAKE_MS) ||
        !send_all(l, fd, l->welcome, sizeof l->welcome, GZ_TRACY_HANDSHAKE_MS)) {
        close(fd);
        return;
    }
    start_turn(l, fd, p->addr);
}

/* Reads what the peer in p has sent of its handshake (no more). */
static void read_hello(gz_tracy_link *l, pending *p)
{
    uint8_t buf[GZ_TRACY_HELLO_SIZE];
    ssize_t n = recv(p->fd, buf, gz_tracy_hello_missing(&p->hello), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        drop_pending(l, p, true);
        return;
    }
    size_t used;
    uint32_t version = 0;
    gz_tracy_hello_result r = gz_tracy_hello_feed(&p->hello, buf, (size_t)n, &used, &version);
    if (r == GZ_TRACY_HELLO_NOT_TRACY)
        drop_pending(l, p, true);
    else if (r == GZ_TRACY_HELLO_DONE)
        handshake_done(l, p, version);
}

static void address_text(const struct sockaddr_storage *a, char *out, size_t cap)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)a;
        inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
        port = ntohs(v4->sin_port);
    } else if (a->ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)a;
        inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
        port = ntohs(v6->sin6_port);
    }
    snprintf(out, cap, "%s port %u", host, port);
}

/* Takes every connection waiting on the listening socket into the
 * handshake table; when it is full, the oldest peer gives way. */
static void accept_all(gz_tracy_link *l)
{
    for (;;) {
        struct sockaddr_storage from;
        socklen_t len = sizeof from;
        int fd = accept4(l->lsock, (struct sockaddr *)&from, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        pending *slot = NULL, *oldest = NULL;
        for (int i = 0; i < MAX_PENDING; i++) {
            pending *p = &l->pend[i];
            if (p->fd < 0) {
                slot = p;
                break;
            }
            if (!oldest || p->deadline_ns < oldest->deadline_ns)
                oldest = p;
        }
        if (!slot) {
            drop_pending(l, oldest, true);
            slot = oldest;
        }
        memset(slot, 0, sizeof *slot);
        slot->fd = fd;
        slot->deadline_ns = now_ns() + GZ_TRACY_HANDSHAKE_MS * 1000000ull;
        address_text(&from, slot->addr, sizeof slot->addr);
    }
}

static frame *take_frame(gz_tracy_link *l)
{
    frame *f = l->head;
    if (f) {
        l->head = f->next;
        if (!l->head)
            l->tail = NULL;
        l->queued -= f->len;
    }
    return f;
}

static void free_frame(frame *f)
{
    free(f->data);
    free(f);
}

/* Under mu: a frame nobody will take. */
static void lose(gz_tracy_link *l, frame *f)
{
    l->totals.frames_lost++;
    add_counts(&l->totals.lost, &f->counts);
    free_frame(f);
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
    gz_tracy_peer_report *r = peer_of(l, l->turn);
    add_counts(&r->took, &f->counts);
    r->bytes_in += f->len;
    r->bytes_out += (uint64_t)n + 4;
    r->got_final |= f->final;
    l->totals.bytes_in += f->len;
    l->totals.bytes_out += (uint64_t)n + 4;
    pthread_mutex_unlock(&l->mu);
    return true;
}

/* Lets go of frames of turns gone by; returns the first frame of the
 * current turn when its profiler is connected (taken off the queue),
 * else NULL (they wait for it). */
static frame *next_to_send(gz_tracy_link *l)
{
    pthread_mutex_lock(&l->mu);
    while (l->head && l->head->turn < l->turn)
        lose(l, take_frame(l));
    frame *f = l->connected && l->head ? take_frame(l) : NULL;
    pthread_mutex_unlock(&l->mu);
    return f;
}

/* Reads what queries have arrived; false when the profiler is done. */
static bool read_queries(gz_tracy_link *l)
{
    uint8_t buf[GZ_TRACY_QUERY_SIZE * 64];
    ssize_t n = recv(l->csock, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0)
        return false;
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    size_t off = 0;
    pthread_mutex_lock(&l->mu);
    while (off < (size_t)n && !l->qreader.ended) {
        gz_tracy_query q[64];
        size_t used;
        size_t got = gz_tracy_qreader_feed(&l->qreader, buf + off, (size_t)n - off, &used, q, 64);
        off += used;
        /* Past the inbox (a peer that floods queries): let go. */
        for (size_t i = 0; i < got && l->n_inbox < INBOX_MAX; i++)
            l->inbox[l->n_inbox++] = q[i];
        if (!used)
            break;
    }
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return !l->qreader.ended;
}

static void *run(void *arg)
{
    gz_tracy_link *l = arg;
    uint64_t last_broadcast = 0;
    while (!stopping(l)) {
        uint64_t now = now_ns();
        if (l->widened && l->csock < 0 && now - last_broadcast >= BROADCAST_EVERY_NS) {
            last_broadcast = now;
            broadcast(l, (int32_t)((now - l->started_ns) / 1000000000ull));
        }
        bool busy = false;
        if (l->csock >= 0) {
            frame *f = next_to_send(l);
            if (f) {
                busy = true;
                bool ok = send_frame(l, f);
                free_frame(f);
                if (!ok)
                    end_turn(l);
            }
        } else {
            frame *f = next_to_send(l); /* only lets go of stale frames */
            if (f)
                free_frame(f);
        }
        /* The listening socket, every peer in its handshake, the profiler. */
        struct pollfd fds[2 + MAX_PENDING];
        pending *of[2 + MAX_PENDING];
        nfds_t nfds = 0;
        fds[nfds] = (struct pollfd){l->lsock, POLLIN, 0};
        of[nfds++] = NULL;
        for (int i = 0; i < MAX_PENDING; i++) {
            if (l->pend[i].fd < 0)
                continue;
            fds[nfds] = (struct pollfd){l->pend[i].fd, POLLIN, 0};
            of[nfds++] = &l->pend[i];
        }
        nfds_t cidx = nfds;
        if (l->csock >= 0) {
            fds[nfds] = (struct pollfd){l->csock, POLLIN, 0};
            of[nfds++] = NULL;
        }
        if (poll(fds, nfds, busy ? 0 : l->csock >= 0 ? 10 : 50) < 0)
            continue;
        for (nfds_t i = 1; i < cidx; i++)
            if (fds[i].revents && of[i]->fd >= 0)
                read_hello(l, of[i]);
        if (l->csock >= 0 && cidx < nfds && fds[cidx].revents && !read_queries(l))
            end_turn(l);
        if (fds[0].revents)
            accept_all(l);
        now = now_ns();
        for (int i = 0; i < MAX_PENDING; i++)
            if (l->pend[i].fd >= 0 && now >= l->pend[i].deadline_ns)
                drop_pending(l, &l->pend[i], true);
    }
    if (l->widened)
        broadcast(l, -1);
    return NULL;
}

static bool is_loopback(int family, const void *bin)
{
    if (family == AF_INET)
        return ((const uint8_t *)bin)[0] == 127;
    return !memcmp(bin, &in6addr_loopback, sizeof in6addr_loopback);
}

static int listen_on(gz_tracy_link *l, const char *addr, uint16_t first)
{
    struct sockaddr_storage a;
    memset(&a, 0, sizeof a);
    socklen_t len;
    int family;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&a;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&a;
    if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
        family = AF_INET;
        len = sizeof *v4;
        l->widened = !is_loopback(family, &v4->sin_addr);
    } else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
        family = AF_INET6;
        len = sizeof *v6;
        l->widened = !is_loopback(family, &v6->sin6_addr);
    } else {
        return -1; /* the configuration checked it */
    }
    a.ss_family = (sa_family_t)family;
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6) /* "::" takes IPv4 profilers too */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    for (unsigned i = 0; i < PORTS && first + i <= 65535; i++) {
        uint16_t port = htons((uint16_t)(first + i));
        if (family == AF_INET)
            v4->sin_port = port;
        else
            v6->sin6_port = port;
        if (bind(fd, (struct sockaddr *)&a, len) == 0 && listen(fd, 8) == 0) {
            l->port = (uint16_t)(first + i);
            return fd;
        }
    }
    close(fd);
    return -1;
}

gz_tracy_link *gz_tracy_link_open(const char *addr, uint16_t port,
                                  const uint8_t welcome[GZ_TRACY_WELCOME_SIZE],
                                  const char *program, uint64_t pid)
{
    gz_tracy_link *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    if (!addr || !*addr)
        addr = "127.0.0.1"; /* a configuration made by hand: this machine only */
    l->csock = l->usock = -1;
    for (int i = 0; i < MAX_PENDING; i++)
        l->pend[i].fd = -1;
    l->turn = 1;
    l->lsock = listen_on(l, addr, port);
    if (l->lsock < 0) {
        gz_log("Tracy: no free TCP port in %u..%u on %s: listen mode is off", port,
               (unsigned)port + PORTS - 1, addr);
        free(l);
        return NULL;
    }
    if (l->widened) {
        l->usock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (l->usock >= 0) {
            int one = 1;
            setsockopt(l->usock, SOL_SOCKET, SO_BROADCAST, &one, sizeof one);
        }
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
    /* Started from the worker, it inherits the worker's mask: every
     * asynchronous signal blocked (gz_thread_start). */
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

bool gz_tracy_link_widened(const gz_tracy_link *l)
{
    return l->widened;
}

void gz_tracy_link_push(gz_tracy_link *l, uint8_t *data, size_t len, uint32_t turn,
                        const gz_tracy_counts *counts, bool final)
{
    frame *f = malloc(sizeof *f);
    if (!f) {
        free(data);
        pthread_mutex_lock(&l->mu);
        l->totals.frames_lost++;
        if (counts)
            add_counts(&l->totals.lost, counts);
        pthread_mutex_unlock(&l->mu);
        return;
    }
    *f = (frame){.data = data, .len = len, .turn = turn, .final = final};
    if (counts)
        f->counts = *counts;
    pthread_mutex_lock(&l->mu);
    if (l->tail)
        l->tail->next = f;
    else
        l->head = f;
    l->tail = f;
    l->queued += len;
    pthread_mutex_unlock(&l->mu);
}

uint32_t gz_tracy_link_turn(gz_tracy_link *l)
{
    pthread_mutex_lock(&l->mu);
    uint32_t s = l->turn;
    pthread_mutex_unlock(&l->mu);
    return s;
}

bool gz_tracy_link_delivered(gz_tracy_link *l, uint32_t turn)
{
    pthread_mutex_lock(&l->mu);
    bool d = l->delivered_turn == turn;
    pthread_mutex_unlock(&l->mu);
    return d;
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

void gz_tracy_link_wait(gz_tracy_link *l, uint32_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)ms * 1000000ull;
    ts.tv_sec += (time_t)(ns / 1000000000ull);
    ts.tv_nsec = (long)(ns % 1000000000ull);
    pthread_mutex_lock(&l->mu);
    uint64_t changes = l->changes;
    while (l->changes == changes && !l->n_inbox &&
           pthread_cond_timedwait(&l->cv, &l->mu, &ts) == 0) {
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
    while ((f = take_frame(l)))
        lose(l, f);
    if (t)
        *t = l->totals;
    if (l->csock >= 0)
        close(l->csock);
    for (int i = 0; i < MAX_PENDING; i++)
        if (l->pend[i].fd >= 0)
            close(l->pend[i].fd);
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
