/* rel_kill: ranks SIGKILLed at chosen points of a fence loop (reliability.rs).
 *
 * Usage: rel_kill ITERS ft|plain KILLS, KILLS being "-" or "R@I,R@I,...": rank R
 * prints "rel_kill rank R: killed at I" and raises SIGKILL just before its fence I.
 * Every rank fences ITERS times over the whole namespace, with "pmix.grp.ftcoll"
 * (PMIX_GROUP_FT_COLLECTIVE) true when "ft". The first fence that fails ends the
 * loop. A rank that was not killed prints
 * "rel_kill rank R: end after F fences ok, last status S" (S the name of the
 * failing status, or PMIX_SUCCESS), finalizes (its status is printed, whatever it
 * is) and exits 0: ending is what is checked, not how the fences went. */
#include <signal.h>

#include "common.h"

int main(int argc, char **argv)
{
    init_or_fail("rel_kill");
    if (argc != 4 || (0 != strcmp(argv[2], "ft") && 0 != strcmp(argv[2], "plain")))
        fail("usage: rel_kill ITERS ft|plain KILLS");
    long iters = strtol(argv[1], NULL, 10);
    bool ft = 0 == strcmp(argv[2], "ft");
    long kill_at = -1;
    if (0 != strcmp(argv[3], "-")) {
        char *spec = strdup(argv[3]);
        for (char *tok = strtok(spec, ","); tok; tok = strtok(NULL, ",")) {
            unsigned r;
            long i;
            if (2 != sscanf(tok, "%u@%ld", &r, &i))
                fail("bad kill %s", tok);
            if (r == me.rank)
                kill_at = i;
        }
        free(spec);
    }
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, "pmix.grp.ftcoll", &ft, PMIX_BOOL);
    long ok = 0;
    pmix_status_t rc = PMIX_SUCCESS;
    for (long i = 0; i < iters; i++) {
        if (i == kill_at) {
            printf("rel_kill rank %u: killed at %ld\n", me.rank, i);
            fflush(stdout);
            raise(SIGKILL);
        }
        rc = PMIx_Fence(NULL, 0, ft ? &info : NULL, ft ? 1 : 0);
        if (PMIX_SUCCESS != rc)
            break;
        ok++;
    }
    PMIX_INFO_DESTRUCT(&info);
    printf("rel_kill rank %u: end after %ld fences ok, last status %s\n", me.rank, ok,
           PMIx_Error_string(rc));
    fflush(stdout);
    pmix_status_t frc = PMIx_Finalize(NULL, 0);
    printf("rel_kill rank %u: finalize %s\n", me.rank, PMIx_Error_string(frc));
    return 0;
}
