//! What crosses a group replica's boundary (docs/design.md §4): the collectives and their
//! options, the messages replicas exchange ([`Message`], [`Body`]), what a replica
//! asks its runtime to do ([`Output`]: sends, events, completions) and why a call or
//! input is refused ([`GroupError`]). Values only: the state machine that produces
//! them is in `machine`, with what a leave hands out (`Departure`, which holds the
//! replica).

use core::fmt;

use super::id::{GroupId, ProcId};
use super::members::{NoMemory, RosterError};
use crate::status::{PmixError, Status};

/// The collectives a group runs, in the order every member calls them: one construct,
/// any number of fences, then one destruct.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CollectiveOp {
    /// `PMIx_Group_construct`.
    Construct,
    /// `PMIx_Group_destruct`.
    Destruct,
    /// `PMIx_Fence` over the group.
    Fence,
}

impl fmt::Display for CollectiveOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CollectiveOp::Construct => "construct",
            CollectiveOp::Destruct => "destruct",
            CollectiveOp::Fence => "fence",
        })
    }
}

/// Directives of a construct call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConstructOptions {
    /// `PMIX_GROUP_FT_COLLECTIVE` (default `false`): complete the construct on the
    /// survivors when members are lost, instead of aborting, and raise one
    /// `PMIX_GROUP_MEMBER_FAILED` per departed member (left or lost) before the
    /// completion. Members that leave never abort a construct, with or without it.
    pub ft_collective: bool,
    /// `PMIX_GROUP_NOTIFY_TERMINATION` (default `false`): once constructed, raise
    /// `PMIX_GROUP_MEMBER_FAILED` when a member is lost (not when it leaves).
    pub notify_termination: bool,
}

/// What one member's replica tells the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Body {
    /// The sender called collective number `seq` of the group (0 is the construct).
    Contribute {
        /// Which collective.
        op: CollectiveOp,
        /// Its number in the group's sequence of collectives.
        seq: u32,
    },
    /// `PMIX_GROUP_LEFT`: the sender left the group.
    Left,
}

/// A message between replicas: `from` says `body` about `group`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// The group it is about.
    pub group: GroupId,
    /// The sending process.
    pub from: ProcId,
    /// What it says.
    pub body: Body,
}

/// How a member departed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DepartureCause {
    /// It called `PMIx_Group_leave` (graceful; not a failure).
    Left,
    /// The runtime reported it terminated or unreachable.
    Lost,
}

/// A PMIx event to raise on the local process (its registered handlers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notification {
    /// `PMIX_GROUP_LEFT`, `PMIX_GROUP_MEMBER_FAILED` or `PMIX_GROUP_CONSTRUCT_ABORT`.
    pub code: Status,
    /// The member it is about (`PMIX_EVENT_AFFECTED_PROC`): the leaver, the failed
    /// member, or the first lost member that made a construct abort.
    pub proc: ProcId,
    /// Why that member is gone.
    pub cause: DepartureCause,
}

/// A local call that completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// Which call.
    pub op: CollectiveOp,
    /// Its number in the group's sequence of collectives.
    pub seq: u32,
    /// `PMIX_SUCCESS`, `PMIX_GROUP_CONSTRUCT_ABORT`, `PMIX_ERR_PROC_TERM_WO_SYNC`
    /// (fence with a lost member), or `PMIX_ERR_NOT_A_MEMBER` (fence with a departed
    /// member, or a call cancelled by this process's own leave).
    pub status: Status,
}

/// What a replica asks its runtime to do, in order.
// An output is handed out by value, one per poll, and never stored in bulk: boxing
// the process id of `Notify` would allocate on every event for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Send `body` (as a [`Message`] from this process) to every current other member
    /// ([`Group::others`](super::Group::others), read before the next input).
    Send(Body),
    /// Raise this event on the local process.
    Notify(Notification),
    /// A local call completed with this status.
    Complete(Completion),
}

