//! Dynamic jobs: `PMIx_Spawn` / `_nb` (the server's SPAWNNB) and `PMIx_Connect` /
//! `PMIx_Disconnect` (and `_nb`: CONNECTNB, DISCONNECTNB). Ours supports none of them
//! (`PMIX_ERR_NOT_SUPPORTED`); Open MPI's `mpirun` does.

use std::ffi::{c_char, c_void};

use pmix::wire::{App, WStr};
use pmix::{Mode, PmixError};
use pmix_core::Status;

use crate::boundary::{
    BAD_PARAM, CbData, admitted, copy_c_str, export, mode_of, nb_or_blocking, op_done, opt_str,
    try_slice, try_slice_mut, try_str,
};
use crate::data::convert::{MAX_VALUE_STRING, argv_to_wire, procs_to_wire, try_infos};
use crate::types::*;

/// A string of an app (C's: the C contract): NULL is `None`.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for one over [`MAX_VALUE_STRING`] bytes or not UTF-8.
fn opt_string(p: *const c_char) -> Result<Option<WStr>, Status> {
    Ok(opt_str!(p, MAX_VALUE_STRING)?.map(WStr::from))
}

/// The runtime's apps of a C app array (C's: the C contract: each app's strings are
/// NULL or NUL-terminated, its `argv` / `env` NULL or NULL-terminated, its `info`
/// points to `ninfo` readable infos, or is NULL with 0).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a string that is over-long or not UTF-8, a negative
/// `maxprocs`, too many arguments or variables, or a bad directive.
fn apps_to_wire(apps: &[pmix_app_t]) -> Result<Vec<App>, Status> {
    let string = |p: *const c_char| Ok(WStr::from(try_str!(p, MAX_VALUE_STRING)?));
    apps.iter()
        .map(|a| {
            if a.maxprocs < 0 {
                return Err(BAD_PARAM);
            }
            Ok(App {
                cmd: opt_string(a.cmd)?,
                argv: argv_to_wire(a.argv, string)?,
                env: argv_to_wire(a.env, string)?,
                cwd: opt_string(a.cwd)?,
                maxprocs: a.maxprocs,
                info: try_infos!(a.info, a.ninfo)?,
            })
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
    /// # C contract
    /// `job_info` points to `ninfo` readable infos and `apps` to `napps` apps (or NULL
    /// with 0), each app's strings NULL or NUL-terminated, its `argv` / `env` NULL or
    /// NULL-terminated and its `info` pointing to `ninfo` infos; `nspace` is NULL or a
    /// writable `pmix_nspace_t`.
    fn PMIx_Spawn(
        job_info: *const pmix_info_t,
        ninfo: usize,
        apps: *const pmix_app_t,
        napps: usize,
        nspace: *mut c_char,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Spawn", Mode::Blocking)?;
        let info = try_infos!(job_info, ninfo)?;
        let apps = apps_to_wire(try_slice!(apps, napps)?)?;
        let ns = inst.spawn(&info, &apps).map_err(|e| e.status())?;
        if !nspace.is_null() {
            // A `pmix_nspace_t`: `PMIX_MAX_NSLEN + 1` characters.
            copy_c_str(try_slice_mut!(nspace, PMIX_MAX_NSLEN + 1)?, ns.as_bytes());
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
    /// # C contract
    /// As [`PMIx_Spawn`] (the arrays only during the call); `cbfunc` must be safe to
    /// call from another thread with `cbdata`.
    fn PMIx_Spawn_nb(
        job_info: *const pmix_info_t,
        ninfo: usize,
        apps: *const pmix_app_t,
        napps: usize,
        cbfunc: pmix_spawn_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Spawn_nb", mode_of(&cbfunc))?;
        let info = try_infos!(job_info, ninfo)?;
        let apps = apps_to_wire(try_slice!(apps, napps)?)?;
        let cbdata = CbData(cbdata);
        nb_or_blocking(cbfunc, || inst.spawn(&info, &apps), |cb| inst.spawn_nb(&info, &apps, move |r| {
            let mut ns = [0 as c_char; PMIX_MAX_NSLEN + 1];
            let status = match r {
                Ok(n) => {
                    copy_c_str(&mut ns, n.as_bytes());
                    Status::SUCCESS.0
                }
                Err(e) => e.status().0,
            };
            // SAFETY: C gave `cb` with `cbdata` for this spawn's one outcome (the C
            // contract above); `ns` lives for the call.
            unsafe { cb(status, ns.as_mut_ptr(), cbdata.ptr()) };
        }))
    }
}

/// The body of the four connect calls, on their C arguments: blocking without a
/// callback.
fn connect(
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
    let inst = admitted(call, mode_of(&f))?;
    let procs = procs_to_wire(try_slice!(procs, nprocs)?)?;
    let info = try_infos!(info, ninfo)?;
    nb_or_blocking(
        f,
        || inst.connect(connect, &procs, &info),
        |(f, cbdata)| inst.connect_nb(connect, &procs, &info, op_done(f, cbdata)),
    )
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
    /// # C contract
    /// `procs` points to `nprocs` processes and `info` to `ninfo` infos (or NULL with 0).
    fn PMIx_Connect(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        connect(true, procs, nprocs, info, ninfo, None)
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
    /// # C contract
    /// As [`PMIx_Connect`]; `cbfunc` must be safe to call from another thread with
    /// `cbdata`.
    fn PMIx_Connect_nb(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        connect(true, procs, nprocs, info, ninfo, Some((cbfunc, cbdata)))
    }
}

export! {
    /// `PMIx_Disconnect`: as [`PMIx_Connect`], disconnecting.
    ///
    /// # Errors
    /// As [`PMIx_Connect`].
    ///
    /// # C contract
    /// As [`PMIx_Connect`].
    fn PMIx_Disconnect(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        connect(false, procs, nprocs, info, ninfo, None)
    }
}

export! {
    /// `PMIx_Disconnect_nb`: as [`PMIx_Connect_nb`], disconnecting.
    ///
    /// # Errors
    /// As [`PMIx_Connect_nb`].
    ///
    /// # C contract
    /// As [`PMIx_Connect_nb`].
    fn PMIx_Disconnect_nb(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        connect(false, procs, nprocs, info, ninfo, Some((cbfunc, cbdata)))
    }
}
