//! The upcalls into the host's `pmix_server_module_t`: `CHost`, the server's [`Host`]
//! over the module, and the upcalls waiting for the host's callback, by token.

use std::collections::HashMap;
use std::ffi::{CString, c_char, c_void};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

use pmix::server::{Host, LogStream, ProcName, Provides, Reply};
use pmix_core::Status;

use super::trace::{HOST_TRACE_VAR, trace_line};
use crate::boundary::{BAD_PARAM, CbData, c_chars, callback, try_slice};
use crate::cmem::c_copy;
use crate::data::convert::{CInfos, proc_nspace, value_to_wire};
use crate::types::{
    pmix_info_t, pmix_op_cbfunc_t, pmix_pdata_t, pmix_proc_t, pmix_release_cbfunc_t,
    pmix_server_module_t, pmix_status_t,
};

/// A host's `server_object`: never dereferenced, only handed back.
#[derive(Clone, Copy)]
pub(super) struct Object(pub(super) *mut c_void);

// SAFETY: the library never reads or writes through the pointer, on any thread: it is
// kept as a value and handed back, unchanged, to the host's own upcalls (which the host
// lets the server's thread make, the C contract of `PMIx_server_init`). Whatever it
// points to is the host's to synchronise.
unsafe impl Send for Object {}

/// What an upcall's `cbdata` stands for: a token into [`PENDING`], never a pointer,
/// so a host that calls back twice, late, or after returning an error cannot make
/// the library touch freed memory. Each holds the reply the server waits for.
enum Pending {
    /// A `fence_nb` upcall, and what the host may read until it calls back (the
    /// procs, the info).
    Fence {
        reply: Reply<Vec<u8>>,
        _keep: Box<FenceArgs>,
    },
    /// A `direct_modex` upcall.
    Modex { reply: Reply<Vec<u8>> },
    /// A `client_finalized` upcall: its completion lets the server answer the
    /// client's FINALIZE.
    Finalize { reply: Reply<()> },
    /// A `publish` or `unpublish` upcall.
    Op { reply: Reply<()> },
    /// A `lookup` upcall.
    Lookup {
        reply: Reply<Vec<pmix::wire::Pdata>>,
    },
}

/// The arguments a `fence_nb` upcall is given, alive until its callback. The data
/// is not among them: the host owns it (see [`CHost::fence`]).
struct FenceArgs {
    procs: Vec<pmix_proc_t>,
    info: CInfos,
}

// SAFETY: `procs` is plain data. `info` holds the library's own C infos, whose pointers
// lead only to memory made for them (their values' strings and arrays), bound to no
// thread: moving them to another thread and releasing them there (`CInfos`'s drop, once)
// is sound. Until then the host only reads them (`fence_nb`'s contract).
unsafe impl Send for FenceArgs {}

/// The upcalls waiting for their callback, by token.
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

/// A host's status as a result: `ok` on `PMIX_SUCCESS`, else the status.
fn result_of<T>(status: pmix_status_t, ok: T) -> Result<T, Status> {
    if status == Status::SUCCESS.0 {
        Ok(ok)
    } else {
        Err(Status(status))
    }
}

