//! The group commands (PROTOCOL.md §6.9, DESIGN §4), driven by pmix-core's
//! [`Groups`] state machine.
//!
//! # Model
//! A 4.2 client keeps no group state machine of its own, so the server keeps one
//! **replica per member**: every local process that is in a group has a
//! [`Groups`] table here (`GroupState::tables`), and the messages the replicas
//! exchange (contributions, `PMIX_GROUP_LEFT`) are delivered in memory, in the
//! order they were sent, every table drained before the next delivery. A loss is
//! reported to the replicas after every message of the lost process was
//! delivered (the machine's ordering condition). What the replicas output
//! becomes wire traffic: a completed local call is the reply to the request that
//! made it; a `PMIX_GROUP_LEFT`, `PMIX_GROUP_MEMBER_FAILED` or
//! `PMIX_GROUP_CONSTRUCT_ABORT` notification is a tag-0 event raised through the
//! core's event path (`super::events::raise`, range CUSTOM to the replica's
//! process), so handlers registered for the code and default handlers get it, and
//! a late registrant gets it from the cache.
//!
//! Beside the replicas a server-wide **record** per group id keeps what fences and
//! replies need: the initial membership, the membership when the construct
//! completed, who left and who was lost since, and the context id.
//!
//! # Commands
//! - **GROUP_CONSTRUCT**: the listed procs (a WILDCARD rank: every rank of the
//!   namespace) must be local ranks of registered namespaces and include the
//!   caller (else `PMIX_ERR_BAD_PARAM`; a rank of a known job that is not on this
//!   node: `PMIX_ERR_NOT_SUPPORTED`, as nothing leaves the node yet). The first
//!   call creates the record and an invited replica for every live member (members
//!   already lost or finalized are reported lost to them); each call contributes.
//!   Directives: `pmix.grp.ftcoll` (and `pmix.grp.opt`, optional participation,
//!   taken as the same), `pmix.grp.notterm`, `pmix.grp.actxid` (any member asking
//!   is enough: one id from a server-wide counter, the same for every member,
//!   different for every group), `pmix.timeout` (the construct fails for every
//!   caller with `PMIX_ERR_TIMEOUT` and is forgotten). Reply: `STATUS`, then for
//!   4.2.4+ clients the final membership, then `SIZE ctxid` (`SIZE_MAX` when none
//!   was asked); an error is a lone `STATUS`. A member that leaves counts as
//!   departed and the construct completes on the survivors; a member lost before
//!   contributing aborts it (`PMIX_GROUP_CONSTRUCT_ABORT`, event and reply)
//!   unless the caller asked FT, which completes on the survivors with one
//!   `PMIX_GROUP_MEMBER_FAILED` per departed member.
//! - **GROUP_DESTRUCT** (both layouts; the 4.2.4 member list is not checked):
//!   a collective among the caller's current members, completing on the survivors
//!   whatever departs. Reply: a lone `STATUS`. The record goes once no member
//!   holds the group any more; the id can then be constructed again.
//! - **GROUP_LEAVE**: the caller's replica goes at once and its reply (`STATUS 0`)
//!   is queued **before** the `PMIX_GROUP_LEFT` events go to the other members
//!   (`pmix.grp.id` = the group, `pmix.evproc` = the leaver, source the leaver).
//!   A call of the leaver still in flight on the group is answered
//!   `PMIX_ERR_NOT_A_MEMBER`. Unknown group: `PMIX_ERR_NOT_FOUND`.
//! - GROUP_JOIN / GROUP_INVITE (never sent by a 4.2 client): `PMIX_ERR_NOT_SUPPORTED`.
//! - Invite/join (a 4.2 client builds them from NOTIFYs, [`notified`]): the server
//!   follows `PMIX_GROUP_INVITED`, `PMIX_GROUP_INVITE_ACCEPTED` / `_DECLINED`, and
//!   on the leader's `PMIX_GROUP_CONSTRUCT_COMPLETE` (-166) makes the group (the
//!   leader and the invitees that accepted) known here: replicas are built for the
//!   members, so later fences, leaves and destructs over the id work.
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
//! or finalized and closed departs every group it holds, as *lost*.
//!
//! # Not done
//! - Nothing crosses nodes (no `Host` up-calls): every member must be local.
//! - A fence over a group by a process that left it is not refused.
//! - `pmix.timeout` is honoured for constructs only, not destructs.
//! - An invitee lost before it answers is not tracked (the 4.2 leader waits for
//!   `PMIX_PROC_TERMINATED` itself).
//! - A rank that sends FINALIZE but keeps its socket open departs only when its
//!   socket closes (the core calls no groups hook on FINALIZE); `remove_namespace`
//!   reaches the groups only through the connections it closes, so such a rank
//!   (and ranks that never connected) of a removed namespace stay members of
//!   other jobs' groups.
//! - Cost: a collective over n members delivers n·(n−1) messages between the
//!   replicas (about 2.4 s for a construct over 2,048 ranks, release build).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::Instant;

