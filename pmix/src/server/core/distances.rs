//! COMPUTE_DEVICE_DISTANCES (PROTOCOL.md §6.10).
//!
//! **Not implemented yet**: answered with a lone `PMIX_ERR_NOT_SUPPORTED`. The
//! plan: compute with [`super::CoreConfig::service`]'s topology, the request's
//! cpuset (or the requester's `pmix.cpuset`) and its directives, including
//! `PMIX_DEVICE_DIST_ORIGIN`.

use pmix_wire::msg::ComputeDeviceDistances;
use pmix_wire::{Command, Status};

use super::{ConnId, Core};

/// COMPUTE_DEVICE_DISTANCES: not supported yet (module docs).
pub(super) fn compute(core: &mut Core, conn: ConnId, tag: u32, d: ComputeDeviceDistances) {
    let _ = d;
    core.reply_status(
        conn,
        tag,
        Command::ComputeDeviceDistances,
        Status::NOT_SUPPORTED,
    );
}
