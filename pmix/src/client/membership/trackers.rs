//! The rank-state trackers of an instance, fed by events (docs/design.md §5): the
//! processes seen fail, and one [`pmix_core::ftstate::Tracker`] per group asked
//! about, with its members and its round. `client/calls/ft.rs` makes them and runs the
//! exchanges; this module only holds them and applies what an event says, on the
//! progress thread, before the user's handlers. Nothing here knows the instance.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use pmix_core::Status;
use pmix_core::ftstate::Tracker;
use pmix_wire::{Proc, Rank};

use crate::client::events::EventInfo;

/// The event `Pmix::ft_revoke` sends to a group's members (a pmix-rs code, in
/// PMIx's range for codes defined outside it): `pmix.grp.id` names the group.
pub const REVOKED_EVENT: i32 = Status::FT_EVENT_REVOKED.0;

/// The codes the detector listens to.
pub(crate) const DETECTED: [i32; 5] = [
    Status::ERR_PROC_ABORTED.0,
    Status::EVENT_PROC_TERMINATED.0,
    Status::GROUP_MEMBER_FAILED.0,
    Status::GROUP_LEFT.0,
    REVOKED_EVENT,
];

/// What the instance knows about failures: the processes seen fail, and a tracker
/// per group asked about.
#[derive(Default)]
pub(crate) struct FtState {
    pub(crate) registered: bool,
    pub(crate) dead: HashSet<Proc>,
    pub(crate) groups: HashMap<String, FtGroup>,
    /// The PMIx groups this process had a tracker of and is no longer in (it left,
    /// or the group was destructed): their calls answer `PMIX_ERR_NOT_A_MEMBER`.
    pub(crate) gone: HashSet<String>,
}

pub(crate) struct FtGroup {
    pub(crate) members: Members,
    pub(crate) tracker: Tracker,
    pub(crate) round: u64,
}

/// A group's members, by group rank. A namespace's are its ranks (nothing stored per
/// member); a PMIx group's are its processes, sorted.
#[derive(Clone)]
pub(crate) enum Members {
    Namespace { nspace: String, size: u32 },
    Listed(Arc<[Proc]>),
}

impl Members {
    pub(crate) fn len(&self) -> u32 {
        match self {
            Members::Namespace { size, .. } => *size,
            Members::Listed(l) => l.len() as u32,
        }
    }

    /// The process of group rank `r` (`r < len`).
    pub(crate) fn get(&self, r: u32) -> Proc {
        match self {
            Members::Namespace { nspace, .. } => Proc::new(nspace.as_str(), r),
            Members::Listed(l) => l[r as usize].clone(),
        }
    }

    pub(crate) fn rank_of(&self, p: &Proc) -> Option<u32> {
        match self {
            Members::Namespace { nspace, size } => {
                (p.nspace.as_str() == Some(nspace.as_str()) && p.rank.0 < *size).then_some(p.rank.0)
            }
            Members::Listed(l) => l.binary_search(p).ok().map(|i| i as u32),
        }
    }

    /// The processes an event to the group names.
    pub(crate) fn procs(&self) -> Vec<Proc> {
        match self {
            Members::Namespace { nspace, .. } => vec![Proc::new(nspace.as_str(), Rank::WILDCARD.0)],
            Members::Listed(l) => l.to_vec(),
        }
    }

    /// What the exchange's fence names: the namespace, or the group's id (the
    /// server resolves it to the members that have not left, docs/design.md §4).
    pub(crate) fn fence_procs(&self, grp: &str) -> Vec<Proc> {
        match self {
            Members::Namespace { nspace, .. } => vec![Proc::new(nspace.as_str(), Rank::WILDCARD.0)],
            Members::Listed(_) => vec![Proc::new(grp, Rank::WILDCARD.0)],
        }
    }
}

/// Whether the trackers and the group records take what `ev` says (every event
/// still reaches the handlers, with its real source: the server stamps it). A
/// process's failure (`PMIX_ERR_PROC_ABORTED`, `PMIX_EVENT_PROC_TERMINATED`,
/// `PMIX_GROUP_MEMBER_FAILED`) and a departure (`PMIX_GROUP_LEFT`) only from
/// `server`'s namespace (the server, or its host's daemons on other nodes, which
/// share it) or in the name of the process it is about (Open MPI's `orted`s relay a
/// rank's abort with that rank as the source; a process can so declare only itself
/// failed or gone); a revocation from there or from a member of the group it names. A client or tool that notifies the rest is
/// heard by the handlers and believed by nobody. Other codes: always.
pub(crate) fn believed(st: &FtState, ev: &EventInfo, server: &Proc) -> bool {
    if !DETECTED.contains(&ev.status) || ev.source.nspace == server.nspace {
        return true;
    }
    match ev.status {
        REVOKED_EVENT => ev
            .group_id()
            .and_then(|g| st.groups.get(g))
            .is_some_and(|g| g.members.rank_of(&ev.source).is_some()),
        // A departure or a failure in the name of the process it is about: only
        // itself (Open MPI's daemons relay a dead rank's abort in its name).
        _ => ev.affected_proc() == Some(&ev.source),
    }
}

/// What an event tells the trackers (run on the progress thread for every event
/// from the server, before the user's handlers, once [`believed`]).
pub(crate) fn on_event(st: &mut FtState, ev: &EventInfo) {
    if !DETECTED.contains(&ev.status) {
        return;
    }
    let (grp, who) = (ev.group_id(), ev.affected_proc().cloned());
    match ev.status {
        REVOKED_EVENT => {
            if let Some(g) = grp.and_then(|g| st.groups.get_mut(g)) {
                g.tracker.revoke();
            }
        }
        s if s == Status::GROUP_LEFT.0 => {
            if let (Some(g), Some(who)) = (grp.and_then(|g| st.groups.get_mut(g)), who)
                && let Some(r) = g.members.rank_of(&who)
            {
                let _ = g.tracker.report_left(r);
            }
        }
        _ => {
            let Some(who) = who else { return };
            st.dead.insert(who.clone());
            for g in st.groups.values_mut() {
                if let Some(r) = g.members.rank_of(&who) {
                    // A member that left cannot fail in the group: ignored.
                    let _ = g.tracker.report_failure(r);
                }
            }
        }
    }
}
