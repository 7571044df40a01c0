/* return_object: OpenPMIx's fault example, in our words. Every rank registers a
 * handler for PMIX_ERR_PROC_ABORTED and PMIX_ERR_JOB_TERMINATED with a
 * PMIX_EVENT_RETURN_OBJECT (a pointer to its own lock) and PMIX_NSPACE, and waits for
 * the registration's callback; after a fence rank 0 exits with status 1 without
 * finalizing; each survivor's handler finds its own pointer back in the notification's
 * infos and wakes the survivor, which prints "return_object rank R: ok" and finalizes.
 * Every wait is bounded (a survivor that never hears fails). */
#include "common.h"

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int woken;
} waiter_t;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cond = PTHREAD_COND_INITIALIZER;
static int registered;
static pmix_status_t reg_status = -9999;

static void reg_cb(pmix_status_t status, size_t ref, void *cbdata)
{
    (void) ref;
    (void) cbdata;
    pthread_mutex_lock(&reg_lock);
    reg_status = status;
    registered++;
    pthread_cond_broadcast(&reg_cond);
    pthread_mutex_unlock(&reg_lock);
}

static void notified(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) status;
    (void) source;
    (void) results;
    (void) nresults;
    for (size_t n = 0; n < ninfo; n++) {
        if (PMIX_CHECK_KEY(&info[n], PMIX_EVENT_RETURN_OBJECT) &&
            PMIX_POINTER == info[n].value.type) {
            waiter_t *w = (waiter_t *) info[n].value.data.ptr;
            pthread_mutex_lock(&w->lock);
            w->woken++;
            pthread_cond_broadcast(&w->cond);
            pthread_mutex_unlock(&w->lock);
        }
    }
    if (NULL != cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

int main(void)
{
    init_or_fail("return_object");
    static waiter_t w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    pmix_status_t codes[2] = {PMIX_ERR_PROC_ABORTED, PMIX_ERR_JOB_TERMINATED};
    pmix_info_t info[2];
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_RETURN_OBJECT, &w, PMIX_POINTER);
    PMIX_INFO_LOAD(&info[1], PMIX_NSPACE, me.nspace, PMIX_STRING);
    CHECK_OK(PMIx_Register_event_handler(codes, 2, info, 2, notified, reg_cb, NULL),
             "PMIx_Register_event_handler");
    wait_count(&reg_lock, &reg_cond, &registered, 1, "the registration's callback");
    CHECK_OK(reg_status, "the registration's callback");
    PMIX_INFO_DESTRUCT(&info[1]);
    fence_or_fail("PMIx_Fence");
    if (0 == me.rank) {
        sleep_ms(500);
        exit(1);
    }
    wait_count(&w.lock, &w.cond, &w.woken, 1, "the handler with the return object");
    printf("return_object rank %u: ok\n", me.rank);
    finalize_or_fail();
    return 0;
}
