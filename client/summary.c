#include <stdlib.h>
#include <string.h>

#include "gz_intern.h"
#include "gz_item.h"
#include "gz_stats.h"
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

static int by_total_desc(const void *a, const void *b)
{
    const row *x = *(const row *const *)a, *y = *(const row *const *)b;
    if (x->stats.total_ns != y->stats.total_ns)
        return x->stats.total_ns < y->stats.total_ns ? 1 : -1;
    return x->name < y->name ? -1 : x->name > y->name;
}

static const char *kind_name(unsigned kind)
{
    static const char *const names[] = {"submit", "cmdbuf", "label", "zone", "frame", "flush"};
    return kind < sizeof names / sizeof *names ? names[kind] : "?";
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
     * (GPU frame zones: presents and swaps). */
    for (uint32_t i = 0; i < s->nrows; i++) {
        const row *r = sorted[i];
        if (r->kind != GZ_ZONE_FRAME || r->name == OTHER_NAME)
            continue;
        size_t len;
        const char *name = gz_intern_str(r->name, &len);
        fprintf(f, "gpuzones: GPU time per frame (\"%.40s\", %llu frames): p50 %.3f ms, p95 %.3f ms, "
                   "max %.3f ms\n",
                name, (unsigned long long)r->stats.count,
                (double)gz_stats_quantile(&r->stats, 0.5) / 1e6,
                (double)gz_stats_quantile(&r->stats, 0.95) / 1e6, (double)r->stats.max_ns / 1e6);
    }
    fprintf(f, "gpuzones: GPU zones (times in ms)\n");
    fprintf(f, "%-40s %-6s %9s %11s %11s %11s %11s %11s\n", "zone", "kind", "count", "total",
            "mean", "p50", "p95", "max");
    for (uint32_t i = 0; i < s->nrows; i++) {
        const row *r = sorted[i];
        size_t len;
        const char *name = r->name == OTHER_NAME ? "<other names>" : gz_intern_str(r->name, &len);
        if (!*name)
            name = "<unnamed>";
        /* Names are the app's text: a control character (an escape
         * sequence, a newline) must not reach the user's terminal. */
        char shown[41];
        size_t n = 0;
        for (; n < sizeof shown - 1 && name[n]; n++)
            shown[n] = (unsigned char)name[n] < 0x20 || name[n] == 0x7f ? '?' : name[n];
        shown[n] = '\0';
        fprintf(f, "%-40s %-6s %9llu", shown, kind_name(r->kind),
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
