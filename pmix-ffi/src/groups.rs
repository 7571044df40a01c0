//! `PMIx_Group_construct` / `_nb`, `PMIx_Group_destruct` / `_nb` and
//! `PMIx_Group_leave` / `_nb` (seed `001`) over the runtime's groups.
//!
//! A construct's results are one info, `PMIX_GROUP_CONTEXT_ID` (`PMIX_SIZE`), when the
//! server assigned one: a `malloc`ed array the caller frees with `PMIX_INFO_FREE`
//! (blocking form), or the library's until the callback's `release_fn` (non-blocking
//! form). A NULL callback makes a `_nb` call blocking.

use std::ffi::{c_char, c_void};

use pmix::client::GroupOutcome;
use pmix::{Mode, PmixError};
use pmix_core::Status;

use crate::boundary::{
    BAD_PARAM, CbData, Res, admitted, bounded_str, c_mut, c_slice, callback, copy_c_str, export,
    op_done,
};
use crate::convert::{infos_to_wire, procs_to_wire};
use crate::types::*;

/// `PMIX_GROUP_CONTEXT_ID`.
const KEY_CONTEXT_ID: &[u8] = b"pmix.grp.ctxid";

fn mode(blocking: bool) -> Mode {
    if blocking {
        Mode::Blocking
    } else {
        Mode::NonBlocking
    }
}

/// A group id argument: NUL-terminated, 1 to 255 bytes, UTF-8.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` otherwise (NULL and over-length included).
///
/// # Safety
/// `grp` is NULL or readable up to its NUL or 256 bytes.
unsafe fn grp_arg<'a>(grp: *const c_char) -> Result<&'a str, Status> {
    // SAFETY: forwarded from the caller.
    let g = unsafe { bounded_str(grp, PMIX_MAX_NSLEN) }?;
    if g.is_empty() {
        return Err(BAD_PARAM);
    }
    Ok(g)
}

/// The arguments of a construct or an invite: the group id ([`grp_arg`]), the
/// processes and the directives.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for any of them malformed.
///
/// # Safety
/// As [`PMIx_Group_construct`].
unsafe fn group_args<'a>(
    grp: *const c_char,
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
) -> Result<(&'a str, Vec<pmix::wire::Proc>, Vec<pmix::wire::Info>), Status> {
    // SAFETY: forwarded from the caller.
    unsafe {
        Ok((
            grp_arg(grp)?,
            procs_to_wire(c_slice(procs, nprocs)?)?,
            infos_to_wire(c_slice(info, ninfo)?)?,
        ))
    }
}

/// The results of a construct as a `malloc`ed C info array (NULL and 0 for none).
fn c_results(o: &GroupOutcome) -> Result<(*mut pmix_info_t, usize), Status> {
    let Some(ctx) = o.ctxid else {
        return Ok((std::ptr::null_mut(), 0));
    };
    // SAFETY: calloc of one info; checked before use.
    let p = unsafe { libc::calloc(1, size_of::<pmix_info_t>()) }.cast::<pmix_info_t>();
    // SAFETY: `p` is NULL or a fresh, zeroed, aligned info.
    let i = unsafe { p.as_mut() }.ok_or(Status::ERR_NOMEM)?;
    copy_c_str(&mut i.key, KEY_CONTEXT_ID);
    i.value.type_ = PMIX_SIZE;
    i.value.data = pmix_value_data {
        size: usize::try_from(ctx).unwrap_or(usize::MAX),
    };
    Ok((p, 1))
}

/// Frees what [`c_results`] made.
///
/// # Safety
/// `p` came from [`c_results`] (or is NULL), freed once.
unsafe fn free_results(p: *mut pmix_info_t) {
    // SAFETY: caller's contract; a SIZE value owns nothing.
    unsafe { libc::free(p.cast()) };
}

callback! {
    /// The `release_fn` of a construct callback.
    ///
    /// # Safety
    /// `cbdata` is the `release_cbdata` of the same callback, passed once.
    unsafe fn release_results(cbdata: *mut c_void) {
        // SAFETY: forwarded from the caller.
        unsafe { free_results(cbdata.cast()) }
    }
}