use pmix_core::PmixError;
use pmix_core::group::{
    CollectiveOp, Completion, ConstructOptions, GroupId, GroupOutput, Groups, Message,
    Notification, Nspace, Output as GroupOut, ProcId, Roster,
};
use pmix_wire::msg::{GroupConstruct, GroupConstructReply, GroupDestruct, GroupLeave};
use pmix_wire::{Command, DataRange, GroupLayout, Info, Proc, Rank, Reply, Request, Size, Status};

use super::namespace::RankState;
use super::{ConnId, Core, ProcKey, info_deadline, info_flag, info_value};

/// `PMIX_GROUP_ID`: names the group in the events raised here.
pub(crate) const GROUP_ID_KEY: &str = "pmix.grp.id";
/// `PMIX_GROUP_ASSIGN_CONTEXT_ID`.
pub(crate) const ASSIGN_CTXID_KEY: &str = "pmix.grp.actxid";
/// `PMIX_GROUP_NOTIFY_TERMINATION`.
pub(crate) const NOTIFY_TERMINATION_KEY: &str = "pmix.grp.notterm";
/// `PMIX_GROUP_OPTIONAL`: taken as `PMIX_GROUP_FT_COLLECTIVE`.
pub(crate) const OPTIONAL_KEY: &str = "pmix.grp.opt";
/// `PMIX_GROUP_INVITED` (-159): the NOTIFY of a 4.2 invite.
pub(crate) const GROUP_INVITED: Status = Status(-159);
/// `PMIX_GROUP_INVITE_ACCEPTED` (-161): an invitee's NOTIFY to the leader.
pub(crate) const GROUP_INVITE_ACCEPTED: Status = Status(-161);
/// `PMIX_GROUP_INVITE_DECLINED` (-162): an invitee's NOTIFY to the leader.
pub(crate) const GROUP_INVITE_DECLINED: Status = Status(-162);
/// `PMIX_GROUP_CONSTRUCT_COMPLETE` (-166): the NOTIFY that ends a 4.2 invite/join.
pub(crate) const GROUP_CONSTRUCT_COMPLETE: Status = Status(-166);

const EVPROC_KEY: &str = "pmix.evproc";
const EVRANGE_KEY: &str = "pmix.evrange";

/// The groups' state, a field of [`Core`].
#[derive(Debug, Default)]
pub(crate) struct GroupState {
    /// Each local process's replicas.
    tables: BTreeMap<ProcKey, Groups>,
    /// The server-wide record of each group id.
    records: BTreeMap<String, Record>,
    /// Requests waiting for their replica's completion, by process and group.
    pending: HashMap<(ProcKey, GroupId), Pending>,
    /// Messages between replicas not yet delivered: (recipient, message).
    mail: VecDeque<(ProcKey, Message)>,
    /// Tables that may hold outputs.
    dirty: Vec<ProcKey>,
    /// The last context id handed out.
    last_ctxid: u64,
    /// Invitations (NOTIFY `PMIX_GROUP_INVITED`) whose
    /// `PMIX_GROUP_CONSTRUCT_COMPLETE` has not come yet, oldest first.
    invitations: Vec<Invitation>,
}

