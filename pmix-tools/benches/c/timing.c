/* timing: the C client of `cargo bench -p pmix-tools --bench jobs`, run unchanged
 * under pmix-run and under Open MPI's mpirun (and alone, with no server). It measures
 * in-process with clock_gettime(CLOCK_MONOTONIC); the modes that report print one line
 * per rank:
 *
 *   timing none                       no PMIx call: the cost of starting the program
 *                                     (exec, loading libpmix2 and its libraries) alone.
 *   timing serverless                 PMIx_Init with no PMIX_* variables: libpmix2
 *                                     initialises as a singleton (no server at all)
 *                                     and returns PMIX_ERR_UNREACH; prints
 *                                     "timing rank 0 init_us X init_cpu_us C nspace
 *                                     singleton.…".
 *   timing job                        PMIx_Init, one PMIx_Fence (no data), PMIx_Finalize:
 *                                     the job whose whole wall time the bench measures;
 *                                     prints, after finalizing, "timing rank R t_main A
 *                                     t_init B t_fence C t_final D": CLOCK_REALTIME in
 *                                     microseconds (one clock for every process and the
 *                                     bench) at main's entry and after each call.
 *   timing init                       PMIx_Init (timed), one fence, PMIx_Finalize;
 *                                     prints "timing rank R size N init_us X
 *                                     init_cpu_us C" (C: CPU time of all the process's
 *                                     threads during PMIx_Init).
 *   timing lifecycle                  the RSS of the process (VmRSS, kB) before init;
 *                                     PMIx_Init (timed), one fence, the RSS of the idle
 *                                     connected client, PMIx_Finalize (timed); prints
 *                                     "timing rank R init_us X final_us F rss_before_kb
 *                                     A rss_idle_kb B".
 *   timing measure FENCES GETS        PMIx_Init (timed); put + commit of "bench.key";
 *                                     a fence without data; the first PMIx_Get of every
 *                                     peer's key (timed: each is a direct-modex request
 *                                     to the server, the client holds none of it yet);
 *                                     a fence; FENCES fences without data (timed, the
 *                                     average reported, and the CPU time all the
 *                                     rank's threads spent per fence); a fence with PMIX_COLLECT_DATA;
 *                                     GETS gets of peers' keys round robin (timed: served
 *                                     from the client's own cache, no server trip);
 *                                     prints "timing rank R size N init_us X init_cpu_us C
 *                                     fence_us Y fence_cpu_us F get_dmodex_us Z
 *                                     get_cached_us W".
 *
 * Every failure prints "timing rank R: FAIL: ..." on stderr and exits 1. */
#include <pmix.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pmix_proc_t me;

__attribute__((format(printf, 1, 2), noreturn)) static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "timing rank %u: FAIL: ", me.rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

#define CHECK_OK(rc, what)                                                             \
    do {                                                                               \
        pmix_status_t rc_ = (rc);                                                      \
        if (PMIX_SUCCESS != rc_)                                                       \
            fail("%s: %s (%d)", (what), PMIx_Error_string(rc_), rc_);                  \
    } while (0)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* CLOCK_REALTIME in microseconds: the one clock the bench (SystemTime) shares with
 * every rank, for the job's phases. */
static double real_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* PMIx_Init's wall time, and the CPU time this process (all its threads) spent in it,
 * in microseconds. */
static double init_us, init_cpu_us;

/* PMIx_Init, timed into init_us and init_cpu_us. With no server (`serverless`),
 * libpmix2 4.2 initialises as a singleton ("singleton.HOST.PID", rank 0) and returns
 * PMIX_ERR_UNREACH: that is accepted there, and only there. */
static void timed_init(int serverless)
{
    double c0 = cpu_us();
    double t0 = now_us();
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    init_us = now_us() - t0;
    init_cpu_us = cpu_us() - c0;
    if (!(serverless && PMIX_ERR_UNREACH == rc))
        CHECK_OK(rc, "PMIx_Init");
}

/* This process's resident set (VmRSS of /proc/self/status), in kB; -1 if unknown. */
static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (1 == sscanf(line, "VmRSS: %ld kB", &kb))
            break;
    fclose(f);
    return kb;
}

static uint32_t job_size(void)
{
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    CHECK_OK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "PMIx_Get(PMIX_JOB_SIZE)");
    if (val->type != PMIX_UINT32)
        fail("PMIX_JOB_SIZE has type %d", val->type);
    uint32_t n = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    return n;
}

