/* Checks shared by the unit tests: each returns 1 from the calling group
 * function after printing where and what failed; run() prints one line per
 * group. */
#ifndef GZ_CHECK_H
#define GZ_CHECK_H

#include <stdio.h>
#include <string.h>

#define CHECK_U64(a, b)                                                                            \
    do {                                                                                           \
        unsigned long long a_ = (a), b_ = (b);                                                     \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %s: %llu != %llu (0x%llx != 0x%llx)\n", __FILE__,        \
                    __LINE__, #a, #b, a_, b_, a_, b_);                                             \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#define CHECK_I64(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (a), b_ = (b);                                                              \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %s: %lld != %lld\n", __FILE__, __LINE__, #a, #b, a_,     \
                    b_);                                                                           \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: %s is false\n", __FILE__, __LINE__, #cond);                    \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || strcmp(a_, b_) != 0) {                                                          \
            fprintf(stderr, "%s:%d: %s == %s: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a, #b,     \
                    a_ ? a_ : "(null)", b_);                                                       \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static inline int run(const char *name, int (*fn)(void))
{
    int failed = fn();
    printf("%s %s\n", failed ? "FAIL" : "ok  ", name);
    return failed;
}

#endif
