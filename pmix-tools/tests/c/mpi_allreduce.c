/* mpi_allreduce: MPI_Init, MPI_Allreduce of the ranks, MPI_Barrier, MPI_Finalize; checks
 * the size against argv[1] (when given) and the sum against 0+1+...+(size-1). Prints
 * "mpi_allreduce rank R of N: sum S ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank = -1, size = 0;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "mpi_allreduce: FAIL: MPI_Init\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && size != atoi(argv[1])) {
        fprintf(stderr, "mpi_allreduce rank %d: FAIL: size %d, expected %s\n", rank, size, argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    long mine = rank, sum = -1;
    if (MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) {
        fprintf(stderr, "mpi_allreduce rank %d: FAIL: MPI_Allreduce\n", rank);
        return 1;
    }
    long want = (long)size * (size - 1) / 2;
    if (sum != want) {
        fprintf(stderr, "mpi_allreduce rank %d: FAIL: sum %ld, expected %ld\n", rank, sum, want);
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("mpi_allreduce rank %d of %d: sum %ld ok\n", rank, size, sum);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