/// Why a group call or input was refused. Nothing changed when one is returned,
/// except after [`GroupError::OutputOverflow`] (an internal bound broken).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GroupError {
    /// The group is not in this process's list (never known, left, destructed or
    /// aborted): `PMIX_ERR_NOT_FOUND`.
    #[error("the group is not known to this process (never joined, left, destructed or aborted)")]
    NotFound,
    /// Invited but not constructed by this process yet: `PMIX_ERR_NOT_FOUND`.
    #[error("this process has not constructed the group (it is only invited)")]
    NotJoined,
    /// A message or report about a process that was never in the group:
    /// `PMIX_ERR_NOT_A_MEMBER`.
    #[error("the process is not in the group's membership")]
    NotAMember,
    /// A message or report about a member that already left or was lost (a second
    /// leave, a contribution after a leave): `PMIX_ERR_NOT_A_MEMBER`.
    #[error("group rank {rank} already departed the group")]
    Departed {
        /// Its group rank.
        rank: u32,
    },
    /// A message or report naming this process itself: `PMIX_ERR_BAD_PARAM`.
    #[error("a message or report that names this process itself")]
    Itself,
    /// The membership list is not acceptable: its status.
    #[error("bad membership list: {0}")]
    Roster(#[from] RosterError),
    /// This process is not in the membership list: `PMIX_ERR_BAD_PARAM`.
    #[error("this process is not in the group's membership list")]
    CallerNotListed,
    /// Construct lists other members than the invitation: `PMIX_ERR_BAD_PARAM`.
    #[error("construct lists other members than the group this process was invited to")]
    MembershipMismatch,
    /// This process already constructed (or is constructing) the group:
    /// `PMIX_ERR_BAD_PARAM`.
    #[error("this process already constructed or is constructing the group")]
    AlreadyExists,
    /// A call of this process on the group is in flight: `PMIX_ERR_BAD_PARAM`.
    #[error("a collective of this process on the group is already in flight")]
    Busy,
    /// A contribution to a collective that is not in flight here (already complete,
    /// or too far ahead to be genuine): `PMIX_ERR_BAD_PARAM`.
    #[error("contribution to collective #{seq}, which is not in flight")]
    NotInFlight {
        /// The collective number the contribution named.
        seq: u32,
    },
    /// The members called different collectives as number `seq`:
    /// `PMIX_ERR_BAD_PARAM`.
    #[error("collective #{seq} is a {expected} here, not a {got}")]
    OpMismatch {
        /// The collective number.
        seq: u32,
        /// What it is here.
        expected: CollectiveOp,
        /// What the call or message said.
        got: CollectiveOp,
    },
    /// A second contribution from the same member: `PMIX_ERR_BAD_PARAM`.
    #[error("group rank {rank} already contributed to collective #{seq}")]
    DuplicateContribution {
        /// The contributor's group rank.
        rank: u32,
        /// The collective number.
        seq: u32,
    },
    /// The group's outputs must be polled before the next input:
    /// `PMIX_ERR_WOULD_BLOCK` (the runtime drains after every input, so users never
    /// see it).
    #[error("the group has outputs waiting to be polled; nothing was done")]
    Undrained,
    /// Memory for the group could not be allocated: `PMIX_ERR_NOMEM`.
    #[error(transparent)]
    NoMemory(#[from] NoMemory),
    /// The input's outputs did not fit the group's fixed output queue, which handed
    /// one back instead of dropping it: `PMIX_ERROR`. Every input starts on an empty
    /// queue and queues at most `capacity` items, so this is an internal bound
    /// broken, not bad input; unlike every other variant, the input was partly
    /// applied and the queue holds the outputs that fit: drop the group's record.
    #[error(
        "the group's output queue ({capacity} entries) is full: an output was handed back, \
         the input is partly applied"
    )]
    OutputOverflow {
        /// The queue's capacity.
        capacity: usize,
    },
}

impl PmixError for GroupError {
    fn status(&self) -> Status {
        match self {
            GroupError::NotFound | GroupError::NotJoined => Status::ERR_NOT_FOUND,
            GroupError::NotAMember | GroupError::Departed { .. } => Status::ERR_NOT_A_MEMBER,
            GroupError::Roster(e) => e.status(),
            GroupError::NoMemory(e) => e.status(),
            GroupError::Undrained => Status::ERR_WOULD_BLOCK,
            GroupError::OutputOverflow { .. } => Status::ERROR,
            GroupError::Itself
            | GroupError::CallerNotListed
            | GroupError::MembershipMismatch
            | GroupError::AlreadyExists
            | GroupError::Busy
            | GroupError::NotInFlight { .. }
            | GroupError::OpMismatch { .. }
            | GroupError::DuplicateContribution { .. } => Status::ERR_BAD_PARAM,
        }
    }
}
