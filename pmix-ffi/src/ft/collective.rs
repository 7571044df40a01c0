//! The collective calls of `pmix_ft.h` (every live member calls them, in the same
//! order; `PMIX_ERR_WOULD_BLOCK` at once on the progress thread):
//! `pmixrs_ft_validate_global`, `_validate_global_count`, `_agree` and `_shrink`.

use std::ffi::{c_char, c_int};

use pmix_core::ftstate::AgreeError;

use super::{admit_collective, c_count, mask, set, status, validate};
use crate::boundary::{export, not_null, opt_mut, try_mut, try_str};
use crate::types::*;

export! {
    /// `pmixrs_ft_validate_global`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// As [`pmixrs_ft_validate_local`](super::local::pmixrs_ft_validate_local).
    fn pmixrs_ft_validate_global(
        group: *const c_char,
        num_failed: *mut c_int,
        new_failures: *mut c_int,
    ) -> pmix_status_t {
        validate(true, group, num_failed, new_failures)
    }
}

export! {
    /// `pmixrs_ft_validate_global_count`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// `group` as [`pmixrs_ft_validate_local`](super::local::pmixrs_ft_validate_local); `count` NULL or writable.
    fn pmixrs_ft_validate_global_count(
        group: *const c_char,
        count_type: c_int,
        count: *mut c_int,
    ) -> pmix_status_t {
        let (inst, g) = admit_collective("pmixrs_ft_validate_global_count", group)?;
        let m = mask(count_type)?;
        not_null(count)?;
        let n = inst.ft_validate_global_count(g, m).map_err(status)?;
        set(opt_mut!(count), c_count(n));
        Ok(())
    }
}

export! {
    /// `pmixrs_ft_agree`: see `pmix_ft.h`.
    ///
    /// # C contract
    /// `group` a readable C string or NULL; `flag` NULL or readable and writable.
    fn pmixrs_ft_agree(group: *const c_char, flag: *mut u32) -> pmix_status_t {
        let (inst, g) = admit_collective("pmixrs_ft_agree", group)?;
        let f = try_mut!(flag)?;
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
    /// # C contract
    /// `group` and `new_group` readable C strings or NULL; the outputs writable or
    /// NULL.
    fn pmixrs_ft_shrink(
        group: *const c_char,
        new_group: *const c_char,
        new_rank: *mut c_int,
        new_size: *mut c_int,
    ) -> pmix_status_t {
        let (inst, g) = admit_collective("pmixrs_ft_shrink", group)?;
        let ng = try_str!(new_group, PMIX_MAX_NSLEN)?;
        let s = inst.ft_shrink(g, ng).map_err(status)?;

        set(opt_mut!(new_rank), c_count(s.rank));
        set(opt_mut!(new_size), c_count(s.size));
        Ok(())
    }
}
