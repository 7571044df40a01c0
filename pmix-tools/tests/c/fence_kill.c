/* fence_kill: a rank killed (SIGKILL) in the middle of a fence. Every rank fences
 * once over the whole namespace (so all are up). Then rank N-1 prints
 * "fence_kill rank R: pid P" and sleeps until it is killed (the test kills pid P),
 * never contributing to the second fence; ranks 0..N-2 print
 * "fence_kill rank R: in fence 2" and call the second fence over the whole
 * namespace: with argument "ft", with PMIX_GROUP_FT_COLLECTIVE, and it must then
 * complete on the survivors (PMIX_SUCCESS); with "noft", without it, and it must
 * then fail with PMIX_ERR_LOST_CONNECTION (what OpenPMIx 4.2's server answers for a
 * namespace fence missing a rank that died). Whenever the kill comes, before or
 * after a survivor's call reaches the server, nobody hangs. A survivor then prints
 * "fence_kill rank R: fence 2 completed" or "fence_kill rank R: fence 2 failed
 * with PMIX_ERR_LOST_CONNECTION", finalizes and prints "fence_kill rank R: ok". */
#include "common.h"

int main(int argc, char **argv)
{
    uint32_t n = init_or_fail("fence_kill");
    if (argc != 2 || (0 != strcmp(argv[1], "ft") && 0 != strcmp(argv[1], "noft")))
        fail("usage: fence_kill ft|noft");
    bool ft = 0 == strcmp(argv[1], "ft");
    if (n < 2)
        fail("needs at least 2 ranks, got %u", n);
    fence_or_fail("PMIx_Fence 1 (all ranks)");
    if (me.rank == n - 1) {
        printf("fence_kill rank %u: pid %ld\n", me.rank, (long)getpid());
        for (;;)
            sleep(1);
    }
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_GROUP_FT_COLLECTIVE, &ft, PMIX_BOOL);
    printf("fence_kill rank %u: in fence 2\n", me.rank);
    pmix_status_t rc = PMIx_Fence(NULL, 0, ft ? &info : NULL, ft ? 1 : 0);
    if (ft) {
        if (PMIX_SUCCESS != rc)
            fail("FT fence 2 with rank %u killed: %s (%d), expected PMIX_SUCCESS", n - 1,
                 PMIx_Error_string(rc), rc);
        printf("fence_kill rank %u: fence 2 completed\n", me.rank);
    } else {
        if (PMIX_ERR_LOST_CONNECTION != rc)
            fail("fence 2 with rank %u killed: %s (%d), expected PMIX_ERR_LOST_CONNECTION (%d)",
                 n - 1, PMIx_Error_string(rc), rc, PMIX_ERR_LOST_CONNECTION);
        printf("fence_kill rank %u: fence 2 failed with PMIX_ERR_LOST_CONNECTION\n", me.rank);
    }
    PMIX_INFO_DESTRUCT(&info);
    finalize_or_fail();
    printf("fence_kill rank %u: ok\n", me.rank);
    return 0;
}
