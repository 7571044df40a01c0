//! `include/pmix_ft.h`: rank-state tracking across processes, pmix-rs's own C API
//! over [`pmix::ft`] (the header says what each call does and returns). Every name
//! starts with `pmixrs_ft_`, which no OpenPMIx name does.
//!
//! The calls are split as the header splits them: [`local`] (no message; allowed in
//! an event handler or a callback) and [`collective`] (every live member calls them, in
//! the same order). Here: the header's types and constants, and what both share.

pub mod collective;
pub mod local;

use std::ffi::{c_char, c_int};

use pmix::{Mode, PmixError};
use pmix_core::Status;
use pmix_core::ftstate::{Mask, RankInfo, RankState};

use crate::boundary::{BAD_PARAM, Res, admitted, opt_mut, try_str};
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
/// Takes its C arguments as they came (the C contract of its callers).
pub(crate) fn admit_local<'a>(
    call: &'static str,
    group: *const c_char,
) -> Result<(pmix::Pmix, &'a str), Status> {
    let inst = admitted(call, Mode::NonBlocking)?;
    Ok((inst, try_str!(group, PMIX_MAX_NSLEN)?))
}

/// The instance admitted for a collective (blocking) call, and the group name.
/// Takes its C arguments as they came (the C contract of its callers).
pub(crate) fn admit_collective<'a>(
    call: &'static str,
    group: *const c_char,
) -> Result<(pmix::Pmix, &'a str), Status> {
    let inst = admitted(call, Mode::Blocking)?;
    Ok((inst, try_str!(group, PMIX_MAX_NSLEN)?))
}

pub(crate) fn status(e: pmix::Error) -> Status {
    e.status()
}

/// A C `type` as a mask.
pub(crate) fn mask(t: c_int) -> Result<Mask, Status> {
    u8::try_from(t)
        .ok()
        .and_then(|b| Mask::from_bits(b).ok())
        .ok_or(BAD_PARAM)
}

/// Writes `v` to the output `p` (C's `opt_mut!`) when there is one.
pub(crate) fn set<T>(p: Option<&mut T>, v: T) {
    if let Some(p) = p {
        *p = v;
    }
}

pub(crate) fn c_count(n: u32) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// The C state of a rank info.
pub(crate) fn c_state(i: &RankInfo) -> c_int {
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
/// Takes its C arguments as they came (the C contract of its callers).
pub(crate) fn validate(
    global: bool,
    group: *const c_char,
    num_failed: *mut c_int,
    new_failures: *mut c_int,
) -> Res {
    let v = if global {
        let (inst, g) = admit_collective("pmixrs_ft_validate_global", group)?;
        inst.ft_validate_global(g)
    } else {
        let (inst, g) = admit_local("pmixrs_ft_validate_local", group)?;
        inst.ft_validate_local(g)
    }
    .map_err(status)?;

    set(opt_mut!(num_failed), c_count(v.num_failed));
    set(opt_mut!(new_failures), c_count(v.new_failures));
    Ok(())
}
