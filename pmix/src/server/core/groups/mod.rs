//! The group commands (docs/wire.md §6.9, docs/design.md §4): one record per group
//! in the server core.
//!
//! # Model
//! The server is the single authority for its local members (a 4.2 client keeps
//! no group state machine of its own, and every member is local), so each group
//! id has **one record** here (`record.rs`), not a copy per member: the initial
//! membership (sorted; members are indexes into it), where each member stands
//! (holding the group, left, lost, or done with it), the collective in flight
//! (the construct, later the destruct) with who it expects and who contributed,
//! each member's directives (`pmix.grp.ftcoll`, `pmix.grp.notterm`) and the group's
//! (`pmix.grp.actxid`, `pmix.timeout`), the request each member has waiting, the
//! membership when the construct completed, and the context id. A collective
//! completes when the members that contributed and those that departed before
//! contributing make up the expected ones; then each waiting request is answered
//! by its caller's own directive, every caller at once. A contribution or a
//! departure is O(1) plus a lookup in the sorted membership (and a pass over the
//! members when some are to be told of it); the completion is one pass over the
//! members, so a construct over n members costs O(n) in all, not n·(n−1)
//! messages.
//!
//! Beside the records, an **index** names the groups each local process holds: a
//! rank that exits (or finalizes) departs those groups alone, and nothing else is
//! looked at. Notifications (`PMIX_GROUP_LEFT`, `PMIX_GROUP_MEMBER_FAILED`,
//! `PMIX_GROUP_CONSTRUCT_ABORT`) are tag-0 events raised through the core's event
//! path (`super::events::raise`, range CUSTOM to each member told), so handlers
//! registered for the code and default handlers get them, and a late registrant
//! gets them from the cache. pmix-core's [`Groups`](pmix_core::group::Groups)
//! machine (a replica per member exchanging messages) is for runtimes without such
//! an authority; the server does not use it, and keeps its outcomes: a member that
//! leaves or is lost before contributing counts as departed, one that contributed
//! keeps its contribution, each member applies the directive it passed itself.
//!
//! # Commands
//! - **GROUP_CONSTRUCT**: the listed procs (a WILDCARD rank: every rank of the
//!   namespace) must be local ranks of registered namespaces and include the
//!   caller (else `PMIX_ERR_BAD_PARAM`; a rank of a known job that is not on this
//!   node: `PMIX_ERR_NOT_SUPPORTED` unhosted, a remote member hosted). The first
//!   call creates the record, every live member holding it as invited (members
//!   already lost or finalized count as lost before contributing); each call
//!   contributes. A later call listing the same procs as the first (a WILDCARD
//!   one, say) is not expanded again: one lookup per call.
//!   Directives: `pmix.grp.ftcoll` (and `pmix.grp.opt`, optional participation,
//!   taken as the same), `pmix.grp.notterm`, `pmix.grp.actxid` (any member asking
//!   is enough: one id from a server-wide counter, the same for every member,
//!   different for every group), `pmix.grp.info` (the member's infos, such as
//!   its `pmix.grp.lclid`: kept at completion as its qualified values under the
//!   group's id and context id, `Core::store_group_info`, for other members'
//!   qualified gets), `pmix.timeout` (the construct fails for every
//!   caller with `PMIX_ERR_TIMEOUT` and is forgotten). Reply: `STATUS`, then for
//!   4.2.4+ clients the final membership, then `SIZE ctxid` (`SIZE_MAX` when none
//!   was asked); an error is a lone `STATUS`. A member that leaves counts as
//!   departed and the construct completes on the survivors; a member lost before
//!   contributing aborts it (`PMIX_GROUP_CONSTRUCT_ABORT`, event and reply)
//!   unless the caller asked FT, which completes on the survivors with one
//!   `PMIX_GROUP_MEMBER_FAILED` per departed member.
//! - **GROUP_DESTRUCT** (both layouts; the 4.2.4 member list is not checked):
//!   a collective among the members holding the group when it opens (not those
//!   whose construct aborted while others' FT construct completed), completing on
//!   the survivors whatever departs. Reply: a lone `STATUS`. The record goes once no member
//!   holds the group any more; the id can then be constructed again.
//! - **GROUP_LEAVE**: the caller stops holding the group at once and its reply (`STATUS 0`)
//!   is queued **before** the `PMIX_GROUP_LEFT` events go to the other members
//!   (`pmix.grp.id` = the group, `pmix.evproc` = the leaver, source the leaver).
//!   A call of the leaver still in flight on the group is answered
//!   `PMIX_ERR_NOT_A_MEMBER`. Unknown group: `PMIX_ERR_NOT_FOUND`.
//! - GROUP_JOIN / GROUP_INVITE (never sent by a 4.2 client): `PMIX_ERR_NOT_SUPPORTED`.
//! - Invite/join (a 4.2 client builds them from NOTIFYs, [`notified`]): the server
//!   follows `PMIX_GROUP_INVITED`, `PMIX_GROUP_INVITE_ACCEPTED` / `_DECLINED`, and
//!   on the leader's `PMIX_GROUP_CONSTRUCT_COMPLETE` (-166) makes the group (the
//!   leader and the invitees that accepted) known here: a constructed record, so
//!   later fences, leaves and destructs over the id work.
//!
//! # Fences over a group
//! [`fence_members`] names the members at the construct's completion (a member that
//! left or was lost afterwards stays a participant); [`fence_departed`] says such a
//! participant will never join: `PMIX_ERR_NOT_A_MEMBER` for one that left,
//! `PMIX_ERR_PROC_TERM_WO_SYNC` for one that was lost or finalized. A fence with
//! `PMIX_GROUP_FT_COLLECTIVE` then completes on the survivors, one without fails
//! with that status.
//!
//! # Departures
//! A rank lost (socket closed without FINALIZE, or the launcher's `proc_exited`)
//! or finalized departs every group it holds, as *lost*, and only those (the
//! index): its waiting request is dropped, members that asked
//! `PMIX_GROUP_NOTIFY_TERMINATION` of a constructed group get
//! `PMIX_GROUP_MEMBER_FAILED`, and a collective in flight completes or aborts.
//!
//! # Not done
//! - Unhosted, every member must be local; hosted, groups that span nodes run over
//!   the host's fence (`spanning.rs`, with what it does not do).
//! - A fence over a group by a process that left it is not refused.
//! - `pmix.timeout` is honoured for constructs only, not destructs.
//! - An invitee lost before it answers is not tracked (the 4.2 leader waits for
//!   `PMIX_PROC_TERMINATED` itself).
//! - Cost of the notifications: each member told of a leave, a loss (with
//!   `pmix.grp.notterm`) or a departure (FT construct) is one raise through the
//!   core's event path (range CUSTOM naming the member: only its connection is
//!   looked at), and one event in the cache for late registrants, which n of
//!   them flush of everything else.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use pmix_core::group::GroupId;
use pmix_wire::{Command, Proc, Rank, Request, Status};

