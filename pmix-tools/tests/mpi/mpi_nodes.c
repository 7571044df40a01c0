/* mpi_nodes: an Open MPI job across nodes that are nodes, every transport on (usage:
 * mpi_nodes [abort]). Each rank checks, and prints "mpi_nodes rank R: ..." lines:
 *  - MPI_Get_processor_name is this node's host name (gethostname), and
 *    MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives one communicator per node: its
 *    members are exactly the ranks whose processor name is this one's (an allgather
 *    of the names);
 *  - shared memory inside the node: an MPI_Win_allocate_shared window on that
 *    communicator, each rank writes its rank into its slot, a barrier, and every rank
 *    reads every slot of its node through MPI_Win_shared_query (load/store, no
 *    message);
 *  - point to point across nodes: a ring of sends of 64 KiB (rank r to r+1), checked;
 *  - collectives: MPI_Allreduce of the ranks, MPI_Bcast of 1 MiB from the last rank,
 *    MPI_Alltoall of one int each;
 * then "mpi_nodes rank R: ok node NAME local L of N". With "abort", rank 1 calls
 * MPI_Abort(MPI_COMM_WORLD, 7) after the checks. Any failed check prints
 * "mpi_nodes rank R: FAIL: ..." on stderr and aborts with 1. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

#define FAIL(...)                                                                      \
    do {                                                                               \
        fprintf(stderr, "mpi_nodes rank %d: FAIL: ", rank);                            \
        fprintf(stderr, __VA_ARGS__);                                                  \
        fputc('\n', stderr);                                                           \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    char name[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    MPI_Get_processor_name(name, &len);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (strcmp(name, host) != 0)
        FAIL("MPI_Get_processor_name \"%s\" is not the host name \"%s\"", name, host);

    /* Who shares my node: by name, and by MPI_COMM_TYPE_SHARED. */
    char *names = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, MPI_COMM_WORLD);
    int same = 0;
    for (int r = 0; r < size; r++)
        same += strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int lrank, lsize;
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_size(node, &lsize);
    if (lsize != same)
        FAIL("MPI_COMM_TYPE_SHARED has %d ranks, %d ranks run on %s", lsize, same, name);
    int *members = malloc(sizeof(int) * (size_t)lsize);
    MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, node);
    for (int i = 0; i < lsize; i++)
        if (strcmp(names + (size_t)members[i] * MPI_MAX_PROCESSOR_NAME, name) != 0)
            FAIL("rank %d shares my node communicator but runs on %s", members[i],
                 names + (size_t)members[i] * MPI_MAX_PROCESSOR_NAME);

    /* Shared memory: a window every rank of the node reads with loads. */
    int *mine = NULL;
    MPI_Win win;
    MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win);
    MPI_Win_lock_all(0, win);
    *mine = rank;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    for (int i = 0; i < lsize; i++) {
        MPI_Aint wsize;
        int disp;
        int *slot = NULL;
        MPI_Win_shared_query(win, i, &wsize, &disp, &slot);
        if (slot == NULL || *slot != members[i])
            FAIL("shared slot %d holds %d, expected %d", i, slot ? *slot : -1, members[i]);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);

    /* A ring of 64 KiB messages. */
    enum { RING = 1 << 16 };
    unsigned char *out = malloc(RING), *in = malloc(RING);
    for (int i = 0; i < RING; i++)
        out[i] = (unsigned char)(rank * 31 + i);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Sendrecv(out, RING, MPI_BYTE, next, 1, in, RING, MPI_BYTE, prev, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < RING; i++)
        if (in[i] != (unsigned char)(prev * 31 + i))
            FAIL("ring: byte %d from rank %d is %u", i, prev, in[i]);

    /* Collectives. */
    long sum = 0, want = (long)size * (size - 1) / 2, me = rank;
    MPI_Allreduce(&me, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (sum != want)
        FAIL("allreduce %ld, expected %ld", sum, want);
    enum { BIG = 1 << 20 };
    unsigned char *big = malloc(BIG);
    if (rank == size - 1)
        for (int i = 0; i < BIG; i++)
            big[i] = (unsigned char)(i * 7);
    MPI_Bcast(big, BIG, MPI_BYTE, size - 1, MPI_COMM_WORLD);
    for (int i = 0; i < BIG; i++)
        if (big[i] != (unsigned char)(i * 7))
            FAIL("bcast: byte %d is %u", i, big[i]);
    int *sendv = malloc(sizeof(int) * (size_t)size), *recvv = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++)
        sendv[r] = rank * 1000 + r;
    MPI_Alltoall(sendv, 1, MPI_INT, recvv, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        if (recvv[r] != r * 1000 + rank)
            FAIL("alltoall from %d: %d", r, recvv[r]);

    printf("mpi_nodes rank %d: ok node %s local %d of %d\n", rank, name, lrank, lsize);
    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1)
            MPI_Abort(MPI_COMM_WORLD, 7);
        sleep(30);
    }
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
