//! The bodies of `PMIxClient`'s calls beyond the key-value exchange, events, groups
//! and distances (which `client.rs` holds): publish / lookup / unpublish, queries,
//! spawn, connect / disconnect, abort, the internal store, peers and nodes, log,
//! job control, monitoring, group invite / join, relative locality, and the calls no
//! server of ours serves (credentials, allocations, fabrics).
//!
//! Each takes python3-pmix's arguments and returns its shapes: a status, or a tuple
//! led by one. Where python3-pmix passes "none" as this job (`peers` empty or
//! `None` for abort, connect, disconnect and job control), so do these. Blocking
//! calls release the GIL while they wait. The unserved calls answer what libpmix2
//! 4.2.2 answers under the same servers (as the C library does,
//! `pmix-ffi/src/client/unserved.rs`): `PMIX_ERR_NOT_SUPPORTED` for credentials,
//! allocations and fabric updates, an empty success for a fabric registration.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use pmix::{Mode, Pmix, PmixError};
use pmix_core::Status;

use crate::convert::*;

/// The status of a runtime error.
pub(crate) fn rc(e: &pmix::Error) -> i32 {
    e.status().0
}

/// The process-wide instance, or the status a call gets without one.
pub(crate) fn instance() -> Conv<Pmix> {
    pmix::global::get().map_err(|e| rc(&e))
}

/// The instance, admitted for `call` in `mode` (`PMIX_ERR_INIT`,
/// `PMIX_ERR_WOULD_BLOCK`, … otherwise).
pub(crate) fn admitted(call: &'static str, mode: Mode) -> Conv<Pmix> {
    let p = instance()?;
    p.admit(call, mode).map_err(|e| rc(&e))?;
    Ok(p)
}

/// `Ok(())` as `PMIX_SUCCESS`, an error as its status.
pub(crate) fn status(r: Result<(), pmix::Error>) -> i32 {
    match r {
        Ok(()) => Status::SUCCESS.0,
        Err(e) => rc(&e),
    }
}

/// A status, whichever way it came.
pub(crate) fn either(r: Conv<i32>) -> i32 {
    r.unwrap_or_else(|s| s)
}

/// Runs a Python callback on a library thread: takes the GIL, calls `f`, and
/// prints (never propagates) what it raises.
pub(crate) fn run_callback(f: impl for<'py> FnOnce(Python<'py>) -> PyResult<()>) {
    Python::attach(|py| {
        if let Err(e) = f(py) {
            e.print(py);
        }
    });
}

/// This process's namespace.
fn my_nspace(p: &Pmix) -> String {
    p.proc_id().nspace.to_string()
}

/// `(rc, list)` from a result whose success `ok` makes the list; an empty list on
/// an error.
fn listed<'py, T>(
    py: Python<'py>,
    r: Conv<T>,
    ok: impl FnOnce(T) -> PyResult<Bound<'py, PyList>>,
) -> PyResult<(i32, Bound<'py, PyList>)> {
    match r {
        Ok(v) => Ok((Status::SUCCESS.0, ok(v)?)),
        Err(s) => Ok((s, PyList::empty(py))),
    }
}

/// `abort(status, msg, peers)`: `PMIx_Abort` of `peers` (none: this job).
pub(crate) fn abort(
    py: Python<'_>,
    code: i64,
    msg: Option<&Bound<'_, PyAny>>,
    peers: Option<&Bound<'_, PyAny>>,
) -> i32 {
    either((|| {
        let p = admitted("PMIx_Abort", Mode::Blocking)?;
        let code = i32::try_from(code).map_err(|_| BAD_PARAM)?;
        let msg = opt_text(msg)?;
        let procs = procs_or_job(peers, &my_nspace(&p))?;
        let client = p.client().ok_or(Status::ERR_UNREACH.0)?;
        Ok(status(
            py.detach(|| client.abort(code, msg.as_deref(), &procs)),
        ))
    })())
}

/// `store_internal(proc, key, value)`: `PMIx_Store_internal` for `proc` (`None`:
/// this process).
pub(crate) fn store_internal(
    proc: Option<&Bound<'_, PyAny>>,
    key: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
) -> i32 {
    either((|| {
        let p = instance()?;
        let target = match proc.filter(|x| !x.is_none()) {
            Some(x) => proc_from_py(x)?,
            None => pmix::wire::Proc::from(p.proc_id()),
        };
        let key = key_text(key)?;
        let v = value_arg(value)?;
        let ns = target.nspace.as_str().unwrap_or_default();
        Ok(status(p.store_internal(ns, target.rank.0, &key, v)))
    })())
}

