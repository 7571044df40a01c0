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
use std::sync::atomic::AtomicBool;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use pmix::ft::Shrunk;
use pmix::{EventAction, EventInfo, InitOptions, Pmix, Role};
use pmix_core::Status;
use pmix_core::ftstate::{Mask, RankInfo, RankState, View};

use crate::calls::{self, either, instance, rc, run_callback, status};
use crate::convert::*;
use crate::strings;

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

/// A text argument (`str` or UTF-8 `bytes`): `TypeError` otherwise, as
/// python3-pmix raises for a non-string.
fn arg_text(o: &Bound<'_, PyAny>) -> PyResult<String> {
    text(o).map_err(|_| pyo3::exceptions::PyTypeError::new_err("expected str or bytes"))
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
/// made after an `init` sees it initialized. `PMIxServer` and `PMIxTool` extend it,
/// as in python3-pmix. The object's own state is python3-pmix's: whether it holds a
/// fabric registration.
#[pyclass(module = "pmix", frozen, subclass)]
pub(crate) struct PMIxClient {
    /// Whether `fabric_register` succeeded and `fabric_deregister` has not run.
    fabric: AtomicBool,
}

impl PMIxClient {
    /// A client object (what each class's constructor starts from).
    pub(crate) fn new() -> Self {
        PMIxClient {
            fabric: AtomicBool::new(false),
        }
    }
}

/// `PMIx_Init` / `PMIx_tool_init`'s options from their infos, as the C library reads
/// them: `PMIX_HOSTNAME`; `PMIX_TOOL_DO_NOT_CONNECT`; the server to connect to by
/// `PMIX_SERVER_URI`, or by `PMIX_SERVER_PIDINFO` / `PMIX_SERVER_NSPACE` through its
/// rendezvous file (in `PMIX_SYSTEM_TMPDIR`, the info or the variable, else the
/// temporary directory). Another key flagged `PMIX_INFO_REQD` is
/// `PMIX_ERR_NOT_SUPPORTED`; unflagged, it is ignored.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a value of the wrong type or a URI that is not one;
/// `PMIX_ERR_UNREACH` when no rendezvous file names the server asked for.
pub(crate) fn init_options(infos: &[pmix::wire::Info]) -> Conv<InitOptions> {
    use pmix::wire::Value;
    use pmix_wire::keys;
    let mut options = InitOptions::default();
    let mut target: Option<String> = None;
    let mut dir: Option<std::path::PathBuf> = None;
    for i in infos {
        let text = || i.value.as_str().map(str::to_owned).ok_or(BAD_PARAM);
        match i.key.as_str().unwrap_or_default() {
            keys::HOSTNAME => options.hostname = Some(text()?),
            keys::TOOL_DO_NOT_CONNECT if !matches!(i.value, Value::Bool(false)) => {
                options.connect = pmix::Connect::Never;
            }
            keys::TOOL_DO_NOT_CONNECT => {}
            keys::SERVER_URI => {
                let env = pmix::ServerEnv::from_uri(&text()?, "PMIX_SERVER_URI")
                    .map_err(|_| BAD_PARAM)?
                    .with_launch_identity(|k| std::env::var(k).ok());
                options.connect = pmix::Connect::To(env);
            }
            keys::SERVER_PIDINFO => {
                let pid = match &i.value {
                    Value::Pid(p) | Value::Uint32(p) | Value::Uint(p) => i64::from(*p),
                    Value::Int(p) | Value::Int32(p) => i64::from(*p),
                    Value::Int64(p) => *p,
                    _ => return Err(BAD_PARAM),
                };
                target = Some(pid.to_string());
            }
            keys::SERVER_NSPACE => target = Some(text()?),
            keys::SYSTEM_TMPDIR => dir = Some(text()?.into()),
            k if InitOptions::is_model_key(k.as_bytes()) => {}
            _ if required(i) => return Err(Status::ERR_NOT_SUPPORTED.0),
            _ => {}
        }
    }
    if let Some(tail) = target
        && !matches!(options.connect, pmix::Connect::To(_))
    {
        let env = pmix::ServerEnv::find_rendezvous(dir, options.hostname.as_deref(), &tail)
            .map_err(|_| Status::ERR_UNREACH.0)?;
        options.connect = pmix::Connect::To(env);
    }
    Ok(options)
}

/// Initializes the process-wide library as `role` with `keyvals` (python3-pmix's
/// info list or `{key: value}` dictionary) and returns `(rc, this process)`.
pub(crate) fn init_as<'py>(
    py: Python<'py>,
    role: Role,
    call: &'static str,
    keyvals: Option<&Bound<'py, PyAny>>,
) -> PyResult<(i32, Option<Bound<'py, PyDict>>)> {
    let options = match infos_from_py(keyvals).and_then(|i| {
        let mut o = init_options(&i)?;
        o.model = InitOptions::model_of(&i);
        Ok(o)
    }) {
        Ok(o) => o,
        Err(s) => return Ok((s, None)),
    };
    if let Ok(p) = pmix::global::get()
        && p.on_progress_thread()
    {
        return Ok((Status::ERR_WOULD_BLOCK.0, None));
    }
    match py.detach(|| pmix::global::init(role, options, call)) {
        Ok(p) => Ok((Status::SUCCESS.0, Some(me_dict(py, &p)?))),
        Err(e) => Ok((rc(&e), None)),
    }
}

