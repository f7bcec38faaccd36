/* A bounded table of byte strings, each given a small stable id (1, 2, ...)
 * and a 64-bit value the caller may use. Listen mode keeps the names it
 * sends by reference here (the profiler asks for each once, by id), and
 * keys other tables by packed binary keys (source locations, threads).
 * Only the worker thread uses it. */
#ifndef GZ_TRACY_STRTAB_H
#define GZ_TRACY_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gz_tracy_strtab_entry {
    char *s;
    uint32_t len, hash;
    uint64_t value;
} gz_tracy_strtab_entry;

typedef struct gz_tracy_strtab {
    gz_tracy_strtab_entry *e; /* e[id - 1] */
    uint32_t n, cap, max;
    uint32_t *index; /* open addressing: ids, 0 = empty */
    uint32_t index_mask;
    size_t bytes, max_bytes;
} gz_tracy_strtab;

void gz_tracy_strtab_init(gz_tracy_strtab *t, uint32_t max, size_t max_bytes);
void gz_tracy_strtab_free(gz_tracy_strtab *t);
/* The id of these bytes, added when new (*added set); 0 when the table is
 * full or memory ran out. */
uint32_t gz_tracy_strtab_put(gz_tracy_strtab *t, const void *s, size_t len, bool *added);
/* 0 when absent. */
uint32_t gz_tracy_strtab_find(const gz_tracy_strtab *t, const void *s, size_t len);
/* NULL for ids not in the table. */
gz_tracy_strtab_entry *gz_tracy_strtab_get(const gz_tracy_strtab *t, uint64_t id);

#endif