/// `publish(dicts)`: `PMIx_Publish`.
pub(crate) fn publish(py: Python<'_>, dicts: Option<&Bound<'_, PyAny>>) -> i32 {
    either((|| {
        let (p, info) = (instance()?, infos_from_py(dicts)?);
        Ok(status(py.detach(|| p.publish(&info))))
    })())
}

/// `unpublish(keys, dicts)`: `PMIx_Unpublish` of `keys` (none: everything this
/// process published).
pub(crate) fn unpublish(
    py: Python<'_>,
    keys: Option<&Bound<'_, PyAny>>,
    dicts: Option<&Bound<'_, PyAny>>,
) -> i32 {
    either((|| {
        let (p, keys, info) = (instance()?, texts(keys)?, infos_from_py(dicts)?);
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        Ok(status(py.detach(|| p.unpublish(&keys, &info))))
    })())
}

/// `lookup(data, dicts) -> (rc, data)`: `PMIx_Lookup` of the keys of `data` (a list
/// of `{'key': …}`); each dictionary whose key was found gets its `'proc'`,
/// `'value'` and `'val_type'`, in place, and the list is returned.
pub(crate) fn lookup<'py>(
    py: Python<'py>,
    data: Option<&Bound<'py, PyAny>>,
    dicts: Option<&Bound<'py, PyAny>>,
) -> PyResult<(i32, Bound<'py, PyAny>)> {
    let given = data.cloned().unwrap_or_else(|| py.None().into_bound(py));
    let args = (|| {
        let p = instance()?;
        let entries = seq(data)?;
        let mut keys = Vec::with_capacity(entries.len());
        for e in &entries {
            let d = e.cast::<PyDict>().map_err(|_| BAD_PARAM)?;
            keys.push(key_text(&item(d, "key").ok_or(BAD_PARAM)?)?);
        }
        Ok((p, entries, keys, infos_from_py(dicts)?))
    })();
    let (p, entries, keys, info) = match args {
        Ok(a) => a,
        Err(s) => return Ok((s, given)),
    };
    let found = py.detach(|| {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        p.lookup(&keys, &info)
    });
    match found {
        Ok(found) => {
            for pd in &found {
                let Some(i) = keys.iter().position(|k| k.as_bytes() == pd.key.as_bytes()) else {
                    continue;
                };
                let d = entries[i].cast::<PyDict>()?;
                d.set_item("proc", proc_to_py(py, &pd.proc)?)?;
                d.set_item("value", value_to_py(py, &pd.value)?)?;
                d.set_item("val_type", type_code(&pd.value))?;
            }
            Ok((Status::SUCCESS.0, given))
        }
        Err(e) => Ok((rc(&e), given)),
    }
}

/// `query(queries) -> (rc, [info])`: `PMIx_Query_info`.
pub(crate) fn query<'py>(
    py: Python<'py>,
    queries: Option<&Bound<'py, PyAny>>,
) -> PyResult<(i32, Bound<'py, PyList>)> {
    let r = (|| {
        let (p, q) = (instance()?, queries_from_py(queries)?);
        py.detach(|| p.query_info(&q)).map_err(|e| rc(&e))
    })();
    listed(py, r, |infos| infos_to_py(py, &infos))
}

/// `spawn(job_info, apps) -> (rc, nspace)`: `PMIx_Spawn`; the namespace is `None` on
/// an error.
pub(crate) fn spawn(
    py: Python<'_>,
    job_info: Option<&Bound<'_, PyAny>>,
    apps: Option<&Bound<'_, PyAny>>,
) -> (i32, Option<String>) {
    let r = (|| {
        let apps = apps_from_py(apps)?;
        if apps.is_empty() {
            return Err(BAD_PARAM);
        }
        let (p, info) = (instance()?, infos_from_py(job_info)?);
        py.detach(|| p.spawn(&info, &apps)).map_err(|e| rc(&e))
    })();
    match r {
        Ok(ns) => (Status::SUCCESS.0, Some(ns)),
        Err(s) => (s, None),
    }
}