use super::namespace::RankState;
use super::{ConnId, Core, ProcKey, info_deadline, info_flag, info_value};

mod commands;
mod invite;
mod record;
mod spanning;
#[cfg(test)]
mod tests;

use commands::{construct, destruct, leave, open};
use invite::Invitation;
pub(crate) use invite::notified;
use record::{Phase, Record, Standing, depart};
pub(crate) use spanning::{INCARNATION_KEY, host_done, host_left};

/// `PMIX_GROUP_ID`: names the group in the events raised here.
pub(crate) const GROUP_ID_KEY: &str = "pmix.grp.id";
/// `PMIX_GROUP_INFO`: what a member gives at construct for the others to read.
pub(crate) const GROUP_INFO_KEY: &str = "pmix.grp.info";
/// `PMIX_GROUP_CONTEXT_ID`: the qualifier of a member's group info.
pub(crate) const CONTEXT_ID_KEY: &str = "pmix.grp.ctxid";
/// `PMIX_GROUP_ASSIGN_CONTEXT_ID`.
pub(crate) const ASSIGN_CTXID_KEY: &str = "pmix.grp.actxid";
/// `PMIX_GROUP_NOTIFY_TERMINATION`.
pub(crate) const NOTIFY_TERMINATION_KEY: &str = "pmix.grp.notterm";
/// `PMIX_GROUP_OPTIONAL`: taken as `PMIX_GROUP_FT_COLLECTIVE`.
pub(crate) const OPTIONAL_KEY: &str = "pmix.grp.opt";
/// `PMIX_GROUP_INVITED` (-159): the NOTIFY of a 4.2 invite.
pub(crate) const GROUP_INVITED: Status = Status::GROUP_INVITED;
/// `PMIX_GROUP_INVITE_ACCEPTED` (-161): an invitee's NOTIFY to the leader.
pub(crate) const GROUP_INVITE_ACCEPTED: Status = Status::GROUP_INVITE_ACCEPTED;
/// `PMIX_GROUP_INVITE_DECLINED` (-162): an invitee's NOTIFY to the leader.
pub(crate) const GROUP_INVITE_DECLINED: Status = Status::GROUP_INVITE_DECLINED;
/// `PMIX_GROUP_CONSTRUCT_COMPLETE` (-166): the NOTIFY that ends a 4.2 invite/join.
pub(crate) const GROUP_CONSTRUCT_COMPLETE: Status = Status::GROUP_CONSTRUCT_COMPLETE;

