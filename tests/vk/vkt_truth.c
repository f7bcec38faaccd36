/* What the program knows on the CPU, written as JSON for run_case.py.
 *
 * Labels are simulated here the way the layer must resolve them: the label
 * stack belongs to the queue and command buffer label operations are replayed
 * in submission order, so a label begun in one command buffer and ended in a
 * later one is one region.  Labels recorded where the layer leaves them
 * untimed (SIMULTANEOUS_USE secondaries, which may run twice at once;
 * protected command buffers; between a suspended render pass instance and
 * its resumption) are "absent": they must not be in the trace, and count as
 * dropped zones, by reason.  So are the command buffer zones the layer
 * cannot time (a command buffer that ends with a render pass instance
 * suspended, or whose first action resumes one) and every zone of a
 * protected batch.  Render pass instances and action commands (the zones
 * of GPUZONES_LEVEL=passes and commands) are replayed per batch the same
 * way: a render pass instance suspended in one command buffer and resumed
 * in the next is one zone, and the zones that cannot be timed are absent.
 *
 * A SIMULTANEOUS_USE primary is timed, but each of its executions writes
 * the same timestamps: one submitted while the one before may still be
 * running makes both lose them ("overlap": their command buffer zones,
 * labels and render pass and command zones absent, and the batch's submit
 * zone when its first or last command buffer is one of them).  That is
 * certain for two executions of one vkQueueSubmit* call, ruled out when the
 * program waited for the earlier one before submitting the later one, and
 * a race otherwise: such a pair is written as "either", both timed or both
 * not, for the checker to accept either way.
 *
 * The truth never comes from the layer. */
#define _GNU_SOURCE
#include "vkt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_QUEUES 2048 /* the churn reliability mode makes one per device */
#define MAX_DEPTH 64
#define MAX_MESSAGES 2000
#define MAX_NOTES 16

struct t_queue {
    int instance;
    uint32_t family, index;
    char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    char name[VKT_NAME_MAX]; /* debug-utils name of the queue, "" if none */
    bool untimed; /* its family has no timestamps */
    bool protected_capable; /* created with VK_DEVICE_QUEUE_CREATE_PROTECTED_BIT */
    int last_call;
    int depth;
    int stack[MAX_DEPTH]; /* indices into labels */
};

struct t_batch {
    int ncmds;
    int zone_first, zone_count; /* its render pass and command zones in T.zones */
    char names[VKT_MAX_CMDS][VKT_NAME_MAX];
    enum vkt_untimed untimed[VKT_MAX_CMDS]; /* why a command buffer zone has no
                                               begin or end of its own */
    enum vkt_untimed batch_untimed;         /* why the batch has no zones at all */
    /* A SIMULTANEOUS_USE primary's execution that loses its timestamps to
     * another one of the same call (overlap), or may lose them to one
     * submitted before or after it (either: T.either holds the pair). */
    bool overlap[VKT_MAX_CMDS];
    bool either[VKT_MAX_CMDS];
};

struct t_call {
    int queue;
    char api[24];
    char wait[16];
    int tid;
    uint64_t submit_ns, return_ns, done_ns;
    int nbatches;
    struct t_batch batches[VKT_MAX_BATCHES];
};

struct t_label {
    int queue;
    char name[VKT_NAME_MAX];
    int parent; /* index into labels, -1 at top level */
    int depth;
    int begin_call; /* -1 until resolved (queue labels begin before a call) */
    int end_call;   /* -1 while open */
    bool queue_label;
    /* why its begin / end operation has no timestamp in any execution;
     * with the executions' overlaps (exec_untimed) they say whether it is
     * absent: begun or ended without a timestamp, no zone, one drop */
    enum vkt_untimed begin_untimed, end_untimed;
    /* the command buffer execution (call, batch, index in the batch) whose
     * label operation began / ended it; call -1 for queue label operations */
    int begin_exec[3];
    int end_exec[3];
};

/* A render pass instance or an action command of one batch. */
#define MAX_LABELS_IN_PASS 16
struct t_zone {
    bool pass;                /* a render pass instance, else an action command */
    int parent;               /* a command's render pass instance (index in T.zones), or -1 */
    int call, batch;
    int cmd_begin, cmd_end;   /* the command buffers (index in the batch) it begins and ends in */
    /* why its begin / end has no timestamp in any execution (with the
     * executions' overlaps: why the layer cannot time it, its begin's
     * reason, else its end's) */
    enum vkt_untimed begin_untimed, end_untimed;
    char name[VKT_NAME_MAX];
    int nlabels;
    int labels[MAX_LABELS_IN_PASS]; /* labels begun inside a render pass instance */
};

