//! What the non-blocking form promises about its callback: `_nb` only accepts (the
//! topology is loaded on the progress thread, not the caller's), and an accepted
//! request's callback runs exactly once even when the computation panics (it gets
//! `PMIX_ERROR`) or the callback itself panics (reported on stderr, never run again);
//! and an instance that ends inside its own callback does not wait for itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::time::Duration;

use pmix::{DistanceRequest, Error, InitOptions, Pmix, PmixError, Role, Status};
use pmix_core::CpuSet;

const WAIT: Duration = Duration::from_secs(10);

fn instance() -> Pmix {
    let path = pmix_testkit::hwloc_xml("24em64t-2n6c2t-pci.xml");
    Pmix::init(
        Role::Client,
        InitOptions {
            topology_source: Some(format!("xml:{}", path.display())),
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn nb_loads_the_topology_on_the_progress_thread_not_the_callers() {
    let p = instance();
    // Keep the progress thread busy, so only the caller's thread could load it.
    let (gate_tx, gate_rx) = channel::<()>();
    p.post(move || gate_rx.recv_timeout(WAIT).unwrap()).unwrap();
    let cpu0 = CpuSet::parse_list("0").unwrap();
    let (tx, rx) = channel();
    p.compute_distances_nb(
        &DistanceRequest {
            cpuset: Some(&cpu0),
            ..Default::default()
        },
        Some(Box::new(move |r| tx.send(r.map(|d| d.len())).unwrap())),
    )
    .unwrap();
    assert!(
        p.loaded_topology().is_none() && p.topology_error().is_none(),
        "_nb touched the topology on the caller's thread"
    );
    gate_tx.send(()).unwrap();
    assert_eq!(rx.recv_timeout(WAIT).unwrap().unwrap(), 5);
    assert!(
        p.loaded_topology().is_some(),
        "loaded by the progress thread"
    );
    p.finalize().unwrap();
}

#[test]
fn a_panicking_computation_calls_back_with_pmix_error_exactly_once() {
    let p = instance();
    let cpu0 = CpuSet::parse_list("0").unwrap();
    let (tx, rx) = channel();
    p.compute_distances_nb_with(
        &DistanceRequest {
            cpuset: Some(&cpu0),
            ..Default::default()
        },
        |_| -> usize { panic!("conversion fails on purpose") },
        move |r| tx.send(r).unwrap(),
    )
    .unwrap();
    let r = rx.recv_timeout(WAIT).unwrap();
    match &r {
        Err(e @ Error::Internal(text)) => {
            assert_eq!(e.status(), Status::ERROR);
            assert!(text.contains("conversion fails on purpose"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    // Finalize runs whatever is left: nothing calls back a second time.
    p.finalize().unwrap();
    assert!(rx.try_recv().is_err(), "the callback ran twice");
}

/// Run in a child process by the next test, which reads its stderr.
#[test]
#[ignore = "run by a_panicking_callback_runs_once_is_reported_and_the_engine_goes_on"]
fn child_a_callback_that_panics() {
    let p = instance();
    let cpu0 = CpuSet::parse_list("0").unwrap();
    let req = DistanceRequest {
        cpuset: Some(&cpu0),
        ..Default::default()
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let r2 = Arc::clone(&runs);
    p.compute_distances_nb_with(
        &req,
        |a| a.len(),
        move |_| {
            r2.fetch_add(1, Ordering::SeqCst);
            panic!("the callback panics on purpose");
        },
    )
    .unwrap();
    let (tx, rx) = channel();
    p.compute_distances_nb_with(&req, |a| a.len(), move |r| tx.send(r).unwrap())
        .unwrap();
    let after = rx.recv_timeout(WAIT).unwrap().unwrap();
    p.finalize().unwrap();
    println!("runs={} after={after}", runs.load(Ordering::SeqCst));
}

#[test]
fn a_panicking_callback_runs_once_is_reported_and_the_engine_goes_on() {
    let out = pmix_testkit::child::output_within(
        &mut pmix_testkit::child::child_test("child_a_callback_that_panics"),
        Duration::from_secs(60),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("runs=1 after=5"), "{stdout}");
    let reports: Vec<_> = stderr
        .lines()
        .filter(|l| l.starts_with("pmix-rs: a callback panicked on the progress thread"))
        .collect();
    assert_eq!(reports.len(), 1, "{stderr}");
    assert!(
        reports[0].contains("the callback panics on purpose")
            && reports[0].ends_with("it is not run again"),
        "{}",
        reports[0]
    );
}

#[test]
fn the_last_handle_dropped_inside_its_own_callback_does_not_deadlock() {
    // Dropping the last handle stops the engine; on the progress thread that stop must
    // not wait for itself.
    let p = instance();
    let last = p.clone();
    let (gate_tx, gate_rx) = channel::<()>();
    let (done_tx, done_rx) = channel();
    p.post(move || {
        gate_rx.recv_timeout(WAIT).unwrap();
        drop(last); // the last handle: the instance ends here, on its own thread
        done_tx.send(()).unwrap();
    })
    .unwrap();
    drop(p);
    gate_tx.send(()).unwrap();
    done_rx
        .recv_timeout(WAIT)
        .expect("the callback that dropped the last handle never finished");
}
