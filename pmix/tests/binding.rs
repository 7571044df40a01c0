//! "My cpuset" (`PMIx_Get_cpuset` with `PMIX_CPUBIND_PROCESS`, and the default origin
//! of every query) is the union of the bindings of all the process's threads, not the
//! main thread's alone (which `/proc/self/status` reports as `Cpus_allowed_list`).
//!
//! This test runs without the test harness (`harness = false`): its main thread is the
//! program's own, so it can narrow the main thread's binding without touching another
//! test's threads, and no harness thread with a wider binding joins the union.

use std::sync::mpsc::channel;

use pmix::{BindEnvelope, Service};
use pmix_core::CpuSet;

/// Binds the calling thread to `cpu` alone.
fn pin_this_thread(cpu: u32) {
    // SAFETY: `set` is a zeroed `cpu_set_t` owned by this frame; CPU_SET writes one bit
    // of it (cpu < CPU_SETSIZE, checked by the caller's PUs coming from the kernel's
    // own mask of this size or less), and sched_setaffinity(0, …) reads exactly
    // `size_of::<cpu_set_t>()` bytes of it for the calling thread.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    assert_eq!(
        rc,
        0,
        "sched_setaffinity({cpu}): {}",
        std::io::Error::last_os_error()
    );
}

fn main() {
    let service = Service::new("sysfs", None).unwrap();
    let allowed = service.own_cpuset(BindEnvelope::Process).unwrap();
    let pus: Vec<u32> = allowed
        .iter()
        .filter(|&p| (p as usize) < libc::CPU_SETSIZE as usize)
        .collect();
    if pus.len() < 2 {
        // One PU: every thread has it, and the union is that PU.
        assert_eq!(
            allowed.to_string(),
            pmix_testkit::kernel_cpus_allowed_list()
        );
        println!("binding: one PU allowed ({allowed}), so the union is the main thread's: ok");
        return;
    }
    let (a, b) = (pus[0], pus[pus.len() - 1]);
    pin_this_thread(a);
    let (pinned_tx, pinned_rx) = channel();
    let (done_tx, done_rx) = channel::<()>();
    let other = std::thread::spawn(move || {
        pin_this_thread(b);
        pinned_tx.send(()).unwrap();
        let _ = done_rx.recv();
    });
    pinned_rx.recv().unwrap();

    let process = service.own_cpuset(BindEnvelope::Process).unwrap();
    let thread = service.own_cpuset(BindEnvelope::Thread).unwrap();
    let both = CpuSet::from_pus([a, b]);
    assert_eq!(
        process, both,
        "the process binding is the union of {a} and {b}"
    );
    assert_eq!(
        thread,
        CpuSet::from_pus([a]),
        "the calling thread's is its own"
    );
    // What pmix-topo used to read: the main thread's alone.
    assert_eq!(pmix_testkit::kernel_cpus_allowed_list(), a.to_string());

    done_tx.send(()).unwrap();
    other.join().unwrap();
    println!("binding: process {process} = union of thread bindings {a} and {b}: ok");
}