/// A 4.2 invite in flight, as the server sees it in the NOTIFYs that make it.
#[derive(Debug)]
struct Invitation {
    /// The inviter.
    leader: ProcKey,
    /// The group id.
    grp: String,
    /// Who was invited.
    invitees: Vec<ProcKey>,
    /// Who accepted (`PMIX_GROUP_INVITE_ACCEPTED` to the leader).
    accepted: BTreeSet<ProcKey>,
    /// Who answered at all (accepted or declined).
    answered: BTreeSet<ProcKey>,
}

/// What the server knows of one group id.
#[derive(Debug)]
struct Record {
    /// The initial membership, sorted.
    roster: Vec<ProcKey>,
    /// The members whose replica exists (current members that have not finished
    /// with the group).
    holders: BTreeSet<ProcKey>,
    /// The membership when the construct completed; `None` before (or after an
    /// abort).
    constructed: Option<Vec<ProcKey>>,
    /// Members that left.
    left: BTreeSet<ProcKey>,
    /// Members lost (or finalized) while they held the group.
    lost: BTreeSet<ProcKey>,
    /// A member asked for a context id.
    assign_ctxid: bool,
    /// The context id assigned at completion.
    ctxid: Option<u64>,
    /// When the construct times out.
    deadline: Option<Instant>,
}

/// A request waiting for its replica.
#[derive(Debug)]
struct Pending {
    conn: ConnId,
    tag: u32,
    op: CollectiveOp,
}

fn wire(s: pmix_core::Status) -> Status {
    Status(s.0)
}

fn proc_id(p: &ProcKey) -> Option<ProcId> {
    ProcId::new(Nspace::new(&p.0).ok()?, p.1).ok()
}

fn proc_key(p: &ProcId) -> ProcKey {
    (
        String::from_utf8_lossy(p.nspace.as_bytes()).into_owned(),
        p.rank,
    )
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
            if !ns.states.contains_key(&r) {
                // A rank on another node: nothing leaves the node yet.
                return Err(Status::NOT_SUPPORTED);
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
        other => core.reply_status(conn, tag, other.command(), Status::NOT_SUPPORTED),
    }
}

fn parse_id(s: &pmix_wire::WStr) -> Option<GroupId> {
    GroupId::from_bytes(s.as_bytes()).ok()
}

fn construct(
    core: &mut Core,
    conn: ConnId,
    tag: u32,
    me: ProcKey,
    c: GroupConstruct,
    now: Instant,
) {
    let cmd = Command::GroupConstruct;
    let bad = wire(pmix_core::Status::ERR_BAD_PARAM);
    let Some(gid) = parse_id(&c.grp) else {
        return core.reply_status(conn, tag, cmd, bad);
    };
    let members = match expand(core, &c.procs) {
        Ok(m) => m,
        Err(s) => return core.reply_status(conn, tag, cmd, s),
    };
    if members.binary_search(&me).is_err() {
        return core.reply_status(conn, tag, cmd, bad);
    }
    let held = core.groups.tables.get(&me).map_or(0, Groups::len);
    if held >= core.cfg.max_pending {
        return core.reply_status(conn, tag, cmd, super::ERR_OUT_OF_RESOURCE);
    }
    let opts = ConstructOptions {
        ft_collective: info_flag(&c.info, super::FT_KEY) || info_flag(&c.info, OPTIONAL_KEY),
        notify_termination: info_flag(&c.info, NOTIFY_TERMINATION_KEY),
    };
    let name = group_name(&gid);
    let roster = match open(core, &gid, &name, &members) {
        Ok(r) => r,
        Err(s) => return core.reply_status(conn, tag, cmd, s),
    };
    if let Some(rec) = core.groups.records.get_mut(&name) {
        if !rec.holders.contains(&me) {
            // It left (declined) or was reported gone.
            return core.reply_status(conn, tag, cmd, wire(pmix_core::Status::ERR_NOT_A_MEMBER));
        }
        rec.assign_ctxid |= info_flag(&c.info, ASSIGN_CTXID_KEY);
        if let Some(d) = info_deadline(&c.info, now, None) {
            rec.deadline = Some(rec.deadline.map_or(d, |x| x.min(d)));
        }
    }
    let Some(table) = core.groups.tables.get_mut(&me) else {
        return core.reply_status(conn, tag, cmd, wire(pmix_core::Status::ERR_NOT_A_MEMBER));
    };
    if let Err(e) = table.construct(gid, roster, opts) {
        return core.reply_status(conn, tag, cmd, wire(e.status()));
    }
    core.groups.pending.insert(
        (me.clone(), gid),
        Pending {
            conn,
            tag,
            op: CollectiveOp::Construct,
        },
    );
    core.groups.dirty.push(me);
    pump(core);
}

