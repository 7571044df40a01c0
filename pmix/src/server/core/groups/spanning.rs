//! Groups whose members span nodes, under a host (Slurm's plugin, Open MPI's
//! daemons) that has no group upcall: the construct and the destruct run over the
//! host's fence (docs/serving.md §4).
//!
//! Each node's server keeps the group's record with every member; those on other
//! nodes are *remote*, and their node speaks for them. Once every local member
//! expected by the collective in flight has called it or departed, the node hands
//! its part to the host as one fence over the group's members (for a construct,
//! the procs listed; for a destruct, the membership the construct ended with: the
//! same list at every node, as the host matches collectives by it) with one blob
//! ([`pmix_wire::modex`]): per local member its state (called, left, lost), its
//! directives and, for a construct, its `PMIX_GROUP_INFO`; the node of the first
//! member (the *leading* node) adds the context id. The host hands every node the
//! same parts, so every node reaches the same outcome: remote members that called
//! count as contributed, those that left or were lost as departed (a remote member
//! expected by this node and absent from every part left the group since), the
//! leading node's context id is the group's, the remote members' group infos are
//! kept as their qualified values here too (a get of a remote member's local CID is
//! answered on the node), and each local member gets its answer by its own
//! directive. A member on another node that left is announced (`PMIX_GROUP_LEFT`)
//! to the local holders then, unless the host already carried the leave as an event
//! ([`forward_left`], [`host_left`]: `mpirun`'s daemons do, Slurm's plugin does not).
//! A forwarded leave names the group's context id, the same at every node and
//! another for each group of that name: one that arrives after its group is gone
//! here (the destruct's parts told the members) is dropped, never taken as a leave
//! from a later group of the same name.
//!
//! **Context ids**: one server-wide counter per node; hosted, an id is the counter
//! shifted left by 22 bits, or'ed with the rank (low 22 bits) of the group's first
//! member, whose node assigns it. Two nodes never assign the same id to groups
//! whose first members are ranks of one namespace (a rank runs on one node only).
//!
//! **Not done**: a node all of whose members left a spanning group before its
//! destruct does not take part in the destruct's fence, which then waits for it
//! (the host's collective needs every node of the list); a failing host fence ends
//! the collective with the host's status at every local caller and forgets the
//! group here.

use pmix_wire::modex::{GroupPart, ModexEntry};
use pmix_wire::{Info, InfoFlags, Kval, Proc, Value};

use super::record::{Phase, Standing, announce_left, unindex};
use super::*;
use crate::server::core::{Output, Upcall};

/// Hands this node's part of `name`'s collective in flight to the host.
pub(super) fn to_host(core: &mut Core, name: &str) {
    let id = core.next_host_id();
    let (leading, constructing, leader) = match core.groups.records.get(name) {
        Some(rec) => (
            !rec.members[0].remote,
            rec.phase == Phase::Constructing,
            rec.roster[0].clone(),
        ),
        None => return,
    };
    let ctxid = (leading && constructing).then(|| super::next_ctxid(core, &leader));
    let Some(rec) = core.groups.records.get_mut(name) else {
        return;
    };
    rec.host = Some(id);
    if ctxid.is_some() {
        // Ours to assign: every node takes it from our part (used if asked).
        rec.ctxid = ctxid;
    }
    let ask = if rec.assign_ctxid {
        GroupPart::ASSIGN_CONTEXT_ID
    } else {
        0
    };
    let entries: Vec<ModexEntry> = rec
        .roster
        .iter()
        .zip(&rec.members)
        .filter(|(_, m)| !m.remote && m.expected())
        .map(|(p, m)| {
            let state = match (m.contributed, m.standing) {
                (true, _) => GroupPart::CONTRIBUTED,
                (false, Standing::Left) => GroupPart::LEFT,
                _ => GroupPart::LOST,
            };
            let directives = u8::from(m.ft) * GroupPart::FT
                + u8::from(m.notterm) * GroupPart::NOTIFY_TERMINATION
                + ask;
            let kvals = (constructing && !m.info.is_empty()).then(|| {
                m.info
                    .iter()
                    .map(|i| Kval {
                        key: i.key.clone(),
                        value: i.value.clone(),
                    })
                    .collect()
            });
            ModexEntry {
                proc: Proc::new(p.0.as_str(), p.1),
                kvals,
                contribution: None,
                group: Some(GroupPart {
                    state,
                    directives,
                    ctxid,
                }),
            }
        })
        .collect();
    let parts = if constructing {
        rec.roster.clone()
    } else {
        rec.constructed
            .clone()
            .unwrap_or_else(|| rec.roster.clone())
    };
    let data = pmix_wire::modex::encode(&entries).unwrap_or_default();
    let procs = crate::server::core::fence::host_procs(core, &parts);
    core.groups.host_waits.insert(id, name.to_string());
    core.out.push_back(Output::Host(Upcall::Fence {
        id,
        procs,
        collect: true,
        data,
    }));
}

