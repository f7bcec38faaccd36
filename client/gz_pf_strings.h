/* Interning for the Perfetto sink: every string the trace refers to by id
 * (event names, categories, debug annotation names, source locations) is
 * kept once, and each packet sequence remembers which ids it has sent, so
 * that a name goes out once per sequence. Memory is bounded: when the
 * store is full, it starts afresh, and every sequence must clear its
 * incremental state (the sink then sends names again as they are used). */
#ifndef GZ_PF_STRINGS_H
#define GZ_PF_STRINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a string is interned as: its own id space in InternedData. */
typedef enum gz_pf_kind {
    GZ_PF_EVENT_NAME = 0,
    GZ_PF_CATEGORY = 1,
    GZ_PF_ANNOTATION_NAME = 2,
    GZ_PF_SOURCE_LOCATION = 3, /* file "\0" function "\0" line */
} gz_pf_kind;

typedef struct gz_pf_strings gz_pf_strings;

/* NULL without memory. */
gz_pf_strings *gz_pf_strings_new(void);
void gz_pf_strings_free(gz_pf_strings *st);

/* The id (>= 1) of s as kind; 0 when it cannot be kept even in an empty
 * store (out of memory). *reset is set when the store had to start afresh
 * for it: every id handed out before is void. */
uint32_t gz_pf_strings_id(gz_pf_strings *st, gz_pf_kind kind, const char *s, size_t len,
                          bool *reset);
/* The string of an id. */
const char *gz_pf_strings_str(const gz_pf_strings *st, uint32_t id, size_t *len);

/* The ids one sequence has sent since its incremental state was cleared. */
typedef struct gz_pf_sent {
    uint32_t *slots; /* open addressing: id, 0 = empty */
    uint32_t cap, n;
} gz_pf_sent;

/* True when the caller must send id on the sequence: it was not sent yet
 * (it is marked sent now), or there is no memory to remember it (then it
 * is sent each time). */
bool gz_pf_sent_add(gz_pf_sent *s, uint32_t id);
void gz_pf_sent_clear(gz_pf_sent *s);
void gz_pf_sent_free(gz_pf_sent *s);

#endif
