"""Type stubs of the `pmix` module (pmix-rs): the PMIx standard's Python syntax over
the pmix-rs runtime. Every call returns a PMIX_* status (alone or first in a tuple);
a call made before `init` returns PMIX_ERR_INIT. Malformed data (a dictionary without
its 'key', a value its 'val_type' cannot hold, an empty cpuset) is
PMIX_ERR_BAD_PARAM; an argument of the wrong Python type where a `str` or `int` is
required raises TypeError (OverflowError for an int out of range)."""

from typing import Any, Callable, Dict, List, Optional, Tuple, Union

Info = Dict[str, Any]
"""{'key': str, 'value': Any, 'val_type': int, 'flags': int} ('val_type' inferred from
the Python type when absent; 'flags' optional: PMIX_INFO_REQD, ...)."""
Proc = Dict[str, Any]
"""{'nspace': str, 'rank': int}."""
Cpuset = Union[Dict[str, Any], str]
"""{'source': 'hwloc', 'cpus': [0, 1]}, or 'cpus' as "0-1" / "hwloc:0-1", or the
string "hwloc:0-1" itself."""
Distance = Dict[str, Any]
"""{'uuid': str, 'osname': str, 'type': int (a PMIX_DEVTYPE_* bit), 'mindist': int,
'maxdist': int}."""
Value = Dict[str, Any]
"""{'value': Any, 'val_type': int}: what `get` answers (and `put` takes)."""

__version__: str

class PMIxClient:
    """A PMIx client. Every PMIxClient is a view of the one library of the process: a
    second one made after an `init` sees it initialized."""

    def __init__(self) -> None: ...
    def init(self, keyvals: Optional[Union[List[Info], Dict[str, Any]]] = None) -> Tuple[int, Optional[Proc]]:
        """PMIx_Init: connects to the server the environment names (pmix-run, mpirun,
        srun), else a singleton. PMIX_HOSTNAME is used; other keys are ignored unless
        flagged PMIX_INFO_REQD (PMIX_ERR_NOT_SUPPORTED). Returns (rc, this process)."""
    def finalize(self, keyvals: Optional[List[Info]] = None) -> int:
        """PMIx_Finalize; the last one returns once every accepted callback has run."""
    def initialized(self) -> bool: ...
    def get_version(self) -> str: ...
    def error_string(self, status: int) -> str: ...
    def load_topology(self) -> int:
        """PMIx_Load_topology: PMIX_TOPOLOGY from the environment, else this machine."""
    def get_cpuset(self, ref: int = ...) -> Tuple[int, Optional[Dict[str, Any]]]:
        """PMIx_Get_cpuset (ref: PMIX_CPUBIND_PROCESS or PMIX_CPUBIND_THREAD)."""
    def parse_cpuset_string(self, s: str) -> Tuple[int, Optional[Dict[str, Any]]]: ...
    def compute_distances(self, pycpus: Optional[Cpuset] = None, pydirs: Optional[List[Info]] = None) -> Tuple[int, List[Distance]]:
        """PMIx_Compute_distances from pycpus (None: this process's binding) to the
        devices pydirs selects (PMIX_DEVICE_TYPE, PMIX_DEVICE_ID,
        PMIX_DEVICE_DIST_ORIGIN). PMIX_ERR_BAD_PARAM, PMIX_ERR_NOT_FOUND,
        PMIX_ERR_NOT_SUPPORTED (an unknown PMIX_INFO_REQD key), PMIX_ERR_UNREACH,
        PMIX_ERR_WOULD_BLOCK (in a callback)."""
    def compute_distances_nb(self, pycpus: Optional[Cpuset], pydirs: Optional[List[Info]], cbfunc: Callable[[int, List[Distance], Any], Any], cbdata: Any = None) -> int:
        """The non-blocking form: PMIX_SUCCESS once accepted; then, and only then,
        cbfunc(status, distances, cbdata) runs once on the progress thread."""
    def put(self, scope: int, key: Union[str, bytes], value: Any) -> int:
        """PMIx_Put; value is {'value': ..., 'val_type': ...} or a plain value."""
    def commit(self) -> int: ...
    def fence(self, peers: Optional[List[Proc]] = None, directives: Optional[List[Info]] = None) -> int:
        """PMIx_Fence over peers (None: the whole job)."""
    def get(self, proc: Optional[Proc], key: Union[str, bytes], directives: Optional[List[Info]] = None) -> Tuple[int, Optional[Value]]:
        """PMIx_Get of key from proc (None: this process)."""
    def register_event_handler(self, codes: Optional[List[int]], directives: Optional[List[Info]], cbfunc: Callable[[int, int, Proc, List[Info], List[Info]], Any]) -> Tuple[int, int]:
        """PMIx_Register_event_handler; cbfunc(evhdlr, status, source, info, results)
        runs on the progress thread and returns (status, results) or a status:
        PMIX_EVENT_ACTION_COMPLETE ends the chain. Returns (rc, id)."""
    def deregister_event_handler(self, id: int) -> int: ...
    def notify_event(self, status: int, source: Optional[Proc], range: int, directives: Optional[List[Info]]) -> int: ...
    def group_construct(self, grp: str, peers: List[Proc], directives: Optional[List[Info]]) -> Tuple[int, List[Info]]:
        """PMIx_Group_construct; results hold PMIX_GROUP_CONTEXT_ID when assigned."""
    def group_destruct(self, grp: str, directives: Optional[List[Info]] = None) -> int: ...
    def group_leave(self, grp: str, pyinfo: Optional[List[Info]] = None) -> int:
        """PMIx_Group_leave: leaves at once; the other members get PMIX_GROUP_LEFT."""
    def group_leave_nb(self, grp: str, pyinfo: Optional[List[Info]], cbfunc: Callable[[int, Any], Any], cbdata: Any = None) -> int:
        """The non-blocking form; cbfunc(status, cbdata) runs once on the progress
        thread if and only if this returns PMIX_SUCCESS."""
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

# Every integer and string #define of pmix_common.h and pmix_ft.h, for example:
PMIX_SUCCESS: int
PMIX_ERROR: int
PMIX_ERR_INIT: int
PMIX_ERR_BAD_PARAM: int
PMIX_ERR_NOT_FOUND: int
PMIX_ERR_NOT_SUPPORTED: int
PMIX_ERR_UNREACH: int
PMIX_ERR_WOULD_BLOCK: int
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
PMIX_EVENT_ACTION_COMPLETE: int
PMIXRS_FT_STATE_OK: int
PMIXRS_FT_STATE_FAILED: int
PMIXRS_FT_STATE_NULL: int
PMIXRS_FT_MOD_NEW: int
PMIXRS_FT_MOD_OLD: int
PMIXRS_FT_ERR_SIZE: int
PMIXRS_FT_ERR_PROC_FAILED: int
def __getattr__(name: str) -> Any: ...
