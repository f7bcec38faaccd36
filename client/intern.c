#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gz_client.h"
#include "gz_intern.h"

/* Bounds: a program that puts a frame number in every label must not grow
 * us without limit. Past these, new names become "<name dropped>". */
#define MAX_NAMES (1u << 20)
#define MAX_BYTES (64u << 20)
#define MAX_NAME_LEN 4096u
#define PAGE_BITS 12
#define PAGE_SIZE (1u << PAGE_BITS)

typedef struct entry {
    const char *str;
    uint32_t len;
    uint64_t hash;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* id → entry, in pages that never move once allocated. */
static entry *pages[MAX_NAMES / PAGE_SIZE];
static uint32_t next_id = 1;
static uint64_t bytes_used;
static uint64_t dropped;
/* Open addressing: slot → id (0 = empty). The table the lock-free lookups
 * read is published whole (slots and capacity together); a grown table
 * replaces it, and the old one stays allocated until gz_intern_reset, so a
 * reader that still holds it reads valid, if older, slots. */
typedef struct table_view {
    uint32_t *slots;
    uint32_t cap;
    struct table_view *retired; /* the one it replaced */
} table_view;
static table_view *view; /* atomic */
static uint32_t *table;
static uint32_t table_cap;

static const char dropped_name[] = "<name dropped>";

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static entry *entry_of(uint32_t id)
{
    return &__atomic_load_n(&pages[id >> PAGE_BITS], __ATOMIC_ACQUIRE)[id & (PAGE_SIZE - 1)];
}

static bool grow_table(void)
{
    uint32_t cap = table_cap ? table_cap * 2 : 1024;
    uint32_t *t = calloc(cap, sizeof *t);
    table_view *v = malloc(sizeof *v);
    if (!t || !v) {
        free(t);
        free(v);
        return false;
    }
    for (uint32_t i = 0; i < table_cap; i++) {
        uint32_t id = table[i];
        if (!id)
            continue;
        uint32_t slot = (uint32_t)entry_of(id)->hash & (cap - 1);
        while (t[slot])
            slot = (slot + 1) & (cap - 1);
        t[slot] = id;
    }
    table = t;
    table_cap = cap;
    *v = (table_view){.slots = t, .cap = cap, .retired = view};
    __atomic_store_n(&view, v, __ATOMIC_RELEASE);
    return true;
}

/* The name's id if it is interned already, without the lock (the hot path:
 * the same label names come back every frame); 0 when not found. */
static uint32_t find_published(const char *s, size_t len, uint64_t h)
{
    const table_view *v = __atomic_load_n(&view, __ATOMIC_ACQUIRE);
    if (!v)
        return 0;
    for (uint32_t slot = (uint32_t)h & (v->cap - 1);; slot = (slot + 1) & (v->cap - 1)) {
        uint32_t id = __atomic_load_n(&v->slots[slot], __ATOMIC_ACQUIRE);
        if (!id)
            return 0;
        const entry *e = entry_of(id);
        if (e->hash == h && e->len == len && !memcmp(e->str, s, len))
            return id;
    }
}

/* Under lock: finds or adds the name; 0 when it does not fit. */
static uint32_t find_or_add(const char *s, size_t len, uint64_t h)
{
    if (table_cap) {
        for (uint32_t slot = (uint32_t)h & (table_cap - 1);; slot = (slot + 1) & (table_cap - 1)) {
            uint32_t id = table[slot];
            if (!id)
                break;
            entry *e = entry_of(id);
            if (e->hash == h && e->len == len && !memcmp(e->str, s, len))
                return id;
        }
    }
    if (next_id >= MAX_NAMES || bytes_used + len + 1 > MAX_BYTES)
        return 0;
    if ((uint64_t)(next_id + 1) * 2 > table_cap && !grow_table())
        return 0;
    uint32_t id = next_id;
    entry **page = &pages[id >> PAGE_BITS];
    if (!*page) {
        entry *fresh = calloc(PAGE_SIZE, sizeof(entry));
        if (!fresh)
            return 0;
        __atomic_store_n(page, fresh, __ATOMIC_RELEASE);
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, s, len);
    copy[len] = '\0';
    *entry_of(id) = (entry){copy, (uint32_t)len, h};
    uint32_t slot = (uint32_t)h & (table_cap - 1);
    while (table[slot])
        slot = (slot + 1) & (table_cap - 1);
    /* Published after its entry: a lock-free reader that sees the id sees
     * the name. */
    __atomic_store_n(&table[slot], id, __ATOMIC_RELEASE);
    next_id++;
    bytes_used += len + 1;
    return id;
}

uint32_t gz_intern(const char *s, size_t len)
{
    if (!s || !len)
        return 0;
    if (len > MAX_NAME_LEN)
        len = MAX_NAME_LEN; /* a megabyte label keeps its first 4 KiB */
    uint64_t h = hash_bytes(s, len);
    uint32_t id = find_published(s, len, h);
    if (id)
        return id;
    pthread_mutex_lock(&lock);
    id = find_or_add(s, len, h);
    if (!id) {
        dropped++;
        id = find_or_add(dropped_name, sizeof dropped_name - 1,
                         hash_bytes(dropped_name, sizeof dropped_name - 1));
    }
    pthread_mutex_unlock(&lock);
    return id;
}

uint32_t gz_intern_cstr(const char *s)
{
    return s ? gz_intern(s, strlen(s)) : 0;
}

const char *gz_intern_str(uint32_t id, size_t *len)
{
    entry *page = id ? __atomic_load_n(&pages[id >> PAGE_BITS], __ATOMIC_ACQUIRE) : NULL;
    if (!page || id >= MAX_NAMES || !page[id & (PAGE_SIZE - 1)].str) {
        if (len)
            *len = 0;
        return "";
    }
    const entry *e = &page[id & (PAGE_SIZE - 1)];
    if (len)
        *len = e->len;
    return e->str;
}

uint64_t gz_intern_dropped(void)
{
    pthread_mutex_lock(&lock);
    uint64_t d = dropped;
    pthread_mutex_unlock(&lock);
    return d;
}

void gz_intern_reset(void)
{
    pthread_mutex_lock(&lock);
    for (uint32_t id = 1; id < next_id; id++)
        free((void *)entry_of(id)->str);
    for (size_t p = 0; p < MAX_NAMES / PAGE_SIZE; p++) {
        free(pages[p]);
        pages[p] = NULL;
    }
    for (table_view *v = __atomic_exchange_n(&view, NULL, __ATOMIC_ACQ_REL); v;) {
        table_view *older = v->retired;
        free(v->slots);
        free(v);
        v = older;
    }
    table = NULL;
    table_cap = 0;
    next_id = 1;
    bytes_used = 0;
    dropped = 0;
    pthread_mutex_unlock(&lock);
}
