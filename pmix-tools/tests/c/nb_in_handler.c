/* Every non-blocking call of the C ABI made from inside an event handler, on the
 * progress thread (issue 21), run as `pmix-run -n 4 nb_in_handler`.
 *
 * Each rank registers a handler for four phase codes, then, phase by phase, fences,
 * notifies itself the phase's code (range PROC_LOCAL) and waits for every callback
 * the handler's calls owe. The handler makes, in phase
 *
 *   1. PMIx_Get_nb, PMIx_Fence_nb, PMIx_Query_info_nb, PMIx_Compute_distances_nb,
 *      PMIx_Log_nb, PMIx_Job_control_nb, PMIx_Process_monitor_nb, PMIx_Spawn_nb,
 *      PMIx_Connect_nb, PMIx_Notify_event and PMIx_Register_event_handler (each
 *      with a callback);
 *   2. PMIx_Disconnect_nb, PMIx_Group_construct_nb of all four ranks and
 *      PMIx_Deregister_event_handler of phase 1's registration;
 *   3. at rank 0, PMIx_Group_invite_nb of rank 1 into a second group, whose
 *      invitation handler (at rank 1) calls PMIx_Group_join_nb;
 *   4. at rank 3, PMIx_Group_leave_nb of the first group; at the others,
 *      PMIx_Group_destruct_nb of it; at ranks 0 and 1, PMIx_Group_destruct_nb of the
 *      second.
 *
 * A call may refuse at once (what our server does not support, for example), but
 * none may answer PMIX_ERR_WOULD_BLOCK, none may block, and a call that was
 * accepted calls back exactly once, never with PMIX_ERR_WOULD_BLOCK. Each rank
 * prints one "R: CALL rc=STATUS cb=STATUS" line per call, then
 * "nb_in_handler rank R: ok"; a failed check prints FAIL on stderr and exits 1. */
#include "common.h"

#define PHASES 4
#define CODE(p) (PMIX_EXTERNAL_ERR_BASE - 20 - (p))
#define CODE_NOTIFIED (PMIX_EXTERNAL_ERR_BASE - 30)
#define CODE_REGISTERED (PMIX_EXTERNAL_ERR_BASE - 31)
#define MAXREC 32

struct rec {
    const char *name;
    int phase;
    pmix_status_t rc; /* what the call returned */
    pmix_status_t cb; /* what its callback said */
    int called;       /* how often the callback came */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct rec recs[MAXREC];
static int nrec;
static size_t phase1_ref;
static int phase_ran[PHASES + 1];

/* A new record (under lock). */
static struct rec *rec_new(const char *name, int phase)
{
    if (nrec == MAXREC)
        fail("too many calls");
    struct rec *r = &recs[nrec++];
    r->name = name;
    r->phase = phase;
    r->rc = r->cb = -9999;
    return r;
}

static void finished(void *cbdata, pmix_status_t status)
{
    struct rec *r = cbdata;
    pthread_mutex_lock(&lock);
    r->cb = status;
    r->called++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void op_cb(pmix_status_t status, void *cbdata)
{
    finished(cbdata, status);
}

static void value_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    (void)kv;
    finished(cbdata, status);
}

static void info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void)info, (void)ninfo;
    finished(cbdata, status);
    if (release_fn)
        release_fn(release_cbdata);
}

static void spawn_cb(pmix_status_t status, pmix_nspace_t nspace, void *cbdata)
{
    (void)nspace;
    finished(cbdata, status);
}

static void dist_cb(pmix_status_t status, pmix_device_distance_t *dist, size_t ndist,
                    void *cbdata, pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void)dist, (void)ndist;
    finished(cbdata, status);
    if (release_fn)
        release_fn(release_cbdata);
}

static void reg_cb(pmix_status_t status, size_t refid, void *cbdata)
{
    phase1_ref = refid;
    finished(cbdata, status);
}

