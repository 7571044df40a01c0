//! PUBLISH, LOOKUP and UNPUBLISH (docs/wire.md §6.13).
//!
//! PUBLISH stores each INFO that is not a directive (`pmix.range`,
//! `pmix.persist`, `pmix.timeout`, `pmix.wait`, `pmix.euid`, `pmix.egid`) under
//! its key with the publisher and the range (`pmix.range`, default SESSION); a key
//! published already → `PMIX_ERR_DUPLICATE_KEY`, nothing stored. LOOKUP answers
//! `STATUS 0` and one PDATA per key found in range (NAMESPACE data only to the
//! publisher's namespace, PROC_LOCAL only to the publisher), `PMIX_ERR_NOT_FOUND`
//! when none is; with `pmix.wait` (true, or a count: that many keys, 0 or less
//! meaning all of them, as the standard says) it is held until that many of its keys
//! are published or `pmix.timeout` passes (then what was found, or
//! `PMIX_ERR_TIMEOUT`). UNPUBLISH removes the named keys (none named: all) the
//! requester published and answers `STATUS 0`.
//!
//! Persistence (`pmix.persist`, default `PMIX_PERSIST_SESSION` as the data servers
//! of Open MPI's `mpirun` and PRRTE): `PROC` data goes when its publisher leaves
//! (finalizes or its connection closes), `APP` data when no rank of its
//! publisher's namespace is left (an app is taken as its namespace), `FIRST_READ`
//! data after the first lookup that finds it, `SESSION` and `INDEF` data when its
//! namespace is deregistered. One publisher holds at most
//! [`super::CoreConfig::max_published_per_proc`] keys of
//! [`super::CoreConfig::max_published_bytes_per_proc`] bytes, and all together
//! [`super::CoreConfig::max_published`] keys of
//! [`super::CoreConfig::max_published_bytes`] bytes: a PUBLISH past any of them
//! stores nothing and is answered `PMIX_ERR_OUT_OF_RESOURCE`.
//!
//! With [`super::Provides::PUBSUB`] the data is the host's: each request goes
//! to it as it came, with the requester's uid appended as `pmix.euid` (as OpenPMIx's
//! server does: hosts match it on lookup) ([`Upcall::Publish`], [`Upcall::Lookup`],
//! [`Upcall::Unpublish`]), and the host's answer is the client's.

use std::collections::BTreeMap;
use std::time::Instant;

use pmix_wire::msg::{Lookup, LookupReply, Publish, Unpublish};
use pmix_wire::{Command, DataRange, Info, Pdata, Proc, Reply, Status, Value};

use super::util::{HeldList, HeldRequest, value_size};
use super::{
    ConnId, Core, ERR_DUPLICATE_KEY, Output, ProcKey, Provides, Upcall, info_deadline, info_value,
};

const DIRECTIVES: [&str; 6] = [
    pmix_wire::keys::RANGE,
    pmix_wire::keys::PERSISTENCE,
    pmix_wire::keys::TIMEOUT,
    pmix_wire::keys::WAIT,
    pmix_wire::keys::USERID,
    pmix_wire::keys::GRPID,
];

/// Published data and held lookups.
#[derive(Debug, Default)]
pub(crate) struct PubSub {
    data: BTreeMap<String, Published>,
    held: HeldList<HeldLookup>,
    /// Requests the host answers: id → the client's connection, tag and command.
    at_host: std::collections::HashMap<u64, (ConnId, u32, Command)>,
    /// The keys each publisher holds, and their bytes.
    per_proc: std::collections::HashMap<ProcKey, Held>,
    /// The bytes of all published data.
    bytes: usize,
}

/// What one publisher holds.
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    keys: usize,
    bytes: usize,
}

#[derive(Debug)]
struct Published {
    proc: ProcKey,
    value: Value,
    /// About its size ([`value_size`] and its key's).
    bytes: usize,
    range: DataRange,
    persist: u8,
}

/// `PMIX_PERSIST_FIRST_READ`, `_PROC`, `_APP`, `_SESSION` (pmix_common.h).
const PERSIST_FIRST_READ: u8 = 1;
const PERSIST_PROC: u8 = 2;
const PERSIST_APP: u8 = 3;
const PERSIST_SESSION: u8 = 4;

