/* pmixabort: after a fence, rank 0 calls PMIx_Abort(7, ...) for the whole job; the
 * others sleep (at most 60 s, then exit 3: nobody ended the job). The launcher must
 * end the job and exit 7. Rank 0 prints "pmixabort rank 0: PMIx_Abort returned RC"
 * if the call returns, then sleeps too. */
#include "common.h"

int main(void)
{
    init_or_fail("pmixabort");
    fence_or_fail("PMIx_Fence");
    if (0 == me.rank) {
        pmix_status_t rc = PMIx_Abort(7, "pmixabort: rank 0 gives up", NULL, 0);
        printf("pmixabort rank 0: PMIx_Abort returned %d\n", rc);
    }
    sleep_ms(60000);
    fprintf(stderr, "pmixabort rank %u: FAIL: still running 60 s after the abort\n", me.rank);
    return 3;
}
