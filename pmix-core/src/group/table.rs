//! A process's list of groups: the entry point the runtime drives.

use alloc::collections::BTreeMap;

use super::id::{GroupId, ProcId};
use super::machine::{Departure, Group, Phase};
use super::members::Roster;
use super::messages::{ConstructOptions, GroupError, Message, Output};

/// An output of one of the process's groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupOutput {
    /// The group it comes from.
    pub group: GroupId,
    /// What to do.
    pub output: Output,
}

/// The groups one process knows, by id: invitations, groups being constructed,
/// constructed groups, and terminal ones until their last output is polled.
///
/// Creating a group (an invitation or a construct call) allocates its record; every
/// other call and input only looks records up and never allocates. After each call
/// or input, poll every output ([`Groups::poll_output`]) before the next one.
#[derive(Debug, Clone)]
pub struct Groups {
    me: ProcId,
    groups: BTreeMap<GroupId, Group>,
}

impl Groups {
    /// The (empty) list of process `me`.
    pub fn new(me: ProcId) -> Groups {
        Groups {
            me,
            groups: BTreeMap::new(),
        }
    }

    /// The process this list belongs to.
    pub fn me(&self) -> &ProcId {
        &self.me
    }

    /// The record of group `id`, in any phase (terminal ones stay until drained).
    pub fn get(&self, id: &GroupId) -> Option<&Group> {
        self.groups.get(id)
    }

    /// Every record, by group id.
    pub fn iter(&self) -> impl Iterator<Item = &Group> {
        self.groups.values()
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// `true` if the process knows no group.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The runtime learned that a construct of `id` over `roster` is in flight and
    /// lists this process: create the record ([`Phase::Invited`]) so contributions,
    /// departures and a leave (declining) work before this process calls construct.
    /// Idempotent for the same roster.
    ///
    /// Losses reach a record only once it exists: after creating one, the runtime
    /// reports ([`Groups::on_lost`]) every member it already knows is lost.
    ///
    /// # Errors
    /// [`GroupError::CallerNotListed`]; [`GroupError::AlreadyExists`] if the process
    /// holds `id` with another roster or past the construct;
    /// [`GroupError::NoMemory`].
    pub fn invite(&mut self, id: GroupId, roster: Roster) -> Result<(), GroupError> {
        match self.groups.get(&id) {
            Some(g)
                if matches!(g.phase(), Phase::Invited | Phase::Constructing)
                    && *g.roster() == roster =>
            {
                Ok(())
            }
            Some(_) => Err(GroupError::AlreadyExists),
            None => {
                let g = Group::new(id, &self.me, roster)?;
                self.groups.insert(id, g);
                Ok(())
            }
        }
    }

    /// `PMIx_Group_construct` by this process over `roster` (which must list it),
    /// creating the record unless an invitation did. A runtime that knows some
    /// members are already lost creates the record with [`Groups::invite`], reports
    /// those losses, then calls this.
    ///
    /// # Errors
    /// [`GroupError::MembershipMismatch`] if it was invited with another roster;
    /// [`GroupError::AlreadyExists`] if it already called construct;
    /// [`GroupError::CallerNotListed`]; [`GroupError::NoMemory`];
    /// [`GroupError::Undrained`].
    #[doc(alias = "PMIx_Group_construct")]
    pub fn construct(
        &mut self,
        id: GroupId,
        roster: Roster,
        opts: ConstructOptions,
    ) -> Result<(), GroupError> {
        match self.groups.get_mut(&id) {
            Some(g) if g.phase() == Phase::Invited => {
                if *g.roster() != roster {
                    return Err(GroupError::MembershipMismatch);
                }
                g.construct(opts)
            }
            Some(_) => Err(GroupError::AlreadyExists),
            None => {
                let mut g = Group::new(id, &self.me, roster)?;
                g.construct(opts)?;
                self.groups.insert(id, g);
                Ok(())
            }
        }
    }

    /// `PMIx_Fence` over group `id` with `PMIX_GROUP_FT_COLLECTIVE` = `ft`.
    ///
    /// # Errors
    /// [`GroupError::NotFound`] for an unknown group; otherwise as [`Group::fence`].
    #[doc(alias = "PMIx_Fence")]
    pub fn fence(&mut self, id: &GroupId, ft: bool) -> Result<(), GroupError> {
        self.live_mut(id)?.fence(ft)
    }

    /// `PMIx_Group_destruct` of group `id`.
    ///
    /// # Errors
    /// [`GroupError::NotFound`] for an unknown group; otherwise as
    /// [`Group::destruct`].
    #[doc(alias = "PMIx_Group_destruct")]
    pub fn destruct(&mut self, id: &GroupId) -> Result<(), GroupError> {
        self.live_mut(id)?.destruct()
    }

    /// `PMIx_Group_leave`: drop group `id` from this process's list at once and
    /// return the `PMIX_GROUP_LEFT` message to send to the current other members. The
    /// call is complete when this returns.
    ///
    /// # Errors
    /// [`GroupError::NotFound`] for a group not in the list (never known, already
    /// left, destructed or aborted); [`GroupError::Undrained`].
    #[doc(alias = "PMIx_Group_leave")]
    pub fn leave(&mut self, id: &GroupId) -> Result<Departure, GroupError> {
        let g = self.live_mut(id)?;
        if g.has_output() {
            return Err(GroupError::Undrained);
        }
        let g = self.groups.remove(id).ok_or(GroupError::NotFound)?;
        Ok(g.leave())
    }

    /// A message from another process.
    ///
    /// # Errors
    /// [`GroupError::NotFound`] for a group not in the list (a late message for a
    /// group this process left or finished is one); otherwise as
    /// [`Group::on_message`].
    pub fn on_message(&mut self, msg: &Message) -> Result<(), GroupError> {
        self.live_mut(&msg.group)?.on_message(&msg.from, msg.body)
    }

    /// The runtime reports `proc` lost: it departs every group where it is a current
    /// member. Returns how many.
    ///
    /// # Errors
    /// [`GroupError::Itself`] for this process; [`GroupError::Undrained`] if one of
    /// those groups has outputs waiting (nothing changed then).
    pub fn on_lost(&mut self, proc: &ProcId) -> Result<u32, GroupError> {
        if *proc == self.me {
            return Err(GroupError::Itself);
        }
        let affected = |g: &Group| !g.phase().is_terminal() && g.is_member(proc);
        if self.groups.values().any(|g| affected(g) && g.has_output()) {
            return Err(GroupError::Undrained);
        }
        let mut n = 0;
        for g in self.groups.values_mut().filter(|g| affected(g)) {
            g.on_lost(proc)?;
            n += 1;
        }
        Ok(n)
    }

    /// The next output of any group; a terminal group's record goes with its last
    /// output. `None` when every group is drained.
    pub fn poll_output(&mut self) -> Option<GroupOutput> {
        let g = self.groups.values_mut().find(|g| g.has_output())?;
        let output = g.poll_output()?;
        let group = *g.id();
        if g.phase().is_terminal() && !g.has_output() {
            self.groups.remove(&group);
        }
        Some(GroupOutput { group, output })
    }

    fn live_mut(&mut self, id: &GroupId) -> Result<&mut Group, GroupError> {
        match self.groups.get_mut(id) {
            Some(g) if !g.phase().is_terminal() => Ok(g),
            _ => Err(GroupError::NotFound),
        }
    }
}
