/* dynamic MODE: PMIx_Spawn as a parent and as the spawned children (usage: dynamic
 * [ok|missing|dies|slow]; a spawned process runs "dynamic child").
 *
 * The parents (every rank of the first job) fence; rank 0 registers a handler for
 * PMIX_EVENT_JOB_END, then spawns 2 processes:
 * - ok: this program as "dynamic child", with SPAWN_ENV=3 in their environment and
 *   PMIX_NOTIFY_COMPLETION asked. Rank 0 then reads the new job's PMIX_JOB_SIZE and
 *   child 1's PMIX_LOCAL_RANK (both from the job information the spawn's answer
 *   carried), connects with the children (PMIx_Connect over both namespaces), reads
 *   the value child 0 put, disconnects, and waits for the children's job to end
 *   (the event, at most 20 s). Prints "dynamic parent 0: spawned NSPACE-OK size 2
 *   local-rank L connect OK value V disconnect OK job-end STATUS".
 * - missing: a program that does not exist; prints "dynamic parent 0: spawn FAILED"
 *   (any error) or "... spawn SUCCEEDED".
 * - dies: this program as "dynamic die" (exits 3 before PMIx_Init); prints the same.
 * - slow: this program as "dynamic sleep" (writes its pid to $DYNAMIC_PIDFILE.R and
 *   sleeps 60 s before PMIx_Init): the spawn is still in flight when the test kills
 *   the launcher.
 * The children ("child"): check SPAWN_ENV=3 and PMIX_PARENT_ID (the parent's nspace,
 * rank 0) and PMIX_SPAWNED, put "dyn.value" = 100 + rank, commit, fence among
 * themselves, read each other's value, then join the connect and the disconnect;
 * print "dynamic child R: parent OK peers OK connect OK disconnect OK" (without
 * PMIX_PARENT_ID, as under Open MPI 4.1's mpirun: "parent NONE ... connect NONE
 * disconnect NONE", and the parents' connect is not answered: run mode ok under
 * pmix-run).
 * Any failed check: "dynamic ... FAIL ..." on stderr, exit 1. */
#include "common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ended = 0;
static pmix_status_t end_status = 12345;
static char end_nspace[PMIX_MAX_NSLEN + 1];

static void on_job_end(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                       size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                       void *cbdata)
{
    (void) id;
    (void) status;
    (void) source;
    (void) results;
    (void) nresults;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS))
            end_status = info[i].value.data.status;
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && NULL != info[i].value.data.proc)
            snprintf(end_nspace, sizeof end_nspace, "%s", info[i].value.data.proc->nspace);
    }
    ended++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (NULL != cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void on_reg(pmix_status_t status, size_t id, void *cbdata)
{
    (void) status;
    (void) id;
    (void) cbdata;
}

/* The connect and disconnect over the parents' and the children's namespaces. */
static void connect_both(const char *parents, const char *children)
{
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], parents, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], children, PMIX_RANK_WILDCARD);
    CHECK_OK(PMIx_Connect(procs, 2, NULL, 0), "PMIx_Connect");
}

static void disconnect_both(const char *parents, const char *children)
{
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], parents, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], children, PMIX_RANK_WILDCARD);
    CHECK_OK(PMIx_Disconnect(procs, 2, NULL, 0), "PMIx_Disconnect");
}

