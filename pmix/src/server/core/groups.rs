//! The group commands (PROTOCOL.md §6.9, DESIGN §4): **the seam** for the groups
//! work, which will drive pmix-core's `Groups` from here.
//!
//! Today every group request (GROUP_CONSTRUCT, GROUP_DESTRUCT, GROUP_LEAVE, and the
//! raw GROUP_JOIN / GROUP_INVITE) is answered with a lone
//! `PMIX_ERR_NOT_SUPPORTED`, and no group is known to fences.
//!
//! The seam, called by the rest of the core:
//! - [`request`]: a decoded group request from `conn` (reply with
//!   [`Core::reply`] / [`Core::reply_status`] on `tag`; events with
//!   `super::events::raise`);
//! - [`fence_members`]: a fence naming a group id instead of a namespace, and
//!   [`fence_departed`]: whether a member of such a fence will never join it
//!   (and the status a non-FT fence then fails with); after a leave, call
//!   `super::fence::evaluate_all` so waiting fences are settled;
//! - [`conn_closed`], [`proc_lost`]: departures, for in-flight collectives;
//! - [`tick`], [`next_deadline`]: timers;
//! - [`GroupState`]: the state, a field of [`Core`] (`core.groups`).

use std::time::Instant;

use pmix_wire::{Request, Status};

use super::{ConnId, Core, ProcKey};

/// The groups' state (empty until the groups work lands).
#[derive(Debug, Default)]
pub(crate) struct GroupState {}

/// A group request from `conn` on `tag` (`req` is one of the group variants of
/// [`Request`]). Today: a lone `PMIX_ERR_NOT_SUPPORTED`.
pub(crate) fn request(core: &mut Core, conn: ConnId, tag: u32, req: Request, now: Instant) {
    let _ = now;
    core.reply_status(conn, tag, req.command(), Status::NOT_SUPPORTED);
}

/// The members a fence over group `name` waits for: `None` when `name` is no group
/// (the fence is refused with `PMIX_ERR_BAD_PARAM`), `Some(Err(status))` to refuse
/// it with `status` (`PMIX_ERR_NOT_A_MEMBER`, …).
pub(crate) fn fence_members(core: &Core, name: &str) -> Option<Result<Vec<ProcKey>, Status>> {
    let _ = (core, name);
    None
}

/// For a fence that named the group ids `groups`: `Some(status)` when member
/// `proc`, which has not joined the fence, never will (it left the group:
/// `PMIX_ERR_NOT_A_MEMBER`; it was lost: `PMIX_ERR_PROC_TERM_WO_SYNC`, DESIGN §4);
/// a fence without `PMIX_GROUP_FT_COLLECTIVE` fails with that status, an FT one
/// completes without `proc`. `None`: the core decides (lost or finalized ranks
/// fail a non-FT fence with `super::FENCE_LOST`). Today: always `None`.
pub(crate) fn fence_departed(core: &Core, groups: &[String], proc: &ProcKey) -> Option<Status> {
    let _ = (core, groups, proc);
    None
}

/// `conn` closed (before [`proc_lost`] when it was a rank that had not finalized).
pub(crate) fn conn_closed(core: &mut Core, conn: ConnId, now: Instant) {
    let _ = (core, conn, now);
}

/// A rank was lost.
pub(crate) fn proc_lost(core: &mut Core, proc: &ProcKey, now: Instant) {
    let _ = (core, proc, now);
}

/// Timers due.
pub(crate) fn tick(core: &mut Core, now: Instant) {
    let _ = (core, now);
}

/// The next group timer.
pub(crate) fn next_deadline(core: &Core) -> Option<Instant> {
    let GroupState {} = &core.groups;
    None
}