/// The roster of group `gid` over `members`, creating its record and the invited
/// replicas of its live members when it is new. `Err(status)` when the id is in
/// use with other members or past its construct.
fn open(core: &mut Core, gid: &GroupId, name: &str, members: &[ProcKey]) -> Result<Roster, Status> {
    let bad = wire(pmix_core::Status::ERR_BAD_PARAM);
    let ids: Vec<ProcId> = members
        .iter()
        .map(proc_id)
        .collect::<Option<_>>()
        .ok_or(bad)?;
    let roster = Roster::new(&ids).map_err(|e| wire(e.status()))?;
    if let Some(rec) = core.groups.records.get(name) {
        return if rec.constructed.is_none() && rec.roster == members {
            Ok(roster)
        } else {
            Err(bad)
        };
    }
    let (dead, live): (Vec<ProcKey>, Vec<ProcKey>) =
        members.iter().cloned().partition(|m| gone(core, m));
    let mut rec = Record {
        roster: members.to_vec(),
        holders: BTreeSet::new(),
        constructed: None,
        left: BTreeSet::new(),
        lost: dead.iter().cloned().collect(),
        assign_ctxid: false,
        ctxid: None,
        deadline: None,
    };
    for m in &live {
        let Some(id) = proc_id(m) else { continue };
        let table = core
            .groups
            .tables
            .entry(m.clone())
            .or_insert_with(|| Groups::new(id));
        if let Err(e) = table.invite(*gid, roster.clone()) {
            // Undo the invitations made so far (a leave that goes nowhere).
            for h in &rec.holders {
                if let Some(t) = core.groups.tables.get_mut(h) {
                    let _ = t.leave(gid);
                }
            }
            return Err(wire(e.status()));
        }
        rec.holders.insert(m.clone());
    }
    // Members already gone are reported to every new replica.
    for d in dead.iter().filter_map(proc_id) {
        for m in &live {
            if let Some(t) = core.groups.tables.get_mut(m) {
                let _ = t.on_lost(&d);
            }
            core.groups.dirty.push(m.clone());
        }
        pump(core);
    }
    core.groups.records.insert(name.to_string(), rec);
    Ok(roster)
}

fn destruct(core: &mut Core, conn: ConnId, tag: u32, me: ProcKey, d: GroupDestruct) {
    let cmd = Command::GroupDestruct;
    let Some(gid) = parse_id(&d.grp) else {
        return core.reply_status(conn, tag, cmd, wire(pmix_core::Status::ERR_BAD_PARAM));
    };
    let Some(table) = core.groups.tables.get_mut(&me) else {
        return core.reply_status(conn, tag, cmd, wire(pmix_core::Status::ERR_NOT_FOUND));
    };
    if let Err(e) = table.destruct(&gid) {
        return core.reply_status(conn, tag, cmd, wire(e.status()));
    }
    core.groups.pending.insert(
        (me.clone(), gid),
        Pending {
            conn,
            tag,
            op: CollectiveOp::Destruct,
        },
    );
    core.groups.dirty.push(me);
    pump(core);
}