static void nothing(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results;
    (void)nresults;
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Records call NAME of phase P: CALL is evaluated with `r` the new record. */
#define NB(P, NAME, CALL)                                                              \
    do {                                                                               \
        pthread_mutex_lock(&lock);                                                     \
        struct rec *r = rec_new(NAME, P);                                              \
        pthread_mutex_unlock(&lock);                                                   \
        pmix_status_t rc_ = (CALL);                                                    \
        pthread_mutex_lock(&lock);                                                     \
        r->rc = rc_;                                                                   \
        pthread_cond_broadcast(&cond);                                                 \
        pthread_mutex_unlock(&lock);                                                   \
    } while (0)

static pmix_proc_t all;

static void phase1(void)
{
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    NB(1, "PMIx_Get_nb", PMIx_Get_nb(&wild, PMIX_JOB_SIZE, NULL, 0, value_cb, r));
    NB(1, "PMIx_Fence_nb", PMIx_Fence_nb(&all, 1, NULL, 0, op_cb, r));
    static pmix_query_t q;
    static char *keys[] = {PMIX_QUERY_NAMESPACES, NULL};
    q.keys = keys;
    NB(1, "PMIx_Query_info_nb", PMIx_Query_info_nb(&q, 1, info_cb, r));
    static pmix_topology_t topo;
    static pmix_cpuset_t cpuset;
    NB(1, "PMIx_Compute_distances_nb",
       PMIx_Compute_distances_nb(&topo, &cpuset, NULL, 0, dist_cb, r));
    static pmix_info_t log;
    PMIX_INFO_LOAD(&log, PMIX_LOG_STDERR, "nb_in_handler: a log line\n", PMIX_STRING);
    NB(1, "PMIx_Log_nb", PMIx_Log_nb(&log, 1, NULL, 0, op_cb, r));
    static pmix_info_t jc;
    PMIX_INFO_LOAD(&jc, PMIX_REGISTER_CLEANUP, "/tmp/nb_in_handler.none", PMIX_STRING);
    NB(1, "PMIx_Job_control_nb", PMIx_Job_control_nb(NULL, 0, &jc, 1, info_cb, r));
    static pmix_info_t hb;
    bool yes = true;
    PMIX_INFO_LOAD(&hb, PMIX_SEND_HEARTBEAT, &yes, PMIX_BOOL);
    NB(1, "PMIx_Process_monitor_nb",
       PMIx_Process_monitor_nb(&hb, PMIX_SUCCESS, NULL, 0, info_cb, r));
    static pmix_app_t app;
    static char *argv[] = {"/bin/true", NULL};
    app.cmd = "/bin/true";
    app.argv = argv;
    app.maxprocs = 1;
    NB(1, "PMIx_Spawn_nb", PMIx_Spawn_nb(NULL, 0, &app, 1, spawn_cb, r));
    NB(1, "PMIx_Connect_nb", PMIx_Connect_nb(&all, 1, NULL, 0, op_cb, r));
    NB(1, "PMIx_Notify_event",
       PMIx_Notify_event(CODE_NOTIFIED, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, op_cb, r));
    static pmix_status_t code = CODE_REGISTERED;
    NB(1, "PMIx_Register_event_handler",
       PMIx_Register_event_handler(&code, 1, NULL, 0, nothing, reg_cb, r));
}

static void phase2(void)
{
    NB(2, "PMIx_Disconnect_nb", PMIx_Disconnect_nb(&all, 1, NULL, 0, op_cb, r));
    NB(2, "PMIx_Group_construct_nb",
       PMIx_Group_construct_nb("nb-all", &all, 1, NULL, 0, info_cb, r));
    NB(2, "PMIx_Deregister_event_handler", PMIx_Deregister_event_handler(phase1_ref, op_cb, r));
}

static void phase3(void)
{
    if (me.rank != 0)
        return;
    pmix_proc_t one;
    PMIX_LOAD_PROCID(&one, me.nspace, 1);
    NB(3, "PMIx_Group_invite_nb", PMIx_Group_invite_nb("nb-pair", &one, 1, NULL, 0, info_cb, r));
}

static void phase4(void)
{
    if (me.rank == 3) {
        NB(4, "PMIx_Group_leave_nb", PMIx_Group_leave_nb("nb-all", NULL, 0, op_cb, r));
        return;
    }
    NB(4, "PMIx_Group_destruct_nb", PMIx_Group_destruct_nb("nb-all", NULL, 0, op_cb, r));
    if (me.rank <= 1)
        NB(4, "PMIx_Group_destruct_nb(pair)",
           PMIx_Group_destruct_nb("nb-pair", NULL, 0, op_cb, r));
}

static void on_phase(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    int p = CODE(1) - status + 1;
    switch (p) {
    case 1: phase1(); break;
    case 2: phase2(); break;
    case 3: phase3(); break;
    case 4: phase4(); break;
    default: fail("a phase code out of range: %d", status);
    }
    pthread_mutex_lock(&lock);
    phase_ran[p] = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void on_invited(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                       size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                       void *cbdata)
{
    (void)id, (void)status, (void)results, (void)nresults;
    const char *grp = group_id_of(info, ninfo);
    if (grp && !PMIX_CHECK_PROCID(source, &me))
        NB(3, "PMIx_Group_join_nb",
           PMIx_Group_join_nb(grp, source, PMIX_GROUP_ACCEPT, NULL, 0, info_cb, r));
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Whether every call of phase p has returned and, if accepted, called back. */
static int phase_done(int p)
{
    if (!phase_ran[p])
        return 0;
    for (int i = 0; i < nrec; i++)
        if (recs[i].phase == p &&
            (recs[i].rc == -9999 || (recs[i].rc == PMIX_SUCCESS && !recs[i].called)))
            return 0;
    /* Rank 1 also owes the join of phase 3. */
    if (p == 3 && me.rank == 1) {
        for (int i = 0; i < nrec; i++)
            if (!strcmp(recs[i].name, "PMIx_Group_join_nb"))
                return 1;
        return 0;
    }
    return 1;
}

int main(void)
{
    uint32_t size = init_or_fail("nb_in_handler");
    if (size != 4)
        fail("run me as 4 ranks, not %u", size);
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t codes[PHASES] = {CODE(1), CODE(2), CODE(3), CODE(4)};
    if (PMIx_Register_event_handler(codes, PHASES, NULL, 0, on_phase, NULL, NULL) < 0)
        fail("registering the phase handler");
    pmix_status_t invited = PMIX_GROUP_INVITED;
    if (PMIx_Register_event_handler(&invited, 1, NULL, 0, on_invited, NULL, NULL) < 0)
        fail("registering the invitation handler");
    for (int p = 1; p <= PHASES; p++) {
        fence_or_fail("the fence before a phase");
        CHECK_OK(PMIx_Notify_event(CODE(p), &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL),
                 "notifying the phase");
        pthread_mutex_lock(&lock);
        while (!phase_done(p)) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += 30;
            if (ETIMEDOUT == pthread_cond_timedwait(&cond, &lock, &until))
                fail("phase %d: a call never returned or never called back", p);
        }
        pthread_mutex_unlock(&lock);
    }
    fence_or_fail("the last fence");
    sleep_ms(50); /* a second callback would come now */
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nrec; i++) {
        struct rec *r = &recs[i];
        printf("%u: %s rc=%s cb=%s\n", me.rank, r->name, PMIx_Error_string(r->rc),
               r->called ? PMIx_Error_string(r->cb) : "-");
        if (r->rc == PMIX_ERR_WOULD_BLOCK || (r->called && r->cb == PMIX_ERR_WOULD_BLOCK))
            fail("%s would block in a handler", r->name);
        if (r->rc == PMIX_SUCCESS && r->called != 1)
            fail("%s called back %d times", r->name, r->called);
        if (r->rc != PMIX_SUCCESS && r->called)
            fail("%s refused (%s) and called back too", r->name, PMIx_Error_string(r->rc));
    }
    pthread_mutex_unlock(&lock);
    printf("nb_in_handler rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
