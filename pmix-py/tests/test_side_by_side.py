"""Side by side with python3-pmix (issue 37): one script per family of calls, run
under `pmix-run -n 2` (and under `mpirun -n 2`: MPIRUN_DIFFERS) once with our module
and once with python3-pmix (libpmix2),
each rank printing what every call answered; the two runs must print the same lines
(the job's namespace, which holds pmix-run's pid, is written NS). The scripts are our
own, written for python3-pmix's API.

What differs by design is left out of the comparison and checked on ours alone
(test_calls.py): store_internal (python3-pmix frees memory it does not own and
aborts), get_cpuset / parse_cpuset_string / get_relative_locality (libpmix2 answers
PMIX_ERR_TAKE_NEXT_OPTION or NOT_SUPPORTED where ours answers), get_version, and
PMIX_PERSIST / PMIX_DATA_RANGE values (python3-pmix cannot convert them).
error_string is compared on every code from -1500 to 1: each code libpmix2 names,
ours names alike.

Without python3-pmix these print a NOTICE and skip, except under CI=true."""

import difflib
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import PEER, clean_env, need_peer, peer_env, rank_lines, run

HEAD = r'''
import os, sys, threading, time
from pmix import *
c = PMIxClient()
rc, me = c.init([])
r, ns = me['rank'], me['nspace']
peer = {'nspace': ns, 'rank': 1 - r}
both = [{'nspace': ns, 'rank': 0}, {'nspace': ns, 'rank': 1}]
def say(*a):
    print(f"{r}:", *a, flush=True)
say("init", rc)
'''
TAIL = r'''
say("finalize", c.finalize([]))
'''

