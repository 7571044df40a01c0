//! A tool's server connections (`PMIx_tool_get_servers`, `_set_server`,
//! `_disconnect`, `_attach_to_server`, `_connect_to_server`).
//!
//! A process of this library holds one server connection, from init to finalize:
//! `PMIx_tool_get_servers` names it; switching to or attaching to another server is
//! `PMIX_ERR_UNREACH`, as libpmix2 answers a client under the same servers
//! (`tests/c/servers.c` compares); disconnecting from a server this process is not
//! connected to is `PMIX_ERR_NOT_FOUND`, and from its own server
//! `PMIX_ERR_NOT_SUPPORTED` (it stays until finalize).

use pmix::Mode;
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, export, not_null, try_mut, try_ref};
use crate::cmem::c_box;
use crate::data::convert::{proc_nspace, try_infos};
use crate::types::*;

/// The instance, admitted for `call` (blocking).
fn admitted(call: &'static str) -> Result<pmix::Pmix, Status> {
    crate::boundary::admitted(call, Mode::Blocking)
}

/// The server `inst` is connected to, as a C process.
fn my_server(inst: &pmix::Pmix) -> Option<pmix_proc_t> {
    let s = inst.client()?.server();
    let mut p = pmix_proc_t::EMPTY;
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
    /// # C contract
    /// `servers` and `nservers` are NULL or writable.
    fn PMIx_tool_get_servers(
        servers: *mut *mut pmix_proc_t,
        nservers: *mut usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_tool_get_servers")?;
        let (out, n) = (try_mut!(servers)?, try_mut!(nservers)?);
        *out = std::ptr::null_mut();
        *n = 0;
        if let Some(p) = my_server(&inst) {
            *out = c_box(p)?;
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
    /// # C contract
    /// `server` is NULL or readable; `info` points to `ninfo` readable infos (or is NULL
    /// with a zero count).
    fn PMIx_tool_set_server(
        server: *const pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        admitted("PMIx_tool_set_server")?;
        not_null(server)?;
        try_infos!(info, ninfo)?;
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
    /// # C contract
    /// `server` is NULL or readable.
    fn PMIx_tool_disconnect(server: *const pmix_proc_t) -> pmix_status_t {
        let inst = admitted("PMIx_tool_disconnect")?;
        let s = try_ref!(server)?;
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
    /// # C contract
    /// `info` as for [`PMIx_tool_set_server`] (`myproc` and `server` are not touched).
    fn PMIx_tool_attach_to_server(
        myproc: *mut pmix_proc_t,
        server: *mut pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        let _ = (myproc, server);
        admitted("PMIx_tool_attach_to_server")?;
        let infos = try_infos!(info, ninfo)?;
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
    /// # C contract
    /// As [`PMIx_tool_attach_to_server`].
    fn PMIx_tool_connect_to_server(
        proc_: *mut pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        let _ = proc_;
        admitted("PMIx_tool_connect_to_server")?;
        let infos = try_infos!(info, ninfo)?;
        if infos.is_empty() {
            return Err(BAD_PARAM);
        }
        Err(Status::ERR_UNREACH)
    }
}
