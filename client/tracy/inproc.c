/* Into the program's own Tracy client: when its C API resolves in the
 * process, every gpuzones track becomes a Tracy GPU context of that client
 * and zones go in through the `_serial` calls, which may come from any
 * thread (here: the worker). Nothing of Tracy is linked: the functions are
 * looked up by name, their argument structs written from TracyC.h's
 * layout.
 *
 * Time: Tracy's CPU clock is the TSC or CLOCK_MONOTONIC_RAW, unknown here.
 * Zones are host CLOCK_MONOTONIC ns, so contexts are made with period 1 and
 * the calibration flag, and every flush pins "now" (host ns) to Tracy's
 * clock read inside ___tracy_emit_gpu_calibration_serial; between pins the
 * profiler scales by cpuDelta / gpuDelta, given as the rate of
 * CLOCK_MONOTONIC_RAW (the TSC's rate) against CLOCK_MONOTONIC measured
 * over the whole run, so NTP slewing of CLOCK_MONOTONIC does not drag the
 * GPU timeline. Tracy's contexts are strict stacks on one thread: zones are
 * kept nested per context, and overlapping ones go to extra contexts
 * (lanes, gz_tracy_nest). Context ids come from Tracy's own counter
 * (tracy::GetGpuCtxCounter) so they never collide with the program's. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_tracy_internal.h"
#include "gz_tracy_nest.h"

/* TracyC.h's argument structs (by value, natural alignment). */
struct tr_gpu_time {
    int64_t gpuTime;
    uint16_t queryId;
    uint8_t context;
};
struct tr_zone_begin {
    uint64_t srcloc;
    uint16_t queryId;
    uint8_t context;
};
struct tr_zone_end {
    uint16_t queryId;
    uint8_t context;
};
struct tr_new_context {
    int64_t gpuTime;
    float period;
    uint8_t context, flags, type;
};
struct tr_context_name {
    uint8_t context;
    const char *name;
    uint16_t len;
};
struct tr_calibration {
    int64_t gpuTime;
    int64_t cpuDelta;
    uint8_t context;
};

#define TR_CALIBRATION_FLAG 1 /* GpuContextCalibration */
#define LANE_NAME_MAX 200
#define PIN_EVERY_NS 1000000000ull
#define PIN_RETRY_NS 10000000ull
#define PIN_TIGHT_NS 3000ull

typedef struct tr_api {
    uint64_t (*alloc_srcloc_name)(uint32_t line, const char *source, size_t source_len,
                                  const char *function, size_t function_len, const char *name,
                                  size_t name_len, uint32_t color);
    void (*zone_begin)(struct tr_zone_begin);
    void (*zone_end)(struct tr_zone_end);
    void (*gpu_time)(struct tr_gpu_time);
    void (*new_context)(struct tr_new_context);
    void (*context_name)(struct tr_context_name);
    void (*calibration)(struct tr_calibration);
    uint8_t *(*ctx_counter)(void); /* std::atomic<uint8_t>& */
    int32_t (*started)(void);      /* only with TRACY_MANUAL_LIFETIME */
    int32_t (*connected)(void);
    bool on_demand; /* TRACY_ON_DEMAND: zones only while a profiler is connected */
} tr_api;

typedef struct itrack {
    bool live;
    uint8_t api;
    uint16_t query;
    uint8_t nlanes;                        /* lanes with a context so far */
    bool lane_failed[GZ_TRACY_NEST_LANES]; /* no context for it: its zones dropped */
    uint8_t ctx[GZ_TRACY_NEST_LANES];
    /* A pin pairs our clock, read just before the call, with Tracy's, read
     * inside it: Tracy's read is later by at most the call's length (the
     * width), the pin's uncertainty: GPU zones may show up that much late. */
    uint64_t pinned_ns[GZ_TRACY_NEST_LANES], pin_width[GZ_TRACY_NEST_LANES];
    char name[LANE_NAME_MAX];
    gz_tracy_nest nest;
} itrack;

typedef struct gz_tracy_inproc {
    tr_api t;
    itrack *tracks[65536];
    /* Run-long rate of CLOCK_MONOTONIC_RAW against CLOCK_MONOTONIC. */
    uint64_t first_mono, first_raw;
    bool pinned;
    itrack *cur;
    unsigned contexts;
    uint64_t pin_width_max; /* widest pin any zone was sent under (ns) */
    uint64_t drop_unconnected;
    uint64_t zones, drop_contexts, drop_lanes, lanes_made, out_of_ids;
} gz_tracy_inproc;

