//! The server API (`include/pmix_server.h`): what a host — Slurm's PMIx plugin,
//! Open MPI's `mpirun` and `orted` — calls to run our server inside it, and the
//! upcalls our server makes into the host's module (docs/abi.md, "The server API").
//!
//! `PMIx_server_init` starts a [`pmix::Server`] (a listener on 127.0.0.1 and one
//! progress thread) and a server-role library instance whose progress thread runs
//! every completion callback. The upcalls for other nodes (`fence_nb`, `direct_modex`,
//! `notify_event`) come from the server's progress thread itself, as the core asks
//! (one thread hop fewer per fence); the others from one watcher thread, in the order
//! the server's job events come (OpenPMIx makes all of them from its progress thread):
//! a connected client → `client_connected2` (else `client_connected`), a finalize →
//! `client_finalized` (the client's FINALIZE is answered when its callback comes, as
//! OpenPMIx does), an abort → `abort`, a client lost without finalizing → a
//! `PMIX_ERR_LOST_CONNECTION` event (range PROC_LOCAL, source the client) to the
//! handlers the host registered in this process (OpenPMIx reports it so; Slurm's
//! default handler then ends the step).
//!
//! **Other nodes** (docs/serving.md §4). The server runs hosted
//! ([`ServerConfig::hosted`]): a fence whose participants include ranks of other
//! nodes goes, once this node's participants joined, to `fence_nb` with this node's
//! blob (`pmix_wire::modex`; `PMIX_COLLECT_DATA` when asked), and the concatenation
//! the host hands back completes it; a get of another node's rank goes to
//! `direct_modex`; `PMIx_server_dmodex_request` answers the host's request for a
//! local rank's data. Without `fence_nb` such a fence fails with
//! `PMIX_ERR_NOT_SUPPORTED` (as OpenPMIx's does), without `direct_modex` remote data
//! is NOT_FOUND. A client's event whose range reaches beyond the node goes to
//! `notify_event` (none: it stays on the node); the host's own `PMIx_Notify_event`
//! reaches this node's clients.

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use pmix::server::{HostCall, JobEvent, Server, ServerConfig};
use pmix::{Pmix, PmixError, Role};
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, CbData, Res, c_mut, c_ref, callback, export};
use crate::convert::{infos_to_wire, proc_nspace};
use crate::info::info_slice;
use crate::types::{
    pmix_byte_object_t, pmix_cpuset_t, pmix_dmodex_response_fn_t, pmix_info_cbfunc_t, pmix_info_t,
    pmix_op_cbfunc_t, pmix_proc_t, pmix_server_module_t, pmix_setup_application_cbfunc_t,
    pmix_status_t,
};

/// `PMIX_OPERATION_SUCCEEDED`: a call given no callback completed before returning.
const OPERATION_SUCCEEDED: Status = Status::OPERATION_SUCCEEDED;

/// `PMIX_ERR_LOST_CONNECTION`.
const LOST_CONNECTION: i32 = Status::ERR_LOST_CONNECTION.0;

/// How often the watcher looks whether the server is being finalized.
const WATCH_TICK: Duration = Duration::from_millis(100);

/// The server this process hosts.
struct Hosted {
    server: Arc<Server>,
    inst: Pmix,
    module: pmix_server_module_t,
    refs: usize,
    /// Each registered client's `server_object`, handed back in its upcalls.
    objects: Arc<Mutex<HashMap<(String, u32), Object>>>,
    stop: Arc<AtomicBool>,
    watcher: Option<JoinHandle<()>>,
}

/// A host's `server_object`: never dereferenced, only handed back.
#[derive(Clone, Copy)]
struct Object(*mut c_void);

// SAFETY: the pointer is the host's, only ever passed back to the host's own upcalls.
unsafe impl Send for Object {}

/// The hosted server, when `PMIx_server_init` ran.
static HOSTED: Mutex<Option<Hosted>> = Mutex::new(None);

/// What an upcall's `cbdata` stands for: a token into [`PENDING`], never a pointer,
/// so a host that calls back twice, late, or after returning an error cannot make
/// the library touch freed memory.
enum Pending {
    /// A `fence_nb` upcall: the server to answer, and what the host may read until
    /// it calls back (the procs, the info, this node's data).
    Fence {
        id: u64,
        server: Arc<Server>,
        _keep: Box<FenceArgs>,
    },
    /// A `direct_modex` upcall.
    Modex { id: u64, server: Arc<Server> },
    /// A `client_finalized` upcall: its completion lets the server answer the
    /// client's FINALIZE.
    Finalize {
        server: Arc<Server>,
        nspace: String,
        rank: u32,
    },
    /// A `publish` or `unpublish` upcall.
    Op { id: u64, server: Arc<Server> },
    /// A `lookup` upcall.
    Lookup { id: u64, server: Arc<Server> },
    /// The host's `PMIx_server_dmodex_request`, waiting for the server's answer.
    Request {
        cbfunc: unsafe extern "C" fn(pmix_status_t, *mut c_char, usize, *mut c_void),
        cbdata: CbData,
    },
}

/// The arguments a `fence_nb` upcall is given, alive until its callback. The data
/// is not among them: the host owns it (see [`fence_upcall`]).
struct FenceArgs {
    procs: Vec<pmix_proc_t>,
    info: (*mut pmix_info_t, usize),
}

// SAFETY: the info array is the library's own (made by `infos_to_c`), only freed.
unsafe impl Send for FenceArgs {}

impl Drop for FenceArgs {
    fn drop(&mut self) {
        // SAFETY: the array `infos_to_c` made, freed once.
        unsafe { crate::convert::free_c_infos(self.info.0, self.info.1) };
    }
}

/// The upcalls waiting for their callback, and the host's requests waiting for
/// their answer, by token.
static PENDING: Mutex<Option<HashMap<usize, Pending>>> = Mutex::new(None);

/// The next token (0 is never given: NULL stays NULL).
static NEXT_TOKEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);

fn pend(p: Pending) -> usize {
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    PENDING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(token, p);
    token
}

fn take_pending(token: usize) -> Option<Pending> {
    PENDING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_mut()?
        .remove(&token)
}

