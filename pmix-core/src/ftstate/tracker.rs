//! The per-group tracker (docs/design.md §5): the append-only detection log, the members that
//! left, the local and global views derived from the log, and the queries on them
//! (`validate_local`, `validate_global`, `get_state`, `get_num_state`). The ULFM
//! operations on the same log are in [`super::ulfm`]; the exchange's pure half in
//! [`super::agree`].

use core::fmt;

use super::agree::Decision;
use super::mask::{Mask, Modifier, RankInfo, RankState, Validation, View};
use super::{FtError, check_size};
use crate::group::{MemberSet, tail_mask};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastUpdate {
    None,
    Local,
    Global,
}

/// What a tracker knows, as bitsets over the group ranks ([`Tracker::known`]).
#[derive(Clone, Copy, Debug)]
pub struct Known<'a> {
    /// Every failure in the log.
    pub failed: &'a MemberSet,
    /// The failures acknowledged ([`Tracker::ack_failed`]).
    pub acked: &'a MemberSet,
    /// The members that left.
    pub left: &'a MemberSet,
}

/// One process's failure knowledge about one group. See the [module](super) docs.
#[derive(Clone)]
pub struct Tracker {
    // The log, the acknowledgements, the leavers and revocation are read by the ULFM
    // operations (`super::ulfm`) too; the views are this module's alone.
    pub(super) size: u32,
    pub(super) me: u32,
    pub(super) log: alloc::boxed::Box<[u32]>,
    pub(super) log_len: u32,
    pub(super) in_log: MemberSet,
    pub(super) acked_set: MemberSet,
    pub(super) acked: u32,
    pub(super) left: MemberSet,
    local: MemberSet,
    global: MemberSet,
    new_local: MemberSet,
    new_global: MemberSet,
    last_local: LastUpdate,
    /// Log positions of the members the last local update added.
    new_local_range: (u32, u32),
    /// Every log entry before this position is in `L`.
    l_scan: u32,
    pub(super) revoked: bool,
}

impl Tracker {
    /// The tracker of group rank `me` in a group of `size` members, with every
    /// buffer allocated now.
    ///
    /// # Errors
    /// [`FtError::Empty`], [`FtError::TooLarge`] (over [`MAX_MEMBERS`](crate::group::MAX_MEMBERS)),
    /// [`FtError::RankOutOfRange`] for `me`, [`FtError::NoMemory`].
    pub fn new(size: u32, me: u32) -> Result<Tracker, FtError> {
        check_size(size)?;
        if me >= size {
            return Err(FtError::RankOutOfRange { rank: me, size });
        }
        Ok(Tracker {
            size,
            me,
            log: crate::group::try_boxed(size as usize, 0u32)?,
            log_len: 0,
            in_log: MemberSet::new(size)?,
            acked_set: MemberSet::new(size)?,
            acked: 0,
            left: MemberSet::new(size)?,
            local: MemberSet::new(size)?,
            global: MemberSet::new(size)?,
            new_local: MemberSet::new(size)?,
            new_global: MemberSet::new(size)?,
            last_local: LastUpdate::None,
            new_local_range: (0, 0),
            l_scan: 0,
            revoked: false,
        })
    }