static int child(void)
{
    uint32_t n = init_or_fail("dynamic");
    const char *env = getenv("SPAWN_ENV");
    if (NULL == env || 0 != strcmp(env, "3"))
        fail("SPAWN_ENV is %s", NULL == env ? "unset" : env);
    pmix_value_t *v = NULL;
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    /* Open MPI 4.1's mpirun gives neither key: "parent NONE" there. */
    const char *parent = "NONE";
    char parents[PMIX_MAX_NSLEN + 1] = "";
    if (PMIX_SUCCESS == PMIx_Get(&wild, PMIX_PARENT_ID, NULL, 0, &v)) {
        if (PMIX_PROC != v->type || 0 != v->data.proc->rank)
            fail("PMIX_PARENT_ID is not rank 0 of a job");
        snprintf(parents, sizeof parents, "%s", v->data.proc->nspace);
        PMIX_VALUE_RELEASE(v);
        v = NULL;
        CHECK_OK(PMIx_Get(&wild, PMIX_SPAWNED, NULL, 0, &v), "PMIx_Get(PMIX_SPAWNED)");
        if (PMIX_BOOL != v->type || !v->data.flag)
            fail("PMIX_SPAWNED is not true");
        PMIX_VALUE_RELEASE(v);
        parent = "OK";
    }
    if (2 != n)
        fail("job size %u", n);
    pmix_value_t put;
    PMIX_VALUE_LOAD(&put, &(uint32_t){100 + me.rank}, PMIX_UINT32);
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "dyn.value", &put), "PMIx_Put");
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    CHECK_OK(PMIx_Fence(&wild, 1, NULL, 0), "PMIx_Fence");
    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, me.nspace, 1 - me.rank);
    v = NULL;
    CHECK_OK(PMIx_Get(&peer, "dyn.value", NULL, 0, &v), "PMIx_Get(peer)");
    if (PMIX_UINT32 != v->type || v->data.uint32 != 100 + peer.rank)
        fail("peer's value");
    PMIX_VALUE_RELEASE(v);
    if (parents[0]) {
        connect_both(parents, me.nspace);
        disconnect_both(parents, me.nspace);
    }
    printf("dynamic child %u: parent %s peers OK connect %s disconnect %s\n", me.rank, parent,
           parents[0] ? "OK" : "NONE", parents[0] ? "OK" : "NONE");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    if (0 == strcmp(mode, "child"))
        return child();
    if (0 == strcmp(mode, "die"))
        return 3;
    if (0 == strcmp(mode, "sleep")) {
        const char *f = getenv("DYNAMIC_PIDFILE");
        const char *r = getenv("PMIX_RANK");
        if (NULL != f && NULL != r) {
            char path[4096];
            snprintf(path, sizeof path, "%s.%s", f, r);
            FILE *fp = fopen(path, "w");
            if (NULL != fp) {
                fprintf(fp, "%d\n", (int) getpid());
                fclose(fp);
            }
        }
        sleep(60);
        return 0;
    }
    init_or_fail("dynamic");
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK_OK(PMIx_Fence(&wild, 1, NULL, 0), "PMIx_Fence");
    if (0 != me.rank) {
        if (0 == strcmp(mode, "ok")) {
            /* The other parents take part in the connect too. */
            pmix_value_t *v = NULL;
            pmix_proc_t zero;
            PMIX_LOAD_PROCID(&zero, me.nspace, 0);
            CHECK_OK(PMIx_Get(&zero, "dyn.children", NULL, 0, &v), "PMIx_Get(dyn.children)");
            char children[PMIX_MAX_NSLEN + 1];
            snprintf(children, sizeof children, "%s", v->data.string);
            PMIX_VALUE_RELEASE(v);
            connect_both(me.nspace, children);
            disconnect_both(me.nspace, children);
        }
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    pmix_status_t code = PMIX_EVENT_JOB_END;
    PMIx_Register_event_handler(&code, 1, NULL, 0, on_job_end, on_reg, NULL);

    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    char *args[3] = {NULL, NULL, NULL};
    if (0 == strcmp(mode, "missing")) {
        app.cmd = strdup("/nonexistent/pmix-rs-dynamic-child");
        args[0] = app.cmd;
    } else {
        app.cmd = strdup(argv[0]);
        args[0] = argv[0];
        args[1] = 0 == strcmp(mode, "dies") ? "die" : 0 == strcmp(mode, "slow") ? "sleep" : "child";
    }
    app.argv = args;
    char *env[2] = {"SPAWN_ENV=3", NULL};
    app.env = env;
    app.maxprocs = 2;
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    char children[PMIX_MAX_NSLEN + 1] = "";
    pmix_status_t rc = PMIx_Spawn(&info, 1, &app, 1, children);
    free(app.cmd);
    if (0 != strcmp(mode, "ok")) {
        printf("dynamic parent 0: spawn %s\n", PMIX_SUCCESS == rc ? "SUCCEEDED" : "FAILED");
        fflush(stdout);
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    CHECK_OK(rc, "PMIx_Spawn");
    pmix_value_t put;
    PMIX_VALUE_LOAD(&put, children, PMIX_STRING);
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "dyn.children", &put), "PMIx_Put");
    PMIX_VALUE_DESTRUCT(&put);
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    pmix_value_t *v = NULL;
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, children, PMIX_RANK_WILDCARD);
    CHECK_OK(PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v), "PMIx_Get(their PMIX_JOB_SIZE)");
    uint32_t size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    v = NULL;
    job.rank = 1;
    CHECK_OK(PMIx_Get(&job, PMIX_LOCAL_RANK, NULL, 0, &v), "PMIx_Get(PMIX_LOCAL_RANK)");
    unsigned lrank = v->data.uint16;
    PMIX_VALUE_RELEASE(v);
    connect_both(me.nspace, children);
    v = NULL;
    job.rank = 0;
    CHECK_OK(PMIx_Get(&job, "dyn.value", NULL, 0, &v), "PMIx_Get(child 0's value)");
    unsigned value = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    disconnect_both(me.nspace, children);
    pthread_mutex_lock(&lock);
    for (int waited = 0; ended == 0 && waited < 200; waited++) {
        pthread_mutex_unlock(&lock);
        sleep_ms(100);
        pthread_mutex_lock(&lock);
    }
    int got = ended;
    pthread_mutex_unlock(&lock);
    printf("dynamic parent 0: spawned %s size %u local-rank %u connect OK value %u disconnect "
           "OK job-end %s\n",
           0 != strcmp(children, me.nspace) && children[0] ? "NSPACE-OK" : "NSPACE-BAD", size,
           lrank, value,
           !got                                 ? "NONE"
           : 0 != strcmp(end_nspace, children) ? "OTHER-NSPACE"
           : PMIX_SUCCESS == end_status       ? "SUCCESS"
                                               : "FAILED");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
