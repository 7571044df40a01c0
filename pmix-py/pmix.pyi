"""Type stubs of the `pmix` module (pmix-rs): python3-pmix 4.2.2's API (PMIxClient,
PMIxServer, PMIxTool, every PMIX_* constant) over the pmix-rs runtime, plus the PMIx
standard's `_nb` forms and the rank-state calls (`ft_*`).

Every call returns a PMIX_* status (alone or first in a tuple); a call made before
`init` returns PMIX_ERR_INIT. Malformed data (a dictionary without its 'key', a
value its 'val_type' cannot hold, an empty cpuset) is PMIX_ERR_BAD_PARAM; an
argument of the wrong Python type where a `str` or `int` is required raises
TypeError (OverflowError for an int out of range). Blocking calls release the GIL;
callbacks and server upcalls run on the library's threads with the GIL taken."""

from typing import Any, Callable, Dict, List, Optional, Tuple, Union

Info = Dict[str, Any]
"""{'key': str, 'value': Any, 'val_type': int, 'flags': int} ('val_type' inferred from
the Python type when absent; 'flags' optional: PMIX_INFO_REQD, ...). Values by type,
as python3-pmix: a byte object {'bytes': bytes, 'size': int}, a data array {'type':
int, 'array': list}, a timeval {'sec': int, 'usec': int}, a process a Proc, a process
info {'proc', 'hostname', 'executable', 'pid', 'exitcode', 'state'}, an envar
{'envar', 'value', 'separator'}."""
Infos = Optional[Union[List[Info], Dict[str, Any]]]
"""A list of infos (None: none); `init` also takes python3-pmix's {key: value}."""
Proc = Dict[str, Any]
"""{'nspace': str, 'rank': int}."""
Procs = Optional[List[Proc]]
"""A list of processes; None or [] is this job where python3-pmix says so (abort,
connect, disconnect, job_control, group_construct, group_invite)."""
Cpuset = Union[Dict[str, Any], str]
"""{'source': 'hwloc', 'cpus': [0, 1]}, or 'cpus' as "0-1" / "hwloc:0-1", or the
string "hwloc:0-1" itself."""
Distance = Dict[str, Any]
"""{'uuid': str, 'osname': str, 'type': int (a PMIX_DEVTYPE_* bit), 'mindist': int,
'maxdist': int}."""
Value = Dict[str, Any]
"""{'value': Any, 'val_type': int}: what `get` answers (and `put` takes)."""
Query = Dict[str, Any]
"""{'keys': [str], 'qualifiers': [Info]}."""
App = Dict[str, Any]
"""{'cmd': str, 'argv': [str] (absent: [cmd]), 'env': [str], 'cwd': str (absent: this
process's), 'maxprocs': int (absent: 1), 'info': [Info]}."""
Pdata = Dict[str, Any]
"""{'key': str} asked; found, it also holds 'proc' (the publisher), 'value' and
'val_type'."""
Key = Union[str, bytes]

__version__: str