/// `connect(peers, info)` / `disconnect(peers, info)`: `PMIx_Connect` /
/// `PMIx_Disconnect` with `peers` (none: this job).
pub(crate) fn connect(
    py: Python<'_>,
    connect: bool,
    peers: Option<&Bound<'_, PyAny>>,
    info: Option<&Bound<'_, PyAny>>,
) -> i32 {
    either((|| {
        let p = instance()?;
        let procs = procs_or_job(peers, &my_nspace(&p))?;
        let info = infos_from_py(info)?;
        Ok(status(py.detach(|| p.connect(connect, &procs, &info))))
    })())
}

/// `resolve_peers(node, nspace) -> (rc, [proc])`: `PMIx_Resolve_peers` (`None` or
/// empty: any node, every namespace).
pub(crate) fn resolve_peers<'py>(
    py: Python<'py>,
    node: Option<&Bound<'py, PyAny>>,
    nspace: Option<&Bound<'py, PyAny>>,
) -> PyResult<(i32, Bound<'py, PyList>)> {
    let r = (|| {
        let p = instance()?;
        let node = opt_text(node)?.filter(|n| !n.is_empty());
        let ns = opt_text(nspace)?.filter(|n| !n.is_empty());
        py.detach(|| p.resolve_peers(node.as_deref(), ns.as_deref()))
            .map_err(|e| rc(&e))
    })();
    listed(py, r, |procs| procs_to_py(py, &procs))
}

/// `resolve_nodes(nspace) -> (rc, nodes)`: `PMIx_Resolve_nodes`, a comma-separated
/// list; `None` on an error.
pub(crate) fn resolve_nodes(
    py: Python<'_>,
    nspace: Option<&Bound<'_, PyAny>>,
) -> (i32, Option<String>) {
    let r = (|| {
        let p = instance()?;
        let ns = opt_text(nspace)?.filter(|n| !n.is_empty());
        py.detach(|| p.resolve_nodes(ns.as_deref()))
            .map_err(|e| rc(&e))
    })();
    match r {
        Ok(n) => (Status::SUCCESS.0, Some(n)),
        Err(s) => (s, None),
    }
}

/// `log(data, directives)`: `PMIx_Log`.
pub(crate) fn log(
    py: Python<'_>,
    data: Option<&Bound<'_, PyAny>>,
    directives: Option<&Bound<'_, PyAny>>,
) -> i32 {
    either((|| {
        let (p, data, dirs) = (
            instance()?,
            infos_from_py(data)?,
            infos_from_py(directives)?,
        );
        Ok(status(py.detach(|| p.log(&data, &dirs))))
    })())
}

/// `job_control(targets, directives) -> (rc, [info])`: `PMIx_Job_control` of
/// `targets` (none: this job).
pub(crate) fn job_control<'py>(
    py: Python<'py>,
    targets: Option<&Bound<'py, PyAny>>,
    directives: Option<&Bound<'py, PyAny>>,
) -> PyResult<(i32, Bound<'py, PyList>)> {
    let r = (|| {
        let p = instance()?;
        let targets = procs_or_job(targets, &my_nspace(&p))?;
        let dirs = infos_from_py(directives)?;
        py.detach(|| p.job_control(&targets, &dirs))
            .map_err(|e| rc(&e))
    })();
    listed(py, r, |infos| infos_to_py(py, &infos))
}

/// `monitor(monitor, error, directives) -> (rc, [info])`: `PMIx_Process_monitor` of
/// the first info of `monitor` (a list, as python3-pmix takes it, or one info).
pub(crate) fn monitor<'py>(
    py: Python<'py>,
    monitor: &Bound<'py, PyAny>,
    error: i64,
    directives: Option<&Bound<'py, PyAny>>,
) -> PyResult<(i32, Bound<'py, PyList>)> {
    let r = (|| {
        let p = instance()?;
        let mon = match monitor.cast::<PyDict>() {
            Ok(_) => info_from_py(monitor)?,
            Err(_) => infos_from_py(Some(monitor))?
                .into_iter()
                .next()
                .ok_or(BAD_PARAM)?,
        };
        let error = i32::try_from(error).map_err(|_| BAD_PARAM)?;
        let dirs = infos_from_py(directives)?;
        py.detach(|| p.process_monitor(&mon, error, &dirs))
            .map_err(|e| rc(&e))
    })();
    listed(py, r, |infos| infos_to_py(py, &infos))
}

