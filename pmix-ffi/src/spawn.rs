//! Dynamic jobs: `PMIx_Spawn` / `_nb` (the server's SPAWNNB) and `PMIx_Connect` /
//! `PMIx_Disconnect` (and `_nb`: CONNECTNB, DISCONNECTNB). Ours supports none of them
//! (`PMIX_ERR_NOT_SUPPORTED`); Open MPI's `mpirun` does.

use std::ffi::{c_char, c_void};

use pmix::wire::{App, WStr};
use pmix::{Mode, PmixError};
use pmix_core::Status;

use crate::boundary::{
    BAD_PARAM, CbData, admitted, bounded_str, c_slice, copy_c_str, export, op_done,
};
use crate::convert::{MAX_VALUE_STRING, argv_to_wire, infos_to_wire};
use crate::types::*;

/// A C string of an app: NULL is `None`.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn opt_string(p: *const c_char) -> Result<Option<WStr>, Status> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded from the caller.
    Ok(Some(WStr::from(unsafe {
        bounded_str(p, MAX_VALUE_STRING)
    }?)))
}

/// The runtime's apps of a C app array.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a string that is over-long or not UTF-8, a negative
/// `maxprocs`, too many arguments or variables, or a bad directive.
///
/// # Safety
/// Each app's strings are NULL or NUL-terminated, its `argv` / `env` NULL or
/// NULL-terminated, its `info` points to `ninfo` readable infos (or is NULL with 0).
unsafe fn apps_to_wire(apps: &[pmix_app_t]) -> Result<Vec<App>, Status> {
    let string = |p: *const c_char| -> Result<WStr, Status> {
        // SAFETY: a NUL-terminated string (caller's contract).
        Ok(WStr::from(unsafe { bounded_str(p, MAX_VALUE_STRING) }?))
    };
    apps.iter()
        .map(|a| {
            if a.maxprocs < 0 {
                return Err(BAD_PARAM);
            }
            // SAFETY: forwarded from the caller (every field as documented).
            unsafe {
                Ok(App {
                    cmd: opt_string(a.cmd)?,
                    argv: argv_to_wire(a.argv, string)?,
                    env: argv_to_wire(a.env, string)?,
                    cwd: opt_string(a.cwd)?,
                    maxprocs: a.maxprocs,
                    info: infos_to_wire(c_slice(a.info, a.ninfo)?)?,
                })
            }
        })
        .collect()
}

export! {
    /// `PMIx_Spawn`: asks the server to start `apps` with job-level directives
    /// `job_info`, blocking until it answers; `nspace` (when not NULL) gets the new job's
    /// namespace.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (no apps, a bad app or directive); `PMIX_ERR_UNREACH`; the
    /// server's status (`PMIX_ERR_NOT_SUPPORTED` from ours).
    ///
    /// # Safety
    /// `job_info` points to `ninfo` readable infos and `apps` to `napps` apps (or NULL
    /// with 0), each app's strings NULL or NUL-terminated, its `argv` / `env` NULL or
    /// NULL-terminated and its `info` pointing to `ninfo` infos; `nspace` is NULL or a
    /// writable `pmix_nspace_t`.
    unsafe fn PMIx_Spawn(
        job_info: *const pmix_info_t,
        ninfo: usize,
        apps: *const pmix_app_t,
        napps: usize,
        nspace: *mut c_char,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Spawn", Mode::Blocking)?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(job_info, ninfo)?) }?;
        // SAFETY: forwarded from the caller.
        let apps = unsafe { apps_to_wire(c_slice(apps, napps)?) }?;
        let ns = inst.spawn(&info, &apps).map_err(|e| e.status())?;
        if !nspace.is_null() {
            // SAFETY: a writable pmix_nspace_t (caller's contract).
            let out = unsafe { std::slice::from_raw_parts_mut(nspace, PMIX_MAX_NSLEN + 1) };
            copy_c_str(out, ns.as_bytes());
        }
        Ok(())
    }
}

