/* node_fault: what the survivors of a fault across nodes see (usage: node_fault OP
 * SECONDS [MB]). OP is what every rank does over and over while the test bed makes a
 * fault (a node killed whole, a link cut, a slow link):
 *   fence      PMIx_Fence over the whole job, collecting nothing;
 *   bigfence   puts MB MiB (default 1) under one key, commits, PMIx_Fence collecting
 *              data (each fence carries MB MiB per rank);
 *   construct  PMIx_Group_construct of every rank (a new group each time, with
 *              PMIX_GROUP_FT_COLLECTIVE), then its destruct;
 *   validate   pmixrs_ft_validate_global over the job (pmix_ft.h).
 * A default event handler records every event. For SECONDS seconds (from the first
 * operation, as rank 0 counts them: every rank stops after the same operation, agreed
 * every 100 fences, 20 constructs or validates, or each big fence by a fence
 * carrying rank 0's decision) each rank prints, with the wall-clock time
 * (CLOCK_REALTIME, seconds):
 *   "node_fault rank R: T ready"                 after a first fence,
 *   "node_fault rank R: T op N STATUS S"         an operation that did not succeed,
 *                                                 or one that did before an
 *                                                 agreement,
 *   "node_fault rank R: T event CODE from NS:R"  an event,
 *   "node_fault rank R: T end"                   when the time is up (then it
 *                                                 finalizes: a survivor's finalize
 *                                                 with a dead peer must not hang).
 * An operation that fails is not retried forever: after 3 failures in a row the rank
 * stops operating and waits for the end. */
#include "common.h"

#include <pmix_ft.h>

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)info, (void)ninfo, (void)results, (void)nresults;
    printf("node_fault rank %u: %.3f event %s from %s:%u\n", me.rank, wall(),
           PMIx_Error_string(status), source ? source->nspace : "?",
           source ? source->rank : 0);
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* A fence over the job collecting data. */
static pmix_status_t fence_collecting(void)
{
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    return PMIx_Fence(NULL, 0, &collect, 1);
}

/* "op N STATUS S", stamped. */
static void report(unsigned iter, pmix_status_t rc)
{
    printf("node_fault rank %u: %.3f op %u STATUS %s\n", me.rank, wall(), iter,
           PMIx_Error_string(rc));
}

static pmix_status_t op(const char *what, uint32_t n, size_t mb, unsigned iter)
{
    if (!strcmp(what, "fence"))
        return PMIx_Fence(NULL, 0, NULL, 0);
    if (!strcmp(what, "bigfence")) {
        size_t len = mb << 20;
        char *buf = malloc(len);
        memset(buf, (int)(me.rank + iter), len);
        pmix_value_t v;
        PMIX_VALUE_CONSTRUCT(&v);
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = buf;
        v.data.bo.size = len;
        /* One key, put again each time: every fence carries MB MiB per rank (a key
         * per fence would carry all the earlier ones too, growing without end). */
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "nf.big", &v);
        free(buf);
        if (PMIX_SUCCESS == rc)
            rc = PMIx_Commit();
        if (PMIX_SUCCESS == rc)
            rc = fence_collecting();
        return rc;
    }
    if (!strcmp(what, "construct")) {
        char grp[64];
        snprintf(grp, sizeof grp, "fault-%u", iter);
        pmix_proc_t *procs;
        PMIX_PROC_CREATE(procs, n);
        for (uint32_t r = 0; r < n; r++)
            PMIX_LOAD_PROCID(&procs[r], me.nspace, r);
        pmix_info_t ft;
        PMIX_INFO_LOAD(&ft, PMIX_GROUP_FT_COLLECTIVE, NULL, PMIX_BOOL);
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        pmix_status_t rc = PMIx_Group_construct(grp, procs, n, &ft, 1, &results, &nresults);
        PMIX_PROC_FREE(procs, n);
        if (results)
            PMIX_INFO_FREE(results, nresults);
        if (PMIX_SUCCESS == rc)
            rc = PMIx_Group_destruct(grp, NULL, 0);
        return rc;
    }
    if (!strcmp(what, "validate")) {
        int failed = 0, fresh = 0;
        pmix_status_t rc = pmixrs_ft_validate_global(me.nspace, &failed, &fresh);
        if (PMIX_SUCCESS == rc && fresh > 0)
            printf("node_fault rank %u: %.3f validate_global %d failed\n", me.rank, wall(),
                   failed);
        return rc;
    }
    fail("unknown operation %s", what);
}

