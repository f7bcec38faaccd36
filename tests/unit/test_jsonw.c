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

/* Numbers of every length, and around each power of ten, as printf
 * writes them: integers and microseconds with three decimals. */
static int test_numbers_every_length(void)
{
    char path[] = "/tmp/gz-test-jsonw-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    gz_jsonw *w = malloc(sizeof *w);
    char *want = malloc(1 << 20), *got = malloc(1 << 20);
    CHECK(w != NULL && want != NULL && got != NULL);
    gz_jsonw_init(w, fd);
    size_t n = 0;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < 3000; k++) {
        uint64_t p10 = 1;
        for (int d = 0; d < k % 20; d++)
            p10 *= 10;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t v = k % 3 == 0 ? p10 : k % 3 == 1 ? p10 - 1 : x >> (k % 64);
        gz_jsonw_u64(w, v);
        gz_jsonw_lit(w, " ");
        gz_jsonw_us(w, v);
        gz_jsonw_lit(w, " ");
        gz_jsonw_i64(w, -(int64_t)(v >> 1));
        gz_jsonw_lit(w, "\n");
        n += (size_t)snprintf(want + n, (1 << 20) - n, "%llu %llu.%03llu %lld\n",
                              (unsigned long long)v, (unsigned long long)(v / 1000),
                              (unsigned long long)(v % 1000), -(long long)(v >> 1));
    }
    CHECK(gz_jsonw_flush(w));
    CHECK_U64(w->written, n);
    CHECK(pread(fd, got, n, 0) == (ssize_t)n);
    got[n] = want[n] = '\0';
    CHECK_STR(got, want);
    close(fd);
    unlink(path);
    free(w);
    free(want);
    free(got);
    return 0;
}

/* Every piece lands whole whatever room the buffer has left, and the
 * writer never holds more than its buffer: a string or number that meets
 * the end of the buffer is split across a write. */
static int test_buffer_end(void)
{
    static const char expect[] = "\"zone 0\"4094624571.345 18446744073709551615 \"a\\\"b\" x";
    char path[] = "/tmp/gz-test-jsonw-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    gz_jsonw *w = malloc(sizeof *w);
    CHECK(w != NULL);
    size_t size = sizeof w->buf;
    for (size_t fill = size - 40; fill <= size; fill++) {
        CHECK(ftruncate(fd, 0) == 0);
        CHECK(lseek(fd, 0, SEEK_SET) == 0);
        gz_jsonw_init(w, fd);
        for (size_t i = 0; i < fill; i++)
            gz_jsonw_raw(w, "-", 1);
        gz_jsonw_str(w, "zone 0", 6);
        CHECK(w->len <= size);
        gz_jsonw_us(w, 4094624571345ull);
        CHECK(w->len <= size);
        gz_jsonw_lit(w, " ");
        gz_jsonw_u64(w, UINT64_MAX);
        CHECK(w->len <= size);
        gz_jsonw_lit(w, " ");
        gz_jsonw_str(w, "a\"b", 3);
        CHECK(w->len <= size);
        gz_jsonw_lit(w, " x");
        CHECK(gz_jsonw_flush(w));
        CHECK_U64(w->written, fill + sizeof expect - 1);
        char got[sizeof expect] = {0};
        CHECK(pread(fd, got, sizeof expect - 1, (off_t)fill) == (ssize_t)(sizeof expect - 1));
        CHECK_STR(got, expect);
    }
    close(fd);
    unlink(path);
    free(w);
    return 0;
}

int main(void)
{
    int failed = 0;
    failed += run("string escaping and invalid UTF-8", test_escape);
    failed += run("numbers, microseconds, buffered writes", test_numbers_and_file);
    failed += run("write errors (/dev/full)", test_write_error);
    failed += run("pieces at the end of the buffer", test_buffer_end);
    failed += run("numbers of every length", test_numbers_every_length);
    printf("%d group(s) failed\n", failed);
    return failed ? 1 : 0;
}
