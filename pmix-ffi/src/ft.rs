//! `include/pmix_ft.h`: rank-state tracking across processes, pmix-rs's own C API
//! over [`pmix::ft`] (the header says what each call does and returns). Every name
//! starts with `pmixrs_ft_`, which no OpenPMIx name does.

use std::ffi::{c_char, c_int};

use pmix::{Mode, PmixError};
use pmix_core::Status;
use pmix_core::ftstate::{AgreeError, Mask, RankInfo, RankState, View};

use crate::boundary::{BAD_PARAM, Res, admitted, bounded_str, c_mut, export, not_null};
use crate::types::*;

/// `PMIXRS_FT_ERR_SIZE`.
pub const PMIXRS_FT_ERR_SIZE: pmix_status_t = pmix::ft::ERR_SIZE.0;

/// `PMIXRS_FT_EVENT_REVOKED`.
pub const PMIXRS_FT_EVENT_REVOKED: pmix_status_t = pmix::ft::REVOKED_EVENT;

/// `pmixrs_ft_rank_info_t`: a group rank and its state with one modifier.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct pmixrs_ft_rank_info_t {
    /// The group rank.
    pub rank: pmix_rank_t,
    /// `PMIXRS_FT_STATE_*` | `PMIXRS_FT_MOD_*`.
    pub state: c_int,
}

/// The instance admitted for a local call, and the group name.
///
/// # Safety
/// `group` is NULL or readable up to its NUL or 256 bytes.
unsafe fn local<'a>(
    call: &'static str,
    group: *const c_char,
) -> Result<(pmix::Pmix, &'a str), Status> {
    let inst = admitted(call, Mode::NonBlocking)?;
    // SAFETY: forwarded from the caller.
    let g = unsafe { bounded_str(group, PMIX_MAX_NSLEN) }?;
    Ok((inst, g))
}

/// The instance admitted for a collective (blocking) call, and the group name.
///
/// # Safety
/// As [`local`].
unsafe fn collective<'a>(
    call: &'static str,
    group: *const c_char,
) -> Result<(pmix::Pmix, &'a str), Status> {
    let inst = admitted(call, Mode::Blocking)?;
    // SAFETY: forwarded from the caller.
    let g = unsafe { bounded_str(group, PMIX_MAX_NSLEN) }?;
    Ok((inst, g))
}

fn status(e: pmix::Error) -> Status {
    e.status()
}

/// A C `type` as a mask.
fn mask(t: c_int) -> Result<Mask, Status> {
    u8::try_from(t)
        .ok()
        .and_then(|b| Mask::from_bits(b).ok())
        .ok_or(BAD_PARAM)
}

/// Writes `v` through `p` when `p` is not NULL.
///
/// # Safety
/// `p` is NULL or valid for a write.
unsafe fn set<T>(p: *mut T, v: T) {
    // SAFETY: NULL or valid for a write, as the caller promised.
    if let Some(p) = unsafe { p.as_mut() } {
        *p = v;
    }
}

fn c_count(n: u32) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// The C state of a rank info.
fn c_state(i: &RankInfo) -> c_int {
    let s = match i.state {
        RankState::Ok => 0x01,
        RankState::Failed => 0x02,
        RankState::Null => 0x04,
    };
    let m = match i.modifier {
        pmix_core::ftstate::Modifier::New => 0x08,
        pmix_core::ftstate::Modifier::Old => 0x10,
    };
    s | m
}

/// The common body of the two validates: `global` selects the collective one.
///
/// # Safety
/// As [`pmixrs_ft_validate_local`].
unsafe fn validate(
    global: bool,
    group: *const c_char,
    num_failed: *mut c_int,
    new_failures: *mut c_int,
) -> Res {
    let v = if global {
        // SAFETY: forwarded from the caller.
        let (inst, g) = unsafe { collective("pmixrs_ft_validate_global", group) }?;
        inst.ft_validate_global(g)
    } else {
        // SAFETY: forwarded from the caller.
        let (inst, g) = unsafe { local("pmixrs_ft_validate_local", group) }?;
        inst.ft_validate_local(g)
    }
    .map_err(status)?;
    // SAFETY: NULL or writable, as the caller promised.
    unsafe {
        set(num_failed, c_count(v.num_failed));
        set(new_failures, c_count(v.new_failures));
    }
    Ok(())
}

