//! `pmix-topo tree`: the topology as an indented tree, one object a line: the machine
//! (with the host name its uuids use), packages, NUMA nodes and groups with their
//! cpus, then the I/O hierarchy (host bridges with their locality, PCI bridges and
//! functions with their class) down to each OS device with its type and uuid.

use std::fmt::Write as _;

use pmix_core::{NodeId, NodeKind, Topology};

/// The tree of `topo`, depth-first in child order, two spaces per level.
pub(super) fn render(topo: &Topology) -> String {
    let mut out = String::new();
    let mut stack = vec![(0u32, 0usize)];
    while let Some((id, depth)) = stack.pop() {
        let Some(node) = topo.node(NodeId(id)) else {
            continue;
        };
        let pad = "  ".repeat(depth);
        let cpus = node.cpuset().map(ToString::to_string).unwrap_or_default();
        let class = node
            .pci_class()
            .map(|c| format!(" class {c:04x}"))
            .unwrap_or_default();
        let pci = node.pci().map(|p| p.to_string()).unwrap_or_default();
        let line = match node.kind() {
            NodeKind::Machine => format!("Machine cpus {cpus} host {}", topo.hostname()),
            NodeKind::Package => format!("Package cpus {cpus}"),
            NodeKind::Numa => format!("NUMA cpus {cpus}"),
            NodeKind::Group => format!("Group cpus {cpus}"),
            NodeKind::HostBridge => format!("HostBridge locality {cpus}"),
            NodeKind::PciBridge => format!("PCIBridge {pci}{class}"),
            NodeKind::PciFunction => format!("PCI {pci}{class}"),
            NodeKind::OsDevice => match node.device().and_then(|d| topo.device(d)) {
                Some(d) => format!(
                    "{} {} {}",
                    d.name(),
                    d.kind().name().unwrap_or("?"),
                    d.uuid()
                ),
                None => "OS device".to_owned(),
            },
        };
        // Infallible: writing to a String.
        let _ = writeln!(out, "{pad}{line}");
        for &c in topo.children(NodeId(id)).iter().rev() {
            stack.push((c, depth + 1));
        }
    }
    out
}
