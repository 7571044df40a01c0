/* spawn: rank 0 starts one process of a program that is not a PMIx client
 * (`/bin/true`) with PMIx_Spawn, then with PMIx_Spawn_nb, and prints
 * "spawn rank 0: spawn STATUS NSPACE-KIND" for each ("named" when a namespace came
 * back, "none" otherwise); the other ranks wait in a fence. Then every rank calls
 * PMIx_Connect and PMIx_Disconnect with its whole job and prints
 * "spawn rank R: connect STATUS" and "... disconnect STATUS". Nothing is checked
 * here: the test compares the lines of the program linked with libpmix2 and with
 * libpmix_ffi under the same server (ours does not spawn; Open MPI's mpirun does). */
#include "common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int calls = 0;
static pmix_status_t nb_status;
static char nb_nspace[PMIX_MAX_NSLEN + 1];

static void on_spawn(pmix_status_t status, pmix_nspace_t nspace, void *cbdata)
{
    (void) cbdata;
    pthread_mutex_lock(&lock);
    nb_status = status;
    snprintf(nb_nspace, sizeof(nb_nspace), "%s", NULL != nspace ? nspace : "");
    calls++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

int main(void)
{
    init_or_fail("spawn");
    if (0 == me.rank) {
        pmix_app_t app;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup("/bin/true");
        PMIX_ARGV_APPEND(app.maxprocs, app.argv, "/bin/true");
        app.maxprocs = 1;
        pmix_nspace_t ns;
        memset(ns, 0, sizeof(ns));
        pmix_status_t rc = PMIx_Spawn(NULL, 0, &app, 1, ns);
        printf("spawn rank 0: spawn %s %s\n", PMIx_Error_string(rc), ns[0] ? "named" : "none");
        CHECK_OK(PMIx_Spawn_nb(NULL, 0, &app, 1, on_spawn, NULL), "PMIx_Spawn_nb");
        wait_count(&lock, &cond, &calls, 1, "the spawn callback");
        printf("spawn rank 0: spawn_nb %s %s\n", PMIx_Error_string(nb_status),
               nb_nspace[0] ? "named" : "none");
        PMIX_APP_DESTRUCT(&app);
    }
    fence_or_fail("fence after the spawns");
    /* Every rank connects with its whole job, then disconnects. */
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    printf("spawn rank %u: connect %s\n", me.rank, PMIx_Error_string(PMIx_Connect(&all, 1, NULL, 0)));
    printf("spawn rank %u: disconnect %s\n", me.rank,
           PMIx_Error_string(PMIx_Disconnect(&all, 1, NULL, 0)));
    printf("spawn rank %u: done\n", me.rank);
    finalize_or_fail();
    return 0;
}
