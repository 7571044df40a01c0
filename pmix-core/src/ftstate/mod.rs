//! Process-state tracking (DESIGN §5): what one member knows about which members of
//! a group failed, in the 2011 local/global-view API and the ULFM-style API, on one
//! shared detection log.
//!
//! # Model
//! A [`Tracker`] belongs to one process and one group of `size` members (group ranks
//! `0..size`). Failures arrive from the runtime's detector or events
//! ([`Tracker::report_failure`]) in detection order into an append-only log. A
//! graceful leave ([`Tracker::report_left`]) is *not* a failure: a member that left
//! is in no view, in no state, never in the log, and does not make operations fail.
//!
//! Two views are derived from the log: the local view `L` ([`Tracker::validate_local`]
//! makes it every locally known failure) and the global view `G`
//! ([`Tracker::validate_global`] applies the [`Decision`] of a collective exchange
//! and sets `L := G`). Always `G ⊆ L ⊆ log`, and both only grow. In a view `V`, a
//! member is `OK` if not in `V`, `NULL` (failed, recognized) if in `V` and `G`,
//! `FAILED` (failed, unrecognized) if in `V` but not `G`; a failed member is `NEW` if
//! `V`'s most recent update added it, else `OLD`.
//!
//! The exchange behind `validate_global`, agreement and shrink is pure here:
//! [`Tracker::contribute`] makes a contribution ([`AgreeValue`]), the runtime moves
//! contributions and [`AgreeValue::combine`]s them, and once it holds every member's
//! contribution or departure it [`decide`](AgreeValue::decide)s. The agreed failed
//! set is the union of every contributor's known failures plus every member that
//! neither contributed nor left.
//!
//! ```
//! use pmix_core::ftstate::*;
//!
//! let mut t = Tracker::new(8, 0).unwrap();
//! t.report_failure(5).unwrap();
//! t.report_failure(2).unwrap();
//! assert_eq!(t.validate_local(), Validation { num_failed: 2, new_failures: 2 });
//! assert_eq!(t.get_num_state(View::Local, Mask::FAILED | Mask::NEW), 2);
//! let mut out = [RankInfo::default(); 2];
//! assert_eq!(t.get_state(View::Local, Mask::FAILED, &mut out).unwrap(), 2);
//! assert_eq!([out[0].rank, out[1].rank], [2, 5]); // ascending rank order
//! assert_eq!(t.get_state(View::Local, Mask::FAILED, &mut out[..1]), Err(FtError::Size { needed: 2 }));
//!
//! // ULFM: detection order, acknowledgement watermark.
//! assert_eq!(t.get_failed(), [5, 2]);
//! assert_eq!(t.ack_failed(1), 1);
//! assert_eq!(t.get_acked(), [5]);
//!
//! // A one-member exchange: contribute, decide, apply.
//! let mut one = Tracker::new(1, 0).unwrap();
//! let mut v = AgreeValue::new(1).unwrap();
//! one.contribute(0b1, &mut v).unwrap();
//! assert_eq!(one.agree(&v.decide()).unwrap().result(), Ok(0b1));
//! ```
//!
//! # Choices where DESIGN and the seeds are silent
//! - `OK` members count as `OLD` (their state did not change); `OK | NEW` matches
//!   nobody. Members that left match no mask.
//! - [`Validation::new_failures`] of `validate_global` is `|G \ G_prev|`.
//! - Applying a decision (validate_global, agreement, shrink) also appends to the log
//!   the agreed failures this process had not detected, in rank order: ULFM's
//!   "a `failure_ack` after an agreement error acknowledges every non-contributor"
//!   needs them known, and it makes the ack-then-agree loop converge. Agreement and
//!   shrink change no view.
//! - Agreement error (ULFM): raised, uniformly, iff a member that neither
//!   contributed nor left was not acknowledged by every contributor. Known failures
//!   of members that did contribute do not raise it.
//! - Shrink removes failed and left members; survivors keep their order.
//! - Revoke fails point-to-point, wildcard and collective operations
//!   ([`Tracker::check`]); agreement, shrink, `validate_global` (the same
//!   exchange) and every local query keep working.
//! - A wildcard receive fails while the log holds unacknowledged failures; the
//!   blocking form with [`OpError::ProcFailed`], the non-blocking one with
//!   [`OpError::ProcFailedPending`] (the request stays pending).
//! - Status mapping: failures `PMIX_ERR_PROC_TERM_WO_SYNC`, revoked
//!   `PMIX_ERR_NOT_AVAILABLE`, a left member `PMIX_ERR_NOT_A_MEMBER`, bad
//!   arguments and `Size` `PMIX_ERR_BAD_PARAM`.
//!
//! # Cost
//! Created once with every buffer sized (a 4-byte log entry and 7 bits per member,
//! under 5 bytes; [`Tracker::heap_bytes`]); afterwards nothing allocates. Reports,
//! `validate_local` (per new failure), `get_num_state`, acknowledgements and checks
//! are O(1); `get_state` is O(size / 64 + results); applying a decision is
//! O(size / 64 + new failures).

