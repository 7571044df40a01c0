/* comm_from_group: the PMIx sequence of an MPI communicator built from a group (the
 * shape of Open MPI 5's MPI_Comm_create_from_group), then a member leaving. Needs
 * N >= 3 ranks; rank N-1 is the one that leaves.
 *   1. every rank constructs "cfg" over all N with PMIX_GROUP_ASSIGN_CONTEXT_ID and a
 *      PMIX_GROUP_INFO holding its PMIX_GROUP_LOCAL_CID (1000 + 7 * rank); each gets a
 *      context id.
 *   2. every rank reads every member's local CID with PMIx_Get qualified by
 *      PMIX_GROUP_CONTEXT_ID (the context id it got), and again qualified by
 *      PMIX_GROUP_ID; a context id no group has finds nothing (PMIX_ERR_NOT_FOUND).
 *   3. rank N-1 leaves "cfg"; every other rank gets PMIX_GROUP_LEFT naming it, then the
 *      survivors destruct "cfg" among themselves. With the argument "late-left" (ranks
 *      on several nodes of a host that carries no events, such as Slurm), the
 *      survivors destruct first and then wait for PMIX_GROUP_LEFT: a member on another
 *      node hears of the leave with the destruct.
 *   4. the survivors construct "cfg" again (the name reused after the destruct) and a
 *      second group "cfg2" right after it, both with context ids: the three ids differ;
 *      the local CIDs given this time are read under the new ids, and the old ones are
 *      still read under the old id (Open MPI reads them after the destruct). With the
 *      argument "whole-job" (a host whose collectives cannot list single ranks on
 *      several nodes, such as the two Slurm nodes of one machine: OpenPMIx's server
 *      fails there too), every rank fences after the destruct and the leaver takes
 *      part again: both groups are over all N ranks.
 * Every wait is bounded (10 s; the library's gets by PMIX_TIMEOUT). Prints
 * "comm_from_group rank R: ok". */
#include "common.h"

static uint32_t n;
static int left_seen;

static void left_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                         size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                         void *cbdata)
{
    (void)id, (void)source, (void)results, (void)nresults;
    const char *grp = group_id_of(info, ninfo);
    const pmix_proc_t *who = NULL;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
            PMIX_PROC == info[i].value.type)
            who = info[i].value.data.proc;
    if (PMIX_GROUP_LEFT == status && NULL != grp && 0 == strcmp(grp, "cfg") && NULL != who &&
        who->rank == n - 1)
        __atomic_store_n(&left_seen, 1, __ATOMIC_SEQ_CST);
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static size_t local_cid(uint32_t rank, int round)
{
    return 1000 + 7 * (size_t)rank + 100000 * (size_t)round;
}

/* Constructs `grp` over ranks 0..m-1, asking a context id and giving our local CID;
 * returns the context id. */
static size_t construct_with_cid(int step, const char *grp, uint32_t m, size_t lcid)
{
    pmix_proc_t *procs = calloc(m, sizeof(*procs));
    for (uint32_t r = 0; r < m; r++)
        PMIX_LOAD_PROCID(&procs[r], me.nspace, r);
    void *list = PMIx_Info_list_start();
    void *inner = PMIx_Info_list_start();
    pmix_data_array_t darray, outer;
    CHECK_OK(PMIx_Info_list_add(list, PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL),
             "PMIx_Info_list_add(ASSIGN_CONTEXT_ID)");
    CHECK_OK(PMIx_Info_list_add(inner, PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE),
             "PMIx_Info_list_add(LOCAL_CID)");
    CHECK_OK(PMIx_Info_list_convert(inner, &darray), "PMIx_Info_list_convert");
    CHECK_OK(PMIx_Info_list_add(list, PMIX_GROUP_INFO, &darray, PMIX_DATA_ARRAY),
             "PMIx_Info_list_add(GROUP_INFO)");
    PMIx_Info_list_release(inner);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    CHECK_OK(PMIx_Info_list_convert(list, &outer), "PMIx_Info_list_convert");
    PMIx_Info_list_release(list);
    pmix_info_t *results = NULL;
    size_t nresults = 0, ctxid = SIZE_MAX;
    pmix_status_t rc = PMIx_Group_construct(grp, procs, m, (pmix_info_t *)outer.array,
                                            outer.size, &results, &nresults);
    if (PMIX_SUCCESS != rc)
        fail("step %d: PMIx_Group_construct(%s): %s (%d)", step, grp, PMIx_Error_string(rc),
             rc);
    for (size_t i = 0; i < nresults; i++)
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID))
            PMIX_VALUE_GET_NUMBER(rc, &results[i].value, ctxid, size_t);
    if (SIZE_MAX == ctxid)
        fail("step %d: no PMIX_GROUP_CONTEXT_ID in the results of %s", step, grp);
    if (NULL != results)
        PMIX_INFO_FREE(results, nresults);
    PMIX_DATA_ARRAY_DESTRUCT(&outer);
    free(procs);
    return ctxid;
}

/* PMIx_Get of rank's PMIX_GROUP_LOCAL_CID qualified by `qual` (a PMIX_GROUP_CONTEXT_ID
 * when grp is NULL, else a PMIX_GROUP_ID). */