fn leave(core: &mut Core, conn: ConnId, tag: u32, me: ProcKey, l: GroupLeave) {
    let cmd = Command::GroupLeave;
    let Some(gid) = parse_id(&l.grp) else {
        return core.reply_status(conn, tag, cmd, wire(pmix_core::Status::ERR_BAD_PARAM));
    };
    let Some(table) = core.groups.tables.get_mut(&me) else {
        return core.reply_status(conn, tag, cmd, wire(pmix_core::Status::ERR_NOT_FOUND));
    };
    let dep = match table.leave(&gid) {
        Ok(d) => d,
        Err(e) => return core.reply_status(conn, tag, cmd, wire(e.status())),
    };
    // Complete as soon as the event is generated: before anyone receives it.
    core.reply_status(conn, tag, cmd, Status::SUCCESS);
    if dep.cancelled().is_some()
        && let Some(p) = core.groups.pending.remove(&(me.clone(), gid))
    {
        let c = pending_command(p.op);
        core.reply_status(p.conn, p.tag, c, wire(pmix_core::Status::ERR_NOT_A_MEMBER));
    }
    let name = group_name(&gid);
    if let Some(rec) = core.groups.records.get_mut(&name) {
        rec.holders.remove(&me);
        rec.left.insert(me.clone());
    }
    let msg = dep.message();
    for r in dep.recipients() {
        core.groups.mail.push_back((proc_key(&r), msg));
    }
    pump(core);
    collect(core, &name);
    super::fence::evaluate_all(core);
}

fn pending_command(op: CollectiveOp) -> Command {
    match op {
        CollectiveOp::Destruct => Command::GroupDestruct,
        _ => Command::GroupConstruct,
    }
}

/// Drains every replica's outputs and delivers the messages between replicas, one
/// at a time, until nothing is left.
fn pump(core: &mut Core) {
    loop {
        while let Some(p) = core.groups.dirty.pop() {
            while let Some(out) = core.groups.tables.get_mut(&p).and_then(Groups::poll_output) {
                handle(core, &p, out);
            }
        }
        let Some((to, msg)) = core.groups.mail.pop_front() else {
            break;
        };
        if let Some(t) = core.groups.tables.get_mut(&to) {
            // A late message for a group the recipient finished is dropped.
            let _ = t.on_message(&msg);
            core.groups.dirty.push(to);
        }
    }
}

/// Carries out one output of `p`'s replica.
fn handle(core: &mut Core, p: &ProcKey, out: GroupOutput) {
    let GroupOutput { group, output } = out;
    match output {
        GroupOut::Send(body) => {
            let Some(from) = proc_id(p) else { return };
            let to: Vec<ProcId> = core
                .groups
                .tables
                .get(p)
                .and_then(|t| t.get(&group))
                .map(|g| g.others().collect())
                .unwrap_or_default();
            let msg = Message { group, from, body };
            for r in to {
                core.groups.mail.push_back((proc_key(&r), msg));
            }
        }
        GroupOut::Notify(n) => notify(core, p, &group, n),
        GroupOut::Complete(c) => complete(core, p, &group, c),
    }
}

/// Raises notification `n` of `p`'s replica of `group` to `p` (range CUSTOM).
fn notify(core: &mut Core, p: &ProcKey, group: &GroupId, n: Notification) {
    let about = proc_key(&n.proc);
    let source = if n.code == pmix_core::Status::GROUP_LEFT {
        about.clone()
    } else {
        (core.cfg.nspace.clone(), core.cfg.rank)
    };
    let info = vec![
        Info::new(GROUP_ID_KEY, group_name(group)),
        Info::new(EVPROC_KEY, Proc::new(about.0.as_str(), about.1)),
        Info::new(EVRANGE_KEY, Proc::new(p.0.as_str(), p.1)),
    ];
    super::events::raise(core, wire(n.code), &source, info, DataRange::CUSTOM, None);
}

