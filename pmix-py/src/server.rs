//! `PMIxServer`: a Python program hosts our server ([`pmix::Server`], started by the
//! server-role library instance, [`pmix::Pmix::serve`], as `PMIx_server_init` does),
//! with python3-pmix's calls: `init(dicts, map)`, `register_nspace`,
//! `register_client`, `setup_fork`, `dmodex_request`, …, `finalize()`; every
//! `PMIxClient` call is inherited.
//!
//! **Upcalls.** `map` holds the Python callables python3-pmix's module dictionary
//! holds, by its names; the server makes each upcall on its progress thread, with
//! the GIL taken, as [`PyHost`], the [`Host`] over them:
//!
//! | key | called with | returns | when |
//! | --- | --- | --- | --- |
//! | `clientconnected` | the process | a status (ignored) | a client's handshake completed |
//! | `clientfinalized` | the process | a status (ignored) | a client called finalize |
//! | `abort` | `{'caller', 'status', 'msg'}` | a status (ignored) | a client called abort |
//! | `fencenb` | `{'procs', 'directives', 'data'}` | `(rc, data)` | a fence spans other nodes |
//! | `directmodex` | `{'proc', 'directives'}` | `(rc, data)` | a get asks for another node's rank |
//! | `publish` | `{'proc', 'directives'}` | a status | a client publishes (with `lookup` and `unpublish`) |
//! | `lookup` | `{'proc', 'keys', 'directives'}` | `(rc, [pdata])` | a client looks up (keys as `bytes`) |
//! | `unpublish` | `{'proc', 'keys', 'directives'}` | a status | a client unpublishes |
//! | `spawn` | `{'proc', 'jobinfo', 'apps'}` | `(rc, nspace)` | a client spawns |
//! | `notify_event` (or `notifyevent`) | `{'code', 'source', 'range', 'directives'}` | a status | an event reaches beyond the node |
//! | `log` | `{'source', 'data', 'directives'}` | a status | a client logs |
//!
//! A status of `PMIX_SUCCESS` or `PMIX_OPERATION_SUCCEEDED` is success; another is
//! the error the client gets. An upcall that raises has its traceback printed and
//! answers `PMIX_ERROR`. Without `fencenb` a fence across nodes fails with
//! `PMIX_ERR_NOT_SUPPORTED`; without the three publish upcalls the server keeps
//! published data itself; without `log` a client's log goes to this process's
//! stderr / stdout. The other keys python3-pmix accepts (`query`, `toolconnected`,
//! `allocate`, `jobcontrol`, `monitor`, `getcredential`, `validatecredential`,
//! `iofpull`, `pushstdin`, `group`, `fabric`, `connect`, `disconnect`,
//! `registerevents`, `deregisterevents`, `listener`) are accepted and never called:
//! our server answers those requests itself. An unknown key is ignored, as
//! python3-pmix ignores it; an empty `map` is `PMIX_ERR_INIT`.
//!
//! **Registering a job from an upcall** (a `spawn` upcall registers the new
//! namespace before it answers): the server thread cannot wait for itself, so
//! `register_nspace` made inside an upcall returns `PMIX_OPERATION_SUCCEEDED` at
//! once and the registration is made right after the upcall returns, before its
//! answer reaches the server.
//!
//! One server per process, as in the C library: a second `init` adds a reference,
//! each `finalize` drops one, and the last stops the server and the library.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyTuple};

use pmix::server::{
    Host, LogStream, NamespaceSpec, ProcName, Provides, Reply, Server, ServerConfig,
};
use pmix::wire::{Info, Pdata, Proc};
use pmix::{Pmix, Role};
use pmix_core::Status;

use crate::calls::{either, rc};
use crate::client::PMIxClient;
use crate::convert::*;

/// The server this process hosts, once `init` succeeded.
struct Hosted {
    server: Arc<Server>,
    inst: Pmix,
    refs: usize,
}

static HOSTED: Mutex<Option<Hosted>> = Mutex::new(None);

fn hosted() -> std::sync::MutexGuard<'static, Option<Hosted>> {
    HOSTED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The running server and its instance (`PMIX_ERR_INIT` without one).
fn running() -> Conv<(Arc<Server>, Pmix)> {
    let g = hosted();
    let h = g.as_ref().ok_or(Status::ERR_INIT.0)?;
    Ok((Arc::clone(&h.server), h.inst.clone()))
}

thread_local! {
    /// Whether this thread is in an upcall (the server's progress thread).
    static IN_UPCALL: Cell<bool> = const { Cell::new(false) };
    /// The registrations made in this upcall, made once it returns.
    static DEFERRED: RefCell<Vec<Deferred>> = const { RefCell::new(Vec::new()) };
}

