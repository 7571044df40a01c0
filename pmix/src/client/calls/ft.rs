//! Rank-state tracking across processes (docs/design.md §5, §8): one
//! [`pmix_core::ftstate::Tracker`] per group this process asks about, fed by the
//! events PMIx already sends, and the collectives (`validate_global`, agreement,
//! shrink) run as real exchanges through the server.
//!
//! # Groups and ranks
//! A *group* is the namespace of this job (its ranks are the group ranks) or a PMIx
//! group this process is a member of (constructed, invited into, or made by a
//! shrink). A PMIx group's members are ordered by (namespace, rank), whatever order
//! the construct listed them in, so every member numbers them alike; a member
//! given as `nspace:WILDCARD` of this job stands for every rank of it. The tracker
//! is made on the first call naming the group and sized then.
//!
//! # Detection
//! On its first tracker the instance registers with the server for
//! `PMIX_ERR_PROC_ABORTED`, `PMIX_EVENT_PROC_TERMINATED`, `PMIX_GROUP_MEMBER_FAILED`,
//! `PMIX_GROUP_LEFT` and [`REVOKED_EVENT`] (without waiting for the answer: the
//! server replays the events it cached, so a failure that came first is learned
//! too). Every such event naming a process (`pmix.evproc`) is a failure of that
//! process in every group holding it (a leave, in the group it names); the
//! processes seen fail are also kept, so a tracker made later starts with them.
//! Reports arrive on the progress thread, in the order the server sent them.
//!
//! # Local and collective calls
//! Local (no message, allowed in an event handler or a callback, never
//! `PMIX_ERR_WOULD_BLOCK`; a query repeated without a validate in between gives
//! the same answer): [`Pmix::ft_validate_local`], [`Pmix::ft_get_state`],
//! [`Pmix::ft_get_num_state`], [`Pmix::ft_get_failed`], [`Pmix::ft_ack_failed`],
//! [`Pmix::ft_get_acked`], [`Pmix::ft_is_revoked`], [`Pmix::ft_size`].
//! Collective (every live member calls them, in the same order; blocking, so
//! `PMIX_ERR_WOULD_BLOCK` on the progress thread): [`Pmix::ft_validate_global`],
//! [`Pmix::ft_validate_global_count`], [`Pmix::ft_agree`], [`Pmix::ft_shrink`].
//! [`Pmix::ft_revoke`] is local and sends an event.
//!
//! # The exchange
//! Round `k` of a group (each collective call is the next round) is one fence
//! over the group (the namespace, or the group's id, which the server resolves to
//! the members that have not left) with `PMIX_GROUP_FT_COLLECTIVE`, whose request
//! carries this process's contribution ([`pmix_wire::ft`]: the round, its known
//! failures, acknowledgements and leavers, and the flag; a list or a bitmap,
//! whichever is shorter) under [`pmix_wire::msg::FT_CONTRIBUTION_KEY`]. The fence
//! completes once every member has joined or is gone, so nobody waits on a dead
//! member or one that left, and our server answers every participant the same
//! list of the contributions that came with it ([`pmix_wire::msg::FenceNbReply`]).
//! A member that joined (even one that died afterwards) contributed; one that did
//! not did not, and the decision counts it failed. Every survivor decides from
//! the same bytes, hence the same. A contribution that does not decode, or is of
//! another round, is treated as none (the same everywhere too).
//!
//! Only what the round's contributions say goes into the decision: a local call
//! that runs meanwhile (`validate_local`, an acknowledgement, a query, in a
//! handler or another thread) changes this process's local view only, never
//! what it contributed (encoded before the fence) nor the global view it applies
//! ([`pmix_core::ftstate::Tracker::validate_global`]).
//!
//! A server that answers the fence with a lone STATUS (OpenPMIx's ignores the
//! key) gets the exchange through its store instead, after that first fence:
//! put the contribution under `rsft:<k mod 2>:<group>` (two keys a group,
//! reused: see `round_key`) and commit, fence again, then get every other
//! member's key (`pmix.immediate`, all at once, never from this process's cache).
//!
//! A member that fails during round `k` after contributing is not in `k`'s agreed
//! set; every survivor reports it by round `k + 1`, and if one had not yet been
//! told, the member's missing contribution puts it there anyway.
//!
//! # What is not here
//! The exchange is flat: every member gets every other member's contribution
//! in one reply, n additions (each O(n / 64) plus the listed ranks) per member,
//! and the server sends n replies of n contributions. That
//! suits the jobs run here; at a million members it would want a reduction tree
//! (each step a [`pmix_core::ftstate::AgreeValue::combine`]), which is not built.
//! A PMIx group's fence needs a server that fences groups (ours); OpenPMIx 4.2's
//! servers refuse group operations, so there only the namespace works, and only
//! while nobody fails: they have no FT fence, so a death fails the exchange with
//! the fence's error (Open MPI 4.1's `mpirun` answers `PMIX_ERR_PARTIAL_SUCCESS`,
//! then ends the job; `pmix-tools/tests/run_ffi.rs` pins it). A user who
//! deregisters one of the codes above also ends the server's delivery of it to
//! this module.