class PMIxClient:
    """A PMIx client. Every PMIxClient is a view of the one library of the process: a
    second one made after an `init` sees it initialized."""

    def __init__(self) -> None: ...
    def init(self, keyvals: Infos = None) -> Tuple[int, Proc]:
        """PMIx_Init: connects to the server the environment names (pmix-run, mpirun,
        srun, a PMIxServer's setup_fork), else a singleton. PMIX_HOSTNAME and the
        server's address (PMIX_SERVER_URI, PMIX_SERVER_PIDINFO, ...) are used; other
        keys are ignored unless flagged PMIX_INFO_REQD (PMIX_ERR_NOT_SUPPORTED).
        Returns (rc, this process), the process {} on an error."""
    def finalize(self, keyvals: Infos = None) -> int:
        """PMIx_Finalize; the last one returns once every accepted callback has run."""
    def initialized(self) -> int: ...
    def get_version(self) -> bytes: ...
    def error_string(self, status: int) -> str: ...
    def progress(self) -> None:
        """PMIx_Progress: nothing to do (the library has its own progress thread)."""
    # Key-value exchange.
    def put(self, scope: int, key: Key, value: Any) -> int:
        """PMIx_Put; value is {'value': ..., 'val_type': ...} or a plain value."""
    def commit(self) -> int: ...
    def fence(self, peers: Procs = None, directives: Infos = None) -> int:
        """PMIx_Fence over peers (None: the whole job)."""
    def get(self, proc: Optional[Proc], key: Key, directives: Infos = None) -> Tuple[int, Optional[Value]]:
        """PMIx_Get of key from proc (None: this process)."""
    def store_internal(self, proc: Optional[Proc], key: Key, value: Any) -> int:
        """PMIx_Store_internal: kept in this process only."""
    def abort(self, status: int, msg: Optional[str] = None, peers: Procs = None) -> int:
        """PMIx_Abort of peers (None or []: this job)."""
    # Publish / lookup.
    def publish(self, dicts: Infos = None) -> int: ...
    def lookup(self, data: Optional[List[Pdata]], dicts: Infos = None) -> Tuple[int, Optional[List[Pdata]]]:
        """PMIx_Lookup of data's keys; each found dictionary gets 'proc', 'value' and
        'val_type' in place, and data is returned."""
    def unpublish(self, keys: Optional[List[Key]] = None, dicts: Infos = None) -> int:
        """PMIx_Unpublish of keys (None: all this process published)."""
    # Queries and job information.
    def query(self, queries: Optional[List[Query]]) -> Tuple[int, List[Info]]: ...
    def resolve_peers(self, node: Optional[str] = None, nspace: Optional[str] = None) -> Tuple[int, List[Proc]]: ...
    def resolve_nodes(self, nspace: Optional[str] = None) -> Tuple[int, Optional[str]]:
        """PMIx_Resolve_nodes: a comma-separated node list (None on an error)."""
    # Jobs.
    def spawn(self, job_info: Infos, apps: Optional[List[App]]) -> Tuple[int, Optional[str]]:
        """PMIx_Spawn: (rc, the new namespace or None)."""
    def connect(self, peers: Procs = None, info: Infos = None) -> int: ...
    def disconnect(self, peers: Procs = None, info: Infos = None) -> int: ...
    def log(self, data: Infos, directives: Infos = None) -> int:
        """PMIx_Log of PMIX_LOG_STDERR / PMIX_LOG_STDOUT / ... infos."""
    def job_control(self, targets: Procs, directives: Infos = None) -> Tuple[int, List[Info]]: ...
    def monitor(self, monitor: Union[List[Info], Info], error: int, directives: Infos = None) -> Tuple[int, List[Info]]:
        """PMIx_Process_monitor of monitor's (first) info."""
    def allocation_request(self, directive: int, info: Infos = None) -> Tuple[int, List[Info]]:
        """(PMIX_ERR_NOT_SUPPORTED, []): no server of ours allocates."""
    def get_credential(self, info: Infos = None) -> Tuple[int, Dict[str, Any]]:
        """(PMIX_ERR_NOT_SUPPORTED, {}): nothing issues credentials."""
    def validate_credential(self, cred: Any, info: Infos = None) -> Tuple[int, List[Info]]:
        """(PMIX_ERR_NOT_SUPPORTED, []): nothing validates credentials."""
    def fabric_register(self, dicts: Infos = None) -> Tuple[int, Optional[List[Info]]]:
        """(PMIX_SUCCESS, []): nothing is known of any fabric; a second registration on
        this object is (PMIX_ERR_RESOURCE_BUSY, None)."""
    def fabric_update(self) -> Tuple[int, Optional[List[Info]]]:
        """(PMIX_ERR_NOT_SUPPORTED, []); (PMIX_ERR_INIT, None) unregistered."""
    def fabric_deregister(self) -> int: ...
    # Events.
    def register_event_handler(self, codes: Optional[List[int]], directives: Infos, cbfunc: Callable[[int, int, Proc, List[Info], List[Info]], Any]) -> Tuple[int, int]:
        """PMIx_Register_event_handler; cbfunc(evhdlr, status, source, info, results)
        runs on the progress thread and returns (status, results) or a status:
        PMIX_EVENT_ACTION_COMPLETE ends the chain. Returns (rc, id)."""
    def deregister_event_handler(self, id: int) -> int: ...
    def notify_event(self, status: int, source: Optional[Proc], range: int, directives: Infos) -> int: ...
    # Groups.
    def group_construct(self, grp: str, peers: Procs, directives: Infos = None) -> Tuple[int, List[Info]]:
        """PMIx_Group_construct; results hold PMIX_GROUP_CONTEXT_ID (2**64 - 1 when none
        was assigned, as python3-pmix reports it)."""
    def group_destruct(self, grp: str, directives: Infos = None) -> int: ...
    def group_invite(self, grp: str, peers: Procs, info: Infos = None) -> Tuple[int, List[Info]]: ...
    def group_join(self, grp: str, leader: Optional[Proc], opt: int, info: Infos = None) -> Tuple[int, List[Info]]:
        """PMIx_Group_join with opt PMIX_GROUP_ACCEPT or PMIX_GROUP_DECLINE (leader
        None: answered to the whole session)."""
    def group_leave(self, grp: str, pyinfo: Infos = None) -> int:
        """PMIx_Group_leave: leaves at once; the other members get PMIX_GROUP_LEFT."""
    def group_leave_nb(self, grp: str, pyinfo: Infos, cbfunc: Callable[[int, Any], Any], cbdata: Any = None) -> int:
        """The non-blocking form; cbfunc(status, cbdata) runs once on the progress
        thread if and only if this returns PMIX_SUCCESS."""
    # Topology and distances.
    def load_topology(self) -> int:
        """PMIx_Load_topology: PMIX_TOPOLOGY from the environment, else this machine."""
    def get_cpuset(self, ref: int = ...) -> Tuple[int, Optional[Dict[str, Any]]]:
        """PMIx_Get_cpuset (ref: PMIX_CPUBIND_PROCESS or PMIX_CPUBIND_THREAD)."""
    def parse_cpuset_string(self, s: str) -> Tuple[int, Optional[Dict[str, Any]]]: ...
    def get_relative_locality(self, loc1: str, loc2: str) -> Tuple[int, List[int]]:
        """The PMIX_LOCALITY_* bits two PMIX_LOCALITY_STRINGs share."""
    def compute_distances(self, pycpus: Optional[Cpuset] = None, pydirs: Infos = None) -> Tuple[int, List[Distance]]:
        """PMIx_Compute_distances from pycpus (None: this process's binding) to the
        devices pydirs selects (PMIX_DEVICE_TYPE, PMIX_DEVICE_ID,
        PMIX_DEVICE_DIST_ORIGIN). PMIX_ERR_BAD_PARAM, PMIX_ERR_NOT_FOUND,
        PMIX_ERR_NOT_SUPPORTED (an unknown PMIX_INFO_REQD key), PMIX_ERR_UNREACH,
        PMIX_ERR_WOULD_BLOCK (in a callback)."""
    def compute_distances_nb(self, pycpus: Optional[Cpuset], pydirs: Infos, cbfunc: Callable[[int, List[Distance], Any], Any], cbdata: Any = None) -> int:
        """The non-blocking form: PMIX_SUCCESS once accepted; then, and only then,
        cbfunc(status, distances, cbdata) runs once on the progress thread."""
    # Names and texts (no init needed).
    def get_attribute_string(self, name: Key) -> str:
        """"PMIX_JOB_SIZE" -> "pmix.job.size"; an unknown name as given."""
    def get_attribute_name(self, key: Key) -> str:
        """"pmix.job.size" -> "PMIX_JOB_SIZE"; an unknown key as given."""
    def proc_state_string(self, state: int) -> str: ...
    def job_state_string(self, state: int) -> str: ...
    def link_state_string(self, state: int) -> str: ...
    def scope_string(self, scope: int) -> str: ...
    def persistence_string(self, persist: int) -> str: ...
    def data_range_string(self, range: int) -> str: ...
    def info_directives_string(self, directives: int) -> str: ...
    def data_type_string(self, type: int) -> str: ...
    def alloc_directive_string(self, directive: int) -> str: ...
    def iof_channel_string(self, channel: int) -> str: ...
    def device_type_string(self, type: int) -> str: ...
    # Rank-state tracking (pmix_ft.h): grp is this job's namespace or a PMIx group.
    def ft_validate_local(self, grp: str) -> Tuple[int, int, int]:
        """Local: (rc, num_failed, new_failures)."""
    def ft_validate_global(self, grp: str) -> Tuple[int, int, int]:
        """Collective (PMIX_ERR_WOULD_BLOCK in a callback): (rc, num_failed, new_failures)."""
    def ft_validate_global_count(self, grp: str, type: int) -> Tuple[int, int]: ...
    def ft_get_state_local(self, grp: str, type: int) -> Tuple[int, List[Dict[str, int]]]:
        """Local: [{'rank': int, 'state': PMIXRS_FT_STATE_* | PMIXRS_FT_MOD_*}]."""
    def ft_get_state_global(self, grp: str, type: int) -> Tuple[int, List[Dict[str, int]]]: ...
    def ft_get_num_state_local(self, grp: str, type: int) -> Tuple[int, int]: ...
    def ft_get_num_state_global(self, grp: str, type: int) -> Tuple[int, int]: ...
    def ft_get_failed(self, grp: str) -> Tuple[int, List[int]]: ...
    def ft_ack_failed(self, grp: str, n: int) -> Tuple[int, int]: ...
    def ft_get_acked(self, grp: str) -> Tuple[int, List[int]]: ...
    def ft_agree(self, grp: str, flag: int) -> Tuple[int, int]:
        """Collective: (PMIX_SUCCESS or PMIXRS_FT_ERR_PROC_FAILED, the AND of the flags)."""
    def ft_shrink(self, grp: str, newgrp: str) -> Tuple[int, int, int]:
        """Collective: (rc, new_rank, new_size); the survivors construct newgrp."""
    def ft_revoke(self, grp: str) -> int: ...
    def ft_is_revoked(self, grp: str) -> Tuple[int, bool]: ...

