//! The commit store and GETNB (docs/wire.md §6.4, §6.6).
//!
//! Each process's committed values are kept in two buckets, LOCAL (what local
//! peers see) and REMOTE (what other nodes would see); GLOBAL values come in both.
//! Commits are cumulative (each resends everything), so a commit upserts by key.
//!
//! GETNB of a local rank: the key in the scope visible to the requester (LOCAL, or
//! the one `pmix.scope` names; GLOBAL/UNDEF = both) → `STATUS 0` and one byte
//! object with all the target's visible values (plus its blob values for a
//! reserved key); the key only in the other bucket → `PMIX_ERR_NOT_FOUND`; not
//! there yet → held until a commit of the target brings it (then answered), until
//! the deadline (`pmix.timeout` seconds, else [`super::CoreConfig::get_timeout`];
//! `pmix.timeout` 0 = no deadline) → `PMIX_ERR_TIMEOUT`, or until the target is
//! gone → `PMIX_ERR_NOT_FOUND`; with `pmix.immediate` → `PMIX_ERR_NOT_FOUND` at
//! once. GETNB of rank WILDCARD: the job-level value (`pmix.hwlocxml2` only from
//! [`super::CoreConfig::hwloc_xml`]; `pmix.hwlocxml1` and `pmix.topo2` never, so
//! a client discovers its own topology) →
//! `STATUS 0` and one byte object under `PROC(nspace, WILDCARD)`, else
//! NOT_FOUND. A namespace this server does not hold: NOT_FOUND; a rank of another
//! node: hosted, from what a fence brought, else by direct modex
//! ([`super::HostCall::DirectModex`]); unhosted, NOT_FOUND.

use std::collections::HashMap;
use std::time::Instant;

use pmix_wire::modex::ModexEntry;
use pmix_wire::msg::{Commit, GetNb, GetNbReply, ProcData};
use pmix_wire::{Command, Kval, Proc, Rank, Reply, Scope, Status};

use super::util::{HeldList, HeldRequest};
use super::{ConnId, Core, HostCall, Output, ProcKey, info_deadline, info_flag, info_value};

/// Keys a server answers only from a topology it shares, which we do not.
const TOPOLOGY_KEYS: [&str; 3] = ["pmix.hwlocxml2", "pmix.hwlocxml1", "pmix.topo2"];

/// The committed values and the held gets.
#[derive(Debug, Default)]
pub(crate) struct Store {
    data: HashMap<ProcKey, Committed>,
    held: HeldList<HeldGet>,
    /// Direct modex requests made of the host: id → the remote process.
    asked: HashMap<u64, ProcKey>,
    /// The host's requests for a local process's data, held until it commits.
    host_waits: Vec<HostWait>,
}

#[derive(Debug)]
struct HostWait {
    id: u64,
    proc: ProcKey,
    deadline: Instant,
}

#[derive(Debug, Default)]
struct Committed {
    local: Vec<Kval>,
    remote: Vec<Kval>,
}

#[derive(Debug)]
struct HeldGet {
    conn: ConnId,
    tag: u32,
    target: ProcKey,
    key: Option<String>,
    scope: Option<u8>,
    deadline: Option<Instant>,
}

impl HeldRequest for HeldGet {
    type Key = ProcKey;

    fn key(&self) -> ProcKey {
        self.target.clone()
    }

    fn conn(&self) -> ConnId {
        self.conn
    }

    fn deadline(&self) -> Option<Instant> {
        self.deadline
    }
}

enum Answer {
    Data(Vec<Kval>),
    NotFound,
    Absent,
}

impl Store {
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let host = self.host_waits.iter().map(|w| w.deadline).min();
        [self.held.next_deadline(), host]
            .into_iter()
            .flatten()
            .min()
    }

    pub(crate) fn forget_conn(&mut self, conn: ConnId) {
        self.held.forget_conn(conn);
    }

    pub(crate) fn pending_of(&self, conn: ConnId) -> usize {
        self.held.pending_of(conn)
    }

    /// Drops what the ranks of `nspace` committed.
    pub(crate) fn forget_nspace(&mut self, nspace: &str) {
        self.data.retain(|p, _| p.0 != nspace);
    }
}

