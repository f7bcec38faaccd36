/* The exit summary on stderr: the zone table (a row per name and kind),
 * a line per GPU track, the totals. */
#include <stdlib.h>
#include <string.h>

#include "gz_calibration.h"
#include "gz_client_internal.h"
#include "gz_gpu_clock.h"
#include "gz_intern.h"
#include "gz_item.h"
#include "gz_queue.h"
#include "gz_stats.h"
#include "gz_sinks.h"
#include "gz_summary.h"

#define MAX_ROWS 4096u
#define TABLE_SLOTS (MAX_ROWS * 2)
#define OTHER_NAME UINT32_MAX

typedef struct row {
    uint32_t name;
    unsigned kind;
    gz_stats stats;
} row;

struct gz_summary {
    row *rows[MAX_ROWS + 1]; /* + the pooled row */
    uint32_t nrows;
    uint32_t slots[TABLE_SLOTS]; /* open addressing: row index + 1 */
};

gz_summary *gz_summary_new(void)
{
    return calloc(1, sizeof(gz_summary));
}

void gz_summary_free(gz_summary *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->nrows; i++)
        free(s->rows[i]);
    free(s);
}

static row *new_row(gz_summary *s, uint32_t name, unsigned kind)
{
    row *r = malloc(sizeof *r);
    if (!r)
        return NULL;
    r->name = name;
    r->kind = kind;
    gz_stats_init(&r->stats);
    s->rows[s->nrows++] = r;
    return r;
}

static row *find_row(gz_summary *s, uint32_t name, unsigned kind)
{
    uint32_t h = (name * 2654435761u) ^ (kind * 40503u);
    for (uint32_t i = 0; i < TABLE_SLOTS; i++) {
        uint32_t *slot = &s->slots[(h + i) % TABLE_SLOTS];
        if (!*slot) {
            if (s->nrows >= MAX_ROWS)
                break;
            row *r = new_row(s, name, kind);
            if (!r)
                return NULL;
            *slot = s->nrows;
            return r;
        }
        row *r = s->rows[*slot - 1];
        if (r->name == name && r->kind == kind)
            return r;
    }
    /* Table full: pool the rest so totals stay right. */
    for (uint32_t i = MAX_ROWS; i < s->nrows; i++)
        if (s->rows[i]->name == OTHER_NAME)
            return s->rows[i];
    return s->nrows <= MAX_ROWS ? new_row(s, OTHER_NAME, kind) : NULL;
}

void gz_summary_add(gz_summary *s, uint32_t name, unsigned kind, uint64_t dur_ns)
{
    if (!s)
        return; /* no memory for the summary: the trace still gets the zone */
    row *r = find_row(s, name, kind);
    if (r)
        gz_stats_add(&r->stats, dur_ns);
}

/* Render pass instances first (the passes level): where a frame's GPU time
 * goes at a glance; then every row by its total. */
static int by_total_desc(const void *a, const void *b)
{
    const row *x = *(const row *const *)a, *y = *(const row *const *)b;
    bool xp = x->kind == GZ_ZONE_PASS, yp = y->kind == GZ_ZONE_PASS;
    if (xp != yp)
        return xp ? -1 : 1;
    if (x->stats.total_ns != y->stats.total_ns)
        return x->stats.total_ns < y->stats.total_ns ? 1 : -1;
    return x->name < y->name ? -1 : x->name > y->name;
}

static const char *kind_name(unsigned kind)
{
    static const char *const names[] = {"submit", "cmdbuf", "label", "zone",
                                        "frame",  "flush",  "pass",  "command"};
    return kind < sizeof names / sizeof *names ? names[kind] : "?";
}

/* The zone column: name cut to NAME_COLUMNS characters, never inside a
 * UTF-8 sequence, and padded to that many (names like "dispatch 8×8×1"
 * hold multi-byte characters). Names are the app's text: a control
 * character (an escape sequence, a newline) must not reach the user's
 * terminal. */
#define NAME_COLUMNS 40
static const char *name_column(const char *name, char out[static 5 * NAME_COLUMNS + 1])
{
    size_t n = 0, columns = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        bool continues = (*p & 0xc0) == 0x80;
        if (!continues && columns == NAME_COLUMNS)
            break;
        if (n + (continues ? 1 : 4) > 4 * NAME_COLUMNS)
            break; /* malformed text: bytes for the column, then padding */
        out[n++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
        columns += !continues;
    }
    for (; columns < NAME_COLUMNS; columns++)
        out[n++] = ' ';
    out[n] = '\0';
    return out;
}

