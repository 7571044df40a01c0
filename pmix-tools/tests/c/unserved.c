/* unserved: what no server of ours (nor Open MPI 4.1's mpirun) serves: allocation
 * requests, credentials and fabric registration, blocking and non-blocking. Prints one
 * line per call (its status, what the callback got); the test runs it with libpmix2
 * and with libpmix_ffi under pmix-run and under mpirun and compares the lines. Then
 * "unserved rank R: ok". */
#include "common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int hits;
static pmix_status_t last;

static void hit(pmix_status_t s)
{
    pthread_mutex_lock(&lock);
    last = s;
    hits++;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
}

static void op_cb(pmix_status_t s, void *d)
{
    (void) d;
    hit(s);
}

static void info_cb(pmix_status_t s, pmix_info_t *i, size_t n, void *d, pmix_release_cbfunc_t r,
                    void *rd)
{
    (void) i;
    (void) n;
    (void) d;
    if (NULL != r)
        r(rd);
    hit(s);
}

static void cred_cb(pmix_status_t s, pmix_byte_object_t *c, pmix_info_t *i, size_t n, void *d)
{
    (void) c;
    (void) i;
    (void) n;
    (void) d;
    hit(s);
}

static void valid_cb(pmix_status_t s, pmix_info_t *i, size_t n, void *d)
{
    (void) i;
    (void) n;
    (void) d;
    hit(s);
}

/* Prints the returned status, and what the callback got when it was accepted. */
static void nb(const char *what, pmix_status_t rc)
{
    static int want;
    if (PMIX_SUCCESS != rc) {
        printf("%s returned %s\n", what, PMIx_Error_string(rc));
        return;
    }
    want++;
    wait_count(&lock, &cond, &hits, want, what);
    printf("%s callback %s\n", what, PMIx_Error_string(last));
}

int main(void)
{
    init_or_fail("unserved");
    pmix_info_t *res = NULL;
    size_t nres = 7;
    pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_NEW, NULL, 0, &res, &nres);
    printf("allocation %s results %zu\n", PMIx_Error_string(rc), nres);
    nb("allocation_nb", PMIx_Allocation_request_nb(PMIX_ALLOC_EXTEND, NULL, 0, info_cb, NULL));

    pmix_byte_object_t cred;
    PMIX_BYTE_OBJECT_CONSTRUCT(&cred);
    rc = PMIx_Get_credential(NULL, 0, &cred);
    printf("credential %s size %zu\n", PMIx_Error_string(rc), cred.size);
    nb("credential_nb", PMIx_Get_credential_nb(NULL, 0, cred_cb, NULL));
    pmix_byte_object_t junk = {.bytes = "junk", .size = 4};
    nres = 7;
    rc = PMIx_Validate_credential(&junk, NULL, 0, &res, &nres);
    printf("validate %s results %zu\n", PMIx_Error_string(rc), nres);
    nb("validate_nb", PMIx_Validate_credential_nb(&junk, NULL, 0, valid_cb, NULL));

    pmix_fabric_t fab;
    PMIX_FABRIC_CONSTRUCT(&fab);
    fab.index = 5;
    rc = PMIx_Fabric_register(&fab, NULL, 0);
    printf("fabric register %s index %zu ninfo %zu info %s\n", PMIx_Error_string(rc), fab.index,
           fab.ninfo, NULL == fab.info ? "NULL" : "set");
    rc = PMIx_Fabric_update(&fab);
    printf("fabric update %s\n", PMIx_Error_string(rc));
    rc = PMIx_Fabric_deregister(&fab);
    printf("fabric deregister %s\n", PMIx_Error_string(rc));
    nb("fabric register_nb", PMIx_Fabric_register_nb(&fab, NULL, 0, op_cb, NULL));
    nb("fabric deregister_nb", PMIx_Fabric_deregister_nb(&fab, op_cb, NULL));
    printf("unserved rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
