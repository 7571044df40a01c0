/* An invitee that joins from inside its invitation's handler (issue 21: the shape
 * of OpenPMIx's asyncgroup example), run as `pmix-run -n 4 group_join_nb`:
 *
 *   - every rank registers a PMIX_GROUP_INVITED handler, then fences;
 *   - rank 0 invites ranks 2 and 3 to "ourgroup" (PMIx_Group_invite, blocking);
 *   - ranks 2 and 3 call PMIx_Group_join_nb (accept) from the handler, on the
 *     progress thread: it must return PMIX_SUCCESS at once, and its callback then
 *     comes with PMIX_SUCCESS;
 *   - the three members fence over the group (an invitee may get there before the
 *     leader's PMIX_GROUP_CONSTRUCT_COMPLETE has reached the server) and destruct
 *     it; rank 1 only takes part in the fences over the job.
 *
 * With the argument "nocb" the join passes no callback, as asyncgroup does: that is
 * fire and forget (OpenPMIx runs no callback), not the blocking form, so it must return
 * PMIX_SUCCESS on the progress thread too.
 *
 * Each rank prints "group_join_nb rank R: ok"; any failed check prints FAIL on
 * stderr and exits 1. Built with libpmix2 and with libpmix_ffi alike. */
#include "common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int joined, regs, handled;
static int no_callback;
static pmix_status_t join_rc = -9999, join_cb_rc = -9999;
static void join_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void)info, (void)ninfo, (void)cbdata;
    pthread_mutex_lock(&lock);
    join_cb_rc = status;
    joined++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (release_fn)
        release_fn(release_cbdata);
}
static void invited(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)status, (void)results, (void)nresults;
    const char *grp = group_id_of(info, ninfo);
    if (grp && !PMIX_CHECK_PROCID(source, &me)) {
        join_rc = PMIx_Group_join_nb(grp, source, PMIX_GROUP_ACCEPT, NULL, 0,
                                     no_callback ? NULL : join_done, NULL);
        pthread_mutex_lock(&lock);
        handled++;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
    }
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}
static void reg_done(pmix_status_t s, size_t ref, void *cbdata)
{
    (void)s, (void)ref, (void)cbdata;
    pthread_mutex_lock(&lock);
    regs++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}
int main(int argc, char **argv)
{
    no_callback = argc > 1 && 0 == strcmp(argv[1], "nocb");
    init_or_fail("group_join_nb");
    pmix_status_t code = PMIX_GROUP_INVITED;
    PMIx_Register_event_handler(&code, 1, NULL, 0, invited, reg_done, NULL);
    wait_count(&lock, &cond, &regs, 1, "registration");
    fence_or_fail("fence");
    pmix_proc_t grp;
    PMIX_LOAD_PROCID(&grp, "ourgroup", PMIX_RANK_WILDCARD);
    if (me.rank == 0) {
        pmix_proc_t p[3];
        PMIX_LOAD_PROCID(&p[0], me.nspace, 0);
        PMIX_LOAD_PROCID(&p[1], me.nspace, 2);
        PMIX_LOAD_PROCID(&p[2], me.nspace, 3);
        pmix_info_t *res = NULL; size_t nres = 0;
        CHECK_OK(PMIx_Group_invite("ourgroup", p, 3, NULL, 0, &res, &nres), "invite");
    } else if (me.rank >= 2) {
        wait_count(&lock, &cond, &handled, 1, "the invitation's handler");
        CHECK_OK(join_rc, "PMIx_Group_join_nb in the handler");
        if (!no_callback) {
            wait_count(&lock, &cond, &joined, 1, "the join's callback");
            CHECK_OK(join_cb_rc, "the join's callback");
        }
    }
    if (me.rank != 1) {
        CHECK_OK(PMIx_Fence(&grp, 1, NULL, 0), "fence over the group");
        CHECK_OK(PMIx_Group_destruct("ourgroup", NULL, 0), "destruct");
    }
    fence_or_fail("last fence");
    printf("group_join_nb rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
