//! One record per group: its membership, where each member stands, the tally of
//! the collective in flight (construct or destruct), the directives and the
//! requests waiting; the collective's completion (replies, in the client's layout,
//! and events), departures, and the index of the groups each process holds.

use std::time::Instant;

use pmix_wire::msg::GroupConstructReply;
use pmix_wire::{DataRange, GroupLayout, Info, Proc, Reply, Size, Status};

use super::*;

/// Where one member of a group stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Standing {
    /// A current member that has not finished with the group: invited (no
    /// construct call yet), constructing, constructed or destructing.
    Holder,
    /// It left (or declined).
    Left,
    /// It was lost or finalized while it held the group (or before the group
    /// was made).
    Lost,
    /// It finished with the group (its construct aborted, or it destructed).
    Done,
}

/// What the record keeps of one member.
#[derive(Debug)]
pub(super) struct Member {
    /// Where it stands.
    pub(super) standing: Standing,
    /// The collective in flight expects it.
    expected: bool,
    /// It contributed to the collective in flight.
    pub(super) contributed: bool,
    /// Its construct asked `PMIX_GROUP_FT_COLLECTIVE` (or `PMIX_GROUP_OPTIONAL`).
    pub(super) ft: bool,
    /// Its construct asked `PMIX_GROUP_NOTIFY_TERMINATION`.
    pub(super) notterm: bool,
    /// The `PMIX_GROUP_INFO` its construct gave (its local CID, say): served to
    /// the other members, qualified by the group's id and context id, once the
    /// construct completes.
    pub(super) info: Vec<Info>,
    /// It runs on another node (hosted): its node's server speaks for it, through
    /// the host's collective (`spanning.rs`).
    pub(super) remote: bool,
    /// Its request waiting for the collective.
    call: Option<Pending>,
}

/// Where a group stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// The construct is in flight.
    Constructing,
    /// Constructed; no collective in flight.
    Active,
    /// The destruct is in flight.
    Destructing,
}

/// The tally of the collective in flight: it completes when the members that
/// contributed and those that departed before contributing make up the expected.
#[derive(Debug, Default)]
struct Tally {
    expected: u32,
    contributed: u32,
    left: u32,
    lost: u32,
    /// Expected members on other nodes, not accounted for until the host's
    /// collective brings their nodes' parts.
    pub(super) remote: u32,
    /// The first expected member lost before contributing (roster index), in the
    /// order the losses came: the one an abort names.
    first_lost: Option<usize>,
}

/// What the server knows of one group id: the one authority for its members.
#[derive(Debug)]
pub(super) struct Record {
    /// The procs the first construct listed, as sent: a later construct listing
    /// the same procs has the same membership without expanding it again.
    pub(super) spec: Vec<Proc>,
    /// The initial membership, sorted; members are indexes into it.
    pub(super) roster: Vec<ProcKey>,
    /// Each member, by roster index.
    pub(super) members: Vec<Member>,
    /// How many members are [`Standing::Holder`]s.
    holders: u32,
    /// Where the group stands.
    pub(super) phase: Phase,
    tally: Tally,
    /// The membership when the construct completed; `None` before.
    pub(super) constructed: Option<Vec<ProcKey>>,
    /// A member asked for a context id.
    pub(super) assign_ctxid: bool,
    /// A member asked for `PMIX_GROUP_NOTIFY_TERMINATION`.
    pub(super) notterm: bool,
    /// The context id assigned at completion (or, spanning nodes, by the leading
    /// node).
    pub(super) ctxid: Option<u64>,
    /// The host's collective this node's part went to (`spanning.rs`).
    pub(super) host: Option<u64>,
    /// When the construct times out.
    pub(super) deadline: Option<Instant>,
}

impl Member {
    /// The collective in flight expects it.
    pub(super) fn expected(&self) -> bool {
        self.expected
    }
}

