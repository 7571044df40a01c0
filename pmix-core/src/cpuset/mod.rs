//! Sets of processing units (PUs), by OS index.
//!
//! A [`CpuSet`] is a bitmap. It parses and prints the two textual forms found in the
//! wild: Linux/hwloc cpu lists (`0-3,8,10-11`) and hwloc hex masks
//! (`0x0000000f,0xffffffff`, 32-bit words most significant first, an empty word
//! meaning zero). PU indexes are bounded by [`CpuSet::MAX_PUS`] so that hostile input
//! cannot make a set allocate more than 128 KiB.
//!
//! Set operations used by distance queries (`intersects`, `is_subset`,
//! `intersects_difference`) never allocate.
//!
//! The set and its operations live here; the textual forms (parsing, printing,
//! [`ParseCpusetError`]) in `text`.

use alloc::vec::Vec;
use core::fmt;

use crate::bits;

mod text;

pub use text::ParseCpusetError;

/// A set of PU OS indexes.
///
/// Equality is set equality (trailing zero words are never stored). The word-level
/// operations are the crate's shared bitset code (`bits`); this type owns the growth
/// and the trimming.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct CpuSet {
    words: Vec<u64>,
}

impl CpuSet {
    /// The largest number of PUs a set can name: indexes run from 0 to `MAX_PUS - 1`.
    pub const MAX_PUS: u32 = 1 << 20;

    /// The empty set.
    pub const fn new() -> Self {
        CpuSet { words: Vec::new() }
    }

    /// The set `{0, 1, …, n-1}`.
    ///
    /// # Panics
    /// Never: `n` is clamped to [`CpuSet::MAX_PUS`].
    pub fn first_n(n: u32) -> Self {
        let mut s = CpuSet::new();
        s.insert_range(0, n.min(Self::MAX_PUS));
        s
    }

    /// The set of the given PUs; indexes at or above [`CpuSet::MAX_PUS`] are ignored.
    pub fn from_pus(pus: impl IntoIterator<Item = u32>) -> Self {
        let mut s = CpuSet::new();
        for p in pus {
            s.insert(p);
        }
        s
    }

    /// Adds PU `pu`; returns `false` (and changes nothing) if `pu >= MAX_PUS`.
    pub fn insert(&mut self, pu: u32) -> bool {
        if pu >= Self::MAX_PUS {
            return false;
        }
        let w = bits::word_of(pu);
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        bits::insert(&mut self.words, pu);
        true
    }

    /// Adds the PUs `start..end` (clamped to [`CpuSet::MAX_PUS`]).
    pub fn insert_range(&mut self, start: u32, end: u32) {
        let end = end.min(Self::MAX_PUS);
        if start >= end {
            return;
        }
        let last = bits::word_of(end - 1);
        if self.words.len() <= last {
            self.words.resize(last + 1, 0);
        }
        bits::insert_range(&mut self.words, start, end);
    }

    /// Removes PU `pu` if present.
    pub fn remove(&mut self, pu: u32) {
        if bits::remove(&mut self.words, pu) {
            self.trim();
        }
    }

    /// `true` if PU `pu` is in the set.
    pub fn contains(&self, pu: u32) -> bool {
        bits::contains(&self.words, pu)
    }

    /// `true` if the set has no PU.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The number of PUs in the set.
    pub fn len(&self) -> usize {
        bits::count(&self.words)
    }

    /// The lowest PU, or `None` for the empty set.
    pub fn first(&self) -> Option<u32> {
        bits::first(&self.words)
    }

    /// The highest PU, or `None` for the empty set.
    pub fn last(&self) -> Option<u32> {
        bits::last(&self.words)
    }

    /// `true` if the two sets share a PU. Never allocates.
    pub fn intersects(&self, other: &CpuSet) -> bool {
        bits::intersects(&self.words, &other.words)
    }

    /// `true` if every PU of `self` is in `other`. Never allocates.
    pub fn is_subset(&self, other: &CpuSet) -> bool {
        bits::is_subset(&self.words, &other.words)
    }

    /// `true` if `self` has a PU that is in `a` but not in `b`. Never allocates.
    pub fn intersects_difference(&self, a: &CpuSet, b: &CpuSet) -> bool {
        bits::intersects_difference(&self.words, &a.words, &b.words)
    }

    /// `true` if `self` has a PU that is not in `other`. Never allocates.
    pub fn has_outside(&self, other: &CpuSet) -> bool {
        !self.is_subset(other)
    }

    /// Adds every PU of `other`.
    pub fn union_with(&mut self, other: &CpuSet) {
        if self.words.len() < other.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        bits::union_with(&mut self.words, &other.words);
    }

    /// Keeps only the PUs that are also in `other`.
    pub fn intersect_with(&mut self, other: &CpuSet) {
        self.words.truncate(other.words.len());
        bits::intersect_with(&mut self.words, &other.words);
        self.trim();
    }

    /// The PUs in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        bits::Ones::new(&self.words)
    }

    fn trim(&mut self) {
        self.words.truncate(bits::trimmed_len(&self.words));
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuSet({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn first_and_last_are_the_lowest_and_highest_pu() {
        assert_eq!(CpuSet::new().first(), None);
        assert_eq!(CpuSet::new().last(), None);
        let s = CpuSet::parse_list("3,64,200-201").unwrap();
        assert_eq!((s.first(), s.last()), (Some(3), Some(201)));
        let one = CpuSet::parse_list("63").unwrap();
        assert_eq!((one.first(), one.last()), (Some(63), Some(63)));
    }

    #[test]
    fn set_operations() {
        let a = CpuSet::parse_list("0-7").unwrap();
        let b = CpuSet::parse_list("4-5,100").unwrap();
        let c = CpuSet::parse_list("0-3").unwrap();
        assert!(a.intersects(&b));
        assert!(!c.intersects(&b));
        assert!(c.is_subset(&a));
        assert!(!b.is_subset(&a));
        assert!(b.intersects_difference(&a, &c));
        assert!(!c.intersects_difference(&a, &c));
        let mut u = a.clone();
        u.union_with(&b);
        assert_eq!(u.to_string(), "0-7,100");
        u.intersect_with(&c);
        assert_eq!(u, c);
        u.remove(0);
        assert_eq!(u.to_string(), "1-3");
        assert_eq!(CpuSet::first_n(130).len(), 130);
        let mut r = CpuSet::new();
        r.insert_range(60, 130);
        assert_eq!(r.to_string(), "60-129");
    }
}
