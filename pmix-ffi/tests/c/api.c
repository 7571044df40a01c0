/* Every call of include/pmix.h and every return code of the PMIx_Compute_distances
 * page, through the C ABI. Run by pmix-ffi/tests/c_programs.rs in several modes:
 *
 *   api main     PMIX_TOPOLOGY=xml:24em64t-2n6c2t-pci.xml: the whole life cycle
 *   api big      PMIX_TOPOLOGY=xml:192em64t-12gr2n8c2t.xml: origin ambiguity, domains
 *   api unreach  PMIX_TOPOLOGY=xml:<a missing file>: no local topology
 *   api mca      PMIX_MCA_pmix_hwloc_topo_file=24em64t-2n6c2t-pci.xml (OpenPMIx's knob)
 *
 * Expected distances are derived by hand from docs/design.md §3 for 24em64t-2n6c2t-pci.xml:
 * two packages (even cpus / odd cpus), every NIC local to package 0; eth0/eth1 are the
 * two functions of 04:00 under root port 00:03.0 (depth 1); eth2, ib0 and mlx4_0 sit on
 * 05:00.0 under another root port (depth 1); sda on 00:1f.2 right under the host bridge.
 */
#include <pmix_tool.h>

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "check.h"

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int calls;
    pmix_status_t status;
    pmix_device_distance_t *dist;
    size_t ndist;
    pmix_release_cbfunc_t release_fn;
    void *release_cbdata;
    pthread_t thread;
} nb_result_t;

static void nb_init(nb_result_t *r)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
}

static void dist_cb(pmix_status_t status, pmix_device_distance_t *dist, size_t ndist,
                    void *cbdata, pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    nb_result_t *r = (nb_result_t *) cbdata;
    pthread_mutex_lock(&r->lock);
    r->calls++;
    r->status = status;
    r->dist = dist;
    r->ndist = ndist;
    r->release_fn = release_fn;
    r->release_cbdata = release_cbdata;
    r->thread = pthread_self();
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* Waits (at most 10 s) until the callback has run at least once. */
static int nb_wait(nb_result_t *r)
{
    struct timespec until;
    int calls;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&r->lock);
    while (r->calls == 0) {
        if (pthread_cond_timedwait(&r->cond, &r->lock, &until) != 0) {
            break;
        }
    }
    calls = r->calls;
    pthread_mutex_unlock(&r->lock);
    return calls;
}

static void nb_release(nb_result_t *r)
{
    if (NULL != r->release_fn) {
        r->release_fn(r->release_cbdata);
    }
    r->release_fn = NULL;
}

/* Same entries, in the same order. */
static int same(const pmix_device_distance_t *a, size_t na, const pmix_device_distance_t *b,
                size_t nb)
{
    size_t i;
    if (na != nb) {
        return 0;
    }
    for (i = 0; i < na; i++) {
        if (0 != strcmp(a[i].uuid, b[i].uuid) || 0 != strcmp(a[i].osname, b[i].osname)
            || a[i].type != b[i].type || a[i].mindist != b[i].mindist
            || a[i].maxdist != b[i].maxdist) {
            return 0;
        }
    }
    return 1;
}

typedef struct {
    const char *osname;
    const char *uuid;
    pmix_device_type_t type;
    uint16_t mindist, maxdist;
} expect_t;

static int matches(const pmix_device_distance_t *d, size_t n, const expect_t *e, size_t ne)
{
    size_t i;
    if (n != ne) {
        printf("  got %zu entries, want %zu\n", n, ne);
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (0 != strcmp(d[i].osname, e[i].osname) || 0 != strcmp(d[i].uuid, e[i].uuid)
            || d[i].type != e[i].type || d[i].mindist != e[i].mindist
            || d[i].maxdist != e[i].maxdist) {
            printf("  entry %zu: got %s %s %lu %u %u, want %s %s %lu %u %u\n", i, d[i].osname,
                   d[i].uuid, (unsigned long) d[i].type, d[i].mindist, d[i].maxdist,
                   e[i].osname, e[i].uuid, (unsigned long) e[i].type, e[i].mindist,
                   e[i].maxdist);
            return 0;
        }
    }
    return 1;
}

