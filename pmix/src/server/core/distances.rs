//! COMPUTE_DEVICE_DISTANCES (docs/wire.md §6.10, docs/design.md §3, §6): answered from
//! [`super::CoreConfig::service`], as the runtime answers `PMIx_Compute_distances`.
//!
//! - the topology: the request's (hwloc XML, read with pmix-hwloc's parser and
//!   given the server's host name for its uuids), else the service's own (loaded on
//!   first use: the first request reads the topology source on the calling thread;
//!   an I/O layer that must not block then preloads it with
//!   [`crate::Service::topology`]);
//! - the origin: `PMIX_DEVICE_DIST_ORIGIN` (`pmix.dev.dist.origin`, a device in
//!   any form `PMIX_DEVICE_ID` accepts), else the request's cpuset, else the
//!   requester's registered `pmix.cpuset` ([`super::RankSpec::cpuset`]); a cpuset
//!   is hwloc's list or mask syntax, with or without a leading `hwloc:`
//!   ([`CpuSet::parse_pmix`]). With none of them
//!   the answer is `PMIX_ERR_BAD_PARAM` (the server's own binding says nothing
//!   about the requester);
//! - the devices: `pmix.dev.type` (the union of every one given) and every
//!   `pmix.dev.id`, read by [`crate::Directives::from_infos`] (a malformed one is
//!   `PMIX_ERR_BAD_PARAM`, an unknown one flagged required
//!   `PMIX_ERR_NOT_SUPPORTED`).
//!
//! The reply is `STATUS 0` and one DEVICE_DIST per entry (uuid, OS name, type,
//! min and max distance), in the core's stable order; a query without an answer
//! gets its own status alone (`PMIX_ERR_NOT_FOUND`, `PMIX_ERR_BAD_PARAM`, …); a
//! server without a service, `PMIX_ERR_NOT_SUPPORTED`.

use std::sync::Arc;

use pmix_core::{CpuSet, PmixError, Topology};
use pmix_wire::msg::{ComputeDeviceDistances, DistancesReply};
use pmix_wire::{Command, DeviceDist, Reply, Status, WStr};

use super::{ConnId, Core};

/// The key of `PMIX_DEVICE_DIST_ORIGIN`.
pub const ORIGIN_KEY: &str = pmix_wire::keys::DEVICE_DIST_ORIGIN;

fn bad(core: &mut Core, conn: ConnId, tag: u32) {
    core.reply_status(
        conn,
        tag,
        Command::ComputeDeviceDistances,
        Status::ERR_BAD_PARAM,
    );
}

/// COMPUTE_DEVICE_DISTANCES (module docs).
pub(super) fn compute(core: &mut Core, conn: ConnId, tag: u32, d: ComputeDeviceDistances) {
    let cmd = Command::ComputeDeviceDistances;
    let Some(service) = core.cfg.service.clone() else {
        return core.reply_status(conn, tag, cmd, Status::ERR_NOT_SUPPORTED);
    };
    let Some(peer) = core.conns.get(&conn) else {
        return;
    };
    // The topology the request names.
    let given: Option<Arc<Topology>> = match &d.topo.xml {
        None => None,
        Some(xml) => {
            let parsed = xml
                .as_str()
                .and_then(|x| pmix_hwloc::xml::from_str(x).ok())
                .and_then(|t| crate::topology::apply_hostname(t, Some(&core.cfg.hostname)).ok());
            match parsed {
                Some(t) => Some(Arc::new(t)),
                None => return bad(core, conn, tag),
            }
        }
    };
    // The cpuset: the request's, else the requester's registered one.
    let registered = core
        .namespaces
        .get(&peer.proc.0)
        .and_then(|ns| ns.spec.ranks.iter().find(|r| r.rank == peer.proc.1))
        .and_then(|r| r.cpuset.clone());
    let text = d
        .cpuset
        .0
        .as_ref()
        .and_then(|c| c.as_str().map(str::to_string))
        .or(registered);
    let cpuset = match text.as_deref() {
        None => None,
        Some(t) => match CpuSet::parse_pmix(t) {
            Ok(c) => Some(c),
            Err(_) => return bad(core, conn, tag),
        },
    };
    let directives = match crate::Directives::from_infos(&d.info) {
        Ok(d) => d,
        Err(e) => return core.reply_status(conn, tag, cmd, Status(e.status().0)),
    };
    if directives.origin.is_none() && cpuset.is_none() {
        return bad(core, conn, tag);
    }
    let answer = directives.request(given.as_ref(), cpuset.as_ref(), |req| {
        service.answer(req, |topo, entries| {
            entries
                .iter()
                .filter_map(|e| {
                    let dev = topo.device(e.device)?;
                    Some(DeviceDist {
                        uuid: Some(WStr::from(dev.uuid())),
                        osname: Some(WStr::from(dev.name())),
                        ty: dev.kind().0,
                        mindist: e.mindist,
                        maxdist: e.maxdist,
                    })
                })
                .collect::<Vec<_>>()
        })
    });
    match answer {
        Ok(dists) if !dists.is_empty() => core.reply(
            conn,
            tag,
            &Reply::ComputeDeviceDistances(DistancesReply {
                status: Status::SUCCESS,
                dists,
            }),
        ),
        Ok(_) => core.reply_status(conn, tag, cmd, Status::ERR_NOT_FOUND),
        Err(e) => core.reply_status(conn, tag, cmd, Status(e.status().0)),
    }
}