export! {
    /// `PMIx_Group_construct`: constructs `grp` of `procs` with `directives`
    /// (`PMIX_GROUP_ASSIGN_CONTEXT_ID`, `PMIX_GROUP_FT_COLLECTIVE`, …), blocking until
    /// every member has; `*results` gets `PMIX_GROUP_CONTEXT_ID` when one was assigned
    /// (free with `PMIX_INFO_FREE`), else NULL.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (NULL, empty or over-length `grp`, no members, NULL
    /// `results`/`nresults`, a bad directive); `PMIX_ERR_UNREACH` (no server); the
    /// server's status (`PMIX_ERR_NOT_SUPPORTED` from a server without groups,
    /// `PMIX_GROUP_CONSTRUCT_ABORT`, …).
    ///
    /// # Safety
    /// `grp` is NULL or a NUL-terminated string; `procs` and `directives` point to
    /// `nprocs` / `ndirs` readable elements (or are NULL with a zero count); `results`
    /// and `nresults` are NULL or writable.
    unsafe fn PMIx_Group_construct(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        directives: *const pmix_info_t,
        ndirs: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize,
    ) -> pmix_status_t {
        // SAFETY: non-NULL out-pointers are writable (caller's contract).
        let (res, nres) = unsafe { (results.as_mut(), nresults.as_mut()) };
        let (res, nres) = match (res, nres) {
            (Some(r), Some(n)) => {
                *r = std::ptr::null_mut();
                *n = 0;
                (r, n)
            }
            _ => {
                admitted("PMIx_Group_construct", Mode::Blocking)?;
                return Err(BAD_PARAM);
            }
        };
        let inst = admitted("PMIx_Group_construct", Mode::Blocking)?;
        // SAFETY: forwarded from the caller.
        let (grp, procs, info) = unsafe { group_args(grp, procs, nprocs, directives, ndirs) }?;
        let o = inst
            .group_construct(grp, &procs, &info)
            .map_err(|e| e.status())?;
        (*res, *nres) = c_results(&o)?;
        Ok(())
    }
}

export! {
    /// `PMIx_Group_construct_nb`: as [`PMIx_Group_construct`], with the outcome passed to
    /// `cbfunc(status, results, nresults, cbdata, release_fn, release_cbdata)` on the
    /// progress thread (the results are the library's until `release_fn`); a NULL
    /// `cbfunc` makes it blocking, with the results dropped.
    ///
    /// # Errors
    /// As [`PMIx_Group_construct`], returned only for what is found before acceptance.
    ///
    /// # Safety
    /// As [`PMIx_Group_construct`] (the arrays only during the call); `cbfunc` must be
    /// safe to call from another thread with `cbdata`.
    unsafe fn PMIx_Group_construct_nb(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Group_construct_nb", mode(cbfunc.is_none()))?;
        // SAFETY: forwarded from the caller.
        let (grp, procs, info) = unsafe { group_args(grp, procs, nprocs, info, ninfo) }?;
        let Some(cb) = cbfunc else {
            return inst
                .group_construct(grp, &procs, &info)
                .map(|_| ())
                .map_err(|e| e.status());
        };
        let cbdata = CbData(cbdata);
        inst.group_construct_nb(grp, &procs, &info, move |r| {
            let (status, p, n) = match r.map_err(|e| e.status()).and_then(|o| c_results(&o)) {
                Ok((p, n)) => (Status::SUCCESS.0, p, n),
                Err(s) => (s.0, std::ptr::null_mut(), 0),
            };
            let release: pmix_release_cbfunc_t = if p.is_null() {
                None
            } else {
                Some(release_results)
            };
            // SAFETY: the caller's callback with its own data, once; the results
            // stay valid until it calls `release`.
            unsafe { cb(status, p, n, cbdata.ptr(), release, p.cast()) };
        })
        .map_err(|e| e.status())
    }
}

