//! The calls of a launched client over its server connection: `PMIx_Put`,
//! `PMIx_Commit`, `PMIx_Fence` / `_nb`, `PMIx_Get` / `_nb` and `PMIx_Abort` (the
//! runtime's `pmix::Client`).
//!
//! The `_nb` forms return `PMIX_SUCCESS` once the request is accepted, and the
//! callback then runs exactly once, on the progress thread (the runtime's
//! `Pmix::fence_nb` / `Pmix::get_nb`); a NULL callback makes them blocking.
//!
//! Each checks, in order: `PMIX_ERR_INIT` before init or after finalize,
//! `PMIX_ERR_WOULD_BLOCK` on the progress thread (with its diagnostic), then its
//! arguments, then asks the runtime. In a process that is not a launched client (a
//! singleton, a tool), `PMIx_Get` answers what it knows about itself (its namespace
//! and rank) and the others return `PMIX_ERR_UNREACH`, as OpenPMIx's do without a
//! server.

use std::ffi::{c_char, c_int, c_void};

use pmix::{Client, Mode, Pmix, PmixError, global};
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, CbData, bounded_str, c_mut, c_ref, c_slice, export, op_done};
use crate::convert::{from_wire, infos_to_wire, key_arg, proc_nspace, procs_to_wire, to_wire};
use crate::types::*;

/// The instance, admitted for the blocking call `call`.
fn admitted(call: &'static str) -> Result<Pmix, Status> {
    crate::boundary::admitted(call, Mode::Blocking)
}

/// The instance's server connection.
fn client(inst: &Pmix) -> Result<&Client, Status> {
    inst.client().ok_or(Status::ERR_UNREACH)
}