callback! {
    /// The `pmix_modex_cbfunc_t` of the `fence_nb` and `direct_modex` upcalls:
    /// copies the host's bytes (none for NULL, or a count no array can have), releases
    /// them, and answers the server.
    ///
    /// # C contract
    /// `data` is NULL or points to `ndata` readable bytes; `release_fn`, when not NULL,
    /// may be called once with `release_cbdata`, from another thread, once the library
    /// is done with `data`.
    pub(crate) fn modex_answer(
        status: pmix_status_t,
        data: *const c_char,
        ndata: usize,
        cbdata: *mut c_void,
        release_fn: pmix_release_cbfunc_t,
        release_cbdata: *mut c_void,
    ) {
        let bytes = try_slice!(data.cast::<u8>(), ndata)
            .map_or_else(|_| Vec::new(), <[u8]>::to_vec);
        if let Some(release) = release_fn {
            // Later, on the progress thread: hosts call this with their own lock held
            // and take it again in `release_fn` (Slurm does), as OpenPMIx's library
            // releases after the callback returned.
            let rel = CbData(release_cbdata);
            let run = move || {
                // SAFETY: the host handed `release` with `release_cbdata` to be called
                // once, from any thread, when the library is done with `data` (the C
                // contract): `data` was copied above, and `run` runs at most once.
                unsafe { release(rel.ptr()) };
            };
            if let Err(e) = pmix::global::get().and_then(|i| i.post(run)) {
                let _ = e;
            }
        }
        let token = cbdata as usize;
        match take_pending(token) {
            Some(Pending::Fence { reply, .. }) => {
                if std::env::var_os(HOST_TRACE_VAR).is_some() {
                    let n = bytes.len();
                    trace_line(format!("fence_nb #{token} done: status {status}, {n} bytes"));
                }
                reply.send(result_of(status, bytes));
            }
            Some(Pending::Modex { reply }) => {
                if std::env::var_os(HOST_TRACE_VAR).is_some() {
                    let n = bytes.len();
                    trace_line(format!("direct_modex #{token} done: status {status}, {n} bytes"));
                }
                reply.send(result_of(status, bytes));
            }
            // Not an answer to a modex upcall: put it back.
            Some(p @ (Pending::Finalize { .. } | Pending::Op { .. } | Pending::Lookup { .. })) => {
                PENDING
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert_with(HashMap::new)
                    .insert(token, p);
            }
            None => {}
        }
    }
}

/// A `malloc`ed copy of `data` for a host to free, or `None` for no data (or no memory).
fn host_owned_copy(data: &[u8]) -> Option<*mut c_char> {
    c_copy(data)
        .ok()
        .filter(|p| !p.is_null())
        .map(|p| p.cast::<c_char>())
}

callback! {
    /// The `cbfunc` of the `publish` and `unpublish` upcalls: the host's status to
    /// the client.
    pub(crate) fn op_answer(status: pmix_status_t, cbdata: *mut c_void) {
        if let Some(Pending::Op { reply }) = take_pending(cbdata as usize) {
            reply.send(result_of(status, ()));
        }
    }
}

callback! {
    /// The `cbfunc` of the `lookup` upcall: what the host found, copied, to the
    /// client.
    ///
    /// # C contract
    /// `data` points to `ndata` readable `pmix_pdata_t` (or is NULL with none), each
    /// value holding what its type says.
    pub(crate) fn lookup_answer(
        status: pmix_status_t,
        data: *mut pmix_pdata_t,
        ndata: usize,
        cbdata: *mut c_void,
    ) {
        let Some(Pending::Lookup { reply }) = take_pending(cbdata as usize) else {
            return;
        };
        let found = try_slice!(data, ndata).and_then(|all| {
            all.iter()
                .map(pdata_to_wire)
                .collect::<Result<Vec<_>, Status>>()
        });
        reply.send(found.and_then(|found| result_of(status, found)));
    }
}

/// A host's `pmix_pdata_t` as the runtime's (`d` is C's: the C contract).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a key or namespace without its NUL or not UTF-8; the
/// value's errors.
fn pdata_to_wire(d: &pmix_pdata_t) -> Result<pmix::wire::Pdata, Status> {
    let key = c_chars(&d.key);
    let nul = key.iter().position(|&b| b == 0).ok_or(BAD_PARAM)?;
    let key = std::str::from_utf8(&key[..nul]).map_err(|_| BAD_PARAM)?;
    Ok(pmix::wire::Pdata {
        proc: pmix::wire::Proc::new(proc_nspace(&d.proc_)?, d.proc_.rank),
        key: key.into(),
        value: value_to_wire(&d.value)?,
    })
}

