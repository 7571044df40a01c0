//! Node and process maps a host asks for: `PMIx_generate_regex` and
//! `PMIx_generate_ppn` (OpenPMIx's native `pmix[...]` forms, made by `pmix::regex`).

use std::ffi::c_char;

use pmix_core::Status;

use super::strdup;
use crate::boundary::{BAD_PARAM, Res, export, opt_cstr, try_mut};

/// A map to read: a string read to its NUL however long (as libpmix2 reads it), UTF-8.
/// `p` is a pointer C gave.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for NULL or bytes that are not UTF-8.
fn input_arg<'a>(p: *const c_char) -> Result<&'a str, Status> {
    opt_cstr!(p)
        .ok_or(BAD_PARAM)?
        .to_str()
        .map_err(|_| BAD_PARAM)
}

/// Hands `*out` the malloc'ed copy of `text`. `out` is a pointer C gave.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a NULL `out`; `PMIX_ERR_NOMEM`.
fn give_string(out: *mut *mut c_char, text: &str) -> Res {
    let out = try_mut!(out)?;
    *out = strdup(text)?;
    Ok(())
}

export! {
    /// `PMIx_generate_regex`: OpenPMIx's native `pmix[...]` form of a comma-separated
    /// node list, malloc'ed into `*regex`.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `input` or `regex`, a list the form cannot hold).
    ///
    /// # C contract
    /// `input` is NULL or a NUL-terminated string; `regex` NULL or writable.
    fn PMIx_generate_regex(input: *const c_char, regex: *mut *mut c_char) -> pmix_status_t {
        let input = input_arg(input)?;
        let r = pmix::regex::generate_node_regex(input).map_err(|_| BAD_PARAM)?;
        give_string(regex, &r)
    }
}

export! {
    /// `PMIx_generate_ppn`: OpenPMIx's native form of a `;`-separated list (one entry
    /// per node) of comma-separated ranks, malloc'ed into `*ppn`.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `input` or `ppn`, a malformed list).
    ///
    /// # C contract
    /// `input` is NULL or a NUL-terminated string; `ppn` NULL or writable.
    fn PMIx_generate_ppn(input: *const c_char, ppn: *mut *mut c_char) -> pmix_status_t {
        let input = input_arg(input)?;
        let r = pmix::regex::generate_ppn(input).map_err(|_| BAD_PARAM)?;
        give_string(ppn, &r)
    }
}
