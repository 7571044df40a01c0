//! One process's replica of one group: the sans-I/O state machine of DESIGN §4.

use core::fmt;

use super::id::{GroupId, ProcId};
use super::members::{MemberSet, NoMemory, Roster, RosterError, next_set};
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
    /// ([`Group::others`], read before the next input).
    Send(Body),
    /// Raise this event on the local process.
    Notify(Notification),
    /// A local call completed with this status.
    Complete(Completion),
}

/// Where a replica stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// The runtime told this process of a construct that lists it; it has not called
    /// construct yet (it may decline with a leave).
    Invited,
    /// This process contributed to the construct; waiting for the others.
    Constructing,
    /// Constructed, no local call in flight.
    Active,
    /// A local fence is in flight.
    Fencing,
    /// A local destruct is in flight.
    Destructing,
    /// Destructed (terminal: the record goes once its outputs are polled).
    Destructed,
    /// The construct aborted (terminal).
    Aborted,
}

impl Phase {
    /// `true` once the group is gone for this process (destructed or aborted).
    pub fn is_terminal(self) -> bool {
        matches!(self, Phase::Destructed | Phase::Aborted)
    }
}

/// Why a group call or input was refused. Nothing changed when one is returned.
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
}

impl PmixError for GroupError {
    fn status(&self) -> Status {
        match self {
            GroupError::NotFound | GroupError::NotJoined => Status::ERR_NOT_FOUND,
            GroupError::NotAMember | GroupError::Departed { .. } => Status::ERR_NOT_A_MEMBER,
            GroupError::Roster(e) => e.status(),
            GroupError::NoMemory(e) => e.status(),
            GroupError::Undrained => Status::ERR_WOULD_BLOCK,
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

/// One collective as this replica tracks it: per expected member, contributed,
/// departed (expected, not contributed, no longer current) or pending.
#[derive(Debug, Clone)]
struct Slot {
    active: bool,
    seq: u32,
    op: CollectiveOp,
    /// `Some(ft)` once this process called it (with `PMIX_GROUP_FT_COLLECTIVE` = ft).
    local_ft: Option<bool>,
    expected: MemberSet,
    contributed: MemberSet,
    departed_left: u32,
    departed_lost: u32,
    /// The first expected member lost before contributing, in the order this replica
    /// learned of the losses: the one a construct without FT names when it aborts.
    first_lost: Option<u32>,
}

impl Slot {
    fn new(n: u32) -> Result<Slot, NoMemory> {
        Ok(Slot {
            active: false,
            seq: 0,
            op: CollectiveOp::Construct,
            local_ft: None,
            expected: MemberSet::new(n)?,
            contributed: MemberSet::new(n)?,
            departed_left: 0,
            departed_lost: 0,
            first_lost: None,
        })
    }

    fn departed(&self) -> u32 {
        self.departed_left + self.departed_lost
    }
}

/// An output waiting to be polled. `ReportDeparted` stands for one
/// `PMIX_GROUP_MEMBER_FAILED` per departed member of a slot, produced lazily so the
/// queue stays a few entries long whatever the group size.
#[derive(Debug, Clone, Copy)]
enum Item {
    Send(Body),
    Notify { code: Status, member: u32 },
    ReportDeparted { slot: u8, next: u32 },
    Complete(Completion),
}

/// The most items one input queues (a leave that completes a construct: its
/// `PMIX_GROUP_LEFT`, then either the abort event an earlier loss called for or the
/// lazy member-failed reports of FT, then the completion); the queue is empty before
/// every input.
const QUEUE: usize = 4;

#[derive(Debug, Clone)]
struct Queue {
    items: [Option<Item>; QUEUE],
    head: usize,
    len: usize,
}

impl Queue {
    fn push(&mut self, item: Item) {
        // Every input starts on an empty queue (`Group::ready`) and pushes at most
        // `QUEUE` items (`outputs_per_input_fit_the_queue` checks the worst cases).
        if let Some(slot) = self.items.get_mut(self.len) {
            *slot = Some(item);
            self.len += 1;
        }
    }

    fn is_empty(&self) -> bool {
        self.head == self.len
    }
}

/// One process's replica of one group.
///
/// Created (allocating its member sets once) when the process learns of the group;
/// afterwards every call and input runs in O(1) (plus O(n/64) to open a collective)
/// and never allocates. Each input may queue outputs; poll them all with
/// [`Group::poll_output`] before the next input (else [`GroupError::Undrained`]).
#[derive(Debug, Clone)]
pub struct Group {
    id: GroupId,
    roster: Roster,
    me: u32,
    phase: Phase,
    opts: ConstructOptions,
    current: MemberSet,
    lost: MemberSet,
    slots: [Slot; 2],
    completed: u32,
    queue: Queue,
}

impl Group {
    /// The replica of group `id` (members `roster`) at process `me`, in phase
    /// [`Phase::Invited`]: the construct is known to be in flight and contributions
    /// are accepted; call [`Group::construct`] to take part.
    ///
    /// # Errors
    /// [`GroupError::CallerNotListed`] if `me` is not in `roster`;
    /// [`GroupError::NoMemory`].
    pub fn new(id: GroupId, me: &ProcId, roster: Roster) -> Result<Group, GroupError> {
        let me = roster.index_of(me).ok_or(GroupError::CallerNotListed)?;
        let n = roster.len();
        let mut slots = [Slot::new(n)?, Slot::new(n)?];
        slots[0].active = true;
        slots[0].expected.fill();
        Ok(Group {
            id,
            roster,
            me,
            phase: Phase::Invited,
            opts: ConstructOptions::default(),
            current: MemberSet::full(n)?,
            lost: MemberSet::new(n)?,
            slots,
            completed: 0,
            queue: Queue {
                items: [None; QUEUE],
                head: 0,
                len: 0,
            },
        })
    }

    /// The group id.
    pub fn id(&self) -> &GroupId {
        &self.id
    }

    /// Where this replica stands.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The initial membership (group ranks are indexes into it).
    pub fn roster(&self) -> &Roster {
        &self.roster
    }

    /// This process's group rank.
    pub fn my_rank(&self) -> u32 {
        self.me
    }

    /// The options of this process's construct call (defaults before it).
    pub fn options(&self) -> ConstructOptions {
        self.opts
    }

    /// The current members (initial membership minus departures), by group rank.
    pub fn current(&self) -> &MemberSet {
        &self.current
    }

    /// The number of current members, in O(1).
    pub fn member_count(&self) -> u32 {
        self.current.len()
    }

    /// `true` if `proc` is a current member.
    pub fn is_member(&self, proc: &ProcId) -> bool {
        self.roster
            .index_of(proc)
            .is_some_and(|i| self.current.contains(i))
    }

    /// The current members, in group rank order.
    pub fn members(&self) -> impl Iterator<Item = ProcId> + '_ {
        self.current.iter().filter_map(|i| self.roster.get(i))
    }

    /// The current members other than this process: where [`Output::Send`] goes.
    pub fn others(&self) -> impl Iterator<Item = ProcId> + '_ {
        let me = self.me;
        self.current
            .iter()
            .filter(move |&i| i != me)
            .filter_map(|i| self.roster.get(i))
    }

    /// How `proc` departed, or `None` if it is a current member or was never one.
    pub fn departure_of(&self, proc: &ProcId) -> Option<DepartureCause> {
        let i = self.roster.index_of(proc)?;
        if self.current.contains(i) {
            None
        } else if self.lost.contains(i) {
            Some(DepartureCause::Lost)
        } else {
            Some(DepartureCause::Left)
        }
    }

    /// The number of collectives this replica completed (the construct included).
    pub fn completed_collectives(&self) -> u32 {
        self.completed
    }

    /// `true` if outputs wait to be polled.
    pub fn has_output(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Heap bytes this replica holds (member sets and roster), for sizing.
    pub fn heap_bytes(&self) -> usize {
        let set = |s: &MemberSet| s.words().len() * 8;
        set(&self.current)
            + set(&self.lost)
            + self
                .slots
                .iter()
                .map(|s| set(&s.expected) + set(&s.contributed))
                .sum::<usize>()
            + self.roster.heap_bytes()
    }

    /// `PMIx_Group_construct` by this process: contribute to the construct. It
    /// completes once every member contributed or departed: with `PMIX_SUCCESS` on
    /// the survivors, unless a member was lost before contributing and `opts` lacks
    /// `ft_collective` (then `PMIX_GROUP_CONSTRUCT_ABORT`, and the record goes).
    /// Members that leave never abort it.
    ///
    /// # Errors
    /// [`GroupError::AlreadyExists`] unless the phase is [`Phase::Invited`];
    /// [`GroupError::Undrained`].
    #[doc(alias = "PMIx_Group_construct")]
    pub fn construct(&mut self, opts: ConstructOptions) -> Result<(), GroupError> {
        self.ready()?;
        if self.phase != Phase::Invited {
            return Err(GroupError::AlreadyExists);
        }
        self.opts = opts;
        let me = self.me;
        let slot = &mut self.slots[0];
        slot.local_ft = Some(opts.ft_collective);
        let _ = slot.contributed.insert(me);
        self.phase = Phase::Constructing;
        self.queue.push(Item::Send(Body::Contribute {
            op: CollectiveOp::Construct,
            seq: 0,
        }));
        self.try_complete();
        Ok(())
    }

    /// `PMIx_Fence` over the group by this process, with `PMIX_GROUP_FT_COLLECTIVE`
    /// = `ft`.
    ///
    /// # Errors
    /// [`GroupError::NotJoined`] before construct, [`GroupError::Busy`] while a call
    /// is in flight, [`GroupError::NotFound`] once terminal,
    /// [`GroupError::OpMismatch`] if the others started a destruct as this
    /// collective, [`GroupError::Undrained`].
    #[doc(alias = "PMIx_Fence")]
    pub fn fence(&mut self, ft: bool) -> Result<(), GroupError> {
        self.start_local(CollectiveOp::Fence, ft)
    }

    /// `PMIx_Group_destruct` by this process. It completes on the survivors whatever
    /// departs meanwhile.
    ///
    /// # Errors
    /// As [`Group::fence`].
    #[doc(alias = "PMIx_Group_destruct")]
    pub fn destruct(&mut self) -> Result<(), GroupError> {
        self.start_local(CollectiveOp::Destruct, true)
    }

    /// A message from another replica.
    ///
    /// # Errors
    /// [`GroupError::NotAMember`] from a process outside the group,
    /// [`GroupError::Departed`] from one that departed; [`GroupError::Itself`]; [`GroupError::NotInFlight`],
    /// [`GroupError::OpMismatch`], [`GroupError::DuplicateContribution`] for
    /// contributions that do not fit; [`GroupError::NotFound`] once terminal;
    /// [`GroupError::Undrained`].
    pub fn on_message(&mut self, from: &ProcId, body: Body) -> Result<(), GroupError> {
        self.ready()?;
        let index = self.member_index(from)?;
        match body {
            Body::Contribute { op, seq } => self.on_contribution(index, op, seq),
            Body::Left => {
                self.on_departure(index, DepartureCause::Left);
                Ok(())
            }
        }
    }

    /// The runtime reports `proc` terminated (or unreachable).
    ///
    /// # Errors
    /// As [`Group::on_message`] for the sender.
    pub fn on_lost(&mut self, proc: &ProcId) -> Result<(), GroupError> {
        self.ready()?;
        let index = self.member_index(proc)?;
        self.on_departure(index, DepartureCause::Lost);
        Ok(())
    }

    /// The next output, in order; `None` when there is none.
    pub fn poll_output(&mut self) -> Option<Output> {
        loop {
            if self.queue.is_empty() {
                return None;
            }
            let head = self.queue.head;
            let item = self.queue.items[head]?;
            if let Item::ReportDeparted { slot, next } = item {
                let s = &self.slots[usize::from(slot)];
                let (exp, con, cur) = (
                    s.expected.words(),
                    s.contributed.words(),
                    self.current.words(),
                );
                if let Some(m) = next_set(exp, next, |i, w| w & !con[i] & !cur[i]) {
                    self.queue.items[head] = Some(Item::ReportDeparted { slot, next: m + 1 });
                    return Some(self.notify(Status::GROUP_MEMBER_FAILED, m));
                }
            }
            self.queue.items[head] = None;
            self.queue.head += 1;
            if self.queue.is_empty() {
                self.queue.head = 0;
                self.queue.len = 0;
            }
            match item {
                Item::Send(body) => return Some(Output::Send(body)),
                Item::Notify { code, member } => return Some(self.notify(code, member)),
                Item::Complete(c) => return Some(Output::Complete(c)),
                Item::ReportDeparted { .. } => {}
            }
        }
    }

    /// `PMIx_Group_leave` by this process: the group is gone for it at once. The
    /// returned [`Departure`] holds the `PMIX_GROUP_LEFT` message and its recipients;
    /// the call is complete when it is generated. Outputs not yet polled are dropped.
    #[doc(alias = "PMIx_Group_leave")]
    pub fn leave(self) -> Departure {
        Departure { group: self }
    }

    fn notify(&self, code: Status, member: u32) -> Output {
        let cause = if self.lost.contains(member) {
            DepartureCause::Lost
        } else {
            DepartureCause::Left
        };
        Output::Notify(Notification {
            code,
            proc: self.roster.proc_at(member),
            cause,
        })
    }

    fn ready(&self) -> Result<(), GroupError> {
        if self.phase.is_terminal() {
            return Err(GroupError::NotFound);
        }
        if !self.queue.is_empty() {
            return Err(GroupError::Undrained);
        }
        Ok(())
    }

    fn member_index(&self, proc: &ProcId) -> Result<u32, GroupError> {
        let index = self.roster.index_of(proc).ok_or(GroupError::NotAMember)?;
        if index == self.me {
            return Err(GroupError::Itself);
        }
        if !self.current.contains(index) {
            return Err(GroupError::Departed { rank: index });
        }
        Ok(index)
    }

    fn slot_index(seq: u32) -> usize {
        (seq % 2) as usize
    }

    /// Opens the slot of collective `seq` with the current members as expected.
    fn open(&mut self, seq: u32, op: CollectiveOp) {
        let s = &mut self.slots[Self::slot_index(seq)];
        let _ = s.expected.copy_from(&self.current);
        s.contributed.clear();
        s.active = true;
        s.seq = seq;
        s.op = op;
        s.local_ft = None;
        s.departed_left = 0;
        s.departed_lost = 0;
        s.first_lost = None;
    }

    fn start_local(&mut self, op: CollectiveOp, ft: bool) -> Result<(), GroupError> {
        self.ready()?;
        match self.phase {
            Phase::Active => {}
            Phase::Invited => return Err(GroupError::NotJoined),
            _ => return Err(GroupError::Busy),
        }
        let seq = self.completed;
        let k = Self::slot_index(seq);
        if !self.slots[k].active {
            self.open(seq, op);
        } else if self.slots[k].op != op {
            return Err(GroupError::OpMismatch {
                seq,
                expected: self.slots[k].op,
                got: op,
            });
        }
        let me = self.me;
        let s = &mut self.slots[k];
        s.local_ft = Some(ft);
        let _ = s.contributed.insert(me);
        self.phase = if op == CollectiveOp::Destruct {
            Phase::Destructing
        } else {
            Phase::Fencing
        };
        self.queue.push(Item::Send(Body::Contribute { op, seq }));
        self.try_complete();
        Ok(())
    }

    fn on_contribution(
        &mut self,
        index: u32,
        op: CollectiveOp,
        seq: u32,
    ) -> Result<(), GroupError> {
        let c = self.completed;
        let cur = &self.slots[Self::slot_index(c)];
        let in_window = if seq == c {
            true
        } else if seq == c.wrapping_add(1) {
            // The sender finished collective `c`, which needs this process's
            // contribution: anything else is not genuine. Nothing follows a destruct.
            cur.active && cur.contributed.contains(self.me) && cur.op != CollectiveOp::Destruct
        } else {
            false
        };
        if !in_window {
            return Err(GroupError::NotInFlight { seq });
        }
        // Collective 0 is the construct, and only it.
        if (seq == 0) != (op == CollectiveOp::Construct) {
            return Err(if seq == 0 {
                GroupError::OpMismatch {
                    seq,
                    expected: CollectiveOp::Construct,
                    got: op,
                }
            } else {
                GroupError::NotInFlight { seq }
            });
        }
        let k = Self::slot_index(seq);
        if self.slots[k].active {
            if self.slots[k].op != op {
                return Err(GroupError::OpMismatch {
                    seq,
                    expected: self.slots[k].op,
                    got: op,
                });
            }
            if self.slots[k].contributed.contains(index) {
                return Err(GroupError::DuplicateContribution { rank: index, seq });
            }
        } else {
            self.open(seq, op);
        }
        let _ = self.slots[k].contributed.insert(index);
        if seq == c {
            self.try_complete();
        }
        Ok(())
    }

    fn on_departure(&mut self, index: u32, cause: DepartureCause) {
        let _ = self.current.remove(index);
        if cause == DepartureCause::Lost {
            let _ = self.lost.insert(index);
        }
        for s in self.slots.iter_mut().filter(|s| s.active) {
            if s.expected.contains(index) && !s.contributed.contains(index) {
                match cause {
                    DepartureCause::Left => s.departed_left += 1,
                    DepartureCause::Lost => {
                        s.departed_lost += 1;
                        s.first_lost.get_or_insert(index);
                    }
                }
            }
        }
        let constructed = matches!(
            self.phase,
            Phase::Active | Phase::Fencing | Phase::Destructing
        );
        match cause {
            DepartureCause::Left => self.queue.push(Item::Notify {
                code: Status::GROUP_LEFT,
                member: index,
            }),
            DepartureCause::Lost if constructed && self.opts.notify_termination => {
                self.queue.push(Item::Notify {
                    code: Status::GROUP_MEMBER_FAILED,
                    member: index,
                });
            }
            DepartureCause::Lost => {}
        }
        self.try_complete();
    }

    /// Completes collective `completed` once this process called it and every
    /// expected member contributed or departed.
    fn try_complete(&mut self) {
        let seq = self.completed;
        let k = Self::slot_index(seq);
        let s = &self.slots[k];
        let Some(ft) = s.local_ft.filter(|_| s.active) else {
            return;
        };
        if s.contributed.len() + s.departed() != s.expected.len() {
            return;
        }
        let (op, departed, lost, first_lost) = (s.op, s.departed(), s.departed_lost, s.first_lost);
        self.slots[k].active = false;
        self.completed += 1;
        let done = |status| Item::Complete(Completion { op, seq, status });
        match op {
            // With FT, every departure (left or lost) is reported, then success.
            CollectiveOp::Construct if ft && departed > 0 => {
                self.phase = Phase::Active;
                self.queue.push(Item::ReportDeparted {
                    slot: k as u8,
                    next: 0,
                });
                self.queue.push(done(Status::SUCCESS));
            }
            // Leavers alone never abort (seed 001: a leave lets the construct
            // complete on the survivors); their PMIX_GROUP_LEFT was raised already.
            CollectiveOp::Construct if lost == 0 => {
                self.phase = Phase::Active;
                self.queue.push(done(Status::SUCCESS));
            }
            // Without FT, a member lost before contributing aborts it.
            CollectiveOp::Construct => {
                self.phase = Phase::Aborted;
                if let Some(m) = first_lost {
                    self.queue.push(Item::Notify {
                        code: Status::GROUP_CONSTRUCT_ABORT,
                        member: m,
                    });
                }
                self.queue.push(done(Status::GROUP_CONSTRUCT_ABORT));
            }
            CollectiveOp::Fence => {
                self.phase = Phase::Active;
                let status = if departed == 0 || ft {
                    Status::SUCCESS
                } else if lost > 0 {
                    Status::ERR_PROC_TERM_WO_SYNC
                } else {
                    Status::ERR_NOT_A_MEMBER
                };
                self.queue.push(done(status));
            }
            CollectiveOp::Destruct => {
                self.phase = Phase::Destructed;
                self.queue.push(done(Status::SUCCESS));
            }
        }
    }

    /// The local call in flight, if any.
    fn pending_call(&self) -> Option<(CollectiveOp, u32)> {
        if !matches!(
            self.phase,
            Phase::Constructing | Phase::Fencing | Phase::Destructing
        ) {
            return None;
        }
        let s = &self.slots[Self::slot_index(self.completed)];
        (s.active && s.local_ft.is_some()).then_some((s.op, s.seq))
    }
}

/// A completed leave: the group is gone for the leaver. Holds the
/// `PMIX_GROUP_LEFT` message, ranged to the members that were current at the leave.
#[derive(Debug, Clone)]
pub struct Departure {
    group: Group,
}

impl Departure {
    /// The group left.
    pub fn group_id(&self) -> &GroupId {
        &self.group.id
    }

    /// The `PMIX_GROUP_LEFT` message naming the group and the leaver.
    pub fn message(&self) -> Message {
        let from = self.leaver();
        Message {
            group: self.group.id,
            from,
            body: Body::Left,
        }
    }

    /// The leaver (this process).
    pub fn leaver(&self) -> ProcId {
        self.group.roster.proc_at(self.group.me)
    }

    /// Where the message goes: the current other members at the leave.
    pub fn recipients(&self) -> impl Iterator<Item = ProcId> + '_ {
        self.group.others()
    }

    /// The number of recipients.
    pub fn recipient_count(&self) -> u32 {
        self.group.current.len() - 1
    }

    /// A call of the leaver that was in flight on the group; it completes with
    /// `PMIX_ERR_NOT_A_MEMBER` (its contribution still counts at the others).
    pub fn cancelled(&self) -> Option<Completion> {
        self.group.pending_call().map(|(op, seq)| Completion {
            op,
            seq,
            status: Status::ERR_NOT_A_MEMBER,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::id::Nspace;
    use std::vec::Vec;

    fn proc(r: u32) -> ProcId {
        ProcId::new(Nspace::new("t").unwrap(), r).unwrap()
    }

    fn group(n: u32) -> Group {
        let roster = Roster::from_ranks(proc(0).nspace, 0..n).unwrap();
        Group::new(GroupId::new("g").unwrap(), &proc(0), roster).unwrap()
    }

    fn drain(g: &mut Group) -> Vec<Output> {
        core::iter::from_fn(|| g.poll_output()).collect()
    }

    /// The inputs that queue the most items: each output must come out.
    #[test]
    fn outputs_per_input_fit_the_queue() {
        let codes = |out: &[Output]| -> Vec<Status> {
            out.iter()
                .map(|o| match o {
                    Output::Notify(n) => n.code,
                    Output::Complete(c) => c.status,
                    Output::Send(_) => Status::SUCCESS,
                })
                .collect()
        };
        let c0 = Body::Contribute {
            op: CollectiveOp::Construct,
            seq: 0,
        };
        // A leave that completes a construct an earlier loss aborts (no FT): its
        // event, the abort event, the completion.
        let mut g = group(4);
        g.construct(ConstructOptions::default()).unwrap();
        drain(&mut g);
        g.on_message(&proc(1), c0).unwrap();
        g.on_lost(&proc(3)).unwrap();
        assert!(drain(&mut g).is_empty(), "a loss alone waits for rank 2");
        g.on_message(&proc(2), Body::Left).unwrap();
        assert_eq!(g.queue.len, 3);
        assert_eq!(
            codes(&drain(&mut g)),
            [
                Status::GROUP_LEFT,
                Status::GROUP_CONSTRUCT_ABORT,
                Status::GROUP_CONSTRUCT_ABORT
            ]
        );
        // A leave that completes an FT construct: its event, the lazy member-failed
        // report (one output per departed member), the completion.
        let mut g = group(4);
        g.construct(ConstructOptions {
            ft_collective: true,
            notify_termination: false,
        })
        .unwrap();
        drain(&mut g);
        g.on_message(&proc(1), c0).unwrap();
        g.on_lost(&proc(3)).unwrap();
        g.on_message(&proc(2), Body::Left).unwrap();
        assert_eq!(g.queue.len, 3);
        assert_eq!(
            codes(&drain(&mut g)),
            [
                Status::GROUP_LEFT,
                Status::GROUP_MEMBER_FAILED,
                Status::GROUP_MEMBER_FAILED,
                Status::SUCCESS
            ]
        );
        // A construct call completing an FT construct with departures: send, the
        // lazy member-failed reports, completion.
        let mut g = group(4);
        g.on_message(&proc(1), c0).unwrap();
        g.on_lost(&proc(2)).unwrap();
        g.on_lost(&proc(3)).unwrap();
        g.construct(ConstructOptions {
            ft_collective: true,
            notify_termination: true,
        })
        .unwrap();
        assert_eq!(g.queue.len, 3);
        let out = drain(&mut g);
        assert_eq!(out.len(), 4, "{out:?}");
        assert!(matches!(out[0], Output::Send(_)));
        assert!(matches!(out[3], Output::Complete(c) if c.status == Status::SUCCESS));
        assert!(g.queue.is_empty());
    }
}
