/* The calling rules of every pmix_ft.h call (issue 20), run as
 * `pmix-run -n 4 ft_rules`:
 *
 *   - before PMIx_Init and after PMIx_Finalize: PMIX_ERR_INIT;
 *   - a NULL, empty or over-long group name: PMIX_ERR_BAD_PARAM;
 *   - a NULL output pointer the header does not allow, a type with bits outside
 *     the five, a NULL array with a non-zero count: PMIX_ERR_BAD_PARAM (and the
 *     pointers the header allows to be NULL are accepted);
 *   - a group this process never knew: PMIX_ERR_NOT_FOUND;
 *   - a PMIx group it left: PMIX_ERR_NOT_A_MEMBER from every call, collective
 *     ones included, at once; the others' exchange on it completes without it and
 *     does not count it failed;
 *   - in an event handler (the progress thread): every local call answers, every
 *     collective one is PMIX_ERR_WOULD_BLOCK.
 *
 * Each check that fails prints FAIL on stderr and exits 1; each family that
 * passes prints "R: ok: WHAT". */
#include "common.h"
#include <pmix_ft.h>

#define CALLS 15

/* Every call of pmix_ft.h on group g with valid outputs; rc[i] its status. */
static void every_call(const char *g, pmix_status_t rc[CALLS])
{
    int a = 0, b = 0;
    size_t z = 0;
    uint32_t flag = 1;
    pmix_rank_t ranks[8];
    pmixrs_ft_rank_info_t ri[8];
    rc[0] = pmixrs_ft_validate_local(g, &a, &b);
    rc[1] = pmixrs_ft_validate_global(g, &a, &b);
    rc[2] = pmixrs_ft_validate_global_count(g, PMIXRS_FT_STATE_NULL, &a);
    rc[3] = pmixrs_ft_get_state_local(g, 0, 8, &a, ri);
    rc[4] = pmixrs_ft_get_state_global(g, 0, 8, &a, ri);
    rc[5] = pmixrs_ft_get_num_state_local(g, 0, &a);
    rc[6] = pmixrs_ft_get_num_state_global(g, 0, &a);
    rc[7] = pmixrs_ft_group_size(g, &a, &b);
    rc[8] = pmixrs_ft_get_failed(g, ranks, 8, &z);
    rc[9] = pmixrs_ft_ack_failed(g, 8, &z);
    rc[10] = pmixrs_ft_get_acked(g, ranks, 8, &z);
    rc[11] = pmixrs_ft_agree(g, &flag);
    rc[12] = pmixrs_ft_shrink(g, "ft-rules-new", &a, &b);
    rc[13] = pmixrs_ft_revoke(g);
    rc[14] = pmixrs_ft_is_revoked(g, &a);
}

static const char *names[CALLS] = {
    "validate_local", "validate_global", "validate_global_count", "get_state_local",
    "get_state_global", "get_num_state_local", "get_num_state_global", "group_size",
    "get_failed", "ack_failed", "get_acked", "agree", "shrink", "revoke", "is_revoked"};

/* Every call on g answers want. */
static void expect_all(const char *g, pmix_status_t want, const char *why)
{
    pmix_status_t rc[CALLS];
    every_call(g, rc);
    for (int i = 0; i < CALLS; i++)
        if (rc[i] != want)
            fail("%s: %s answered %s (%d), not %s", why, names[i], PMIx_Error_string(rc[i]),
                 rc[i], PMIx_Error_string(want));
}

#define EXPECT(call, want)                                                             \
    do {                                                                               \
        pmix_status_t rc_ = (call);                                                    \
        if (rc_ != (want))                                                             \
            fail("%s answered %s (%d), not %s", #call, PMIx_Error_string(rc_), rc_,     \
                 PMIx_Error_string(want));                                             \
    } while (0)

static void say_ok(const char *what)
{
    printf("%u: ok: %s\n", me.rank, what);
}

