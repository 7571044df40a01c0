//! The local calls of `pmix_ft.h` (no message; allowed in an event handler or a
//! callback; never `PMIX_ERR_WOULD_BLOCK`): `pmixrs_ft_validate_local`,
//! `_get_state_*`, `_get_num_state_*`, `_group_size`, `_get_failed`, `_ack_failed`,
//! `_get_acked`, `_revoke` (which sends an event) and `_is_revoked`.

use std::ffi::{c_char, c_int};

use pmix::PmixError;
use pmix_core::ftstate::{RankInfo, View};

use super::{admit_local, c_count, c_state, mask, pmixrs_ft_rank_info_t, set, status, validate};
use crate::boundary::{BAD_PARAM, Res, export, not_null, opt_mut, try_slice_mut};
use crate::types::*;

export! {
    /// `pmixrs_ft_validate_local`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// `group` is NULL or a readable C string; the two outputs are NULL or writable.
    fn pmixrs_ft_validate_local(
        group: *const c_char,
        num_failed: *mut c_int,
        new_failures: *mut c_int,
    ) -> pmix_status_t {
        validate(false, group, num_failed, new_failures)
    }
}

/// The common body of the two `get_state` calls.
/// Takes its C arguments as they came (the C contract of its callers).
fn get_state(
    call: &'static str,
    view: View,
    group: *const c_char,
    type_: c_int,
    incount: c_int,
    outcount: *mut c_int,
    rank_infos: *mut pmixrs_ft_rank_info_t,
) -> Res {
    let (inst, g) = admit_local(call, group)?;
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
            set(opt_mut!(outcount), c_count(needed));
            return Err(pmix::ft::ERR_SIZE);
        }
        Err(e) => return Err(e.status()),
    };
    if incount > 0 {
        // `rank_infos` holds `incount` entries and `n <= incount`.
        let dst = try_slice_mut!(rank_infos, n)?;
        for (d, info) in dst.iter_mut().zip(&out) {
            *d = pmixrs_ft_rank_info_t {
                rank: info.rank,
                state: c_state(info),
            };
        }
    }
    set(opt_mut!(outcount), c_int::try_from(n).unwrap_or(c_int::MAX));
    Ok(())
}

