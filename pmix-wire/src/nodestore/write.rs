//! [`SegmentBuilder`]: entries in, a segment's bytes out (the layout of
//! [`super`]).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{ENTRY_LEN, HEADER_LEN, MAGIC, MAX_LEN, StoreError, VERSION, WILDCARD, field};
use crate::buf::{Element, Reader, Writer};
use crate::keys;
use crate::limits::Limits;
use crate::msg::{JobInfo, JobItem};
use crate::types::BufferType;
use crate::value::{Info, Rank, Value};

/// Builds one segment: entries of `(rank or WILDCARD, key, value)` in any order,
/// then [`SegmentBuilder::finish`] writes the bytes in one pass.
///
/// Each value is encoded as it is pushed, so the builder holds the encoded bytes
/// and 16 bytes per entry. A key pushed twice for one rank is kept twice: a reader
/// finds the first pushed ([`super::Record::raw_all`] gives both).
///
/// ```
/// use pmix_wire::nodestore::{Segment, SegmentBuilder, WILDCARD};
/// use pmix_wire::{keys, Value};
///
/// let mut b = SegmentBuilder::new("job", 0)?;
/// b.push(WILDCARD, keys::JOB_SIZE, &Value::Uint32(2))?;
/// b.push(1, keys::HOSTNAME, &Value::string("node1"))?;
/// b.push(0, keys::HOSTNAME, &Value::string("node0"))?;
/// let bytes = b.finish()?;
///
/// let seg = Segment::parse(&bytes[..])?;
/// assert_eq!(seg.get_u32(WILDCARD, keys::JOB_SIZE), Some(Ok(2)));
/// assert_eq!(seg.get_str(1, keys::HOSTNAME), Some(Ok("node1")));
/// assert_eq!(seg.get(0, keys::HOSTNAME), Some(Ok(Value::string("node0"))));
/// assert_eq!(seg.get(2, keys::HOSTNAME), None);
/// # Ok::<(), pmix_wire::nodestore::StoreError>(())
/// ```
#[derive(Clone, Debug)]
pub struct SegmentBuilder {
    nspace: String,
    generation: u64,
    keys: Interner,
    entries: Vec<Pending>,
    /// Every value's bytes, in the order pushed.
    values: Vec<u8>,
    /// A value's encoding, reused.
    scratch: Vec<u8>,
}

/// One entry pushed: where its value's bytes are in [`SegmentBuilder::values`].
#[derive(Clone, Copy, Debug)]
struct Pending {
    rank: u32,
    key: u32,
    start: u32,
    len: u32,
}

