/* libFuzzer target: everything listen mode reads from a peer on its socket
 * (client/tracy/peer.c) and the answers it writes to what it read
 * (client/tracy/answer.c).
 *
 * The input is the byte stream a peer sends; its first byte picks how the
 * stream is cut into reads (the socket may split it anywhere). The
 * handshake is read first; a peer that is not Tracy ends there, as the
 * link closes it. After a handshake (whatever its version), the rest is
 * read as queries, each answered from tables holding a few names, as the
 * sink does. Checked: the handshake never takes more than its 12 bytes,
 * the query reader consumes everything it is given unless the peer ended,
 * and every answer decodes back as whole items with strings of at most
 * GZ_TRACY_STRING_MAX bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gz_tracy_answer.h"
#include "gz_tracy_peer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

static void fill(gz_tracy_names *n)
{
    static const char *const strings[] = {"render thread", "draw", "scene.c", "", "shadow pass"};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        gz_tracy_strtab_put(&n->strings, strings[i], strlen(strings[i]), NULL);
    uint64_t loc[5] = {GZ_TRACY_STR_BASE + 4, GZ_TRACY_STR_BASE + 4, GZ_TRACY_STR_BASE + 5, 42,
                       0x336699};
    gz_tracy_strtab_put(&n->srclocs, loc, sizeof loc, NULL);
    uint32_t tid = 1001;
    uint32_t t = gz_tracy_strtab_put(&n->threads, &tid, sizeof tid, NULL);
    gz_tracy_strtab_get(&n->threads, t)->value = 3;
    tid = 1002; /* a thread whose name id is not in the table */
    t = gz_tracy_strtab_put(&n->threads, &tid, sizeof tid, NULL);
    gz_tracy_strtab_get(&n->threads, t)->value = 999999;
}

static void check_answers(const gz_tracy_enc *e)
{
    check(!e->failed);
    gz_tracy_dec d;
    gz_tracy_dec_init(&d, e->buf, e->len);
    gz_tracy_item it;
    int r;
    while ((r = gz_tracy_dec_next(&d, &it)) == 1)
        check(it.str_len <= GZ_TRACY_STRING_MAX);
    check(r == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    size_t step = (size_t)(data[0] % 29) + 1; /* bytes per read */
    data++;
    size--;

    gz_tracy_hello h = {0};
    size_t off = 0;
    gz_tracy_hello_result hr = GZ_TRACY_HELLO_MORE;
    uint32_t version = 0;
    while (hr == GZ_TRACY_HELLO_MORE && off < size) {
        size_t n = size - off < step ? size - off : step;
        size_t want = gz_tracy_hello_missing(&h);
        check(want >= 1 && want <= GZ_TRACY_HELLO_SIZE);
        size_t used;
        hr = gz_tracy_hello_feed(&h, data + off, n < want ? n : want, &used, &version);
        check(used <= want && h.len <= GZ_TRACY_HELLO_SIZE);
        off += used;
    }
    if (hr != GZ_TRACY_HELLO_DONE)
        return 0;
    check(off == GZ_TRACY_HELLO_SIZE && !memcmp(data, GZ_TRACY_SHIBBOLETH, 8));

    gz_tracy_names names;
    check(gz_tracy_names_init(&names, 64));
    fill(&names);
    gz_tracy_enc e;
    gz_tracy_enc_init(&e);
    gz_tracy_qreader r = {0};
    while (off < size && !r.ended) {
        size_t n = size - off < step ? size - off : step;
        size_t in = 0;
        while (in < n && !r.ended) {
            gz_tracy_query q[4];
            size_t used;
            size_t got = gz_tracy_qreader_feed(&r, data + off + in, n - in, &used, q, 4);
            check(got <= 4 && used <= n - in);
            check(used || got || r.ended);
            in += used;
            for (size_t i = 0; i < got; i++) {
                check(q[i].type != GZ_TSQ_TERMINATE && q[i].type != GZ_TSQ_DISCONNECT);
                gz_tracy_answer(&e, &names, &q[i]);
            }
        }
        off += in;
    }
    check_answers(&e);
    gz_tracy_enc_free(&e);
    gz_tracy_names_free(&names);
    return 0;
}
