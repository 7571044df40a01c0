//! One process's replica of one group: the sans-I/O state machine of docs/design.md §4. It
//! owns the replica's phase, its current and lost members, and its output queue;
//! it checks each call and input, hands the collective accounting to
//! `collective`, and turns what happens into outputs (the types of `messages`). A
//! leave hands the replica out as a [`Departure`].

use heapless::Deque;

use super::collective::{Collectives, Outcome};
use super::id::{GroupId, ProcId};
use super::members::{MemberSet, Roster};
use super::messages::{
    Body, CollectiveOp, Completion, ConstructOptions, DepartureCause, GroupError, Message,
    Notification, Output,
};
use crate::status::Status;

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

/// An output waiting to be polled. `ReportDeparted` stands for one
/// `PMIX_GROUP_MEMBER_FAILED` per departed member of a slot, produced lazily so the
/// queue stays a few entries long whatever the group size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Send(Body),
    Notify { code: Status, member: u32 },
    ReportDeparted { slot: u8, next: u32 },
    Complete(Completion),
}

/// The capacity of a replica's output queue: the most items one input queues (a
/// leave that completes a construct: its `PMIX_GROUP_LEFT`, then either the abort
/// event an earlier loss called for or the lazy member-failed reports of FT, then
/// the completion). Every input starts on an empty queue ([`Group::ready`] refuses
/// it otherwise), so it never overflows while that bound holds
/// (`outputs_per_input_fit_the_queue` checks the worst cases); if it did, the
/// queue hands the item back ([`Overflow`]) and the input fails with
/// [`GroupError::OutputOverflow`].
const QUEUE: usize = 4;

/// The output queue was full: the item it handed back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Overflow(Item);

impl From<Overflow> for GroupError {
    fn from(_: Overflow) -> GroupError {
        GroupError::OutputOverflow { capacity: QUEUE }
    }
}

/// One process's replica of one group.
///
/// Created (allocating its member sets once) when the process learns of the group;
/// afterwards every call and input runs in O(1) (plus O(n/64) to open a collective)
/// and never allocates. Each input may queue outputs; poll them all with
/// [`Group::poll_output`] before the next input (else [`GroupError::Undrained`]).
/// Outputs wait in a fixed queue (a `heapless::Deque` of four) that each input's
/// outputs fit; one that did not would be handed back and fail the input with
/// [`GroupError::OutputOverflow`], never dropped.
#[derive(Debug, Clone)]
pub struct Group {
    id: GroupId,
    roster: Roster,
    me: u32,
    phase: Phase,
    opts: ConstructOptions,
    current: MemberSet,
    lost: MemberSet,
    collectives: Collectives,
    queue: Deque<Item, QUEUE>,
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
        let collectives = Collectives::new(n)?;
        Ok(Group {
            id,
            roster,
            me,
            phase: Phase::Invited,
            opts: ConstructOptions::default(),
            current: MemberSet::full(n)?,
            lost: MemberSet::new(n)?,
            collectives,
            queue: Deque::new(),
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
        self.collectives.completed()
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
            + self.collectives.heap_bytes()
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
        // The construct (number 0) is open, expecting every member, since `new`.
        let op = CollectiveOp::Construct;
        let seq = self
            .collectives
            .call(self.me, op, opts.ft_collective, &self.current)?;
        self.opts = opts;
        self.phase = Phase::Constructing;
        self.push(Item::Send(Body::Contribute { op, seq }))?;
        self.try_complete()?;
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
            Body::Left => Ok(self.on_departure(index, DepartureCause::Left)?),
        }
    }

    /// The runtime reports `proc` terminated (or unreachable).
    ///
    /// # Errors
    /// As [`Group::on_message`] for the sender.
    pub fn on_lost(&mut self, proc: &ProcId) -> Result<(), GroupError> {
        self.ready()?;
        let index = self.member_index(proc)?;
        Ok(self.on_departure(index, DepartureCause::Lost)?)
    }

