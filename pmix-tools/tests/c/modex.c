/* modex: every rank puts one key in each scope (LOCAL, REMOTE, GLOBAL), commits,
 * fences with PMIX_COLLECT_DATA, then gets every peer's keys. On one node a peer's
 * LOCAL and GLOBAL keys are visible with the values put; its REMOTE key is for other
 * nodes and must be PMIX_ERR_NOT_FOUND (OpenPMIx's rule); a rank's own keys are all
 * visible to itself. Prints "modex rank R: ok". */
#include "common.h"

static void put_or_fail(pmix_scope_t scope, const char *key, uint32_t value)
{
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_UINT32;
    v.data.uint32 = value;
    CHECK_OK(PMIx_Put(scope, key, &v), key);
}

static void expect_value(uint32_t rank, const char *key, uint32_t want)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &val);
    if (PMIX_SUCCESS != rc)
        fail("PMIx_Get(%s) of rank %u: %s (%d)", key, rank, PMIx_Error_string(rc), rc);
    if (val->type != PMIX_UINT32 || val->data.uint32 != want)
        fail("%s of rank %u: type %d value %u, expected UINT32 %u", key, rank, val->type,
             val->data.uint32, want);
    PMIX_VALUE_RELEASE(val);
}

static void expect_not_found(uint32_t rank, const char *key)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &val);
    if (PMIX_ERR_NOT_FOUND != rc)
        fail("PMIx_Get(%s) of rank %u: %s (%d), expected PMIX_ERR_NOT_FOUND", key, rank,
             PMIx_Error_string(rc), rc);
    if (val)
        PMIX_VALUE_RELEASE(val);
}

int main(void)
{
    uint32_t n = init_or_fail("modex");
    put_or_fail(PMIX_LOCAL, "modex.local", 1000 + me.rank);
    put_or_fail(PMIX_REMOTE, "modex.remote", 2000 + me.rank);
    put_or_fail(PMIX_GLOBAL, "modex.global", 3000 + me.rank);
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");

    fence_collect_or_fail();

    for (uint32_t r = 0; r < n; r++) {
        expect_value(r, "modex.local", 1000 + r);
        expect_value(r, "modex.global", 3000 + r);
        if (r == me.rank)
            expect_value(r, "modex.remote", 2000 + r);
        else
            expect_not_found(r, "modex.remote");
    }
    fence_or_fail("PMIx_Fence (end)");
    printf("modex rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