static pmix_status_t get_cid(uint32_t rank, size_t ctxid, const char *grp, size_t *out)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_info_t q[2];
    uint32_t timeout = 10;
    if (NULL == grp)
        PMIX_INFO_LOAD(&q[0], PMIX_GROUP_CONTEXT_ID, &ctxid, PMIX_SIZE);
    else
        PMIX_INFO_LOAD(&q[0], PMIX_GROUP_ID, grp, PMIX_STRING);
    PMIX_INFO_SET_QUALIFIER(&q[0]);
    PMIX_INFO_LOAD(&q[1], PMIX_TIMEOUT, &timeout, PMIX_UINT32);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&p, PMIX_GROUP_LOCAL_CID, q, 2, &val);
    PMIX_INFO_DESTRUCT(&q[0]);
    PMIX_INFO_DESTRUCT(&q[1]);
    if (PMIX_SUCCESS != rc)
        return rc;
    if (PMIX_SIZE != val->type)
        fail("the local CID of rank %u has type %d, not PMIX_SIZE", rank, val->type);
    *out = val->data.size;
    PMIX_VALUE_RELEASE(val);
    return PMIX_SUCCESS;
}

static void check_cids(int step, uint32_t m, size_t ctxid, const char *grp, int round)
{
    for (uint32_t r = 0; r < m; r++) {
        size_t got = 0;
        pmix_status_t rc = get_cid(r, ctxid, grp, &got);
        if (PMIX_SUCCESS != rc)
            fail("step %d: PMIx_Get of rank %u's local CID under %s %s: %s (%d)", step, r,
                 NULL == grp ? "context id" : "group", NULL == grp ? "" : grp,
                 PMIx_Error_string(rc), rc);
        if (got != local_cid(r, round))
            fail("step %d: rank %u's local CID is %zu, it gave %zu", step, r, got,
                 local_cid(r, round));
    }
}

static void wait_left(uint32_t leaver)
{
    double deadline = now_s() + 10.0;
    while (!__atomic_load_n(&left_seen, __ATOMIC_SEQ_CST)) {
        if (now_s() > deadline)
            fail("step 3: no PMIX_GROUP_LEFT for rank %u leaving cfg (waited 10 s)", leaver);
        sleep_ms(5);
    }
}

int main(int argc, char **argv)
{
    bool late_left = false, whole_job = false;
    for (int a = 1; a < argc; a++) {
        late_left |= 0 == strcmp(argv[a], "late-left");
        whole_job |= 0 == strcmp(argv[a], "whole-job");
    }
    n = init_or_fail("comm_from_group");
    if (n < 3)
        fail("needs at least 3 ranks, got %u", n);
    pmix_status_t code = PMIX_GROUP_LEFT;
    pmix_status_t rc =
        PMIx_Register_event_handler(&code, 1, NULL, 0, left_handler, NULL, NULL);
    if (rc < 0)
        fail("PMIx_Register_event_handler(PMIX_GROUP_LEFT): %s (%d)", PMIx_Error_string(rc),
             rc);
    uint32_t leaver = n - 1;

    /* 1, 2 */
    size_t c1 = construct_with_cid(1, "cfg", n, local_cid(me.rank, 0));
    check_cids(2, n, c1, NULL, 0);
    check_cids(2, n, 0, "cfg", 0);
    size_t none = 0;
    rc = get_cid(0, c1 + 1000, NULL, &none);
    if (PMIX_ERR_NOT_FOUND != rc)
        fail("step 2: a context id no group has: %s (%d), not NOT-FOUND",
             PMIx_Error_string(rc), rc);

    /* 3 */
    fence_or_fail("fence before the leave");
    if (me.rank == leaver) {
        CHECK_OK(PMIx_Group_leave("cfg", NULL, 0), "PMIx_Group_leave(cfg)");
        if (!whole_job) {
            printf("comm_from_group rank %u: ok\n", me.rank);
            finalize_or_fail();
            return 0;
        }
    } else {
        if (!late_left)
            wait_left(leaver);
        CHECK_OK(PMIx_Group_destruct("cfg", NULL, 0), "PMIx_Group_destruct(cfg)");
        if (late_left)
            wait_left(leaver);
    }
    if (whole_job)
        fence_or_fail("fence after the destruct");

    /* 4 */
    uint32_t m = whole_job ? n : n - 1;
    size_t c2 = construct_with_cid(4, "cfg", m, local_cid(me.rank, 1));
    size_t c3 = construct_with_cid(4, "cfg2", m, local_cid(me.rank, 2));
    if (c1 == c2 || c1 == c3 || c2 == c3)
        fail("step 4: context ids %zu (cfg), %zu (cfg again), %zu (cfg2) are not distinct", c1,
             c2, c3);
    check_cids(4, m, c2, NULL, 1);
    check_cids(4, m, c3, NULL, 2);
    check_cids(4, n, c1, NULL, 0);
    CHECK_OK(PMIx_Group_destruct("cfg", NULL, 0), "PMIx_Group_destruct(cfg, again)");
    CHECK_OK(PMIx_Group_destruct("cfg2", NULL, 0), "PMIx_Group_destruct(cfg2)");
    printf("comm_from_group rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
