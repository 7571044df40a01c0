/* The timing client of benches/slurm_hosted.rs (usage: slurm_timing ROUNDS): every
 * rank times, ROUNDS times each, (1) PMIx_Fence over the namespace without data,
 * (2) PMIx_Put of a 64-byte GLOBAL value, PMIx_Commit and PMIx_Fence with
 * PMIX_COLLECT_DATA, (3) after it, PMIx_Get of that key of the rank half the job away
 * (on the other node under srun -N 2). Rank 0 prints one line per measure:
 * "timing NAME median_us p90_us". Any failure: "timing FAIL ..." and exit 1.
 *
 * What bounds (3) on a machine of few CPUs is how many ranks leave the fence at
 * once: a libpmix2 get is two thread switches (the caller hands the request to its
 * progress thread and sleeps until it answers), so ranks getting at the same instant
 * queue for the CPUs. Three more measures tell the store's read from that:
 * (4) "get_alone": the same round, but only rank 0 gets while the others sleep 2 ms;
 * (5) "get_again": rank 0 gets the same key once more; (6) from (3), each rank's
 * fence exit time (CLOCK_MONOTONIC: the nodes of this bench share one host's clock)
 * gathered by one more collecting fence: "spread", the median over rounds of the
 * time between the first and the last rank leaving the fence, and the gets of (3)
 * sorted by how many other ranks left the fence between 100 us before the rank did
 * and the end of its get: "get_quiet" (at most one) and "get_crowded" (four or
 * more). */
#include <pmix.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The gets of one key that make a round's get_again. */
#define REPEAT 20
/* The bytes of each value put. */
#define VALUE_LEN 64

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
    if (n == 0) {
        printf("timing %s nan nan\n", name);
        return;
    }
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

/* PMIx_Put of PREFIX.I (64 bytes of this rank's letter, GLOBAL), PMIx_Commit and a
 * collecting PMIx_Fence. */
