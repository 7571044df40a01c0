//! A member's contribution to a rank-state exchange (`validate_global`, agreement,
//! shrink: docs/design.md §5, §8), as the runtime puts it in the key-value store for the
//! other members to get after an FT fence.
//!
//! The bytes are ours, not OpenPMIx's: they travel as a byte object
//! (`PMIX_BYTE_OBJECT`) under a key of pmix-rs's own, so an OpenPMIx server stores
//! and serves them without reading them. Layout (varints are bfrops flex128, as
//! everywhere else in this crate):
//!
//! ```text
//! u8      format version (1)
//! varint  group size n (1 ..= 2^31)
//! varint  the contributor's group rank (< n)
//! varint  round (64 bits: which exchange of the group this contribution is to)
//! varint  flag (32 bits; agreement's AND operand)
//! 3 ×     rank set: the failures the contributor knows, the ones it acknowledged,
//!         the members it saw leave, each:
//!           u8 0, varint k, then k varints: the ranks ascending, each as its gap
//!                 from the one before (the first from -1, minus one), or
//!           u8 1, then ceil(n / 8) bytes: a bitmap, rank r at bit r % 8 of byte
//!                 r / 8, the bits past n zero
//! ```
//!
//! [`encode`] picks, per set, whichever of the two forms is shorter, so a
//! contribution is O(failures), never O(n), while failures are few, and at most
//! n / 8 bytes a set when they are many. [`decode`] checks every field (version,
//! bounds, order, the bitmap's padding, no trailing byte) before anything is
//! allocated past the input's own size.

use alloc::vec::Vec;

use crate::buf::{Reader, Writer};
use crate::error::{ErrorKind, WireError};
use crate::limits::Limits;
use crate::types::BufferType;

/// The format version [`encode`] writes and [`decode`] reads.
pub const VERSION: u8 = 1;

/// The largest group size a contribution may describe (`2^31`, a `pmix_rank_t`
/// short of the wildcard values).
pub const MAX_SIZE: u64 = 1 << 31;

/// A set of group ranks as decoded: the two wire forms, kept as they came (a
/// bitmap is not turned into a rank list, nor the reverse).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RankSet {
    /// The ranks, strictly ascending, each below the group size.
    Sorted(Vec<u32>),
    /// Bitset words, rank `r` at bit `r % 64` of word `r / 64`; exactly
    /// `ceil(size / 64)` words, the bits at or past the size zero.
    Bitmap(Vec<u64>),
}

impl RankSet {
    /// The number of ranks in the set.
    pub fn len(&self) -> usize {
        match self {
            RankSet::Sorted(r) => r.len(),
            RankSet::Bitmap(w) => w.iter().map(|w| w.count_ones() as usize).sum(),
        }
    }

    /// `true` if the set has no rank.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `rank` is in the set.
    pub fn contains(&self, rank: u32) -> bool {
        match self {
            RankSet::Sorted(r) => r.binary_search(&rank).is_ok(),
            RankSet::Bitmap(w) => w
                .get(rank as usize / 64)
                .is_some_and(|w| w >> (rank % 64) & 1 == 1),
        }
    }
}

/// One member's contribution, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contribution {
    /// The group size.
    pub size: u32,
    /// The contributor's group rank.
    pub rank: u32,
    /// The exchange (round) of the group it contributed to.
    pub round: u64,
    /// The flag it contributed (agreement ANDs them).
    pub flag: u32,
    /// The failures it knew of.
    pub failed: RankSet,
    /// The failures it had acknowledged.
    pub acked: RankSet,
    /// The members it saw leave.
    pub left: RankSet,
}

/// Encodes the contribution of group rank `rank` in a group of `size` to exchange
/// `round` with `flag` and three bitsets (`failed`, `acked`, `left`: rank `r` at bit `r % 64` of word
/// `r / 64`; words past `ceil(size / 64)` and bits at or past `size` are ignored).
///
/// # Errors
/// [`ErrorKind::Unencodable`] for a size of 0 or over [`MAX_SIZE`], or a rank not
/// below the size.
pub fn encode(
    size: u32,
    rank: u32,
    round: u64,
    flag: u32,
    [failed, acked, left]: [&[u64]; 3],
) -> Result<Vec<u8>, WireError> {
    if size == 0 || u64::from(size) > MAX_SIZE || rank >= size {
        return Err(WireError::new(
            ErrorKind::Unencodable {
                what: "a contribution's size or rank",
            },
            0,
        ));
    }
    let mut w = Writer::new(BufferType::NonDescribed);
    w.u8(VERSION);
    w.varint(u64::from(size));
    w.varint(u64::from(rank));
    w.varint(round);
    w.varint(u64::from(flag));
    let nwords = (size as usize).div_ceil(64);
    let map_bytes = (size as usize).div_ceil(8);
    let tail = match size % 64 {
        0 => u64::MAX,
        r => (1 << r) - 1,
    };
    for set in [failed, acked, left] {
        // The set's words, those past the size dropped and the last one's bits
        // past it cleared.
        let words: Vec<u64> = (0..nwords)
            .map(|i| {
                let x = set.get(i).copied().unwrap_or(0);
                if i + 1 == nwords { x & tail } else { x }
            })
            .collect();
        let k: usize = words.iter().map(|x| x.count_ones() as usize).sum();
        // Every gap takes at least a byte: past map_bytes ranks the bitmap wins
        // without writing the list.
        if k < map_bytes {
            let mut sorted = Writer::new(BufferType::NonDescribed);
            sorted.varint(k as u64);
            let mut next: u64 = 0;
            for (i, &x) in words.iter().enumerate() {
                let mut x = x;
                while x != 0 {
                    let r = (i * 64) as u64 + u64::from(x.trailing_zeros());
                    sorted.varint(r - next);
                    next = r + 1;
                    x &= x - 1;
                }
            }
            if sorted.len() < map_bytes {
                w.u8(0);
                w.raw(sorted.as_bytes());
                continue;
            }
        }
        w.u8(1);
        let bytes = words.iter().flat_map(|x| x.to_le_bytes());
        w.raw(&bytes.take(map_bytes).collect::<Vec<u8>>());
    }
    w.finish()
}

