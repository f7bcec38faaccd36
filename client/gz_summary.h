/* The exit summary: per GPU zone name and kind, count/total/mean/p50/p95/max,
 * then per track how it was calibrated and what was dropped. */
#ifndef GZ_SUMMARY_H
#define GZ_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

typedef struct gz_summary gz_summary;

gz_summary *gz_summary_new(void);
void gz_summary_free(gz_summary *s);
/* kind is a gz_zone_kind. Bounded: past a few thousand distinct names the
 * rest is pooled under "<other names>". */
void gz_summary_add(gz_summary *s, uint32_t name, unsigned kind, uint64_t dur_ns);
/* Prints the zone table, largest total first. */
void gz_summary_print_zones(gz_summary *s, FILE *f);

#endif
