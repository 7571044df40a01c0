//! FENCENB (docs/wire.md §6.5): a barrier over the listed processes; CONNECTNB and
//! DISCONNECTNB (§6.13) are the same collective with their own replies ([`Kind`]): a
//! connect that succeeds answers each contributor `STATUS 0` and one byte object
//! per other namespace taking part, that job's information as its REQ gets it
//! (libpmix2 files it, so a connected job's keys and sizes are known on both sides);
//! a disconnect, a lone status. A connect or disconnect whose participants span
//! nodes gets `PMIX_ERR_NOT_SUPPORTED` (no host carries it yet).
//!
//! The participants are the listed procs, a WILDCARD rank meaning every rank of
//! the namespace (a name that is no namespace of ours is asked of the groups
//! seam, `Core::group_fence_members`); the sorted set identifies the fence.
//! Every participant's reply is a lone STATUS: the collected data stays in the
//! server and travels by GETNB (`pmix.collect` changes nothing on one node).
//! The exception is a pmix-rs extension for the rank-state exchange: when a
//! contributor's request carries [`FT_CONTRIBUTION_KEY`] (a byte object), a
//! successful fence answers every contributor the same [`FenceNbReply`], every
//! contribution given with the fence and who gave it, so a round costs one
//! collective and every survivor decides from the same bytes. OpenPMIx 4.2 servers
//! ignore the key (their clients never send it).
//!
//! A fence naming an id that is neither a namespace nor a group yet is held until
//! the id becomes a group, or until its deadline (`pmix.timeout`, else the get
//! timeout), when it answers `PMIX_ERR_BAD_PARAM` as an unknown id always did: an
//! invitee of a 4.2 invite learns that its join was sent, not that the group is
//! made, and may fence over the group before the leader's
//! `PMIX_GROUP_CONSTRUCT_COMPLETE` reaches the server (libpmix2's invitees and
//! ours alike).
//!
//! A participant that is gone (lost, or finalized without joining): with
//! `PMIX_GROUP_FT_COLLECTIVE` (`pmix.grp.ftcoll`, asked by any contributor) the
//! fence completes on the survivors with `STATUS 0`; without it every contributor
//! gets [`FENCE_LOST`] at once, and so does any later one. `pmix.timeout`
//! (seconds) fails the fence with `PMIX_ERR_TIMEOUT`. Nobody waits on a dead peer.
//! Hosted, a fence spanning nodes is the host's collective, which cannot fail: a
//! gone local participant makes this node hand its part up anyway, once every
//! local participant alive has joined, and answer its contributors
//! [`FENCE_LOST`] when the host answers, so that no other node waits for ever for
//! this one (the other nodes get the host's answer).

use std::time::Instant;

use pmix_wire::modex::ModexEntry;
use pmix_wire::msg::{FT_CONTRIBUTION_KEY, FenceNb, FenceNbReply};
use pmix_wire::{ByteObject, Command, Proc, Rank, Reply, Status, Value};

use super::namespace::RankState;
use super::util::{FastMap, FastSet};
use super::{ConnId, Core, ProcKey, info_deadline, info_flag, info_value};

/// What a non-FT fence answers when a participant is gone
/// (`PMIX_ERR_LOST_CONNECTION`, as OpenPMIx 4.2's server).
pub const FENCE_LOST: Status = Status::ERR_LOST_CONNECTION;

/// The key of `PMIX_GROUP_FT_COLLECTIVE`.
pub const FT_KEY: &str = pmix_wire::keys::GROUP_FT_COLLECTIVE;

/// Which collective a [`Fence`] is: FENCENB, or CONNECTNB / DISCONNECTNB, which run
/// the same way over their listed processes and differ in their reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// FENCENB.
    Fence,
    /// CONNECTNB: a success carries the other participating jobs' information.
    Connect,
    /// DISCONNECTNB: a lone status.
    Disconnect,
}