static void print_ms(FILE *f, uint64_t ns)
{
    fprintf(f, " %11.3f", (double)ns / 1e6);
}

void gz_summary_print_zones(gz_summary *s, FILE *f)
{
    if (!s) {
        fprintf(f, "gpuzones: no summary of zones (out of memory for it)\n");
        return;
    }
    if (!s->nrows) {
        fprintf(f, "gpuzones: no GPU zones were recorded\n");
        return;
    }
    row **sorted = malloc(s->nrows * sizeof *sorted);
    if (!sorted)
        return;
    memcpy(sorted, s->rows, s->nrows * sizeof *sorted);
    qsort(sorted, s->nrows, sizeof *sorted, by_total_desc);
    /* First what most users ask first: how long the GPU took per frame
     * (GPU frame zones: presents and swaps). A frame zone spans from the
     * frame's first GPU work to its last, idle gaps between included: said
     * so, as it is not the time the GPU was busy. */
    for (uint32_t i = 0; i < s->nrows; i++) {
        const row *r = sorted[i];
        if (r->kind != GZ_ZONE_FRAME || r->name == OTHER_NAME)
            continue;
        size_t len;
        const char *name = gz_intern_str(r->name, &len);
        fprintf(f, "gpuzones: GPU span per frame, first GPU work to last, idle gaps included "
                   "(\"%.40s\", %llu frames): p50 %.3f ms, p95 %.3f ms, max %.3f ms\n",
                name, (unsigned long long)r->stats.count,
                (double)gz_stats_quantile(&r->stats, 0.5) / 1e6,
                (double)gz_stats_quantile(&r->stats, 0.95) / 1e6, (double)r->stats.max_ns / 1e6);
    }
    fprintf(f, "gpuzones: GPU zones (times in ms)\n");
    fprintf(f, "%-*s %-6s %9s %11s %11s %11s %11s %11s\n", NAME_COLUMNS, "zone", "kind", "count",
            "total",
            "mean", "p50", "p95", "max");
    for (uint32_t i = 0; i < s->nrows; i++) {
        const row *r = sorted[i];
        size_t len;
        const char *name = r->name == OTHER_NAME ? "<other names>" : gz_intern_str(r->name, &len);
        if (!*name)
            name = "<unnamed>";
        char shown[5 * NAME_COLUMNS + 1];
        fprintf(f, "%s %-6s %9llu", name_column(name, shown), kind_name(r->kind),
                (unsigned long long)r->stats.count);
        print_ms(f, r->stats.total_ns);
        print_ms(f, gz_stats_mean(&r->stats));
        print_ms(f, gz_stats_quantile(&r->stats, 0.5));
        print_ms(f, gz_stats_quantile(&r->stats, 0.95));
        print_ms(f, r->stats.max_ns);
        fputc('\n', f);
    }
    free(sorted);
}

/* The summary as a sink: the zone table above, then a line per GPU track
 * (tracks of the same name folded into one, so that a program that made
 * and destroyed a thousand devices gets one line for them, not a
 * thousand), then the totals. */

#define MAX_GROUPS 4096u
#define GROUP_SLOTS (MAX_GROUPS * 2)

/* A track's clock as last reported, for its line. */
typedef struct clock_snap {
    bool valid;
    gz_calib_method method;
    uint64_t calib_deviation_ns, deviation_ns, wraps, jumps;
    int64_t offset_ns;
    double drift_ppm;
} clock_snap;

/* Zones whose times a step in the GPU clock left in doubt, and by how much
 * at most. */
typedef struct doubt_count {
    uint64_t zones, most_ns;
} doubt_count;

typedef struct live_track {
    bool used;
    uint32_t name;
    uint64_t zones, dropped;
    doubt_count doubt;
    clock_snap clock;
} live_track;

typedef struct track_group {
    uint32_t name;
    uint32_t count; /* tracks folded in */
    uint64_t zones, dropped;
    doubt_count doubt;
    clock_snap clock; /* the last one's that had a clock */
} track_group;

