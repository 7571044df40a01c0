//! `PMIx_Init`, `PMIx_Finalize`, `PMIx_Initialized` and `PMIx_Progress_thread_stop`;
//! the init both this and `PMIx_tool_init` (`crate::tool`) run.

use std::ffi::c_int;

use pmix::{Mode, Pmix, PmixError, Role, global};

use crate::boundary::{Res, export, opt_mut, try_slice};
use crate::data::info::init_options;
use crate::types::{pmix_info_t, pmix_proc_t};

/// `PMIX_ERR_WOULD_BLOCK` (with its diagnostic) for a blocking call made on `inst`'s
/// progress thread; otherwise nothing.
pub(crate) fn refuse_on_progress_thread(inst: &Pmix, call: &'static str) -> Res {
    if inst.on_progress_thread() {
        inst.admit(call, Mode::Blocking).map_err(|e| e.status())?;
    }
    Ok(())
}

/// Shared body of the two inits (`PMIx_Init`, `PMIx_tool_init`): C's `proc_` and
/// `info` array (the C contract of [`PMIx_Init`]).
pub(crate) fn init(
    role: Role,
    call: &'static str,
    proc_: *mut pmix_proc_t,
    info: *const pmix_info_t,
    ninfo: usize,
) -> Res {
    if let Ok(inst) = global::get() {
        refuse_on_progress_thread(&inst, call)?;
    }
    let infos = try_slice!(info, ninfo)?;
    let mut options = init_options(infos)?;
    // The model declarations, raised as PMIX_MODEL_DECLARED once initialised.
    let model: Vec<pmix_info_t> = infos
        .iter()
        .filter(|i| crate::data::info::key(i).is_ok_and(pmix::InitOptions::is_model_key))
        .copied()
        .collect();
    options.model = crate::data::convert::infos_from_c(&model)?;
    let inst = global::init(role, options, call).map_err(|e| e.status())?;
    if let Some(p) = opt_mut!(proc_) {
        let id = inst.proc_id();
        crate::boundary::copy_c_str(&mut p.nspace, id.nspace.as_bytes());
        p.rank = id.rank;
    }
    Ok(())
}

export! {
    /// `PMIx_Init`: initialises the library as a client (connected to the server the
    /// environment names, else a singleton), or adds a reference; fills `proc_` when not
    /// NULL.
    ///
    /// # Errors
    /// `PMIX_ERR_WOULD_BLOCK` on the progress thread; `PMIX_ERR_BAD_PARAM` (`ninfo > 0`
    /// with NULL `info`, an `ninfo` beyond any array (`ninfo × sizeof(pmix_info_t) >
    /// isize::MAX`), a malformed info, a bad `PMIX_HOSTNAME`);
    /// `PMIX_ERR_NOT_SUPPORTED` (an unknown key flagged `PMIX_INFO_REQD`); `PMIX_ERROR`
    /// (no progress thread could be started, or an internal panic).
    ///
    /// # C contract
    /// `proc_` is NULL or writable; `info` is NULL or points to `ninfo` readable elements
    /// whose string values are NULL or readable up to their NUL (or 4097 bytes).
    fn PMIx_Init(
        proc_: *mut pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        init(Role::Client, "PMIx_Init", proc_, info, ninfo)
    }
}

export! {
    /// `PMIx_Finalize`: drops one init reference; the last refuses new requests at once,
    /// then returns when the progress thread has run every accepted callback and stopped.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT` (not initialised; if the last finalize is under way on another
    /// thread, once its callbacks have all run), `PMIX_ERR_WOULD_BLOCK` (on the progress
    /// thread),
    /// then `PMIX_ERR_BAD_PARAM` / `PMIX_ERR_NOT_SUPPORTED` for `info` as [`PMIx_Init`].
    ///
    /// # C contract
    /// `info` is NULL or points to `ninfo` readable elements (string values as for
    /// [`PMIx_Init`]).
    fn PMIx_Finalize(info: *const pmix_info_t, ninfo: usize) -> pmix_status_t {
        // INIT first: before init, a malformed info does not matter. When the last
        // finalize is still running its callbacks on another thread, wait for it, so
        // that no callback runs after this returns either.
        let inst = global::get().map_err(|e| {
            global::wait_for_ending();
            e.status()
        })?;
        refuse_on_progress_thread(&inst, "PMIx_Finalize")?;
        init_options(try_slice!(info, ninfo)?)?;
        global::finalize("PMIx_Finalize").map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_Initialized`: 1 between init and the last finalize, else 0.
    fn PMIx_Initialized() -> c_int [on_panic: 0] {
        c_int::from(global::is_initialized())
    }
}

export! {
    /// `PMIx_Progress_thread_stop`: refuses new requests at once, then returns when the
    /// progress thread has run every accepted callback and stopped, also when a stop or
    /// the last finalize is already under way on another thread. `info` is ignored. Before
    /// init: nothing happens; from a callback: the `PMIX_ERR_WOULD_BLOCK` diagnostic, and
    /// nothing happens.
    fn PMIx_Progress_thread_stop(_info: *const pmix_info_t, _ninfo: usize) {
        // The void signature has no way to report INIT or WOULD_BLOCK beyond the
        // diagnostic the runtime prints.
        let _ = global::stop_progress("PMIx_Progress_thread_stop");
    }
}
