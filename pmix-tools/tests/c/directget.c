/* directget: a Get of a peer's key with no fence, held by the server until the peer
 * commits; then a Get with PMIX_TIMEOUT of a key nobody ever puts, which must end in
 * PMIX_ERR_TIMEOUT. After a fence without data (every rank is up), rank r asks for
 * rank r+1's (mod N) key with PMIx_Get_nb, then waits 300 ms before it puts and
 * commits its own, so every Get is asked before the key it wants exists (and is held
 * well within the server's default 2 s for a held Get). Prints "directget rank R:
 * ok". */
#include "common.h"

static volatile int get_done = 0;
static volatile pmix_status_t get_status = PMIX_ERROR;
static volatile uint32_t get_value = 0;

static void get_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    (void)cbdata;
    if (PMIX_SUCCESS == status && kv && kv->type == PMIX_UINT32)
        get_value = kv->data.uint32;
    else if (PMIX_SUCCESS == status)
        status = PMIX_ERR_TYPE_MISMATCH;
    get_status = status;
    __atomic_store_n(&get_done, 1, __ATOMIC_SEQ_CST);
}

int main(void)
{
    uint32_t n = init_or_fail("directget");
    uint32_t peer = (me.rank + 1) % n;
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, peer);

    fence_or_fail("PMIx_Fence (start)");
    CHECK_OK(PMIx_Get_nb(&p, "dget.key", NULL, 0, get_cb, NULL), "PMIx_Get_nb(dget.key)");
    sleep_ms(300);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_UINT32;
    v.data.uint32 = 500 + me.rank;
    CHECK_OK(PMIx_Put(PMIX_GLOBAL, "dget.key", &v), "PMIx_Put(dget.key)");
    CHECK_OK(PMIx_Commit(), "PMIx_Commit");

    double deadline = now_s() + 30.0;
    while (!__atomic_load_n(&get_done, __ATOMIC_SEQ_CST)) {
        if (now_s() > deadline)
            fail("the held Get of rank %u's dget.key never completed (30 s)", peer);
        sleep_ms(10);
    }
    if (PMIX_SUCCESS != get_status)
        fail("held Get of rank %u's dget.key: %s (%d)", peer, PMIx_Error_string(get_status),
             get_status);
    if (get_value != 500 + peer)
        fail("dget.key of rank %u is %u, expected %u", peer, get_value, 500 + peer);

    pmix_info_t info;
    int secs = 1;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &secs, PMIX_INT);
    pmix_value_t *val = NULL;
    double t0 = now_s();
    pmix_status_t rc = PMIx_Get(&p, "dget.never", &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_ERR_TIMEOUT != rc)
        fail("Get of a key never put with PMIX_TIMEOUT=1: %s (%d) after %.1f s, expected "
             "PMIX_ERR_TIMEOUT", PMIx_Error_string(rc), rc, now_s() - t0);

    fence_or_fail("PMIx_Fence (end)");
    printf("directget rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
