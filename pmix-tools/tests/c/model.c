/* model: PMIx_Init with a programming model declared (PMIX_PROGRAMMING_MODEL,
 * PMIX_MODEL_LIBRARY_NAME, as OpenPMIx's test/python/client.py does), then a default
 * handler and a handler for PMIX_MODEL_DECLARED registered after init: the code
 * handler gets the declaration (its model and library name), once; the default
 * handler does not (the event is marked not for default handlers); a second handler
 * for the code, registered after the first got it, gets nothing (a late registrant
 * takes a kept event out). Prints "model rank R: declared MODEL LIBRARY" and
 * "model rank R: default D second S" (the counts after a fence). */
#include "common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int declared = 0, defaults = 0, seconds = 0, registered = 0;
static char model[64], library[64];

static void on_default(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results,
        (void)nresults;
    pthread_mutex_lock(&lock);
    defaults++;
    pthread_mutex_unlock(&lock);
    if (NULL != cbfunc)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void on_model(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)source, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    if (PMIX_MODEL_DECLARED == status) {
        for (size_t i = 0; i < ninfo; i++) {
            if (PMIX_STRING != info[i].value.type)
                continue;
            if (PMIX_CHECK_KEY(&info[i], PMIX_PROGRAMMING_MODEL))
                snprintf(model, sizeof(model), "%s", info[i].value.data.string);
            else if (PMIX_CHECK_KEY(&info[i], PMIX_MODEL_LIBRARY_NAME))
                snprintf(library, sizeof(library), "%s", info[i].value.data.string);
        }
        declared++;
    }
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (NULL != cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void on_second(size_t id, pmix_status_t status, const pmix_proc_t *source,
                      pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results,
        (void)nresults;
    pthread_mutex_lock(&lock);
    seconds++;
    pthread_mutex_unlock(&lock);
    if (NULL != cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void on_registered(pmix_status_t status, size_t ref, void *cbdata)
{
    (void)ref, (void)cbdata;
    if (PMIX_SUCCESS != status)
        fail("a registration failed: %s", PMIx_Error_string(status));
    pthread_mutex_lock(&lock);
    registered++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

int main(void)
{
    prog_name = "model";
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_PROGRAMMING_MODEL, "TEST", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_MODEL_LIBRARY_NAME, "PMIX", PMIX_STRING);
    CHECK_OK(PMIx_Init(&me, info, 2), "PMIx_Init");
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);

    PMIx_Register_event_handler(NULL, 0, NULL, 0, on_default, on_registered, NULL);
    wait_count(&lock, &cond, &registered, 1, "the default registration");
    pmix_status_t code = PMIX_MODEL_DECLARED;
    PMIx_Register_event_handler(&code, 1, NULL, 0, on_model, on_registered, NULL);
    wait_count(&lock, &cond, &registered, 2, "the model registration");
    wait_count(&lock, &cond, &declared, 1, "PMIX_MODEL_DECLARED");
    printf("model rank %u: declared %s %s\n", me.rank, model, library);

    PMIx_Register_event_handler(&code, 1, NULL, 0, on_second, on_registered, NULL);
    wait_count(&lock, &cond, &registered, 3, "the second registration");
    fence_or_fail("PMIx_Fence");
    sleep_ms(200);
    pthread_mutex_lock(&lock);
    printf("model rank %u: default %d second %d declared %d\n", me.rank, defaults, seconds,
           declared);
    pthread_mutex_unlock(&lock);
    finalize_or_fail();
    return 0;
}
