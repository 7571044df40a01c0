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

use pmix::{Client, Mode, Pmix, PmixError};
use pmix_core::Status;

use crate::boundary::{
    BAD_PARAM, CbData, export, mode_of, nb_or_blocking, op_done, opt_mut, opt_ref, opt_str,
    try_mut, try_ref, try_slice,
};
use crate::cmem::c_box;
use crate::data::convert::{
    from_wire, proc_nspace, procs_to_wire, try_infos, try_key, value_to_wire,
};
use crate::data::value::CValue;
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
    /// # C contract
    /// `key` is NULL or a NUL-terminated string; `val` is NULL or a readable value whose
    /// union holds what its type says.
    fn PMIx_Put(
        scope: pmix_scope_t,
        key: *const c_char,
        val: *mut pmix_value_t,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Put")?;
        let key = try_key!(key)?;
        let value = value_to_wire(try_ref!(val)?)?;
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
    /// # C contract
    /// `proc_` is NULL or readable; `key` and `val` as for [`PMIx_Put`].
    fn PMIx_Store_internal(
        proc_: *const pmix_proc_t,
        key: *const c_char,
        val: *mut pmix_value_t,
    ) -> pmix_status_t {
        let inst = crate::boundary::admitted("PMIx_Store_internal", Mode::NonBlocking)?;
        let key = try_key!(key)?;
        let value = value_to_wire(try_ref!(val)?)?;
        let (nspace, rank) = target(&inst, opt_ref!(proc_))?;
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
    /// # C contract
    /// `procs` is NULL or points to `nprocs` readable processes; `info` is NULL or points
    /// to `ninfo` readable infos whose values are as [`PMIx_Put`] requires.
    fn PMIx_Fence(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Fence")?;
        let procs = procs_to_wire(try_slice!(procs, nprocs)?)?;
        let info = try_infos!(info, ninfo)?;
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
    /// # C contract
    /// `proc_` is NULL or readable; `key` is NULL or a NUL-terminated string; `info` as
    /// for [`PMIx_Fence`]; `val` is NULL or writable.
    fn PMIx_Get(
        proc_: *const pmix_proc_t,
        key: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        val: *mut *mut pmix_value_t,
    ) -> pmix_status_t {
        if let Some(out) = opt_mut!(val) {
            *out = std::ptr::null_mut();
        }
        let inst = admitted("PMIx_Get")?;
        let out = try_mut!(val)?;
        let (nspace, rank) = target(&inst, opt_ref!(proc_))?;
        let info = try_infos!(info, ninfo)?;
        let value = if key.is_null() {
            inst.get_all_stored(&nspace, rank)
        } else {
            inst.get(&nspace, rank, try_key!(key)?, &info)
        }
        .map_err(|e| e.status())?;
        let mut v = CValue::undef();
        from_wire(&value, &mut v.0)?;
        // The boxed copy owns what `v` held: `v` is emptied, not released.
        *out = c_box(v.0)?;
        v.0 = pmix_value_t::UNDEF;
        Ok(())
    }
}

/// The process a Get names: `proc_`, or this process when it is NULL or its
/// namespace is empty.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a namespace without a NUL or not UTF-8.
fn target(inst: &Pmix, proc_: Option<&pmix_proc_t>) -> Result<(String, u32), Status> {
    let me = inst.proc_id();
    Ok(match proc_ {
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
    /// # C contract
    /// `msg` is NULL or a NUL-terminated string; `procs` as for [`PMIx_Fence`].
    fn PMIx_Abort(
        status: c_int,
        msg: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Abort")?;
        let msg = opt_str!(msg, crate::data::convert::MAX_VALUE_STRING)?;
        let procs = procs_to_wire(try_slice!(procs, nprocs)?)?;
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
    /// # C contract
    /// As [`PMIx_Fence`] (the arrays only during the call); `cbfunc`, if given, must be
    /// safe to call from another thread with `cbdata`.
    fn PMIx_Fence_nb(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        // Without a callback: blocking, as PMIx_Fence (named as this call in the
        // diagnostic).
        let inst = crate::boundary::admitted("PMIx_Fence_nb", mode_of(&cbfunc))?;
        let procs = procs_to_wire(try_slice!(procs, nprocs)?)?;
        let info = try_infos!(info, ninfo)?;
        nb_or_blocking(
            cbfunc,
            || inst.fence(&procs, &info),
            |cb| inst.fence_nb(&procs, &info, op_done(cb, CbData(cbdata))),
        )
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
    /// # C contract
    /// As [`PMIx_Get`] for `proc_`, `key` and `info` (only during the call); `cbfunc`
    /// must be safe to call from another thread with `cbdata`.
    fn PMIx_Get_nb(
        proc_: *const pmix_proc_t,
        key: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_value_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = crate::boundary::admitted("PMIx_Get_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        let key = try_key!(key)?.to_owned();
        let (nspace, rank) = target(&inst, opt_ref!(proc_))?;
        let info = try_infos!(info, ninfo)?;
        let cbdata = CbData(cbdata);
        inst.get_nb(&nspace, rank, &key, &info, move |r| {
            let mut v = CValue::undef();
            let status = match r
                .map_err(|e| e.status())
                .and_then(|value| from_wire(&value, &mut v.0))
            {
                Ok(()) => Status::SUCCESS,
                Err(s) => s,
            };
            let kv: *mut pmix_value_t = if status == Status::SUCCESS {
                &mut v.0
            } else {
                std::ptr::null_mut()
            };
            // SAFETY: C gave `cb` with `cbdata` for this request's one outcome (the C
            // contract above); `kv` is NULL or `v`, valid for the call and released when
            // `v` drops after it, as the PMIx contract says.
            unsafe { cb(status.0, kv, cbdata.ptr()) };
        })
        .map_err(|e| e.status())
    }
}
