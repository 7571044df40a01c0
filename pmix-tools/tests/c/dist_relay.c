/* dist_relay: PMIx_Compute_distances when this process has no topology of its own
 * (PMIX_TOPOLOGY names a file that does not exist; libpmix_ffi reads it at init), so
 * the request is relayed to the server (docs/design.md §6). Every rank asks:
 *   1. from its own binding (no cpuset given), blocking;
 *   2. the same, non-blocking (the callback's array is released with release_fn);
 *   3. from the device named by argv[1] (PMIX_DEVICE_DIST_ORIGIN), blocking;
 *   4. from a device that does not exist, blocking, with *distances and *ndist set
 *      to garbage first: they must be NULL and 0 after the call.
 * Each answer prints "dist_relay rank R: CASE STATUS" and, on success, one line
 * "dist_relay rank R: CASE uuid osname type mindist maxdist" per entry; the test
 * compares them with the server's topology answered in Rust. */
#include "common.h"


static void print_rows(const char *what, pmix_status_t rc, pmix_device_distance_t *d, size_t n)
{
    printf("dist_relay rank %u: %s %s\n", me.rank, what, PMIx_Error_string(rc));
    for (size_t i = 0; PMIX_SUCCESS == rc && i < n; i++)
        printf("dist_relay rank %u: %s %s %s %llu %u %u\n", me.rank, what, d[i].uuid,
               d[i].osname, (unsigned long long)d[i].type, d[i].mindist, d[i].maxdist);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int calls = 0;

static void on_dist(pmix_status_t status, pmix_device_distance_t *dist, size_t ndist,
                    void *cbdata, pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void)cbdata;
    print_rows("nb", status, dist, ndist);
    if (NULL != release_fn)
        release_fn(release_cbdata);
    pthread_mutex_lock(&lock);
    calls++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void ask(const char *what, pmix_info_t *info, size_t ninfo)
{
    pmix_device_distance_t *d = NULL;
    size_t n = 0;
    pmix_status_t rc = PMIx_Compute_distances(NULL, NULL, info, ninfo, &d, &n);
    print_rows(what, rc, d, n);
    if (NULL != d)
        PMIx_Device_distance_free(d, n);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dist_relay ORIGIN\n");
        return 2;
    }
    setenv("PMIX_TOPOLOGY", "xml:/nonexistent/pmix-rs-no-topology.xml", 1);
    init_or_fail("dist_relay");

    ask("own", NULL, 0);

    CHECK_OK(PMIx_Compute_distances_nb(NULL, NULL, NULL, 0, on_dist, NULL),
             "PMIx_Compute_distances_nb");
    wait_count(&lock, &cond, &calls, 1, "the distance callback");

    pmix_info_t origin;
    PMIX_INFO_LOAD(&origin, PMIX_DEVICE_DIST_ORIGIN, argv[1], PMIX_STRING);
    ask("origin", &origin, 1);
    PMIX_INFO_DESTRUCT(&origin);

    pmix_info_t none;
    PMIX_INFO_LOAD(&none, PMIX_DEVICE_DIST_ORIGIN, "no-such-device", PMIX_STRING);
    pmix_device_distance_t *d = (pmix_device_distance_t *)&none;
    size_t n = 12345;
    pmix_status_t rc = PMIx_Compute_distances(NULL, NULL, &none, 1, &d, &n);
    if (PMIX_SUCCESS == rc || NULL != d || 0 != n)
        fail("a failed relayed request left distances %p ndist %zu (status %s)", (void *)d, n,
             PMIx_Error_string(rc));
    printf("dist_relay rank %u: missing %s\n", me.rank, PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&none);

    finalize_or_fail();
    return 0;
}
