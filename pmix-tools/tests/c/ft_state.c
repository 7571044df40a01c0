/* Rank-state tracking between real processes (issue 14; pmix_ft.h), run as
 * `pmix-run -n 8 --keep-going ft_state`. Ranks die by SIGKILL at chosen points:
 *
 *   1. validate_global with nobody dead: 0 failed everywhere.
 *   2. Ranks 3 and 5 kill themselves. Each survivor waits until it has *detected*
 *      them (get_failed, polled; then validate_local): its local view shows them FAILED|NEW, the
 *      global view is still empty, get_state with too small an incount is the size
 *      error, incount 0 with NULL gives the count.
 *   3. validate_global: every survivor holds G = {3, 5} (NULL|NEW) and L = G, the
 *      recognized ranks are NULL in L too. A second one turns NEW into OLD.
 *   4. agree: without acknowledging, the uniform error (3 and 5 never
 *      contributed); after acknowledging, the AND of the flags, everywhere.
 *   5. shrink into group "ft-shrunk": the same new ranking everywhere.
 *   6. revoke by rank 0: every survivor sees the group revoked.
 *   7. Rank 6 kills itself while the others (and itself) are in validate_global:
 *      nobody hangs, and after the next round it is in G everywhere.
 *   8. The PMIx group the shrink made: rank 6 failed there too (its rank 4).
 *   9. Rank 7 leaves that group: the others' next exchange completes without it,
 *      and it is not counted failed.
 *
 * Every survivor prints the same lines (nothing rank-specific but the shrink's
 * own new rank, printed separately), which the test compares across survivors; a
 * failed check prints "FAIL" and exits 1. */
#include <pthread.h>
#include <signal.h>

#include "common.h"
#include <pmix_ft.h>

#define FAILED PMIXRS_FT_STATE_FAILED
#define NULLST PMIXRS_FT_STATE_NULL
#define NEW PMIXRS_FT_MOD_NEW
#define OLD PMIXRS_FT_MOD_OLD

static const char *grp;

/* One output line: "R: TEXT" (R this process's rank), so the test can group them. */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("%u: %s\n", me.rank, line);
}

static const char *state_name(int s)
{
    switch (s) {
    case PMIXRS_FT_STATE_FAILED | NEW: return "FAILED|NEW";
    case PMIXRS_FT_STATE_FAILED | OLD: return "FAILED|OLD";
    case PMIXRS_FT_STATE_NULL | NEW: return "NULL|NEW";
    case PMIXRS_FT_STATE_NULL | OLD: return "NULL|OLD";
    default: return "?";
    }
}

/* Prints "WHAT: r:STATE ..." for the members of a view type matches. */
static void print_view(const char *what, int global, int type)
{
    int n = -1;
    pmix_status_t rc = global ? pmixrs_ft_get_state_global(grp, type, 0, &n, NULL)
                              : pmixrs_ft_get_state_local(grp, type, 0, &n, NULL);
    CHECK_OK(rc, "get_state count");
    pmixrs_ft_rank_info_t infos[8];
    int out = -1;
    if (n > 0) {
        rc = global ? pmixrs_ft_get_state_global(grp, type, n, &out, infos)
                    : pmixrs_ft_get_state_local(grp, type, n, &out, infos);
        CHECK_OK(rc, "get_state");
        if (out != n)
            fail("%s: outcount %d, count %d", what, out, n);
    }
    char line[256];
    size_t len = (size_t) snprintf(line, sizeof line, "%s:", what);
    for (int i = 0; i < n && len < sizeof line; i++)
        len += (size_t) snprintf(line + len, sizeof line - len, " %u:%s", infos[i].rank,
                                 state_name(infos[i].state));
    say("%s", line);
}

/* Waits until `want` failures are detected (the log, read without validating:
 * get_failed), then validates the local view once; 20 s at most. */
