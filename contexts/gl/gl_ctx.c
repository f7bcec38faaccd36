/* GL contexts: the registry (GL context handle → gz_gl_ctx), creation with
 * the capability checks, and the track. The zones and the readback are in
 * gl_zones.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gz_gl_internal.h"

#define REGISTRY_MAX 64

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *key;
    gz_gl_ctx *ctx; /* NULL: not current yet (taken_up false), or cannot time (told once) */
    uint32_t number; /* place in creation order: "GL context N" */
    bool taken_up;   /* made current once: ctx is final */
} registry[REGISTRY_MAX];
static uint32_t registry_n;
static uint32_t contexts_made;

/* Does the extension list of the current context name ext? Only calls that
 * are valid for the context's version: glGetString(GL_EXTENSIONS) is an
 * error in a core profile, glGetStringi does not exist before 3.0. */
static bool has_ext(const gz_gl_fns *f, int major, const char *ext)
{
    if (major >= 3 && f->GetStringi) {
        GLint n = 0;
        f->GetIntegerv(GL_NUM_EXTENSIONS, &n);
        for (GLint i = 0; i < n; i++) {
            const char *e = (const char *)f->GetStringi(GL_EXTENSIONS, (GLuint)i);
            if (e && !strcmp(e, ext))
                return true;
        }
        return false;
    }
    const char *all = (const char *)f->GetString(GL_EXTENSIONS);
    size_t len = strlen(ext);
    for (const char *p = all; p && (p = strstr(p, ext)); p += len)
        if ((p == all || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return true;
    return false;
}

static void parse_version(const char *v, bool *gles, int *major, int *minor)
{
    *gles = false;
    *major = *minor = 0;
    if (!v)
        return;
    const char *es = "OpenGL ES ";
    if (!strncmp(v, es, strlen(es))) {
        *gles = true;
        v += strlen(es);
    }
    if (sscanf(v, "%d.%d", major, minor) < 1)
        *major = *minor = 0;
}

/* The track's name: "GL context N (renderer)", then a note on what its
 * zones are, so that the summary's track line and the trace viewer say it
 * once per context: which boundary made them (swaps, or the flush calls of
 * a context that never swapped, or none and why) and, on llvmpipe, that
 * its times are those of rasterisation. */
static void track_name(gz_gl_ctx *c)
{
    static const char *const calls[GZ_GL_SYNC_COUNT] = {"glFlush", "glFinish", "glFenceSync",
                                                        "glReadPixels"};
    char note[160] = "";
    size_t n = 0;
#define ADD(...) n += (size_t)snprintf(note + n, n < sizeof note ? sizeof note - n : 0, __VA_ARGS__)
    if (c->iv_calls) {
        ADD("zones between flushes (");
        const char *sep = "";
        for (int i = 0; i < GZ_GL_SYNC_COUNT; i++)
            if (c->iv_calls & (1u << i)) {
                ADD("%s%s", sep, calls[i]);
                sep = ", ";
            }
        ADD(")");
    }
    if (c->made_frames)
        ADD("%sframes swap to swap", n ? ", then " : "");
    else if (!c->iv_calls && c->ended)
        ADD("no frame zones: no swap, glFlush, glFinish, glFenceSync or glReadPixels");
    if (c->rasterises)
        ADD("%sllvmpipe stamps at rasterisation", n ? "; " : "");
#undef ADD
    snprintf(c->track_name, sizeof c->track_name, "GL context %u (%s)%s%s", c->number,
             c->renderer, note[0] ? ": " : "", note);
}

void gz_gl_ctx_note(gz_gl_ctx *c)
{
    if (c->app_named || !c->track)
        return;
    char before[sizeof c->track_name];
    memcpy(before, c->track_name, sizeof before);
    track_name(c);
    if (strcmp(before, c->track_name))
        gz_track_set_name(c->track, c->track_name);
}

/* At exit: contexts still alive give what they read back and say whether
 * they had any boundary. */
static void note_at_exit(void *user, bool final)
{
    if (!final)
        return;
    pthread_mutex_lock(&registry_lock);
    for (uint32_t i = 0; i < registry_n; i++) {
        gz_gl_ctx *c = registry[i].ctx;
        if (!c)
            continue;
        /* Never wait at exit for a program thread inside a GL call of
         * this context: its note and what it read back are left out. */
        if (pthread_mutex_trylock(&c->lock))
            continue;
        gz_gl_at_exit_locked(c);
        c->ended = true;
        gz_gl_ctx_note(c);
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_unlock(&registry_lock);
}

static void add_exit_note(void)
{
    gz_collector_add(note_at_exit, NULL);
}

/* The checks and the query ring; NULL (with one message) when the context
 * has no usable GPU timestamps. */
static gz_gl_ctx *ctx_create(const gz_gl_fns *f, uint32_t number)
{
    static int no_fns_once, no_timer_once, no_bits_once;
    if (!f->GenQueries || !f->QueryCounter || !f->GetQueryObjectiv || !f->GetQueryObjectui64v ||
        !f->GetQueryiv || !f->GetIntegerv || !f->GetString || !f->BindBuffer || !f->Flush) {
        gz_log_once(&no_fns_once, "a GL context lacks the timer-query functions: no GPU zones for it");
        return NULL;
    }
    bool gles;
    int major, minor;
    parse_version((const char *)f->GetString(GL_VERSION), &gles, &major, &minor);
    bool timer = gles ? has_ext(f, major, "GL_EXT_disjoint_timer_query")
                      : (major > 3 || (major == 3 && minor >= 3) ||
                         has_ext(f, major, "GL_ARB_timer_query"));
    if (!timer) {
        gz_log_once(&no_timer_once,
                    "GL context (%s) has no %s: no GPU zones for it",
                    (const char *)f->GetString(GL_VERSION),
                    gles ? "GL_EXT_disjoint_timer_query" : "GL_ARB_timer_query");
        return NULL;
    }
    GLint bits = 0;
    f->GetQueryiv(GL_TIMESTAMP, GL_QUERY_COUNTER_BITS, &bits);
    if (bits <= 0) {
        gz_log_once(&no_bits_once, "GL context reports GL_QUERY_COUNTER_BITS 0: no GPU zones for it");
        return NULL;
    }
    gz_gl_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        gz_log("out of memory for a GL context: no GPU zones for it");
        return NULL;
    }
    c->fns = *f;
    c->gles = gles;
    c->valid_bits = bits > 64 ? 64 : (uint32_t)bits;
    c->mask = c->valid_bits == 64 ? ~0ull : (1ull << c->valid_bits) - 1;
    /* GL_QUERY_BUFFER_BINDING exists from 4.4 (ARB_query_buffer_object);
     * asking for it earlier would raise GL_INVALID_ENUM. */
    c->query_buffer = !gles && (major > 4 || (major == 4 && minor >= 4) ||
                                has_ext(f, major, "GL_ARB_query_buffer_object"));
    c->disjoint = gles;
    c->khr_debug = gles ? (major > 3 || (major == 3 && minor >= 2) || has_ext(f, major, "GL_KHR_debug"))
                        : (major > 4 || (major == 4 && minor >= 3) || has_ext(f, major, "GL_KHR_debug"));
    if (!gz_gl_zones_init(c)) {
        free(c);
        gz_log("out of memory for a GL context: no GPU zones for it");
        return NULL;
    }
    atomic_init(&c->refs, 1);
    atomic_init(&c->swapped, false);
    pthread_mutex_init(&c->lock, NULL);
    c->number = number;
    const char *renderer = (const char *)f->GetString(GL_RENDERER);
    snprintf(c->renderer, sizeof c->renderer, "%s", renderer ? renderer : "?");
    /* Measured with Mesa 22.3.6 (layer/opengl/README.md): llvmpipe stamps
     * a timestamp when it rasterises the binned work, not at execution. */
    c->rasterises = strstr(c->renderer, "llvmpipe") != NULL;
    c->frame_name = gz_intern_cstr("frame");
    static const char *const sync_names[GZ_GL_SYNC_COUNT] = {
        [GZ_GL_SYNC_FLUSH] = "until glFlush",
        [GZ_GL_SYNC_FINISH] = "until glFinish",
        [GZ_GL_SYNC_FENCE] = "until glFenceSync",
        [GZ_GL_SYNC_READ_PIXELS] = "until glReadPixels",
    };
    for (int i = 0; i < GZ_GL_SYNC_COUNT; i++)
        c->sync_names[i] = gz_intern_cstr(sync_names[i]);
    track_name(c);
    c->track = gz_track_new_on_device(GZ_API_OPENGL, c->track_name, c->renderer, 1.0,
                                      c->valid_bits, 0);
    return c;
}

gz_gl_ctx *gz_gl_ctx_find(void *key)
{
    gz_gl_ctx *c = NULL;
    pthread_mutex_lock(&registry_lock);
    for (uint32_t i = 0; i < registry_n; i++)
        if (registry[i].key == key) {
            c = registry[i].ctx;
            if (c)
                atomic_fetch_add(&c->refs, 1);
            break;
        }
    pthread_mutex_unlock(&registry_lock);
    return c;
}

/* A new registry entry for key, numbered next; under registry_lock, with
 * room checked by the caller. */
static uint32_t register_locked(void *key)
{
    registry[registry_n] = (__typeof__(registry[0])){.key = key, .number = ++contexts_made};
    return registry_n++;
}

void gz_gl_ctx_created(void *key)
{
    if (!key)
        return;
    pthread_mutex_lock(&registry_lock);
    bool known = false;
    for (uint32_t i = 0; i < registry_n && !known; i++)
        known = registry[i].key == key;
    /* A full registry is reported when the context is made current. */
    if (!known && registry_n < REGISTRY_MAX)
        register_locked(key);
    pthread_mutex_unlock(&registry_lock);
}

/* Each entry point by its core name; on ES the timer queries are
 * EXT_disjoint_timer_query's, so their EXT names come first there. */
static void fns_resolve(gz_gl_fns *f, gz_gl_resolve_fn resolve)
{
    memset(f, 0, sizeof *f);
    f->GetString = (__typeof__(f->GetString))resolve("glGetString");
    if (!f->GetString)
        return;
    const char *v = (const char *)f->GetString(GL_VERSION);
    bool gles = v && !strncmp(v, "OpenGL ES", 9);
#define PICK(field, core, ext)                                       \
    do {                                                             \
        void *p_ = gles ? resolve(ext) : NULL;                       \
        f->field = (__typeof__(f->field))(p_ ? p_ : resolve(core)); \
    } while (0)
    PICK(GenQueries, "glGenQueries", "glGenQueriesEXT");
    PICK(QueryCounter, "glQueryCounter", "glQueryCounterEXT");
    PICK(GetQueryObjectiv, "glGetQueryObjectiv", "glGetQueryObjectivEXT");
    PICK(GetQueryObjectui64v, "glGetQueryObjectui64v", "glGetQueryObjectui64vEXT");
    PICK(GetQueryiv, "glGetQueryiv", "glGetQueryivEXT");
    PICK(GetInteger64v, "glGetInteger64v", "glGetInteger64vEXT");
#undef PICK
    f->GetIntegerv = (__typeof__(f->GetIntegerv))resolve("glGetIntegerv");
    f->GetStringi = (__typeof__(f->GetStringi))resolve("glGetStringi");
    f->BindBuffer = (__typeof__(f->BindBuffer))resolve("glBindBuffer");
    f->Flush = (__typeof__(f->Flush))resolve("glFlush");
}

gz_gl_ctx *gz_gl_ctx_acquire(void *key, gz_gl_resolve_fn resolve)
{
    if (key)
        gz_client_note_frontend(GZ_FRONTEND_OPENGL);
    if (!key || !gz_client_start())
        return NULL;
    /* Outside registry_lock: the worker holds the collectors' lock while
     * note_at_exit takes registry_lock. */
    static pthread_once_t note_once = PTHREAD_ONCE_INIT;
    pthread_once(&note_once, add_exit_note);
    static int full_once;
    pthread_mutex_lock(&registry_lock);
    uint32_t i = 0;
    while (i < registry_n && registry[i].key != key)
        i++;
    if (i == registry_n) {
        if (registry_n == REGISTRY_MAX) {
            gz_log_once(&full_once, "more than %d live GL contexts: no GPU zones for the others",
                        REGISTRY_MAX);
            pthread_mutex_unlock(&registry_lock);
            return NULL;
        }
        /* Created before the shim saw it (or through a call we do not
         * wrap): numbered now. */
        i = register_locked(key);
    }
    if (!registry[i].taken_up) {
        /* Under the lock: the context is current on this thread only, and
         * two threads never share one current context. Missing functions
         * leave NULLs that ctx_create reports. */
        gz_gl_fns fns;
        fns_resolve(&fns, resolve);
        registry[i].ctx = ctx_create(&fns, registry[i].number);
        registry[i].taken_up = true;
    }
    gz_gl_ctx *c = registry[i].ctx;
    if (c)
        atomic_fetch_add(&c->refs, 1);
    pthread_mutex_unlock(&registry_lock);
    return c;
}

void gz_gl_ctx_put(gz_gl_ctx *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    /* The last holder: the GL context is gone or not current anywhere,
     * so its query objects went (or go) with it; what was never read is
     * lost and counted. */
    uint64_t lost = gz_gl_zones_unread(c);
    if (lost)
        gz_count_dropped_zones(c->track, lost);
    /* Nothing more comes for its track: the worker writes what is left
     * and frees the track's state and clock (a program that makes contexts
     * all day must not grow). */
    gz_track_end(c->track);
    pthread_mutex_destroy(&c->lock);
    gz_gl_zones_free(c);
    free(c);
}

void gz_gl_ctx_retire(void *key, bool current_here)
{
    gz_gl_ctx *c = NULL;
    pthread_mutex_lock(&registry_lock);
    for (uint32_t i = 0; i < registry_n; i++)
        if (registry[i].key == key) {
            c = registry[i].ctx;
            registry[i] = registry[--registry_n];
            break;
        }
    pthread_mutex_unlock(&registry_lock);
    if (!c)
        return;
    if (current_here)
        gz_gl_collect_final(c);
    pthread_mutex_lock(&c->lock);
    c->ended = true;
    gz_gl_ctx_note(c);
    pthread_mutex_unlock(&c->lock);
    atomic_store(&c->dead, true);
    gz_gl_ctx_put(c); /* the registry's reference */
}

const gz_gl_fns *gz_gl_ctx_fns(const gz_gl_ctx *c)
{
    return &c->fns;
}

bool gz_gl_ctx_has_debug(const gz_gl_ctx *c)
{
    return c->khr_debug;
}

void gz_gl_ctx_set_name(gz_gl_ctx *c, const char *name, size_t len)
{
    if (!c || !name)
        return;
    char buf[256];
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    memcpy(buf, name, len);
    buf[len] = '\0';
    pthread_mutex_lock(&c->lock);
    c->app_named = true; /* the program's name stays as it is */
    gz_track_set_name(c->track, buf);
    pthread_mutex_unlock(&c->lock);
}