/// `p`'s call `c` on `group` completed: answer its request.
fn complete(core: &mut Core, p: &ProcKey, group: &GroupId, c: Completion) {
    let name = group_name(group);
    let pending = core.groups.pending.remove(&(p.clone(), *group));
    let ok = c.status == pmix_core::Status::SUCCESS;
    match c.op {
        CollectiveOp::Construct if ok => {
            let members: Vec<ProcKey> = core
                .groups
                .tables
                .get(p)
                .and_then(|t| t.get(group))
                .map(|g| g.members().map(|m| proc_key(&m)).collect())
                .unwrap_or_default();
            let mut ctxid = None;
            if let Some(rec) = core.groups.records.get_mut(&name) {
                if rec.constructed.is_none() {
                    rec.constructed = Some(members.clone());
                    rec.deadline = None;
                    if rec.assign_ctxid {
                        core.groups.last_ctxid += 1;
                        rec.ctxid = Some(core.groups.last_ctxid);
                    }
                }
                ctxid = rec.ctxid;
            }
            if let Some(pd) = pending {
                construct_reply(core, pd, &members, ctxid);
            }
            return;
        }
        CollectiveOp::Construct | CollectiveOp::Destruct => {
            // The replica is gone (aborted or destructed).
            if let Some(rec) = core.groups.records.get_mut(&name) {
                rec.holders.remove(p);
            }
            collect(core, &name);
        }
        _ => {}
    }
    if let Some(pd) = pending {
        core.reply_status(pd.conn, pd.tag, pending_command(pd.op), wire(c.status));
    }
}

/// The successful construct reply, in the layout of the client's version.
fn construct_reply(core: &mut Core, pd: Pending, members: &[ProcKey], ctxid: Option<u64>) {
    let Some(peer) = core.conns.get(&pd.conn) else {
        return;
    };
    let members = match peer.codec.version.group_layout() {
        GroupLayout::V420 => None,
        _ => Some(
            members
                .iter()
                .map(|m| Proc::new(m.0.as_str(), m.1))
                .collect(),
        ),
    };
    let reply = Reply::GroupConstruct(GroupConstructReply {
        status: Status::SUCCESS,
        members,
        ctxid: Some(ctxid.map_or(GroupConstructReply::NO_CTXID, Size)),
    });
    core.reply(pd.conn, pd.tag, &reply);
}

