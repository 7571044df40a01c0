//! The runtime rules of docs/design.md §6, one test each, on real machines' hwloc XML exports.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use pmix::{DistanceRequest, Distances, Error, InitOptions, Mode, Pmix, PmixError, Role, Status};
use pmix_core::{CpuSet, DeviceTypes};

fn xml(name: &str) -> PathBuf {
    pmix_testkit::hwloc_xml(name)
}

const PCI24: &str = "24em64t-2n6c2t-pci.xml";
const BIG192: &str = "192em64t-12gr2n8c2t.xml";

fn instance(role: Role, file: &str) -> Pmix {
    let path = xml(file);
    assert!(path.exists(), "{} is missing", path.display());
    Pmix::init(
        role,
        InitOptions {
            topology_source: Some(format!("xml:{}", path.display())),
            ..Default::default()
        },
    )
    .unwrap()
}

fn summary(d: &Distances) -> Vec<(String, String, u64, u16, u16)> {
    d.rows()
        .map(|r| {
            (
                r.uuid.to_owned(),
                r.osname.to_owned(),
                r.kind.0,
                r.mindist,
                r.maxdist,
            )
        })
        .collect()
}

fn cpus(list: &str) -> CpuSet {
    CpuSet::parse_list(list).unwrap()
}

/// Waits for the callback's result (or fails after a generous timeout).
fn nb(p: &Pmix, req: &DistanceRequest<'_>) -> Result<Distances, Error> {
    let (tx, rx) = channel();
    p.compute_distances_nb(
        req,
        Some(Box::new(move |r| {
            tx.send(r).unwrap();
        })),
    )?;
    rx.recv_timeout(Duration::from_secs(10)).unwrap()
}

#[test]
fn blocking_and_nb_give_the_same_answers() {
    let p = instance(Role::Client, PCI24);
    let c0 = cpus("0");
    let c_all = cpus("0-23");
    let reqs = [
        DistanceRequest {
            cpuset: Some(&c0),
            ..Default::default()
        },
        DistanceRequest {
            cpuset: Some(&c_all),
            types: Some(DeviceTypes::ALL),
            ..Default::default()
        },
        DistanceRequest {
            origin: Some("eth0"),
            ..Default::default()
        },
        DistanceRequest {
            cpuset: Some(&c0),
            ids: &["mlx4_0", "sda"],
            ..Default::default()
        },
    ];
    for r in &reqs {
        let b = p.compute_distances(r).unwrap();
        let n = nb(&p, r).unwrap();
        assert_eq!(summary(&b), summary(&n));
        assert!(!b.is_empty());
    }
    // Errors agree too: the blocking call returns it, the callback receives it.
    let none = DistanceRequest {
        cpuset: Some(&c0),
        ids: &["no-such-device"],
        ..Default::default()
    };
    assert_eq!(
        p.compute_distances(&none).unwrap_err().status(),
        Status::ERR_NOT_FOUND
    );
    assert_eq!(nb(&p, &none).unwrap_err().status(), Status::ERR_NOT_FOUND);
    p.finalize().unwrap();
}

#[test]
fn the_topology_is_loaded_once() {
    let p = instance(Role::Tool, BIG192);
    assert!(p.loaded_topology().is_none(), "loaded before first use");
    let a = p.topology().unwrap();
    let b = p.topology().unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    let c0 = cpus("0");
    p.compute_distances_with(
        &DistanceRequest {
            cpuset: Some(&c0),
            ..Default::default()
        },
        |answer| match answer {
            pmix::Answer::Local { topology, .. } => assert!(Arc::ptr_eq(topology, &a)),
            pmix::Answer::Relayed(_) => panic!("answered here"),
        },
    )
    .unwrap();
}

#[test]
fn a_blocking_query_runs_on_the_callers_thread_and_nb_on_the_progress_thread() {
    let p = instance(Role::Client, PCI24);
    let c0 = cpus("0");
    let req = DistanceRequest {
        cpuset: Some(&c0),
        ..Default::default()
    };
    let me = thread::current().id();
    p.compute_distances_with(&req, |_| assert_eq!(thread::current().id(), me))
        .unwrap();
    let (tx, rx) = channel();
    let p2 = p.clone();
    p.compute_distances_nb(
        &req,
        Some(Box::new(move |_| {
            tx.send((thread::current().id(), p2.on_progress_thread()))
                .unwrap();
        })),
    )
    .unwrap();
    let (id, on_progress) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_ne!(id, me);
    assert!(on_progress);
    assert!(!p.on_progress_thread());
}