export! {
    /// `pmixrs_ft_validate_local`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// `group` is NULL or a readable C string; the two outputs are NULL or writable.
    unsafe fn pmixrs_ft_validate_local(
        group: *const c_char,
        num_failed: *mut c_int,
        new_failures: *mut c_int,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe { validate(false, group, num_failed, new_failures) }
    }
}

export! {
    /// `pmixrs_ft_validate_global`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// As [`pmixrs_ft_validate_local`].
    unsafe fn pmixrs_ft_validate_global(
        group: *const c_char,
        num_failed: *mut c_int,
        new_failures: *mut c_int,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe { validate(true, group, num_failed, new_failures) }
    }
}

export! {
    /// `pmixrs_ft_validate_global_count`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// `group` as [`pmixrs_ft_validate_local`]; `count` NULL or writable.
    unsafe fn pmixrs_ft_validate_global_count(
        group: *const c_char,
        count_type: c_int,
        count: *mut c_int,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        let (inst, g) = unsafe { collective("pmixrs_ft_validate_global_count", group) }?;
        let m = mask(count_type)?;
        not_null(count)?;
        let n = inst.ft_validate_global_count(g, m).map_err(status)?;
        // SAFETY: checked non-NULL; writable as the caller promised.
        unsafe { set(count, c_count(n)) };
        Ok(())
    }
}

/// The common body of the two `get_state` calls.
///
/// # Safety
/// As [`pmixrs_ft_get_state_local`].
unsafe fn get_state(
    call: &'static str,
    view: View,
    group: *const c_char,
    type_: c_int,
    incount: c_int,
    outcount: *mut c_int,
    rank_infos: *mut pmixrs_ft_rank_info_t,
) -> Res {
    // SAFETY: forwarded from the caller.
    let (inst, g) = unsafe { local(call, group) }?;
    let m = mask(type_)?;
    let incount = usize::try_from(incount).map_err(|_| BAD_PARAM)?;
    not_null(outcount)?;
    if incount > 0 && rank_infos.is_null() {
        return Err(BAD_PARAM);
    }
    // Never more entries than the group has members, whatever `incount` says.
    let (size, _) = inst.ft_size(g).map_err(status)?;
    let mut out = vec![RankInfo::default(); incount.min(size as usize)];
    let r = inst.ft_get_state(g, view, m, &mut out);
    let n = match r {
        Ok(n) => n,
        Err(e) if e.status() == pmix::ft::ERR_SIZE => {
            let needed = inst.ft_get_num_state(g, view, m).map_err(status)?;
            // SAFETY: checked non-NULL; writable as the caller promised.
            unsafe { set(outcount, c_count(needed)) };
            return Err(pmix::ft::ERR_SIZE);
        }
        Err(e) => return Err(e.status()),
    };
    if incount > 0 {
        for (k, info) in out.iter().take(n).enumerate() {
            // SAFETY: `rank_infos` holds `incount` writable entries (the caller's
            // promise) and `k < n <= incount`.
            unsafe {
                *rank_infos.add(k) = pmixrs_ft_rank_info_t {
                    rank: info.rank,
                    state: c_state(info),
                };
            }
        }
    }
    // SAFETY: checked non-NULL.
    unsafe { set(outcount, c_int::try_from(n).unwrap_or(c_int::MAX)) };
    Ok(())
}

export! {
    /// `pmixrs_ft_get_state_local`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// `group` a readable C string or NULL; `outcount` writable or NULL; `rank_infos`
    /// NULL or `incount` writable entries.
    unsafe fn pmixrs_ft_get_state_local(
        group: *const c_char,
        type_: c_int,
        incount: c_int,
        outcount: *mut c_int,
        rank_infos: *mut pmixrs_ft_rank_info_t,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe {
            get_state(
                "pmixrs_ft_get_state_local",
                View::Local,
                group,
                type_,
                incount,
                outcount,
                rank_infos,
            )
        }
    }
}

