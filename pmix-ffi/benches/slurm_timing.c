/* The timing client of benches/slurm_hosted.rs (usage: slurm_timing ROUNDS): every
 * rank times, ROUNDS times each, (1) PMIx_Fence over the namespace without data,
 * (2) PMIx_Put of a 64-byte GLOBAL value, PMIx_Commit and PMIx_Fence with
 * PMIX_COLLECT_DATA, (3) after it, PMIx_Get of that key of the rank half the job away
 * (on the other node under srun -N 2). Rank 0 prints one line per measure:
 * "timing NAME median_us p90_us". Any failure: "timing FAIL ..." and exit 1. */
#include <pmix.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(pmix_proc_t *me, const char *name, double *t, int n)
{
    if (me->rank != 0)
        return;
    qsort(t, (size_t)n, sizeof(double), cmp);
    printf("timing %s %.1f %.1f\n", name, t[n / 2], t[(n * 9) / 10]);
}

#define OK(rc, what)                                                                       \
    do {                                                                                   \
        pmix_status_t rc_ = (rc);                                                          \
        if (PMIX_SUCCESS != rc_) {                                                         \
            printf("timing FAIL rank %u: %s: %d\n", me.rank, (what), rc_);                 \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    if (rounds < 1)
        rounds = 1;
    pmix_proc_t me;
    OK(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    OK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "PMIx_Get(PMIX_JOB_SIZE)");
    uint32_t n = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    double *t = calloc((size_t)rounds, sizeof(double));
    OK(PMIx_Fence(NULL, 0, NULL, 0), "warm-up fence");

    for (int i = 0; i < rounds; i++) {
        double t0 = now_us();
        OK(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
        t[i] = now_us() - t0;
    }
    report(&me, "fence", t, rounds);

    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    double *g = calloc((size_t)rounds, sizeof(double));
    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + n / 2) % n);
    for (int i = 0; i < rounds; i++) {
        char key[32], bytes[64];
        snprintf(key, sizeof key, "timing.%d", i);
        memset(bytes, 'a' + (int)(me.rank % 26), sizeof bytes);
        pmix_value_t v;
        PMIX_VALUE_CONSTRUCT(&v);
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = bytes;
        v.data.bo.size = sizeof bytes;
        double t0 = now_us();
        OK(PMIx_Put(PMIX_GLOBAL, key, &v), "PMIx_Put");
        OK(PMIx_Commit(), "PMIx_Commit");
        OK(PMIx_Fence(NULL, 0, &info, 1), "PMIx_Fence(collect)");
        t[i] = now_us() - t0;
        pmix_value_t *got = NULL;
        t0 = now_us();
        OK(PMIx_Get(&peer, key, NULL, 0, &got), "PMIx_Get(peer)");
        g[i] = now_us() - t0;
        if (got->type != PMIX_BYTE_OBJECT || got->data.bo.size != sizeof bytes ||
            got->data.bo.bytes[0] != 'a' + (int)(peer.rank % 26)) {
            printf("timing FAIL rank %u: peer %u's value is wrong\n", me.rank, peer.rank);
            exit(1);
        }
        PMIX_VALUE_RELEASE(got);
    }
    report(&me, "fence_data", t, rounds);
    report(&me, "get", g, rounds);
    OK(PMIx_Fence(NULL, 0, NULL, 0), "last fence");
    free(t);
    free(g);
    PMIx_Finalize(NULL, 0);
    return 0;
}
