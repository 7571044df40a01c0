/* Shared helpers of the C test programs run under pmix-run (and, to validate the
 * programs themselves, under Open MPI's mpirun). Each program checks its own
 * results: any mismatch prints one line naming the rank and the check on stderr
 * and exits non-zero. */
#ifndef PMIX_RUN_TEST_COMMON_H
#define PMIX_RUN_TEST_COMMON_H

#include <errno.h>
#include <pmix.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static const char *prog_name = "?";

/* Prints "PROG rank R: FAIL: ..." on stderr and exits 1 (without finalizing: the
 * launcher sees a rank that died). */
__attribute__((format(printf, 1, 2), noreturn)) static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s rank %u: FAIL: ", prog_name, me.rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    exit(1);
}

/* Fails unless rc is PMIX_SUCCESS. */
#define CHECK_OK(rc, what)                                                             \
    do {                                                                               \
        pmix_status_t rc_ = (rc);                                                      \
        if (PMIX_SUCCESS != rc_)                                                       \
            fail("%s: %s (%d)", (what), PMIx_Error_string(rc_), rc_);                  \
    } while (0)

__attribute__((unused)) static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

__attribute__((unused)) static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits under lock until *count reaches want (a callback's doing); fails after 30 s,
 * naming what never came. */
__attribute__((unused)) static void wait_count(pthread_mutex_t *lock, pthread_cond_t *cond,
                                               const int *count, int want, const char *what)
{
    pthread_mutex_lock(lock);
    while (*count < want) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 30;
        if (ETIMEDOUT == pthread_cond_timedwait(cond, lock, &until))
            fail("%s never came", what);
    }
    pthread_mutex_unlock(lock);
}

/* PMIx_Init, fails on error; the job size from PMIX_JOB_SIZE. */
__attribute__((unused)) static uint32_t init_or_fail(const char *name)
{
    prog_name = name;
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "%s: FAIL: PMIx_Init: %s (%d)\n", name, PMIx_Error_string(rc), rc);
        exit(1);
    }
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    CHECK_OK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "PMIx_Get(PMIX_JOB_SIZE)");
    if (val->type != PMIX_UINT32)
        fail("PMIX_JOB_SIZE has type %d, not PMIX_UINT32", val->type);
    uint32_t n = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    return n;
}

/* Puts `size` bytes under `key` in `scope` as a PMIX_BYTE_OBJECT; fails on error. */
__attribute__((unused)) static void put_bytes_or_fail(pmix_scope_t scope, const char *key,
                                                      char *bytes, size_t size)
{
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = bytes;
    v.data.bo.size = size;
    CHECK_OK(PMIx_Put(scope, key, &v), key);
}

/* A fence over the whole namespace with PMIX_COLLECT_DATA. */
__attribute__((unused)) static void fence_collect_or_fail(void)
{
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK_OK(PMIx_Fence(NULL, 0, &info, 1), "PMIx_Fence(PMIX_COLLECT_DATA)");
    PMIX_INFO_DESTRUCT(&info);
}

/* The PMIX_GROUP_ID string among an event's infos, or NULL. */
__attribute__((unused)) static const char *group_id_of(const pmix_info_t info[], size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) && PMIX_STRING == info[i].value.type)
            return info[i].value.data.string;
    return NULL;
}

/* A fence over the whole namespace, no data. */
__attribute__((unused)) static void fence_or_fail(const char *what)
{
    CHECK_OK(PMIx_Fence(NULL, 0, NULL, 0), what);
}

__attribute__((unused)) static void finalize_or_fail(void)
{
    CHECK_OK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
}

#endif
