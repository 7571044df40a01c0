/* group_kill: a member killed during a group construct. Rank N-1 never constructs:
 * it sleeps until it is killed (SIGKILL, by the launcher or the test). Ranks
 * 0..N-2 construct "gk" over all N ranks, with PMIX_GROUP_FT_COLLECTIVE when
 * GROUP_KILL_FT=1 is set (the construct then completes on the survivors:
 * PMIX_SUCCESS) and without it otherwise (PMIX_GROUP_CONSTRUCT_ABORT). Whenever the
 * kill comes, before or after the survivors' calls, they never hang. Survivors
 * print "group_kill rank R: ok" and finalize. With GROUP_KILL_PIDFILE set, rank N-1
 * writes its pid there first. */
#include "common.h"

int main(void)
{
    uint32_t n = init_or_fail("group_kill");
    if (n < 2)
        fail("needs at least 2 ranks, got %u", n);
    if (me.rank == n - 1) {
        /* A test that kills it by pid may ask where to write the pid. */
        const char *pidfile = getenv("GROUP_KILL_PIDFILE");
        if (NULL != pidfile) {
            FILE *f = fopen(pidfile, "w");
            if (NULL == f)
                fail("cannot write %s", pidfile);
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
        printf("group_kill rank %u: waiting to be killed\n", me.rank);
        for (;;)
            sleep(1);
    }
    const char *env = getenv("GROUP_KILL_FT");
    bool ft = NULL != env && 0 == strcmp(env, "1");
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_GROUP_FT_COLLECTIVE, &ft, PMIX_BOOL);
    pmix_proc_t *procs = calloc(n, sizeof(*procs));
    for (uint32_t r = 0; r < n; r++)
        PMIX_LOAD_PROCID(&procs[r], me.nspace, r);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Group_construct("gk", procs, n, &info, 1, &results, &nresults);
    pmix_status_t want = ft ? PMIX_SUCCESS : PMIX_GROUP_CONSTRUCT_ABORT;
    if (want != rc)
        fail("construct of gk (FT %d) with rank %u killed: %s (%d), expected %s", ft, n - 1,
             PMIx_Error_string(rc), rc, PMIx_Error_string(want));
    if (NULL != results)
        PMIX_INFO_FREE(results, nresults);
    free(procs);
    if (ft)
        CHECK_OK(PMIx_Group_destruct("gk", NULL, 0), "PMIx_Group_destruct(gk)");
    printf("group_kill rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
