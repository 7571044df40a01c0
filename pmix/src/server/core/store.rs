//! The commit store and GETNB (docs/wire.md §6.4, §6.6).
//!
//! Each process's committed values are kept in two buckets, LOCAL (what local
//! peers see) and REMOTE (what other nodes would see); GLOBAL values come in both.
//! Commits are cumulative (each resends everything), so a commit upserts by key.
//! A commit that would leave a process more than
//! [`super::CoreConfig::max_keys_per_proc`] keys in a bucket, or more than
//! [`super::CoreConfig::max_committed_bytes_per_proc`] bytes in both, stores nothing
//! and is answered `PMIX_ERR_OUT_OF_RESOURCE`.
//!
//! GETNB of a local rank: the key in the scope visible to the requester (LOCAL, or
//! the one `pmix.scope` names; GLOBAL/UNDEF = both) → `STATUS 0` and one byte
//! object with the target's visible values (plus its blob values for a
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
//! ([`super::Upcall::DirectModex`]); unhosted, NOT_FOUND.
//!
//! Both clients file every value of an answer under its process (§6.6 of the
//! wire notes), so an answer to a connection carries the requested value and
//! only those of the target's values that changed since the last answer about it
//! to that connection (in that scope); `pmix.get.refresh` (or a get without a key)
//! asks for all of them again. A job that puts, fences and gets a new key each round
//! is then answered one value per round, not everything the peer ever put.
//!
//! **Qualified values.** A get whose infos hold qualifiers (`PMIX_INFO_QUALIFIER`:
//! `pmix.grp.ctxid`, `pmix.grp.id`) is answered from the target's qualified values
//! alone: each a `pmix.qual.val` KVAL whose DATA_ARRAY of INFO holds the value
//! first, then its qualifiers (the form both clients file and match), those whose
//! key is the one asked and whose qualifiers include every one given, equal;
//! none → `PMIX_ERR_NOT_FOUND` at once. They come from groups: the
//! `PMIX_GROUP_INFO` a member gave its construct (Open MPI 5's
//! `PMIX_GROUP_LOCAL_CID`), qualified by the group's id and, when one was
//! assigned, its context id, kept after the group is destructed (it is read
//! after) until the namespace goes, at most `max_keys_per_proc` per process.

use std::collections::HashMap;

use super::util::FastMap;
use std::time::Instant;

use pmix_wire::modex::ModexEntry;
use pmix_wire::msg::{Commit, GetNb, GetNbReply, ProcData};
use pmix_wire::{
    Command, DataArray, Info, InfoFlags, Kval, Proc, Rank, Reply, Scope, Status, Value,
};

use super::util::{HeldList, HeldRequest, value_size};
use super::{ConnId, Core, Output, ProcKey, Upcall, info_deadline, info_flag, info_value};

/// Keys a server answers only from a topology it shares, which we do not.
const TOPOLOGY_KEYS: [&str; 3] = [
    pmix_wire::keys::HWLOC_XML_V2,
    pmix_wire::keys::HWLOC_XML_V1,
    pmix_wire::keys::TOPOLOGY2,
];

/// The committed values and the held gets.
#[derive(Debug, Default)]
pub(crate) struct Store {
    data: FastMap<ProcKey, Committed>,
    /// Per process, its qualified values (`pmix.qual.val` KVALs), oldest first.
    qualified: FastMap<ProcKey, Vec<Kval>>,
    /// Per connection, per (target, scope): the target's generation its last
    /// answer carried (what that connection has filed).
    sent: FastMap<ConnId, FastMap<(ProcKey, Option<u8>), u64>>,
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
    local: Bucket,
    remote: Bucket,
    /// Bumped by every commit or ingest that changes a value.
    generation: u64,
}

/// Values with, for each, the generation that last changed it.
#[derive(Clone, Debug, Default)]
struct Bucket {
    kvals: Vec<Kval>,
    changed: Vec<u64>,
}

