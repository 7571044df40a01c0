/* pubsub_nb: the non-blocking publish / lookup / unpublish and PMIx_Store_internal.
 * Rank 0 publishes a key with PMIx_Publish_nb; after a fence every rank looks it up
 * with PMIx_Lookup_nb (value and publisher, in the callback's array); rank 0 withdraws
 * it with PMIx_Unpublish_nb, and after a fence a lookup finds nothing. Each rank also
 * files a value for its right-hand neighbour and one for itself with
 * PMIx_Store_internal, and PMIx_Get answers both here. Prints "pubsub_nb rank R: ok". */
#include "common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done;
static pmix_status_t got_rc;
static int got_value;
static pmix_proc_t got_proc;
static size_t got_n;

static void op_cb(pmix_status_t status, void *cbdata)
{
    (void) cbdata;
    pthread_mutex_lock(&lock);
    got_rc = status;
    done++;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
}

static void lookup_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    (void) cbdata;
    pthread_mutex_lock(&lock);
    got_rc = status;
    got_n = ndata;
    if (PMIX_SUCCESS == status && 1 == ndata && PMIX_INT == data[0].value.type) {
        got_value = data[0].value.data.integer;
        got_proc = data[0].proc;
    }
    done++;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
}

/* Waits for the next callback. */
static void wait_cb(const char *what)
{
    static int want;
    want++;
    wait_count(&lock, &cond, &done, want, what);
}

static void lookup_nb_expect(int want, pmix_status_t want_rc)
{
    char *keys[] = {"pubsub_nb.k", NULL};
    got_value = -1;
    got_n = 99;
    CHECK_OK(PMIx_Lookup_nb(keys, NULL, 0, lookup_cb, NULL), "PMIx_Lookup_nb");
    wait_cb("the lookup callback");
    if (got_rc != want_rc)
        fail("PMIx_Lookup_nb: %s (%d), expected %s", PMIx_Error_string(got_rc), got_rc,
             PMIx_Error_string(want_rc));
    if (PMIX_SUCCESS == want_rc) {
        if (1 != got_n || got_value != want)
            fail("lookup: %zu items, value %d, expected one of %d", got_n, got_value, want);
        if (0 != strncmp(got_proc.nspace, me.nspace, PMIX_MAX_NSLEN) || 0 != got_proc.rank)
            fail("lookup: publisher %s:%u, expected %s:0", got_proc.nspace, got_proc.rank,
                 me.nspace);
    }
}

static void get_expect(const pmix_proc_t *p, const char *key, uint32_t want)
{
    pmix_value_t *v = NULL;
    CHECK_OK(PMIx_Get(p, key, NULL, 0, &v), key);
    if (PMIX_UINT32 != v->type || want != v->data.uint32)
        fail("PMIx_Get(%s:%u, %s): type %d value %u, expected UINT32 %u", p->nspace, p->rank,
             key, v->type, v->data.uint32, want);
    PMIX_VALUE_RELEASE(v);
}

int main(void)
{
    uint32_t n = init_or_fail("pubsub_nb");
    if (0 == me.rank) {
        pmix_info_t info;
        int k = 7;
        PMIX_INFO_CONSTRUCT(&info);
        PMIX_INFO_LOAD(&info, "pubsub_nb.k", &k, PMIX_INT);
        CHECK_OK(PMIx_Publish_nb(&info, 1, op_cb, NULL), "PMIx_Publish_nb");
        wait_cb("the publish callback");
        CHECK_OK(got_rc, "PMIx_Publish_nb's callback");
        PMIX_INFO_DESTRUCT(&info);
    }
    fence_or_fail("PMIx_Fence (after publish)");
    lookup_nb_expect(7, PMIX_SUCCESS);
    fence_or_fail("PMIx_Fence (after lookup)");
    if (0 == me.rank) {
        char *keys[] = {"pubsub_nb.k", NULL};
        CHECK_OK(PMIx_Unpublish_nb(keys, NULL, 0, op_cb, NULL), "PMIx_Unpublish_nb");
        wait_cb("the unpublish callback");
        CHECK_OK(got_rc, "PMIx_Unpublish_nb's callback");
    }
    fence_or_fail("PMIx_Fence (after unpublish)");
    lookup_nb_expect(0, PMIX_ERR_NOT_FOUND);

    pmix_proc_t right;
    PMIX_LOAD_PROCID(&right, me.nspace, (me.rank + 1) % n);
    pmix_value_t val;
    PMIX_VALUE_CONSTRUCT(&val);
    uint32_t mine = 100 + me.rank, theirs = 200 + me.rank;
    PMIX_VALUE_LOAD(&val, &theirs, PMIX_UINT32);
    CHECK_OK(PMIx_Store_internal(&right, "pubsub_nb.peer", &val), "PMIx_Store_internal(peer)");
    PMIX_VALUE_DESTRUCT(&val);
    PMIX_VALUE_LOAD(&val, &mine, PMIX_UINT32);
    CHECK_OK(PMIx_Store_internal(&me, "pubsub_nb.self", &val), "PMIx_Store_internal(self)");
    PMIX_VALUE_DESTRUCT(&val);
    get_expect(&right, "pubsub_nb.peer", theirs);
    get_expect(&me, "pubsub_nb.self", mine);

    fence_or_fail("PMIx_Fence (end)");
    printf("pubsub_nb rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