/// Adds `kvals` to `bucket`, replacing the values of keys it has (in time linear
/// in both: a peer's commit of many keys must not cost quadratic time).
fn upsert(bucket: &mut Vec<Kval>, kvals: &[Kval]) {
    let mut index: HashMap<Vec<u8>, usize> = bucket
        .iter()
        .enumerate()
        .map(|(i, k)| (k.key.as_bytes().to_vec(), i))
        .collect();
    for kv in kvals {
        match index.get(kv.key.as_bytes()) {
            Some(&i) => bucket[i].value = kv.value.clone(),
            None => {
                index.insert(kv.key.as_bytes().to_vec(), bucket.len());
                bucket.push(kv.clone());
            }
        }
    }
}

/// COMMIT: store the buckets, answer `STATUS 0`, release the gets they satisfy.
pub(super) fn commit(core: &mut Core, conn: ConnId, tag: u32, c: Commit, now: Instant) {
    let _ = now;
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    let proc = peer.proc.clone();
    let max = core.cfg.max_keys_per_proc;
    let entry = core.store.data.entry(proc.clone()).or_default();
    let (mut local, mut remote) = (entry.local.clone(), entry.remote.clone());
    for b in &c.buckets {
        match b.scope {
            Scope::REMOTE => upsert(&mut remote, &b.kvals),
            Scope::GLOBAL => {
                upsert(&mut local, &b.kvals);
                upsert(&mut remote, &b.kvals);
            }
            _ => upsert(&mut local, &b.kvals),
        }
    }
    if local.len() > max || remote.len() > max {
        return core.reply_status(conn, tag, Command::Commit, super::ERR_OUT_OF_RESOURCE);
    }
    (entry.local, entry.remote) = (local, remote);
    core.reply_status(conn, tag, Command::Commit, Status::SUCCESS);
    release(core, &proc, false);
    answer_host(core, &proc, Status::SUCCESS);
}

/// Answers the host's requests waiting for `proc`: its data after a commit
/// (`status` success), or `status`.
fn answer_host(core: &mut Core, proc: &ProcKey, status: Status) {
    if core.store.host_waits.is_empty() {
        return;
    }
    let (due, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut core.store.host_waits)
        .into_iter()
        .partition(|w| &w.proc == proc);
    core.store.host_waits = keep;
    for w in due {
        modex_answer(core, w.id, proc, status);
    }
}

/// [`HostCall::ModexAnswer`] `id`: `proc`'s remote data and job-info values when
/// `status` is success.
fn modex_answer(core: &mut Core, id: u64, proc: &ProcKey, status: Status) {
    let data = if status == Status::SUCCESS {
        let mut kvals = core.remote_data(proc);
        if let Some(blob) = core
            .namespaces
            .get(&proc.0)
            .and_then(|ns| ns.rank_kvals.get(&proc.1))
        {
            kvals.extend(blob.iter().cloned());
        }
        let entry = ModexEntry {
            proc: Proc::new(proc.0.as_str(), proc.1),
            kvals: Some(kvals),
            contribution: None,
        };
        match pmix_wire::modex::encode(&[entry]) {
            Ok(d) => d,
            Err(_) => return modex_answer(core, id, proc, Status::ERROR),
        }
    } else {
        Vec::new()
    };
    core.out.push_back(Output::Host(HostCall::ModexAnswer {
        id,
        status: status.0,
        data,
    }));
}

/// The host asks for local `proc`'s data on behalf of another node (module docs of
/// `Core::dmodex_request`).
pub(super) fn dmodex_request(core: &mut Core, id: u64, proc: ProcKey, now: Instant) {
    if !core.is_local(&proc) {
        return modex_answer(core, id, &proc, Status::ERR_NOT_FOUND);
    }
    if core.store.data.contains_key(&proc) {
        return modex_answer(core, id, &proc, Status::SUCCESS);
    }
    if core.departed(&proc) {
        return modex_answer(core, id, &proc, Status::ERR_NOT_FOUND);
    }
    let deadline = now + core.cfg.get_timeout;
    core.store.host_waits.push(HostWait { id, proc, deadline });
}

