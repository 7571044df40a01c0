//! Builds a two-socket machine by hand and prints its device distances from cpu 0 and
//! from its first GPU.
//!
//! The machine (drawn in `tests/machines/mod.rs`): socket 0 has a host bridge with a
//! PCIe switch holding two GPUs and a NIC, a second root port with a dual-port NIC, an
//! InfiniBand HCA (`mlx5_0`, `ib0`, `ib1`) on a second host bridge and an Omni-Path
//! adapter on a third bridge attached to its second NUMA domain; socket 1 has an NVMe
//! disk and a NIC on two host bridges.
//!
//! Run: `cargo run -p pmix-core --example distances`.

#[path = "../tests/machines/mod.rs"]
mod machines;

use pmix_core::{CpuSet, DeviceDistance, PmixError, Query, Topology};

fn print(topo: &Topology, title: &str, query: &Query<'_>) {
    println!("{title}");
    let mut out = vec![DeviceDistance::EMPTY; topo.entry_count()];
    match topo.distances(query, &mut out) {
        Ok(n) => {
            println!(
                "  {:<12} {:<13} {:<11} {:<62} {:>3} {:>3}",
                "TYPE", "PCI", "OSNAME", "UUID", "MIN", "MAX"
            );
            for r in &out[..n] {
                let d = topo.device(r.device).expect("reported devices exist");
                let pci = d.pci().map_or_else(|| "-".to_string(), |p| p.to_string());
                let kind = d.kind().name().unwrap_or("?");
                println!(
                    "  {kind:<12} {pci:<13} {:<11} {:<62} {:>3} {:>3}",
                    d.name(),
                    d.uuid(),
                    r.mindist,
                    r.maxdist
                );
            }
        }
        Err(e) => println!("  error: {e} ({})", e.status().text()),
    }
    println!();
}

fn main() {
    let topo = machines::reference_machine();
    let cpu0 = CpuSet::from_pus([0]);
    print(&topo, "From cpu 0:", &Query::from_cpuset(&cpu0));
    print(
        &topo,
        "From GPU nvml0 (PMIX_DEVICE_DIST_ORIGIN):",
        &Query::from_device("nvml0"),
    );
    println!("distance = 16 x tier + PCIe depth (from a cpu) or hops (from a device);");
    println!("cpu tiers: 0 local, 1 same package, 2 other package;");
    println!(
        "device tiers: 0 same function, 1 same switch/port, 2 same host bridge, 3 same package, 4 other"
    );
}