/* cpu 0, default types (NETWORK | OPENFABRICS | GPU | COPROC): all local, depth 1. */
static const expect_t CPU0_DEFAULT[] = {
    {"eth0", "ipv4://78:e7:d1:21:55:30", PMIX_DEVTYPE_NETWORK, 1, 1},
    {"eth1", "ipv4://78:e7:d1:21:55:31", PMIX_DEVTYPE_NETWORK, 1, 1},
    {"eth2", "ipv4://78:e7:d1:21:55:35", PMIX_DEVTYPE_NETWORK, 1, 1},
    {"ib0", "ipv6://80:00:00:48:fe:80:00:00:00:00:00:00:78:e7:d1:03:00:21:55:35",
     PMIX_DEVTYPE_NETWORK, 1, 1},
    {"mlx4_0", "fab://mirage004::mlx4_0", PMIX_DEVTYPE_OPENFABRICS, 1, 1},
};

/* cpus 0-1 (packages 0 and 1), NETWORK only: local from cpu 0 (16*0+1), remote from
 * cpu 1 (16*2+1). */
static const expect_t CPU01_NETWORK[] = {
    {"eth0", "ipv4://78:e7:d1:21:55:30", PMIX_DEVTYPE_NETWORK, 1, 33},
    {"eth1", "ipv4://78:e7:d1:21:55:31", PMIX_DEVTYPE_NETWORK, 1, 33},
    {"eth2", "ipv4://78:e7:d1:21:55:35", PMIX_DEVTYPE_NETWORK, 1, 33},
    {"ib0", "ipv6://80:00:00:48:fe:80:00:00:00:00:00:00:78:e7:d1:03:00:21:55:35",
     PMIX_DEVTYPE_NETWORK, 1, 33},
};

/* From eth0 (04:00.0): itself 0; eth1 shares its root port (tier 1, no bridge below
 * it); the 05:00.0 devices share only the host bridge (tier 2, depth 1 + 1). */
