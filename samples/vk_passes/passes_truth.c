/* What the program knows of its own frames, for the tests: the regions it
 * times with timestamps of its own (render pass instances, and dispatches,
 * copies and fills outside them), the zone names the layer must give them
 * and the commands inside, its labels, and the truth file. Without a truth
 * file none of it is kept and no timestamp is written; the regions and
 * commands are still counted. */
#define _GNU_SOURCE
#include "vk_passes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int passes_region_begin(struct passes_app *app, VkCommandBuffer cb, bool pass, const char *fmt, ...)
{
    if (pass)
        app->passes_recorded++;
    else
        app->commands_recorded++;
    struct passes_frame *f = app->frame;
    if (!f)
        return -1;
    if (f->nregions == PASSES_MAX_REGIONS || f->nqueries + 2 > app->nqueries)
        passes_die(2, "too many timed regions in a frame");
    int r = f->nregions++;
    struct passes_region *reg = &f->regions[r];
    memset(reg, 0, sizeof *reg);
    reg->pass = pass;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reg->name, sizeof reg->name, fmt, ap);
    va_end(ap);
    reg->label = f->depth ? f->stack[f->depth - 1] : -1;
    /* One timestamp both ends the command before, if it is still open, and
     * begins this one: two in a row would put one more timestamp between
     * the end of that command's window and the layer's own end of it. */
    reg->begin_query = f->nqueries++;
    if (app->unended >= 0)
        f->regions[app->unended].end_query = reg->begin_query;
    app->unended = -1;
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, app->queries, reg->begin_query);
    if (pass)
        app->open_pass = r;
    return r;
}

static void write_end(struct passes_app *app, VkCommandBuffer cb, int region)
{
    struct passes_region *reg = &app->frame->regions[region];
    reg->end_query = app->frame->nqueries++;
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, app->queries, reg->end_query);
}

/* A render pass instance's region ends now; a command's when what follows
 * it has a timestamp (passes_region_settle). */
void passes_region_end(struct passes_app *app, VkCommandBuffer cb, int region)
{
    if (region < 0)
        return;
    passes_region_settle(app, cb);
    if (app->frame->regions[region].pass) {
        write_end(app, cb, region);
        app->open_pass = -1;
    } else {
        app->unended = region;
    }
}

void passes_region_settle(struct passes_app *app, VkCommandBuffer cb)
{
    if (app->frame && app->unended >= 0)
        write_end(app, cb, app->unended);
    app->unended = -1;
}

void passes_region_command(struct passes_app *app, int region, const char *fmt, ...)
{
    app->commands_recorded++;
    if (region < 0)
        return;
    struct passes_region *reg = &app->frame->regions[region];
    if (reg->ncommands == PASSES_MAX_REGION_COMMANDS)
        passes_die(2, "too many commands in one region (--extra-draws with --truth: at most %d)",
                   PASSES_MAX_REGION_COMMANDS - 8);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reg->commands[reg->ncommands++], PASSES_NAME_MAX, fmt, ap);
    va_end(ap);
}

/* Two timestamps back to back: how far apart the driver puts them now is
 * what each timestamp of the layer's moves a zone's ends away from the
 * sample's own timestamps around the same work. */
void passes_truth_stamp_pair(struct passes_app *app, VkCommandBuffer cb)
{
    struct passes_frame *f = app->frame;
    if (!f)
        return;
    if (f->nqueries + 2 > app->nqueries)
        passes_die(2, "too many timestamps in a frame");
    f->pair_query = f->nqueries;
    f->nqueries += 2;
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, app->queries, f->pair_query);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, app->queries, f->pair_query + 1);
}

void passes_truth_label(struct passes_app *app, bool begin, const char *name)
{
    struct passes_frame *f = app->frame;
    if (!f)
        return;
    if (!begin) {
        if (f->depth == 0)
            passes_die(2, "a label ended that was not begun");
        f->depth--;
        return;
    }
    if (f->nlabels == PASSES_MAX_LABELS || f->depth == PASSES_MAX_LABELS)
        passes_die(2, "too many labels in a frame");
    int l = f->nlabels++;
    snprintf(f->labels[l].name, sizeof f->labels[l].name, "%s", name);
    f->labels[l].parent = f->depth ? f->stack[f->depth - 1] : -1;
    f->stack[f->depth++] = l;
    struct passes_region *pass = app->open_pass >= 0 ? &f->regions[app->open_pass] : NULL;
    if (pass && pass->nlabels_inside < 4)
        pass->labels_inside[pass->nlabels_inside++] = l;
}

/* ---- the device clock ------------------------------------------------------------ */

static int64_t ticks_to_host(const struct passes_app *app, uint64_t ticks)
{
    return (int64_t)((double)(ticks & app->tick_mask) * app->period_ns) + app->clock_offset_ns;
}

/* The offset of the device clock from CLOCK_MONOTONIC, from the calibrated
 * pair with the smallest deviation of a few. */
