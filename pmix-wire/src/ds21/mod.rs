//! OpenPMIx 4.2's `gds/ds21` shared-memory store as its clients read it
//! (docs/serving.md §5.7): the bytes a server writes so that an unmodified
//! libpmix2 client answers `PMIx_Get` of job-level keys and of its peers' keys from
//! files it maps, without a message. `no_std`, no I/O: [`Ds21Writer`] turns what a
//! rank holds into [`Patch`]es (bytes at an offset of one file), which the server's
//! I/O layer writes into the files while it holds every reader's lock.
//!
//! The files of one namespace, in the directory its clients get as
//! `PMIX_DSTORE_21_BASE_PATH` (every integer native little-endian, 64-bit; no magic
//! and no version: compatibility is the layout's):
//!
//! ```text
//! initial-pmix_shared-segment-0   4096 B: u64 count (1), u64 full (0), then the
//!                                 namespace's 288-byte entry: name[256] (NUL-padded),
//!                                 u64 0, i32 0, i32 0, u64 meta segments, u64 data segments
//! smseg-<ns>-<k>                  4 MiB: u64 0, then 24-byte slots {u64 rank, u64 offset,
//!                                 u64 count}: slot 0 the job (rank WILDCARD), slot
//!                                 r + 1 rank r; offset 0 = no data
//! smdataseg-<ns>-<k>              4 MiB: u64 (unused), then entries back to back from byte
//!                                 8: {u64 size | flags, u64 key hash, key NUL, value}; a
//!                                 rank's entries end with an extension slot {size 25 |
//!                                 bit 63, 0, NUL, u64 offset of the rank's next entries
//!                                 or 0}; bit 62 marks an entry replaced
//! smlockseg-<ns>                  header {u64 size, u32 locks N, u32 0, u64 stride,
//!                                 u64 first mutex}, N i32 slots a client claims, then
//!                                 2N process-shared mutexes (`lock_layout`)
//! ```
//!
//! An offset is global: segment k's byte b is `k * DATA_SEG_SIZE + b`. A value is
//! what bfrops v4.1 packs for one `pmix_value_t` in the client's buffer type (a count
//! of 1, then the value: [`value_bytes`]). A key's hash is the sum of its bytes as
//! signed chars ([`key_hash`]).

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::buf::Writer;
use crate::types::BufferType;
use crate::value::{Rank, Value};

/// The initial segment's size (OpenPMIx's `INITIAL_SEG_SIZE` default).
pub const INITIAL_SEG_SIZE: usize = 4096;
/// A meta segment's size (`NS_META_SEG_SIZE`).
pub const META_SEG_SIZE: usize = 1 << 22;
/// A data segment's size (`NS_DATA_SEG_SIZE`).
pub const DATA_SEG_SIZE: usize = 1 << 22;
/// The length of a namespace's entry in the initial segment.
pub const NS_ENTRY_LEN: usize = 288;
/// The length of a rank's slot in a meta segment.
pub const META_SLOT_LEN: usize = 24;
/// Rank slots per meta segment.
pub const META_SLOTS: usize = (META_SEG_SIZE - 8) / META_SLOT_LEN;
/// The length of an extension slot.
pub const EXT_SLOT_LEN: usize = 25;
/// The stride between two mutexes of the lock segment (a cache line).
pub const MUTEX_STRIDE: usize = 64;

const EXTENSION: u64 = 1 << 63;
const INVALIDATED: u64 = 1 << 62;
/// Where, in the initial segment, the namespace's counts of meta and data
/// segments are.
const NUM_META_AT: usize = 16 + 272;
const NUM_DATA_AT: usize = 16 + 280;

/// The name of the initial segment's file.
pub const INITIAL_FILE: &str = "initial-pmix_shared-segment-0";

/// The name of meta segment `k` of `nspace`.
pub fn meta_file(nspace: &str, k: u32) -> String {
    alloc::format!("smseg-{nspace}-{k}")
}

/// The name of data segment `k` of `nspace`.
pub fn data_file(nspace: &str, k: u32) -> String {
    alloc::format!("smdataseg-{nspace}-{k}")
}

/// The name of `nspace`'s lock segment.
pub fn lock_file(nspace: &str) -> String {
    alloc::format!("smlockseg-{nspace}")
}

