//! The pure half of `validate_global`, agreement and shrink: a contribution value,
//! its combine (associative, commutative) and the decision every survivor reaches.

use core::fmt;

use super::FtError;
use crate::group::{MemberSet, next_set, tail_mask};
use crate::status::{PmixError, Status};

/// A partial or complete combination of contributions to one exchange
/// (`validate_global`, agreement or shrink) over a group of `size` members.
///
/// [`AgreeValue::new`] is the identity of [`AgreeValue::combine`]; a tracker adds
/// its own contribution with [`Tracker::contribute`](super::Tracker::contribute).
/// Combining is a union of contributors and known failures, an intersection of
/// acknowledged sets and an AND of flags: associative and commutative, so any
/// reduction tree or arrival order gives the same value. It costs four bits per
/// member, allocated once.
#[derive(Clone, PartialEq, Eq)]
pub struct AgreeValue {
    pub(super) flag: u32,
    pub(super) contributors: MemberSet,
    pub(super) failed: MemberSet,
    pub(super) acked_all: MemberSet,
    pub(super) left: MemberSet,
}

impl AgreeValue {
    /// The empty combination (no contributor, flag all ones) for a group of `size`.
    ///
    /// # Errors
    /// [`FtError::Empty`], [`FtError::TooLarge`], [`FtError::NoMemory`].
    pub fn new(size: u32) -> Result<AgreeValue, FtError> {
        super::check_size(size)?;
        Ok(AgreeValue {
            flag: u32::MAX,
            contributors: MemberSet::new(size)?,
            failed: MemberSet::new(size)?,
            acked_all: MemberSet::full(size)?,
            left: MemberSet::new(size)?,
        })
    }

    /// Back to the empty combination, without allocating.
    pub fn reset(&mut self) {
        self.flag = u32::MAX;
        self.contributors.clear();
        self.failed.clear();
        self.acked_all.fill();
        self.left.clear();
    }

    /// The group size.
    pub fn size(&self) -> u32 {
        self.contributors.capacity()
    }

    /// Heap bytes the value holds (four bitsets, allocated at creation).
    pub fn heap_bytes(&self) -> usize {
        [
            &self.contributors,
            &self.failed,
            &self.acked_all,
            &self.left,
        ]
        .iter()
        .map(|s| s.words().len() * 8)
        .sum()
    }

    /// The members whose contribution is in.
    pub fn contributors(&self) -> &MemberSet {
        &self.contributors
    }

    /// The AND of the contributed flags (all ones when none).
    pub fn flag(&self) -> u32 {
        self.flag
    }

    /// Adds `other`'s contributions. O(size / 64), no allocation.
    ///
    /// # Errors
    /// [`FtError::SizeMismatch`]; [`FtError::DuplicateContribution`] if a member
    /// contributed to both (nothing changes then).
    pub fn combine(&mut self, other: &AgreeValue) -> Result<(), FtError> {
        self.same_size(other.size())?;
        let (a, b) = (self.contributors.words(), other.contributors.words());
        if let Some(rank) = next_set(a, 0, |i, w| w & b[i]) {
            return Err(FtError::DuplicateContribution { rank });
        }
        self.flag &= other.flag;
        let o = other.contributors.words();
        self.contributors.update_words(|i, w| w | o[i]);
        let o = other.failed.words();
        self.failed.update_words(|i, w| w | o[i]);
        let o = other.acked_all.words();
        self.acked_all.update_words(|i, w| w & o[i]);
        let o = other.left.words();
        self.left.update_words(|i, w| w | o[i]);
        Ok(())
    }

    /// Adds a contribution another member made (received as [`Contribution`]: its
    /// rank, flag and three rank sets), as [`AgreeValue::combine`] would add a value
    /// holding only it. O(size / 64 + listed ranks), no allocation.
    ///
    /// # Errors
    /// [`FtError::RankOutOfRange`] for a contributor not below the size;
    /// [`FtError::DuplicateContribution`] if its contribution is already in;
    /// [`FtError::BadContribution`] for a list not strictly ascending, a rank not
    /// below the size, or a bitmap of another length or with bits past the size.
    /// Nothing changes on an error.
    pub fn add(&mut self, c: &Contribution<'_>) -> Result<(), FtError> {
        let size = self.size();
        if c.rank >= size {
            return Err(FtError::RankOutOfRange { rank: c.rank, size });
        }
        if self.contributors.contains(c.rank) {
            return Err(FtError::DuplicateContribution { rank: c.rank });
        }
        let nwords = self.contributors.words().len();
        for set in [c.failed, c.acked, c.left] {
            if !set.is_valid(size, nwords) {
                return Err(FtError::BadContribution { rank: c.rank });
            }
        }
        let _ = self.contributors.insert(c.rank);
        self.flag &= c.flag;
        let mut at = 0;
        self.failed
            .update_words(|i, w| w | c.failed.word(i, &mut at));
        let mut at = 0;
        self.acked_all
            .update_words(|i, w| w & c.acked.word(i, &mut at));
        let mut at = 0;
        self.left.update_words(|i, w| w | c.left.word(i, &mut at));
        Ok(())
    }

