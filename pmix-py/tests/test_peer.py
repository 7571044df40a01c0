"""Side by side with python3-pmix (OpenPMIx 4.2.2's own binding, Debian's
`python3-pmix` for /usr/bin/python3) on the calls both have: the same devices from
compute_distances on this machine, the same group construct / leave results under
pmix-run (test_api.py compares the constants, test_side_by_side.py every other
family of calls). Without python3-pmix these tests print a NOTICE and skip, except
under CI=true.

(The time each takes per compute_distances call is compared by `pmix-py/bench.py`,
not here: speed is a benchmark's business.)"""

import os
import sys

from conftest import clean_env, need_peer, peer_env, rank_lines, run

# Written for python3-pmix's API, which ours follows: init/finalize with lists,
# cpus as "hwloc:<list>", names as bytes there and str here (decoded alike).
DEVICES = """
import sys
from pmix import *
c = PMIxClient()
rc, me = c.init([])
rc, d = c.compute_distances({'cpus': 'hwloc:' + sys.argv[1]}, None)
name = lambda x: x.decode() if isinstance(x, bytes) else x
print("RESULT", rc, sorted(name(x['osname']) for x in d))
c.finalize([])
"""


def test_compute_distances_finds_the_same_devices_as_python3_pmix_on_this_machine():
    peer = need_peer()
    cpus = ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:2])
    got = {}
    for who, exe in (("ours", sys.executable), ("python3-pmix", peer)):
        env = clean_env() if exe == sys.executable else peer_env()
        code, out, err = run([exe, "-W", "ignore", "-c", DEVICES, cpus], env=env)
        lines = [l for l in out.splitlines() if l.startswith("RESULT ")]
        assert code == 0 and len(lines) == 1, f"{who}: {out}\n{err}"
        got[who] = lines[0]
    # Both succeed (status 0) and name the same devices; distances differ by design.
    assert got["ours"].startswith("RESULT 0 "), got
    assert got["ours"] == got["python3-pmix"], got


GROUPS = """
from pmix import *
c = PMIxClient()
rc, me = c.init([])
peers = [{'nspace': me['nspace'], 'rank': r} for r in range(2)]
rc, results = c.group_construct("pg", peers, [])
print(f"{me['rank']}: construct {rc}", flush=True)
rc = c.group_leave("pg", [])
print(f"{me['rank']}: leave {rc}", flush=True)
print(f"{me['rank']}: finalize {c.finalize([])}", flush=True)
"""


def test_group_construct_and_leave_answer_as_python3_pmix_under_pmix_run(pmix_run):
    peer = need_peer()
    got = {}
    for who, exe in (("ours", sys.executable), ("python3-pmix", peer)):
        cmd = [pmix_run, "-n", "2", "--timeout", "60", exe, "-W", "ignore", "-c", GROUPS]
        code, out, err = run(cmd, env=clean_env() if exe == sys.executable else peer_env())
        assert code == 0, f"{who}: {out}\n{err}"
        got[who] = rank_lines(out)
    want = {r: ["construct 0", "leave 0", "finalize 0"] for r in (0, 1)}
    assert got["ours"] == want, got
    assert got["python3-pmix"] == want, got
