/* A client of the Python server test (test_server.py): init, put its own value,
 * commit, fence (collecting data), get every rank's value and the job size,
 * finalize; one line per step, "RANK: what status value". Built against libpmix2
 * and against our library by pmix-tools/tests/python.rs. */
#include <stdio.h>
#include <string.h>

#include <pmix.h>

int main(void)
{
    pmix_proc_t me, job, peer;
    pmix_value_t val, *got = NULL;
    pmix_info_t info;
    char text[64];
    uint32_t size = 0;
    int rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("?: init %d\n", rc);
        return 1;
    }
    printf("%u: init %d\n", me.rank, rc);
    PMIX_PROC_LOAD(&job, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &got);
    if (PMIX_SUCCESS == rc) {
        size = got->data.uint32;
        PMIX_VALUE_RELEASE(got);
    }
    printf("%u: size %d %u\n", me.rank, rc, size);
    snprintf(text, sizeof(text), "value of %u", me.rank);
    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_STRING;
    val.data.string = text;
    rc = PMIx_Put(PMIX_GLOBAL, "exchange.key", &val);
    printf("%u: put %d\n", me.rank, rc);
    printf("%u: commit %d\n", me.rank, PMIx_Commit());
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    printf("%u: fence %d\n", me.rank, PMIx_Fence(NULL, 0, &info, 1));
    for (uint32_t r = 0; r < size; r++) {
        PMIX_PROC_LOAD(&peer, me.nspace, r);
        got = NULL;
        rc = PMIx_Get(&peer, "exchange.key", NULL, 0, &got);
        printf("%u: get %u %d %s\n", me.rank, r, rc,
               (PMIX_SUCCESS == rc && PMIX_STRING == got->type) ? got->data.string : "-");
        if (NULL != got) {
            PMIX_VALUE_RELEASE(got);
        }
    }
    printf("%u: finalize %d\n", me.rank, PMIx_Finalize(NULL, 0));
    return 0;
}