Upcall = Callable[..., Any]
"""A PMIxServer upcall: clientconnected(proc) / clientfinalized(proc) -> rc;
abort({'caller', 'status', 'msg'}) -> rc; fencenb({'procs', 'directives', 'data'}) ->
(rc, bytes); directmodex({'proc', 'directives'}) -> (rc, bytes);
publish({'proc', 'directives'}) -> rc; lookup({'proc', 'keys' (bytes), 'directives'})
-> (rc, [{'key', 'value', 'val_type'}]); unpublish({'proc', 'keys', 'directives'}) ->
rc; spawn({'proc', 'jobinfo', 'apps'}) -> (rc, nspace); notify_event({'code',
'source', 'range', 'directives'}) -> rc; log({'source', 'data', 'directives'}) -> rc."""

class PMIxServer(PMIxClient):
    """A PMIx server hosted by this Python program: our server, its upcalls the Python
    callables of init's map. One per process."""

    def __init__(self) -> None: ...
    def init(self, dicts: Infos = None, map: Optional[Dict[str, Upcall]] = None) -> int:  # type: ignore[override]
        """PMIx_server_init: starts the server; dicts configure it (PMIX_SERVER_TMPDIR,
        PMIX_SYSTEM_TMPDIR, PMIX_SERVER_NSPACE, PMIX_SERVER_RANK, PMIX_HOSTNAME,
        PMIX_SERVER_TOOL_SUPPORT). PMIX_ERR_INIT for an empty map."""
    def finalize(self, dicts: Infos = None) -> int: ...
    def generate_regex(self, hosts: Union[List[str], str]) -> Tuple[int, Optional[bytearray]]: ...
    def generate_ppn(self, procs: Union[List[str], str]) -> Tuple[int, Optional[bytearray]]: ...
    def generate_cpuset_string(self, cpuset: Any) -> Tuple[int, None]: ...
    def generate_locality_string(self, cpuset: Any) -> Tuple[int, None]: ...
    def register_nspace(self, ns: str, nlocalprocs: int, dicts: Infos = None) -> int:
        """PMIx_server_register_nspace: PMIX_OPERATION_SUCCEEDED once registered."""
    def deregister_nspace(self, ns: str) -> None: ...
    def register_resources(self, directives: Infos = None) -> int: ...
    def deregister_resources(self, directives: Infos = None) -> int: ...
    def register_client(self, proc: Proc, uid: int, gid: int) -> int: ...
    def deregister_client(self, proc: Proc) -> int: ...
    def setup_fork(self, proc: Proc, env: Dict[str, str]) -> int:
        """Adds to env what the client needs to reach this server."""
    def dmodex_request(self, proc: Proc, dataout: Any = None) -> Tuple[int, Tuple[Optional[bytes], int]]: ...
    def setup_application(self, ns: str, dicts: Infos = None) -> Tuple[int, List[Info]]: ...
    def setup_local_support(self, ns: str, ilist: Infos = None) -> int: ...
    def register_attributes(self, function: str, attrs: List[str]) -> int: ...
    def collect_inventory(self, directives: Infos = None) -> Tuple[int, List[Info]]: ...
    def deliver_inventory(self, info: Infos = None, directives: Infos = None) -> int: ...
    def iof_deliver(self, source: Proc, channel: int, data: Any, directives: Infos = None) -> int: ...
    def define_process_set(self, members: List[Proc], name: str) -> int: ...
    def delete_process_set(self, name: str) -> int: ...