impl Bucket {
    /// Adds `kvals` to the bucket, replacing the values of keys it has, stamping
    /// what changed with `generation` (in time linear in both: a peer's commit of
    /// many keys must not cost quadratic time). Commits are cumulative, so a value
    /// resent unchanged keeps its stamp.
    fn upsert(&mut self, kvals: &[Kval], generation: u64) {
        self.merge(kvals.iter().map(|k| (k, generation)));
    }

    /// Upserts `(value, stamp)` pairs.
    fn merge<'a>(&mut self, pairs: impl Iterator<Item = (&'a Kval, u64)>) {
        let mut index: HashMap<Vec<u8>, usize> = self
            .kvals
            .iter()
            .enumerate()
            .map(|(i, k)| (k.key.as_bytes().to_vec(), i))
            .collect();
        for (kv, stamp) in pairs {
            match index.get(kv.key.as_bytes()) {
                Some(&i) if self.kvals[i].value == kv.value => {}
                Some(&i) => {
                    self.kvals[i].value = kv.value.clone();
                    self.changed[i] = stamp;
                }
                None => {
                    index.insert(kv.key.as_bytes().to_vec(), self.kvals.len());
                    self.kvals.push(kv.clone());
                    self.changed.push(stamp);
                }
            }
        }
    }

    /// The values a commit or ingest stamped `generation` changed.
    fn changed_at(&self, generation: u64) -> Vec<Kval> {
        self.kvals
            .iter()
            .zip(&self.changed)
            .filter(|(_, g)| **g == generation)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// About what its values take ([`value_size`] and their keys).
    fn bytes(&self) -> usize {
        self.kvals
            .iter()
            .map(|k| k.key.len() + value_size(&k.value))
            .sum()
    }

    fn has(&self, key: &str) -> bool {
        self.kvals.iter().any(|k| k.key == key)
    }
}