/// The common body of the destruct and leave calls: blocking without `cbfunc`.
///
/// # Safety
/// As [`PMIx_Group_destruct`].
unsafe fn op(
    call: &'static str,
    call_nb: &'static str,
    grp: *const c_char,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<(pmix_op_cbfunc_t, *mut c_void)>,
    leave: bool,
) -> Res {
    let blocking = cbfunc.is_none_or(|(f, _)| f.is_none());
    let inst = admitted(
        if cbfunc.is_some() { call_nb } else { call },
        mode(blocking),
    )?;
    // SAFETY: forwarded from the caller.
    let grp = unsafe { grp_arg(grp) }?;
    // SAFETY: forwarded from the caller.
    let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
    let cb = match cbfunc {
        Some((Some(f), data)) => Some((f, CbData(data))),
        _ => None,
    };
    let Some((f, cbdata)) = cb else {
        let r = if leave {
            inst.group_leave(grp, &info)
        } else {
            inst.group_destruct(grp, &info)
        };
        return r.map_err(|e| e.status());
    };
    let done = op_done(f, cbdata);
    let r = if leave {
        inst.group_leave_nb(grp, &info, done)
    } else {
        inst.group_destruct_nb(grp, &info, done)
    };
    r.map_err(|e| e.status())
}

export! {
    /// `PMIx_Group_destruct`: destructs `grp`, blocking until every member has.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (NULL, empty or over-length `grp`, a bad info);
    /// `PMIX_ERR_UNREACH`; the server's status.
    ///
    /// # Safety
    /// `grp` is NULL or a NUL-terminated string; `info` points to `ninfo` readable infos
    /// (or is NULL with a zero count).
    unsafe fn PMIx_Group_destruct(
        grp: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe {
            op(
                "PMIx_Group_destruct",
                "PMIx_Group_destruct_nb",
                grp,
                info,
                ninfo,
                None,
                false,
            )
        }
    }
}

export! {
    /// `PMIx_Group_destruct_nb`: as [`PMIx_Group_destruct`], with the status passed to
    /// `cbfunc` on the progress thread; a NULL `cbfunc` makes it blocking.
    ///
    /// # Errors
    /// As [`PMIx_Group_destruct`], returned only for what is found before acceptance.
    ///
    /// # Safety
    /// As [`PMIx_Group_destruct`]; `cbfunc` must be safe to call from another thread.
    unsafe fn PMIx_Group_destruct_nb(
        grp: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe {
            op(
                "PMIx_Group_destruct",
                "PMIx_Group_destruct_nb",
                grp,
                info,
                ninfo,
                Some((cbfunc, cbdata)),
                false,
            )
        }
    }
}

export! {
    /// `PMIx_Group_leave` (seed `001`): drops `grp` locally at once and returns once the
    /// server has generated `PMIX_GROUP_LEFT` to the other members.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_WOULD_BLOCK` from the progress thread (one diagnostic
    /// naming the call, nothing done); `PMIX_ERR_BAD_PARAM` (NULL, empty or over-length
    /// `grp`, a bad info); `PMIX_ERR_NOT_SUPPORTED` (a server without group operations,
    /// as Open MPI 4.1's `mpirun`); `PMIX_ERR_UNREACH`; the server's other statuses.
    ///
    /// # Safety
    /// As [`PMIx_Group_destruct`].
    unsafe fn PMIx_Group_leave(
        grp: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe {
            op(
                "PMIx_Group_leave",
                "PMIx_Group_leave_nb",
                grp,
                info,
                ninfo,
                None,
                true,
            )
        }
    }
}

