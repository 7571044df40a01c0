//! Collectives over some ranks, and events, across nodes whose host runs collectives
//! over whole namespaces only and carries no events
//! ([`Provides::relays`](super::Provides::relays), docs/serving.md §4.1: Slurm
//! 22.05's plugin).
//!
//! Slurm's `fence_nb` completes over a list of ranks only when that list is a whole
//! namespace: over a list of ranks its ring never completes and its tree completes
//! each node alone, with its own data (measured with OpenPMIx's server too); and its
//! module has no `notify_event`. Both work over a namespace all of whose nodes take
//! part. So each namespace that spans nodes gets a **channel**: one collective after
//! another over the whole namespace, which every node's server joins on its own (no
//! client is involved), each round carrying what each node has to tell the others.
//! Its identity for the host is the namespace named twice (`[ns:*, ns:*]`): a
//! collective of its own, apart from the clients' fences over the whole namespace
//! (`[ns:*]`).
//!
//! - A fence the core hands the host over some ranks (a client's fence over ranks or
//!   a group id, a group's construct or destruct) becomes a **virtual collective**:
//!   this node's part goes out on the channel under a key every node derives alike
//!   (the ranks, sorted, and how many collectives over them this node opened
//!   before); the collective completes here when every node holding one of the ranks
//!   sent its part, the parts concatenated as a host concatenates them (our blobs
//!   are self-delimiting), through the same [`Core::host_answer`] path a host's answer
//!   takes. Parts that come before this node opened the collective wait for it.
//! - An event the core hands the host goes out on the channel; every other node
//!   raises it as a host-injected one ([`Core::raise_event`]).
//!
//! - A fence over the whole namespace goes to the host as it is, but collecting and
//!   with this node's mark as data: Slurm runs a fence without data as a tree that
//!   does not wait for the other nodes, and one with data as its ring, which does.
//! - A direct-modex answer given after this node relayed an event names the round
//!   that carries the event ([`AFTER`]); the asking node takes it once that round
//!   completed there, so a process's event comes before its data.
//! - Slurm ends a node's server with the node's last process, after which no round
//!   completes: a node whose processes of the namespace are all done says so
//!   ([`DONE`]) and holds their FINALIZE answers until every node has.
//!
//! **Rounds.** A round starts as soon as this node has something to send, no round
//! is in flight and [`GAP`] passed since the last (a node that finished a round
//! never presses the next on one still finishing it), else after an idle delay (20 ms, doubled after each round in
//! which no node sent anything, up to 200 ms): a round completes when every node
//! joined, so a part waits at most one idle delay of the slowest node. A round's data
//! is never empty (Slurm picks its algorithm by whether there is data; every node
//! must pick the same): it starts with this node's mark. A failed round fails every
//! virtual collective of the namespace with its status, and the channel stops.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use pmix_wire::modex::ModexEntry;
use pmix_wire::{ByteObject, Info, InfoFlags, Kval, Proc, Rank, Status, Value};

use super::namespace::RankState;
use super::{ConnId, Core, Output, Upcall};
use pmix_wire::Command;
use pmix_wire::keys;

/// A part's key.
const KEY: &str = keys::RS_RELAY_KEY;
/// A part's bytes.
const DATA: &str = keys::RS_RELAY_DATA;
/// An event's code (the entry's proc is its source).
const EVENT: &str = keys::RS_RELAY_EVENT;
/// An event's range.
const RANGE: &str = keys::RS_RELAY_RANGE;
/// A direct-modex answer's round: the one that carries every event the answering
/// node relayed before it answered (module docs).
const AFTER: &str = keys::RS_RELAY_AFTER;
/// Every local process of the namespace on the sending node finalized or is gone.
const DONE: &str = keys::RS_RELAY_DONE;
/// The idle delay after a round that carried something.
const FIRST_DELAY: Duration = Duration::from_millis(20);
/// The longest idle delay.
const MAX_DELAY: Duration = Duration::from_millis(200);
/// The least time between two rounds.
const GAP: Duration = Duration::from_millis(5);