typedef struct summary_sink {
    gz_summary *zones;
    const gz_trace_outcome *traces; /* GZ_TRACE_FILES of them */
    live_track live[GZ_MAX_TRACKS];
    track_group *groups;
    uint32_t ngroups;
    uint32_t slots[GROUP_SLOTS]; /* open addressing: group index + 1 */
    track_group other;           /* past MAX_GROUPS names */
    bool verbose;                /* GPUZONES_SUMMARY=2 */
    bool printed;                /* at a checkpoint, with these totals */
    gz_sink_totals printed_totals;
} summary_sink;

static void sum_track_new(void *s, const gz_sink_track *t)
{
    summary_sink *u = s;
    if (t->id >= GZ_MAX_TRACKS)
        return;
    u->live[t->id] = (live_track){.used = true, .name = gz_intern(t->name, t->name_len)};
}

static void sum_track_name(void *s, const gz_sink_track *t)
{
    summary_sink *u = s;
    if (t->id < GZ_MAX_TRACKS && u->live[t->id].used)
        u->live[t->id].name = gz_intern(t->name, t->name_len);
}

static void sum_gpu_zone(void *s, const gz_sink_zone *z)
{
    summary_sink *u = s;
    gz_summary_add(u->zones, z->name_id, z->kind, z->end_ns - z->begin_ns);
    if (z->track >= GZ_MAX_TRACKS)
        return;
    live_track *t = &u->live[z->track];
    t->zones++;
    if (z->clock_doubt_ns) {
        t->doubt.zones++;
        if (z->clock_doubt_ns > t->doubt.most_ns)
            t->doubt.most_ns = z->clock_doubt_ns;
    }
}

static void sum_calibration(void *s, const gz_sink_track *t, const gz_gpu_clock *c, uint64_t ns)
{
    (void)ns;
    summary_sink *u = s;
    if (t->id >= GZ_MAX_TRACKS)
        return;
    const gz_clock_model *m = &c->model;
    u->live[t->id].clock = (clock_snap){
        .valid = true,
        .method = m->method,
        .calib_deviation_ns = m->calib_deviation_ns,
        .deviation_ns = m->deviation_ns,
        .wraps = gz_unwrap_wraps(&c->unwrap),
        .jumps = m->jumps,
        .offset_ns = gz_gpu_clock_offset_ns(c),
        .drift_ppm = m->drift_ppm,
    };
}

static void sum_track_drops(void *s, uint16_t id, uint64_t dropped)
{
    summary_sink *u = s;
    if (id < GZ_MAX_TRACKS)
        u->live[id].dropped += dropped;
}

static track_group *group_of(summary_sink *u, uint32_t name)
{
    uint32_t h = name * 2654435761u;
    for (uint32_t i = 0; i < GROUP_SLOTS; i++) {
        uint32_t *slot = &u->slots[(h + i) % GROUP_SLOTS];
        if (!*slot) {
            if (!u->groups || u->ngroups >= MAX_GROUPS)
                break;
            u->groups[u->ngroups] = (track_group){.name = name};
            *slot = ++u->ngroups;
            return &u->groups[*slot - 1];
        }
        if (u->groups[*slot - 1].name == name)
            return &u->groups[*slot - 1];
    }
    return &u->other;
}

/* The name a track's line goes under: its name without the " #<n>" that
 * numbers a device's instances ("VkQueue 0.0 llvmpipe #7 labels" →
 * "VkQueue 0.0 llvmpipe labels"), so that the tracks of every device of one
 * driver share a line. */
static uint32_t group_name(uint32_t name)
{
    size_t len;
    const char *s = gz_intern_str(name, &len);
    char out[512];
    size_t n = 0;
    bool changed = false;
    for (size_t i = 0; i < len && n < sizeof out; i++) {
        if (s[i] == ' ' && i + 2 < len && s[i + 1] == '#' &&
            s[i + 2] >= '0' && s[i + 2] <= '9') {
            size_t j = i + 2;
            while (j < len && s[j] >= '0' && s[j] <= '9')
                j++;
            if (j == len || s[j] == ' ') {
                i = j - 1;
                changed = true;
                continue;
            }
        }
        out[n++] = s[i];
    }
    return changed && n < sizeof out ? gz_intern(out, n) : name;
}

