//! Group membership (docs/design.md §4): ids, members, and one sans-I/O state machine per
//! process and group.
//!
//! # Model
//! Every member keeps a replica of the group ([`Group`]); a process's replicas live
//! in its [`Groups`] list. Inputs are the process's own calls (construct, fence,
//! destruct, leave), [`Message`]s from the other replicas (contributions and
//! `PMIX_GROUP_LEFT`) and losses the runtime reports ([`Groups::on_lost`]). Outputs
//! are messages to send to the current other members, PMIx events to raise locally
//! and completions of local calls ([`Output`]). The machine never blocks, reads no
//! clock and, once a group's record exists, never allocates: member sets are
//! [`MemberSet`] bitsets over the group's initial membership ([`Roster`]), outputs
//! wait in a four-entry `heapless::Deque` (one `PMIX_GROUP_MEMBER_FAILED` per
//! departed member is produced lazily from the bitsets while polling). Every input
//! starts on a drained queue and queues at most four entries; an output that did
//! not fit would be handed back and fail the input ([`GroupError::OutputOverflow`]).
//!
//! ```
//! use pmix_core::group::*;
//! use pmix_core::Status;
//!
//! let ns = Nspace::new("job").unwrap();
//! let roster = Roster::from_ranks(ns, 0..3).unwrap();
//! let gid = GroupId::new("ocean").unwrap();
//! let mut p0 = Groups::new(ProcId::new(ns, 0).unwrap());
//! p0.construct(gid, roster, ConstructOptions::default()).unwrap();
//! // Send our contribution to the others…
//! let out = p0.poll_output().unwrap();
//! assert_eq!(out.output, Output::Send(Body::Contribute { op: CollectiveOp::Construct, seq: 0 }));
//! // …and receive theirs.
//! for r in [1, 2] {
//!     let from = ProcId::new(ns, r).unwrap();
//!     p0.on_message(&Message { group: gid, from, body: Body::Contribute { op: CollectiveOp::Construct, seq: 0 } }).unwrap();
//! }
//! let done = p0.poll_output().unwrap();
//! assert!(matches!(done.output, Output::Complete(c) if c.status == Status::SUCCESS));
//!
//! // Rank 2 leaves: removed before the event reaches any handler.
//! let leaver = ProcId::new(ns, 2).unwrap();
//! p0.on_message(&Message { group: gid, from: leaver, body: Body::Left }).unwrap();
//! assert!(!p0.get(&gid).unwrap().is_member(&leaver));
//! let ev = p0.poll_output().unwrap();
//! assert!(matches!(ev.output, Output::Notify(n) if n.code == Status::GROUP_LEFT && n.proc == leaver));
//!
//! // p0 leaves: gone at once; the departure says what to send, and to whom.
//! let dep = p0.leave(&gid).unwrap();
//! assert_eq!(dep.recipients().collect::<Vec<_>>(), [ProcId::new(ns, 1).unwrap()]);
//! assert_eq!(p0.leave(&gid).unwrap_err(), GroupError::NotFound);
//! ```
//!
//! # Semantics (docs/design.md §4, and the choices it leaves open)
//! - **Ids.** Group ids and namespaces are 1 to 255 bytes without NUL, else
//!   `PMIX_ERR_BAD_PARAM` ([`IdError`]). Ranks at or above `PMIX_RANK_INVALID` are
//!   refused in process ids.
//! - **Group ranks** are the members in (namespace, rank) order, so replicas built
//!   from the same set listed in different orders agree without talking.
//! - **Collectives** are numbered: 0 is the construct, then fences, then the
//!   destruct; members call them in the same order (as MPI requires). A collective
//!   opens at a replica on its first contribution (local or remote) and expects the
//!   members current at that moment; it completes when this process called it and
//!   contributed + departed = expected. A replica accepts contributions for its
//!   oldest open collective and the next one (a faster member may be one ahead,
//!   never two): anything else is [`GroupError::NotInFlight`].
//! - **Departed accounting.** A member that leaves or is lost while a collective is
//!   open counts as departed in it unless it already contributed (then its
//!   contribution stands). Replicas agree on that as long as the transport keeps
//!   each sender's messages in order and reports a loss after the last message it
//!   delivers from the lost process (a PMIx server reading a socket to EOF does):
//!   every replica then sees a member's contribution and its departure in the same
//!   order, and, provided each broadcast reaches all its recipients or none, the
//!   same cause (a leaver's `PMIX_GROUP_LEFT` comes before its loss notice, or was
//!   dropped everywhere): the cause decides whether a construct without FT aborts.
//!   The in-memory simulator of the tests does exactly that.
//! - **Construct** completes on the survivors when members *leave*, with or without
//!   `PMIX_GROUP_FT_COLLECTIVE` (seed 001: a leaver is accounted departed "so the
//!   in-flight collective can complete on the survivors rather than block"); each
//!   survivor has had the leaver's `PMIX_GROUP_LEFT`. A member *lost* before
//!   contributing aborts a construct without `PMIX_GROUP_FT_COLLECTIVE`: a
//!   `PMIX_GROUP_CONSTRUCT_ABORT` event naming the first lost member, then the
//!   completion with status `PMIX_GROUP_CONSTRUCT_ABORT`; the record goes. With it,
//!   one `PMIX_GROUP_MEMBER_FAILED` per departed member (left ones too, as docs/design.md
//!   says; [`Notification::cause`] tells them apart), then a successful completion
//!   over the survivors. Every outcome waits for every expected member to
//!   contribute or depart, so no contribution arrives after it. Each process applies
//!   the directive it passed itself.
//! - **Destruct** completes on the survivors whatever departs (`PMIX_SUCCESS`).
//! - **Fence** with `PMIX_GROUP_FT_COLLECTIVE` completes on the survivors; without
//!   it, a departure makes it complete (once everyone is accounted for) with
//!   `PMIX_ERR_PROC_TERM_WO_SYNC` if a departed member was lost, else
//!   `PMIX_ERR_NOT_A_MEMBER`. As in ULFM, a member whose fence opened after it had
//!   already seen the departure does not expect the departed member and succeeds:
//!   non-FT error returns need not be uniform.
//! - **Leave.** The leaver's record goes at once and [`Groups::leave`] returns the
//!   `PMIX_GROUP_LEFT` [`Message`] with its recipients (the current other members);
//!   the call is complete then. A call of the leaver still in flight on the group
//!   completes with `PMIX_ERR_NOT_A_MEMBER` ([`Departure::cancelled`]). A process
//!   may leave a group it is only invited to (it declines). Receivers remove the
//!   leaver before the `PMIX_GROUP_LEFT` event is queued, so no handler sees it as a
//!   member. Leaving a group not in the list: `PMIX_ERR_NOT_FOUND`; a second
//!   `PMIX_GROUP_LEFT` from the same member: [`GroupError::Departed`]
//!   (`PMIX_ERR_NOT_A_MEMBER`).
//! - **Loss** of a member of a constructed group raises `PMIX_GROUP_MEMBER_FAILED`
//!   only when the process constructed it with `PMIX_GROUP_NOTIFY_TERMINATION`.
//! - **Invitations.** The runtime creates a record when it learns of a construct
//!   that lists the process ([`Groups::invite`]), so early contributions and
//!   departures are counted before the local construct call.
//! - **Bad input** is an error value, never a panic, and changes nothing.
//!
//! # Layout
//! - `id`: group ids, namespaces and process ids.
//! - `members`: [`MemberSet`] bitsets and the [`Roster`] that numbers the members.
//! - `messages`: what crosses a replica's boundary: [`Message`]s, [`Output`]s and
//!   [`GroupError`]s.
//! - `collective`: the in-flight collectives' accounting (contributed, departed,
//!   pending) and their outcomes.
//! - `machine`: the [`Group`] replica: phases, checks, the output queue, and the
//!   [`Departure`] a leave hands out (it holds the replica).
//! - `table`: [`Groups`], a process's replicas by id.

mod collective;
mod id;
mod machine;
mod members;
mod messages;
mod table;

pub use id::{FIRST_RESERVED_RANK, GroupId, IdError, IdKind, MAX_NSLEN, Nspace, ProcId};
pub use machine::{Departure, Group, Phase};
pub use members::{Iter, MAX_MEMBERS, MemberSet, NoMemory, OutOfRange, Roster, RosterError};
pub use messages::{
    Body, CollectiveOp, Completion, ConstructOptions, DepartureCause, GroupError, Message,
    Notification, Output,
};
pub use table::{GroupOutput, Groups};

pub(crate) use members::{next_set, tail_mask, try_boxed};
