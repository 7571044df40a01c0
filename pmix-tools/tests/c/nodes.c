/* nodes: keys and fences of a job that spans nodes (usage: nodes collect|direct|kill).
 * Every rank reads PMIX_LOCAL_PEERS (the ranks on its node), puts "l" (LOCAL,
 * 100 + rank), "r" (REMOTE, 200 + rank) and "g" (GLOBAL, 300 + rank), commits, and
 * fences over the whole namespace: with PMIX_COLLECT_DATA ("collect"), without it
 * ("direct": every get of another node's rank then goes by direct modex). Then for
 * every peer: "g" has its value; a peer on the same node shows "l" and not "r"
 * (PMIX_ERR_NOT_FOUND), a peer on another node "r" and not "l". A last fence, then
 * "nodes rank R: ok (L on this node)".
 * "kill": after the first fence the last rank kills itself (SIGKILL); the others
 * fence again, collecting data (Slurm's ring, which needs every node), which cannot
 * succeed: the host ends the step, or the fence fails. A survivor whose fence returns
 * prints "nodes rank R: fence after the kill returned RC" and exits 2. */
#include "common.h"

#include <signal.h>
#include <unistd.h>

static void put_or_fail(pmix_scope_t scope, const char *key, uint32_t value)
{
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_UINT32;
    v.data.uint32 = value;
    CHECK_OK(PMIx_Put(scope, key, &v), key);
}

static void expect(uint32_t rank, const char *key, int want)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &val);
    if (want < 0) {
        if (PMIX_ERR_NOT_FOUND != rc)
            fail("PMIx_Get(%s) of rank %u: %s (%d), expected NOT-FOUND", key, rank,
                 PMIx_Error_string(rc), rc);
        return;
    }
    if (PMIX_SUCCESS != rc)
        fail("PMIx_Get(%s) of rank %u: %s (%d)", key, rank, PMIx_Error_string(rc), rc);
    if (val->type != PMIX_UINT32 || val->data.uint32 != (uint32_t)want)
        fail("%s of rank %u: type %d value %u, expected %d", key, rank, val->type,
             val->data.uint32, want);
    PMIX_VALUE_RELEASE(val);
}

int main(int argc, char **argv)
{
    uint32_t n = init_or_fail("nodes");
    const char *mode = argc > 1 ? argv[1] : "collect";
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *peers = NULL;
    CHECK_OK(PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &peers), "PMIx_Get(PMIX_LOCAL_PEERS)");
    if (peers->type != PMIX_STRING)
        fail("PMIX_LOCAL_PEERS has type %d", peers->type);
    char *local = calloc(n, 1);
    uint32_t nlocal = 0;
    for (char *s = peers->data.string; *s;) {
        char *end;
        unsigned long r = strtoul(s, &end, 10);
        if (end == s || r >= n)
            fail("PMIX_LOCAL_PEERS %s", peers->data.string);
        local[r] = 1;
        nlocal++;
        s = *end == ',' ? end + 1 : end;
    }
    if (!local[me.rank])
        fail("PMIX_LOCAL_PEERS %s does not hold this rank", peers->data.string);
    PMIX_VALUE_RELEASE(peers);

    put_or_fail(PMIX_LOCAL, "l", 100 + me.rank);
    put_or_fail(PMIX_REMOTE, "r", 200 + me.rank);
    put_or_fail(PMIX_GLOBAL, "g", 300 + me.rank);
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    if (0 == strcmp(mode, "collect"))
        fence_collect_or_fail();
    else
        fence_or_fail("PMIx_Fence");

    if (0 == strcmp(mode, "kill")) {
        if (me.rank == n - 1) {
            printf("nodes rank %u: killing itself\n", me.rank);
            raise(SIGKILL);
        }
        pmix_info_t info;
        bool yes = true;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        pmix_status_t rc = PMIx_Fence(NULL, 0, &info, 1);
        printf("nodes rank %u: fence after the kill returned %d\n", me.rank, rc);
        return 2;
    }
    for (uint32_t p = 0; p < n; p++) {
        if (p == me.rank)
            continue;
        expect(p, "g", 300 + p);
        expect(p, "l", local[p] ? (int)(100 + p) : -1);
        expect(p, "r", local[p] ? -1 : (int)(200 + p));
    }
    fence_or_fail("PMIx_Fence (last)");
    printf("nodes rank %u: ok (%u on this node)\n", me.rank, nlocal);
    free(local);
    finalize_or_fail();
    return 0;
}
