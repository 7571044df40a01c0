//! Helpers shared by the integration tests: where the data is, unpacking tarballs into
//! temporary directories, and canonical text forms of what a topology says, so two
//! backends can be compared section by section.

#![allow(dead_code, unreachable_pub)]

pub mod cases;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use pmix_core::{CpuSet, DeviceDistance, DeviceTypes, NodeKind, Query, Topology};

/// `shared/data/`, next to the repository.
pub fn data_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data"))
}

/// The tarballs of `shared/data/<folder>/` ending in `ext`, sorted, with their names
/// (the file name without `ext`).
pub fn tarballs(folder: &str, ext: &str) -> Vec<(String, PathBuf)> {
    let dir = data_dir().join(folder);
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.strip_suffix(ext)?.to_owned();
            Some((name, p))
        })
        .collect();
    v.sort();
    v
}

/// A temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("pmix-sysfs-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Unpacks a tarball into a fresh temporary directory.
pub fn unpack(tarball: &Path) -> TempDir {
    let t = TempDir::new("tree");
    let ok = Command::new("tar")
        .arg("xf")
        .arg(tarball)
        .arg("-C")
        .arg(&t.0)
        .status()
        .expect("tar runs");
    assert!(ok.success(), "tar failed on {}", tarball.display());
    t
}

/// The device lines: name, type, PCI function, PCI path and uuid, sorted.
pub fn devices(topo: &Topology, skip: &[&str]) -> String {
    let mut v: Vec<String> = topo
        .devices()
        .iter()
        .enumerate()
        .filter(|(_, d)| !skip.contains(&d.name()))
        .map(|(i, d)| {
            let path: Vec<String> = topo
                .pci_path(pmix_core::DeviceId(i as u32))
                .iter()
                .map(|&n| {
                    topo.nodes()[n as usize]
                        .pci()
                        .map(|a| a.to_string())
                        .unwrap_or_default()
                })
                .collect();
            format!(
                "device {} {:?} pci={} depth={} path=[{}] uuid={} vendor={:?}",
                d.name(),
                d.kind(),
                d.pci().map_or_else(|| "-".to_owned(), |p| p.to_string()),
                d.depth(),
                path.join(" "),
                d.uuid(),
                d.vendor_id()
            )
        })
        .collect();
    v.sort();
    v.join("\n") + "\n"
}

/// Each device's locality and package, sorted.
pub fn localities(topo: &Topology, skip: &[&str]) -> String {
    let mut v: Vec<String> = topo
        .devices()
        .iter()
        .filter(|d| !skip.contains(&d.name()))
        .map(|d| {
            format!(
                "locality {} {} package={:?}",
                d.name(),
                d.locality(),
                d.package().map(|p| topo.packages()[p].to_string())
            )
        })
        .collect();
    v.sort();
    v.join("\n") + "\n"
}

/// Every PCI bridge and function: kind, class, parent, and (with `with_locality`) locality.
pub fn pci_objects(
    topo: &Topology,
    with_locality: bool,
    keep: impl Fn(pmix_core::PciAddr) -> bool,
) -> String {
    let nodes = topo.nodes();
    let mut v: Vec<String> = nodes
        .iter()
        .filter(|n| matches!(n.kind(), NodeKind::PciBridge | NodeKind::PciFunction))
        .filter(|n| n.pci().is_some_and(&keep))
        .map(|n| {
            let parent = n.parent().and_then(|p| topo.node(p));
            let up = match parent {
                Some(p) if p.kind() == NodeKind::PciBridge => {
                    p.pci().map(|a| a.to_string()).unwrap_or_default()
                }
                Some(p) if p.kind() == NodeKind::HostBridge => "host".to_owned(),
                _ => "none".to_owned(),
            };
            let mut s = format!(
                "pci {} {} class={} up={up}",
                n.pci().map(|a| a.to_string()).unwrap_or_default(),
                if n.kind() == NodeKind::PciBridge {
                    "bridge"
                } else {
                    "function"
                },
                n.pci_class()
                    .map_or_else(|| "?".to_owned(), |c| format!("{c:04x}")),
            );
            if with_locality {
                write!(
                    s,
                    " locality={}",
                    n.cpuset().map(|c| c.to_string()).unwrap_or_default()
                )
                .unwrap();
            }
            s
        })
        .collect();
    v.sort();
    v.join("\n") + "\n"
}

/// The packages' cpus, sorted by first cpu.
pub fn packages(topo: &Topology) -> Vec<CpuSet> {
    let mut v = topo.packages().to_vec();
    v.sort_by_key(|p| p.first());
    v
}

/// Runs a query and renders its answer as `osname TYPE pci min max` lines (devices in
/// `skip` left out), or the error.
pub fn answer(topo: &Topology, q: &Query<'_>, skip: &[&str]) -> String {
    let n = match topo.distances_len(q) {
        Ok(n) => n,
        Err(e) => return format!("error {e:?}\n"),
    };
    let mut out = vec![DeviceDistance::EMPTY; n];
    let mut s = String::new();
    match topo.distances(q, &mut out) {
        Ok(n) => {
            for d in &out[..n] {
                let dev = topo.device(d.device).expect("a reported device exists");
                if skip.contains(&dev.name()) {
                    continue;
                }
                let pci = dev.pci().map_or_else(|| "-".to_owned(), |p| p.to_string());
                let ty = dev.kind().name().unwrap_or("?");
                writeln!(s, "{} {ty} {pci} {} {}", dev.name(), d.mindist, d.maxdist).unwrap();
            }
        }
        Err(e) => writeln!(s, "error {e:?}").unwrap(),
    }
    s
}

/// Distances of every device from each cpu of `cpus`.
pub fn from_cpus(topo: &Topology, cpus: &[u32], skip: &[&str]) -> String {
    let mut s = String::new();
    for &c in cpus {
        let set = CpuSet::from_pus([c]);
        writeln!(s, "from cpu {c}:").unwrap();
        s += &answer(
            topo,
            &Query::from_cpuset(&set).types(DeviceTypes::ALL),
            skip,
        );
    }
    s
}

/// Distances of every device from every device.
pub fn from_devices(topo: &Topology, skip: &[&str]) -> String {
    let mut names: Vec<&str> = topo
        .devices()
        .iter()
        .map(|d| d.name())
        .filter(|n| !skip.contains(n))
        .collect();
    names.sort_unstable();
    let mut s = String::new();
    for n in names {
        writeln!(s, "from device {n}:").unwrap();
        s += &answer(topo, &Query::from_device(n).types(DeviceTypes::ALL), skip);
    }
    s
}

/// Asserts two texts are equal, showing the first differing line.
#[track_caller]
pub fn assert_same(what: &str, ours: &str, theirs: &str) {
    if ours == theirs {
        return;
    }
    for (i, (x, y)) in ours.lines().zip(theirs.lines()).enumerate() {
        if x != y {
            panic!(
                "{what}: first difference at line {}:\n  sysfs: {x}\n  hwloc: {y}",
                i + 1
            );
        }
    }
    panic!(
        "{what}: one is a prefix of the other ({} vs {} lines)\n--- sysfs:\n{ours}--- hwloc:\n{theirs}",
        ours.lines().count(),
        theirs.lines().count()
    );
}
