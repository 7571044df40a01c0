//! The process-wide instance of the C ABI under `PMIx_Progress_thread_stop` ∥
//! `PMIx_Finalize` ∥ `PMIx_Compute_distances_nb`, through `pmix::global` as the C
//! functions call it: every accepted callback runs exactly once and none after either
//! call returned (`pmix_testkit::race` says how). The last finalize takes the instance
//! out of the process-wide slot before it drains, so a stop that finds no instance must
//! still wait for that drain. One test: nothing else in this process touches the global
//! instance.

use std::sync::Arc;

use pmix::{DistanceRequest, Error, InitOptions, Role, global};
use pmix_core::{CpuSet, Topology};
use pmix_testkit::race::{self, Engine};

const ITERATIONS: usize = 1000;

struct Process {
    topology: Arc<Topology>,
    cpu0: CpuSet,
}

impl Engine for Process {
    fn submit(&self, callback: Box<dyn FnOnce() + Send>) -> bool {
        // `PMIx_Compute_distances_nb`: the instance first, then the request.
        let Ok(instance) = global::get() else {
            return false;
        };
        let req = DistanceRequest {
            topology: Some(&self.topology),
            cpuset: Some(&self.cpu0),
            ..Default::default()
        };
        match instance.compute_distances_nb_with(
            &req,
            |a| a.len(),
            move |r| {
                assert_eq!(r.unwrap(), 5);
                callback();
            },
        ) {
            Ok(()) => true,
            Err(Error::NotAvailable | Error::Init) => false,
            Err(e) => panic!("unexpected refusal: {e}"),
        }
    }

    fn stop(&self) {
        let _ = global::stop_progress("PMIx_Progress_thread_stop");
    }

    fn finalize(&self) {
        let _ = global::finalize("PMIx_Finalize");
    }
}

#[test]
fn progress_thread_stop_finalize_and_nb_race_without_a_late_or_lost_callback() {
    let path = pmix_testkit::hwloc_xml("24em64t-2n6c2t-pci.xml");
    let topology =
        Arc::new(pmix::topology::load(&format!("xml:{}", path.display()), None).unwrap());
    let cpu0 = CpuSet::parse_list("0").unwrap();
    let stats = race::run(ITERATIONS, || {
        assert!(
            !global::is_initialized(),
            "the last iteration left it initialised"
        );
        global::init(Role::Client, InitOptions::default(), "PMIx_Init").unwrap();
        Process {
            topology: Arc::clone(&topology),
            cpu0: cpu0.clone(),
        }
    })
    .unwrap_or_else(|v| panic!("{v}"));
    assert_eq!(stats.iterations, ITERATIONS);
    assert!(
        stats.refused * 2 > ITERATIONS,
        "too few iterations raced a request against a stop: {stats:?}"
    );
    assert!(!global::is_initialized());
}
