//! With the `native` feature: the sysfs scan equals libhwloc (through pmix-hwloc's
//! native backend, every I/O object kept) on this machine and on every captured tree of
//! `testdata/hwloc-linux/` (`HWLOC_FSROOT`, with the tree's `.env` variables), the
//! differences being those the crate docs list (`common::cases` for the trees).
//!
//! `cargo test -p pmix-sysfs --features native` (needs Debian's `libhwloc-dev`,
//! `libudev-dev`, `pkg-config`).

#![cfg(feature = "native")]

mod common;

use std::collections::BTreeSet;

use common::cases::{CASES, Case, all_pci, case, check};
use common::constructed::{pruned_capture, unpruned};
use common::{assert_same, devices, from_cpus, from_devices, localities, packages, pci_objects};
use pmix_core::{DeviceTypes, NodeKind, PciAddr, Topology};
use pmix_hwloc::native::Hwloc;
use pmix_testkit::{TempDir, unpack};

/// Run by [`libhwloc_on_captured_trees`] in a child process with `HWLOC_FSROOT` set:
/// prints libhwloc's XML export of the tree.
#[test]
#[ignore = "helper: run in a child process with HWLOC_FSROOT set"]
fn child_export_for_fsroot() {
    assert!(
        std::env::var_os("HWLOC_FSROOT").is_some(),
        "run me with HWLOC_FSROOT set"
    );
    let xml = Hwloc::this_machine()
        .whole_io(true)
        .export_xml()
        .expect("libhwloc reads the tree");
    pmix_testkit::print_framed("XML", &xml);
}

#[test]
fn libhwloc_on_captured_trees() {
    let dir = pmix_testkit::data_dir().join("hwloc-linux");
    for c in CASES {
        let name = c.name;
        let tree = unpack(&dir.join(format!("{name}.tar.bz2")));
        let root = tree.0.join(name);
        let env = pmix_testkit::hwloc_env_file(&dir.join(format!("{name}.env")));
        let xml = pmix_testkit::run_child_test("child_export_for_fsroot", &root, &env, "XML");
        let native = pmix_hwloc::from_str(&xml).unwrap_or_else(|e| panic!("{name}: {e}"));
        let ours = pmix_sysfs::scan(&root).unwrap_or_else(|e| panic!("{name}: {e}"));
        check(case(name), &ours, &native);
    }
}

/// libhwloc's view of a hand-written tree (`common::constructed`), through
/// `HWLOC_FSROOT`.
fn libhwloc_on(tree: &common::constructed::Tree) -> (Topology, Topology) {
    let dir = TempDir::new("sysfs-native-constructed");
    tree.write_to(&dir.0);
    let xml = pmix_testkit::run_child_test("child_export_for_fsroot", &dir.0, &[], "XML");
    let native = pmix_hwloc::from_str(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let ours = pmix_sysfs::scan(&dir.0).expect("the constructed tree scans");
    (ours, native)
}

/// The constructed trees differ from hwloc nowhere.
const CONSTRUCTED: Case = Case {
    name: "constructed",
    only_hwloc: &[],
    placed_differently: &[],
    localities_differ: None,
    packages_differ: None,
    pci_in_hwloc: all_pci,
    ours: |_, _| {},
};

#[test]
fn libhwloc_passes_over_unlisted_path_directories_as_the_scan_does() {
    let (ours, native) = libhwloc_on(&pruned_capture());
    // What hwloc itself says, so the comparison below cannot agree on a wrong answer.
    let eth0 = native
        .devices()
        .iter()
        .find(|d| d.name() == "eth0")
        .unwrap();
    assert_eq!(eth0.depth(), 2, "hwloc's depth of eth0");
    let eth2 = native
        .devices()
        .iter()
        .find(|d| d.name() == "eth2")
        .unwrap();
    assert_eq!(
        (eth2.depth(), eth2.locality().to_string()),
        (0, "2-3".to_owned())
    );
    assert_eq!(native.hostname(), "capnode");
    check(&CONSTRUCTED, &ours, &native);

    // And with the directories listed as bridges, both see them.
    let (ours, native) = libhwloc_on(&unpruned());
    let eth0 = native
        .devices()
        .iter()
        .find(|d| d.name() == "eth0")
        .unwrap();
    assert_eq!(eth0.depth(), 3, "hwloc's depth of eth0, unpruned");
    check(&CONSTRUCTED, &ours, &native);
}

/// hwloc's devices on this machine that we do not report, by documented difference:
/// drm devices of VGA functions without a render node, DAX devices.
fn only_in_hwloc(hwloc: &Topology) -> Vec<String> {
    let vga: BTreeSet<PciAddr> = hwloc
        .nodes()
        .iter()
        .filter(|n| n.kind() == NodeKind::PciFunction && n.pci_class() == Some(0x0300))
        .filter_map(|n| n.pci())
        .collect();
    let with_render: BTreeSet<PciAddr> = hwloc
        .devices()
        .iter()
        .filter(|d| d.name().starts_with("renderD"))
        .filter_map(|d| d.pci())
        .collect();
    hwloc
        .devices()
        .iter()
        .filter(|d| {
            let vga_no_render = d.kind() == DeviceTypes::GPU
                && d.pci()
                    .is_some_and(|a| vga.contains(&a) && !with_render.contains(&a));
            vga_no_render || d.name().starts_with("dax")
        })
        .map(|d| d.name().to_owned())
        .collect()
}

#[test]
fn libhwloc_on_this_machine() {
    let native = Hwloc::this_machine()
        .whole_io(true)
        .load_topology()
        .expect("libhwloc loads this machine");
    let ours = pmix_sysfs::scan_with_warnings("/").expect("this machine scans");
    for w in &ours.warnings {
        eprintln!("{w}");
    }
    let ours = ours.topology;
    // Both read the kernel's host name.
    assert_eq!(ours.hostname(), native.hostname());
    let only = only_in_hwloc(&native);
    let skip: Vec<&str> = only.iter().map(String::as_str).collect();
    for n in &skip {
        assert!(
            ours.devices().iter().all(|d| d.name() != *n),
            "we report {n}"
        );
    }
    assert_same("devices", &devices(&ours, &skip), &devices(&native, &skip));
    assert_same(
        "PCI objects",
        &pci_objects(&ours, true, |a| a.domain <= 0xffff),
        &pci_objects(&native, true, |_| true),
    );
    assert_eq!(packages(&ours), packages(&native));
    assert_same(
        "localities",
        &localities(&ours, &skip),
        &localities(&native, &skip),
    );
    let firsts: Vec<u32> = packages(&ours).iter().filter_map(|p| p.first()).collect();
    assert_same(
        "from cpus",
        &from_cpus(&ours, &firsts, &skip),
        &from_cpus(&native, &firsts, &skip),
    );
    assert_same(
        "from devices",
        &from_devices(&ours, &skip),
        &from_devices(&native, &skip),
    );
}
