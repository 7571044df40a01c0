//! The node store's segments (docs/serving.md §5): one namespace's data, written once
//! by the server of a node and read by every client of that node from the same bytes
//! (a read-only shared mapping), without a message and without a lock.
//!
//! A segment is **immutable** once written and **position-independent**: it holds
//! offsets from its first byte, never pointers, so it may be mapped at any address;
//! every integer is little-endian and read from the byte slice (never cast), so no
//! alignment is assumed. Values are the bfrops v4.1 bytes [`crate::Value`] encodes
//! itself to in a non-described buffer (its type tag, then the element: docs/wire.md
//! §5.4), so a reader decodes one value when it is asked for, with the codec's own
//! decoder and [`crate::Limits::DEFAULT`] (what a value had to pass to reach the
//! server from a socket).
//!
//! ```text
//! header      80 bytes (below)
//! namespace   its bytes (1 to 255, UTF-8, no NUL), then zeros to a multiple of 4
//! key index   (K + 1) u32: key i is key_bytes[idx[i] .. idx[i + 1]]
//! key bytes   the K distinct keys, sorted by their bytes, strictly ascending
//! rank table  (n + 1) u32 at a multiple of 4: rank r's record is [t[r], t[r + 1])
//! job record  the rank-WILDCARD record (job, session, node and app-level keys)
//! records     rank 0's record, rank 1's, ... (an absent rank's is empty)
//!
//! record      u32 count c (at least 1), c entries {u32 key id, u32 value offset},
//!             then the c values: value i is [off[i], off[i + 1]), the last one
//!             ends where the record ends; entries sorted by key id (a key written
//!             twice keeps its order: the first written is found first)
//!
//! header  0  [4]  magic "PXNS"          32  u32  flags (0)
//!         4  u16  format version (1)     36  u32  namespace length
//!         6  u16  header length (80)     40  u32  key count K
//!         8  u64  total length           44  u32  key index offset
//!        16  u64  generation             48  u32  key bytes offset
//!        24  u64  checksum               52  u32  key bytes length
//!                                        56  u32  rank count n
//!                                        60  u32  rank table offset
//!                                        64  u32  job record offset
//!                                        68  u32  job record length
//!                                        72  u64  reserved (0)
//! ```
//!
//! The checksum is FNV-1a (64 bits) over every byte before the rank table, its own
//! eight bytes counted as zeros ([`checksum`]): the header, the namespace and the
//! key dictionary. What follows is checked by its structure instead: the total
//! length must be the length of the bytes (a truncated segment is refused), the
//! sections must follow each other in this order without overlapping, the rank
//! table's offsets must rise from the end of the job record to the total length, and
//! every record's entries must name keys of the dictionary in order and values that
//! follow each other inside the record. [`Segment::parse`] checks all of it once, so
//! a lookup reads only inside the record it found; a value's own bytes are checked
//! when it is decoded ([`Segment::get`], or all of them by
//! [`Segment::check_values`]).
//!
//! **Generations.** Generation 0 is a namespace's job segment, written when the
//! namespace is registered; each collecting fence writes a segment of its own with
//! the next generation, holding the data the fence brought (each rank's committed
//! remote and global keys), in the same format. A segment larger than
//! [`MAX_LEN`] cannot be written ([`SegmentBuilder::finish`] refuses it): its
//! writer splits the data over two.
//!
//! **Writing.** [`SegmentBuilder`] takes `(rank or WILDCARD, key, value)` entries in
//! any order and writes the bytes in one pass over them (O(total bytes), plus a sort
//! of each record's few keys).
//!
//! **Reading.** [`Segment::parse`] on any byte slice (what a mapping gives), or on
//! anything that derefs to one (the mapping itself, so a segment can own it); then
//! O(1) from a rank to its record, O(log k) from a key to its value, and no
//! allocation for an integer or a string ([`Segment::get_u32`],
//! [`Segment::get_str`]).

use core::fmt;

use crate::error::WireError;
use crate::value::Rank;

mod read;
mod write;

pub use read::{KeyId, Record, Segment};
pub use write::SegmentBuilder;

