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

use alloc::vec::Vec;
use core::fmt;

use crate::bits;

/// Why a cpu list or hex mask was rejected; the position is a byte offset in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseCpusetError {
    /// A character that cannot appear at that place.
    #[error("unexpected {found:?} at byte {at}")]
    Unexpected {
        /// Byte offset of the offending character.
        at: usize,
        /// The offending character.
        found: char,
    },
    /// The input ended where a number was expected.
    #[error("unexpected end of input at byte {at}")]
    UnexpectedEnd {
        /// Byte offset of the end.
        at: usize,
    },
    /// A range whose end is below its start (`5-3`).
    #[error("range ending below its start at byte {at}")]
    ReversedRange {
        /// Byte offset of the range.
        at: usize,
    },
    /// A PU index at or above [`CpuSet::MAX_PUS`].
    #[error("cpu index at byte {at} is not below {}", CpuSet::MAX_PUS)]
    TooLarge {
        /// Byte offset of the number.
        at: usize,
    },
}

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

    /// Parses a cpu list: comma-separated indexes and inclusive ranges (`0-3,8,10-11`).
    /// Spaces around items and a trailing newline are accepted; the empty string is the
    /// empty set (as in an empty sysfs `cpulist`).
    ///
    /// # Errors
    /// [`ParseCpusetError`] naming the first offending byte.
    pub fn parse_list(s: &str) -> Result<Self, ParseCpusetError> {
        let b = s.as_bytes();
        let mut set = CpuSet::new();
        let mut i = 0;
        skip_ws(b, &mut i);
        if i == b.len() {
            return Ok(set);
        }
        loop {
            skip_ws(b, &mut i);
            let start_at = i;
            let lo = parse_index(s, &mut i)?;
            skip_ws(b, &mut i);
            let hi = if b.get(i) == Some(&b'-') {
                i += 1;
                skip_ws(b, &mut i);
                let hi = parse_index(s, &mut i)?;
                if hi < lo {
                    return Err(ParseCpusetError::ReversedRange { at: start_at });
                }
                hi
            } else {
                lo
            };
            set.insert_range(lo, hi + 1);
            skip_ws(b, &mut i);
            match b.get(i) {
                None => return Ok(set),
                Some(b',') => i += 1,
                Some(_) => return Err(unexpected(s, i)),
            }
        }
    }

    /// Parses an hwloc hex mask: comma-separated 32-bit hex words, most significant
    /// first, each optionally `0x`-prefixed; an empty word is zero (`0xf,,0x1`).
    /// A trailing newline is accepted.
    ///
    /// # Errors
    /// [`ParseCpusetError`] naming the first offending byte; a mask wider than
    /// [`CpuSet::MAX_PUS`] bits with a bit set beyond it is [`ParseCpusetError::TooLarge`].
    pub fn parse_hex_mask(s: &str) -> Result<Self, ParseCpusetError> {
        let trimmed = s.trim_end_matches(['\n', '\r', ' ', '\t']);
        let b = trimmed.as_bytes();
        // Split into words first (positions kept) to learn how many there are.
        let nwords = b.iter().filter(|&&c| c == b',').count() + 1;
        let mut set = CpuSet::new();
        let mut start = 0;
        for k in 0..nwords {
            let end = b[start..]
                .iter()
                .position(|&c| c == b',')
                .map_or(b.len(), |p| start + p);
            let mut digits = &b[start..end];
            let mut at = start;
            if digits.len() >= 2 && digits[0] == b'0' && (digits[1] == b'x' || digits[1] == b'X') {
                digits = &digits[2..];
                at += 2;
                // `0x` promises digits; only a word with no prefix at all may be empty.
                if digits.is_empty() {
                    return Err(unexpected(s, at));
                }
            }
            if digits.len() > 8 {
                return Err(unexpected(s, at + 8));
            }
            let mut word: u32 = 0;
            for (j, &c) in digits.iter().enumerate() {
                let v = match c {
                    b'0'..=b'9' => c - b'0',
                    b'a'..=b'f' => c - b'a' + 10,
                    b'A'..=b'F' => c - b'A' + 10,
                    _ => return Err(unexpected(s, at + j)),
                };
                word = (word << 4) | u32::from(v);
            }
            if b.is_empty() {
                return Err(ParseCpusetError::UnexpectedEnd { at: 0 });
            }
            let shift = (nwords - 1 - k) as u64 * 32;
            if word != 0 {
                if shift + 32 > u64::from(Self::MAX_PUS) {
                    return Err(ParseCpusetError::TooLarge { at: start });
                }
                let shift = shift as u32;
                for bit in 0..32 {
                    if word & (1 << bit) != 0 {
                        set.insert(shift + bit);
                    }
                }
            }
            start = end + 1;
        }
        Ok(set)
    }

    /// A value that prints the set as an hwloc hex mask (`0x0000000f,0xffffffff`);
    /// the empty set prints as `0x0`.
    pub fn hex_mask(&self) -> impl fmt::Display + '_ {
        HexMask(self)
    }

    fn trim(&mut self) {
        self.words.truncate(bits::trimmed_len(&self.words));
    }
}