/// Decodes a contribution [`encode`] wrote.
///
/// # Errors
/// A [`WireError`] naming the offset: another version ([`ErrorKind::BadValue`]),
/// a size of 0 or over [`MAX_SIZE`], a rank not below the size, a list longer than
/// the size, ranks out of order or out of range, set bits past the size, a form
/// byte other than 0 or 1, a truncated input, trailing bytes.
pub fn decode(bytes: &[u8]) -> Result<Contribution, WireError> {
    let mut r = Reader::new(bytes, BufferType::NonDescribed, Limits::DEFAULT);
    let at = r.offset();
    if r.u8("a contribution's version")? != VERSION {
        return Err(r.error_at(
            ErrorKind::BadValue {
                what: "a contribution's version",
                why: "only version 1 is known",
            },
            at,
        ));
    }
    let at = r.offset();
    let size = r.varint(32, "a contribution's group size")?;
    if size == 0 || size > MAX_SIZE {
        return Err(r.error_at(
            ErrorKind::BadValue {
                what: "a contribution's group size",
                why: "a group has 1 to 2^31 members",
            },
            at,
        ));
    }
    let size = size as u32;
    let at = r.offset();
    let rank = r.varint(32, "a contribution's rank")? as u32;
    if rank >= size {
        return Err(r.error_at(
            ErrorKind::BadValue {
                what: "a contribution's rank",
                why: "not below the group size",
            },
            at,
        ));
    }
    let round = r.varint(64, "a contribution's round")?;
    let flag = r.varint(32, "a contribution's flag")? as u32;
    let failed = rank_set(&mut r, size)?;
    let acked = rank_set(&mut r, size)?;
    let left = rank_set(&mut r, size)?;
    r.finish()?;
    Ok(Contribution {
        size,
        rank,
        round,
        flag,
        failed,
        acked,
        left,
    })
}