/* Whether to go on, as rank 0 decides (mine: its own view): every rank stops after
 * the same operation, so that no rank is left alone in a collective its peers have
 * stopped making (deciding by each rank's own clock hangs some runs at the end,
 * with any server). Rank 0 puts its decision, a fence collecting data carries it. */
static pmix_status_t agree(unsigned iter, int mine, int *go)
{
    char key[32];
    snprintf(key, sizeof key, "nf.go.%u", iter);
    pmix_status_t rc = PMIX_SUCCESS;
    if (0 == me.rank) {
        pmix_value_t v;
        PMIX_VALUE_CONSTRUCT(&v);
        v.type = PMIX_UINT32;
        v.data.uint32 = (uint32_t)mine;
        rc = PMIx_Put(PMIX_GLOBAL, key, &v);
        if (PMIX_SUCCESS == rc)
            rc = PMIx_Commit();
    }
    if (PMIX_SUCCESS == rc)
        rc = fence_collecting();
    if (PMIX_SUCCESS != rc)
        return rc;
    pmix_proc_t zero;
    PMIX_LOAD_PROCID(&zero, me.nspace, 0);
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&zero, key, NULL, 0, &v);
    if (PMIX_SUCCESS == rc && v) {
        *go = PMIX_UINT32 == v->type ? (int)v->data.uint32 : 0;
        PMIX_VALUE_RELEASE(v);
    }
    return rc;
}

int main(int argc, char **argv)
{
    uint32_t n = init_or_fail("node_fault");
    if (argc < 3)
        fail("usage: node_fault OP SECONDS [MB]");
    const char *what = argv[1];
    double seconds = atof(argv[2]);
    size_t mb = argc > 3 ? (size_t)atoi(argv[3]) : 1;
    /* The blocking form returns the handler's reference (>= 0) or an error. */
    pmix_status_t ref = PMIx_Register_event_handler(NULL, 0, NULL, 0, handler, NULL, NULL);
    if (ref < 0)
        fail("PMIx_Register_event_handler: %s (%d)", PMIx_Error_string(ref), ref);
    CHECK_OK(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
    double start = wall();
    printf("node_fault rank %u: %.3f ready\n", me.rank, start);
    /* Operations between two agreements: about 1 % of the run. */
    unsigned every = !strcmp(what, "fence") ? 100 : !strcmp(what, "bigfence") ? 1 : 20;
    unsigned failures = 0;
    for (unsigned i = 1;; i++) {
        if (failures >= 3) {
            /* Given up: wait out the time (the host may end the job first). */
            while (wall() - start < seconds)
                sleep_ms(50);
            break;
        }
        pmix_status_t rc = op(what, n, mb, i);
        if (PMIX_SUCCESS != rc || i % every == 0)
            report(i, rc);
        failures = PMIX_SUCCESS == rc ? 0 : failures + 1;
        if (PMIX_SUCCESS == rc && i % every == 0) {
            int go = 1;
            rc = agree(i, wall() - start < seconds, &go);
            if (PMIX_SUCCESS != rc) {
                report(i, rc);
                failures++;
            } else if (!go) {
                break;
            }
        }
    }
    printf("node_fault rank %u: %.3f end\n", me.rank, wall());
    PMIx_Finalize(NULL, 0);
    printf("node_fault rank %u: %.3f finalized\n", me.rank, wall());
    return 0;
}