/* Both clocks read as close together as possible: the tightest of a few. */
static void clock_pair(uint64_t *mono, uint64_t *raw)
{
    uint64_t best = UINT64_MAX;
    *mono = *raw = 0;
    for (int i = 0; i < 5; i++) {
        struct timespec a, r, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        clock_gettime(CLOCK_MONOTONIC_RAW, &r);
        clock_gettime(CLOCK_MONOTONIC, &b);
        uint64_t an = (uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec;
        uint64_t bn = (uint64_t)b.tv_sec * 1000000000ull + (uint64_t)b.tv_nsec;
        if (bn - an < best) {
            best = bn - an;
            *mono = an + (bn - an) / 2;
            *raw = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
        }
    }
}

static uint64_t mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A context id from Tracy's own counter, or -1 when all 255 are taken.
 * Tracy's fetch_add would wrap; this never takes the last one. */
static int take_ctx(gz_tracy_inproc *s)
{
    uint8_t *c = s->t.ctx_counter();
    uint8_t v = __atomic_load_n(c, __ATOMIC_RELAXED);
    do {
        if (v >= 254) {
            s->out_of_ids++;
            return -1;
        }
    } while (!__atomic_compare_exchange_n(c, &v, (uint8_t)(v + 1), true, __ATOMIC_SEQ_CST,
                                          __ATOMIC_RELAXED));
    s->contexts++;
    return v;
}

static void name_ctx(gz_tracy_inproc *s, uint8_t ctx, const char *name, size_t len)
{
    if (len > 65535)
        len = 65535;
    s->t.context_name((struct tr_context_name){ctx, name, (uint16_t)len});
}

static bool new_ctx(gz_tracy_inproc *s, itrack *it, unsigned lane)
{
    int c = take_ctx(s);
    if (c < 0)
        return false;
    it->ctx[lane] = (uint8_t)c;
    uint64_t mono = mono_now();
    it->pinned_ns[lane] = mono;
    /* gpuTime "now" is pinned to Tracy's clock read inside the call. */
    s->t.new_context((struct tr_new_context){(int64_t)mono, 1.0f, (uint8_t)c, TR_CALIBRATION_FLAG,
                                             gz_tracy_ctx_type((gz_track_api)it->api)});
    it->pin_width[lane] = mono_now() - mono;
    char buf[LANE_NAME_MAX + 32];
    int n = lane ? snprintf(buf, sizeof buf, "%s (lane %u)", it->name, lane + 1)
                 : snprintf(buf, sizeof buf, "%s", it->name);
    name_ctx(s, (uint8_t)c, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    return true;
}

static void end_zone(void *user, unsigned lane, uint64_t end_ns);

static void i_track_new(void *self, const gz_sink_track *t)
{
    gz_tracy_inproc *s = self;
    itrack *it = s->tracks[t->id];
    if (!it && !(it = s->tracks[t->id] = calloc(1, sizeof *it)))
        return;
    if (it->live) { /* an id given again without track_end */
        s->cur = it;
        gz_tracy_nest_finish(&it->nest, end_zone, s);
    }
    memset(it, 0, sizeof *it);
    it->api = (uint8_t)t->api;
    snprintf(it->name, sizeof it->name, "%.*s", (int)(t->name_len < 190 ? t->name_len : 190),
             t->name ? t->name : "");
    gz_tracy_nest_init(&it->nest);
    if (!new_ctx(s, it, 0))
        return; /* its zones are counted as dropped */
    it->nlanes = 1;
    it->live = true;
}

static void i_track_name(void *self, const gz_sink_track *t)
{
    gz_tracy_inproc *s = self;
    itrack *it = s->tracks[t->id];
    if (!it || !it->live)
        return;
    snprintf(it->name, sizeof it->name, "%.*s", (int)(t->name_len < 190 ? t->name_len : 190),
             t->name ? t->name : "");
    name_ctx(s, it->ctx[0], it->name, strlen(it->name));
}

static void end_zone(void *user, unsigned lane, uint64_t end_ns)
{
    gz_tracy_inproc *s = user;
    itrack *it = s->cur;
    if (lane >= it->nlanes || it->lane_failed[lane])
        return;
    uint16_t q = it->query++;
    s->t.zone_end((struct tr_zone_end){q, it->ctx[lane]});
    s->t.gpu_time((struct tr_gpu_time){(int64_t)end_ns, q, it->ctx[lane]});
}

static void i_track_end(void *self, uint16_t id)
{
    gz_tracy_inproc *s = self;
    itrack *it = s->tracks[id];
    if (!it || !it->live)
        return;
    s->cur = it;
    gz_tracy_nest_finish(&it->nest, end_zone, s);
    /* Tracy cannot retire a context; a new track with this id gets its
     * own. */
    it->live = false;
}

static void i_gpu_zone(void *self, const gz_sink_zone *z)
{
    gz_tracy_inproc *s = self;
    itrack *it = s->tracks[z->track];
    if (!it || !it->live) {
        s->drop_contexts++;
        return;
    }
    /* An on-demand client drops a zone's begin while no profiler is
     * connected but would send its end once one is: such a zone is not
     * sent at all. */
    if (s->t.on_demand && s->t.connected && !s->t.connected()) {
        s->drop_unconnected++;
        return;
    }
    s->cur = it;
    int lane = gz_tracy_nest_place(&it->nest, z->begin_ns, z->end_ns, end_zone, s);
    if (lane < 0) {
        s->drop_lanes++;
        return;
    }
    /* Lanes get their contexts in order, when first needed. */
    while (it->nlanes <= (unsigned)lane) {
        unsigned l = it->nlanes++;
        if (new_ctx(s, it, l))
            s->lanes_made++;
        else
            it->lane_failed[l] = true;
    }
    if (it->lane_failed[lane]) {
        s->drop_contexts++;
        return;
    }
    uint8_t ctx = it->ctx[lane];
    const gz_srcloc_view *l = z->loc;
    uint64_t srcloc =
        l ? s->t.alloc_srcloc_name(l->line, l->file, l->file_len, l->function, l->function_len,
                                   z->name, z->name_len, l->color)
          : s->t.alloc_srcloc_name(0, "gpuzones", 8, z->name, z->name_len, z->name, z->name_len, 0);
    uint16_t q = it->query++;
    s->t.zone_begin((struct tr_zone_begin){srcloc, q, ctx});
    s->t.gpu_time((struct tr_gpu_time){(int64_t)z->begin_ns, q, ctx});
    s->zones++;
    if (it->pin_width[lane] > s->pin_width_max)
        s->pin_width_max = it->pin_width[lane];
}

/* Re-pins host "now" to Tracy's clock on the contexts that need it: once
 * a second (the slope), sooner while the pin in effect is loose (the call
 * was slow: preempted, first use), but never within 10 ms of the last one,
 * since the profiler's scale comes from the span between two pins. */
static void pin(gz_tracy_inproc *s)
{
    uint64_t mono, raw;
    clock_pair(&mono, &raw);
    if (!s->pinned) {
        s->first_mono = mono;
        s->first_raw = raw;
        s->pinned = true;
    }
    uint64_t span = mono - s->first_mono;
    /* The rate needs a long enough base to beat the reads' jitter. */
    double rate = span >= 1000000000ull ? (double)(raw - s->first_raw) / (double)span : 1.0;
    for (unsigned i = 0; i < 65536; i++) {
        itrack *it = s->tracks[i];
        if (!it || !it->live)
            continue;
        for (unsigned l = 0; l < it->nlanes; l++) {
            if (it->lane_failed[l])
                continue;
            uint64_t now = mono_now(); /* right before: Tracy reads its clock inside */
            uint64_t age = now - it->pinned_ns[l];
            if (age < PIN_RETRY_NS || (age < PIN_EVERY_NS && it->pin_width[l] <= PIN_TIGHT_NS))
                continue;
            int64_t cpu_delta = (int64_t)((double)age * rate);
            it->pinned_ns[l] = now;
            s->t.calibration((struct tr_calibration){(int64_t)now, cpu_delta, it->ctx[l]});
            it->pin_width[l] = mono_now() - now;
        }
    }
}

static void i_flush(void *self)
{
    pin(self);
}

static void i_close(void *self, const gz_sink_totals *totals)
{
    gz_tracy_inproc *s = self;
    for (unsigned i = 0; i < 65536; i++) {
        itrack *it = s->tracks[i];
        if (it && it->live) {
            s->cur = it;
            gz_tracy_nest_finish(&it->nest, end_zone, s);
        }
    }
    gz_log("Tracy: %llu GPU zones went into the program's Tracy client on %u GPU contexts "
           "(%llu of them extra lanes for overlapping zones); pinned to Tracy's clock within "
           "%llu ns",
           (unsigned long long)s->zones, s->contexts, (unsigned long long)s->lanes_made,
           (unsigned long long)s->pin_width_max);
    if (s->drop_unconnected)
        gz_log("Tracy: %llu GPU zones not sent: the program's on-demand Tracy client had no "
               "profiler connected",
               (unsigned long long)s->drop_unconnected);
    if (s->drop_contexts || s->drop_lanes)
        gz_log("Tracy: dropped %llu GPU zones: %llu without a context (Tracy's 255 context ids "
               "ran out %llu times), %llu nested too deep",
               (unsigned long long)(s->drop_contexts + s->drop_lanes),
               (unsigned long long)s->drop_contexts, (unsigned long long)s->out_of_ids,
               (unsigned long long)s->drop_lanes);
    (void)totals;
    for (unsigned i = 0; i < 65536; i++)
        free(s->tracks[i]);
    free(s);
}

static const gz_sink_ops inproc_ops = {
    .what = "Tracy",
    .track_new = i_track_new,
    .track_name = i_track_name,
    .track_end = i_track_end,
    .gpu_zone = i_gpu_zone,
    .flush = i_flush,
    .close = i_close,
};

#define RESOLVE(field, sym)                                                                        \
    do {                                                                                           \
        void *p_ = dlsym(RTLD_DEFAULT, sym);                                                       \
        if (!p_)                                                                                   \
            return false;                                                                          \
        memcpy(&api->field, &p_, sizeof p_);                                                       \
    } while (0)

static bool resolve(tr_api *api)
{
    RESOLVE(zone_begin, "___tracy_emit_gpu_zone_begin_alloc_serial");
    RESOLVE(alloc_srcloc_name, "___tracy_alloc_srcloc_name");
    RESOLVE(zone_end, "___tracy_emit_gpu_zone_end_serial");
    RESOLVE(gpu_time, "___tracy_emit_gpu_time_serial");
    RESOLVE(new_context, "___tracy_emit_gpu_new_context_serial");
    RESOLVE(context_name, "___tracy_emit_gpu_context_name_serial");
    RESOLVE(calibration, "___tracy_emit_gpu_calibration_serial");
    /* tracy::GetGpuCtxCounter(), Itanium-mangled. */
    RESOLVE(ctx_counter, "_ZN5tracy16GetGpuCtxCounterEv");
    void *p = dlsym(RTLD_DEFAULT, "___tracy_profiler_started");
    memcpy(&api->started, &p, sizeof p);
    p = dlsym(RTLD_DEFAULT, "___tracy_connected");
    memcpy(&api->connected, &p, sizeof p);
    /* Profiler::DeferItem exists in TRACY_ON_DEMAND builds only. */
    api->on_demand = dlsym(RTLD_DEFAULT, "_ZN5tracy8Profiler9DeferItemERKNS_9QueueItemE") != NULL;
    return true;
}

int gz_tracy_inproc_find(char *where, size_t cap)
{
    tr_api api;
    void *any = dlsym(RTLD_DEFAULT, "___tracy_emit_gpu_zone_begin_alloc_serial");
    if (!any)
        return 0;
    Dl_info info;
    snprintf(where, cap, "%s",
             dladdr(any, &info) && info.dli_fname ? info.dli_fname : "the program");
    if (!resolve(&api))
        return -1; /* a client without all of what is needed */
    if (api.started && !api.started())
        return -2;
    return 1;
}

bool gz_tracy_inproc_open(const gz_config *cfg, gz_sink *out)
{
    gz_tracy_inproc *s = calloc(1, sizeof *s);
    if (!s)
        return false;
    if (!resolve(&s->t)) {
        free(s);
        return false;
    }
    (void)cfg;
    pin(s);
    out->ops = &inproc_ops;
    out->self = s;
    return true;
}