mod agree;

use core::fmt;
use core::ops::BitOr;

pub use agree::{AgreeError, AgreeValue, Decision, ShrinkMap};

use crate::group::{MAX_MEMBERS, MemberSet, NoMemory, next_set, tail_mask};
use crate::status::{PmixError, Status};

pub(crate) fn check_size(size: u32) -> Result<(), FtError> {
    if size == 0 {
        return Err(FtError::Empty);
    }
    if size > MAX_MEMBERS {
        return Err(FtError::TooLarge { size });
    }
    Ok(())
}

/// Which view a query reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    /// `L`, updated by [`Tracker::validate_local`] (and set to `G` by
    /// [`Tracker::validate_global`]).
    Local,
    /// `G`, updated by [`Tracker::validate_global`].
    Global,
}

/// The state of a member in a view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum RankState {
    /// Active: not in the view.
    #[default]
    Ok,
    /// Failed, unrecognized: in the view but not in `G`.
    Failed,
    /// Failed, recognized: in the view and in `G`.
    Null,
}

/// Whether the view's most recent update added the member.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Modifier {
    /// Added by the most recent update.
    New,
    /// In the view before it (and every `OK` member).
    #[default]
    Old,
}

/// A set of states and modifiers, OR-ed: `Mask::NULL | Mask::NEW`. No modifier bit
/// means any modifier; no state bit means any failed state (`FAILED | NULL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Mask(u8);

impl Mask {
    /// `OK` members.
    pub const OK: Mask = Mask(1);
    /// `FAILED` members.
    pub const FAILED: Mask = Mask(2);
    /// `NULL` members.
    pub const NULL: Mask = Mask(4);
    /// Members the view's last update added.
    pub const NEW: Mask = Mask(8);
    /// Members the view held before its last update (and `OK` ones).
    pub const OLD: Mask = Mask(16);
    /// Every failed member (the empty mask).
    pub const ANY_FAILED: Mask = Mask(0);
    /// Every bit.
    pub const ALL: Mask = Mask(31);

    /// The mask with these bits (as a C caller passes them).
    ///
    /// # Errors
    /// [`FtError::BadMask`] for bits outside [`Mask::ALL`].
    pub fn from_bits(bits: u8) -> Result<Mask, FtError> {
        if bits & !Mask::ALL.0 != 0 {
            return Err(FtError::BadMask { bits });
        }
        Ok(Mask(bits))
    }

    /// The bits.
    pub fn bits(self) -> u8 {
        self.0
    }

    fn states(self) -> u8 {
        match self.0 & 7 {
            0 => 6,
            s => s,
        }
    }

    fn mods(self) -> u8 {
        match self.0 & 24 {
            0 => 24,
            m => m,
        }
    }
}