callback! {
    /// The `pmix_modex_cbfunc_t` of the `fence_nb` and `direct_modex` upcalls:
    /// copies the host's bytes, releases them, and answers the server.
    ///
    /// # Safety
    /// `data` points to `ndata` readable bytes (or is NULL); `release_fn` is the
    /// host's, called once with its data.
    pub(crate) unsafe fn modex_answer(
        status: pmix_status_t,
        data: *const c_char,
        ndata: usize,
        cbdata: *mut c_void,
        release_fn: crate::types::pmix_release_cbfunc_t,
        release_cbdata: *mut c_void,
    ) {
        let bytes = if data.is_null() || ndata == 0 || !crate::boundary::fits_in_a_slice(data, ndata) {
            Vec::new()
        } else {
            // SAFETY: `ndata` readable bytes (the host's contract), checked to fit.
            unsafe { std::slice::from_raw_parts(data.cast::<u8>(), ndata) }.to_vec()
        };
        if let Some(release) = release_fn {
            // Later, on the progress thread: hosts call this with their own lock held
            // and take it again in `release_fn` (Slurm does), as OpenPMIx's library
            // releases after the callback returned.
            let rel = CbData(release_cbdata);
            let run = move || {
                // SAFETY: the host's release, once, with its own data.
                unsafe { release(rel.ptr()) };
            };
            if let Err(e) = pmix::global::get().and_then(|i| i.post(run)) {
                let _ = e;
            }
        }
        match take_pending(cbdata as usize) {
            Some(Pending::Fence { id, server, .. }) => {
                if std::env::var_os(HOST_TRACE_VAR).is_some() {
                    trace_line(format!("fence_nb #{id} done: status {status}, {} bytes", bytes.len()));
                }
                let _ = server.host_fence_done(id, status, bytes);
            }
            Some(Pending::Modex { id, server }) => {
                if std::env::var_os(HOST_TRACE_VAR).is_some() {
                    trace_line(format!("direct_modex #{id} done: status {status}, {} bytes", bytes.len()));
                }
                let _ = server.host_modex_done(id, status, bytes);
            }
            // Not an answer to a modex upcall: put it back.
            Some(
                p @ (Pending::Request { .. }
                | Pending::Finalize { .. }
                | Pending::Op { .. }
                | Pending::Lookup { .. }),
            ) => {
                PENDING
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert_with(HashMap::new)
                    .insert(cbdata as usize, p);
            }
            None => {}
        }
    }
}

