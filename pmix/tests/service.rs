//! The query service on its own (no instance, no progress thread): what `pmix-topo`
//! and the coming server call, and what an instance answers through.

use std::sync::Arc;

use pmix::{AnswerError, BindEnvelope, DistanceRequest, Error, PmixError, Service, Status};
use pmix_core::{CpuSet, DeviceDistance, DeviceTypes, DistanceError};

const PCI24: &str = "24em64t-2n6c2t-pci.xml";

fn service(file: &str, hostname: Option<&str>) -> Service {
    let path = pmix_testkit::hwloc_xml(file);
    assert!(path.exists(), "{} is missing", path.display());
    Service::new(
        format!("xml:{}", path.display()),
        hostname.map(str::to_owned),
    )
    .unwrap()
}

/// `(osname, mindist, maxdist)` of every entry of `req`'s answer.
fn answer(s: &Service, req: &DistanceRequest<'_>) -> Vec<(String, u16, u16)> {
    s.answer(req, |topo, entries| {
        entries
            .iter()
            .map(|e| {
                let d = topo.device(e.device).unwrap();
                (d.name().to_owned(), e.mindist, e.maxdist)
            })
            .collect()
    })
    .unwrap()
}

#[test]
fn answer_into_fills_the_callers_buffer_and_says_how_much_room_a_short_one_needs() {
    let s = service(PCI24, None);
    let cpu1 = CpuSet::parse_list("1").unwrap();
    let req = DistanceRequest {
        cpuset: Some(&cpu1),
        types: Some(DeviceTypes::ALL),
        ..Default::default()
    };
    let topo = Arc::clone(s.topology().unwrap());
    let mut out = vec![DeviceDistance::EMPTY; topo.entry_count()];
    let n = s.answer_into(&req, &mut out).unwrap();
    let got: Vec<(String, u16, u16)> = out[..n]
        .iter()
        .map(|e| {
            let d = topo.device(e.device).unwrap();
            (d.name().to_owned(), e.mindist, e.maxdist)
        })
        .collect();
    assert_eq!(got, answer(&s, &req));
    assert!(n > 1, "{got:?}");
    let mut short = vec![DeviceDistance::EMPTY; n - 1];
    match s.answer_into(&req, &mut short) {
        Err(AnswerError::Distance(DistanceError::BufferTooSmall { needed })) => {
            assert_eq!(needed, n);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn without_a_cpuset_the_answer_is_from_this_process_binding() {
    let s = service(PCI24, None);
    let mine = s.own_cpuset(BindEnvelope::Process).unwrap();
    let all = Some(DeviceTypes::ALL);
    let unbound = DistanceRequest {
        types: all,
        ..Default::default()
    };
    let given = DistanceRequest {
        cpuset: Some(&mine),
        types: all,
        ..Default::default()
    };
    // This process's binding holds PUs of the 24-PU machine (cpu 0 at least, on any
    // machine these tests run on); the PUs it lacks are ignored, as for any caller.
    assert_eq!(answer(&s, &unbound), answer(&s, &given));
    let thread = s.own_cpuset(BindEnvelope::Thread).unwrap();
    assert!(
        thread.is_subset(&mine),
        "thread {thread} within process {mine}"
    );
}

#[test]
fn the_topology_is_loaded_once_with_the_callers_hostname() {
    let s = service(PCI24, Some("nodeA"));
    assert!(s.loaded_topology().is_none());
    let first = Arc::clone(s.topology().unwrap());
    assert!(Arc::ptr_eq(&first, s.loaded_topology().unwrap()));
    assert_eq!(first.hostname(), "nodeA");
    assert_eq!(s.hostname(), Some("nodeA"));
    let own = service(PCI24, None);
    assert_eq!(own.topology().unwrap().hostname(), "mirage004");
}

#[test]
fn load_and_query_errors_keep_their_own_status() {
    let missing = Service::new("xml:/nonexistent/topo.xml", None).unwrap();
    let e = missing
        .answer(&DistanceRequest::default(), |_, _| ())
        .unwrap_err();
    assert!(matches!(e, AnswerError::Topology(_)), "{e:?}");
    assert_eq!(e.status(), Status::ERR_NOT_FOUND);
    assert!(e.to_string().contains("/nonexistent/topo.xml"), "{e}");
    assert_eq!(
        missing.topology_error().unwrap().status(),
        Status::ERR_NOT_FOUND
    );

    let s = service(PCI24, None);
    let e = s
        .answer(
            &DistanceRequest {
                origin: Some("nothing-here"),
                ..Default::default()
            },
            |_, _| (),
        )
        .unwrap_err();
    assert_eq!(e.status(), Status::ERR_NOT_FOUND);
}

#[test]
fn a_bad_hostname_is_refused_when_the_service_is_made() {
    for bad in ["", "a\0b"] {
        let e = Service::new("sysfs", Some(bad.to_owned())).unwrap_err();
        assert!(matches!(e, Error::BadParam(_)), "{e:?}");
        assert_eq!(e.status(), Status::ERR_BAD_PARAM);
    }
}
