//! The library's objects behind `pmix_cpuset_t` and `pmix_topology_t`.
//!
//! Both structs carry `source`, which the library sets to its own static string
//! [`SOURCE`] — compared by address, so a struct whose `source` is any other pointer
//! (OpenPMIx's `"hwloc"`, garbage, a copy of our text) is foreign: `PMIX_ERR_BAD_PARAM`.
//!
//! The other field (a cpuset's `bitmap`, a topology's `topology`) is a **key** into a
//! registry: a number from a counter that never repeats, never an address. It is looked
//! up, never dereferenced, so a forged key is `PMIX_ERR_BAD_PARAM` rather than a crash,
//! and a stale one (destructed, or from a finalised instance) stays
//! `PMIX_ERR_BAD_PARAM` forever: it cannot alias a newer object, even one the allocator
//! placed at the very address the old one had (keying by address allowed exactly that).
//!
//! - Cpusets: the registry holds each live cpuset (`Arc`, so one destructed while a
//!   query runs lives until the query ends); `PMIx_Cpuset_destruct` removes it.
//! - Topologies: the registry holds a `Weak` reference to the topology each
//!   `PMIx_Load_topology` handed out; a key is accepted only while that topology is the
//!   calling instance's own. `PMIx_Topology_destruct` removes it.

use std::collections::BTreeMap;
use std::ffi::{CStr, c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError, Weak};

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

/// The next key: every object of either registry gets its own, never 0, never reused
/// (a 64-bit counter does not wrap in the life of a process; should it ever run out, it
/// sticks at the end and [`next_key`] reports `None` instead of wrapping).
static NEXT_KEY: AtomicUsize = AtomicUsize::new(1);

fn next_key() -> Option<usize> {
    NEXT_KEY
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| k.checked_add(1))
        .ok()
}

/// A registry: objects by key. A `BTreeMap` rather than a hash map: its nodes are held
/// by pointers to their starts, so leak checkers see a static registry as reachable
/// (hashbrown points into the middle of its table: "possibly lost").
type Registry<T> = LazyLock<Mutex<BTreeMap<usize, T>>>;

static CPUSETS: Registry<Arc<CpuSet>> = LazyLock::new(|| Mutex::new(BTreeMap::new()));
static TOPOLOGIES: Registry<Weak<Topology>> = LazyLock::new(|| Mutex::new(BTreeMap::new()));