/// Why a namespace or a value cannot go in the store.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ds21Error {
    /// The namespace is empty, longer than [`pmix_core::MAX_NSLEN`], holds a NUL or a `/`
    /// (it names files).
    BadNamespace,
    /// A key that is empty or holds a NUL.
    BadKey,
    /// An entry larger than a data segment.
    TooLarge {
        /// Its bytes.
        len: usize,
    },
    /// A value bfrops cannot pack.
    Value(crate::WireError),
}

impl fmt::Display for Ds21Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ds21Error::BadNamespace => f.write_str(
                "a namespace the ds21 store cannot name (empty, over 255 bytes, a NUL or a '/')",
            ),
            Ds21Error::BadKey => f.write_str("an empty key, or one holding a NUL"),
            Ds21Error::TooLarge { len } => {
                write!(
                    f,
                    "an entry of {len} bytes does not fit a 4 MiB data segment"
                )
            }
            Ds21Error::Value(e) => write!(f, "a value bfrops cannot pack: {e}"),
        }
    }
}

fn check_nspace(nspace: &str) -> Result<(), Ds21Error> {
    if nspace.is_empty() || nspace.len() > pmix_core::MAX_NSLEN || nspace.contains(['\0', '/']) {
        return Err(Ds21Error::BadNamespace);
    }
    Ok(())
}

/// The initial segment of a directory holding `nspace` alone, with one meta and
/// one data segment.
///
/// # Errors
/// [`Ds21Error::BadNamespace`].
pub fn initial_segment(nspace: &str) -> Result<Vec<u8>, Ds21Error> {
    check_nspace(nspace)?;
    let mut b = vec![0u8; INITIAL_SEG_SIZE];
    b[0..8].copy_from_slice(&1u64.to_le_bytes());
    b[16..16 + nspace.len()].copy_from_slice(nspace.as_bytes());
    b[NUM_META_AT..NUM_META_AT + 8].copy_from_slice(&1u64.to_le_bytes());
    b[NUM_DATA_AT..NUM_DATA_AT + 8].copy_from_slice(&1u64.to_le_bytes());
    Ok(b)
}

/// OpenPMIx's key hash: the sum of the key's bytes as signed chars (x86-64).
pub fn key_hash(key: &[u8]) -> u64 {
    key.iter()
        .fold(0u64, |h, &b| h.wrapping_add(b as i8 as i64 as u64))
}

/// What bfrops v4.1 packs for one value in a buffer of `ty`: a count of 1 (and, fully
/// described, its INT32 and VALUE tags), then the value.
///
/// # Errors
/// [`Ds21Error::Value`] for a value that cannot be packed.
pub fn value_bytes(value: &Value, ty: BufferType) -> Result<Vec<u8>, Ds21Error> {
    let mut w = Writer::new(ty);
    w.pack_one(value);
    w.finish().map_err(Ds21Error::Value)
}

/// The layout of a lock segment for `locks` clients (one per local rank) on a
/// machine of `page` bytes per page: (its size, where the first of its `2 *
/// locks` mutexes is; they are [`MUTEX_STRIDE`] apart). The header is `{u64 size,
/// u32 locks, u32 0, u64 stride, u64 first}` then `locks` zero `i32`s.
pub fn lock_layout(locks: u32, page: usize) -> (usize, usize) {
    let page = page.max(4096);
    let n = locks as usize;
    let first = ((32 + 4 * n) / MUTEX_STRIDE + 1) * MUTEX_STRIDE;
    let size = ((first + 2 * n * MUTEX_STRIDE) / page + 1) * page;
    (size, first)
}

/// The header of a lock segment of [`lock_layout`]`(locks, page)` (the slots
/// zero); the mutexes are the caller's to initialize.
pub fn lock_header(locks: u32, page: usize) -> Vec<u8> {
    let (size, first) = lock_layout(locks, page);
    let mut b = vec![0u8; 32 + 4 * locks as usize];
    b[0..8].copy_from_slice(&(size as u64).to_le_bytes());
    b[8..12].copy_from_slice(&locks.to_le_bytes());
    b[16..24].copy_from_slice(&(MUTEX_STRIDE as u64).to_le_bytes());
    b[24..32].copy_from_slice(&(first as u64).to_le_bytes());
    b
}

/// Which file a [`Patch`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ds21File {
    /// The initial segment.
    Initial,
    /// Meta segment `k`.
    Meta(u32),
    /// Data segment `k` (created, [`DATA_SEG_SIZE`] bytes of zeros, when first
    /// named).
    Data(u32),
}

