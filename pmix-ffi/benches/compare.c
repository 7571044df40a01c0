/* The timing loop of the comparison benchmark (benches/c_abi.rs): the same source is
 * compiled once against OpenPMIx 4.2.2 and once against pmix-rs. It initialises a tool
 * that does not connect, loads the topology (PMIX_MCA_pmix_hwloc_topo_file names an
 * hwloc XML file; both libraries read it), and times blocking PMIx_Compute_distances
 * from cpu 0 plus PMIX_DEVICE_DIST_FREE, for about `seconds` seconds after a warm-up.
 *
 * The query selects PMIX_DEVTYPE_NETWORK: with the default selection OpenPMIx 4.2.2
 * fails the whole call on 24em64t-2n6c2t-pci.xml (its HCA has no GUIDs), and a failing
 * call is no fair comparison.
 *
 * Output: one line per entry of the first answer, "entry<TAB>uuid<TAB>osname<TAB>type
 * <TAB>mindist<TAB>maxdist" (so the benchmark can check both libraries answered the
 * same before comparing their times), then "status=<text> entries=<n> calls=<n>
 * ns_per_call=<x>". Every timed call must succeed with the same number of entries,
 * or the program fails. */
#include <pmix_tool.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    pmix_proc_t me;
    pmix_info_t *info;
    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT;
    pmix_cpuset_t cpus;
    pmix_device_distance_t *d = NULL;
    size_t n = 0, entries, i;
    pmix_device_type_t type = PMIX_DEVTYPE_NETWORK;
    bool yes = true;
    char cpu0[] = "hwloc:0"; /* writable: OpenPMIx 4.2.2 writes into it */
    pmix_status_t rc;
    unsigned long calls = 0;
    int mismatch = 0;
    double start, elapsed;

    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
    rc = PMIx_tool_init(&me, info, 1);
    PMIX_INFO_FREE(info, 1);
    if (PMIX_SUCCESS != rc) {
        printf("status=%s (PMIx_tool_init)\n", PMIx_Error_string(rc));
        return 1;
    }
    rc = PMIx_Load_topology(&topo);
    if (PMIX_SUCCESS != rc) {
        printf("status=%s (PMIx_Load_topology)\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_CPUSET_CONSTRUCT(&cpus);
    rc = PMIx_Parse_cpuset_string(cpu0, &cpus);
    if (PMIX_SUCCESS != rc) {
        printf("status=%s (PMIx_Parse_cpuset_string)\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &type, PMIX_DEVTYPE);

    rc = PMIx_Compute_distances(&topo, &cpus, info, 1, &d, &n);
    if (PMIX_SUCCESS != rc) {
        printf("status=%s (PMIx_Compute_distances)\n", PMIx_Error_string(rc));
        return 1;
    }
    entries = n;
    for (i = 0; i < n; i++) {
        printf("entry\t%s\t%s\t%llu\t%u\t%u\n", d[i].uuid ? d[i].uuid : "(null)",
               d[i].osname ? d[i].osname : "(null)", (unsigned long long) d[i].type,
               (unsigned) d[i].mindist, (unsigned) d[i].maxdist);
    }
    PMIX_DEVICE_DIST_FREE(d, n);

    /* warm-up */
    for (i = 0; i < 200; i++) {
        rc |= PMIx_Compute_distances(&topo, &cpus, info, 1, &d, &n);
        mismatch |= n != entries;
        PMIX_DEVICE_DIST_FREE(d, n);
    }
    start = now();
    do {
        for (i = 0; i < 100; i++) {
            rc |= PMIx_Compute_distances(&topo, &cpus, info, 1, &d, &n);
            mismatch |= n != entries;
            PMIX_DEVICE_DIST_FREE(d, n);
        }
        calls += 100;
        elapsed = now() - start;
    } while (elapsed < seconds);

    printf("status=%s entries=%zu calls=%lu ns_per_call=%.1f%s\n", PMIx_Error_string(rc),
           entries, calls, elapsed * 1e9 / calls,
           mismatch ? " (a timed call returned another number of entries)" : "");
    PMIX_INFO_FREE(info, 1);
    PMIx_Cpuset_destruct(&cpus);
    PMIx_tool_finalize();
    return PMIX_SUCCESS == rc && !mismatch ? 0 : 1;
}
