//! Member sets (fixed-capacity bitsets over a group's initial membership) and rosters
//! (the initial membership itself, with O(1) lookup of a process's index for the usual
//! whole-job or rank-range groups).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;
use core::ops::Range;

use super::id::{FIRST_RESERVED_RANK, Nspace, ProcId};
use crate::bits;
use crate::status::{PmixError, Status};

// The group and fault-tolerance machines combine member sets word by word with these.
pub(crate) use crate::bits::{next_set, tail_mask};

/// The largest group (and process-state tracker) this crate creates: 2^24 members.
///
/// The issue asks for at least 1,048,576; 2^24 keeps a tracker of the largest group
/// under 100 MiB, and a hostile size cannot ask for gigabytes.
pub const MAX_MEMBERS: u32 = 1 << 24;

/// Memory for a group or tracker could not be obtained (`PMIX_ERR_NOMEM`). Only
/// creation allocates, so only creation reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("out of memory for {bytes} bytes of group state")]
pub struct NoMemory {
    /// The size of the allocation that failed.
    pub bytes: usize,
}

impl PmixError for NoMemory {
    fn status(&self) -> Status {
        Status::ERR_NOMEM
    }
}

/// A boxed slice of `n` copies of `value`, or [`NoMemory`] instead of aborting.
pub(crate) fn try_boxed<T: Clone>(n: usize, value: T) -> Result<Box<[T]>, NoMemory> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| NoMemory {
        bytes: n.saturating_mul(size_of::<T>()),
    })?;
    v.resize(n, value);
    Ok(v.into_boxed_slice())
}

/// An index at or beyond a [`MemberSet`]'s capacity (`PMIX_ERR_BAD_PARAM`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("member index {index} is outside a set of capacity {capacity}")]
pub struct OutOfRange {
    /// The index given.
    pub index: u32,
    /// The set's capacity.
    pub capacity: u32,
}

impl PmixError for OutOfRange {
    fn status(&self) -> Status {
        Status::ERR_BAD_PARAM
    }
}

/// A set of member indexes `0..capacity`, as a bitset sized once at creation.
///
/// Insertions, removals, membership tests and [`len`](MemberSet::len) are O(1) and
/// never allocate; iteration is in ascending order. The word-level operations are the
/// crate's shared bitset code (`bits`); this type owns the capacity and the count.
#[derive(Clone, PartialEq, Eq)]
pub struct MemberSet {
    words: Box<[u64]>,
    capacity: u32,
    len: u32,
}

impl MemberSet {
    /// An empty set able to hold `0..capacity`.
    ///
    /// # Errors
    /// [`NoMemory`] if its `capacity / 8` bytes cannot be allocated.
    pub fn new(capacity: u32) -> Result<MemberSet, NoMemory> {
        let words = try_boxed(bits::words_for(capacity), 0u64)?;
        Ok(MemberSet {
            words,
            capacity,
            len: 0,
        })
    }

    /// The set `{0, …, capacity-1}`.
    ///
    /// # Errors
    /// [`NoMemory`] as [`MemberSet::new`].
    pub fn full(capacity: u32) -> Result<MemberSet, NoMemory> {
        let mut s = MemberSet::new(capacity)?;
        s.fill();
        Ok(s)
    }

    /// The number of indexes the set can hold (fixed at creation).
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The number of members in the set, in O(1).
    pub fn len(&self) -> u32 {
        self.len
    }

    /// `true` if the set has no member.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `true` if `index` is in the set (`false` for indexes beyond the capacity).
    pub fn contains(&self, index: u32) -> bool {
        bits::contains(&self.words, index)
    }

    /// Adds `index`; returns whether it was absent.
    ///
    /// # Errors
    /// [`OutOfRange`] if `index >= capacity`; the set is unchanged.
    pub fn insert(&mut self, index: u32) -> Result<bool, OutOfRange> {
        self.check(index)?;
        let added = bits::insert(&mut self.words, index);
        self.len += u32::from(added);
        Ok(added)
    }

    /// Removes `index`; returns whether it was present.
    ///
    /// # Errors
    /// [`OutOfRange`] if `index >= capacity`; the set is unchanged.
    pub fn remove(&mut self, index: u32) -> Result<bool, OutOfRange> {
        self.check(index)?;
        let removed = bits::remove(&mut self.words, index);
        self.len -= u32::from(removed);
        Ok(removed)
    }

    /// Removes every member (O(capacity / 64)).
    pub fn clear(&mut self) {
        self.words.fill(0);
        self.len = 0;
    }

    /// Adds every index `0..capacity` (O(capacity / 64)).
    pub fn fill(&mut self) {
        bits::fill(&mut self.words, self.capacity);
        self.len = self.capacity;
    }

    /// Makes `self` equal to `other`, without allocating.
    ///
    /// # Errors
    /// [`OutOfRange`] (naming `other`'s capacity) if the capacities differ.
    pub fn copy_from(&mut self, other: &MemberSet) -> Result<(), OutOfRange> {
        if self.capacity != other.capacity {
            return Err(OutOfRange {
                index: other.capacity,
                capacity: self.capacity,
            });
        }
        self.words.copy_from_slice(&other.words);
        self.len = other.len;
        Ok(())
    }

