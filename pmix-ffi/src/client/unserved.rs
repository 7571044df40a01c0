//! The calls no server of ours (nor Open MPI 4.1's `mpirun`) serves: allocation
//! requests, credentials and fabric registration. Each answers what libpmix2 4.2.2
//! answers against the same servers (`tests/c/unserved.c` runs both libraries under
//! `pmix-run` and `mpirun`): `PMIX_ERR_NOT_SUPPORTED` for allocations, credentials and
//! fabric updates; a fabric registration and deregistration succeed with nothing known
//! of the fabric (no infos), as libpmix2's do. The `_nb` forms give the same status to
//! their callback on the progress thread; `PMIx_Fabric_deregister_nb` is done at once
//! (`PMIX_OPERATION_SUCCEEDED`, no callback), as libpmix2's is.
//!
//! Where libpmix2 differs, by choice: a NULL fabric or result pointer is
//! `PMIX_ERR_BAD_PARAM` here (libpmix2 succeeds or crashes), and
//! `PMIx_Fabric_update_nb` reports `PMIX_ERR_NOT_SUPPORTED` like the blocking form
//! (libpmix2's callback says success while its blocking form says not supported).

use std::ffi::c_void;

use pmix::{Mode, PmixError};
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, CbData, Res, call_op, export, not_null, try_mut};
use crate::data::convert::{deliver_infos, try_infos};
use crate::types::*;

/// The instance, admitted for `call` in `mode`.
fn admitted(call: &'static str, mode: Mode) -> Result<pmix::Pmix, Status> {
    crate::boundary::admitted(call, mode)
}

/// Hands `status` to `deliver` on the progress thread.
///
/// # Errors
/// As `Pmix::post` (`PMIX_ERR_NOT_AVAILABLE` once a stop has begun).
fn later(inst: &pmix::Pmix, status: Status, deliver: impl FnOnce(Status) + Send + 'static) -> Res {
    inst.post(move || deliver(status)).map_err(|e| e.status())
}

export! {
    /// `PMIx_Allocation_request`: no server of ours allocates resources.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (NULL `results` or
    /// `nresults`, a count with a NULL array, a bad info); otherwise
    /// `PMIX_ERR_NOT_SUPPORTED` (`*results` NULL, `*nresults` 0).
    ///
    /// # C contract
    /// `info` points to `ninfo` readable infos (or is NULL with a zero count);
    /// `results` and `nresults` are NULL or writable.
    fn PMIx_Allocation_request(
        directive: u8,
        info: *mut pmix_info_t,
        ninfo: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize,
    ) -> pmix_status_t {
        let _ = directive;
        admitted("PMIx_Allocation_request", Mode::Blocking)?;
        let (results, nresults) = (try_mut!(results)?, try_mut!(nresults)?);
        *results = std::ptr::null_mut();
        *nresults = 0;
        try_infos!(info, ninfo)?;
        Err(Status::ERR_NOT_SUPPORTED)
    }
}