export! {
    /// `PMIx_Put`: files `val` under `key` in `scope` (sent to the server at the next
    /// `PMIx_Commit`).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (NULL or bad key or
    /// value, unknown scope); `PMIX_ERR_NOT_SUPPORTED` (a value type the library does not
    /// carry); `PMIX_ERR_UNREACH` (not a launched client).
    ///
    /// # Safety
    /// `key` is NULL or a NUL-terminated string; `val` is NULL or a readable value whose
    /// union holds what its type says.
    unsafe fn PMIx_Put(
        scope: pmix_scope_t,
        key: *const c_char,
        val: *mut pmix_value_t,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Put")?;
        // SAFETY: forwarded from the caller.
        let key = unsafe { key_arg(key) }?;
        // SAFETY: a non-NULL `val` is readable (caller's contract).
        let v = unsafe { c_ref(val) }?;
        // SAFETY: forwarded from the caller.
        let value = unsafe { to_wire(v) }?;
        inst.put(pmix::wire::Scope(scope), key, value)
            .map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_Store_internal`: files `val` under `key` for `proc_` (NULL: this process)
    /// in this process only; later gets of it here answer it. Never sent, never waits.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (NULL or bad key or value, a namespace that
    /// is not UTF-8); `PMIX_ERR_NOT_SUPPORTED` (a value type the library does not carry).
    ///
    /// # Safety
    /// `proc_` is NULL or readable; `key` and `val` as for [`PMIx_Put`].
    unsafe fn PMIx_Store_internal(
        proc_: *const pmix_proc_t,
        key: *const c_char,
        val: *mut pmix_value_t,
    ) -> pmix_status_t {
        let inst = crate::boundary::admitted("PMIx_Store_internal", Mode::NonBlocking)?;
        // SAFETY: forwarded from the caller.
        let key = unsafe { key_arg(key) }?;
        // SAFETY: a non-NULL `val` is readable (caller's contract).
        let v = unsafe { c_ref(val) }?;
        // SAFETY: forwarded from the caller.
        let value = unsafe { to_wire(v) }?;
        // SAFETY: forwarded from the caller.
        let (nspace, rank) = unsafe { target(&inst, proc_) }?;
        inst.store_internal(&nspace, rank, key, value)
            .map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_Commit`: sends every value put so far to the server.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_UNREACH` (no server), the
    /// server's status.
    fn PMIx_Commit() -> pmix_status_t {
        let inst = admitted("PMIx_Commit")?;
        inst.commit().map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_Fence`: waits until every process of `procs` (NULL: this job) has entered
    /// the fence; `info` carries `PMIX_COLLECT_DATA`, `PMIX_TIMEOUT`,
    /// `PMIX_GROUP_FT_COLLECTIVE`, ….
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (a count with a NULL
    /// array, a bad namespace, key or value); `PMIX_ERR_UNREACH` (no server, or it went
    /// away); the server's status (`PMIX_ERR_LOST_CONNECTION` when a participant died,
    /// `PMIX_ERR_TIMEOUT`, …).
    ///
    /// # Safety
    /// `procs` is NULL or points to `nprocs` readable processes; `info` is NULL or points
    /// to `ninfo` readable infos whose values are as [`PMIx_Put`] requires.
    unsafe fn PMIx_Fence(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Fence")?;
        // SAFETY: forwarded from the caller.
        let procs = procs_to_wire(unsafe { c_slice(procs, nprocs) }?)?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        inst.fence(&procs, &info).map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_Get`: the value of `key` for `proc` (NULL: this process; rank
    /// `PMIX_RANK_WILDCARD`: job-level information), in a new `pmix_value_t` the caller
    /// releases with `PMIX_VALUE_RELEASE`. `*val` is set to NULL first. A NULL `key`
    /// outside a connected client (a host's server) gets every value
    /// `PMIx_Store_internal` kept for `proc`, a `PMIX_DATA_ARRAY` of `PMIX_INFO`.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (NULL `val`, a bad
    /// key, namespace or info); `PMIX_ERR_NOT_SUPPORTED` for a NULL key in a
    /// connected client; `PMIX_ERR_NOT_FOUND`; the server's status
    /// (`PMIX_ERR_TIMEOUT`, …); `PMIX_ERR_UNREACH` (no server for another process's
    /// value); `PMIX_ERR_NOT_SUPPORTED` (a value of a type the C side cannot hold yet);
    /// `PMIX_ERR_NOMEM`.
    ///
    /// # Safety
    /// `proc_` is NULL or readable; `key` is NULL or a NUL-terminated string; `info` as
    /// for [`PMIx_Fence`]; `val` is NULL or writable.
    unsafe fn PMIx_Get(
        proc_: *const pmix_proc_t,
        key: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        val: *mut *mut pmix_value_t,
    ) -> pmix_status_t {
        // SAFETY: a non-NULL `val` is writable (caller's contract).
        if let Some(out) = unsafe { val.as_mut() } {
            *out = std::ptr::null_mut();
        }
        let inst = admitted("PMIx_Get")?;
        // SAFETY: a non-NULL `val` is writable (caller's contract).
        let out = unsafe { c_mut(val) }?;
        // SAFETY: forwarded from the caller.
        let (nspace, rank) = unsafe { target(&inst, proc_) }?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        let value = if key.is_null() {
            inst.get_all_stored(&nspace, rank)
        } else {
            // SAFETY: forwarded from the caller.
            let key = unsafe { key_arg(key) }?;
            inst.get(&nspace, rank, key, &info)
        }
        .map_err(|e| e.status())?;
        let mut v = pmix_value_t {
            type_: PMIX_UNDEF,
            data: pmix_value_data { raw: [0; 3] },
        };
        from_wire(&value, &mut v)?;
        // SAFETY: malloc of a positive size; checked before use.
        let p = unsafe { libc::malloc(size_of::<pmix_value_t>()) }.cast::<pmix_value_t>();
        if p.is_null() {
            // SAFETY: `v` owns what `from_wire` allocated; release it.
            unsafe { crate::value::PMIx_Value_destruct(&mut v) };
            return Err(Status::ERR_NOMEM);
        }
        // SAFETY: `p` is a fresh allocation of one `pmix_value_t`, suitably aligned
        // (malloc's alignment suits any C type).
        unsafe { p.write(v) };
        *out = p;
        Ok(())
    }
}

/// The process a Get names: `proc_`, or this process when it is NULL or its
/// namespace is empty.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a namespace without a NUL or not UTF-8.
///
/// # Safety
/// `proc_` is NULL or readable.
unsafe fn target(inst: &Pmix, proc_: *const pmix_proc_t) -> Result<(String, u32), Status> {
    let me = inst.proc_id();
    // SAFETY: a non-NULL `proc_` is readable (caller's contract).
    Ok(match unsafe { proc_.as_ref() } {
        None => (me.nspace.to_string(), me.rank),
        Some(p) => {
            let ns = proc_nspace(p)?;
            let ns = if ns.is_empty() {
                me.nspace.to_string()
            } else {
                ns.to_owned()
            };
            (ns, p.rank)
        }
    })
}

export! {
    /// `PMIx_Abort`: asks the server to abort `procs` (NULL: this whole job) with
    /// `status` and `msg`; returns once the server answered (the launcher then ends the
    /// processes).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (a count with a NULL
    /// array, a bad namespace, a message that is not UTF-8 or over 1 MiB);
    /// `PMIX_ERR_UNREACH` (no server); the server's status.
    ///
    /// # Safety
    /// `msg` is NULL or a NUL-terminated string; `procs` as for [`PMIx_Fence`].
    unsafe fn PMIx_Abort(
        status: c_int,
        msg: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Abort")?;
        let msg = if msg.is_null() {
            None
        } else {
            // SAFETY: forwarded from the caller.
            Some(unsafe { bounded_str(msg, crate::convert::MAX_VALUE_STRING) }?)
        };
        // SAFETY: forwarded from the caller.
        let procs = procs_to_wire(unsafe { c_slice(procs, nprocs) }?)?;
        client(&inst)?
            .abort(status, msg, &procs)
            .map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_Fence_nb`: as [`PMIx_Fence`], with the result passed to `cbfunc(status,
    /// cbdata)` on the progress thread; a NULL `cbfunc` makes it [`PMIx_Fence`].
    ///
    /// # Errors
    /// Returned (and `cbfunc` never runs): `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`,
    /// `PMIX_ERR_BAD_PARAM`, `PMIX_ERR_UNREACH` (no server, or the request cannot be
    /// sent); with a NULL `cbfunc`, [`PMIx_Fence`]'s. Everything after acceptance goes
    /// to `cbfunc`.
    ///
    /// # Safety
    /// As [`PMIx_Fence`] (the arrays only during the call); `cbfunc`, if given, must be
    /// safe to call from another thread with `cbdata`.
    unsafe fn PMIx_Fence_nb(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = global::get().map_err(|e| e.status())?;
        let Some(cb) = cbfunc else {
            // Blocking, as PMIx_Fence (named as this call in the diagnostic).
            inst.admit("PMIx_Fence_nb", Mode::Blocking)
                .map_err(|e| e.status())?;
            // SAFETY: forwarded from the caller.
            let procs = procs_to_wire(unsafe { c_slice(procs, nprocs) }?)?;
            // SAFETY: forwarded from the caller.
            let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
            return inst.fence(&procs, &info).map_err(|e| e.status());
        };
        inst.admit("PMIx_Fence_nb", Mode::NonBlocking)
            .map_err(|e| e.status())?;
        // SAFETY: forwarded from the caller.
        let procs = procs_to_wire(unsafe { c_slice(procs, nprocs) }?)?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        inst.fence_nb(&procs, &info, op_done(cb, CbData(cbdata)))
            .map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_Get_nb`: as [`PMIx_Get`], with the result passed to `cbfunc(status, kv,
    /// cbdata)` on the progress thread; `kv` (NULL on error) is the library's and is
    /// released when `cbfunc` returns. A NULL `cbfunc` is `PMIX_ERR_BAD_PARAM` (there is
    /// nowhere to put the value).
    ///
    /// # Errors
    /// Returned (and `cbfunc` never runs): `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`,
    /// `PMIX_ERR_BAD_PARAM`, `PMIX_ERR_UNREACH`. Everything after acceptance goes to
    /// `cbfunc`: `PMIX_ERR_NOT_FOUND`, the server's status, `PMIX_ERR_NOT_SUPPORTED` (a
    /// value type the C side cannot hold yet), `PMIX_ERR_NOMEM`.
    ///
    /// # Safety
    /// As [`PMIx_Get`] for `proc_`, `key` and `info` (only during the call); `cbfunc`
    /// must be safe to call from another thread with `cbdata`.
    unsafe fn PMIx_Get_nb(
        proc_: *const pmix_proc_t,
        key: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_value_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = crate::boundary::admitted("PMIx_Get_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        // SAFETY: forwarded from the caller.
        let key = unsafe { key_arg(key) }?.to_owned();
        // SAFETY: forwarded from the caller.
        let (nspace, rank) = unsafe { target(&inst, proc_) }?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        let cbdata = CbData(cbdata);
        inst.get_nb(&nspace, rank, &key, &info, move |r| {
            let mut v = pmix_value_t {
                type_: PMIX_UNDEF,
                data: pmix_value_data { raw: [0; 3] },
            };
            let status = match r
                .map_err(|e| e.status())
                .and_then(|value| from_wire(&value, &mut v))
            {
                Ok(()) => Status::SUCCESS,
                Err(s) => s,
            };
            let kv: *mut pmix_value_t = if status == Status::SUCCESS {
                &mut v
            } else {
                std::ptr::null_mut()
            };
            // SAFETY: the caller's callback with the caller's `cbdata`, once; `kv` is
            // valid for the call.
            unsafe { cb(status.0, kv, cbdata.ptr()) };
            // SAFETY: `v` owns what `from_wire` allocated (or nothing): released here,
            // after the callback, as the PMIx contract says.
            unsafe { crate::value::PMIx_Value_destruct(&mut v) };
        })
        .map_err(|e| e.status())
    }
}