class PMIxTool(PMIxServer):
    """A PMIx tool (PMIx_tool_init), connected to one server from init to finalize."""

    def __init__(self) -> None: ...
    def init(self, dicts: Infos = None) -> Tuple[int, Proc]:  # type: ignore[override]
        """PMIx_tool_init: to the server PMIX_SERVER_URI, PMIX_SERVER_PIDINFO or
        PMIX_SERVER_NSPACE names (or a PMIX_SERVER_URI* variable); alone with
        PMIX_TOOL_DO_NOT_CONNECT. The process is {'nspace': 'UNASSIGNED', 'rank':
        PMIX_RANK_UNDEF} on an error."""
    def finalize(self, dicts: Infos = None) -> int: ...
    def disconnect(self, server: Optional[Union[Proc, List[Proc]]] = None, info: Infos = None) -> int:  # type: ignore[override]
        """PMIx_tool_disconnect from server (a Proc); a list of processes: as
        PMIxClient.disconnect."""
    def attach_to_server(self, dicts: Infos = None) -> Tuple[int, Proc, Proc]: ...
    def get_servers(self) -> Tuple[int, List[Proc]]: ...
    def set_server(self, server: Proc, info: Infos = None) -> int: ...
    def iof_pull(self, procs: Procs, channel: int, directives: Infos = None, hdlr: Optional[Callable[..., Any]] = None) -> Tuple[int, int]: ...
    def iof_deregister(self, id: int, directives: Infos = None) -> int: ...
    def iof_push(self, targets: Procs, data: Any = None, directives: Infos = None) -> int: ...

