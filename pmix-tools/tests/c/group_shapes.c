/* group_shapes: groups of every shape across nodes (usage: group_shapes). Every rank
 * learns each rank's node (PMIX_HOSTNAME of every rank: the node the host named) and
 * numbers the nodes by their first rank. Then, shape by shape, the members of the
 * shape's group construct it (PMIX_GROUP_ASSIGN_CONTEXT_ID), put "shape-S" = 1000 * S
 * + rank (GLOBAL), commit, fence over the group id with PMIX_COLLECT_DATA, get every
 * member's value, and destruct it; everybody then fences over the whole job. Shapes:
 *   1  one rank per node (the first rank of each node);
 *   2  every rank of the first node and the first rank of the second;
 *   3  two overlapping groups at once: "ov-a" (the ranks of the first node and the
 *      first of the second) and "ov-b" (every rank but those of the first node, and
 *      the last rank of the first node), whose shared members construct both with
 *      PMIx_Group_construct_nb before waiting for either: the context ids differ;
 *   4  ranks 0, 2 and 3 (OpenPMIx's group example; with 4 ranks or more).
 * Prints "group_shapes rank R: shape S GROUP ok ctxid C of M" for each group it is in,
 * then "group_shapes rank R: done"; a failed check prints FAIL and exits 1. */
#include "common.h"

static uint32_t n;
static char **node_of; /* each rank's node name */

struct cons {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    pmix_status_t status;
    uint64_t ctxid;
};

static void cons_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    struct cons *c = cbdata;
    pthread_mutex_lock(&c->lock);
    c->status = status;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_CONTEXT_ID))
            PMIX_VALUE_GET_NUMBER(c->status, &info[i].value, c->ctxid, uint64_t);
    c->done = 1;
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
    if (release_fn)
        release_fn(release_cbdata);
}

static int member(const uint32_t *ranks, size_t count, uint32_t r)
{
    for (size_t i = 0; i < count; i++)
        if (ranks[i] == r)
            return 1;
    return 0;
}

static void start(const char *grp, const uint32_t *ranks, size_t count, struct cons *c)
{
    pmix_proc_t *procs;
    PMIX_PROC_CREATE(procs, count);
    for (size_t i = 0; i < count; i++)
        PMIX_LOAD_PROCID(&procs[i], me.nspace, ranks[i]);
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    c->done = 0;
    c->ctxid = 0;
    pmix_status_t rc = PMIx_Group_construct_nb(grp, procs, count, &info, 1, cons_cb, c);
    if (PMIX_SUCCESS != rc)
        fail("PMIx_Group_construct_nb(%s): %s (%d)", grp, PMIx_Error_string(rc), rc);
    PMIX_PROC_FREE(procs, count);
}

static void finish(int shape, const char *grp, const uint32_t *ranks, size_t count,
                   struct cons *c)
{
    wait_count(&c->lock, &c->cond, &c->done, 1, "the group construct's callback");
    if (PMIX_SUCCESS != c->status)
        fail("shape %d: construct %s: %s (%d)", shape, grp, PMIx_Error_string(c->status),
             c->status);
    char key[32];
    snprintf(key, sizeof key, "shape-%d-%s", shape, grp);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_UINT32;
    v.data.uint32 = 1000u * (uint32_t)shape + me.rank;
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, key, &v), "PMIx_Put");
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    pmix_proc_t g;
    PMIX_LOAD_PROCID(&g, grp, PMIX_RANK_WILDCARD);
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(&g, 1, &collect, 1);
    if (PMIX_SUCCESS != rc)
        fail("shape %d: fence over %s: %s (%d)", shape, grp, PMIx_Error_string(rc), rc);
    for (size_t i = 0; i < count; i++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, ranks[i]);
        pmix_value_t *got = NULL;
        rc = PMIx_Get(&p, key, NULL, 0, &got);
        if (PMIX_SUCCESS != rc)
            fail("shape %d: get %s of rank %u: %s (%d)", shape, key, ranks[i],
                 PMIx_Error_string(rc), rc);
        if (got->type != PMIX_UINT32 || got->data.uint32 != 1000u * (uint32_t)shape + ranks[i])
            fail("shape %d: %s of rank %u is %u", shape, key, ranks[i], got->data.uint32);
        PMIX_VALUE_RELEASE(got);
    }
    printf("group_shapes rank %u: shape %d %s ok ctxid %llu of %zu\n", me.rank, shape, grp,
           (unsigned long long)c->ctxid, count);
}