/* The GROUP_LEFT handler's findings: local calls' and collective calls' statuses. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int handled;
static pmix_status_t in_handler[CALLS];

static void on_left(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results;
    (void)nresults;
    pthread_mutex_lock(&lock);
    if (!handled)
        every_call(me.nspace, in_handler);
    handled = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

int main(void)
{
    prog_name = "ft_rules";
    /* Before init. */
    me.rank = 0;
    expect_all("anything", PMIX_ERR_INIT, "before PMIx_Init");
    uint32_t size = init_or_fail("ft_rules");
    if (size != 4)
        fail("run me as 4 ranks, not %u", size);
    say_ok("before init: every call PMIX_ERR_INIT");

    /* Group names. */
    char longname[300];
    memset(longname, 'g', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    expect_all(NULL, PMIX_ERR_BAD_PARAM, "a NULL group");
    expect_all("", PMIX_ERR_BAD_PARAM, "an empty group");
    expect_all(longname, PMIX_ERR_BAD_PARAM, "a 299-byte group");
    say_ok("NULL, empty, over-long group: every call PMIX_ERR_BAD_PARAM");

    /* Output pointers and arguments, on a group that exists. */
    const char *g = me.nspace;
    int a = 0;
    size_t z = 0;
    pmixrs_ft_rank_info_t ri[8];
    EXPECT(pmixrs_ft_validate_global_count(g, 0, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_validate_global_count(g, 0x20, &a), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_state_local(g, 0, 0, NULL, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_state_global(g, 0, 0, NULL, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_state_local(g, 0, 2, &a, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_state_global(g, 0, 2, &a, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_state_local(g, 0, -1, &a, ri), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_state_local(g, 0x40, 8, &a, ri), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_state_global(g, -1, 8, &a, ri), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_num_state_local(g, 0, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_num_state_global(g, 0, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_num_state_local(g, 0x80, &a), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_group_size(g, NULL, &a), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_group_size(g, &a, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_failed(g, NULL, 0, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_failed(g, NULL, 3, &z), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_acked(g, NULL, 0, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_get_acked(g, NULL, 3, &z), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_agree(g, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_shrink(g, NULL, NULL, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_shrink(g, "", NULL, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_shrink(g, longname, NULL, NULL), PMIX_ERR_BAD_PARAM);
    EXPECT(pmixrs_ft_is_revoked(g, NULL), PMIX_ERR_BAD_PARAM);
    /* What the header allows to be NULL. */
    EXPECT(pmixrs_ft_validate_local(g, NULL, NULL), PMIX_SUCCESS);
    EXPECT(pmixrs_ft_get_state_local(g, 0, 0, &a, NULL), PMIX_SUCCESS);
    EXPECT(pmixrs_ft_get_failed(g, NULL, 0, &z), PMIX_SUCCESS);
    EXPECT(pmixrs_ft_ack_failed(g, 0, NULL), PMIX_SUCCESS);
    EXPECT(pmixrs_ft_validate_global(g, NULL, NULL), PMIX_SUCCESS);
    say_ok("NULL outputs, bad types and counts: PMIX_ERR_BAD_PARAM; optional NULLs accepted");

    expect_all("ft-rules-never", PMIX_ERR_NOT_FOUND, "a group never known");
    say_ok("a group never known: every call PMIX_ERR_NOT_FOUND");

    /* A PMIx group of the four; rank 3 leaves it. */
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    CHECK_OK(PMIx_Group_construct("ft-rules", &all, 1, NULL, 0, &results, &nresults),
             "PMIx_Group_construct");
    int n = 0, r = 0;
    CHECK_OK(pmixrs_ft_group_size("ft-rules", &n, &r), "group_size");
    if (n != 4 || r != (int)me.rank)
        fail("group_size: %d, rank %d", n, r);
    pmix_status_t left_code = PMIX_GROUP_LEFT;
    if (me.rank != 3 &&
        PMIx_Register_event_handler(&left_code, 1, NULL, 0, on_left, NULL, NULL) < 0)
        fail("registering a PMIX_GROUP_LEFT handler");
    fence_or_fail("the fence before the leave");
    if (me.rank == 3) {
        CHECK_OK(PMIx_Group_leave("ft-rules", NULL, 0), "PMIx_Group_leave");
        double t0 = now_s();
        expect_all("ft-rules", PMIX_ERR_NOT_A_MEMBER, "the group this process left");
        expect_all("ft-rules", PMIX_ERR_NOT_A_MEMBER, "the group this process left, again");
        if (now_s() - t0 > 1.0)
            fail("the calls on a group left took %.1f s", now_s() - t0);
        say_ok("a group left: every call PMIX_ERR_NOT_A_MEMBER, at once");
    } else {
        wait_count(&lock, &cond, &handled, 1, "PMIX_GROUP_LEFT");
        int num = -1;
        CHECK_OK(pmixrs_ft_validate_global("ft-rules", &num, NULL),
                 "validate_global without the leaver");
        if (num != 0)
            fail("the leaver counted failed: %d", num);
        say_ok("the others' exchange completes without the leaver, 0 failed");
        /* In the handler (progress thread): locals answer, collectives would block. */
        for (int i = 0; i < CALLS; i++) {
            int collective = i == 1 || i == 2 || i == 11 || i == 12;
            pmix_status_t want = collective ? PMIX_ERR_WOULD_BLOCK : PMIX_SUCCESS;
            if (in_handler[i] != want)
                fail("in a handler: %s answered %s, not %s", names[i],
                     PMIx_Error_string(in_handler[i]), PMIx_Error_string(want));
        }
        say_ok("in a handler: local calls PMIX_SUCCESS, collective calls PMIX_ERR_WOULD_BLOCK");
    }
    fence_or_fail("the last fence");
    finalize_or_fail();
    expect_all(me.nspace, PMIX_ERR_INIT, "after PMIx_Finalize");
    say_ok("after finalize: every call PMIX_ERR_INIT");
    return 0;
}
