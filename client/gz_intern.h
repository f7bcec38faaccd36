/* String interning for zone and track names. Names come from transient app
 * memory (debug labels), so they are copied once and referred to by a
 * 32-bit id in queue items. */
#ifndef GZ_INTERN_H
#define GZ_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* The string of an id handed out by gz_intern (id 0 is ""). Lock-free: an
 * id's entry is written before the id can reach another thread. */
const char *gz_intern_str(uint32_t id, size_t *len);

/* Names refused because the table was full. */
uint64_t gz_intern_dropped(void);

/* Frees everything; only after every user has stopped (tests, exit). */
void gz_intern_reset(void);

#endif
