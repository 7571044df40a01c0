//! The replicas' traffic: messages delivered in order with every table drained
//! between deliveries, outputs turned into replies and events, departures of lost
//! processes, and records forgotten once nobody holds them.

use std::collections::BTreeSet;

use pmix_core::group::{
    CollectiveOp, Completion, GroupId, GroupOutput, Groups, Message, Notification,
    Output as GroupOut, ProcId,
};
use pmix_wire::{DataRange, Info, Proc};

use super::*;

/// Drains every replica's outputs and delivers the messages between replicas, one
/// at a time, until nothing is left.
pub(super) fn pump(core: &mut Core) {
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
pub(super) fn handle(core: &mut Core, p: &ProcKey, out: GroupOutput) {
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
pub(super) fn notify(core: &mut Core, p: &ProcKey, group: &GroupId, n: Notification) {
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
    core.raise(n.code, &source, info, DataRange::CUSTOM, None);
}

/// `p`'s call `c` on `group` completed: answer its request.
pub(super) fn complete(core: &mut Core, p: &ProcKey, group: &GroupId, c: Completion) {
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
        core.reply_status(pd.conn, pd.tag, pending_command(pd.op), c.status);
    }
}

/// Forgets the record of `name` once no member holds the group.
pub(super) fn collect(core: &mut Core, name: &str) {
    if core
        .groups
        .records
        .get(name)
        .is_some_and(|r| r.holders.is_empty())
    {
        core.groups.records.remove(name);
    }
}

/// `p` is gone: its replicas go, and every other replica of its groups hears of the
/// loss (after every message `p` sent, all delivered by now).
pub(super) fn depart(core: &mut Core, p: &ProcKey) {
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
    core.fences_changed();
}