export! {
    /// `pmixrs_ft_get_state_global`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// As [`pmixrs_ft_get_state_local`].
    unsafe fn pmixrs_ft_get_state_global(
        group: *const c_char,
        type_: c_int,
        incount: c_int,
        outcount: *mut c_int,
        rank_infos: *mut pmixrs_ft_rank_info_t,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe {
            get_state(
                "pmixrs_ft_get_state_global",
                View::Global,
                group,
                type_,
                incount,
                outcount,
                rank_infos,
            )
        }
    }
}

/// The common body of the two `get_num_state` calls.
///
/// # Safety
/// As [`pmixrs_ft_get_num_state_local`].
unsafe fn num_state(
    call: &'static str,
    view: View,
    group: *const c_char,
    type_: c_int,
    count: *mut c_int,
) -> Res {
    // SAFETY: forwarded from the caller.
    let (inst, g) = unsafe { local(call, group) }?;
    let m = mask(type_)?;
    not_null(count)?;
    let n = inst.ft_get_num_state(g, view, m).map_err(status)?;
    // SAFETY: checked non-NULL.
    unsafe { set(count, c_count(n)) };
    Ok(())
}

export! {
    /// `pmixrs_ft_get_num_state_local`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// `group` a readable C string or NULL; `count` writable or NULL.
    unsafe fn pmixrs_ft_get_num_state_local(
        group: *const c_char,
        type_: c_int,
        count: *mut c_int,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe {
            num_state(
                "pmixrs_ft_get_num_state_local",
                View::Local,
                group,
                type_,
                count,
            )
        }
    }
}

export! {
    /// `pmixrs_ft_get_num_state_global`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// As [`pmixrs_ft_get_num_state_local`].
    unsafe fn pmixrs_ft_get_num_state_global(
        group: *const c_char,
        type_: c_int,
        count: *mut c_int,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe {
            num_state(
                "pmixrs_ft_get_num_state_global",
                View::Global,
                group,
                type_,
                count,
            )
        }
    }
}

export! {
    /// `pmixrs_ft_group_size`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// `group` a readable C string or NULL; the outputs writable or NULL (NULL is
    /// `PMIX_ERR_BAD_PARAM`).
    unsafe fn pmixrs_ft_group_size(
        group: *const c_char,
        size: *mut c_int,
        rank: *mut c_int,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        let (inst, g) = unsafe { local("pmixrs_ft_group_size", group) }?;
        not_null(size)?;
        not_null(rank)?;
        let (n, me) = inst.ft_size(g).map_err(status)?;
        // SAFETY: NULL or writable, as the caller promised.
        unsafe {
            set(size, c_count(n));
            set(rank, c_count(me));
        }
        Ok(())
    }
}

/// The common body of `get_failed` and `get_acked` (`acked` selects): the ranks
/// into the caller's array (at most `incount`), and their number.
///
/// # Safety
/// As [`pmixrs_ft_get_failed`].
unsafe fn rank_list(
    acked: bool,
    group: *const c_char,
    out: *mut pmix_rank_t,
    incount: usize,
    outcount: *mut usize,
) -> Res {
    let call = if acked {
        "pmixrs_ft_get_acked"
    } else {
        "pmixrs_ft_get_failed"
    };
    // SAFETY: forwarded from the caller.
    let (inst, g) = unsafe { local(call, group) }?;
    not_null(outcount)?;
    if incount > 0 && out.is_null() {
        return Err(BAD_PARAM);
    }
    let ranks = if acked {
        inst.ft_get_acked(g)
    } else {
        inst.ft_get_failed(g)
    }
    .map_err(status)?;
    for (k, r) in ranks.iter().take(incount).enumerate() {
        // SAFETY: `out` holds `incount` writable entries and `k < incount`.
        unsafe { *out.add(k) = *r };
    }
    // SAFETY: checked non-NULL.
    unsafe { set(outcount, ranks.len()) };
    Ok(())
}