/// A registration an upcall made.
enum Deferred {
    Add(NamespaceSpec),
    Remove(String),
}

/// Makes the registrations of an upcall, in order, then `then` (on a thread of
/// its own when there are any: the server's thread waits for none of them).
fn after_registrations(deferred: Vec<Deferred>, then: impl FnOnce() + Send + 'static) {
    if deferred.is_empty() {
        return then();
    }
    let server = hosted().as_ref().map(|h| Arc::clone(&h.server));
    let spawned = std::thread::Builder::new()
        .name("pmix-py-register".into())
        .spawn(move || {
            if let Some(s) = server {
                for d in deferred {
                    let r = match d {
                        Deferred::Add(spec) => {
                            let ns = spec.nspace.clone();
                            s.add_namespace(spec).map_err(|e| (ns, e))
                        }
                        Deferred::Remove(ns) => s.remove_namespace(&ns).map_err(|e| (ns, e)),
                    };
                    if let Err((ns, e)) = r {
                        eprintln!("pmix: registering {ns} from an upcall: {e}");
                    }
                }
            }
            then();
        });
    if let Err(e) = spawned {
        eprintln!("pmix: cannot start the registration thread: {e}");
    }
}

/// A `PMIX_SUCCESS` / `PMIX_OPERATION_SUCCEEDED` status as success.
fn outcome(status: i32) -> Result<(), pmix::wire::Status> {
    if status == Status::SUCCESS.0 || status == Status::OPERATION_SUCCEEDED.0 {
        Ok(())
    } else {
        Err(pmix::wire::Status(status))
    }
}

/// The host over the Python callables of `PMIxServer.init`'s `map` (module docs).
struct PyHost {
    upcalls: HashMap<String, Py<PyAny>>,
}

impl PyHost {
    fn has(&self, key: &str) -> bool {
        self.upcalls.contains_key(key)
    }

    /// Calls upcall `key` with `args` (made with the GIL), and `answer` on what it
    /// returned: `None` when the upcall is absent, raised (its traceback printed) or
    /// `answer` could not read it (a message printed). The registrations it made
    /// are handed back.
    fn call<T>(
        &self,
        key: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
        answer: impl for<'py> FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
    ) -> (Option<T>, Vec<Deferred>) {
        let Some(f) = self.upcalls.get(key) else {
            return (None, Vec::new());
        };
        let out = Python::attach(|py| {
            IN_UPCALL.with(|c| c.set(true));
            let r = args(py).and_then(|a| f.call1(py, a)).and_then(|out| {
                answer(out.bind(py)).map_err(|e| {
                    pyo3::exceptions::PyTypeError::new_err(format!(
                        "the {key} upcall's answer: {e}"
                    ))
                })
            });
            IN_UPCALL.with(|c| c.set(false));
            match r {
                Ok(v) => Some(v),
                Err(e) => {
                    e.print(py);
                    None
                }
            }
        });
        (out, DEFERRED.with(|d| d.take()))
    }

    /// Calls an upcall that answers a status.
    fn call_status(
        &self,
        key: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
    ) -> (Option<i32>, Vec<Deferred>) {
        self.call(key, args, |out| out.extract::<i32>())
    }

    /// Calls an upcall answering `(rc, x)`, then `reply`s `x` made by `make`.
    fn call_pair<T: Send + 'static>(
        &self,
        key: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
        make: impl for<'py> FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
        reply: Reply<T>,
    ) {
        let (out, deferred) = self.call(key, args, |out| {
            let (status, x): (i32, Bound<'_, PyAny>) = out.extract()?;
            match outcome(status) {
                Ok(()) => Ok(Ok(make(&x)?)),
                Err(s) => Ok(Err(s)),
            }
        });
        after_registrations(deferred, move || match out {
            Some(r) => reply.send(r),
            None => reply.send(Err(pmix::wire::Status::ERROR)),
        });
    }

    /// Calls an upcall answering a status, then `reply`s it.
    fn call_op(
        &self,
        key: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
        reply: Reply<()>,
    ) {
        let (out, deferred) = self.call_status(key, args);
        after_registrations(deferred, move || {
            reply.send(out.map_or(Err(pmix::wire::Status::ERROR), outcome));
        });
    }
}

/// `(d,)`: one dictionary as an upcall's arguments.
fn one<'py>(d: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(d.py(), [d])
}

/// A host's process as a dictionary.
fn name_to_py<'py>(py: Python<'py>, p: &ProcName) -> PyResult<Bound<'py, PyDict>> {
    proc_to_py(py, &Proc::new(p.0.as_str(), p.1))
}

