"""compute_distances from Python: pmix-rs's module against python3-pmix (OpenPMIx
4.2.2's binding, Debian's, for /usr/bin/python3), side by side in one run.

    python bench.py            # this interpreter must import pmix-rs's `pmix`

Each side runs as a singleton on this machine, from this process's first two CPUs
("hwloc:0-1") to the network devices, with the call and its arguments exactly as
python3-pmix takes them; the median of 7 runs of 20,000 calls is printed per side,
with the ratio against the target (ours at least 10x faster). Both must answer
status 0 with the same devices first. Exit status 1 when the target is missed, 2
when python3-pmix is missing."""

import os
import statistics
import subprocess
import sys

PEER = "/usr/bin/python3"
CALLS = 20000
RUNS = 7

PROGRAM = """
import sys, time
from pmix import *
c = PMIxClient()
c.init([])
cpus = {'cpus': 'hwloc:' + sys.argv[1]}
dirs = [{'key': PMIX_DEVICE_TYPE, 'value': PMIX_DEVTYPE_NETWORK, 'val_type': PMIX_UINT64, 'flags': 0}]
rc, d = c.compute_distances(cpus, dirs)
name = lambda x: x.decode() if isinstance(x, bytes) else x
times = []
for _ in range(%d):
    t = time.perf_counter()
    for _ in range(%d):
        c.compute_distances(cpus, dirs)
    times.append((time.perf_counter() - t) / %d * 1e6)
print("RESULT", rc, ",".join(sorted(name(x['osname']) for x in d)), *times)
c.finalize([])
""" % (RUNS, CALLS, CALLS)


def measure(exe, cpus):
    out = subprocess.run(
        [exe, "-W", "ignore", "-c", PROGRAM, cpus],
        capture_output=True, text=True, timeout=600,
        env={k: v for k, v in os.environ.items() if not k.startswith("PMIX_")},
    )
    line = [l for l in out.stdout.splitlines() if l.startswith("RESULT ")]
    if out.returncode != 0 or not line:
        sys.exit(f"{exe}: {out.stdout}\n{out.stderr}")
    _, rc, devices, *times = line[0].split()
    return int(rc), devices, statistics.median(float(t) for t in times)


def main():
    if subprocess.run([PEER, "-W", "ignore", "-c", "import pmix"], capture_output=True).returncode:
        print("NOTICE: python3-pmix is missing (apt-get install python3-pmix)")
        return 2
    cpus = ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:2])
    ours = measure(sys.executable, cpus)
    theirs = measure(PEER, cpus)
    if ours[:2] != theirs[:2] or ours[0] != 0:
        print(f"the answers differ: ours {ours[:2]}, python3-pmix {theirs[:2]}")
        return 1
    ratio = theirs[2] / ours[2]
    print(f"compute_distances from Python, cpus {cpus}, network devices ({ours[1]}),"
          f" median of {RUNS} x {CALLS:,} calls:")
    print(f"  pmix-rs       {ours[2]:8.2f} us/call")
    print(f"  python3-pmix  {theirs[2]:8.2f} us/call")
    print(f"  ratio         {ratio:8.1f}x (target >= 10x: {'met' if ratio >= 10 else 'MISSED'})")
    return 0 if ratio >= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