impl Kind {
    fn command(self) -> Command {
        match self {
            Kind::Fence => Command::FenceNb,
            Kind::Connect => Command::ConnectNb,
            Kind::Disconnect => Command::DisconnectNb,
        }
    }
}

/// The fences in flight.
#[derive(Debug, Default)]
pub(crate) struct Fences {
    list: Vec<Fence>,
    /// Requests naming an id that is no group yet (module docs), in arrival order.
    unresolved: Vec<Unresolved>,
    /// How many contributions each connection has in `list` (the per-peer bound,
    /// asked on every request, without walking the contributors).
    per_conn: FastMap<ConnId, usize>,
}

#[derive(Debug)]
struct Unresolved {
    conn: ConnId,
    tag: u32,
    req: FenceNb,
    kind: Kind,
    /// When it came (its `pmix.timeout` counts from then).
    at: Instant,
    deadline: Instant,
}

/// Why a fence's participants are not known now.
enum Unknown {
    /// Answer this at once.
    Refused(Status),
    /// A name that may yet become a group: hold the request.
    NotYet,
}

#[derive(Debug)]
struct Fence {
    kind: Kind,
    /// The procs of the request that opened it, with the job size of each one's
    /// namespace then, when they named only namespaces: a request listing the
    /// same joins without expanding them again ([`joinable`]).
    spec: Option<(Vec<Proc>, Vec<u32>)>,
    /// Sorted, without duplicates.
    participants: Vec<ProcKey>,
    /// The group ids the request named (their members are participants).
    groups: Vec<String>,
    contributors: Vec<Contrib>,
    /// The procs in `contributors`.
    contributed: FastSet<ProcKey>,
    /// A participant was found gone at the last full look: contributions look
    /// again (else a contribution only counts).
    gone_seen: bool,
    ft: bool,
    deadline: Option<Instant>,
    /// How many participants are on this node (all of them unless the server is
    /// hosted and the fence spans nodes).
    local: usize,
    /// A contributor asked `pmix.collect`.
    collect: bool,
    /// The host's fence this one waits for ([`Upcall::Fence`](super::Upcall::Fence)).
    host: Option<u64>,
    /// A local participant is gone (non-FT): what this node's contributors get
    /// once the host answers ([`evaluate`]).
    fail: Option<Status>,
}

#[derive(Debug)]
struct Contrib {
    conn: ConnId,
    tag: u32,
    proc: ProcKey,
    /// What the request carried under [`FT_CONTRIBUTION_KEY`].
    data: Option<Vec<u8>>,
}

impl Fences {
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let held = self.unresolved.iter().map(|u| u.deadline);
        self.list
            .iter()
            .filter_map(|f| f.deadline)
            .chain(held)
            .min()
    }

    pub(crate) fn pending_of(&self, conn: ConnId) -> usize {
        let held = self.unresolved.iter().filter(|u| u.conn == conn).count();
        self.per_conn.get(&conn).copied().unwrap_or(0) + held
    }

    /// Takes fence `idx` out of the list, and its contributions out of the counts.
    fn take(&mut self, idx: usize) -> Fence {
        let f = self.list.remove(idx);
        self.uncount(&f);
        f
    }

    fn uncount(&mut self, f: &Fence) {
        for c in &f.contributors {
            if let Some(n) = self.per_conn.get_mut(&c.conn) {
                *n -= 1;
                if *n == 0 {
                    self.per_conn.remove(&c.conn);
                }
            }
        }
    }
}