/// Bytes an upcall returned (`bytes`, `bytearray`, `str`, or `None` for none).
fn returned_bytes(x: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if x.is_none() {
        return Ok(Vec::new());
    }
    byte_object(x).map_err(|_| pyo3::exceptions::PyTypeError::new_err("expected bytes"))
}

impl Host for PyHost {
    fn provides(&self) -> Provides {
        let mut p = Provides::NODES;
        for (has, flag) in [
            (self.has("fencenb"), Provides::FENCE),
            (self.has("directmodex"), Provides::DIRECT_MODEX),
            (
                self.has("notify_event") || self.has("notifyevent"),
                Provides::NOTIFY,
            ),
            (self.has("log"), Provides::LOG),
            (self.has("spawn"), Provides::SPAWN),
            (
                self.has("publish") && self.has("lookup") && self.has("unpublish"),
                Provides::PUBSUB,
            ),
        ] {
            if has {
                p = p.union(flag);
            }
        }
        p
    }

    fn client_connected(&self, proc: ProcName) {
        let (_, d) = self.call_status("clientconnected", |py| {
            one(name_to_py(py, &proc)?.into_any())
        });
        after_registrations(d, || {});
    }

    fn client_finalized(&self, proc: ProcName, reply: Reply<()>) {
        let (_, d) = self.call_status("clientfinalized", |py| {
            one(name_to_py(py, &proc)?.into_any())
        });
        after_registrations(d, move || reply.send(Ok(())));
    }

    fn client_aborted(&self, proc: ProcName, status: i32, message: Option<String>) {
        let (_, d) = self.call_status("abort", |py| {
            let a = PyDict::new(py);
            a.set_item("caller", name_to_py(py, &proc)?)?;
            a.set_item("status", status)?;
            if let Some(m) = &message {
                a.set_item("msg", m)?;
            }
            one(a.into_any())
        });
        after_registrations(d, || {});
    }

    fn fence(&self, procs: Vec<ProcName>, collect: bool, data: Vec<u8>, reply: Reply<Vec<u8>>) {
        self.call_pair(
            "fencenb",
            |py| {
                let a = PyDict::new(py);
                let l = PyList::empty(py);
                for p in &procs {
                    l.append(name_to_py(py, p)?)?;
                }
                a.set_item("procs", l)?;
                if collect {
                    let i = Info::new(pmix_wire::keys::COLLECT_DATA, true);
                    a.set_item("directives", infos_to_py(py, &[i])?)?;
                }
                a.set_item("data", PyByteArray::new(py, &data))?;
                one(a.into_any())
            },
            returned_bytes,
            reply,
        );
    }

    fn direct_modex(&self, proc: ProcName, reply: Reply<Vec<u8>>) {
        if !self.has("directmodex") {
            return reply.send(Err(pmix::wire::Status::ERR_NOT_FOUND));
        }
        self.call_pair(
            "directmodex",
            |py| {
                let a = PyDict::new(py);
                a.set_item("proc", name_to_py(py, &proc)?)?;
                one(a.into_any())
            },
            returned_bytes,
            reply,
        );
    }

    fn notify(&self, code: i32, source: ProcName, range: u8, info: Vec<Info>) {
        let key = if self.has("notify_event") {
            "notify_event"
        } else {
            "notifyevent"
        };
        let info = pmix::server::hosted::event_info_to_host(&info);
        let (_, d) = self.call_status(key, |py| {
            let a = PyDict::new(py);
            a.set_item("code", code)?;
            a.set_item("source", name_to_py(py, &source)?)?;
            a.set_item("range", range)?;
            a.set_item("directives", infos_to_py(py, &info)?)?;
            one(a.into_any())
        });
        after_registrations(d, || {});
    }

    fn publish(&self, proc: ProcName, info: Vec<Info>, reply: Reply<()>) {
        self.call_op(
            "publish",
            |py| {
                let a = PyDict::new(py);
                a.set_item("proc", name_to_py(py, &proc)?)?;
                a.set_item("directives", infos_to_py(py, &info)?)?;
                one(a.into_any())
            },
            reply,
        );
    }

