/* Names for render pass and command zones, made by the worker from what
 * the recording kept of each (a gz_vk_desc): the program's debug name where
 * it gave one, else what identifies the work ("render pass 1920×1080
 * B8G8R8A8_SRGB + D32_SFLOAT", "dispatch 64×64×1 Blur", "draw indexed 36000
 * ×12 Shadow", "copy buffer→image 256×256"), and the same facts as
 * key=value details for the zone's arguments. A program records the same
 * work frame after frame: each queue keeps the names it made last, so that
 * formatting and interning happen once per different description. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gz_format_names.h"
#include "gz_intern.h"
#include "gz_vk_internal.h"

#define TIMES "\u00d7"
#define TO "\u2192"

static const char *format_name(uint32_t f, char *buf, size_t size)
{
#ifdef GZ_FORMAT_NAMES
    switch (f) {
#define NAME(value, name)                                                                          \
    case value:                                                                                    \
        return name;
        GZ_FORMAT_NAMES(NAME)
#undef NAME
    default:
        break;
    }
#endif
    snprintf(buf, size, "format %u", f);
    return buf;
}

/* "4 MiB", "1.5 KiB", "256 B". */
static void size_text(uint64_t bytes, char *out, size_t size)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        snprintf(out, size, "%llu B", (unsigned long long)bytes);
        return;
    }
    uint32_t u = 0;
    uint64_t scale = 1024;
    while (u + 1 < sizeof units / sizeof units[0] && bytes >= scale * 1024) {
        scale *= 1024;
        u++;
    }
    if (bytes % scale == 0)
        snprintf(out, size, "%llu %s", (unsigned long long)(bytes / scale), units[u]);
    else
        snprintf(out, size, "%.1f %s", (double)bytes / (double)scale, units[u]);
}

/* Appends to a fixed buffer, never past its end. */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    if (t->len + 1 >= t->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len = t->len + (size_t)n < t->cap ? t->len + (size_t)n : t->cap - 1;
}

/* " Blur", " pipeline #3", or nothing; and the detail's pipeline=. */
static void pipeline_part(const gz_vk_desc *d, text *name, text *detail)
{
    size_t len = 0;
    const char *s = d->name ? gz_intern_str(d->name, &len) : NULL;
    if (s && len) {
        put(name, " %.*s", (int)len, s);
        put(detail, " pipeline=%.*s", (int)len, s);
    } else if (d->pipeline) {
        put(name, " pipeline #%u", d->pipeline);
        put(detail, " pipeline=#%u", d->pipeline);
    }
}

static void pass_name(const gz_vk_desc *d, const char *what, text *name, text *detail)
{
    size_t len = 0;
    const char *given = d->name ? gz_intern_str(d->name, &len) : NULL;
    char buf[32];
    if (given && len)
        put(name, "%.*s", (int)len, given);
    else
        put(name, "%s %u" TIMES "%u", what, d->a, d->b);
    put(detail, "area=%ux%u formats=", d->a, d->b);
    uint32_t shown = d->nformats < GZ_VK_DESC_FORMATS ? d->nformats : GZ_VK_DESC_FORMATS;
    for (uint32_t i = 0; i < shown; i++) {
        const char *f = format_name(d->formats[i], buf, sizeof buf);
        if (!(given && len))
            put(name, "%s%s", i ? " + " : " ", f);
        put(detail, "%s%s", i ? "," : "", f);
    }
    if (d->nformats > shown) {
        if (!(given && len))
            put(name, " + %u more", d->nformats - shown);
        put(detail, ",+%u", d->nformats - shown);
    }
}

