/* The 2011 thread's example (seed 003, "MPI_Comm_validate_global ... Do work ...
 * MPI_Comm_validate_global"), in its three variants, on pmix_ft.h. The group is
 * the job's namespace; the "work" is that the ranks named on the command line die
 * (SIGKILL). Every survivor then prints the ranks that failed during the work,
 * space-separated, on one line.
 *
 *   pmix-run -n 8 --keep-going ft_validate [VARIANT] [RANK,RANK...]
 *
 * VARIANT 1 (default): the count validate_global returns, then get_state_global
 *   with incount 0 and NULL for the size, then again for the ranks.
 * VARIANT 2: the new-failures flag, then get_num_state_global for the size.
 * VARIANT 3: get_num_state_global before and after, and the count-type
 *   validate_global_count the thread ends on.
 * RANKS default to 3,5, so the survivors each print "3 5".
 *
 * Build: cc ft_validate.c -I pmix-ffi/include -L target/release -lpmix_ffi */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>
#include <pmix_ft.h>

#define RECOGNIZED_NEW (PMIXRS_FT_STATE_NULL | PMIXRS_FT_MOD_NEW)

static void check(pmix_status_t rc, const char *what)
{
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "ft_validate: %s: %s\n", what, PMIx_Error_string(rc));
        exit(1);
    }
}

/* The ranks named in `list` ("3,5") die. */
static void do_work(const pmix_proc_t *me, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if ((pmix_rank_t) strtoul(t, NULL, 10) == me->rank)
            raise(SIGKILL);
    free(copy);
}

static void print_ranks(const pmixrs_ft_rank_info_t *infos, int n)
{
    for (int i = 0; i < n; i++)
        printf(i ? " %u" : "%u", infos[i].rank);
    printf("\n");
}

int main(int argc, char **argv)
{
    int variant = argc > 1 ? atoi(argv[1]) : 1;
    const char *victims = argc > 2 ? argv[2] : "3,5";
    pmix_proc_t me;
    check(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    const char *comm = me.nspace;
    int incount, outcount;
    pmixrs_ft_rank_info_t *rank_infos = NULL;

    if (variant == 1) {
        int num_failed_start, num_failed_end;
        check(pmixrs_ft_validate_global(comm, &num_failed_start, NULL), "validate_global");
        do_work(&me, victims);
        check(pmixrs_ft_validate_global(comm, &num_failed_end, NULL), "validate_global");
        if (num_failed_start < num_failed_end) { /* something failed */
            incount = 0;
            check(pmixrs_ft_get_state_global(comm, RECOGNIZED_NEW, incount, &outcount, NULL),
                  "get_state_global");
            rank_infos = malloc(sizeof(*rank_infos) * (size_t) outcount);
            incount = outcount;
            check(pmixrs_ft_get_state_global(comm, RECOGNIZED_NEW, incount, &outcount,
                                             rank_infos),
                  "get_state_global");
            print_ranks(rank_infos, outcount);
        }
    } else if (variant == 2) {
        int new_failures, num_failed_end;
        check(pmixrs_ft_validate_global(comm, NULL, &new_failures), "validate_global");
        do_work(&me, victims);
        check(pmixrs_ft_validate_global(comm, NULL, &new_failures), "validate_global");
        if (new_failures) { /* something failed */
            check(pmixrs_ft_get_num_state_global(comm, RECOGNIZED_NEW, &num_failed_end),
                  "get_num_state_global");
            incount = num_failed_end;
            rank_infos = malloc(sizeof(*rank_infos) * (size_t) incount);
            check(pmixrs_ft_get_state_global(comm, RECOGNIZED_NEW, incount, &outcount,
                                             rank_infos),
                  "get_state_global");
            print_ranks(rank_infos, outcount);
        }
    } else {
        int num_failed_start, num_failed_end, count;
        check(pmixrs_ft_validate_global(comm, NULL, NULL), "validate_global");
        check(pmixrs_ft_get_num_state_global(comm, RECOGNIZED_NEW, &num_failed_start),
              "get_num_state_global");
        do_work(&me, victims);
        check(pmixrs_ft_validate_global_count(comm, RECOGNIZED_NEW, &count),
              "validate_global_count");
        check(pmixrs_ft_get_num_state_global(comm, RECOGNIZED_NEW, &num_failed_end),
              "get_num_state_global");
        if (count != num_failed_end) {
            fprintf(stderr, "ft_validate: validate_global_count %d, get_num_state %d\n",
                    count, num_failed_end);
            return 1;
        }
        if (num_failed_start < num_failed_end) { /* something failed */
            incount = num_failed_end;
            rank_infos = malloc(sizeof(*rank_infos) * (size_t) incount);
            check(pmixrs_ft_get_state_global(comm, RECOGNIZED_NEW, incount, &outcount,
                                             rank_infos),
                  "get_state_global");
            print_ranks(rank_infos, outcount);
        }
    }
    free(rank_infos);
    check(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
