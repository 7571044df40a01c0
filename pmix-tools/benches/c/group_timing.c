/* The timing client of benches/groups.rs (usage: group_timing ROUNDS): every rank
 * times, ROUNDS times, PMIx_Group_construct of "gt" over the whole namespace with
 * PMIX_GROUP_ASSIGN_CONTEXT_ID and a PMIX_GROUP_INFO holding its local CID, then
 * PMIx_Group_destruct of it (the name reused each round, as MPI reuses its own). Rank
 * 0 prints "timing construct MEDIAN_US P90_US", "timing destruct …" and
 * "timing both …". Any failure: "timing FAIL …" and exit 1. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pmix_proc_t me;

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

static void report(const char *name, double *t, int n)
{
    if (me.rank != 0)
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
    OK(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    size_t lcid = 1000 + me.rank;
    pmix_info_t inner;
    PMIX_INFO_LOAD(&inner, PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE);
    pmix_data_array_t darray = {PMIX_INFO, 1, &inner};
    pmix_info_t info[2];
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_GROUP_INFO, &darray, PMIX_DATA_ARRAY);
    double *c = calloc((size_t)rounds, sizeof(double));
    double *d = calloc((size_t)rounds, sizeof(double));
    double *b = calloc((size_t)rounds, sizeof(double));
    OK(PMIx_Fence(NULL, 0, NULL, 0), "warm-up fence");
    for (int i = 0; i < rounds; i++) {
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        double t0 = now_us();
        OK(PMIx_Group_construct("gt", &wild, 1, info, 2, &results, &nresults),
           "PMIx_Group_construct");
        double t1 = now_us();
        OK(PMIx_Group_destruct("gt", NULL, 0), "PMIx_Group_destruct");
        double t2 = now_us();
        if (NULL != results)
            PMIX_INFO_FREE(results, nresults);
        c[i] = t1 - t0;
        d[i] = t2 - t1;
        b[i] = t2 - t0;
    }
    report("construct", c, rounds);
    report("destruct", d, rounds);
    report("both", b, rounds);
    OK(PMIx_Fence(NULL, 0, NULL, 0), "last fence");
    PMIx_Finalize(NULL, 0);
    return 0;
}