impl BitOr for Mask {
    type Output = Mask;
    fn bitor(self, rhs: Mask) -> Mask {
        Mask(self.0 | rhs.0)
    }
}

/// One member's entry in a [`Tracker::get_state`] answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RankInfo {
    /// The group rank.
    pub rank: u32,
    /// Its state in the view.
    pub state: RankState,
    /// Its modifier in the view.
    pub modifier: Modifier,
}

/// What a validate returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Validation {
    /// `|L|` after the update: every failure in the view, recognized or not.
    pub num_failed: u32,
    /// `validate_local`: `|L \ L_prev|`; `validate_global`: `|G \ G_prev|`.
    pub new_failures: u32,
}

/// An operation whose fate under failures [`Tracker::check`] tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// A send to group rank `to`.
    Send {
        /// The destination.
        to: u32,
    },
    /// A receive from group rank `from`.
    Recv {
        /// The source.
        from: u32,
    },
    /// A receive from any source.
    RecvAny {
        /// The non-blocking form (its failure is "pending", not final).
        nonblocking: bool,
    },
    /// A collective over the group (fence, barrier, …).
    Collective,
    /// An agreement.
    Agree,
    /// A shrink.
    Shrink,
}

/// Why [`Tracker::check`] fails an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpError {
    /// A member it involves failed (`MPI_ERR_PROC_FAILED`;
    /// `PMIX_ERR_PROC_TERM_WO_SYNC`).
    #[error("group rank {rank} failed")]
    ProcFailed {
        /// The failed member (for wildcard receives the first unacknowledged one,
        /// for collectives the first detected).
        rank: u32,
    },
    /// A non-blocking wildcard receive cannot match while failures are
    /// unacknowledged; it stays pending (`MPI_ERR_PROC_FAILED_PENDING`;
    /// `PMIX_ERR_PROC_TERM_WO_SYNC`).
    #[error("group rank {rank} failed and is not acknowledged; the receive stays pending")]
    ProcFailedPending {
        /// The first unacknowledged failure.
        rank: u32,
    },
    /// The group was revoked (`MPI_ERR_REVOKED`; `PMIX_ERR_NOT_AVAILABLE`).
    #[error("the group was revoked")]
    Revoked,
    /// The peer left the group (`PMIX_ERR_NOT_A_MEMBER`).
    #[error("group rank {rank} left the group")]
    Departed {
        /// The peer.
        rank: u32,
    },
    /// The peer is not a group rank (`PMIX_ERR_BAD_PARAM`).
    #[error("rank {rank} is outside a group of {size}")]
    RankOutOfRange {
        /// The rank given.
        rank: u32,
        /// The group size.
        size: u32,
    },
}

impl PmixError for OpError {
    fn status(&self) -> Status {
        match self {
            OpError::ProcFailed { .. } | OpError::ProcFailedPending { .. } => {
                Status::ERR_PROC_TERM_WO_SYNC
            }
            OpError::Revoked => Status::ERR_NOT_AVAILABLE,
            OpError::Departed { .. } => Status::ERR_NOT_A_MEMBER,
            OpError::RankOutOfRange { .. } => Status::ERR_BAD_PARAM,
        }
    }
}

