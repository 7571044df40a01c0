/* mpi_spawn MODE: dynamic processes in MPI (usage: mpi_spawn spawn|multiple|accept).
 *
 * - spawn: the parents (MPI_COMM_WORLD) MPI_Comm_spawn 2 copies of this program
 *   ("child"); over the intercommunicator every child sends its rank to parent 0
 *   and gets back the parents' size; then an MPI_Allreduce over the merged
 *   communicator sums every process's world rank; MPI_Comm_disconnect.
 * - multiple: the same with MPI_Comm_spawn_multiple of two commands, one copy
 *   each ("child" with argument A and with B), so the children are 2 apps.
 * - accept: the parents spawn 1 child ("server"), which opens a port, publishes
 *   it as "mpi_spawn_svc" and accepts; the parents look the name up and connect;
 *   the two sides exchange a number over the new intercommunicator, then
 *   unpublish and disconnect.
 *
 * Every process prints one line "mpi_spawn ROLE RANK: ... ok" (ROLE parent or
 * child); a failure prints "mpi_spawn ... FAIL ..." and exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call, what)                                                                  \
    do {                                                                                   \
        int rc_ = (call);                                                                  \
        if (rc_ != MPI_SUCCESS) {                                                          \
            printf("mpi_spawn %s %d: FAIL %s: %d\n", role, rank, (what), rc_);            \
            fflush(stdout);                                                                \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static const char *role = "parent";
static int rank = -1;

/* The exchange over an intercommunicator: children send their rank to parent 0,
 * which answers each with the parents' size; then everyone sums world ranks over
 * the merged communicator. */
static void exchange(MPI_Comm inter, int is_child, const char *tag)
{
    int local = 0, remote = 0, size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_size(inter, &local);
    MPI_Comm_remote_size(inter, &remote);
    if (is_child) {
        int psize = -1;
        CHECK(MPI_Send(&rank, 1, MPI_INT, 0, 7, inter), "MPI_Send");
        CHECK(MPI_Recv(&psize, 1, MPI_INT, 0, 8, inter, MPI_STATUS_IGNORE), "MPI_Recv");
        if (psize != remote) {
            printf("mpi_spawn %s %d: FAIL parents say %d, remote size %d\n", role, rank, psize,
                   remote);
            exit(1);
        }
    } else if (rank == 0) {
        for (int i = 0; i < remote; i++) {
            int who = -1;
            MPI_Status st;
            CHECK(MPI_Recv(&who, 1, MPI_INT, MPI_ANY_SOURCE, 7, inter, &st), "MPI_Recv");
            if (who != st.MPI_SOURCE) {
                printf("mpi_spawn %s %d: FAIL child %d says %d\n", role, rank, st.MPI_SOURCE, who);
                exit(1);
            }
            CHECK(MPI_Send(&size, 1, MPI_INT, st.MPI_SOURCE, 8, inter), "MPI_Send");
        }
    }
    MPI_Comm merged;
    CHECK(MPI_Intercomm_merge(inter, is_child, &merged), "MPI_Intercomm_merge");
    int msize = 0;
    MPI_Comm_size(merged, &msize);
    long one = 1, count = 0;
    CHECK(MPI_Allreduce(&one, &count, 1, MPI_LONG, MPI_SUM, merged), "MPI_Allreduce");
    if (count != msize || msize != local + remote) {
        printf("mpi_spawn %s %d: FAIL merged size %d, counted %ld\n", role, rank, msize, count);
        exit(1);
    }
    MPI_Comm_free(&merged);
    CHECK(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect");
    printf("mpi_spawn %s %d: %s %d+%d ok\n", role, rank, tag, local, remote);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    const char *mode = argc > 1 ? argv[1] : "spawn";
    if (parent != MPI_COMM_NULL) {
        role = "child";
        if (strcmp(mode, "server") == 0) {
            char port[MPI_MAX_PORT_NAME];
            MPI_Comm client;
            CHECK(MPI_Open_port(MPI_INFO_NULL, port), "MPI_Open_port");
            CHECK(MPI_Publish_name("mpi_spawn_svc", MPI_INFO_NULL, port), "MPI_Publish_name");
            /* Tell the parents the name is published. */
            int go = 1;
            CHECK(MPI_Send(&go, 1, MPI_INT, 0, 9, parent), "MPI_Send");
            CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &client),
                  "MPI_Comm_accept");
            int n = -1;
            CHECK(MPI_Recv(&n, 1, MPI_INT, 0, 10, client, MPI_STATUS_IGNORE), "MPI_Recv");
            n += 1;
            CHECK(MPI_Send(&n, 1, MPI_INT, 0, 11, client), "MPI_Send");
            CHECK(MPI_Unpublish_name("mpi_spawn_svc", MPI_INFO_NULL, port), "MPI_Unpublish_name");
            CHECK(MPI_Comm_disconnect(&client), "MPI_Comm_disconnect");
            MPI_Close_port(port);
            CHECK(MPI_Comm_disconnect(&parent), "MPI_Comm_disconnect");
            printf("mpi_spawn child %d: accept %d ok\n", rank, n);
            fflush(stdout);
        } else {
            exchange(parent, 1, argc > 2 ? argv[2] : mode);
        }
        MPI_Finalize();
        return 0;
    }

    char *self = argv[0];
    MPI_Comm inter;
    if (strcmp(mode, "spawn") == 0) {
        char *args[] = {"child", NULL};
        int errs[2];
        CHECK(MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs),
              "MPI_Comm_spawn");
        exchange(inter, 0, "spawn");
    } else if (strcmp(mode, "multiple") == 0) {
        char *cmds[2] = {self, self};
        char *a[] = {"child", "A", NULL}, *b[] = {"child", "B", NULL};
        char **argvs[2] = {a, b};
        int n[2] = {1, 1};
        MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
        int errs[2];
        CHECK(MPI_Comm_spawn_multiple(2, cmds, argvs, n, infos, 0, MPI_COMM_WORLD, &inter, errs),
              "MPI_Comm_spawn_multiple");
        exchange(inter, 0, "multiple");
    } else if (strcmp(mode, "accept") == 0) {
        char *args[] = {"server", NULL};
        CHECK(MPI_Comm_spawn(self, args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                             MPI_ERRCODES_IGNORE),
              "MPI_Comm_spawn");
        if (rank == 0) {
            int go = 0;
            CHECK(MPI_Recv(&go, 1, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE), "MPI_Recv");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        char port[MPI_MAX_PORT_NAME];
        CHECK(MPI_Lookup_name("mpi_spawn_svc", MPI_INFO_NULL, port), "MPI_Lookup_name");
        MPI_Comm server;
        CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &server),
              "MPI_Comm_connect");
        int n = 41;
        if (rank == 0) {
            CHECK(MPI_Send(&n, 1, MPI_INT, 0, 10, server), "MPI_Send");
            CHECK(MPI_Recv(&n, 1, MPI_INT, 0, 11, server, MPI_STATUS_IGNORE), "MPI_Recv");
        }
        CHECK(MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
        CHECK(MPI_Comm_disconnect(&server), "MPI_Comm_disconnect");
        CHECK(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect");
        printf("mpi_spawn parent %d: connect %d ok\n", rank, n);
        fflush(stdout);
    } else {
        printf("mpi_spawn parent %d: FAIL unknown mode %s\n", rank, mode);
        return 1;
    }
    MPI_Finalize();
    return 0;
}