# Every constant python3-pmix defines (the #defines and enumerators of OpenPMIx
# 4.2.2's pmix_common.h), and those of pmix_ft.h, for example:
PMIX_SUCCESS: int
PMIX_ERROR: int
PMIX_ERR_INIT: int
PMIX_ERR_BAD_PARAM: int
PMIX_ERR_NOT_FOUND: int
PMIX_ERR_NOT_SUPPORTED: int
PMIX_ERR_UNREACH: int
PMIX_ERR_WOULD_BLOCK: int
PMIX_OPERATION_SUCCEEDED: int
PMIX_DEVICE_TYPE: str
PMIX_DEVICE_ID: str
PMIX_DEVICE_DIST_ORIGIN: str
PMIX_DEVTYPE_BLOCK: int
PMIX_DEVTYPE_GPU: int
PMIX_DEVTYPE_NETWORK: int
PMIX_DEVTYPE_OPENFABRICS: int
PMIX_DEVTYPE_DMA: int
PMIX_DEVTYPE_COPROC: int
PMIX_UINT32: int
PMIX_UINT64: int
PMIX_STRING: int
PMIX_BOOL: int
PMIX_GLOBAL: int
PMIX_RANK_WILDCARD: int
PMIX_GROUP_LEFT: int
PMIX_GROUP_ACCEPT: int
PMIX_GROUP_DECLINE: int
PMIX_EVENT_ACTION_COMPLETE: int
PMIXRS_FT_STATE_OK: int
PMIXRS_FT_STATE_FAILED: int
PMIXRS_FT_STATE_NULL: int
PMIXRS_FT_MOD_NEW: int
PMIXRS_FT_MOD_OLD: int
PMIXRS_FT_ERR_SIZE: int
PMIXRS_FT_ERR_PROC_FAILED: int
def __getattr__(name: str) -> Any: ...
