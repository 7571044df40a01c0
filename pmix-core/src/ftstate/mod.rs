//! Process-state tracking (docs/design.md §5): what one member knows about which members of
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
//! and sets `L := G`). Always `G ⊆ L ⊆ log`; `G` only grows, and only by decisions,
//! so every survivor of a round holds the same `G` whatever it did locally
//! meanwhile (`L` may lose, at a `validate_global`, a failure the round did not
//! agree on; it stays in the log). In a view `V`, a
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
//! # Choices where docs/design.md and the seeds are silent
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
//!
//! # Layout
//! - `mask`: views, states, modifiers, masks, and what queries and validates answer.
//! - `tracker`: the [`Tracker`]: the detection log, the leavers, the two views and
//!   their queries.
//! - `ulfm`: the ULFM operations on the same log ([`Operation`], [`OpError`],
//!   [`Agreement`]) and the tracker's halves of the exchange.
//! - `agree`: the exchange's pure half ([`AgreeValue`], [`Decision`], [`ShrinkMap`]).
//!
//! This file holds the error they share, [`FtError`].

mod agree;
mod mask;
mod tracker;
mod ulfm;

pub use agree::{AgreeError, AgreeValue, Contribution, Decision, Ranks, ShrinkMap};
pub use mask::{Mask, Modifier, RankInfo, RankState, Validation, View};
pub use tracker::{Known, Tracker};
pub use ulfm::{Agreement, OpError, Operation};

use crate::group::{MAX_MEMBERS, NoMemory};
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
    /// A contribution received from another member whose rank sets are malformed:
    /// a list not strictly ascending, a rank past the size, a bitmap of another
    /// length or with bits past the size (`PMIX_ERR_BAD_PARAM`).
    #[error("group rank {rank}'s contribution holds a malformed rank set")]
    BadContribution {
        /// The contributor.
        rank: u32,
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