/* The last execution of one recording of a SIMULTANEOUS_USE primary. */
struct t_sim {
    unsigned recording;
    int exec[3]; /* call, batch, index in the batch */
};

/* Two executions of one SIMULTANEOUS_USE recording, the later submitted
 * in another call while the program had not seen the earlier complete. */
struct t_either {
    int first[3], second[3];
};

struct t_message {
    char severity[12];
    char type[24];
    char *id;
    char *text;
};

static struct {
    pthread_mutex_t lock;
    const char *case_name;
    int ninstances;
    int nqueues;
    struct t_queue queues[MAX_QUEUES];
    int ncalls, cap_calls;
    struct t_call *calls;
    int nlabels, cap_labels;
    struct t_label *labels;
    int nzones, cap_zones;
    struct t_zone *zones;
    int nsims, cap_sims;
    struct t_sim *sims;
    int neither, cap_either;
    struct t_either *either;
    int nmessages, messages_total;
    struct t_message messages[MAX_MESSAGES];
    int errors; /* mistakes of the program itself (bad label nesting) */
    struct {
        int call;
        char label[VKT_NAME_MAX];
        uint64_t iterations;
    } workload;
    int nnotes;
    struct {
        const char *key;
        long long value;
    } notes[MAX_NOTES];
} T = { .lock = PTHREAD_MUTEX_INITIALIZER, .workload = { .call = -1 } };

