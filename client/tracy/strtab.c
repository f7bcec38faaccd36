/* The bounded string table (see gz_tracy_strtab.h): FNV-1a hashes, linear
 * probing, an index kept at most half full. */
#include <stdlib.h>
#include <string.h>

#include "gz_tracy_strtab.h"

static uint32_t hash(const void *s, size_t len)
{
    const uint8_t *p = s;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

void gz_tracy_strtab_init(gz_tracy_strtab *t, uint32_t max, size_t max_bytes)
{
    memset(t, 0, sizeof *t);
    t->max = max;
    t->max_bytes = max_bytes;
}

void gz_tracy_strtab_free(gz_tracy_strtab *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        free(t->e[i].s);
    free(t->e);
    free(t->index);
    memset(t, 0, sizeof *t);
}

static uint32_t lookup(const gz_tracy_strtab *t, const void *s, size_t len, uint32_t h,
                       uint32_t *slot)
{
    if (!t->index)
        return 0;
    for (uint32_t i = h & t->index_mask;; i = (i + 1) & t->index_mask) {
        uint32_t id = t->index[i];
        if (!id) {
            *slot = i;
            return 0;
        }
        const gz_tracy_strtab_entry *e = &t->e[id - 1];
        if (e->hash == h && e->len == len && !memcmp(e->s, s, len))
            return id;
    }
}

uint32_t gz_tracy_strtab_find(const gz_tracy_strtab *t, const void *s, size_t len)
{
    uint32_t slot;
    return lookup(t, s, len, hash(s, len), &slot);
}

static bool grow(gz_tracy_strtab *t)
{
    if (t->n + 1 > t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        gz_tracy_strtab_entry *e = realloc(t->e, cap * sizeof *e);
        if (!e)
            return false;
        t->e = e;
        t->cap = cap;
    }
    uint32_t size = t->index ? t->index_mask + 1 : 0;
    if ((t->n + 1) * 2 <= size)
        return true;
    uint32_t nsize = size ? size * 2 : 128;
    uint32_t *idx = calloc(nsize, sizeof *idx);
    if (!idx)
        return false;
    for (uint32_t id = 1; id <= t->n; id++) {
        uint32_t i = t->e[id - 1].hash & (nsize - 1);
        while (idx[i])
            i = (i + 1) & (nsize - 1);
        idx[i] = id;
    }
    free(t->index);
    t->index = idx;
    t->index_mask = nsize - 1;
    return true;
}

uint32_t gz_tracy_strtab_put(gz_tracy_strtab *t, const void *s, size_t len, bool *added)
{
    if (added)
        *added = false;
    uint32_t h = hash(s, len), slot = 0;
    uint32_t id = lookup(t, s, len, h, &slot);
    if (id)
        return id;
    if (t->n >= t->max || t->bytes + len > t->max_bytes || len > UINT32_MAX || !grow(t))
        return 0;
    char *copy = malloc(len + 1);
    if (!copy)
        return 0;
    if (len)
        memcpy(copy, s, len);
    copy[len] = 0;
    lookup(t, s, len, h, &slot); /* the index may have been rebuilt */
    t->e[t->n] = (gz_tracy_strtab_entry){copy, (uint32_t)len, h, 0};
    t->index[slot] = ++t->n;
    t->bytes += len;
    if (added)
        *added = true;
    return t->n;
}

gz_tracy_strtab_entry *gz_tracy_strtab_get(const gz_tracy_strtab *t, uint64_t id)
{
    return id >= 1 && id <= t->n ? &t->e[id - 1] : NULL;
}
