/* jobinfo: the job-level and per-rank keys a launched client reads (usage: jobinfo N
 * [UNIV|any]). Checks PMIX_JOB_SIZE == N, PMIX_UNIV_SIZE == UNIV (default N; mpirun
 * --oversubscribe says the node's slot count instead; "any" prints
 * "jobinfo rank R: universe U" instead of checking it), PMIX_LOCAL_SIZE == N and
 * PMIX_LOCAL_PEERS == "0,1,...,N-1" (one node), and per rank PMIX_LOCAL_RANK and
 * PMIX_NODE_RANK == rank (the only job on the node), PMIX_HOSTNAME equal to
 * $PMIX_HOSTNAME when set, else the short gethostname(); the same keys of a peer
 * rank too. Prints "jobinfo rank R of N: ok" on success. */
#include "common.h"

static pmix_value_t *get_or_fail(const pmix_proc_t *p, const char *key, pmix_data_type_t type)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &val);
    if (PMIX_SUCCESS != rc)
        fail("PMIx_Get(%s, rank %d): %s (%d)", key, (int)p->rank, PMIx_Error_string(rc), rc);
    if (val->type != type)
        fail("%s has type %d, expected %d", key, val->type, type);
    return val;
}

static void check_rank_keys(uint32_t rank, const char *host)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *v = get_or_fail(&p, PMIX_LOCAL_RANK, PMIX_UINT16);
    if (v->data.uint16 != rank)
        fail("PMIX_LOCAL_RANK of rank %u is %u", rank, v->data.uint16);
    PMIX_VALUE_RELEASE(v);
    v = get_or_fail(&p, PMIX_NODE_RANK, PMIX_UINT16);
    if (v->data.uint16 != rank)
        fail("PMIX_NODE_RANK of rank %u is %u", rank, v->data.uint16);
    PMIX_VALUE_RELEASE(v);
    v = get_or_fail(&p, PMIX_HOSTNAME, PMIX_STRING);
    if (NULL == v->data.string || 0 != strcmp(v->data.string, host))
        fail("PMIX_HOSTNAME of rank %u is \"%s\", expected \"%s\"", rank,
             v->data.string ? v->data.string : "(null)", host);
    PMIX_VALUE_RELEASE(v);
}

int main(int argc, char **argv)
{
    uint32_t n = init_or_fail("jobinfo");
    if (argc != 2 && argc != 3)
        fail("usage: jobinfo N [UNIV|any]");
    uint32_t want = (uint32_t)atoi(argv[1]);
    bool any_univ = argc == 3 && 0 == strcmp(argv[2], "any");
    uint32_t want_univ = argc == 3 && !any_univ ? (uint32_t)atoi(argv[2]) : want;
    if (n != want)
        fail("PMIX_JOB_SIZE is %u, expected %u", n, want);

    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = get_or_fail(&wild, PMIX_UNIV_SIZE, PMIX_UINT32);
    if (any_univ)
        printf("jobinfo rank %u: universe %u\n", me.rank, v->data.uint32);
    else if (v->data.uint32 != want_univ)
        fail("PMIX_UNIV_SIZE is %u, expected %u", v->data.uint32, want_univ);
    PMIX_VALUE_RELEASE(v);
    v = get_or_fail(&wild, PMIX_LOCAL_SIZE, PMIX_UINT32);
    if (v->data.uint32 != n)
        fail("PMIX_LOCAL_SIZE is %u, expected %u", v->data.uint32, n);
    PMIX_VALUE_RELEASE(v);

    char peers[4096] = "";
    for (uint32_t r = 0; r < n; r++) {
        size_t len = strlen(peers);
        snprintf(peers + len, sizeof peers - len, "%s%u", r ? "," : "", r);
    }
    v = get_or_fail(&wild, PMIX_LOCAL_PEERS, PMIX_STRING);
    if (NULL == v->data.string || 0 != strcmp(v->data.string, peers))
        fail("PMIX_LOCAL_PEERS is \"%s\", expected \"%s\"",
             v->data.string ? v->data.string : "(null)", peers);
    PMIX_VALUE_RELEASE(v);

    char host[256];
    const char *env = getenv("PMIX_HOSTNAME");
    if (env) {
        snprintf(host, sizeof host, "%s", env);
    } else {
        if (gethostname(host, sizeof host) != 0)
            fail("gethostname failed");
        host[sizeof host - 1] = 0;
        char *dot = strchr(host, '.');
        if (dot)
            *dot = 0;
    }
    check_rank_keys(me.rank, host);
    check_rank_keys((me.rank + 1) % n, host);

    fence_or_fail("PMIx_Fence");
    printf("jobinfo rank %u of %u: ok\n", me.rank, n);
    finalize_or_fail();
    return 0;
}
