//! `PMIxClient`: the process-wide PMIx library (the same instance the C ABI uses), in
//! the seeds' Python syntax and python3-pmix's conventions.
//!
//! Every call returns a `PMIX_*` status (`int`), alone or first in a tuple; a call
//! before `init` returns `PMIX_ERR_INIT`. Blocking calls release the GIL while they
//! wait. Callbacks (`_nb` forms, event handlers) run on the library's progress
//! thread holding the GIL; a blocking call made there returns
//! `PMIX_ERR_WOULD_BLOCK`; an exception a callback raises is printed (with its
//! traceback) on stderr and otherwise ignored.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use pmix::ft::Shrunk;
use pmix::{EventAction, EventInfo, InitOptions, Pmix, PmixError, Role};
use pmix_core::Status;
use pmix_core::ftstate::{Mask, RankInfo, RankState, View};

use crate::convert::*;

/// The status of a runtime error.
fn rc(e: &pmix::Error) -> i32 {
    e.status().0
}

/// The process-wide instance, or the status a call gets without one.
fn instance() -> Conv<Pmix> {
    pmix::global::get().map_err(|e| rc(&e))
}

/// `Ok(())` as `PMIX_SUCCESS`, an error as its status.
fn status(r: Result<(), pmix::Error>) -> i32 {
    match r {
        Ok(()) => Status::SUCCESS.0,
        Err(e) => rc(&e),
    }
}

fn either(r: Conv<i32>) -> i32 {
    r.unwrap_or_else(|s| s)
}

/// Runs a Python callback on the progress thread: takes the GIL, calls `f`, and
/// prints (never propagates) what it raises.
fn run_callback(f: impl for<'py> FnOnce(Python<'py>) -> PyResult<()>) {
    Python::attach(|py| {
        if let Err(e) = f(py) {
            e.print(py);
        }
    });
}

/// The state and modifier bits of a rank-state answer.
fn state_bits(i: &RankInfo) -> u8 {
    let s = match i.state {
        RankState::Ok => Mask::OK,
        RankState::Failed => Mask::FAILED,
        RankState::Null => Mask::NULL,
    };
    let m = match i.modifier {
        pmix_core::ftstate::Modifier::New => Mask::NEW,
        pmix_core::ftstate::Modifier::Old => Mask::OLD,
    };
    (s | m).bits()
}

fn mask(bits: i64) -> Conv<Mask> {
    u8::try_from(bits)
        .ok()
        .and_then(|b| Mask::from_bits(b).ok())
        .ok_or(BAD_PARAM)
}

/// A PMIx client, as the standard's Python syntax names it (`foo = PMIxClient()`).
///
/// Every `PMIxClient` is a view of the one library of the process: a second one
/// made after an `init` sees it initialized.
#[pyclass(module = "pmix", frozen)]
pub(crate) struct PMIxClient;

#[pymethods]
impl PMIxClient {
    #[new]
    fn new() -> Self {
        PMIxClient
    }