static const expect_t FROM_ETH0[] = {
    {"eth0", "ipv4://78:e7:d1:21:55:30", PMIX_DEVTYPE_NETWORK, 0, 0},
    {"eth1", "ipv4://78:e7:d1:21:55:31", PMIX_DEVTYPE_NETWORK, 16, 16},
    {"eth2", "ipv4://78:e7:d1:21:55:35", PMIX_DEVTYPE_NETWORK, 34, 34},
    {"ib0", "ipv6://80:00:00:48:fe:80:00:00:00:00:00:00:78:e7:d1:03:00:21:55:35",
     PMIX_DEVTYPE_NETWORK, 34, 34},
    {"mlx4_0", "fab://mirage004::mlx4_0", PMIX_DEVTYPE_OPENFABRICS, 34, 34},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Runs one query both ways and checks that they agree: same status; on success the
 * same entries, the callback run exactly once off the caller's thread, and release_fn
 * given. Returns the blocking status; the blocking result in *out (caller frees). */
static pmix_status_t both(pmix_topology_t *topo, pmix_cpuset_t *cpus, pmix_info_t *info,
                          size_t ninfo, pmix_device_distance_t **out, size_t *nout)
{
    nb_result_t r;
    pmix_status_t rc, rcnb;
    pmix_device_distance_t *d = (pmix_device_distance_t *) 0x1;
    size_t n = 99;

    rc = PMIx_Compute_distances(topo, cpus, info, ninfo, &d, &n);
    if (PMIX_SUCCESS != rc) {
        CHECK(NULL == d && 0 == n); /* set on entry, left so on error */
    }
    nb_init(&r);
    rcnb = PMIx_Compute_distances_nb(topo, cpus, info, ninfo, dist_cb, &r);
    if (PMIX_SUCCESS == rcnb) {
        CHECK(1 == nb_wait(&r));
        CHECK(!pthread_equal(r.thread, pthread_self()));
        CHECK_RC(r.status, rc);
        if (PMIX_SUCCESS == rc) {
            CHECK(same(d, n, r.dist, r.ndist));
            CHECK(NULL != r.release_fn);
        } else {
            CHECK(NULL == r.dist && 0 == r.ndist && NULL == r.release_fn);
        }
        nb_release(&r);
    } else {
        /* refused at once: the same status, and no callback */
        CHECK_RC(rcnb, rc);
        CHECK(0 == r.calls);
    }
    *out = d;
    *nout = n;
    return rc;
}

/* Reloads an info with a string (releasing the string it held). */
static void load_string(pmix_info_t *i, const char *key, const char *s)
{
    PMIX_INFO_DESTRUCT(i);
    PMIX_INFO_LOAD(i, key, s, PMIX_STRING);
}

/* A callback that makes blocking calls from the progress thread. */
static pmix_status_t inner_rc[8];
static nb_result_t inner_nested;
static pmix_topology_t *inner_topo;
static pmix_cpuset_t *inner_cpus;

static void blocking_inside_cb(pmix_status_t status, pmix_device_distance_t *dist,
                               size_t ndist, void *cbdata, pmix_release_cbfunc_t release_fn,
                               void *release_cbdata)
{
    nb_result_t *r = (nb_result_t *) cbdata;
    pmix_device_distance_t *d = (pmix_device_distance_t *) 0x1;
    size_t n = 7;
    pmix_topology_t t = PMIX_TOPOLOGY_STATIC_INIT;
    pmix_proc_t p;

    inner_rc[0] = PMIx_Compute_distances(inner_topo, inner_cpus, NULL, 0, &d, &n);
    inner_rc[7] = (NULL == d && 0 == n) ? PMIX_SUCCESS : PMIX_ERROR;
    inner_rc[1] = PMIx_Compute_distances_nb(inner_topo, inner_cpus, NULL, 0, NULL, NULL);
    inner_rc[2] = PMIx_Load_topology(&t);
    inner_rc[3] = PMIx_Finalize(NULL, 0);
    inner_rc[4] = PMIx_tool_finalize();
    inner_rc[5] = PMIx_Init(&p, NULL, 0);
    PMIx_Progress_thread_stop(NULL, 0);
    /* the non-blocking form with a callback is fine here */
    inner_rc[6] = PMIx_Compute_distances_nb(inner_topo, inner_cpus, NULL, 0, dist_cb,
                                            &inner_nested);
    dist_cb(status, dist, ndist, cbdata, release_fn, release_cbdata);
    (void) r;
}

static void run_main(void)
{
    pmix_proc_t me;
    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT, stale;
    pmix_cpuset_t cpu0, cpu01, own, thread_cpus;
    pmix_device_distance_t *d, *d2;
    size_t n, n2, i;
    pmix_info_t *info;
    nb_result_t r;
    uint64_t u64 = PMIX_DEVTYPE_NETWORK;
    uint32_t u32 = PMIX_DEVTYPE_NETWORK;
    unsigned int uint_ = PMIX_DEVTYPE_NETWORK;
    pmix_device_type_t dt = PMIX_DEVTYPE_NETWORK;
    char cpustr[] = "hwloc:0";

    /* ---- before init: PMIX_ERR_INIT, outputs cleared, no callback ---- */
    PMIX_CPUSET_CONSTRUCT(&cpu0);
    CHECK(0 == PMIx_Initialized());
    d = (pmix_device_distance_t *) 0x1;
    n = 5;
    CHECK_RC(PMIx_Compute_distances(NULL, NULL, NULL, 0, &d, &n), PMIX_ERR_INIT);
    CHECK(NULL == d && 0 == n);
    nb_init(&r);
    CHECK_RC(PMIx_Compute_distances_nb(NULL, NULL, NULL, 0, dist_cb, &r), PMIX_ERR_INIT);
    CHECK_RC(PMIx_Compute_distances_nb(NULL, NULL, NULL, 0, NULL, NULL), PMIX_ERR_INIT);
    CHECK_RC(PMIx_Load_topology(&topo), PMIX_ERR_INIT);
    CHECK_RC(PMIx_Parse_cpuset_string(cpustr, &cpu0), PMIX_ERR_INIT);
    CHECK_RC(PMIx_Get_cpuset(&cpu0, PMIX_CPUBIND_PROCESS), PMIX_ERR_INIT);
    CHECK_RC(PMIx_Finalize(NULL, 0), PMIX_ERR_INIT);
    CHECK_RC(PMIx_tool_finalize(), PMIX_ERR_INIT);
    PMIx_Progress_thread_stop(NULL, 0); /* nothing to stop */

    /* ---- init as a singleton client ---- */
    CHECK_RC(PMIx_Init(&me, NULL, 0), PMIX_SUCCESS);
    CHECK(0 == strncmp(me.nspace, "pmix-rs.singleton.", 18));
    CHECK(0 == me.rank);
    CHECK(1 == PMIx_Initialized());
    CHECK(NULL != PMIx_Get_version() && 0 == strncmp(PMIx_Get_version(), "pmix-rs ", 8));

    /* ---- topology and cpusets ---- */
    CHECK_RC(PMIx_Load_topology(&topo), PMIX_SUCCESS);
    CHECK(NULL != topo.source && NULL != topo.topology);
    CHECK_RC(PMIx_Load_topology(&topo), PMIX_SUCCESS); /* again: the same topology */
    CHECK_RC(PMIx_Parse_cpuset_string(cpustr, &cpu0), PMIX_SUCCESS);
    CHECK_RC(PMIx_Parse_cpuset_string("HWLOC:0-1", &cpu01), PMIX_SUCCESS);
    CHECK_RC(PMIx_Get_cpuset(&own, PMIX_CPUBIND_PROCESS), PMIX_SUCCESS);
    CHECK_RC(PMIx_Get_cpuset(&thread_cpus, PMIX_CPUBIND_THREAD), PMIX_SUCCESS);

    /* ---- cpu 0, default types: blocking == nb == the hand-derived table ---- */
    CHECK_RC(both(&topo, &cpu0, NULL, 0, &d, &n), PMIX_SUCCESS);
    CHECK(matches(d, n, CPU0_DEFAULT, N(CPU0_DEFAULT)));
    PMIx_Device_distance_free(d, n);
    /* topo NULL means the library's own topology: same answer */
    CHECK_RC(both(NULL, &cpu0, NULL, 0, &d, &n), PMIX_SUCCESS);
    CHECK(matches(d, n, CPU0_DEFAULT, N(CPU0_DEFAULT)));
    PMIX_DEVICE_DIST_FREE(d, n); /* the macro frees our memory too */
    CHECK(NULL == d);

    /* ---- PMIX_DEVICE_TYPE as UINT64 (the seed's Python example), DEVTYPE, UINT32,
     * UINT: the same answer; two of them: the union ---- */
    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &u64, PMIX_UINT64);
    CHECK_RC(both(&topo, &cpu01, info, 1, &d, &n), PMIX_SUCCESS);
    CHECK(matches(d, n, CPU01_NETWORK, N(CPU01_NETWORK)));
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &dt, PMIX_DEVTYPE);
    CHECK_RC(both(&topo, &cpu01, info, 1, &d2, &n2), PMIX_SUCCESS);
    CHECK(same(d, n, d2, n2));
    PMIx_Device_distance_free(d2, n2);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &u32, PMIX_UINT32);
    CHECK_RC(both(&topo, &cpu01, info, 1, &d2, &n2), PMIX_SUCCESS);
    CHECK(same(d, n, d2, n2));
    PMIx_Device_distance_free(d2, n2);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &uint_, PMIX_UINT);
    CHECK_RC(both(&topo, &cpu01, info, 1, &d2, &n2), PMIX_SUCCESS);
    CHECK(same(d, n, d2, n2));
    PMIx_Device_distance_free(d2, n2);
    PMIx_Device_distance_free(d, n);
    PMIX_INFO_FREE(info, 1);
    PMIX_INFO_CREATE(info, 2);
    u64 = PMIX_DEVTYPE_BLOCK;
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &u64, PMIX_UINT64);
    u32 = PMIX_DEVTYPE_OPENFABRICS;
    PMIX_INFO_LOAD(&info[1], PMIX_DEVICE_TYPE, &u32, PMIX_UINT32);
    CHECK_RC(both(&topo, &cpu0, info, 2, &d, &n), PMIX_SUCCESS);
    CHECK(2 == n && 0 == strcmp(d[0].osname, "sda") && 0 == d[0].mindist
          && PMIX_DEVTYPE_BLOCK == d[0].type && 0 == strcmp(d[1].osname, "mlx4_0"));
    PMIx_Device_distance_free(d, n);
    PMIX_INFO_FREE(info, 2);

    /* ---- PMIX_DEVICE_ID (repeatable), PMIX_DEVICE_DISTANCES (no effect) ---- */
    PMIX_INFO_CREATE(info, 3);
    load_string(&info[0], PMIX_DEVICE_ID, "mlx4_0");
    load_string(&info[1], PMIX_DEVICE_ID, "SDA"); /* case-insensitive */
    PMIX_INFO_LOAD(&info[2], PMIX_DEVICE_DISTANCES, NULL, PMIX_BOOL);
    CHECK_RC(both(&topo, &cpu0, info, 3, &d, &n), PMIX_SUCCESS);
    CHECK(2 == n && 0 == strcmp(d[0].osname, "sda") && 0 == strcmp(d[1].osname, "mlx4_0"));
    PMIx_Device_distance_free(d, n);
    load_string(&info[0], PMIX_DEVICE_ID, "no-such-device");
    load_string(&info[1], PMIX_DEVICE_ID, "nor-this-one");
    CHECK_RC(both(&topo, &cpu0, info, 2, &d, &n), PMIX_ERR_NOT_FOUND);
    PMIX_INFO_FREE(info, 3);

    /* ---- PMIX_DEVICE_DIST_ORIGIN: by osname, by PCI address (both forms), not found;
     * the cpuset is ignored (NULL, or even foreign) ---- */
    PMIX_INFO_CREATE(info, 1);
    load_string(&info[0], PMIX_DEVICE_DIST_ORIGIN, "eth0");
    CHECK_RC(both(&topo, NULL, info, 1, &d, &n), PMIX_SUCCESS);
    CHECK(matches(d, n, FROM_ETH0, N(FROM_ETH0)));
    load_string(&info[0], PMIX_DEVICE_DIST_ORIGIN, "0000:04:00.0");
    CHECK_RC(both(&topo, &cpu01, info, 1, &d2, &n2), PMIX_SUCCESS);
    CHECK(same(d, n, d2, n2));
    PMIx_Device_distance_free(d2, n2);
    load_string(&info[0], PMIX_DEVICE_DIST_ORIGIN, "04:00.0");
    {
        pmix_cpuset_t foreign = {.source = "hwloc", .bitmap = (void *) 0x1234};
        CHECK_RC(both(&topo, &foreign, info, 1, &d2, &n2), PMIX_SUCCESS);
    }
    CHECK(same(d, n, d2, n2));
    PMIx_Device_distance_free(d2, n2);
    PMIx_Device_distance_free(d, n);
    load_string(&info[0], PMIX_DEVICE_DIST_ORIGIN, "eth9");
    CHECK_RC(both(&topo, &cpu0, info, 1, &d, &n), PMIX_ERR_NOT_FOUND);
    PMIX_INFO_FREE(info, 1);

    /* ---- the query's own BAD_PARAMs: a cpuset outside the topology, an empty one ---- */
    {
        pmix_cpuset_t outside, empty;
        CHECK_RC(PMIx_Parse_cpuset_string("hwloc:100-200", &outside), PMIX_SUCCESS);
        CHECK_RC(both(&topo, &outside, NULL, 0, &d, &n), PMIX_ERR_BAD_PARAM);
        CHECK_RC(PMIx_Parse_cpuset_string("hwloc:0x0", &empty), PMIX_SUCCESS);
        CHECK_RC(both(&topo, &empty, NULL, 0, &d, &n), PMIX_ERR_BAD_PARAM);
        PMIx_Cpuset_destruct(&outside);
        PMIx_Cpuset_destruct(&empty);
    }

    /* ---- unknown keys: ignored, unless PMIX_INFO_REQD ---- */
    PMIX_INFO_CREATE(info, 1);
    load_string(&info[0], "org.example.unknown", "x");
    CHECK_RC(both(&topo, &cpu0, info, 1, &d, &n), PMIX_SUCCESS);
    CHECK(matches(d, n, CPU0_DEFAULT, N(CPU0_DEFAULT)));
    PMIx_Device_distance_free(d, n);
    PMIX_INFO_REQUIRED(&info[0]);
    CHECK(PMIX_INFO_IS_REQUIRED(&info[0]));
    CHECK_RC(both(&topo, &cpu0, info, 1, &d, &n), PMIX_ERR_NOT_SUPPORTED);
    PMIX_INFO_FREE(info, 1);

    /* ---- the caller's own location: NULL cpuset == PMIx_Get_cpuset's ---- */
    {
        pmix_status_t a = both(&topo, NULL, NULL, 0, &d, &n);
        pmix_status_t b = both(&topo, &own, NULL, 0, &d2, &n2);
        CHECK_RC(a, b);
        if (PMIX_SUCCESS == a && PMIX_SUCCESS == b) {
            CHECK(same(d, n, d2, n2));
        }
        PMIx_Device_distance_free(d, n);
        PMIx_Device_distance_free(d2, n2);
        CHECK_RC(both(&topo, &thread_cpus, NULL, 0, &d, &n), b);
        PMIx_Device_distance_free(d, n);
    }

    /* ---- NULL cbfunc: behaves as blocking (status only) ---- */
    CHECK_RC(PMIx_Compute_distances_nb(&topo, &cpu0, NULL, 0, NULL, NULL), PMIX_SUCCESS);
    PMIX_INFO_CREATE(info, 1);
    load_string(&info[0], PMIX_DEVICE_ID, "no-such-device");
    CHECK_RC(PMIx_Compute_distances_nb(&topo, &cpu0, info, 1, NULL, NULL), PMIX_ERR_NOT_FOUND);
    PMIX_INFO_FREE(info, 1);

    /* ---- the device-distance memory calls ---- */
    d = PMIx_Device_distance_create(3);
    CHECK(NULL != d);
    for (i = 0; NULL != d && i < 3; i++) {
        CHECK(NULL == d[i].uuid && NULL == d[i].osname && UINT16_MAX == d[i].mindist
              && UINT16_MAX == d[i].maxdist);
    }
    if (NULL != d) {
        d[1].uuid = strdup("u");
        d[1].osname = strdup("o");
        PMIx_Device_distance_destruct(&d[1]);
        CHECK(NULL == d[1].uuid && NULL == d[1].osname);
        d[2].uuid = strdup("v");
        d[2].mindist = 3;
        PMIx_Device_distance_construct(&d[0]);
        CHECK(UINT16_MAX == d[0].mindist && 0 == d[0].type);
        PMIx_Device_distance_free(d, 3); /* frees d[2].uuid too */
    }
    CHECK(NULL == PMIx_Device_distance_create(0));
    PMIX_DEVICE_DIST_CREATE(d, 2);
    CHECK(NULL != d && UINT16_MAX == d[1].maxdist);
    PMIx_Device_distance_free(d, 2);

    /* ---- a blocking call from a callback: WOULD_BLOCK, a diagnostic, nothing done ---- */
    inner_topo = &topo;
    inner_cpus = &cpu0;
    nb_init(&r);
    nb_init(&inner_nested);
    CHECK_RC(PMIx_Compute_distances_nb(&topo, &cpu0, NULL, 0, blocking_inside_cb, &r),
             PMIX_SUCCESS);
    CHECK(1 == nb_wait(&r));
    CHECK_RC(inner_rc[0], PMIX_ERR_WOULD_BLOCK); /* PMIx_Compute_distances */
    CHECK_RC(inner_rc[7], PMIX_SUCCESS);         /* ... its outputs cleared, nothing made */
    CHECK_RC(inner_rc[1], PMIX_ERR_WOULD_BLOCK); /* PMIx_Compute_distances_nb, NULL cbfunc */
    CHECK_RC(inner_rc[2], PMIX_ERR_WOULD_BLOCK); /* PMIx_Load_topology */
    CHECK_RC(inner_rc[3], PMIX_ERR_WOULD_BLOCK); /* PMIx_Finalize */
    CHECK_RC(inner_rc[4], PMIX_ERR_WOULD_BLOCK); /* PMIx_tool_finalize */
    CHECK_RC(inner_rc[5], PMIX_ERR_WOULD_BLOCK); /* PMIx_Init */
    CHECK_RC(inner_rc[6], PMIX_SUCCESS);         /* the _nb form with a callback */
    CHECK(1 == nb_wait(&inner_nested));
    CHECK_RC(inner_nested.status, PMIX_SUCCESS);
    nb_release(&inner_nested);
    nb_release(&r);
    CHECK(1 == PMIx_Initialized()); /* the finalizes did nothing */
    /* and the progress thread still runs (its stop from the callback did nothing) */
    CHECK_RC(both(&topo, &cpu0, NULL, 0, &d, &n), PMIX_SUCCESS);
    PMIx_Device_distance_free(d, n);

    /* ---- a callback that never releases: accepted requests all call back before the
     * progress thread stops ---- */
    nb_init(&r);
    CHECK_RC(PMIx_Compute_distances_nb(&topo, &cpu0, NULL, 0, dist_cb, &r), PMIX_SUCCESS);

    /* ---- progress engine stopped: PMIX_ERR_NOT_AVAILABLE, no callback ---- */
    PMIx_Progress_thread_stop(NULL, 0);
    CHECK(1 == r.calls); /* drained before the stop returned */
    nb_release(&r);
    PMIx_Progress_thread_stop(NULL, 0); /* idempotent */
    nb_init(&r);
    CHECK_RC(PMIx_Compute_distances(&topo, &cpu0, NULL, 0, &d, &n), PMIX_ERR_NOT_AVAILABLE);
    CHECK(NULL == d && 0 == n);
    CHECK_RC(PMIx_Compute_distances_nb(&topo, &cpu0, NULL, 0, dist_cb, &r),
             PMIX_ERR_NOT_AVAILABLE);
    CHECK_RC(PMIx_Compute_distances_nb(&topo, &cpu0, NULL, 0, NULL, NULL),
             PMIX_ERR_NOT_AVAILABLE);
    CHECK_RC(PMIx_Load_topology(&topo), PMIX_ERR_NOT_AVAILABLE);
    CHECK(0 == r.calls);

    /* ---- finalize; afterwards PMIX_ERR_INIT again ---- */
    CHECK_RC(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    CHECK(0 == PMIx_Initialized());
    CHECK_RC(PMIx_Compute_distances(&topo, &cpu0, NULL, 0, &d, &n), PMIX_ERR_INIT);
    CHECK_RC(PMIx_Compute_distances_nb(&topo, &cpu0, NULL, 0, dist_cb, &r), PMIX_ERR_INIT);
    CHECK_RC(PMIx_Load_topology(&topo), PMIX_ERR_INIT);
    CHECK_RC(PMIx_Finalize(NULL, 0), PMIX_ERR_INIT);
    CHECK(0 == r.calls);

    /* the memory helpers still work after finalize */
    stale = topo;
    PMIx_Topology_destruct(&topo);
    CHECK(NULL == topo.source && NULL == topo.topology);
    PMIx_Cpuset_destruct(&cpu0);
    CHECK(NULL == cpu0.source && NULL == cpu0.bitmap);
    PMIx_Cpuset_destruct(&cpu01);
    PMIx_Cpuset_destruct(&own);
    PMIx_Cpuset_destruct(&thread_cpus);

    /* ---- a second life: init again, and the old topology struct is stale, also once
     * the new instance has loaded its topology, which the allocator may well place
     * where the first one was (a key compared by address would then pass) ---- */
    CHECK_RC(PMIx_tool_init(&me, NULL, 0), PMIX_SUCCESS);
    CHECK(0 == strncmp(me.nspace, "pmix-rs.tool.", 13));
    CHECK_RC(PMIx_Parse_cpuset_string("hwloc:0x00000001", &cpu0), PMIX_SUCCESS);
    CHECK_RC(both(&stale, &cpu0, NULL, 0, &d, &n), PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Load_topology(&topo), PMIX_SUCCESS);
    CHECK(topo.topology != stale.topology);
    CHECK_RC(both(&stale, &cpu0, NULL, 0, &d, &n), PMIX_ERR_BAD_PARAM);
    CHECK_RC(both(&topo, &cpu0, NULL, 0, &d, &n), PMIX_SUCCESS);
    CHECK(matches(d, n, CPU0_DEFAULT, N(CPU0_DEFAULT)));
    PMIx_Device_distance_free(d, n);
    CHECK_RC(both(NULL, &cpu0, NULL, 0, &d, &n), PMIX_SUCCESS);
    CHECK(matches(d, n, CPU0_DEFAULT, N(CPU0_DEFAULT)));
    PMIx_Device_distance_free(d, n);
    /* a destructed topology struct's copy is stale too */
    stale = topo;
    PMIx_Topology_destruct(&topo);
    CHECK_RC(both(&stale, &cpu0, NULL, 0, &d, &n), PMIX_ERR_BAD_PARAM);
    PMIx_Cpuset_destruct(&cpu0);
    CHECK_RC(PMIx_tool_finalize(), PMIX_SUCCESS);
}

