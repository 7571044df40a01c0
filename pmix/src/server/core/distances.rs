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

use std::collections::HashMap;
use std::sync::Arc;

use pmix_core::{CpuSet, DeviceDistance, PmixError, Topology};
use pmix_wire::msg::{ComputeDeviceDistances, DistancesReply};
use pmix_wire::{Command, DataArray, DataType, DeviceDist, Reply, Status, Value, WStr};

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
        service.answer(req, to_wire)
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

/// The core's entries as DEVICE_DISTs (uuid, OS name, type, min and max), in order.
fn to_wire(topo: &Arc<Topology>, entries: &[DeviceDistance]) -> Vec<DeviceDist> {
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
        .collect()
}

/// `PMIX_DEVICE_DISTANCES` of the processes of a namespace (docs/serving.md §1(b)),
/// by cpuset: a DATA_ARRAY of DEVICE_DIST to every device of the service's topology,
/// what COMPUTE_DEVICE_DISTANCES (and `PMIx_Compute_distances`) with no directive
/// answers a process bound to that cpuset.
///
/// Computed once per distinct cpuset, and built once per distinct answer: two
/// cpusets that see every device at the same distances (two cores of one package,
/// most often) share one value, so 128 ranks bound to 128 cores of two packages cost
/// 128 distance queries (no allocation each, for topologies of up to 64 devices) and
/// two values.
#[derive(Debug, Default)]
pub(crate) struct JobDistances {
    by_cpuset: HashMap<CpuSet, Option<Arc<JobValue>>>,
    by_answer: HashMap<Vec<(u32, u16, u16)>, Arc<JobValue>>,
}

/// One `PMIX_DEVICE_DISTANCES` value, and its KVAL packed for the job-info blob of
/// 4.2 clients (appended to each rank's packed values).
#[derive(Debug)]
pub(crate) struct JobValue {
    /// The DATA_ARRAY of DEVICE_DIST.
    pub(crate) value: Value,
    /// `KVAL pmix.dev.dist` packed in the buffer type of 4.2 clients.
    pub(crate) packed: Vec<u8>,
}

impl JobDistances {
    /// The value for `cpuset`; `None` (the key is left out) when the topology cannot
    /// be loaded, the cpuset meets none of its PUs, or the topology has no device.
    pub(crate) fn get(
        &mut self,
        service: &crate::Service,
        cpuset: &CpuSet,
    ) -> Option<Arc<JobValue>> {
        if let Some(v) = self.by_cpuset.get(cpuset) {
            return v.clone();
        }
        let value = self.compute(service, cpuset);
        self.by_cpuset.insert(cpuset.clone(), value.clone());
        value
    }

    fn compute(&mut self, service: &crate::Service, cpuset: &CpuSet) -> Option<Arc<JobValue>> {
        let req = crate::DistanceRequest {
            cpuset: Some(cpuset),
            ..Default::default()
        };
        let by_answer = &mut self.by_answer;
        service
            .answer(&req, |topo, entries| {
                if entries.is_empty() {
                    return None;
                }
                let key: Vec<(u32, u16, u16)> = entries
                    .iter()
                    .map(|e| (e.device.0, e.mindist, e.maxdist))
                    .collect();
                if let Some(v) = by_answer.get(&key) {
                    return Some(v.clone());
                }
                let items = to_wire(topo, entries)
                    .into_iter()
                    .map(Value::from)
                    .collect();
                let value = DataArray::new(DataType::DeviceDist, items).map(Value::DataArray)?;
                let kval = pmix_wire::Kval::new(pmix_wire::keys::DEVICE_DISTANCES, value.clone());
                let ty = pmix_wire::Codec::v422().buffer_type;
                let packed = pmix_wire::msg::ProcBlob::pack_kvals(&[kval], ty).ok()?;
                let v = Arc::new(JobValue { value, packed });
                by_answer.insert(key, v.clone());
                Some(v)
            })
            .ok()
            .flatten()
    }
}
