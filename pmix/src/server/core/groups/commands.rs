//! GROUP_CONSTRUCT, GROUP_DESTRUCT and GROUP_LEAVE: each checked against the
//! group's record (created by the first construct) and counted in it.

use std::time::Instant;

use pmix_core::group::GroupId;
use pmix_wire::msg::{GroupConstruct, GroupDestruct, GroupLeave};
use pmix_wire::{Command, Info, Proc, Status, Value};

use super::record::{Phase, Record, Standing, announce_left, index, unindex};
use super::*;

fn parse_id(s: &pmix_wire::WStr) -> Option<GroupId> {
    GroupId::from_bytes(s.as_bytes()).ok()
}

/// Whether `procs` names the membership of `rec` without expanding it again: the
/// procs its first construct listed, all of still registered namespaces.
fn same_spec(core: &Core, rec: &Record, procs: &[Proc]) -> bool {
    rec.spec == procs
        && procs.iter().all(|p| {
            p.nspace
                .as_str()
                .is_some_and(|n| core.namespaces.contains_key(n))
        })
}

/// GROUP_CONSTRUCT by `me` on `conn`, request `tag`: checked, the record
/// created on the first call, the contribution counted; the reply waits for the
/// construct to complete.
pub(super) fn construct(
    core: &mut Core,
    conn: ConnId,
    tag: u32,
    me: ProcKey,
    c: GroupConstruct,
    now: Instant,
) {
    let cmd = Command::GroupConstruct;
    let bad = Status::ERR_BAD_PARAM;
    let Some(gid) = parse_id(&c.grp) else {
        return core.reply_status(conn, tag, cmd, bad);
    };
    let name = group_name(&gid);
    // A construct listing what the first one listed needs no expansion: one
    // lookup per call, whatever the group's size.
    let known = core
        .groups
        .records
        .get(&name)
        .filter(|r| same_spec(core, r, &c.procs));
    let fresh = match known {
        Some(rec) => {
            if rec.index_of(&me).is_none() {
                return core.reply_status(conn, tag, cmd, bad);
            }
            None
        }
        None => {
            let members = match expand(core, &c.procs) {
                Ok(m) => m,
                Err(s) => return core.reply_status(conn, tag, cmd, s),
            };
            if members.binary_search(&me).is_err() {
                return core.reply_status(conn, tag, cmd, bad);
            }
            Some(members)
        }
    };
    let held = core.groups.by_proc.get(&me).map_or(0, |s| s.len());
    if held >= core.cfg.max_pending {
        return core.reply_status(conn, tag, cmd, super::super::ERR_OUT_OF_RESOURCE);
    }
    match (core.groups.records.get(&name), fresh) {
        (Some(rec), fresh) => {
            // The id is in use: only its construct, over the same members, may go on.
            let same = fresh.is_none_or(|m| m == rec.roster);
            if rec.phase != Phase::Constructing || !same {
                return core.reply_status(conn, tag, cmd, bad);
            }
        }
        (None, Some(members)) => open(core, &name, c.procs.clone(), members),
        (None, None) => return core.reply_status(conn, tag, cmd, bad),
    }
    let ft = info_flag(&c.info, super::super::FT_KEY) || info_flag(&c.info, OPTIONAL_KEY);
    let notterm = info_flag(&c.info, NOTIFY_TERMINATION_KEY);
    let Some(rec) = core.groups.records.get_mut(&name) else {
        return core.reply_status(conn, tag, cmd, bad);
    };
    let Some(i) = rec.index_of(&me) else {
        return core.reply_status(conn, tag, cmd, bad);
    };
    if rec.members[i].standing != Standing::Holder {
        // It left (declined), or was reported gone.
        return core.reply_status(conn, tag, cmd, Status::ERR_NOT_A_MEMBER);
    }
    if rec.members[i].contributed {
        // Constructing twice.
        return core.reply_status(conn, tag, cmd, bad);
    }
    rec.assign_ctxid |= info_flag(&c.info, ASSIGN_CTXID_KEY);
    rec.notterm |= notterm;
    if let Some(d) = info_deadline(&c.info, now, None) {
        rec.deadline = Some(rec.deadline.map_or(d, |x| x.min(d)));
    }
    rec.members[i].ft = ft;
    rec.members[i].notterm = notterm;
    rec.members[i].info = group_info(&c.info);
    rec.contribute(i, Some(Pending { conn, tag, cmd }));
    settle(core, &name);
}