static void await_detection(int want)
{
    double until = now_s() + 20;
    size_t known = 0;
    for (;;) {
        CHECK_OK(pmixrs_ft_get_failed(grp, NULL, 0, &known), "get_failed");
        if (known >= (size_t) want)
            break;
        if (now_s() > until)
            fail("only %zu of %d failures detected after 20 s", known, want);
        sleep_ms(5);
    }
    int n = 0, fresh = 0;
    CHECK_OK(pmixrs_ft_validate_local(grp, &n, &fresh), "validate_local");
    if (n != want || fresh != want)
        fail("validate_local: %d failed, %d new", n, fresh);
}

static int lefts = 0;
/* What the rank-state calls answered inside the handler. */
static pmix_status_t in_handler[3];

/* Counts PMIX_GROUP_LEFT events (the tracker has seen the leave before any user
 * handler runs). */
static void left_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                         pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id, (void) status, (void) source, (void) info, (void) ninfo, (void) results,
        (void) nresults;
    /* On the progress thread: local calls answer, a collective would block. */
    int n = -1;
    in_handler[0] = pmixrs_ft_validate_local("ft-shrunk", &n, NULL);
    in_handler[1] = pmixrs_ft_get_num_state_global("ft-shrunk", 0, &n);
    in_handler[2] = pmixrs_ft_validate_global("ft-shrunk", NULL, NULL);
    __atomic_add_fetch(&lefts, 1, __ATOMIC_SEQ_CST);
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void *die_soon(void *arg)
{
    (void) arg;
    sleep_ms(1 + (long) (getpid() % 3));
    raise(SIGKILL);
    return NULL;
}

