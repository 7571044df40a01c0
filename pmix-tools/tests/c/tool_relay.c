/* tool_relay: a tool connecting to the server named by PMIX_SERVER_URI (the URI of
 * the environment it was started in, given as PMIx_tool_init's info), with no
 * topology of its own (PMIX_TOPOLOGY names a missing file), so its distance request
 * is relayed. Prints "tool_relay: connected KIND" ("launch-id" when it kept the
 * identity it was launched with, "tool-id" when the server assigned one), then "tool_relay: uuid osname type min max" per entry of the
 * relayed answer from cpus 0-5, and "tool_relay: ok". */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    const char *uri = getenv("PMIX_SERVER_URI41");
    if (NULL == uri) {
        fprintf(stderr, "tool_relay: no PMIX_SERVER_URI41\n");
        return 1;
    }
    setenv("PMIX_TOPOLOGY", "xml:/nonexistent/pmix-rs-no-topology.xml", 1);
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_URI, uri, PMIX_STRING);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "tool_relay: PMIx_tool_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    const char *ns = getenv("PMIX_NAMESPACE");
    printf("tool_relay: connected %s\n",
           NULL != ns && 0 == strcmp(ns, me.nspace) ? "launch-id"
           : NULL != strstr(me.nspace, ".tool.")    ? "tool-id"
                                                    : me.nspace);
    pmix_cpuset_t cpus;
    rc = PMIx_Parse_cpuset_string("hwloc:0-5", &cpus);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "tool_relay: PMIx_Parse_cpuset_string: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_device_distance_t *d = NULL;
    size_t n = 0;
    rc = PMIx_Compute_distances(NULL, &cpus, NULL, 0, &d, &n);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "tool_relay: PMIx_Compute_distances: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        printf("tool_relay: %s %s %llu %u %u\n", d[i].uuid, d[i].osname,
               (unsigned long long)d[i].type, d[i].mindist, d[i].maxdist);
    PMIX_DEVICE_DIST_FREE(d, n);
    PMIx_Cpuset_destruct(&cpus);
    rc = PMIx_tool_finalize();
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "tool_relay: PMIx_tool_finalize: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("tool_relay: ok\n");
    return 0;
}
