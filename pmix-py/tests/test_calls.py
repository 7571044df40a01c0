"""Our PMIxClient's calls beyond python3-pmix's answers (issue 37): where ours
answers what python3-pmix cannot (store_internal, which aborts python3-pmix; values
of every type both ways; get_relative_locality, which libpmix2 answers
PMIX_ERR_TAKE_NEXT_OPTION), lookup of several keys, the rules every call follows
(PMIX_ERR_INIT before init, the texts without init), and a tool alone."""

from conftest import clean_env, python, rank_lines, under_pmix_run


def ok(code_out_err):
    code, out, err = code_out_err
    assert code == 0, f"exit {code}\nstdout:\n{out}\nstderr:\n{err}"
    return out, err


def test_every_call_needing_the_library_returns_pmix_err_init_before_init():
    out, _ = ok(python("""
from pmix import *
c = PMIxClient()
me = {'nspace': 'x', 'rank': 0}
got = {
    'abort': c.abort(1, "m", None),
    'store_internal': c.store_internal(None, "k", {'value': 1, 'val_type': PMIX_INT}),
    'publish': c.publish([{'key': 'k', 'value': 1, 'val_type': PMIX_INT}]),
    'lookup': c.lookup([{'key': 'k'}], [])[0],
    'unpublish': c.unpublish(['k'], []),
    'query': c.query([{'keys': [PMIX_QUERY_NAMESPACES], 'qualifiers': []}])[0],
    'spawn': c.spawn([], [{'cmd': '/bin/true'}])[0],
    'connect': c.connect([me], []),
    'disconnect': c.disconnect([me], []),
    'resolve_peers': c.resolve_peers(None, 'x')[0],
    'resolve_nodes': c.resolve_nodes('x')[0],
    'log': c.log([{'key': PMIX_LOG_STDERR, 'value': 'x', 'val_type': PMIX_STRING}], []),
    'job_control': c.job_control([me], [])[0],
    'monitor': c.monitor([{'key': PMIX_MONITOR_HEARTBEAT, 'value': True, 'val_type': PMIX_BOOL}], 0, [])[0],
    'group_invite': c.group_invite("g", [me], [])[0],
    'group_join': c.group_join("g", me, PMIX_GROUP_ACCEPT, [])[0],
    'get_credential': c.get_credential([])[0],
    'validate_credential': c.validate_credential({'bytes': b'x', 'size': 1}, [])[0],
    'allocation_request': c.allocation_request(PMIX_ALLOC_NEW, [])[0],
    'fabric_register': c.fabric_register([])[0],
}
print({k: v for k, v in got.items() if v != PMIX_ERR_INIT})
# Without init: the texts, progress, locality.
print(c.proc_state_string(5), c.get_attribute_string("PMIX_JOB_SIZE"),
      c.get_attribute_name(PMIX_JOB_SIZE), c.progress(), c.fabric_update(), c.fabric_deregister())
print(c.get_relative_locality("hwloc:SK0:L30:L20:L10:CR0:HT0:NM0", "hwloc:SK0:L30:L20:L10:CR1:HT2:NM0"))
print(c.get_relative_locality("SK0", "hwloc:SK0"))
"""))
    lines = out.splitlines()
    assert lines[0] == "{}", out
    assert lines[1] == "PROC EXECUTING pmix.job.size PMIX_JOB_SIZE None (-31, None) -31", out
    # L1, L2, L3, package, NUMA and the node (python3-pmix's order); not the core
    # or the thread.
    assert lines[2] == "(0, [4, 8, 16, 32, 64, 16384])", out
    assert lines[3] == "(-27, [])", out


