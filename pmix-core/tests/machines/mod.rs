//! Hand-built topologies that mirror real machines, shared by the distance tests, the
//! example and the benchmark (each includes this file with `#[path]`).
#![allow(dead_code, unreachable_pub)]

use pmix_core::{CpuSet, DeviceTypes, NodeId, OsDeviceSpec, PciAddr, Topology, TopologyBuilder};

/// `0000:BB:DD.F` from its parts.
pub fn pci(bus: u8, dev: u8, func: u8) -> PciAddr {
    PciAddr::new(0, bus, dev, func).expect("test address in range")
}

/// An OS device with only a name and a type.
pub fn dev(name: &str, kind: DeviceTypes) -> OsDeviceSpec {
    OsDeviceSpec {
        name: name.into(),
        kind,
        ..Default::default()
    }
}

/// A NIC with a MAC address.
pub fn nic(name: &str, mac: &str) -> OsDeviceSpec {
    OsDeviceSpec {
        address: Some(mac.into()),
        ..dev(name, DeviceTypes::NETWORK)
    }
}

pub fn cpus(list: &str) -> CpuSet {
    CpuSet::parse_list(list).expect("test cpu list")
}

/// The reference machine of the distance tests (and the example of docs/guide.md):
///
/// ```text
/// machine 0-15, host "node1"
/// ├─ package 0 (0-7): NUMA 0 (0-3), NUMA 1 (4-7)
/// │  ├─ host bridge A
/// │  │  ├─ root port 00:01.0 ─ switch up 01:00.0
/// │  │  │     ├─ down 02:00.0 ─ GPU 03:00.0: card1 renderD128 nvml0 (GPU-aaaa) | cuda0 opencl0d0
/// │  │  │     ├─ down 02:01.0 ─ GPU 04:00.0: card2 renderD129 | cuda1 (GPU-bbbb)
/// │  │  │     └─ down 02:02.0 ─ NIC 05:00.0: eth0
/// │  │  └─ root port 00:02.0 ─ NIC 06:00.0: eth2, NIC 06:00.1: eth3
/// │  ├─ host bridge B ─ root port 20:01.0 ─ HCA 21:00.0: mlx5_0, ib0, ib1
/// │  └─ host bridge C (under NUMA 1) ─ 30:00.0: hfi1_0 (no GUIDs)
/// ├─ package 1 (8-15)
/// │  ├─ host bridge D ─ root port 80:01.0 ─ NVMe 81:00.0: nvme0n1
/// │  └─ host bridge E ─ NIC a0:00.0: eth1 (no address)
/// └─ dma0chan0 (no PCI, attached to the machine)
/// ```
pub fn reference_machine() -> Topology {
    let mut b = TopologyBuilder::new(cpus("0-15"));
    b.hostname("node1");
    let m = b.machine();
    let p0 = b.package(m, cpus("0-7"));
    let _n0 = b.numa(p0, cpus("0-3"));
    let n1 = b.numa(p0, cpus("4-7"));
    let p1 = b.package(m, cpus("8-15"));
    b.numa(p1, cpus("8-15"));

    let hb_a = b.host_bridge(p0);
    let rp = b.pci_bridge(hb_a, pci(0, 1, 0), Some(0x0604));
    let up = b.pci_bridge(rp, pci(1, 0, 0), Some(0x0604));
    let d0 = b.pci_bridge(up, pci(2, 0, 0), Some(0x0604));
    let d1 = b.pci_bridge(up, pci(2, 1, 0), Some(0x0604));
    let d2 = b.pci_bridge(up, pci(2, 2, 0), Some(0x0604));
    let g0 = b.pci_function(d0, pci(3, 0, 0), Some(0x0302));
    for n in ["card1", "renderD128"] {
        b.os_device(g0, dev(n, DeviceTypes::GPU));
    }
    b.os_device(
        g0,
        OsDeviceSpec {
            vendor_id: Some("GPU-aaaa".into()),
            ..dev("nvml0", DeviceTypes::GPU)
        },
    );
    b.os_device(g0, dev("cuda0", DeviceTypes::COPROC));
    b.os_device(g0, dev("opencl0d0", DeviceTypes::COPROC));
    let g1 = b.pci_function(d1, pci(4, 0, 0), Some(0x0302));
    b.os_device(g1, dev("card2", DeviceTypes::GPU));
    b.os_device(g1, dev("renderD129", DeviceTypes::GPU));
    b.os_device(
        g1,
        OsDeviceSpec {
            vendor_id: Some("GPU-bbbb".into()),
            ..dev("cuda1", DeviceTypes::COPROC)
        },
    );
    let e0 = b.pci_function(d2, pci(5, 0, 0), Some(0x0200));
    b.os_device(e0, nic("eth0", "00:11:22:33:44:50"));
    let rp2 = b.pci_bridge(hb_a, pci(0, 2, 0), Some(0x0604));
    let e2 = b.pci_function(rp2, pci(6, 0, 0), Some(0x0200));
    b.os_device(e2, nic("eth2", "00:11:22:33:44:52"));
    let e3 = b.pci_function(rp2, pci(6, 0, 1), Some(0x0200));
    b.os_device(e3, nic("eth3", "00:11:22:33:44:53"));

    let hb_b = b.host_bridge(p0);
    let rp3 = b.pci_bridge(hb_b, pci(0x20, 1, 0), Some(0x0604));
    let hca = b.pci_function(rp3, pci(0x21, 0, 0), Some(0x0207));
    b.os_device(
        hca,
        OsDeviceSpec {
            node_guid: Some("ec0d:9a03:00a4:c4c6".into()),
            sys_image_guid: Some("ec0d:9a03:00a4:c4c6".into()),
            ..dev("mlx5_0", DeviceTypes::OPENFABRICS)
        },
    );
    b.os_device(
        hca,
        nic(
            "ib0",
            "80:00:02:08:fe:80:00:00:00:00:00:00:ec:0d:9a:03:00:a4:c4:c6",
        ),
    );
    b.os_device(
        hca,
        nic(
            "ib1",
            "80:00:02:09:fe:80:00:00:00:00:00:00:ec:0d:9a:03:00:a4:c4:c7",
        ),
    );

    let hb_c = b.host_bridge(n1);
    let hfi = b.pci_function(hb_c, pci(0x30, 0, 0), Some(0x0208));
    b.os_device(hfi, dev("hfi1_0", DeviceTypes::OPENFABRICS));

    let hb_d = b.host_bridge(p1);
    let rp4 = b.pci_bridge(hb_d, pci(0x80, 1, 0), Some(0x0604));
    let nvme = b.pci_function(rp4, pci(0x81, 0, 0), Some(0x0108));
    b.os_device(nvme, dev("nvme0n1", DeviceTypes::BLOCK));
    let hb_e = b.host_bridge(p1);
    let e1 = b.pci_function(hb_e, pci(0xa0, 0, 0), Some(0x0200));
    b.os_device(e1, dev("eth1", DeviceTypes::NETWORK));

    b.os_device(m, dev("dma0chan0", DeviceTypes::DMA));
    b.build().expect("reference machine builds")
}