    /// The members in ascending order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(bits::Ones::new(&self.words))
    }

    /// The smallest member that is `>= from`, if any.
    pub fn next_from(&self, from: u32) -> Option<u32> {
        bits::next_set(&self.words, from, |_, w| w)
    }

    /// The number of members below `index` (O(index / 64)).
    pub fn count_below(&self, index: u32) -> u32 {
        bits::count_below(&self.words, index.min(self.capacity))
    }

    /// The bitset words, least significant bit first (bits beyond the capacity are 0).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Rewrites every word through `f(word_index, old_word)`, then recounts. The
    /// bits beyond the capacity are cleared whatever `f` returns.
    pub(crate) fn update_words(&mut self, mut f: impl FnMut(usize, u64) -> u64) {
        let mut len = 0;
        let last = self.words.len().wrapping_sub(1);
        let tail = bits::tail_mask(self.capacity);
        for (i, w) in self.words.iter_mut().enumerate() {
            let mut v = f(i, *w);
            if i == last {
                v &= tail;
            }
            *w = v;
            len += v.count_ones();
        }
        self.len = len;
    }

    fn check(&self, index: u32) -> Result<(), OutOfRange> {
        if index >= self.capacity {
            return Err(OutOfRange {
                index,
                capacity: self.capacity,
            });
        }
        Ok(())
    }
}

impl fmt::Debug for MemberSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MemberSet({}/{}) ", self.len, self.capacity)?;
        f.debug_set().entries(self.iter().take(64)).finish()
    }
}

impl<'a> IntoIterator for &'a MemberSet {
    type Item = u32;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Ascending iterator over a [`MemberSet`].
#[derive(Debug, Clone)]
pub struct Iter<'a>(bits::Ones<'a>);

impl Iterator for Iter<'_> {
    type Item = u32;
    #[inline]
    fn next(&mut self) -> Option<u32> {
        self.0.next()
    }
}

/// Why a membership list was refused (`PMIX_ERR_BAD_PARAM`, or `PMIX_ERR_NOMEM`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RosterError {
    /// No member at all.
    #[error("the membership list is empty")]
    Empty,
    /// More than [`MAX_MEMBERS`] members.
    #[error(
        "the membership list has {len} members, over the limit of {}",
        MAX_MEMBERS
    )]
    TooMany {
        /// The number of members given.
        len: usize,
    },
    /// A process listed twice (entries `first` and `second` of the list).
    #[error("entries {first} and {second} of the membership list name the same process")]
    Duplicate {
        /// Index of the first occurrence in the list given.
        first: usize,
        /// Index of the second occurrence.
        second: usize,
    },
    /// A reserved rank (`PMIX_RANK_WILDCARD` and the like) in the list.
    #[error("entry {at} of the membership list has the reserved rank {rank:#x}")]
    ReservedRank {
        /// Index in the list given.
        at: usize,
        /// The rank.
        rank: u32,
    },
    /// Memory for the roster could not be allocated.
    #[error(transparent)]
    NoMemory(#[from] NoMemory),
}

impl PmixError for RosterError {
    fn status(&self) -> Status {
        match self {
            RosterError::NoMemory(e) => e.status(),
            _ => Status::ERR_BAD_PARAM,
        }
    }
}

/// The members of one namespace, a contiguous range of member indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    nspace: Nspace,
    /// Index of the run's first member.
    start: u32,
    len: u32,
    /// The run's lowest rank.
    lo: u32,
    /// `None` if the run's ranks are exactly `lo..lo+len` (member index is then
    /// `start + rank - lo`, O(1)); else the offset of its sorted ranks in `sparse`.
    sparse: Option<u32>,
}

/// A group's initial membership, in canonical order: by namespace (byte order), then
/// rank. A member's index in this order is its group rank, so every process that
/// lists the same set of processes (in any order) numbers them the same way.
///
/// Looking up a process is O(log namespaces) for a namespace whose ranks in the group
/// are contiguous (a whole job, a rank range), O(log members) otherwise. A dense
/// roster costs no memory per member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roster {
    runs: Box<[Run]>,
    sparse: Box<[u32]>,
    len: u32,
}

