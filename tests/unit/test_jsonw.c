/* Unit tests for the JSON writer (client/jsonw.c): names from apps can hold
 * anything, and the trace must stay valid JSON whatever they hold. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "gz_check.h"
#include "gz_jsonw.h"

static const char *escaped(const char *s, size_t len)
{
    static char buf[4096];
    size_t need = gz_json_escape(buf, sizeof buf - 1, s, len);
    buf[need < sizeof buf - 1 ? need : sizeof buf - 1] = '\0';
    return buf;
}

static int test_escape(void)
{
    CHECK_STR(escaped("plain", 5), "\"plain\"");
    CHECK_STR(escaped("", 0), "\"\"");
    CHECK_STR(escaped("a\"b\\c", 5), "\"a\\\"b\\\\c\"");
    CHECK_STR(escaped("tab\there\nnl\x01", 12), "\"tab\\u0009here\\u000anl\\u0001\"");
    CHECK_STR(escaped("nul\0x", 5), "\"nul\\u0000x\"");
    /* Valid UTF-8 passes through: é, €, 😀 */
    CHECK_STR(escaped("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9),
              "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    /* Invalid: lone continuation, overlong '/', surrogate, truncated,
     * above U+10FFFF: each bad byte becomes U+FFFD. */
    CHECK_STR(escaped("\x80", 1), "\"\\ufffd\"");
    CHECK_STR(escaped("\xc0\xaf", 2), "\"\\ufffd\\ufffd\"");
    CHECK_STR(escaped("\xed\xa0\x80", 3), "\"\\ufffd\\ufffd\\ufffd\"");
    CHECK_STR(escaped("x\xe2\x82", 3), "\"x\\ufffd\\ufffd\"");
    CHECK_STR(escaped("\xf4\x90\x80\x80", 4), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    /* The length needed is returned even when the buffer is too small. */
    char small[4];
    CHECK_U64(gz_json_escape(small, sizeof small, "abcdef", 6), 8);
    CHECK(small[0] == '"' && small[3] == 'c');
    return 0;
}

static int test_numbers_and_file(void)
{
    char path[] = "/tmp/gz-test-jsonw-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    gz_jsonw *w = malloc(sizeof *w);
    CHECK(w != NULL);
    gz_jsonw_init(w, fd);
    gz_jsonw_us(w, 0);
    gz_jsonw_lit(w, " ");
    gz_jsonw_us(w, 1234567);
    gz_jsonw_lit(w, " ");
    gz_jsonw_us(w, 1000005);
    gz_jsonw_lit(w, " ");
    gz_jsonw_u64(w, UINT64_MAX);
    gz_jsonw_lit(w, " ");
    gz_jsonw_i64(w, INT64_MIN);
    /* More than the buffer: it flushes on its own. */
    for (int i = 0; i < 20000; i++)
        gz_jsonw_lit(w, "0123456789");
    CHECK(gz_jsonw_flush(w));
    CHECK_U64(w->written, 65 + 200000);
    char head[69] = {0};
    CHECK(pread(fd, head, 68, 0) == 68);
    CHECK_STR(head, "0.000 1234.567 1000.005 18446744073709551615 -9223372036854775808"
                    "012");
    close(fd);
    unlink(path);
    free(w);
    return 0;
}

static int test_write_error(void)
{
    /* /dev/full: every write fails with ENOSPC; the writer reports it once
     * and stops writing instead of looping. */
    int fd = open("/dev/full", O_WRONLY);
    if (fd < 0) {
        printf("skip /dev/full not available\n");
        return 0;
    }
    gz_jsonw *w = malloc(sizeof *w);
    CHECK(w != NULL);
    gz_jsonw_init(w, fd);
    gz_jsonw_lit(w, "[\n");
    CHECK(!gz_jsonw_flush(w));
    CHECK(w->error != 0);
    CHECK(w->fd == -1);
    for (int i = 0; i < 20000; i++) /* keeps accepting and discarding */
        gz_jsonw_lit(w, "0123456789");
    CHECK(!gz_jsonw_flush(w));
    close(fd);
    free(w);
    return 0;
}

int main(void)
{
    int failed = 0;
    failed += run("string escaping and invalid UTF-8", test_escape);
    failed += run("numbers, microseconds, buffered writes", test_numbers_and_file);
    failed += run("write errors (/dev/full)", test_write_error);
    printf("%d group(s) failed\n", failed);
    return failed ? 1 : 0;
}
