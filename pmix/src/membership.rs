//! The groups this process belongs to, as the instance records them (id → members):
//! a construct or an invite records a group, a destruct or a leave drops it, and a
//! `PMIX_GROUP_LEFT` naming another member removes that member. The calls that
//! change it are in `calls.rs` and `invite.rs`; rank-state tracking (`ft.rs`) reads
//! it. Nothing here knows the instance.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::Error;
use crate::events::EventInfo;

/// The groups of an instance: id → members.
pub(crate) type Groups = HashMap<String, Vec<pmix_wire::Proc>>;

pub(crate) fn lock_groups(g: &Mutex<Groups>) -> MutexGuard<'_, Groups> {
    g.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a `PMIX_GROUP_LEFT` event changes: the departed member leaves the record.
pub(crate) fn group_event(groups: &Mutex<Groups>, ev: &EventInfo) {
    if ev.status != pmix_core::Status::GROUP_LEFT.0 {
        return;
    }
    let (grp, who) = (ev.group_id(), ev.affected_proc());
    if let (Some(grp), Some(who)) = (grp, who)
        && let Some(members) = lock_groups(groups).get_mut(grp)
    {
        members.retain(|m| m != who);
    }
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
