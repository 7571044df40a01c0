/* events: who gets which notification. Every rank registers one handler for CODE_A,
 * one for CODE_B (both end the chain with PMIX_EVENT_ACTION_COMPLETE, so default
 * handlers never see those codes) and a default handler. Then, one step at a time
 * (a fence after each notify, each rank waits for what it must have received, a
 * fence):
 *   1. rank 0: CODE_A, range LOCAL           -> every rank (the sender included)
 *   2. rank 1: CODE_B, range PROC_LOCAL      -> rank 1 alone
 *   3. rank 2: CODE_C, range SESSION         -> every rank's default handler
 *   4. rank 0: CODE_A, range CUSTOM {N-1}    -> rank N-1 alone
 *   5. rank 1: CODE_B, range GLOBAL          -> every rank
 *   6. rank 0: CODE_C, range LOCAL, PMIX_EVENT_NON_DEFAULT -> nobody (no handler
 *      registered for CODE_C but the defaults)
 *   7. rank N-1: CODE_C, range NAMESPACE     -> every rank's default handler
 * EVENTS_SKIP_STEPS="3,4,5,7" skips those steps: Open MPI 4.1's mpirun never
 * completes a client's notify whose range goes through its host (every range but
 * LOCAL and PROC_LOCAL; docs/wire.md §6.8 shows NAMESPACE), and the job stalls, so
 * the programs are validated under mpirun without them.
 * At the end every rank checks its exact counts per (handler, code, source rank):
 * nothing missing, nothing extra. Needs N >= 3. Prints "events rank R: ok". */
#include "common.h"

#define CODE_A (PMIX_EXTERNAL_ERR_BASE - 1)
#define CODE_B (PMIX_EXTERNAL_ERR_BASE - 2)
#define CODE_C (PMIX_EXTERNAL_ERR_BASE - 3)
#define MAXR 64

/* got[slot][source rank]: 0 = CODE_A handler, 1 = CODE_B handler, 2 = default
 * handler saw CODE_C, 3 = default handler saw CODE_A or CODE_B (never expected),
 * 4 = a handler saw an event from another nspace or out-of-range rank. */
static int got[5][MAXR];
static int want[5][MAXR];
static uint32_t n;