/// The host's answer to direct modex `id`: the remote process's data is stored and
/// the gets held for it answered (a key still missing: NOT_FOUND).
pub(super) fn host_modex_done(core: &mut Core, id: u64, status: Status, data: &[u8]) {
    let Some(target) = core.store.asked.remove(&id) else {
        return;
    };
    if status == Status::SUCCESS
        && let Ok(entries) = pmix_wire::modex::decode_all(data, core.cfg.limits)
    {
        for e in entries {
            let Some(ns) = e.proc.nspace.as_str() else {
                continue;
            };
            let proc = (ns.to_string(), e.proc.rank.0);
            if let (Some(kv), false) = (e.kvals, core.is_local(&proc)) {
                core.ingest(&proc, kv);
            }
        }
    }
    release(core, &target, true);
}

impl Core {
    /// What `proc` committed for remote readers (REMOTE and GLOBAL puts).
    pub(crate) fn remote_data(&self, proc: &ProcKey) -> Vec<Kval> {
        self.store
            .data
            .get(proc)
            .map(|c| c.remote.clone())
            .unwrap_or_default()
    }

    /// Stores what another node's server sent for its `proc` (visible in every
    /// scope here) and answers the gets it satisfies.
    pub(crate) fn ingest(&mut self, proc: &ProcKey, kvals: Vec<Kval>) {
        let entry = self.store.data.entry(proc.clone()).or_default();
        upsert(&mut entry.local, &kvals);
        upsert(&mut entry.remote, &kvals);
        release(self, proc, false);
    }
}

/// Re-evaluates the gets held for `target`; with `gone`, those still unanswered
/// get NOT_FOUND.
fn release(core: &mut Core, target: &ProcKey, gone: bool) {
    // Only the gets held for `target`: a commit costs what it answers.
    let held = core.store.held.take_key(target);
    let mut keep = Vec::new();
    for taken in held {
        let h = &taken.1;
        match evaluate(core, &h.target, h.key.as_deref(), h.scope) {
            Answer::Data(kv) => send_data(core, h.conn, h.tag, &h.target, kv),
            Answer::NotFound => not_found(core, h.conn, h.tag),
            Answer::Absent if gone => not_found(core, h.conn, h.tag),
            Answer::Absent => keep.push(taken),
        }
    }
    core.store.held.put_back(keep);
}

/// A local rank is gone: the gets held for it will never be satisfied.
pub(super) fn proc_departed(core: &mut Core, proc: &ProcKey) {
    release(core, proc, true);
    answer_host(core, proc, Status::ERR_NOT_FOUND);
}

/// Held gets whose deadline passed: `PMIX_ERR_TIMEOUT`.
pub(super) fn tick(core: &mut Core, now: Instant) {
    for h in core.store.held.take_due(now) {
        core.reply_status(h.conn, h.tag, Command::GetNb, Status::ERR_TIMEOUT);
    }
    let (due, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut core.store.host_waits)
        .into_iter()
        .partition(|w| w.deadline <= now);
    core.store.host_waits = keep;
    for w in due {
        modex_answer(core, w.id, &w.proc, Status::ERR_TIMEOUT);
    }
}

fn not_found(core: &mut Core, conn: ConnId, tag: u32) {
    core.reply_status(conn, tag, Command::GetNb, Status::ERR_NOT_FOUND);
}

fn send_data(core: &mut Core, conn: ConnId, tag: u32, target: &ProcKey, kvals: Vec<Kval>) {
    let reply = Reply::GetNb(GetNbReply {
        status: Status::SUCCESS,
        data: vec![ProcData {
            proc: Proc::new(target.0.as_str(), target.1),
            kvals,
        }],
    });
    core.reply(conn, tag, &reply);
}

