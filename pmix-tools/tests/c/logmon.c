/* logmon: what a launcher serves besides data and fences, as OpenPMIx's log and jctrl
 * examples use it. Every rank:
 *   1. stores, with PMIx_Store_internal, a key made from its namespace
 *      ("<nspace>-<rank>-internal", as OpenPMIx's client example does) and reads it
 *      back (a namespace starting with "pmix" makes libpmix2's store refuse it);
 *   2. declares the job preemptible and a checkpoint method (PMIx_Job_control_nb):
 *      success;
 *   3. asks to be monitored for heartbeats every 5 s (PMIx_Process_monitor_nb with
 *      PMIX_MONITOR_HEARTBEAT): success; sends one (PMIx_Heartbeat);
 *   4. rank 0 logs "logmon: a line for stderr\n" to PMIX_LOG_STDERR (success: the
 *      launcher prints it on its stderr) and, with argument "nosyslog", logs to
 *      PMIX_LOG_SYSLOG alone, which must be PMIX_ERR_NOT_SUPPORTED;
 * then fences and prints "logmon rank R: ok". */
#include "common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int answered;
static pmix_status_t answer;

static void infocb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                   pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void)info;
    (void)ninfo;
    (void)cbdata;
    pthread_mutex_lock(&lock);
    answer = status;
    answered++;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    if (NULL != release_fn)
        release_fn(release_cbdata);
}

static pmix_status_t wait_answer(int n, const char *what)
{
    wait_count(&lock, &cond, &answered, n, what);
    return answer;
}

int main(int argc, char **argv)
{
    init_or_fail("logmon");
    int nosyslog = argc > 1 && 0 == strcmp(argv[1], "nosyslog");

    char key[PMIX_MAX_KEYLEN + 1];
    snprintf(key, sizeof key, "%s-%u-internal", me.nspace, me.rank);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_UINT32;
    v.data.uint32 = 1234;
    CHECK_OK(PMIx_Store_internal(&me, key, &v), "PMIx_Store_internal(<nspace>-<rank>-internal)");
    pmix_value_t *got = NULL;
    CHECK_OK(PMIx_Get(&me, key, NULL, 0, &got), "PMIx_Get of the stored key");
    if (got->type != PMIX_UINT32 || got->data.uint32 != 1234)
        fail("the stored key reads back type %d value %u", got->type, got->data.uint32);
    PMIX_VALUE_RELEASE(got);

    pmix_info_t jc[2];
    bool yes = true;
    PMIX_INFO_LOAD(&jc[0], PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
    pmix_data_array_t *method;
    PMIX_DATA_ARRAY_CREATE(method, 1, PMIX_INFO);
    int sig = 12;
    PMIX_INFO_LOAD(&((pmix_info_t *)method->array)[0], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig,
                   PMIX_INT);
    PMIX_INFO_LOAD(&jc[1], PMIX_JOB_CTRL_CHECKPOINT_METHOD, method, PMIX_DATA_ARRAY);
    CHECK_OK(PMIx_Job_control_nb(NULL, 0, jc, 2, infocb, NULL), "PMIx_Job_control_nb");
    CHECK_OK(wait_answer(1, "the job control answer"), "the job control answer");

    pmix_info_t what, dirs[3];
    PMIX_INFO_LOAD(&what, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    PMIX_INFO_LOAD(&dirs[0], PMIX_MONITOR_ID, "logmon", PMIX_STRING);
    uint32_t period = 5, drops = 2;
    PMIX_INFO_LOAD(&dirs[1], PMIX_MONITOR_HEARTBEAT_TIME, &period, PMIX_UINT32);
    PMIX_INFO_LOAD(&dirs[2], PMIX_MONITOR_HEARTBEAT_DROPS, &drops, PMIX_UINT32);
    CHECK_OK(PMIx_Process_monitor_nb(&what, PMIX_MONITOR_HEARTBEAT_ALERT, dirs, 3, infocb, NULL),
             "PMIx_Process_monitor_nb");
    CHECK_OK(wait_answer(2, "the monitor answer"), "the monitor answer");
    PMIx_Heartbeat();

    if (0 == me.rank) {
        pmix_info_t line;
        PMIX_INFO_LOAD(&line, PMIX_LOG_STDERR, "logmon: a line for stderr\n", PMIX_STRING);
        CHECK_OK(PMIx_Log(&line, 1, NULL, 0), "PMIx_Log(PMIX_LOG_STDERR)");
        if (nosyslog) {
            pmix_info_t sys;
            PMIX_INFO_LOAD(&sys, PMIX_LOG_SYSLOG, "logmon: for syslog", PMIX_STRING);
            pmix_status_t rc = PMIx_Log(&sys, 1, NULL, 0);
            if (PMIX_ERR_NOT_SUPPORTED != rc)
                fail("PMIx_Log(PMIX_LOG_SYSLOG) alone: %s (%d), not NOT-SUPPORTED",
                     PMIx_Error_string(rc), rc);
        }
    }
    fence_or_fail("PMIx_Fence");
    printf("logmon rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