def test_values_of_every_type_go_through_store_internal_and_get_alike():
    out, _ = ok(python("""
from pmix import *
c = PMIxClient()
rc, me = c.init()
values = [
    (PMIX_BOOL, True), (PMIX_BOOL, 'false'), (PMIX_BYTE, 7), (PMIX_STRING, "text"),
    (PMIX_SIZE, 2**40), (PMIX_PID, 42), (PMIX_INT8, -8), (PMIX_INT64, -2**40),
    (PMIX_UINT16, 16), (PMIX_UINT64, 2**50), (PMIX_FLOAT, 0.5), (PMIX_DOUBLE, 2.5),
    (PMIX_TIMEVAL, {'sec': 3, 'usec': 4}), (PMIX_TIME, 99), (PMIX_STATUS, -27),
    (PMIX_PROC_RANK, 3), (PMIX_PROC, {'nspace': 'other', 'rank': 2}),
    (PMIX_BYTE_OBJECT, {'bytes': b'\\x00\\x01', 'size': 2}), (PMIX_PERSIST, 2),
    (PMIX_SCOPE, 3), (PMIX_DATA_RANGE, 4), (PMIX_PROC_STATE, 5),
    (PMIX_ALLOC_DIRECTIVE, 1), (PMIX_JOB_STATE, 3), (PMIX_LINK_STATE, 2),
    (PMIX_ENVAR, {'envar': 'A', 'value': 'b', 'separator': ':'}),
    (PMIX_PROC_INFO, {'proc': {'nspace': 'n', 'rank': 1}, 'hostname': 'h', 'executable': 'e', 'pid': 9, 'exitcode': 0, 'state': 5}),
    (PMIX_DATA_ARRAY, {'type': PMIX_UINT32, 'array': [1, 2, 3]}),
    (PMIX_DATA_ARRAY, {'type': PMIX_INFO, 'array': [{'key': 'a.b', 'value': 'c', 'val_type': PMIX_STRING}]}),
    (PMIX_REGEX, b'pmix[node[1:1-2]]'),
]
for i, (t, v) in enumerate(values):
    rc = c.store_internal(None, f"k{i}", {'value': v, 'val_type': t})
    print(i, rc, c.get(None, f"k{i}")[1])
print("bad", c.store_internal(None, "kb", {'value': 'x', 'val_type': PMIX_UINT8}), c.store_internal(None, "kb", {'value': 1, 'val_type': 9999}))
print("plain", c.store_internal(me, "kp", 5), c.get(me, "kp"))
c.finalize()
"""))
    lines = out.splitlines()
    assert lines[:5] == [
        "0 0 {'value': True, 'val_type': 1}",
        "1 0 {'value': False, 'val_type': 1}",
        "2 0 {'value': 7, 'val_type': 2}",
        "3 0 {'value': 'text', 'val_type': 3}",
        "4 0 {'value': 1099511627776, 'val_type': 4}",
    ], out
    assert "12 0 {'value': {'sec': 3, 'usec': 4}, 'val_type': 18}" in lines, out
    assert "17 0 {'value': {'bytes': b'\\x00\\x01', 'size': 2}, 'val_type': 27}" in lines, out
    assert "18 0 {'value': 2, 'val_type': 30}" in lines and "20 0 {'value': 4, 'val_type': 33}" in lines, out
    assert "25 0 {'value': {'envar': 'A', 'value': 'b', 'separator': 58}, 'val_type': 46}" in lines, out
    assert ("26 0 {'value': {'proc': {'nspace': 'n', 'rank': 1}, 'hostname': 'h', 'executable': 'e', "
            "'pid': 9, 'exitcode': 0, 'state': 5}, 'val_type': 38}") in lines, out
    assert "27 0 {'value': {'type': 14, 'array': [1, 2, 3]}, 'val_type': 39}" in lines, out
    assert ("28 0 {'value': {'type': 24, 'array': [{'key': 'a.b', 'flags': 0, 'value': 'c', "
            "'val_type': 3}]}, 'val_type': 39}") in lines, out
    assert "29 0 {'value': b'pmix[node[1:1-2]]', 'val_type': 49}" in lines, out
    assert "bad -27 -27" in lines, out
    assert "plain 0 (0, {'value': 5, 'val_type': 6})" in lines, out


def test_lookup_of_several_keys_fills_each_found_dictionary_in_place(pmix_run):
    code, out, err = under_pmix_run(pmix_run, 2, """
from pmix import *
c = PMIxClient()
rc, me = c.init()
r = me['rank']
if r == 0:
    c.publish([{'key': 'a.k', 'value': 1, 'val_type': PMIX_INT}, {'key': 'b.k', 'value': 'two', 'val_type': PMIX_STRING}])
c.fence()
if r == 1:
    data = [{'key': 'a.k'}, {'key': 'nope'}, {'key': 'b.k'}]
    rc, back = c.lookup(data, [])
    print(f"{r}: {rc} {back is data} {[sorted(d) for d in data]} {[d.get('value') for d in data]}")
c.fence()
c.finalize()
""")
    assert code == 0, out + err
    assert rank_lines(out)[1] == [
        "0 True [['key', 'proc', 'val_type', 'value'], ['key'], ['key', 'proc', 'val_type', 'value']]"
        " [1, None, 'two']"
    ], out + err


def test_a_tool_alone_has_no_server_and_answers_the_tool_calls():
    out, _ = ok(python("""
from pmix import *
t = PMIxTool()
print(isinstance(t, PMIxServer), isinstance(t, PMIxClient))
rc, me = t.init([{'key': PMIX_TOOL_DO_NOT_CONNECT, 'value': True, 'val_type': PMIX_BOOL}])
print(rc, me['rank'])
print(t.get_servers(), t.set_server({'nspace': 'x', 'rank': 0}, []), t.disconnect({'nspace': 'x', 'rank': 0}))
print(t.attach_to_server([])[0], t.attach_to_server([{'key': PMIX_SERVER_URI, 'value': 'x;tcp4://127.0.0.1:1', 'val_type': PMIX_STRING}])[0])
print(t.iof_pull([], PMIX_FWD_STDOUT_CHANNEL, [], None), t.iof_deregister(0, []), t.iof_push([], None, []), t.iof_push([], {'bytes': b'x', 'size': 1}, []))
print(t.finalize())
"""))
    assert out.splitlines() == [
        "True True",
        "0 0",
        "(0, []) -25 -46",
        "-27 -25",
        "(-25, -1) -47 -157 -47",
        "0",
    ], out
