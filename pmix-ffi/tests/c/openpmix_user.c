/* A program written only against OpenPMIx's documented API, as a user writes it: the
 * macros (PMIX_INFO_CREATE / LOAD / FREE, PMIX_INFO_TRUE, PMIX_DEVICE_DIST_FREE),
 * PMIx_tool_init with PMIX_TOOL_DO_NOT_CONNECT, the blocking and non-blocking distance
 * calls. It must compile unchanged against OpenPMIx 4.2.2's headers and against
 * pmix-rs's, and run with either library (the topology comes from
 * PMIX_MCA_pmix_hwloc_topo_file). */
#include <pmix_tool.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done = 0;
static size_t nb_count = 0;

static void distcb(pmix_status_t status, pmix_device_distance_t *dist, size_t ndist,
                   void *cbdata, pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void) dist;
    (void) cbdata;
    pthread_mutex_lock(&lock);
    nb_count = (PMIX_SUCCESS == status) ? ndist : 0;
    done = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    if (NULL != release_fn) {
        release_fn(release_cbdata);
    }
}

int main(void)
{
    pmix_proc_t myproc;
    pmix_info_t *info;
    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT;
    pmix_cpuset_t cpuset;
    pmix_device_distance_t *dist = NULL;
    size_t ndist = 0, n;
    pmix_device_type_t type = PMIX_DEVTYPE_NETWORK;
    bool flag = true;
    char cpus[] = "hwloc:0";
    pmix_status_t rc;

    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_TOOL_DO_NOT_CONNECT, &flag, PMIX_BOOL);
    if (!PMIX_INFO_TRUE(&info[0])) {
        fprintf(stderr, "PMIX_INFO_TRUE misread a true flag\n");
        return 1;
    }
    rc = PMIx_tool_init(&myproc, info, 1);
    PMIX_INFO_FREE(info, 1);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "PMIx_tool_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (!PMIx_Initialized()) {
        return 1;
    }
    printf("version %s\n", PMIx_Get_version());

    rc = PMIx_Load_topology(&topo);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "PMIx_Load_topology: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_CPUSET_CONSTRUCT(&cpuset);
    rc = PMIx_Parse_cpuset_string(cpus, &cpuset);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "PMIx_Parse_cpuset_string: %s\n", PMIx_Error_string(rc));
        return 1;
    }

    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &type, PMIX_DEVTYPE);
    rc = PMIx_Compute_distances(&topo, &cpuset, info, 1, &dist, &ndist);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "PMIx_Compute_distances: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    for (n = 0; n < ndist; n++) {
        printf("%s %s type=%lu min=%u max=%u\n", dist[n].osname, dist[n].uuid,
               (unsigned long) dist[n].type, dist[n].mindist, dist[n].maxdist);
    }

    rc = PMIx_Compute_distances_nb(&topo, &cpuset, info, 1, distcb, NULL);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "PMIx_Compute_distances_nb: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pthread_mutex_lock(&lock);
    while (!done) {
        pthread_cond_wait(&cond, &lock);
    }
    pthread_mutex_unlock(&lock);
    if (nb_count != ndist) {
        fprintf(stderr, "non-blocking: %zu entries, blocking: %zu\n", nb_count, ndist);
        return 1;
    }

    PMIX_DEVICE_DIST_FREE(dist, ndist);
    PMIX_INFO_FREE(info, 1);
    PMIx_Cpuset_destruct(&cpuset);
    rc = PMIx_tool_finalize();
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "PMIx_tool_finalize: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("done\n");
    return 0;
}
