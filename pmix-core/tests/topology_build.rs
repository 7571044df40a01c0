//! `TopologyBuilder::build` validation (docs/design.md §2): every refusal is a `BuildError`
//! naming the object, never a panic.

mod machines;

use machines::{cpus, dev, nic, pci};
use pmix_core::{
    BuildError, DeviceTypes, NodeId, NodeKind, OsDeviceSpec, PmixError, Status, TopologyBuilder,
};

#[test]
fn dangling_parent_is_refused() {
    let mut b = TopologyBuilder::new(cpus("0-3"));
    b.host_bridge(NodeId(42));
    let e = b.build().unwrap_err();
    assert_eq!(
        e,
        BuildError::DanglingParent {
            node: 1,
            parent: 42
        }
    );
    assert_eq!(e.status(), Status::ERR_BAD_PARAM);
}

#[test]
fn cycles_are_refused() {
    let mut b = TopologyBuilder::new(cpus("0-3"));
    // Forward references: 1 → 2 → 1.
    b.group(NodeId(2), cpus("0-1"));
    b.group(NodeId(1), cpus("0-1"));
    assert!(matches!(b.build(), Err(BuildError::Cycle { .. })));
    let mut b = TopologyBuilder::new(cpus("0-3"));
    b.group(NodeId(1), cpus("0")); // its own parent
    assert!(matches!(b.build(), Err(BuildError::Cycle { node: 1 })));
}

#[test]
fn misplaced_objects_are_refused() {
    let mut b = TopologyBuilder::new(cpus("0-3"));
    let hb = b.host_bridge(b.machine());
    b.package(hb, cpus("0-1"));
    assert_eq!(
        b.build().unwrap_err(),
        BuildError::Misplaced {
            node: 2,
            kind: NodeKind::Package,
            parent_kind: NodeKind::HostBridge
        }
    );
    let mut b = TopologyBuilder::new(cpus("0-3"));
    let hb = b.host_bridge(b.machine());
    b.os_device(hb, dev("eth0", DeviceTypes::NETWORK));
    assert!(matches!(
        b.build(),
        Err(BuildError::Misplaced {
            kind: NodeKind::OsDevice,
            ..
        })
    ));
    let mut b = TopologyBuilder::new(cpus("0-3"));
    let hb = b.host_bridge(b.machine());
    let f = b.pci_function(hb, pci(1, 0, 0), None);
    b.pci_function(f, pci(1, 0, 1), None);
    assert!(matches!(
        b.build(),
        Err(BuildError::Misplaced {
            kind: NodeKind::PciFunction,
            ..
        })
    ));
}

#[test]
fn duplicate_pci_address_under_one_host_bridge_is_refused() {
    let mut b = TopologyBuilder::new(cpus("0-3"));
    let hb = b.host_bridge(b.machine());
    let rp = b.pci_bridge(hb, pci(0, 1, 0), None);
    b.pci_function(rp, pci(1, 0, 0), None);
    b.pci_function(hb, pci(1, 0, 0), None);
    let e = b.build().unwrap_err();
    assert_eq!(
        e,
        BuildError::DuplicatePciAddress {
            addr: pci(1, 0, 0),
            first: 3,
            second: 4
        }
    );
    assert_eq!(
        e.to_string(),
        "PCI address 0000:01:00.0 appears twice under one host bridge (objects 3 and 4)"
    );
}

#[test]
fn same_pci_address_under_two_host_bridges_is_accepted_and_ambiguous_as_origin() {
    let mut b = TopologyBuilder::new(cpus("0-3"));
    let hb0 = b.host_bridge(b.machine());
    let hb1 = b.host_bridge(b.machine());
    let f0 = b.pci_function(hb0, pci(4, 0, 0), None);
    let f1 = b.pci_function(hb1, pci(4, 0, 0), None);
    b.os_device(f0, dev("sda", DeviceTypes::BLOCK));
    b.os_device(f1, nic("ib0", "00:00:00:00:00:01"));
    let t = b.build().unwrap();
    let e = t
        .distances(&pmix_core::Query::from_device("0000:04:00.0"), &mut [])
        .unwrap_err();
    assert_eq!(e.status(), Status::ERR_BAD_PARAM);
}