static void *grow(void *p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return p;
    int ncap = *cap ? *cap * 2 : 64;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(p, (size_t)ncap * elem);
    if (!np)
        vkt_die("out of memory");
    memset((char *)np + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
    *cap = ncap;
    return np;
}

void truth_init(const char *case_name)
{
    T.case_name = case_name;
}

int truth_add_instance(void)
{
    pthread_mutex_lock(&T.lock);
    int i = T.ninstances++;
    pthread_mutex_unlock(&T.lock);
    return i;
}

int truth_add_queue(int instance, struct vkt_device *d, uint32_t index, const char *name)
{
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(d->phys, &props);
    pthread_mutex_lock(&T.lock);
    if (T.nqueues == MAX_QUEUES)
        vkt_die("too many queues");
    int q = T.nqueues++;
    struct t_queue *tq = &T.queues[q];
    tq->instance = instance;
    tq->family = d->family;
    tq->index = index;
    snprintf(tq->device_name, sizeof tq->device_name, "%s", props.deviceName);
    snprintf(tq->name, sizeof tq->name, "%s", name ? name : "");
    tq->last_call = -1;
    pthread_mutex_unlock(&T.lock);
    return q;
}

const char *vkt_untimed_name(enum vkt_untimed why)
{
    switch (why) {
    case VKT_TIMED:
        return NULL;
    case VKT_UNTIMED_SIMULTANEOUS:
        return "simultaneous";
    case VKT_UNTIMED_SUSPENDED:
        return "suspended";
    case VKT_UNTIMED_PROTECTED:
        return "protected";
    case VKT_UNTIMED_OVERLAP:
        return "overlap";
    }
    return "?";
}

static void put_untimed(FILE *f, enum vkt_untimed why)
{
    const char *name = vkt_untimed_name(why);
    if (name)
        fprintf(f, "\"%s\"", name);
    else
        fprintf(f, "null");
}

void truth_queue_protected(int queue)
{
    pthread_mutex_lock(&T.lock);
    T.queues[queue].protected_capable = true;
    pthread_mutex_unlock(&T.lock);
}

void truth_queue_untimed(int queue)
{
    pthread_mutex_lock(&T.lock);
    T.queues[queue].untimed = true;
    pthread_mutex_unlock(&T.lock);
}

static void copy_text(char **dst, const char *src)
{
    *dst = strdup(src ? src : "");
    if (!*dst)
        vkt_die("out of memory");
}

void truth_message(const char *severity, const char *type, const char *id, const char *text)
{
    pthread_mutex_lock(&T.lock);
    T.messages_total++;
    if (T.nmessages < MAX_MESSAGES) {
        struct t_message *m = &T.messages[T.nmessages++];
        snprintf(m->severity, sizeof m->severity, "%s", severity);
        snprintf(m->type, sizeof m->type, "%s", type);
        copy_text(&m->id, id);
        copy_text(&m->text, text);
    }
    pthread_mutex_unlock(&T.lock);
}

#define NO_EXEC ((const int[3]){ -1, -1, -1 })

/* Called with the lock held. */
static int label_push(int queue, const char *name, int call, bool queue_label,
                      enum vkt_untimed untimed, const int exec[3])
{
    struct t_queue *tq = &T.queues[queue];
    if (tq->depth == MAX_DEPTH) {
        T.errors++;
        return -1;
    }
    T.labels = grow(T.labels, &T.cap_labels, T.nlabels + 1, sizeof *T.labels);
    int l = T.nlabels++;
    struct t_label *tl = &T.labels[l];
    tl->queue = queue;
    snprintf(tl->name, sizeof tl->name, "%s", name);
    tl->parent = tq->depth ? tq->stack[tq->depth - 1] : -1;
    tl->depth = tq->depth;
    tl->begin_call = call;
    tl->end_call = -1;
    tl->queue_label = queue_label;
    tl->begin_untimed = untimed;
    tl->end_untimed = VKT_TIMED;
    memcpy(tl->begin_exec, exec, sizeof tl->begin_exec);
    memcpy(tl->end_exec, NO_EXEC, sizeof tl->end_exec);
    tq->stack[tq->depth++] = l;
    return l;
}

/* Called with the lock held. */
static void label_pop(int queue, int call, const int exec[3], enum vkt_untimed untimed)
{
    struct t_queue *tq = &T.queues[queue];
    if (tq->depth == 0) {
        /* an end without a begin: a mistake in this program, not the layer */
        T.errors++;
        return;
    }
    struct t_label *tl = &T.labels[tq->stack[--tq->depth]];
    tl->end_call = call;
    tl->end_untimed = untimed;
    memcpy(tl->end_exec, exec, sizeof tl->end_exec);
}

/* Queue labels begun before this call start with it. */
static void resolve_pending_begins(int queue, int call)
{
    for (int i = 0; i < T.nlabels; i++)
        if (T.labels[i].queue == queue && T.labels[i].begin_call < 0)
            T.labels[i].begin_call = call;
}

/* Called with the lock held. */
static int zone_new(bool pass, int parent, const int exec[3], enum vkt_untimed untimed,
                    const char *name)
{
    T.zones = grow(T.zones, &T.cap_zones, T.nzones + 1, sizeof *T.zones);
    struct t_zone *z = &T.zones[T.nzones];
    memset(z, 0, sizeof *z);
    z->pass = pass;
    z->parent = parent;
    z->call = exec[0];
    z->batch = exec[1];
    z->cmd_begin = exec[2];
    z->cmd_end = pass ? -1 : exec[2];
    z->begin_untimed = untimed;
    z->end_untimed = pass ? VKT_TIMED : untimed;
    snprintf(z->name, sizeof z->name, "%s", name);
    return T.nzones++;
}

/* One render pass or command operation of the command buffer execution
 * exec; *open: the render pass instance in progress (-1: none). Called
 * with the lock held. */
static void replay_zone_op(const struct vkt_zone_op *op, const int exec[3], int *open)
{
    switch (op->kind) {
    case VKT_ZOP_BEGIN:
        if (*open >= 0)
            T.errors++;
        *open = zone_new(true, -1, exec, op->untimed, op->name);
        return;
    case VKT_ZOP_SUSPEND:
    case VKT_ZOP_RESUME:
        if (*open < 0)
            T.errors++;
        return;
    case VKT_ZOP_END:
        if (*open < 0) {
            T.errors++;
            return;
        }
        T.zones[*open].cmd_end = exec[2];
        T.zones[*open].end_untimed = op->untimed;
        *open = -1;
        return;
    case VKT_ZOP_COMMAND:
        zone_new(false, *open, exec, op->untimed, op->name);
        return;
    }
}

/* The label and zone operations of one command buffer, in the order they
 * were recorded. Called with the lock held. */
static void replay_cmd_ops(int queue, int call, int batch, int index, const struct vkt_cmd *c,
                           int *open)
{
    const int exec[3] = { call, batch, index };
    int o = 0;
    for (int z = 0; z <= c->nzops; z++) {
        int upto = z < c->nzops ? c->zops[z].label_pos : c->nops;
        for (; o < upto && o < c->nops; o++) {
            enum vkt_untimed untimed = c->ops[o].untimed;
            if (!c->ops[o].begin) {
                label_pop(queue, call, exec, untimed);
                continue;
            }
            int l = label_push(queue, c->ops[o].name, call, false, untimed, exec);
            struct t_zone *pz = *open >= 0 ? &T.zones[*open] : NULL;
            if (l >= 0 && pz && pz->nlabels < MAX_LABELS_IN_PASS)
                pz->labels[pz->nlabels++] = l;
        }
        if (z < c->nzops)
            replay_zone_op(&c->zops[z], exec, open);
    }
}

static struct t_batch *exec_batch(const int exec[3])
{
    return &T.calls[exec[0]].batches[exec[1]];
}

/* Execution exec of a recording of a SIMULTANEOUS_USE primary, against
 * the one before it of that recording (on any queue): both lose their
 * timestamps when the layer cannot know the earlier one has finished
 * writing them. Called with the lock held. */
static void follow_simultaneous(unsigned recording, const int exec[3])
{
    struct t_sim *last = NULL;
    for (int i = 0; i < T.nsims && !last; i++)
        if (T.sims[i].recording == recording)
            last = &T.sims[i];
    if (!last) {
        T.sims = grow(T.sims, &T.cap_sims, T.nsims + 1, sizeof *T.sims);
        last = &T.sims[T.nsims++];
        last->recording = recording;
    } else if (last->exec[0] == exec[0]) {
        /* one call: the later one is submitted before the earlier can run */
        exec_batch(last->exec)->overlap[last->exec[2]] = true;
        exec_batch(exec)->overlap[exec[2]] = true;
    } else if (T.calls[last->exec[0]].done_ns == 0) {
        /* the program had not seen the earlier one complete: a race */
        T.either = grow(T.either, &T.cap_either, T.neither + 1, sizeof *T.either);
        struct t_either *e = &T.either[T.neither++];
        memcpy(e->first, last->exec, sizeof e->first);
        memcpy(e->second, exec, sizeof e->second);
        exec_batch(last->exec)->either[last->exec[2]] = true;
        exec_batch(exec)->either[exec[2]] = true;
    }
    memcpy(last->exec, exec, sizeof last->exec);
}

int truth_call_begin(int queue, const char *api, const char *wait, int nbatches,
                     const struct vkt_batch *b, uint64_t submit_ns, uint64_t return_ns)
{
    pthread_mutex_lock(&T.lock);
    T.calls = grow(T.calls, &T.cap_calls, T.ncalls + 1, sizeof *T.calls);
    int call = T.ncalls++;
    struct t_call *tc = &T.calls[call];
    tc->queue = queue;
    snprintf(tc->api, sizeof tc->api, "%s", api);
    snprintf(tc->wait, sizeof tc->wait, "%s", wait);
    tc->tid = vkt_gettid();
    tc->submit_ns = submit_ns;
    tc->return_ns = return_ns;
    tc->done_ns = 0;
    tc->nbatches = nbatches;
    resolve_pending_begins(queue, call);
    for (int i = 0; i < nbatches; i++) {
        struct t_batch *tb = &tc->batches[i];
        tb->ncmds = b[i].ncmds;
        tb->batch_untimed = VKT_TIMED;
        tb->zone_first = T.nzones;
        int open = -1;
        for (int j = 0; j < b[i].ncmds; j++) {
            const struct vkt_cmd *c = b[i].cmds[j];
            vkt_cmd_zone_name(c, j, tb->names[j]);
            tb->untimed[j] = c->zone_untimed;
            tb->overlap[j] = tb->either[j] = false;
            if (c->simultaneous && !c->secondary)
                follow_simultaneous(c->recording, (const int[3]){ call, i, j });
            /* protected command buffers run only in protected batches,
             * which the layer may not add its own command buffers to */
            if (c->protected_pool)
                tb->batch_untimed = VKT_UNTIMED_PROTECTED;
            replay_cmd_ops(queue, call, i, j, c, &open);
        }
        if (open >= 0)
            T.errors++; /* a render pass instance left suspended at the end of the batch */
        tb->zone_count = T.nzones - tb->zone_first;
    }
    T.queues[queue].last_call = call;
    pthread_mutex_unlock(&T.lock);
    return call;
}

void truth_call_done(int call, uint64_t done_ns)
{
    pthread_mutex_lock(&T.lock);
    if (T.calls[call].done_ns == 0)
        T.calls[call].done_ns = done_ns;
    pthread_mutex_unlock(&T.lock);
}

/* vkQueueWaitIdle observed every call on the queue complete. */
void truth_queue_done(int queue, uint64_t done_ns)
{
    pthread_mutex_lock(&T.lock);
    for (int i = 0; i < T.ncalls; i++)
        if (T.calls[i].queue == queue && T.calls[i].done_ns == 0)
            T.calls[i].done_ns = done_ns;
    pthread_mutex_unlock(&T.lock);
}

void truth_queue_label(int queue, bool begin, const char *name)
{
    pthread_mutex_lock(&T.lock);
    if (begin)
        label_push(queue, name, -1, true, VKT_TIMED, NO_EXEC); /* starts with the next call */
    else
        label_pop(queue, T.queues[queue].last_call, NO_EXEC, VKT_TIMED); /* ends with the last one */
    pthread_mutex_unlock(&T.lock);
}

void truth_workload(int call, const char *label, uint64_t iterations)
{
    pthread_mutex_lock(&T.lock);
    T.workload.call = call;
    snprintf(T.workload.label, sizeof T.workload.label, "%s", label);
    T.workload.iterations = iterations;
    pthread_mutex_unlock(&T.lock);
}

void truth_note(const char *key, long long value)
{
    pthread_mutex_lock(&T.lock);
    if (T.nnotes < MAX_NOTES) {
        T.notes[T.nnotes].key = key;
        T.notes[T.nnotes].value = value;
        T.nnotes++;
    }
    pthread_mutex_unlock(&T.lock);
}

int truth_error_count(void)
{
    pthread_mutex_lock(&T.lock);
    int e = T.errors;
    pthread_mutex_unlock(&T.lock);
    return e;
}

/* ---- what the overlaps take away --------------------------------------------- */

/* Why the execution lost its timestamps (overlap), if it did. */
static enum vkt_untimed exec_untimed(const int exec[3])
{
    if (exec[0] < 0)
        return VKT_TIMED; /* a queue label operation */
    return exec_batch(exec)->overlap[exec[2]] ? VKT_UNTIMED_OVERLAP : VKT_TIMED;
}

/* Why an operation has no timestamp: its own reason (in any execution),
 * else its execution's. */
static enum vkt_untimed op_untimed(enum vkt_untimed own, const int exec[3])
{
    return own != VKT_TIMED ? own : exec_untimed(exec);
}

/* Why a label has no zone: its begin's reason, else its end's. */
static enum vkt_untimed label_untimed(const struct t_label *l)
{
    enum vkt_untimed why = op_untimed(l->begin_untimed, l->begin_exec);
    return why != VKT_TIMED ? why : op_untimed(l->end_untimed, l->end_exec);
}

static enum vkt_untimed zone_untimed(const struct t_zone *z)
{
    enum vkt_untimed why = op_untimed(z->begin_untimed, (const int[3]){ z->call, z->batch, z->cmd_begin });
    if (why == VKT_TIMED && z->cmd_end >= 0)
        why = op_untimed(z->end_untimed, (const int[3]){ z->call, z->batch, z->cmd_end });
    return why;
}

/* A command buffer zone has no begin or end of its own (a suspension), or
 * its execution lost its timestamps. */
static enum vkt_untimed cmdbuf_untimed(const struct t_batch *tb, int j)
{
    if (tb->untimed[j] != VKT_TIMED)
        return tb->untimed[j];
    return tb->overlap[j] ? VKT_UNTIMED_OVERLAP : VKT_TIMED;
}

/* The submit zone begins with its first command buffer and ends with its
 * last: without their timestamps it has neither. */
static enum vkt_untimed submit_untimed(const struct t_batch *tb)
{
    if (tb->ncmds && (tb->overlap[0] || tb->overlap[tb->ncmds - 1]))
        return VKT_UNTIMED_OVERLAP;
    return VKT_TIMED;
}

/* ---- JSON output ---------------------------------------------------------- */

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void write_queues(FILE *f)
{
    fprintf(f, " \"queues\": [\n");
    for (int q = 0; q < T.nqueues; q++) {
        const struct t_queue *tq = &T.queues[q];
        fprintf(f, "  {\"key\": %d, \"instance\": %d, \"family\": %u, \"index\": %u, \"device_name\": ",
                q, tq->instance, tq->family, tq->index);
        put_string(f, tq->device_name);
        fprintf(f, ", \"name\": ");
        if (tq->name[0])
            put_string(f, tq->name);
        else
            fprintf(f, "null");
        fprintf(f, ", \"timed\": %s, \"protected\": %s}%s\n", tq->untimed ? "false" : "true",
                tq->protected_capable ? "true" : "false", q + 1 < T.nqueues ? "," : "");
    }
    fprintf(f, " ],\n");
}

/* A render pass or command zone: its index in the batch, the index of its
 * render pass instance's (parent, -1: none), the command buffers it begins
 * and ends in, and the labels begun inside a render pass instance. */
static void write_zone(FILE *f, int first, int i, bool comma)
{
    const struct t_zone *z = &T.zones[i];
    fprintf(f, "%s\n     {\"index\": %d, \"level\": \"%s\", \"name\": ", comma ? "," : "", i - first,
            z->pass ? "pass" : "command");
    put_string(f, z->name);
    fprintf(f, ", \"parent\": %d, \"cmdbufs\": [%d, %d], \"untimed\": ",
            z->parent >= 0 ? z->parent - first : -1, z->cmd_begin, z->cmd_end);
    put_untimed(f, zone_untimed(z));
    fprintf(f, ", \"begin_untimed\": ");
    put_untimed(f, z->begin_untimed);
    fprintf(f, ", \"end_untimed\": ");
    put_untimed(f, z->end_untimed);
    fprintf(f, ", \"labels\": [");
    for (int l = 0; l < z->nlabels; l++)
        fprintf(f, "%s%d", l ? ", " : "", z->labels[l]);
    fprintf(f, "]}");
}

static void write_call(FILE *f, int i)
{
    const struct t_call *c = &T.calls[i];
    fprintf(f, "  {\"index\": %d, \"queue\": %d, \"api\": ", i, c->queue);
    put_string(f, c->api);
    fprintf(f, ", \"wait\": ");
    put_string(f, c->wait);
    fprintf(f, ", \"tid\": %d, \"host_submit_ns\": %llu, \"host_return_ns\": %llu, \"host_done_ns\": %llu,\n",
            c->tid, (unsigned long long)c->submit_ns, (unsigned long long)c->return_ns,
            (unsigned long long)c->done_ns);
    fprintf(f, "   \"batches\": [");
    for (int b = 0; b < c->nbatches; b++) {
        const struct t_batch *tb = &c->batches[b];
        fprintf(f, "%s{\"cmdbufs\": [", b ? ", " : "");
        for (int j = 0; j < tb->ncmds; j++) {
            if (j)
                fprintf(f, ", ");
            put_string(f, tb->names[j]);
        }
        fprintf(f, "], \"untimed\": [");
        for (int j = 0; j < tb->ncmds; j++) {
            if (j)
                fprintf(f, ", ");
            put_untimed(f, cmdbuf_untimed(tb, j));
        }
        fprintf(f, "], \"executions\": [");
        for (int j = 0; j < tb->ncmds; j++)
            fprintf(f, "%s%s", j ? ", " : "",
                    tb->overlap[j] ? "\"overlap\"" : tb->either[j] ? "\"either\"" : "null");
        fprintf(f, "], \"submit_untimed\": ");
        put_untimed(f, submit_untimed(tb));
        fprintf(f, ", \"batch_untimed\": ");
        put_untimed(f, tb->batch_untimed);
        fprintf(f, ",\n    \"zones\": [");
        for (int z = 0; z < tb->zone_count; z++)
            write_zone(f, tb->zone_first, tb->zone_first + z, z > 0);
        fprintf(f, "]}");
    }
    fprintf(f, "]}%s\n", i + 1 < T.ncalls ? "," : "");
}

static void put_exec(FILE *f, const int exec[3])
{
    if (exec[0] < 0)
        fprintf(f, "null");
    else
        fprintf(f, "[%d, %d, %d]", exec[0], exec[1], exec[2]);
}

static void write_labels(FILE *f)
{
    fprintf(f, " \"labels\": [\n");
    for (int i = 0; i < T.nlabels; i++) {
        const struct t_label *l = &T.labels[i];
        fprintf(f, "  {\"id\": %d, \"queue\": %d, \"name\": ", i, l->queue);
        put_string(f, l->name);
        fprintf(f, ", \"parent\": %d, \"depth\": %d, \"begin_call\": %d, \"end_call\": %d, \"kind\": \"%s\",\n",
                l->parent, l->depth, l->begin_call, l->end_call, l->queue_label ? "queue" : "cmd");
        enum vkt_untimed why = label_untimed(l);
        fprintf(f, "   \"absent\": %s, \"untimed\": ", why != VKT_TIMED ? "true" : "false");
        put_untimed(f, why);
        fprintf(f, ", \"begin_untimed\": ");
        put_untimed(f, l->begin_untimed);
        fprintf(f, ", \"end_untimed\": ");
        put_untimed(f, l->end_untimed);
        fprintf(f, ", \"begin_exec\": ");
        put_exec(f, l->begin_exec);
        fprintf(f, ", \"end_exec\": ");
        put_exec(f, l->end_exec);
        fprintf(f, "}%s\n", i + 1 < T.nlabels ? "," : "");
    }
    fprintf(f, " ],\n");
}

/* The pairs of executions that are both timed or both not. */
static void write_either(FILE *f)
{
    fprintf(f, " \"either\": [");
    for (int i = 0; i < T.neither; i++) {
        fprintf(f, "%s[", i ? ", " : "");
        put_exec(f, T.either[i].first);
        fprintf(f, ", ");
        put_exec(f, T.either[i].second);
        fprintf(f, "]");
    }
    fprintf(f, "],\n");
}

static void write_messages(FILE *f)
{
    fprintf(f, " \"messages_total\": %d,\n \"messages\": [\n", T.messages_total);
    for (int i = 0; i < T.nmessages; i++) {
        const struct t_message *m = &T.messages[i];
        fprintf(f, "  {\"severity\": \"%s\", \"type\": \"%s\", \"id\": ", m->severity, m->type);
        put_string(f, m->id);
        fprintf(f, ", \"text\": ");
        put_string(f, m->text);
        fprintf(f, "}%s\n", i + 1 < T.nmessages ? "," : "");
    }
    fprintf(f, " ],\n");
}

bool truth_write(const char *path)
{
    pthread_mutex_lock(&T.lock);
    FILE *f = fopen(path, "w");
    if (!f) {
        pthread_mutex_unlock(&T.lock);
        fprintf(stderr, "gz-test-vk: cannot write %s\n", path);
        return false;
    }
    fprintf(f, "{\n \"case\": ");
    put_string(f, T.case_name);
    fprintf(f, ",\n \"pid\": %d,\n \"main_tid\": %d,\n \"instances\": %d,\n \"program_errors\": %d,\n",
            (int)getpid(), (int)getpid(), T.ninstances, T.errors);
    write_queues(f);
    fprintf(f, " \"calls\": [\n");
    for (int i = 0; i < T.ncalls; i++)
        write_call(f, i);
    fprintf(f, " ],\n");
    write_labels(f);
    write_either(f);
    write_messages(f);
    fprintf(f, " \"notes\": {");
    for (int i = 0; i < T.nnotes; i++)
        fprintf(f, "%s\"%s\": %lld", i ? ", " : "", T.notes[i].key, T.notes[i].value);
    fprintf(f, "},\n \"workload\": ");
    if (T.workload.call >= 0) {
        const struct t_call *c = &T.calls[T.workload.call];
        fprintf(f, "{\"call\": %d, \"label\": ", T.workload.call);
        put_string(f, T.workload.label);
        fprintf(f, ", \"iterations\": %llu, \"host_ns\": %llu}\n",
                (unsigned long long)T.workload.iterations,
                (unsigned long long)(c->done_ns - c->submit_ns));
    } else {
        fprintf(f, "null\n");
    }
    fprintf(f, "}\n");
    bool ok = fclose(f) == 0;
    pthread_mutex_unlock(&T.lock);
    return ok;
}