/* Folds a track's record into its name's line. */
static void fold(summary_sink *u, uint16_t id)
{
    live_track *t = &u->live[id];
    if (!t->used)
        return;
    track_group *g = group_of(u, group_name(t->name));
    g->count++;
    g->zones += t->zones;
    g->dropped += t->dropped;
    g->doubt.zones += t->doubt.zones;
    if (t->doubt.most_ns > g->doubt.most_ns)
        g->doubt.most_ns = t->doubt.most_ns;
    if (t->clock.valid)
        g->clock = t->clock;
    *t = (live_track){0};
}

static void sum_track_end(void *s, uint16_t id)
{
    if (id < GZ_MAX_TRACKS)
        fold(s, id);
}

/* What sets the band of a clock model's line: the best kind of constraint
 * in its window. */
static const char *band_source(gz_calib_method m)
{
    switch (m) {
    case GZ_CALIB_CALIBRATED:
        return "the driver's maxDeviation";
    case GZ_CALIB_SYNC_POINT:
        return "the sync points' brackets";
    default:
        return "the submissions' bounds";
    }
}

/* The clock part of a track's line. By default what a user acts on: how
 * the clock was calibrated, how closely its constraints pin it, and
 * anything unusual (wraps, steps, a drift no crystal has). The band is
 * half the width its constraints leave at the fitted line, which the
 * driver's maxDeviation (calibrated pairs), the sync points' brackets or
 * the submissions' bounds set: a claim of the data, not a measured error
 * of the zones, so the line says which. The offset and drift of every
 * clock (a different epoch is normal: pocl's, NVIDIA's) only with
 * GPUZONES_SUMMARY=2. */
static void print_clock(FILE *f, const track_group *g, bool verbose)
{
    const clock_snap *c = &g->clock;
    fprintf(f, "; clock%s: %s", g->count > 1 ? " (last)" : "", gz_calib_method_name(c->method));
    if (verbose && c->calib_deviation_ns)
        fprintf(f, ", max deviation %llu ns", (unsigned long long)c->calib_deviation_ns);
    if (c->deviation_ns != UINT64_MAX && c->method != GZ_CALIB_NONE)
        fprintf(f, ", \u00b1%llu ns by %s", (unsigned long long)c->deviation_ns,
                band_source(c->method));
    if (verbose) {
        fprintf(f, ", offset %lld ns, drift %.2f ppm, %llu wraps, %llu jumps",
                (long long)c->offset_ns, c->drift_ppm, (unsigned long long)c->wraps,
                (unsigned long long)c->jumps);
    } else {
        if (c->wraps)
            fprintf(f, ", %llu wraps", (unsigned long long)c->wraps);
        if (c->jumps)
            fprintf(f, ", %llu steps in the GPU clock", (unsigned long long)c->jumps);
    }
    char note[160];
    fputs(gz_gpu_clock_drift_note(c->drift_ppm, note, sizeof note), f);
}

static void print_group(FILE *f, const track_group *g, const char *name, bool verbose)
{
    fprintf(f, "gpuzones: track \"%s\"", name);
    if (g->count > 1)
        fprintf(f, " (\u00d7%u)", g->count);
    fprintf(f, ": %llu zones, %llu dropped", (unsigned long long)g->zones,
            (unsigned long long)g->dropped);
    if (g->clock.valid)
        print_clock(f, g, verbose);
    /* Said plainly: these zones may be a whole step off, and the trace
     * marks which (args.clock_doubt_us). */
    if (g->doubt.zones)
        fprintf(f, "; %llu zone%s may be off by up to %.2f ms (a step in the GPU clock "
                   "fell where the data could not tell on which side of %s)",
                (unsigned long long)g->doubt.zones, g->doubt.zones == 1 ? "" : "s",
                (double)g->doubt.most_ns / 1e6, g->doubt.zones == 1 ? "it" : "them");
    fputc('\n', f);
}