/// The relay's state (module docs).
#[derive(Debug, Default)]
pub(crate) struct Relay {
    /// Per namespace that spans nodes with this one among them.
    channels: HashMap<String, Channel>,
    /// Virtual collectives not complete yet, by the id the core waits on.
    waiting: HashMap<u64, Waiting>,
    /// How many virtual collectives over each list of ranks this node opened.
    opened: HashMap<String, u64>,
    /// Parts that came before this node opened their collective, by key and node.
    early: HashMap<String, BTreeMap<u32, Vec<u8>>>,
    /// The time of the last tick.
    now: Option<Instant>,
}

#[derive(Debug)]
struct Channel {
    /// This node's place among the namespace's nodes.
    this_node: u32,
    /// The round in flight (the host's fence id).
    round: Option<u64>,
    /// What goes in the next round.
    queue: Vec<ModexEntry>,
    /// When the next idle round starts (`None`: at once, or a round is in flight).
    next_at: Option<Instant>,
    /// Rounds in a row that carried nothing.
    idle: u32,
    /// When the last round completed.
    last_done: Option<Instant>,
    /// Every node holding one of the namespace's ranks.
    nodes: BTreeSet<u32>,
    /// The nodes that said every local process of theirs is done ([`DONE`]).
    done: BTreeSet<u32>,
    /// Whether this node said so.
    sent_done: bool,
    /// FINALIZEs answered once every node is done (module docs).
    held: Vec<(ConnId, u32)>,
    /// Rounds started.
    started: u64,
    /// Rounds completed.
    completed: u64,
    /// The round that carries the last event queued here (0: none).
    event_round: u64,
    /// Direct-modex answers held until round `.0` completes: (round, id, status, data).
    modex: Vec<(u64, u64, Status, Vec<u8>)>,
}

#[derive(Debug)]
struct Waiting {
    nspace: String,
    key: String,
    /// The nodes holding one of its ranks.
    nodes: BTreeSet<u32>,
    parts: BTreeMap<u32, Vec<u8>>,
}

impl Relay {
    /// When [`tick`] must run next.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.channels
            .values()
            .filter(|c| c.round.is_none())
            .filter_map(|c| c.next_at)
            .min()
    }
}

/// A namespace was registered: with the relay on, and when it spans nodes with this
/// one among them, its channel starts.
pub(crate) fn namespace_added(core: &mut Core, nspace: &str) {
    if !core.cfg.provides.relays() {
        return;
    }
    let Some(map) = node_map(core, nspace) else {
        return;
    };
    let (Some(this_node), true) = (map.this_node, map.nodes > 1) else {
        return;
    };
    let nodes: BTreeSet<u32> = map
        .node_of
        .iter()
        .copied()
        .filter(|&n| n != u32::MAX)
        .collect();
    core.relay.channels.insert(
        nspace.to_string(),
        Channel {
            this_node,
            round: None,
            queue: Vec::new(),
            next_at: None,
            idle: 0,
            last_done: None,
            nodes,
            done: BTreeSet::new(),
            sent_done: false,
            held: Vec::new(),
            started: 0,
            completed: 0,
            event_round: 0,
            modex: Vec::new(),
        },
    );
    start_round(core, nspace);
}

/// A namespace was removed: its channel stops (a round in flight is forgotten).
pub(crate) fn namespace_removed(core: &mut Core, nspace: &str) {
    core.relay.channels.remove(nspace);
}