#[derive(Debug)]
struct HeldGet {
    conn: ConnId,
    tag: u32,
    target: ProcKey,
    key: Option<String>,
    scope: Option<u8>,
    /// `pmix.get.refresh`: send every value again.
    refresh: bool,
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
    /// The values to send, and the target's generation they bring the asker to.
    Data(Vec<Kval>, u64),
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
        self.sent.remove(&conn);
    }

    pub(crate) fn pending_of(&self, conn: ConnId) -> usize {
        self.held.pending_of(conn)
    }

    /// Drops what the ranks of `nspace` committed.
    pub(crate) fn forget_nspace(&mut self, nspace: &str) {
        self.data.retain(|p, _| p.0 != nspace);
        self.qualified.retain(|p, _| p.0 != nspace);
        for targets in self.sent.values_mut() {
            targets.retain(|(p, _), _| p.0 != nspace);
        }
    }

    /// Every rank of `nspace` with committed values, ascending, with what a peer
    /// of this node sees of them by default (LOCAL and GLOBAL puts; all of what the
    /// host brought of another node's rank).
    pub(crate) fn local_values<'a>(
        &'a self,
        nspace: &'a str,
    ) -> impl Iterator<Item = (u32, &'a [Kval])> + 'a {
        let mut ranks: Vec<(u32, &'a [Kval])> = self
            .data
            .iter()
            .filter(|(p, c)| p.0 == nspace && !c.local.kvals.is_empty())
            .map(|(p, c)| (p.1, c.local.kvals.as_slice()))
            .collect();
        ranks.sort_unstable_by_key(|(r, _)| *r);
        ranks.into_iter()
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
    let generation = entry.generation + 1;
    for b in &c.buckets {
        match b.scope {
            Scope::REMOTE => remote.upsert(&b.kvals, generation),
            Scope::GLOBAL => {
                local.upsert(&b.kvals, generation);
                remote.upsert(&b.kvals, generation);
            }
            _ => local.upsert(&b.kvals, generation),
        }
    }
    if local.kvals.len() > max
        || remote.kvals.len() > max
        || local.bytes() + remote.bytes() > core.cfg.max_committed_bytes_per_proc
    {
        return core.reply_status(conn, tag, Command::Commit, super::ERR_OUT_OF_RESOURCE);
    }
    (entry.local, entry.remote, entry.generation) = (local, remote, generation);
    // What local peers see (LOCAL and GLOBAL) goes in the ds21 store at once, as
    // OpenPMIx's server puts it there at commit: what this commit changed.
    let changed = entry.local.changed_at(generation);
    super::ds21::file(core, &proc.0, proc.1, &changed);
    super::nodestore::data_changed(core, &proc.0);
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

/// [`Output::DmodexAnswer`] `id`: `proc`'s remote data and job-info values when
/// `status` is success.
fn modex_answer(core: &mut Core, id: u64, proc: &ProcKey, status: Status) {
    let data = if status == Status::SUCCESS {
        let mut kvals = core.remote_data(proc);
        if let Some(own) = core
            .namespaces
            .get(&proc.0)
            .and_then(|ns| ns.rank_values(proc.1))
        {
            kvals.extend(own);
        }
        let entry = ModexEntry {
            proc: Proc::new(proc.0.as_str(), proc.1),
            kvals: Some(kvals),
            contribution: None,
            group: None,
        };
        match pmix_wire::modex::encode(&[entry]) {
            Ok(d) => d,
            Err(_) => return modex_answer(core, id, proc, Status::ERROR),
        }
    } else {
        Vec::new()
    };
    core.out
        .push_back(Output::DmodexAnswer { id, status, data });
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
pub(super) fn modex_answered(core: &mut Core, id: u64, status: Status, data: &[u8]) {
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

/// `PMIX_QUALIFIED_VALUE`: a DATA_ARRAY of INFO, the value then its qualifiers.
const QUALIFIED_KEY: &str = pmix_wire::keys::QUALIFIED_VALUE;

/// The value and qualifiers of a `pmix.qual.val` KVAL.
fn unqualify(kv: &Kval) -> Option<(&Info, impl Iterator<Item = &Info>)> {
    let mut infos = kv.value.infos()?.into_iter();
    let primary = infos.next()?;
    Some((primary, infos))
}

/// GETNB with qualifiers (module docs): the target's qualified values of `key`
/// that carry every qualifier in `info`.
fn qualified_get(
    core: &mut Core,
    conn: ConnId,
    tag: u32,
    target: &ProcKey,
    key: &str,
    info: &[Info],
) {
    let wanted: Vec<&Info> = info
        .iter()
        .filter(|i| i.flags.contains(InfoFlags::QUALIFIER))
        .collect();
    let found: Vec<Kval> = core
        .store
        .qualified
        .get(target)
        .into_iter()
        .flatten()
        .filter(|kv| {
            unqualify(kv).is_some_and(|(primary, quals)| {
                let quals: Vec<&Info> = quals.collect();
                primary.key == key
                    && wanted
                        .iter()
                        .all(|w| quals.iter().any(|q| q.key == w.key && q.value == w.value))
            })
        })
        .cloned()
        .collect();
    if found.is_empty() {
        return not_found(core, conn, tag);
    }
    let reply = Reply::GetNb(GetNbReply {
        status: Status::SUCCESS,
        data: vec![ProcData {
            proc: Proc::new(target.0.as_str(), target.1),
            kvals: found,
        }],
    });
    core.reply(conn, tag, &reply);
}

impl Core {
    /// Keeps the `PMIX_GROUP_INFO` member `proc` gave group `group`'s construct as
    /// qualified values (module docs): each info under `pmix.grp.id` = `group` and,
    /// with `ctxid`, `pmix.grp.ctxid` = `ctxid` (a SIZE, as clients ask for it). A
    /// value with the same key and qualifiers is replaced; past
    /// `max_keys_per_proc` the oldest go.
    pub(crate) fn store_group_info(
        &mut self,
        proc: &ProcKey,
        group: &str,
        ctxid: Option<u64>,
        info: Vec<Info>,
    ) {
        let qualifier = |k: &str, v: Value| Info {
            key: k.into(),
            flags: InfoFlags::QUALIFIER,
            value: v,
        };
        let mut quals = vec![qualifier(super::groups::GROUP_ID_KEY, Value::string(group))];
        if let Some(c) = ctxid {
            quals.push(qualifier(super::groups::CONTEXT_ID_KEY, Value::Size(c)));
        }
        let max = self.cfg.max_keys_per_proc;
        let list = self.store.qualified.entry(proc.clone()).or_default();
        for i in info {
            let primary = Info {
                flags: InfoFlags::default(),
                ..i
            };
            list.retain(|kv| {
                unqualify(kv).is_none_or(|(p, q)| p.key != primary.key || !q.eq(quals.iter()))
            });
            let items = std::iter::once(primary).chain(quals.iter().cloned());
            list.push(Kval {
                key: QUALIFIED_KEY.into(),
                value: Value::DataArray(DataArray::infos(items)),
            });
        }
        if list.len() > max {
            let excess = list.len() - max;
            list.drain(..excess);
        }
    }

    /// What `proc` committed for remote readers (REMOTE and GLOBAL puts).
    pub(crate) fn remote_data(&self, proc: &ProcKey) -> Vec<Kval> {
        self.store
            .data
            .get(proc)
            .map(|c| c.remote.kvals.clone())
            .unwrap_or_default()
    }

    /// Stores what another node's server sent for its `proc` (visible in every
    /// scope here) and answers the gets it satisfies.
    pub(crate) fn ingest(&mut self, proc: &ProcKey, kvals: Vec<Kval>) {
        let entry = self.store.data.entry(proc.clone()).or_default();
        entry.generation += 1;
        entry.local.upsert(&kvals, entry.generation);
        entry.remote.upsert(&kvals, entry.generation);
        // What the host brought anew (its data of a rank is all it committed).
        let changed = entry.local.changed_at(entry.generation);
        super::ds21::file(self, &proc.0, proc.1, &changed);
        super::nodestore::data_changed(self, &proc.0);
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
        match evaluate(core, h) {
            Answer::Data(kv, g) => send_data(core, h, kv, g),
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

/// Answers `h` with `kvals`, and notes that its connection has filed the target's
/// values up to `generation`.
fn send_data(core: &mut Core, h: &HeldGet, kvals: Vec<Kval>, generation: u64) {
    let (conn, tag, target) = (h.conn, h.tag, &h.target);
    core.store
        .sent
        .entry(conn)
        .or_default()
        .insert((target.clone(), h.scope), generation);
    let mut data = vec![ProcData {
        proc: Proc::new(target.0.as_str(), target.1),
        kvals,
    }];
    // A client of the store learns of the namespace's fence segment here: its
    // later gets are answered from it.
    if let Some((proc, named)) = super::nodestore::named_to(core, conn, &target.0) {
        data.push(ProcData {
            proc,
            kvals: vec![named],
        });
    }
    let reply = Reply::GetNb(GetNbReply {
        status: Status::SUCCESS,
        data,
    });
    core.reply(conn, tag, &reply);
}

/// What get `h` (its key None: everything) finds now: the requested value and
/// those its connection has not filed (all of them with `refresh` or no key), with
/// the target's generation.
fn evaluate(core: &Core, h: &HeldGet) -> Answer {
    let (target, key, scope) = (&h.target, h.key.as_deref(), h.scope);
    let committed = core.store.data.get(target);
    let empty = Bucket::default();
    let (local, remote) = committed.map_or((&empty, &empty), |c| (&c.local, &c.remote));
    let generation = committed.map_or(0, |c| c.generation);
    let visible = match scope.map(Scope) {
        None | Some(Scope::LOCAL) => local.clone(),
        Some(Scope::REMOTE) => remote.clone(),
        Some(_) => {
            let mut v = local.clone();
            v.merge(remote.kvals.iter().zip(remote.changed.iter().copied()));
            v
        }
    };
    let Some(key) = key else {
        return if committed.is_some() {
            Answer::Data(visible.kvals, generation)
        } else {
            Answer::Absent
        };
    };
    let filed = if h.refresh {
        0
    } else {
        core.store
            .sent
            .get(&h.conn)
            .and_then(|t| t.get(&(target.clone(), scope)))
            .copied()
            .unwrap_or(0)
    };
    let unfiled = |b: Bucket| -> Vec<Kval> {
        b.kvals
            .into_iter()
            .zip(b.changed)
            .filter(|(k, at)| *at > filed || k.key == key)
            .map(|(k, _)| k)
            .collect()
    };
    if visible.has(key) {
        return Answer::Data(unfiled(visible), generation);
    }
    // The rank's own job information (decoded from its blob when asked).
    if let Some(mut all) = core
        .namespaces
        .get(&target.0)
        .and_then(|ns| ns.rank_values(target.1))
        && all.iter().any(|k| k.key == key)
    {
        all.extend(unfiled(visible));
        return Answer::Data(all, generation);
    }
    // A session's values asked of one of its ranks: the job's, as OpenPMIx's hash
    // store answers them (a libpmix2 client on ds21 asks them of the server).
    if pmix_wire::keys::RANK_SESSION_KEYS.contains(&key)
        && let Some(ns) = core.namespaces.get(&target.0)
        && target.1 < ns.spec.job_size
        && let Some(v) = ns.job_value(key)
    {
        let mut all = vec![Kval {
            key: key.into(),
            value: v.clone(),
        }];
        all.extend(unfiled(visible));
        return Answer::Data(all, generation);
    }
    if local.has(key) || remote.has(key) {
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
            Some(pmix_wire::keys::HWLOC_XML_V2) if core.cfg.hwloc_xml.is_some() => {
                let xml = core.cfg.hwloc_xml.as_deref().unwrap_or_default();
                vec![Kval::new(pmix_wire::keys::HWLOC_XML_V2, xml)]
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
    let remote_known = core.cfg.provides.spans_nodes() && g.rank.0 < ns.spec.job_size;
    if !(local || remote_known) {
        return not_found(core, conn, tag);
    }
    let target = (nspace, g.rank.0);
    if let Some(k) = key.as_deref()
        && g.info
            .iter()
            .any(|i| i.flags.contains(InfoFlags::QUALIFIER))
    {
        return qualified_get(core, conn, tag, &target, k, &g.info);
    }
    let scope = info_value(&g.info, pmix_wire::keys::DATA_SCOPE).and_then(|v| match v {
        pmix_wire::Value::Scope(s) => Some(*s),
        _ => None,
    });
    let refresh = info_flag(&g.info, pmix_wire::keys::GET_REFRESH_CACHE);
    let h = HeldGet {
        conn,
        tag,
        target,
        key,
        scope,
        refresh,
        deadline: None,
    };
    match evaluate(core, &h) {
        Answer::Data(kv, generation) => send_data(core, &h, kv, generation),
        Answer::NotFound => not_found(core, conn, tag),
        Answer::Absent => {
            if info_flag(&g.info, pmix_wire::keys::IMMEDIATE) || core.departed(&h.target) {
                return not_found(core, conn, tag);
            }
            if !core.may_wait(conn) {
                return core.reply_status(conn, tag, Command::GetNb, super::ERR_OUT_OF_RESOURCE);
            }
            let deadline = info_deadline(&g.info, now, Some(core.cfg.get_timeout));
            if !local && !core.store.asked.values().any(|p| p == &h.target) {
                // Another node's rank: its server has the data (direct modex).
                let id = core.next_host_id();
                core.store.asked.insert(id, h.target.clone());
                core.out.push_back(Output::Host(Upcall::DirectModex {
                    id,
                    proc: h.target.clone(),
                }));
            }
            core.store.held.push(HeldGet { deadline, ..h });
        }
    }
}
