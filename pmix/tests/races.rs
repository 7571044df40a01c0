//! `PMIx_Progress_thread_stop` ∥ `PMIx_Finalize` ∥ `_nb` requests, on an instance: every
//! accepted callback runs exactly once and none runs after a stopper returned
//! (`pmix_testkit::race` says how). The same harness, run against a faithful copy of
//! the engine this crate had before (a channel and a `JoinHandle` the first stopper
//! takes), finds the bug that engine had: the second stopper returned while a callback
//! still ran.

use std::sync::Arc;

use pmix::{DistanceRequest, Error, InitOptions, Pmix, Role};
use pmix_core::{CpuSet, Topology};
use pmix_testkit::race::{self, Engine};

/// The iterations each race test runs.
const ITERATIONS: usize = 1000;

/// The 24-PU machine, loaded once for every iteration (each request names it, so no
/// iteration pays for a load).
fn topology() -> Arc<Topology> {
    let path = pmix_testkit::hwloc_xml("24em64t-2n6c2t-pci.xml");
    Arc::new(pmix::topology::load(&format!("xml:{}", path.display()), None).unwrap())
}

/// The real engine, through the public API: `compute_distances_nb_with`,
/// `stop_progress`, `finalize`.
struct Instance {
    pmix: Pmix,
    topology: Arc<Topology>,
    cpu0: CpuSet,
}

impl Engine for Instance {
    fn submit(&self, callback: Box<dyn FnOnce() + Send>) -> bool {
        let req = DistanceRequest {
            topology: Some(&self.topology),
            cpuset: Some(&self.cpu0),
            ..Default::default()
        };
        let accepted = self.pmix.compute_distances_nb_with(
            &req,
            |a| a.len(),
            move |r| {
                assert_eq!(r.unwrap(), 5, "cpu 0 sees five devices by default");
                callback();
            },
        );
        match accepted {
            Ok(()) => true,
            Err(Error::NotAvailable | Error::Init) => false,
            Err(e) => panic!("unexpected refusal: {e}"),
        }
    }

    fn stop(&self) {
        let _ = self.pmix.stop_progress();
    }

    fn finalize(&self) {
        let _ = self.pmix.finalize();
    }
}

#[test]
fn stop_finalize_and_nb_race_without_a_late_or_lost_callback() {
    let topology = topology();
    let cpu0 = CpuSet::parse_list("0").unwrap();
    let stats = race::run(ITERATIONS, || Instance {
        pmix: Pmix::init(Role::Client, InitOptions::default()).unwrap(),
        topology: Arc::clone(&topology),
        cpu0: cpu0.clone(),
    })
    .unwrap_or_else(|v| panic!("{v}"));
    println!("{stats:?}");
    assert_eq!(stats.iterations, ITERATIONS);
    // The windows were hit: requests were still being posted when the stops began.
    assert!(
        stats.refused * 2 > ITERATIONS,
        "too few iterations raced a request against a stop: {stats:?}"
    );
}

/// The engine as it was (commit b313c45 `pmix/src/progress.rs` and the stop logic of
/// `Pmix::stop_progress` / `Pmix::finalize_as`), kept verbatim in substance: a channel,
/// and a `JoinHandle` the first stopper takes; a second stopper finds it gone and
/// returns at once.
mod old {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc::{Sender, channel};
    use std::sync::{Mutex, PoisonError};
    use std::thread::{self, JoinHandle};

    type Job = Box<dyn FnOnce() + Send + 'static>;

    pub(crate) struct Progress {
        sender: Mutex<Option<Sender<Job>>>,
        handle: Mutex<Option<JoinHandle<()>>>,
        stopped: AtomicBool,
    }

    impl Progress {
        pub(crate) fn start() -> Progress {
            let (tx, rx) = channel::<Job>();
            let handle = thread::spawn(move || {
                for job in rx {
                    if catch_unwind(AssertUnwindSafe(job)).is_err() {
                        eprintln!("pmix-rs: a callback panicked on the progress thread");
                    }
                }
            });
            Progress {
                sender: Mutex::new(Some(tx)),
                handle: Mutex::new(Some(handle)),
                stopped: AtomicBool::new(false),
            }
        }

        pub(crate) fn is_stopped(&self) -> bool {
            self.stopped.load(Ordering::Acquire)
        }

        pub(crate) fn post(&self, job: Job) -> Result<(), ()> {
            let guard = self.sender.lock().unwrap_or_else(PoisonError::into_inner);
            match guard.as_ref() {
                Some(tx) if !self.is_stopped() => tx.send(job).map_err(|_| ()),
                _ => Err(()),
            }
        }

        pub(crate) fn stop(&self) {
            self.stopped.store(true, Ordering::Release);
            drop(
                self.sender
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take(),
            );
            let handle = self
                .handle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(h) = handle {
                let _ = h.join();
            }
        }
    }

    impl Drop for Progress {
        fn drop(&mut self) {
            self.stop();
        }
    }

    /// The instance's side: `finalized`, and what `stop_progress` and `finalize_as`
    /// did around `Progress::stop`.
    pub(crate) struct Instance {
        pub(crate) progress: Progress,
        pub(crate) finalized: AtomicBool,
    }

    impl super::Engine for Instance {
        fn submit(&self, callback: Box<dyn FnOnce() + Send>) -> bool {
            // `admit`, then `post`.
            if self.finalized.load(Ordering::Acquire) || self.progress.is_stopped() {
                return false;
            }
            self.progress.post(callback).is_ok()
        }

        fn stop(&self) {
            // `stop_progress`: INIT after finalize, else stop.
            if self.finalized.load(Ordering::Acquire) {
                return;
            }
            self.progress.stop();
        }

        fn finalize(&self) {
            // `finalize_as`: INIT if already finalised, else mark and stop.
            if self.finalized.swap(true, Ordering::AcqRel) {
                return;
            }
            self.progress.stop();
        }
    }
}

#[test]
fn the_race_harness_catches_the_old_engines_early_returning_stopper() {
    let found = race::run(ITERATIONS, || old::Instance {
        progress: old::Progress::start(),
        finalized: Default::default(),
    });
    let violation = found.expect_err("the old engine passed the race harness");
    println!("found: {violation}");
    assert!(
        violation.contains("when a stopper returned") || violation.contains("ran 0 times"),
        "{violation}"
    );
}
