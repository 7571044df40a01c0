//! Helpers shared by the integration tests: canonical text forms of what a topology
//! says, so two backends can be compared section by section (the fixtures and their
//! unpacking come from `pmix-testkit`).

#![allow(dead_code, unreachable_pub)]

pub mod cases;
pub mod constructed;

use std::fmt::Write as _;

use pmix_core::{CpuSet, DeviceTypes, NodeKind, Query, Topology};
use pmix_testkit::answer;

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