/// The host's answer to fence `id`, if it is a group's (module docs); `false`
/// when `id` is no group's.
pub(crate) fn host_done(core: &mut Core, id: u64, status: Status, data: &[u8]) -> bool {
    let Some(name) = core.groups.host_waits.remove(&id) else {
        return false;
    };
    if !core.groups.records.contains_key(&name) {
        // It timed out meanwhile.
        return true;
    }
    let entries = match core.host_entries(status, data) {
        Ok(e) => e,
        Err(s) => {
            fail(core, &name, s);
            return true;
        }
    };
    let Some(rec) = core.groups.records.get_mut(&name) else {
        return true;
    };
    rec.host = None;
    let mut seen = vec![false; rec.roster.len()];
    let mut departs = Vec::new();
    let mut infos = Vec::new();
    for e in entries {
        let (Some(g), Some(ns)) = (e.group, e.proc.nspace.as_str()) else {
            continue;
        };
        let proc = (ns.to_string(), e.proc.rank.0);
        let Some(i) = rec.index_of(&proc).filter(|&i| rec.members[i].remote) else {
            continue;
        };
        seen[i] = true;
        if g.directives & GroupPart::ASSIGN_CONTEXT_ID != 0 {
            rec.assign_ctxid = true;
        }
        if let Some(c) = g.ctxid {
            rec.ctxid = Some(c);
        }
        let m = &mut rec.members[i];
        m.ft = g.directives & GroupPart::FT != 0;
        m.notterm = g.directives & GroupPart::NOTIFY_TERMINATION != 0;
        match g.state {
            GroupPart::CONTRIBUTED => rec.contribute(i, None),
            s => departs.push((i, s == GroupPart::LOST)),
        }
        if let Some(kv) = e.kvals {
            let info: Vec<Info> = kv
                .into_iter()
                .map(|k| Info {
                    key: k.key,
                    flags: InfoFlags::default(),
                    value: k.value,
                })
                .collect();
            infos.push((proc, info));
        }
    }
    // A remote holder its node no longer counted: it left since.
    for (i, m) in rec.members.iter().enumerate() {
        if m.remote && m.expected() && !seen[i] && m.standing == Standing::Holder {
            departs.push((i, false));
        }
    }
    let mut left = Vec::new();
    for (i, lost) in departs {
        if rec.members[i].standing == Standing::Holder {
            rec.depart(i, lost);
            if !lost {
                left.push(rec.roster[i].clone());
            }
        }
    }
    rec.remote_accounted();
    let ctxid = rec.ctxid;
    if rec.phase == Phase::Constructing {
        for (p, info) in infos {
            core.store_group_info(&p, &name, ctxid, info);
        }
    }
    for l in &left {
        announce_left(core, &name, l);
    }
    settle(core, &name);
    core.fences_changed();
    true
}

/// The host's collective for `name` failed with `status`: every local caller gets
/// it, and the group is forgotten here.
fn fail(core: &mut Core, name: &str, status: Status) {
    let Some(mut rec) = core.groups.records.remove(name) else {
        return;
    };
    for (p, call) in rec.drop_holders() {
        unindex(core, &p, name);
        if let Some(pd) = call {
            core.reply_status(pd.conn, pd.tag, pd.cmd, status);
        }
    }
}

