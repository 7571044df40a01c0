/* validate_global agrees while local calls run beside it (issue 20), run as
 * `pmix-run -n 8 --keep-going ft_concurrent VARIANT SEED`.
 *
 * Every rank runs ROUNDS rounds of pmixrs_ft_validate_global on the job's
 * namespace, 1 ms apart. Ranks 2 and 6 SIGKILL themselves from a second thread
 * 0-20 ms into the rounds (the delay drawn from SEED and the rank, printed), so
 * they die at a random step of some round. Beside the rounds every survivor
 * makes local calls on the same group:
 *
 *   handler  the handler of the failure events (PMIX_ERR_PROC_ABORTED,
 *            PMIX_EVENT_PROC_TERMINATED, on the progress thread) calls
 *            validate_local, get_state_local, ack_failed and get_num_state_global;
 *   thread   a second thread calls the same in a loop until the rounds end.
 *
 * After each round every survivor prints "R: round K: G=<ranks> n=<num_failed>"
 * (its global view, read right after the round, and the round's count): the test
 * checks that every survivor printed the same line for every round. A failed
 * check prints FAIL on stderr and exits 1. */
#include <signal.h>

#include "common.h"
#include <pmix_ft.h>

#define ROUNDS 40

static const char *grp;
static volatile int rounds_done;

static void local_calls(void)
{
    int n = 0, k = 0;
    size_t acked = 0;
    pmixrs_ft_rank_info_t ri[8];
    pmix_status_t rc = pmixrs_ft_validate_local(grp, &n, &k);
    if (PMIX_SUCCESS != rc)
        fail("validate_local beside a round: %s", PMIx_Error_string(rc));
    rc = pmixrs_ft_get_state_local(grp, PMIXRS_FT_STATE_FAILED | PMIXRS_FT_STATE_NULL, 8, &n,
                                   ri);
    if (PMIX_SUCCESS != rc)
        fail("get_state_local beside a round: %s", PMIx_Error_string(rc));
    rc = pmixrs_ft_ack_failed(grp, (size_t)-1, &acked);
    if (PMIX_SUCCESS != rc)
        fail("ack_failed beside a round: %s", PMIx_Error_string(rc));
    rc = pmixrs_ft_get_num_state_global(grp, PMIXRS_FT_STATE_NULL, &n);
    if (PMIX_SUCCESS != rc)
        fail("get_num_state_global beside a round: %s", PMIx_Error_string(rc));
}

static void on_failure(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                       size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                       void *cbdata)
{
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results;
    (void)nresults;
    local_calls();
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void *local_loop(void *arg)
{
    (void)arg;
    while (!rounds_done) {
        local_calls();
        struct timespec ts = {0, 100000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static long kill_delay_us;
static void *killer(void *arg)
{
    (void)arg;
    struct timespec ts = {kill_delay_us / 1000000, (kill_delay_us % 1000000) * 1000L};
    nanosleep(&ts, NULL);
    raise(SIGKILL);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "handler") && strcmp(argv[1], "thread")))
        fail("usage: ft_concurrent handler|thread SEED");
    int use_thread = !strcmp(argv[1], "thread");
    unsigned long seed = strtoul(argv[2], NULL, 10);
    uint32_t size = init_or_fail("ft_concurrent");
    if (size != 8)
        fail("run me as 8 ranks, not %u", size);
    grp = me.nspace;

    /* A tracker first (so the detector is registered), then everybody together. */
    int n = 0;
    CHECK_OK(pmixrs_ft_validate_local(grp, &n, NULL), "validate_local");
    pmix_status_t codes[] = {PMIX_ERR_PROC_ABORTED, PMIX_EVENT_PROC_TERMINATED};
    if (!use_thread &&
        PMIx_Register_event_handler(codes, 2, NULL, 0, on_failure, NULL, NULL) < 0)
        fail("registering the failure handler");
    fence_or_fail("the fence before the rounds");

    pthread_t victim_thread, local_thread;
    if (me.rank == 2 || me.rank == 6) {
        /* 0-20 ms, different for the two victims. */
        unsigned long x = seed * 2654435761UL + me.rank * 40503UL + 1;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        kill_delay_us = (long)(x % 20001);
        printf("%u: dies after %ld us\n", me.rank, kill_delay_us);
        if (pthread_create(&victim_thread, NULL, killer, NULL))
            fail("pthread_create");
    }
    if (use_thread && pthread_create(&local_thread, NULL, local_loop, NULL))
        fail("pthread_create");

    for (int k = 1; k <= ROUNDS; k++) {
        int num_failed = -1;
        pmix_status_t rc = pmixrs_ft_validate_global(grp, &num_failed, NULL);
        if (PMIX_SUCCESS != rc)
            fail("round %d: validate_global: %s", k, PMIx_Error_string(rc));
        pmixrs_ft_rank_info_t ri[8];
        int out = 0;
        rc = pmixrs_ft_get_state_global(grp, PMIXRS_FT_STATE_NULL, 8, &out, ri);
        if (PMIX_SUCCESS != rc)
            fail("round %d: get_state_global: %s", k, PMIx_Error_string(rc));
        if (out != num_failed)
            fail("round %d: |G| %d but validate_global said %d", k, out, num_failed);
        char line[128] = "";
        size_t at = 0;
        for (int i = 0; i < out && at < sizeof line - 8; i++)
            at += (size_t)snprintf(line + at, sizeof line - at, "%s%u", i ? "," : "",
                                   ri[i].rank);
        printf("%u: round %d: G=%s n=%d\n", me.rank, k, line, num_failed);
        sleep_ms(1);
    }
    rounds_done = 1;
    if (use_thread)
        pthread_join(local_thread, NULL);
    finalize_or_fail();
    return 0;
}
