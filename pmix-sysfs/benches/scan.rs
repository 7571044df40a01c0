//! Scans this machine's `/sys` and, in the same run, times libhwloc's topology load with
//! I/O on the same machine (feature `native`), printing both and the ratio.
//!
//! `cargo bench -p pmix-sysfs --features native` (without the feature only the scan is
//! timed). A plain timing loop with short measurements: medians over a fixed time budget.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Runs `f` repeatedly for about `budget` (at least `min_runs` times) after a short
/// warm-up; returns the per-run times, sorted.
fn measure<T>(budget: Duration, min_runs: usize, mut f: impl FnMut() -> T) -> Vec<Duration> {
    for _ in 0..3 {
        black_box(f());
    }
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < min_runs || start.elapsed() < budget {
        let t = Instant::now();
        let out = f();
        times.push(t.elapsed());
        drop(black_box(out));
        if times.len() >= 100_000 {
            break;
        }
    }
    times.sort_unstable();
    times
}

fn median(t: &[Duration]) -> Duration {
    t[t.len() / 2]
}

fn report(what: &str, t: &[Duration]) {
    println!(
        "{what:<44} median {:>10.1} µs   min {:>10.1} µs   ({} runs)",
        median(t).as_secs_f64() * 1e6,
        t[0].as_secs_f64() * 1e6,
        t.len()
    );
}

fn main() {
    let scan = pmix_sysfs::scan_with_warnings("/").expect("this machine scans");
    let topo = &scan.topology;
    println!(
        "this machine: {} cpus, {} packages, {} PCI objects, {} OS devices, {} warnings",
        topo.machine_cpus().len(),
        topo.packages().len(),
        topo.nodes()
            .iter()
            .filter(|n| matches!(
                n.kind(),
                pmix_core::NodeKind::PciBridge | pmix_core::NodeKind::PciFunction
            ))
            .count(),
        topo.devices().len(),
        scan.warnings.len()
    );
    let ours = measure(Duration::from_secs(2), 50, || {
        pmix_sysfs::scan("/").expect("scan")
    });
    report("pmix-sysfs scan of /", &ours);
    native(median(&ours));
}

#[cfg(feature = "native")]
fn native(ours: Duration) {
    use pmix_hwloc::native::Hwloc;
    for (what, whole) in [
        ("libhwloc load, important I/O kept", false),
        ("libhwloc load, whole I/O", true),
    ] {
        let h = Hwloc::this_machine().whole_io(whole);
        let theirs = measure(Duration::from_secs(3), 20, || {
            h.load_hwloc().expect("libhwloc loads")
        });
        report(what, &theirs);
        let ratio = median(&theirs).as_secs_f64() / ours.as_secs_f64();
        println!(
            "  ratio: the sysfs scan is {ratio:.1}x faster than {what} (target: at least 20x){}",
            if ratio >= 20.0 {
                ""
            } else {
                "  ** below target **"
            }
        );
    }
}

#[cfg(not(feature = "native"))]
fn native(_: Duration) {
    println!(
        "libhwloc comparison skipped: it needs `cargo bench -p pmix-sysfs --features native` (libhwloc-dev, libudev-dev, pkg-config)"
    );
}
