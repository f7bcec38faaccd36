/* What each command buffer holds, so that its commands can be counted each
 * time it is executed rather than once when recorded: a record per handle
 * (the commands of each kind, the secondaries it executes), in an
 * open-addressing table under one lock. A record lives from the command
 * buffer's allocation to its freeing (or its pool's, or its device's
 * destruction); vkBeginCommandBuffer empties it, as it empties the command
 * buffer. Recording into a command buffer is externally synchronised by the
 * application, so a record's counts are written by one thread at a time and
 * read at submission, when its recording is over. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count_layer.h"

typedef struct record {
    VkCommandBuffer handle;
    const void *device_key; /* the dispatch key of its device */
    VkCommandPool pool;
    uint32_t counts[GZC_NRECORDED];
    uint32_t nsecondaries, cap;
    VkCommandBuffer *secondaries;
} record;

/* Slots hold NULL (never used), TOMBSTONE (freed) or a record. */
#define TOMBSTONE ((record *)1)
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static record **slots;
static size_t nslots, nused; /* nused counts records and tombstones */

/* Secondaries executing secondaries (VK_EXT_nested_command_buffer) nest a
 * few levels at most; a cycle would be invalid usage, cut here. */
#define MAX_DEPTH 8

static size_t hash(VkCommandBuffer cb)
{
    uint64_t h = (uint64_t)(uintptr_t)cb;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)h;
}

static void warn_memory(void)
{
    static bool said;
    if (!said)
        fprintf(stderr, "gzcount: out of memory: some command buffers are not counted\n");
    said = true;
}

/* The slot of cb's record, or NULL. Under the lock. */
static record **find(VkCommandBuffer cb)
{
    if (!nslots)
        return NULL;
    for (size_t i = hash(cb) & (nslots - 1);; i = (i + 1) & (nslots - 1)) {
        if (!slots[i])
            return NULL;
        if (slots[i] != TOMBSTONE && slots[i]->handle == cb)
            return &slots[i];
    }
}

static void put(record **table, size_t n, record *r)
{
    size_t i = hash(r->handle) & (n - 1);
    while (table[i])
        i = (i + 1) & (n - 1);
    table[i] = r;
}

/* Room for one more record, tombstones dropped. Under the lock. */
static bool make_room(void)
{
    if ((nused + 1) * 2 <= nslots)
        return true;
    size_t n = nslots ? nslots : 256;
    size_t live = 0;
    for (size_t i = 0; i < nslots; i++)
        live += slots[i] && slots[i] != TOMBSTONE;
    while ((live + 1) * 4 > n)
        n *= 2;
    record **table = calloc(n, sizeof *table);
    if (!table)
        return false;
    for (size_t i = 0; i < nslots; i++)
        if (slots[i] && slots[i] != TOMBSTONE)
            put(table, n, slots[i]);
    free(slots);
    slots = table;
    nslots = n;
    nused = live;
    return true;
}

/* cb's record, made if there is none. Under the lock. */
static record *get(VkCommandBuffer cb)
{
    record **at = find(cb);
    if (at)
        return *at;
    record *r = calloc(1, sizeof *r);
    if (!r || !make_room()) {
        free(r);
        warn_memory();
        return NULL;
    }
    r->handle = cb;
    r->device_key = *(void *const *)cb;
    put(slots, nslots, r);
    nused++;
    return r;
}

static void drop(record **at)
{
    free((*at)->secondaries);
    free(*at);
    *at = TOMBSTONE;
}

void gzc_cmdbuf_allocated(VkCommandBuffer cb, VkCommandPool pool)
{
    pthread_mutex_lock(&lock);
    record *r = get(cb);
    if (r) {
        /* A handle the driver reuses after a free we did not see. */
        memset(r->counts, 0, sizeof r->counts);
        r->nsecondaries = 0;
        r->pool = pool;
        r->device_key = *(void *const *)cb;
    }
    pthread_mutex_unlock(&lock);
}

void gzc_cmdbuf_begun(VkCommandBuffer cb)
{
    pthread_mutex_lock(&lock);
    record *r = get(cb);
    if (r) {
        memset(r->counts, 0, sizeof r->counts);
        r->nsecondaries = 0;
    }
    pthread_mutex_unlock(&lock);
}

void gzc_cmdbuf_note(VkCommandBuffer cb, enum gzc_counter which, uint32_t n)
{
    pthread_mutex_lock(&lock);
    record *r = get(cb);
    if (r)
        r->counts[which] += n;
    pthread_mutex_unlock(&lock);
}

void gzc_cmdbuf_executes(VkCommandBuffer cb, uint32_t n, const VkCommandBuffer *secondaries)
{
    pthread_mutex_lock(&lock);
    record *r = get(cb);
    if (r && r->nsecondaries + n > r->cap) {
        uint32_t cap = r->cap ? r->cap : 4;
        while (cap < r->nsecondaries + n)
            cap *= 2;
        VkCommandBuffer *grown = realloc(r->secondaries, cap * sizeof *grown);
        if (grown) {
            r->secondaries = grown;
            r->cap = cap;
        }
    }
    if (r && r->nsecondaries + n <= r->cap) {
        memcpy(r->secondaries + r->nsecondaries, secondaries, n * sizeof *secondaries);
        r->nsecondaries += n;
        r->counts[GZC_SECONDARIES] += n;
    } else if (r) {
        warn_memory();
    }
    pthread_mutex_unlock(&lock);
}

/* Under the lock. */
static void add_executed(VkCommandBuffer cb, int depth)
{
    record **at = find(cb);
    if (!at || depth > MAX_DEPTH)
        return;
    record *r = *at;
    for (int i = 0; i < GZC_NRECORDED; i++)
        if (r->counts[i])
            gzc_add((enum gzc_counter)i, r->counts[i]);
    for (uint32_t i = 0; i < r->nsecondaries; i++)
        add_executed(r->secondaries[i], depth + 1);
}

void gzc_cmdbuf_submitted(VkCommandBuffer cb)
{
    pthread_mutex_lock(&lock);
    add_executed(cb, 0);
    pthread_mutex_unlock(&lock);
}

void gzc_cmdbuf_freed(VkCommandBuffer cb)
{
    pthread_mutex_lock(&lock);
    record **at = find(cb);
    if (at)
        drop(at);
    pthread_mutex_unlock(&lock);
}

void gzc_cmdbufs_pool_destroyed(VkCommandPool pool)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nslots; i++)
        if (slots[i] && slots[i] != TOMBSTONE && slots[i]->pool == pool)
            drop(&slots[i]);
    pthread_mutex_unlock(&lock);
}

void gzc_cmdbufs_device_destroyed(const void *device_key)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nslots; i++)
        if (slots[i] && slots[i] != TOMBSTONE && slots[i]->device_key == device_key)
            drop(&slots[i]);
    pthread_mutex_unlock(&lock);
}