/// Creates the record of group `name` over `members` (sorted), first listed as
/// `spec`: every live member holds it (invited), members already gone count as
/// lost before contributing.
pub(super) fn open(core: &mut Core, name: &str, spec: Vec<Proc>, members: Vec<ProcKey>) {
    let remote: Vec<bool> = members.iter().map(|m| !core.is_local(m)).collect();
    let dead: Vec<bool> = members
        .iter()
        .zip(&remote)
        .map(|(m, &r)| !r && gone(core, m))
        .collect();
    core.groups.by_proc.reserve(members.len());
    for ((m, d), r) in members.iter().zip(&dead).zip(&remote) {
        if !d && !r {
            index(core, m, name);
        }
    }
    let rec = Record::new(spec, members, &dead, &remote);
    core.groups.records.insert(name.to_string(), rec);
}

/// GROUP_DESTRUCT by `me`: the first call opens the destruct over the current
/// holders, each call contributes; the reply waits for it to complete.
pub(super) fn destruct(core: &mut Core, conn: ConnId, tag: u32, me: ProcKey, d: GroupDestruct) {
    let cmd = Command::GroupDestruct;
    let Some(gid) = parse_id(&d.grp) else {
        return core.reply_status(conn, tag, cmd, Status::ERR_BAD_PARAM);
    };
    let name = group_name(&gid);
    let Some(rec) = core.groups.records.get_mut(&name) else {
        return core.reply_status(conn, tag, cmd, Status::ERR_NOT_FOUND);
    };
    let Some(i) = rec.index_of(&me) else {
        return core.reply_status(conn, tag, cmd, Status::ERR_NOT_FOUND);
    };
    let m = &rec.members[i];
    if m.standing != Standing::Holder {
        return core.reply_status(conn, tag, cmd, Status::ERR_NOT_FOUND);
    }
    match rec.phase {
        // Invited only: it never joined.
        Phase::Constructing if !m.contributed => {
            return core.reply_status(conn, tag, cmd, Status::ERR_NOT_FOUND);
        }
        // A call of its own is in flight.
        Phase::Constructing => return core.reply_status(conn, tag, cmd, Status::ERR_BAD_PARAM),
        Phase::Destructing if m.contributed => {
            return core.reply_status(conn, tag, cmd, Status::ERR_BAD_PARAM);
        }
        Phase::Destructing => {}
        Phase::Active => rec.open_destruct(),
    }
    rec.contribute(i, Some(Pending { conn, tag, cmd }));
    settle(core, &name);
}

/// GROUP_LEAVE by `me`: answered at once, then its waiting call (if any) gets
/// `PMIX_ERR_NOT_A_MEMBER` and the other holders `PMIX_GROUP_LEFT`; the
/// collective in flight counts it departed.
pub(super) fn leave(core: &mut Core, conn: ConnId, tag: u32, me: ProcKey, l: GroupLeave) {
    let cmd = Command::GroupLeave;
    let Some(gid) = parse_id(&l.grp) else {
        return core.reply_status(conn, tag, cmd, Status::ERR_BAD_PARAM);
    };
    let name = group_name(&gid);
    let Some(rec) = core.groups.records.get_mut(&name) else {
        return core.reply_status(conn, tag, cmd, Status::ERR_NOT_FOUND);
    };
    let Some(i) = rec
        .index_of(&me)
        .filter(|&i| rec.members[i].standing == Standing::Holder)
    else {
        return core.reply_status(conn, tag, cmd, Status::ERR_NOT_FOUND);
    };
    let cancelled = rec.depart(i, false);
    unindex(core, &me, &name);
    // Complete as soon as the event is generated: before anyone receives it.
    core.reply_status(conn, tag, cmd, Status::SUCCESS);
    if let Some(p) = cancelled {
        core.reply_status(p.conn, p.tag, p.cmd, Status::ERR_NOT_A_MEMBER);
    }
    announce_left(core, &name, &me);
    super::spanning::forward_left(core, &name, &me);
    settle(core, &name);
    core.fences_changed();
}

/// The infos of a construct's `PMIX_GROUP_INFO` (a DATA_ARRAY of INFO, or one
/// INFO); nothing when it is absent or of another type.
fn group_info(info: &[Info]) -> Vec<Info> {
    info_value(info, GROUP_INFO_KEY)
        .and_then(Value::infos)
        .map(|v| v.into_iter().cloned().collect())
        .unwrap_or_default()
}