FAMILIES = {
    # Key-value exchange: values of every type python3-pmix loads, put by each
    # rank, fenced, and read back from the other; the job's own keys. (PMIX_PERSIST
    # and PMIX_DATA_RANGE values python3-pmix cannot load or unload: it compares
    # their types with the keys PMIX_PERSISTENCE and PMIX_RANGE.)
    "exchange": r'''
values = [
    (PMIX_BOOL, True), (PMIX_BYTE, 7), (PMIX_STRING, "text"), (PMIX_SIZE, 2**40),
    (PMIX_PID, 4242), (PMIX_INT, -5), (PMIX_INT8, -8), (PMIX_INT16, -16),
    (PMIX_INT32, -32), (PMIX_INT64, -2**40), (PMIX_UINT, 5), (PMIX_UINT8, 8),
    (PMIX_UINT16, 16), (PMIX_UINT32, 32), (PMIX_UINT64, 2**50), (PMIX_DOUBLE, 2.5),
    (PMIX_STATUS, -27), (PMIX_PROC_RANK, 3), (PMIX_PROC, {'nspace': 'other', 'rank': 2}),
    (PMIX_BYTE_OBJECT, {'bytes': b'\x01\x02\x03', 'size': 3}),
    (PMIX_SCOPE, 3), (PMIX_PROC_STATE, 5),
]
for i, (t, v) in enumerate(values):
    rc = c.put(PMIX_GLOBAL, f"k{i}", {'value': v, 'val_type': t})
    if rc != 0:
        say("put", i, rc)
say("commit", c.commit())
say("fence", c.fence([], [{'key': PMIX_COLLECT_DATA, 'value': True, 'val_type': PMIX_BOOL}]))
for i in range(len(values)):
    say("get", i, c.get(peer, f"k{i}", []))
for i, k in enumerate((PMIX_JOB_SIZE, PMIX_UNIV_SIZE, PMIX_LOCAL_SIZE, PMIX_APPNUM)):
    say("job", i, c.get({'nspace': ns, 'rank': PMIX_RANK_WILDCARD}, k, []))
for i, k in enumerate((PMIX_RANK, PMIX_LOCAL_RANK, PMIX_NODE_RANK, PMIX_APPNUM)):
    say("proc", i, c.get({'nspace': ns, 'rank': r}, k, []))
say("fence peers", c.fence(both, []))
''',
    # Publish / lookup / unpublish: rank 0 publishes, rank 1 looks up.
    "pubsub": r'''
if r == 0:
    say("publish", c.publish([{'key': 'pub.int', 'value': 42, 'val_type': PMIX_INT},
                              {'key': 'pub.str', 'value': 'hello', 'val_type': PMIX_STRING}]))
    say("publish again", c.publish([{'key': 'pub.int', 'value': 43, 'val_type': PMIX_INT}]))
say("fence", c.fence([], []))
if r == 1:
    say("lookup", c.lookup([{'key': 'pub.int'}], None))
    say("lookup str", c.lookup([{'key': 'pub.str'}], []))
    say("lookup missing", c.lookup([{'key': 'nosuch'}], []))
say("fence", c.fence([], []))
if r == 0:
    say("unpublish", c.unpublish(['pub.int', 'pub.str'], []))
say("fence", c.fence([], []))
if r == 1:
    say("lookup gone", c.lookup([{'key': 'pub.int'}], []))
''',
    # Queries and resolution of peers and nodes.
    "query": r'''
host = os.uname().nodename.split('.')[0]
say("namespaces", c.query([{'keys': [PMIX_QUERY_NAMESPACES], 'qualifiers': []}]))
say("job size", c.query([{'keys': [PMIX_JOB_SIZE], 'qualifiers': [{'key': PMIX_NSPACE, 'value': ns, 'val_type': PMIX_STRING}]}]))
say("psets", c.query([{'keys': [PMIX_QUERY_PSET_NAMES], 'qualifiers': []}]))
say("no queries", c.query([]))
say("peers", c.resolve_peers(None, ns))
say("peers here", c.resolve_peers(host, ns))
say("peers elsewhere", c.resolve_peers("no-such-node", ns))
say("nodes", c.resolve_nodes(ns) == (0, host), c.resolve_nodes(ns)[0])
''',
    # Jobs: connect / disconnect, spawn, log, job control, monitoring.
    "jobs": r'''
say("connect", c.connect(both, []))
say("disconnect", c.disconnect(both, []))
say("connect job", c.connect([], []))
say("disconnect job", c.disconnect(None, []))
say("fence", c.fence([], []))
if r == 0:
    rc, new = c.spawn([], [{'cmd': '/bin/true', 'argv': ['/bin/true'], 'maxprocs': 1}])
    say("spawn", rc, new is not None and new.startswith(ns))
    say("spawn nothing", c.spawn([], []))
say("log", c.log([{'key': PMIX_LOG_STDERR, 'value': f'log from {r}\n', 'val_type': PMIX_STRING}], []))
say("job_control", c.job_control([], [{'key': PMIX_JOB_CTRL_PAUSE, 'value': True, 'val_type': PMIX_BOOL}]))
say("monitor", c.monitor([{'key': PMIX_MONITOR_HEARTBEAT, 'value': True, 'val_type': PMIX_BOOL}], PMIX_MONITOR_HEARTBEAT_ALERT, []))
say("fence", c.fence([], []))
''',
    # Events between the ranks, then groups.
    "events_groups": r'''
got = threading.Event()
seen = []
def handler(evhdlr, status, source, info, results):
    seen.append((status, source['rank'], sorted((i['key'], i['value']) for i in info if i['key'] == 'my.key')))
    got.set()
    return PMIX_EVENT_ACTION_COMPLETE, []
rc, hid = c.register_event_handler([-4242], [], handler)
say("register", rc, hid >= 0)
say("fence", c.fence([], []))
if r == 0:
    say("notify", c.notify_event(-4242, me, PMIX_RANGE_SESSION, [{'key': 'my.key', 'value': 'hi', 'val_type': PMIX_STRING}]))
else:
    say("delivered", got.wait(20), seen)
say("fence", c.fence([], []))
say("deregister", c.deregister_event_handler(hid))
say("construct", c.group_construct("g1", both, []))
say("destruct", c.group_destruct("g1", []))
say("construct id", c.group_construct("g2", both, [{'key': PMIX_GROUP_ASSIGN_CONTEXT_ID, 'value': True, 'val_type': PMIX_BOOL}]))
say("leave", c.group_leave("g2", []))
say("fence", c.fence([], []))
''',
    # What no server of ours serves: as libpmix2 answers under the same server.
    "unserved": r'''
say("get_credential", c.get_credential([]))
say("validate_credential", c.validate_credential({'bytes': 'abc', 'size': 3}, []))
say("allocation_request", c.allocation_request(PMIX_ALLOC_NEW, []))
say("fabric_update unregistered", c.fabric_update())
say("fabric_deregister unregistered", c.fabric_deregister())
say("fabric_register", c.fabric_register([]))
say("fabric_register again", c.fabric_register([]))
say("fabric_update", c.fabric_update())
say("fabric_deregister", c.fabric_deregister())
say("fabric_update after", c.fabric_update())
say("progress", c.progress())
say("load_topology", c.load_topology())
''',
    # Names and texts.
    "strings": r'''
import pmix
for f in ('proc_state_string', 'scope_string', 'persistence_string', 'data_range_string',
          'data_type_string', 'alloc_directive_string', 'job_state_string', 'link_state_string'):
    say(f, [getattr(c, f)(v) for v in range(256)])
say("iof_channel_string", [c.iof_channel_string(v) for v in range(300)])
say("info_directives_string", [c.info_directives_string(v) for v in range(64)])
say("device_type_string", [c.device_type_string(v) for v in range(70)])
say("unknown", c.get_attribute_string("PMIX_NO_SUCH"), c.get_attribute_name("no.such"))
''',
}