/* 192em64t-12gr2n8c2t.xml: five PCI domains; 01:00.0 exists in domains 0000 (eth0)
 * and 0003 (ib0, mlx4_0), so "01:00.0" names two functions. */
static void run_big(void)
{
    pmix_info_t *info;
    pmix_device_distance_t *d;
    size_t n;
    pmix_cpuset_t cpu0;

    CHECK_RC(PMIx_tool_init(NULL, NULL, 0), PMIX_SUCCESS);
    CHECK_RC(PMIx_Parse_cpuset_string("hwloc:0", &cpu0), PMIX_SUCCESS);
    PMIX_INFO_CREATE(info, 2);
    load_string(&info[0], PMIX_DEVICE_DIST_ORIGIN, "01:00.0");
    CHECK_RC(both(NULL, &cpu0, info, 1, &d, &n), PMIX_ERR_BAD_PARAM); /* ambiguous */
    load_string(&info[0], PMIX_DEVICE_DIST_ORIGIN, "0003:01:00.0");
    CHECK_RC(both(NULL, &cpu0, info, 1, &d, &n), PMIX_SUCCESS);
    /* ib0 and mlx4_0 are that function: distance 0 */
    {
        size_t i, zero = 0;
        for (i = 0; i < n; i++) {
            if (0 == d[i].mindist) {
                zero++;
                CHECK(0 == strcmp(d[i].osname, "ib0") || 0 == strcmp(d[i].osname, "mlx4_0"));
            }
        }
        CHECK(2 == zero);
    }
    PMIx_Device_distance_free(d, n);
    /* the origin directive given twice */
    load_string(&info[0], PMIX_DEVICE_DIST_ORIGIN, "eth0");
    load_string(&info[1], PMIX_DEVICE_DIST_ORIGIN, "eth0");
    CHECK_RC(both(NULL, &cpu0, info, 2, &d, &n), PMIX_ERR_BAD_PARAM);
    PMIX_INFO_FREE(info, 2);
    PMIx_Cpuset_destruct(&cpu0);
    CHECK_RC(PMIx_tool_finalize(), PMIX_SUCCESS);
}

