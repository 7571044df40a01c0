/* tool_find PID NSPACE: a tool started outside any job finds the server of process
 * PID by its rendezvous file (PMIx_tool_init with PMIX_SERVER_PIDINFO), asks it for
 * its namespaces (PMIx_Query_info, PMIX_QUERY_NAMESPACES) and prints
 * "tool_find: connected NSPACE found" or "... NSPACE missing"; a failed init prints
 * "tool_find: init STATUS". */
#include <pmix_tool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tool_find PID NSPACE\n");
        return 2;
    }
    pmix_proc_t me;
    pmix_info_t info;
    pid_t pid = (pid_t) atoi(argv[1]);
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
    if (PMIX_SUCCESS != rc) {
        printf("tool_find: init %s\n", PMIx_Error_string(rc));
        return 0;
    }
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    char *keys[] = {PMIX_QUERY_NAMESPACES, NULL};
    q.keys = keys;
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    const char *found = "missing";
    for (size_t i = 0; PMIX_SUCCESS == rc && i < nresults; i++) {
        if (PMIX_STRING == results[i].value.type && NULL != results[i].value.data.string &&
            NULL != strstr(results[i].value.data.string, argv[2]))
            found = "found";
    }
    printf("tool_find: connected %s %s\n", argv[2], found);
    fflush(stdout);
    PMIx_tool_finalize();
    return 0;
}
