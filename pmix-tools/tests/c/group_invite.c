/* group_invite: an asynchronous group, built from events as 4.2 clients do it
 * (docs/wire.md §6.9). Needs N >= 3. Rank 0 invites ranks 1..N-1 to "ginv" with
 * PMIx_Group_invite; each invitee's PMIX_GROUP_INVITED handler records the
 * invitation and its main thread answers with PMIx_Group_join: rank N-1 declines,
 * the others accept. The invite completes; then the members (0..N-2) fence over
 * "ginv" (the server learned the group from the inviter's
 * PMIX_GROUP_CONSTRUCT_COMPLETE) and destruct it. Every wait is bounded (10 s).
 * The decline goes first: libpmix2 4.2.2's leader completes the invite as soon as
 * the acceptances it waits for are in and then hangs on a decline that comes
 * later, so the acceptors join only once the decliner has committed a key after
 * its join (a direct-modex get, held until then: its DECLINED event was relayed to
 * the leader before that commit was processed).
 * Prints "group_invite rank R: ok". */
#include "common.h"

static volatile int invited;
static char invited_grp[PMIX_MAX_NSLEN + 1];
static pmix_proc_t invite_leader;
static uint32_t n;

static void invited_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                            pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                            size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                            void *cbdata)
{
    (void)id, (void)status, (void)results, (void)nresults;
    const char *grp = group_id_of(info, ninfo);
    if (grp)
        snprintf(invited_grp, sizeof(invited_grp), "%s", grp);
    if (NULL != source)
        memcpy(&invite_leader, source, sizeof(invite_leader));
    __atomic_store_n(&invited, 1, __ATOMIC_SEQ_CST);
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

int main(void)
{
    n = init_or_fail("group_invite");
    if (n < 3)
        fail("needs at least 3 ranks, got %u", n);
    pmix_rank_t decliner = n - 1;
    pmix_status_t code = PMIX_GROUP_INVITED;
    pmix_status_t rc =
        PMIx_Register_event_handler(&code, 1, NULL, 0, invited_handler, NULL, NULL);
    if (rc < 0)
        fail("PMIx_Register_event_handler(PMIX_GROUP_INVITED): %s (%d)",
             PMIx_Error_string(rc), rc);
    fence_or_fail("fence after registering");

    if (0 == me.rank) {
        pmix_proc_t *procs = calloc(n - 1, sizeof(*procs));
        for (uint32_t r = 1; r < n; r++)
            PMIX_LOAD_PROCID(&procs[r - 1], me.nspace, r);
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Group_invite("ginv", procs, n - 1, NULL, 0, &results, &nresults);
        if (PMIX_SUCCESS != rc)
            fail("PMIx_Group_invite(ginv): %s (%d)", PMIx_Error_string(rc), rc);
        if (NULL != results)
            PMIX_INFO_FREE(results, nresults);
        free(procs);
    } else {
        double deadline = now_s() + 10.0;
        while (!__atomic_load_n(&invited, __ATOMIC_SEQ_CST)) {
            if (now_s() > deadline)
                fail("no PMIX_GROUP_INVITED within 10 s");
            sleep_ms(5);
        }
        if (0 != strcmp(invited_grp, "ginv") || 0 != invite_leader.rank)
            fail("invited to '%s' by rank %u, not to ginv by rank 0", invited_grp,
                 invite_leader.rank);
        pmix_group_opt_t opt = me.rank == decliner ? PMIX_GROUP_DECLINE : PMIX_GROUP_ACCEPT;
        if (PMIX_GROUP_ACCEPT == opt) {
            pmix_proc_t d;
            pmix_value_t *got = NULL;
            int timeout = 10;
            pmix_info_t tinfo;
            PMIX_INFO_LOAD(&tinfo, PMIX_TIMEOUT, &timeout, PMIX_INT);
            PMIX_LOAD_PROCID(&d, me.nspace, decliner);
            CHECK_OK(PMIx_Get(&d, "group_invite.declined", &tinfo, 1, &got),
                     "PMIx_Get(group_invite.declined)");
            PMIX_VALUE_RELEASE(got);
            PMIX_INFO_DESTRUCT(&tinfo);
        }
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Group_join("ginv", &invite_leader, opt, NULL, 0, &results, &nresults);
        if (PMIX_SUCCESS != rc)
            fail("PMIx_Group_join(ginv, %s): %s (%d)",
                 opt == PMIX_GROUP_ACCEPT ? "accept" : "decline", PMIx_Error_string(rc), rc);
        if (NULL != results)
            PMIX_INFO_FREE(results, nresults);
        if (PMIX_GROUP_DECLINE == opt) {
            pmix_value_t v;
            v.type = PMIX_UINT32;
            v.data.uint32 = 1;
            CHECK_OK(PMIx_Put(PMIX_GLOBAL, "group_invite.declined", &v), "PMIx_Put");
            CHECK_OK(PMIx_Commit(), "PMIx_Commit");
        }
    }
    fence_or_fail("fence after the invitation");
    if (me.rank != decliner) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, "ginv", PMIX_RANK_WILDCARD);
        rc = PMIx_Fence(&p, 1, NULL, 0);
        if (PMIX_SUCCESS != rc)
            fail("fence over ginv: %s (%d)", PMIx_Error_string(rc), rc);
        rc = PMIx_Group_destruct("ginv", NULL, 0);
        if (PMIX_SUCCESS != rc)
            fail("PMIx_Group_destruct(ginv): %s (%d)", PMIx_Error_string(rc), rc);
    }
    fence_or_fail("final fence");
    printf("group_invite rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
