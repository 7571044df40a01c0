/* Minimal checking for the C test programs: failures go to stdout (stderr is kept for
 * the library's diagnostics, which the Rust harness inspects), and the program ends
 * with "checks=N failures=M" and a non-zero exit status if anything failed. */
#ifndef PMIX_RS_TEST_CHECK_H
#define PMIX_RS_TEST_CHECK_H

#include <stdio.h>

static int checks = 0;
static int failures = 0;

#define CHECK(cond)                                                           \
    do {                                                                      \
        checks++;                                                             \
        if (!(cond)) {                                                        \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);            \
            failures++;                                                       \
        }                                                                     \
    } while (0)

#define CHECK_RC(expr, want)                                                  \
    do {                                                                      \
        pmix_status_t _rc = (expr);                                           \
        checks++;                                                             \
        if (_rc != (want)) {                                                  \
            printf("FAIL %s:%d: %s = %s (%d), want %s\n", __FILE__, __LINE__, \
                   #expr, PMIx_Error_string(_rc), _rc, #want);                \
            failures++;                                                       \
        }                                                                     \
    } while (0)

static int finish(void)
{
    printf("checks=%d failures=%d\n", checks, failures);
    fflush(stdout);
    return failures == 0 ? 0 : 1;
}

#endif
