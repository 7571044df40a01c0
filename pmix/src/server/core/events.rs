//! Event registration, notification and delivery (docs/wire.md §6.7, §6.8, §7).
//!
//! REGEVENTS records the codes (none: a default handler) and an affected-proc
//! filter (`pmix.evproc` / `pmix.evaffected`), answers `STATUS 0`, then replays
//! the cached events the new registration matches (without the trailing range, as
//! OpenPMIx does). DEREGEVENTS removes codes (`INT32_MIN`: the default handler)
//! and is never answered.
//!
//! NOTIFY from a client: `PMIX_ERR_OUT_OF_RESOURCE` when its infos take more than
//! [`super::CoreConfig::max_event_bytes`] (each peer would get its own copy), else
//! `STATUS 0` to the sender; the event, with
//! `pmix.srvr.internal.notify` = true appended (one that already carries it is
//! dropped: no echo loops), goes on tag 0 to every connected, not finalized peer
//! except the source whose registrations match (a specific code, or a default
//! handler unless `pmix.evnondef`) and that is in range: PROC_LOCAL reaches
//! nobody, CUSTOM the procs of `pmix.evrange` (a PROC or a DATA_ARRAY of PROC; a
//! WILDCARD rank covers its namespace), NAMESPACE the source's namespace, every
//! other range (LOCAL, SESSION, GLOBAL, RM, UNDEF) every local peer. It is cached
//! for late registrants unless `pmix.evnocache` (at most
//! [`super::CoreConfig::max_cached_events`] events and
//! [`super::CoreConfig::max_cached_event_bytes`] bytes, the oldest dropped first; a
//! source's events are purged when it finalizes or its connection closes). An event
//! whose range is a closed set of this node's processes (CUSTOM naming ranks of
//! namespaces registered here, or NAMESPACE) is dropped once each of them has had it
//! or is gone: its range has been served, nobody is left to replay it to.
//!
//! A rank that calls ABORT, or is lost, raises `PMIX_ERR_PROC_ABORTED` (-7), once,
//! from the server
//! (`CoreConfig::nspace`/`rank`) with `pmix.evproc` = the lost rank and, when the
//! launcher reported it, `pmix.exit.code`, to every peer with a matching
//! registration, and it is cached.

use std::collections::VecDeque;

use pmix_wire::msg::{DeregEvents, Notify, RegEvents};
use pmix_wire::{Command, DataRange, Event, Info, Proc, Rank, Status, Value};

use super::namespace::RankState;
use super::util::info_size;
use super::{ConnId, Core, ProcKey, info_flag, info_value};
use pmix_wire::keys;

/// `PMIX_ERR_PROC_ABORTED`.
pub const PROC_ABORTED: Status = Status::ERR_PROC_ABORTED;

/// The key OpenPMIx's server adds to every event it relays.
const INTERNAL_KEY: &str = keys::SERVER_INTERNAL_NOTIFY;

/// One REGEVENTS of a peer.
#[derive(Clone, Debug)]
pub(crate) struct Registration {
    codes: Vec<i32>,
    default: bool,
    /// Only events affecting one of these procs (None: any event).
    affected: Option<Vec<ProcKey>>,
}

#[derive(Debug)]
struct Cached {
    code: Status,
    source: ProcKey,
    info: Vec<Info>,
    range: DataRange,
    delivered: Vec<ProcKey>,
    /// The processes of its range still to serve, when its range is a closed set
    /// ([`closed_range`]); `None`: open to processes yet to come.
    waiting: Option<Vec<ProcKey>>,
    /// About its size packed ([`info_size`]) and its lists of processes.
    bytes: usize,
}

/// What a process named in a cached event's lists costs, about.
fn key_bytes(p: &ProcKey) -> usize {
    p.0.len() + 32
}

/// The event cache.
#[derive(Debug)]
pub(crate) struct Events {
    cache: VecDeque<Cached>,
    max: usize,
    max_bytes: usize,
    /// The sum of the cached events' sizes.
    bytes: usize,
}

impl Events {
    pub(crate) fn new(max: usize, max_bytes: usize) -> Events {
        Events {
            cache: VecDeque::new(),
            max,
            max_bytes,
            bytes: 0,
        }
    }

    /// The cached events and their bytes.
    pub(crate) fn held(&self) -> (usize, usize) {
        (self.cache.len(), self.bytes)
    }

