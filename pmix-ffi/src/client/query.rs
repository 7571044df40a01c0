//! `PMIx_Query_info` / `_nb`, `PMIx_Resolve_peers` and `PMIx_Resolve_nodes` over the
//! runtime's client (answered from the job information when they can be, else by the
//! server).
//!
//! A query's answers are a `calloc`ed info array: the caller's (free with
//! `PMIX_INFO_FREE`) in the blocking form, the library's until `release_fn` in the
//! non-blocking one. `PMIx_Resolve_peers` gives a `malloc`ed process array (free with
//! `PMIX_PROC_FREE`), `PMIx_Resolve_nodes` a `malloc`ed string (free with `free`).

use std::ffi::{c_char, c_void};

use pmix::wire::{Query, WStr};
use pmix::{Mode, PmixError};
use pmix_core::Status;

use crate::boundary::{
    BAD_PARAM, CbData, admitted, c_strdup, copy_c_str, export, opt_str, try_mut, try_slice,
};
use crate::cmem::c_copy;
use crate::data::convert::{argv_to_wire, deliver_infos, infos_to_c, try_infos, try_key};
use crate::types::*;

/// The runtime's queries of a C query array.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a NULL or empty key list, a key that is NULL, empty,
/// over-long or not UTF-8, more than [`crate::data::convert::MAX_ARGV`] keys, or a bad
/// qualifier. The queries are C's (the C contract): each one's `keys` is NULL or a
/// NULL-terminated array of NUL-terminated strings; `qualifiers` points to `nqual`
/// readable infos (or is NULL with 0).
fn queries_to_wire(queries: &[pmix_query_t]) -> Result<Vec<Query>, Status> {
    queries
        .iter()
        .map(|q| {
            if q.keys.is_null() {
                return Err(BAD_PARAM);
            }
            let keys = argv_to_wire(q.keys, |p| Ok(WStr::from(try_key!(p)?)))?;
            if keys.is_empty() {
                return Err(BAD_PARAM);
            }
            let qualifiers = try_infos!(q.qualifiers, q.nqual)?;
            Ok(Query { keys, qualifiers })
        })
        .collect()
}

export! {
    /// `PMIx_Query_info`: answers `queries` (each key, with its qualifiers), from this
    /// process's job information when every key is there (and no query asks for a
    /// refresh), else from the server; `*results` gets one info per key answered (free
    /// with `PMIX_INFO_FREE`).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (NULL `queries` or none, NULL `results`/`nresults`, a bad key
    /// or qualifier); `PMIX_ERR_UNREACH` (no server); the server's status
    /// (`PMIX_ERR_NOT_SUPPORTED` for keys it does not answer; Open MPI 4.1's mpirun
    /// answers `PMIX_ERROR`).
    ///
    /// # C contract
    /// `queries` points to `nqueries` queries, each with `keys` NULL or a NULL-terminated
    /// array of NUL-terminated strings and `qualifiers` pointing to `nqual` readable infos
    /// (or NULL with 0); `results` and `nresults` are NULL or writable.
    fn PMIx_Query_info(
        queries: *mut pmix_query_t,
        nqueries: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Query_info", Mode::Blocking)?;
        let (res, nres) = (try_mut!(results)?, try_mut!(nresults)?);
        (*res, *nres) = (std::ptr::null_mut(), 0);
        if nqueries == 0 {
            return Err(BAD_PARAM);
        }
        let q = queries_to_wire(try_slice!(queries, nqueries)?)?;
        let answers = inst.query_info(&q).map_err(|e| e.status())?;
        (*res, *nres) = infos_to_c(&answers)?;
        Ok(())
    }
}

