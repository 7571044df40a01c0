/* mpi_dropin: an Open MPI program for the drop-in libpmix.so.2, in one of three modes
 * (argv[1]):
 *
 *   basic    a ring of MPI_Sendrecv (each rank sends its rank to the next one and checks
 *            what the previous one sent), MPI_Bcast of a string from rank 0, MPI_Allreduce
 *            of the ranks, MPI_Comm_split into even and odd ranks (each half checks its
 *            size and an MPI_Allreduce inside it), MPI_Barrier; then the PMIx libraries
 *            mapped in this process, from /proc/self/maps: "pmix-lib PATH" for each
 *            mapped file whose name starts with "libpmix" or whose path has "/pmix2/"
 *            (OpenPMIx's plugins; once each), the same as
 *            "parent-pmix-lib PATH" for the parent process (the launcher: mpirun,
 *            slurmstepd, pmix-run), then "mpi_dropin rank R of N: ok".
 *   publish  rank 0 publishes the port name "mpi-dropin-port" as "mpi-dropin-svc"; after a
 *            barrier every rank looks it up: "mpi_dropin rank R: publish CODE lookup CODE
 *            PORT" (CODE: the MPI error class, 0 for success; PORT "-" when not found);
 *            rank 0 then unpublishes ("unpublish CODE"). Errors return (MPI_ERRORS_RETURN).
 *   abort    after a barrier rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7); the others wait
 *            in a receive from rank 1 that never comes.
 *
 * An optional argv[2] is the expected size. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAIL(...)                                                                         \
    do {                                                                                  \
        fprintf(stderr, "mpi_dropin rank %d: FAIL: ", rank);                              \
        fprintf(stderr, __VA_ARGS__);                                                     \
        fprintf(stderr, "\n");                                                            \
        MPI_Abort(MPI_COMM_WORLD, 3);                                                     \
    } while (0)

static int rank = -1, size = 0;

/* Prints "LABEL PATH" for every file named libpmix*, or under OpenPMIx's directory (its
 * plugins), that the process of `maps_path` maps, once each. */
static void print_pmix_libs(const char *maps_path, const char *label)
{
    FILE *maps = fopen(maps_path, "r");
    if (maps == NULL) {
        FAIL("cannot open %s", maps_path);
    }
    char line[4096];
    char seen[16][1024];
    int nseen = 0;
    while (fgets(line, sizeof line, maps) != NULL) {
        char *path = strchr(line, '/');
        if (path == NULL) {
            continue;
        }
        path[strcspn(path, "\n")] = '\0';
        const char *base = strrchr(path, '/') + 1;
        if (strncmp(base, "libpmix", 7) != 0 && strstr(path, "/pmix2/") == NULL) {
            continue;
        }
        int dup = 0;
        for (int i = 0; i < nseen; i++) {
            dup |= strcmp(seen[i], path) == 0;
        }
        if (!dup && nseen < 16) {
            snprintf(seen[nseen++], sizeof seen[0], "%s", path);
            printf("mpi_dropin rank %d: %s %s\n", rank, label, path);
        }
    }
    fclose(maps);
}

static void basic(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    if (MPI_Sendrecv(&rank, 1, MPI_INT, next, 11, &got, 1, MPI_INT, prev, 11, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        FAIL("MPI_Sendrecv");
    }
    if (got != prev) {
        FAIL("ring: got %d from rank %d", got, prev);
    }

    char text[32] = "";
    if (rank == 0) {
        snprintf(text, sizeof text, "hello from 0 of %d", size);
    }
    if (MPI_Bcast(text, sizeof text, MPI_CHAR, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        FAIL("MPI_Bcast");
    }
    char want[32];
    snprintf(want, sizeof want, "hello from 0 of %d", size);
    if (strcmp(text, want) != 0) {
        FAIL("MPI_Bcast gave \"%s\"", text);
    }

    long mine = rank, sum = -1;
    if (MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) {
        FAIL("MPI_Allreduce");
    }
    if (sum != (long)size * (size - 1) / 2) {
        FAIL("MPI_Allreduce sum %ld", sum);
    }

    MPI_Comm half;
    if (MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half) != MPI_SUCCESS) {
        FAIL("MPI_Comm_split");
    }
    int hrank = -1, hsize = 0;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    int hwant = rank % 2 == 0 ? (size + 1) / 2 : size / 2;
    if (hsize != hwant || hrank != rank / 2) {
        FAIL("MPI_Comm_split: rank %d of %d, expected %d of %d", hrank, hsize, rank / 2, hwant);
    }
    long hsum = -1, hwsum = 0;
    for (int r = rank % 2; r < size; r += 2) {
        hwsum += r;
    }
    if (MPI_Allreduce(&mine, &hsum, 1, MPI_LONG, MPI_SUM, half) != MPI_SUCCESS) {
        FAIL("MPI_Allreduce in the split communicator");
    }
    if (hsum != hwsum) {
        FAIL("split sum %ld, expected %ld", hsum, hwsum);
    }
    MPI_Comm_free(&half);

    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) {
        FAIL("MPI_Barrier");
    }
    print_pmix_libs("/proc/self/maps", "pmix-lib");
    char parent[64];
    snprintf(parent, sizeof parent, "/proc/%d/maps", (int)getppid());
    print_pmix_libs(parent, "parent-pmix-lib");
    printf("mpi_dropin rank %d of %d: ok\n", rank, size);
}

static int err_class(int code)
{
    int class = code;
    if (code != MPI_SUCCESS) {
        MPI_Error_class(code, &class);
    }
    return class;
}

static void publish(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME] = "mpi-dropin-port";
    int pub = 0;
    if (rank == 0) {
        pub = err_class(MPI_Publish_name("mpi-dropin-svc", MPI_INFO_NULL, port));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    char found[MPI_MAX_PORT_NAME] = "-";
    int look = err_class(MPI_Lookup_name("mpi-dropin-svc", MPI_INFO_NULL, found));
    if (look != MPI_SUCCESS) {
        snprintf(found, sizeof found, "-");
    }
    printf("mpi_dropin rank %d: publish %d lookup %d %s\n", rank, pub, look, found);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int unpub = err_class(MPI_Unpublish_name("mpi-dropin-svc", MPI_INFO_NULL, port));
        printf("mpi_dropin rank %d: unpublish %d\n", rank, unpub);
    }
}

static void abort_job(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 || size == 1) {
        printf("mpi_dropin rank %d: aborting\n", rank);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    int never = 0;
    MPI_Recv(&never, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("mpi_dropin rank %d: received after the abort\n", rank);
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "mpi_dropin: FAIL: MPI_Init\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "basic";
    if (argc > 2 && size != atoi(argv[2])) {
        FAIL("size %d, expected %s", size, argv[2]);
    }
    if (strcmp(mode, "basic") == 0) {
        basic();
    } else if (strcmp(mode, "publish") == 0) {
        publish();
    } else if (strcmp(mode, "abort") == 0) {
        abort_job();
    } else {
        FAIL("unknown mode %s", mode);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
