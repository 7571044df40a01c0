/* leave_rules: the return codes and progress-thread rules of PMIx_Group_leave /
 * _leave_nb (seed 001), for a library that has them (libpmix_ffi; OpenPMIx 4.2.2's
 * client has no PMIX_ERR_WOULD_BLOCK). Needs N >= 3. Steps:
 *   1. before PMIx_Init: both forms return PMIX_ERR_INIT; the callback never runs.
 *   2. after init, every rank registers a PMIX_GROUP_LEFT handler (counting events by
 *      departed rank) and all construct "gw".
 *   3. PMIX_ERR_BAD_PARAM for a NULL and for an over-length (PMIX_MAX_NSLEN + 1) id,
 *      in both forms; the callback never runs.
 *   4. rank 0, from inside an event handler (a PROC_LOCAL event it raises itself) and
 *      from inside a PMIx_Fence_nb callback: PMIx_Group_leave and PMIx_Group_leave_nb
 *      with a NULL cbfunc both return PMIX_ERR_WOULD_BLOCK; nothing happens: after a
 *      fence nobody has seen a PMIX_GROUP_LEFT.
 *   5. rank N-1 leaves with PMIx_Group_leave_nb and a NULL cbfunc from its main
 *      thread: that is the blocking form, PMIX_SUCCESS; every other rank sees exactly
 *      one PMIX_GROUP_LEFT, naming N-1; N-1 sees none.
 *   6. rank N-2 leaves with a callback: PMIX_SUCCESS, then the callback runs exactly
 *      once with PMIX_SUCCESS; ranks 0..N-3 see one more PMIX_GROUP_LEFT, naming N-2.
 *   7. the survivors 0..N-3 destruct "gw" among themselves.
 * Every wait is bounded (10 s). Prints "leave_rules rank R: ok". */
#include "common.h"

#define MAXR 64

static uint32_t n;
static int left_of[MAXR];
static volatile int cb_calls, cb_status = 1;

static void left_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                         pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)source, (void)results, (void)nresults;
    if (PMIX_GROUP_LEFT == status)
        for (size_t i = 0; i < ninfo; i++)
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
                PMIX_PROC == info[i].value.type && info[i].value.data.proc &&
                info[i].value.data.proc->rank < MAXR)
                __atomic_add_fetch(&left_of[info[i].value.data.proc->rank], 1,
                                   __ATOMIC_SEQ_CST);
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void op_cb(pmix_status_t status, void *cbdata)
{
    (void)cbdata;
    cb_status = status;
    __atomic_add_fetch(&cb_calls, 1, __ATOMIC_SEQ_CST);
}

/* What the calls made on the progress thread returned. */
static volatile pmix_status_t in_handler[2] = {1, 1}, in_callback[2] = {1, 1};
static volatile int handler_ran, callback_ran;

#define CODE_PROBE (PMIX_EXTERNAL_ERR_BASE - 50)

static void probe_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                          pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                          size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                          void *cbdata)
{
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results,
        (void)nresults;
    in_handler[0] = PMIx_Group_leave("gw", NULL, 0);
    in_handler[1] = PMIx_Group_leave_nb("gw", NULL, 0, NULL, NULL);
    __atomic_store_n(&handler_ran, 1, __ATOMIC_SEQ_CST);
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void fence_cb(pmix_status_t status, void *cbdata)
{
    (void)status, (void)cbdata;
    in_callback[0] = PMIx_Group_leave("gw", NULL, 0);
    in_callback[1] = PMIx_Group_leave_nb("gw", NULL, 0, NULL, NULL);
    __atomic_store_n(&callback_ran, 1, __ATOMIC_SEQ_CST);
}

static void wait_flag(volatile int *flag, const char *what)
{
    double deadline = now_s() + 10.0;
    while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST)) {
        if (now_s() > deadline)
            fail("%s did not happen within 10 s", what);
        sleep_ms(5);
    }
}

/* Waits until left_of[r] reaches want (10 s), then checks it stays there. */
static void expect_left(uint32_t r, int want, const char *step)
{
    double deadline = now_s() + 10.0;
    while (__atomic_load_n(&left_of[r], __ATOMIC_SEQ_CST) < want) {
        if (now_s() > deadline)
            fail("%s: %d PMIX_GROUP_LEFT for rank %u, expected %d", step, left_of[r], r, want);
        sleep_ms(5);
    }
    if (left_of[r] != want)
        fail("%s: %d PMIX_GROUP_LEFT for rank %u, expected %d", step, left_of[r], r, want);
}