/// `out`, unless the relay carries it instead (module docs): `None` then.
pub(crate) fn divert(core: &mut Core, out: Output) -> Option<Output> {
    match out {
        Output::Host(Upcall::Fence {
            id,
            procs,
            collect,
            mut data,
        }) => {
            let ns = procs.first().map(|p| p.0.clone()).unwrap_or_default();
            let whole = procs.iter().all(|p| p.1 == Rank::WILDCARD.0);
            let one_ns = procs.iter().all(|p| p.0 == ns);
            let this_node = core.relay.channels.get(&ns).map(|c| c.this_node);
            match this_node {
                Some(node) if one_ns && whole => {
                    // Slurm 22.05 runs a fence without data to collect as a tree
                    // that does not wait for the other nodes (measured, with
                    // OpenPMIx's server too): a fence over the namespace goes with
                    // data, a mark of this node, so that it runs as its ring, which
                    // does.
                    data.extend(mark(&ns, node));
                    Some(Output::Host(Upcall::Fence {
                        id,
                        procs,
                        collect: true,
                        data,
                    }))
                }
                Some(_) if one_ns => {
                    open(core, id, &ns, procs, data);
                    None
                }
                _ => Some(Output::Host(Upcall::Fence {
                    id,
                    procs,
                    collect,
                    data,
                })),
            }
        }
        Output::Host(Upcall::Notify {
            code,
            source,
            range,
            info,
        }) if core.relay.channels.contains_key(&source.0) => {
            let ns = source.0.clone();
            let mut kvals = vec![
                Kval::new(EVENT, Value::Int(code)),
                Kval::new(RANGE, Value::Uint8(range)),
            ];
            kvals.extend(info.into_iter().map(|i| Kval {
                key: i.key,
                value: i.value,
            }));
            let entry = ModexEntry {
                proc: Proc::new(source.0.as_str(), source.1),
                kvals: Some(kvals),
                contribution: None,
                group: None,
            };
            if let Some(c) = core.relay.channels.get_mut(&ns) {
                c.queue.push(entry);
                c.event_round = c.started + 1;
            }
            wake(core, &ns);
            None
        }
        Output::DmodexAnswer {
            id,
            status,
            mut data,
        } => {
            // Whoever reads this answer reads it after the events this node relayed
            // before it (a process's event, then its data: as a host that carries
            // both on one path keeps them).
            let ns = pmix_wire::modex::decode_all(&data, core.cfg.limits)
                .ok()
                .and_then(|e| {
                    e.first()
                        .and_then(|e| e.proc.nspace.as_str().map(str::to_string))
                });
            if let Some(c) = ns.as_deref().and_then(|n| core.relay.channels.get(n))
                && c.event_round > 0
                && status == Status::SUCCESS
            {
                let entry = ModexEntry {
                    proc: Proc::new(ns.as_deref().unwrap_or_default(), c.this_node),
                    kvals: Some(vec![Kval::new(AFTER, Value::Uint64(c.event_round))]),
                    contribution: None,
                    group: None,
                };
                data.extend(pmix_wire::modex::encode(&[entry]).unwrap_or_default());
            }
            Some(Output::DmodexAnswer { id, status, data })
        }
        other => Some(other),
    }
}

/// Opens the virtual collective `id` over `procs` of `nspace`, this node's part
/// `data`.
fn open(core: &mut Core, id: u64, nspace: &str, procs: Vec<(String, u32)>, data: Vec<u8>) {
    let Some(map) = node_map(core, nspace) else {
        return;
    };
    let nodes: BTreeSet<u32> = procs
        .iter()
        .filter_map(|p| map.node_of.get(p.1 as usize).copied())
        .filter(|&n| n != u32::MAX)
        .collect();
    let mut ranks: Vec<u32> = procs.iter().map(|p| p.1).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let list = ranks
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let n = core.relay.opened.entry(list.clone()).or_insert(0);
    *n += 1;
    let key = format!("{list}#{n}");
    let Some(this_node) = core.relay.channels.get(nspace).map(|c| c.this_node) else {
        return;
    };
    let mut parts = core.relay.early.remove(&key).unwrap_or_default();
    parts.insert(this_node, data.clone());
    core.relay.waiting.insert(
        id,
        Waiting {
            nspace: nspace.to_string(),
            key: key.clone(),
            nodes,
            parts,
        },
    );
    let entry = ModexEntry {
        proc: Proc::new(nspace, this_node),
        kvals: Some(vec![
            Kval::new(KEY, key.as_str()),
            Kval::new(DATA, ByteObject(data)),
        ]),
        contribution: None,
        group: None,
    };
    if let Some(c) = core.relay.channels.get_mut(nspace) {
        c.queue.push(entry);
    }
    complete_ready(core, nspace);
    wake(core, nspace);
}