/// The participants of `f`, sorted, and the group ids it named.
fn participants(core: &Core, f: &FenceNb) -> Result<(Vec<ProcKey>, Vec<String>), Unknown> {
    let bad = || Unknown::Refused(Status::ERR_BAD_PARAM);
    let mut out = Vec::new();
    let mut groups = Vec::new();
    for p in &f.procs {
        let Some(name) = p.nspace.as_str() else {
            return Err(bad());
        };
        match core.namespaces.get(name) {
            Some(ns) if p.rank == Rank::WILDCARD => {
                out.extend((0..ns.spec.job_size).map(|r| (name.to_string(), r)));
            }
            Some(ns) if p.rank.0 < ns.spec.job_size => out.push((name.to_string(), p.rank.0)),
            Some(_) => return Err(bad()),
            None => match core.group_fence_members(name) {
                Some(Ok(members)) => {
                    out.extend(members);
                    groups.push(name.to_string());
                }
                Some(Err(s)) => return Err(Unknown::Refused(s)),
                None if p.rank == Rank::WILDCARD => return Err(Unknown::NotYet),
                None => return Err(bad()),
            },
        }
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err(bad());
    }
    groups.sort_unstable();
    groups.dedup();
    Ok((out, groups))
}

/// The job size of each namespace `procs` names, when it names only namespaces.
fn spec_sizes(core: &Core, procs: &[Proc]) -> Option<Vec<u32>> {
    procs
        .iter()
        .map(|p| {
            let ns = core.namespaces.get(p.nspace.as_str()?)?;
            Some(ns.spec.job_size)
        })
        .collect()
}

/// Whether `me` is one of the procs `spec` named when its namespaces had `sizes`.
fn in_spec(spec: &[Proc], sizes: &[u32], me: &ProcKey) -> bool {
    spec.iter().zip(sizes).any(|(p, &size)| {
        p.nspace.as_bytes() == me.0.as_bytes()
            && (p.rank.0 == me.1 || (p.rank == Rank::WILDCARD && me.1 < size))
    })
}

/// The fence in flight that a request of `kind` over `procs` by `me` joins, found
/// without expanding `procs` (a WILDCARD over a large job costs a pass over its
/// ranks, every request a quadratic fence): the first fence of `kind` that `me`
/// is in and has not joined, if it was opened by a request listing the same
/// namespaces and ranks as `procs`, of the same job sizes now. Then its
/// participants are what `procs` expands to, and it is the fence the expansion
/// would find. `None`: expand.
fn joinable(core: &Core, kind: Kind, procs: &[Proc], me: &ProcKey) -> Option<usize> {
    let (i, x) = core.fences.list.iter().enumerate().find(|(_, x)| {
        x.kind == kind
            && !x.contributed.contains(me)
            // Without `me` it is not the fence of any request of `me`'s.
            && match &x.spec {
                Some((spec, sizes)) => in_spec(spec, sizes, me),
                None => x.participants.binary_search(me).is_ok(),
            }
    })?;
    let (spec, sizes) = x.spec.as_ref()?;
    (spec.as_slice() == procs && spec_sizes(core, procs).as_ref() == Some(sizes)).then_some(i)
}

/// How many of `parts` are on this node, and whether one of those is gone already
/// (what a full look of [`evaluate`] at a new fence would find gone), in one pass.
fn survey(core: &Core, parts: &[ProcKey], groups: &[String]) -> (usize, bool) {
    let (mut local, mut gone) = (0, false);
    for p in parts {
        let state = core.namespaces.get(&p.0).and_then(|ns| ns.states.get(&p.1));
        let Some(state) = state else {
            continue;
        };
        local += 1;
        gone = gone
            || matches!(state, RankState::Lost | RankState::Finalized)
            || core.group_fence_departed(groups, p).is_some();
    }
    (local, gone)
}

