/* The MPI timing client of benches/spawn.rs (usage: spawn_timing ROUNDS): a job of
 * one rank times, ROUNDS times, MPI_Comm_spawn of 2 copies of itself ("child") and
 * the MPI_Comm_disconnect of the intercommunicator (the children: MPI_Init, get the
 * parent, disconnect, MPI_Finalize). Prints "timing spawn MEDIAN_US P90_US"; any
 * failure: "timing FAIL ..." and exit 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (rounds < 1)
        rounds = 1;
    double *t = calloc((size_t)rounds, sizeof(double));
    char *args[] = {"child", NULL};
    for (int i = 0; i < rounds; i++) {
        MPI_Comm inter;
        int errs[2];
        double t0 = MPI_Wtime();
        if (MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, errs) !=
            MPI_SUCCESS) {
            printf("timing FAIL MPI_Comm_spawn\n");
            return 1;
        }
        MPI_Comm_disconnect(&inter);
        t[i] = (MPI_Wtime() - t0) * 1e6;
    }
    qsort(t, (size_t)rounds, sizeof(double), cmp);
    printf("timing spawn %.1f %.1f\n", t[rounds / 2], t[(rounds * 9) / 10]);
    free(t);
    MPI_Finalize();
    return 0;
}