fn skip_ws(b: &[u8], i: &mut usize) {
    while matches!(b.get(*i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        *i += 1;
    }
}

fn unexpected(s: &str, at: usize) -> ParseCpusetError {
    match s.get(at..).and_then(|r| r.chars().next()) {
        Some(found) => ParseCpusetError::Unexpected { at, found },
        None => ParseCpusetError::UnexpectedEnd { at },
    }
}

fn parse_index(s: &str, i: &mut usize) -> Result<u32, ParseCpusetError> {
    let b = s.as_bytes();
    let start = *i;
    let mut v: u64 = 0;
    while let Some(&c) = b.get(*i) {
        if !c.is_ascii_digit() {
            break;
        }
        v = v * 10 + u64::from(c - b'0');
        if v >= u64::from(CpuSet::MAX_PUS) {
            return Err(ParseCpusetError::TooLarge { at: start });
        }
        *i += 1;
    }
    if *i == start {
        return Err(unexpected(s, start));
    }
    Ok(v as u32)
}

/// Prints the set as a cpu list (`0-3,8,10-11`); the empty set prints as nothing.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut it = self.iter().peekable();
        let mut first = true;
        while let Some(lo) = it.next() {
            let mut hi = lo;
            while it.peek() == Some(&(hi + 1)) {
                hi += 1;
                it.next();
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if hi == lo {
                write!(f, "{lo}")?;
            } else {
                write!(f, "{lo}-{hi}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuSet({self})")
    }
}

struct HexMask<'a>(&'a CpuSet);

impl fmt::Display for HexMask<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words = &self.0.words;
        if words.is_empty() {
            return f.write_str("0x0");
        }
        let mut halves = words
            .iter()
            .rev()
            .flat_map(|w| [(w >> 32) as u32, *w as u32]);
        // Skip a leading zero half so the mask is as short as hwloc prints it.
        let top = words[words.len() - 1];
        if top >> 32 == 0 {
            halves.next();
        }
        let mut first = true;
        for h in halves {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "0x{h:08x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn list_round_trips() {
        let s = CpuSet::parse_list("0-3,8,10-11").unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(s.to_string(), "0-3,8,10-11");
        assert_eq!(CpuSet::parse_list("5\n").unwrap().to_string(), "5");
        assert!(CpuSet::parse_list("").unwrap().is_empty());
        assert!(CpuSet::parse_list("\n").unwrap().is_empty());
    }

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
    fn list_errors_name_the_byte() {
        assert_eq!(
            CpuSet::parse_list("0-3,x").unwrap_err(),
            ParseCpusetError::Unexpected { at: 4, found: 'x' }
        );
        assert_eq!(
            CpuSet::parse_list("0-3,x").unwrap_err().to_string(),
            "unexpected 'x' at byte 4"
        );
        assert_eq!(
            CpuSet::parse_list("5-3").unwrap_err(),
            ParseCpusetError::ReversedRange { at: 0 }
        );
        assert_eq!(
            CpuSet::parse_list("1,").unwrap_err(),
            ParseCpusetError::UnexpectedEnd { at: 2 }
        );
        assert!(matches!(
            CpuSet::parse_list("99999999999"),
            Err(ParseCpusetError::TooLarge { at: 0 })
        ));
        assert!(matches!(
            CpuSet::parse_list("0-1048576"),
            Err(ParseCpusetError::TooLarge { at: 2 })
        ));
        assert!(CpuSet::parse_list("0-1048575").is_ok());
    }

    #[test]
    fn hex_masks_parse_hwloc_style() {
        let s = CpuSet::parse_hex_mask("0x0000000f,0xffffffff").unwrap();
        assert_eq!(s.len(), 36);
        assert!(s.contains(35) && !s.contains(36));
        let s = CpuSet::parse_hex_mask("0x00000f0f,,0xffffffff").unwrap();
        assert!(s.contains(64) && s.contains(75) && !s.contains(32));
        assert_eq!(CpuSet::parse_hex_mask("00ff\n").unwrap().to_string(), "0-7");
        assert_eq!(CpuSet::parse_hex_mask("0x0").unwrap(), CpuSet::new());
        assert_eq!(
            CpuSet::parse_hex_mask("0xfg").unwrap_err(),
            ParseCpusetError::Unexpected { at: 3, found: 'g' }
        );
        assert!(CpuSet::parse_hex_mask("").is_err());
        assert_eq!(
            CpuSet::parse_hex_mask("0x").unwrap_err(),
            ParseCpusetError::UnexpectedEnd { at: 2 }
        );
        assert_eq!(
            CpuSet::parse_hex_mask("0xf,0x,0x1").unwrap_err(),
            ParseCpusetError::Unexpected { at: 6, found: ',' }
        );
        assert!(CpuSet::parse_hex_mask("0x123456789").is_err());
    }

    #[test]
    fn hex_mask_prints_like_hwloc() {
        let s = CpuSet::parse_list("0-35").unwrap();
        assert_eq!(s.hex_mask().to_string(), "0x0000000f,0xffffffff");
        assert_eq!(
            CpuSet::parse_hex_mask(&s.hex_mask().to_string()).unwrap(),
            s
        );
        assert_eq!(CpuSet::new().hex_mask().to_string(), "0x0");
        assert_eq!(
            CpuSet::from_pus([64]).hex_mask().to_string(),
            "0x00000001,0x00000000,0x00000000"
        );
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