static void fence(int collect)
{
    pmix_info_t info;
    bool yes = true;
    if (collect) {
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        CHECK_OK(PMIx_Fence(NULL, 0, &info, 1), "PMIx_Fence(PMIX_COLLECT_DATA)");
        PMIX_INFO_DESTRUCT(&info);
    } else {
        CHECK_OK(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
    }
}

/* Gets "bench.key" of `rank` and checks its value (the rank itself). */
static void get_peer(uint32_t rank)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&p, "bench.key", NULL, 0, &val);
    if (PMIX_SUCCESS != rc)
        fail("PMIx_Get(bench.key) of rank %u: %s (%d)", rank, PMIx_Error_string(rc), rc);
    if (val->type != PMIX_UINT32 || val->data.uint32 != rank)
        fail("bench.key of rank %u: type %d value %u", rank, val->type, val->data.uint32);
    PMIX_VALUE_RELEASE(val);
}

static void measure(long fences, long gets)
{
    timed_init(0);
    uint32_t n = job_size();
    if (n < 2)
        fail("measure needs at least 2 ranks, the job has %u", n);

    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_UINT32;
    v.data.uint32 = me.rank;
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "bench.key", &v), "PMIx_Put");
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    fence(0);

    /* Direct modex: the first Get of each peer goes to the server. */
    double t0 = now_us();
    for (uint32_t i = 1; i < n; i++)
        get_peer((me.rank + i) % n);
    double get_dmodex_us = (now_us() - t0) / (double)(n - 1);

    fence(0);
    double c0 = cpu_us();
    t0 = now_us();
    for (long i = 0; i < fences; i++)
        fence(0);
    double fence_us = (now_us() - t0) / (double)fences;
    double fence_cpu_us = (cpu_us() - c0) / (double)fences;

    fence(1);
    t0 = now_us();
    for (long i = 0; i < gets; i++)
        get_peer((me.rank + 1 + (uint32_t)(i % (n - 1))) % n);
    double get_cached_us = (now_us() - t0) / (double)gets;

    printf("timing rank %u size %u init_us %.1f init_cpu_us %.1f fence_us %.2f "
           "fence_cpu_us %.2f get_dmodex_us %.2f get_cached_us %.3f\n",
           me.rank, n, init_us, init_cpu_us, fence_us, fence_cpu_us, get_dmodex_us,
           get_cached_us);
    fflush(stdout);
    CHECK_OK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (0 == strcmp(mode, "serverless")) {
        timed_init(1);
        printf("timing rank %u init_us %.1f init_cpu_us %.1f nspace %s\n", me.rank, init_us,
               init_cpu_us, me.nspace);
        fflush(stdout);
        CHECK_OK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    } else if (0 == strcmp(mode, "none")) {
        return 0;
    } else if (0 == strcmp(mode, "job")) {
        double t_main = real_us();
        timed_init(0);
        double t_init = real_us();
        fence(0);
        double t_fence = real_us();
        CHECK_OK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
        double t_final = real_us();
        printf("timing rank %u t_main %.0f t_init %.0f t_fence %.0f t_final %.0f\n", me.rank,
               t_main, t_init, t_fence, t_final);
    } else if (0 == strcmp(mode, "init")) {
        timed_init(0);
        uint32_t n = job_size();
        fence(0);
        printf("timing rank %u size %u init_us %.1f init_cpu_us %.1f\n", me.rank, n, init_us,
               init_cpu_us);
        fflush(stdout);
        CHECK_OK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    } else if (0 == strcmp(mode, "lifecycle")) {
        long before = rss_kb();
        timed_init(0);
        fence(0);
        long idle = rss_kb();
        double t0 = now_us();
        CHECK_OK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
        double final_us = now_us() - t0;
        printf("timing rank %u init_us %.1f final_us %.1f rss_before_kb %ld rss_idle_kb %ld\n",
               me.rank, init_us, final_us, before, idle);
    } else if (0 == strcmp(mode, "measure") && argc == 4) {
        long fences = strtol(argv[2], NULL, 10);
        long gets = strtol(argv[3], NULL, 10);
        if (fences < 1 || gets < 1)
            fail("FENCES and GETS must be positive");
        measure(fences, gets);
    } else {
        fprintf(stderr, "usage: timing none | serverless | job | init | lifecycle | measure FENCES GETS\n");
        return 64;
    }
    return 0;
}