    /// Records that `rank` left the group gracefully before contributing (the
    /// runtime saw its `PMIX_GROUP_LEFT` first): it will not count as failed.
    ///
    /// # Errors
    /// [`FtError::RankOutOfRange`].
    pub fn mark_left(&mut self, rank: u32) -> Result<(), FtError> {
        let size = self.size();
        self.left
            .insert(rank)
            .map_err(|_| FtError::RankOutOfRange { rank, size })?;
        Ok(())
    }

    /// The decision this combination leads to. Every survivor that waited for each
    /// member's contribution or departure holds the same combination, hence decides
    /// the same.
    pub fn decide(&self) -> Decision<'_> {
        Decision { value: self }
    }

    pub(super) fn same_size(&self, size: u32) -> Result<(), FtError> {
        if self.size() != size {
            return Err(FtError::SizeMismatch {
                expected: self.size(),
                got: size,
            });
        }
        Ok(())
    }
}

impl fmt::Debug for AgreeValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgreeValue")
            .field("flag", &self.flag)
            .field("contributors", &self.contributors)
            .field("failed", &self.failed)
            .field("acked_all", &self.acked_all)
            .field("left", &self.left)
            .finish()
    }
}

/// A set of group ranks as another member sent it: its ranks ascending, or bitset
/// words (rank `r` at bit `r % 64` of word `r / 64`, exactly `ceil(size / 64)`
/// words, the bits past the size zero). The wire form is `pmix_wire::ft`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranks<'a> {
    /// Strictly ascending ranks.
    Sorted(&'a [u32]),
    /// Bitset words.
    Bitmap(&'a [u64]),
}

impl Ranks<'_> {
    /// The empty set.
    pub const EMPTY: Ranks<'static> = Ranks::Sorted(&[]);

    fn is_valid(&self, size: u32, nwords: usize) -> bool {
        match *self {
            Ranks::Sorted(r) => {
                r.windows(2).all(|p| p[0] < p[1]) && r.last().is_none_or(|&l| l < size)
            }
            Ranks::Bitmap(w) => {
                w.len() == nwords && w.last().is_none_or(|&l| l & !tail_mask(size) == 0)
            }
        }
    }

    /// Word `i` of the set; for a list, `at` is where the ranks of word `i` start
    /// (words are asked for in ascending order).
    fn word(&self, i: usize, at: &mut usize) -> u64 {
        match *self {
            Ranks::Bitmap(w) => w[i],
            Ranks::Sorted(r) => {
                let mut w = 0;
                while let Some(&x) = r.get(*at) {
                    if x as usize / 64 != i {
                        break;
                    }
                    w |= 1 << (x % 64);
                    *at += 1;
                }
                w
            }
        }
    }
}

/// One member's contribution to an exchange as it travels between processes: its
/// group rank, its flag, and the failures it knew, the ones it had acknowledged and
/// the members it saw leave (what [`Tracker::contribute`](super::Tracker::contribute)
/// adds for this process; [`Tracker::known`](super::Tracker::known) gives them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contribution<'a> {
    /// The contributor's group rank.
    pub rank: u32,
    /// Its flag (agreement's operand).
    pub flag: u32,
    /// The failures it knew of.
    pub failed: Ranks<'a>,
    /// The failures it had acknowledged.
    pub acked: Ranks<'a>,
    /// The members it saw leave.
    pub left: Ranks<'a>,
}

/// The outcome of an exchange: the agreed flag, the agreed set of failed members
/// (every known failure of every contributor, plus every member that neither
/// contributed nor left), and whether a failed non-contributor was not
/// acknowledged by every contributor (the uniform error of ULFM's agreement).
#[derive(Clone, Copy)]
pub struct Decision<'a> {
    value: &'a AgreeValue,
}

impl<'a> Decision<'a> {
    /// The group size.
    pub fn size(&self) -> u32 {
        self.value.size()
    }

    /// The AND of every contributed flag.
    pub fn flag(&self) -> u32 {
        self.value.flag
    }

