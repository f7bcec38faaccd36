/* Answers to the profiler's queries (gz_tracy_answer.h). */
#include <stdio.h>
#include <string.h>

#include "gz_tracy_answer.h"

bool gz_tracy_names_init(gz_tracy_names *n, uint32_t max_srclocs)
{
    gz_tracy_strtab_init(&n->strings, 1u << 20, 64u << 20);
    gz_tracy_strtab_init(&n->srclocs, max_srclocs, 64u << 20);
    gz_tracy_strtab_init(&n->threads, 1u << 16, 64u << 20);
    n->str_unknown = gz_tracy_strtab_put(&n->strings, "<name dropped>", 14, NULL);
    n->str_gpuzones = gz_tracy_strtab_put(&n->strings, "gpuzones", 8, NULL);
    uint64_t fallback[5] = {GZ_TRACY_STR_BASE + n->str_unknown, GZ_TRACY_STR_BASE + n->str_unknown,
                            GZ_TRACY_STR_BASE + n->str_gpuzones, 0, 0};
    return n->str_unknown && n->str_gpuzones &&
           gz_tracy_strtab_put(&n->srclocs, fallback, sizeof fallback, NULL);
}

void gz_tracy_names_free(gz_tracy_names *n)
{
    gz_tracy_strtab_free(&n->strings);
    gz_tracy_strtab_free(&n->srclocs);
    gz_tracy_strtab_free(&n->threads);
}

/* The string with id (from GZ_TRACY_STR_BASE), or "<name dropped>". */
static const gz_tracy_strtab_entry *string_of(const gz_tracy_names *n, uint64_t id)
{
    const gz_tracy_strtab_entry *e =
        id >= GZ_TRACY_STR_BASE ? gz_tracy_strtab_get(&n->strings, id - GZ_TRACY_STR_BASE) : NULL;
    return e ? e : gz_tracy_strtab_get(&n->strings, n->str_unknown);
}

void gz_tracy_answer(gz_tracy_enc *e, const gz_tracy_names *n, const gz_tracy_query *q)
{
    switch (q->type) {
    case GZ_TSQ_STRING:
    case GZ_TSQ_FRAME_NAME: {
        const gz_tracy_strtab_entry *s = string_of(n, q->ptr);
        gz_tracy_enc_string(e, q->type == GZ_TSQ_STRING ? GZ_TQ_STRING_DATA : GZ_TQ_FRAME_NAME,
                            q->ptr, s->s, s->len);
        break;
    }
    case GZ_TSQ_THREAD_STRING: {
        uint32_t tid = (uint32_t)q->ptr;
        char buf[64];
        const char *name = buf;
        size_t len;
        uint32_t t = gz_tracy_strtab_find(&n->threads, &tid, sizeof tid);
        const gz_tracy_strtab_entry *s =
            t ? gz_tracy_strtab_get(&n->strings, gz_tracy_strtab_get(&n->threads, t)->value) : NULL;
        if (s) {
            name = s->s;
            len = s->len;
        } else if (tid >= GZ_TRACY_LANE_TID_BASE) {
            len = (size_t)snprintf(buf, sizeof buf, "GPU lane %u", (tid & 15u) + 1);
        } else {
            len = (size_t)snprintf(buf, sizeof buf, "thread %u", tid);
        }
        gz_tracy_enc_string(e, GZ_TQ_THREAD_NAME, q->ptr, name, len);
        break;
    }
    case GZ_TSQ_SOURCE_LOCATION: {
        const gz_tracy_strtab_entry *s =
            q->ptr >= GZ_TRACY_SRCLOC_BASE
                ? gz_tracy_strtab_get(&n->srclocs, q->ptr - GZ_TRACY_SRCLOC_BASE)
                : NULL;
        uint64_t key[5] = {GZ_TRACY_STR_BASE + n->str_unknown, GZ_TRACY_STR_BASE + n->str_unknown,
                           GZ_TRACY_STR_BASE + n->str_gpuzones, 0, 0};
        if (s && s->len == sizeof key)
            memcpy(key, s->s, sizeof key);
        gz_tracy_enc_srcloc(e, key[0], key[1], key[2], (uint32_t)key[3], (uint32_t)key[4]);
        break;
    }
    case GZ_TSQ_SYMBOL_CODE:
        gz_tracy_enc_bare(e, GZ_TQ_ACK_SYMBOL_CODE_NA);
        break;
    case GZ_TSQ_SOURCE_CODE:
        gz_tracy_enc_ack_source(e, (uint32_t)q->ptr);
        break;
    default:
        /* Nothing else is ever offered (no callstacks, plots, code): the
         * profiler still counts every query until it is acknowledged. */
        gz_tracy_enc_bare(e, GZ_TQ_ACK_QUERY_NOOP);
        break;
    }
}