export! {
    /// `pmixrs_ft_get_failed`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// `group` a readable C string or NULL; `ranks` NULL or `incount` writable
    /// entries; `outcount` writable or NULL.
    unsafe fn pmixrs_ft_get_failed(
        group: *const c_char,
        ranks: *mut pmix_rank_t,
        incount: usize,
        outcount: *mut usize,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe { rank_list(false, group, ranks, incount, outcount) }
    }
}

export! {
    /// `pmixrs_ft_ack_failed`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// `group` a readable C string or NULL; `acked` writable or NULL.
    unsafe fn pmixrs_ft_ack_failed(
        group: *const c_char,
        n: usize,
        acked: *mut usize,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        let (inst, g) = unsafe { local("pmixrs_ft_ack_failed", group) }?;
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let a = inst.ft_ack_failed(g, n).map_err(status)?;
        // SAFETY: NULL or writable, as the caller promised.
        unsafe { set(acked, a as usize) };
        Ok(())
    }
}

export! {
    /// `pmixrs_ft_get_acked`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// As [`pmixrs_ft_get_failed`].
    unsafe fn pmixrs_ft_get_acked(
        group: *const c_char,
        ranks: *mut pmix_rank_t,
        incount: usize,
        outcount: *mut usize,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        unsafe { rank_list(true, group, ranks, incount, outcount) }
    }
}

export! {
    /// `pmixrs_ft_agree`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// `group` a readable C string or NULL; `flag` NULL or readable and writable.
    unsafe fn pmixrs_ft_agree(group: *const c_char, flag: *mut u32) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        let (inst, g) = unsafe { collective("pmixrs_ft_agree", group) }?;
        // SAFETY: NULL or readable, as the caller promised.
        let f = unsafe { c_mut(flag) }?;
        match inst.ft_agree(g, *f).map_err(status)? {
            Ok(v) => {
                *f = v;
                Ok(())
            }
            Err(e @ AgreeError::ProcFailed { flag, .. }) => {
                *f = flag;
                Err(pmix_core::PmixError::status(&e))
            }
            Err(e) => Err(pmix_core::PmixError::status(&e)),
        }
    }
}

export! {
    /// `pmixrs_ft_shrink`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// `group` and `new_group` readable C strings or NULL; the outputs writable or
    /// NULL.
    unsafe fn pmixrs_ft_shrink(
        group: *const c_char,
        new_group: *const c_char,
        new_rank: *mut c_int,
        new_size: *mut c_int,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        let (inst, g) = unsafe { collective("pmixrs_ft_shrink", group) }?;
        // SAFETY: forwarded from the caller.
        let ng = unsafe { bounded_str(new_group, PMIX_MAX_NSLEN) }?;
        let s = inst.ft_shrink(g, ng).map_err(status)?;
        // SAFETY: NULL or writable, as the caller promised.
        unsafe {
            set(new_rank, c_count(s.rank));
            set(new_size, c_count(s.size));
        }
        Ok(())
    }
}

export! {
    /// `pmixrs_ft_revoke`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// `group` a readable C string or NULL.
    unsafe fn pmixrs_ft_revoke(group: *const c_char) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        let (inst, g) = unsafe { local("pmixrs_ft_revoke", group) }?;
        inst.ft_revoke(g).map(|_| ()).map_err(status)
    }
}

export! {
    /// `pmixrs_ft_is_revoked`: see `pmix_ft.h`.
    ///
    /// # Safety
    /// `group` a readable C string or NULL; `revoked` writable or NULL.
    unsafe fn pmixrs_ft_is_revoked(
        group: *const c_char,
        revoked: *mut c_int,
    ) -> pmix_status_t {
        // SAFETY: forwarded from the caller.
        let (inst, g) = unsafe { local("pmixrs_ft_is_revoked", group) }?;
        not_null(revoked)?;
        let r = inst.ft_is_revoked(g).map_err(status)?;
        // SAFETY: checked non-NULL.
        unsafe { set(revoked, c_int::from(r)) };
        Ok(())
    }
}
