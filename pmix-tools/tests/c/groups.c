/* groups: PMIx groups with leaves (docs/design.md §4). Needs N >= 3 ranks; rank N-1 is the
 * one that leaves. Every rank registers a handler for PMIX_GROUP_LEFT that records
 * (pmix.grp.id, pmix.evproc) and checks the event names a rank of our job. Steps:
 *   1. everyone constructs "ga" and "gb" with PMIX_GROUP_ASSIGN_CONTEXT_ID: each gets
 *      a context id, the same as every peer's (exchanged by put/fence/get), and the
 *      two groups' ids differ; both are destructed.
 *   2. leave during a construct: ranks 0..N-2 construct "gl" over all N while rank
 *      N-1 leaves it (retrying while the server does not know the group yet): the
 *      construct completes on the survivors, each gets PMIX_GROUP_LEFT naming N-1;
 *      then a destruct of "gl" completes among the survivors alone.
 *   3. the same with PMIX_GROUP_FT_COLLECTIVE ("glf").
 *   4. leave during a destruct: all construct "gd"; ranks 0..N-2 destruct it while
 *      rank N-1 leaves after 300 ms: the destruct completes, PMIX_GROUP_LEFT arrives.
 *   5. a fence over a group someone left: all construct "gf", rank N-1 leaves; the
 *      survivors fence over "gf" with PMIX_GROUP_FT_COLLECTIVE (succeeds) and without
 *      (PMIX_ERR_NOT_A_MEMBER, -66); then destruct it.
 *   6. a leave that returns while another member is stopped: all construct "gs";
 *      rank 1 stops itself (SIGSTOP); once /proc shows it stopped, rank N-1 leaves
 *      "gs" (the call must return within 5 s), then sends it SIGCONT; every
 *      survivor gets PMIX_GROUP_LEFT and they destruct "gs".
 * Every wait is bounded (10 s). Prints "groups rank R: ok". */
#include "common.h"

#include <signal.h>

#ifndef PMIX_ERR_NOT_A_MEMBER
#define PMIX_ERR_NOT_A_MEMBER -66 /* newer than OpenPMIx 4.2.2's header */
#endif

#define MAXLEFT 32

static struct {
    char grp[PMIX_MAX_NSLEN + 1];
    pmix_rank_t rank;
} left[MAXLEFT];
static int nleft;
static int bad_events;
static uint32_t n;

static void left_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                         size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                         void *cbdata)
{
    (void)id, (void)source, (void)results, (void)nresults;
    const char *grp = NULL;
    const pmix_proc_t *who = NULL;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) && PMIX_STRING == info[i].value.type)
            grp = info[i].value.data.string;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
                 PMIX_PROC == info[i].value.type)
            who = info[i].value.data.proc;
    }
    if (PMIX_GROUP_LEFT != status || NULL == grp || NULL == who ||
        0 != strncmp(who->nspace, me.nspace, PMIX_MAX_NSLEN) || who->rank >= n) {
        __atomic_add_fetch(&bad_events, 1, __ATOMIC_SEQ_CST);
    } else {
        int k = __atomic_load_n(&nleft, __ATOMIC_SEQ_CST);
        if (k < MAXLEFT) {
            snprintf(left[k].grp, sizeof(left[k].grp), "%s", grp);
            left[k].rank = who->rank;
            __atomic_store_n(&nleft, k + 1, __ATOMIC_SEQ_CST);
        }
    }
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Waits (10 s) for PMIX_GROUP_LEFT about `rank` leaving `grp`. */
static void wait_left(int step, const char *grp, pmix_rank_t rank)
{
    double deadline = now_s() + 10.0;
    for (;;) {
        int k = __atomic_load_n(&nleft, __ATOMIC_SEQ_CST);
        for (int i = 0; i < k; i++)
            if (0 == strcmp(left[i].grp, grp) && left[i].rank == rank)
                return;
        if (now_s() > deadline)
            fail("step %d: no PMIX_GROUP_LEFT for rank %u leaving %s (waited 10 s)", step,
                 rank, grp);
        sleep_ms(5);
    }
}

static pmix_proc_t *all_procs(void)
{
    pmix_proc_t *p = calloc(n, sizeof(*p));
    for (uint32_t r = 0; r < n; r++)
        PMIX_LOAD_PROCID(&p[r], me.nspace, r);
    return p;
}