static void describe(const gz_vk_desc *d, text *name, text *detail)
{
    char size[32];
    uint64_t bytes = (uint64_t)d->b << 32 | d->a;
    switch (d->type) {
    case GZ_VK_DESC_RENDER_PASS:
        pass_name(d, "render pass", name, detail);
        return;
    case GZ_VK_DESC_RENDERING:
        pass_name(d, "rendering", name, detail);
        return;
    case GZ_VK_DESC_DISPATCH:
        put(name, "dispatch %u" TIMES "%u" TIMES "%u", d->a, d->b, d->c);
        put(detail, "groups=%ux%ux%u", d->a, d->b, d->c);
        break;
    case GZ_VK_DESC_DISPATCH_INDIRECT:
        put(name, "dispatch indirect");
        put(detail, "indirect=1");
        break;
    case GZ_VK_DESC_DRAW:
        put(name, "draw %u " TIMES "%u", d->a, d->b);
        put(detail, "vertices=%u instances=%u", d->a, d->b);
        break;
    case GZ_VK_DESC_DRAW_INDEXED:
        put(name, "draw indexed %u " TIMES "%u", d->a, d->b);
        put(detail, "indices=%u instances=%u", d->a, d->b);
        break;
    case GZ_VK_DESC_DRAW_INDIRECT:
        put(name, "draw indirect " TIMES "%u", d->a);
        put(detail, "draws=%u", d->a);
        break;
    case GZ_VK_DESC_DRAW_INDEXED_INDIRECT:
        put(name, "draw indexed indirect " TIMES "%u", d->a);
        put(detail, "draws=%u", d->a);
        break;
    case GZ_VK_DESC_DRAW_INDIRECT_COUNT:
        put(name, "draw indirect count");
        put(detail, "max_draws=%u", d->a);
        break;
    case GZ_VK_DESC_DRAW_INDEXED_INDIRECT_COUNT:
        put(name, "draw indexed indirect count");
        put(detail, "max_draws=%u", d->a);
        break;
    case GZ_VK_DESC_COPY_BUFFER:
        size_text(bytes, size, sizeof size);
        put(name, "copy buffer" TO "buffer %s", size);
        put(detail, "bytes=%llu", (unsigned long long)bytes);
        return;
    case GZ_VK_DESC_COPY_BUFFER_IMAGE:
    case GZ_VK_DESC_COPY_IMAGE_BUFFER:
    case GZ_VK_DESC_COPY_IMAGE:
        put(name, "copy %s %u" TIMES "%u",
            d->type == GZ_VK_DESC_COPY_BUFFER_IMAGE   ? "buffer" TO "image"
            : d->type == GZ_VK_DESC_COPY_IMAGE_BUFFER ? "image" TO "buffer"
                                                      : "image" TO "image",
            d->a, d->b);
        put(detail, "extent=%ux%u", d->a, d->b);
        return;
    case GZ_VK_DESC_BLIT:
        put(name, "blit %u" TIMES "%u" TO "%u" TIMES "%u", d->a, d->b, d->c, d->d);
        put(detail, "from=%ux%u to=%ux%u", d->a, d->b, d->c, d->d);
        return;
    case GZ_VK_DESC_RESOLVE:
        put(name, "resolve %u" TIMES "%u", d->a, d->b);
        put(detail, "extent=%ux%u", d->a, d->b);
        return;
    case GZ_VK_DESC_CLEAR_COLOR:
        put(name, "clear color image");
        return;
    case GZ_VK_DESC_CLEAR_DEPTH:
        put(name, "clear depth/stencil image");
        return;
    case GZ_VK_DESC_CLEAR_ATTACHMENTS:
        put(name, "clear attachments");
        put(detail, "attachments=%u", d->a);
        return;
    case GZ_VK_DESC_FILL:
        if (bytes == UINT64_MAX) {
            put(name, "fill buffer");
            put(detail, "bytes=whole");
        } else {
            size_text(bytes, size, sizeof size);
            put(name, "fill buffer %s", size);
            put(detail, "bytes=%llu", (unsigned long long)bytes);
        }
        return;
    case GZ_VK_DESC_UPDATE:
        size_text(d->a, size, sizeof size);
        put(name, "update buffer %s", size);
        put(detail, "bytes=%u", d->a);
        return;
    default:
        put(name, "command");
        return;
    }
    pipeline_part(d, name, detail);
}

static uint64_t hash_desc(const gz_vk_desc *d)
{
    const unsigned char *p = (const unsigned char *)d;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof *d; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

void gz_vk_describe(gz_vk_queue *q, const gz_vk_desc *d, uint32_t *name, uint32_t *detail)
{
    struct gz_vk_described *slot = &q->described[hash_desc(d) % GZ_VK_DESCRIBED];
    if (slot->name && !memcmp(&slot->desc, d, sizeof *d)) {
        *name = slot->name;
        *detail = slot->detail;
        return;
    }
    char nbuf[256], dbuf[256];
    text n = {nbuf, 0, sizeof nbuf}, t = {dbuf, 0, sizeof dbuf};
    nbuf[0] = dbuf[0] = '\0';
    describe(d, &n, &t);
    *name = gz_intern(nbuf, n.len);
    *detail = t.len ? gz_intern(dbuf, t.len) : 0;
    slot->desc = *d;
    slot->name = *name;
    slot->detail = *detail;
}
