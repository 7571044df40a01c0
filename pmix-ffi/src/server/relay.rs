//! What the host relays to the server: another node's request for a local client's
//! data (`PMIx_server_dmodex_request`) and a process's output for the tools that
//! pulled it (`PMIx_server_IOF_deliver`).

use std::ffi::c_void;

use pmix_core::Status;

use super::complete;
use super::init::running;
use super::trace::{HOST_TRACE_VAR, trace_line};
use crate::boundary::{BAD_PARAM, CbData, export, try_ref};
use crate::data::convert::{proc_nspace, try_infos};
use crate::types::{
    pmix_byte_object_t, pmix_dmodex_response_fn_t, pmix_info_t, pmix_op_cbfunc_t, pmix_proc_t,
};

export! {
    /// `PMIx_server_dmodex_request`: another node asks, through the host, for a
    /// local client's data. `cbfunc` gets it (a blob the asking node's server reads;
    /// the bytes are valid while `cbfunc` runs) once the client committed, or
    /// `PMIX_ERR_NOT_FOUND` (not a local rank, or gone) or `PMIX_ERR_TIMEOUT`
    /// (nothing committed within 2 s), on the progress thread.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (NULL `proc_` or `cbfunc`, a bad
    /// namespace); `PMIX_ERR_UNREACH` when the server stopped (`cbfunc` is then not
    /// called).
    ///
    /// # C contract
    /// `proc_` is NULL or points to a readable `pmix_proc_t`; `cbfunc` must be safe to
    /// call from another thread with `cbdata`.
    fn PMIx_server_dmodex_request(
        proc_: *const pmix_proc_t,
        cbfunc: pmix_dmodex_response_fn_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let (server, _) = running()?;
        let p = try_ref!(proc_)?;
        let nspace = proc_nspace(p)?;
        let cbfunc = cbfunc.ok_or(BAD_PARAM)?;
        if std::env::var_os(HOST_TRACE_VAR).is_some() {
            trace_line(format!("dmodex request for {nspace}:{}", p.rank));
        }
        let cbdata = CbData(cbdata);
        let answer = move |r: Result<Vec<u8>, Status>| {
            let (status, mut data) = match r {
                Ok(d) => (Status::SUCCESS, d),
                Err(s) => (s, Vec::new()),
            };
            let p = if data.is_empty() {
                std::ptr::null_mut()
            } else {
                data.as_mut_ptr().cast()
            };
            // SAFETY: C gave `cbfunc` with `cbdata` to be called once with the answer, from
            // the library's threads (the C contract); the server calls `answer` once, and
            // `p` is NULL with 0 bytes or `data`'s `data.len()` bytes, alive (and unused
            // by anything else) until `cbfunc` returns.
            unsafe { cbfunc(status.0, p, data.len(), cbdata.ptr()) };
        };
        server
            .dmodex_request(nspace, p.rank, answer)
            .map_err(|_| Status::ERR_UNREACH)
    }
}

export! {
    /// `PMIx_server_IOF_deliver`: output of a process for the tools that pulled it.
    /// No tool can pull from our server (it refuses IOF pull requests), so the
    /// delivery reaches nobody and completes, as OpenPMIx's does with no subscriber.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (NULL `source` or `bo`, a bad info).
    ///
    /// # C contract
    /// `source` and `bo` are NULL or readable; `info` points to `ninfo` readable
    /// infos (or is NULL with 0); `cbfunc` must be safe to call from another thread with
    /// `cbdata`.
    fn PMIx_server_IOF_deliver(
        source: *const pmix_proc_t,
        channel: u16,
        bo: *const pmix_byte_object_t,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = channel;
        let (_, inst) = running()?;
        try_ref!(source)?;
        try_ref!(bo)?;
        try_infos!(info, ninfo)?;
        complete(&inst, Ok(()), cbfunc, cbdata)
    }
}