#[derive(Debug)]
struct HeldLookup {
    conn: ConnId,
    tag: u32,
    who: ProcKey,
    keys: Vec<String>,
    /// How many of `keys` it waits for.
    want: usize,
    deadline: Option<Instant>,
}

/// Lookups are all looked at again on each publish (they wait for several keys).
impl HeldRequest for HeldLookup {
    type Key = ();

    fn key(&self) {}

    fn conn(&self) -> ConnId {
        self.conn
    }

    fn deadline(&self) -> Option<Instant> {
        self.deadline
    }
}

impl PubSub {
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.held.next_deadline()
    }

    pub(crate) fn forget_conn(&mut self, conn: ConnId) {
        self.at_host.retain(|_, held| held.0 != conn);
        self.held.forget_conn(conn);
    }

    pub(crate) fn pending_of(&self, conn: ConnId) -> usize {
        self.held.pending_of(conn)
    }

    /// Drops what the ranks of `nspace` published.
    pub(crate) fn forget_nspace(&mut self, nspace: &str) {
        self.remove_where(|_, p| p.proc.0 != nspace);
    }

    /// `proc` left (finalized, or its connection closed; `last`: no rank of its
    /// namespace is left): its `PERSIST_PROC` data goes, and with `last` its
    /// namespace's `PERSIST_APP` data.
    pub(crate) fn proc_left(&mut self, proc: &ProcKey, last: bool) {
        self.remove_where(|_, p| {
            !(p.persist == PERSIST_PROC && &p.proc == proc
                || last && p.persist == PERSIST_APP && p.proc.0 == proc.0)
        });
    }

    /// Keeps the data `keep` says, counting what goes.
    fn remove_where(&mut self, keep: impl Fn(&String, &Published) -> bool) {
        let (per_proc, bytes) = (&mut self.per_proc, &mut self.bytes);
        self.data.retain(|k, p| {
            let k = keep(k, p);
            if !k {
                uncount(per_proc, bytes, p);
            }
            k
        });
    }

    /// The keys of `found` published with `PERSIST_FIRST_READ`: gone now.
    fn first_reads(&mut self, found: &[Pdata]) {
        for k in found.iter().filter_map(|d| d.key.as_str()) {
            if self
                .data
                .get(k)
                .is_some_and(|p| p.persist == PERSIST_FIRST_READ)
            {
                self.remove(k);
            }
        }
    }

    /// Removes key `k`, counting it off its publisher's.
    fn remove(&mut self, k: &str) {
        if let Some(p) = self.data.remove(k) {
            uncount(&mut self.per_proc, &mut self.bytes, &p);
        }
    }

    fn find(&self, who: &ProcKey, keys: &[String]) -> Vec<Pdata> {
        keys.iter()
            .filter_map(|k| {
                let p = self.data.get(k)?;
                let visible = match p.range {
                    DataRange::NAMESPACE => p.proc.0 == who.0,
                    DataRange::PROC_LOCAL => &p.proc == who,
                    _ => true,
                };
                visible.then(|| Pdata {
                    proc: Proc::new(p.proc.0.as_str(), p.proc.1),
                    key: k.as_str().into(),
                    value: p.value.clone(),
                })
            })
            .collect()
    }
}

/// Counts `p` off its publisher's and the total.
fn uncount(
    per_proc: &mut std::collections::HashMap<ProcKey, Held>,
    total: &mut usize,
    p: &Published,
) {
    *total = total.saturating_sub(p.bytes);
    if let Some(h) = per_proc.get_mut(&p.proc) {
        h.keys = h.keys.saturating_sub(1);
        h.bytes = h.bytes.saturating_sub(p.bytes);
        if h.keys == 0 {
            per_proc.remove(&p.proc);
        }
    }
}

/// `pmix.persist` (`PMIX_PERSIST_SESSION` when absent or unknown).
fn persist_of(info: &[Info]) -> u8 {
    let asked = match info_value(info, pmix_wire::keys::PERSISTENCE) {
        Some(Value::Persist(p)) => Some(u64::from(*p)),
        other => other.and_then(Value::as_u64),
    };
    asked
        .and_then(|p| u8::try_from(p).ok())
        .filter(|p| *p <= PERSIST_SESSION)
        .unwrap_or(PERSIST_SESSION)
}