/// The name of the storage module a client announces in its handshake's gds field
/// (docs/wire.md §3.1, field 9) when it reads job information from a node-store
/// segment, and a server offers in `PMIX_GDS_MODULE` (`pxns,hash`): an OpenPMIx
/// client, which has no module of that name, picks `hash` from the same list.
pub const GDS_NAME: &str = "pxns";

/// The first bytes of every segment.
pub const MAGIC: [u8; 4] = *b"PXNS";

/// The format version this code writes and reads.
pub const VERSION: u16 = 1;

/// The length of the header, in bytes.
pub const HEADER_LEN: usize = 80;

/// The most bytes a segment may hold: its offsets are `u32`s.
pub const MAX_LEN: u64 = u32::MAX as u64;

/// The rank of the job-level record (`PMIX_RANK_WILDCARD`).
pub const WILDCARD: u32 = Rank::WILDCARD.0;

/// Where each field of the header is.
pub(crate) mod field {
    pub(crate) const MAGIC: usize = 0;
    pub(crate) const VERSION: usize = 4;
    pub(crate) const HEADER_LEN: usize = 6;
    pub(crate) const TOTAL: usize = 8;
    pub(crate) const GENERATION: usize = 16;
    pub(crate) const CHECKSUM: usize = 24;
    pub(crate) const FLAGS: usize = 32;
    pub(crate) const NSPACE_LEN: usize = 36;
    pub(crate) const KEY_COUNT: usize = 40;
    pub(crate) const KEY_INDEX: usize = 44;
    pub(crate) const KEY_BYTES: usize = 48;
    pub(crate) const KEY_BYTES_LEN: usize = 52;
    pub(crate) const RANK_COUNT: usize = 56;
    pub(crate) const RANK_TABLE: usize = 60;
    pub(crate) const JOB: usize = 64;
    pub(crate) const JOB_LEN: usize = 68;
    pub(crate) const RESERVED: usize = 72;
}

/// The bytes of one entry of a record: a key id and a value offset.
pub(crate) const ENTRY_LEN: usize = 8;