/// A two-socket machine for the benchmark: per socket, two host bridges, each with a
/// root port and a two-level PCIe switch holding four GPUs (card, renderD, nvml, cuda
/// aliases) and two NICs; `sockets × 8` GPUs and `sockets × 4` NICs in all.
pub fn dgx_like(sockets: u32) -> Topology {
    let per = 56;
    let mut b = TopologyBuilder::new(CpuSet::first_n(per * sockets));
    b.hostname("dgx");
    let m = b.machine();
    let mut bus = 0u8;
    let mut gpu = 0;
    let mut nicn = 0;
    for s in 0..sockets {
        let mut set = CpuSet::new();
        set.insert_range(s * per, (s + 1) * per);
        let p = b.package(m, set.clone());
        b.numa(p, set);
        for _ in 0..2 {
            let hb = b.host_bridge(p);
            let root_bus = bus;
            bus += 1;
            let rp = b.pci_bridge(hb, pci(root_bus, 1, 0), Some(0x0604));
            let up_bus = bus;
            bus += 1;
            let up = b.pci_bridge(rp, pci(up_bus, 0, 0), Some(0x0604));
            let down_bus = bus;
            bus += 1;
            for k in 0..6u8 {
                let down = b.pci_bridge(up, pci(down_bus, k, 0), Some(0x0604));
                let leaf = bus;
                bus += 1;
                if k < 4 {
                    let f = b.pci_function(down, pci(leaf, 0, 0), Some(0x0302));
                    b.os_device(f, dev(&format!("card{gpu}"), DeviceTypes::GPU));
                    b.os_device(f, dev(&format!("renderD{}", 128 + gpu), DeviceTypes::GPU));
                    b.os_device(
                        f,
                        OsDeviceSpec {
                            vendor_id: Some(format!("GPU-{gpu:04x}")),
                            ..dev(&format!("nvml{gpu}"), DeviceTypes::GPU)
                        },
                    );
                    b.os_device(f, dev(&format!("cuda{gpu}"), DeviceTypes::COPROC));
                    gpu += 1;
                } else {
                    let f = b.pci_function(down, pci(leaf, 0, 0), Some(0x0207));
                    b.os_device(
                        f,
                        OsDeviceSpec {
                            node_guid: Some(format!("0000:0000:0000:{nicn:04x}")),
                            sys_image_guid: Some(format!("0000:0000:0000:{nicn:04x}")),
                            ..dev(&format!("mlx5_{nicn}"), DeviceTypes::OPENFABRICS)
                        },
                    );
                    b.os_device(
                        f,
                        nic(&format!("ib{nicn}"), &format!("00:00:00:00:00:{nicn:02x}")),
                    );
                    nicn += 1;
                }
            }
        }
    }
    let _ = NodeId(0);
    b.build().expect("benchmark machine builds")
}