fn range_of(info: &[Info]) -> DataRange {
    match info_value(info, pmix_wire::keys::RANGE) {
        Some(Value::DataRange(r)) => DataRange(*r),
        _ => DataRange::SESSION,
    }
}

/// PUBLISH.
pub(super) fn publish(core: &mut Core, conn: ConnId, tag: u32, p: Publish, now: Instant) {
    let _ = now;
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    let who = peer.proc.clone();
    if core.cfg.provides.contains(Provides::PUBSUB) {
        let id = to_host(core, conn, tag, Command::PublishNb);
        let mut info = p.info;
        // As OpenPMIx's server: the requester's uid last (hosts match it on lookup).
        info.push(Info::new(pmix_wire::keys::USERID, p.uid.0));
        core.out.push_back(Output::Host(Upcall::Publish {
            id,
            proc: who,
            info,
        }));
        return;
    }
    let range = range_of(&p.info);
    let persist = persist_of(&p.info);
    let items: Vec<(String, Value, usize)> = p
        .info
        .into_iter()
        .filter(|i| !DIRECTIVES.iter().any(|d| i.key == *d))
        .filter_map(|i| {
            let k = i.key.as_str()?.to_string();
            let bytes = k.len() + value_size(&i.value);
            Some((k, i.value, bytes))
        })
        .collect();
    if items.iter().any(|(k, ..)| core.pubsub.data.contains_key(k)) {
        return core.reply_status(conn, tag, Command::PublishNb, ERR_DUPLICATE_KEY);
    }
    let mine = core.pubsub.per_proc.get(&who).copied().unwrap_or_default();
    let bytes: usize = items.iter().map(|(.., b)| b).sum();
    let cfg = &core.cfg;
    if core.pubsub.data.len() + items.len() > cfg.max_published
        || mine.keys + items.len() > cfg.max_published_per_proc
        || core.pubsub.bytes + bytes > cfg.max_published_bytes
        || mine.bytes + bytes > cfg.max_published_bytes_per_proc
    {
        return core.reply_status(conn, tag, Command::PublishNb, super::ERR_OUT_OF_RESOURCE);
    }
    let held = core.pubsub.per_proc.entry(who.clone()).or_default();
    held.keys += items.len();
    held.bytes += bytes;
    core.pubsub.bytes += bytes;
    for (k, value, bytes) in items {
        core.pubsub.data.insert(
            k,
            Published {
                proc: who.clone(),
                value,
                bytes,
                range,
                persist,
            },
        );
    }
    core.reply_status(conn, tag, Command::PublishNb, Status::SUCCESS);
    // Held lookups that are now complete.
    let held = core.pubsub.held.take_key(&());
    let mut keep = Vec::new();
    for taken in held {
        let h = &taken.1;
        let found = core.pubsub.find(&h.who, &h.keys);
        if found.len() >= h.want {
            core.pubsub.first_reads(&found);
            answer(core, h.conn, h.tag, found, Status::ERR_NOT_FOUND);
        } else {
            keep.push(taken);
        }
    }
    core.pubsub.held.put_back(keep);
}

fn answer(core: &mut Core, conn: ConnId, tag: u32, data: Vec<Pdata>, none: Status) {
    if data.is_empty() {
        core.reply_status(conn, tag, Command::LookupNb, none);
    } else {
        core.reply(
            conn,
            tag,
            &Reply::Lookup(LookupReply {
                status: Status::SUCCESS,
                data,
            }),
        );
    }
}