/// What a get of `key` (None: everything) from `target` in `scope` finds now.
fn evaluate(core: &Core, target: &ProcKey, key: Option<&str>, scope: Option<u8>) -> Answer {
    let blob = core
        .namespaces
        .get(&target.0)
        .and_then(|ns| ns.rank_kvals.get(&target.1));
    let committed = core.store.data.get(target);
    let empty = Vec::new();
    let (local, remote) = committed.map_or((&empty, &empty), |c| (&c.local, &c.remote));
    let mut visible: Vec<Kval> = match scope.map(Scope) {
        None | Some(Scope::LOCAL) => local.clone(),
        Some(Scope::REMOTE) => remote.clone(),
        Some(_) => {
            let mut v = local.clone();
            upsert(&mut v, remote);
            v
        }
    };
    let Some(key) = key else {
        return if committed.is_some() {
            Answer::Data(visible)
        } else {
            Answer::Absent
        };
    };
    if visible.iter().any(|k| k.key == key) {
        return Answer::Data(visible);
    }
    if let Some(blob) = blob
        && blob.iter().any(|k| k.key == key)
    {
        let mut all = blob.clone();
        all.append(&mut visible);
        return Answer::Data(all);
    }
    if local.iter().chain(remote.iter()).any(|k| k.key == key) {
        return Answer::NotFound;
    }
    Answer::Absent
}

/// GETNB (module docs).
pub(super) fn get(core: &mut Core, conn: ConnId, tag: u32, g: GetNb, now: Instant) {
    let Some(nspace) = g.nspace.as_str().map(str::to_string) else {
        return not_found(core, conn, tag);
    };
    let key = g.key.as_ref().and_then(|k| k.as_str()).map(str::to_string);
    let Some(ns) = core.namespaces.get(&nspace) else {
        return not_found(core, conn, tag);
    };
    if g.rank == Rank::WILDCARD {
        let kvals: Vec<Kval> = match key.as_deref() {
            Some("pmix.hwlocxml2") if core.cfg.hwloc_xml.is_some() => {
                let xml = core.cfg.hwloc_xml.as_deref().unwrap_or_default();
                vec![Kval::new("pmix.hwlocxml2", xml)]
            }
            Some(k) if TOPOLOGY_KEYS.contains(&k) => Vec::new(),
            Some(k) => ns.job_value(k).map_or_else(Vec::new, |v| {
                vec![Kval {
                    key: k.into(),
                    value: v.clone(),
                }]
            }),
            None => ns.job_kvals.clone(),
        };
        if kvals.is_empty() {
            return not_found(core, conn, tag);
        }
        let reply = Reply::GetNb(GetNbReply {
            status: Status::SUCCESS,
            data: vec![ProcData {
                proc: Proc {
                    nspace: g.nspace.clone(),
                    rank: Rank::WILDCARD,
                },
                kvals,
            }],
        });
        return core.reply(conn, tag, &reply);
    }
    let local = ns.states.contains_key(&g.rank.0);
    let remote_known = core.cfg.hosted && g.rank.0 < ns.spec.job_size;
    if !(local || remote_known) {
        return not_found(core, conn, tag);
    }
    let target = (nspace, g.rank.0);
    let scope = info_value(&g.info, "pmix.scope").and_then(|v| match v {
        pmix_wire::Value::Scope(s) => Some(*s),
        _ => None,
    });
    match evaluate(core, &target, key.as_deref(), scope) {
        Answer::Data(kv) => send_data(core, conn, tag, &target, kv),
        Answer::NotFound => not_found(core, conn, tag),
        Answer::Absent => {
            if info_flag(&g.info, "pmix.immediate") || core.departed(&target) {
                return not_found(core, conn, tag);
            }
            if !core.may_wait(conn) {
                return core.reply_status(conn, tag, Command::GetNb, super::ERR_OUT_OF_RESOURCE);
            }
            let deadline = info_deadline(&g.info, now, Some(core.cfg.get_timeout));
            if !local && !core.store.asked.values().any(|p| p == &target) {
                // Another node's rank: its server has the data (direct modex).
                let id = core.next_host_id();
                core.store.asked.insert(id, target.clone());
                core.out.push_back(Output::Host(HostCall::DirectModex {
                    id,
                    proc: target.clone(),
                }));
            }
            core.store.held.push(HeldGet {
                conn,
                tag,
                target,
                key,
                scope,
                deadline,
            });
        }
    }
}