static void put_commit_fence(pmix_proc_t me, const char *prefix, int i, pmix_info_t *collect)
{
    char key[32], bytes[VALUE_LEN];
    snprintf(key, sizeof key, "%s.%d", prefix, i);
    memset(bytes, 'a' + (int)(me.rank % 26), sizeof bytes);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = bytes;
    v.data.bo.size = sizeof bytes;
    OK(PMIx_Put(PMIX_GLOBAL, key, &v), "PMIx_Put");
    OK(PMIx_Commit(), "PMIx_Commit");
    OK(PMIx_Fence(NULL, 0, collect, 1), "PMIx_Fence(collect)");
}

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
    /* Per round of (3): this rank's fence exit time and its get's duration. */
    double *mine = calloc(2 * (size_t)rounds, sizeof(double));
    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + n / 2) % n);
    for (int i = 0; i < rounds; i++) {
        char key[32];
        snprintf(key, sizeof key, "timing.%d", i);
        double t0 = now_us();
        put_commit_fence(me, "timing", i, &info);
        double left = now_us();
        t[i] = left - t0;
        pmix_value_t *got = NULL;
        t0 = now_us();
        OK(PMIx_Get(&peer, key, NULL, 0, &got), "PMIx_Get(peer)");
        g[i] = now_us() - t0;
        mine[2 * i] = left;
        mine[2 * i + 1] = g[i];
        if (got->type != PMIX_BYTE_OBJECT || got->data.bo.size != VALUE_LEN ||
            got->data.bo.bytes[0] != 'a' + (int)(peer.rank % 26)) {
            printf("timing FAIL rank %u: peer %u's value is wrong\n", me.rank, peer.rank);
            exit(1);
        }
        PMIX_VALUE_RELEASE(got);
    }
    report(&me, "fence_data", t, rounds);
    report(&me, "get", g, rounds);

    /* (4), (5): rank 0 alone gets. */
    double *again = calloc((size_t)rounds, sizeof(double));
    for (int i = 0; i < rounds; i++) {
        char key[32];
        snprintf(key, sizeof key, "alone.%d", i);
        put_commit_fence(me, "alone", i, &info);
        /* Every rank has left the fence and gone to sleep before rank 0 gets. */
        struct timespec settle = {0, 1000000};
        nanosleep(&settle, NULL);
        if (me.rank != 0) {
            struct timespec pause = {0, 2000000};
            nanosleep(&pause, NULL);
            continue;
        }
        /* The first get, then the median of REPEAT more of the same key. */
        double rep[REPEAT];
        for (int k = 0; k <= REPEAT; k++) {
            pmix_value_t *got = NULL;
            double t0 = now_us();
            OK(PMIx_Get(&peer, key, NULL, 0, &got), "PMIx_Get(peer) alone");
            double d = now_us() - t0;
            if (k == 0)
                t[i] = d;
            else
                rep[k - 1] = d;
            PMIX_VALUE_RELEASE(got);
        }
        qsort(rep, REPEAT, sizeof(double), cmp);
        again[i] = rep[REPEAT / 2];
    }
    report(&me, "get_alone", t, rounds);
    report(&me, "get_again", again, rounds);

    /* (6): every rank's exit times and gets of (3), to rank 0. */
    pmix_value_t mv;
    PMIX_VALUE_CONSTRUCT(&mv);
    mv.type = PMIX_BYTE_OBJECT;
    mv.data.bo.bytes = (char *)mine;
    mv.data.bo.size = 2 * (size_t)rounds * sizeof(double);
    OK(PMIx_Put(PMIX_GLOBAL, "timing.exits", &mv), "PMIx_Put(exits)");
    OK(PMIx_Commit(), "PMIx_Commit");
    OK(PMIx_Fence(NULL, 0, &info, 1), "PMIx_Fence(exits)");
    if (me.rank == 0) {
        double *all = calloc(2 * (size_t)rounds * n, sizeof(double));
        for (uint32_t r = 0; r < n; r++) {
            pmix_proc_t p;
            PMIX_LOAD_PROCID(&p, me.nspace, r);
            pmix_value_t *got = NULL;
            OK(PMIx_Get(&p, "timing.exits", NULL, 0, &got), "PMIx_Get(exits)");
            if (got->type != PMIX_BYTE_OBJECT ||
                got->data.bo.size != 2 * (size_t)rounds * sizeof(double)) {
                printf("timing FAIL rank %u: rank %u's exit times are wrong\n", me.rank, r);
                exit(1);
            }
            memcpy(all + 2 * (size_t)rounds * r, got->data.bo.bytes, got->data.bo.size);
            PMIX_VALUE_RELEASE(got);
        }
        double *quiet = calloc((size_t)rounds * n, sizeof(double));
        double *crowded = calloc((size_t)rounds * n, sizeof(double));
        int nq = 0, nc = 0;
        for (int i = 0; i < rounds; i++) {
            double lo = 1e300, hi = -1e300;
            for (uint32_t r = 0; r < n; r++) {
                double x = all[2 * (size_t)rounds * r + 2 * i];
                lo = x < lo ? x : lo;
                hi = x > hi ? x : hi;
                double get = all[2 * (size_t)rounds * r + 2 * i + 1];
                int near = 0;
                for (uint32_t q = 0; q < n; q++) {
                    double y = all[2 * (size_t)rounds * q + 2 * i];
                    near += q != r && y >= x - 100.0 && y <= x + get;
                }
                if (near <= 1)
                    quiet[nq++] = get;
                else if (near >= 4)
                    crowded[nc++] = get;
            }
            t[i] = hi - lo;
        }
        report(&me, "spread", t, rounds);
        report(&me, "get_quiet", quiet, nq);
        report(&me, "get_crowded", crowded, nc);
        free(all);
        free(quiet);
        free(crowded);
    }
    OK(PMIx_Fence(NULL, 0, NULL, 0), "last fence");
    free(t);
    free(g);
    free(again);
    free(mine);
    PMIx_Finalize(NULL, 0);
    return 0;
}
