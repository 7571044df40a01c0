//! The groups this process belongs to, as the instance records them (id → members):
//! a construct or an invite records a group, a destruct or a leave drops it, and a
//! `PMIX_GROUP_LEFT` naming another member removes that member. The calls that
//! change it are in `client/calls/` (`mod.rs` and `invite.rs`); rank-state tracking
//! (`calls/ft.rs`) reads it. The records and the rank-state trackers (`trackers.rs`)
//! have one owner, [`Membership`], under one lock: an event updates both at once, and
//! `ft.rs` reads a group's members from the guard it already holds. Nothing here
//! knows the instance (which holds a [`Membership`]; so no call may live here).

pub(crate) mod trackers;

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::client::events::EventInfo;
use crate::error::Error;
use trackers::FtState;

/// The groups of an instance: id → members.
pub(crate) type Groups = HashMap<String, Vec<pmix_wire::Proc>>;

/// What an instance knows of its groups: the records and the rank-state trackers.
#[derive(Default)]
pub(crate) struct Membership {
    /// The groups this process is in, and their members as it knows them.
    pub(crate) groups: Groups,
    /// The failures seen and a tracker per group (`trackers.rs`).
    pub(crate) ft: FtState,
}

/// The instance's [`Membership`], locked (no user code runs under it, and no request
/// to the server is made while it is held).
pub(crate) fn lock_groups(g: &Mutex<Membership>) -> MutexGuard<'_, Membership> {
    g.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a server event changes: a `PMIX_GROUP_LEFT` takes the departed member out of
/// the record, then the trackers learn of the event ([`trackers::on_event`]);
/// only what [`trackers::believed`] believes of `server`'s events counts.
pub(crate) fn group_event(m: &Mutex<Membership>, ev: &EventInfo, server: &pmix_wire::Proc) {
    let mut m = lock_groups(m);
    if !trackers::believed(&m.ft, ev, server) {
        return;
    }
    if ev.status == pmix_core::Status::GROUP_LEFT.0 {
        let (grp, who) = (ev.group_id(), ev.affected_proc());
        if let (Some(grp), Some(who)) = (grp, who)
            && let Some(members) = m.groups.get_mut(grp)
        {
            members.retain(|m| m != who);
        }
    }
    trackers::on_event(&mut m.ft, ev);
}

/// Checks a group id: 1 to 255 bytes, no NUL.
pub(crate) fn check_grp(grp: &str) -> Result<(), Error> {
    if grp.is_empty() || grp.len() > crate::client::env::MAX_NSLEN || grp.contains('\0') {
        return Err(Error::BadParam(
            "a group id is 1 to 255 bytes without NUL".into(),
        ));
    }
    Ok(())
}