    fn lookup(&self, proc: ProcName, keys: Vec<String>, info: Vec<Info>, reply: Reply<Vec<Pdata>>) {
        let requester = Proc::new(proc.0.as_str(), proc.1);
        self.call_pair(
            "lookup",
            |py| {
                let a = PyDict::new(py);
                a.set_item("proc", name_to_py(py, &proc)?)?;
                // python3-pmix hands the keys as bytes.
                let k = PyList::empty(py);
                for key in &keys {
                    k.append(PyBytes::new(py, key.as_bytes()))?;
                }
                a.set_item("keys", k)?;
                a.set_item("directives", infos_to_py(py, &info)?)?;
                one(a.into_any())
            },
            move |x| {
                seq(Some(x))
                    .and_then(|l| l.iter().map(|p| pdata_from_py(p, &requester)).collect())
                    .map_err(|_| {
                        pyo3::exceptions::PyTypeError::new_err(
                            "expected a list of {'key', 'value', 'val_type'}",
                        )
                    })
            },
            reply,
        );
    }

    fn unpublish(&self, proc: ProcName, keys: Vec<String>, info: Vec<Info>, reply: Reply<()>) {
        self.call_op(
            "unpublish",
            |py| {
                let a = PyDict::new(py);
                a.set_item("proc", name_to_py(py, &proc)?)?;
                a.set_item("keys", &keys)?;
                a.set_item("directives", infos_to_py(py, &info)?)?;
                one(a.into_any())
            },
            reply,
        );
    }

    fn spawn(
        &self,
        parent: ProcName,
        info: Vec<Info>,
        apps: Vec<pmix::wire::App>,
        reply: Reply<String>,
    ) {
        self.call_pair(
            "spawn",
            |py| {
                let a = PyDict::new(py);
                a.set_item("proc", name_to_py(py, &parent)?)?;
                a.set_item("jobinfo", infos_to_py(py, &info)?)?;
                a.set_item("apps", apps_to_py(py, &apps)?)?;
                one(a.into_any())
            },
            |x| x.extract::<String>(),
            reply,
        );
    }

    fn log(&self, proc: ProcName, stream: LogStream, text: String) {
        let key = match stream {
            LogStream::Stderr => pmix_wire::keys::LOG_STDERR,
            LogStream::Stdout => pmix_wire::keys::LOG_STDOUT,
        };
        let (out, d) = self.call_status("log", |py| {
            let a = PyDict::new(py);
            a.set_item("source", name_to_py(py, &proc)?)?;
            a.set_item("data", infos_to_py(py, &[Info::new(key, text.as_str())])?)?;
            a.set_item("directives", PyList::empty(py))?;
            one(a.into_any())
        });
        if out.is_none() {
            pmix::server::write_log(stream, &text);
        }
        after_registrations(d, || {});
    }
}

/// The keys python3-pmix's `PMIxServer.init` accepts in its module dictionary.
const UPCALLS: [&str; 28] = [
    "clientconnected",
    "clientfinalized",
    "abort",
    "fencenb",
    "directmodex",
    "publish",
    "lookup",
    "unpublish",
    "spawn",
    "connect",
    "disconnect",
    "registerevents",
    "deregisterevents",
    "listener",
    "notify_event",
    "notifyevent",
    "query",
    "toolconnected",
    "log",
    "allocate",
    "jobcontrol",
    "monitor",
    "getcredential",
    "validatecredential",
    "iofpull",
    "pushstdin",
    "group",
    "fabric",
];

/// What `init`'s infos configure (as `PMIx_server_init`'s): `PMIX_SERVER_TMPDIR`,
/// `PMIX_SYSTEM_TMPDIR`, `PMIX_SERVER_NSPACE`, `PMIX_SERVER_RANK`, `PMIX_HOSTNAME`,
/// `PMIX_SERVER_TOOL_SUPPORT` (rendezvous files, so that tools find the server),
/// and the `pmixrs.limit.NAME` limits.
fn server_config(infos: &[Info]) -> Conv<ServerConfig> {
    let mut cfg = ServerConfig::from_init_infos(infos).map_err(|e| {
        eprintln!("pmix: PMIxServer.init: {e}");
        BAD_PARAM
    })?;
    if let Some(i) = infos
        .iter()
        .find(|i| i.key.as_str() == Some(pmix_wire::keys::SERVER_TOOL_SUPPORT))
    {
        cfg.rendezvous = !matches!(i.value, pmix::wire::Value::Bool(false));
    }
    Ok(cfg)
}

/// A namespace argument: a str of at most 255 bytes.
fn nspace_arg(ns: &Bound<'_, PyAny>) -> Conv<String> {
    let ns = text(ns)?;
    if ns.is_empty() || ns.len() > pmix_core::MAX_NSLEN || ns.contains('\0') {
        return Err(BAD_PARAM);
    }
    Ok(ns)
}

/// Strings, from a list of them or one already joined with `sep`.
fn joined(o: &Bound<'_, PyAny>, sep: &str) -> Conv<String> {
    match text(o) {
        Ok(s) => Ok(s),
        Err(_) => Ok(texts(Some(o))?.join(sep)),
    }
}