void passes_calibrate(struct passes_app *app)
{
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT domains_fn =
        (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)vkGetInstanceProcAddr(
            app->instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
    PFN_vkGetCalibratedTimestampsEXT get =
        (PFN_vkGetCalibratedTimestampsEXT)vkGetDeviceProcAddr(app->device, "vkGetCalibratedTimestampsEXT");
    VkTimeDomainEXT domains[8];
    uint32_t n = 8;
    bool device = false, mono = false;
    if (domains_fn && get && domains_fn(app->phys, &n, domains) >= 0) {
        for (uint32_t i = 0; i < n; i++) {
            device = device || domains[i] == VK_TIME_DOMAIN_DEVICE_EXT;
            mono = mono || domains[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
        }
    }
    if (!device || !mono) {
        app->clock_source = "assumed";
        return;
    }
    const VkStructureType info_type = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT;
    VkCalibratedTimestampInfoEXT info[2] = {
        {.sType = info_type, .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT},
        {.sType = info_type, .timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT},
    };
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t ts[2], dev;
        PASSES_CHECK(get(app->device, 2, info, ts, &dev));
        if (dev < best) {
            best = dev;
            app->clock_offset_ns = (int64_t)ts[1] - (int64_t)((double)(ts[0] & app->tick_mask) * app->period_ns);
        }
    }
}

/* The frame's own timestamps, once its fence has signalled. */
void passes_read_timestamps(struct passes_app *app)
{
    struct passes_frame *f = app->frame;
    if (!f || f->nqueries == 0)
        return;
    uint64_t ticks[2 * PASSES_MAX_REGIONS + 2];
    PASSES_CHECK(vkGetQueryPoolResults(app->device, app->queries, 0, f->nqueries, sizeof ticks, ticks,
                                       sizeof ticks[0], VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    for (int r = 0; r < f->nregions; r++) {
        f->regions[r].begin_ns = (uint64_t)ticks_to_host(app, ticks[f->regions[r].begin_query]);
        f->regions[r].end_ns = (uint64_t)ticks_to_host(app, ticks[f->regions[r].end_query]);
    }
    int64_t gap = ticks_to_host(app, ticks[f->pair_query + 1]) - ticks_to_host(app, ticks[f->pair_query]);
    f->stamp_gap_ns = gap > 0 ? (uint64_t)gap : 0;
}

/* ---- the truth file ----------------------------------------------------------------- */

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

/* args.detail of its zone holds these, as key=value */
static void put_detail(FILE *f, const struct passes_region *r)
{
    if (r->pass) {
        fprintf(f, "{\"area\": \"%s\", \"formats\": ", r->area);
        put_string(f, r->formats);
        fprintf(f, "}");
    } else if (r->groups[0]) {
        fprintf(f, "{\"groups\": \"%s\"", r->groups);
        if (r->pipeline[0]) {
            fprintf(f, ", \"pipeline\": ");
            put_string(f, r->pipeline);
        }
        fprintf(f, "}");
    } else {
        fprintf(f, "{}");
    }
}

static void put_frame(FILE *f, const struct passes_frame *fr, unsigned index, bool last)
{
    fprintf(f, "  {\"index\": %u, \"host_submit_ns\": %llu, \"host_done_ns\": %llu, \"stamp_gap_ns\": %llu,\n"
               "   \"labels\": [",
            index, (unsigned long long)fr->submit_ns, (unsigned long long)fr->done_ns,
            (unsigned long long)fr->stamp_gap_ns);
    for (int l = 0; l < fr->nlabels; l++) {
        fprintf(f, "%s{\"name\": ", l ? ", " : "");
        put_string(f, fr->labels[l].name);
        fprintf(f, ", \"parent\": %d}", fr->labels[l].parent);
    }
    fprintf(f, "],\n   \"regions\": [\n");
    for (int r = 0; r < fr->nregions; r++) {
        const struct passes_region *reg = &fr->regions[r];
        fprintf(f, "    {\"level\": \"%s\", \"name\": ", reg->pass ? "pass" : "command");
        put_string(f, reg->name);
        fprintf(f, ", \"detail\": ");
        put_detail(f, reg);
        fprintf(f, ", \"label\": %d, \"labels_inside\": [", reg->label);
        for (int l = 0; l < reg->nlabels_inside; l++)
            fprintf(f, "%s%d", l ? ", " : "", reg->labels_inside[l]);
        fprintf(f, "], \"begin_ns\": %llu, \"end_ns\": %llu, \"commands\": [", (unsigned long long)reg->begin_ns,
                (unsigned long long)reg->end_ns);
        for (int c = 0; c < reg->ncommands; c++) {
            if (c)
                fprintf(f, ", ");
            put_string(f, reg->commands[c]);
        }
        fprintf(f, "]}%s\n", r + 1 < fr->nregions ? "," : "");
    }
    fprintf(f, "   ]}%s\n", last ? "" : ",");
}

bool passes_write_truth(const struct passes_app *app)
{
    FILE *f = fopen(app->opt.truth, "w");
    if (!f) {
        fprintf(stderr, "gz-sample-vk-passes: cannot write %s\n", app->opt.truth);
        return false;
    }
    unsigned nframes = app->opt.warmup + app->opt.frames;
    fprintf(f, "{\n \"program\": \"gz-sample-vk-passes\",\n \"pid\": %d,\n \"instances\": 1,\n \"device\": ",
            (int)getpid());
    put_string(f, app->props.deviceName);
    fprintf(f, ",\n \"family\": %u,\n \"queue_index\": 0,\n \"clock\": \"%s\",\n", app->family,
            app->clock_source);
    fprintf(f, " \"cmdbuf\": \"Frame commands\",\n");
    fprintf(f, " \"frames\": [\n");
    for (unsigned i = 0; i < nframes; i++)
        put_frame(f, &app->truth[i], i, i + 1 == nframes);
    fprintf(f, " ],\n \"messages_total\": %d,\n \"messages\": [\n", app->messages_total);
    int nm = app->nmessages < PASSES_MAX_MESSAGES ? app->nmessages : PASSES_MAX_MESSAGES;
    for (int i = 0; i < nm; i++) {
        const struct passes_message *m = &app->messages[i];
        fprintf(f, "  {\"severity\": \"%s\", \"id\": ", m->severity);
        put_string(f, m->id);
        fprintf(f, ", \"text\": ");
        put_string(f, m->text);
        fprintf(f, "}%s\n", i + 1 < nm ? "," : "");
    }
    fprintf(f, " ]\n}\n");
    return fclose(f) == 0;
}