# What python3-pmix prints on its own (its progress thread, libevent's warnings).
NOISE = ("CLIENT STARTING THREAD", "CLIENT THREAD STARTED")


def normalize(text):
    text = re.sub(r"pmrun\.\d+", "NS", text)
    return re.sub(r"pmix-rs\.server\.\d+", "SERVER", text)


def under_both(pmix_run, script, n=2):
    got = {}
    for who, exe, env in (("ours", sys.executable, clean_env()),
                          ("python3-pmix", PEER, peer_env())):
        cmd = [pmix_run, "-n", str(n), "--timeout", "80", exe, "-W", "ignore", "-c", script]
        code, out, err = run(cmd, env=env, limit=100)
        got[who] = (code, rank_lines(normalize(out)), out, err)
    return got


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_answers_as_python3_pmix_under_pmix_run(pmix_run, family):
    need_peer()
    got = under_both(pmix_run, HEAD + FAMILIES[family] + TAIL)
    ours, theirs = got["ours"], got["python3-pmix"]
    assert ours[0] == 0, f"ours:\n{ours[2]}\n{ours[3]}"
    assert theirs[0] == 0, f"python3-pmix:\n{theirs[2]}\n{theirs[3]}"
    for r in (0, 1):
        assert ours[1].get(r), f"rank {r} printed nothing:\n{ours[2]}\n{ours[3]}"
        assert ours[1][r][-1] == "finalize 0", ours[1][r]
    if ours[1] != theirs[1]:
        diff = []
        for r in (0, 1):
            diff += difflib.unified_diff(theirs[1].get(r, []), ours[1].get(r, []),
                                         f"rank {r}, python3-pmix", f"rank {r}, ours",
                                         lineterm="")
        pytest.fail("\n".join(diff))


# Under mpirun (Open MPI 4.1.4's own OpenPMIx server), where each module answers
# as the client it is: every family but events_groups (mpirun 4.1 delivers no
# SESSION-range event and never answers a group construct: both modules wait for
# ever). The lines that differ by choice are compared on ours alone:
MPIRUN_DIFFERS = {
    # python3-pmix's unpublish answers BAD-PARAM under mpirun, where libpmix2's own
    # PMIx_Unpublish of the same keys answers SUCCESS (its binding, not the server);
    # ours answers as the C library, so the key is then gone.
    "unpublish": "unpublish 0",
    "lookup gone": "lookup gone (-46, [{'key': 'pub.int'}])",
    # libpmix2 sends a query of a job-level key to the server, and mpirun's answers
    # NOT-FOUND; ours answers it from the job's own data, as our server does for
    # either module.
    "job size": "job size (0, [{'key': 'pmix.job.size', 'flags': 0, 'value': 2, 'val_type': 14}])",
    # libpmix2 asks mpirun's server for an unknown node's peers and times out; ours
    # knows the job's nodes and answers NOT-FOUND at once.
    "peers elsewhere": "peers elsewhere (-46, [])",
}