/* Constructs `grp` over every rank; returns the context id (SIZE_MAX if none). */
static size_t construct(int step, const char *grp, pmix_info_t *info, size_t ninfo)
{
    pmix_proc_t *procs = all_procs();
    pmix_info_t *results = NULL;
    size_t nresults = 0, ctxid = SIZE_MAX;
    pmix_status_t rc = PMIx_Group_construct(grp, procs, n, info, ninfo, &results, &nresults);
    if (PMIX_SUCCESS != rc)
        fail("step %d: PMIx_Group_construct(%s): %s (%d)", step, grp, PMIx_Error_string(rc),
             rc);
    for (size_t i = 0; i < nresults; i++)
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID) &&
            PMIX_SIZE == results[i].value.type)
            ctxid = results[i].value.data.size;
    if (NULL != results)
        PMIX_INFO_FREE(results, nresults);
    free(procs);
    return ctxid;
}

static void destruct(int step, const char *grp)
{
    pmix_status_t rc = PMIx_Group_destruct(grp, NULL, 0);
    if (PMIX_SUCCESS != rc)
        fail("step %d: PMIx_Group_destruct(%s): %s (%d)", step, grp, PMIx_Error_string(rc),
             rc);
}

/* Leaves `grp`, retrying (10 s) while the server does not know it yet. */
static void leave(int step, const char *grp)
{
    double deadline = now_s() + 10.0;
    for (;;) {
        pmix_status_t rc = PMIx_Group_leave(grp, NULL, 0);
        if (PMIX_SUCCESS == rc)
            return;
        if (PMIX_ERR_NOT_FOUND != rc || now_s() > deadline)
            fail("step %d: PMIx_Group_leave(%s): %s (%d)", step, grp, PMIx_Error_string(rc),
                 rc);
        sleep_ms(10);
    }
}

static pmix_status_t group_fence(const char *grp, bool ft)
{
    pmix_proc_t p;
    pmix_info_t info;
    PMIX_LOAD_PROCID(&p, grp, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info, PMIX_GROUP_FT_COLLECTIVE, &ft, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(&p, 1, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static void leave_during_construct(int step, const char *grp, bool ft)
{
    pmix_rank_t leaver = n - 1;
    if (me.rank == leaver) {
        leave(step, grp);
    } else {
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, PMIX_GROUP_FT_COLLECTIVE, &ft, PMIX_BOOL);
        pmix_proc_t *procs = all_procs();
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        pmix_status_t rc =
            PMIx_Group_construct(grp, procs, n, &info, 1, &results, &nresults);
        if (PMIX_SUCCESS != rc)
            fail("step %d: construct of %s while rank %u leaves: %s (%d)", step, grp, leaver,
                 PMIx_Error_string(rc), rc);
        if (NULL != results)
            PMIX_INFO_FREE(results, nresults);
        free(procs);
        PMIX_INFO_DESTRUCT(&info);
        wait_left(step, grp, leaver);
        /* A later destruct completes among the survivors alone. */
        destruct(step, grp);
    }
    fence_or_fail("fence after a leave during construct");
}

/* The state letter of /proc/PID/stat ('T' when stopped), '?' if unreadable. */
static char proc_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (NULL == f)
        return '?';
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    char *p = strrchr(buf, ')');
    return (NULL != p && p[1] == ' ') ? p[2] : '?';
}

static void leave_while_a_member_is_stopped(void)
{
    pmix_rank_t leaver = n - 1;
    construct(6, "gs", NULL, 0);
    pmix_value_t v;
    v.type = PMIX_UINT32;
    v.data.uint32 = (uint32_t)getpid();
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "groups.pid", &v), "PMIx_Put(groups.pid)");
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    bool yes = true;
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK_OK(PMIx_Fence(NULL, 0, &collect, 1), "fence (pids)");
    if (1 == me.rank) {
        kill(getpid(), SIGSTOP);
    } else if (leaver == me.rank) {
        pmix_proc_t p;
        pmix_value_t *got = NULL;
        PMIX_LOAD_PROCID(&p, me.nspace, 1);
        CHECK_OK(PMIx_Get(&p, "groups.pid", NULL, 0, &got), "PMIx_Get(groups.pid)");
        pid_t pid = (pid_t)got->data.uint32;
        PMIX_VALUE_RELEASE(got);
        double deadline = now_s() + 10.0;
        while ('T' != proc_state(pid)) {
            if (now_s() > deadline) {
                kill(pid, SIGCONT);
                fail("step 6: rank 1 (pid %d) never showed as stopped", (int)pid);
            }
            sleep_ms(5);
        }
        double t0 = now_s();
        pmix_status_t rc = PMIx_Group_leave("gs", NULL, 0);
        double took = now_s() - t0;
        kill(pid, SIGCONT);
        if (PMIX_SUCCESS != rc)
            fail("step 6: PMIx_Group_leave(gs) while rank 1 is stopped: %s (%d)",
                 PMIx_Error_string(rc), rc);
        if (took > 5.0)
            fail("step 6: the leave took %.1f s while rank 1 was stopped", took);
    }
    if (leaver != me.rank) {
        wait_left(6, "gs", leaver);
        destruct(6, "gs");
    }
    fence_or_fail("fence after step 6");
}