/// `nspace`'s channel has something to send: its next round starts as soon as one
/// may (no round in flight, and [`GAP`] after the last).
fn wake(core: &mut Core, nspace: &str) {
    let now = core.relay.now;
    let Some(c) = core.relay.channels.get_mut(nspace) else {
        return;
    };
    if c.round.is_some() {
        return;
    }
    match (c.last_done.map(|t| t + GAP), now) {
        (Some(earliest), Some(now)) if earliest > now => {
            c.next_at = Some(c.next_at.map_or(earliest, |t| t.min(earliest)));
        }
        _ => start_round(core, nspace),
    }
}

/// `nspace`'s node map, when it has one.
fn node_map<'a>(core: &'a Core, nspace: &str) -> Option<&'a super::namespace::NodeMap> {
    core.namespaces.get(nspace)?.node_map.as_ref()
}

/// A modex entry that carries nothing: `node`'s mark, which makes data non-empty.
fn mark(nspace: &str, node: u32) -> Vec<u8> {
    let entry = ModexEntry {
        proc: Proc::new(nspace, node),
        kvals: None,
        contribution: None,
        group: None,
    };
    pmix_wire::modex::encode(std::slice::from_ref(&entry)).unwrap_or_default()
}

/// Starts a round of `nspace`'s channel unless one is in flight.
fn start_round(core: &mut Core, nspace: &str) {
    let id = core.next_host_id();
    let Some(c) = core.relay.channels.get_mut(nspace) else {
        return;
    };
    if c.round.is_some() {
        return;
    }
    let mut data = mark(nspace, c.this_node);
    if !c.queue.is_empty() {
        data.extend(pmix_wire::modex::encode(&c.queue).unwrap_or_default());
        c.queue.clear();
    }
    c.round = Some(id);
    c.started += 1;
    c.next_at = None;
    core.out.push_back(Output::Host(Upcall::Fence {
        id,
        procs: vec![
            (nspace.to_string(), Rank::WILDCARD.0),
            (nspace.to_string(), Rank::WILDCARD.0),
        ],
        // Slurm's ring: its tree completes a round with one node's data only.
        collect: true,
        data,
    }));
}