/// LOOKUP.
pub(super) fn lookup(core: &mut Core, conn: ConnId, tag: u32, l: Lookup, now: Instant) {
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    let who = peer.proc.clone();
    let keys: Vec<String> = l
        .keys
        .iter()
        .filter_map(|k| k.as_str().map(str::to_string))
        .collect();
    if core.cfg.provides.contains(Provides::PUBSUB) {
        let id = to_host(core, conn, tag, Command::LookupNb);
        let mut info = l.info;
        info.push(Info::new(pmix_wire::keys::USERID, l.uid.0));
        core.out.push_back(Output::Host(Upcall::Lookup {
            id,
            proc: who,
            keys,
            info,
        }));
        return;
    }
    let found = core.pubsub.find(&who, &keys);
    let all = keys.len();
    // PMIX_WAIT: an int, the number of keys to wait for (0: all); true: all.
    let want = match info_value(&l.info, pmix_wire::keys::WAIT) {
        Some(Value::Bool(b)) => b.then_some(all),
        Some(Value::Undef) => Some(all),
        Some(v) => match (v.as_i64(), v.as_u64()) {
            (Some(n), _) if n <= 0 => Some(all),
            (Some(n), _) => Some(usize::try_from(n).map_or(all, |n| n.min(all))),
            (_, Some(0)) => Some(all),
            (_, Some(n)) => Some(usize::try_from(n).map_or(all, |n| n.min(all))),
            _ => None,
        },
        None => None,
    };
    if let Some(want) = want
        && found.len() < want
    {
        if !core.may_wait(conn) {
            return core.reply_status(conn, tag, Command::LookupNb, super::ERR_OUT_OF_RESOURCE);
        }
        let deadline = info_deadline(&l.info, now, None);
        core.pubsub.held.push(HeldLookup {
            conn,
            tag,
            who,
            keys,
            want,
            deadline,
        });
        return;
    }
    core.pubsub.first_reads(&found);
    answer(core, conn, tag, found, Status::ERR_NOT_FOUND);
}

/// UNPUBLISH.
pub(super) fn unpublish(core: &mut Core, conn: ConnId, tag: u32, u: Unpublish) {
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    let who = peer.proc.clone();
    if core.cfg.provides.contains(Provides::PUBSUB) {
        let id = to_host(core, conn, tag, Command::UnpublishNb);
        let keys = u
            .keys
            .iter()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect();
        let mut info = u.info;
        info.push(Info::new(pmix_wire::keys::USERID, u.uid.0));
        core.out.push_back(Output::Host(Upcall::Unpublish {
            id,
            proc: who,
            keys,
            info,
        }));
        return;
    }
    if u.keys.is_empty() {
        core.pubsub.remove_where(|_, p| p.proc != who);
    } else {
        let keys: Vec<&str> = u.keys.iter().filter_map(|k| k.as_str()).collect();
        core.pubsub
            .remove_where(|k, p| p.proc != who || !keys.contains(&k.as_str()));
    }
    core.reply_status(conn, tag, Command::UnpublishNb, Status::SUCCESS);
}

/// Held lookups whose deadline passed: what was found, else `PMIX_ERR_TIMEOUT`.
pub(super) fn tick(core: &mut Core, now: Instant) {
    for h in core.pubsub.held.take_due(now) {
        let found = core.pubsub.find(&h.who, &h.keys);
        core.pubsub.first_reads(&found);
        answer(core, h.conn, h.tag, found, Status::ERR_TIMEOUT);
    }
}

/// Records that the host answers `conn`'s request `tag`; returns the request's id.
fn to_host(core: &mut Core, conn: ConnId, tag: u32, cmd: Command) -> u64 {
    let id = core.next_host_id();
    core.pubsub.at_host.insert(id, (conn, tag, cmd));
    id
}

/// The host's answer to a publish or unpublish: its status to the client.
pub(super) fn op_answered(core: &mut Core, id: u64, status: Status) {
    if let Some((conn, tag, cmd)) = core.pubsub.at_host.remove(&id) {
        core.reply_status(conn, tag, cmd, status);
    }
}

/// The host's answer to a lookup: what it found (none: `status`, else NOT_FOUND).
pub(super) fn lookup_answered(core: &mut Core, id: u64, status: Status, data: Vec<Pdata>) {
    if let Some((conn, tag, _)) = core.pubsub.at_host.remove(&id) {
        if status == Status::SUCCESS {
            answer(core, conn, tag, data, Status::ERR_NOT_FOUND);
        } else {
            core.reply_status(conn, tag, Command::LookupNb, status);
        }
    }
}
