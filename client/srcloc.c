#include <stdio.h>
#include <string.h>

#include "gz_intern.h"
#include "gz_srcloc.h"

/* The interned form: a marker byte, then name, function and file, each
 * ended by a NUL, then "line:color" in decimal and hex. Names with a NUL of
 * their own are cut there (C strings cannot hold one anyway). */
#define MARK '\x01'
#define MAX_PART 1024u

static size_t part(char *dst, const char *s, size_t len)
{
    if (!s)
        len = 0;
    const char *nul = len ? memchr(s, '\0', len) : NULL;
    if (nul)
        len = (size_t)(nul - s);
    if (len > MAX_PART)
        len = MAX_PART;
    if (len)
        memcpy(dst, s, len);
    dst[len] = '\0';
    return len + 1;
}

uint32_t gz_srcloc_intern(const char *name, size_t name_len, const char *function,
                          const char *file, uint32_t line, uint32_t color)
{
    char buf[3 * (MAX_PART + 1) + 32];
    size_t n = 0;
    buf[n++] = MARK;
    n += part(buf + n, name, name_len);
    n += part(buf + n, function, function ? strlen(function) : 0);
    n += part(buf + n, file, file ? strlen(file) : 0);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%u:%06x", line, color & 0xffffffu);
    return gz_intern(buf, n);
}

bool gz_srcloc_decode(uint32_t id, gz_srcloc_view *out)
{
    size_t len;
    const char *s = gz_intern_str(id, &len);
    if (!s || len < 4 || s[0] != MARK)
        return false;
    const char *end = s + len, *p = s + 1;
    const char *parts[3];
    size_t lens[3];
    for (int i = 0; i < 3; i++) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        if (!nul)
            return false;
        parts[i] = p;
        lens[i] = (size_t)(nul - p);
        p = nul + 1;
    }
    unsigned line = 0, color = 0;
    char tail[32];
    size_t tl = (size_t)(end - p) < sizeof tail - 1 ? (size_t)(end - p) : sizeof tail - 1;
    memcpy(tail, p, tl);
    tail[tl] = '\0';
    if (sscanf(tail, "%u:%x", &line, &color) != 2)
        return false;
    *out = (gz_srcloc_view){.name = parts[0], .name_len = lens[0],
                            .function = parts[1], .function_len = lens[1],
                            .file = parts[2], .file_len = lens[2],
                            .line = line, .color = color};
    return true;
}