#[test]
fn duplicate_os_names_are_refused_naming_both_objects() {
    let mut b = TopologyBuilder::new(cpus("0-3"));
    b.os_device(b.machine(), dev("eth0", DeviceTypes::NETWORK));
    b.os_device(b.machine(), dev("eth0", DeviceTypes::NETWORK));
    assert_eq!(
        b.build().unwrap_err(),
        BuildError::DuplicateOsName {
            name: "eth0".into(),
            first: 1,
            second: 2
        }
    );
}

#[test]
fn cpus_outside_the_machine_are_refused() {
    let mut b = TopologyBuilder::new(cpus("0-3"));
    b.package(b.machine(), cpus("2-5"));
    assert_eq!(
        b.build().unwrap_err(),
        BuildError::CpusOutsideMachine { node: 1 }
    );
    let mut b = TopologyBuilder::new(cpus("0-3"));
    let hb = b.host_bridge(b.machine());
    b.set_locality(hb, cpus("9"));
    assert_eq!(
        b.build().unwrap_err(),
        BuildError::CpusOutsideMachine { node: 1 }
    );
}

#[test]
fn overlapping_packages_are_refused() {
    let mut b = TopologyBuilder::new(cpus("0-3"));
    b.package(b.machine(), cpus("0-2"));
    b.package(b.machine(), cpus("2-3"));
    assert_eq!(
        b.build().unwrap_err(),
        BuildError::OverlappingPackages { a: 1, b: 2 }
    );
}

#[test]
fn bad_names_and_types_are_refused() {
    let long = "x".repeat(256);
    for (name, what) in [
        ("", "OS name"),
        ("a\0b", "OS name"),
        (long.as_str(), "OS name"),
    ] {
        let mut b = TopologyBuilder::new(cpus("0"));
        b.os_device(b.machine(), dev(name, DeviceTypes::GPU));
        assert_eq!(
            b.build().unwrap_err(),
            BuildError::BadName { node: 1, what }
        );
    }
    let mut b = TopologyBuilder::new(cpus("0"));
    b.os_device(
        b.machine(),
        OsDeviceSpec {
            vendor_id: Some(String::new()),
            ..dev("nvml0", DeviceTypes::GPU)
        },
    );
    assert_eq!(
        b.build().unwrap_err(),
        BuildError::BadName {
            node: 1,
            what: "vendor identity"
        }
    );
    for mask in [0, 0x6, 0x40] {
        let mut b = TopologyBuilder::new(cpus("0"));
        b.os_device(b.machine(), dev("d0", DeviceTypes(mask)));
        assert_eq!(
            b.build().unwrap_err(),
            BuildError::BadDeviceType { node: 1, mask }
        );
    }
    let mut b = TopologyBuilder::new(cpus("0"));
    b.hostname("");
    assert_eq!(
        b.build().unwrap_err(),
        BuildError::BadName {
            node: 0,
            what: "hostname"
        }
    );
}

#[test]
fn machine_without_packages_is_one_package_and_defaults_hold() {
    let mut b = TopologyBuilder::new(cpus("0-7"));
    let hb = b.host_bridge(b.machine());
    let f = b.pci_function(hb, pci(1, 0, 0), None);
    b.os_device(f, nic("eth0", "00:00:00:00:00:01"));
    let t = b.build().unwrap();
    assert_eq!(t.packages(), &[cpus("0-7")]);
    assert_eq!(t.hostname(), "localhost");
    assert_eq!(t.devices()[0].package(), Some(0));
    assert_eq!(t.children(t.package_nodes().next().unwrap()), &[1]);
}

#[test]
fn explicit_locality_holds_for_the_subtree() {
    let mut b = TopologyBuilder::new(cpus("0-7"));
    let p0 = b.package(b.machine(), cpus("0-3"));
    b.package(b.machine(), cpus("4-7"));
    let hb = b.host_bridge(p0);
    b.set_locality(hb, cpus("4-5"));
    let f = b.pci_function(hb, pci(1, 0, 0), None);
    b.os_device(f, nic("eth0", "00:00:00:00:00:01"));
    let t = b.build().unwrap();
    assert_eq!(t.devices()[0].locality(), &cpus("4-5"));
    assert_eq!(t.devices()[0].package(), Some(1));
}
