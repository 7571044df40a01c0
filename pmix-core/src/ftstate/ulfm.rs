//! The ULFM-style operations (docs/design.md §5) on the tracker's detection log: failed and
//! acknowledged lists, the acknowledgement watermark, revocation, whether an
//! operation may proceed ([`Tracker::check`]), and the local halves of the exchange
//! behind `validate_global`, agreement and shrink (contributing, checking and
//! learning from a [`Decision`]).

use super::agree::{AgreeError, AgreeValue, Decision, ShrinkMap};
use super::{FtError, Tracker};
use crate::group::next_set;
use crate::status::{PmixError, Status};

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

impl Tracker {
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

    pub(super) fn check_decision(&self, d: &Decision<'_>) -> Result<(), FtError> {
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
    pub(super) fn learn(&mut self, d: &Decision<'_>) {
        let mut from = 0;
        while let Some(r) = {
            let (inl, left) = (self.in_log.words(), self.left.words());
            next_set(inl, from, |i, w| d.failed_word(i) & !w & !left[i])
        } {
            self.append(r);
            from = r + 1;
        }
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