int main(void)
{
    n = init_or_fail("groups");
    if (n < 3)
        fail("needs at least 3 ranks, got %u", n);
    pmix_status_t code = PMIX_GROUP_LEFT;
    pmix_status_t rc =
        PMIx_Register_event_handler(&code, 1, NULL, 0, left_handler, NULL, NULL);
    if (rc < 0)
        fail("PMIx_Register_event_handler(PMIX_GROUP_LEFT): %s (%d)", PMIx_Error_string(rc),
             rc);
    pmix_rank_t leaver = n - 1;

    /* 1. context ids */
    bool yes = true;
    pmix_info_t actx;
    PMIX_INFO_LOAD(&actx, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    size_t ca = construct(1, "ga", &actx, 1);
    size_t cb = construct(1, "gb", &actx, 1);
    if (SIZE_MAX == ca || SIZE_MAX == cb)
        fail("step 1: no PMIX_GROUP_CONTEXT_ID in the results (ga %zu, gb %zu)", ca, cb);
    if (ca == cb)
        fail("step 1: groups ga and gb got the same context id %zu", ca);
    pmix_value_t v;
    v.type = PMIX_SIZE;
    v.data.size = ca;
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "groups.ctxid", &v), "PMIx_Put");
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK_OK(PMIx_Fence(NULL, 0, &collect, 1), "fence (collect)");
    for (uint32_t r = 0; r < n; r++) {
        pmix_proc_t p;
        pmix_value_t *got = NULL;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        CHECK_OK(PMIx_Get(&p, "groups.ctxid", NULL, 0, &got), "PMIx_Get(groups.ctxid)");
        if (PMIX_SIZE != got->type || got->data.size != ca)
            fail("step 1: rank %u got context id %zu for ga, we got %zu", r, got->data.size,
                 ca);
        PMIX_VALUE_RELEASE(got);
    }
    destruct(1, "ga");
    destruct(1, "gb");

    /* 2, 3. leave during construct, without and with FT */
    leave_during_construct(2, "gl", false);
    leave_during_construct(3, "glf", true);

    /* 4. leave during destruct */
    construct(4, "gd", NULL, 0);
    if (me.rank == leaver) {
        sleep_ms(300);
        leave(4, "gd");
    } else {
        destruct(4, "gd");
        wait_left(4, "gd", leaver);
    }
    fence_or_fail("fence after step 4");

    /* 5. fences over a group someone left */
    construct(5, "gf", NULL, 0);
    if (me.rank == leaver)
        leave(5, "gf");
    fence_or_fail("fence after the leave of step 5");
    if (me.rank != leaver) {
        wait_left(5, "gf", leaver);
        rc = group_fence("gf", true);
        if (PMIX_SUCCESS != rc)
            fail("step 5: FT fence over gf: %s (%d)", PMIx_Error_string(rc), rc);
        rc = group_fence("gf", false);
        if (PMIX_ERR_NOT_A_MEMBER != rc)
            fail("step 5: non-FT fence over gf returned %d, not PMIX_ERR_NOT_A_MEMBER", rc);
        destruct(5, "gf");
    }
    leave_while_a_member_is_stopped();
    fence_or_fail("final fence");
    if (__atomic_load_n(&bad_events, __ATOMIC_SEQ_CST))
        fail("%d malformed PMIX_GROUP_LEFT event(s)", bad_events);
    printf("groups rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