    /// `init(keyvals=None) -> (rc, {'nspace': str, 'rank': int})`: `PMIx_Init`.
    /// Connects to the server the environment names (a process started by
    /// `pmix-run`, `mpirun`, `srun`), else runs as a singleton. `keyvals`: a list of
    /// info dictionaries (or python3-pmix's `{key: value}` dictionary);
    /// `PMIX_HOSTNAME` is used, other keys ignored unless flagged `PMIX_INFO_REQD`
    /// (then `PMIX_ERR_NOT_SUPPORTED`). The process is `None` on an error.
    #[pyo3(signature = (keyvals = None))]
    fn init<'py>(
        &self,
        py: Python<'py>,
        keyvals: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Option<Bound<'py, PyDict>>)> {
        let infos = match infos_from_py(keyvals) {
            Ok(i) => i,
            Err(s) => return Ok((s, None)),
        };
        let mut options = InitOptions::default();
        for i in &infos {
            match (i.key.as_str().unwrap_or_default(), &i.value) {
                ("pmix.hname", pmix::wire::Value::String(Some(h))) => {
                    options.hostname = h.as_str().map(str::to_owned);
                }
                _ if required(i) => return Ok((Status::ERR_NOT_SUPPORTED.0, None)),
                _ => {}
            }
        }
        match py.detach(|| pmix::global::init(Role::Client, options, "PMIx_Init")) {
            Ok(p) => {
                let me = p.proc_id();
                let d = PyDict::new(py);
                d.set_item("nspace", me.nspace.to_string())?;
                d.set_item("rank", me.rank)?;
                Ok((Status::SUCCESS.0, Some(d)))
            }
            Err(e) => Ok((rc(&e), None)),
        }
    }

    /// `finalize(keyvals=None) -> rc`: `PMIx_Finalize`; the last one returns once
    /// every accepted callback has run.
    #[pyo3(signature = (keyvals = None))]
    fn finalize(&self, py: Python<'_>, keyvals: Option<&Bound<'_, PyAny>>) -> i32 {
        if let Err(s) = infos_from_py(keyvals) {
            return s;
        }
        status(py.detach(|| pmix::global::finalize("PMIx_Finalize")))
    }

    /// `initialized() -> bool`: `PMIx_Initialized`.
    fn initialized(&self) -> bool {
        pmix::global::is_initialized()
    }

    /// `get_version() -> str`: the library's version text.
    fn get_version(&self) -> String {
        format!(
            "pmix-rs {} (OpenPMIx 4.2.2 API subset)",
            env!("CARGO_PKG_VERSION")
        )
    }

    /// `error_string(status) -> str`: `PMIx_Error_string`.
    fn error_string(&self, status: i64) -> &'static str {
        i32::try_from(status).map_or(pmix_core::status::UNKNOWN_TEXT, |s| Status(s).text())
    }

    /// `load_topology() -> rc`: `PMIx_Load_topology` for this node's topology
    /// (`PMIX_TOPOLOGY` in the environment, else this machine's sysfs).
    fn load_topology(&self, py: Python<'_>) -> i32 {
        either(instance().map(|p| status(py.detach(|| p.topology().map(|_| ())))))
    }

    /// `get_cpuset(ref=PMIX_CPUBIND_PROCESS) -> (rc, {'source': 'hwloc', 'cpus':
    /// [...]})`: `PMIx_Get_cpuset`, this process's binding (`ref`:
    /// `PMIX_CPUBIND_PROCESS` 0 or `PMIX_CPUBIND_THREAD` 1).
    #[pyo3(signature = (r#ref = 0))]
    fn get_cpuset<'py>(
        &self,
        py: Python<'py>,
        r#ref: i64,
    ) -> PyResult<(i32, Option<Bound<'py, PyDict>>)> {
        let envelope = match r#ref {
            0 => pmix::BindEnvelope::Process,
            1 => pmix::BindEnvelope::Thread,
            _ => return Ok((BAD_PARAM, None)),
        };
        let p = match instance() {
            Ok(p) => p,
            Err(s) => return Ok((s, None)),
        };
        match p.cpuset(envelope) {
            Ok(s) => Ok((Status::SUCCESS.0, Some(cpuset_to_py(py, &s)?))),
            Err(e) => Ok((rc(&e), None)),
        }
    }

    /// `parse_cpuset_string(s) -> (rc, cpuset)`: `PMIx_Parse_cpuset_string` on
    /// `"hwloc:<list>"` or `"hwloc:0x<mask>"`.
    fn parse_cpuset_string<'py>(
        &self,
        py: Python<'py>,
        s: &Bound<'py, PyAny>,
    ) -> PyResult<(i32, Option<Bound<'py, PyDict>>)> {
        if let Err(st) = instance() {
            return Ok((st, None));
        }
        match cpuset_from_py(Some(s)) {
            Ok(Some(c)) => Ok((Status::SUCCESS.0, Some(cpuset_to_py(py, &c)?))),
            Ok(None) | Err(_) => Ok((BAD_PARAM, None)),
        }
    }

    /// `compute_distances(pycpus, pydirs) -> (rc, [dict])`:
    /// `PMIx_Compute_distances` from `pycpus` (a cpuset, see the module's doc;
    /// `None`: this process's binding) to the devices `pydirs` selects
    /// (`PMIX_DEVICE_TYPE`, `PMIX_DEVICE_ID`, `PMIX_DEVICE_DIST_ORIGIN`). Each
    /// distance is `{'uuid', 'osname', 'type', 'mindist', 'maxdist'}`. Errors as
    /// the C call: `PMIX_ERR_BAD_PARAM`, `PMIX_ERR_NOT_FOUND`,
    /// `PMIX_ERR_NOT_SUPPORTED`, `PMIX_ERR_UNREACH`, `PMIX_ERR_WOULD_BLOCK` in a
    /// callback; the list is empty on an error.
    #[pyo3(signature = (pycpus = None, pydirs = None))]
    fn compute_distances<'py>(
        &self,
        py: Python<'py>,
        pycpus: Option<&Bound<'py, PyAny>>,
        pydirs: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        let p = match instance() {
            Ok(p) => p,
            Err(s) => return Ok((s, PyList::empty(py))),
        };
        let answer = with_request(pycpus, pydirs, |req| {
            // A loaded topology answers at once, holding the GIL (no thread switch);
            // the first call, or a relayed one, may wait: the GIL is released then.
            if p.loaded_topology().is_some() && !p.on_progress_thread() {
                p.compute_distances_with(req, |a| rows_to_py(py, a.rows()))
            } else {
                py.detach(|| p.compute_distances(req))
                    .map(|owned| rows_to_py(py, owned.answer().rows()))
            }
        });
        let answer = match answer {
            Ok(a) => a,
            Err(s) => return Ok((s, PyList::empty(py))),
        };
        match answer {
            Ok(list) => Ok((Status::SUCCESS.0, list?)),
            Err(e) => Ok((rc(&e), PyList::empty(py))),
        }
    }

    /// `compute_distances_nb(pycpus, pydirs, cbfunc, cbdata) -> rc`: the
    /// non-blocking form. `PMIX_SUCCESS` once the request is accepted; then, and
    /// only then, `cbfunc(status, distances, cbdata)` runs once on the progress
    /// thread.
    #[pyo3(signature = (pycpus, pydirs, cbfunc, cbdata = None))]
    fn compute_distances_nb(
        &self,
        pycpus: Option<&Bound<'_, PyAny>>,
        pydirs: Option<&Bound<'_, PyAny>>,
        cbfunc: Py<PyAny>,
        cbdata: Option<Py<PyAny>>,
    ) -> i32 {
        let p = match instance() {
            Ok(p) => p,
            Err(s) => return s,
        };
        let accepted = with_request(pycpus, pydirs, |req| {
            p.compute_distances_nb_with(req, pmix::Distances::new, move |r| {
                run_callback(|py| {
                    let (st, list) = match r {
                        Ok(d) => (Status::SUCCESS.0, rows_to_py(py, d.answer().rows())?),
                        Err(e) => (rc(&e), PyList::empty(py)),
                    };
                    let data = cbdata.unwrap_or_else(|| py.None());
                    cbfunc.call1(py, (st, list, data))?;
                    Ok(())
                });
            })
        });
        either(accepted.map(status))
    }

    /// `put(scope, key, value) -> rc`: `PMIx_Put`; `value` is `{'value': …,
    /// 'val_type': …}` (or a plain Python value).
    fn put(&self, scope: i64, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> i32 {
        either((|| {
            let p = instance()?;
            let scope = u8::try_from(scope).map_err(|_| BAD_PARAM)?;
            let key = text(key)?;
            let v = match value.cast::<PyDict>() {
                Ok(d) if d.contains("value").unwrap_or(false) => {
                    let ty = match d.get_item("val_type").ok().flatten() {
                        Some(t) if !t.is_none() => Some(t.extract::<u16>().map_err(|_| BAD_PARAM)?),
                        _ => None,
                    };
                    let inner = d.get_item("value").ok().flatten().ok_or(BAD_PARAM)?;
                    value_from_py(&inner, ty)?
                }
                _ => value_from_py(value, None)?,
            };
            Ok(status(p.put(pmix::wire::Scope(scope), &key, v)))
        })())
    }

    /// `commit() -> rc`: `PMIx_Commit`.
    fn commit(&self, py: Python<'_>) -> i32 {
        either((|| {
            let p = instance()?;
            Ok(status(py.detach(|| p.commit())))
        })())
    }

    /// `fence(peers=None, directives=None) -> rc`: `PMIx_Fence` over `peers` (a
    /// list of process dictionaries; none: the whole job).
    #[pyo3(signature = (peers = None, directives = None))]
    fn fence(
        &self,
        py: Python<'_>,
        peers: Option<&Bound<'_, PyAny>>,
        directives: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        either((|| {
            let p = instance()?;
            let procs = procs_from_py(peers)?;
            let info = infos_from_py(directives)?;
            Ok(status(py.detach(|| p.fence(&procs, &info))))
        })())
    }

    /// `get(proc, key, directives=None) -> (rc, {'value': …, 'val_type': int})`:
    /// `PMIx_Get` of `key` from `proc` (a process dictionary; `None`: this
    /// process), as python3-pmix answers it; `(rc, None)` on an error.
    #[pyo3(signature = (proc, key, directives = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        proc: Option<&Bound<'py, PyAny>>,
        key: &Bound<'py, PyAny>,
        directives: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyAny>)> {
        let args = (|| {
            let p = instance()?;
            let target = match proc.filter(|x| !x.is_none()) {
                Some(x) => proc_from_py(x)?,
                None => pmix::wire::Proc::from(p.proc_id()),
            };
            Ok((p, target, text(key)?, infos_from_py(directives)?))
        })();
        let (p, target, key, info) = match args {
            Ok(a) => a,
            Err(s) => return Ok((s, py.None().into_bound(py))),
        };
        let got = py.detach(|| {
            let nspace = target.nspace.as_str().unwrap_or_default();
            p.get(nspace, target.rank.0, &key, &info)
        });
        match got {
            Ok(v) => {
                let d = PyDict::new(py);
                d.set_item("value", value_to_py(py, &v)?)?;
                d.set_item("val_type", type_code(&v))?;
                Ok((Status::SUCCESS.0, d.into_any()))
            }
            Err(e) => Ok((rc(&e), py.None().into_bound(py))),
        }
    }

    /// `register_event_handler(codes, directives, cbfunc) -> (rc, id)`:
    /// `PMIx_Register_event_handler` for `codes` (a list of statuses; `None`: all).
    /// `cbfunc(evhdlr, status, source, info, results)` runs on the progress thread
    /// for each event (`source` a process dictionary, `info` and `results` lists of
    /// info dictionaries) and returns `(rc, results)` or a status: any status but
    /// `PMIX_EVENT_ACTION_COMPLETE` passes the event to the next handler.
    fn register_event_handler(
        &self,
        py: Python<'_>,
        codes: Option<&Bound<'_, PyAny>>,
        directives: Option<&Bound<'_, PyAny>>,
        cbfunc: Py<PyAny>,
    ) -> PyResult<(i32, i64)> {
        let args = (|| {
            let p = instance()?;
            let codes: Vec<i32> = match codes.filter(|c| !c.is_none()) {
                Some(c) => c.extract().map_err(|_| BAD_PARAM)?,
                None => Vec::new(),
            };
            Ok((p, codes, infos_from_py(directives)?))
        })();
        let (p, codes, info) = match args {
            Ok(a) => a,
            Err(s) => return Ok((s, -1)),
        };
        let cb = Arc::new(cbfunc);
        let handler: pmix::EventHandler = Arc::new(move |id: usize, ev: &EventInfo| {
            let mut action = EventAction::Continue;
            run_callback(|py| {
                let source = proc_to_py(py, &ev.source)?;
                let info = infos_to_py(py, &ev.info)?;
                let out = cb.call1(py, (id, ev.status, source, info, PyList::empty(py)))?;
                let out = out.bind(py);
                let code = if let Ok(t) = out.cast::<PyTuple>() {
                    t.get_item(0).ok().and_then(|c| c.extract::<i32>().ok())
                } else {
                    out.extract::<i32>().ok()
                };
                if code == Some(Status::EVENT_ACTION_COMPLETE.0) {
                    action = EventAction::Complete;
                }
                Ok(())
            });
            action
        });
        match py.detach(|| p.register_event_handler(&codes, &info, handler)) {
            Ok(id) => Ok((Status::SUCCESS.0, id as i64)),
            Err(e) => Ok((rc(&e), -1)),
        }
    }

    /// `deregister_event_handler(id) -> rc`: `PMIx_Deregister_event_handler`.
    fn deregister_event_handler(&self, id: i64) -> i32 {
        either((|| {
            let p = instance()?;
            let id = usize::try_from(id).map_err(|_| BAD_PARAM)?;
            Ok(status(p.deregister_event_handler(id)))
        })())
    }

    /// `notify_event(status, source, range, directives) -> rc`:
    /// `PMIx_Notify_event` (`source` a process dictionary or `None` for this
    /// process; `range` a `PMIX_RANGE_*`). Returns once the event is sent, as the C
    /// call without a callback.
    fn notify_event(
        &self,
        status: i64,
        source: Option<&Bound<'_, PyAny>>,
        range: i64,
        directives: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        either((|| {
            let p = instance()?;
            let code = i32::try_from(status).map_err(|_| BAD_PARAM)?;
            let range = u8::try_from(range).map_err(|_| BAD_PARAM)?;
            let source = match source.filter(|s| !s.is_none()) {
                Some(s) => Some(proc_from_py(s)?),
                None => None,
            };
            let info = infos_from_py(directives)?;
            Ok(self::status(p.notify_event(
                code,
                source,
                pmix::wire::DataRange(range),
                &info,
                |_| {},
            )))
        })())
    }

    /// `group_construct(grp, peers, directives) -> (rc, results)`:
    /// `PMIx_Group_construct` of `peers` (process dictionaries); `results` a list
    /// of info dictionaries (`PMIX_GROUP_CONTEXT_ID` when the server assigned one).
    fn group_construct<'py>(
        &self,
        py: Python<'py>,
        grp: &str,
        peers: &Bound<'py, PyAny>,
        directives: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        let args = (|| {
            Ok((
                instance()?,
                procs_from_py(Some(peers))?,
                infos_from_py(directives)?,
            ))
        })();
        let (p, procs, info) = match args {
            Ok(a) => a,
            Err(s) => return Ok((s, PyList::empty(py))),
        };
        match py.detach(|| p.group_construct(grp, &procs, &info)) {
            Ok(o) => {
                let results = PyList::empty(py);
                if let Some(ctx) = o.ctxid {
                    let d = PyDict::new(py);
                    d.set_item("key", "pmix.grp.ctxid")?;
                    d.set_item("value", ctx)?;
                    d.set_item("val_type", pmix::wire::DataType::Size.code())?;
                    results.append(d)?;
                }
                Ok((Status::SUCCESS.0, results))
            }
            Err(e) => Ok((rc(&e), PyList::empty(py))),
        }
    }

    /// `group_destruct(grp, directives) -> rc`: `PMIx_Group_destruct`.
    #[pyo3(signature = (grp, directives = None))]
    fn group_destruct(
        &self,
        py: Python<'_>,
        grp: &str,
        directives: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        either((|| {
            let (p, info) = (instance()?, infos_from_py(directives)?);
            Ok(status(py.detach(|| p.group_destruct(grp, &info))))
        })())
    }

    /// `group_leave(grp, pyinfo) -> rc`: `PMIx_Group_leave` (seed `001`): this
    /// process leaves `grp` at once and the other members get `PMIX_GROUP_LEFT`;
    /// returns once the event is generated.
    #[pyo3(signature = (grp, pyinfo = None))]
    fn group_leave(&self, py: Python<'_>, grp: &str, pyinfo: Option<&Bound<'_, PyAny>>) -> i32 {
        either((|| {
            let (p, info) = (instance()?, infos_from_py(pyinfo)?);
            Ok(status(py.detach(|| p.group_leave(grp, &info))))
        })())
    }

    /// `group_leave_nb(grp, pyinfo, cbfunc, cbdata) -> rc`: the non-blocking
    /// form; `cbfunc(status, cbdata)` runs once on the progress thread if and only
    /// if this returns `PMIX_SUCCESS`.
    #[pyo3(signature = (grp, pyinfo, cbfunc, cbdata = None))]
    fn group_leave_nb(
        &self,
        grp: &str,
        pyinfo: Option<&Bound<'_, PyAny>>,
        cbfunc: Py<PyAny>,
        cbdata: Option<Py<PyAny>>,
    ) -> i32 {
        either((|| {
            let (p, info) = (instance()?, infos_from_py(pyinfo)?);
            Ok(status(p.group_leave_nb(grp, &info, move |r| {
                run_callback(|py| {
                    let data = cbdata.unwrap_or_else(|| py.None());
                    cbfunc.call1(py, (self::status(r), data))?;
                    Ok(())
                });
            })))
        })())
    }

    // ---- rank-state tracking (pmix_ft.h's calls; `grp` a PMIx group or the
    // namespace) ----

    /// `ft_validate_local(grp) -> (rc, num_failed, new_failures)`: local.
    fn ft_validate_local(&self, grp: &str) -> (i32, u32, u32) {
        match instance().and_then(|p| p.ft_validate_local(grp).map_err(|e| rc(&e))) {
            Ok(v) => (Status::SUCCESS.0, v.num_failed, v.new_failures),
            Err(s) => (s, 0, 0),
        }
    }

    /// `ft_validate_global(grp) -> (rc, num_failed, new_failures)`: collective.
    fn ft_validate_global(&self, py: Python<'_>, grp: &str) -> (i32, u32, u32) {
        let r =
            instance().and_then(|p| py.detach(|| p.ft_validate_global(grp)).map_err(|e| rc(&e)));
        match r {
            Ok(v) => (Status::SUCCESS.0, v.num_failed, v.new_failures),
            Err(s) => (s, 0, 0),
        }
    }

    /// `ft_validate_global_count(grp, type) -> (rc, count)`: collective; the
    /// count of the global view's members `type` matches afterwards.
    fn ft_validate_global_count(&self, py: Python<'_>, grp: &str, r#type: i64) -> (i32, u32) {
        let r = instance().and_then(|p| {
            let m = mask(r#type)?;
            py.detach(|| p.ft_validate_global_count(grp, m))
                .map_err(|e| rc(&e))
        });
        match r {
            Ok(n) => (Status::SUCCESS.0, n),
            Err(s) => (s, 0),
        }
    }

    /// `ft_get_state_local(grp, type) -> (rc, [{'rank': int, 'state': int}])`:
    /// local; the local view's members `type` matches, ascending.
    fn ft_get_state_local<'py>(
        &self,
        py: Python<'py>,
        grp: &str,
        r#type: i64,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        get_state(py, grp, View::Local, r#type)
    }

    /// `ft_get_state_global(grp, type) -> (rc, [{'rank': int, 'state': int}])`:
    /// local; the global view's.
    fn ft_get_state_global<'py>(
        &self,
        py: Python<'py>,
        grp: &str,
        r#type: i64,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        get_state(py, grp, View::Global, r#type)
    }

    /// `ft_get_num_state_local(grp, type) -> (rc, count)`: local.
    fn ft_get_num_state_local(&self, grp: &str, r#type: i64) -> (i32, u32) {
        num_state(grp, View::Local, r#type)
    }

    /// `ft_get_num_state_global(grp, type) -> (rc, count)`: local.
    fn ft_get_num_state_global(&self, grp: &str, r#type: i64) -> (i32, u32) {
        num_state(grp, View::Global, r#type)
    }

    /// `ft_get_failed(grp) -> (rc, [rank])`: local; in detection order.
    fn ft_get_failed(&self, grp: &str) -> (i32, Vec<u32>) {
        match instance().and_then(|p| p.ft_get_failed(grp).map_err(|e| rc(&e))) {
            Ok(v) => (Status::SUCCESS.0, v),
            Err(s) => (s, Vec::new()),
        }
    }

    /// `ft_ack_failed(grp, n) -> (rc, acked)`: local.
    fn ft_ack_failed(&self, grp: &str, n: i64) -> (i32, u32) {
        let r = instance().and_then(|p| {
            let n = u32::try_from(n.max(0)).unwrap_or(u32::MAX);
            p.ft_ack_failed(grp, n).map_err(|e| rc(&e))
        });
        match r {
            Ok(a) => (Status::SUCCESS.0, a),
            Err(s) => (s, 0),
        }
    }

    /// `ft_get_acked(grp) -> (rc, [rank])`: local.
    fn ft_get_acked(&self, grp: &str) -> (i32, Vec<u32>) {
        match instance().and_then(|p| p.ft_get_acked(grp).map_err(|e| rc(&e))) {
            Ok(v) => (Status::SUCCESS.0, v),
            Err(s) => (s, Vec::new()),
        }
    }

    /// `ft_agree(grp, flag) -> (rc, flag)`: collective; the AND of every
    /// contributor's flag, or `PMIXRS_FT_ERR_PROC_FAILED` with it.
    fn ft_agree(&self, py: Python<'_>, grp: &str, flag: u32) -> (i32, u32) {
        let r = instance().and_then(|p| py.detach(|| p.ft_agree(grp, flag)).map_err(|e| rc(&e)));
        match r {
            Ok(Ok(f)) => (Status::SUCCESS.0, f),
            Ok(Err(e @ pmix_core::ftstate::AgreeError::ProcFailed { flag, .. })) => {
                (pmix_core::PmixError::status(&e).0, flag)
            }
            Ok(Err(e)) => (pmix_core::PmixError::status(&e).0, 0),
            Err(s) => (s, 0),
        }
    }

    /// `ft_shrink(grp, newgrp) -> (rc, new_rank, new_size)`: collective; the
    /// survivors construct the PMIx group `newgrp`.
    fn ft_shrink(&self, py: Python<'_>, grp: &str, newgrp: &str) -> (i32, i64, i64) {
        let r = instance().and_then(|p| py.detach(|| p.ft_shrink(grp, newgrp)).map_err(|e| rc(&e)));
        match r {
            Ok(Shrunk { rank, size, .. }) => (Status::SUCCESS.0, i64::from(rank), i64::from(size)),
            Err(s) => (s, -1, -1),
        }
    }

    /// `ft_revoke(grp) -> rc`: local; the group's members are told.
    fn ft_revoke(&self, grp: &str) -> i32 {
        either(instance().map(|p| status(p.ft_revoke(grp).map(|_| ()))))
    }

    /// `ft_is_revoked(grp) -> (rc, bool)`: local.
    fn ft_is_revoked(&self, grp: &str) -> (i32, bool) {
        match instance().and_then(|p| p.ft_is_revoked(grp).map_err(|e| rc(&e))) {
            Ok(r) => (Status::SUCCESS.0, r),
            Err(s) => (s, false),
        }
    }
}

fn get_state<'py>(
    py: Python<'py>,
    grp: &str,
    view: View,
    bits: i64,
) -> PyResult<(i32, Bound<'py, PyList>)> {
    let r = instance().and_then(|p| {
        let m = mask(bits)?;
        let (size, _) = p.ft_size(grp).map_err(|e| rc(&e))?;
        let mut out = vec![RankInfo::default(); size as usize];
        let n = p.ft_get_state(grp, view, m, &mut out).map_err(|e| rc(&e))?;
        out.truncate(n);
        Ok(out)
    });
    let l = PyList::empty(py);
    match r {
        Ok(out) => {
            for i in &out {
                let d = PyDict::new(py);
                d.set_item("rank", i.rank)?;
                d.set_item("state", state_bits(i))?;
                l.append(d)?;
            }
            Ok((Status::SUCCESS.0, l))
        }
        Err(s) => Ok((s, l)),
    }
}

fn num_state(grp: &str, view: View, bits: i64) -> (i32, u32) {
    let r = instance().and_then(|p| {
        let m = mask(bits)?;
        p.ft_get_num_state(grp, view, m).map_err(|e| rc(&e))
    });
    match r {
        Ok(n) => (Status::SUCCESS.0, n),
        Err(s) => (s, 0),
    }
}
