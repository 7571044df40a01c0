//! The forwarding of standard I/O (`PMIx_IOF_pull`, `_deregister`, `_push`).
//!
//! No server of ours forwards I/O: pull and deregister are `PMIX_ERR_NOT_SUPPORTED` as
//! libpmix2's; a push of nothing is `PMIX_OPERATION_SUCCEEDED`, as libpmix2's, and a
//! push of bytes is `PMIX_ERR_NOT_SUPPORTED` (libpmix2 waits for an answer these servers
//! never give).

use std::ffi::c_void;

use pmix::Mode;
use pmix_core::Status;

use crate::boundary::{export, opt_ref};
use crate::types::*;

/// The instance, admitted for `call` (blocking).
fn admitted(call: &'static str) -> Result<pmix::Pmix, Status> {
    crate::boundary::admitted(call, Mode::Blocking)
}

export! {
    /// `PMIx_IOF_pull`: no server of ours forwards output (no argument is read).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; otherwise `PMIX_ERR_NOT_SUPPORTED`
    /// (`regcbfunc` and `cbfunc` never run).
    fn PMIx_IOF_pull(
        procs: *const pmix_proc_t,
        nprocs: usize,
        directives: *const pmix_info_t,
        ndirs: usize,
        channel: u16,
        cbfunc: pmix_iof_cbfunc_t,
        regcbfunc: pmix_hdlr_reg_cbfunc_t,
        regcbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (procs, nprocs, directives, ndirs, channel, cbfunc, regcbfunc, regcbdata);
        admitted("PMIx_IOF_pull")?;
        Err(Status::ERR_NOT_SUPPORTED)
    }
}

export! {
    /// `PMIx_IOF_deregister`: nothing was pulled (see [`PMIx_IOF_pull`]; no argument is
    /// read).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; otherwise `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_IOF_deregister(
        iofhdlr: usize,
        directives: *const pmix_info_t,
        ndirs: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (iofhdlr, directives, ndirs, cbfunc, cbdata);
        admitted("PMIx_IOF_deregister")?;
        Err(Status::ERR_NOT_SUPPORTED)
    }
}

export! {
    /// `PMIx_IOF_push`: no server of ours forwards input: nothing to push (NULL or
    /// empty `bo`) is `PMIX_OPERATION_SUCCEEDED`, bytes are `PMIX_ERR_NOT_SUPPORTED`;
    /// `cbfunc` never runs.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; as above.
    ///
    /// # C contract
    /// `bo` is NULL or readable (nothing else is read).
    fn PMIx_IOF_push(
        targets: *const pmix_proc_t,
        ntargets: usize,
        bo: *mut pmix_byte_object_t,
        directives: *const pmix_info_t,
        ndirs: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (targets, ntargets, directives, ndirs, cbfunc, cbdata);
        admitted("PMIx_IOF_push")?;
        match opt_ref!(bo) {
            None => Err(Status::OPERATION_SUCCEEDED),
            Some(b) if b.size == 0 => Err(Status::OPERATION_SUCCEEDED),
            Some(_) => Err(Status::ERR_NOT_SUPPORTED),
        }
    }
}