impl SegmentBuilder {
    /// A builder of generation `generation` of namespace `nspace` (0: the job
    /// segment; then one per collecting fence).
    ///
    /// # Errors
    /// [`StoreError::BadNamespace`] for an empty name, one of more than
    /// [`pmix_core::MAX_NSLEN`] bytes, or one holding a NUL.
    pub fn new(nspace: &str, generation: u64) -> Result<SegmentBuilder, StoreError> {
        check_nspace(nspace.as_bytes())?;
        Ok(SegmentBuilder {
            nspace: String::from(nspace),
            generation,
            keys: Interner::default(),
            entries: Vec::new(),
            values: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// How many entries were pushed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry was pushed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Files `value` under `key` for `rank` ([`super::WILDCARD`]: the job record).
    ///
    /// # Errors
    /// [`StoreError::BadRank`] for a special rank other than WILDCARD (UNDEF,
    /// LOCAL_NODE, …); [`StoreError::BadKey`] for a key a peer would refuse (empty,
    /// longer than [`keys::MAX_KEYLEN`], holding a NUL); [`StoreError::Value`] for a
    /// value that cannot be encoded; [`StoreError::TooLarge`] once the values pass
    /// [`super::MAX_LEN`] bytes.
    pub fn push(&mut self, rank: u32, key: &str, value: &Value) -> Result<(), StoreError> {
        self.check(rank, key)?;
        let mut w = Writer::append_to(core::mem::take(&mut self.scratch), BufferType::NonDescribed);
        value.encode(&mut w);
        let mut bytes = w
            .finish()
            .map_err(|error| StoreError::Value { offset: 0, error })?;
        let r = self.add(rank, key, &bytes);
        bytes.clear();
        self.scratch = bytes;
        r
    }

    /// Files a value already encoded (`bytes`: its type tag and element, as
    /// [`super::Segment::raw`] gives it) under `key` for `rank`. The bytes are
    /// checked to decode as exactly one value.
    ///
    /// # Errors
    /// As [`SegmentBuilder::push`]; [`StoreError::Value`] for bytes that are not one
    /// value.
    pub fn push_encoded(&mut self, rank: u32, key: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.check(rank, key)?;
        let mut r = Reader::new(bytes, BufferType::NonDescribed, Limits::DEFAULT);
        Value::decode(&mut r)
            .and_then(|_| r.finish())
            .map_err(|error| StoreError::Value { offset: 0, error })?;
        self.add(rank, key, bytes)
    }

    /// Files what a REQ reply (the job-info blob, docs/wire.md §6.1.1) holds: its
    /// job-level values under WILDCARD, in order; then, under WILDCARD too, the
    /// first node array's keys (this node's: a server writes its own first), the
    /// session array's and the first app array's, each key as it is; every node
    /// array, this node's first, as one `pmix.node.arr` value each and every other
    /// app array as one `pmix.app.arr` value (DATA_ARRAY of INFO, in order); and
    /// each `pmix.pblob`'s values under its rank. A job-level get then finds a key
    /// where a client's own store finds it (job values, then this node's, the
    /// session's, the app's), and a node-level get finds any node's array whole
    /// (this node's included, so a reader can tell its keys from the job's).
    ///
    /// # Errors
    /// A key that is not UTF-8 ([`StoreError::BadKey`]), a per-process blob whose
    /// values do not decode ([`StoreError::Value`]), and
    /// [`SegmentBuilder::push`]'s errors.
    pub fn push_job_info(&mut self, job: &JobInfo) -> Result<(), StoreError> {
        let mut session: Option<&[Info]> = None;
        let mut nodes: Vec<&[Info]> = Vec::new();
        let mut apps: Vec<&[Info]> = Vec::new();
        for item in &job.items {
            match item {
                JobItem::Value(k) => self.push(WILDCARD, self.utf8(k.key.as_str())?, &k.value)?,
                JobItem::Session(v) => session = Some(v),
                JobItem::Node(v) => nodes.push(v),
                JobItem::App(v) => apps.push(v),
                JobItem::Proc(p) => {
                    let kvals = p
                        .kvals()
                        .map_err(|error| StoreError::Value { offset: 0, error })?;
                    for k in kvals.iter() {
                        self.push(p.rank.0, self.utf8(k.key.as_str())?, &k.value)?;
                    }
                }
            }
        }
        let flat = nodes
            .first()
            .into_iter()
            .chain(session.as_ref())
            .chain(apps.first());
        for arr in flat {
            for i in arr.iter() {
                self.push(WILDCARD, self.utf8(i.key.as_str())?, &i.value)?;
            }
        }
        let arrays = nodes
            .iter()
            .map(|a| (keys::NODE_INFO_ARRAY, a))
            .chain(apps.iter().skip(1).map(|a| (keys::APP_INFO_ARRAY, a)));
        for (key, arr) in arrays {
            let v = Value::DataArray(crate::value::DataArray::infos(arr.iter().cloned()));
            self.push(WILDCARD, key, &v)?;
        }
        Ok(())
    }

    /// `key` as a `&str`, or the error of a key that is not UTF-8.
    fn utf8<'k>(&self, key: Option<&'k str>) -> Result<&'k str, StoreError> {
        key.ok_or(StoreError::BadKey {
            index: self.entries.len() as u64,
            why: "is not UTF-8",
        })
    }

    fn check(&self, rank: u32, key: &str) -> Result<(), StoreError> {
        if rank >= Rank::VALID.0 && rank != WILDCARD {
            return Err(StoreError::BadRank { rank });
        }
        if !keys::is_valid(key) {
            let why = if key.is_empty() {
                "is empty"
            } else if key.contains('\0') {
                "holds a NUL"
            } else {
                "is longer than PMIX_MAX_KEYLEN (511 bytes)"
            };
            return Err(StoreError::BadKey {
                index: self.entries.len() as u64,
                why,
            });
        }
        Ok(())
    }

    fn add(&mut self, rank: u32, key: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let start = self.values.len();
        let end = start as u64 + bytes.len() as u64;
        if end > MAX_LEN {
            return Err(StoreError::TooLarge {
                what: "the values",
                len: end,
            });
        }
        let key = self.keys.intern(key);
        self.values.extend_from_slice(bytes);
        // Both fit a u32: `end` does.
        self.entries.push(Pending {
            rank,
            key,
            start: start as u32,
            len: bytes.len() as u32,
        });
        Ok(())
    }

    /// The segment's bytes.
    ///
    /// # Errors
    /// [`StoreError::TooLarge`] when they would pass [`super::MAX_LEN`] (then split
    /// the entries over two segments).
    pub fn finish(self) -> Result<Vec<u8>, StoreError> {
        let SegmentBuilder {
            nspace,
            generation,
            keys,
            entries,
            values,
            ..
        } = self;
        let names = keys.names;
        // The dictionary, sorted; `remap[id]` is a key's place in it.
        let mut order: Vec<u32> = (0..names.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            names[a as usize]
                .as_bytes()
                .cmp(names[b as usize].as_bytes())
        });
        let mut remap = vec![0u32; names.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old as usize] = new as u32;
        }
        // The entries grouped by rank (a counting sort, stable), the job's apart.
        let rank_count = entries
            .iter()
            .filter(|e| e.rank != WILDCARD)
            .map(|e| u64::from(e.rank) + 1)
            .max()
            .unwrap_or(0);
        let key_bytes_len: u64 = names.iter().map(|k| k.len() as u64).sum();
        let ns_end = (HEADER_LEN + nspace.len()) as u64;
        let key_index = ns_end.next_multiple_of(4);
        let key_bytes = key_index + 4 * (names.len() as u64 + 1);
        let rank_table = (key_bytes + key_bytes_len).next_multiple_of(4);
        let job = rank_table + 4 * (rank_count + 1);
        // Checked before the rank table's counts are allocated.
        if job > MAX_LEN {
            return Err(StoreError::TooLarge {
                what: "the rank table",
                len: job,
            });
        }
        let n = rank_count as usize;
        let mut starts = vec![0u32; n + 1];
        let mut job_entries: Vec<u32> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if e.rank == WILDCARD {
                job_entries.push(i as u32);
            } else {
                starts[e.rank as usize + 1] += 1;
            }
        }
        for r in 0..n {
            starts[r + 1] += starts[r];
        }
        let mut by_rank = vec![0u32; starts[n] as usize];
        let mut next = starts.clone();
        for (i, e) in entries.iter().enumerate() {
            if e.rank != WILDCARD {
                let slot = &mut next[e.rank as usize];
                by_rank[*slot as usize] = i as u32;
                *slot += 1;
            }
        }
        // Each record's entries by key id (and, for one key, in the order pushed).
        let key_of = |i: &u32| (remap[entries[*i as usize].key as usize], *i);
        job_entries.sort_unstable_by_key(key_of);
        for r in 0..n {
            by_rank[starts[r] as usize..starts[r + 1] as usize].sort_unstable_by_key(key_of);
        }
        let record_len = |ids: &[u32]| -> u64 {
            if ids.is_empty() {
                return 0;
            }
            let vals: u64 = ids
                .iter()
                .map(|&i| u64::from(entries[i as usize].len))
                .sum();
            4 + ENTRY_LEN as u64 * ids.len() as u64 + vals
        };
        let job_len = record_len(&job_entries);
        let mut total = job + job_len;
        for r in 0..n {
            total += record_len(&by_rank[starts[r] as usize..starts[r + 1] as usize]);
        }
        if total > MAX_LEN {
            return Err(StoreError::TooLarge {
                what: "the segment",
                len: total,
            });
        }

        // Everything fits a u32 from here (total does).
        let mut out = Vec::with_capacity(total as usize);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        out.extend_from_slice(&total.to_le_bytes());
        out.extend_from_slice(&generation.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes()); // the checksum, below
        for v in [
            0, // flags
            nspace.len() as u32,
            names.len() as u32,
            key_index as u32,
            key_bytes as u32,
            key_bytes_len as u32,
            rank_count as u32,
            rank_table as u32,
            job as u32,
            job_len as u32,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&0u64.to_le_bytes()); // reserved
        debug_assert_eq!(out.len(), HEADER_LEN);
        debug_assert_eq!(field::RESERVED + 8, HEADER_LEN);
        out.extend_from_slice(nspace.as_bytes());
        out.resize(key_index as usize, 0);
        let mut at = 0u32;
        out.extend_from_slice(&at.to_le_bytes());
        for &old in &order {
            at += names[old as usize].len() as u32;
            out.extend_from_slice(&at.to_le_bytes());
        }
        for &old in &order {
            out.extend_from_slice(names[old as usize].as_bytes());
        }
        out.resize(rank_table as usize, 0);
        let mut at = job + job_len;
        out.extend_from_slice(&(at as u32).to_le_bytes());
        for r in 0..n {
            at += record_len(&by_rank[starts[r] as usize..starts[r + 1] as usize]);
            out.extend_from_slice(&(at as u32).to_le_bytes());
        }
        let write_record = |out: &mut Vec<u8>, ids: &[u32]| {
            if ids.is_empty() {
                return;
            }
            out.extend_from_slice(&(ids.len() as u32).to_le_bytes());
            let mut off = (out.len() + ENTRY_LEN * ids.len()) as u32;
            for &i in ids {
                let e = &entries[i as usize];
                out.extend_from_slice(&remap[e.key as usize].to_le_bytes());
                out.extend_from_slice(&off.to_le_bytes());
                off += e.len;
            }
            for &i in ids {
                let e = &entries[i as usize];
                out.extend_from_slice(&values[e.start as usize..(e.start + e.len) as usize]);
            }
        };
        write_record(&mut out, &job_entries);
        for r in 0..n {
            write_record(
                &mut out,
                &by_rank[starts[r] as usize..starts[r + 1] as usize],
            );
        }
        debug_assert_eq!(out.len() as u64, total);
        let sum = super::checksum(&out).unwrap_or_default();
        out[field::CHECKSUM..field::CHECKSUM + 8].copy_from_slice(&sum.to_le_bytes());
        Ok(out)
    }
}

