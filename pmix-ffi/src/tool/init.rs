//! `PMIx_tool_init` and `PMIx_tool_finalize`: the library as a tool (`pmix_tool.h`).

use pmix::{PmixError, Role, global};

use crate::boundary::export;
use crate::client::init::init;
use crate::types::{pmix_info_t, pmix_proc_t};

export! {
    /// `PMIx_tool_init`: initialises the library as a tool, connected to the server
    /// `PMIX_SERVER_URI` (info) or a `PMIX_SERVER_URI*` variable names unless
    /// `PMIX_TOOL_DO_NOT_CONNECT` is given (`pmix_tool.h` says more).
    ///
    /// # Errors
    /// As [`PMIx_Init`](crate::client::init::PMIx_Init); `PMIX_ERR_BAD_PARAM` for a `PMIX_SERVER_URI` that is not a URI;
    /// `PMIX_ERR_UNREACH` when the server cannot be reached; the server's refusal
    /// (`PMIX_ERR_NOT_SUPPORTED` from Open MPI 4.1's mpirun).
    ///
    /// # C contract
    /// As [`PMIx_Init`](crate::client::init::PMIx_Init).
    fn PMIx_tool_init(
        proc_: *mut pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        init(Role::Tool, "PMIx_tool_init", proc_, info, ninfo)
    }
}

export! {
    /// `PMIx_tool_finalize`: as [`PMIx_Finalize`](crate::client::init::PMIx_Finalize).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`.
    fn PMIx_tool_finalize() -> pmix_status_t {
        global::finalize("PMIx_tool_finalize").map_err(|e| e.status())
    }
}
