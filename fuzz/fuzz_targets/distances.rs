//! Arbitrary builder operations (parents by raw id, so dangling parents, cycles and
//! misplaced objects happen) plus one query. Invariants: no panic; a refused build is
//! an error value; on success `mindist ≤ maxdist`, entries strictly ordered, the same
//! answer twice, a too-small buffer left untouched, and a device origin at 0 when its
//! type is selected.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pmix_core::{
    CpuSet, DeviceDistance, DeviceTypes, DistanceError, NodeId, OsDeviceSpec, PciAddr, Query,
    TopologyBuilder,
};

#[derive(Arbitrary, Debug)]
enum Op {
    Package {
        parent: u8,
        lo: u8,
        len: u8,
    },
    Numa {
        parent: u8,
        lo: u8,
        len: u8,
    },
    Group {
        parent: u8,
        lo: u8,
        len: u8,
    },
    HostBridge {
        parent: u8,
    },
    PciBridge {
        parent: u8,
        bus: u8,
        dev: u8,
    },
    PciFunction {
        parent: u8,
        bus: u8,
        dev: u8,
        func: u8,
    },
    OsDevice {
        parent: u8,
        name: u8,
        kind: u8,
        vendor: Option<u8>,
        mac: Option<u8>,
    },
    SetLocality {
        node: u8,
        lo: u8,
        len: u8,
    },
}

#[derive(Arbitrary, Debug)]
enum Origin {
    Cpus { lo: u8, len: u8 },
    Device(String),
}

#[derive(Arbitrary, Debug)]
struct Input {
    machine_pus: u8,
    hostname: Option<String>,
    ops: Vec<Op>,
    types: Option<u64>,
    ids: Vec<String>,
    origin: Origin,
}

fn range(lo: u8, len: u8) -> CpuSet {
    let mut s = CpuSet::new();
    s.insert_range(u32::from(lo), u32::from(lo) + u32::from(len));
    s
}

const NAMES: [&str; 8] = [
    "card", "renderD", "nvml", "cuda", "opencl", "eth", "mlx5_", "ib",
];

fuzz_target!(|input: Input| {
    let mut b = TopologyBuilder::new(CpuSet::first_n(u32::from(input.machine_pus)));
    if let Some(h) = &input.hostname {
        b.hostname(h.as_str());
    }
    for op in input.ops.iter().take(200) {
        let id = |p: &u8| NodeId(u32::from(*p));
        match op {
            Op::Package { parent, lo, len } => drop(b.package(id(parent), range(*lo, *len))),
            Op::Numa { parent, lo, len } => drop(b.numa(id(parent), range(*lo, *len))),
            Op::Group { parent, lo, len } => drop(b.group(id(parent), range(*lo, *len))),
            Op::HostBridge { parent } => drop(b.host_bridge(id(parent))),
            Op::PciBridge { parent, bus, dev } => {
                if let Ok(a) = PciAddr::new(0, *bus, dev % 32, 0) {
                    b.pci_bridge(id(parent), a, None);
                }
            }
            Op::PciFunction {
                parent,
                bus,
                dev,
                func,
            } => {
                if let Ok(a) = PciAddr::new(0, *bus, dev % 32, func % 8) {
                    b.pci_function(id(parent), a, None);
                }
            }
            Op::OsDevice {
                parent,
                name,
                kind,
                vendor,
                mac,
            } => {
                let spec = OsDeviceSpec {
                    name: format!("{}{}", NAMES[usize::from(name % 8)], name / 8),
                    kind: DeviceTypes(1 << (kind % 7)),
                    vendor_id: vendor.map(|v| format!("GPU-{v:02x}")),
                    address: mac.map(|m| format!("00:00:00:00:00:{m:02x}")),
                    ..Default::default()
                };
                b.os_device(id(parent), spec);
            }
            Op::SetLocality { node, lo, len } => drop(b.set_locality(id(node), range(*lo, *len))),
        }
    }
    let Ok(topo) = b.build() else { return };

    let ids: Vec<&str> = input.ids.iter().take(4).map(String::as_str).collect();
    let cpus;
    let mut q = match &input.origin {
        Origin::Cpus { lo, len } => {
            cpus = range(*lo, *len);
            Query::from_cpuset(&cpus)
        }
        Origin::Device(name) => Query::from_device(name),
    };
    q.ids = &ids;
    q.types = input.types.map(DeviceTypes);

    let mut out = vec![DeviceDistance::EMPTY; topo.devices().len() + 1];
    let n = match topo.distances(&q, &mut out) {
        Ok(n) => n,
        Err(DistanceError::BufferTooSmall { .. }) => {
            panic!("buffer sized for every device was too small")
        }
        Err(_) => return,
    };
    let rows = &out[..n];
    let mut again = vec![DeviceDistance::EMPTY; n];
    assert_eq!(topo.distances(&q, &mut again), Ok(n));
    assert_eq!(rows, &again[..]);
    if n > 0 {
        let mut small = vec![DeviceDistance::EMPTY; n - 1];
        assert_eq!(
            topo.distances(&q, &mut small),
            Err(DistanceError::BufferTooSmall { needed: n })
        );
        assert!(small.iter().all(|d| *d == DeviceDistance::EMPTY));
    }
    let key = |d: &DeviceDistance| {
        let dev = topo.device(d.device).expect("reported device exists");
        (dev.pci().is_none(), dev.pci(), dev.name().to_string())
    };
    for r in rows {
        assert!(r.mindist <= r.maxdist);
    }
    for w in rows.windows(2) {
        assert!(key(&w[0]) < key(&w[1]), "entries out of order");
    }
    if let Origin::Device(name) = &input.origin {
        for r in rows {
            assert_eq!(r.mindist, r.maxdist);
        }
        // The device named by its osname is reported at 0 when its type is selected.
        if let Some(o) = topo.devices().iter().find(|d| d.name() == name.as_str()) {
            let types = q.types.unwrap_or(DeviceTypes::DEFAULT);
            if ids.is_empty() && o.kind().intersects(types) {
                assert!(
                    rows.iter().any(|r| r.mindist == 0),
                    "origin {name} missing at 0"
                );
            }
        }
    }
});
