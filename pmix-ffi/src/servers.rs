//! A tool's server connections (`PMIx_tool_get_servers`, `_set_server`,
//! `_disconnect`, `_attach_to_server`, `_connect_to_server`) and the forwarding of
//! standard I/O (`PMIx_IOF_pull`, `_deregister`, `_push`).
//!
//! A process of this library holds one server connection, from init to finalize:
//! `PMIx_tool_get_servers` names it; switching to or attaching to another server is
//! `PMIX_ERR_UNREACH`, as libpmix2 answers a client under the same servers
//! (`tests/c/servers.c` compares); disconnecting from a server this process is not
//! connected to is `PMIX_ERR_NOT_FOUND`, and from its own server
//! `PMIX_ERR_NOT_SUPPORTED` (it stays until finalize). No server of ours forwards
//! I/O: pull and deregister are `PMIX_ERR_NOT_SUPPORTED` as libpmix2's; a push of
//! nothing is `PMIX_OPERATION_SUCCEEDED`, as libpmix2's, and a push of bytes is
//! `PMIX_ERR_NOT_SUPPORTED` (libpmix2 waits for an answer these servers never give).

use std::ffi::c_void;

use pmix::Mode;
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, c_mut, c_ref, c_slice, export, not_null};
use crate::convert::{infos_to_wire, proc_nspace};
use crate::types::*;

/// The instance, admitted for `call` (blocking).
fn admitted(call: &'static str) -> Result<pmix::Pmix, Status> {
    crate::boundary::admitted(call, Mode::Blocking)
}

/// The server `inst` is connected to, as a C process.
fn my_server(inst: &pmix::Pmix) -> Option<pmix_proc_t> {
    let s = inst.client()?.server();
    // SAFETY: all-zero bytes are a valid process (empty namespace, rank 0).
    let mut p: pmix_proc_t = unsafe { std::mem::zeroed() };
    crate::boundary::copy_c_str(&mut p.nspace, s.nspace.as_bytes());
    p.rank = s.rank.0;
    Some(p)
}

/// Whether `p` names the server `inst` is connected to.
fn is_my_server(inst: &pmix::Pmix, p: &pmix_proc_t) -> Result<bool, Status> {
    let ns = proc_nspace(p)?;
    Ok(my_server(inst)
        .is_some_and(|m| proc_nspace(&m).is_ok_and(|mine| mine == ns) && m.rank == p.rank))
}

export! {
    /// `PMIx_tool_get_servers`: the server this process is connected to (a `malloc`ed
    /// array of one the caller frees), or none (NULL, 0) when it is not connected.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (NULL `servers` or
    /// `nservers`); `PMIX_ERR_NOMEM`.
    ///
    /// # Safety
    /// `servers` and `nservers` are NULL or writable.
    unsafe fn PMIx_tool_get_servers(
        servers: *mut *mut pmix_proc_t,
        nservers: *mut usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_tool_get_servers")?;
        // SAFETY: non-NULL outputs are writable (caller's contract).
        let (out, n) = unsafe { (c_mut(servers)?, c_mut(nservers)?) };
        *out = std::ptr::null_mut();
        *n = 0;
        if let Some(p) = my_server(&inst) {
            // SAFETY: checked for NULL below.
            let arr = unsafe { libc::calloc(1, size_of::<pmix_proc_t>()) }.cast::<pmix_proc_t>();
            if arr.is_null() {
                return Err(Status::ERR_NOMEM);
            }
            // SAFETY: `arr` has room for one process.
            unsafe { arr.write(p) };
            *out = arr;
            *n = 1;
        }
        Ok(())
    }
}

