//! 4.2 invite/join, which clients build from NOTIFYs: the server follows the
//! invitation and its answers, and records the group the leader's
//! `PMIX_GROUP_CONSTRUCT_COMPLETE` makes.

use std::collections::BTreeSet;

use pmix_core::group::GroupId;
use pmix_wire::{Info, Proc, Status};

use super::settle;
use super::*;

/// A 4.2 invite in flight, as the server sees it in the NOTIFYs that make it.
#[derive(Debug)]
pub(super) struct Invitation {
    /// The inviter.
    pub(super) leader: ProcKey,
    /// The group id.
    grp: String,
    /// Who was invited.
    invitees: Vec<ProcKey>,
    /// Who accepted (`PMIX_GROUP_INVITE_ACCEPTED` to the leader).
    accepted: BTreeSet<ProcKey>,
    /// Who answered at all (accepted or declined).
    answered: BTreeSet<ProcKey>,
}

/// The procs of a PROC value or a DATA_ARRAY of PROC (`pmix.evrange`).
fn procs_of(v: Option<&pmix_wire::Value>) -> Option<Vec<Proc>> {
    match v? {
        pmix_wire::Value::Proc(p) => Some(vec![p.clone()]),
        pmix_wire::Value::DataArray(a) => Some(
            a.items
                .iter()
                .filter_map(|v| match v {
                    pmix_wire::Value::Proc(p) => Some(p.clone()),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

/// A client's NOTIFY of `code` with `info` from `source`, watched for the events a
/// 4.2 invite/join is made of (docs/wire.md §6.9); the core's NOTIFY path calls it
/// for every client NOTIFY.
///
/// - `PMIX_GROUP_INVITED` (`pmix.grp.id`, `pmix.evrange` = the invitees): an
///   invitation by `source` is remembered.
/// - `PMIX_GROUP_INVITE_ACCEPTED` / `_DECLINED` (`pmix.evrange` = the leader; no
///   group id on the wire): the answer counts for the oldest invitation of that
///   leader that lists `source` and that it has not answered.
/// - `PMIX_GROUP_CONSTRUCT_COMPLETE` (`pmix.grp.id`, `pmix.evrange`): the group
///   becomes known here: the leader and the invitees that accepted (a 4.2 leader
///   ranges this event to every invitee, decliners included); without a
///   remembered invitation, the listed procs and the source. A constructed
///   record is made, so later fences, leaves and destructs over the id work. Ignored when the id is already known or a member is not a live local
///   rank.
pub(crate) fn notified(core: &mut Core, source: &ProcKey, code: Status, info: &[Info]) {
    let gid = || {
        info_value(info, GROUP_ID_KEY)
            .and_then(|v| v.as_str())
            .and_then(|s| GroupId::new(s).ok())
    };
    let range = procs_of(info_value(info, EVRANGE_KEY));
    if code == GROUP_INVITED {
        let (Some(gid), Some(range)) = (gid(), range) else {
            return;
        };
        let Ok(invitees) = expand(core, &range) else {
            return;
        };
        let mine = |i: &Invitation| i.leader == *source;
        let invs = &mut core.groups.invitations;
        // At most max_pending per leader: the oldest goes.
        if invs.iter().filter(|i| mine(i)).count() >= core.cfg.max_pending
            && let Some(k) = invs.iter().position(mine)
        {
            invs.remove(k);
        }
        invs.push(Invitation {
            leader: source.clone(),
            grp: group_name(&gid),
            invitees,
            accepted: BTreeSet::new(),
            answered: BTreeSet::new(),
        });
    } else if code == GROUP_INVITE_ACCEPTED || code == GROUP_INVITE_DECLINED {
        let Some([leader]) = range.as_deref() else {
            return;
        };
        let Some(name) = leader.nspace.as_str() else {
            return;
        };
        let leader = (name.to_string(), leader.rank.0);
        if let Some(inv) = core.groups.invitations.iter_mut().find(|i| {
            i.leader == leader && i.invitees.contains(source) && !i.answered.contains(source)
        }) {
            inv.answered.insert(source.clone());
            if code == GROUP_INVITE_ACCEPTED {
                inv.accepted.insert(source.clone());
            }
        }
    } else if code == GROUP_CONSTRUCT_COMPLETE {
        let Some(gid) = gid() else {
            return;
        };
        let name = group_name(&gid);
        let invs = &mut core.groups.invitations;
        let mut procs = match invs
            .iter()
            .position(|i| i.leader == *source && i.grp == name)
        {
            Some(k) => {
                let inv = invs.remove(k);
                inv.accepted
                    .iter()
                    .map(|p| Proc::new(p.0.as_str(), p.1))
                    .collect()
            }
            None => match range {
                Some(r) => r,
                None => return,
            },
        };
        procs.push(Proc::new(source.0.as_str(), source.1));
        record_constructed(core, &name, &procs);
    }
}

/// Makes group `name` over `procs` known as constructed (an invite/join that
/// completed): a record whose members all contributed, without waiting requests.
fn record_constructed(core: &mut Core, name: &str, procs: &[Proc]) {
    let Ok(members) = expand(core, procs) else {
        return;
    };
    if core.groups.records.contains_key(name) || members.iter().any(|m| gone(core, m)) {
        return;
    }
    let n = members.len();
    open(core, name, procs.to_vec(), members);
    if let Some(rec) = core.groups.records.get_mut(name) {
        for i in 0..n {
            rec.contribute(i, None);
        }
        // Members on other nodes joined there: nothing to ask the host.
        rec.remote_accounted();
    }
    settle(core, name);
}
