//! The server API (`include/pmix_server.h`): what a host — Slurm's PMIx plugin,
//! Open MPI's `mpirun` and `orted` — calls to run our server inside it, and the
//! upcalls our server makes into the host's module (docs/abi.md, "The server API").
//!
//! `PMIx_server_init` makes the server-role library instance (whose progress thread
//! runs every completion callback) and, through it ([`Pmix::serve`]), a
//! [`pmix::Server`] (a listener on 127.0.0.1 and one progress thread) hosted by the
//! host's module: `CHost` is the [`Host`] over the `pmix_server_module_t`, each upcall
//! the module has (not NULL) provided ([`Provides`]), so this folder only translates
//! C ⇄ Rust. The server makes every upcall from its progress thread, in the order its
//! core decides them (OpenPMIx makes all of them from its progress thread): a connected
//! client → `client_connected2` (else `client_connected`), a finalize →
//! `client_finalized`, an abort → `abort`, a client's `PMIx_Log` → `log` (none: this
//! process's stderr or stdout). What is a rule rather than a translation is the
//! runtime's: a hosted server answers a client's FINALIZE once the host's
//! `client_finalized` callback came (`pmix::server::core`), and a client lost without
//! finalizing is a `PMIX_ERR_LOST_CONNECTION` event (range PROC_LOCAL, source the
//! client) to the handlers the host registered in this process ([`Pmix::serve`];
//! Slurm's default handler then ends the step).
//!
//! **Other nodes** (docs/serving.md §4). The server runs hosted
//! ([`Provides::NODES`]): a fence whose participants include ranks of other nodes
//! goes, once this node's participants joined, to `fence_nb` with this node's blob
//! (`pmix_wire::modex`; `PMIX_COLLECT_DATA` when asked), and the concatenation the
//! host hands back completes it; a get of another node's rank goes to
//! `direct_modex`; `PMIx_server_dmodex_request` answers the host's request for a
//! local rank's data. Without `fence_nb` such a fence fails with
//! `PMIX_ERR_NOT_SUPPORTED` (as OpenPMIx's does), without `direct_modex` remote data
//! is NOT_FOUND. A client's event whose range reaches beyond the node goes to
//! `notify_event` (none: it stays on the node, and a module with `fence_nb` has the
//! server relay it, docs/serving.md §4.1); the host's own `PMIx_Notify_event`
//! reaches this node's clients. Published data is the host's when its module has
//! `publish`, `lookup` and `unpublish`.
//!
//! The files: starting, stopping and registering ([`init`]); setting up clients
//! ([`setup`]); what the host relays ([`relay`]: another node's request for a local
//! client's data, a process's output); node and process maps ([`maps`]); the calls not
//! served ([`unserved`]); the upcalls into the host's module (`upcalls`: `CHost` and
//! the upcalls waiting for their callback); the host trace ([`trace`]).
//!
//! [`Host`]: pmix::server::Host
//! [`Provides`]: pmix::server::Provides
//! [`Provides::NODES`]: pmix::server::Provides::NODES

use std::ffi::{c_char, c_void};

use pmix::{Pmix, PmixError};
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, CbData, Res, call_op, try_str};
use crate::cmem::c_string;
use crate::types::{PMIX_MAX_NSLEN, pmix_op_cbfunc_t};

pub mod init;
pub mod maps;
pub mod relay;
pub mod setup;
pub mod trace;
pub mod unserved;
mod upcalls;

/// `PMIX_OPERATION_SUCCEEDED`: a call given no callback completed before returning.
const OPERATION_SUCCEEDED: Status = Status::OPERATION_SUCCEEDED;

/// A `pmix_nspace_t` argument: NUL-terminated within its 256 bytes, UTF-8 (nothing past
/// its NUL is read). `p` is a pointer C gave.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for NULL, no NUL within 256 bytes, or bytes that are not UTF-8.
fn nspace_arg<'a>(p: *const c_char) -> Result<&'a str, Status> {
    try_str!(p, PMIX_MAX_NSLEN)
}

/// Completes an operation: `cbfunc(status, cbdata)` on the progress thread and
/// `PMIX_SUCCESS`, or, with no callback, `PMIX_OPERATION_SUCCEEDED` for a success
/// and the error itself. `cbfunc` and `cbdata` are what C gave.
fn complete(inst: &Pmix, r: Res, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> Res {
    let Some(cb) = cbfunc else {
        r?;
        return Err(OPERATION_SUCCEEDED);
    };
    r?;
    let data = CbData(cbdata);
    inst.post(move || call_op(cb, Status::SUCCESS, &data))
        .map_err(|e| e.status())
}

/// The same as [`complete`] for the `void` registration calls: the status goes to
/// the callback (if any) whatever it is, on the progress thread, or here when there is
/// none (the call was refused before any thread, or the thread is gone): once either
/// way.
fn complete_void(inst: Option<&Pmix>, r: Res, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) {
    let Some(cb) = cbfunc else {
        return;
    };
    let status = r.err().unwrap_or(Status::SUCCESS);
    let data = CbData(cbdata);
    let posted = inst.map(|i| i.post(move || call_op(cb, status, &data)));
    if !matches!(posted, Some(Ok(()))) {
        // Not posted (the job was dropped, never run): call it here rather than never.
        call_op(cb, status, &CbData(cbdata));
    }
}

/// A `malloc`ed, NUL-terminated copy of `s`, for C to free.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a NUL inside `s`; `PMIX_ERR_NOMEM`.
fn strdup(s: &str) -> Result<*mut c_char, Status> {
    if s.contains('\0') {
        return Err(BAD_PARAM);
    }
    c_string(s.as_bytes())
}