def under_both_mpirun(script, n=2):
    """The script as n ranks under mpirun with each module: (exit, {rank: lines})
    by module, each rank's lines read from mpirun's per-rank output file (ranks'
    lines interleave on mpirun's own stdout), ORTE's numeric namespace written NS."""
    got = {}
    for who, exe, env in (("ours", sys.executable, clean_env()),
                          ("python3-pmix", PEER, peer_env())):
        out_dir = tempfile.mkdtemp(prefix="pmix-py-mpirun.")
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--output-filename", out_dir,
               "-n", str(n), exe, "-W", "ignore", "-c", script]
        try:
            code, out, err = run(cmd, env=env, limit=100)
            lines = {}
            for f in glob.glob(os.path.join(out_dir, "*", "rank.*", "stdout")):
                r = int(os.path.basename(os.path.dirname(f)).split(".")[1])
                with open(f) as fh:
                    lines[r] = [re.sub(r"'\d{6,}'", "'NS'", l.split(": ", 1)[1])
                                for l in fh.read().splitlines()
                                if not l.startswith(NOISE) and ": " in l]
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)
        got[who] = (code, lines, out, err)
    return got


@pytest.mark.parametrize("family", sorted(f for f in FAMILIES if f != "events_groups"))
def test_each_family_answers_as_python3_pmix_under_mpirun(family):
    need_peer()
    if shutil.which("mpirun") is None:
        need_mpirun()
    got = under_both_mpirun(HEAD + FAMILIES[family] + TAIL)
    ours, theirs = got["ours"], got["python3-pmix"]
    assert ours[0] == 0, f"ours:\n{ours[2]}\n{ours[3]}"
    assert theirs[0] == 0, f"python3-pmix:\n{theirs[2]}\n{theirs[3]}"
    for r in (0, 1):
        mine, peer = ours[1].get(r, []), theirs[1].get(r, [])
        assert mine and mine[-1] == "finalize 0", (r, mine)
        chosen = [l for l in mine if any(l.startswith(k + " ") for k in MPIRUN_DIFFERS)]
        for l in chosen:
            key = next(k for k in MPIRUN_DIFFERS if l.startswith(k + " "))
            assert l == MPIRUN_DIFFERS[key], (r, l)
        keep = lambda ls: [l for l in ls if not any(l.startswith(k + " ") for k in MPIRUN_DIFFERS)]
        assert keep(mine) == keep(peer), "\n".join(difflib.unified_diff(
            keep(peer), keep(mine), f"rank {r}, python3-pmix", f"rank {r}, ours", lineterm=""))


def need_mpirun():
    if os.environ.get("CI") == "true":
        pytest.fail("mpirun is missing (apt-get install openmpi-bin)")
    print("NOTICE: mpirun is missing: the comparison under mpirun is skipped")
    pytest.skip("mpirun missing")


ABORT = HEAD + r'''
say("fence", c.fence([], []))
if r == 1:
    say("abort", c.abort(3, "python aborts", None))
    time.sleep(30)
else:
    time.sleep(30)
'''


def test_abort_ends_the_job_as_python3_pmix_s_does(pmix_run):
    need_peer()
    got = under_both(pmix_run, ABORT)
    for who, (code, lines, out, err) in got.items():
        # pmix-run ends the job with the status the rank aborted with.
        assert code == 3, f"{who}: exit {code}\n{out}\n{err}"
        assert lines[0] == ["init 0", "fence 0"] and lines[1][:2] == ["init 0", "fence 0"], (who, lines)
    assert got["ours"][1] == got["python3-pmix"][1]


TOOL = r'''
import sys
from pmix import *
t = PMIxTool()
rc, me = t.init([{'key': PMIX_SERVER_PIDINFO, 'value': int(sys.argv[1]), 'val_type': PMIX_PID}])
print("init", rc, me['rank'], flush=True)
print("servers", t.get_servers(), flush=True)
print("namespaces", t.query([{'keys': [PMIX_QUERY_NAMESPACES], 'qualifiers': []}]), flush=True)
print("set_server", t.set_server({'nspace': 'elsewhere', 'rank': 0}, []), flush=True)
print("finalize", t.finalize(), flush=True)
'''


