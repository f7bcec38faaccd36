/* Reading what a peer sends (gz_tracy_peer.h). */
#include <string.h>

#include "gz_tracy_peer.h"

size_t gz_tracy_hello_missing(const gz_tracy_hello *h)
{
    return GZ_TRACY_HELLO_SIZE - h->len;
}

gz_tracy_hello_result gz_tracy_hello_feed(gz_tracy_hello *h, const uint8_t *data, size_t n,
                                          size_t *used, uint32_t *version)
{
    size_t take = gz_tracy_hello_missing(h);
    if (take > n)
        take = n;
    memcpy(h->buf + h->len, data, take);
    h->len += take;
    *used = take;
    /* Judged as soon as the shibboleth can be: a peer that is not Tracy
     * goes before it has sent all twelve bytes. */
    size_t shib = h->len < 8 ? h->len : 8;
    if (memcmp(h->buf, GZ_TRACY_SHIBBOLETH, shib) != 0)
        return GZ_TRACY_HELLO_NOT_TRACY;
    if (h->len < GZ_TRACY_HELLO_SIZE)
        return GZ_TRACY_HELLO_MORE;
    *version = (uint32_t)h->buf[8] | (uint32_t)h->buf[9] << 8 | (uint32_t)h->buf[10] << 16 |
               (uint32_t)h->buf[11] << 24;
    return GZ_TRACY_HELLO_DONE;
}

size_t gz_tracy_qreader_feed(gz_tracy_qreader *r, const uint8_t *data, size_t n, size_t *used,
                             gz_tracy_query *out, size_t max)
{
    size_t i = 0, count = 0;
    while (i < n && count < max && !r->ended) {
        size_t take = GZ_TRACY_QUERY_SIZE - r->len;
        if (take > n - i)
            take = n - i;
        memcpy(r->buf + r->len, data + i, take);
        r->len += take;
        i += take;
        if (r->len < GZ_TRACY_QUERY_SIZE)
            break;
        r->len = 0;
        gz_tracy_query q;
        gz_tracy_query_parse(r->buf, &q);
        if (q.type == GZ_TSQ_TERMINATE || q.type == GZ_TSQ_DISCONNECT)
            r->ended = true;
        else
            out[count++] = q;
    }
    *used = i;
    return count;
}