export! {
    /// `PMIx_Allocation_request_nb`: as [`PMIx_Allocation_request`]; `cbfunc` gets
    /// `PMIX_ERR_NOT_SUPPORTED` and no infos on the progress thread.
    ///
    /// # Errors
    /// Returned (and `cbfunc` never runs): `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`,
    /// `PMIX_ERR_BAD_PARAM` (NULL `cbfunc`, a bad info).
    ///
    /// # C contract
    /// `info` as for [`PMIx_Allocation_request`]; `cbfunc` must be safe to call from
    /// another thread with `cbdata`.
    fn PMIx_Allocation_request_nb(
        directive: u8,
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = directive;
        let inst = admitted("PMIx_Allocation_request_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        try_infos!(info, ninfo)?;
        let cbdata = CbData(cbdata);
        later(&inst, Status::ERR_NOT_SUPPORTED, move |s| {
            deliver_infos(cb, &cbdata, Err(s));
        })
    }
}

export! {
    /// `PMIx_Get_credential`: no security plugin of ours issues credentials.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (NULL
    /// `credential`, a bad info); otherwise `PMIX_ERR_NOT_SUPPORTED` (`credential`
    /// left empty).
    ///
    /// # C contract
    /// `info` as for [`PMIx_Allocation_request`]; `credential` is NULL or writable.
    fn PMIx_Get_credential(
        info: *const pmix_info_t,
        ninfo: usize,
        credential: *mut pmix_byte_object_t,
    ) -> pmix_status_t {
        admitted("PMIx_Get_credential", Mode::Blocking)?;
        let c = try_mut!(credential)?;
        c.bytes = std::ptr::null_mut();
        c.size = 0;
        try_infos!(info, ninfo)?;
        Err(Status::ERR_NOT_SUPPORTED)
    }
}

export! {
    /// `PMIx_Get_credential_nb`: as [`PMIx_Get_credential`]; `cbfunc` gets
    /// `PMIX_ERR_NOT_SUPPORTED`, no credential and no infos on the progress thread.
    ///
    /// # Errors
    /// Returned (and `cbfunc` never runs): as [`PMIx_Allocation_request_nb`].
    ///
    /// # C contract
    /// As [`PMIx_Allocation_request_nb`].
    fn PMIx_Get_credential_nb(
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_credential_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Get_credential_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        try_infos!(info, ninfo)?;
        let cbdata = CbData(cbdata);
        later(&inst, Status::ERR_NOT_SUPPORTED, move |s| {
            // SAFETY: C gave `cb` with `cbdata` for this call's one outcome (the C
            // contract above): a status, no credential, no infos.
            unsafe { cb(s.0, std::ptr::null_mut(), std::ptr::null_mut(), 0, cbdata.ptr()) };
        })
    }
}

export! {
    /// `PMIx_Validate_credential`: no security plugin of ours validates credentials.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (NULL `cred`,
    /// `results` or `nresults`, a bad info); otherwise `PMIX_ERR_NOT_SUPPORTED`
    /// (`*results` and `*nresults` untouched, as libpmix2).
    ///
    /// # C contract
    /// `cred` is NULL or readable; `info`, `results`, `nresults` as for
    /// [`PMIx_Allocation_request`].
    fn PMIx_Validate_credential(
        cred: *const pmix_byte_object_t,
        info: *const pmix_info_t,
        ninfo: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize,
    ) -> pmix_status_t {
        admitted("PMIx_Validate_credential", Mode::Blocking)?;
        not_null(cred)?;
        // Left as they are on error, as libpmix2 leaves them.
        not_null(results)?;
        not_null(nresults)?;
        try_infos!(info, ninfo)?;
        Err(Status::ERR_NOT_SUPPORTED)
    }
}

export! {
    /// `PMIx_Validate_credential_nb`: as [`PMIx_Validate_credential`]; `cbfunc` gets
    /// `PMIX_ERR_NOT_SUPPORTED` and no infos on the progress thread.
    ///
    /// # Errors
    /// Returned (and `cbfunc` never runs): as [`PMIx_Allocation_request_nb`], and
    /// `PMIX_ERR_BAD_PARAM` for a NULL `cred`.
    ///
    /// # C contract
    /// `cred` is NULL or readable; the rest as [`PMIx_Allocation_request_nb`].
    fn PMIx_Validate_credential_nb(
        cred: *const pmix_byte_object_t,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_validation_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Validate_credential_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        not_null(cred)?;
        try_infos!(info, ninfo)?;
        let cbdata = CbData(cbdata);
        later(&inst, Status::ERR_NOT_SUPPORTED, move |s| {
            // SAFETY: C gave `cb` with `cbdata` for this call's one outcome (the C
            // contract above): a status and no infos.
            unsafe { cb(s.0, std::ptr::null_mut(), 0, cbdata.ptr()) };
        })
    }
}

export! {
    /// `PMIx_Fabric_register`: registers `fabric`; nothing is known of any fabric here,
    /// so its infos stay empty (as libpmix2's under the same servers).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (NULL `fabric`, a
    /// bad directive).
    ///
    /// # C contract
    /// `fabric` is NULL or writable; `directives` points to `ndirs` readable infos (or
    /// is NULL with a zero count).
    fn PMIx_Fabric_register(
        fabric_: *mut pmix_fabric_t,
        directives: *const pmix_info_t,
        ndirs: usize,
    ) -> pmix_status_t {
        admitted("PMIx_Fabric_register", Mode::Blocking)?;
        let f = try_mut!(fabric_)?;
        try_infos!(directives, ndirs)?;
        f.info = std::ptr::null_mut();
        f.ninfo = 0;
        Ok(())
    }
}

export! {
    /// `PMIx_Fabric_register_nb`: as [`PMIx_Fabric_register`]; `cbfunc` gets
    /// `PMIX_SUCCESS` on the progress thread.
    ///
    /// # Errors
    /// Returned (and `cbfunc` never runs): `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`,
    /// `PMIX_ERR_BAD_PARAM` (NULL `fabric` or `cbfunc`, a bad directive).
    ///
    /// # C contract
    /// As [`PMIx_Fabric_register`]; `cbfunc` must be safe to call from another thread
    /// with `cbdata`.
    fn PMIx_Fabric_register_nb(
        fabric_: *mut pmix_fabric_t,
        directives: *const pmix_info_t,
        ndirs: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Fabric_register_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        let f = try_mut!(fabric_)?;
        try_infos!(directives, ndirs)?;
        f.info = std::ptr::null_mut();
        f.ninfo = 0;
        let cbdata = CbData(cbdata);
        later(&inst, Status::SUCCESS, move |s| call_op(cb, s, &cbdata))
    }
}

export! {
    /// `PMIx_Fabric_update`: nothing is known of any fabric here to update.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (NULL `fabric`);
    /// otherwise `PMIX_ERR_NOT_SUPPORTED`.
    ///
    /// # C contract
    /// `fabric` is NULL or writable.
    fn PMIx_Fabric_update(fabric_: *mut pmix_fabric_t) -> pmix_status_t {
        admitted("PMIx_Fabric_update", Mode::Blocking)?;
        try_mut!(fabric_)?;
        Err(Status::ERR_NOT_SUPPORTED)
    }
}

export! {
    /// `PMIx_Fabric_update_nb`: as [`PMIx_Fabric_update`]; `cbfunc` gets
    /// `PMIX_ERR_NOT_SUPPORTED` on the progress thread.
    ///
    /// # Errors
    /// Returned (and `cbfunc` never runs): `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`,
    /// `PMIX_ERR_BAD_PARAM` (NULL `fabric` or `cbfunc`).
    ///
    /// # C contract
    /// As [`PMIx_Fabric_register_nb`].
    fn PMIx_Fabric_update_nb(
        fabric_: *mut pmix_fabric_t,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Fabric_update_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        try_mut!(fabric_)?;
        let cbdata = CbData(cbdata);
        later(&inst, Status::ERR_NOT_SUPPORTED, move |s| call_op(cb, s, &cbdata))
    }
}

export! {
    /// `PMIx_Fabric_deregister`: forgets the registration (its infos, none here).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (NULL `fabric`).
    ///
    /// # C contract
    /// `fabric` is NULL or writable.
    fn PMIx_Fabric_deregister(fabric_: *mut pmix_fabric_t) -> pmix_status_t {
        admitted("PMIx_Fabric_deregister", Mode::Blocking)?;
        let f = try_mut!(fabric_)?;
        f.info = std::ptr::null_mut();
        f.ninfo = 0;
        Ok(())
    }
}

export! {
    /// `PMIx_Fabric_deregister_nb`: as [`PMIx_Fabric_deregister`], done at once:
    /// `PMIX_OPERATION_SUCCEEDED`, and `cbfunc` does not run (as libpmix2).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`, `PMIX_ERR_BAD_PARAM` (NULL `fabric`).
    ///
    /// # C contract
    /// `fabric` is NULL or writable.
    fn PMIx_Fabric_deregister_nb(
        fabric_: *mut pmix_fabric_t,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (cbfunc, cbdata);
        admitted("PMIx_Fabric_deregister_nb", Mode::NonBlocking)?;
        let f = try_mut!(fabric_)?;
        f.info = std::ptr::null_mut();
        f.ninfo = 0;
        Err(Status::OPERATION_SUCCEEDED)
    }
}