impl Record {
    /// A group over `roster` (sorted) being constructed, first listed as `spec`;
    /// the members flagged in `dead` are already gone (lost before contributing).
    /// Members flagged in `remote` run on other nodes.
    pub(super) fn new(
        spec: Vec<Proc>,
        roster: Vec<ProcKey>,
        dead: &[bool],
        remote: &[bool],
    ) -> Record {
        let mut tally = Tally {
            expected: u32::try_from(roster.len()).unwrap_or(u32::MAX),
            remote: u32::try_from(remote.iter().filter(|&&r| r).count()).unwrap_or(u32::MAX),
            ..Tally::default()
        };
        let mut holders = 0;
        let members = (0..roster.len())
            .map(|i| {
                let lost = dead.get(i).copied().unwrap_or(false);
                if lost {
                    tally.lost += 1;
                    tally.first_lost.get_or_insert(i);
                } else {
                    holders += 1;
                }
                Member {
                    standing: if lost {
                        Standing::Lost
                    } else {
                        Standing::Holder
                    },
                    expected: true,
                    contributed: false,
                    ft: false,
                    notterm: false,
                    info: Vec::new(),
                    remote: remote.get(i).copied().unwrap_or(false),
                    call: None,
                }
            })
            .collect();
        Record {
            spec,
            roster,
            members,
            holders,
            phase: Phase::Constructing,
            tally,
            constructed: None,
            assign_ctxid: false,
            notterm: false,
            ctxid: None,
            host: None,
            deadline: None,
        }
    }

    /// The roster index of `p`.
    pub(super) fn index_of(&self, p: &ProcKey) -> Option<usize> {
        self.roster.binary_search(p).ok()
    }

    /// Where `p` stands; `None` when it is no member.
    pub(super) fn standing_of(&self, p: &ProcKey) -> Option<Standing> {
        self.index_of(p).map(|i| self.members[i].standing)
    }

    /// Member `i` contributes to the collective in flight; `call` waits for it.
    pub(super) fn contribute(&mut self, i: usize, call: Option<Pending>) {
        let m = &mut self.members[i];
        if m.expected && !m.contributed {
            self.tally.contributed += 1;
        }
        m.contributed = true;
        m.call = call;
    }

    /// Holder `i` departs (`lost`, or left): it counts as departed in the
    /// collective in flight unless it contributed. Returns its waiting request.
    pub(super) fn depart(&mut self, i: usize, lost: bool) -> Option<Pending> {
        let in_flight = self.phase != Phase::Active;
        let m = &mut self.members[i];
        if m.standing != Standing::Holder {
            return None;
        }
        m.standing = if lost { Standing::Lost } else { Standing::Left };
        self.holders = self.holders.saturating_sub(1);
        if in_flight && m.expected && !m.contributed {
            if lost {
                self.tally.lost += 1;
                self.tally.first_lost.get_or_insert(i);
            } else {
                self.tally.left += 1;
            }
        }
        m.call.take()
    }

    /// The destruct opens: it expects the current holders.
    pub(super) fn open_destruct(&mut self) {
        for m in &mut self.members {
            m.expected = m.standing == Standing::Holder;
            m.contributed = false;
            m.call = None;
        }
        let remote = self
            .members
            .iter()
            .filter(|m| m.remote && m.standing == Standing::Holder)
            .count();
        self.tally = Tally {
            expected: self.holders,
            remote: u32::try_from(remote).unwrap_or(u32::MAX),
            ..Tally::default()
        };
        self.phase = Phase::Destructing;
    }

    /// Every holder is done with the group (a construct that timed out): the
    /// holders and their waiting requests, in roster order.
    pub(super) fn drop_holders(&mut self) -> Vec<(ProcKey, Option<Pending>)> {
        let mut out = Vec::new();
        for (p, m) in self.roster.iter().zip(self.members.iter_mut()) {
            if m.standing == Standing::Holder {
                m.standing = Standing::Done;
                out.push((p.clone(), m.call.take()));
            }
        }
        self.holders = 0;
        out
    }

    /// The collective in flight has every expected member accounted for.
    pub(super) fn complete(&self) -> bool {
        let t = &self.tally;
        self.phase != Phase::Active
            && t.remote == 0
            && t.contributed + t.left + t.lost >= t.expected
    }

    /// The collective in flight spans nodes, every local member is accounted for,
    /// and this node's part has not gone to the host yet.
    pub(super) fn local_complete(&self) -> bool {
        let t = &self.tally;
        self.phase != Phase::Active
            && self.host.is_none()
            && t.remote > 0
            && t.contributed + t.left + t.lost + t.remote >= t.expected
    }

    /// Remote holder `i` left (its node said so through the host): it departs, and
    /// a collective in flight that counted it remote counts it departed instead.
    pub(super) fn remote_left(&mut self, i: usize) {
        let counted = self.phase != Phase::Active
            && self.host.is_none()
            && self.members[i].expected
            && !self.members[i].contributed;
        self.depart(i, false);
        if counted {
            self.tally.remote = self.tally.remote.saturating_sub(1);
        }
    }