impl Roster {
    /// The roster of the listed processes (any order).
    ///
    /// # Errors
    /// [`RosterError`]: an empty list, more than [`MAX_MEMBERS`] entries, a process
    /// listed twice, a reserved rank, or no memory.
    pub fn new(members: &[ProcId]) -> Result<Roster, RosterError> {
        if members.is_empty() {
            return Err(RosterError::Empty);
        }
        if members.len() > MAX_MEMBERS as usize {
            return Err(RosterError::TooMany { len: members.len() });
        }
        if let Some(at) = members.iter().position(|p| p.rank >= FIRST_RESERVED_RANK) {
            return Err(RosterError::ReservedRank {
                at,
                rank: members[at].rank,
            });
        }
        let mut order: Vec<u32> = Vec::new();
        order
            .try_reserve_exact(members.len())
            .map_err(|_| NoMemory {
                bytes: members.len() * 4,
            })?;
        order.extend(0..members.len() as u32);
        order.sort_unstable_by(|&a, &b| {
            members[a as usize]
                .cmp(&members[b as usize])
                .then(a.cmp(&b))
        });
        for pair in order.windows(2) {
            let (a, b) = (pair[0] as usize, pair[1] as usize);
            if members[a] == members[b] {
                return Err(RosterError::Duplicate {
                    first: a.min(b),
                    second: a.max(b),
                });
            }
        }
        let mut runs = Vec::new();
        let mut sparse: Vec<u32> = Vec::new();
        let mut i = 0;
        while i < order.len() {
            let ns = members[order[i] as usize].nspace;
            let mut j = i;
            while j < order.len() && members[order[j] as usize].nspace == ns {
                j += 1;
            }
            let ranks = order[i..j].iter().map(|&k| members[k as usize].rank);
            let lo = members[order[i] as usize].rank;
            let hi = members[order[j - 1] as usize].rank;
            let len = (j - i) as u32;
            let dense = hi - lo == len - 1;
            let sparse_at = if dense {
                None
            } else {
                let at = sparse.len() as u32;
                sparse
                    .try_reserve(j - i)
                    .map_err(|_| NoMemory { bytes: (j - i) * 4 })?;
                sparse.extend(ranks);
                Some(at)
            };
            runs.push(Run {
                nspace: ns,
                start: i as u32,
                len,
                lo,
                sparse: sparse_at,
            });
            i = j;
        }
        Ok(Roster {
            runs: runs.into_boxed_slice(),
            sparse: sparse.into_boxed_slice(),
            len: members.len() as u32,
        })
    }

    /// The roster of ranks `ranks` of one namespace (a whole job or a slice of one),
    /// without a per-member list.
    ///
    /// # Errors
    /// [`RosterError::Empty`] for an empty range, [`RosterError::TooMany`] beyond
    /// [`MAX_MEMBERS`], [`RosterError::ReservedRank`] if it reaches reserved ranks.
    pub fn from_ranks(nspace: Nspace, ranks: Range<u32>) -> Result<Roster, RosterError> {
        if ranks.is_empty() {
            return Err(RosterError::Empty);
        }
        let len = ranks.end - ranks.start;
        if len > MAX_MEMBERS {
            return Err(RosterError::TooMany { len: len as usize });
        }
        if ranks.end > FIRST_RESERVED_RANK {
            let rank = ranks.start.max(FIRST_RESERVED_RANK);
            return Err(RosterError::ReservedRank {
                at: (rank - ranks.start) as usize,
                rank,
            });
        }
        let run = Run {
            nspace,
            start: 0,
            len,
            lo: ranks.start,
            sparse: None,
        };
        Ok(Roster {
            runs: Box::new([run]),
            sparse: Box::new([]),
            len,
        })
    }

    /// The number of members.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Always `false`: a roster has at least one member.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The member index (group rank) of `proc`, or `None` if it is not in the roster.
    pub fn index_of(&self, proc: &ProcId) -> Option<u32> {
        let r = self
            .runs
            .binary_search_by(|run| run.nspace.cmp(&proc.nspace))
            .ok()?;
        let run = &self.runs[r];
        match run.sparse {
            None => {
                let off = proc.rank.checked_sub(run.lo)?;
                (off < run.len).then_some(run.start + off)
            }
            Some(at) => {
                let ranks = &self.sparse[at as usize..(at + run.len) as usize];
                ranks
                    .binary_search(&proc.rank)
                    .ok()
                    .map(|k| run.start + k as u32)
            }
        }
    }

    /// The process with member index `index`, or `None` beyond the roster.
    pub fn get(&self, index: u32) -> Option<ProcId> {
        (index < self.len).then(|| self.proc_at(index))
    }

    /// The process with member index `index`, clamped into the roster (callers pass
    /// indexes they got from it).
    pub(crate) fn proc_at(&self, index: u32) -> ProcId {
        let index = index.min(self.len - 1);
        let r = self
            .runs
            .partition_point(|run| run.start <= index)
            .saturating_sub(1);
        let run = &self.runs[r];
        let off = index - run.start;
        let rank = match run.sparse {
            None => run.lo + off,
            Some(at) => self.sparse[(at + off) as usize],
        };
        ProcId {
            nspace: run.nspace,
            rank,
        }
    }

    /// Heap bytes the roster holds.
    pub fn heap_bytes(&self) -> usize {
        self.runs.len() * size_of::<Run>() + self.sparse.len() * 4
    }

    /// Every member in index order.
    pub fn iter(&self) -> impl Iterator<Item = ProcId> + '_ {
        (0..self.len).filter_map(move |i| self.get(i))
    }
}