/* No local topology and no server: PMIX_ERR_UNREACH. The blocking form returns it; the
 * _nb form accepts the request (the topology is loaded on the progress thread) and its
 * callback receives it, as OpenPMIx hands errors found after acceptance to the
 * callback. */
static void run_unreach(void)
{
    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT;
    pmix_cpuset_t cpu0;
    pmix_device_distance_t *d;
    size_t n;
    nb_result_t r;

    CHECK_RC(PMIx_tool_init(NULL, NULL, 0), PMIX_SUCCESS);
    CHECK_RC(PMIx_Parse_cpuset_string("hwloc:0", &cpu0), PMIX_SUCCESS);
    nb_init(&r);
    /* first use of the topology, by the _nb form: accepted, UNREACH to the callback */
    CHECK_RC(PMIx_Compute_distances_nb(NULL, &cpu0, NULL, 0, dist_cb, &r), PMIX_SUCCESS);
    CHECK(1 == nb_wait(&r));
    CHECK_RC(r.status, PMIX_ERR_UNREACH);
    CHECK(NULL == r.dist && 0 == r.ndist && NULL == r.release_fn);
    CHECK_RC(PMIx_Load_topology(&topo), PMIX_ERR_UNREACH);
    CHECK(NULL == topo.source);
    CHECK_RC(both(NULL, &cpu0, NULL, 0, &d, &n), PMIX_ERR_UNREACH);
    CHECK_RC(PMIx_Compute_distances_nb(NULL, &cpu0, NULL, 0, NULL, NULL), PMIX_ERR_UNREACH);
    /* the caller's own binding, found on the progress thread: the same */
    nb_init(&r);
    CHECK_RC(PMIx_Compute_distances_nb(NULL, NULL, NULL, 0, dist_cb, &r), PMIX_SUCCESS);
    CHECK(1 == nb_wait(&r));
    CHECK_RC(r.status, PMIX_ERR_UNREACH);
    PMIx_Cpuset_destruct(&cpu0);
    CHECK_RC(PMIx_tool_finalize(), PMIX_SUCCESS);
    CHECK(1 == r.calls);
}

