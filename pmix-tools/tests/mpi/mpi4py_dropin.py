"""mpi4py on the drop-in libpmix.so.2: a ring of sendrecv, bcast, allreduce, a split
into even and odd ranks and a barrier, then the PMIx libraries this process maps
("pmix-lib PATH" for each file named libpmix* or under OpenPMIx's /pmix2/) and
"mpi4py_dropin rank R of N: ok". An optional argv[1] is the expected size. The lines go
out in one write, so that a launcher forwarding output in chunks keeps them whole."""

import os
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()


def fail(why):
    sys.stderr.write(f"mpi4py_dropin rank {rank}: FAIL: {why}\n")
    comm.Abort(3)


if len(sys.argv) > 1 and size != int(sys.argv[1]):
    fail(f"size {size}, expected {sys.argv[1]}")
got = comm.sendrecv(rank, dest=(rank + 1) % size, source=(rank - 1) % size)
if got != (rank - 1) % size:
    fail(f"ring: got {got}")
text = comm.bcast(f"hello from 0 of {size}" if rank == 0 else None, root=0)
if text != f"hello from 0 of {size}":
    fail(f"bcast gave {text!r}")
total = comm.allreduce(rank, op=MPI.SUM)
if total != size * (size - 1) // 2:
    fail(f"allreduce sum {total}")
half = comm.Split(rank % 2, rank)
if half.allreduce(rank) != sum(range(rank % 2, size, 2)):
    fail("allreduce in the split communicator")
half.Free()
comm.Barrier()
seen, out = [], []
with open("/proc/self/maps") as maps:
    for line in maps:
        path = line[line.find("/"):].strip() if "/" in line else ""
        pmix = os.path.basename(path).startswith("libpmix") or "/pmix2/" in path
        if pmix and path not in seen:
            seen.append(path)
            out.append(f"mpi4py_dropin rank {rank}: pmix-lib {path}\n")
out.append(f"mpi4py_dropin rank {rank} of {size}: ok\n")
sys.stdout.write("".join(out))
sys.stdout.flush()