/// FENCENB from `conn` (or CONNECTNB / DISCONNECTNB, by `kind`).
pub(super) fn fence(core: &mut Core, conn: ConnId, tag: u32, f: FenceNb, kind: Kind, now: Instant) {
    let cmd = kind.command();
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    let me = peer.proc.clone();
    if kind == Kind::Fence {
        super::nodestore::fenced(core, conn);
    }
    if let Some(idx) = joinable(core, kind, &f.procs, &me) {
        if !core.may_wait(conn) {
            return core.reply_status(conn, tag, cmd, super::ERR_OUT_OF_RESOURCE);
        }
        return join(core, idx, conn, tag, me, &f, now);
    }
    let (parts, groups) = match participants(core, &f) {
        Ok(p) => p,
        Err(Unknown::Refused(s)) => return core.reply_status(conn, tag, cmd, s),
        Err(Unknown::NotYet) => {
            if !core.may_wait(conn) {
                return core.reply_status(conn, tag, cmd, super::ERR_OUT_OF_RESOURCE);
            }
            let deadline = info_deadline(&f.info, now, Some(core.cfg.get_timeout))
                .unwrap_or(now + core.cfg.get_timeout);
            core.fences.unresolved.push(Unresolved {
                conn,
                tag,
                req: f,
                kind,
                at: now,
                deadline,
            });
            return;
        }
    };
    if parts.binary_search(&me).is_err() {
        // A process fencing with others without being one of them.
        return core.reply_status(conn, tag, cmd, Status::ERR_BAD_PARAM);
    }
    if !core.may_wait(conn) {
        return core.reply_status(conn, tag, cmd, super::ERR_OUT_OF_RESOURCE);
    }
    let idx = match core
        .fences
        .list
        .iter()
        // A fence over a group is not one over the same procs listed.
        .position(|x| {
            x.kind == kind
                && x.participants == parts
                && x.groups == groups
                && !x.contributed.contains(&me)
        }) {
        Some(i) => i,
        None => {
            let (local, gone) = survey(core, &parts, &groups);
            let spec = if groups.is_empty() {
                spec_sizes(core, &f.procs).map(|sizes| (f.procs.clone(), sizes))
            } else {
                None
            };
            core.fences.list.push(Fence {
                kind,
                spec,
                participants: parts,
                groups,
                contributors: Vec::with_capacity(local),
                contributed: FastSet::with_capacity_and_hasher(local, Default::default()),
                // The look `evaluate` would take at the first contribution.
                gone_seen: gone,
                ft: false,
                deadline: None,
                local,
                collect: false,
                host: None,
                fail: None,
            });
            core.fences.list.len() - 1
        }
    };
    join(core, idx, conn, tag, me, &f, now);
}

