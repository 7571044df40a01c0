//! The server calls no server of ours serves (neither host calls them):
//! `PMIX_ERR_NOT_SUPPORTED` once a server runs; and `PMIx_Register_attributes`.

use std::ffi::{c_char, c_void};

use pmix_core::Status;

use super::init::running;
use crate::boundary::{Res, export};
use crate::types::{pmix_cpuset_t, pmix_info_cbfunc_t, pmix_info_t, pmix_op_cbfunc_t, pmix_proc_t};

/// The answer of the server calls we do not serve: `PMIX_ERR_INIT` without a server,
/// else `PMIX_ERR_NOT_SUPPORTED` (no callback is called).
fn unserved() -> Res {
    running()?;
    Err(Status::ERR_NOT_SUPPORTED)
}

export! {
    /// `PMIx_server_collect_inventory`: not served (no inventory is collected).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_collect_inventory(
        directives: *mut pmix_info_t,
        ndirs: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (directives, ndirs, cbfunc, cbdata);
        unserved()
    }
}

export! {
    /// `PMIx_server_deliver_inventory`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_deliver_inventory(
        info: *mut pmix_info_t,
        ninfo: usize,
        directives: *mut pmix_info_t,
        ndirs: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (info, ninfo, directives, ndirs, cbfunc, cbdata);
        unserved()
    }
}

export! {
    /// `PMIx_server_generate_locality_string`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED` (`*locality` untouched).
    fn PMIx_server_generate_locality_string(
        cpuset: *const pmix_cpuset_t,
        locality: *mut *mut c_char,
    ) -> pmix_status_t {
        let _ = (cpuset, locality);
        unserved()
    }
}

export! {
    /// `PMIx_server_generate_cpuset_string`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED` (`*cpuset_string` untouched).
    fn PMIx_server_generate_cpuset_string(
        cpuset: *const pmix_cpuset_t,
        cpuset_string: *mut *mut c_char,
    ) -> pmix_status_t {
        let _ = (cpuset, cpuset_string);
        unserved()
    }
}

export! {
    /// `PMIx_server_define_process_set`: not served (no process sets are kept).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_define_process_set(
        members: *const pmix_proc_t,
        nmembers: usize,
        pset_name: *const c_char,
    ) -> pmix_status_t {
        let _ = (members, nmembers, pset_name);
        unserved()
    }
}

export! {
    /// `PMIx_server_delete_process_set`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_delete_process_set(pset_name: *mut c_char) -> pmix_status_t {
        let _ = pset_name;
        unserved()
    }
}

export! {
    /// `PMIx_server_register_resources`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_register_resources(
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (info, ninfo, cbfunc, cbdata);
        unserved()
    }
}

export! {
    /// `PMIx_server_deregister_resources`: not served.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, else `PMIX_ERR_NOT_SUPPORTED`.
    fn PMIx_server_deregister_resources(
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let _ = (info, ninfo, cbfunc, cbdata);
        unserved()
    }
}

export! {
    /// `PMIx_Register_attributes`: a host's table of the attributes it supports is
    /// not kept (queries of supported attributes are not served).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `function` or `attrs`), else
    /// `PMIX_ERR_NOT_SUPPORTED`.
    ///
    /// # Safety
    /// Nothing is read: any pointers are accepted.
    fn PMIx_Register_attributes(function: *mut c_char, attrs: *mut *mut c_char) -> pmix_status_t {
        crate::boundary::not_null(function)?;
        crate::boundary::not_null(attrs)?;
        Err(Status::ERR_NOT_SUPPORTED)
    }
}
