/* Source locations of explicit zones (the public API's macros): name,
 * function, file, line and color, interned together as one string so that
 * a zone item carries a single 32-bit id and equal locations share it. */
#ifndef GZ_SRCLOC_H
#define GZ_SRCLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gz_client.h"

typedef struct gz_srcloc_view {
    const char *name, *function, *file;
    size_t name_len, function_len, file_len;
    uint32_t line;
    uint32_t color; /* 0xRRGGBB, 0: none */
} gz_srcloc_view;

/* 0 when the intern table is full. NULL strings count as empty. */
uint32_t gz_srcloc_intern(const char *name, size_t name_len, const char *function,
                          const char *file, uint32_t line, uint32_t color);
/* Splits an id from gz_srcloc_intern; false for anything else. */
bool gz_srcloc_decode(uint32_t id, gz_srcloc_view *out);

#endif