/// `me`'s request `f` on `conn` contributes to fence `idx`.
fn join(
    core: &mut Core,
    idx: usize,
    conn: ConnId,
    tag: u32,
    me: ProcKey,
    f: &FenceNb,
    now: Instant,
) {
    let ft = info_flag(&f.info, FT_KEY);
    let deadline = info_deadline(&f.info, now, None);
    let collect = info_flag(&f.info, pmix_wire::keys::COLLECT_DATA);
    let fence = &mut core.fences.list[idx];
    fence.ft |= ft;
    fence.collect |= collect;
    fence.deadline = match (fence.deadline, deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let data = match info_value(&f.info, FT_CONTRIBUTION_KEY) {
        Some(Value::ByteObject(b)) => Some(b.0.clone()),
        _ => None,
    };
    fence.contributed.insert(me.clone());
    *core.fences.per_conn.entry(conn).or_default() += 1;
    let fence = &mut core.fences.list[idx];
    fence.contributors.push(Contrib {
        conn,
        tag,
        proc: me,
        data,
    });
    evaluate(core, idx, false);
}

/// Completes or fails fence `idx` if it can; returns whether it was removed.
///
/// A participant that has not contributed is *gone* when the groups seam says so
/// for a group fence (`Core::group_fence_departed`, with the status a non-FT
/// fence then fails with) or when it is lost or finalized ([`FENCE_LOST`]).
/// Without `full`, and when no participant was gone at the last full look, only
/// the count of contributions is checked (a fence round costs linear time, not
/// quadratic).
fn evaluate(core: &mut Core, idx: usize, full: bool) -> bool {
    let fence = &core.fences.list[idx];
    if fence.host.is_some() {
        // This node's part is done; the host answers for the others.
        return false;
    }
    if !full && !fence.gone_seen && fence.contributed.len() < fence.local {
        return false;
    }
    if fence.contributed.len() == fence.participants.len() {
        // Every participant joined (contributors are participants): nobody to
        // look for.
        let fence = core.fences.take(idx);
        finish(core, fence, Status::SUCCESS, Vec::new());
        return true;
    }
    let mut missing_alive = false;
    let mut remote = false;
    let mut gone: Option<Status> = None;
    for p in &fence.participants {
        if fence.contributed.contains(p) {
            continue;
        }
        if !core.is_local(p) {
            remote = true;
            continue;
        }
        let why = core
            .group_fence_departed(&fence.groups, p)
            .or_else(|| core.departed(p).then_some(FENCE_LOST));
        match why {
            Some(s) => {
                gone.get_or_insert(s);
            }
            None => missing_alive = true,
        }
    }
    let spans = remote && core.cfg.provides.spans_nodes() && fence.kind == Kind::Fence;
    let status = match gone {
        Some(s) if !fence.ft && !spans => s,
        _ if missing_alive => {
            core.fences.list[idx].gone_seen = gone.is_some();
            return false;
        }
        // Hosted, spanning nodes: the other nodes wait for this node's part (the
        // host's collective has no way to fail), so it goes up as any other, and
        // this node's contributors get the failure when the host answers. Failing
        // here at once would leave every other node's participants waiting for ever.
        Some(s) if !fence.ft => {
            core.fences.list[idx].fail = Some(s);
            Status::SUCCESS
        }
        _ => Status::SUCCESS,
    };
    if status == Status::SUCCESS && remote {
        if core.fences.list[idx].kind != Kind::Fence {
            // A connect spanning nodes would need the host's connect upcall.
            let fence = core.fences.take(idx);
            finish(core, fence, Status::ERR_NOT_SUPPORTED, Vec::new());
            return true;
        }
        if core.cfg.provides.spans_nodes() {
            to_host(core, idx);
        }
        return false;
    }
    let fence = core.fences.take(idx);
    finish(core, fence, status, Vec::new());
    true
}

/// Hands fence `idx` to the host: this node's contributions (the contributors'
/// remote data when `pmix.collect` was asked, their rank-state contributions) as
/// one blob ([`Upcall::Fence`](super::Upcall::Fence)).
fn to_host(core: &mut Core, idx: usize) {
    let id = core.next_host_id();
    let fence = &core.fences.list[idx];
    let entries: Vec<ModexEntry> = fence
        .contributors
        .iter()
        .filter(|c| fence.collect || c.data.is_some())
        .map(|c| ModexEntry {
            proc: Proc::new(c.proc.0.as_str(), c.proc.1),
            kvals: fence.collect.then(|| core.remote_data(&c.proc)),
            contribution: c.data.clone(),
            group: None,
        })
        .collect();
    let data = if entries.is_empty() {
        Vec::new()
    } else {
        pmix_wire::modex::encode(&entries).unwrap_or_default()
    };
    let procs = host_procs(core, &fence.participants);
    let collect = fence.collect;
    core.fences.list[idx].host = Some(id);
    core.out
        .push_back(super::Output::Host(super::Upcall::Fence {
            id,
            procs,
            collect,
            data,
        }));
}

/// The participants as a host reads them: a namespace all of whose ranks take
/// part as one WILDCARD entry.
pub(super) fn host_procs(core: &Core, parts: &[ProcKey]) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        let ns = &parts[i].0;
        let n = parts[i..].iter().take_while(|p| &p.0 == ns).count();
        let size = core
            .namespaces
            .get(ns)
            .map_or(0, |n| n.spec.job_size as usize);
        if n == size {
            out.push((ns.clone(), Rank::WILDCARD.0));
        } else {
            out.extend(parts[i..i + n].iter().cloned());
        }
        i += n;
    }
    out
}