/// Bytes to write at an offset of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    /// The file.
    pub file: Ds21File,
    /// The offset in it.
    pub at: usize,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// One rank's entries in the data segments.
#[derive(Debug)]
struct Run {
    /// The global offset of its trailing extension slot.
    ext: u64,
    /// Its entries that are not replaced (what its meta slot counts).
    count: u64,
    /// Its live entries, one per key, sorted by key id.
    keys: Vec<Entry>,
}

/// Where a key's live entry of one rank is: 24 bytes, the key itself kept once for
/// every rank (`Ds21Writer::ids`), so that the index of a job of 100,000 ranks
/// is a few bytes per value rather than a map per rank.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The key's id.
    key: u32,
    /// Its value's length (an entry is under a data segment's 4 MiB).
    len: u32,
    /// The entry's global offset.
    at: u64,
    /// A hash of its value.
    hash: u64,
}

impl Run {
    /// The live entry of key `id`.
    fn get(&self, id: u32) -> Option<Entry> {
        self.keys
            .binary_search_by_key(&id, |e| e.key)
            .ok()
            .map(|i| self.keys[i])
    }

    /// Files `e` in place of its key's entry, if any.
    fn set(&mut self, e: Entry) {
        match self.keys.binary_search_by_key(&e.key, |x| x.key) {
            Ok(i) => self.keys[i] = e,
            Err(i) => self.keys.insert(i, e),
        }
    }
}

/// New entries written back to back from `start` (a global offset), each with its
/// place in the index.
struct Chunk {
    start: u64,
    bytes: Vec<u8>,
    keys: Vec<Entry>,
}

impl Chunk {
    /// The global offset past its entries (where its extension slot goes).
    fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }
}

/// The writer of one namespace's data segments: where each rank's entries are and
/// where the next go. Entries are only appended; a key written again with another
/// value gets a new entry and the old one is marked replaced.
#[derive(Debug)]
pub struct Ds21Writer {
    runs: BTreeMap<u32, Run>,
    /// Each key written, with its id (an entry's [`Entry::key`]).
    ids: BTreeMap<Box<[u8]>, u32>,
    /// The global offset of the next free byte.
    free: u64,
    data_segs: u32,
    meta_segs: u32,
}

impl Default for Ds21Writer {
    fn default() -> Self {
        Ds21Writer::new()
    }
}

