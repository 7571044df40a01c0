"""The binding's rules (issue 15): calls before init, the `_nb` callback (once, and
only after PMIX_SUCCESS), PMIX_ERR_WOULD_BLOCK from a callback, exceptions in
callbacks, bad arguments, the GIL released while a call blocks, the constants, and
the python3-pmix-style calls (put / commit / fence / get, events, groups) between
ranks under pmix-run."""

from conftest import TESTDATA, clean_env, python, rank_lines, under_pmix_run

XML = TESTDATA / "hwloc-xml" / "24em64t-2n6c2t-pci.xml"
TOPO = {"PMIX_TOPOLOGY": f"xml:{XML}"}


def ok(code_out_err):
    code, out, err = code_out_err
    assert code == 0, f"exit {code}\nstdout:\n{out}\nstderr:\n{err}"
    return out, err


def test_every_call_before_init_returns_pmix_err_init():
    out, _ = ok(python("""
from pmix import *
c = PMIxClient()
assert not c.initialized()
got = [
    c.load_topology(),
    c.compute_distances({'cpus': [0]}, [])[0],
    c.compute_distances_nb({'cpus': [0]}, [], lambda *a: print("CALLED"), None),
    c.get_cpuset()[0],
    c.put(PMIX_GLOBAL, "k", {'value': 1, 'val_type': PMIX_UINT32}),
    c.commit(),
    c.fence(),
    c.get(None, "k")[0],
    c.register_event_handler([1], [], lambda *a: None)[0],
    c.notify_event(-1000, None, PMIX_RANGE_LOCAL, []),
    c.group_construct("g", [], [])[0],
    c.group_destruct("g", []),
    c.group_leave("g", []),
    c.group_leave_nb("g", [], lambda *a: print("CALLED"), None),
    c.ft_validate_local("g")[0],
    c.ft_validate_global("g")[0],
    c.finalize(),
]
print(set(got) == {PMIX_ERR_INIT}, got)
"""))
    assert out.startswith("True"), out
    assert "CALLED" not in out


def test_the_nb_callback_runs_once_and_only_after_pmix_success():
    out, _ = ok(python("""
from pmix import *
import threading
c = PMIxClient()
assert c.init()[0] == PMIX_SUCCESS
calls = []
done = threading.Event()
def cb(status, distances, cbdata):
    calls.append((status, cbdata, threading.current_thread() is threading.main_thread()))
    done.set()
# Refused: no callback, ever.
bad = [
    c.compute_distances_nb({'source': 'linux', 'cpus': [0]}, [], cb, "x"),
    c.compute_distances_nb({'cpus': []}, [], cb, "x"),
    c.compute_distances_nb({'cpus': [0]}, [{'key': PMIX_DEVICE_TYPE, 'value': 0, 'val_type': PMIX_UINT64}], cb, "x"),
    c.group_leave_nb("", [], cb, "x"),
]
# Accepted: one callback, on the progress thread.
rc = c.compute_distances_nb({'cpus': [0]}, [], cb, "mydata")
assert done.wait(10)
assert c.finalize() == PMIX_SUCCESS
print(bad, rc, calls)
""", env=clean_env(TOPO)))
    assert out.strip() == "[-27, -27, -27, -27] 0 [(0, 'mydata', False)]", out


def test_a_blocking_call_from_a_callback_returns_would_block():
    out, err = ok(python("""
from pmix import *
import threading
c = PMIxClient()
assert c.init()[0] == PMIX_SUCCESS
got = []
done = threading.Event()
def cb(status, distances, cbdata):
    got.append(c.compute_distances({'cpus': [0]}, [])[0])
    got.append(c.fence())
    got.append(c.group_leave("g", []))
    got.append(c.ft_validate_global("g")[0])
    got.append(c.finalize())
    # A local call answers.
    got.append(c.ft_validate_local(me['nspace'])[0])
    done.set()
rc, me = c.init()
assert c.compute_distances_nb({'cpus': [0]}, [], cb, None) == PMIX_SUCCESS
assert done.wait(10)
c.finalize(); c.finalize()
print(got == [PMIX_ERR_WOULD_BLOCK] * 5 + [PMIX_SUCCESS], got)
""", env=clean_env(TOPO)))
    assert out.startswith("True"), out
    assert "blocking call made on the PMIx progress thread" in err


def test_an_exception_in_a_callback_is_reported_and_the_process_goes_on():
    out, err = ok(python("""
from pmix import *
import threading
c = PMIxClient()
assert c.init()[0] == PMIX_SUCCESS
done = threading.Event()
def bad(status, distances, cbdata):
    done.set()
    raise ValueError("raised in a callback")
assert c.compute_distances_nb({'cpus': [0]}, [], bad, None) == PMIX_SUCCESS
assert done.wait(10)
# Still alive and answering.
rc, d = c.compute_distances({'cpus': [0]}, [])
assert c.finalize() == PMIX_SUCCESS
print("alive", rc, len(d) > 0)
""", env=clean_env(TOPO)))
    assert out.strip() == "alive 0 True", out
    assert "ValueError: raised in a callback" in err and "Traceback" in err