/// Why a segment was refused, a lookup failed, or a segment could not be written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// Fewer bytes than the header, or than the total length the header gives: a
    /// truncated segment.
    Truncated {
        /// The bytes given.
        len: usize,
        /// The bytes needed.
        need: u64,
    },
    /// More bytes than the total length the header gives.
    TrailingBytes {
        /// The bytes given.
        len: usize,
        /// The header's total length.
        total: u64,
    },
    /// The bytes do not start with [`MAGIC`].
    BadMagic {
        /// The first four bytes.
        found: [u8; 4],
    },
    /// A format version this code does not read.
    UnsupportedVersion {
        /// The version found.
        found: u16,
    },
    /// The header's checksum does not match its bytes.
    Checksum {
        /// The checksum the header holds.
        stored: u64,
        /// The checksum of the bytes.
        computed: u64,
    },
    /// A field of the header, or a section or table it locates, is out of range,
    /// misaligned, or overlaps another.
    Layout {
        /// Which field or section.
        what: &'static str,
        /// What is wrong with it.
        why: &'static str,
        /// The byte offset of the field (or the start of the section).
        offset: u64,
    },
    /// The namespace is empty, too long, not UTF-8 or holds a NUL.
    BadNamespace {
        /// What is wrong with it.
        why: &'static str,
    },
    /// A key of the dictionary (or one given to the builder) is refused.
    BadKey {
        /// Its index in the dictionary (the builder: its entry's).
        index: u64,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A record's entries are inconsistent.
    BadRecord {
        /// The record's rank ([`WILDCARD`] for the job record).
        rank: u32,
        /// What is wrong with it.
        why: &'static str,
        /// The byte offset of the offending entry.
        offset: u64,
    },
    /// A value does not decode as the one value it should be (or, given to the
    /// builder, cannot be encoded or is not one value).
    Value {
        /// The byte offset of the value in the segment (0 from the builder).
        offset: u64,
        /// The decoder's error (its offset counts from the segment's start).
        error: WireError,
    },
    /// A typed read ([`Segment::get_u32`], [`Segment::get_str`]) of a value of
    /// another type (or a NULL string, or a number that does not fit).
    WrongType {
        /// What was asked for.
        want: &'static str,
        /// The value's bfrops type code.
        found: u16,
    },
    /// A rank the builder cannot file (a special rank other than WILDCARD).
    BadRank {
        /// The rank.
        rank: u32,
    },
    /// The segment would be larger than [`MAX_LEN`] bytes.
    TooLarge {
        /// What would not fit.
        what: &'static str,
        /// Its size.
        len: u64,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Truncated { len, need } => write!(
                f,
                "a truncated node-store segment: {len} bytes where {need} are needed"
            ),
            StoreError::TrailingBytes { len, total } => write!(
                f,
                "{len} bytes where the node-store segment's header says {total}"
            ),
            StoreError::BadMagic { found } => {
                write!(f, "not a node-store segment: it starts with {found:02x?}")
            }
            StoreError::UnsupportedVersion { found } => write!(
                f,
                "node-store segment format {found}, where this code reads {VERSION}"
            ),
            StoreError::Checksum { stored, computed } => write!(
                f,
                "the node-store segment's checksum is {stored:#018x}, its bytes give {computed:#018x}"
            ),
            StoreError::Layout { what, why, offset } => {
                write!(f, "node-store segment at byte {offset}: {what} {why}")
            }
            StoreError::BadNamespace { why } => {
                write!(f, "node-store segment: the namespace {why}")
            }
            StoreError::BadKey { index, why } => {
                write!(f, "node-store segment: key {index} {why}")
            }
            StoreError::BadRecord { rank, why, offset } => {
                if *rank == WILDCARD {
                    write!(
                        f,
                        "node-store segment at byte {offset}: the job record {why}"
                    )
                } else {
                    write!(
                        f,
                        "node-store segment at byte {offset}: rank {rank}'s record {why}"
                    )
                }
            }
            StoreError::Value { offset, error } => {
                write!(f, "node-store value at byte {offset}: {error}")
            }
            StoreError::WrongType { want, found } => {
                write!(
                    f,
                    "node-store value of type {found} where {want} was asked for"
                )
            }
            StoreError::BadRank { rank } => {
                write!(f, "rank {rank:#x} cannot be filed in a node-store segment")
            }
            StoreError::TooLarge { what, len } => write!(
                f,
                "{what} of {len} bytes makes the node-store segment larger than {MAX_LEN} bytes"
            ),
        }
    }
}

impl core::error::Error for StoreError {}

/// The checksum the header of `bytes` should hold: FNV-1a over every byte before the
/// rank table, the checksum field counted as zeros. `None` when the header is too
/// short or its rank table offset lies outside the bytes or inside the header. (For
/// tools, and for the fuzz target, which reseals the bytes it makes up so that the
/// tables behind the header are explored.)
pub fn checksum(bytes: &[u8]) -> Option<u64> {
    let end = usize::try_from(le_u32(bytes, field::RANK_TABLE)?).ok()?;
    if end < HEADER_LEN {
        return None;
    }
    let covered = bytes.get(..end)?;
    let (before, rest) = covered.split_at(field::CHECKSUM);
    let after = rest.get(8..)?;
    let mut h = Fnv::new();
    h.write(before);
    h.write(&[0; 8]);
    h.write(after);
    Some(h.0)
}

/// FNV-1a, 64 bits.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The little-endian `u16` at `at`, if the bytes hold it.
#[inline]
pub(crate) fn le_u16(bytes: &[u8], at: usize) -> Option<u16> {
    let b = bytes.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes(b.try_into().ok()?))
}

/// The little-endian `u32` at `at`, if the bytes hold it.
#[inline]
pub(crate) fn le_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

/// The little-endian `u64` at `at`, if the bytes hold it.
#[inline]
pub(crate) fn le_u64(bytes: &[u8], at: usize) -> Option<u64> {
    let b = bytes.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

#[cfg(test)]
mod tests;