/// Forgets the record of `name` once no member holds the group.
fn collect(core: &mut Core, name: &str) {
    if core
        .groups
        .records
        .get(name)
        .is_some_and(|r| r.holders.is_empty())
    {
        core.groups.records.remove(name);
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
/// DESIGN §4); a fence without `PMIX_GROUP_FT_COLLECTIVE` fails with that status,
/// an FT one completes without `proc`. `None`: the core decides.
pub(crate) fn fence_departed(core: &Core, groups: &[String], proc: &ProcKey) -> Option<Status> {
    for g in groups {
        let Some(rec) = core.groups.records.get(g) else {
            continue;
        };
        if rec.left.contains(proc) {
            return Some(wire(pmix_core::Status::ERR_NOT_A_MEMBER));
        }
        let member = rec
            .constructed
            .as_ref()
            .is_some_and(|m| m.binary_search(proc).is_ok());
        if rec.lost.contains(proc) || (member && gone(core, proc)) {
            return Some(wire(pmix_core::Status::ERR_PROC_TERM_WO_SYNC));
        }
    }
    None
}

/// `conn` closed: every process holding groups that is now gone (lost, finalized,
/// or of a namespace being removed) departs them as lost.
pub(crate) fn conn_closed(core: &mut Core, conn: ConnId, now: Instant) {
    let _ = (conn, now);
    let gone_procs: Vec<ProcKey> = core
        .groups
        .tables
        .keys()
        .filter(|p| gone(core, p))
        .cloned()
        .collect();
    for p in gone_procs {
        depart(core, &p);
    }
}

/// A rank was lost: it departs every group it holds.
pub(crate) fn proc_lost(core: &mut Core, proc: &ProcKey, now: Instant) {
    let _ = now;
    depart(core, proc);
}

/// `p` is gone: its replicas go, and every other replica of its groups hears of the
/// loss (after every message `p` sent, all delivered by now).
fn depart(core: &mut Core, p: &ProcKey) {
    core.groups.invitations.retain(|i| i.leader != *p);
    let Some(table) = core.groups.tables.remove(p) else {
        return;
    };
    core.groups.pending.retain(|(q, _), _| q != p);
    let mut names = Vec::new();
    let mut others = BTreeSet::new();
    for g in table.iter() {
        let name = group_name(g.id());
        if let Some(rec) = core.groups.records.get_mut(&name)
            && rec.holders.remove(p)
        {
            rec.lost.insert(p.clone());
            others.extend(rec.holders.iter().cloned());
        }
        names.push(name);
    }
    if let Some(id) = proc_id(p) {
        for o in others {
            if let Some(t) = core.groups.tables.get_mut(&o) {
                let _ = t.on_lost(&id);
                core.groups.dirty.push(o);
            }
            pump(core);
        }
    }
    for n in &names {
        collect(core, n);
    }
    super::fence::evaluate_all(core);
}

/// Constructs that passed their `pmix.timeout` fail with `PMIX_ERR_TIMEOUT` for
/// every caller and are forgotten.
pub(crate) fn tick(core: &mut Core, now: Instant) {
    let due: Vec<String> = core
        .groups
        .records
        .iter()
        .filter(|(_, r)| r.constructed.is_none() && r.deadline.is_some_and(|d| d <= now))
        .map(|(n, _)| n.clone())
        .collect();
    for name in due {
        let Some(rec) = core.groups.records.remove(&name) else {
            continue;
        };
        let Ok(gid) = GroupId::new(&name) else {
            continue;
        };
        for h in &rec.holders {
            if let Some(t) = core.groups.tables.get_mut(h) {
                // Dropped without telling anyone: every holder is told here.
                let _ = t.leave(&gid);
            }
            if let Some(pd) = core.groups.pending.remove(&(h.clone(), gid)) {
                let c = pending_command(pd.op);
                core.reply_status(pd.conn, pd.tag, c, wire(pmix_core::Status::ERR_TIMEOUT));
            }
        }
    }
}

/// The next group timer (a construct's `pmix.timeout`).
pub(crate) fn next_deadline(core: &Core) -> Option<Instant> {
    core.groups
        .records
        .values()
        .filter(|r| r.constructed.is_none())
        .filter_map(|r| r.deadline)
        .min()
}

/// The procs of a PROC value or a DATA_ARRAY of PROC (`pmix.evrange`).
fn procs_of(v: Option<&pmix_wire::Value>) -> Option<Vec<Proc>> {
    match v? {
        pmix_wire::Value::Proc(p) => Some(vec![p.clone()]),
        pmix_wire::Value::DataArray(a) => Some(
            a.items
                .iter()
                .filter_map(|v| match v {
                    pmix_wire::Value::Proc(p) => Some(p.clone()),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

/// A client's NOTIFY of `code` with `info` from `source`, watched for the events a
/// 4.2 invite/join is made of (PROTOCOL.md §6.9); the core's NOTIFY path calls it
/// for every client NOTIFY.
///
/// - `PMIX_GROUP_INVITED` (`pmix.grp.id`, `pmix.evrange` = the invitees): an
///   invitation by `source` is remembered.
/// - `PMIX_GROUP_INVITE_ACCEPTED` / `_DECLINED` (`pmix.evrange` = the leader; no
///   group id on the wire): the answer counts for the oldest invitation of that
///   leader that lists `source` and that it has not answered.
/// - `PMIX_GROUP_CONSTRUCT_COMPLETE` (`pmix.grp.id`, `pmix.evrange`): the group
///   becomes known here: the leader and the invitees that accepted (a 4.2 leader
///   ranges this event to every invitee, decliners included); without a
///   remembered invitation, the listed procs and the source. A replica per member
///   is built and constructed, so later fences, leaves and destructs over the id
///   work. Ignored when the id is already known or a member is not a live local
///   rank.
pub(crate) fn notified(core: &mut Core, source: &ProcKey, code: Status, info: &[Info]) {
    let gid = || {
        info_value(info, GROUP_ID_KEY)
            .and_then(|v| v.as_str())
            .and_then(|s| GroupId::new(s).ok())
    };
    let range = procs_of(info_value(info, EVRANGE_KEY));
    if code == GROUP_INVITED {
        let (Some(gid), Some(range)) = (gid(), range) else {
            return;
        };
        let Ok(invitees) = expand(core, &range) else {
            return;
        };
        let mine = |i: &Invitation| i.leader == *source;
        let invs = &mut core.groups.invitations;
        // At most max_pending per leader: the oldest goes.
        if invs.iter().filter(|i| mine(i)).count() >= core.cfg.max_pending
            && let Some(k) = invs.iter().position(mine)
        {
            invs.remove(k);
        }
        invs.push(Invitation {
            leader: source.clone(),
            grp: group_name(&gid),
            invitees,
            accepted: BTreeSet::new(),
            answered: BTreeSet::new(),
        });
    } else if code == GROUP_INVITE_ACCEPTED || code == GROUP_INVITE_DECLINED {
        let Some([leader]) = range.as_deref() else {
            return;
        };
        let Some(name) = leader.nspace.as_str() else {
            return;
        };
        let leader = (name.to_string(), leader.rank.0);
        if let Some(inv) = core.groups.invitations.iter_mut().find(|i| {
            i.leader == leader && i.invitees.contains(source) && !i.answered.contains(source)
        }) {
            inv.answered.insert(source.clone());
            if code == GROUP_INVITE_ACCEPTED {
                inv.accepted.insert(source.clone());
            }
        }
    } else if code == GROUP_CONSTRUCT_COMPLETE {
        let Some(gid) = gid() else {
            return;
        };
        let name = group_name(&gid);
        let invs = &mut core.groups.invitations;
        let mut procs = match invs
            .iter()
            .position(|i| i.leader == *source && i.grp == name)
        {
            Some(k) => {
                let inv = invs.remove(k);
                inv.accepted
                    .iter()
                    .map(|p| Proc::new(p.0.as_str(), p.1))
                    .collect()
            }
            None => match range {
                Some(r) => r,
                None => return,
            },
        };
        procs.push(Proc::new(source.0.as_str(), source.1));
        record_constructed(core, &gid, &name, &procs);
    }
}

/// Makes group `gid` over `procs` known as constructed (an invite/join that
/// completed): a replica per member, each constructed.
fn record_constructed(core: &mut Core, gid: &GroupId, name: &str, procs: &[Proc]) {
    let Ok(members) = expand(core, procs) else {
        return;
    };
    if core.groups.records.contains_key(name) || members.iter().any(|m| gone(core, m)) {
        return;
    }
    let Ok(roster) = open(core, gid, name, &members) else {
        return;
    };
    for m in &members {
        if let Some(t) = core.groups.tables.get_mut(m) {
            let _ = t.construct(*gid, roster.clone(), ConstructOptions::default());
            core.groups.dirty.push(m.clone());
        }
        pump(core);
    }
}
