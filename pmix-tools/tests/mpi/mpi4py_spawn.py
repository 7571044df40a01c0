"""mpi4py's dynamic processes: the parents (COMM_WORLD) spawn 2 copies of this script
("child"); every child sends its rank to parent 0, which answers each with the
parents' size; then all sum 1 over the merged communicator and disconnect. Each
process prints "mpi4py_spawn ROLE R: LOCAL+REMOTE ok" (ROLE parent or child); a
failure prints "mpi4py_spawn ... FAIL ..." and exits 1."""

import sys

from mpi4py import MPI

parent = MPI.Comm.Get_parent()
rank = MPI.COMM_WORLD.Get_rank()
size = MPI.COMM_WORLD.Get_size()
is_child = parent != MPI.COMM_NULL
role = "child" if is_child else "parent"


def fail(why):
    print(f"mpi4py_spawn {role} {rank}: FAIL {why}", flush=True)
    sys.exit(1)


if is_child:
    inter = parent
else:
    inter = MPI.COMM_WORLD.Spawn(sys.executable, args=[__file__, "child"], maxprocs=2)
local, remote = inter.Get_size(), inter.Get_remote_size()
if is_child:
    inter.send(rank, dest=0, tag=7)
    if inter.recv(source=0, tag=8) != remote:
        fail("the parents' size")
elif rank == 0:
    for _ in range(remote):
        status = MPI.Status()
        who = inter.recv(source=MPI.ANY_SOURCE, tag=7, status=status)
        if who != status.Get_source():
            fail(f"child {status.Get_source()} says {who}")
        inter.send(size, dest=status.Get_source(), tag=8)
merged = inter.Merge(high=is_child)
if merged.allreduce(1, op=MPI.SUM) != local + remote:
    fail("merged size")
merged.Free()
inter.Disconnect()
print(f"mpi4py_spawn {role} {rank}: {local}+{remote} ok", flush=True)