/// Local member `leaver` left spanning group `name`: the members on other nodes
/// hear it through the host's `notify_event` where it has one (`mpirun`'s daemons;
/// Slurm's plugin has none, and they hear it with the next collective): a
/// `PMIX_GROUP_LEFT` ranged to them, which their server applies to its record
/// ([`host_left`]).
pub(super) fn forward_left(core: &mut Core, name: &str, leaver: &ProcKey) {
    let Some(rec) = core.groups.records.get(name) else {
        return;
    };
    let to: Vec<Value> = rec
        .roster
        .iter()
        .zip(&rec.members)
        .filter(|(_, m)| m.remote && m.standing == Standing::Holder)
        .map(|(p, _)| Value::Proc(Proc::new(p.0.as_str(), p.1)))
        .collect();
    if to.is_empty() || !core.cfg.provides.spans_nodes() {
        return;
    }
    let Some(range) = pmix_wire::DataArray::new(pmix_wire::DataType::Proc, to) else {
        return;
    };
    // Which group of that name: the context id its construct ended with, the same
    // on every node (a later group of the name has another).
    let incarnation = rec.ctxid.filter(|_| rec.phase != Phase::Constructing);
    let origin = core.origin_mark();
    let mut info = vec![
        Info::new(GROUP_ID_KEY, name),
        Info::new(EVPROC_KEY, Proc::new(leaver.0.as_str(), leaver.1)),
        Info::new(EVRANGE_KEY, Value::DataArray(range)),
        origin,
    ];
    if let Some(c) = incarnation {
        info.push(Info::new(INCARNATION_KEY, Value::Uint64(c)));
    }
    core.out.push_back(Output::Host(Upcall::Notify {
        code: Status::GROUP_LEFT.0,
        source: leaver.clone(),
        range: pmix_wire::DataRange::CUSTOM.0,
        info,
    }));
}

/// The key of a forwarded `PMIX_GROUP_LEFT` that names which group of its name the
/// member left ([`forward_left`]); removed before the event reaches a client.
pub(crate) const INCARNATION_KEY: &str = pmix_wire::keys::RS_GROUP_INCARNATION;

/// A `PMIX_GROUP_LEFT` the host injected (another node's [`forward_left`]): when it
/// names a group this node keeps and a member of it on another node that holds it
/// here, that member departs as having left, the local holders hear it, and any
/// collective in flight goes on without it; `true` then. `false`: not such an event
/// (it is raised as any other).
pub(crate) fn host_left(core: &mut Core, info: &[Info]) -> bool {
    let (Some(name), Some(Value::Proc(who))) = (
        info_value(info, GROUP_ID_KEY).and_then(Value::as_str),
        info_value(info, EVPROC_KEY),
    ) else {
        return false;
    };
    let Some(ns) = who.nspace.as_str() else {
        return false;
    };
    let (name, leaver) = (name.to_string(), (ns.to_string(), who.rank.0));
    let incarnation = info.iter().find(|i| i.key == INCARNATION_KEY);
    let rec = core.groups.records.get_mut(&name);
    if let Some(i) = incarnation {
        // A leave from a group of this name that is gone here: its destruct told
        // the local members already (the leaver's node's part said it left), and a
        // later group of the name is not the one it left.
        let current = rec
            .as_ref()
            .and_then(|r| r.ctxid.filter(|_| r.phase != Phase::Constructing));
        if current.is_none_or(|c| i.value != Value::Uint64(c)) {
            return true;
        }
    }
    let Some(rec) = rec else {
        return false;
    };
    let Some(i) = rec
        .index_of(&leaver)
        .filter(|&i| rec.members[i].remote && rec.members[i].standing == Standing::Holder)
    else {
        return false;
    };
    rec.remote_left(i);
    announce_left(core, &name, &leaver);
    super::settle(core, &name);
    core.fences_changed();
    true
}