    /// `proc` left (finalized, or its connection closed): the events it raised
    /// are dropped, and it is served in the ranges that wait for it (an event none
    /// is left to serve is dropped).
    pub(crate) fn proc_gone(&mut self, proc: &ProcKey) {
        for c in &mut self.cache {
            if let Some(w) = &mut c.waiting {
                w.retain(|p| p != proc);
            }
        }
        self.retain(|c| &c.source != proc && c.waiting.as_ref().is_none_or(|w| !w.is_empty()));
    }

    /// Drops the cached events raised by a rank of `nspace`, and serves its ranks
    /// in the ranges that wait for them.
    pub(crate) fn purge_nspace(&mut self, nspace: &str) {
        for c in &mut self.cache {
            if let Some(w) = &mut c.waiting {
                w.retain(|p| p.0 != nspace);
            }
        }
        self.retain(|c| c.source.0 != nspace && c.waiting.as_ref().is_none_or(|w| !w.is_empty()));
    }

    fn retain(&mut self, keep: impl Fn(&Cached) -> bool) {
        let mut bytes = 0;
        self.cache.retain(|c| {
            let k = keep(c);
            if k {
                bytes += c.bytes;
            }
            k
        });
        self.bytes = bytes;
    }

    fn push(&mut self, c: Cached) {
        if self.max == 0 || c.bytes > self.max_bytes {
            return;
        }
        while self.cache.len() >= self.max || self.bytes + c.bytes > self.max_bytes {
            match self.cache.pop_front() {
                Some(old) => self.bytes -= old.bytes,
                None => break,
            }
        }
        self.bytes += c.bytes;
        self.cache.push_back(c);
    }
}

fn proc_key(p: &Proc) -> Option<ProcKey> {
    Some((p.nspace.as_str()?.to_string(), p.rank.0))
}