static void destruct(const char *grp)
{
    pmix_status_t rc = PMIx_Group_destruct(grp, NULL, 0);
    if (PMIX_SUCCESS != rc)
        fail("destruct %s: %s (%d)", grp, PMIx_Error_string(rc), rc);
}

static void job_fence(void)
{
    CHECK_OK(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
}

/* One group, constructed, used and destructed by its members. */
static void shape_one(int shape, const char *grp, const uint32_t *ranks, size_t count)
{
    if (member(ranks, count, me.rank)) {
        struct cons c;
        start(grp, ranks, count, &c);
        finish(shape, grp, ranks, count, &c);
        destruct(grp);
    }
    job_fence();
}

int main(void)
{
    n = init_or_fail("group_shapes");
    if (n < 4)
        fail("needs 4 ranks or more, has %u", n);
    node_of = calloc(n, sizeof *node_of);
    for (uint32_t r = 0; r < n; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        pmix_value_t *v = NULL;
        pmix_status_t rc = PMIx_Get(&p, PMIX_HOSTNAME, NULL, 0, &v);
        if (PMIX_SUCCESS != rc || v->type != PMIX_STRING)
            fail("PMIX_HOSTNAME of rank %u: %s (%d)", r, PMIx_Error_string(rc), rc);
        node_of[r] = strdup(v->data.string);
        PMIX_VALUE_RELEASE(v);
    }
    /* The nodes, by first rank; the ranks of the first node, the first of the second. */
    uint32_t firsts[64], nnodes = 0, first_node[64], nfirst = 0;
    for (uint32_t r = 0; r < n; r++) {
        int seen = 0;
        for (uint32_t k = 0; k < nnodes; k++)
            seen |= !strcmp(node_of[firsts[k]], node_of[r]);
        if (!seen && nnodes < 64)
            firsts[nnodes++] = r;
        if (!strcmp(node_of[r], node_of[0]) && nfirst < 64)
            first_node[nfirst++] = r;
    }
    if (nnodes < 2)
        fail("the job runs on %u node: a test of groups across nodes needs two", nnodes);

    shape_one(1, "per-node", firsts, nnodes);

    uint32_t two[65];
    memcpy(two, first_node, nfirst * sizeof *two);
    two[nfirst] = firsts[1];
    shape_one(2, "node-plus-one", two, nfirst + 1);

    /* Two overlapping groups at once. */
    uint32_t b[64];
    size_t nb = 0;
    b[nb++] = first_node[nfirst - 1];
    for (uint32_t r = 0; r < n && nb < 64; r++)
        if (strcmp(node_of[r], node_of[0]))
            b[nb++] = r;
    int in_a = member(two, nfirst + 1, me.rank), in_b = member(b, nb, me.rank);
    struct cons ca, cb;
    if (in_a)
        start("ov-a", two, nfirst + 1, &ca);
    if (in_b)
        start("ov-b", b, nb, &cb);
    if (in_a)
        finish(3, "ov-a", two, nfirst + 1, &ca);
    if (in_b)
        finish(3, "ov-b", b, nb, &cb);
    if (in_a && in_b && ca.ctxid == cb.ctxid)
        fail("ov-a and ov-b got the same context id %llu", (unsigned long long)ca.ctxid);
    if (in_a)
        destruct("ov-a");
    if (in_b)
        destruct("ov-b");
    job_fence();

    uint32_t example[3] = {0, 2, 3};
    shape_one(4, "ourgroup", example, 3);

    printf("group_shapes rank %u: done\n", me.rank);
    CHECK_OK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
