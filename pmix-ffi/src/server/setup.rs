//! Setting up a host's clients: `PMIx_server_setup_fork` (a client's environment),
//! `PMIx_server_setup_application` and `PMIx_server_setup_local_support`.

use std::ffi::{c_char, c_void};

use pmix::PmixError;
use pmix_core::Status;

use super::init::running;
use super::{complete, nspace_arg, strdup};
use crate::boundary::{BAD_PARAM, CbData, Res, export, opt_cstr, try_argv, try_mut, try_ref};
use crate::cmem::c_free;
use crate::data::convert::{proc_nspace, try_infos};
use crate::types::{pmix_info_t, pmix_op_cbfunc_t, pmix_proc_t, pmix_setup_application_cbfunc_t};

/// The most entries an environment array can have (no array of pointers holds more
/// than `isize::MAX` bytes): a bound that never refuses a real environment.
const MAX_ENV: usize = isize::MAX as usize / size_of::<*mut c_char>();

/// Sets `name=value` in the environment `*env` C gave: an entry `name=...` is replaced
/// (the old string freed), else the entry is appended (the array grown with `realloc`,
/// and `*env` set to it).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a NUL in `name` or `value`; `PMIX_ERR_NOMEM` (`*env` is
/// then what it was, or the same entries in a larger array).
///
/// # Safety
/// `*env` is NULL or a `malloc`ed array of `malloc`ed strings ending with NULL, which
/// nobody else uses during the call: this function frees and reallocates them.
unsafe fn set_env(env: &mut *mut *mut c_char, name: &str, value: &str) -> Res {
    let entry = format!("{name}={value}");
    if entry.contains('\0') {
        return Err(BAD_PARAM);
    }
    let prefix = format!("{name}=");
    // The entries before the NULL, read and let go of before the array is written.
    let (n, found) = {
        let entries = try_argv!(*env, MAX_ENV)?;
        let found = entries.iter().position(|&e| {
            opt_cstr!(e).is_some_and(|e| e.to_bytes().starts_with(prefix.as_bytes()))
        });
        (entries.len(), found)
    };
    if let Some(k) = found {
        let new = strdup(&entry)?;
        // SAFETY: `k < n`, so slot `k` is one of the array's entries: a `malloc`ed
        // string (this function's contract), freed once and replaced at once by `new`,
        // so nothing reads the freed string; no borrow of the array is alive.
        unsafe {
            let slot = (*env).add(k);
            c_free(*slot);
            *slot = new;
        }
        return Ok(());
    }
    let bytes = (n + 2) * size_of::<*mut c_char>();
    // SAFETY: `*env` is NULL or a `malloc`ed array (this function's contract), which
    // `realloc` may move: on success the old pointer is not used again (`*env` takes
    // the new one), on failure it is left as it was.
    let grown = unsafe { libc::realloc((*env).cast(), bytes) }.cast::<*mut c_char>();
    if grown.is_null() {
        return Err(Status::ERR_NOMEM);
    }
    // The `n` entries and the NULL after them, in room for `n + 2` pointers.
    *env = grown;
    let new = strdup(&entry)?;
    // SAFETY: `grown` holds room for `n + 2` pointers (just allocated); slots `n` and
    // `n + 1` are written: the new entry, then the NULL that ends the array.
    unsafe {
        grown.add(n).write(new);
        grown.add(n + 1).write(std::ptr::null_mut());
    }
    Ok(())
}

export! {
    /// `PMIx_server_setup_fork`: adds to `*env` what a client of either library needs
    /// to reach this server (`PMIX_NAMESPACE`, `PMIX_RANK`, the URI under every
    /// name, the security, store and buffer modes, the directories, the host name,
    /// `PMIX_VERSION`), replacing entries of the same name.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (NULL `proc_` or `env`, a bad
    /// namespace); `PMIX_ERR_NOMEM`.
    ///
    /// # Safety
    /// `proc_` is NULL or points to a readable `pmix_proc_t`; `env` is NULL or points to
    /// a pointer that is NULL or a `malloc`ed, NULL-terminated array of `malloc`ed
    /// strings, which the call may free and reallocate (replaced entries are freed, the
    /// array grows with `realloc`).
    unsafe fn PMIx_server_setup_fork(
        proc_: *const pmix_proc_t,
        env: *mut *mut *mut c_char,
    ) -> pmix_status_t {
        let (server, _) = running()?;
        let (p, env) = (try_ref!(proc_)?, try_mut!(env)?);
        let nspace = proc_nspace(p)?;
        for (k, v) in server.client_env(nspace, p.rank) {
            // SAFETY: `*env` is NULL or a malloc'ed, NULL-terminated array of malloc'ed
            // strings (this function's contract), and `set_env` leaves it one for the
            // next entry.
            unsafe { set_env(env, &k, &v) }?;
        }
        Ok(())
    }
}

export! {
    /// `PMIx_server_setup_application`: our clients need nothing set up per
    /// application: `cbfunc` gets `PMIX_SUCCESS` and no infos, on the progress
    /// thread.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (a bad `nspace` or info, NULL `cbfunc`).
    ///
    /// # C contract
    /// `nspace` is NULL or a string (read up to its NUL, within 256 bytes); `info`
    /// points to `ninfo` readable infos (or is NULL with 0); `cbfunc` must be safe to
    /// call from another thread with `cbdata`.
    fn PMIx_server_setup_application(
        nspace: *const c_char,
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_setup_application_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let (_, inst) = running()?;
        nspace_arg(nspace)?;
        try_infos!(info, ninfo)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        let data = CbData(cbdata);
        inst.post(move || {
            // SAFETY: C gave `cb` with `cbdata` to be called once with the outcome, from
            // the library's threads (the C contract); it is handed no infos (NULL, 0) and
            // no release function, so nothing it gets must outlive the call.
            unsafe {
                cb(
                    Status::SUCCESS.0,
                    std::ptr::null_mut(),
                    0,
                    data.ptr(),
                    None,
                    std::ptr::null_mut(),
                )
            };
        })
        .map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_server_setup_local_support`: nothing to set up on this node for our
    /// clients: completes (`cbfunc` with `PMIX_SUCCESS`, or
    /// `PMIX_OPERATION_SUCCEEDED` without one).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (a bad `nspace` or info).
    ///
    /// # C contract
    /// As [`PMIx_server_setup_application`].
    fn PMIx_server_setup_local_support(
        nspace: *const c_char,
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let (_, inst) = running()?;
        nspace_arg(nspace)?;
        try_infos!(info, ninfo)?;
        complete(&inst, Ok(()), cbfunc, cbdata)
    }
}
