//! Starting and stopping the server this process hosts (`PMIx_server_init`,
//! `PMIx_server_finalize`), and registering its jobs and clients
//! (`PMIx_server_register_nspace`, `_deregister_nspace`, `_register_client`,
//! `_deregister_client`).

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex, PoisonError};

use pmix::server::{Server, ServerConfig};
use pmix::{Pmix, PmixError, Role};
use pmix_core::Status;

use super::trace::trace_host;
use super::upcalls::{CHost, Object};
use super::{complete, complete_void, nspace_arg};
use crate::boundary::{BAD_PARAM, export, opt_ref, try_ref};
use crate::data::convert::{proc_nspace, try_infos};
use crate::types::{pmix_info_t, pmix_op_cbfunc_t, pmix_proc_t, pmix_server_module_t};

/// The server this process hosts.
struct Hosted {
    server: Arc<Server>,
    inst: Pmix,
    refs: usize,
    /// Each registered client's `server_object`, handed back in its upcalls.
    objects: Arc<Mutex<HashMap<(String, u32), Object>>>,
}

/// The hosted server, when `PMIx_server_init` ran.
static HOSTED: Mutex<Option<Hosted>> = Mutex::new(None);

/// The hosted server's slot, locked (a poisoned lock is taken as it is: every change
/// to it is one assignment).
fn hosted() -> std::sync::MutexGuard<'static, Option<Hosted>> {
    HOSTED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The running server and the instance whose progress thread runs the callbacks.
///
/// # Errors
/// `PMIX_ERR_INIT` before `PMIx_server_init` or after the last finalize.
pub(super) fn running() -> Result<(Arc<Server>, Pmix), Status> {
    let g = hosted();
    let h = g.as_ref().ok_or(Status::ERR_INIT)?;
    Ok((Arc::clone(&h.server), h.inst.clone()))
}

/// The prefix of the `PMIx_server_init` infos that set a server limit
/// (`pmixrs.limit.max_half_open` = 256: `pmix::server::LIMITS` names them).
pub const LIMIT_INFO_PREFIX: &str = pmix::wire::keys::RS_LIMIT_PREFIX;

/// What `PMIx_server_init`'s infos configure ([`ServerConfig::from_init_infos`]);
/// the reason for a refusal goes to stderr.
fn server_config(infos: &[pmix::wire::Info]) -> Result<ServerConfig, Status> {
    ServerConfig::from_init_infos(infos).map_err(|e| {
        eprintln!("pmix-rs: PMIx_server_init: {e}");
        BAD_PARAM
    })
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
    /// # C contract
    /// `module` is NULL or points to a readable `pmix_server_module_t` whose entries are
    /// NULL or functions of their slots' types (the upcalls, made from the server's
    /// thread until the last `PMIx_server_finalize`, and given callbacks the library
    /// defines); `info` points to `ninfo` readable infos (or is NULL with a zero count).
    fn PMIx_server_init(
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
        let module = opt_ref!(module).copied().unwrap_or_default();
        let infos = try_infos!(info, ninfo)?;
        trace_host("PMIx_server_init", &infos);
        let cfg = server_config(&infos)?;
        let options = pmix::InitOptions::default();
        let inst = pmix::global::init(Role::Server, options, "PMIx_server_init")
            .map_err(|e| e.status())?;
        let objects = Arc::new(Mutex::new(HashMap::new()));
        let host = Arc::new(CHost::new(module, Arc::clone(&objects)));
        let server = match inst.serve(cfg, host) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("PMIx_server_init: {e}");
                let _ = pmix::global::finalize("PMIx_server_init");
                return Err(Status::ERROR);
            }
        };
        *g = Some(Hosted {
            server,
            inst,
            refs: 1,
            objects,
        });
        Ok(())
    }
}

export! {
    /// `PMIx_server_finalize`: drops a reference; the last stops the server (its
    /// clients' connections close) and the progress thread.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT` when no server runs; `PMIX_ERR_WOULD_BLOCK` on the progress
    /// thread (an upcall cannot finalize its own server).
    fn PMIx_server_finalize() -> pmix_status_t {
        let taken = {
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
        let stopped = taken.server.shutdown();
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
    /// # C contract
    /// `nspace` is NULL or a string (read up to its NUL, within 256 bytes); `info`
    /// points to `ninfo` readable infos (or is NULL with 0); `cbfunc` must be safe to
    /// call from another thread with `cbdata`.
    fn PMIx_server_register_nspace(
        nspace: *const c_char,
        nlocalprocs: c_int,
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let (server, inst) = running()?;
        let nspace = nspace_arg(nspace)?;
        let infos = try_infos!(info, ninfo)?;
        trace_host(&format!("PMIx_server_register_nspace({nspace}, {nlocalprocs})"), &infos);
        let (uid, gid) = pmix::os::effective_ids();
        let host = server.hostname();
        let spec = pmix::server::hosted::namespace_from_host;
        let r = spec(nspace, nlocalprocs, &infos, host, uid, gid)
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
    /// # C contract
    /// `nspace` as for [`PMIx_server_register_nspace`]; `cbfunc` must be safe to call
    /// from another thread with `cbdata`.
    fn PMIx_server_deregister_nspace(
        nspace: *const c_char,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) {
        let Ok((server, inst)) = running() else {
            return complete_void(None, Err(Status::ERR_INIT), cbfunc, cbdata);
        };
        let r = nspace_arg(nspace).and_then(|ns| {
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
    /// # C contract
    /// `proc_` is NULL or points to a readable `pmix_proc_t`; `cbfunc` must be safe to
    /// call from another thread with `cbdata` (`server_object` is only handed back).
    fn PMIx_server_register_client(
        proc_: *const pmix_proc_t,
        uid: libc::uid_t,
        gid: libc::gid_t,
        server_object: *mut c_void,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (uid, gid);
        let (_, inst) = running()?;
        let p = try_ref!(proc_)?;
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
    /// # C contract
    /// As [`PMIx_server_register_client`].
    fn PMIx_server_deregister_client(
        proc_: *const pmix_proc_t,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) {
        let Ok((_, inst)) = running() else {
            return complete_void(None, Err(Status::ERR_INIT), cbfunc, cbdata);
        };
        let r = try_ref!(proc_).and_then(|p| {
            let key = (proc_nspace(p)?.to_string(), p.rank);
            hosted_objects(|o| {
                o.remove(&key);
            });
            Ok(())
        });
        complete_void(Some(&inst), r, cbfunc, cbdata)
    }
}

#[cfg(test)]
mod tests {
    use super::{BAD_PARAM, server_config};
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
}