use std::collections::HashSet;

use pmix_core::Status;
use pmix_core::ftstate::{
    AgreeError, AgreeValue, Contribution, FtError, Mask, RankInfo, Ranks, Tracker, Validation, View,
};
use pmix_wire::ft::RankSet;
use pmix_wire::{ByteObject, DataArray, DataRange, DataType, Info, Proc, Rank, Scope, Value};

use crate::client::Client;
use crate::client::instance::{Mode, Pmix};
pub use crate::client::membership::trackers::REVOKED_EVENT;
use crate::client::membership::trackers::{DETECTED, FtGroup, Members};
use crate::client::membership::{Groups, Membership, check_grp, lock_groups};
use crate::error::Error;
use pmix_wire::keys::GROUP_FT_COLLECTIVE as FT_KEY;

/// The status a rank-state query answers when the array is too short (the 2011
/// thread's `MPI_ERR_SIZE`; a pmix-rs code past `PMIX_EXTERNAL_ERR_BASE`).
pub const ERR_SIZE: Status = Status::FT_ERR_SIZE;

fn ft_error(e: FtError) -> Error {
    match e {
        FtError::Size { needed } => Error::Status {
            status: ERR_SIZE,
            why: format!("the answer has {needed} entries and the array is shorter").into(),
        },
        e => Error::Status {
            status: pmix_core::PmixError::status(&e),
            why: e.to_string().into(),
        },
    }
}

/// A decoded contribution ([`pmix_wire::ft::decode`]) as the core adds it
/// ([`AgreeValue::add`]), borrowing its rank sets.
pub fn received(c: &pmix_wire::ft::Contribution) -> Contribution<'_> {
    fn ranks(s: &RankSet) -> Ranks<'_> {
        match s {
            RankSet::Sorted(v) => Ranks::Sorted(v.as_slice()),
            RankSet::Bitmap(w) => Ranks::Bitmap(w.as_slice()),
        }
    }
    Contribution {
        rank: c.rank,
        flag: c.flag,
        failed: ranks(&c.failed),
        acked: ranks(&c.acked),
        left: ranks(&c.left),
    }
}

/// The key of round `round`'s contributions to `grp`: one of two, by the round's
/// parity, overwritten every other round, so what a process commits stays bounded.
/// Two suffice: a member puts round `k + 2`'s contribution only after round `k + 1`'s
/// fence, which every live member joins only after reading round `k`'s. A value
/// from an earlier round (a member that died since) carries its round and is not
/// taken for this one.
fn round_key(grp: &str, round: u64) -> String {
    format!("rsft:{}:{grp}", round % 2)
}

/// What [`Pmix::ft_shrink`] made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shrunk {
    /// This process's rank in the new group.
    pub rank: u32,
    /// The new group's size.
    pub size: u32,
    /// Old group rank → new, for every old member (`None`: not in the new group).
    pub map: Vec<Option<u32>>,
}