int main(void)
{
    uint32_t size = init_or_fail("ft_state");
    grp = me.nspace;
    if (size != 8)
        fail("run me with -n 8 (got %u)", size);
    int n, fresh, gs, gr;
    pmix_status_t left_code = PMIX_GROUP_LEFT;
    if (PMIx_Register_event_handler(&left_code, 1, NULL, 0, left_handler, NULL, NULL) < 0)
        fail("registering a PMIX_GROUP_LEFT handler");
    CHECK_OK(pmixrs_ft_group_size(grp, &gs, &gr), "group_size");
    if (gs != 8 || gr != (int) me.rank)
        fail("group_size %d rank %d", gs, gr);

    /* 1. */
    CHECK_OK(pmixrs_ft_validate_global(grp, &n, &fresh), "validate_global 1");
    say("round 1: %d failed, %d new", n, fresh);

    /* 2. */
    if (me.rank == 3 || me.rank == 5)
        raise(SIGKILL);
    await_detection(2);
    print_view("detected local", 0, FAILED | NEW);
    CHECK_OK(pmixrs_ft_get_num_state_global(grp, 0, &n), "num_state global");
    say("global before validate: %d", n);
    pmixrs_ft_rank_info_t one[1];
    int out = -1;
    pmix_status_t rc = pmixrs_ft_get_state_local(grp, FAILED, 1, &out, one);
    say("incount 1: %s, outcount %d",
           rc == PMIXRS_FT_ERR_SIZE ? "size error" : PMIx_Error_string(rc), out);
    out = -1;
    CHECK_OK(pmixrs_ft_get_state_local(grp, FAILED, 0, &out, NULL), "incount 0");
    say("incount 0: outcount %d", out);

    /* 3. */
    CHECK_OK(pmixrs_ft_validate_global(grp, &n, &fresh), "validate_global 2");
    say("round 2: %d failed, %d new", n, fresh);
    print_view("global", 1, 0);
    print_view("local", 0, 0);
    CHECK_OK(pmixrs_ft_get_num_state_local(grp, FAILED, &n), "num FAILED");
    say("local FAILED after validate_global: %d", n);
    CHECK_OK(pmixrs_ft_validate_global(grp, &n, &fresh), "validate_global 3");
    say("round 3: %d failed, %d new", n, fresh);
    print_view("global", 1, NULLST | NEW);
    print_view("global", 1, NULLST | OLD);

    /* 4. */
    uint32_t flag = me.rank == 1 ? 0x6 : 0x7;
    rc = pmixrs_ft_agree(grp, &flag);
    say("agree unacked: %s, flag %#x",
           rc == PMIXRS_FT_ERR_PROC_FAILED ? "proc failed" : PMIx_Error_string(rc), flag);
    size_t acked = 0, nf = 0;
    pmix_rank_t failed[8];
    CHECK_OK(pmixrs_ft_get_failed(grp, failed, 8, &nf), "get_failed");
    CHECK_OK(pmixrs_ft_ack_failed(grp, nf, &acked), "ack_failed");
    say("acked %zu of %zu", acked, nf);
    flag = me.rank == 1 ? 0x6 : 0x7;
    rc = pmixrs_ft_agree(grp, &flag);
    say("agree acked: %s, flag %#x", PMIx_Error_string(rc), flag);

    /* 5. */
    int nr = -1, ns = -1;
    CHECK_OK(pmixrs_ft_shrink(grp, "ft-shrunk", &nr, &ns), "shrink");
    say("shrink: size %d", ns);
    say("shrink: new rank %d", nr);

    /* 6. */
    if (me.rank == 0)
        CHECK_OK(pmixrs_ft_revoke(grp), "revoke");
    double until = now_s() + 20;
    int revoked = 0;
    while (!revoked) {
        CHECK_OK(pmixrs_ft_is_revoked(grp, &revoked), "is_revoked");
        if (now_s() > until)
            fail("the revoke never came");
        if (!revoked)
            sleep_ms(5);
    }
    say("revoked");

    /* 7. */
    if (me.rank == 6) {
        /* Dies 1-3 ms from now: before, during or after its round 4; it never
         * reaches round 5. */
        pthread_t t;
        pthread_create(&t, NULL, die_soon, NULL);
        pmixrs_ft_validate_global(grp, &n, &fresh);
        for (;;)
            pause();
    }
    CHECK_OK(pmixrs_ft_validate_global(grp, &n, &fresh), "validate_global 4");
    int n4 = n;
    CHECK_OK(pmixrs_ft_validate_global(grp, &n, &fresh), "validate_global 5");
    say("round 4: %d failed", n4);
    say("round 5: %d failed", n);
    print_view("final global", 1, 0);

    /* 8. The group the shrink made (old ranks 0 1 2 4 6 7, group ranks 0-5): rank
     * 6, its rank 4, died in it too. */
    grp = "ft-shrunk";
    CHECK_OK(pmixrs_ft_group_size(grp, &gs, &gr), "group_size ft-shrunk");
    say("shrunk group: size %d", gs);
    CHECK_OK(pmixrs_ft_validate_global(grp, &n, &fresh), "validate_global ft-shrunk");
    say("shrunk round: %d failed, %d new", n, fresh);
    print_view("shrunk global", 1, 0);

    /* 9. Rank 7 leaves the shrunk group: once the others saw it leave, their
     * exchange completes without it, and a leaver is not a failure. */
    if (me.rank == 7) {
        CHECK_OK(PMIx_Group_leave(grp, NULL, 0), "PMIx_Group_leave");
        CHECK_OK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
        return 0;
    }
    until = now_s() + 20;
    while (__atomic_load_n(&lefts, __ATOMIC_SEQ_CST) < 1) {
        if (now_s() > until)
            fail("rank 7's leave never came");
        sleep_ms(5);
    }
    say("in a handler: validate_local %s, get_num_state %s, validate_global %s",
        PMIx_Error_string(in_handler[0]), PMIx_Error_string(in_handler[1]),
        PMIx_Error_string(in_handler[2]));
    CHECK_OK(pmixrs_ft_validate_global(grp, &n, &fresh), "validate_global after the leave");
    say("after the leave: %d failed, %d new", n, fresh);
    print_view("shrunk global", 1, 0);
    CHECK_OK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