export! {
    /// `PMIx_Spawn_nb`: as [`PMIx_Spawn`], with the outcome passed to `cbfunc(status,
    /// nspace, cbdata)` once, on the progress thread (the namespace is the library's for
    /// the call); a NULL `cbfunc` makes it blocking.
    ///
    /// # Errors
    /// As [`PMIx_Spawn`], returned only for what is found before acceptance.
    ///
    /// # Safety
    /// As [`PMIx_Spawn`] (the arrays only during the call); `cbfunc` must be safe to
    /// call from another thread with `cbdata`.
    unsafe fn PMIx_Spawn_nb(
        job_info: *const pmix_info_t,
        ninfo: usize,
        apps: *const pmix_app_t,
        napps: usize,
        cbfunc: pmix_spawn_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let mode = if cbfunc.is_none() {
            Mode::Blocking
        } else {
            Mode::NonBlocking
        };
        let inst = admitted("PMIx_Spawn_nb", mode)?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(job_info, ninfo)?) }?;
        // SAFETY: forwarded from the caller.
        let apps = unsafe { apps_to_wire(c_slice(apps, napps)?) }?;
        let Some(cb) = cbfunc else {
            return inst.spawn(&info, &apps).map(|_| ()).map_err(|e| e.status());
        };
        let cbdata = CbData(cbdata);
        inst.spawn_nb(&info, &apps, move |r| {
            let mut ns = [0 as c_char; PMIX_MAX_NSLEN + 1];
            let status = match r {
                Ok(n) => {
                    copy_c_str(&mut ns, n.as_bytes());
                    Status::SUCCESS.0
                }
                Err(e) => e.status().0,
            };
            // SAFETY: the caller's callback with its own data, once; `ns` lives for the
            // call.
            unsafe { cb(status, ns.as_mut_ptr(), cbdata.ptr()) };
        })
        .map_err(|e| e.status())
    }
}

/// The body of the four connect calls: blocking without a callback.
///
/// # Safety
/// `procs` points to `nprocs` processes and `info` to `ninfo` infos (or NULL with 0);
/// a callback must be safe to call from another thread with its data.
unsafe fn connect(
    connect: bool,
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    cb: Option<(pmix_op_cbfunc_t, *mut c_void)>,
) -> Result<(), Status> {
    let f = cb.and_then(|(f, d)| f.map(|f| (f, CbData(d))));
    let call = match (connect, cb.is_some()) {
        (true, false) => "PMIx_Connect",
        (true, true) => "PMIx_Connect_nb",
        (false, false) => "PMIx_Disconnect",
        (false, true) => "PMIx_Disconnect_nb",
    };
    let mode = if f.is_none() {
        Mode::Blocking
    } else {
        Mode::NonBlocking
    };
    let inst = admitted(call, mode)?;
    // SAFETY: forwarded from the caller.
    let procs = crate::convert::procs_to_wire(unsafe { c_slice(procs, nprocs) }?)?;
    // SAFETY: forwarded from the caller.
    let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
    let Some((f, cbdata)) = f else {
        return inst.connect(connect, &procs, &info).map_err(|e| e.status());
    };
    inst.connect_nb(connect, &procs, &info, op_done(f, cbdata))
        .map_err(|e| e.status())
}

export! {
    /// `PMIx_Connect`: connects this process with `procs` (a collective of them at the
    /// server), blocking until done.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (no procs, a bad process or info); `PMIX_ERR_UNREACH`; the
    /// server's status (`PMIX_ERR_NOT_SUPPORTED` from ours).
    ///
    /// # Safety
    /// `procs` points to `nprocs` processes and `info` to `ninfo` infos (or NULL with 0).
    unsafe fn PMIx_Connect(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe { connect(true, procs, nprocs, info, ninfo, None) }
    }
}

export! {
    /// `PMIx_Connect_nb`: as [`PMIx_Connect`], with the status passed to
    /// `cbfunc(status, cbdata)` once, on the progress thread; a NULL `cbfunc` makes it
    /// blocking.
    ///
    /// # Errors
    /// As [`PMIx_Connect`], returned only for what is found before acceptance.
    ///
    /// # Safety
    /// As [`PMIx_Connect`]; `cbfunc` must be safe to call from another thread with
    /// `cbdata`.
    unsafe fn PMIx_Connect_nb(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe { connect(true, procs, nprocs, info, ninfo, Some((cbfunc, cbdata))) }
    }
}

export! {
    /// `PMIx_Disconnect`: as [`PMIx_Connect`], disconnecting.
    ///
    /// # Errors
    /// As [`PMIx_Connect`].
    ///
    /// # Safety
    /// As [`PMIx_Connect`].
    unsafe fn PMIx_Disconnect(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe { connect(false, procs, nprocs, info, ninfo, None) }
    }
}

export! {
    /// `PMIx_Disconnect_nb`: as [`PMIx_Connect_nb`], disconnecting.
    ///
    /// # Errors
    /// As [`PMIx_Connect_nb`].
    ///
    /// # Safety
    /// As [`PMIx_Connect_nb`].
    unsafe fn PMIx_Disconnect_nb(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe {
            connect(false, procs, nprocs, info, ninfo, Some((cbfunc, cbdata)))
        }
    }
}
