//! The library's objects behind `pmix_cpuset_t` and `pmix_topology_t`.
//!
//! Both structs carry `source`, which the library sets to its own static string
//! [`SOURCE`] — compared by address, so a struct whose `source` is any other pointer
//! (OpenPMIx's `"hwloc"`, garbage, a copy of our text) is foreign: `PMIX_ERR_BAD_PARAM`.
//!
//! - A cpuset's `bitmap` is a key into a registry of live cpusets: it is looked up, never
//!   dereferenced, so a stale (destructed) or forged bitmap is `PMIX_ERR_BAD_PARAM`
//!   rather than a crash, and a cpuset destructed while a query runs lives until the
//!   query ends (the registry hands out `Arc`s).
//! - A topology's `topology` must be the address of the instance's loaded topology; it
//!   is compared, never dereferenced.

use std::collections::BTreeMap;
use std::ffi::{CStr, c_char, c_void};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use pmix::Pmix;
use pmix_core::{CpuSet, Status, Topology};

use crate::boundary::BAD_PARAM;
use crate::types::{pmix_cpuset_t, pmix_topology_t};

/// The `source` of every cpuset and topology this library makes.
pub static SOURCE: &CStr = c"pmix-rs";

/// The `source` pointer to store.
pub(crate) fn source_ptr() -> *mut c_char {
    SOURCE.as_ptr().cast_mut()
}

fn is_ours(source: *const c_char) -> bool {
    std::ptr::eq(source, SOURCE.as_ptr())
}

/// Live cpusets by bitmap address. A `BTreeMap` rather than a hash map: its nodes are
/// held by pointers to their starts, so leak checkers see a static registry as
/// reachable (hashbrown points into the middle of its table: "possibly lost").
static CPUSETS: LazyLock<Mutex<BTreeMap<usize, Arc<CpuSet>>>> =
    LazyLock::new(|| Mutex::new(BTreeMap::new()));

fn cpusets() -> std::sync::MutexGuard<'static, BTreeMap<usize, Arc<CpuSet>>> {
    CPUSETS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Registers `set` and fills `out` with it.
pub(crate) fn store_cpuset(out: &mut pmix_cpuset_t, set: CpuSet) {
    let set = Arc::new(set);
    let key = Arc::as_ptr(&set) as usize;
    cpusets().insert(key, set);
    out.source = source_ptr();
    out.bitmap = key as *mut c_void;
}

/// The cpuset `c` stands for.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a foreign `source` or a bitmap the registry does not hold
/// (never made by this library, or already destructed).
pub(crate) fn lookup_cpuset(c: &pmix_cpuset_t) -> Result<Arc<CpuSet>, Status> {
    if !is_ours(c.source) {
        return Err(BAD_PARAM);
    }
    cpusets()
        .get(&(c.bitmap as usize))
        .cloned()
        .ok_or(BAD_PARAM)
}

/// Releases the cpuset `c` stands for and clears `c`; a foreign or stale one is left
/// alone.
pub(crate) fn destruct_cpuset(c: &mut pmix_cpuset_t) {
    if !is_ours(c.source) {
        return;
    }
    cpusets().remove(&(c.bitmap as usize));
    c.source = std::ptr::null_mut();
    c.bitmap = std::ptr::null_mut();
}

/// Fills `t` with the instance's topology.
pub(crate) fn store_topology(t: &mut pmix_topology_t, topo: &Arc<Topology>) {
    t.source = source_ptr();
    t.topology = Arc::as_ptr(topo).cast_mut().cast();
}

/// Checks that `t` is empty or the library's: what `PMIx_Load_topology` may fill.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a foreign `source`.
pub(crate) fn check_fillable_topology(t: &pmix_topology_t) -> Result<(), Status> {
    if t.source.is_null() || is_ours(t.source) {
        Ok(())
    } else {
        Err(BAD_PARAM)
    }
}

/// Checks that `t` is the instance's loaded topology (the only topology a caller can
/// hold), so the query may use it.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a foreign `source`, or a `topology` that is not the
/// instance's (stale, from a finalised instance, or forged).
pub(crate) fn check_topology(inst: &Pmix, t: &pmix_topology_t) -> Result<(), Status> {
    if !is_ours(t.source) {
        return Err(BAD_PARAM);
    }
    match inst.loaded_topology() {
        Some(own) if std::ptr::eq(Arc::as_ptr(own).cast(), t.topology.cast_const()) => Ok(()),
        _ => Err(BAD_PARAM),
    }
}

/// Clears a topology struct of the library's; a foreign one is left alone.
pub(crate) fn destruct_topology(t: &mut pmix_topology_t) {
    if is_ours(t.source) {
        t.source = std::ptr::null_mut();
        t.topology = std::ptr::null_mut();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpusets_round_trip_and_stale_or_foreign_ones_are_refused() {
        let mut c = pmix_cpuset_t {
            source: std::ptr::null_mut(),
            bitmap: std::ptr::null_mut(),
        };
        store_cpuset(&mut c, CpuSet::parse_list("0-3").unwrap());
        let copy = c;
        assert_eq!(
            *lookup_cpuset(&c).unwrap(),
            CpuSet::parse_list("0-3").unwrap()
        );
        // Same text at another address: foreign.
        let text = std::ffi::CString::new("pmix-rs").unwrap();
        let foreign = pmix_cpuset_t {
            source: text.as_ptr().cast_mut(),
            bitmap: copy.bitmap,
        };
        assert_eq!(lookup_cpuset(&foreign), Err(BAD_PARAM));
        destruct_cpuset(&mut c);
        assert!(c.source.is_null() && c.bitmap.is_null());
        assert_eq!(lookup_cpuset(&copy), Err(BAD_PARAM));
    }
}
