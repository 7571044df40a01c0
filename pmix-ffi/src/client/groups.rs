//! `PMIx_Group_construct` / `_nb`, `PMIx_Group_destruct` / `_nb` and
//! `PMIx_Group_leave` / `_nb` (seed `001`) over the runtime's groups.
//!
//! A construct's results are one info, `PMIX_GROUP_CONTEXT_ID` (`PMIX_SIZE`), when the
//! server assigned one: a `malloc`ed array the caller frees with `PMIX_INFO_FREE`
//! (blocking form), or the library's until the callback's `release_fn` (non-blocking
//! form). A NULL callback makes a `_nb` call blocking.

use std::ffi::{c_char, c_void};

use pmix::client::GroupOutcome;
use pmix::wire::{Info, Value};
use pmix::{Mode, PmixError};
use pmix_core::Status;

use crate::boundary::{
    BAD_PARAM, CbData, Res, admitted, export, mode_of, nb_or_blocking, op_done, opt_mut, opt_ref,
    status_of, try_mut, try_slice, try_str,
};
use crate::data::convert::{InfoCb, deliver_infos, infos_to_c, procs_to_wire, try_infos};
use crate::types::*;

/// A group id argument: 1 to 255 bytes (read with `try_str!` within that bound).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for an empty one.
fn grp_arg(g: &str) -> Result<&str, Status> {
    if g.is_empty() {
        return Err(BAD_PARAM);
    }
    Ok(g)
}

/// The arguments of a construct or an invite, as C passed them: the group id
/// ([`grp_arg`]), the processes and the directives.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for any of them malformed.
fn group_args<'a>(
    grp: *const c_char,
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
) -> Result<(&'a str, Vec<pmix::wire::Proc>, Vec<Info>), Status> {
    Ok((
        grp_arg(try_str!(grp, PMIX_MAX_NSLEN)?)?,
        procs_to_wire(try_slice!(procs, nprocs)?)?,
        try_infos!(info, ninfo)?,
    ))
}