/// Where `infos` are for an upcall, and how many: NULL and 0 for none, as the
/// upcalls are given no infos.
fn infos_arg(infos: &mut CInfos) -> (*mut pmix_info_t, usize) {
    if infos.len() == 0 {
        (std::ptr::null_mut(), 0)
    } else {
        (infos.as_mut_ptr(), infos.len())
    }
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

/// The host's module as the server's [`Host`]: each method makes the upcall of the
/// same name, its arguments made C, and its callback answers the method's reply.
///
/// An upcall is a call of a function the host gave, so each is an `unsafe` block, and
/// each is sound for the same reasons: a non-NULL entry of the module is a function of
/// its slot's type that the server's thread may call until the last
/// `PMIx_server_finalize` (the C contract of `PMIx_server_init`, which copied the
/// module here); every pointer it is given is to the library's own memory, alive and
/// unchanged until the upcall returns (or, for `fence_nb`, until its callback: the
/// arguments wait in [`PENDING`]), and the host copies what it keeps, as OpenPMIx's
/// upcalls require; a `cbdata` is a token, not an address, and a `cbfunc` is one of
/// the library's callbacks.
pub(super) struct CHost {
    module: pmix_server_module_t,
    /// Each registered client's `server_object`, handed back in its upcalls.
    objects: Arc<Mutex<HashMap<(String, u32), Object>>>,
}

impl CHost {
    /// The host's `module`, handing back the registered clients' `objects`.
    pub(super) fn new(
        module: pmix_server_module_t,
        objects: Arc<Mutex<HashMap<(String, u32), Object>>>,
    ) -> Self {
        Self { module, objects }
    }

    /// The `server_object` registered for `proc` (NULL when none was).
    fn object(&self, proc: &ProcName) -> *mut c_void {
        self.objects
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(proc)
            .copied()
            .unwrap_or(Object(std::ptr::null_mut()))
            .0
    }

    /// Makes the `publish`, `lookup` or `unpublish` upcall (the one `call` names
    /// with `keys`), its completion answering through `pending`; `fail` answers
    /// when the upcall completes at once or refuses.
    fn pubsub(
        &self,
        proc: &ProcName,
        keys: Option<&[String]>,
        info: &[pmix::wire::Info],
        pending: Pending,
    ) {
        let fail = |p: Option<Pending>, status: Status| match p {
            Some(Pending::Op { reply }) => reply.send(result_of(status.0, ())),
            Some(Pending::Lookup { reply }) => reply.send(result_of(status.0, Vec::new())),
            _ => {}
        };
        let Ok(mut infos) = CInfos::from_wire(info) else {
            return fail(Some(pending), Status::ERR_NOMEM);
        };
        let (ip, ni) = infos_arg(&mut infos);
        let lookup = matches!(pending, Pending::Lookup { .. });
        let who = c_proc(&proc.0, proc.1);
        let (_owned, mut ptrs) = c_keys(keys.unwrap_or_default());
        let token = pend(pending);
        let cbdata = token as *mut c_void;
        let kp = ptrs.as_mut_ptr();
        let module = &self.module;
        // SAFETY: the host's upcalls, functions of these types that the server's thread
        // may call (the C contract of `PMIx_server_init`), with what each type names:
        // `who`, the NULL-terminated keys at `kp` (`ptrs`, over `_owned`) and the `ni`
        // infos at `ip` (`infos`), all alive until it returns (hosts copy what they
        // keep); `cbdata` is a token, and the callbacks are the library's.
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
        drop(infos);
        if rc != Status::SUCCESS.0 {
            // Done at once, or refused: the callback will not come.
            let status = if rc == Status::OPERATION_SUCCEEDED.0 {
                Status::SUCCESS
            } else {
                Status(rc)
            };
            fail(take_pending(token), status);
        }
    }
}

impl Host for CHost {
    fn provides(&self) -> Provides {
        let m = &self.module;
        let mut p = Provides::NODES;
        for (has, flag) in [
            (m.fence_nb.is_some(), Provides::FENCE),
            (m.direct_modex.is_some(), Provides::DIRECT_MODEX),
            (m.notify_event.is_some(), Provides::NOTIFY),
            (m.log.is_some(), Provides::LOG),
            // Published names must be found from every node: the host keeps them
            // when it can (Open MPI's daemons hand them to mpirun; Slurm has none).
            (
                m.publish.is_some() && m.lookup.is_some() && m.unpublish.is_some(),
                Provides::PUBSUB,
            ),
        ] {
            if has {
                p = p | flag;
            }
        }
        p
    }

    fn client_connected(&self, proc: ProcName) {
        let p = c_proc(&proc.0, proc.1);
        let obj = self.object(&proc);
        let done: pmix_op_cbfunc_t = Some(upcall_done);
        if let Some(f) = self.module.client_connected2 {
            // SAFETY: an upcall (see `CHost`): `p` lives through the call, `obj` is the
            // host's own `server_object` handed back, no infos (NULL, 0), no `cbdata`.
            unsafe { f(&p, obj, std::ptr::null_mut(), 0, done, std::ptr::null_mut()) };
        } else if let Some(f) = self.module.client_connected {
            // SAFETY: an upcall (see `CHost`), with the arguments above less the infos.
            unsafe { f(&p, obj, done, std::ptr::null_mut()) };
        }
    }

    fn client_finalized(&self, proc: ProcName, reply: Reply<()>) {
        let Some(f) = self.module.client_finalized else {
            return reply.send(Ok(()));
        };
        let p = c_proc(&proc.0, proc.1);
        let obj = self.object(&proc);
        let token = pend(Pending::Finalize { reply });
        // SAFETY: an upcall (see `CHost`): `p` lives through the call, `obj` is the
        // host's own; `finalize_done` may run before it returns (the token is pending
        // already, and taken once).
        let rc = unsafe { f(&p, obj, Some(finalize_done), token as *mut c_void) };
        if rc != Status::SUCCESS.0 {
            // Done already (OPERATION_SUCCEEDED), or refused: no callback.
            ack_finalize(token);
        }
    }

    fn client_aborted(&self, proc: ProcName, status: i32, message: Option<String>) {
        let Some(f) = self.module.abort else {
            return;
        };
        let p = c_proc(&proc.0, proc.1);
        let msg = CString::new(message.unwrap_or_default().replace('\0', " ")).unwrap_or_default();
        // SAFETY: an upcall (see `CHost`): `p` and the NUL-terminated `msg` live through
        // the call; no procs (NULL, 0: the whole job, as OpenPMIx passes an abort of
        // everyone).
        unsafe {
            f(
                &p,
                self.object(&proc),
                status,
                msg.as_ptr(),
                std::ptr::null_mut(),
                0,
                Some(upcall_done),
                std::ptr::null_mut(),
            )
        };
    }

    fn fence(&self, procs: Vec<ProcName>, collect: bool, data: Vec<u8>, reply: Reply<Vec<u8>>) {
        let Some(f) = self.module.fence_nb else {
            // As OpenPMIx: a fence beyond the node needs the host.
            return reply.send(Err(Status::ERR_NOT_SUPPORTED));
        };
        let collect_data = [pmix::wire::Info::new(pmix::wire::keys::COLLECT_DATA, true)];
        let info = CInfos::lossy(if collect { &collect_data } else { &[] });
        let mut args = Box::new(FenceArgs {
            procs: procs.iter().map(|(ns, r)| c_proc(ns, *r)).collect(),
            info,
        });
        let (pp, np) = (args.procs.as_ptr(), args.procs.len());
        let (ip, ni) = infos_arg(&mut args.info);
        // The host owns the data, as OpenPMIx's server hands it over (unloaded from
        // its buffer, never freed after the upcall): Open MPI's orted loads it into a
        // buffer that frees it; a copy the library also freed was freed twice.
        let (dp, nd) = match host_owned_copy(&data) {
            Some(p) => (p, data.len()),
            None => (std::ptr::null_mut(), 0),
        };
        let token = pend(Pending::Fence { reply, _keep: args });
        if std::env::var_os(HOST_TRACE_VAR).is_some() {
            trace_line(format!(
                "fence_nb #{token}: procs {procs:?}, collect {collect}, {} bytes",
                data.len()
            ));
        }
        // SAFETY: an upcall (see `CHost`): the `np` procs at `pp` and the `ni` infos at
        // `ip` are the boxed `FenceArgs`, whose vectors are not touched again until the
        // pending fence is taken (by `modex_answer`, or below on a refusal); the `nd`
        // bytes at `dp` are `malloc`ed for the host, which owns them from now on.
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
            && let Some(Pending::Fence { reply, .. }) = take_pending(token)
        {
            reply.send(Err(Status(rc)));
        }
    }

    fn direct_modex(&self, proc: ProcName, reply: Reply<Vec<u8>>) {
        let Some(f) = self.module.direct_modex else {
            return reply.send(Err(Status::ERR_NOT_FOUND));
        };
        let p = c_proc(&proc.0, proc.1);
        let token = pend(Pending::Modex { reply });
        if std::env::var_os(HOST_TRACE_VAR).is_some() {
            trace_line(format!("direct_modex #{token}: {}:{}", proc.0, proc.1));
        }
        // SAFETY: an upcall (see `CHost`): `p` lives through the call; no infos (NULL,
        // 0); `modex_answer` may run before it returns (the token is pending already).
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
            && let Some(Pending::Modex { reply }) = take_pending(token)
        {
            reply.send(Err(Status(rc)));
        }
    }

    fn notify(&self, code: i32, source: ProcName, range: u8, info: Vec<pmix::wire::Info>) {
        let Some(f) = self.module.notify_event else {
            return;
        };
        let info = pmix::server::hosted::event_info_to_host(&info);
        let Ok(mut infos) = CInfos::from_wire(&info) else {
            return;
        };
        let (p, n) = infos_arg(&mut infos);
        let src = c_proc(&source.0, source.1);
        // SAFETY: an upcall (see `CHost`): `src` and the `n` infos at `p` (`infos`)
        // live through the call.
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
        drop(infos);
    }

    fn publish(&self, proc: ProcName, info: Vec<pmix::wire::Info>, reply: Reply<()>) {
        self.pubsub(&proc, None, &info, Pending::Op { reply });
    }

    fn lookup(
        &self,
        proc: ProcName,
        keys: Vec<String>,
        info: Vec<pmix::wire::Info>,
        reply: Reply<Vec<pmix::wire::Pdata>>,
    ) {
        self.pubsub(&proc, Some(&keys), &info, Pending::Lookup { reply });
    }

    fn unpublish(
        &self,
        proc: ProcName,
        keys: Vec<String>,
        info: Vec<pmix::wire::Info>,
        reply: Reply<()>,
    ) {
        self.pubsub(&proc, Some(&keys), &info, Pending::Op { reply });
    }

    fn log(&self, proc: ProcName, stream: LogStream, text: String) {
        let key = match stream {
            LogStream::Stderr => pmix::wire::keys::LOG_STDERR,
            LogStream::Stdout => pmix::wire::keys::LOG_STDOUT,
        };
        let Some(f) = self.module.log else {
            return pmix::server::write_log(stream, &text);
        };
        let Ok(mut infos) = CInfos::from_wire(&[pmix::wire::Info::new(key, text.as_str())]) else {
            return pmix::server::write_log(stream, &text);
        };
        let (p, n) = infos_arg(&mut infos);
        let who = c_proc(&proc.0, proc.1);
        // SAFETY: an upcall (see `CHost`; Open MPI's `mpirun` prints it, an
        // `MPI_Abort` message among them): `who` and the `n` infos at `p` (`infos`)
        // live through the call; no directives (NULL, 0).
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
        drop(infos);
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
    if let Some(Pending::Finalize { reply }) = take_pending(token) {
        reply.send(Ok(()));
    }
}

/// A `pmix_proc_t` of `nspace` and `rank`.
fn c_proc(nspace: &str, rank: u32) -> pmix_proc_t {
    let mut p = pmix_proc_t {
        rank,
        ..pmix_proc_t::EMPTY
    };
    crate::boundary::copy_c_str(&mut p.nspace, nspace.as_bytes());
    p
}

#[cfg(test)]
mod tests {
    use super::host_owned_copy;

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
