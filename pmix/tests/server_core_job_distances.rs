//! `PMIX_DEVICE_DISTANCES` served as job data (docs/serving.md §1(b)): each local rank
//! the host placed on a cpuset finds, in its own `pmix.pblob`, the distances from that
//! cpuset to every device of the server's topology, equal to what the core computes
//! for that cpuset; an unbound rank finds none; a rank the host placed nowhere but
//! that is found bound when it connects gets them with its own job info.

mod server_core_common;

use std::sync::Arc;
use std::time::Instant;

use pmix::Service;
use pmix::server::core::{Core, NamespaceSpec};
use pmix_core::{CpuSet, DeviceDistance, Origin, Query, Topology};
use pmix_wire::msg::JobInfo;
use pmix_wire::{Command, DataType, DeviceDist, Reply, Request, Value};
use server_core_common::*;

fn xml(name: &str) -> String {
    format!(
        "{}/../testdata/hwloc-xml/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A core on topology `file` with namespace "job": rank r placed on `cpusets[r]`.
fn core_on(file: &str, cpusets: &[Option<&str>], locate: bool) -> Core {
    let svc = Service::new(format!("xml:{}", xml(file)), Some("node0".into())).unwrap();
    let mut core = core_configured(
        |cfg| {
            cfg.service = Some(Arc::new(svc));
            cfg.locate_unplaced = locate;
        },
        "other",
        1,
    );
    let mut spec = NamespaceSpec::single_node("job", cpusets.len() as u32, UID, GID);
    for (r, c) in spec.ranks.iter_mut().zip(cpusets) {
        r.cpuset = c.map(str::to_string);
    }
    core.add_namespace(spec).unwrap();
    core
}

/// The oracle: the core's distances from `cpus` on `file`, read with pmix-hwloc's
/// parser and named as the server names them.
fn oracle(file: &str, cpus: &str) -> Vec<DeviceDist> {
    let text = std::fs::read_to_string(xml(file)).unwrap();
    let topo: Topology = pmix_hwloc::xml::from_str(&text).unwrap();
    let topo = pmix::topology::apply_hostname(topo, Some("node0")).unwrap();
    let set = CpuSet::parse_pmix(cpus).unwrap();
    let mut out = vec![DeviceDistance::EMPTY; topo.entry_count()];
    let q = Query {
        types: None,
        ids: &[],
        origin: Origin::Cpuset(&set),
    };
    let n = topo.distances(&q, &mut out).unwrap();
    out[..n]
        .iter()
        .map(|e| {
            let d = topo.device(e.device).unwrap();
            DeviceDist {
                uuid: Some(d.uuid().into()),
                osname: Some(d.name().into()),
                ty: d.kind().0,
                mindist: e.mindist,
                maxdist: e.maxdist,
            }
        })
        .collect()
}

/// The job info rank `rank` gets (REQ).
fn job_info(core: &mut Core, conn: u64, rank: u32, locate: Option<&str>) -> JobInfo {
    let now = Instant::now();
    if locate.is_some() {
        assert!(core.wants_location(&client_msg("job", rank, UID, GID)));
    }
    let mut f = connect(core, conn, "job", rank, now);
    if let Some(c) = locate {
        core.located(f.conn, CpuSet::parse_pmix(c).unwrap());
    }
    drain(core);
    let tag = f.send(core, &Request::Req, now);
    let outs = drain(core);
    let Reply::Req(job) = reply(&outs, &f, tag, Command::Req) else {
        panic!("no job info")
    };
    job
}

/// Rank `rank`'s `PMIX_DEVICE_DISTANCES` in `job` (its blobs merged, later keys win,
/// as a client files them).
fn distances_of(job: &JobInfo, rank: u32) -> Option<Vec<DeviceDist>> {
    let mut found = None;
    for p in job.procs().filter(|p| p.rank.0 == rank) {
        for k in p.kvals().unwrap().iter() {
            if k.key == pmix_wire::keys::DEVICE_DISTANCES {
                let Value::DataArray(a) = &k.value else {
                    panic!("not a data array: {:?}", k.value)
                };
                assert_eq!(a.ty, DataType::DeviceDist);
                found = Some(
                    a.items
                        .iter()
                        .map(|v| match v {
                            Value::DeviceDist(d) => (**d).clone(),
                            v => panic!("not a device distance: {v:?}"),
                        })
                        .collect(),
                );
            }
        }
    }
    found
}

fn nearest(d: &[DeviceDist], ty: u64) -> Vec<String> {
    let of_ty: Vec<&DeviceDist> = d.iter().filter(|d| d.ty == ty).collect();
    let min = of_ty.iter().map(|d| d.mindist).min().unwrap();
    of_ty
        .iter()
        .filter(|d| d.mindist == min)
        .map(|d| d.osname.as_ref().unwrap().to_string())
        .collect()
}

/// `PMIX_DEVTYPE_GPU`, `PMIX_DEVTYPE_NETWORK`.
const GPU: u64 = 0x02;
const NETWORK: u64 = 0x04;

#[test]
fn bound_ranks_get_their_cpusets_distances_and_unbound_ranks_none() {
    let file = "power8gpudistances.xml";
    // Ranks 0 and 1 on package 0 (one in a list, one in hwloc's mask syntax), rank 2
    // on package 1, rank 3 unbound.
    let cpus = [Some("hwloc:0"), Some("0x00000002"), Some("80"), None];
    let mut core = core_on(file, &cpus, false);
    let job = job_info(&mut core, 1, 0, None);
    for (r, c) in cpus.iter().enumerate() {
        let got = distances_of(&job, r as u32);
        match c {
            Some(c) => {
                let c = c.strip_prefix("hwloc:").unwrap_or(c);
                assert_eq!(got.as_deref(), Some(oracle(file, c).as_slice()), "rank {r}");
            }
            None => assert_eq!(got, None, "rank {r}: unbound, no key"),
        }
    }
    // Different packages, different nearest GPUs.
    let near0 = nearest(&distances_of(&job, 0).unwrap(), GPU);
    let near2 = nearest(&distances_of(&job, 2).unwrap(), GPU);
    assert_eq!(near0, ["nvml0", "nvml1"]);
    assert_eq!(near2, ["nvml2", "nvml3"]);
}

#[test]
fn ranks_on_different_packages_get_different_nearest_nics() {
    let file = "16intel64-manyVFs.xml";
    let cpus = [Some("0-7"), Some("8-15"), Some("3")];
    let mut core = core_on(file, &cpus, false);
    let job = job_info(&mut core, 1, 1, None);
    let d0 = distances_of(&job, 0).unwrap();
    let d1 = distances_of(&job, 1).unwrap();
    assert_eq!(d0, oracle(file, "0-7"));
    assert_eq!(d1, oracle(file, "8-15"));
    assert_eq!(distances_of(&job, 2).unwrap(), oracle(file, "3"));
    let (n0, n1) = (nearest(&d0, NETWORK), nearest(&d1, NETWORK));
    assert!(n0.iter().all(|n| !n1.contains(n)), "{n0:?} {n1:?}");
    assert!(n0.contains(&"eth0".to_string()), "{n0:?}");
}

#[test]
fn a_rank_placed_nowhere_but_found_bound_gets_its_distances_with_its_job_info() {
    let file = "16intel64-manyVFs.xml";
    let mut core = core_on(file, &[None, None], true);
    // Rank 1 is found bound to package 1 when it connects; rank 0 is not.
    let job1 = job_info(&mut core, 1, 1, Some("8-15"));
    assert_eq!(distances_of(&job1, 1), Some(oracle(file, "8-15")));
    let job0 = job_info(&mut core, 2, 0, None);
    assert_eq!(distances_of(&job0, 0), None);
    assert_eq!(
        distances_of(&job0, 1),
        None,
        "only rank 1's own info has it"
    );
    // Once located, a rank is not asked for again (a reconnect keeps what it has).
    assert!(!core.wants_location(&client_msg("job", 1, UID, GID)));
}

#[test]
fn no_rank_is_located_without_the_setting_or_a_service() {
    let file = "16intel64-manyVFs.xml";
    let core = core_on(file, &[None, Some("0")], false);
    assert!(!core.wants_location(&client_msg("job", 0, UID, GID)));
    let core = core_on(file, &[None, Some("0")], true);
    assert!(core.wants_location(&client_msg("job", 0, UID, GID)));
    assert!(
        !core.wants_location(&client_msg("job", 1, UID, GID)),
        "placed"
    );
    assert!(!core.wants_location(&client_msg("nosuch", 0, UID, GID)));
    let core = core_configured(|cfg| cfg.locate_unplaced = true, "job", 2);
    assert!(
        !core.wants_location(&client_msg("job", 0, UID, GID)),
        "no service"
    );
}

#[test]
fn a_peers_get_of_a_bound_ranks_values_answers_them_without_its_appended_distances() {
    // The namespace keeps each rank's values packed once, the distances of its
    // cpuset appended; a GETNB of one of them answers the rank's own values (decoded
    // then), as when they were kept apart from the blob.
    let file = "power8gpudistances.xml";
    let cpus = [Some("hwloc:0"), None];
    let mut core = core_on(file, &cpus, false);
    let now = Instant::now();
    let mut f = connect(&mut core, 1, "job", 1, now);
    drain(&mut core);
    for (rank, key) in [(0u32, "pmix.lrank"), (0, "pmix.cpuset"), (1, "pmix.hname")] {
        let tag = f.send(
            &mut core,
            &Request::GetNb(pmix_wire::msg::GetNb {
                nspace: "job".into(),
                rank: pmix_wire::Rank(rank),
                info: vec![],
                key: Some(pmix_wire::WStr::from(key)),
            }),
            now,
        );
        let outs = drain(&mut core);
        let Reply::GetNb(r) = reply(&outs, &f, tag, Command::GetNb) else {
            panic!("no GETNB reply")
        };
        assert_eq!(r.status, pmix_core::Status::SUCCESS, "rank {rank} {key}");
        let keys: Vec<String> = r
            .data
            .iter()
            .flat_map(|d| d.kvals.iter().map(|k| k.key.to_string()))
            .collect();
        assert!(keys.iter().any(|k| k == key), "rank {rank}: {keys:?}");
        assert!(
            keys.iter().any(|k| k == "pmix.grank") && keys.iter().any(|k| k == "pmix.nrank"),
            "rank {rank}'s own values: {keys:?}"
        );
        assert!(
            !keys.iter().any(|k| k == pmix_wire::keys::DEVICE_DISTANCES),
            "rank {rank}: {keys:?}"
        );
    }
}
