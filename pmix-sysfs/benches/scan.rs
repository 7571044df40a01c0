//! Scans this machine's `/sys` and, in the same run, times libhwloc's topology load with
//! I/O on the same machine (feature `native`), printing both, the ratio, and what each
//! side does that the other does not, so the ratio is read for what it is: two
//! programs doing different amounts of work, not one doing the same work faster.
//!
//! `cargo bench -p pmix-sysfs --features native` (without the feature only the scan is
//! timed). A plain timing loop with short measurements: medians over a fixed time budget.

use std::cell::Cell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use pmix_sysfs::{FileKind, FsError, RealFs, Scanner, SysFs};

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

/// A [`SysFs`] that counts what the scanner asks of the filesystem.
struct Counting {
    fs: RealFs,
    reads: Cell<usize>,
    bytes: Cell<usize>,
    links: Cell<usize>,
    listings: Cell<usize>,
    stats: Cell<usize>,
}

impl SysFs for Counting {
    fn read_to_string(&self, path: &str, cap: usize) -> Result<String, FsError> {
        self.reads.set(self.reads.get() + 1);
        let r = self.fs.read_to_string(path, cap);
        if let Ok(s) = &r {
            self.bytes.set(self.bytes.get() + s.len());
        }
        r
    }
    fn read_link(&self, path: &str, cap: usize) -> Result<String, FsError> {
        self.links.set(self.links.get() + 1);
        self.fs.read_link(path, cap)
    }
    fn read_dir(&self, path: &str, max_entries: usize) -> Result<Vec<String>, FsError> {
        self.listings.set(self.listings.get() + 1);
        self.fs.read_dir(path, max_entries)
    }
    fn kind(&self, path: &str, follow: bool) -> Result<FileKind, FsError> {
        self.stats.set(self.stats.get() + 1);
        self.fs.kind(path, follow)
    }
    fn display(&self, path: &str) -> String {
        self.fs.display(path)
    }
}

fn main() {
    let counting = Counting {
        fs: RealFs::new("/"),
        reads: Cell::new(0),
        bytes: Cell::new(0),
        links: Cell::new(0),
        listings: Cell::new(0),
        stats: Cell::new(0),
    };
    let scan = Scanner::new(&counting).scan().expect("this machine scans");
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
    println!(
        "one pmix-sysfs scan asks the filesystem for: {} file reads ({} bytes), {} link reads, {} directory listings, {} stats",
        counting.reads.get(),
        counting.bytes.get(),
        counting.links.get(),
        counting.listings.get(),
        counting.stats.get()
    );
    let ours = measure(Duration::from_secs(2), 50, || {
        pmix_sysfs::scan("/").expect("scan")
    });
    report("pmix-sysfs scan of /", &ours);
    native(median(&ours));
}

/// What libhwloc's load does that the scan does not, from hwloc's Linux backend
/// (`topology-linux.c`) and PCI discovery (`pci-common.c`); every sysfs and procfs
/// path named here is among the strings of Debian's libhwloc 2.9 (the one compared).
const HWLOC_ONLY: &[&str] = &[
    "cpus: per online cpu core_cpus/thread_siblings, core_id, cluster_cpus, die_cpus and package_cpus/core_siblings \
     (the scan reads physical_package_id only), /proc/cpuinfo (model, vendor per package), cpu kinds (cpufreq, cpu_capacity)",
    "caches: cpuN/cache/index0-9 (shared_cpu_map, level, type, id, size, coherency_line_size, number_of_sets, \
     physical_line_partition) into cache objects; cores and PUs as objects",
    "memory: /proc/meminfo, per-node meminfo and huge pages, the NUMA distance matrix (node*/distance), \
     memory attributes and initiators (HMAT), memory-side caches",
    "the process's allowed cpus and nodes (cgroup/cpuset: /proc/self/cgroup, /proc/mounts), uname and DMI (sys/class/dmi/id) infos",
    "PCI: per function its config space (up to 256 bytes: bridge type, secondary/subordinate buses, revision, PCIe link speed), \
     class, vendor, device, subsystem_vendor, subsystem_device; sys/bus/pci/slots; the tree built from bus ranges",
    "OS devices: block size, sector size, devtype, dev and udev properties (vendor, model, revision, serial, type); \
     net dev_port and InfiniBand port; InfiniBand per-port state, LID, LMC and every GID; DAX and CXL memory devices, \
     BXI, VE attributes; drm and dma",
    "its other components when present (x86 CPUID on every PU, the opencl/gl plugins Debian ships), and the core's work: \
     inserting every object by cpuset, I/O filtering, levels, info attributes",
];

/// What the scan does that libhwloc's timed load does not.
const SCAN_ONLY: &[&str] = &[
    "builds the query-ready pmix-core Topology: validation (cycles, dangling parents, duplicate PCI addresses and names), \
     per-device package, locality, host bridge and depth, and the uuids; the libhwloc time stops at hwloc's own tree \
     (converting it into that model, as pmix-hwloc does, would add to hwloc's side)",
    "reads proc/driver/nvidia/gpus/<bdf>/information for 3D controllers and accelerators without a drm device \
     (hwloc finds those only through its NVML/CUDA plugins)",
    "reads local_cpulist before local_cpus (hwloc reads local_cpus of each bus's first object)",
];

#[cfg(feature = "native")]
fn native(ours: Duration) {
    use pmix_hwloc::native::Hwloc;
    use std::collections::BTreeMap;
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
        // What that load built on this machine, by object type, with its backends.
        let t = h.load_hwloc().expect("libhwloc loads");
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        let mut infos = 0;
        for o in t.objects() {
            *kinds.entry(o.object_type().to_string()).or_default() += 1;
            infos += o.infos().len();
        }
        let backends: Vec<String> = t
            .root_object()
            .infos()
            .iter()
            .filter(|i| i.name().to_bytes() == b"Backend")
            .map(|i| i.value().to_string_lossy().into_owned())
            .collect();
        let matrices = t.distances(None).map_or(0, |d| d.len());
        let objects: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        println!(
            "  that load built {} ({infos} info attributes, {matrices} distance matrices; backends: {})",
            objects.join(", "),
            backends.join(", ")
        );
    }
    println!("what libhwloc's load includes that the scan does not:");
    for l in HWLOC_ONLY {
        println!("  - {l}");
    }
    println!("what the scan includes that libhwloc's load does not:");
    for l in SCAN_ONLY {
        println!("  - {l}");
    }
}

#[cfg(not(feature = "native"))]
fn native(_: Duration) {
    println!(
        "libhwloc comparison skipped: it needs `cargo bench -p pmix-sysfs --features native` (libhwloc-dev, libudev-dev, pkg-config)"
    );
    let _ = (HWLOC_ONLY, SCAN_ONLY);
}