/// What `dmodex_request` answers with its status: `(bytes, size)`, `(None, 0)` on an
/// error.
type Modex<'py> = (Option<Bound<'py, PyBytes>>, usize);

/// A PMIx server hosted by this Python program (module docs), with python3-pmix's
/// calls; every `PMIxClient` call is inherited.
#[pyclass(module = "pmix", frozen, extends = PMIxClient, subclass)]
pub(crate) struct PMIxServer;

impl PMIxServer {
    /// A server object (what the tool's constructor starts from too).
    pub(crate) fn initializer() -> PyClassInitializer<PMIxServer> {
        PyClassInitializer::from(PMIxClient::new()).add_subclass(PMIxServer)
    }
}

#[pymethods]
impl PMIxServer {
    #[new]
    fn py_new() -> PyClassInitializer<PMIxServer> {
        PMIxServer::initializer()
    }

    /// `init(dicts, map) -> rc`: `PMIx_server_init`: starts our server in this
    /// process (a listener on 127.0.0.1 and a progress thread), hosted by the Python
    /// callables of `map` (module docs for the keys). `dicts` configure it
    /// (`PMIX_SERVER_TMPDIR`, `PMIX_SYSTEM_TMPDIR`, `PMIX_SERVER_NSPACE`,
    /// `PMIX_SERVER_RANK`, `PMIX_HOSTNAME`, `PMIX_SERVER_TOOL_SUPPORT`).
    /// `PMIX_ERR_INIT` for an empty `map` or when this process is a client or tool
    /// already; `PMIX_ERR_BAD_PARAM` for a malformed info; `PMIX_ERROR` when the
    /// server cannot start (the reason on stderr). A second `init` adds a reference.
    #[pyo3(signature = (dicts = None, map = None))]
    fn init(
        &self,
        py: Python<'_>,
        dicts: Option<&Bound<'_, PyAny>>,
        map: Option<&Bound<'_, PyDict>>,
    ) -> i32 {
        let Some(map) = map.filter(|m| !m.is_empty()) else {
            eprintln!("pmix: PMIxServer.init: the server needs at least one module function");
            return Status::ERR_INIT.0;
        };
        let mut upcalls = HashMap::new();
        for (k, f) in map.iter() {
            if let Ok(k) = text(&k)
                && UPCALLS.contains(&k.as_str())
            {
                upcalls.insert(k, f.unbind());
            }
        }
        either((|| {
            let cfg = server_config(&infos_from_py(dicts)?)?;
            let mut g = hosted();
            if let Some(h) = g.as_mut() {
                h.refs += 1;
                return Ok(Status::SUCCESS.0);
            }
            if pmix::global::is_initialized() {
                return Err(Status::ERR_INIT.0);
            }
            let host = Arc::new(PyHost { upcalls });
            let started = py.detach(|| {
                let inst = pmix::global::init(
                    Role::Server,
                    pmix::InitOptions::default(),
                    "PMIx_server_init",
                )
                .map_err(|e| rc(&e))?;
                match inst.serve(cfg, host) {
                    Ok(s) => Ok((s, inst)),
                    Err(e) => {
                        eprintln!("pmix: PMIxServer.init: {e}");
                        let _ = pmix::global::finalize("PMIx_server_init");
                        Err(Status::ERROR.0)
                    }
                }
            })?;
            *g = Some(Hosted {
                server: started.0,
                inst: started.1,
                refs: 1,
            });
            Ok(Status::SUCCESS.0)
        })())
    }

    /// `finalize() -> rc`: `PMIx_server_finalize`: drops a reference; the last
    /// stops the server (its clients' connections close) and the library.
    /// `PMIX_ERR_INIT` without a server.
    #[pyo3(signature = (dicts = None))]
    fn finalize(&self, py: Python<'_>, dicts: Option<&Bound<'_, PyAny>>) -> i32 {
        let _ = dicts;
        either((|| {
            let taken = {
                let mut g = hosted();
                let h = g.as_mut().ok_or(Status::ERR_INIT.0)?;
                if h.inst.on_progress_thread() || IN_UPCALL.with(Cell::get) {
                    return Err(Status::ERR_WOULD_BLOCK.0);
                }
                h.refs -= 1;
                if h.refs > 0 {
                    return Ok(Status::SUCCESS.0);
                }
                g.take().ok_or(Status::ERR_INIT.0)?
            };
            py.detach(|| {
                let stopped = taken.server.shutdown();
                let fin = pmix::global::finalize("PMIx_server_finalize").map_err(|e| rc(&e));
                stopped.map_err(|e| {
                    eprintln!("pmix: PMIxServer.finalize: {e}");
                    Status::ERROR.0
                })?;
                fin.map(|()| Status::SUCCESS.0)
            })
        })())
    }