    /// What this process contributes to an exchange ([`Tracker::contribute`]), as
    /// bitsets: to send it to the other members.
    pub fn known(&self) -> Known<'_> {
        Known {
            failed: &self.in_log,
            acked: &self.acked_set,
            left: &self.left,
        }
    }

    /// The group size.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// This process's group rank.
    pub fn my_rank(&self) -> u32 {
        self.me
    }

    /// Heap bytes the tracker holds (all allocated at creation).
    pub fn heap_bytes(&self) -> usize {
        let sets = [
            &self.in_log,
            &self.acked_set,
            &self.left,
            &self.local,
            &self.global,
            &self.new_local,
            &self.new_global,
        ];
        self.log.len() * 4 + sets.iter().map(|s| s.words().len() * 8).sum::<usize>()
    }

    fn rank(&self, rank: u32) -> Result<u32, FtError> {
        if rank >= self.size {
            return Err(FtError::RankOutOfRange {
                rank,
                size: self.size,
            });
        }
        Ok(rank)
    }

    /// The detector (or an event) says `rank` failed. Returns `false` if it was
    /// already known (the log keeps its first detection).
    ///
    /// # Errors
    /// [`FtError::RankOutOfRange`]; [`FtError::Departed`] for a member that left
    /// (a graceful leave is not a failure).
    pub fn report_failure(&mut self, rank: u32) -> Result<bool, FtError> {
        let rank = self.rank(rank)?;
        if self.left.contains(rank) {
            return Err(FtError::Departed { rank });
        }
        Ok(self.append(rank))
    }

    pub(super) fn append(&mut self, rank: u32) -> bool {
        if self.in_log.contains(rank) {
            return false;
        }
        let _ = self.in_log.insert(rank);
        if let Some(slot) = self.log.get_mut(self.log_len as usize) {
            *slot = rank;
            self.log_len += 1;
        }
        true
    }

    /// `rank` left the group gracefully (`PMIX_GROUP_LEFT`): it is no failure, in no
    /// view and no state. Returns `false` if it was already known to have left.
    ///
    /// # Errors
    /// [`FtError::RankOutOfRange`]; [`FtError::AlreadyFailed`] if it is in the log.
    pub fn report_left(&mut self, rank: u32) -> Result<bool, FtError> {
        let rank = self.rank(rank)?;
        if self.in_log.contains(rank) {
            return Err(FtError::AlreadyFailed { rank });
        }
        Ok(self.left.insert(rank).unwrap_or(false))
    }

    /// `true` if `rank` is in the detection log.
    pub fn is_failed(&self, rank: u32) -> bool {
        self.in_log.contains(rank)
    }

    /// `true` if `rank` left gracefully.
    pub fn has_left(&self, rank: u32) -> bool {
        self.left.contains(rank)
    }

    /// The number of members that left.
    pub fn left_count(&self) -> u32 {
        self.left.len()
    }

    /// `MPI_Comm_validate_local`: `L :=` every known failure. O(new failures).
    #[doc(alias = "MPI_Comm_validate_local")]
    pub fn validate_local(&mut self) -> Validation {
        match self.last_local {
            LastUpdate::Local => {
                let (a, b) = self.new_local_range;
                for &r in &self.log[a as usize..b as usize] {
                    let _ = self.new_local.remove(r);
                }
            }
            LastUpdate::Global => self.new_local.clear(),
            LastUpdate::None => {}
        }
        let start = self.l_scan;
        for &r in &self.log[start as usize..self.log_len as usize] {
            if self.local.insert(r).unwrap_or(false) {
                let _ = self.new_local.insert(r);
            }
        }
        self.new_local_range = (start, self.log_len);
        self.l_scan = self.log_len;
        self.last_local = LastUpdate::Local;
        Validation {
            num_failed: self.local.len(),
            new_failures: self.new_local.len(),
        }
    }

    /// `MPI_Comm_validate_global`, its local half: apply the decision of the
    /// exchange (to which this process contributed). `G :=` the agreed failed set
    /// less the members a contributor saw leave, joined with the old `G` (itself agreed by an earlier round), `L := G`, and
    /// agreed failures not yet in the log are appended to it.
    ///
    /// Only the decision (and earlier decisions) make `G`: whatever this process
    /// learned since it contributed — a failure a `validate_local` put in `L`, a
    /// leave — leaves `G` the same as at every other survivor. A failure in `L` the
    /// round did not agree on drops out of `L` (`L := G`) and stays in the log,
    /// where the next `validate_local` finds it again; a member the round agreed
    /// failed counts failed here even if this process saw it leave afterwards.
    ///
    /// # Errors
    /// [`FtError::SizeMismatch`]; [`FtError::NotContributed`].
    #[doc(alias = "MPI_Comm_validate_global")]
    pub fn validate_global(&mut self, d: &Decision<'_>) -> Result<Validation, FtError> {
        self.check_decision(d)?;
        let dropped = {
            let (g, l) = (self.global.words(), self.local.words());
            let agreed = |i: usize| d.failed_not_left_word(i) | g[i];
            self.left.update_words(|i, w| w & !agreed(i));
            self.new_global.update_words(|i, _| agreed(i) & !g[i]);
            self.new_local.update_words(|i, _| agreed(i) & !l[i]);
            (0..l.len()).any(|i| l[i] & !agreed(i) != 0)
        };
        self.global
            .update_words(|i, g| d.failed_not_left_word(i) | g);
        let _ = self.local.copy_from(&self.global);
        if dropped {
            // Log entries outside the new `L`: the next local update rescans.
            self.l_scan = 0;
        }
        self.learn(d);
        self.last_local = LastUpdate::Global;
        Ok(Validation {
            num_failed: self.global.len(),
            new_failures: self.new_global.len(),
        })
    }

    /// `validate_global` returning [`Tracker::get_num_state`]`(View::Global, mask)`
    /// after it, as the seed's `MPI_Comm_validate_global(comm, count_type, &count)`.
    ///
    /// # Errors
    /// As [`Tracker::validate_global`].
    pub fn validate_global_count(&mut self, d: &Decision<'_>, mask: Mask) -> Result<u32, FtError> {
        self.validate_global(d)?;
        Ok(self.get_num_state(View::Global, mask))
    }

    /// The number of members of `view` that match `mask`, in O(1).
    #[doc(alias = "MPI_Comm_get_num_state_local")]
    pub fn get_num_state(&self, view: View, mask: Mask) -> u32 {
        let c = self.counts(view);
        let (states, mods) = (mask.states(), mask.mods());
        let pick = |new: u32, old: u32| {
            (if mods & Mask::NEW.bits() != 0 { new } else { 0 })
                + if mods & Mask::OLD.bits() != 0 { old } else { 0 }
        };
        let mut n = 0;
        if states & Mask::OK.bits() != 0 && mods & Mask::OLD.bits() != 0 {
            n += c.ok;
        }
        if states & Mask::FAILED.bits() != 0 {
            n += pick(c.failed_new, c.failed_old);
        }
        if states & Mask::NULL.bits() != 0 {
            n += pick(c.null_new, c.null_old);
        }
        n
    }

    fn counts(&self, view: View) -> Counts {
        let (nl, ng, left) = (self.local.len(), self.global.len(), self.left.len());
        match view {
            View::Global => {
                let nn = self.new_global.len();
                Counts {
                    ok: self.size - ng - left,
                    failed_new: 0,
                    failed_old: 0,
                    null_new: nn,
                    null_old: ng - nn,
                }
            }
            View::Local => {
                let nn = self.new_local.len();
                let (null_new, failed_new) = match self.last_local {
                    LastUpdate::Global => (nn, 0),
                    LastUpdate::Local => (0, nn),
                    LastUpdate::None => (0, 0),
                };
                Counts {
                    ok: self.size - nl - left,
                    failed_new,
                    failed_old: nl - ng - failed_new,
                    null_new,
                    null_old: ng - null_new,
                }
            }
        }
    }

    /// `MPI_Comm_get_state_{local,global}`: the members of `view` matching `mask`,
    /// in ascending rank order, into `out`. An empty `out` asks for the count only.
    /// Returns the count.
    ///
    /// # Errors
    /// [`FtError::Size`] if `out` is non-empty and shorter than the count; nothing
    /// is written then.
    #[doc(alias = "MPI_Comm_get_state_local")]
    pub fn get_state(
        &self,
        view: View,
        mask: Mask,
        out: &mut [RankInfo],
    ) -> Result<usize, FtError> {
        let needed = self.get_num_state(view, mask) as usize;
        if out.is_empty() {
            return Ok(needed);
        }
        if out.len() < needed {
            return Err(FtError::Size { needed });
        }
        let (v, nv) = match view {
            View::Local => (self.local.words(), self.new_local.words()),
            View::Global => (self.global.words(), self.new_global.words()),
        };
        let (g, left) = (self.global.words(), self.left.words());
        let (states, mods) = (mask.states(), mask.mods());
        let has = |bit: Mask, set: u8| set & bit.bits() != 0;
        let tail = tail_mask(self.size);
        let last = v.len() - 1;
        let (want_ok, want_null, want_failed) = (
            has(Mask::OK, states) && has(Mask::OLD, mods),
            has(Mask::NULL, states),
            has(Mask::FAILED, states),
        );
        let (want_new, want_old) = (has(Mask::NEW, mods), has(Mask::OLD, mods));
        let mut k = 0;
        for i in 0..v.len() {
            let valid = if i == last { tail } else { u64::MAX };
            let new = nv[i];
            let modsel = (if want_new { new } else { 0 }) | if want_old { !new } else { 0 };
            let ok = if want_ok { !v[i] & !left[i] } else { 0 };
            let null = if want_null { v[i] & g[i] } else { 0 };
            let failed = if want_failed { v[i] & !g[i] } else { 0 };
            let bits = (ok | ((null | failed) & modsel)) & valid;
            if bits == 0 {
                continue;
            }
            let base = i as u32 * 64;
            // Most words hold members of one (state, modifier) only: write those
            // with a constant entry, and a full word without bit scanning.
            let uniform = [
                (ok, RankState::Ok, Modifier::Old),
                (null & new, RankState::Null, Modifier::New),
                (null & !new, RankState::Null, Modifier::Old),
                (failed & new, RankState::Failed, Modifier::New),
                (failed & !new, RankState::Failed, Modifier::Old),
            ]
            .into_iter()
            .find(|&(class, _, _)| bits & !class == 0);
            match uniform {
                Some((_, state, modifier)) if bits == u64::MAX => {
                    if let Some(dst) = out.get_mut(k..k + 64) {
                        for (b, slot) in dst.iter_mut().enumerate() {
                            *slot = RankInfo {
                                rank: base + b as u32,
                                state,
                                modifier,
                            };
                        }
                    }
                    k += 64;
                }
                Some((_, state, modifier)) => {
                    let mut bits = bits;
                    while bits != 0 {
                        let b = bits.trailing_zeros();
                        bits &= bits - 1;
                        if let Some(slot) = out.get_mut(k) {
                            *slot = RankInfo {
                                rank: base + b,
                                state,
                                modifier,
                            };
                        }
                        k += 1;
                    }
                }
                None => {
                    let mut bits = bits;
                    while bits != 0 {
                        let b = bits.trailing_zeros();
                        bits &= bits - 1;
                        let bit = 1u64 << b;
                        let state = if v[i] & bit == 0 {
                            RankState::Ok
                        } else if g[i] & bit != 0 {
                            RankState::Null
                        } else {
                            RankState::Failed
                        };
                        let modifier = if new & bit != 0 {
                            Modifier::New
                        } else {
                            Modifier::Old
                        };
                        if let Some(slot) = out.get_mut(k) {
                            *slot = RankInfo {
                                rank: base + b,
                                state,
                                modifier,
                            };
                        }
                        k += 1;
                    }
                }
            }
        }
        Ok(k)
    }
}

#[derive(Debug, Clone, Copy)]
struct Counts {
    ok: u32,
    failed_new: u32,
    failed_old: u32,
    null_new: u32,
    null_old: u32,
}

impl fmt::Debug for Tracker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracker")
            .field("size", &self.size)
            .field("me", &self.me)
            .field("failed", &self.get_failed().len())
            .field("acked", &self.acked)
            .field("left", &self.left.len())
            .field("local", &self.local.len())
            .field("global", &self.global.len())
            .field("revoked", &self.revoked)
            .finish()
    }
}
