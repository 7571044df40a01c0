//! Helpers shared by the integration tests (the data is found through `pmix_testkit`): a
//! canonical text form of everything a topology answers, so two backends can be compared line by line.

#![allow(dead_code, unreachable_pub)]

use std::fmt::Write as _;

use pmix_core::{CpuSet, DeviceTypes, NodeKind, Query, Topology};
pub use pmix_testkit::answer;

/// Everything the model says about a topology's devices, and every distance from each
/// package's first cpu and from each device, as sorted text.
pub fn fingerprint(topo: &Topology) -> String {
    let mut s = String::new();
    writeln!(s, "host {}", topo.hostname()).unwrap();
    writeln!(s, "machine {}", topo.machine_cpus()).unwrap();
    for p in topo.packages() {
        writeln!(s, "package {p}").unwrap();
    }
    // The whole I/O tree, bridges and functions without OS devices included: each I/O
    // object with its address, class, parent and locality.
    let nodes = topo.nodes();
    let mut io: Vec<String> = nodes
        .iter()
        .filter(|n| {
            matches!(
                n.kind(),
                NodeKind::HostBridge | NodeKind::PciBridge | NodeKind::PciFunction
            )
        })
        .map(|n| {
            let parent = n.parent().and_then(|p| topo.node(p));
            let up = match parent {
                Some(p) if p.kind().is_processor() => format!(
                    "{:?} {}",
                    p.kind(),
                    p.cpuset().map(|c| c.to_string()).unwrap_or_default()
                ),
                Some(p) => format!(
                    "{:?} {}",
                    p.kind(),
                    p.pci()
                        .map(|a| a.to_string())
                        .unwrap_or_else(|| p.cpuset().map(|c| c.to_string()).unwrap_or_default())
                ),
                None => "none".to_owned(),
            };
            format!(
                "io {:?} {} class={:?} locality={} under {up}",
                n.kind(),
                n.pci().map(|a| a.to_string()).unwrap_or_default(),
                n.pci_class(),
                n.cpuset().map(|c| c.to_string()).unwrap_or_default()
            )
        })
        .collect();
    io.sort();
    for l in io {
        writeln!(s, "{l}").unwrap();
    }
    let mut devs: Vec<String> = topo
        .devices()
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let path: Vec<String> = topo
                .pci_path(pmix_core::DeviceId(i as u32))
                .iter()
                .map(|&n| topo.nodes()[n as usize].pci().map(|a| a.to_string()).unwrap_or_default())
                .collect();
            format!(
                "device {} {:?} uuid={} vendor={:?} pci={:?} locality={} package={:?} depth={} path=[{}]",
                d.name(),
                d.kind(),
                d.uuid(),
                d.vendor_id(),
                d.pci().map(|p| p.to_string()),
                d.locality(),
                d.package(),
                d.depth(),
                path.join(" ")
            )
        })
        .collect();
    devs.sort();
    for d in devs {
        writeln!(s, "{d}").unwrap();
    }
    for p in topo.packages() {
        let first = p
            .first()
            .map_or_else(CpuSet::new, |c| CpuSet::from_pus([c]));
        writeln!(s, "from cpus {first}:").unwrap();
        s += &answer(
            topo,
            &Query::from_cpuset(&first).types(DeviceTypes::ALL),
            &[],
        );
    }
    let mut names: Vec<&str> = topo.devices().iter().map(|d| d.name()).collect();
    names.sort_unstable();
    for n in names {
        writeln!(s, "from device {n}:").unwrap();
        s += &answer(topo, &Query::from_device(n).types(DeviceTypes::ALL), &[]);
    }
    s
}
