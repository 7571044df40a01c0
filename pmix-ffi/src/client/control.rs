//! `PMIx_Log` / `_nb`, `PMIx_Job_control` / `_nb` and `PMIx_Process_monitor` / `_nb`
//! (and so the header's `PMIx_Heartbeat()`): each is the server's command of that
//! name (LOG, JOB_CONTROL, MONITOR), answered with its status; job control and
//! monitoring also with infos: `malloc`ed for the blocking forms (free with
//! `PMIX_INFO_FREE`), the library's until `release_fn` for the others. A NULL
//! callback makes an `_nb` form blocking (its results dropped), except that a
//! `PMIx_Process_monitor_nb` with a NULL callback (`PMIx_Heartbeat()`) only sends.

use std::ffi::c_void;

use pmix::{Mode, PmixError};
use pmix_core::Status;

use crate::boundary::{
    BAD_PARAM, CbData, admitted, export, mode_of, nb_or_blocking, op_done, opt_mut, try_mut,
    try_slice,
};
use crate::data::convert::{deliver_infos, infos_to_c, procs_to_wire, try_infos};
use crate::types::*;

/// Sets `*results` / `*nresults` to the answer's infos (NULL and 0 for none).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a NULL output; `PMIX_ERR_NOMEM`.
fn set_results(
    infos: &[pmix::wire::Info],
    results: *mut *mut pmix_info_t,
    nresults: *mut usize,
) -> Result<(), Status> {
    let (r, n) = (try_mut!(results)?, try_mut!(nresults)?);
    (*r, *n) = infos_to_c(infos)?;
    Ok(())
}

/// Clears the outputs of a blocking call on entry (when they are not NULL).
fn clear(results: *mut *mut pmix_info_t, nresults: *mut usize) {
    if let Some(r) = opt_mut!(results) {
        *r = std::ptr::null_mut();
    }
    if let Some(n) = opt_mut!(nresults) {
        *n = 0;
    }
}

export! {
    /// `PMIx_Log`: asks the server to log `data` with `directives`.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (a count with a NULL array, a bad info); `PMIX_ERR_UNREACH`;
    /// the server's status (`PMIX_ERR_NOT_SUPPORTED` from ours).
    ///
    /// # C contract
    /// `data` and `directives` point to `ndata` / `ndirs` readable infos (or are NULL
    /// with 0).
    fn PMIx_Log(
        data: *const pmix_info_t,
        ndata: usize,
        directives: *const pmix_info_t,
        ndirs: usize,
    ) -> pmix_status_t {
        log(data, ndata, directives, ndirs, None)
    }
}

export! {
    /// `PMIx_Log_nb`: as [`PMIx_Log`], with the status passed to `cbfunc(status,
    /// cbdata)` once, on the progress thread; a NULL `cbfunc` makes it blocking.
    ///
    /// # Errors
    /// As [`PMIx_Log`], returned only for what is found before acceptance.
    ///
    /// # C contract
    /// As [`PMIx_Log`]; `cbfunc` must be safe to call from another thread with `cbdata`.
    fn PMIx_Log_nb(
        data: *const pmix_info_t,
        ndata: usize,
        directives: *const pmix_info_t,
        ndirs: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        log(data, ndata, directives, ndirs, Some((cbfunc, cbdata)))
    }
}

/// The body of both log calls, on their C arguments: blocking without a callback.
fn log(
    data: *const pmix_info_t,
    ndata: usize,
    directives: *const pmix_info_t,
    ndirs: usize,
    cb: Option<(pmix_op_cbfunc_t, *mut c_void)>,
) -> Result<(), Status> {
    let f = cb.and_then(|(f, d)| f.map(|f| (f, CbData(d))));
    let name = if cb.is_some() {
        "PMIx_Log_nb"
    } else {
        "PMIx_Log"
    };
    let inst = admitted(name, mode_of(&f))?;
    let data = try_infos!(data, ndata)?;
    let dirs = try_infos!(directives, ndirs)?;
    nb_or_blocking(
        f,
        || inst.log(&data, &dirs),
        |(f, cbdata)| inst.log_nb(&data, &dirs, op_done(f, cbdata)),
    )
}