/// The procs of a PROC value or a DATA_ARRAY of PROC.
fn procs_of(v: &Value) -> Vec<ProcKey> {
    match v {
        Value::Proc(p) => proc_key(p).into_iter().collect(),
        Value::DataArray(a) => a
            .items
            .iter()
            .filter_map(|i| match i {
                Value::Proc(p) => proc_key(p),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn covers(list: &[ProcKey], p: &ProcKey) -> bool {
    list.iter()
        .any(|q| q.0 == p.0 && (q.1 == p.1 || q.1 == Rank::WILDCARD.0))
}

/// The procs an event says it affects (`pmix.evproc`, `pmix.evaffected`).
fn affected(info: &[Info]) -> Vec<ProcKey> {
    let mut v: Vec<ProcKey> = info_value(info, keys::EVENT_AFFECTED_PROC)
        .map(procs_of)
        .unwrap_or_default();
    v.extend(
        info_value(info, keys::EVENT_AFFECTED_PROCS)
            .map(procs_of)
            .unwrap_or_default(),
    );
    v
}

fn reg_matches(r: &Registration, code: i32, nondef: bool, affected: &[ProcKey]) -> bool {
    if !(r.codes.contains(&code) || (r.default && !nondef)) {
        return false;
    }
    match &r.affected {
        None => true,
        Some(filter) => affected.iter().any(|a| {
            filter.iter().any(|f| {
                f.0 == a.0 && (f.1 == a.1 || f.1 == Rank::WILDCARD.0 || a.1 == Rank::WILDCARD.0)
            })
        }),
    }
}

fn in_range(range: DataRange, source: &ProcKey, target: &ProcKey, info: &[Info]) -> bool {
    match range {
        DataRange::PROC_LOCAL => false,
        DataRange::CUSTOM => info_value(info, keys::EVENT_CUSTOM_RANGE)
            .map(procs_of)
            .is_some_and(|l| covers(&l, target)),
        DataRange::NAMESPACE => source.0 == target.0,
        _ => true,
    }
}

/// The connections a CUSTOM range can reach, from its procs rather than by looking
/// at every connection (the groups tell each member apart: a scan per event
/// would make telling n members quadratic): the connection of each listed rank
/// of a namespace registered here (for a non-finalized peer, a rank's connection
/// is the one its state names). `None` for another range, or a list naming a
/// WILDCARD rank or another namespace: then every connection is looked at.
fn custom_conns(core: &Core, range: DataRange, info: &[Info]) -> Option<Vec<ConnId>> {
    if range != DataRange::CUSTOM {
        return None;
    }
    let Some(list) = info_value(info, keys::EVENT_CUSTOM_RANGE).map(procs_of) else {
        return Some(Vec::new());
    };
    let mut out = Vec::with_capacity(list.len());
    for (nspace, rank) in &list {
        let ns = core.namespaces.get(nspace)?;
        if *rank == Rank::WILDCARD.0 {
            return None;
        }
        if let Some(RankState::Connected(c)) = ns.states.get(rank) {
            out.push(*c);
        }
    }
    Some(out)
}

/// Sends `ev` on tag 0 to `conn`.
fn send_event(core: &mut Core, conn: ConnId, ev: &Event) {
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    let payload = ev.encode(&peer.codec).ok();
    core.send_payload(conn, pmix_wire::frame::TAG_EVENT, payload);
}

/// REGEVENTS.
pub(super) fn register(core: &mut Core, conn: ConnId, tag: u32, r: RegEvents) {
    let filter = affected(&r.info);
    let reg = Registration {
        default: r.codes.is_empty(),
        codes: r.codes.iter().map(|s| s.0).collect(),
        affected: (!filter.is_empty()).then_some(filter),
    };
    let max = core.cfg.max_registrations;
    let Some(peer) = core.conns.get_mut(&conn) else {
        return;
    };
    if peer.regs.len() >= max {
        return core.reply_status(conn, tag, Command::RegEvents, super::ERR_OUT_OF_RESOURCE);
    }
    peer.regs.push(reg.clone());
    let me = peer.proc.clone();
    core.reply_status(conn, tag, Command::RegEvents, Status::SUCCESS);
    // Replay the cached events this registration matches.
    let mut replay = Vec::new();
    for c in core.events.cache.iter_mut() {
        let nondef = info_flag(&c.info, keys::EVENT_NON_DEFAULT);
        if c.source != me
            && !c.delivered.contains(&me)
            && in_range(c.range, &c.source, &me, &c.info)
            && reg_matches(&reg, c.code.0, nondef, &affected(&c.info))
        {
            c.delivered.push(me.clone());
            c.bytes += key_bytes(&me);
            if let Some(w) = &mut c.waiting {
                w.retain(|p| p != &me);
            }
            replay.push(Event {
                status: c.code,
                source: Proc::new(c.source.0.as_str(), c.source.1),
                info: c.info.clone(),
                range: None,
            });
        }
    }
    if !replay.is_empty() {
        core.events
            .retain(|c| c.waiting.as_ref().is_none_or(|w| !w.is_empty()));
    }
    for ev in replay {
        send_event(core, conn, &ev);
    }
}

/// DEREGEVENTS: never answered.
pub(super) fn deregister(core: &mut Core, conn: ConnId, d: DeregEvents) {
    let Some(peer) = core.conns.get_mut(&conn) else {
        return;
    };
    for code in d.codes {
        if code == DeregEvents::DEFAULT_HANDLER {
            peer.regs.iter_mut().for_each(|r| r.default = false);
        } else {
            peer.regs
                .iter_mut()
                .for_each(|r| r.codes.retain(|c| *c != code.0));
        }
    }
    peer.regs.retain(|r| r.default || !r.codes.is_empty());
}

/// Delivers an event to every matching peer in range but `except`, and caches it
/// unless `pmix.evnocache`.
pub(crate) fn raise(
    core: &mut Core,
    code: Status,
    source: &ProcKey,
    info: Vec<Info>,
    range: DataRange,
    except: Option<ConnId>,
) {
    let nondef = info_flag(&info, keys::EVENT_NON_DEFAULT);
    let aff = affected(&info);
    let wanted = |c: ConnId, p: &super::Peer| {
        Some(c) != except
            && !p.finalized
            && &p.proc != source
            && p.regs.iter().any(|r| reg_matches(r, code.0, nondef, &aff))
    };
    let mut conns: Vec<ConnId> = match custom_conns(core, range, &info) {
        Some(reach) => reach
            .into_iter()
            .filter(|c| core.conns.get(c).is_some_and(|p| wanted(*c, p)))
            .collect(),
        None => core
            .conns
            .iter()
            .filter(|(c, p)| wanted(**c, p) && in_range(range, source, &p.proc, &info))
            .map(|(c, _)| *c)
            .collect(),
    };
    conns.sort_unstable();
    conns.dedup();
    let ev = Event {
        status: code,
        source: Proc::new(source.0.as_str(), source.1),
        info,
        range: Some(range),
    };
    let mut delivered = Vec::new();
    for c in conns {
        if let Some(p) = core.conns.get(&c) {
            delivered.push(p.proc.clone());
        }
        send_event(core, c, &ev);
    }
    if range == DataRange::PROC_LOCAL || info_flag(&ev.info, keys::EVENT_DO_NOT_CACHE) {
        return;
    }
    let waiting = closed_range(core, range, source, &ev.info).map(|mut w| {
        w.retain(|p| !delivered.contains(p));
        w
    });
    if waiting.as_ref().is_some_and(Vec::is_empty) {
        // Served already.
        return;
    }
    let lists = delivered.iter().chain(waiting.iter().flatten());
    let bytes =
        ev.info.iter().map(info_size).sum::<usize>() + 64 + lists.map(key_bytes).sum::<usize>();
    core.events.push(Cached {
        bytes,
        code,
        source: source.clone(),
        info: ev.info,
        range,
        delivered,
        waiting,
    });
}

/// The processes of this node an event in `range` from `source` can reach, when
/// that set is closed: CUSTOM naming only namespaces registered here (a WILDCARD
/// rank: that namespace's local ranks), or NAMESPACE of a namespace registered here;
/// ranks gone (finalized or lost) and the source left out. `None` for any other
/// range, or one naming a namespace not registered here (its ranks may come yet).
fn closed_range(
    core: &Core,
    range: DataRange,
    source: &ProcKey,
    info: &[Info],
) -> Option<Vec<ProcKey>> {
    let named = match range {
        DataRange::CUSTOM => info_value(info, keys::EVENT_CUSTOM_RANGE).map(procs_of)?,
        DataRange::NAMESPACE => vec![(source.0.clone(), Rank::WILDCARD.0)],
        _ => return None,
    };
    let mut out = Vec::new();
    for (nspace, rank) in named {
        let ns = core.namespaces.get(&nspace)?;
        let alive = |st: &RankState| matches!(st, RankState::Waiting | RankState::Connected(_));
        if rank == Rank::WILDCARD.0 {
            out.extend(
                ns.states
                    .iter()
                    .filter(|(_, st)| alive(st))
                    .map(|(r, _)| (nspace.clone(), *r)),
            );
        } else if ns.states.get(&rank).is_some_and(alive) {
            out.push((nspace, rank));
        }
    }
    out.retain(|p| p != source);
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// NOTIFY from a client. Returns its source when the notification was raised (the
/// core then lets the groups see it: the end of a 4.2 invite records the group).
pub(super) fn notify(core: &mut Core, conn: ConnId, tag: u32, n: Notify) -> Option<ProcKey> {
    let source = core.conns.get(&conn)?.proc.clone();
    if n.info.iter().map(info_size).sum::<usize>() > core.cfg.max_event_bytes {
        // Each peer gets its own copy: one large event is many in memory.
        core.reply_status(conn, tag, Command::Notify, super::ERR_OUT_OF_RESOURCE);
        return None;
    }
    core.reply_status(conn, tag, Command::Notify, Status::SUCCESS);
    if info_value(&n.info, INTERNAL_KEY).is_some() {
        return None;
    }
    let beyond = matches!(
        n.range,
        DataRange::NAMESPACE
            | DataRange::SESSION
            | DataRange::GLOBAL
            | DataRange::RM
            | DataRange::CUSTOM
    );
    if core.cfg.provides.spans_nodes() && beyond {
        let mut info = n.info.clone();
        info.push(core.origin_mark());
        core.out
            .push_back(super::Output::Host(super::Upcall::Notify {
                code: n.status.0,
                source: source.clone(),
                range: n.range.0,
                info,
            }));
    }
    let mut info = n.info;
    info.push(Info::new(INTERNAL_KEY, true));
    raise(core, n.status, &source, info, n.range, Some(conn));
    Some(source)
}

/// `proc` aborted or was lost: `PMIX_ERR_PROC_ABORTED` to the registered handlers.
pub(super) fn proc_aborted(core: &mut Core, proc: &ProcKey, status: Option<i32>) {
    let server = (core.cfg.nspace.clone(), core.cfg.rank);
    let mut info = vec![Info::new(
        keys::EVENT_AFFECTED_PROC,
        Proc::new(proc.0.as_str(), proc.1),
    )];
    if let Some(s) = status {
        info.push(Info::new(keys::EXIT_CODE, Value::Int(s)));
    }
    raise(core, PROC_ABORTED, &server, info, DataRange::GLOBAL, None);
}