def test_bad_arguments_return_the_documented_codes_or_raise_type_errors():
    out, _ = ok(python("""
from pmix import *
c = PMIxClient()
assert c.init([{'key': PMIX_HOSTNAME, 'value': 'h', 'val_type': PMIX_STRING}])[0] == 0
cd = lambda cpus, dirs=None: c.compute_distances(cpus, dirs)[0]
codes = {
    "source": cd({'source': 'linux', 'cpus': [0]}),
    "empty": cd({'cpus': []}),
    "no cpus": cd({'source': 'hwloc'}),
    "cpu text": cd({'cpus': '0-x'}),
    "cpu not int": cd({'cpus': ['a']}),
    "cpu past max": cd({'cpus': [1 << 21]}),
    "dirs not list": cd({'cpus': [0]}, 5),
    "dir not dict": cd({'cpus': [0]}, [5]),
    "no key": cd({'cpus': [0]}, [{'value': 1}]),
    "bad val_type": cd({'cpus': [0]}, [{'key': PMIX_DEVICE_TYPE, 'value': 4, 'val_type': 9999}]),
    "type mask 0": cd({'cpus': [0]}, [{'key': PMIX_DEVICE_TYPE, 'value': 0, 'val_type': PMIX_UINT64}]),
    "type as str": cd({'cpus': [0]}, [{'key': PMIX_DEVICE_TYPE, 'value': 'gpu', 'val_type': PMIX_STRING}]),
    "two origins": cd(None, [{'key': PMIX_DEVICE_DIST_ORIGIN, 'value': 'eth0', 'val_type': PMIX_STRING}] * 2),
    "unknown origin": cd(None, [{'key': PMIX_DEVICE_DIST_ORIGIN, 'value': 'nope0', 'val_type': PMIX_STRING}]),
    "required unknown": cd({'cpus': [0]}, [{'key': 'x.y', 'value': 1, 'val_type': PMIX_INT, 'flags': PMIX_INFO_REQD}]),
    "optional unknown": cd({'cpus': [0]}, [{'key': 'x.y', 'value': 1, 'val_type': PMIX_INT}]),
    "python3-pmix cpus": cd({'cpus': 'hwloc:0-1'}),
    "long group": c.group_leave("g" * 256, []),
    "empty group": c.group_leave("", []),
    "unknown group": c.ft_validate_local("nope")[0],
    "bad scope": c.put(999, "k", 1),
    "uint8 overflow": c.put(PMIX_GLOBAL, "k", {'value': 300, 'val_type': PMIX_UINT8}),
    "bad ref": c.get_cpuset(7)[0],
    "bad mask": c.ft_get_num_state_local(c.init()[1]['nspace'], 0x40)[0],
}
errors = []
for call in (lambda: c.group_leave(5, []), lambda: c.error_string("x"), lambda: c.ft_agree("g", -1)):
    try:
        call()
    except (TypeError, OverflowError) as e:
        errors.append(type(e).__name__)
c.finalize(); c.finalize()
print(codes)
print(errors)
""", env=clean_env(TOPO)))
    codes, errors = [eval(l) for l in out.strip().splitlines()]
    bad, not_found, not_supported = -27, -46, -47
    assert codes == {
        "source": bad, "empty": bad, "no cpus": bad, "cpu text": bad,
        "cpu not int": bad, "cpu past max": bad, "dirs not list": bad,
        "dir not dict": bad, "no key": bad, "bad val_type": bad, "type mask 0": bad,
        "type as str": bad, "two origins": bad, "unknown origin": not_found,
        "required unknown": not_supported, "optional unknown": 0,
        "python3-pmix cpus": 0, "long group": bad, "empty group": bad,
        "unknown group": not_found, "bad scope": bad, "uint8 overflow": bad,
        "bad ref": bad, "bad mask": bad,
    }, codes
    assert errors == ["TypeError", "TypeError", "OverflowError"], errors


def test_constants_are_the_c_headers_values():
    out, _ = ok(python("""
import pmix
print(pmix.PMIX_SUCCESS, pmix.PMIX_ERR_INIT, pmix.PMIX_ERR_WOULD_BLOCK,
      pmix.PMIX_DEVICE_TYPE, pmix.PMIX_DEVICE_DIST_ORIGIN, pmix.PMIX_DEVTYPE_NETWORK,
      pmix.PMIX_UINT64, pmix.PMIX_STRING, pmix.PMIX_RANK_WILDCARD, pmix.PMIX_GROUP_LEFT,
      pmix.PMIXRS_FT_STATE_NULL | pmix.PMIXRS_FT_MOD_NEW, pmix.PMIXRS_FT_ERR_SIZE,
      len([n for n in dir(pmix) if n.startswith("PMIX")]) > 200)
"""))
    assert out.split() == [
        "0", "-31", "-15", "pmix.dev.type", "pmix.dev.dist.origin", "4", "15", "3",
        "4294967294", "-160", "12", "-3001", "True",
    ], out


