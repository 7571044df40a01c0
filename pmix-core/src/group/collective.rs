//! The in-flight collectives of one replica (docs/design.md §4, departed accounting): which
//! collective comes next, and, per open collective and expected member, contributed,
//! departed (left or lost before contributing) or pending; when a collective
//! completes, and with which outcome. The state machine (`machine`) turns outcomes
//! into phases and outputs; nothing here queues an output.

use super::members::{MemberSet, NoMemory, next_set};
use super::messages::{CollectiveOp, DepartureCause, GroupError};
use crate::status::Status;

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

/// How a collective ended at this replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The construct completed on the survivors (`PMIX_SUCCESS`). With
    /// `PMIX_GROUP_FT_COLLECTIVE` and departures, `report_departed` names the slot
    /// whose departed members each get one `PMIX_GROUP_MEMBER_FAILED` first
    /// ([`Collectives::next_departed`]).
    Constructed {
        /// The slot to report the departed members of.
        report_departed: Option<u8>,
    },
    /// The construct aborted (`PMIX_GROUP_CONSTRUCT_ABORT`): a member was lost before
    /// contributing and this process did not ask for `PMIX_GROUP_FT_COLLECTIVE`.
    Aborted {
        /// The first member lost before contributing, to name in the abort event.
        first_lost: Option<u32>,
    },
    /// A fence completed with this status.
    Fenced {
        /// `PMIX_SUCCESS`, `PMIX_ERR_PROC_TERM_WO_SYNC` or `PMIX_ERR_NOT_A_MEMBER`.
        status: Status,
    },
    /// The destruct completed (`PMIX_SUCCESS`).
    Destructed,
}

/// A collective that completed at this replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Finished {
    /// Which collective.
    pub(super) op: CollectiveOp,
    /// Its number.
    pub(super) seq: u32,
    /// How it ended.
    pub(super) outcome: Outcome,
}

/// The collectives of one replica: number `completed` is the oldest not complete
/// here. A replica accepts contributions to it and to the next one, so two slots
/// (by parity of the number) hold every open collective.
#[derive(Debug, Clone)]
pub(super) struct Collectives {
    slots: [Slot; 2],
    completed: u32,
}

impl Collectives {
    /// The collectives of a group of `n` members, with the construct (number 0) open
    /// and expecting every member.
    pub(super) fn new(n: u32) -> Result<Collectives, NoMemory> {
        let mut slots = [Slot::new(n)?, Slot::new(n)?];
        slots[0].active = true;
        slots[0].expected.fill();
        Ok(Collectives {
            slots,
            completed: 0,
        })
    }

    /// The number of collectives completed here (the next one's number).
    pub(super) fn completed(&self) -> u32 {
        self.completed
    }

    /// Heap bytes of the member sets.
    pub(super) fn heap_bytes(&self) -> usize {
        let set = |s: &MemberSet| s.words().len() * 8;
        self.slots
            .iter()
            .map(|s| set(&s.expected) + set(&s.contributed))
            .sum()
    }

    fn slot_index(seq: u32) -> usize {
        (seq % 2) as usize
    }

    /// Opens the slot of collective `seq` with the `current` members as expected.
    fn open(&mut self, seq: u32, op: CollectiveOp, current: &MemberSet) {
        let s = &mut self.slots[Self::slot_index(seq)];
        let _ = s.expected.copy_from(current);
        s.contributed.clear();
        s.active = true;
        s.seq = seq;
        s.op = op;
        s.local_ft = None;
        s.departed_left = 0;
        s.departed_lost = 0;
        s.first_lost = None;
    }

    /// This process (group rank `me`) calls the next collective as `op`, with
    /// `PMIX_GROUP_FT_COLLECTIVE` = `ft`: it opens with the `current` members as
    /// expected unless a contribution opened it, and this process's contribution is
    /// in. Returns its number.
    ///
    /// # Errors
    /// [`GroupError::OpMismatch`] if the others opened it as another collective;
    /// nothing changed then.
    pub(super) fn call(
        &mut self,
        me: u32,
        op: CollectiveOp,
        ft: bool,
        current: &MemberSet,
    ) -> Result<u32, GroupError> {
        let seq = self.completed;
        let k = Self::slot_index(seq);
        if !self.slots[k].active {
            self.open(seq, op, current);
        } else if self.slots[k].op != op {
            return Err(GroupError::OpMismatch {
                seq,
                expected: self.slots[k].op,
                got: op,
            });
        }
        let s = &mut self.slots[k];
        s.local_ft = Some(ft);
        let _ = s.contributed.insert(me);
        Ok(seq)
    }