const EVPROC_KEY: &str = "pmix.evproc";
const EVRANGE_KEY: &str = "pmix.evrange";

/// The groups' state, a field of [`Core`].
#[derive(Debug, Default)]
pub(crate) struct GroupState {
    /// The record of each group id: the one authority for its members.
    records: BTreeMap<String, Record>,
    /// The groups each local process holds (the records where it is a
    /// [`Standing::Holder`]): a departure touches those alone.
    by_proc: super::util::FastMap<ProcKey, BTreeSet<String>>,
    /// The last context id handed out.
    last_ctxid: u64,
    /// The host's collectives in flight for groups that span nodes: id → group.
    host_waits: HashMap<u64, String>,
    /// Invitations (NOTIFY `PMIX_GROUP_INVITED`) whose
    /// `PMIX_GROUP_CONSTRUCT_COMPLETE` has not come yet, oldest first.
    invitations: Vec<Invitation>,
}

/// A request waiting for its group's collective.
#[derive(Debug)]
struct Pending {
    conn: ConnId,
    tag: u32,
    cmd: Command,
}

fn group_name(id: &GroupId) -> String {
    String::from_utf8_lossy(id.as_bytes()).into_owned()
}

/// Whether `p` will never act again: lost, finalized, or of a namespace no longer
/// registered.
fn gone(core: &Core, p: &ProcKey) -> bool {
    match core.namespaces.get(&p.0) {
        None => true,
        Some(ns) => matches!(
            ns.states.get(&p.1),
            Some(RankState::Lost | RankState::Finalized)
        ),
    }
}

/// The local processes `procs` names (WILDCARD: every rank of the namespace),
/// sorted and without duplicates.
fn expand(core: &Core, procs: &[Proc]) -> Result<Vec<ProcKey>, Status> {
    let bad = Status(pmix_core::Status::ERR_BAD_PARAM.0);
    let mut out = Vec::new();
    for p in procs {
        let name = p.nspace.as_str().ok_or(bad)?;
        let ns = core.namespaces.get(name).ok_or(bad)?;
        let ranks: Vec<u32> = if p.rank == Rank::WILDCARD {
            (0..ns.spec.job_size).collect()
        } else if p.rank.0 < ns.spec.job_size {
            vec![p.rank.0]
        } else {
            return Err(bad);
        };
        for r in ranks {
            if !ns.states.contains_key(&r) && !core.cfg.provides.spans_nodes() {
                // A rank on another node, and no host to reach it.
                return Err(Status::ERR_NOT_SUPPORTED);
            }
            out.push((name.to_string(), r));
        }
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err(bad);
    }
    Ok(out)
}

/// Completes the collective in flight on `name` if every expected member is
/// accounted for (or, spanning nodes, hands this node's part to the host once every
/// local member is), then forgets the record if nobody holds it.
fn settle(core: &mut Core, name: &str) {
    match core.groups.records.get(name) {
        Some(rec) if rec.complete() && rec.phase == Phase::Constructing => {
            record::finish_construct(core, name);
        }
        Some(rec) if rec.complete() && rec.phase == Phase::Destructing => {
            record::finish_destruct(core, name);
        }
        Some(rec) if rec.local_complete() => spanning::to_host(core, name),
        _ => {}
    }
    record::collect(core, name);
}

/// The bits of a hosted context id that hold its group's first member's rank.
const RANK_BITS: u32 = 22;

