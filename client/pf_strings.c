#include <stdlib.h>
#include <string.h>

#include "gz_pf_strings.h"

/* Bounds: 4 MiB of strings, 64 Ki of them (names are at most a few KiB,
 * and a program that puts a counter in its labels makes new ones forever). */
#define MAX_BYTES (4u << 20)
#define MAX_STRINGS (1u << 16)

typedef struct entry {
    uint64_t hash;
    uint32_t off, len;
    uint8_t kind;
} entry;

/* The ids last found, by where the caller's string lies: the same few
 * names and categories come with event after event, mostly from the same
 * memory. A hit is checked against the table's bytes, so memory that now
 * holds another string only misses. */
#define RECENT 64u
typedef struct recent {
    const char *s;
    uint32_t len, id;
} recent;

struct gz_pf_strings {
    char *bytes;
    uint32_t nbytes, bytes_cap;
    entry *entries; /* id - 1 → entry */
    uint32_t n;
    uint32_t *slots; /* open addressing: id, 0 = empty; 2 * MAX_STRINGS of them */
    recent recent[RECENT];
};

#define SLOTS (2 * MAX_STRINGS)

static recent *recent_of(gz_pf_strings *st, const char *s, gz_pf_kind kind)
{
    uintptr_t k = (uintptr_t)s >> 3 ^ (uintptr_t)kind * 0x9e3779b9u;
    return &st->recent[(k ^ k >> 7) & (RECENT - 1)];
}

static uint64_t hash_of(gz_pf_kind kind, const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)kind; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

gz_pf_strings *gz_pf_strings_new(void)
{
    gz_pf_strings *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->entries = malloc(MAX_STRINGS * sizeof *st->entries);
    st->slots = calloc(SLOTS, sizeof *st->slots);
    if (!st->entries || !st->slots) {
        gz_pf_strings_free(st);
        return NULL;
    }
    return st;
}

void gz_pf_strings_free(gz_pf_strings *st)
{
    if (!st)
        return;
    free(st->bytes);
    free(st->entries);
    free(st->slots);
    free(st);
}

static void start_afresh(gz_pf_strings *st)
{
    st->n = 0;
    st->nbytes = 0;
    memset(st->slots, 0, SLOTS * sizeof *st->slots);
    memset(st->recent, 0, sizeof st->recent);
}

/* Room for len more bytes, the arena doubling up to MAX_BYTES. */
static bool bytes_room(gz_pf_strings *st, size_t len)
{
    if (len > MAX_BYTES - st->nbytes)
        return false;
    if (st->nbytes + len <= st->bytes_cap)
        return true;
    uint32_t cap = st->bytes_cap ? st->bytes_cap : 4096;
    while (cap < st->nbytes + len)
        cap *= 2;
    if (cap > MAX_BYTES)
        cap = MAX_BYTES;
    char *b = realloc(st->bytes, cap);
    if (!b)
        return false;
    st->bytes = b;
    st->bytes_cap = cap;
    return true;
}

static uint32_t lookup(gz_pf_strings *st, gz_pf_kind kind, const char *s, size_t len, bool *reset)
{
    uint64_t h = hash_of(kind, s, len);
    uint32_t slot = (uint32_t)h & (SLOTS - 1);
    for (uint32_t id; (id = st->slots[slot]); slot = (slot + 1) & (SLOTS - 1)) {
        const entry *e = &st->entries[id - 1];
        if (e->hash == h && e->kind == kind && e->len == len &&
            !memcmp(st->bytes + e->off, s, len))
            return id;
    }
    if (st->n == MAX_STRINGS || !bytes_room(st, len)) {
        if (!st->n)
            return 0; /* nothing to free: out of memory */
        start_afresh(st);
        *reset = true;
        if (!bytes_room(st, len))
            return 0;
        slot = (uint32_t)h & (SLOTS - 1);
    }
    entry *e = &st->entries[st->n];
    *e = (entry){.hash = h, .off = st->nbytes, .len = (uint32_t)len, .kind = (uint8_t)kind};
    if (len)
        memcpy(st->bytes + st->nbytes, s, len);
    st->nbytes += (uint32_t)len;
    st->slots[slot] = ++st->n;
    return st->n;
}

uint32_t gz_pf_strings_id(gz_pf_strings *st, gz_pf_kind kind, const char *s, size_t len,
                          bool *reset)
{
    recent *r = recent_of(st, s, kind);
    if (r->s == s && r->len == len && r->id && r->id <= st->n) {
        const entry *e = &st->entries[r->id - 1];
        if (e->kind == kind && e->len == len && !memcmp(st->bytes + e->off, s, len))
            return r->id;
    }
    uint32_t id = lookup(st, kind, s, len, reset);
    if (id)
        *r = (recent){.s = s, .len = (uint32_t)len, .id = id};
    return id;
}

const char *gz_pf_strings_str(const gz_pf_strings *st, uint32_t id, size_t *len)
{
    const entry *e = &st->entries[id - 1];
    *len = e->len;
    return st->bytes + e->off;
}

static bool sent_grow(gz_pf_sent *s)
{
    uint32_t cap = s->cap ? s->cap * 2 : 64;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (uint32_t i = 0; i < s->cap; i++) {
        uint32_t id = s->slots[i];
        if (!id)
            continue;
        uint32_t k = (id * 2654435761u) & (cap - 1);
        while (slots[k])
            k = (k + 1) & (cap - 1);
        slots[k] = id;
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return true;
}

bool gz_pf_sent_add(gz_pf_sent *s, uint32_t id)
{
    if (s->cap) {
        for (uint32_t k = (id * 2654435761u) & (s->cap - 1); s->slots[k];
             k = (k + 1) & (s->cap - 1))
            if (s->slots[k] == id)
                return false;
    }
    /* At most half full; ids never exceed MAX_STRINGS, so neither does n. */
    if ((s->n + 1) * 2 > s->cap && !sent_grow(s))
        return true;
    uint32_t k = (id * 2654435761u) & (s->cap - 1);
    while (s->slots[k])
        k = (k + 1) & (s->cap - 1);
    s->slots[k] = id;
    s->n++;
    return true;
}

void gz_pf_sent_clear(gz_pf_sent *s)
{
    if (s->slots)
        memset(s->slots, 0, s->cap * sizeof *s->slots);
    s->n = 0;
}

void gz_pf_sent_free(gz_pf_sent *s)
{
    free(s->slots);
    *s = (gz_pf_sent){0};
}