    /// Current member `index` contributed to collective `seq` as `op` (this process
    /// is group rank `me`); the collective opens with the `current` members as
    /// expected if this is its first contribution.
    ///
    /// # Errors
    /// [`GroupError::NotInFlight`], [`GroupError::OpMismatch`],
    /// [`GroupError::DuplicateContribution`]; nothing changed then.
    pub(super) fn contribute(
        &mut self,
        me: u32,
        index: u32,
        op: CollectiveOp,
        seq: u32,
        current: &MemberSet,
    ) -> Result<(), GroupError> {
        let c = self.completed;
        let cur = &self.slots[Self::slot_index(c)];
        let in_window = if seq == c {
            true
        } else if seq == c.wrapping_add(1) {
            // The sender finished collective `c`, which needs this process's
            // contribution: anything else is not genuine. Nothing follows a destruct.
            cur.active && cur.contributed.contains(me) && cur.op != CollectiveOp::Destruct
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
            self.open(seq, op, current);
        }
        let _ = self.slots[k].contributed.insert(index);
        Ok(())
    }

    /// Member `index` departed: in every open collective that expects it and has no
    /// contribution from it, it counts as departed with `cause`.
    pub(super) fn depart(&mut self, index: u32, cause: DepartureCause) {
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
    }

    /// Completes collective `completed` if this process called it and every
    /// expected member contributed or departed, and says how it ended.
    pub(super) fn finish(&mut self) -> Option<Finished> {
        let seq = self.completed;
        let k = Self::slot_index(seq);
        let s = &self.slots[k];
        let ft = s.local_ft.filter(|_| s.active)?;
        if s.contributed.len() + s.departed() != s.expected.len() {
            return None;
        }
        let (op, departed, lost, first_lost) = (s.op, s.departed(), s.departed_lost, s.first_lost);
        self.slots[k].active = false;
        self.completed += 1;
        let outcome = match op {
            // With FT, every departure (left or lost) is reported, then success.
            CollectiveOp::Construct if ft && departed > 0 => Outcome::Constructed {
                report_departed: Some(k as u8),
            },
            // Leavers alone never abort (seed 001: a leave lets the construct
            // complete on the survivors); their PMIX_GROUP_LEFT was raised already.
            CollectiveOp::Construct if lost == 0 => Outcome::Constructed {
                report_departed: None,
            },
            // Without FT, a member lost before contributing aborts it.
            CollectiveOp::Construct => Outcome::Aborted { first_lost },
            CollectiveOp::Fence => Outcome::Fenced {
                status: if departed == 0 || ft {
                    Status::SUCCESS
                } else if lost > 0 {
                    Status::ERR_PROC_TERM_WO_SYNC
                } else {
                    Status::ERR_NOT_A_MEMBER
                },
            },
            CollectiveOp::Destruct => Outcome::Destructed,
        };
        Some(Finished { op, seq, outcome })
    }

    /// The collective this process called and that has not completed here, if any.
    pub(super) fn called(&self) -> Option<(CollectiveOp, u32)> {
        let s = &self.slots[Self::slot_index(self.completed)];
        (s.active && s.local_ft.is_some()).then_some((s.op, s.seq))
    }

    /// The first member at or after `from` that the collective of `slot` expected,
    /// that did not contribute and that is no longer `current`: the next departed
    /// member to report.
    pub(super) fn next_departed(&self, slot: u8, from: u32, current: &MemberSet) -> Option<u32> {
        let s = &self.slots[usize::from(slot)];
        let (exp, con, cur) = (s.expected.words(), s.contributed.words(), current.words());
        next_set(exp, from, |i, w| w & !con[i] & !cur[i])
    }
}