impl Pmix {
    /// Runs `f` on `grp`'s tracker, making it first (see the module docs).
    fn with_group<T>(
        &self,
        call: &'static str,
        grp: &str,
        f: impl FnOnce(&mut FtGroup) -> T,
    ) -> Result<T, Error> {
        self.admit(call, Mode::NonBlocking)?;
        check_grp(grp)?;
        let mut guard = lock_groups(&self.inner.groups);
        let Membership { groups, ft: st } = &mut *guard;
        if grp != self.inner.proc_id.nspace && !groups.contains_key(grp) {
            // Not (or no longer) a member: the tracker goes, and every call on the
            // group answers alike from now on.
            if st.groups.remove(grp).is_some() || st.gone.contains(grp) {
                st.gone.insert(grp.to_owned());
                return Err(Error::Status {
                    status: Status::ERR_NOT_A_MEMBER,
                    why: format!("this process is no longer a member of {grp:?}").into(),
                });
            }
            return Err(Error::Status {
                status: Status::ERR_NOT_FOUND,
                why: format!("this process is in no group {grp:?}").into(),
            });
        }
        if !st.groups.contains_key(grp) {
            st.gone.remove(grp);
            let g = self.new_group(grp, groups, &st.dead)?;
            st.groups.insert(grp.to_owned(), g);
            if !st.registered
                && let Some(c) = &self.inner.client
            {
                // Not waited for: the server replays the events it cached.
                let sent = c.register_events_then(&DETECTED, &[], Box::new(|_| {}));
                st.registered = sent.is_ok();
            }
        }
        let g = st
            .groups
            .get_mut(grp)
            .ok_or_else(|| Error::Internal("a tracker just made is gone".into()))?;
        Ok(f(g))
    }

    /// A tracker for `grp` (its members from `groups`), knowing the failures in
    /// `dead`.
    fn new_group(
        &self,
        grp: &str,
        groups: &Groups,
        dead: &HashSet<Proc>,
    ) -> Result<FtGroup, Error> {
        let me = Proc::from(&self.inner.proc_id);
        let members = if grp == self.inner.proc_id.nspace {
            Members::Namespace {
                nspace: grp.to_owned(),
                size: self.job_size()?,
            }
        } else {
            let listed = groups.get(grp).cloned().ok_or_else(|| Error::Status {
                status: Status::ERR_NOT_FOUND,
                why: format!("this process is in no group {grp:?}").into(),
            })?;
            let mut members = Vec::with_capacity(listed.len());
            for p in listed {
                if p.rank == Rank::WILDCARD && p.nspace == me.nspace {
                    members.extend((0..self.job_size()?).map(|r| Proc::new(p.nspace.clone(), r)));
                } else if p.rank.0 >= Rank::WILDCARD.0 {
                    return Err(Error::BadParam(
                        format!("group {grp:?} lists a wildcard of another namespace").into(),
                    ));
                } else {
                    members.push(p);
                }
            }
            members.sort();
            members.dedup();
            u32::try_from(members.len())
                .map_err(|_| Error::BadParam("a group of over 2^32 members".into()))?;
            Members::Listed(members.into())
        };
        let my_rank = members.rank_of(&me).ok_or_else(|| Error::Status {
            status: Status::ERR_NOT_A_MEMBER,
            why: format!("this process is not a member of {grp:?}").into(),
        })?;
        let mut tracker = Tracker::new(members.len(), my_rank).map_err(ft_error)?;
        for p in dead {
            if let Some(r) = members.rank_of(p) {
                let _ = tracker.report_failure(r);
            }
        }
        Ok(FtGroup {
            members,
            tracker,
            round: 0,
        })
    }