/// `group_invite(grp, peers, info) -> (rc, [info])`: `PMIx_Group_invite`; no
/// results (as libpmix2's).
pub(crate) fn group_invite<'py>(
    py: Python<'py>,
    grp: &str,
    peers: Option<&Bound<'py, PyAny>>,
    info: Option<&Bound<'py, PyAny>>,
) -> PyResult<(i32, Bound<'py, PyList>)> {
    let r = (|| {
        let p = instance()?;
        let procs = procs_or_job(peers, &my_nspace(&p))?;
        let info = infos_from_py(info)?;
        py.detach(|| p.group_invite(grp, &procs, &info))
            .map_err(|e| rc(&e))
    })();
    listed(py, r, |_| Ok(PyList::empty(py)))
}

/// `group_join(grp, leader, opt, info) -> (rc, [info])`: `PMIx_Group_join`,
/// accepting (`PMIX_GROUP_ACCEPT`) or declining the invitation of `leader` (`None`:
/// answered to the whole session, as the C call's NULL leader).
pub(crate) fn group_join<'py>(
    py: Python<'py>,
    grp: &str,
    leader: Option<&Bound<'py, PyAny>>,
    opt: i64,
    info: Option<&Bound<'py, PyAny>>,
) -> PyResult<(i32, Bound<'py, PyList>)> {
    let r = (|| {
        let p = instance()?;
        let leader = leader
            .filter(|l| !l.is_none())
            .map(proc_from_py)
            .transpose()?;
        let accept = match opt {
            0 => false,
            1 => true,
            _ => return Err(BAD_PARAM),
        };
        let info = infos_from_py(info)?;
        py.detach(|| p.group_join(grp, leader.as_ref(), accept, &info))
            .map_err(|e| rc(&e))
    })();
    listed(py, r, |()| Ok(PyList::empty(py)))
}

/// The `PMIX_LOCALITY_*` bits python3-pmix lists, in its order.
const LOCALITY_BITS: [u16; 9] = [
    0x8000, // NONLOCAL
    0x0001, // SHARE_HWTHREAD
    0x0002, // SHARE_CORE
    0x0004, // SHARE_L1CACHE
    0x0008, // SHARE_L2CACHE
    0x0010, // SHARE_L3CACHE
    0x0020, // SHARE_PACKAGE
    0x0040, // SHARE_NUMA
    0x4000, // SHARE_NODE
];

/// `get_relative_locality(loc1, loc2) -> (rc, [bit])`: what the processes of two
/// locality strings share (`pmix_core::locality`), as the list of
/// `PMIX_LOCALITY_*` bits python3-pmix makes (`[PMIX_LOCALITY_NONLOCAL]` for none).
/// libpmix2 4.2.2 computes them but returns `PMIX_ERR_TAKE_NEXT_OPTION` and so
/// python3-pmix an empty list; this returns `PMIX_SUCCESS` with the bits, as the C
/// library does.
pub(crate) fn relative_locality<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<(i32, Bound<'py, PyList>)> {
    let r = (|| {
        let (a, b) = (text(a)?, text(b)?);
        pmix_core::locality::relative_locality(&a, &b)
            .map_err(|e| pmix_core::PmixError::status(&e).0)
    })();
    listed(py, r, |loc| {
        let mut bits: Vec<u16> = LOCALITY_BITS
            .iter()
            .copied()
            .filter(|b| loc.0 & b != 0)
            .collect();
        if bits.is_empty() {
            bits.push(0x8000);
        }
        PyList::new(py, bits)
    })
}

/// `get_credential(info) -> (rc, {})`: no security plugin of ours issues
/// credentials: `PMIX_ERR_NOT_SUPPORTED` and an empty dictionary (python3-pmix's
/// answer under our server and `mpirun`'s); a credential would be `{'bytes':
/// bytearray, 'size': int}`.
pub(crate) fn get_credential<'py>(
    py: Python<'py>,
    info: Option<&Bound<'py, PyAny>>,
) -> (i32, Bound<'py, PyDict>) {
    let r = (|| {
        admitted("PMIx_Get_credential", Mode::Blocking)?;
        infos_from_py(info)?;
        Err::<(), i32>(Status::ERR_NOT_SUPPORTED.0)
    })();
    (r.err().unwrap_or(Status::SUCCESS.0), PyDict::new(py))
}