/// The host's answer to fence `id`: the other nodes' data is stored, and every
/// local contributor gets the fence's status (with the contributions of every
/// node, sorted by process, when the fence carried some). An id no fence waits for
/// (it failed or timed out meanwhile) is ignored.
pub(super) fn host_done(core: &mut Core, id: u64, status: Status, data: &[u8]) {
    let Some(idx) = core.fences.list.iter().position(|f| f.host == Some(id)) else {
        return;
    };
    let fence = core.fences.take(idx);
    if status != Status::SUCCESS {
        return finish(core, fence, status, Vec::new());
    }
    if let Some(fail) = fence.fail {
        return finish(core, fence, fail, Vec::new());
    }
    let entries = match pmix_wire::modex::decode_all(data, core.cfg.limits) {
        Ok(e) => e,
        Err(_) => return finish(core, fence, Status::ERROR, Vec::new()),
    };
    let mut extra = Vec::new();
    for e in entries {
        let Some(ns) = e.proc.nspace.as_str() else {
            continue;
        };
        let proc = (ns.to_string(), e.proc.rank.0);
        if core.is_local(&proc) {
            continue;
        }
        if let Some(kv) = e.kvals {
            core.ingest(&proc, kv);
        }
        if let Some(c) = e.contribution {
            extra.push((proc, c));
        }
    }
    finish(core, fence, Status::SUCCESS, extra);
}

/// Answers every contributor of `fence` with `status`: a lone STATUS, or, when the
/// fence carried rank-state contributions (here or in `remote`), the contributions
/// reply.
fn finish(core: &mut Core, fence: Fence, status: Status, remote: Vec<(ProcKey, Vec<u8>)>) {
    match fence.kind {
        Kind::Fence if status == Status::SUCCESS => {
            super::nodestore::fence_done(core, &fence.participants);
        }
        Kind::Fence => {}
        Kind::Connect if status == Status::SUCCESS => return connected(core, fence),
        k => return reply_all(core, fence.contributors, k.command(), status),
    }
    let hosted = fence.host.is_some();
    let carried = fence.contributors.iter().any(|c| c.data.is_some()) || !remote.is_empty();
    if status == Status::SUCCESS && carried {
        // One reply, built once: the same bytes decide the round at every survivor.
        let mut contributions: Vec<(ProcKey, Vec<u8>)> = fence
            .contributors
            .iter()
            .filter_map(|c| Some((c.proc.clone(), c.data.clone()?)))
            .chain(remote)
            .collect();
        if hosted {
            // Every node must decide from the same bytes: one order for all.
            contributions.sort_by(|a, b| a.0.cmp(&b.0));
        }
        let reply = Reply::FenceNb(FenceNbReply {
            status,
            contributions: contributions
                .into_iter()
                .map(|(p, d)| (Proc::new(p.0.as_str(), p.1), ByteObject(d)))
                .collect(),
        });
        // Encoded once per codec (every peer of a job shares one), not once per
        // participant: the reply holds every contribution.
        let mut encoded: Option<(pmix_wire::Codec, Vec<u8>)> = None;
        for c in &fence.contributors {
            let Some(codec) = core.conns.get(&c.conn).map(|p| p.codec.clone()) else {
                continue;
            };
            match &encoded {
                Some((k, bytes)) if *k == codec => core.send_bytes(c.conn, c.tag, bytes),
                _ => match reply.encode(&codec) {
                    Ok(bytes) => {
                        core.send_bytes(c.conn, c.tag, &bytes);
                        encoded = Some((codec, bytes));
                    }
                    Err(_) => core.reply(c.conn, c.tag, &reply),
                },
            }
        }
        return;
    }
    reply_all(core, fence.contributors, Command::FenceNb, status);
}