int main(void)
{
    /* 1 */
    prog_name = "leave_rules";
    if (PMIX_ERR_INIT != PMIx_Group_leave("gw", NULL, 0))
        fail("step 1: PMIx_Group_leave before init is not PMIX_ERR_INIT");
    if (PMIX_ERR_INIT != PMIx_Group_leave_nb("gw", NULL, 0, op_cb, NULL))
        fail("step 1: PMIx_Group_leave_nb before init is not PMIX_ERR_INIT");
    n = init_or_fail("leave_rules");
    if (n < 3 || n > MAXR)
        fail("needs 3 to %d ranks, has %u", MAXR, n);

    /* 2 */
    pmix_status_t code = PMIX_GROUP_LEFT;
    if (PMIx_Register_event_handler(&code, 1, NULL, 0, left_handler, NULL, NULL) < 0)
        fail("step 2: registering the PMIX_GROUP_LEFT handler");
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    CHECK_OK(PMIx_Group_construct("gw", &all, 1, NULL, 0, &results, &nresults),
             "step 2: PMIx_Group_construct(gw)");
    if (results)
        PMIX_INFO_FREE(results, nresults);

    /* 3 */
    char longname[PMIX_MAX_NSLEN + 2];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    if (PMIX_ERR_BAD_PARAM != PMIx_Group_leave(NULL, NULL, 0) ||
        PMIX_ERR_BAD_PARAM != PMIx_Group_leave(longname, NULL, 0) ||
        PMIX_ERR_BAD_PARAM != PMIx_Group_leave_nb(NULL, NULL, 0, op_cb, NULL) ||
        PMIX_ERR_BAD_PARAM != PMIx_Group_leave_nb(longname, NULL, 0, op_cb, NULL))
        fail("step 3: a NULL or over-length group id is not PMIX_ERR_BAD_PARAM");
    fence_or_fail("step 3 fence");
    if (cb_calls)
        fail("step 1/3: a refused PMIx_Group_leave_nb ran its callback");

    /* 4 */
    if (0 == me.rank) {
        pmix_status_t probe = CODE_PROBE;
        if (PMIx_Register_event_handler(&probe, 1, NULL, 0, probe_handler, NULL, NULL) < 0)
            fail("step 4: registering the probe handler");
        CHECK_OK(PMIx_Notify_event(CODE_PROBE, NULL, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL),
                 "step 4: PMIx_Notify_event");
        wait_flag(&handler_ran, "step 4: the probe handler");
        CHECK_OK(PMIx_Fence_nb(&me, 1, NULL, 0, fence_cb, NULL), "step 4: PMIx_Fence_nb");
        wait_flag(&callback_ran, "step 4: the fence callback");
        for (int i = 0; i < 2; i++)
            if (PMIX_ERR_WOULD_BLOCK != in_handler[i] || PMIX_ERR_WOULD_BLOCK != in_callback[i])
                fail("step 4: a leave on the progress thread returned %d/%d (handler), %d/%d "
                     "(callback), expected PMIX_ERR_WOULD_BLOCK",
                     in_handler[0], in_handler[1], in_callback[0], in_callback[1]);
    }
    fence_or_fail("step 4 fence");
    sleep_ms(200);
    for (uint32_t r = 0; r < n; r++)
        if (left_of[r])
            fail("step 4: a refused leave sent PMIX_GROUP_LEFT for rank %u", r);
    fence_or_fail("step 4 fence 2");

    /* 5 */
    uint32_t a = n - 1, b = n - 2;
    if (a == me.rank)
        CHECK_OK(PMIx_Group_leave_nb("gw", NULL, 0, NULL, NULL),
                 "step 5: PMIx_Group_leave_nb with a NULL cbfunc");
    else
        expect_left(a, 1, "step 5");
    fence_or_fail("step 5 fence");
    if (a == me.rank && left_of[a])
        fail("step 5: the leaver saw its own PMIX_GROUP_LEFT");

    /* 6 */
    if (b == me.rank) {
        CHECK_OK(PMIx_Group_leave_nb("gw", NULL, 0, op_cb, NULL), "step 6: PMIx_Group_leave_nb");
        double deadline = now_s() + 10.0;
        while (!__atomic_load_n(&cb_calls, __ATOMIC_SEQ_CST)) {
            if (now_s() > deadline)
                fail("step 6: the leave callback never ran");
            sleep_ms(5);
        }
        sleep_ms(100);
        if (1 != cb_calls || PMIX_SUCCESS != cb_status)
            fail("step 6: the leave callback ran %d time(s) with %d", cb_calls, cb_status);
    } else if (me.rank < b) {
        expect_left(b, 1, "step 6");
    }
    fence_or_fail("step 6 fence");

    /* 7 */
    if (me.rank < b)
        CHECK_OK(PMIx_Group_destruct("gw", NULL, 0), "step 7: PMIx_Group_destruct among survivors");
    fence_or_fail("step 7 fence");
    printf("leave_rules rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