    /// The remote members are accounted for (the host's collective came back).
    pub(super) fn remote_accounted(&mut self) {
        self.tally.remote = 0;
    }
}

/// Records that `p` holds group `name` (the index of each process's groups).
pub(super) fn index(core: &mut Core, p: &ProcKey, name: &str) {
    core.groups
        .by_proc
        .entry(p.clone())
        .or_default()
        .insert(name.to_string());
}

/// `p` no longer holds group `name`.
pub(super) fn unindex(core: &mut Core, p: &ProcKey, name: &str) {
    if let Some(s) = core.groups.by_proc.get_mut(p) {
        s.remove(name);
        if s.is_empty() {
            core.groups.by_proc.remove(p);
        }
    }
}

/// Raises `code` about member `about` of group `name` to `to` (range CUSTOM),
/// from `source`.
fn raise_to(
    core: &mut Core,
    code: Status,
    source: &ProcKey,
    to: &ProcKey,
    name: &str,
    about: &ProcKey,
) {
    let info = vec![
        Info::new(GROUP_ID_KEY, name),
        Info::new(EVPROC_KEY, Proc::new(about.0.as_str(), about.1)),
        Info::new(EVRANGE_KEY, Proc::new(to.0.as_str(), to.1)),
    ];
    core.raise(code, source, info, DataRange::CUSTOM, None);
}

/// The server's own proc: the source of the events it raises about a group.
fn server(core: &Core) -> ProcKey {
    (core.cfg.nspace.clone(), core.cfg.rank)
}

/// `PMIX_GROUP_LEFT` about `leaver` to every local holder of `name` (those on
/// other nodes hear it from their own server, at the next collective that spans
/// them).
pub(super) fn announce_left(core: &mut Core, name: &str, leaver: &ProcKey) {
    let to: Vec<ProcKey> = match core.groups.records.get(name) {
        Some(rec) => rec
            .roster
            .iter()
            .zip(&rec.members)
            .filter(|(_, m)| m.standing == Standing::Holder && !m.remote)
            .map(|(p, _)| p.clone())
            .collect(),
        None => return,
    };
    for q in &to {
        raise_to(core, Status::GROUP_LEFT, leaver, q, name, leaver);
    }
}

/// Forgets the record of `name` once no member holds the group.
pub(super) fn collect(core: &mut Core, name: &str) {
    if core
        .groups
        .records
        .get(name)
        .is_some_and(|r| r.holders == 0)
    {
        core.groups.records.remove(name);
    }
}

/// One holder's outcome of a construct.
struct Outcome {
    proc: ProcKey,
    call: Option<Pending>,
    ok: bool,
    report: bool,
    remote: bool,
}