    /// `generate_regex(hosts) -> (rc, bytearray)`: `PMIx_generate_regex` of a list of
    /// node names (or one comma-separated string): OpenPMIx's `pmix[...]` form.
    fn generate_regex<'py>(
        &self,
        py: Python<'py>,
        hosts: &Bound<'py, PyAny>,
    ) -> (i32, Option<Bound<'py, PyByteArray>>) {
        let r = joined(hosts, ",")
            .and_then(|h| pmix::regex::generate_node_regex(&h).map_err(|_| BAD_PARAM));
        match r {
            Ok(s) => (Status::SUCCESS.0, Some(PyByteArray::new(py, s.as_bytes()))),
            Err(s) => (s, None),
        }
    }

    /// `generate_ppn(procs) -> (rc, bytearray)`: `PMIx_generate_ppn` of one
    /// comma-separated rank list per node (a list, or one `;`-separated string).
    fn generate_ppn<'py>(
        &self,
        py: Python<'py>,
        procs: &Bound<'py, PyAny>,
    ) -> (i32, Option<Bound<'py, PyByteArray>>) {
        let r =
            joined(procs, ";").and_then(|p| pmix::regex::generate_ppn(&p).map_err(|_| BAD_PARAM));
        match r {
            Ok(s) => (Status::SUCCESS.0, Some(PyByteArray::new(py, s.as_bytes()))),
            Err(s) => (s, None),
        }
    }

    /// `generate_cpuset_string(cpuset) -> (rc, None)`: `(PMIX_ERR_NOT_SUPPORTED,
    /// None)`, as python3-pmix.
    fn generate_cpuset_string(&self, cpuset: &Bound<'_, PyAny>) -> (i32, Option<String>) {
        let _ = cpuset;
        (Status::ERR_NOT_SUPPORTED.0, None)
    }

    /// `generate_locality_string(cpuset) -> (rc, None)`: `(PMIX_ERR_NOT_SUPPORTED,
    /// None)`, as python3-pmix.
    fn generate_locality_string(&self, cpuset: &Bound<'_, PyAny>) -> (i32, Option<String>) {
        let _ = cpuset;
        (Status::ERR_NOT_SUPPORTED.0, None)
    }

    /// `register_nspace(ns, nlocalprocs, dicts) -> rc`:
    /// `PMIx_server_register_nspace`: a job whose `nlocalprocs` local ranks may then
    /// connect, described by job-level infos (`PMIX_JOB_SIZE`, `PMIX_LOCAL_PEERS`,
    /// `PMIX_NODE_MAP`, `PMIX_PROC_MAP`, `PMIX_PROC_DATA`, …; docs/serving.md §4).
    /// `PMIX_OPERATION_SUCCEEDED` once registered (what libpmix2 returns without a
    /// callback); `PMIX_ERR_BAD_PARAM` for a registration the infos contradict (the
    /// reason on stderr); `PMIX_ERR_INIT` without a server.
    #[pyo3(signature = (ns, nlocalprocs, dicts = None))]
    fn register_nspace(
        &self,
        py: Python<'_>,
        ns: &Bound<'_, PyAny>,
        nlocalprocs: i32,
        dicts: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        either((|| {
            let (server, _) = running()?;
            let ns = nspace_arg(ns)?;
            let infos = infos_from_py(dicts)?;
            let (uid, gid) = pmix::os::effective_ids();
            let spec = pmix::server::hosted::namespace_from_host(
                &ns,
                nlocalprocs,
                &infos,
                server.hostname(),
                uid,
                gid,
            )
            .map_err(|e| {
                eprintln!("pmix: register_nspace({ns}): {e}");
                BAD_PARAM
            })?;
            if IN_UPCALL.with(Cell::get) {
                DEFERRED.with(|d| d.borrow_mut().push(Deferred::Add(spec)));
                return Ok(Status::OPERATION_SUCCEEDED.0);
            }
            py.detach(|| server.add_namespace(spec)).map_err(|e| {
                eprintln!("pmix: register_nspace({ns}): {e}");
                match e {
                    pmix::server::ApiError::Core(_) => BAD_PARAM,
                    _ => Status::ERR_UNREACH.0,
                }
            })?;
            Ok(Status::OPERATION_SUCCEEDED.0)
        })())
    }

    /// `deregister_nspace(ns) -> None`: `PMIx_server_deregister_nspace`: forgets a
    /// job (its clients' connections close).
    fn deregister_nspace(&self, py: Python<'_>, ns: &Bound<'_, PyAny>) {
        let Ok((server, _)) = running() else {
            return;
        };
        let Ok(ns) = nspace_arg(ns) else {
            return;
        };
        if IN_UPCALL.with(Cell::get) {
            return DEFERRED.with(|d| d.borrow_mut().push(Deferred::Remove(ns)));
        }
        let _ = py.detach(|| server.remove_namespace(&ns));
    }

    /// `register_resources(directives) -> rc`: not served: `PMIX_ERR_NOT_SUPPORTED`
    /// (`PMIX_ERR_INIT` without a server).
    #[pyo3(signature = (directives = None))]
    fn register_resources(&self, directives: Option<&Bound<'_, PyAny>>) -> i32 {
        unserved(directives)
    }

    /// `deregister_resources(directives) -> rc`: not served, as
    /// `register_resources`.
    #[pyo3(signature = (directives = None))]
    fn deregister_resources(&self, directives: Option<&Bound<'_, PyAny>>) -> i32 {
        unserved(directives)
    }

    /// `register_client(proc, uid, gid) -> rc`: `PMIx_server_register_client`. The
    /// client's identity is checked at its handshake against its job's
    /// registration and this process's user: `PMIX_OPERATION_SUCCEEDED` (what
    /// libpmix2 returns without a callback).
    fn register_client(&self, proc: &Bound<'_, PyAny>, uid: i64, gid: i64) -> i32 {
        let _ = (uid, gid);
        either((|| {
            running()?;
            proc_from_py(proc)?;
            Ok(Status::OPERATION_SUCCEEDED.0)
        })())
    }

    /// `deregister_client(proc) -> rc`: `PMIx_server_deregister_client`: nothing is
    /// kept of a client here: `PMIX_OPERATION_SUCCEEDED`.
    fn deregister_client(&self, proc: &Bound<'_, PyAny>) -> i32 {
        either((|| {
            running()?;
            proc_from_py(proc)?;
            Ok(Status::OPERATION_SUCCEEDED.0)
        })())
    }

    /// `setup_fork(proc, env) -> rc`: `PMIx_server_setup_fork`: adds to `env` (a
    /// dictionary, e.g. a copy of `os.environ` for `subprocess`) what a client of
    /// either library needs to reach this server (`PMIX_NAMESPACE`, `PMIX_RANK`, the
    /// URI under every name, the security, store and buffer modes, the
    /// directories, the host name, `PMIX_VERSION`).
    fn setup_fork(&self, proc: &Bound<'_, PyAny>, env: &Bound<'_, PyDict>) -> PyResult<i32> {
        let r = (|| {
            let (server, _) = running()?;
            let p = proc_from_py(proc)?;
            Ok(server.client_env(p.nspace.as_str().unwrap_or_default(), p.rank.0))
        })();
        match r {
            Ok(vars) => {
                for (k, v) in vars {
                    env.set_item(k, v)?;
                }
                Ok(Status::SUCCESS.0)
            }
            Err(s) => Ok(s),
        }
    }

    /// `dmodex_request(proc, dataout) -> (rc, (data, size))`:
    /// `PMIx_server_dmodex_request`: a local client's committed data for another
    /// node's server (a blob it reads), once it committed; `(None, 0)` on an error
    /// (`PMIX_ERR_NOT_FOUND` for no such local rank, `PMIX_ERR_TIMEOUT`).
    #[pyo3(signature = (proc, dataout = None))]
    fn dmodex_request<'py>(
        &self,
        py: Python<'py>,
        proc: &Bound<'py, PyAny>,
        dataout: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(i32, Modex<'py>)> {
        let _ = dataout;
        let r = (|| {
            let (server, _) = running()?;
            let p = proc_from_py(proc)?;
            let (tx, rx) = std::sync::mpsc::channel();
            server
                .dmodex_request(p.nspace.as_str().unwrap_or_default(), p.rank.0, move |r| {
                    let _ = tx.send(r);
                })
                .map_err(|_| Status::ERR_UNREACH.0)?;
            py.detach(move || rx.recv())
                .map_err(|_| Status::ERR_UNREACH.0)?
                .map_err(|s| s.0)
        })();
        match r {
            Ok(d) => Ok((Status::SUCCESS.0, (Some(PyBytes::new(py, &d)), d.len()))),
            Err(s) => Ok((s, (None, 0))),
        }
    }

    /// `setup_application(ns, dicts) -> (rc, [info])`:
    /// `PMIx_server_setup_application`: our clients need nothing set up per
    /// application: `(PMIX_SUCCESS, [])`.
    #[pyo3(signature = (ns, dicts = None))]
    fn setup_application<'py>(
        &self,
        py: Python<'py>,
        ns: &Bound<'py, PyAny>,
        dicts: Option<&Bound<'py, PyAny>>,
    ) -> (i32, Bound<'py, PyList>) {
        let s = either((|| {
            running()?;
            nspace_arg(ns)?;
            infos_from_py(dicts)?;
            Ok(Status::SUCCESS.0)
        })());
        (s, PyList::empty(py))
    }

    /// `setup_local_support(ns, ilist) -> rc`: `PMIx_server_setup_local_support`:
    /// nothing to set up on this node for our clients: `PMIX_OPERATION_SUCCEEDED`.
    #[pyo3(signature = (ns, ilist = None))]
    fn setup_local_support(&self, ns: &Bound<'_, PyAny>, ilist: Option<&Bound<'_, PyAny>>) -> i32 {
        either((|| {
            running()?;
            nspace_arg(ns)?;
            infos_from_py(ilist)?;
            Ok(Status::OPERATION_SUCCEEDED.0)
        })())
    }

    /// `register_attributes(function, attrs) -> rc`: `PMIx_Register_attributes`: a
    /// host's table of attributes is not kept: `PMIX_ERR_NOT_SUPPORTED`.
    fn register_attributes(&self, function: &Bound<'_, PyAny>, attrs: &Bound<'_, PyAny>) -> i32 {
        either((|| {
            text(function)?;
            texts(Some(attrs))?;
            Err(Status::ERR_NOT_SUPPORTED.0)
        })())
    }

    /// `collect_inventory(directives) -> (rc, [info])`: not served:
    /// `(PMIX_ERR_NOT_SUPPORTED, [])`.
    #[pyo3(signature = (directives = None))]
    fn collect_inventory<'py>(
        &self,
        py: Python<'py>,
        directives: Option<&Bound<'py, PyAny>>,
    ) -> (i32, Bound<'py, PyList>) {
        (unserved(directives), PyList::empty(py))
    }

    /// `deliver_inventory(info, directives) -> rc`: not served.
    #[pyo3(signature = (info = None, directives = None))]
    fn deliver_inventory(
        &self,
        info: Option<&Bound<'_, PyAny>>,
        directives: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        either(infos_from_py(info).map(|_| unserved(directives)))
    }

    /// `iof_deliver(source, channel, data, directives) -> rc`:
    /// `PMIx_server_IOF_deliver`: no tool can pull output from our server, so the
    /// delivery reaches nobody and completes: `PMIX_OPERATION_SUCCEEDED`.
    #[pyo3(signature = (source, channel, data, directives = None))]
    fn iof_deliver(
        &self,
        source: &Bound<'_, PyAny>,
        channel: i64,
        data: &Bound<'_, PyAny>,
        directives: Option<&Bound<'_, PyAny>>,
    ) -> i32 {
        let _ = channel;
        either((|| {
            running()?;
            proc_from_py(source)?;
            byte_object(data)?;
            infos_from_py(directives)?;
            Ok(Status::OPERATION_SUCCEEDED.0)
        })())
    }

    /// `define_process_set(members, name) -> rc`: not served (no process sets are
    /// kept): `PMIX_ERR_NOT_SUPPORTED`.
    fn define_process_set(&self, members: &Bound<'_, PyAny>, name: &Bound<'_, PyAny>) -> i32 {
        either((|| {
            procs_from_py(Some(members))?;
            text(name)?;
            Ok(unserved(None))
        })())
    }

    /// `delete_process_set(name) -> rc`: not served.
    fn delete_process_set(&self, name: &Bound<'_, PyAny>) -> i32 {
        either(text(name).map(|_| unserved(None)))
    }
}

/// Stops the server Python code started and did not finalize (at exit, while the
/// interpreter can still run its upcalls); the library is finalized after.
pub(crate) fn at_exit(py: Python<'_>) {
    let taken = hosted().take();
    if let Some(h) = taken {
        let _ = py.detach(|| h.server.shutdown());
    }
}

/// What the server calls we do not serve answer: `PMIX_ERR_INIT` without a server,
/// `PMIX_ERR_BAD_PARAM` for malformed directives, else `PMIX_ERR_NOT_SUPPORTED`.
fn unserved(directives: Option<&Bound<'_, PyAny>>) -> i32 {
    either((|| {
        running()?;
        infos_from_py(directives)?;
        Ok(Status::ERR_NOT_SUPPORTED.0)
    })())
}