#[test]
fn the_callback_runs_exactly_once_per_accepted_request_even_across_a_stop() {
    let p = instance(Role::Client, PCI24);
    let c0 = cpus("0");
    let req = DistanceRequest {
        cpuset: Some(&c0),
        ..Default::default()
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let mut accepted = 0;
    for _ in 0..100 {
        let r = Arc::clone(&runs);
        if p.compute_distances_nb(
            &req,
            Some(Box::new(move |res| {
                assert!(res.is_ok());
                r.fetch_add(1, Ordering::SeqCst);
            })),
        )
        .is_ok()
        {
            accepted += 1;
        }
    }
    // Stopping runs every accepted callback first.
    p.stop_progress().unwrap();
    assert_eq!(accepted, 100);
    assert_eq!(runs.load(Ordering::SeqCst), 100);
    // Refused requests never call back.
    let r = Arc::clone(&runs);
    let e = p
        .compute_distances_nb(
            &req,
            Some(Box::new(move |_| {
                r.fetch_add(1, Ordering::SeqCst);
            })),
        )
        .unwrap_err();
    assert_eq!(e.status(), Status::ERR_NOT_AVAILABLE);
    assert_eq!(runs.load(Ordering::SeqCst), 100);
}

#[test]
fn blocking_calls_on_the_progress_thread_would_block_and_do_nothing() {
    let p = instance(Role::Client, PCI24);
    let c0 = Arc::new(cpus("0"));
    let results = Arc::new(Mutex::new(Vec::new()));
    let (done_tx, done_rx) = channel();
    let (p2, c2, res2) = (p.clone(), Arc::clone(&c0), Arc::clone(&results));
    p.compute_distances_nb(
        &DistanceRequest {
            cpuset: Some(&c0),
            ..Default::default()
        },
        Some(Box::new(move |_| {
            let req = DistanceRequest {
                cpuset: Some(&c2),
                ..Default::default()
            };
            let mut r = res2.lock().unwrap();
            let ran = Arc::new(AtomicUsize::new(0));
            r.push(p2.compute_distances(&req).map(|_| ()));
            r.push(
                p2.compute_distances_with(&req, |_| ran.fetch_add(1, Ordering::SeqCst))
                    .map(|_| ()),
            );
            r.push(p2.compute_distances_nb(&req, None));
            r.push(p2.topology().map(|_| ()));
            r.push(p2.stop_progress());
            r.push(p2.finalize());
            assert_eq!(ran.load(Ordering::SeqCst), 0, "nothing may run");
            // The non-blocking form with a callback is allowed here.
            let inner_done = done_tx.clone();
            r.push(p2.compute_distances_nb(
                &req,
                Some(Box::new(move |res| inner_done.send(res.is_ok()).unwrap())),
            ));
            assert!(!p2.is_finalized() && !p2.progress_stopped());
        })),
    )
    .unwrap();
    assert!(done_rx.recv_timeout(Duration::from_secs(10)).unwrap());
    let r = results.lock().unwrap();
    let calls = [
        "PMIx_Compute_distances",
        "PMIx_Compute_distances",
        "PMIx_Compute_distances_nb",
        "PMIx_Load_topology",
        "PMIx_Progress_thread_stop",
        "PMIx_Finalize",
    ];
    for (res, call) in r.iter().zip(calls) {
        match res {
            Err(Error::WouldBlock { call: c }) => assert_eq!(*c, call),
            other => panic!("{call}: {other:?}"),
        }
        assert_eq!(res.as_ref().unwrap_err().status(), Status::ERR_WOULD_BLOCK);
    }
    assert!(r[6].is_ok());
    p.finalize().unwrap();
}

#[test]
fn init_rules_after_finalize_and_after_stop() {
    let p = instance(Role::Client, PCI24);
    let c0 = cpus("0");
    let req = DistanceRequest {
        cpuset: Some(&c0),
        ..Default::default()
    };
    p.stop_progress().unwrap();
    p.stop_progress().unwrap(); // idempotent
    assert!(matches!(
        p.compute_distances(&req),
        Err(Error::NotAvailable)
    ));
    assert!(matches!(
        p.compute_distances_nb(&req, None),
        Err(Error::NotAvailable)
    ));
    assert!(matches!(p.topology(), Err(Error::NotAvailable)));
    assert!(p.admit("x", Mode::NonBlocking).is_err());
    // Finalize works after a stop; then everything is INIT, on every clone.
    let clone = p.clone();
    p.finalize().unwrap();
    for h in [&p, &clone] {
        assert!(matches!(h.compute_distances(&req), Err(Error::Init)));
        assert!(matches!(
            h.compute_distances_nb(&req, Some(Box::new(|_| panic!("must not run")))),
            Err(Error::Init)
        ));
        assert!(matches!(h.topology(), Err(Error::Init)));
        assert!(matches!(
            h.cpuset(pmix::BindEnvelope::Process),
            Err(Error::Init)
        ));
        assert!(matches!(h.stop_progress(), Err(Error::Init)));
        assert!(matches!(h.finalize(), Err(Error::Init)));
        assert_eq!(Error::Init.status(), Status::ERR_INIT);
    }
}

#[test]
fn without_a_topology_requests_are_unreachable() {
    // A source that cannot be loaded (a missing file): no local topology.
    for role in [Role::Client, Role::Tool, Role::Server] {
        let p = Pmix::init(
            role,
            InitOptions {
                topology_source: Some("xml:/nonexistent/pmix-rs-test/topology.xml".into()),
                ..Default::default()
            },
        )
        .unwrap();
        let c0 = cpus("0");
        let req = DistanceRequest {
            cpuset: Some(&c0),
            ..Default::default()
        };
        let e = p.compute_distances(&req).unwrap_err();
        assert_eq!(e.status(), Status::ERR_UNREACH, "{e}");
        let text = e.to_string();
        assert!(text.contains("no local topology"), "{text}");
        if role == Role::Server {
            assert!(text.contains("is the PMIx server"), "{text}");
        } else {
            assert!(text.contains("not connected"), "{text}");
        }
        // The non-blocking form accepts it (the topology is loaded on the progress
        // thread) and the callback gets the same error, with the same explanation.
        let e = nb(&p, &req).unwrap_err();
        assert_eq!(e.status(), Status::ERR_UNREACH);
        assert_eq!(e.to_string(), text);
        assert_eq!(p.topology().unwrap_err().status(), Status::ERR_UNREACH);
        assert!(p.topology_error().is_some());
        p.finalize().unwrap();
    }
}

#[test]
fn the_own_cpuset_is_used_when_none_is_given_and_ignored_with_an_origin() {
    let p = instance(Role::Client, PCI24);
    let own = p.cpuset(pmix::BindEnvelope::Process).unwrap();
    let topo = p.topology().unwrap();
    let implicit = p.compute_distances(&DistanceRequest::default());
    let explicit = p.compute_distances(&DistanceRequest {
        cpuset: Some(&own),
        ..Default::default()
    });
    match (implicit, explicit) {
        (Ok(a), Ok(b)) => assert_eq!(summary(&a), summary(&b)),
        (Err(a), Err(b)) => {
            // This machine's cpus are not in the XML's machine.
            assert!(!own.intersects(topo.machine_cpus()));
            assert_eq!(a.status(), b.status());
        }
        (a, b) => panic!("{a:?} vs {b:?}"),
    }
    // With an origin, the cpuset (even an empty one) plays no part.
    let empty = CpuSet::new();
    let a = p
        .compute_distances(&DistanceRequest {
            cpuset: Some(&empty),
            origin: Some("0000:04:00.0"),
            ..Default::default()
        })
        .unwrap();
    let b = p
        .compute_distances(&DistanceRequest {
            origin: Some("eth0"),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(summary(&a), summary(&b));
    let eth0 = a.rows().find(|r| r.osname == "eth0").unwrap();
    assert_eq!((eth0.mindist, eth0.maxdist), (0, 0));
}

#[test]
fn the_hostname_option_names_the_uuids() {
    let path = xml(BIG192);
    let p = Pmix::init(
        Role::Tool,
        InitOptions {
            topology_source: Some(format!("xml:{}", path.display())),
            hostname: Some("nodeA".into()),
            ..InitOptions::default()
        },
    )
    .unwrap();
    let c0 = cpus("0");
    let d = p
        .compute_distances(&DistanceRequest {
            cpuset: Some(&c0),
            types: Some(DeviceTypes::BLOCK),
            ..Default::default()
        })
        .unwrap();
    let uuids: Vec<_> = d.rows().map(|r| r.uuid.to_owned()).collect();
    assert_eq!(uuids, ["blk://nodeA::sda", "blk://nodeA::sdb"]);
    for bad in ["", "a\0b"] {
        let e = Pmix::init(
            Role::Tool,
            InitOptions {
                hostname: Some(bad.into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.status(), Status::ERR_BAD_PARAM);
    }
}

#[test]
fn query_errors_keep_their_own_status() {
    let p = instance(Role::Client, PCI24);
    let c0 = cpus("0");
    let empty = CpuSet::new();
    let cases: [(DistanceRequest<'_>, Status); 4] = [
        (
            DistanceRequest {
                origin: Some("nothing-here"),
                ..Default::default()
            },
            Status::ERR_NOT_FOUND,
        ),
        (
            // A type bit PMIx does not define.
            DistanceRequest {
                cpuset: Some(&c0),
                types: Some(DeviceTypes(0x40)),
                ..Default::default()
            },
            Status::ERR_BAD_PARAM,
        ),
        (
            DistanceRequest {
                cpuset: Some(&empty),
                ..Default::default()
            },
            Status::ERR_BAD_PARAM,
        ),
        (
            DistanceRequest {
                cpuset: Some(&c0),
                types: Some(DeviceTypes::GPU),
                ..Default::default()
            },
            Status::ERR_NOT_FOUND,
        ),
    ];
    for (req, status) in cases {
        assert_eq!(
            p.compute_distances(&req).unwrap_err().status(),
            status,
            "{req:?}"
        );
        assert_eq!(nb(&p, &req).unwrap_err().status(), status, "{req:?}");
    }
}