def test_a_tool_attached_to_pmix_run_answers_as_python3_pmix_s(pmix_run):
    need_peer()
    tmp = tempfile.mkdtemp(prefix="pmix-py-tool.")
    got = {}
    for who, exe, env in (("ours", sys.executable, clean_env({"TMPDIR": tmp})),
                          ("python3-pmix", PEER,
                           peer_env({"TMPDIR": tmp, "PMIX_MCA_psec": "native"}))):
        job = subprocess.Popen([pmix_run, "-n", "1", "sleep", "20"],
                               env=clean_env({"TMPDIR": tmp}), start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            until = time.time() + 20
            while not glob.glob(os.path.join(tmp, f"pmix.*.tool.{job.pid}")):
                assert time.time() < until, "pmix-run wrote no rendezvous file"
                time.sleep(0.05)
            code, out, err = run([exe, "-W", "ignore", "-c", TOOL, str(job.pid)], env=env)
        finally:
            os.killpg(job.pid, 9)
            job.wait()
        assert code == 0, f"{who}:\n{out}\n{err}"
        got[who] = [normalize(l) for l in out.splitlines() if not l.startswith(NOISE)]
    assert got["ours"][0] == "init 0 0", got
    assert got["ours"] == got["python3-pmix"], got


ERRORS = r'''
import json, pmix
c = pmix.PMIxClient()
print("ERRORS", json.dumps({s: c.error_string(s) for s in range(-1500, 2)}))
'''

# Every attribute python3-pmix names (argv[1]: its {name: key}), both ways.
ATTRIBUTES = r'''
import json, sys, pmix
c = pmix.PMIxClient()
names = json.loads(sys.argv[1])
print("ATTRS", json.dumps([[c.get_attribute_string(n), c.get_attribute_name(k)] for n, k in names]))
'''


def test_attribute_names_and_strings_answer_as_python3_pmix_s():
    need_peer()
    listing = "import json, pmix; print('KEYS', json.dumps(sorted((n, getattr(pmix, n).decode()) for n in dir(pmix) if n.startswith('PMIX_') and isinstance(getattr(pmix, n), bytes))))"
    code, out, err = run([PEER, "-W", "ignore", "-c", listing], env=peer_env())
    assert code == 0, err
    names = json.loads([l for l in out.splitlines() if l.startswith("KEYS ")][-1][5:])
    assert len(names) > 400, len(names)
    got = {}
    for who, exe, env in (("ours", sys.executable, clean_env()), ("python3-pmix", PEER, peer_env())):
        code, out, err = run([exe, "-W", "ignore", "-c", ATTRIBUTES, json.dumps(names)], env=env)
        assert code == 0, err
        got[who] = json.loads([l for l in out.splitlines() if l.startswith("ATTRS ")][-1][6:])
    differ = [(n, a, b) for n, a, b in zip(names, got["ours"], got["python3-pmix"]) if a != b]
    assert differ == [], differ


def test_error_string_answers_python3_pmix_s_text_for_every_code():
    need_peer()
    got = {}
    for who, exe, env in (("ours", sys.executable, clean_env()), ("python3-pmix", PEER, peer_env())):
        code, out, err = run([exe, "-W", "ignore", "-c", ERRORS], env=env)
        assert code == 0, err
        got[who] = json.loads([l for l in out.splitlines() if l.startswith("ERRORS ")][-1][7:])
    ours, theirs = got["ours"], got["python3-pmix"]
    unknown = "ERROR STRING NOT FOUND"
    named = {s for s, t in ours.items() if t != unknown}
    assert len(named) > 40, len(named)
    # Where both name a code, the same text (ours also names a few of its own).
    both = {s for s in named if theirs[s] != unknown}
    assert {s: ours[s] for s in both} == {s: theirs[s] for s in both}
    lacking = sorted((int(s) for s, t in theirs.items() if t != unknown and ours[s] == unknown), reverse=True)
    assert lacking == [], f"libpmix2 names {len(lacking)} status codes pmix-core does not: {lacking}"