/// The results of a construct: `PMIX_GROUP_CONTEXT_ID` (`PMIX_SIZE`) when the server
/// assigned one, else none.
fn results(o: &GroupOutcome) -> Vec<Info> {
    o.ctxid
        .map(|ctx| Info::new(pmix::wire::keys::GROUP_CONTEXT_ID, Value::Size(ctx)))
        .into_iter()
        .collect()
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
    /// # C contract
    /// `grp` is NULL or a NUL-terminated string; `procs` and `directives` point to
    /// `nprocs` / `ndirs` readable elements (or are NULL with a zero count); `results`
    /// and `nresults` are NULL or writable.
    fn PMIx_Group_construct(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        directives: *const pmix_info_t,
        ndirs: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize,
    ) -> pmix_status_t {
        let (res, nres) = match (opt_mut!(results), opt_mut!(nresults)) {
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
        let (grp, procs, info) = group_args(grp, procs, nprocs, directives, ndirs)?;
        let o = inst
            .group_construct(grp, &procs, &info)
            .map_err(|e| e.status())?;
        (*res, *nres) = infos_to_c(&self::results(&o))?;
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
    /// # C contract
    /// As [`PMIx_Group_construct`] (the arrays only during the call); `cbfunc` must be
    /// safe to call from another thread with `cbdata`.
    fn PMIx_Group_construct_nb(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Group_construct_nb", mode_of(&cbfunc))?;
        let (grp, procs, info) = group_args(grp, procs, nprocs, info, ninfo)?;
        let cbdata = CbData(cbdata);
        nb_or_blocking(
            cbfunc,
            || inst.group_construct(grp, &procs, &info),
            |cb| {
                inst.group_construct_nb(grp, &procs, &info, move |r| {
                    let r = r.map(|o| results(&o)).map_err(|e| e.status());
                    deliver_infos(cb, &cbdata, r);
                })
            },
        )
    }
}

/// The common body of the destruct and leave calls, on their C arguments: blocking
/// without `cbfunc`.
fn op(
    call: &'static str,
    call_nb: &'static str,
    grp: *const c_char,
    info: *const pmix_info_t,
    ninfo: usize,
    cbfunc: Option<(pmix_op_cbfunc_t, *mut c_void)>,
    leave: bool,
) -> Res {
    let cb = cbfunc.and_then(|(f, data)| f.map(|f| (f, CbData(data))));
    let inst = admitted(if cbfunc.is_some() { call_nb } else { call }, mode_of(&cb))?;
    let grp = grp_arg(try_str!(grp, PMIX_MAX_NSLEN)?)?;
    let info = try_infos!(info, ninfo)?;
    nb_or_blocking(
        cb,
        || {
            if leave {
                inst.group_leave(grp, &info)
            } else {
                inst.group_destruct(grp, &info)
            }
        },
        |(f, cbdata)| {
            let done = op_done(f, cbdata);
            if leave {
                inst.group_leave_nb(grp, &info, done)
            } else {
                inst.group_destruct_nb(grp, &info, done)
            }
        },
    )
}

export! {
    /// `PMIx_Group_destruct`: destructs `grp`, blocking until every member has.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (NULL, empty or over-length `grp`, a bad info);
    /// `PMIX_ERR_UNREACH`; the server's status.
    ///
    /// # C contract
    /// `grp` is NULL or a NUL-terminated string; `info` points to `ninfo` readable infos
    /// (or is NULL with a zero count).
    fn PMIx_Group_destruct(
        grp: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        op("PMIx_Group_destruct", "PMIx_Group_destruct_nb", grp, info, ninfo, None, false)
    }
}

export! {
    /// `PMIx_Group_destruct_nb`: as [`PMIx_Group_destruct`], with the status passed to
    /// `cbfunc` on the progress thread; a NULL `cbfunc` makes it blocking.
    ///
    /// # Errors
    /// As [`PMIx_Group_destruct`], returned only for what is found before acceptance.
    ///
    /// # C contract
    /// As [`PMIx_Group_destruct`]; `cbfunc` must be safe to call from another thread.
    fn PMIx_Group_destruct_nb(
        grp: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let cb = Some((cbfunc, cbdata));
        op("PMIx_Group_destruct", "PMIx_Group_destruct_nb", grp, info, ninfo, cb, false)
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
    /// # C contract
    /// As [`PMIx_Group_destruct`].
    fn PMIx_Group_leave(
        grp: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        op("PMIx_Group_leave", "PMIx_Group_leave_nb", grp, info, ninfo, None, true)
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
    /// # C contract
    /// As [`PMIx_Group_leave`]; `cbfunc` must be safe to call from another thread.
    fn PMIx_Group_leave_nb(
        grp: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let cb = Some((cbfunc, cbdata));
        op("PMIx_Group_leave", "PMIx_Group_leave_nb", grp, info, ninfo, cb, true)
    }
}

/// The out-pointers of a blocking invite or join, as C passed them: set to NULL and 0
/// (these calls return no results, as libpmix2 4.2.2's).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` when either is NULL.
fn no_results(results: *mut *mut pmix_info_t, nresults: *mut usize) -> Res {
    let (r, n) = (try_mut!(results)?, try_mut!(nresults)?);
    (*r, *n) = (std::ptr::null_mut(), 0);
    Ok(())
}

/// Delivers an invite's or join's outcome to a C `pmix_info_cbfunc_t` (no results).
fn info_done(cb: InfoCb, cbdata: CbData) -> impl FnOnce(Status) + Send + 'static {
    move |status| {
        let r = if status == Status::SUCCESS {
            Ok(Vec::new())
        } else {
            Err(status)
        };
        deliver_infos(cb, &cbdata, r);
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
    /// # C contract
    /// As [`PMIx_Group_construct`].
    fn PMIx_Group_invite(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Group_invite", Mode::Blocking)?;
        no_results(results, nresults)?;
        let (grp, procs, info) = group_args(grp, procs, nprocs, info, ninfo)?;
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
    /// # C contract
    /// As [`PMIx_Group_construct_nb`].
    fn PMIx_Group_invite_nb(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Group_invite_nb", mode_of(&cbfunc))?;
        let (grp, procs, info) = group_args(grp, procs, nprocs, info, ninfo)?;
        nb_or_blocking(
            cbfunc,
            || inst.group_invite(grp, &procs, &info),
            |cb| {
                let done = info_done(cb, CbData(cbdata));
                inst.group_invite_nb(grp, &procs, &info, move |r| done(status_of(r)))
            },
        )
    }
}

/// The leader argument of a join: none (answer the whole session) or a process.
///
/// # Errors
/// As [`procs_to_wire`].
fn leader_arg(leader: Option<&pmix_proc_t>) -> Result<Option<pmix::wire::Proc>, Status> {
    match leader {
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
    /// # C contract
    /// `grp` is NULL or a NUL-terminated string; `leader` NULL or readable; `info` as in
    /// [`PMIx_Group_construct`]; `results` and `nresults` NULL or writable.
    fn PMIx_Group_join(
        grp: *const c_char,
        leader: *const pmix_proc_t,
        opt: pmix_group_opt_t,
        info: *const pmix_info_t,
        ninfo: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Group_join", Mode::Blocking)?;
        no_results(results, nresults)?;
        let grp = grp_arg(try_str!(grp, PMIX_MAX_NSLEN)?)?;
        let leader = leader_arg(opt_ref!(leader))?;
        let accept = accept_arg(opt)?;
        let info = try_infos!(info, ninfo)?;
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
    /// # C contract
    /// As [`PMIx_Group_join`]; `cbfunc` must be safe to call from another thread with
    /// `cbdata`.
    fn PMIx_Group_join_nb(
        grp: *const c_char,
        leader: *const pmix_proc_t,
        opt: pmix_group_opt_t,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Group_join_nb", Mode::NonBlocking)?;
        let grp = grp_arg(try_str!(grp, PMIX_MAX_NSLEN)?)?;
        let leader = leader_arg(opt_ref!(leader))?;
        let accept = accept_arg(opt)?;
        let info = try_infos!(info, ninfo)?;
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