export! {
    /// `PMIx_Group_leave_nb` (seed `001`): as [`PMIx_Group_leave`], with the status passed
    /// to `cbfunc` on the progress thread once the departure event is generated; a NULL
    /// `cbfunc` makes it blocking (`PMIX_ERR_WOULD_BLOCK` from the progress thread).
    ///
    /// # Errors
    /// As [`PMIx_Group_leave`], returned only for what is found before acceptance;
    /// `cbfunc` runs if and only if this returns `PMIX_SUCCESS`.
    ///
    /// # Safety
    /// As [`PMIx_Group_leave`]; `cbfunc` must be safe to call from another thread.
    unsafe fn PMIx_Group_leave_nb(
        grp: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe {
            op(
                "PMIx_Group_leave",
                "PMIx_Group_leave_nb",
                grp,
                info,
                ninfo,
                Some((cbfunc, cbdata)),
                true,
            )
        }
    }
}

/// The out-pointers of a blocking invite or join: set to NULL and 0 (these calls
/// return no results, as libpmix2 4.2.2's).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` when either is NULL.
///
/// # Safety
/// Each is NULL or writable.
unsafe fn no_results(results: *mut *mut pmix_info_t, nresults: *mut usize) -> Res {
    // SAFETY: non-NULL out-pointers are writable (caller's contract).
    let (r, n) = unsafe { (c_mut(results)?, c_mut(nresults)?) };
    (*r, *n) = (std::ptr::null_mut(), 0);
    Ok(())
}

/// Delivers an invite's or join's outcome to a C `pmix_info_cbfunc_t` (no results).
fn info_done(
    cb: unsafe extern "C" fn(
        pmix_status_t,
        *mut pmix_info_t,
        usize,
        *mut c_void,
        pmix_release_cbfunc_t,
        *mut c_void,
    ),
    cbdata: CbData,
) -> impl FnOnce(pmix_status_t) + Send + 'static {
    move |status| {
        // SAFETY: the caller's callback with its own data, once; no results.
        unsafe {
            cb(
                status,
                std::ptr::null_mut(),
                0,
                cbdata.ptr(),
                None,
                std::ptr::null_mut(),
            )
        };
    }
}

fn status_of<T>(r: Result<T, pmix::Error>) -> pmix_status_t {
    match r {
        Ok(_) => Status::SUCCESS.0,
        Err(e) => e.status().0,
    }
}

