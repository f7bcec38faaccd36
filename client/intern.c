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
/* open addressing: slot → id (0 = empty) */
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
    return &pages[id >> PAGE_BITS][id & (PAGE_SIZE - 1)];
}

static bool grow_table(void)
{
    uint32_t cap = table_cap ? table_cap * 2 : 1024;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (uint32_t i = 0; i < table_cap; i++) {
        uint32_t id = table[i];
        if (!id)
            continue;
        uint32_t slot = (uint32_t)entry_of(id)->hash & (cap - 1);
        while (t[slot])
            slot = (slot + 1) & (cap - 1);
        t[slot] = id;
    }
    free(table);
    table = t;
    table_cap = cap;
    return true;
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
    table[slot] = id;
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
    pthread_mutex_lock(&lock);
    uint32_t id = find_or_add(s, len, h);
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
    free(table);
    table = NULL;
    table_cap = 0;
    next_id = 1;
    bytes_used = 0;
    dropped = 0;
    pthread_mutex_unlock(&lock);
}