fn lock<T>(r: &'static Registry<T>) -> MutexGuard<'static, BTreeMap<usize, T>> {
    r.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Registers `set` and fills `out` with it.
///
/// # Errors
/// `PMIX_ERR_NOMEM` if the keys ran out (never in practice).
pub(crate) fn store_cpuset(out: &mut pmix_cpuset_t, set: CpuSet) -> Result<(), Status> {
    let key = next_key().ok_or(Status::ERR_NOMEM)?;
    lock(&CPUSETS).insert(key, Arc::new(set));
    out.source = source_ptr();
    out.bitmap = key as *mut c_void;
    Ok(())
}

/// The cpuset `c` stands for.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a foreign `source` or a key the registry does not hold
/// (never made by this library, or already destructed).
pub(crate) fn lookup_cpuset(c: &pmix_cpuset_t) -> Result<Arc<CpuSet>, Status> {
    if !is_ours(c.source) {
        return Err(BAD_PARAM);
    }
    lock(&CPUSETS)
        .get(&(c.bitmap as usize))
        .cloned()
        .ok_or(BAD_PARAM)
}

/// Releases the cpuset `c` stands for and clears `c`; a foreign one is left alone.
pub(crate) fn destruct_cpuset(c: &mut pmix_cpuset_t) {
    if !is_ours(c.source) {
        return;
    }
    lock(&CPUSETS).remove(&(c.bitmap as usize));
    c.source = std::ptr::null_mut();
    c.bitmap = std::ptr::null_mut();
}

/// The topology behind a key of ours, if it is still alive.
fn registered_topology(t: &pmix_topology_t) -> Option<Arc<Topology>> {
    if !is_ours(t.source) {
        return None;
    }
    lock(&TOPOLOGIES)
        .get(&(t.topology as usize))
        .and_then(Weak::upgrade)
}

/// Fills `t` with the instance's topology: keeps `t`'s key when it already stands for
/// this topology, else registers it under a new key (and forgets the keys of
/// topologies that no longer exist).
///
/// # Errors
/// `PMIX_ERR_NOMEM` if the keys ran out (never in practice).
pub(crate) fn store_topology(t: &mut pmix_topology_t, topo: &Arc<Topology>) -> Result<(), Status> {
    if registered_topology(t).is_some_and(|held| Arc::ptr_eq(&held, topo)) {
        return Ok(());
    }
    let key = next_key().ok_or(Status::ERR_NOMEM)?;
    let mut registry = lock(&TOPOLOGIES);
    registry.retain(|_, w| w.strong_count() > 0);
    registry.insert(key, Arc::downgrade(topo));
    t.source = source_ptr();
    t.topology = key as *mut c_void;
    Ok(())
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

/// Checks that `t` stands for the instance's loaded topology (the only topology a
/// caller can hold), so the query may use it.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a foreign `source`, or a key that is not the instance's
/// topology's (destructed, from a finalised instance, or forged).
pub(crate) fn check_topology(inst: &Pmix, t: &pmix_topology_t) -> Result<(), Status> {
    match (registered_topology(t), inst.loaded_topology()) {
        (Some(held), Some(own)) if Arc::ptr_eq(&held, own) => Ok(()),
        _ => Err(BAD_PARAM),
    }
}

/// Clears a topology struct of the library's and forgets its key; a foreign one is left
/// alone.
pub(crate) fn destruct_topology(t: &mut pmix_topology_t) {
    if is_ours(t.source) {
        lock(&TOPOLOGIES).remove(&(t.topology as usize));
        t.source = std::ptr::null_mut();
        t.topology = std::ptr::null_mut();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> pmix_cpuset_t {
        pmix_cpuset_t {
            source: std::ptr::null_mut(),
            bitmap: std::ptr::null_mut(),
        }
    }

    #[test]
    fn cpusets_round_trip_and_stale_or_foreign_ones_are_refused() {
        let mut c = empty();
        store_cpuset(&mut c, CpuSet::parse_list("0-3").unwrap()).unwrap();
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

    #[test]
    fn a_stale_cpuset_never_aliases_a_newer_one() {
        let mut a = empty();
        store_cpuset(&mut a, CpuSet::parse_list("0-3").unwrap()).unwrap();
        let stale = a;
        destruct_cpuset(&mut a);
        // Made right after the free, so the allocator may well put it at the same
        // address: the key differs all the same.
        let mut b = empty();
        store_cpuset(&mut b, CpuSet::parse_list("5").unwrap()).unwrap();
        assert_ne!(stale.bitmap, b.bitmap, "a key was reused");
        assert_eq!(lookup_cpuset(&stale), Err(BAD_PARAM));
        assert_eq!(
            *lookup_cpuset(&b).unwrap(),
            CpuSet::parse_list("5").unwrap()
        );
        destruct_cpuset(&mut b);
    }

    #[test]
    fn a_topology_key_outlives_its_topology_without_aliasing_the_next() {
        let xml = pmix_testkit::hwloc_xml("24em64t-2n6c2t-pci.xml");
        let load =
            || Arc::new(pmix::topology::load(&format!("xml:{}", xml.display()), None).unwrap());
        let mut t = pmix_topology_t {
            source: std::ptr::null_mut(),
            topology: std::ptr::null_mut(),
        };
        let first = load();
        store_topology(&mut t, &first).unwrap();
        let key = t.topology;
        store_topology(&mut t, &first).unwrap();
        assert_eq!(t.topology, key, "the same topology keeps its key");
        assert!(registered_topology(&t).is_some_and(|h| Arc::ptr_eq(&h, &first)));
        let stale = t;
        drop(first);
        assert!(
            registered_topology(&stale).is_none(),
            "a dead topology is gone"
        );
        let second = load();
        let mut t2 = pmix_topology_t {
            source: std::ptr::null_mut(),
            topology: std::ptr::null_mut(),
        };
        store_topology(&mut t2, &second).unwrap();
        assert_ne!(t2.topology, stale.topology);
        assert!(registered_topology(&stale).is_none());
        destruct_topology(&mut t2);
        assert!(t2.source.is_null());
        assert!(lock(&TOPOLOGIES).get(&(t2.topology as usize)).is_none());
    }
}
