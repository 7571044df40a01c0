//! GROUP_CONSTRUCT, GROUP_DESTRUCT and GROUP_LEAVE: each turned into a call on the
//! caller's replica (creating the group's record and invited replicas on the first
//! construct), and the construct's reply in the client's layout.

use std::collections::BTreeSet;
use std::time::Instant;

use pmix_core::PmixError;
use pmix_core::group::{CollectiveOp, ConstructOptions, GroupId, Groups, ProcId, Roster};
use pmix_wire::msg::{GroupConstruct, GroupConstructReply, GroupDestruct, GroupLeave};
use pmix_wire::{Command, GroupLayout, Proc, Reply, Size, Status};

use super::*;

fn parse_id(s: &pmix_wire::WStr) -> Option<GroupId> {
    GroupId::from_bytes(s.as_bytes()).ok()
}

pub(super) fn construct(
    core: &mut Core,
    conn: ConnId,
    tag: u32,
    me: ProcKey,
    c: GroupConstruct,
    now: Instant,
) {
    let cmd = Command::GroupConstruct;
    let bad = pmix_core::Status::ERR_BAD_PARAM;
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
        return core.reply_status(conn, tag, cmd, super::super::ERR_OUT_OF_RESOURCE);
    }
    let opts = ConstructOptions {
        ft_collective: info_flag(&c.info, super::super::FT_KEY) || info_flag(&c.info, OPTIONAL_KEY),
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
            return core.reply_status(conn, tag, cmd, pmix_core::Status::ERR_NOT_A_MEMBER);
        }
        rec.assign_ctxid |= info_flag(&c.info, ASSIGN_CTXID_KEY);
        if let Some(d) = info_deadline(&c.info, now, None) {
            rec.deadline = Some(rec.deadline.map_or(d, |x| x.min(d)));
        }
    }
    let Some(table) = core.groups.tables.get_mut(&me) else {
        return core.reply_status(conn, tag, cmd, pmix_core::Status::ERR_NOT_A_MEMBER);
    };
    if let Err(e) = table.construct(gid, roster, opts) {
        return core.reply_status(conn, tag, cmd, e.status());
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
pub(super) fn open(
    core: &mut Core,
    gid: &GroupId,
    name: &str,
    members: &[ProcKey],
) -> Result<Roster, Status> {
    let bad = pmix_core::Status::ERR_BAD_PARAM;
    let ids: Vec<ProcId> = members
        .iter()
        .map(proc_id)
        .collect::<Option<_>>()
        .ok_or(bad)?;
    let roster = Roster::new(&ids).map_err(|e| e.status())?;
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
            return Err(e.status());
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

pub(super) fn destruct(core: &mut Core, conn: ConnId, tag: u32, me: ProcKey, d: GroupDestruct) {
    let cmd = Command::GroupDestruct;
    let Some(gid) = parse_id(&d.grp) else {
        return core.reply_status(conn, tag, cmd, pmix_core::Status::ERR_BAD_PARAM);
    };
    let Some(table) = core.groups.tables.get_mut(&me) else {
        return core.reply_status(conn, tag, cmd, pmix_core::Status::ERR_NOT_FOUND);
    };
    if let Err(e) = table.destruct(&gid) {
        return core.reply_status(conn, tag, cmd, e.status());
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

pub(super) fn leave(core: &mut Core, conn: ConnId, tag: u32, me: ProcKey, l: GroupLeave) {
    let cmd = Command::GroupLeave;
    let Some(gid) = parse_id(&l.grp) else {
        return core.reply_status(conn, tag, cmd, pmix_core::Status::ERR_BAD_PARAM);
    };
    let Some(table) = core.groups.tables.get_mut(&me) else {
        return core.reply_status(conn, tag, cmd, pmix_core::Status::ERR_NOT_FOUND);
    };
    let dep = match table.leave(&gid) {
        Ok(d) => d,
        Err(e) => return core.reply_status(conn, tag, cmd, e.status()),
    };
    // Complete as soon as the event is generated: before anyone receives it.
    core.reply_status(conn, tag, cmd, Status::SUCCESS);
    if dep.cancelled().is_some()
        && let Some(p) = core.groups.pending.remove(&(me.clone(), gid))
    {
        let c = pending_command(p.op);
        core.reply_status(p.conn, p.tag, c, pmix_core::Status::ERR_NOT_A_MEMBER);
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
    core.fences_changed();
}

pub(super) fn pending_command(op: CollectiveOp) -> Command {
    match op {
        CollectiveOp::Destruct => Command::GroupDestruct,
        _ => Command::GroupConstruct,
    }
}

/// The successful construct reply, in the layout of the client's version.
pub(super) fn construct_reply(
    core: &mut Core,
    pd: Pending,
    members: &[ProcKey],
    ctxid: Option<u64>,
) {
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