/// A lone `status` to every contributor, encoded once per codec rather than once
/// per contributor.
fn reply_all(core: &mut Core, contributors: Vec<Contrib>, cmd: Command, status: Status) {
    let reply = Reply::Status {
        command: cmd,
        status,
    };
    let mut encoded: Option<(pmix_wire::Codec, Vec<u8>)> = None;
    for c in contributors {
        let Some(peer) = core.conns.get(&c.conn) else {
            continue;
        };
        if !encoded.as_ref().is_some_and(|(k, _)| *k == peer.codec) {
            match reply.encode(&peer.codec) {
                Ok(bytes) => encoded = Some((peer.codec.clone(), bytes)),
                Err(_) => {
                    core.reply(c.conn, c.tag, &reply);
                    continue;
                }
            }
        }
        if let Some((_, bytes)) = &encoded {
            core.send_bytes(c.conn, c.tag, bytes);
        }
    }
}

/// A connect succeeded: every contributor gets `STATUS 0` and, for each other
/// namespace taking part, that job's information (the payload its REQ gets, in the
/// contributor's codec), so each side can read the other's job data.
fn connected(core: &mut Core, fence: Fence) {
    let mut nspaces: Vec<String> = fence.participants.iter().map(|p| p.0.clone()).collect();
    nspaces.dedup();
    for c in &fence.contributors {
        let Some(codec) = core.conns.get(&c.conn).map(|p| p.codec.clone()) else {
            continue;
        };
        let blobs: Vec<_> = nspaces
            .iter()
            .filter(|n| **n != c.proc.0)
            .filter_map(|n| core.namespaces.get_mut(n).and_then(|ns| ns.blob(&codec)))
            .collect();
        let jobs: Vec<&[u8]> = blobs.iter().map(|b| b.as_slice()).collect();
        let bytes = pmix_wire::msg::connect_reply_with_jobs(&codec, Status::SUCCESS, &jobs);
        core.send_payload(c.conn, c.tag, bytes.ok());
    }
}

/// Re-evaluates every fence: a participant departed (the groups work calls this
/// when a member leaves a group).
pub(crate) fn evaluate_all(core: &mut Core) {
    let mut i = 0;
    while i < core.fences.list.len() {
        if !evaluate(core, i, true) {
            i += 1;
        }
    }
}

/// `proc` is gone (lost or finalized): the fences it was missing from complete on
/// the survivors or fail.
pub(super) fn proc_departed(core: &mut Core, proc: &ProcKey) {
    // Only the fences `proc` was missing from: the others cannot change.
    let mut i = 0;
    while i < core.fences.list.len() {
        let f = &core.fences.list[i];
        let concerned = !f.contributed.contains(proc) && f.participants.binary_search(proc).is_ok();
        if !concerned || !evaluate(core, i, true) {
            i += 1;
        }
    }
}

/// Takes up again the held requests whose id became a group (called after every
/// request while some are held); those whose connection closed are dropped.
pub(super) fn resolve(core: &mut Core) {
    if core.fences.unresolved.is_empty() {
        return;
    }
    let held = std::mem::take(&mut core.fences.unresolved);
    for u in held {
        if !core.conns.contains_key(&u.conn) {
            continue;
        }
        match participants(core, &u.req) {
            Err(Unknown::NotYet) => core.fences.unresolved.push(u),
            _ => fence(core, u.conn, u.tag, u.req, u.kind, u.at),
        }
    }
}

/// Fences whose deadline passed: `PMIX_ERR_TIMEOUT` to every contributor; held
/// requests whose id never became a group: `PMIX_ERR_BAD_PARAM`.
pub(super) fn tick(core: &mut Core, now: Instant) {
    let (due, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut core.fences.unresolved)
        .into_iter()
        .partition(|u| u.deadline <= now);
    core.fences.unresolved = keep;
    for u in due {
        core.reply_status(u.conn, u.tag, u.kind.command(), Status::ERR_BAD_PARAM);
    }
    let (due, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut core.fences.list)
        .into_iter()
        .partition(|f| f.deadline.is_some_and(|d| d <= now));
    core.fences.list = keep;
    for f in &due {
        core.fences.uncount(f);
    }
    for f in due {
        let cmd = f.kind.command();
        for c in f.contributors {
            core.reply_status(c.conn, c.tag, cmd, Status::ERR_TIMEOUT);
        }
    }
}