/// The next context id of a group whose first member is `leader` (`spanning.rs`:
/// hosted, the counter shifted by [`RANK_BITS`] or'ed with the leader's rank).
fn next_ctxid(core: &mut Core, leader: &ProcKey) -> u64 {
    core.groups.last_ctxid += 1;
    if core.cfg.provides.spans_nodes() {
        (core.groups.last_ctxid << RANK_BITS) | (u64::from(leader.1) & ((1 << RANK_BITS) - 1))
    } else {
        core.groups.last_ctxid
    }
}

/// A group request from `conn` on `tag` (`req` is one of the group variants of
/// [`Request`]).
pub(crate) fn request(core: &mut Core, conn: ConnId, tag: u32, req: Request, now: Instant) {
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    let me = peer.proc.clone();
    match req {
        Request::GroupConstruct(c) => construct(core, conn, tag, me, c, now),
        Request::GroupDestruct(d) => destruct(core, conn, tag, me, d),
        Request::GroupLeave(l) => leave(core, conn, tag, me, l),
        other => core.reply_status(conn, tag, other.command(), Status::ERR_NOT_SUPPORTED),
    }
}

/// The members a fence over group `name` waits for: `None` when `name` is no
/// constructed group (the fence is refused with `PMIX_ERR_BAD_PARAM`); the
/// members at the construct's completion, those that left or were lost since
/// included ([`fence_departed`] tells the fence about them).
pub(crate) fn fence_members(core: &Core, name: &str) -> Option<Result<Vec<ProcKey>, Status>> {
    let rec = core.groups.records.get(name)?;
    rec.constructed.clone().map(Ok)
}

/// For a fence that named the group ids `groups`: `Some(status)` when member
/// `proc`, which has not joined the fence, never will (it left one of the groups:
/// `PMIX_ERR_NOT_A_MEMBER`; it was lost or finalized: `PMIX_ERR_PROC_TERM_WO_SYNC`,
/// docs/design.md §4); a fence without `PMIX_GROUP_FT_COLLECTIVE` fails with that status,
/// an FT one completes without `proc`. `None`: the core decides.
pub(crate) fn fence_departed(core: &Core, groups: &[String], proc: &ProcKey) -> Option<Status> {
    for g in groups {
        let Some(rec) = core.groups.records.get(g) else {
            continue;
        };
        match rec.standing_of(proc) {
            Some(Standing::Left) => return Some(Status::ERR_NOT_A_MEMBER),
            Some(Standing::Lost) => return Some(Status::ERR_PROC_TERM_WO_SYNC),
            _ => {}
        }
        let member = rec
            .constructed
            .as_ref()
            .is_some_and(|m| m.binary_search(proc).is_ok());
        if member && gone(core, proc) {
            return Some(Status::ERR_PROC_TERM_WO_SYNC);
        }
    }
    None
}

/// The connection of `proc` closed: if `proc` is now gone (lost, finalized, or
/// of a namespace being removed), it departs the groups it holds, as lost.
pub(crate) fn conn_closed(core: &mut Core, proc: &ProcKey, now: Instant) {
    let _ = now;
    if gone(core, proc) {
        let _ = depart(core, proc);
    }
}

/// A rank was lost (or finalized): it departs the groups it holds, and only
/// those.
pub(crate) fn proc_lost(core: &mut Core, proc: &ProcKey, now: Instant) {
    let _ = now;
    let _ = depart(core, proc);
}

/// Constructs that passed their `pmix.timeout` fail with `PMIX_ERR_TIMEOUT` for
/// every caller and are forgotten.
pub(crate) fn tick(core: &mut Core, now: Instant) {
    let due: Vec<String> = core
        .groups
        .records
        .iter()
        .filter(|(_, r)| r.phase == Phase::Constructing && r.deadline.is_some_and(|d| d <= now))
        .map(|(n, _)| n.clone())
        .collect();
    for name in due {
        let Some(mut rec) = core.groups.records.remove(&name) else {
            continue;
        };
        for (p, call) in rec.drop_holders() {
            record::unindex(core, &p, &name);
            if let Some(pd) = call {
                core.reply_status(pd.conn, pd.tag, pd.cmd, Status::ERR_TIMEOUT);
            }
        }
    }
}

/// The next group timer (a construct's `pmix.timeout`).
pub(crate) fn next_deadline(core: &Core) -> Option<Instant> {
    core.groups
        .records
        .values()
        .filter(|r| r.phase == Phase::Constructing)
        .filter_map(|r| r.deadline)
        .min()
}