    /// This job's size, from the job information.
    fn job_size(&self) -> Result<u32, Error> {
        let Some(c) = &self.inner.client else {
            return Ok(1);
        };
        // From the job information: never a server round trip (this runs under the
        // rank-state lock).
        let size = c
            .get_local(
                &self.inner.proc_id.nspace.to_string(),
                Rank::WILDCARD.0,
                pmix_wire::keys::JOB_SIZE,
            )
            .ok_or_else(|| Error::Internal("the job information has no job size".into()))??;
        match size {
            Value::Uint32(n) => Ok(n),
            v => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| Error::Internal("the job size is not a number".into())),
        }
    }

    /// `validate_local` (2011): the local view becomes every failure this process
    /// knows of; returns `|L|` and how many it added. Local.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a non-blocking call; `PMIX_ERR_BAD_PARAM` for a
    /// malformed group id; `PMIX_ERR_NOT_FOUND` for a group this process is not in;
    /// `PMIX_ERR_NOT_A_MEMBER` when it is not among the group's members.
    pub fn ft_validate_local(&self, grp: &str) -> Result<Validation, Error> {
        self.with_group("pmixrs_ft_validate_local", grp, |g| {
            g.tracker.validate_local()
        })
    }

    /// The group's size and this process's rank in it. Local.
    ///
    /// # Errors
    /// As [`Pmix::ft_validate_local`].
    pub fn ft_size(&self, grp: &str) -> Result<(u32, u32), Error> {
        self.with_group("pmixrs_ft_size", grp, |g| {
            (g.tracker.size(), g.tracker.my_rank())
        })
    }

    /// `get_state_local` / `get_state_global` (2011): the members of `view` that
    /// `mask` matches, ascending by rank, into `out`; an empty `out` gives the count
    /// only. Local; answers the same until the next validate.
    ///
    /// # Errors
    /// As [`Pmix::ft_validate_local`]; [`ERR_SIZE`] when `out` is not empty and
    /// shorter than the answer (nothing written).
    pub fn ft_get_state(
        &self,
        grp: &str,
        view: View,
        mask: Mask,
        out: &mut [RankInfo],
    ) -> Result<usize, Error> {
        self.with_group("pmixrs_ft_get_state", grp, |g| {
            g.tracker.get_state(view, mask, out)
        })?
        .map_err(ft_error)
    }

    /// `get_num_state_local` / `_global` (2011): how many members of `view` `mask`
    /// matches. Local, O(1).
    ///
    /// # Errors
    /// As [`Pmix::ft_validate_local`].
    pub fn ft_get_num_state(&self, grp: &str, view: View, mask: Mask) -> Result<u32, Error> {
        self.with_group("pmixrs_ft_get_num_state", grp, |g| {
            g.tracker.get_num_state(view, mask)
        })
    }

    /// ULFM's `get_failed`: every failure this process knows of, in detection order.
    /// Local.
    ///
    /// # Errors
    /// As [`Pmix::ft_validate_local`].
    pub fn ft_get_failed(&self, grp: &str) -> Result<Vec<u32>, Error> {
        self.with_group("pmixrs_ft_get_failed", grp, |g| {
            g.tracker.get_failed().to_vec()
        })
    }

    /// ULFM's `ack_failed(n)`: acknowledges the first `n` failures of
    /// [`Pmix::ft_get_failed`]; returns how many are acknowledged. Local.
    ///
    /// # Errors
    /// As [`Pmix::ft_validate_local`].
    pub fn ft_ack_failed(&self, grp: &str, n: u32) -> Result<u32, Error> {
        self.with_group("pmixrs_ft_ack_failed", grp, |g| g.tracker.ack_failed(n))
    }

    /// ULFM's `get_acked`: the acknowledged failures, in detection order. Local.
    ///
    /// # Errors
    /// As [`Pmix::ft_validate_local`].
    pub fn ft_get_acked(&self, grp: &str) -> Result<Vec<u32>, Error> {
        self.with_group("pmixrs_ft_get_acked", grp, |g| {
            g.tracker.get_acked().to_vec()
        })
    }

    /// Whether the group was revoked (here, or by a member's [`Pmix::ft_revoke`]).
    /// Local.
    ///
    /// # Errors
    /// As [`Pmix::ft_validate_local`].
    pub fn ft_is_revoked(&self, grp: &str) -> Result<bool, Error> {
        self.with_group("pmixrs_ft_is_revoked", grp, |g| g.tracker.is_revoked())
    }

    /// ULFM's `revoke`: marks the group revoked here and sends [`REVOKED_EVENT`] to
    /// its other members, whose trackers mark it too (revocation is sticky).
    /// Returns whether this call revoked it (false: it already was). Local: the
    /// event is sent, not waited for.
    ///
    /// # Errors
    /// As [`Pmix::ft_validate_local`]; [`Error::Unreach`] when the event cannot be
    /// sent (the group is revoked here all the same).
    pub fn ft_revoke(&self, grp: &str) -> Result<bool, Error> {
        let (first, members) = self.with_group("pmixrs_ft_revoke", grp, |g| {
            (g.tracker.revoke(), g.members.procs())
        })?;
        if let Some(c) = &self.inner.client {
            let range = DataArray::new(
                DataType::Proc,
                members.into_iter().map(Value::Proc).collect(),
            )
            .ok_or_else(|| Error::Internal("a range of processes".into()))?;
            c.notify_then(
                REVOKED_EVENT,
                DataRange::CUSTOM,
                &[
                    Info::new(pmix_wire::keys::GROUP_ID, grp),
                    Info::new(pmix_wire::keys::EVENT_CUSTOM_RANGE, Value::DataArray(range)),
                ],
                Box::new(|_| {}),
            )?;
        }
        Ok(first)
    }

    /// `validate_global` (2011): a collective over the group's live members; the
    /// global view becomes the agreed failed set (every contributor's known
    /// failures and every member that did not contribute), the local view too.
    /// Returns `|G|` and how many it added.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a blocking call (`PMIX_ERR_WOULD_BLOCK` on the
    /// progress thread, nothing done); the group errors of
    /// [`Pmix::ft_validate_local`]; [`Error::Unreach`] when not connected to a
    /// server or when it is lost; the fence's status from the server.
    pub fn ft_validate_global(&self, grp: &str) -> Result<Validation, Error> {
        let value = self.exchange("pmixrs_ft_validate_global", grp, 0)?;
        self.with_group("pmixrs_ft_validate_global", grp, |g| {
            g.tracker.validate_global(&value.decide())
        })?
        .map_err(ft_error)
    }

    /// `validate_global` with the count the 2011 thread ends on: after the
    /// exchange, the number of members of the global view `mask` matches.
    ///
    /// # Errors
    /// As [`Pmix::ft_validate_global`].
    pub fn ft_validate_global_count(&self, grp: &str, mask: Mask) -> Result<u32, Error> {
        let value = self.exchange("pmixrs_ft_validate_global_count", grp, 0)?;
        self.with_group("pmixrs_ft_validate_global_count", grp, |g| {
            g.tracker.validate_global_count(&value.decide(), mask)
        })?
        .map_err(ft_error)
    }

    /// ULFM's agreement: a collective over the group's live members; every
    /// survivor gets the same answer, the AND of the contributed `flag`s, or the
    /// uniform error ([`AgreeError::ProcFailed`], carrying the flag too) when a
    /// member failed before contributing and some contributor had not
    /// acknowledged it.
    ///
    /// # Errors
    /// As [`Pmix::ft_validate_global`] (the outer error); the agreement's own
    /// outcome is the inner result.
    pub fn ft_agree(&self, grp: &str, flag: u32) -> Result<Result<u32, AgreeError>, Error> {
        let value = self.exchange("pmixrs_ft_agree", grp, flag)?;
        let agreed = self
            .with_group("pmixrs_ft_agree", grp, |g| g.tracker.agree(&value.decide()))?
            .map_err(ft_error)?;
        Ok(agreed.result())
    }

    /// ULFM's shrink: a collective over the group's live members, which then
    /// construct the PMIx group `new_grp` of the survivors (every member that
    /// neither failed nor left, by the agreed set), numbered in old rank order,
    /// the same at every survivor.
    ///
    /// # Errors
    /// As [`Pmix::ft_validate_global`]; `PMIX_ERR_BAD_PARAM` for a malformed
    /// `new_grp`; the construct's status.
    pub fn ft_shrink(&self, grp: &str, new_grp: &str) -> Result<Shrunk, Error> {
        check_grp(new_grp)?;
        let value = self.exchange("pmixrs_ft_shrink", grp, 0)?;
        let (shrunk, survivors) = self
            .with_group("pmixrs_ft_shrink", grp, |g| {
                g.tracker.shrink(&value.decide()).map(|m| {
                    let map: Vec<Option<u32>> = (0..m.old_size()).map(|r| m.new_rank(r)).collect();
                    let survivors: Vec<Proc> =
                        m.iter().map(|(old, _)| g.members.get(old)).collect();
                    let rank = map[g.tracker.my_rank() as usize];
                    (
                        rank.map(|rank| Shrunk {
                            rank,
                            size: m.new_size(),
                            map,
                        }),
                        survivors,
                    )
                })
            })?
            .map_err(ft_error)?;
        let shrunk = shrunk.ok_or_else(|| Error::Status {
            status: Status::ERR_NOT_A_MEMBER,
            why: "the agreed set counts this process failed".into(),
        })?;
        self.group_construct(new_grp, &survivors, &[Info::new(FT_KEY, true)])?;
        Ok(shrunk)
    }

    /// One round of the exchange (module docs): every member's contribution that
    /// reached the server, combined.
    fn exchange(&self, call: &'static str, grp: &str, flag: u32) -> Result<AgreeValue, Error> {
        self.admit(call, Mode::Blocking)?;
        let client: &Client = self
            .inner
            .client
            .as_deref()
            .ok_or_else(|| Error::Unreach("not connected to a PMIx server".into()))?;
        let (members, round, mine) = self.with_group(call, grp, |g| {
            g.round += 1;
            let k = g.tracker.known();
            let bytes = pmix_wire::ft::encode(
                g.tracker.size(),
                g.tracker.my_rank(),
                g.round,
                flag,
                [k.failed.words(), k.acked.words(), k.left.words()],
            );
            (g.members.clone(), g.round, bytes)
        })?;
        let mine = mine.map_err(|e| Error::Internal(format!("a contribution: {e}")))?;
        let procs = members.fence_procs(grp);
        let ft = [Info::new(FT_KEY, true)];
        let collected = crate::client::wait(
            |cb| client.fence_contributions_then(&procs, &ft, mine.clone(), cb),
            Error::lost,
        )?;
        let mut value = AgreeValue::new(members.len()).map_err(ft_error)?;
        match collected {
            Some(list) => {
                for (p, bytes) in list {
                    if let Some(r) = members.rank_of(&p) {
                        add(&mut value, r, round, &bytes);
                    }
                }
            }
            None => self.exchange_by_gets(client, grp, &members, round, &mine, &mut value)?,
        }
        Ok(value)
    }

    /// The exchange through a server that does not collect contributions with the
    /// fence (OpenPMIx's): the fence just run was a barrier; now put, commit, fence
    /// again and get every other member's contribution (module docs).
    fn exchange_by_gets(
        &self,
        client: &Client,
        grp: &str,
        members: &Members,
        round: u64,
        mine: &[u8],
        value: &mut AgreeValue,
    ) -> Result<(), Error> {
        let key = round_key(grp, round);
        client.put(
            Scope::GLOBAL,
            &key,
            Value::ByteObject(ByteObject(mine.to_vec())),
        )?;
        client.commit()?;
        let procs = members.fence_procs(grp);
        crate::client::wait(
            |cb| client.fence_then(&procs, &[Info::new(FT_KEY, true)], cb),
            Error::lost,
        )?;
        let me = Proc::from(&self.inner.proc_id);
        // Every get is sent at once and the answers gathered: one round trip's
        // latency, not one per member.
        let (tx, rx) = std::sync::mpsc::channel();
        let mut asked = 0usize;
        for r in 0..members.len() {
            let p = members.get(r);
            if p == me {
                add(value, r, round, mine);
                continue;
            }
            let tx = tx.clone();
            let sent = client.get_inner(
                p.nspace.as_str().unwrap_or_default(),
                p.rank.0,
                &key,
                &[Info::new(pmix_wire::keys::IMMEDIATE, true)],
                true,
                Box::new(move |v| {
                    let _ = tx.send((r, v));
                }),
            );
            match sent {
                Ok(()) => asked += 1,
                Err(e @ Error::Unreach(_)) => return Err(e),
                // A get that cannot be sent for one member: no contribution from it.
                Err(_) => {}
            }
        }
        drop(tx);
        for _ in 0..asked {
            // A dropped completion (the connection went) ends the channel early.
            let (r, answer) = rx.recv().map_err(|_| Error::lost())?;
            match answer {
                Ok(Value::ByteObject(b)) => add(value, r, round, &b.0),
                Err(e @ Error::Unreach(_)) => return Err(e),
                // Not found (no contribution), or anything else the server says
                // about one member: no contribution from it, the same answer at
                // every survivor.
                _ => {}
            }
        }
        Ok(())
    }
}

/// Adds group rank `r`'s contribution `bytes` to round `round`'s `value`. Bytes
/// that do not decode, or that are another round's, another group size's or
/// another member's, are no contribution (the same at every survivor); so is a
/// malformed set (the decoder checks them too) or a second one from `r`.
fn add(value: &mut AgreeValue, r: u32, round: u64, bytes: &[u8]) {
    let Ok(c) = pmix_wire::ft::decode(bytes) else {
        return;
    };
    if c.size != value.size() || c.rank != r || c.round != round {
        return;
    }
    let _ = value.add(&received(&c));
}