export! {
    /// `pmixrs_ft_get_state_local`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// `group` a readable C string or NULL; `outcount` writable or NULL; `rank_infos`
    /// NULL or `incount` writable entries.
    fn pmixrs_ft_get_state_local(
        group: *const c_char,
        type_: c_int,
        incount: c_int,
        outcount: *mut c_int,
        rank_infos: *mut pmixrs_ft_rank_info_t,
    ) -> pmix_status_t {
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

export! {
    /// `pmixrs_ft_get_state_global`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// As [`pmixrs_ft_get_state_local`].
    fn pmixrs_ft_get_state_global(
        group: *const c_char,
        type_: c_int,
        incount: c_int,
        outcount: *mut c_int,
        rank_infos: *mut pmixrs_ft_rank_info_t,
    ) -> pmix_status_t {
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

/// The common body of the two `get_num_state` calls.
/// Takes its C arguments as they came (the C contract of its callers).
fn num_state(
    call: &'static str,
    view: View,
    group: *const c_char,
    type_: c_int,
    count: *mut c_int,
) -> Res {
    let (inst, g) = admit_local(call, group)?;
    let m = mask(type_)?;
    not_null(count)?;
    let n = inst.ft_get_num_state(g, view, m).map_err(status)?;
    set(opt_mut!(count), c_count(n));
    Ok(())
}

export! {
    /// `pmixrs_ft_get_num_state_local`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// `group` a readable C string or NULL; `count` writable or NULL.
    fn pmixrs_ft_get_num_state_local(
        group: *const c_char,
        type_: c_int,
        count: *mut c_int,
    ) -> pmix_status_t {
        num_state(
                "pmixrs_ft_get_num_state_local",
                View::Local,
                group,
                type_,
                count,
        )
    }
}

export! {
    /// `pmixrs_ft_get_num_state_global`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// As [`pmixrs_ft_get_num_state_local`].
    fn pmixrs_ft_get_num_state_global(
        group: *const c_char,
        type_: c_int,
        count: *mut c_int,
    ) -> pmix_status_t {
        num_state(
                "pmixrs_ft_get_num_state_global",
                View::Global,
                group,
                type_,
                count,
        )
    }
}

export! {
    /// `pmixrs_ft_group_size`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// `group` a readable C string or NULL; the outputs writable or NULL (NULL is
    /// `PMIX_ERR_BAD_PARAM`).
    fn pmixrs_ft_group_size(
        group: *const c_char,
        size: *mut c_int,
        rank: *mut c_int,
    ) -> pmix_status_t {
        let (inst, g) = admit_local("pmixrs_ft_group_size", group)?;
        not_null(size)?;
        not_null(rank)?;
        let (n, me) = inst.ft_size(g).map_err(status)?;

        set(opt_mut!(size), c_count(n));
        set(opt_mut!(rank), c_count(me));
        Ok(())
    }
}

/// The common body of `get_failed` and `get_acked` (`acked` selects): the ranks
/// into the caller's array (at most `incount`), and their number.
/// Takes its C arguments as they came (the C contract of its callers).
fn rank_list(
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
    let (inst, g) = admit_local(call, group)?;
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
    // `out` holds `incount` entries: the first ones get the ranks.
    let n = incount.min(ranks.len());
    try_slice_mut!(out, n)?.copy_from_slice(&ranks[..n]);
    set(opt_mut!(outcount), ranks.len());
    Ok(())
}

export! {
    /// `pmixrs_ft_get_failed`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// `group` a readable C string or NULL; `ranks` NULL or `incount` writable
    /// entries; `outcount` writable or NULL.
    fn pmixrs_ft_get_failed(
        group: *const c_char,
        ranks: *mut pmix_rank_t,
        incount: usize,
        outcount: *mut usize,
    ) -> pmix_status_t {
        rank_list(false, group, ranks, incount, outcount)
    }
}

export! {
    /// `pmixrs_ft_ack_failed`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// `group` a readable C string or NULL; `acked` writable or NULL.
    fn pmixrs_ft_ack_failed(
        group: *const c_char,
        n: usize,
        acked: *mut usize,
    ) -> pmix_status_t {
        let (inst, g) = admit_local("pmixrs_ft_ack_failed", group)?;
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let a = inst.ft_ack_failed(g, n).map_err(status)?;
        set(opt_mut!(acked), a as usize);
        Ok(())
    }
}

export! {
    /// `pmixrs_ft_get_acked`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// As [`pmixrs_ft_get_failed`].
    fn pmixrs_ft_get_acked(
        group: *const c_char,
        ranks: *mut pmix_rank_t,
        incount: usize,
        outcount: *mut usize,
    ) -> pmix_status_t {
        rank_list(true, group, ranks, incount, outcount)
    }
}

export! {
    /// `pmixrs_ft_revoke`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// `group` a readable C string or NULL.
    fn pmixrs_ft_revoke(group: *const c_char) -> pmix_status_t {
        let (inst, g) = admit_local("pmixrs_ft_revoke", group)?;
        inst.ft_revoke(g).map(|_| ()).map_err(status)
    }
}

export! {
    /// `pmixrs_ft_is_revoked`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// `group` a readable C string or NULL; `revoked` writable or NULL.
    fn pmixrs_ft_is_revoked(
        group: *const c_char,
        revoked: *mut c_int,
    ) -> pmix_status_t {
        let (inst, g) = admit_local("pmixrs_ft_is_revoked", group)?;
        not_null(revoked)?;
        let r = inst.ft_is_revoked(g).map_err(status)?;
        set(opt_mut!(revoked), c_int::from(r));
        Ok(())
    }
}
