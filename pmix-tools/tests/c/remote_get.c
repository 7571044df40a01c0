/* remote_get: every rank puts a GLOBAL key, commits, fences with PMIX_COLLECT_DATA,
 * then gets every other rank's key and checks its value. Run with libpmix2 on ds21
 * and PMIX_MCA_pmix_client_get_verbose, its stderr says whether a get asked the
 * server ("REQUESTING DATA FROM SERVER"). Prints "remote_get rank R: ok". */
#include "common.h"

int main(void)
{
    prog_name = "remote_get";
    CHECK_OK(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    CHECK_OK(PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val), "PMIx_Get(PMIX_JOB_SIZE)");
    uint32_t n = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_UINT32;
    v.data.uint32 = 5000 + me.rank;
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "remote.get.key", &v), "PMIx_Put");
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    CHECK_OK(PMIx_Fence(NULL, 0, &info, 1), "PMIx_Fence(collect)");
    for (uint32_t r = 0; r < n; r++) {
        if (r == me.rank)
            continue;
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        val = NULL;
        CHECK_OK(PMIx_Get(&p, "remote.get.key", NULL, 0, &val), "PMIx_Get(remote.get.key)");
        if (val->type != PMIX_UINT32 || val->data.uint32 != 5000 + r)
            fail("rank %u's key: type %d value %u", r, val->type, val->data.uint32);
        PMIX_VALUE_RELEASE(val);
    }
    CHECK_OK(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
    printf("remote_get rank %u: ok\n", me.rank);
    fflush(stdout);
    CHECK_OK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
