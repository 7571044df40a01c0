//! Scans a sysfs tree (default `/`) and prints its topology tree, devices and warnings.
//!
//! `cargo run -p pmix-sysfs --example scan -- [ROOT]`

use pmix_core::{NodeId, NodeKind, Topology};

fn print(topo: &Topology, id: NodeId, depth: usize) {
    let Some(n) = topo.node(id) else { return };
    let pad = "  ".repeat(depth);
    let cpus = n.cpuset().map(|c| c.to_string()).unwrap_or_default();
    let what = match n.kind() {
        NodeKind::OsDevice => {
            let d = n.device().and_then(|d| topo.device(d));
            d.map(|d| format!("{} {:?} uuid={}", d.name(), d.kind(), d.uuid()))
                .unwrap_or_default()
        }
        NodeKind::PciBridge | NodeKind::PciFunction => format!(
            "{} class={}",
            n.pci().map(|a| a.to_string()).unwrap_or_default(),
            n.pci_class()
                .map_or_else(|| "?".to_owned(), |c| format!("{c:04x}"))
        ),
        _ => String::new(),
    };
    println!("{pad}{:?} [{cpus}] {what}", n.kind());
    for &c in topo.children(id) {
        print(topo, NodeId(c), depth + 1);
    }
}

fn main() {
    let root = std::env::args().nth(1).unwrap_or_else(|| "/".to_owned());
    match pmix_sysfs::scan_with_warnings(&root) {
        Ok(scan) => {
            println!("host {}", scan.topology.hostname());
            print(&scan.topology, NodeId(0), 0);
            for w in &scan.warnings {
                eprintln!("warning: {w}");
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