/// A `malloc`ed copy of `data` for a host to free, or NULL for no data (or no memory).
fn host_owned_copy(data: &[u8]) -> Option<*mut c_char> {
    if data.is_empty() {
        return None;
    }
    // SAFETY: malloc of a positive size; the result is checked for NULL.
    let p = unsafe { libc::malloc(data.len()) }.cast::<u8>();
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` holds `data.len()` writable bytes, disjoint from `data`.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
    Some(p.cast::<c_char>())
}

/// Makes the `fence_nb` upcall for the server's fence `id` (a host without one
/// fails it with `PMIX_ERR_NOT_SUPPORTED`, as OpenPMIx does).
fn fence_upcall(
    module: &pmix_server_module_t,
    server: &Arc<Server>,
    id: u64,
    procs: Vec<(String, u32)>,
    collect: bool,
    data: Vec<u8>,
) {
    let Some(f) = module.fence_nb else {
        // As OpenPMIx: a fence beyond the node needs the host.
        let _ = server.host_fence_done(id, Status::ERR_NOT_SUPPORTED.0, Vec::new());
        return;
    };
    let info = if collect {
        crate::convert::infos_to_c(&[pmix::wire::Info::new("pmix.collect", true)])
            .unwrap_or((std::ptr::null_mut(), 0))
    } else {
        (std::ptr::null_mut(), 0)
    };
    let args = Box::new(FenceArgs {
        procs: procs.iter().map(|(ns, r)| c_proc(ns, *r)).collect(),
        info,
    });
    let (pp, np) = (args.procs.as_ptr(), args.procs.len());
    let (ip, ni) = args.info;
    // The host owns the data, as OpenPMIx's server hands it over (unloaded from its
    // buffer, never freed after the upcall): Open MPI's orted loads it into a buffer
    // that frees it; a copy the library also freed was freed twice.
    let (dp, nd) = match host_owned_copy(&data) {
        Some(p) => (p, data.len()),
        None => (std::ptr::null_mut(), 0),
    };
    let token = pend(Pending::Fence {
        id,
        server: Arc::clone(server),
        _keep: args,
    });
    // SAFETY: the host's upcall; every pointer stays valid until its callback (the
    // boxed arguments live in PENDING until then).
    let rc = unsafe {
        f(
            pp,
            np,
            ip,
            ni,
            dp,
            nd,
            Some(modex_answer),
            token as *mut c_void,
        )
    };
    if rc != Status::SUCCESS.0
        && rc != Status::OPERATION_SUCCEEDED.0
        && let Some(Pending::Fence { id, server, .. }) = take_pending(token)
    {
        let _ = server.host_fence_done(id, rc, Vec::new());
    }
}

/// Hands a client's `PMIx_Log` to the host's `log` upcall (Open MPI's `mpirun`
/// prints it, an `MPI_Abort` message among them), or writes it to this process's
/// stream without one.
fn log_upcall(
    module: &pmix_server_module_t,
    nspace: &str,
    rank: u32,
    stream: pmix::server::LogStream,
    text: &str,
) {
    use std::io::Write;
    let key = match stream {
        pmix::server::LogStream::Stderr => "pmix.log.stderr",
        pmix::server::LogStream::Stdout => "pmix.log.stdout",
    };
    let infos = match (
        module.log,
        crate::convert::infos_to_c(&[pmix::wire::Info::new(key, text)]),
    ) {
        (Some(f), Ok((p, n))) => {
            let who = c_proc(nspace, rank);
            // SAFETY: the host's upcall: a valid proc and the library's own infos,
            // valid while it runs (hosts copy what they keep).
            unsafe {
                f(
                    &who,
                    p,
                    n,
                    std::ptr::null(),
                    0,
                    Some(upcall_done),
                    std::ptr::null_mut(),
                )
            };
            Some((p, n))
        }
        (_, made) => {
            let _ = match stream {
                pmix::server::LogStream::Stderr => std::io::stderr().write_all(text.as_bytes()),
                pmix::server::LogStream::Stdout => std::io::stdout().write_all(text.as_bytes()),
            };
            made.ok()
        }
    };
    if let Some((p, n)) = infos {
        // SAFETY: the array `infos_to_c` made, freed once.
        unsafe { crate::convert::free_c_infos(p, n) };
    }
}

callback! {
    /// The `cbfunc` of the `publish` and `unpublish` upcalls: the host's status to
    /// the client.
    pub(crate) fn op_answer(status: pmix_status_t, cbdata: *mut c_void) {
        if let Some(Pending::Op { id, server }) = take_pending(cbdata as usize) {
            let _ = server.host_op_done(id, status);
        }
    }
}

callback! {
    /// The `cbfunc` of the `lookup` upcall: what the host found, copied, to the
    /// client.
    ///
    /// # Safety
    /// `data` points to `ndata` readable `pmix_pdata_t` (or is NULL with none).
    pub(crate) unsafe fn lookup_answer(
        status: pmix_status_t,
        data: *mut crate::types::pmix_pdata_t,
        ndata: usize,
        cbdata: *mut c_void,
    ) {
        let Some(Pending::Lookup { id, server }) = take_pending(cbdata as usize) else {
            return;
        };
        let found = if ndata == 0 {
            Ok(Vec::new())
        } else {
            // SAFETY: `ndata` readable entries (the host's contract), checked to fit.
            unsafe { crate::boundary::c_slice(data, ndata) }.and_then(|all| {
                all.iter()
                    .map(pdata_to_wire)
                    .collect::<Result<Vec<_>, Status>>()
            })
        };
        let _ = match found {
            Ok(found) => server.host_lookup_done(id, status, found),
            Err(e) => server.host_lookup_done(id, e.0, Vec::new()),
        };
    }
}

/// A host's `pmix_pdata_t` as the runtime's.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a key or namespace without its NUL or not UTF-8; the
/// value's errors.
fn pdata_to_wire(d: &crate::types::pmix_pdata_t) -> Result<pmix::wire::Pdata, Status> {
    // SAFETY: the key array reinterpreted as the bytes it is (c_char is one byte).
    let key: &[u8; crate::types::PMIX_MAX_KEYLEN + 1] = unsafe { &*(&raw const d.key).cast() };
    let nul = key.iter().position(|&b| b == 0).ok_or(BAD_PARAM)?;
    let key = std::str::from_utf8(&key[..nul]).map_err(|_| BAD_PARAM)?;
    Ok(pmix::wire::Pdata {
        proc: pmix::wire::Proc::new(proc_nspace(&d.proc_)?, d.proc_.rank),
        key: key.into(),
        // SAFETY: the host's value, as its type says (its contract).
        value: unsafe { crate::convert::to_wire(&d.value) }?,
    })
}

/// C keys for an upcall: the strings and the NULL-terminated array of them.
fn c_keys(keys: &[String]) -> (Vec<CString>, Vec<*mut c_char>) {
    let owned: Vec<CString> = keys
        .iter()
        .filter_map(|k| CString::new(k.as_str()).ok())
        .collect();
    let mut ptrs: Vec<*mut c_char> = owned.iter().map(|k| k.as_ptr().cast_mut()).collect();
    ptrs.push(std::ptr::null_mut());
    (owned, ptrs)
}

/// Makes the `publish`, `lookup` or `unpublish` upcall for the server's request.
fn pubsub_upcall(module: &pmix_server_module_t, server: &Arc<Server>, call: HostCall) {
    let (id, proc, keys, info, lookup) = match call {
        HostCall::Publish { id, proc, info } => (id, proc, None, info, false),
        HostCall::Lookup {
            id,
            proc,
            keys,
            info,
        } => (id, proc, Some(keys), info, true),
        HostCall::Unpublish {
            id,
            proc,
            keys,
            info,
        } => (id, proc, Some(keys), info, false),
        _ => return,
    };
    let fail = |status: Status| {
        let _ = if lookup {
            server.host_lookup_done(id, status.0, Vec::new())
        } else {
            server.host_op_done(id, status.0)
        };
    };
    let Ok((ip, ni)) = crate::convert::infos_to_c(&info) else {
        return fail(Status::ERR_NOMEM);
    };
    let who = c_proc(&proc.0, proc.1);
    let (_owned, mut ptrs) = c_keys(keys.as_deref().unwrap_or_default());
    let token = pend(if lookup {
        Pending::Lookup {
            id,
            server: Arc::clone(server),
        }
    } else {
        Pending::Op {
            id,
            server: Arc::clone(server),
        }
    });
    let cbdata = token as *mut c_void;
    let kp = ptrs.as_mut_ptr();
    // SAFETY: the host's upcalls with a valid proc, keys and infos, valid while each
    // runs (hosts copy what they keep).
    let rc = unsafe {
        match (keys.is_some(), lookup) {
            (false, _) => module.publish.map_or(Status::ERR_NOT_SUPPORTED.0, |f| {
                f(&who, ip, ni, Some(op_answer), cbdata)
            }),
            (true, true) => module.lookup.map_or(Status::ERR_NOT_SUPPORTED.0, |f| {
                f(&who, kp, ip, ni, Some(lookup_answer), cbdata)
            }),
            (true, false) => module.unpublish.map_or(Status::ERR_NOT_SUPPORTED.0, |f| {
                f(&who, kp, ip, ni, Some(op_answer), cbdata)
            }),
        }
    };
    // SAFETY: the array `infos_to_c` made, freed once.
    unsafe { crate::convert::free_c_infos(ip, ni) };
    if rc != Status::SUCCESS.0 && take_pending(token).is_some() {
        // Done at once, or refused: the callback will not come.
        let status = if rc == Status::OPERATION_SUCCEEDED.0 {
            Status::SUCCESS
        } else {
            Status(rc)
        };
        fail(status);
    }
}

/// Makes the `direct_modex` upcall for the server's request `id`.
fn modex_upcall(module: &pmix_server_module_t, server: &Arc<Server>, id: u64, proc: (String, u32)) {
    let Some(f) = module.direct_modex else {
        let _ = server.host_modex_done(id, Status::ERR_NOT_FOUND.0, Vec::new());
        return;
    };
    if std::env::var_os(HOST_TRACE_VAR).is_some() {
        trace_line(format!("direct_modex #{id}: {}:{}", proc.0, proc.1));
    }
    let p = c_proc(&proc.0, proc.1);
    let token = pend(Pending::Modex {
        id,
        server: Arc::clone(server),
    });
    // SAFETY: the host's upcall with a valid proc (copied by the host if kept).
    let rc = unsafe {
        f(
            &p,
            std::ptr::null(),
            0,
            Some(modex_answer),
            token as *mut c_void,
        )
    };
    if rc != Status::SUCCESS.0
        && let Some(Pending::Modex { id, server }) = take_pending(token)
    {
        let _ = server.host_modex_done(id, rc, Vec::new());
    }
}

fn hosted() -> std::sync::MutexGuard<'static, Option<Hosted>> {
    HOSTED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The running server and the instance whose progress thread runs the callbacks.
///
/// # Errors
/// `PMIX_ERR_INIT` before `PMIx_server_init` or after the last finalize.
fn running() -> Result<(Arc<Server>, Pmix), Status> {
    let g = hosted();
    let h = g.as_ref().ok_or(Status::ERR_INIT)?;
    Ok((Arc::clone(&h.server), h.inst.clone()))
}

/// A C string argument, checked.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
unsafe fn c_text<'a>(p: *const c_char) -> Result<&'a str, Status> {
    crate::boundary::not_null(p)?;
    // SAFETY: non-NULL and NUL-terminated (caller's contract).
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| BAD_PARAM)
}

/// A `pmix_nspace_t` argument (a 256-byte array, NUL-terminated within it).
///
/// # Safety
/// `p` is NULL or points to 256 readable bytes.
unsafe fn nspace_arg<'a>(p: *const c_char) -> Result<&'a str, Status> {
    crate::boundary::not_null(p)?;
    // SAFETY: 256 readable bytes (caller's contract).
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), pmix_core::MAX_NSLEN + 1) };
    let nul = bytes.iter().position(|&b| b == 0).ok_or(BAD_PARAM)?;
    std::str::from_utf8(&bytes[..nul]).map_err(|_| BAD_PARAM)
}

/// Completes an operation: `cbfunc(status, cbdata)` on the progress thread and
/// `PMIX_SUCCESS`, or, with no callback, `PMIX_OPERATION_SUCCEEDED` for a success
/// and the error itself.
fn complete(inst: &Pmix, r: Res, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> Res {
    let Some(cb) = cbfunc else {
        r?;
        return Err(OPERATION_SUCCEEDED);
    };
    let status = match r {
        Ok(()) => Status::SUCCESS,
        Err(s) => return Err(s),
    };
    let data = CbData(cbdata);
    inst.post(move || {
        // SAFETY: the host's callback with its own data, once.
        unsafe { cb(status.0, data.ptr()) };
    })
    .map_err(|e| e.status())
}

/// The same as [`complete`] for the `void` registration calls: the status goes to
/// the callback (if any) whatever it is.
fn complete_void(inst: Option<&Pmix>, r: Res, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) {
    let Some(cb) = cbfunc else {
        return;
    };
    let status = r.err().unwrap_or(Status::SUCCESS);
    let data = CbData(cbdata);
    let run = move || {
        // SAFETY: the host's callback with its own data, once.
        unsafe { cb(status.0, data.ptr()) };
    };
    match inst {
        Some(i) => {
            if let Err(e) = i.post(run) {
                // No progress thread left: call it here rather than never.
                let _ = e;
                // SAFETY: as above.
                unsafe { cb(status.0, cbdata) };
            }
        }
        // SAFETY: as above (no instance: the call was refused before any thread).
        None => unsafe { cb(status.0, cbdata) },
    }
}

callback! {
    /// The `cbfunc` handed to the host's upcalls: their completion changes nothing
    /// here (the server answered its client already).
    pub(crate) fn upcall_done(_status: pmix_status_t, _cbdata: *mut c_void) {}
}

callback! {
    /// The `cbfunc` of a `client_finalized` upcall: the server answers the client's
    /// FINALIZE now (whatever the host's status: the client is finalizing).
    pub(crate) fn finalize_done(_status: pmix_status_t, cbdata: *mut c_void) {
        ack_finalize(cbdata as usize);
    }
}

/// Lets the server answer the FINALIZE that `token` stands for (once).
fn ack_finalize(token: usize) {
    if let Some(Pending::Finalize {
        server,
        nspace,
        rank,
    }) = take_pending(token)
    {
        let _ = server.finalize_acked(&nspace, rank);
    }
}

/// A `pmix_proc_t` of `nspace` and `rank`.
fn c_proc(nspace: &str, rank: u32) -> pmix_proc_t {
    let mut p = pmix_proc_t {
        nspace: [0; pmix_core::MAX_NSLEN + 1],
        rank,
    };
    crate::boundary::copy_c_str(&mut p.nspace, nspace.as_bytes());
    p
}

/// Makes the upcall a job event asks for (on the progress thread).
fn upcall(
    module: &pmix_server_module_t,
    inst: &Pmix,
    server: &Arc<Server>,
    objects: &Mutex<HashMap<(String, u32), Object>>,
    ev: JobEvent,
) {
    let object = |ns: &str, r: u32| {
        objects
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(ns.to_string(), r))
            .copied()
            .unwrap_or(Object(std::ptr::null_mut()))
    };
    let done: pmix_op_cbfunc_t = Some(upcall_done);
    match ev {
        JobEvent::Connected { nspace, rank, .. } => {
            let p = c_proc(&nspace, rank);
            let obj = object(&nspace, rank).0;
            if let Some(f) = module.client_connected2 {
                // SAFETY: the host's upcall with a valid proc, its own object, no infos.
                unsafe { f(&p, obj, std::ptr::null_mut(), 0, done, std::ptr::null_mut()) };
            } else if let Some(f) = module.client_connected {
                // SAFETY: as above.
                unsafe { f(&p, obj, done, std::ptr::null_mut()) };
            }
        }
        JobEvent::Finalized { nspace, rank } => {
            let p = c_proc(&nspace, rank);
            let obj = object(&nspace, rank).0;
            let token = pend(Pending::Finalize {
                server: Arc::clone(server),
                nspace,
                rank,
            });
            if let Some(f) = module.client_finalized {
                // SAFETY: as above; the callback may come before this returns.
                let rc = unsafe { f(&p, obj, Some(finalize_done), token as *mut c_void) };
                if rc != Status::SUCCESS.0 {
                    // Done already (OPERATION_SUCCEEDED), or refused: no callback.
                    ack_finalize(token);
                }
            } else {
                ack_finalize(token);
            }
        }
        JobEvent::Aborted {
            nspace,
            rank,
            status,
            message,
        } => {
            if let Some(f) = module.abort {
                let p = c_proc(&nspace, rank);
                let msg = CString::new(message.unwrap_or_default().replace('\0', " "))
                    .unwrap_or_default();
                // SAFETY: the host's upcall: a valid proc and message, no procs (the
                // whole job, as OpenPMIx passes an abort of everyone).
                unsafe {
                    f(
                        &p,
                        object(&nspace, rank).0,
                        status,
                        msg.as_ptr(),
                        std::ptr::null_mut(),
                        0,
                        done,
                        std::ptr::null_mut(),
                    )
                };
            }
        }
        JobEvent::Host(call) => host_call(module, server, call),
        // Never raised: a hosted server is not configured to spawn (the host's own
        // spawn upcall is not used yet); answered so no parent could wait.
        JobEvent::Spawn { id, .. } => {
            let _ = server.spawn_done(id, Err(Status::ERR_NOT_SUPPORTED.0));
        }
        JobEvent::Log {
            nspace,
            rank,
            stream,
            text,
        } => log_upcall(module, &nspace, rank, stream, &text),
        JobEvent::Lost { nspace, rank } => {
            let source = pmix::wire::Proc::new(nspace.as_str(), rank);
            let _ = inst.notify_event(
                LOST_CONNECTION,
                Some(source),
                pmix::wire::DataRange::PROC_LOCAL,
                &[],
                |_| {},
            );
        }
    }
}

/// Serves one request of the hosted core (on the server's progress thread, through
/// `ServerConfig::host_sink`).
fn host_call(module: &pmix_server_module_t, server: &Arc<Server>, call: HostCall) {
    match call {
        HostCall::Fence {
            id,
            procs,
            collect,
            data,
        } => {
            if std::env::var_os(HOST_TRACE_VAR).is_some() {
                trace_line(format!(
                    "fence_nb #{id}: procs {procs:?}, collect {collect}, {} bytes",
                    data.len()
                ));
            }
            fence_upcall(module, server, id, procs, collect, data)
        }
        call
        @ (HostCall::Publish { .. } | HostCall::Lookup { .. } | HostCall::Unpublish { .. }) => {
            pubsub_upcall(module, server, call)
        }
        HostCall::DirectModex { id, proc } => modex_upcall(module, server, id, proc),
        HostCall::ModexAnswer {
            id,
            status,
            mut data,
        } => {
            if let Some(Pending::Request { cbfunc, cbdata }) = take_pending(id as usize) {
                let p = if data.is_empty() {
                    std::ptr::null_mut()
                } else {
                    data.as_mut_ptr().cast()
                };
                // SAFETY: the host's callback, once; the data stays valid while it runs.
                unsafe { cbfunc(status, p, data.len(), cbdata.ptr()) };
            }
        }
        HostCall::Notify {
            code,
            source,
            range,
            info,
        } => {
            let info = pmix::server::hosted::event_info_to_host(&info);
            if let (Some(f), Ok((p, n))) = (module.notify_event, crate::convert::infos_to_c(&info))
            {
                let src = c_proc(&source.0, source.1);
                // SAFETY: the host's upcall: a valid proc and the library's own infos,
                // valid while it runs (hosts copy what they keep).
                unsafe {
                    f(
                        code,
                        &src,
                        range,
                        p,
                        n,
                        Some(upcall_done),
                        std::ptr::null_mut(),
                    )
                };
                // SAFETY: the array `infos_to_c` made, freed once.
                unsafe { crate::convert::free_c_infos(p, n) };
            }
        }
    }
}

/// The watcher: each job event of `server` becomes an upcall, made on this thread,
/// until `stop`.
fn watch(
    server: Arc<Server>,
    inst: Pmix,
    module: pmix_server_module_t,
    objects: Arc<Mutex<HashMap<(String, u32), Object>>>,
    stop: Arc<AtomicBool>,
) {
    while !stop.load(Ordering::Acquire) {
        let Some(ev) = server.next_event(WATCH_TICK) else {
            continue;
        };
        // On this thread, in order: one hop fewer between a client's request and
        // the host (a fence's latency is the sum of such hops).
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            upcall(&module, &inst, &server, &objects, ev)
        }));
        if r.is_err() {
            eprintln!("pmix-rs: an upcall into the host panicked; the server goes on");
        }
    }
}

/// `PMIX_RS_HOST_TRACE`: a directory where a hosted server appends, to
/// `<dir>/host.<pid>.trace`, one line per host call that describes the job
/// (`PMIx_server_init`, `PMIx_server_register_nspace`), with its infos decoded: what
/// a host (Slurm's plugin, `mpirun`, `orted`) registers, for whoever debugs a host.
/// Unset (the default), nothing is written; a directory that cannot be written to is
/// ignored.
pub const HOST_TRACE_VAR: &str = "PMIX_RS_HOST_TRACE";

/// Appends `call` and `infos` to the host trace (see [`HOST_TRACE_VAR`]).
fn trace_host(call: &str, infos: &[pmix::wire::Info]) {
    if std::env::var_os(HOST_TRACE_VAR).is_none() {
        return;
    }
    let mut line = format!("{call}:");
    for i in infos {
        line.push_str(&format!(
            " {}={:?};",
            i.key.as_str().unwrap_or("?"),
            i.value
        ));
    }
    trace_line(line);
}

/// Appends `line` to the host trace (see [`HOST_TRACE_VAR`]), after the wall-clock
/// time.
fn trace_line(line: String) {
    let Some(dir) = std::env::var_os(HOST_TRACE_VAR) else {
        return;
    };
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut line = format!("{t:.3} {line}");
    let path = std::path::Path::new(&dir).join(format!("host.{}.trace", std::process::id()));
    line.push('\n');
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
}

/// The prefix of the `PMIx_server_init` infos that set a server limit
/// (`pmixrs.limit.max_half_open` = 256: `pmix::server::LIMITS` names them).
pub const LIMIT_INFO_PREFIX: &str = "pmixrs.limit.";

/// What `PMIx_server_init`'s infos configure.
fn server_config(infos: &[pmix::wire::Info]) -> Result<ServerConfig, Status> {
    let mut cfg = ServerConfig {
        log: true,
        hosted: true,
        ..ServerConfig::default()
    };
    let mut system = None;
    for i in infos {
        let text = || i.value.as_str().map(str::to_string).ok_or(BAD_PARAM);
        match i.key.as_str().unwrap_or_default() {
            "pmix.srvr.tmpdir" => cfg.tmpdir_base = Some(text()?.into()),
            "pmix.sys.tmpdir" => system = Some(text()?),
            "pmix.srv.nspace" => cfg.nspace = Some(text()?),
            "pmix.srv.rank" => {
                cfg.rank = i
                    .value
                    .as_u64()
                    .and_then(|r| u32::try_from(r).ok())
                    .ok_or(BAD_PARAM)?
            }
            "pmix.hname" => cfg.hostname = Some(text()?),
            key => {
                // pmix-rs's own: "pmixrs.limit.NAME" = a number sets that limit.
                if let Some(name) = key.strip_prefix(LIMIT_INFO_PREFIX) {
                    let value = i.value.as_u64().ok_or(BAD_PARAM)?;
                    cfg.set_limit(name, value).map_err(|e| {
                        eprintln!("pmix-rs: PMIx_server_init: {e}");
                        BAD_PARAM
                    })?;
                }
            }
        }
    }
    if cfg.tmpdir_base.is_none() {
        cfg.tmpdir_base = system.map(Into::into);
    }
    Ok(cfg)
}

export! {
    /// `PMIx_server_init`: starts the server this process hosts (module docs), or adds
    /// a reference to the running one. `module` is copied (NULL: no upcalls).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT` when this process is a client or tool already;
    /// `PMIX_ERR_BAD_PARAM` for a malformed info (`PMIX_SERVER_TMPDIR`,
    /// `PMIX_SYSTEM_TMPDIR`, `PMIX_SERVER_NSPACE`, `PMIX_HOSTNAME` not strings,
    /// `PMIX_SERVER_RANK` not a rank, a `pmixrs.limit.NAME` that names no limit or
    /// is not a number); `PMIX_ERROR` when the listener, the directory
    /// or a thread cannot be made (the reason on stderr).
    ///
    /// # Safety
    /// `module` is NULL or points to a readable `pmix_server_module_t`; `info` points
    /// to `ninfo` readable infos (or is NULL with a zero count).
    unsafe fn PMIx_server_init(
        module: *mut pmix_server_module_t,
        info: *mut pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        let mut g = hosted();
        if let Some(h) = g.as_mut() {
            h.refs += 1;
            return Ok(());
        }
        if pmix::global::is_initialized() {
            return Err(Status::ERR_INIT);
        }
        // SAFETY: forwarded from the caller.
        let module = unsafe { module.as_ref() }.copied().unwrap_or_default();
        // SAFETY: forwarded from the caller.
        let infos = unsafe { infos_to_wire(info_slice(info, ninfo)?) }?;
        trace_host("PMIx_server_init", &infos);
        let mut cfg = server_config(&infos)?;
        // Published names must be found from every node: the host keeps them when it
        // can (Open MPI's daemons hand them to mpirun; Slurm answers NOT_SUPPORTED).
        cfg.host_pubsub =
            module.publish.is_some() && module.lookup.is_some() && module.unpublish.is_some();
        // A host that collects but carries no events (Slurm's plugin) runs collectives
        // over whole namespaces only: the server relays the rest over them.
        cfg.relay = module.fence_nb.is_some() && module.notify_event.is_none();
        let slot: Arc<std::sync::OnceLock<Arc<Server>>> = Arc::default();
        let sink_slot = Arc::clone(&slot);
        cfg.host_sink = Some(pmix::server::HostSink(Arc::new(move |call| {
            if let Some(server) = sink_slot.get() {
                host_call(&module, server, call);
            }
        })));
        let server = Arc::new(Server::start(cfg).map_err(|e| {
            eprintln!("PMIx_server_init: cannot start the server: {e}");
            Status::ERROR
        })?);
        let _ = slot.set(Arc::clone(&server));
        let inst = pmix::global::init(Role::Server, pmix::InitOptions::default(), "PMIx_server_init")
            .map_err(|e| e.status())?;
        inst.attach_server(Arc::clone(&server)).map_err(|e| e.status())?;
        let objects = Arc::new(Mutex::new(HashMap::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (s, i, o, st) = (Arc::clone(&server), inst.clone(), Arc::clone(&objects), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("pmix-host".into())
                .spawn(move || watch(s, i, module, o, st))
        };
        let watcher = match watcher {
            Ok(w) => w,
            Err(e) => {
                eprintln!("PMIx_server_init: cannot start a thread: {e}");
                let _ = pmix::global::finalize("PMIx_server_init");
                return Err(Status::ERROR);
            }
        };
        *g = Some(Hosted {
            server,
            inst,
            module,
            refs: 1,
            objects,
            stop,
            watcher: Some(watcher),
        });
        Ok(())
    }
}

export! {
    /// `PMIx_server_finalize`: drops a reference; the last stops the server (its
    /// clients' connections close), the watcher and the progress thread.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT` when no server runs; `PMIX_ERR_WOULD_BLOCK` on the progress
    /// thread (an upcall cannot finalize its own server).
    fn PMIx_server_finalize() -> pmix_status_t {
        let mut taken = {
            let mut g = hosted();
            let h = g.as_mut().ok_or(Status::ERR_INIT)?;
            if h.inst.on_progress_thread() {
                return Err(Status::ERR_WOULD_BLOCK);
            }
            h.refs -= 1;
            if h.refs > 0 {
                return Ok(());
            }
            g.take().ok_or(Status::ERR_INIT)?
        };
        taken.stop.store(true, Ordering::Release);
        if let Some(w) = taken.watcher.take() {
            let _ = w.join();
        }
        let stopped = taken.server.shutdown();
        let _ = taken.module;
        let fin = pmix::global::finalize("PMIx_server_finalize").map_err(|e| e.status());
        stopped.map_err(|e| {
            eprintln!("PMIx_server_finalize: {e}");
            Status::ERROR
        })?;
        fin
    }
}

export! {
    /// `PMIx_server_register_nspace`: registers a job whose `nlocalprocs` local ranks
    /// may then connect (docs/serving.md §4 for the keys read).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (a NULL or unterminated `nspace`, a
    /// malformed info, a registration the job keys contradict, a namespace registered
    /// already: the reason on stderr); `PMIX_ERR_UNREACH` when the server stopped.
    ///
    /// # Safety
    /// `nspace` points to a `pmix_nspace_t`; `info` to `ninfo` readable infos.
    unsafe fn PMIx_server_register_nspace(
        nspace: *const c_char,
        nlocalprocs: c_int,
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let (server, inst) = running()?;
        // SAFETY: forwarded from the caller.
        let nspace = unsafe { nspace_arg(nspace) }?;
        // SAFETY: forwarded from the caller.
        let infos = unsafe { infos_to_wire(info_slice(info, ninfo)?) }?;
        trace_host(&format!("PMIx_server_register_nspace({nspace}, {nlocalprocs})"), &infos);
        // SAFETY: plain libc calls without arguments.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let host = server.hostname();
        let r = pmix::server::hosted::namespace_from_host(nspace, nlocalprocs, &infos, host, uid, gid)
            .map_err(|e| {
                eprintln!("PMIx_server_register_nspace({nspace}): {e}");
                BAD_PARAM
            })
            .and_then(|spec| {
                server.add_namespace(spec).map_err(|e| {
                    eprintln!("PMIx_server_register_nspace({nspace}): {e}");
                    match e {
                        pmix::server::ApiError::Core(_) => BAD_PARAM,
                        _ => Status::ERR_UNREACH,
                    }
                })
            });
        complete(&inst, r, cbfunc, cbdata)
    }
}

export! {
    /// `PMIx_server_deregister_nspace`: forgets a job (its clients' connections
    /// close); `cbfunc` gets the outcome (`PMIX_ERR_INIT`, `PMIX_ERR_BAD_PARAM` for a
    /// bad or unknown `nspace`).
    ///
    /// # Safety
    /// `nspace` points to a `pmix_nspace_t`.
    unsafe fn PMIx_server_deregister_nspace(
        nspace: *const c_char,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) {
        let Ok((server, inst)) = running() else {
            return complete_void(None, Err(Status::ERR_INIT), cbfunc, cbdata);
        };
        // SAFETY: forwarded from the caller.
        let r = unsafe { nspace_arg(nspace) }.and_then(|ns| {
            hosted_objects(|o| o.retain(|k, _| k.0 != ns));
            server.remove_namespace(ns).map_err(|_| BAD_PARAM)
        });
        complete_void(Some(&inst), r, cbfunc, cbdata)
    }
}

/// Runs `f` on the registered clients' objects.
fn hosted_objects(f: impl FnOnce(&mut HashMap<(String, u32), Object>)) {
    let objects = hosted().as_ref().map(|h| Arc::clone(&h.objects));
    if let Some(o) = objects {
        f(&mut o.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

export! {
    /// `PMIx_server_register_client`: records `server_object` for the client's
    /// upcalls. The client's identity is checked at its handshake against its job's
    /// registration and this process's user (`uid`, `gid` are not used otherwise).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (NULL `proc_`, a bad namespace).
    ///
    /// # Safety
    /// `proc_` is NULL or points to a readable `pmix_proc_t`.
    unsafe fn PMIx_server_register_client(
        proc_: *const pmix_proc_t,
        uid: libc::uid_t,
        gid: libc::gid_t,
        server_object: *mut c_void,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (uid, gid);
        let (_, inst) = running()?;
        // SAFETY: forwarded from the caller.
        let p = unsafe { c_ref(proc_) }?;
        let key = (proc_nspace(p)?.to_string(), p.rank);
        hosted_objects(|o| {
            o.insert(key, Object(server_object));
        });
        complete(&inst, Ok(()), cbfunc, cbdata)
    }
}

export! {
    /// `PMIx_server_deregister_client`: forgets the client's `server_object`;
    /// `cbfunc` gets the outcome (`PMIX_ERR_INIT`, `PMIX_ERR_BAD_PARAM`).
    ///
    /// # Safety
    /// `proc_` is NULL or points to a readable `pmix_proc_t`.
    unsafe fn PMIx_server_deregister_client(
        proc_: *const pmix_proc_t,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) {
        let Ok((_, inst)) = running() else {
            return complete_void(None, Err(Status::ERR_INIT), cbfunc, cbdata);
        };
        // SAFETY: forwarded from the caller.
        let r = unsafe { c_ref(proc_) }.and_then(|p| {
            let key = (proc_nspace(p)?.to_string(), p.rank);
            hosted_objects(|o| {
                o.remove(&key);
            });
            Ok(())
        });
        complete_void(Some(&inst), r, cbfunc, cbdata)
    }
}

/// A malloc'ed copy of `s`.
///
/// # Errors
/// `PMIX_ERR_NOMEM`.
fn strdup(s: &CStr) -> Result<*mut c_char, Status> {
    let p = crate::boundary::c_strdup(s.to_str().map_err(|_| BAD_PARAM)?);
    if p.is_null() {
        Err(Status::ERR_NOMEM)
    } else {
        Ok(p)
    }
}

/// Sets `name=value` in the malloc'ed, NULL-terminated `env`, replacing an entry of
/// the same name.
///
/// # Safety
/// `*env` is NULL or a malloc'ed array of malloc'ed strings ending with NULL.
unsafe fn set_env(env: &mut *mut *mut c_char, name: &str, value: &str) -> Res {
    let entry = CString::new(format!("{name}={value}")).map_err(|_| BAD_PARAM)?;
    let prefix = format!("{name}=");
    let mut n = 0usize;
    if !env.is_null() {
        // SAFETY: a NULL-terminated array (caller's contract).
        while !unsafe { *env.add(n) }.is_null() {
            // SAFETY: each entry is a NUL-terminated string.
            let e = unsafe { CStr::from_ptr(*env.add(n)) };
            if e.to_bytes().starts_with(prefix.as_bytes()) {
                let new = strdup(&entry)?;
                // SAFETY: the entry was malloc'ed (contract); replaced once.
                unsafe {
                    libc::free((*env.add(n)).cast());
                    *env.add(n) = new;
                }
                return Ok(());
            }
            n += 1;
        }
    }
    let new = strdup(&entry)?;
    // SAFETY: `*env` is NULL or malloc'ed (contract); grown to n + 2 pointers.
    let grown = unsafe { libc::realloc(env.cast(), (n + 2) * std::mem::size_of::<*mut c_char>()) }
        .cast::<*mut c_char>();
    if grown.is_null() {
        // SAFETY: `new` came from malloc and was not handed out.
        unsafe { libc::free(new.cast()) };
        return Err(Status::ERR_NOMEM);
    }
    // SAFETY: `grown` holds n + 2 pointers.
    unsafe {
        *grown.add(n) = new;
        *grown.add(n + 1) = std::ptr::null_mut();
    }
    *env = grown;
    Ok(())
}

export! {
    /// `PMIx_server_setup_fork`: adds to `*env` what a client of either library needs
    /// to reach this server (`PMIX_NAMESPACE`, `PMIX_RANK`, the URI under every
    /// name, the security, store and buffer modes, the directories, the host name,
    /// `PMIX_VERSION`), replacing entries of the same name.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (NULL `proc_` or `env`, a bad
    /// namespace); `PMIX_ERR_NOMEM`.
    ///
    /// # Safety
    /// `proc_` points to a readable `pmix_proc_t`; `env` to a pointer that is NULL or
    /// a malloc'ed, NULL-terminated array of malloc'ed strings.
    unsafe fn PMIx_server_setup_fork(proc_: *const pmix_proc_t, env: *mut *mut *mut c_char) -> pmix_status_t {
        let (server, _) = running()?;
        // SAFETY: forwarded from the caller.
        let (p, env) = unsafe { (c_ref(proc_)?, c_mut(env)?) };
        let nspace = proc_nspace(p)?;
        for (k, v) in server.client_env(nspace, p.rank) {
            // SAFETY: forwarded from the caller.
            unsafe { set_env(env, &k, &v) }?;
        }
        Ok(())
    }
}

export! {
    /// `PMIx_server_dmodex_request`: another node asks, through the host, for a
    /// local client's data. `cbfunc` gets it (a blob the asking node's server reads;
    /// the bytes are valid while `cbfunc` runs) once the client committed, or
    /// `PMIX_ERR_NOT_FOUND` (not a local rank, or gone) or `PMIX_ERR_TIMEOUT`
    /// (nothing committed within 2 s), on the progress thread.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (NULL `proc_` or `cbfunc`, a bad
    /// namespace); `PMIX_ERR_UNREACH` when the server stopped (`cbfunc` is then not
    /// called).
    ///
    /// # Safety
    /// `proc_` is NULL or points to a readable `pmix_proc_t`.
    unsafe fn PMIx_server_dmodex_request(
        proc_: *const pmix_proc_t,
        cbfunc: pmix_dmodex_response_fn_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let (server, _) = running()?;
        // SAFETY: forwarded from the caller.
        let p = unsafe { c_ref(proc_) }?;
        let nspace = proc_nspace(p)?;
        let cbfunc = cbfunc.ok_or(BAD_PARAM)?;
        if std::env::var_os(HOST_TRACE_VAR).is_some() {
            trace_line(format!("dmodex request for {nspace}:{}", p.rank));
        }
        let token = pend(Pending::Request {
            cbfunc,
            cbdata: CbData(cbdata),
        });
        if server.dmodex_request(token as u64, nspace, p.rank).is_err() {
            take_pending(token);
            return Err(Status::ERR_UNREACH);
        }
        Ok(())
    }
}

export! {
    /// `PMIx_server_setup_application`: our clients need nothing set up per
    /// application: `cbfunc` gets `PMIX_SUCCESS` and no infos, on the progress
    /// thread.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (a bad `nspace` or info, NULL `cbfunc`).
    ///
    /// # Safety
    /// `nspace` points to a `pmix_nspace_t`; `info` to `ninfo` readable infos.
    unsafe fn PMIx_server_setup_application(
        nspace: *const c_char,
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_setup_application_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let (_, inst) = running()?;
        // SAFETY: forwarded from the caller.
        unsafe { nspace_arg(nspace) }?;
        // SAFETY: forwarded from the caller.
        unsafe { infos_to_wire(info_slice(info, ninfo)?) }?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        let data = CbData(cbdata);
        inst.post(move || {
            // SAFETY: the host's callback, once, with no infos and no release.
            unsafe { cb(Status::SUCCESS.0, std::ptr::null_mut(), 0, data.ptr(), None, std::ptr::null_mut()) };
        })
        .map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_server_setup_local_support`: nothing to set up on this node for our
    /// clients: completes (`cbfunc` with `PMIX_SUCCESS`, or
    /// `PMIX_OPERATION_SUCCEEDED` without one).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (a bad `nspace` or info).
    ///
    /// # Safety
    /// `nspace` points to a `pmix_nspace_t`; `info` to `ninfo` readable infos.
    unsafe fn PMIx_server_setup_local_support(
        nspace: *const c_char,
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let (_, inst) = running()?;
        // SAFETY: forwarded from the caller.
        unsafe { nspace_arg(nspace) }?;
        // SAFETY: forwarded from the caller.
        unsafe { infos_to_wire(info_slice(info, ninfo)?) }?;
        complete(&inst, Ok(()), cbfunc, cbdata)
    }
}

export! {
    /// `PMIx_server_IOF_deliver`: output of a process for the tools that pulled it.
    /// No tool can pull from our server (it refuses IOF pull requests), so the
    /// delivery reaches nobody and completes, as OpenPMIx's does with no subscriber.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (NULL `source` or `bo`, a bad info).
    ///
    /// # Safety
    /// `source` and `bo` are NULL or readable; `info` points to `ninfo` readable
    /// infos.
    unsafe fn PMIx_server_IOF_deliver(
        source: *const pmix_proc_t,
        channel: u16,
        bo: *const pmix_byte_object_t,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = channel;
        let (_, inst) = running()?;
        // SAFETY: forwarded from the caller.
        unsafe { c_ref(source)?; c_ref(bo)? };
        // SAFETY: forwarded from the caller.
        unsafe { infos_to_wire(info_slice(info, ninfo)?) }?;
        complete(&inst, Ok(()), cbfunc, cbdata)
    }
}

/// Hands `*out` the malloc'ed copy of `text`.
fn give_string(out: *mut *mut c_char, text: &str) -> Res {
    // SAFETY: the caller checked `out` is writable.
    let out = unsafe { c_mut(out) }?;
    *out = strdup(&CString::new(text).map_err(|_| BAD_PARAM)?)?;
    Ok(())
}

export! {
    /// `PMIx_generate_regex`: OpenPMIx's native `pmix[...]` form of a comma-separated
    /// node list, malloc'ed into `*regex`.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `input` or `regex`, a list the form cannot hold).
    ///
    /// # Safety
    /// `input` is NULL or a NUL-terminated string; `regex` NULL or writable.
    unsafe fn PMIx_generate_regex(input: *const c_char, regex: *mut *mut c_char) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        let input = unsafe { c_text(input) }?;
        let r = pmix::regex::generate_node_regex(input).map_err(|_| BAD_PARAM)?;
        give_string(regex, &r)
    }
}

export! {
    /// `PMIx_generate_ppn`: OpenPMIx's native form of a `;`-separated list (one entry
    /// per node) of comma-separated ranks, malloc'ed into `*ppn`.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `input` or `ppn`, a malformed list).
    ///
    /// # Safety
    /// `input` is NULL or a NUL-terminated string; `ppn` NULL or writable.
    unsafe fn PMIx_generate_ppn(input: *const c_char, ppn: *mut *mut c_char) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        let input = unsafe { c_text(input) }?;
        let r = pmix::regex::generate_ppn(input).map_err(|_| BAD_PARAM)?;
        give_string(ppn, &r)
    }
}

/// The answer of the server calls we do not serve: `PMIX_ERR_INIT` without a server,
/// else `PMIX_ERR_NOT_SUPPORTED` (no callback is called).
fn unserved() -> Res {
    running()?;
    Err(Status::ERR_NOT_SUPPORTED)
}

export! {
    /// `PMIx_server_collect_inventory`: not served (no inventory is collected).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_collect_inventory(
        directives: *mut pmix_info_t,
        ndirs: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (directives, ndirs, cbfunc, cbdata);
        unserved()
    }
}

export! {
    /// `PMIx_server_deliver_inventory`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_deliver_inventory(
        info: *mut pmix_info_t,
        ninfo: usize,
        directives: *mut pmix_info_t,
        ndirs: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (info, ninfo, directives, ndirs, cbfunc, cbdata);
        unserved()
    }
}

export! {
    /// `PMIx_server_generate_locality_string`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED` (`*locality` untouched).
    fn PMIx_server_generate_locality_string(
        cpuset: *const pmix_cpuset_t,
        locality: *mut *mut c_char,
    ) -> pmix_status_t {
        let _ = (cpuset, locality);
        unserved()
    }
}

export! {
    /// `PMIx_server_generate_cpuset_string`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED` (`*cpuset_string` untouched).
    fn PMIx_server_generate_cpuset_string(
        cpuset: *const pmix_cpuset_t,
        cpuset_string: *mut *mut c_char,
    ) -> pmix_status_t {
        let _ = (cpuset, cpuset_string);
        unserved()
    }
}

export! {
    /// `PMIx_server_define_process_set`: not served (no process sets are kept).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_define_process_set(
        members: *const pmix_proc_t,
        nmembers: usize,
        pset_name: *const c_char,
    ) -> pmix_status_t {
        let _ = (members, nmembers, pset_name);
        unserved()
    }
}

export! {
    /// `PMIx_server_delete_process_set`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_delete_process_set(pset_name: *mut c_char) -> pmix_status_t {
        let _ = pset_name;
        unserved()
    }
}

export! {
    /// `PMIx_server_register_resources`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_register_resources(
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (info, ninfo, cbfunc, cbdata);
        unserved()
    }
}

export! {
    /// `PMIx_server_deregister_resources`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_deregister_resources(
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (info, ninfo, cbfunc, cbdata);
        unserved()
    }
}

export! {
    /// `PMIx_Register_attributes`: a host's table of the attributes it supports is
    /// not kept (queries of supported attributes are not served).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `function` or `attrs`), else
    /// `PMIX_ERR_NOT_SUPPORTED`.
    ///
    /// # Safety
    /// Nothing is read: any pointers are accepted.
    fn PMIx_Register_attributes(function: *mut c_char, attrs: *mut *mut c_char) -> pmix_status_t {
        crate::boundary::not_null(function)?;
        crate::boundary::not_null(attrs)?;
        Err(Status::ERR_NOT_SUPPORTED)
    }
}

#[cfg(test)]
mod tests {
    use super::{BAD_PARAM, host_owned_copy, server_config};
    use pmix::wire::{Info, Value};

    #[test]
    fn a_limit_info_sets_that_limit_and_a_wrong_one_is_bad_param() {
        let cfg = server_config(&[Info::new("pmixrs.limit.max_half_open", 16u32)]).unwrap();
        assert_eq!(cfg.max_half_open, 16);
        let cfg = server_config(&[Info::new(
            "pmixrs.limit.max_unfinished_bytes",
            Value::Size(1 << 20),
        )])
        .unwrap();
        assert_eq!(cfg.max_unfinished_bytes, 1 << 20);
        for bad in [
            Info::new("pmixrs.limit.nonsense", 1u32),
            Info::new("pmixrs.limit.max_half_open", "sixteen"),
        ] {
            assert_eq!(server_config(&[bad]).err(), Some(BAD_PARAM));
        }
    }

    #[test]
    fn fence_data_handed_to_the_host_is_its_own_malloced_copy() {
        // The host frees what fence_nb gives it (Open MPI's orted does): a malloc'ed
        // copy, which the library keeps no hold of; no data is NULL.
        assert!(host_owned_copy(&[]).is_none());
        let data = [1u8, 2, 3, 250];
        let p = host_owned_copy(&data).expect("a copy");
        assert_ne!(p.cast::<u8>().cast_const(), data.as_ptr());
        // SAFETY: `p` holds data.len() bytes from malloc; freed once, as a host does.
        unsafe {
            assert_eq!(std::slice::from_raw_parts(p.cast::<u8>(), data.len()), data);
            libc::free(p.cast());
        }
    }
}
