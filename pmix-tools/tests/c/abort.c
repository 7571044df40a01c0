/* abort: rank 1 fences with the others, then exits with status 1 without finalizing.
 * Every other rank registers for PMIX_ERR_PROC_ABORTED before that fence and then
 * waits (at most 60 s) for the event naming rank 1 (its source, or the affected proc
 * when the event carries PMIX_EVENT_AFFECTED_PROC), then finalizes and exits 0. The
 * launcher must tell the others and end with status 1. Needs N >= 2. Prints
 * "abort rank R: got PMIX_ERR_PROC_ABORTED for rank 1" on the survivors. */
#include "common.h"

static volatile int aborted_seen = 0;
static volatile int wrong_proc = -1;

static void on_aborted(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)results, (void)nresults;
    if (PMIX_ERR_PROC_ABORTED == status) {
        int rank = source ? (int)source->rank : -1;
        for (size_t i = 0; i < ninfo; i++)
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
                info[i].value.type == PMIX_PROC && info[i].value.data.proc)
                rank = (int)info[i].value.data.proc->rank;
        if (1 == rank)
            __atomic_store_n(&aborted_seen, 1, __ATOMIC_SEQ_CST);
        else
            wrong_proc = rank;
    }
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

int main(void)
{
    uint32_t n = init_or_fail("abort");
    if (n < 2)
        fail("needs at least 2 ranks, has %u", n);
    if (1 != me.rank) {
        pmix_status_t code = PMIX_ERR_PROC_ABORTED;
        pmix_status_t rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_aborted, NULL, NULL);
        if (rc < 0)
            fail("PMIx_Register_event_handler(PMIX_ERR_PROC_ABORTED): %s (%d)",
                 PMIx_Error_string(rc), rc);
    }
    fence_or_fail("PMIx_Fence");
    if (1 == me.rank) {
        fprintf(stderr, "abort rank 1: exiting with status 1 without finalizing\n");
        exit(1);
    }
    double deadline = now_s() + 60.0;
    while (!__atomic_load_n(&aborted_seen, __ATOMIC_SEQ_CST)) {
        if (wrong_proc != -1)
            fail("PMIX_ERR_PROC_ABORTED named rank %d, expected rank 1", wrong_proc);
        if (now_s() > deadline)
            fail("no PMIX_ERR_PROC_ABORTED for rank 1 within 60 s");
        sleep_ms(10);
    }
    printf("abort rank %u: got PMIX_ERR_PROC_ABORTED for rank 1\n", me.rank);
    finalize_or_fail();
    return 0;
}
