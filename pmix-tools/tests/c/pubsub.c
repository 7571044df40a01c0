/* pubsub: rank 0 publishes two keys; after a fence every rank looks them up (with the
 * publisher's identity); rank 0 unpublishes one; after another fence a lookup of it
 * is PMIX_ERR_NOT_FOUND while the other is still there; rank 0 then unpublishes the other, and it is gone too.
 * Prints "pubsub rank R: ok". */
#include "common.h"

static void lookup_expect(const char *key, int want, pmix_status_t want_rc)
{
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
    pmix_status_t rc = PMIx_Lookup(&pd, 1, NULL, 0);
    if (rc != want_rc)
        fail("PMIx_Lookup(%s): %s (%d), expected %s", key, PMIx_Error_string(rc), rc,
             PMIx_Error_string(want_rc));
    if (PMIX_SUCCESS == rc) {
        if (pd.value.type != PMIX_INT || pd.value.data.integer != want)
            fail("lookup of %s: type %d value %d, expected INT %d", key, pd.value.type,
                 pd.value.data.integer, want);
        if (0 != strncmp(pd.proc.nspace, me.nspace, PMIX_MAX_NSLEN) || pd.proc.rank != 0)
            fail("lookup of %s: publisher %s:%u, expected %s:0", key, pd.proc.nspace,
                 pd.proc.rank, me.nspace);
    }
    PMIX_PDATA_DESTRUCT(&pd);
}

int main(void)
{
    init_or_fail("pubsub");
    if (0 == me.rank) {
        pmix_info_t info[2];
        int a = 42, b = 43;
        PMIX_INFO_LOAD(&info[0], "pubsub.a", &a, PMIX_INT);
        PMIX_INFO_LOAD(&info[1], "pubsub.b", &b, PMIX_INT);
        CHECK_OK(PMIx_Publish(info, 2), "PMIx_Publish");
        PMIX_INFO_DESTRUCT(&info[0]);
        PMIX_INFO_DESTRUCT(&info[1]);
    }
    fence_or_fail("PMIx_Fence (after publish)");
    lookup_expect("pubsub.a", 42, PMIX_SUCCESS);
    lookup_expect("pubsub.b", 43, PMIX_SUCCESS);
    fence_or_fail("PMIx_Fence (after lookup)");
    if (0 == me.rank) {
        char *keys[] = {"pubsub.a", NULL};
        CHECK_OK(PMIx_Unpublish(keys, NULL, 0), "PMIx_Unpublish(pubsub.a)");
    }
    fence_or_fail("PMIx_Fence (after unpublish)");
    lookup_expect("pubsub.a", 0, PMIX_ERR_NOT_FOUND);
    lookup_expect("pubsub.b", 43, PMIX_SUCCESS);
    fence_or_fail("PMIx_Fence (after second lookup)");
    if (0 == me.rank) {
        char *keys[] = {"pubsub.b", NULL};
        CHECK_OK(PMIx_Unpublish(keys, NULL, 0), "PMIx_Unpublish(pubsub.b)");
    }
    fence_or_fail("PMIx_Fence (end)");
    if (0 != me.rank)
        lookup_expect("pubsub.b", 0, PMIX_ERR_NOT_FOUND);
    printf("pubsub rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