/// The host's answer to fence `id`, if it is a round of a channel; `false`
/// otherwise.
pub(crate) fn round_done(core: &mut Core, id: u64, status: Status, data: &[u8]) -> bool {
    let Some(nspace) = core
        .relay
        .channels
        .iter()
        .find(|(_, c)| c.round == Some(id))
        .map(|(n, _)| n.clone())
    else {
        return false;
    };
    let entries = match core.host_entries(status, data) {
        Ok(e) => e,
        Err(s) => {
            fail(core, &nspace, s);
            return true;
        }
    };
    let this_node = core.relay.channels.get(&nspace).map_or(0, |c| c.this_node);
    let mut carried = false;
    let mut events = Vec::new();
    for e in entries {
        let Some(kvals) = e.kvals else {
            continue;
        };
        carried = true;
        let find = |k: &str| kvals.iter().find(|kv| kv.key == k).map(|kv| &kv.value);
        if find(DONE).is_some() {
            if let Some(c) = core.relay.channels.get_mut(&nspace) {
                c.done.insert(e.proc.rank.0);
            }
            continue;
        }
        if let Some(code) = find(EVENT).and_then(Value::as_i64) {
            let range = find(RANGE).and_then(Value::as_u64).unwrap_or(0);
            let info: Vec<Info> = kvals
                .iter()
                .filter(|kv| kv.key != EVENT && kv.key != RANGE)
                .map(|kv| Info {
                    key: kv.key.clone(),
                    flags: InfoFlags::default(),
                    value: kv.value.clone(),
                })
                .collect();
            let source = (e.proc.nspace.to_string(), e.proc.rank.0);
            events.push((code, source, info, range));
            continue;
        }
        let node = e.proc.rank.0;
        let (Some(key), Some(Value::ByteObject(bytes))) =
            (find(KEY).and_then(Value::as_str), find(DATA))
        else {
            continue;
        };
        if node == this_node {
            continue;
        }
        match core
            .relay
            .waiting
            .values_mut()
            .find(|w| w.nspace == nspace && w.key == key)
        {
            Some(w) => {
                w.parts.insert(node, bytes.0.clone());
            }
            None => {
                core.relay
                    .early
                    .entry(key.to_string())
                    .or_default()
                    .insert(node, bytes.0.clone());
            }
        }
    }
    if let Some(c) = core.relay.channels.get_mut(&nspace) {
        c.round = None;
        c.completed += 1;
        c.last_done = core.relay.now;
        c.idle = if carried { 0 } else { c.idle.saturating_add(1) };
    }
    for (code, source, info, range) in events {
        // As the core handed it over (a CUSTOM range's procs in `pmix.evrange`):
        // the relay is no host, nothing was converted for one.
        let range = pmix_wire::DataRange(u8::try_from(range).unwrap_or(0));
        core.raise_event(
            i32::try_from(code).unwrap_or(Status::ERROR.0),
            Some((source.0.as_str(), source.1)),
            info,
            range,
        );
    }
    complete_ready(core, &nspace);
    release_modex(core, &nspace);
    if core
        .relay
        .channels
        .get(&nspace)
        .is_some_and(|c| c.nodes.is_subset(&c.done))
    {
        // Every node is done: the last round ran; FINALIZEs go out.
        close(core, &nspace, Status::ERR_UNREACH);
        return true;
    }
    let now = core.relay.now;
    let Some(c) = core.relay.channels.get_mut(&nspace) else {
        return true;
    };
    // Never back to back: a round waits at least GAP after the last.
    let delay = if carried || !c.queue.is_empty() {
        GAP
    } else {
        FIRST_DELAY
            .saturating_mul(1 << c.idle.min(8))
            .min(MAX_DELAY)
    };
    match now {
        Some(now) => c.next_at = Some(now + delay),
        None => start_round(core, &nspace),
    }
    true
}

/// Completes every virtual collective of `nspace` that has every node's part.
fn complete_ready(core: &mut Core, nspace: &str) {
    let ready: Vec<u64> = core
        .relay
        .waiting
        .iter()
        .filter(|(_, w)| w.nspace == nspace && w.nodes.iter().all(|n| w.parts.contains_key(n)))
        .map(|(id, _)| *id)
        .collect();
    for id in ready {
        let Some(w) = core.relay.waiting.remove(&id) else {
            continue;
        };
        let data: Vec<u8> = w.parts.into_values().flatten().collect();
        core.fence_answered(id, Status::SUCCESS, &data);
    }
}

/// `nspace`'s channel failed with `status`: its virtual collectives fail with it and
/// it stops.
fn fail(core: &mut Core, nspace: &str, status: Status) {
    close(core, nspace, status);
}

/// Stops `nspace`'s channel: its virtual collectives fail with `status`, its held
/// FINALIZEs are answered.
fn close(core: &mut Core, nspace: &str, status: Status) {
    let (held, modex) = core
        .relay
        .channels
        .remove(nspace)
        .map(|c| (c.held, c.modex))
        .unwrap_or_default();
    for (_, id, st, data) in modex {
        super::store::modex_answered(core, id, st, &data);
    }
    for (conn, tag) in held {
        if core.conns.contains_key(&conn) {
            core.reply_status(conn, tag, Command::Finalize, Status::SUCCESS);
        }
    }
    let ids: Vec<u64> = core
        .relay
        .waiting
        .iter()
        .filter(|(_, w)| w.nspace == nspace)
        .map(|(id, _)| *id)
        .collect();
    for id in ids {
        core.relay.waiting.remove(&id);
        core.fence_answered(id, status, &[]);
    }
}