static void count(int slot, const pmix_proc_t *source)
{
    if (NULL == source || 0 != strncmp(source->nspace, me.nspace, PMIX_MAX_NSLEN) ||
        source->rank >= n || source->rank >= MAXR) {
        __atomic_add_fetch(&got[4][0], 1, __ATOMIC_SEQ_CST);
        return;
    }
    __atomic_add_fetch(&got[slot][source->rank], 1, __ATOMIC_SEQ_CST);
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)info, (void)ninfo, (void)results, (void)nresults;
    if (CODE_A == status)
        count(0, source);
    else if (CODE_B == status)
        count(1, source);
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void default_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                            pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                            size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                            void *cbdata)
{
    (void)id, (void)info, (void)ninfo, (void)results, (void)nresults;
    if (CODE_C == status)
        count(2, source);
    else if (CODE_A == status || CODE_B == status)
        count(3, source);
    /* other codes (the launcher's own events) are not this test's business */
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static volatile int notify_done;
static volatile pmix_status_t notify_status;

static void notify_cb(pmix_status_t status, void *cbdata)
{
    (void)cbdata;
    notify_status = status;
    __atomic_store_n(&notify_done, 1, __ATOMIC_SEQ_CST);
}

static void notify(int step, pmix_status_t code, pmix_data_range_t range, pmix_info_t *info,
                   size_t ninfo)
{
    notify_done = 0;
    pmix_status_t rc = PMIx_Notify_event(code, &me, range, info, ninfo, notify_cb, NULL);
    if (PMIX_SUCCESS != rc)
        fail("step %d: PMIx_Notify_event(%d, range %d): %s (%d)", step, code, range,
             PMIx_Error_string(rc), rc);
    double deadline = now_s() + 10.0;
    while (!__atomic_load_n(&notify_done, __ATOMIC_SEQ_CST)) {
        if (now_s() > deadline)
            fail("step %d: the notify (code %d, range %d) was never completed (10 s)", step,
                 code, range);
        sleep_ms(5);
    }
    if (PMIX_SUCCESS != notify_status && PMIX_OPERATION_SUCCEEDED != notify_status)
        fail("step %d: notify callback: %s (%d)", step, PMIx_Error_string(notify_status),
             notify_status);
}

/* Waits (at most 10 s) until every expected count is reached. */
static void wait_for_expected(int step)
{
    double deadline = now_s() + 10.0;
    for (;;) {
        int missing = -1, slot = 0;
        for (int s = 0; s < 3 && missing < 0; s++)
            for (uint32_t r = 0; r < n; r++)
                if (__atomic_load_n(&got[s][r], __ATOMIC_SEQ_CST) < want[s][r]) {
                    missing = (int)r;
                    slot = s;
                    break;
                }
        if (missing < 0)
            return;
        if (now_s() > deadline) {
            static const char *names[] = {"CODE_A handler", "CODE_B handler",
                                          "default handler (CODE_C)"};
            fail("step %d: %s got %d event(s) from rank %d, expected %d (waited 10 s)", step,
                 names[slot], got[slot][missing], missing, want[slot][missing]);
        }
        sleep_ms(5);
    }
}

/* Whether EVENTS_SKIP_STEPS (a comma list of step numbers) names `step`. */
static int skipped(int step)
{
    const char *list = getenv("EVENTS_SKIP_STEPS");
    while (list && *list) {
        char *end;
        long v = strtol(list, &end, 10);
        if (end == list)
            break;
        if (v == step)
            return 1;
        list = *end ? end + 1 : end;
    }
    return 0;
}

static void step_end(int step)
{
    char what[64];
    snprintf(what, sizeof what, "PMIx_Fence (after step %d)", step);
    fence_or_fail(what);
    wait_for_expected(step);
    fence_or_fail(what);
}

int main(void)
{
    n = init_or_fail("events");
    if (n < 3 || n > MAXR)
        fail("needs 3 to %d ranks, has %u", MAXR, n);
    uint32_t last = n - 1;

    pmix_status_t a = CODE_A, b = CODE_B;
    pmix_status_t rc = PMIx_Register_event_handler(&a, 1, NULL, 0, handler, NULL, NULL);
    if (rc < 0)
        fail("PMIx_Register_event_handler(CODE_A): %s (%d)", PMIx_Error_string(rc), rc);
    rc = PMIx_Register_event_handler(&b, 1, NULL, 0, handler, NULL, NULL);
    if (rc < 0)
        fail("PMIx_Register_event_handler(CODE_B): %s (%d)", PMIx_Error_string(rc), rc);
    rc = PMIx_Register_event_handler(NULL, 0, NULL, 0, default_handler, NULL, NULL);
    if (rc < 0)
        fail("PMIx_Register_event_handler(default): %s (%d)", PMIx_Error_string(rc), rc);
    fence_or_fail("PMIx_Fence (after registering)");

    /* 1 */
    if (!skipped(1)) {
        if (0 == me.rank)
            notify(1, CODE_A, PMIX_RANGE_LOCAL, NULL, 0);
        want[0][0] += 1;
        step_end(1);
    }
    /* 2 */
    if (!skipped(2)) {
        if (1 == me.rank) {
            notify(2, CODE_B, PMIX_RANGE_PROC_LOCAL, NULL, 0);
            want[1][1] += 1;
        }
        step_end(2);
    }
    /* 3 */
    if (!skipped(3)) {
        if (2 == me.rank)
            notify(3, CODE_C, PMIX_RANGE_SESSION, NULL, 0);
        want[2][2] += 1;
        step_end(3);
    }
    /* 4 */
    if (!skipped(4)) {
        if (0 == me.rank) {
            pmix_proc_t target;
            PMIX_LOAD_PROCID(&target, me.nspace, last);
            pmix_data_array_t darray = {.type = PMIX_PROC, .size = 1, .array = &target};
            pmix_info_t info;
            PMIX_INFO_LOAD(&info, PMIX_EVENT_CUSTOM_RANGE, &darray, PMIX_DATA_ARRAY);
            notify(4, CODE_A, PMIX_RANGE_CUSTOM, &info, 1);
            PMIX_INFO_DESTRUCT(&info);
        }
        if (last == me.rank)
            want[0][0] += 1;
        step_end(4);
    }
    /* 5 */
    if (!skipped(5)) {
        if (1 == me.rank)
            notify(5, CODE_B, PMIX_RANGE_GLOBAL, NULL, 0);
        want[1][1] += 1;
        step_end(5);
    }
    /* 6 */
    if (!skipped(6)) {
        if (0 == me.rank) {
            pmix_info_t info;
            bool yes = true;
            PMIX_INFO_LOAD(&info, PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
            notify(6, CODE_C, PMIX_RANGE_LOCAL, &info, 1);
            PMIX_INFO_DESTRUCT(&info);
        }
        step_end(6);
    }
    /* 7 */
    if (!skipped(7)) {
        if (last == me.rank)
            notify(7, CODE_C, PMIX_RANGE_NAMESPACE, NULL, 0);
        want[2][last] += 1;
        step_end(7);
    }

    /* Anything late or extra would show now. */
    sleep_ms(300);
    fence_or_fail("PMIx_Fence (end)");
    static const char *names[] = {"CODE_A handler", "CODE_B handler", "default handler (CODE_C)",
                                  "default handler (CODE_A/B)"};
    for (int s = 0; s < 4; s++)
        for (uint32_t r = 0; r < n; r++)
            if (got[s][r] != want[s][r])
                fail("%s got %d event(s) from rank %u, expected %d", names[s], got[s][r], r,
                     want[s][r]);
    if (got[4][0])
        fail("%d event(s) of ours came from an unknown source", got[4][0]);
    printf("events rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