export! {
    /// `PMIx_Group_invite`: invites `procs` to `grp` with this process as leader,
    /// blocking until every invitee has accepted, declined or terminated; the group
    /// (this process and the acceptors) is then made, at the server too. `*results` is
    /// NULL (as libpmix2's).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (a bad `grp`, no one to invite, NULL `results`/`nresults`);
    /// `PMIX_ERR_UNREACH`; the server's refusal.
    ///
    /// # Safety
    /// As [`PMIx_Group_construct`].
    unsafe fn PMIx_Group_invite(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Group_invite", Mode::Blocking)?;
        // SAFETY: forwarded from the caller.
        unsafe { no_results(results, nresults) }?;
        // SAFETY: forwarded from the caller.
        let (grp, procs, info) = unsafe { group_args(grp, procs, nprocs, info, ninfo) }?;
        inst.group_invite(grp, &procs, &info)
            .map(|_| ())
            .map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_Group_invite_nb`: as [`PMIx_Group_invite`], with the status passed to
    /// `cbfunc(status, NULL, 0, cbdata, NULL, NULL)` once, on the progress thread; a
    /// NULL `cbfunc` makes it blocking.
    ///
    /// # Errors
    /// As [`PMIx_Group_invite`], returned only for what is found before acceptance.
    ///
    /// # Safety
    /// As [`PMIx_Group_construct_nb`].
    unsafe fn PMIx_Group_invite_nb(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Group_invite_nb", mode(cbfunc.is_none()))?;
        // SAFETY: forwarded from the caller.
        let (grp, procs, info) = unsafe { group_args(grp, procs, nprocs, info, ninfo) }?;
        let Some(cb) = cbfunc else {
            return inst
                .group_invite(grp, &procs, &info)
                .map(|_| ())
                .map_err(|e| e.status());
        };
        let done = info_done(cb, CbData(cbdata));
        inst.group_invite_nb(grp, &procs, &info, move |r| done(status_of(r)))
            .map_err(|e| e.status())
    }
}

/// The leader argument of a join: NULL (answer the whole session) or a process.
///
/// # Errors
/// As [`procs_to_wire`].
///
/// # Safety
/// `leader` is NULL or readable.
unsafe fn leader_arg(leader: *const pmix_proc_t) -> Result<Option<pmix::wire::Proc>, Status> {
    // SAFETY: forwarded from the caller.
    match unsafe { leader.as_ref() } {
        None => Ok(None),
        Some(l) => Ok(procs_to_wire(std::slice::from_ref(l))?.pop()),
    }
}

export! {
    /// `PMIx_Group_join`: answers an invitation to `grp` from `leader` (NULL: the
    /// whole session): `PMIX_GROUP_ACCEPT` or `PMIX_GROUP_DECLINE`; returns once the
    /// answer is sent. `*results` is NULL (as libpmix2's).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (a bad `grp` or `leader`, an `opt` that is neither, NULL
    /// `results`/`nresults`); `PMIX_ERR_UNREACH`; the server's status.
    ///
    /// # Safety
    /// `grp` is NULL or a NUL-terminated string; `leader` NULL or readable; `info` as in
    /// [`PMIx_Group_construct`]; `results` and `nresults` NULL or writable.
    unsafe fn PMIx_Group_join(
        grp: *const c_char,
        leader: *const pmix_proc_t,
        opt: pmix_group_opt_t,
        info: *const pmix_info_t,
        ninfo: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Group_join", Mode::Blocking)?;
        // SAFETY: forwarded from the caller.
        unsafe { no_results(results, nresults) }?;
        // SAFETY: forwarded from the caller.
        let grp = unsafe { grp_arg(grp) }?;
        // SAFETY: forwarded from the caller.
        let leader = unsafe { leader_arg(leader) }?;
        let accept = accept_arg(opt)?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        inst.group_join(grp, leader.as_ref(), accept, &info)
            .map_err(|e| e.status())
    }
}

/// `PMIX_GROUP_ACCEPT` (true) or `PMIX_GROUP_DECLINE` (false).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for any other value.
fn accept_arg(opt: pmix_group_opt_t) -> Result<bool, Status> {
    match opt {
        PMIX_GROUP_ACCEPT => Ok(true),
        PMIX_GROUP_DECLINE => Ok(false),
        _ => Err(BAD_PARAM),
    }
}

export! {
    /// `PMIx_Group_join_nb`: as [`PMIx_Group_join`], with the status passed to
    /// `cbfunc(status, NULL, 0, cbdata, NULL, NULL)` once, on the progress thread (safe
    /// from an event handler, unlike the blocking form); with a NULL `cbfunc` the
    /// answer is sent and nothing is called back (fire and forget, as OpenPMIx's:
    /// its `asyncgroup` example joins that way from its invitation handler).
    ///
    /// # Errors
    /// As [`PMIx_Group_join`], returned only for what is found before acceptance.
    ///
    /// # Safety
    /// As [`PMIx_Group_join`]; `cbfunc` must be safe to call from another thread with
    /// `cbdata`.
    unsafe fn PMIx_Group_join_nb(
        grp: *const c_char,
        leader: *const pmix_proc_t,
        opt: pmix_group_opt_t,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Group_join_nb", Mode::NonBlocking)?;
        // SAFETY: forwarded from the caller.
        let grp = unsafe { grp_arg(grp) }?;
        // SAFETY: forwarded from the caller.
        let leader = unsafe { leader_arg(leader) }?;
        let accept = accept_arg(opt)?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        let Some(cb) = cbfunc else {
            return inst
                .group_join_nb(grp, leader.as_ref(), accept, &info, |_| {})
                .map_err(|e| e.status());
        };
        let done = info_done(cb, CbData(cbdata));
        inst.group_join_nb(grp, leader.as_ref(), accept, &info, move |r| {
            done(status_of(r))
        })
        .map_err(|e| e.status())
    }
}