/// The meta slot of `rank` (WILDCARD: 0).
fn slot_of(rank: u32) -> u64 {
    if rank == Rank::WILDCARD.0 {
        0
    } else {
        u64::from(rank) + 1
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// An entry's bytes: `{size | flags, key hash, key NUL, value}`.
fn entry(key: &[u8], value: &[u8]) -> Vec<u8> {
    let len = 16 + key.len() + 1 + value.len();
    let mut e = Vec::with_capacity(len);
    e.extend_from_slice(&(len as u64).to_le_bytes());
    e.extend_from_slice(&key_hash(key).to_le_bytes());
    e.extend_from_slice(key);
    e.push(0);
    e.extend_from_slice(value);
    e
}

/// An extension slot pointing at `next` (0: the end).
fn ext_slot(next: u64) -> [u8; EXT_SLOT_LEN] {
    let mut s = [0u8; EXT_SLOT_LEN];
    s[0..8].copy_from_slice(&(EXTENSION | EXT_SLOT_LEN as u64).to_le_bytes());
    s[17..25].copy_from_slice(&next.to_le_bytes());
    s
}

/// `global` as (data segment, offset in it).
fn split(global: u64) -> (u32, usize) {
    (
        (global / DATA_SEG_SIZE as u64) as u32,
        (global % DATA_SEG_SIZE as u64) as usize,
    )
}

impl Ds21Writer {
    /// A writer of empty segments (one meta and one data segment).
    pub fn new() -> Ds21Writer {
        Ds21Writer {
            runs: BTreeMap::new(),
            ids: BTreeMap::new(),
            free: 8,
            data_segs: 1,
            meta_segs: 1,
        }
    }

    /// The data segments written so far.
    pub fn data_segments(&self) -> u32 {
        self.data_segs
    }

    /// The meta segments written so far.
    pub fn meta_segments(&self) -> u32 {
        self.meta_segs
    }

    /// Files `entries` (key, packed value: [`value_bytes`]) for `rank` (WILDCARD:
    /// the job), skipping those whose key holds the same value already: the bytes
    /// to write, in an order that is safe under the writer's lock (new entries and
    /// their extension slot first, then what links and counts them). Nothing is
    /// filed when an entry is refused.
    ///
    /// # Errors
    /// [`Ds21Error::BadKey`]; [`Ds21Error::TooLarge`] for an entry that with its
    /// extension slot passes a data segment.
    pub fn append(
        &mut self,
        rank: u32,
        entries: &[(&str, &[u8])],
    ) -> Result<Vec<Patch>, Ds21Error> {
        check(entries)?;
        let counts = (self.meta_segs, self.data_segs);
        let Sorted {
            mut patches,
            invalidate,
            fresh,
        } = self.sort(rank, entries);
        // (An entry is replaced only by a new one.)
        if fresh.is_empty() {
            return Ok(patches);
        }
        let chunks = self.chunk(fresh);
        for (i, c) in chunks.iter().enumerate() {
            let next = chunks.get(i + 1).map_or(0, |c| c.start);
            let mut buf = c.bytes.clone();
            buf.extend_from_slice(&ext_slot(next));
            let (seg, off) = split(c.start);
            patches.push(Patch {
                file: Ds21File::Data(seg),
                at: off,
                bytes: buf,
            });
        }
        for at in &invalidate {
            // The replaced entry's size field: its top byte (0: an entry is under
            // 4 MiB) with bit 62 set.
            let (seg, off) = split(*at);
            patches.push(Patch {
                file: Ds21File::Data(seg),
                at: off + 7,
                bytes: vec![(INVALIDATED >> 56) as u8],
            });
        }
        self.link(rank, chunks, invalidate.len() as u64, &mut patches);
        // The counts of segments, when they grew.
        if (self.meta_segs, self.data_segs) != counts {
            patches.push(Patch {
                file: Ds21File::Initial,
                at: NUM_META_AT,
                bytes: u64::from(self.meta_segs).to_le_bytes().to_vec(),
            });
            patches.push(Patch {
                file: Ds21File::Initial,
                at: NUM_DATA_AT,
                bytes: u64::from(self.data_segs).to_le_bytes().to_vec(),
            });
        }
        Ok(patches)
    }

    /// Sorts `entries` of `rank` by what they need: nothing (the same value), a
    /// value written over the old one of the same size (as OpenPMIx's writer does:
    /// a key put every round does not lengthen its rank's walk), or a new entry
    /// (the old one, if any, to be marked replaced). A key given twice: its last
    /// value alone.
    fn sort(&mut self, rank: u32, entries: &[(&str, &[u8])]) -> Sorted {
        let mut sorted = Sorted {
            patches: Vec::new(),
            invalidate: Vec::new(),
            fresh: Vec::new(),
        };
        let ids: Vec<u32> = entries
            .iter()
            .map(|(key, _)| self.id_of(key.as_bytes()))
            .collect();
        for (i, ((key, value), &id)) in entries.iter().zip(&ids).enumerate() {
            if ids[i + 1..].contains(&id) {
                continue;
            }
            let hash = fnv(value);
            let new = Entry {
                key: id,
                len: value.len() as u32,
                at: 0,
                hash,
            };
            let old = self.runs.get(&rank).and_then(|r| r.get(id));
            match old {
                Some(e) if e.hash == hash => {}
                Some(e) if e.len as usize == value.len() => {
                    let (seg, off) = split(e.at + 16 + key.len() as u64 + 1);
                    sorted.patches.push(Patch {
                        file: Ds21File::Data(seg),
                        at: off,
                        bytes: value.to_vec(),
                    });
                    if let Some(run) = self.runs.get_mut(&rank) {
                        run.set(Entry { hash, ..e });
                    }
                }
                Some(e) => {
                    sorted.invalidate.push(e.at);
                    sorted.fresh.push((new, entry(key.as_bytes(), value)));
                }
                None => sorted.fresh.push((new, entry(key.as_bytes(), value))),
            }
        }
        sorted
    }

    /// Places new entries (each with its bytes) from the free offset on, in as few
    /// chunks as the segments allow: each chunk fits one data segment with the
    /// extension slot that ends it (and links it to the next).
    fn chunk(&mut self, fresh: Vec<(Entry, Vec<u8>)>) -> Vec<Chunk> {
        let mut chunks: Vec<Chunk> = Vec::new();
        for (e, bytes) in fresh {
            let need = bytes.len() + EXT_SLOT_LEN;
            let fits = chunks
                .last()
                .is_some_and(|c| split(c.start).1 + c.bytes.len() + need <= DATA_SEG_SIZE);
            if !fits {
                if let Some(c) = chunks.last() {
                    self.free = c.end() + EXT_SLOT_LEN as u64;
                }
                let (seg, off) = split(self.free);
                if off + need > DATA_SEG_SIZE {
                    self.free = u64::from(seg + 1) * DATA_SEG_SIZE as u64 + 8;
                }
                chunks.push(Chunk {
                    start: self.free,
                    bytes: Vec::new(),
                    keys: Vec::new(),
                });
            }
            if let Some(c) = chunks.last_mut() {
                c.keys.push(Entry { at: c.end(), ..e });
                c.bytes.extend_from_slice(&bytes);
            }
        }
        if let Some(c) = chunks.last() {
            self.free = c.end() + EXT_SLOT_LEN as u64;
        }
        self.data_segs = self.data_segs.max(split(self.free - 1).0 + 1);
        chunks
    }

    /// Links `chunks` to `rank`'s run (its old end's extension slot points at the
    /// first) or starts the run, and writes its meta slot: the count, less the
    /// `replaced` entries, last, so that the slot publishes what it counts.
    fn link(&mut self, rank: u32, chunks: Vec<Chunk>, replaced: u64, patches: &mut Vec<Patch>) {
        let added: u64 = chunks.iter().map(|c| c.keys.len() as u64).sum();
        let first_new = chunks.first().map(|c| c.start);
        let last_ext = chunks.last().map(Chunk::end);
        let meta_slot = slot_of(rank) as usize;
        let meta_seg = (meta_slot / META_SLOTS) as u32;
        self.meta_segs = self.meta_segs.max(meta_seg + 1);
        let meta_at = 8 + META_SLOT_LEN * (meta_slot % META_SLOTS);
        let run = match self.runs.get_mut(&rank) {
            Some(run) => {
                if let (Some(first), Some(ext)) = (first_new, last_ext) {
                    let (seg, off) = split(run.ext);
                    patches.push(Patch {
                        file: Ds21File::Data(seg),
                        at: off + 17,
                        bytes: first.to_le_bytes().to_vec(),
                    });
                    run.ext = ext;
                }
                run.count = run.count + added - replaced;
                patches.push(Patch {
                    file: Ds21File::Meta(meta_seg),
                    at: meta_at + 16,
                    bytes: run.count.to_le_bytes().to_vec(),
                });
                run
            }
            None => {
                let (Some(first), Some(ext)) = (first_new, last_ext) else {
                    return;
                };
                let mut slot_bytes = Vec::with_capacity(META_SLOT_LEN);
                slot_bytes.extend_from_slice(&u64::from(rank).to_le_bytes());
                slot_bytes.extend_from_slice(&first.to_le_bytes());
                slot_bytes.extend_from_slice(&added.to_le_bytes());
                patches.push(Patch {
                    file: Ds21File::Meta(meta_seg),
                    at: meta_at,
                    bytes: slot_bytes,
                });
                self.runs.entry(rank).or_insert(Run {
                    ext,
                    count: added,
                    keys: Vec::new(),
                })
            }
        };
        for c in chunks {
            for e in c.keys {
                run.set(e);
            }
        }
        run.keys.shrink_to_fit();
    }

    /// The id of `key`, given it now if it has none.
    fn id_of(&mut self, key: &[u8]) -> u32 {
        if let Some(&id) = self.ids.get(key) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(key.into(), id);
        id
    }
}

/// Refuses an entry whose key is empty or holds a NUL, or that with its extension
/// slot would pass a data segment.
fn check(entries: &[(&str, &[u8])]) -> Result<(), Ds21Error> {
    for (key, value) in entries {
        if key.is_empty() || key.contains('\0') {
            return Err(Ds21Error::BadKey);
        }
        let len = 16 + key.len() + 1 + value.len() + EXT_SLOT_LEN;
        if len > DATA_SEG_SIZE - 8 {
            return Err(Ds21Error::TooLarge { len });
        }
    }
    Ok(())
}

/// One call's entries, sorted by what they need ([`Ds21Writer::sort`]).
struct Sorted {
    /// Values written over old ones of the same size, in place.
    patches: Vec<Patch>,
    /// The offsets of old entries that new ones replace.
    invalidate: Vec<u64>,
    /// New entries (their offsets still to come) and their bytes.
    fresh: Vec<(Entry, Vec<u8>)>,
}

#[cfg(test)]
mod tests;