fn rank_set(r: &mut Reader<'_>, size: u32) -> Result<RankSet, WireError> {
    let at = r.offset();
    match r.u8("a rank set's form")? {
        0 => {
            let at = r.offset();
            let k = r.varint(32, "a rank list's length")?;
            // Each rank takes a byte at least: a count past the input is refused
            // before it is allocated.
            if k > u64::from(size) || k as usize > r.rest().len() {
                return Err(r.error_at(
                    ErrorKind::TooLarge {
                        what: "a rank list's length",
                        len: k,
                        limit: u64::from(size).min(r.rest().len() as u64),
                    },
                    at,
                ));
            }
            let mut ranks = Vec::with_capacity(k as usize);
            let mut next: u64 = 0;
            for _ in 0..k {
                let at = r.offset();
                let rank = next + r.varint(32, "a rank's gap")?;
                if rank >= u64::from(size) {
                    return Err(r.error_at(
                        ErrorKind::BadValue {
                            what: "a rank's gap",
                            why: "the rank is not below the group size",
                        },
                        at,
                    ));
                }
                ranks.push(rank as u32);
                next = rank + 1;
            }
            Ok(RankSet::Sorted(ranks))
        }
        1 => {
            let at = r.offset();
            let bytes = r.take((size as usize).div_ceil(8), "a rank bitmap")?;
            let mut words = Vec::with_capacity((size as usize).div_ceil(64));
            for chunk in bytes.chunks(8) {
                let mut b = [0u8; 8];
                b[..chunk.len()].copy_from_slice(chunk);
                words.push(u64::from_le_bytes(b));
            }
            let tail = size as usize % 64;
            if tail != 0
                && let Some(last) = words.last()
                && last >> tail != 0
            {
                return Err(r.error_at(
                    ErrorKind::BadValue {
                        what: "a rank bitmap",
                        why: "a bit past the group size is set",
                    },
                    at,
                ));
            }
            Ok(RankSet::Bitmap(words))
        }
        _ => Err(r.error_at(
            ErrorKind::BadValue {
                what: "a rank set's form",
                why: "0 (a list) or 1 (a bitmap)",
            },
            at,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn set(size: u32, ranks: &[u32]) -> Vec<u64> {
        let mut w = vec![0u64; (size as usize).div_ceil(64)];
        for &r in ranks {
            w[r as usize / 64] |= 1 << (r % 64);
        }
        w
    }

    fn ranks_of(s: &RankSet, size: u32) -> Vec<u32> {
        (0..size).filter(|&r| s.contains(r)).collect()
    }

    #[test]
    fn a_contribution_round_trips_in_either_form() {
        for (size, failed) in [
            (8u32, vec![3, 5]),
            (8, vec![]),
            (8, vec![0, 1, 2, 3, 4, 5, 6, 7]),
            (1000, (0..1000).step_by(3).collect::<Vec<_>>()),
            (1 << 20, vec![0, 17, 999_999, (1 << 20) - 1]),
            (65, vec![64]),
        ] {
            let f = set(size, &failed);
            let a = set(size, &failed[..failed.len() / 2]);
            let l = set(size, &[]);
            let bytes = encode(size, size - 1, 1 << 40, 0xdead, [&f, &a, &l]).unwrap();
            let c = decode(&bytes).unwrap();
            assert_eq!(
                (c.size, c.rank, c.round, c.flag),
                (size, size - 1, 1 << 40, 0xdead)
            );
            assert_eq!(ranks_of(&c.failed, size), failed);
            assert_eq!(ranks_of(&c.acked, size), failed[..failed.len() / 2]);
            assert!(c.left.is_empty());
            assert_eq!(c.failed.len(), failed.len());
        }
    }

    #[test]
    fn few_failures_travel_as_a_list_and_many_as_a_bitmap() {
        let size = 1 << 20;
        let few = set(size, &(0..10).map(|i| i * 1000).collect::<Vec<_>>());
        let bytes = encode(size, 0, 9, 1, [&few, &few, &[]]).unwrap();
        assert!(bytes.len() < 64, "{} bytes", bytes.len());
        assert!(matches!(decode(&bytes).unwrap().failed, RankSet::Sorted(_)));
        let many = set(size, &(0..size).step_by(2).collect::<Vec<_>>());
        let bytes = encode(size, 0, 9, 1, [&many, &[], &[]]).unwrap();
        // One bitmap (n/8) and two empty lists.
        assert!(bytes.len() <= (size as usize) / 8 + 16, "{}", bytes.len());
        assert!(matches!(decode(&bytes).unwrap().failed, RankSet::Bitmap(_)));
    }

    #[test]
    fn bits_past_the_size_are_not_encoded() {
        let bytes = encode(3, 0, 0, 0, [&[0b1111_0001], &[], &[]]).unwrap();
        assert_eq!(ranks_of(&decode(&bytes).unwrap().failed, 3), [0]);
    }

    #[test]
    fn malformed_contributions_are_errors_naming_the_offset() {
        let good = encode(8, 2, 4, 7, [&set(8, &[3, 5]), &[], &[]]).unwrap();
        assert!(decode(&good).is_ok());
        // Every truncation fails, none panics.
        for n in 0..good.len() {
            assert!(decode(&good[..n]).is_err(), "cut at {n}");
        }
        let mut trailing = good.clone();
        trailing.push(0);
        assert!(matches!(
            decode(&trailing).unwrap_err().kind,
            ErrorKind::TrailingBytes { .. }
        ));
        let mut version = good.clone();
        version[0] = 2;
        assert_eq!(decode(&version).unwrap_err().offset, 0);
        // size 8, rank 8: out of range.
        let e = decode(&[1, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(e.offset, 2);
        // A list whose second rank passes the size.
        let e = decode(&[1, 8, 0, 0, 0, 0, 2, 1, 7, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(e.offset, 8);
        // A list longer than the size.
        assert!(decode(&[1, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]).is_err());
        // A bitmap with a bit past the size (size 3: bit 3).
        let e = decode(&[1, 3, 0, 0, 0, 1, 0b1000, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(e.offset, 6);
        // A form byte of 2.
        assert!(decode(&[1, 3, 0, 0, 0, 2, 0, 0, 0, 0]).is_err());
        // Size 0, size past 2^31, rank not below size: unencodable too.
        assert!(decode(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(encode(0, 0, 0, 0, [&[], &[], &[]]).is_err());
        assert!(encode(4, 4, 0, 0, [&[], &[], &[]]).is_err());
    }

    #[test]
    fn a_huge_list_length_is_refused_before_it_is_allocated() {
        // size 2^31, list of 2^31 - 1 ranks announced, none given.
        let mut w = Writer::new(BufferType::NonDescribed);
        w.u8(1);
        w.varint(1 << 31);
        w.varint(0);
        w.varint(0);
        w.varint(0);
        w.u8(0);
        w.varint((1 << 31) - 1);
        let bytes = w.finish().unwrap();
        assert!(matches!(
            decode(&bytes).unwrap_err().kind,
            ErrorKind::TooLarge { .. }
        ));
    }
}
