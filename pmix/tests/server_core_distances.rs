//! The server core's COMPUTE_DEVICE_DISTANCES, answered from a `pmix::Service` on a
//! test topology, driven by a fake client that speaks pmix-wire.

mod server_core_common;

use std::sync::Arc;
use std::time::Instant;

use pmix::Service;
use pmix::server::core::{Core, CoreConfig, DIST_ORIGIN_DIRECTIVE, NamespaceSpec};
use pmix_wire::msg::{ComputeDeviceDistances, ProcCpuset};
use pmix_wire::{Command, Info, Reply, Request, Status, Topo, Value, WStr};
use server_core_common::*;

const XML: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/hwloc-xml/24em64t-2n6c2t-pci.xml"
);

fn core(with_service: bool) -> Core {
    let mut cfg = CoreConfig::new("srv", 0, "node0", UID, GID);
    if with_service {
        let svc = Service::new(format!("xml:{XML}"), Some("node0".into())).unwrap();
        cfg.service = Some(Arc::new(svc));
    }
    let mut core = Core::new(cfg);
    let mut spec = NamespaceSpec::single_node("job", 2, UID, GID);
    spec.ranks[1].cpuset = Some("hwloc:0".into());
    core.add_namespace(spec).unwrap();
    core
}

fn request(cpuset: Option<&str>, info: Vec<Info>) -> Request {
    Request::ComputeDeviceDistances(ComputeDeviceDistances {
        topo: Topo::default(),
        cpuset: ProcCpuset(cpuset.map(WStr::from)),
        info,
    })
}

fn ask(core: &mut Core, f: &mut Fake, req: &Request) -> Reply {
    let tag = f.send(core, req, Instant::now());
    let outs = drain(core);
    reply(&outs, f, tag, Command::ComputeDeviceDistances)
}

#[test]
fn distances_from_a_cpuset_and_from_a_device_origin() {
    let now = Instant::now();
    let mut core = core(true);
    let mut a = connect(&mut core, 1, "job", 0, now);
    let mut b = connect(&mut core, 2, "job", 1, now);
    drain(&mut core);
    let Reply::ComputeDeviceDistances(r) = ask(&mut core, &mut a, &request(Some("0"), vec![]))
    else {
        panic!("no distances")
    };
    assert_eq!(r.status, Status::SUCCESS);
    assert!(!r.dists.is_empty());
    for d in &r.dists {
        assert!(d.uuid.is_some() && d.osname.is_some());
        assert!(d.mindist <= d.maxdist);
    }
    // Rank 1 sends no cpuset: its registered pmix.cpuset is used, the same PU 0.
    let Reply::ComputeDeviceDistances(r1) = ask(&mut core, &mut b, &request(None, vec![])) else {
        panic!("no distances")
    };
    assert_eq!(r1.dists, r.dists);
    // From the first device instead of a cpuset: it is at distance 0 from itself.
    let first = r.dists[0].osname.clone().unwrap().to_string();
    let info = vec![Info::new(DIST_ORIGIN_DIRECTIVE, first.as_str())];
    let Reply::ComputeDeviceDistances(o) = ask(&mut core, &mut a, &request(None, info)) else {
        panic!("no distances from the origin")
    };
    let me = o
        .dists
        .iter()
        .find(|d| d.osname == r.dists[0].osname)
        .unwrap();
    assert_eq!((me.mindist, me.maxdist), (0, 0));
    // A type filter and an id filter.
    let ty = r.dists[0].ty;
    let info = vec![Info::new("pmix.dev.type", Value::DevType(ty))];
    let Reply::ComputeDeviceDistances(t) = ask(&mut core, &mut a, &request(Some("0"), info)) else {
        panic!()
    };
    assert!(t.dists.iter().all(|d| d.ty & ty != 0));
    let info = vec![Info::new("pmix.dev.id", first.as_str())];
    let Reply::ComputeDeviceDistances(i) = ask(&mut core, &mut a, &request(Some("0"), info)) else {
        panic!()
    };
    assert_eq!(i.dists.len(), 1);
}

#[test]
fn distances_without_an_origin_or_a_service_are_refused() {
    let now = Instant::now();
    let mut core = core(true);
    let mut a = connect(&mut core, 1, "job", 0, now);
    drain(&mut core);
    // Rank 0 has no registered cpuset and sends none.
    assert!(matches!(
        ask(&mut core, &mut a, &request(None, vec![])),
        Reply::Status {
            status: Status(-27),
            ..
        }
    ));
    assert!(matches!(
        ask(&mut core, &mut a, &request(Some("not a cpuset"), vec![])),
        Reply::Status {
            status: Status(-27),
            ..
        }
    ));
    let info = vec![Info::new(DIST_ORIGIN_DIRECTIVE, "no-such-device")];
    let r = ask(&mut core, &mut a, &request(None, info));
    assert!(
        matches!(r, Reply::Status { status, .. } if status != Status::SUCCESS),
        "{r:?}"
    );
    let mut core = self::core(false);
    let mut a = connect(&mut core, 1, "job", 0, now);
    drain(&mut core);
    assert!(matches!(
        ask(&mut core, &mut a, &request(Some("0"), vec![])),
        Reply::Status {
            status: Status::ERR_NOT_SUPPORTED,
            ..
        }
    ));
}