/// `validate_credential(cred, info) -> (rc, [info])`: nothing validates
/// credentials: `PMIX_ERR_NOT_SUPPORTED`.
pub(crate) fn validate_credential<'py>(
    py: Python<'py>,
    cred: &Bound<'py, PyAny>,
    info: Option<&Bound<'py, PyAny>>,
) -> (i32, Bound<'py, PyList>) {
    let r = (|| {
        admitted("PMIx_Validate_credential", Mode::Blocking)?;
        byte_object(cred)?;
        infos_from_py(info)?;
        Err::<(), i32>(Status::ERR_NOT_SUPPORTED.0)
    })();
    (r.err().unwrap_or(Status::SUCCESS.0), PyList::empty(py))
}

/// `allocation_request(directive, info) -> (rc, [info])`: no server of ours
/// allocates: `PMIX_ERR_NOT_SUPPORTED`.
pub(crate) fn allocation_request<'py>(
    py: Python<'py>,
    directive: i64,
    info: Option<&Bound<'py, PyAny>>,
) -> (i32, Bound<'py, PyList>) {
    let r = (|| {
        admitted("PMIx_Allocation_request", Mode::Blocking)?;
        u8::try_from(directive).map_err(|_| BAD_PARAM)?;
        infos_from_py(info)?;
        Err::<(), i32>(Status::ERR_NOT_SUPPORTED.0)
    })();
    (r.err().unwrap_or(Status::SUCCESS.0), PyList::empty(py))
}

/// `fabric_register(dicts)`: the registration succeeds with nothing known of any
/// fabric (`(PMIX_SUCCESS, [])`, as libpmix2's under the same servers);
/// `registered` says whether this object holds one already (then
/// `(PMIX_ERR_RESOURCE_BUSY, None)`, as python3-pmix).
pub(crate) fn fabric_register<'py>(
    py: Python<'py>,
    registered: &std::sync::atomic::AtomicBool,
    dicts: Option<&Bound<'py, PyAny>>,
) -> (i32, Option<Bound<'py, PyList>>) {
    use std::sync::atomic::Ordering;
    if registered.load(Ordering::SeqCst) {
        return (RESOURCE_BUSY, None);
    }
    let r = (|| {
        admitted("PMIx_Fabric_register", Mode::Blocking)?;
        infos_from_py(dicts)
    })();
    match r {
        Ok(_) if registered.swap(true, Ordering::SeqCst) => (RESOURCE_BUSY, None),
        Ok(_) => (Status::SUCCESS.0, Some(PyList::empty(py))),
        Err(s) => (s, Some(PyList::empty(py))),
    }
}

/// `PMIX_ERR_RESOURCE_BUSY`.
const RESOURCE_BUSY: i32 = -28;

/// `fabric_update()`: nothing to update: `(PMIX_ERR_NOT_SUPPORTED, [])`;
/// `(PMIX_ERR_INIT, None)` without a registration.
pub(crate) fn fabric_update<'py>(
    py: Python<'py>,
    registered: &std::sync::atomic::AtomicBool,
) -> (i32, Option<Bound<'py, PyList>>) {
    if !registered.load(std::sync::atomic::Ordering::SeqCst) {
        return (Status::ERR_INIT.0, None);
    }
    let s =
        either(admitted("PMIx_Fabric_update", Mode::Blocking).map(|_| Status::ERR_NOT_SUPPORTED.0));
    (s, Some(PyList::empty(py)))
}

/// `fabric_deregister()`: forgets the registration (`PMIX_ERR_INIT` without one).
pub(crate) fn fabric_deregister(registered: &std::sync::atomic::AtomicBool) -> i32 {
    if !registered.load(std::sync::atomic::Ordering::SeqCst) {
        return Status::ERR_INIT.0;
    }
    let s = either(admitted("PMIx_Fabric_deregister", Mode::Blocking).map(|_| Status::SUCCESS.0));
    registered.store(false, std::sync::atomic::Ordering::SeqCst);
    s
}