/// Checks a namespace's bytes: 1 to `MAX_NSLEN`, UTF-8, no NUL.
pub(crate) fn check_nspace(ns: &[u8]) -> Result<&str, StoreError> {
    let why = if ns.is_empty() {
        "is empty"
    } else if ns.len() > pmix_core::MAX_NSLEN {
        "is longer than PMIX_MAX_NSLEN (255 bytes)"
    } else if ns.contains(&0) {
        "holds a NUL"
    } else {
        match core::str::from_utf8(ns) {
            Ok(s) => return Ok(s),
            Err(_) => "is not UTF-8",
        }
    };
    Err(StoreError::BadNamespace { why })
}

/// The distinct keys pushed, each with an id (the order of first push), found by an
/// open-addressing hash table.
#[derive(Clone, Debug, Default)]
struct Interner {
    names: Vec<Box<str>>,
    /// 0: empty; else a key's id + 1. A power of two long, at most half full.
    slots: Vec<u32>,
}

impl Interner {
    fn hash(key: &str) -> u64 {
        let mut h = super::Fnv::new();
        h.write(key.as_bytes());
        h.0
    }

    fn intern(&mut self, key: &str) -> u32 {
        if (self.names.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = Self::hash(key) as usize & mask;
        loop {
            match self.slots[i] {
                0 => {
                    let id = self.names.len() as u32;
                    self.names.push(Box::from(key));
                    self.slots[i] = id + 1;
                    return id;
                }
                s if &*self.names[s as usize - 1] == key => return s - 1,
                _ => i = (i + 1) & mask,
            }
        }
    }

    fn grow(&mut self) {
        let len = (self.slots.len() * 2).max(64);
        let mut slots = vec![0u32; len];
        for (id, name) in self.names.iter().enumerate() {
            let mut i = Self::hash(name) as usize & (len - 1);
            while slots[i] != 0 {
                i = (i + 1) & (len - 1);
            }
            slots[i] = id as u32 + 1;
        }
        self.slots = slots;
    }
}
