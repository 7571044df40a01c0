"""The seed pages' Python snippets, run as written (`seeds/`): distances from a cpuset
and from a device (PMIX_DEVICE_DIST_ORIGIN), blocking and non-blocking, on a known
machine's topology (checked against `pmix-topo`'s answer for the same question);
group leave, blocking and non-blocking, by 4 ranks under pmix-run."""

import json
import sys

from conftest import HERE, TESTDATA, clean_env, python, rank_lines, run, under_pmix_run

XML = TESTDATA / "hwloc-xml" / "192em64t-12gr2n8c2t.xml"
SEEDS = HERE / "seeds"


def oracle(pmix_topo, *args):
    """pmix-topo's distances for the same question, as (uuid, osname, min, max)."""
    code, out, err = run(
        [pmix_topo, "distances", "--source", f"xml:{XML}", "--format", "json", *args],
        env=clean_env(),
    )
    assert code == 0, err
    return [
        (d["uuid"], d["osname"], d["mindist"], d["maxdist"])
        for d in json.loads(out)["distances"]
    ]


def rows(distances):
    return [(d["uuid"], d["osname"], d["mindist"], d["maxdist"]) for d in distances]


# What the page says comes before the snippet: "after a successful foo.init()".
PROLOGUE = """
from pmix import PMIxClient
rc, me = PMIxClient().init()
assert rc == 0, rc
"""

# After it: the non-blocking answer has come once finalize returns (it waits for
# every accepted callback); then print what the blocking form gave (after it, so
# the callback's print, on the progress thread, never interleaves with this one).
EPILOGUE = """
import json
assert rc == PMIX_SUCCESS, rc
assert foo.finalize() == PMIX_SUCCESS
print("blocking:", json.dumps(distances))
"""


def run_seed(snippet):
    code, out, err = python(
        PROLOGUE + snippet + EPILOGUE, env=clean_env({"PMIX_TOPOLOGY": f"xml:{XML}"})
    )
    assert code == 0, err
    blocking = [l for l in out.splitlines() if l.startswith("blocking: ")]
    callbacks = [l for l in out.splitlines() if l.startswith("distances: ")]
    assert len(blocking) == 1 and len(callbacks) == 1, out
    return json.loads(blocking[0][len("blocking: "):]), callbacks[0]


def test_seed_000_distances_from_a_cpuset_blocking_and_non_blocking(pmix_topo):
    snippet = (SEEDS / "seed_000_distances.py").read_text()
    distances, callback = run_seed(snippet)
    want = oracle(pmix_topo, "--cpus", "0,1", "--types", "network")
    assert rows(distances) == want
    assert all(d["type"] == 4 for d in distances)
    # The callback printed the same list, with SUCCESS.
    assert callback == "distances: SUCCESS " + repr(distances)


def test_seed_000_with_an_origin_device_blocking_and_non_blocking(pmix_topo):
    # The same snippet, its directive naming an origin device instead of a type.
    snippet = (SEEDS / "seed_000_distances.py").read_text()
    before = """pydirs = [{'key': PMIX_DEVICE_TYPE,
           'value': PMIX_DEVTYPE_NETWORK, 'val_type': PMIX_UINT64}]"""
    after = """pydirs = [{'key': PMIX_DEVICE_DIST_ORIGIN,
           'value': "ib0", 'val_type': PMIX_STRING}]"""
    assert before in snippet
    distances, callback = run_seed(snippet.replace(before, after))
    want = oracle(pmix_topo, "--origin", "ib0")
    assert rows(distances) == want
    assert any(d["osname"] == "ib0" and d["mindist"] == 0 for d in distances)
    assert callback == "distances: SUCCESS " + repr(distances)


def test_seed_001_group_leave_blocking_and_non_blocking_under_pmix_run(pmix_run):
    leave = (SEEDS / "seed_001_leave.py").read_text()
    leave_nb = (SEEDS / "seed_001_leave_nb.py").read_text()
    # Before: four ranks in "mygroup" (the page's group). Even ranks run the
    # blocking snippet, odd ranks the non-blocking one (with the first's pyinfo).
    program = f"""
import sys
from pmix import *
c = PMIxClient()
rc, me = c.init()
assert rc == PMIX_SUCCESS, rc
peers = [{{'nspace': me['nspace'], 'rank': r}} for r in range(4)]
rc, results = c.group_construct("mygroup", peers, [])
assert rc == PMIX_SUCCESS, rc
sys.stdout.reconfigure(line_buffering=True)
if me['rank'] % 2 == 0:
    exec({leave!r})
else:
    pyinfo = []
    exec({leave_nb!r})
# Finalize first: it returns once mycb has run, so the lines do not interleave.
assert c.finalize() == PMIX_SUCCESS
print(f"{{me['rank']}}: rc {{rc}}")
"""
    code, out, err = under_pmix_run(pmix_run, 4, program)
    assert code == 0, out + err
    by = rank_lines(out)
    assert by == {r: ["rc 0"] for r in range(4)}, out + err
    # mycb ran once at each odd rank, with PMIX_SUCCESS.
    assert out.count("LEAVE COMPLETE 0") == 2, out