export! {
    /// `PMIx_Query_info_nb`: as [`PMIx_Query_info`], with the answers passed to
    /// `cbfunc(status, info, ninfo, cbdata, release_fn, release_cbdata)` once, on the
    /// progress thread (the library's until `release_fn`). The queries are copied before
    /// this returns.
    ///
    /// # Errors
    /// As [`PMIx_Query_info`] for what is found before acceptance (`PMIX_ERR_BAD_PARAM`
    /// for a NULL `cbfunc` too, as OpenPMIx); the server's status goes to `cbfunc`.
    ///
    /// # C contract
    /// As [`PMIx_Query_info`]; `cbfunc` must be safe to call from another thread with
    /// `cbdata`.
    fn PMIx_Query_info_nb(
        queries: *mut pmix_query_t,
        nqueries: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Query_info_nb", Mode::NonBlocking)?;
        let Some(cb) = cbfunc else {
            return Err(BAD_PARAM);
        };
        if nqueries == 0 {
            return Err(BAD_PARAM);
        }
        let q = queries_to_wire(try_slice!(queries, nqueries)?)?;
        let cbdata = CbData(cbdata);
        inst.query_info_nb(&q, move |r| {
            deliver_infos(cb, &cbdata, r.map_err(|e| e.status()));
        })
        .map_err(|e| e.status())
    }
}

/// An optional string argument: `None` for NULL or empty.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for one without a NUL within `max + 1` bytes or not UTF-8.
fn opt_name(s: Result<Option<&str>, Status>) -> Result<Option<&str>, Status> {
    Ok(s?.filter(|s| !s.is_empty()))
}

export! {
    /// `PMIx_Resolve_peers`: the processes of `nspace` (NULL or empty: the caller's job)
    /// on node `nodename` (NULL: this node): `*procs` a `malloc`ed array of `*nprocs`
    /// (free with `PMIX_PROC_FREE`).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (NULL `procs`/`nprocs`, an over-long name);
    /// `PMIX_ERR_NOT_FOUND` (nothing known of that node or job); `PMIX_ERR_UNREACH` (no
    /// server); `PMIX_ERR_NOMEM`.
    ///
    /// # C contract
    /// `nodename` is NULL or a NUL-terminated string; `nspace` NULL or readable up to its
    /// NUL or 256 bytes; `procs` and `nprocs` NULL or writable.
    fn PMIx_Resolve_peers(
        nodename: *const c_char,
        nspace: *const c_char,
        procs: *mut *mut pmix_proc_t,
        nprocs: *mut usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Resolve_peers", Mode::Blocking)?;
        let (out, nout) = (try_mut!(procs)?, try_mut!(nprocs)?);
        (*out, *nout) = (std::ptr::null_mut(), 0);
        let node = opt_name(opt_str!(nodename, 255))?;
        let ns = opt_name(opt_str!(nspace, PMIX_MAX_NSLEN))?;
        let peers = inst.resolve_peers(node, ns).map_err(|e| e.status())?;
        if peers.is_empty() {
            return Err(Status::ERR_NOT_FOUND);
        }
        let c: Vec<pmix_proc_t> = peers
            .iter()
            .map(|p| {
                let mut c = pmix_proc_t {
                    rank: p.rank.0,
                    ..pmix_proc_t::EMPTY
                };
                copy_c_str(&mut c.nspace, p.nspace.as_bytes());
                c
            })
            .collect();
        let arr = c_copy(&c)?;
        (*out, *nout) = (arr, peers.len());
        Ok(())
    }
}

export! {
    /// `PMIx_Resolve_nodes`: the comma-separated names of the nodes running processes of
    /// `nspace` (NULL or empty: the caller's job), as a `malloc`ed string in `*nodelist`
    /// (free with `free`).
    ///
    /// # Errors
    /// As [`PMIx_Resolve_peers`] (`PMIX_ERR_BAD_PARAM` for a NULL `nodelist`).
    ///
    /// # C contract
    /// `nspace` as in [`PMIx_Resolve_peers`]; `nodelist` NULL or writable.
    fn PMIx_Resolve_nodes(
        nspace: *const c_char,
        nodelist: *mut *mut c_char,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Resolve_nodes", Mode::Blocking)?;
        let out = try_mut!(nodelist)?;
        *out = std::ptr::null_mut();
        let ns = opt_name(opt_str!(nspace, PMIX_MAX_NSLEN))?;
        let list = inst.resolve_nodes(ns).map_err(|e| e.status())?;
        let s = c_strdup(&list);
        if s.is_null() {
            return Err(Status::ERR_NOMEM);
        }
        *out = s;
        Ok(())
    }
}