/// This process as `{'nspace': str, 'rank': int}`.
pub(crate) fn me_dict<'py>(py: Python<'py>, p: &Pmix) -> PyResult<Bound<'py, PyDict>> {
    let me = p.proc_id();
    let d = PyDict::new(py);
    d.set_item("nspace", me.nspace.to_string())?;
    d.set_item("rank", me.rank)?;
    Ok(d)
}

#[pymethods]
impl PMIxClient {
    #[new]
    fn py_new() -> Self {
        PMIxClient::new()
    }

    /// `init(keyvals=None) -> (rc, {'nspace': str, 'rank': int})`: `PMIx_Init`.
    /// Connects to the server the environment names (a process started by
    /// `pmix-run`, `mpirun`, `srun`), else runs as a singleton. `keyvals`: a list of
    /// info dictionaries (or python3-pmix's `{key: value}` dictionary);
    /// `PMIX_HOSTNAME` and the server's address (`PMIX_SERVER_URI`, …, as the C
    /// library reads them) are used, other keys ignored unless flagged
    /// `PMIX_INFO_REQD` (then `PMIX_ERR_NOT_SUPPORTED`). The process is `{}` on an
    /// error, as in python3-pmix.
    #[pyo3(signature = (keyvals = None))]
    fn init<'py>(
        &self,
        py: Python<'py>,
        keyvals: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyDict>)> {
        let (rc, me) = init_as(py, Role::Client, "PMIx_Init", keyvals)?;
        Ok((rc, me.unwrap_or_else(|| PyDict::new(py))))
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

    /// `initialized() -> int`: `PMIx_Initialized`, 1 or 0 (an int, as python3-pmix
    /// returns the C function's).
    fn initialized(&self) -> i32 {
        i32::from(pmix::global::is_initialized())
    }

    /// `get_version() -> bytes`: the library's version text (bytes, as python3-pmix
    /// returns the C string: `get_version().decode()` works with either module).
    fn get_version<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let text = format!(
            "pmix-rs {} (OpenPMIx 4.2.2 API subset)",
            env!("CARGO_PKG_VERSION")
        );
        pyo3::types::PyBytes::new(py, text.as_bytes())
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
            let key = key_text(key)?;
            let v = value_arg(value)?;
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
            Ok((p, target, key_text(key)?, infos_from_py(directives)?))
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
            Ok(v) => Ok((Status::SUCCESS.0, value_dict(py, &v)?.into_any())),
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
    /// `PMIx_Group_construct` of `peers` (process dictionaries; none: this job);
    /// `results` holds `PMIX_GROUP_CONTEXT_ID`, the id the server assigned
    /// (`PMIX_GROUP_ASSIGN_CONTEXT_ID`) or `2**64 - 1` when it assigned none, as
    /// python3-pmix reports it.
    #[pyo3(signature = (grp, peers, directives = None))]
    fn group_construct<'py>(
        &self,
        py: Python<'py>,
        grp: &str,
        peers: Option<&Bound<'py, PyAny>>,
        directives: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        let args = (|| {
            let p = instance()?;
            let procs = procs_or_job(peers, &p.proc_id().nspace.to_string())?;
            Ok((p, procs, infos_from_py(directives)?))
        })();
        let (p, procs, info) = match args {
            Ok(a) => a,
            Err(s) => return Ok((s, PyList::empty(py))),
        };
        match py.detach(|| p.group_construct(grp, &procs, &info)) {
            Ok(o) => {
                // As libpmix2 reports it: always, SIZE_MAX when none was assigned.
                let ctx = pmix::wire::Info::new(
                    pmix_wire::keys::GROUP_CONTEXT_ID,
                    pmix::wire::Value::Size(o.ctxid.unwrap_or(u64::MAX)),
                );
                Ok((Status::SUCCESS.0, infos_to_py(py, &[ctx])?))
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

    /// `group_invite(grp, peers, info) -> (rc, results)`: `PMIx_Group_invite` of
    /// `peers` (none: this job) to `grp`, this process leading; returns once every
    /// invitee accepted, declined or ended. No results (as libpmix2's).
    #[pyo3(signature = (grp, peers, info = None))]
    fn group_invite<'py>(
        &self,
        py: Python<'py>,
        grp: &str,
        peers: Option<&Bound<'py, PyAny>>,
        info: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        calls::group_invite(py, grp, peers, info)
    }

    /// `group_join(grp, leader, opt, info) -> (rc, results)`: `PMIx_Group_join`,
    /// answering `leader`'s invitation with `opt` (`PMIX_GROUP_ACCEPT` or
    /// `PMIX_GROUP_DECLINE`; `leader` `None`: to the whole session).
    #[pyo3(signature = (grp, leader, opt, info = None))]
    fn group_join<'py>(
        &self,
        py: Python<'py>,
        grp: &str,
        leader: Option<&Bound<'py, PyAny>>,
        opt: i64,
        info: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        calls::group_join(py, grp, leader, opt, info)
    }

    /// `abort(status, msg, peers) -> rc`: `PMIx_Abort`: asks the server to end
    /// `peers` (none: this job) with `status` and `msg`; returns once it answered
    /// (the launcher usually ends this process soon after).
    #[pyo3(signature = (status, msg = None, peers = None))]
    fn abort(
        &self,
        py: Python<'_>,
        status: i64,
        msg: Option<&Bound<'_, PyAny>>,
        peers: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        calls::abort(py, status, msg, peers)
    }

    /// `store_internal(proc, key, value) -> rc`: `PMIx_Store_internal`: files
    /// `value` (`{'value': …, 'val_type': …}`) under `key` for `proc` (`None`: this
    /// process) in this process only.
    fn store_internal(
        &self,
        proc: Option<&Bound<'_, PyAny>>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> i32 {
        calls::store_internal(proc, key, value)
    }

    /// `publish(dicts) -> rc`: `PMIx_Publish` of info dictionaries (their keys and
    /// values; `PMIX_RANGE`, `PMIX_PERSISTENCE` directives among them).
    #[pyo3(signature = (dicts = None))]
    fn publish(&self, py: Python<'_>, dicts: Option<&Bound<'_, PyAny>>) -> i32 {
        calls::publish(py, dicts)
    }

    /// `lookup(data, dicts) -> (rc, data)`: `PMIx_Lookup` of the keys of `data`
    /// (`[{'key': str}, …]`); each dictionary whose key was found gets `'proc'`
    /// (the publisher), `'value'` and `'val_type'`, and `data` is returned.
    #[pyo3(signature = (data, dicts = None))]
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        data: Option<&Bound<'py, PyAny>>,
        dicts: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyAny>)> {
        calls::lookup(py, data, dicts)
    }

    /// `unpublish(keys, dicts) -> rc`: `PMIx_Unpublish` of `keys` (a list of str;
    /// none: all this process published).
    #[pyo3(signature = (keys = None, dicts = None))]
    fn unpublish(
        &self,
        py: Python<'_>,
        keys: Option<&Bound<'_, PyAny>>,
        dicts: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        calls::unpublish(py, keys, dicts)
    }

    /// `query(queries) -> (rc, results)`: `PMIx_Query_info` of `[{'keys': [str],
    /// 'qualifiers': [info]}]`; results are info dictionaries.
    fn query<'py>(
        &self,
        py: Python<'py>,
        queries: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        calls::query(py, queries)
    }

    /// `spawn(job_info, apps) -> (rc, nspace)`: `PMIx_Spawn` of `apps` (`[{'cmd':
    /// str, 'argv': [str], 'env': [str], 'cwd': str, 'maxprocs': int, 'info':
    /// [info]}]`) with job-level `job_info`; the new job's namespace, `None` on an
    /// error.
    #[pyo3(signature = (job_info, apps))]
    fn spawn(
        &self,
        py: Python<'_>,
        job_info: Option<&Bound<'_, PyAny>>,
        apps: Option<&Bound<'_, PyAny>>,
    ) -> (i32, Option<String>) {
        calls::spawn(py, job_info, apps)
    }

    /// `connect(peers, info) -> rc`: `PMIx_Connect` with `peers` (none: this job).
    #[pyo3(signature = (peers = None, info = None))]
    fn connect(
        &self,
        py: Python<'_>,
        peers: Option<&Bound<'_, PyAny>>,
        info: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        calls::connect(py, true, peers, info)
    }

    /// `disconnect(peers, info) -> rc`: `PMIx_Disconnect` from `peers` (none: this
    /// job).
    #[pyo3(signature = (peers = None, info = None))]
    fn disconnect(
        &self,
        py: Python<'_>,
        peers: Option<&Bound<'_, PyAny>>,
        info: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        calls::connect(py, false, peers, info)
    }

    /// `resolve_peers(node, nspace) -> (rc, [proc])`: `PMIx_Resolve_peers`: the
    /// processes of `nspace` (`None`: every namespace) on `node` (`None`: every
    /// node).
    #[pyo3(signature = (node = None, nspace = None))]
    fn resolve_peers<'py>(
        &self,
        py: Python<'py>,
        node: Option<&Bound<'py, PyAny>>,
        nspace: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        calls::resolve_peers(py, node, nspace)
    }

    /// `resolve_nodes(nspace) -> (rc, nodes)`: `PMIx_Resolve_nodes`: the nodes of
    /// `nspace` as a comma-separated list (`None` on an error).
    #[pyo3(signature = (nspace = None))]
    fn resolve_nodes(
        &self,
        py: Python<'_>,
        nspace: Option<&Bound<'_, PyAny>>,
    ) -> (i32, Option<String>) {
        calls::resolve_nodes(py, nspace)
    }

    /// `log(data, directives) -> rc`: `PMIx_Log` of `data` (`PMIX_LOG_STDERR`,
    /// `PMIX_LOG_STDOUT`, … infos).
    #[pyo3(signature = (data, directives = None))]
    fn log(
        &self,
        py: Python<'_>,
        data: Option<&Bound<'_, PyAny>>,
        directives: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        calls::log(py, data, directives)
    }

    /// `job_control(targets, directives) -> (rc, results)`: `PMIx_Job_control` of
    /// `targets` (none: this job).
    #[pyo3(signature = (targets, directives = None))]
    fn job_control<'py>(
        &self,
        py: Python<'py>,
        targets: Option<&Bound<'py, PyAny>>,
        directives: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        calls::job_control(py, targets, directives)
    }

    /// `monitor(monitor, error, directives) -> (rc, results)`:
    /// `PMIx_Process_monitor` of `monitor` (a list holding one info, as python3-pmix
    /// takes it, or the info), raising `error` when it fails.
    #[pyo3(signature = (monitor, error, directives = None))]
    fn monitor<'py>(
        &self,
        py: Python<'py>,
        monitor: &Bound<'py, PyAny>,
        error: i64,
        directives: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        calls::monitor(py, monitor, error, directives)
    }

    /// `get_credential(info) -> (rc, credential)`: `PMIx_Get_credential`; no
    /// security plugin here issues one: `(PMIX_ERR_NOT_SUPPORTED, {})`, as libpmix2
    /// answers under our server and `mpirun`.
    #[pyo3(signature = (info = None))]
    fn get_credential<'py>(
        &self,
        py: Python<'py>,
        info: Option<&Bound<'py, PyAny>>,
    ) -> (i32, Bound<'py, PyDict>) {
        calls::get_credential(py, info)
    }

    /// `validate_credential(cred, info) -> (rc, results)`:
    /// `PMIx_Validate_credential` of `cred` (`{'bytes': …, 'size': int}`):
    /// `(PMIX_ERR_NOT_SUPPORTED, [])`, as libpmix2 under the same servers.
    #[pyo3(signature = (cred, info = None))]
    fn validate_credential<'py>(
        &self,
        py: Python<'py>,
        cred: &Bound<'py, PyAny>,
        info: Option<&Bound<'py, PyAny>>,
    ) -> (i32, Bound<'py, PyList>) {
        calls::validate_credential(py, cred, info)
    }

    /// `allocation_request(directive, info) -> (rc, results)`:
    /// `PMIx_Allocation_request` (`directive` a `PMIX_ALLOC_*`):
    /// `(PMIX_ERR_NOT_SUPPORTED, [])`, as libpmix2 under the same servers.
    #[pyo3(signature = (directive, info = None))]
    fn allocation_request<'py>(
        &self,
        py: Python<'py>,
        directive: i64,
        info: Option<&Bound<'py, PyAny>>,
    ) -> (i32, Bound<'py, PyList>) {
        calls::allocation_request(py, directive, info)
    }

    /// `fabric_register(dicts) -> (rc, info)`: `PMIx_Fabric_register`: succeeds with
    /// nothing known of any fabric (`(PMIX_SUCCESS, [])`, as libpmix2 under the same
    /// servers); a second registration on this object is
    /// `(PMIX_ERR_RESOURCE_BUSY, None)`.
    #[pyo3(signature = (dicts = None))]
    fn fabric_register<'py>(
        &self,
        py: Python<'py>,
        dicts: Option<&Bound<'py, PyAny>>,
    ) -> (i32, Option<Bound<'py, PyList>>) {
        calls::fabric_register(py, &self.fabric, dicts)
    }

    /// `fabric_update() -> (rc, info)`: `PMIx_Fabric_update`:
    /// `(PMIX_ERR_NOT_SUPPORTED, [])`; `(PMIX_ERR_INIT, None)` without a
    /// registration.
    fn fabric_update<'py>(&self, py: Python<'py>) -> (i32, Option<Bound<'py, PyList>>) {
        calls::fabric_update(py, &self.fabric)
    }

    /// `fabric_deregister() -> rc`: `PMIx_Fabric_deregister` (`PMIX_ERR_INIT`
    /// without a registration).
    fn fabric_deregister(&self) -> i32 {
        calls::fabric_deregister(&self.fabric)
    }

    /// `get_relative_locality(loc1, loc2) -> (rc, [PMIX_LOCALITY_*])`:
    /// `PMIx_Get_relative_locality` of two `PMIX_LOCALITY_STRING`s: the bits they
    /// share. libpmix2 4.2.2 returns `PMIX_ERR_TAKE_NEXT_OPTION` (and python3-pmix
    /// an empty list); this returns `PMIX_SUCCESS` and the bits, as the C library.
    fn get_relative_locality<'py>(
        &self,
        py: Python<'py>,
        loc1: &Bound<'py, PyAny>,
        loc2: &Bound<'py, PyAny>,
    ) -> PyResult<(i32, Bound<'py, PyList>)> {
        calls::relative_locality(py, loc1, loc2)
    }

    /// `progress() -> None`: `PMIx_Progress`; the library has its own progress
    /// thread, so there is nothing to do.
    fn progress(&self) {}

    /// `get_attribute_string(name) -> str`: `PMIx_Get_attribute_string`: the key of
    /// attribute `name` (`"PMIX_JOB_SIZE"` → `"pmix.job.size"`), else `name`.
    fn get_attribute_string(&self, name: &Bound<'_, PyAny>) -> PyResult<String> {
        Ok(strings::attribute_string(&arg_text(name)?))
    }

    /// `get_attribute_name(key) -> str`: `PMIx_Get_attribute_name`: the name of the
    /// attribute whose key is `key`, else `key`.
    fn get_attribute_name(&self, key: &Bound<'_, PyAny>) -> PyResult<String> {
        Ok(strings::attribute_name(&arg_text(key)?))
    }

    /// `proc_state_string(state) -> str`: `PMIx_Proc_state_string`.
    fn proc_state_string(&self, state: u8) -> &'static str {
        strings::proc_state(state)
    }

    /// `job_state_string(state) -> str`: `PMIx_Job_state_string`.
    fn job_state_string(&self, state: u8) -> &'static str {
        strings::job_state(state)
    }

    /// `link_state_string(state) -> str`: `PMIx_Link_state_string`.
    fn link_state_string(&self, state: u8) -> &'static str {
        strings::link_state(state)
    }

    /// `scope_string(scope) -> str`: `PMIx_Scope_string`.
    fn scope_string(&self, scope: u8) -> &'static str {
        strings::scope(scope)
    }

    /// `persistence_string(persist) -> str`: `PMIx_Persistence_string`.
    fn persistence_string(&self, persist: u8) -> &'static str {
        strings::persistence(persist)
    }

    /// `data_range_string(range) -> str`: `PMIx_Data_range_string`.
    fn data_range_string(&self, range: u8) -> &'static str {
        strings::data_range(range)
    }

    /// `info_directives_string(directives) -> str`: `PMIx_Info_directives_string`.
    fn info_directives_string(&self, directives: u32) -> String {
        strings::info_directives(directives)
    }

    /// `data_type_string(type) -> str`: `PMIx_Data_type_string`.
    fn data_type_string(&self, r#type: u16) -> &'static str {
        strings::data_type(r#type)
    }

    /// `alloc_directive_string(directive) -> str`: `PMIx_Alloc_directive_string`.
    fn alloc_directive_string(&self, directive: u8) -> &'static str {
        strings::alloc_directive(directive)
    }

    /// `iof_channel_string(channel) -> str`: `PMIx_IOF_channel_string`.
    fn iof_channel_string(&self, channel: u16) -> String {
        strings::iof_channel(channel)
    }

    /// `device_type_string(type) -> str`: `PMIx_Device_type_string`.
    fn device_type_string(&self, r#type: u64) -> &'static str {
        strings::device_type(r#type)
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