def test_the_gil_is_released_while_a_call_blocks(pmix_run):
    # Rank 1 enters the fence 0.5 s late; meanwhile rank 0's other Python thread
    # keeps counting, which it cannot do if the fence holds the GIL.
    out, err = ok(under_pmix_run(pmix_run, 2, """
import threading, time
from pmix import *
c = PMIxClient()
rc, me = c.init()
n = [0]
stop = threading.Event()
def count():
    while not stop.is_set():
        n[0] += 1
        time.sleep(0.001)
if me['rank'] == 1:
    time.sleep(0.5)
t = threading.Thread(target=count); t.start()
before = n[0]
assert c.fence() == PMIX_SUCCESS
during = n[0] - before
stop.set(); t.join()
print(f"{me['rank']}: counted {'yes' if me['rank'] == 1 or during > 50 else during}")
c.finalize()
"""))
    assert rank_lines(out) == {0: ["counted yes"], 1: ["counted yes"]}, out + err


def test_put_commit_fence_get_events_and_groups_between_ranks(pmix_run):
    out, err = ok(under_pmix_run(pmix_run, 2, """
import threading
from pmix import *
c = PMIxClient()
rc, me = c.init()
r = me['rank']
import sys
lock = threading.Lock()
def say(*a):
    # One write a line, under a lock: the handler prints from the progress thread.
    with lock:
        sys.stdout.write(" ".join([f"{r}:", *map(str, a)]) + "\\n")
        sys.stdout.flush()
seen = threading.Event()
def handler(evhdlr, status, source, info, results):
    keys = sorted(i['key'] for i in info)
    say("event", status, source['rank'], 'pmix.evproc' in keys or 'x.note' in keys)
    seen.set()
    return (PMIX_EVENT_ACTION_COMPLETE, None)
rc, hid = c.register_event_handler([-1000], [], handler)
say("register", rc, hid >= 1)
say("put", c.put(PMIX_GLOBAL, "color", {'value': f"c{r}", 'val_type': PMIX_STRING}),
    c.put(PMIX_GLOBAL, "n", {'value': 40 + r, 'val_type': PMIX_UINT32}))
say("commit", c.commit())
say("fence", c.fence(None, [{'key': PMIX_COLLECT_DATA, 'value': True, 'val_type': PMIX_BOOL}]))
peer = {'nspace': me['nspace'], 'rank': 1 - r}
say("get", c.get(peer, "color"), c.get(peer, "n"))
say("size", c.get({'nspace': me['nspace'], 'rank': PMIX_RANK_WILDCARD}, PMIX_JOB_SIZE))
if r == 0:
    say("notify", c.notify_event(-1000, None, PMIX_RANGE_NAMESPACE,
                                 [{'key': 'x.note', 'value': 1, 'val_type': PMIX_INT}]))
else:
    say("waited", seen.wait(10))
peers = [{'nspace': me['nspace'], 'rank': x} for x in range(2)]
rc, res = c.group_construct("pg", peers, [{'key': PMIX_GROUP_ASSIGN_CONTEXT_ID, 'value': True, 'val_type': PMIX_BOOL}])
say("construct", rc, [i['key'] for i in res])
say("destruct", c.group_destruct("pg", []))
say("deregister", c.deregister_event_handler(hid))
say("finalize", c.finalize())
"""))
    by = rank_lines(out)
    events = {r: [l for l in by[r] if l.startswith("event ")] for r in (0, 1)}
    for r in (0, 1):
        # Events arrive whenever they do: checked apart.
        lines = [l for l in by[r] if not l.startswith("event ")]
        o = 1 - r
        assert lines[:6] == [
            "register 0 True",
            "put 0 0",
            "commit 0",
            "fence 0",
            f"get (0, {{'value': 'c{o}', 'val_type': 3}}) (0, {{'value': {40 + o}, 'val_type': 14}})",
            "size (0, {'value': 2, 'val_type': 14})",
        ], out + err
        assert ("notify 0" if r == 0 else "waited True") in lines, lines
        assert "construct 0 ['pmix.grp.ctxid']" in lines and "destruct 0" in lines
        assert lines[-2:] == ["deregister 0", "finalize 0"], lines
    # Rank 0's event reached rank 1 (and rank 0 itself: the namespace's range).
    assert events[1] == ["event -1000 0 True"], out