export! {
    /// `PMIx_Job_control`: asks the server for job control of `targets` with
    /// `directives`; `*results` gets the infos it answers with (free with
    /// `PMIX_INFO_FREE`).
    ///
    /// # Errors
    /// As [`PMIx_Log`]; `PMIX_ERR_BAD_PARAM` for NULL `results`/`nresults` too. Our
    /// server accepts cleanup registrations (`PMIX_REGISTER_CLEANUP`, as Open MPI sends)
    /// and answers anything else `PMIX_ERR_NOT_SUPPORTED`.
    ///
    /// # C contract
    /// `targets` points to `ntargets` processes, `directives` to `ndirs` infos (or NULL
    /// with 0); `results` and `nresults` are NULL or writable.
    fn PMIx_Job_control(
        targets: *const pmix_proc_t,
        ntargets: usize,
        directives: *const pmix_info_t,
        ndirs: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize,
    ) -> pmix_status_t {
        clear(results, nresults);
        let inst = admitted("PMIx_Job_control", Mode::Blocking)?;
        let targets = procs_to_wire(try_slice!(targets, ntargets)?)?;
        let dirs = try_infos!(directives, ndirs)?;
        let infos = inst.job_control(&targets, &dirs).map_err(|e| e.status())?;
        set_results(&infos, results, nresults)
    }
}

export! {
    /// `PMIx_Job_control_nb`: as [`PMIx_Job_control`], with the outcome passed to
    /// `cbfunc(status, info, ninfo, cbdata, release_fn, release_cbdata)` once, on the
    /// progress thread; a NULL `cbfunc` makes it blocking (the infos dropped).
    ///
    /// # Errors
    /// As [`PMIx_Job_control`], returned only for what is found before acceptance.
    ///
    /// # C contract
    /// As [`PMIx_Job_control`] (the arrays only during the call); `cbfunc` must be safe
    /// to call from another thread with `cbdata`.
    fn PMIx_Job_control_nb(
        targets: *const pmix_proc_t,
        ntargets: usize,
        directives: *const pmix_info_t,
        ndirs: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Job_control_nb", mode_of(&cbfunc))?;
        let targets = procs_to_wire(try_slice!(targets, ntargets)?)?;
        let dirs = try_infos!(directives, ndirs)?;
        let cbdata = CbData(cbdata);
        nb_or_blocking(
            cbfunc,
            || inst.job_control(&targets, &dirs),
            |cb| {
                inst.job_control_nb(&targets, &dirs, move |r| {
                    deliver_infos(cb, &cbdata, r.map_err(|e| e.status()))
                })
            },
        )
    }
}

export! {
    /// `PMIx_Process_monitor`: asks the server to monitor `monitor` (a heartbeat, a
    /// file, …), raising `error` when it fails; `*results` gets the infos it answers with
    /// (free with `PMIX_INFO_FREE`).
    ///
    /// # Errors
    /// As [`PMIx_Job_control`] (`PMIX_ERR_BAD_PARAM` for a NULL `monitor`); our server
    /// answers `PMIX_ERR_NOT_SUPPORTED`.
    ///
    /// # C contract
    /// `monitor` is NULL or a readable info; `directives` as in [`PMIx_Job_control`];
    /// `results` and `nresults` are NULL or writable.
    fn PMIx_Process_monitor(
        monitor: *const pmix_info_t,
        error: pmix_status_t,
        directives: *const pmix_info_t,
        ndirs: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize,
    ) -> pmix_status_t {
        clear(results, nresults);
        let inst = admitted("PMIx_Process_monitor", Mode::Blocking)?;
        let m = try_infos!(monitor, 1)?;
        let m = m.first().ok_or(BAD_PARAM)?;
        let dirs = try_infos!(directives, ndirs)?;
        let infos = inst
            .process_monitor(m, error, &dirs)
            .map_err(|e| e.status())?;
        set_results(&infos, results, nresults)
    }
}

export! {
    /// `PMIx_Process_monitor_nb`: as [`PMIx_Process_monitor`], with the outcome passed
    /// to `cbfunc` as in [`PMIx_Job_control_nb`]. With a NULL `cbfunc` (what
    /// `PMIx_Heartbeat()` does) the request is only sent: its answer is dropped.
    ///
    /// # Errors
    /// As [`PMIx_Process_monitor`], returned only for what is found before acceptance.
    ///
    /// # C contract
    /// As [`PMIx_Process_monitor`] (the arguments only during the call); `cbfunc` must be
    /// safe to call from another thread with `cbdata`.
    fn PMIx_Process_monitor_nb(
        monitor: *const pmix_info_t,
        error: pmix_status_t,
        directives: *const pmix_info_t,
        ndirs: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Process_monitor_nb", Mode::NonBlocking)?;
        let m = try_infos!(monitor, 1)?;
        let m = m.first().ok_or(BAD_PARAM)?;
        let dirs = try_infos!(directives, ndirs)?;
        let cbdata = CbData(cbdata);
        inst.process_monitor_nb(m, error, &dirs, move |r| {
            if let Some(cb) = cbfunc {
                deliver_infos(cb, &cbdata, r.map_err(|e| e.status()));
            }
        })
        .map_err(|e| e.status())
    }
}