    /// The next output, in order; `None` when there is none.
    pub fn poll_output(&mut self) -> Option<Output> {
        loop {
            let item = *self.queue.front()?;
            if let Item::ReportDeparted { slot, next } = item
                && let Some(m) = self.collectives.next_departed(slot, next, &self.current)
            {
                if let Some(head) = self.queue.front_mut() {
                    *head = Item::ReportDeparted { slot, next: m + 1 };
                }
                return Some(self.notify(Status::GROUP_MEMBER_FAILED, m));
            }
            let _ = self.queue.pop_front();
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
        Departure::new(self)
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

    /// Queues `item`; a full queue hands it back.
    fn push(&mut self, item: Item) -> Result<(), Overflow> {
        self.queue.push_back(item).map_err(Overflow)
    }

    /// Checks that the group is live and its queue empty, as every input needs.
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

    fn start_local(&mut self, op: CollectiveOp, ft: bool) -> Result<(), GroupError> {
        self.ready()?;
        match self.phase {
            Phase::Active => {}
            Phase::Invited => return Err(GroupError::NotJoined),
            _ => return Err(GroupError::Busy),
        }
        let seq = self.collectives.call(self.me, op, ft, &self.current)?;
        self.phase = if op == CollectiveOp::Destruct {
            Phase::Destructing
        } else {
            Phase::Fencing
        };
        self.push(Item::Send(Body::Contribute { op, seq }))?;
        self.try_complete()?;
        Ok(())
    }

    fn on_contribution(
        &mut self,
        index: u32,
        op: CollectiveOp,
        seq: u32,
    ) -> Result<(), GroupError> {
        self.collectives
            .contribute(self.me, index, op, seq, &self.current)?;
        if seq == self.collectives.completed() {
            self.try_complete()?;
        }
        Ok(())
    }

    fn on_departure(&mut self, index: u32, cause: DepartureCause) -> Result<(), Overflow> {
        let _ = self.current.remove(index);
        if cause == DepartureCause::Lost {
            let _ = self.lost.insert(index);
        }
        self.collectives.depart(index, cause);
        let constructed = matches!(
            self.phase,
            Phase::Active | Phase::Fencing | Phase::Destructing
        );
        match cause {
            DepartureCause::Left => self.push(Item::Notify {
                code: Status::GROUP_LEFT,
                member: index,
            })?,
            DepartureCause::Lost if constructed && self.opts.notify_termination => {
                self.push(Item::Notify {
                    code: Status::GROUP_MEMBER_FAILED,
                    member: index,
                })?;
            }
            DepartureCause::Lost => {}
        }
        self.try_complete()
    }

    /// Completes the collective in flight once this process called it and every
    /// expected member contributed or departed: the phase moves on and the outcome's
    /// outputs are queued.
    fn try_complete(&mut self) -> Result<(), Overflow> {
        let Some(f) = self.collectives.finish() else {
            return Ok(());
        };
        let done = |status| {
            Item::Complete(Completion {
                op: f.op,
                seq: f.seq,
                status,
            })
        };
        match f.outcome {
            Outcome::Constructed { report_departed } => {
                self.phase = Phase::Active;
                if let Some(slot) = report_departed {
                    self.push(Item::ReportDeparted { slot, next: 0 })?;
                }
                self.push(done(Status::SUCCESS))
            }
            Outcome::Aborted { first_lost } => {
                self.phase = Phase::Aborted;
                if let Some(m) = first_lost {
                    self.push(Item::Notify {
                        code: Status::GROUP_CONSTRUCT_ABORT,
                        member: m,
                    })?;
                }
                self.push(done(Status::GROUP_CONSTRUCT_ABORT))
            }
            Outcome::Fenced { status } => {
                self.phase = Phase::Active;
                self.push(done(status))
            }
            Outcome::Destructed => {
                self.phase = Phase::Destructed;
                self.push(done(Status::SUCCESS))
            }
        }
    }

    /// The local call in flight, if any.
    pub(super) fn pending_call(&self) -> Option<(CollectiveOp, u32)> {
        if !matches!(
            self.phase,
            Phase::Constructing | Phase::Fencing | Phase::Destructing
        ) {
            return None;
        }
        self.collectives.called()
    }
}

/// A completed leave: the group is gone for the leaver. Holds the
/// `PMIX_GROUP_LEFT` message, ranged to the members that were current at the leave.
#[derive(Debug, Clone)]
pub struct Departure {
    group: Group,
}

impl Departure {
    /// The departure of this process from `group`, as it stood at the leave.
    fn new(group: Group) -> Departure {
        Departure { group }
    }

    /// The group left.
    pub fn group_id(&self) -> &GroupId {
        self.group.id()
    }

    /// The `PMIX_GROUP_LEFT` message naming the group and the leaver.
    pub fn message(&self) -> Message {
        let from = self.leaver();
        Message {
            group: *self.group.id(),
            from,
            body: Body::Left,
        }
    }

    /// The leaver (this process).
    pub fn leaver(&self) -> ProcId {
        self.group.roster().proc_at(self.group.my_rank())
    }

    /// Where the message goes: the current other members at the leave.
    pub fn recipients(&self) -> impl Iterator<Item = ProcId> + '_ {
        self.group.others()
    }

    /// The number of recipients.
    pub fn recipient_count(&self) -> u32 {
        self.group.member_count() - 1
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
mod tests;