static void print_summary(summary_sink *u, const gz_sink_totals *t)
{
    FILE *f = stderr;
    if (!t->zones_produced) {
        /* vulkaninfo, clinfo: one line, not a table of empty tracks. */
        char names[96];
        gz_client_frontend_names(names, sizeof names);
        fprintf(f, "gpuzones: %s loaded; no GPU work was timed\n", names[0] ? names : "gpuzones");
    } else {
        gz_summary_print_zones(u->zones, f);
        for (uint16_t id = 1; id < GZ_MAX_TRACKS; id++)
            fold(u, id);
        for (uint32_t i = 0; i < u->ngroups; i++)
            print_group(f, &u->groups[i], gz_intern_str(u->groups[i].name, NULL), u->verbose);
        if (u->other.count)
            print_group(f, &u->other, "<other names>", u->verbose);
    }
    if (t->items_dropped)
        fprintf(f, "gpuzones: %llu queue items were dropped (queue full: raise "
                   "GPUZONES_QUEUE_ITEMS)\n",
                (unsigned long long)t->items_dropped);
    if (t->batches_too_big)
        fprintf(f, "gpuzones: %llu submissions had more than %u zones and label events for "
                   "the event queue to take at once: their zones are dropped\n",
                (unsigned long long)t->batches_too_big, GZ_QUEUE_BATCH_MAX);
    if (t->names_dropped)
        fprintf(f, "gpuzones: %llu zone names did not fit the name table\n",
                (unsigned long long)t->names_dropped);
    /* One line per trace file written, or one saying there is none. */
    bool any = false;
    uint64_t unwritten = t->zones_written;
    for (int i = 0; i < GZ_TRACE_FILES; i++) {
        const gz_trace_outcome *o = &u->traces[i];
        if (o->closed && o->written && o->path[0]) {
            fprintf(f, "gpuzones: trace written to %s (%llu zones, %llu dropped)\n", o->path,
                    (unsigned long long)t->zones_written, (unsigned long long)t->zones_dropped);
            any = true;
        } else if (o->closed && o->zones_unwritten < unwritten) {
            unwritten = o->zones_unwritten;
        }
    }
    if (!any)
        fprintf(f, "gpuzones: %llu zones, %llu dropped, %llu not written (no trace file)\n",
                (unsigned long long)t->zones_written, (unsigned long long)t->zones_dropped,
                (unsigned long long)unwritten);
    fflush(f);
}

static bool same_totals(const gz_sink_totals *a, const gz_sink_totals *b)
{
    return a->zones_produced == b->zones_produced && a->zones_written == b->zones_written &&
           a->zones_dropped == b->zones_dropped && a->items_dropped == b->items_dropped &&
           a->names_dropped == b->names_dropped && a->batches_too_big == b->batches_too_big;
}

/* The summary so far, when the program has no device or instance left:
 * only once every track has ended (a track still alive has more to say),
 * only when something was timed, and not twice for the same totals. */
static void sum_checkpoint(void *s, const gz_sink_totals *t, bool summary)
{
    summary_sink *u = s;
    if (!summary || !t->zones_produced || (u->printed && same_totals(&u->printed_totals, t)))
        return;
    for (uint16_t id = 1; id < GZ_MAX_TRACKS; id++)
        if (u->live[id].used)
            return;
    print_summary(u, t);
    u->printed = true;
    u->printed_totals = *t;
}

static void sum_close(void *s, const gz_sink_totals *t)
{
    summary_sink *u = s;
    /* Printed already when the last instance went, and nothing since. */
    if (!u->printed || !same_totals(&u->printed_totals, t))
        print_summary(u, t);
    gz_summary_free(u->zones);
    free(u->groups);
    free(u);
}

static const gz_sink_ops summary_ops = {
    .what = "summary",
    .track_new = sum_track_new,
    .track_name = sum_track_name,
    .track_end = sum_track_end,
    .gpu_zone = sum_gpu_zone,
    .calibration = sum_calibration,
    .track_drops = sum_track_drops,
    .close = sum_close,
    .checkpoint = sum_checkpoint,
};

bool gz_summary_sink_open(const gz_config *cfg, const gz_trace_outcome *traces, gz_sink *out)
{
    summary_sink *u = calloc(1, sizeof *u);
    if (!u) {
        gz_log("out of memory for the summary; none is printed");
        return false;
    }
    u->zones = gz_summary_new();
    /* Without it every track shares the "<other names>" line. */
    u->groups = malloc(MAX_GROUPS * sizeof *u->groups);
    u->traces = traces;
    u->verbose = cfg->summary_verbose;
    *out = (gz_sink){.ops = &summary_ops, .self = u};
    return true;
}
