/* group_notsup: what a server without group operations answers. Every rank calls
 * PMIx_Group_construct over the whole job, then PMIx_Group_leave and
 * PMIx_Group_destruct of that group, and prints "group_notsup rank R: construct A
 * leave B destruct C" with the three statuses' names; nothing is checked here: the
 * test compares the lines of the program linked with libpmix2 and with libpmix_ffi
 * under the same server (Open MPI 4.1's mpirun answers PMIX_ERR_NOT_SUPPORTED). */
#include "common.h"

int main(void)
{
    uint32_t n = init_or_fail("group_notsup");
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    (void)n;
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t c = PMIx_Group_construct("gns", &all, 1, NULL, 0, &results, &nresults);
    if (NULL != results)
        PMIX_INFO_FREE(results, nresults);
    pmix_status_t l = PMIx_Group_leave("gns", NULL, 0);
    pmix_status_t d = PMIx_Group_destruct("gns", NULL, 0);
    printf("group_notsup rank %u: construct %s leave %s destruct %s\n", me.rank,
           PMIx_Error_string(c), PMIx_Error_string(l), PMIx_Error_string(d));
    finalize_or_fail();
    return 0;
}