/// Why a tracker call or an exchange step was refused; nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FtError {
    /// A group of no member (`PMIX_ERR_BAD_PARAM`).
    #[error("a group needs at least one member")]
    Empty,
    /// A group over [`MAX_MEMBERS`] (`PMIX_ERR_BAD_PARAM`).
    #[error("a group of {size} members is over the limit of {}", MAX_MEMBERS)]
    TooLarge {
        /// The size asked for.
        size: u32,
    },
    /// A rank outside the group (`PMIX_ERR_BAD_PARAM`).
    #[error("rank {rank} is outside a group of {size}")]
    RankOutOfRange {
        /// The rank given.
        rank: u32,
        /// The group size.
        size: u32,
    },
    /// Mask bits that mean nothing (`PMIX_ERR_BAD_PARAM`).
    #[error("mask {bits:#x} has bits outside OK|FAILED|NULL|NEW|OLD")]
    BadMask {
        /// The bits given.
        bits: u8,
    },
    /// The output array is non-empty but shorter than the answer; nothing was
    /// written (`MPI_ERR_SIZE`; `PMIX_ERR_BAD_PARAM`).
    #[error("the answer has {needed} entries and the array is shorter")]
    Size {
        /// The number of entries the answer has.
        needed: usize,
    },
    /// A value or decision for a group of another size (`PMIX_ERR_BAD_PARAM`).
    #[error("a value for a group of {got} members where {expected} was expected")]
    SizeMismatch {
        /// This group's size.
        expected: u32,
        /// The other one's.
        got: u32,
    },
    /// A member contributed twice to one exchange (`PMIX_ERR_BAD_PARAM`).
    #[error("group rank {rank} already contributed to this exchange")]
    DuplicateContribution {
        /// The member.
        rank: u32,
    },
    /// A decision without this process's contribution (`PMIX_ERR_BAD_PARAM`).
    #[error("the decision does not include this process's contribution")]
    NotContributed,
    /// A failure report about a member that left (`PMIX_ERR_NOT_A_MEMBER`).
    #[error("group rank {rank} left the group; it cannot fail in it")]
    Departed {
        /// The member.
        rank: u32,
    },
    /// A leave report about a member already failed (`PMIX_ERR_BAD_PARAM`).
    #[error("group rank {rank} already failed; it cannot leave")]
    AlreadyFailed {
        /// The member.
        rank: u32,
    },
    /// Memory could not be allocated at creation (`PMIX_ERR_NOMEM`).
    #[error(transparent)]
    NoMemory(#[from] NoMemory),
}

impl PmixError for FtError {
    fn status(&self) -> Status {
        match self {
            FtError::Departed { .. } => Status::ERR_NOT_A_MEMBER,
            FtError::NoMemory(e) => e.status(),
            _ => Status::ERR_BAD_PARAM,
        }
    }
}

/// The result of an agreement at one survivor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agreement {
    /// The AND of every contributed flag.
    pub flag: u32,
    /// The uniform error, if raised.
    pub error: Option<AgreeError>,
}

impl Agreement {
    /// The flag, or the uniform error (which carries the flag too).
    ///
    /// # Errors
    /// [`AgreeError::ProcFailed`] when raised.
    pub fn result(self) -> Result<u32, AgreeError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.flag),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastUpdate {
    None,
    Local,
    Global,
}

/// One process's failure knowledge about one group. See the [module](self) docs.
#[derive(Clone)]
pub struct Tracker {
    size: u32,
    me: u32,
    log: alloc::boxed::Box<[u32]>,
    log_len: u32,
    in_log: MemberSet,
    acked_set: MemberSet,
    acked: u32,
    left: MemberSet,
    local: MemberSet,
    global: MemberSet,
    new_local: MemberSet,
    new_global: MemberSet,
    last_local: LastUpdate,
    /// Log positions of the members the last local update added.
    new_local_range: (u32, u32),
    /// Every log entry before this position is in `L`.
    l_scan: u32,
    revoked: bool,
}

impl Tracker {
    /// The tracker of group rank `me` in a group of `size` members, with every
    /// buffer allocated now.
    ///
    /// # Errors
    /// [`FtError::Empty`], [`FtError::TooLarge`] (over [`MAX_MEMBERS`]),
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