    /// The members that contributed.
    pub fn contributors(&self) -> &'a MemberSet {
        &self.value.contributors
    }

    /// `true` if `rank` is in the agreed failed set.
    pub fn is_failed(&self, rank: u32) -> bool {
        rank < self.size() && self.failed_word((rank / 64) as usize) & (1 << (rank % 64)) != 0
    }

    /// `true` if `rank` left gracefully (known to a contributor or to the decider).
    pub fn is_left(&self, rank: u32) -> bool {
        self.value.left.contains(rank)
    }

    /// The agreed failed set, ascending.
    pub fn failed(&self) -> impl Iterator<Item = u32> + 'a {
        let d = *self;
        let mut next = 0;
        core::iter::from_fn(move || {
            let r = next_set(d.value.contributors.words(), next, |i, _| d.failed_word(i))?;
            next = r + 1;
            Some(r)
        })
    }

    /// The size of the agreed failed set (O(size / 64)).
    pub fn failed_count(&self) -> u32 {
        (0..self.value.contributors.words().len())
            .map(|i| self.failed_word(i).count_ones())
            .sum()
    }

    /// The lowest member that failed before contributing and that some contributor
    /// had not acknowledged, if any: then the agreement raises its uniform error.
    pub fn unacked(&self) -> Option<u32> {
        let v = self.value;
        let (c, l, a) = (v.contributors.words(), v.left.words(), v.acked_all.words());
        let tail = tail_mask(self.size());
        let last = c.len().wrapping_sub(1);
        next_set(c, 0, |i, w| {
            !w & !l[i] & !a[i] & if i == last { tail } else { u64::MAX }
        })
    }

    /// `PMIX_SUCCESS`, or `PMIX_ERR_PROC_TERM_WO_SYNC` when [`Decision::unacked`] is
    /// `Some`: the status of the agreement, the same at every survivor.
    pub fn status(&self) -> Status {
        match self.unacked() {
            None => Status::SUCCESS,
            Some(rank) => AgreeError::ProcFailed {
                rank,
                flag: self.flag(),
            }
            .status(),
        }
    }

    /// The old → new rank map of a shrink on this decision.
    pub fn shrink(&self) -> ShrinkMap<'a> {
        ShrinkMap { value: self.value }
    }

    /// Word `i` of the agreed failed set.
    pub(super) fn failed_word(&self, i: usize) -> u64 {
        let v = self.value;
        let c = v.contributors.words();
        let tail = if i + 1 == c.len() {
            tail_mask(self.size())
        } else {
            u64::MAX
        };
        (v.failed.words()[i] | (!c[i] & !v.left.words()[i])) & tail
    }

    /// Word `i` of the agreed failed set less every member a contributor saw
    /// leave: what `validate_global` makes `G` of (a leave is no failure, and
    /// this set is the same at every survivor).
    pub(super) fn failed_not_left_word(&self, i: usize) -> u64 {
        self.failed_word(i) & !self.value.left.words()[i]
    }
}

/// Two decisions are equal when they agree on the flag, the failed set, the left set
/// and the uniform error.
impl PartialEq for Decision<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.size() == other.size()
            && self.flag() == other.flag()
            && (0..self.value.contributors.words().len())
                .all(|i| self.failed_word(i) == other.failed_word(i))
            && self.value.left == other.value.left
            && self.unacked() == other.unacked()
    }
}

impl fmt::Debug for Decision<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decision")
            .field("flag", &self.flag())
            .field("failed_count", &self.failed_count())
            .field("unacked", &self.unacked())
            .finish()
    }
}

/// The uniform error of an agreement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgreeError {
    /// A member failed before contributing and not every contributor had
    /// acknowledged it (`MPI_ERR_PROC_FAILED`; `PMIX_ERR_PROC_TERM_WO_SYNC`). The
    /// flag is still the agreed one.
    #[error(
        "group rank {rank} failed before contributing and was not acknowledged by every member (flag {flag:#x})"
    )]
    ProcFailed {
        /// The lowest such member.
        rank: u32,
        /// The agreed flag.
        flag: u32,
    },
}

impl PmixError for AgreeError {
    fn status(&self) -> Status {
        Status::ERR_PROC_TERM_WO_SYNC
    }
}

/// A shrink: the survivors (neither failed nor left) keep their relative order and
/// are renumbered from 0.
#[derive(Clone, Copy)]
pub struct ShrinkMap<'a> {
    value: &'a AgreeValue,
}

impl<'a> ShrinkMap<'a> {
    fn gone_word(&self, i: usize) -> u64 {
        self.value.decide().failed_word(i) | self.value.left.words()[i]
    }

    /// The size of the old group.
    pub fn old_size(&self) -> u32 {
        self.value.size()
    }

    /// The size of the new group (O(size / 64)).
    pub fn new_size(&self) -> u32 {
        let words = self.value.contributors.words().len();
        self.old_size()
            - (0..words)
                .map(|i| self.gone_word(i).count_ones())
                .sum::<u32>()
    }

    /// The new rank of old rank `old`, or `None` if it did not survive (or is out of
    /// range). O(old / 64).
    pub fn new_rank(&self, old: u32) -> Option<u32> {
        if old >= self.old_size() {
            return None;
        }
        let w = (old / 64) as usize;
        let bit = 1u64 << (old % 64);
        if self.gone_word(w) & bit != 0 {
            return None;
        }
        let gone: u32 = (0..w).map(|i| self.gone_word(i).count_ones()).sum::<u32>()
            + (self.gone_word(w) & (bit - 1)).count_ones();
        Some(old - gone)
    }

    /// `(old, new)` for every survivor, in old rank order (new ranks 0, 1, 2, …).
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + 'a {
        let m = *self;
        let mut next = 0;
        let mut new = 0;
        let tail = tail_mask(m.old_size());
        let last = m.value.contributors.words().len().wrapping_sub(1);
        core::iter::from_fn(move || {
            let words = m.value.contributors.words();
            let old = next_set(words, next, |i, _| {
                !m.gone_word(i) & if i == last { tail } else { u64::MAX }
            })?;
            next = old + 1;
            new += 1;
            Some((old, new - 1))
        })
    }
}

impl fmt::Debug for ShrinkMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter().take(64)).finish()
    }
}
