/* control: PMIx_Log, PMIx_Job_control and PMIx_Process_monitor (and their _nb forms,
 * and PMIx_Heartbeat), as OpenPMIx's log.c and jctrl.c examples call them. Every rank
 * prints one line per call, "control rank R: CALL STATUS", with the number of result
 * infos where there are some; nothing is checked here: the test compares the lines
 * of the program linked with libpmix2 and with libpmix_ffi under the same server. */
#include "common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int calls = 0;
static pmix_status_t nb_status;

static void on_op(pmix_status_t status, void *cbdata)
{
    (void) cbdata;
    pthread_mutex_lock(&lock);
    nb_status = status;
    calls++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void on_info(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void) info, (void) ninfo;
    if (NULL != release_fn)
        release_fn(release_cbdata);
    on_op(status, cbdata);
}

static void say(const char *call, pmix_status_t rc)
{
    printf("control rank %u: %s %s\n", me.rank, call, PMIx_Error_string(rc));
}

int main(void)
{
    init_or_fail("control");
    pmix_info_t data, dir;
    PMIX_INFO_CONSTRUCT(&data);
    PMIX_INFO_CONSTRUCT(&dir);
    PMIX_INFO_LOAD(&data, PMIX_LOG_STDERR, "control: a log line\n", PMIX_STRING);
    PMIX_INFO_LOAD(&dir, PMIX_LOG_GENERATE_TIMESTAMP, NULL, PMIX_BOOL);
    say("log", PMIx_Log(&data, 1, &dir, 1));
    CHECK_OK(PMIx_Log_nb(&data, 1, &dir, 1, on_op, NULL), "PMIx_Log_nb");
    wait_count(&lock, &cond, &calls, 1, "the log callback");
    say("log_nb", nb_status);
    PMIX_INFO_DESTRUCT(&data);
    PMIX_INFO_DESTRUCT(&dir);

    /* A cleanup registration, as Open MPI's MPI_Init sends, and a preemption flag. */
    pmix_proc_t self;
    PMIX_LOAD_PROCID(&self, me.nspace, me.rank);
    pmix_info_t cleanup;
    PMIX_INFO_CONSTRUCT(&cleanup);
    PMIX_INFO_LOAD(&cleanup, PMIX_REGISTER_CLEANUP, "/tmp/pmix-rs-control-none", PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    say("job_control cleanup", PMIx_Job_control(&self, 1, &cleanup, 1, &results, &nresults));
    if (NULL != results)
        PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_DESTRUCT(&cleanup);
    pmix_info_t pre;
    PMIX_INFO_CONSTRUCT(&pre);
    PMIX_INFO_LOAD(&pre, PMIX_JOB_CTRL_PREEMPTIBLE, NULL, PMIX_BOOL);
    CHECK_OK(PMIx_Job_control_nb(&self, 1, &pre, 1, on_info, NULL), "PMIx_Job_control_nb");
    wait_count(&lock, &cond, &calls, 2, "the job control callback");
    say("job_control_nb preemptible", nb_status);
    PMIX_INFO_DESTRUCT(&pre);

    pmix_info_t mon;
    PMIX_INFO_CONSTRUCT(&mon);
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_BOOL);
    results = NULL;
    nresults = 0;
    say("process_monitor heartbeat",
        PMIx_Process_monitor(&mon, PMIX_MONITOR_HEARTBEAT_ALERT, NULL, 0, &results, &nresults));
    if (NULL != results)
        PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_DESTRUCT(&mon);
    PMIx_Heartbeat();
    fence_or_fail("fence after the heartbeat");
    printf("control rank %u: done\n", me.rank);
    finalize_or_fail();
    return 0;
}