/// The construct of `name` completes: each holder (every one contributed) gets
/// its outcome by its own directive. Without FT, a member lost before
/// contributing aborts it (`PMIX_GROUP_CONSTRUCT_ABORT` naming the first, then
/// the reply); with FT, one `PMIX_GROUP_MEMBER_FAILED` per departed member, then
/// success over the survivors.
pub(super) fn finish_construct(core: &mut Core, name: &str) {
    let Some(rec) = core.groups.records.get_mut(name) else {
        return;
    };
    let mut departed = Vec::new();
    let mut survivors = Vec::new();
    for (p, m) in rec.roster.iter().zip(&rec.members) {
        match m.standing {
            Standing::Left | Standing::Lost => {
                if m.expected && !m.contributed {
                    departed.push(p.clone());
                }
            }
            _ => survivors.push(p.clone()),
        }
    }
    let lost_any = rec.tally.lost > 0;
    let first_lost = rec.tally.first_lost.map(|i| rec.roster[i].clone());
    let mut outcomes = Vec::new();
    for (p, m) in rec.roster.iter().zip(rec.members.iter_mut()) {
        if m.standing != Standing::Holder {
            continue;
        }
        let ok = m.ft || !lost_any;
        if !ok {
            m.standing = Standing::Done;
        }
        outcomes.push(Outcome {
            proc: p.clone(),
            call: m.call.take(),
            ok,
            report: m.ft && !departed.is_empty(),
            remote: m.remote,
        });
    }
    let aborted = outcomes.iter().filter(|o| !o.ok).count();
    rec.holders = rec
        .holders
        .saturating_sub(u32::try_from(aborted).unwrap_or(u32::MAX));
    if outcomes.iter().any(|o| o.ok) {
        rec.phase = Phase::Active;
        rec.constructed = Some(survivors.clone());
        rec.deadline = None;
    }
    if outcomes.iter().any(|o| o.ok) && rec.assign_ctxid && rec.ctxid.is_none() {
        let leader = rec.roster[0].clone();
        let id = super::next_ctxid(core, &leader);
        if let Some(rec) = core.groups.records.get_mut(name) {
            rec.ctxid = Some(id);
        }
    }
    let Some(rec) = core.groups.records.get_mut(name) else {
        return;
    };
    // A spanning construct's leading node proposes an id whether or not one is
    // asked: it is the group's only when a member asked.
    let ctxid = rec.ctxid.filter(|_| rec.assign_ctxid);
    let infos: Vec<(ProcKey, Vec<Info>)> = rec
        .roster
        .iter()
        .zip(rec.members.iter_mut())
        .filter(|(_, m)| m.standing == Standing::Holder && m.contributed && !m.remote)
        .map(|(p, m)| (p.clone(), std::mem::take(&mut m.info)))
        .filter(|(_, i)| !i.is_empty())
        .collect();
    for (p, info) in infos {
        core.store_group_info(&p, name, ctxid, info);
    }
    let source = server(core);
    for o in outcomes {
        if o.remote {
            // Its own node's server answers it and tells it.
            continue;
        }
        if o.ok {
            if o.report {
                for d in &departed {
                    raise_to(core, Status::GROUP_MEMBER_FAILED, &source, &o.proc, name, d);
                }
            }
            if let Some(pd) = o.call {
                construct_reply(core, pd, &survivors, ctxid);
            }
        } else {
            unindex(core, &o.proc, name);
            if let Some(fl) = &first_lost {
                raise_to(
                    core,
                    Status::GROUP_CONSTRUCT_ABORT,
                    &source,
                    &o.proc,
                    name,
                    fl,
                );
            }
            if let Some(pd) = o.call {
                core.reply_status(pd.conn, pd.tag, pd.cmd, Status::GROUP_CONSTRUCT_ABORT);
            }
        }
    }
}

/// The destruct of `name` completes on the survivors: each holder is done with
/// the group and gets `PMIX_SUCCESS`.
pub(super) fn finish_destruct(core: &mut Core, name: &str) {
    let Some(rec) = core.groups.records.get_mut(name) else {
        return;
    };
    let mut done = Vec::new();
    for (p, m) in rec.roster.iter().zip(rec.members.iter_mut()) {
        if m.standing == Standing::Holder {
            m.standing = Standing::Done;
            done.push((p.clone(), m.call.take()));
        }
    }
    rec.holders = 0;
    for (p, call) in done {
        unindex(core, &p, name);
        if let Some(pd) = call {
            core.reply_status(pd.conn, pd.tag, pd.cmd, Status::SUCCESS);
        }
    }
}

/// `p` is gone (lost, finalized, or of a removed namespace): it departs, as
/// lost, the groups it holds, and only those (the index names them). Its waiting
/// requests are dropped; members that asked `PMIX_GROUP_NOTIFY_TERMINATION` of a
/// constructed group get `PMIX_GROUP_MEMBER_FAILED`; collectives in flight
/// complete or abort. Returns how many records it looked at.
pub(super) fn depart(core: &mut Core, p: &ProcKey) -> usize {
    core.groups.invitations.retain(|i| i.leader != *p);
    let Some(names) = core.groups.by_proc.remove(p) else {
        return 0;
    };
    let mut visited = 0;
    let source = server(core);
    for name in &names {
        let Some(rec) = core.groups.records.get_mut(name) else {
            continue;
        };
        visited += 1;
        let Some(i) = rec.index_of(p) else {
            continue;
        };
        if rec.members[i].standing != Standing::Holder {
            continue;
        }
        // Its socket is gone: nobody to answer.
        let _ = rec.depart(i, true);
        let notify: Vec<ProcKey> = if rec.notterm && rec.phase != Phase::Constructing {
            rec.roster
                .iter()
                .zip(&rec.members)
                .filter(|(_, m)| m.standing == Standing::Holder && m.notterm)
                .map(|(q, _)| q.clone())
                .collect()
        } else {
            Vec::new()
        };
        for q in &notify {
            raise_to(core, Status::GROUP_MEMBER_FAILED, &source, q, name, p);
        }
        settle(core, name);
    }
    core.fences_changed();
    visited
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
