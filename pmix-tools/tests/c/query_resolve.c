/* query_resolve: PMIx_Resolve_peers, PMIx_Resolve_nodes and PMIx_Query_info / _nb, as
 * OpenPMIx's examples use them. Every rank prints one line per call,
 * "query_resolve rank R: CALL STATUS [what it found]", with nothing that differs
 * between servers or runs (host names are reduced to "has-me"/"no-me", namespace
 * lists to whether they hold the caller's); the test compares the lines of the
 * program linked with libpmix2 and with libpmix_ffi under the same server. */
#include "common.h"


static void say(const char *call, pmix_status_t rc, const char *what)
{
    printf("query_resolve rank %u: %s %s%s%s\n", me.rank, call, PMIx_Error_string(rc),
           what[0] ? " " : "", what);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done = 0;
static char nb_line[256];

static void describe(pmix_status_t rc, pmix_info_t *info, size_t ninfo, char *out, size_t len)
{
    out[0] = 0;
    for (size_t i = 0; PMIX_SUCCESS == rc && i < ninfo; i++) {
        size_t used = strlen(out);
        if (PMIX_UINT32 == info[i].value.type)
            snprintf(out + used, len - used, "%s%s=%u", used ? " " : "", info[i].key,
                     info[i].value.data.uint32);
        else if (PMIX_STRING == info[i].value.type)
            snprintf(out + used, len - used, "%s%s=%s", used ? " " : "", info[i].key,
                     NULL != strstr(info[i].value.data.string, me.nspace) ? "has-mine"
                                                                          : "no-mine");
        else
            snprintf(out + used, len - used, "%s%s:type%d", used ? " " : "", info[i].key,
                     info[i].value.type);
    }
}

static void on_query(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void)cbdata;
    pthread_mutex_lock(&lock);
    snprintf(nb_line, sizeof(nb_line), "%s ", PMIx_Error_string(status));
    describe(status, info, ninfo, nb_line + strlen(nb_line), sizeof(nb_line) - strlen(nb_line));
    done = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (NULL != release_fn)
        release_fn(release_cbdata);
}

int main(void)
{
    uint32_t n = init_or_fail("query_resolve");
    char line[512];

    /* The peers on this node: every rank of the job here (one node). */
    pmix_proc_t *procs = NULL;
    size_t nprocs = 0;
    pmix_status_t rc = PMIx_Resolve_peers(NULL, me.nspace, &procs, &nprocs);
    line[0] = 0;
    if (PMIX_SUCCESS == rc) {
        int all = (nprocs == n);
        for (size_t i = 0; i < nprocs; i++)
            all = all && 0 == strcmp(procs[i].nspace, me.nspace) && procs[i].rank < n;
        snprintf(line, sizeof(line), "%zu %s", nprocs, all ? "all-ranks" : "not-all-ranks");
        PMIX_PROC_FREE(procs, nprocs);
    }
    say("resolve_peers", rc, line);

    procs = NULL;
    nprocs = 0;
    rc = PMIx_Resolve_peers("no-such-node.invalid", me.nspace, &procs, &nprocs);
    say("resolve_peers_unknown", rc, "");
    if (NULL != procs)
        PMIX_PROC_FREE(procs, nprocs);

    char *nodes = NULL;
    rc = PMIx_Resolve_nodes(me.nspace, &nodes);
    line[0] = 0;
    if (PMIX_SUCCESS == rc) {
        char host[256];
        gethostname(host, sizeof(host));
        host[sizeof(host) - 1] = 0;
        char *dot = strchr(host, '.');
        if (NULL != dot)
            *dot = 0;
        snprintf(line, sizeof(line), "%s", NULL != nodes && NULL != strstr(nodes, host) ? "has-me" : "no-me");
        free(nodes);
    }
    say("resolve_nodes", rc, line);

    /* The job size, qualified by the namespace. */
    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_JOB_SIZE);
    PMIX_QUERY_QUALIFIERS_CREATE(&q[0], 1);
    PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, me.nspace, PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(q, 1, &results, &nresults);
    describe(rc, results, nresults, line, sizeof(line));
    say("query_job_size", rc, line);
    if (NULL != results)
        PMIX_INFO_FREE(results, nresults);

    /* The same, non-blocking. */
    CHECK_OK(PMIx_Query_info_nb(q, 1, on_query, NULL), "PMIx_Query_info_nb");
    wait_count(&lock, &cond, &done, 1, "the query callback");
    printf("query_resolve rank %u: query_job_size_nb %s\n", me.rank, nb_line);
    PMIX_QUERY_FREE(q, 1);

    /* The active namespaces (a server-side key). */
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    results = NULL;
    nresults = 0;
    rc = PMIx_Query_info(q, 1, &results, &nresults);
    describe(rc, results, nresults, line, sizeof(line));
    say("query_namespaces", rc, line);
    if (NULL != results)
        PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_FREE(q, 1);

    finalize_or_fail();
    return 0;
}