/* OpenPMIx's PMIX_MCA_pmix_hwloc_topo_file names the topology. */
static void run_mca(void)
{
    pmix_cpuset_t cpu0;
    pmix_device_distance_t *d;
    size_t n;

    CHECK_RC(PMIx_Init(NULL, NULL, 0), PMIX_SUCCESS);
    CHECK_RC(PMIx_Parse_cpuset_string("hwloc:0", &cpu0), PMIX_SUCCESS);
    CHECK_RC(both(NULL, &cpu0, NULL, 0, &d, &n), PMIX_SUCCESS);
    CHECK(matches(d, n, CPU0_DEFAULT, N(CPU0_DEFAULT)));
    PMIx_Device_distance_free(d, n);
    PMIx_Cpuset_destruct(&cpu0);
    CHECK_RC(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "main";
    static const struct {
        pmix_status_t code;
        const char *text;
    } texts[] = {
        {PMIX_SUCCESS, "SUCCESS"},
        {PMIX_ERR_INIT, "INIT"},
        {PMIX_ERR_NOT_AVAILABLE, "NOT_AVAILABLE"},
        {PMIX_ERR_UNREACH, "UNREACHABLE"},
        {PMIX_ERR_NOT_SUPPORTED, "NOT-SUPPORTED"},
        {PMIX_ERR_WOULD_BLOCK, "WOULD-BLOCK"},
        {PMIX_ERR_BAD_PARAM, "BAD-PARAM"},
        {PMIX_ERR_NOT_FOUND, "NOT-FOUND"},
        {PMIX_ERR_NOMEM, "NO-MEM"},
        {PMIX_ERROR, "ERROR"},
        {12345, "ERROR STRING NOT FOUND"},
    };
    size_t i;
    for (i = 0; i < N(texts); i++) {
        CHECK(0 == strcmp(PMIx_Error_string(texts[i].code), texts[i].text));
    }

    if (0 == strcmp(mode, "main")) {
        run_main();
    } else if (0 == strcmp(mode, "big")) {
        run_big();
    } else if (0 == strcmp(mode, "unreach")) {
        run_unreach();
    } else if (0 == strcmp(mode, "mca")) {
        run_mca();
    } else {
        printf("unknown mode %s\n", mode);
        return 2;
    }
    return finish();
}
