//! `PMIx_Progress_thread_stop` ∥ `PMIx_Finalize` ∥ `PMIx_Compute_distances_nb`, through
//! the C functions themselves: every accepted callback runs exactly once and none
//! after either call returned. The harness is the runtime's
//! (`pmix_testkit::race`: a first callback that sleeps, stops that start during
//! it, in varying order), here driving the C ABI with a NULL topology and cpuset, so each
//! iteration's fresh instance loads its topology and finds the caller's binding on the
//! progress thread while the stops race in.
//!
//! The run happens in a child process of this test binary, with `PMIX_TOPOLOGY=sysfs`
//! (this machine, quick to scan; whatever the query answers, the callback runs), so the
//! environment of the parent does not matter; the wait for it is bounded.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pmix_ffi::client::distances::PMIx_Compute_distances_nb;
use pmix_ffi::client::init::{
    PMIx_Finalize, PMIx_Init, PMIx_Initialized, PMIx_Progress_thread_stop,
};
use pmix_ffi::client::location::{PMIx_Cpuset_destruct, PMIx_Parse_cpuset_string};
use pmix_ffi::types::{
    pmix_cpuset_t, pmix_device_distance_t, pmix_release_cbfunc_t, pmix_status_t,
};
use pmix_testkit::child::{child_test, output_within};
use pmix_testkit::race::{self, Engine};

const ITERATIONS: usize = 1000;

type Callback = Box<dyn FnOnce() + Send>;

/// The C callback: releases the result, then runs the harness's closure.
unsafe extern "C" fn dist_cb(
    _status: pmix_status_t,
    _dist: *mut pmix_device_distance_t,
    _ndist: usize,
    cbdata: *mut c_void,
    release_fn: pmix_release_cbfunc_t,
    release_cbdata: *mut c_void,
) {
    if let Some(release) = release_fn {
        // SAFETY: the library's release_fn, called once with its own cbdata.
        unsafe { release(release_cbdata) };
    }
    // SAFETY: `cbdata` is the `Box<Callback>` `submit` leaked for this request, and the
    // library calls back once per accepted request.
    let callback = unsafe { Box::from_raw(cbdata.cast::<Callback>()) };
    callback();
}

/// A cpuset of the library's: two words the library only looks up (a registry key and
/// its static `source`), never memory anyone writes.
struct Cpuset(pmix_cpuset_t);

// SAFETY: the struct holds a pointer to the library's static `source` string and a
// registry key; the library reads them under its own lock and nobody writes them while
// the engine is shared (destructed in `Drop`, once every thread is done).
unsafe impl Send for Cpuset {}
// SAFETY: as above: shared reads only.
unsafe impl Sync for Cpuset {}

/// The process-wide instance, through the C ABI.
struct CAbi {
    cpu0: Cpuset,
    first: AtomicBool,
}

impl Drop for CAbi {
    fn drop(&mut self) {
        // The C contract: a cpuset the library filled.
        PMIx_Cpuset_destruct(&mut self.cpu0.0);
    }
}

impl Engine for CAbi {
    fn submit(&self, callback: Callback) -> bool {
        let cbdata = Box::into_raw(Box::new(callback));
        let cpuset = if self.first.swap(false, Ordering::SeqCst) {
            std::ptr::null_mut()
        } else {
            (&raw const self.cpu0.0).cast_mut()
        };
        // The C contract: NULL topology and info are allowed, the cpuset is NULL or the
        // library's (only read); the callback is safe to call from the progress thread
        // with this cbdata.
        let rc = PMIx_Compute_distances_nb(
            std::ptr::null_mut(),
            cpuset,
            std::ptr::null_mut(),
            0,
            Some(dist_cb),
            cbdata.cast(),
        );
        if rc == 0 {
            return true;
        }
        // Refused: the callback will never run; take the closure back.
        // SAFETY: `cbdata` came from `Box::into_raw` above and was not handed out.
        drop(unsafe { Box::from_raw(cbdata) });
        assert!(
            rc == -64 || rc == -31,
            "PMIx_Compute_distances_nb refused with {rc}, not NOT_AVAILABLE or INIT"
        );
        false
    }

    fn stop(&self) {
        PMIx_Progress_thread_stop(std::ptr::null(), 0);
    }

    fn finalize(&self) {
        let rc = PMIx_Finalize(std::ptr::null(), 0);
        assert!(rc == 0 || rc == -31, "PMIx_Finalize: {rc}");
    }
}

/// Run in a child process by the next test.
#[test]
#[ignore = "run by progress_thread_stop_finalize_and_nb_race_through_the_c_abi"]
fn child_c_abi_race() {
    let stats = race::run(ITERATIONS, || {
        assert_eq!(
            PMIx_Initialized(),
            0,
            "the last iteration left it initialised"
        );
        let rc = PMIx_Init(std::ptr::null_mut(), std::ptr::null_mut(), 0);
        assert_eq!(rc, 0);
        let mut cpu0 = pmix_cpuset_t {
            source: std::ptr::null_mut(),
            bitmap: std::ptr::null_mut(),
        };
        let rc = PMIx_Parse_cpuset_string(c"hwloc:0".as_ptr(), &mut cpu0);
        assert_eq!(rc, 0);
        CAbi {
            cpu0: Cpuset(cpu0),
            first: AtomicBool::new(true),
        }
    })
    .unwrap_or_else(|v| panic!("{v}"));
    assert!(
        stats.refused * 2 > ITERATIONS,
        "too few iterations raced a request against a stop: {stats:?}"
    );
    println!("race-ok {stats:?}");
}

#[test]
fn progress_thread_stop_finalize_and_nb_race_through_the_c_abi() {
    let mut cmd = child_test("child_c_abi_race");
    cmd.env("PMIX_TOPOLOGY", "sysfs")
        .env_remove("PMIX_MCA_pmix_hwloc_topo_file");
    let out = output_within(&mut cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("race-ok"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
