/* validate_global latency between real processes (benches/ft.rs): run as
 * `pmix-run -n N --keep-going ft_latency K`. The last K ranks kill themselves
 * (SIGKILL) after PMIx_Init; the survivors wait until they have detected them, run
 * warm-up rounds (the first of which puts them in the global view), then time
 * ROUNDS back-to-back pmixrs_ft_validate_global calls and print
 * "timing rank R validate_global_us MEAN fence_us MEAN plain_us MEAN failed N",
 * where fence_us is a PMIx_Fence over the job with PMIX_GROUP_FT_COLLECTIVE (the
 * exchange's own fence) and plain_us a plain PMIx_Fence (no directive; with K > 0
 * it would fail on the dead ranks, so it is timed with K = 0 only, else -1), each
 * timed the same way. Any error exits 1. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <pmix.h>
#include <pmix_ft.h>

#define ROUNDS 200
#define WARMUP 5

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void check(pmix_status_t rc, const char *what)
{
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "ft_latency: %s: %s\n", what, PMIx_Error_string(rc));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int k = argc > 1 ? atoi(argv[1]) : 0, n = 0, size = 0, rank = 0;
    pmix_proc_t me;
    check(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    check(pmixrs_ft_group_size(me.nspace, &size, &rank), "group_size");
    if (rank >= size - k)
        raise(SIGKILL);
    double until = now_s() + 20;
    size_t known = 0;
    while (known < (size_t) k) {
        check(pmixrs_ft_get_failed(me.nspace, NULL, 0, &known), "get_failed");
        if (now_s() > until) {
            fprintf(stderr, "ft_latency: failures not detected\n");
            return 1;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < WARMUP; i++)
        check(pmixrs_ft_validate_global(me.nspace, &n, NULL), "validate_global");
    double t0 = now_s();
    for (int i = 0; i < ROUNDS; i++)
        check(pmixrs_ft_validate_global(me.nspace, &n, NULL), "validate_global");
    double us = (now_s() - t0) / ROUNDS * 1e6;
    pmix_info_t ft;
    bool yes = true;
    PMIX_INFO_LOAD(&ft, PMIX_GROUP_FT_COLLECTIVE, &yes, PMIX_BOOL);
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    for (int i = 0; i < WARMUP; i++)
        check(PMIx_Fence(&all, 1, &ft, 1), "PMIx_Fence");
    t0 = now_s();
    for (int i = 0; i < ROUNDS; i++)
        check(PMIx_Fence(&all, 1, &ft, 1), "PMIx_Fence");
    double fence_us = (now_s() - t0) / ROUNDS * 1e6;
    double plain_us = -1;
    if (k == 0) {
        for (int i = 0; i < WARMUP; i++)
            check(PMIx_Fence(&all, 1, NULL, 0), "PMIx_Fence");
        t0 = now_s();
        for (int i = 0; i < ROUNDS; i++)
            check(PMIx_Fence(&all, 1, NULL, 0), "PMIx_Fence");
        plain_us = (now_s() - t0) / ROUNDS * 1e6;
    }
    if (n != k) {
        fprintf(stderr, "ft_latency: %d failed, %d expected\n", n, k);
        return 1;
    }
    printf("timing rank %d validate_global_us %.1f fence_us %.1f plain_us %.1f failed %d\n",
           rank, us, fence_us, plain_us, n);
    check(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