export! {
    /// `PMIx_tool_set_server`: this process keeps its one connection: switching is
    /// `PMIX_ERR_UNREACH` (as libpmix2 answers a client).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (NULL `server`, a
    /// bad info); otherwise `PMIX_ERR_UNREACH`.
    ///
    /// # Safety
    /// `server` is NULL or readable; `info` points to `ninfo` readable infos (or is NULL
    /// with a zero count).
    unsafe fn PMIx_tool_set_server(
        server: *const pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        admitted("PMIx_tool_set_server")?;
        not_null(server)?;
        // SAFETY: forwarded from the caller.
        unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        Err(Status::ERR_UNREACH)
    }
}

export! {
    /// `PMIx_tool_disconnect`: a server this process is not connected to is
    /// `PMIX_ERR_NOT_FOUND`; its own connection stays until finalize
    /// (`PMIX_ERR_NOT_SUPPORTED`).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; `PMIX_ERR_BAD_PARAM` (NULL `server`, a
    /// namespace that is not UTF-8); as above.
    ///
    /// # Safety
    /// `server` is NULL or readable.
    unsafe fn PMIx_tool_disconnect(server: *const pmix_proc_t) -> pmix_status_t {
        let inst = admitted("PMIx_tool_disconnect")?;
        // SAFETY: a non-NULL `server` is readable (caller's contract).
        let s = unsafe { c_ref(server) }?;
        if is_my_server(&inst, s)? {
            Err(Status::ERR_NOT_SUPPORTED)
        } else {
            Err(Status::ERR_NOT_FOUND)
        }
    }
}

export! {
    /// `PMIx_tool_attach_to_server`: this process holds one connection: attaching to
    /// a server (named by `info`) is `PMIX_ERR_UNREACH`; with no `info` naming one it
    /// is `PMIX_ERR_BAD_PARAM` (as libpmix2).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; as above.
    ///
    /// # Safety
    /// `myproc` and `server` are NULL or writable; `info` as for
    /// [`PMIx_tool_set_server`].
    unsafe fn PMIx_tool_attach_to_server(
        myproc: *mut pmix_proc_t,
        server: *mut pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        let _ = (myproc, server);
        admitted("PMIx_tool_attach_to_server")?;
        // SAFETY: forwarded from the caller.
        let infos = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        if infos.is_empty() {
            return Err(BAD_PARAM);
        }
        Err(Status::ERR_UNREACH)
    }
}

export! {
    /// `PMIx_tool_connect_to_server` (deprecated): as [`PMIx_tool_attach_to_server`].
    ///
    /// # Errors
    /// As [`PMIx_tool_attach_to_server`].
    ///
    /// # Safety
    /// As [`PMIx_tool_attach_to_server`].
    unsafe fn PMIx_tool_connect_to_server(
        proc_: *mut pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        let _ = proc_;
        admitted("PMIx_tool_connect_to_server")?;
        // SAFETY: forwarded from the caller.
        let infos = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        if infos.is_empty() {
            return Err(BAD_PARAM);
        }
        Err(Status::ERR_UNREACH)
    }
}

export! {
    /// `PMIx_IOF_pull`: no server of ours forwards output.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; otherwise `PMIX_ERR_NOT_SUPPORTED`
    /// (`regcbfunc` and `cbfunc` never run).
    ///
    /// # Safety
    /// Nothing is read.
    unsafe fn PMIx_IOF_pull(
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
    /// `PMIx_IOF_deregister`: nothing was pulled (see [`PMIx_IOF_pull`]).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`; otherwise `PMIX_ERR_NOT_SUPPORTED`.
    ///
    /// # Safety
    /// Nothing is read.
    unsafe fn PMIx_IOF_deregister(
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
    /// # Safety
    /// `bo` is NULL or readable.
    unsafe fn PMIx_IOF_push(
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
        // SAFETY: a non-NULL `bo` is readable (caller's contract).
        match unsafe { bo.as_ref() } {
            None => Err(Status::OPERATION_SUCCEEDED),
            Some(b) if b.size == 0 => Err(Status::OPERATION_SUCCEEDED),
            Some(_) => Err(Status::ERR_NOT_SUPPORTED),
        }
    }
}