/// Notes the time (what idle delays count from).
pub(crate) fn clock(core: &mut Core, now: Instant) {
    core.relay.now = Some(now);
}

/// Idle rounds whose delay passed start.
pub(crate) fn tick(core: &mut Core, now: Instant) {
    core.relay.now = Some(now);
    let due: Vec<String> = core
        .relay
        .channels
        .iter()
        .filter(|(_, c)| c.round.is_none() && c.next_at.is_some_and(|t| t <= now))
        .map(|(n, _)| n.clone())
        .collect();
    for n in due {
        start_round(core, &n);
    }
}

/// A local process of `nspace` finalized or is gone: once every local one is, this
/// node tells the others ([`DONE`]).
pub(crate) fn local_departed(core: &mut Core, nspace: &str) {
    let all = core.namespaces.get(nspace).is_some_and(|ns| {
        ns.states
            .values()
            .all(|s| matches!(s, RankState::Finalized | RankState::Lost))
    });
    let Some(c) = core.relay.channels.get_mut(nspace) else {
        return;
    };
    if !all || c.sent_done {
        return;
    }
    c.sent_done = true;
    c.queue.push(ModexEntry {
        proc: Proc::new(nspace, c.this_node),
        kvals: Some(vec![Kval::new(DONE, Value::Bool(true))]),
        contribution: None,
        group: None,
    });
    wake(core, nspace);
}

/// Holds the answer to `conn`'s FINALIZE (`tag`) of `nspace` until every node is
/// done, when `nspace` has a channel: `true` then.
pub(crate) fn hold_finalize(core: &mut Core, nspace: &str, conn: ConnId, tag: u32) -> bool {
    match core.relay.channels.get_mut(nspace) {
        Some(c) => {
            c.held.push((conn, tag));
            true
        }
        None => false,
    }
}

/// The host's answer to direct modex `id`: `Some` of it to take now (without the
/// relay's mark), `None` when it waits for the round its mark names (module docs).
pub(crate) fn modex_arrived(
    core: &mut Core,
    id: u64,
    status: Status,
    data: &[u8],
) -> Option<Vec<u8>> {
    if !core.cfg.provides.relays() || status != Status::SUCCESS {
        return Some(data.to_vec());
    }
    let Ok(mut entries) = pmix_wire::modex::decode_all(data, core.cfg.limits) else {
        return Some(data.to_vec());
    };
    let Some(at) = entries.iter().position(|e| {
        e.kvals
            .as_ref()
            .is_some_and(|k| k.iter().any(|kv| kv.key == AFTER))
    }) else {
        return Some(data.to_vec());
    };
    let mark = entries.remove(at);
    let round = mark
        .kvals
        .iter()
        .flatten()
        .find(|kv| kv.key == AFTER)
        .and_then(|kv| kv.value.as_u64())
        .unwrap_or(0);
    let rest = pmix_wire::modex::encode(&entries).unwrap_or_default();
    let ns = mark.proc.nspace.as_str().unwrap_or_default().to_string();
    match core.relay.channels.get_mut(&ns) {
        Some(c) if c.completed < round => {
            c.modex.push((round, id, status, rest));
            wake(core, &ns);
            None
        }
        _ => Some(rest),
    }
}

/// Hands the core the direct-modex answers whose round completed.
fn release_modex(core: &mut Core, nspace: &str) {
    let Some(c) = core.relay.channels.get_mut(nspace) else {
        return;
    };
    let done = c.completed;
    let (ready, keep): (Vec<_>, Vec<_>) = c.modex.drain(..).partition(|m| m.0 <= done);
    c.modex = keep;
    for (_, id, status, data) in ready {
        super::store::modex_answered(core, id, status, &data);
    }
}