    fn append(&mut self, rank: u32) -> bool {
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

    /// Adds this process's contribution to an exchange: its known failures, its
    /// acknowledged set, the members it saw leave, and `flag` (used by agreements;
    /// pass anything for `validate_global` and shrink).
    ///
    /// # Errors
    /// [`FtError::SizeMismatch`]; [`FtError::DuplicateContribution`] if `into`
    /// already holds this process's contribution.
    pub fn contribute(&self, flag: u32, into: &mut AgreeValue) -> Result<(), FtError> {
        into.same_size(self.size)?;
        if into.contributors.contains(self.me) {
            return Err(FtError::DuplicateContribution { rank: self.me });
        }
        let _ = into.contributors.insert(self.me);
        into.flag &= flag;
        let w = self.in_log.words();
        into.failed.update_words(|i, x| x | w[i]);
        let w = self.acked_set.words();
        into.acked_all.update_words(|i, x| x & w[i]);
        let w = self.left.words();
        into.left.update_words(|i, x| x | w[i]);
        Ok(())
    }

    fn check_decision(&self, d: &Decision<'_>) -> Result<(), FtError> {
        if d.size() != self.size {
            return Err(FtError::SizeMismatch {
                expected: self.size,
                got: d.size(),
            });
        }
        if !d.contributors().contains(self.me) {
            return Err(FtError::NotContributed);
        }
        Ok(())
    }

    /// Appends the agreed failures this process had not detected, in rank order.
    fn learn(&mut self, d: &Decision<'_>) {
        let mut from = 0;
        while let Some(r) = {
            let (inl, left) = (self.in_log.words(), self.left.words());
            next_set(inl, from, |i, w| d.failed_word(i) & !w & !left[i])
        } {
            self.append(r);
            from = r + 1;
        }
    }

    /// `MPI_Comm_validate_global`, its local half: apply the decision of the
    /// exchange (to which this process contributed). `G :=` the agreed failed set
    /// (joined with the old `G` and `L`, so views only grow), `L := G`, and agreed
    /// failures not yet in the log are appended to it.
    ///
    /// # Errors
    /// [`FtError::SizeMismatch`]; [`FtError::NotContributed`].
    #[doc(alias = "MPI_Comm_validate_global")]
    pub fn validate_global(&mut self, d: &Decision<'_>) -> Result<Validation, FtError> {
        self.check_decision(d)?;
        let (g, l, left) = (self.global.words(), self.local.words(), self.left.words());
        let agreed = |i: usize| (d.failed_word(i) | g[i] | l[i]) & !left[i];
        self.new_global.update_words(|i, _| agreed(i) & !g[i]);
        self.new_local.update_words(|i, _| agreed(i) & !l[i]);
        let (l, left) = (self.local.words(), self.left.words());
        self.global
            .update_words(|i, g| (d.failed_word(i) | g | l[i]) & !left[i]);
        let _ = self.local.copy_from(&self.global);
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
            (if mods & Mask::NEW.0 != 0 { new } else { 0 })
                + if mods & Mask::OLD.0 != 0 { old } else { 0 }
        };
        let mut n = 0;
        if states & Mask::OK.0 != 0 && mods & Mask::OLD.0 != 0 {
            n += c.ok;
        }
        if states & Mask::FAILED.0 != 0 {
            n += pick(c.failed_new, c.failed_old);
        }
        if states & Mask::NULL.0 != 0 {
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
        let has = |bit: Mask, set: u8| set & bit.0 != 0;
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

    /// `MPI_Comm_get_failed`: every known failure in detection order. Each answer is
    /// a prefix of every later one.
    #[doc(alias = "MPIX_Comm_get_failed")]
    pub fn get_failed(&self) -> &[u32] {
        &self.log[..self.log_len as usize]
    }

    /// `MPI_Comm_ack_failed(n)`: acknowledge the first `n` failures of
    /// [`Tracker::get_failed`] (all of them if fewer). The watermark never moves
    /// back. Returns the number acknowledged.
    #[doc(alias = "MPIX_Comm_ack_failed")]
    pub fn ack_failed(&mut self, n: u32) -> u32 {
        let target = n.min(self.log_len);
        while self.acked < target {
            let _ = self.acked_set.insert(self.log[self.acked as usize]);
            self.acked += 1;
        }
        self.acked
    }

    /// `MPI_Comm_get_acked`: the acknowledged failures, in detection order. Frozen
    /// until the next [`Tracker::ack_failed`], whatever is detected meanwhile.
    #[doc(alias = "MPIX_Comm_failure_get_acked")]
    pub fn get_acked(&self) -> &[u32] {
        &self.log[..self.acked as usize]
    }

    /// `MPI_Comm_revoke`, or a revoke notice received: returns `true` if this call
    /// revoked the group (the first transition; propagate the notice then), `false`
    /// if it already was. Revocation is permanent.
    #[doc(alias = "MPIX_Comm_revoke")]
    pub fn revoke(&mut self) -> bool {
        !core::mem::replace(&mut self.revoked, true)
    }

    /// `true` once revoked.
    pub fn is_revoked(&self) -> bool {
        self.revoked
    }

    /// Whether `op` may proceed now, or the error it fails with.
    ///
    /// # Errors
    /// [`OpError`]: revoked (all but agreement and shrink), a failed or departed
    /// peer, unacknowledged failures for wildcard receives, any failure for
    /// collectives, a rank outside the group.
    pub fn check(&self, op: Operation) -> Result<(), OpError> {
        match op {
            Operation::Agree | Operation::Shrink => return Ok(()),
            _ if self.revoked => return Err(OpError::Revoked),
            _ => {}
        }
        match op {
            Operation::Send { to: rank } | Operation::Recv { from: rank } => {
                if rank >= self.size {
                    Err(OpError::RankOutOfRange {
                        rank,
                        size: self.size,
                    })
                } else if self.left.contains(rank) {
                    Err(OpError::Departed { rank })
                } else if self.in_log.contains(rank) {
                    Err(OpError::ProcFailed { rank })
                } else {
                    Ok(())
                }
            }
            Operation::RecvAny { nonblocking } => match self.log.get(self.acked as usize) {
                Some(&rank) if self.acked < self.log_len => Err(if nonblocking {
                    OpError::ProcFailedPending { rank }
                } else {
                    OpError::ProcFailed { rank }
                }),
                _ => Ok(()),
            },
            Operation::Collective => match self.get_failed().first() {
                Some(&rank) => Err(OpError::ProcFailed { rank }),
                None => Ok(()),
            },
            Operation::Agree | Operation::Shrink => Ok(()),
        }
    }

    /// `MPI_Comm_agree`, its local half: the agreed flag and the uniform error.
    /// Agreed failures not yet in the log are appended to it (so acknowledging them
    /// lets the next agreement succeed); views are untouched.
    ///
    /// # Errors
    /// [`FtError::SizeMismatch`]; [`FtError::NotContributed`].
    #[doc(alias = "MPIX_Comm_agree")]
    pub fn agree(&mut self, d: &Decision<'_>) -> Result<Agreement, FtError> {
        self.check_decision(d)?;
        self.learn(d);
        let error = d.unacked().map(|rank| AgreeError::ProcFailed {
            rank,
            flag: d.flag(),
        });
        Ok(Agreement {
            flag: d.flag(),
            error,
        })
    }

    /// `MPI_Comm_shrink`, its local half: the old → new rank map of the survivors
    /// (never an agreement error). Agreed failures not yet in the log are appended.
    /// Make the new group's tracker with the map's new size and this process's new
    /// rank.
    ///
    /// # Errors
    /// [`FtError::SizeMismatch`]; [`FtError::NotContributed`].
    #[doc(alias = "MPIX_Comm_shrink")]
    pub fn shrink<'d>(&mut self, d: &Decision<'d>) -> Result<ShrinkMap<'d>, FtError> {
        self.check_decision(d)?;
        self.learn(d);
        Ok(d.shrink())
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
