//! The sysfs scan of every captured tree in `testdata/ghw-snapshots/` (trees without
//! PCI `config` files, with many PCI devices and an accelerator) matches what the tree
//! shows, as written in `tests/expected/<name>.txt`: the machine, packages and NUMA
//! nodes, every host bridge with its locality, every PCI object with its kind, class and
//! parent, and every OS device with its type, function, depth, locality and uuid. The
//! expected files were written by reading the unpacked trees (their comments quote the
//! raw facts), not from the scanner's output.

mod common;

use std::collections::BTreeSet;

use pmix_core::{NodeId, NodeKind, Topology};
use pmix_testkit::{tarballs, unpack};

/// The scan in the expected files' line format.
fn render(topo: &Topology) -> Vec<String> {
    let mut v = vec![format!("machine {}", topo.machine_cpus())];
    v.extend(
        common::packages(topo)
            .iter()
            .map(|p| format!("package {p}")),
    );
    let nodes = topo.nodes();
    for (i, n) in nodes.iter().enumerate() {
        let loc = n.cpuset().map(|c| c.to_string()).unwrap_or_default();
        match n.kind() {
            NodeKind::Numa => v.push(format!("numa {loc}")),
            NodeKind::HostBridge => {
                // A host bridge is named by the domain and root bus of its children.
                let bus = topo
                    .children(NodeId(i as u32))
                    .iter()
                    .find_map(|&c| nodes[c as usize].pci())
                    .map(|a| format!("{:04x}:{:02x}", a.domain, a.bus))
                    .unwrap_or_else(|| "?".to_owned());
                v.push(format!("host {bus} locality={loc}"));
            }
            _ => {}
        }
    }
    v.extend(
        common::pci_objects(topo, false, |_| true)
            .lines()
            .map(str::to_owned),
    );
    for d in topo.devices() {
        v.push(format!(
            "device {} {:?} pci={} depth={} locality={} uuid={}",
            d.name(),
            d.kind(),
            d.pci().map_or_else(|| "-".to_owned(), |p| p.to_string()),
            d.depth(),
            d.locality(),
            d.uuid()
        ));
    }
    v
}

fn expected(name: &str) -> Vec<String> {
    let path = format!("{}/tests/expected/{name}.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

fn check(name: &str) {
    let (_, tarball) = tarballs("ghw-snapshots", ".tar.gz")
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no tarball {name}"));
    let tree = unpack(&tarball);
    let scan = pmix_sysfs::scan_with_warnings(&tree.0).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(scan.warnings.is_empty(), "{name}: {:?}", scan.warnings);
    let got = render(&scan.topology);
    let want = expected(name);
    let (g, w): (BTreeSet<&String>, BTreeSet<&String>) =
        (got.iter().collect(), want.iter().collect());
    let missing: Vec<_> = w.difference(&g).collect();
    let extra: Vec<_> = g.difference(&w).collect();
    assert!(
        missing.is_empty() && extra.is_empty() && got.len() == want.len(),
        "{name}:\n  expected but not scanned: {missing:#?}\n  scanned but not expected: {extra:#?}"
    );
}

#[test]
fn every_ghw_tarball_has_an_expected_file() {
    for (name, _) in tarballs("ghw-snapshots", ".tar.gz") {
        let path = format!("{}/tests/expected/{name}.txt", env!("CARGO_MANIFEST_DIR"));
        assert!(
            std::path::Path::new(&path).exists(),
            "write {path} for {name}"
        );
    }
}

#[test]
fn amd64_accel() {
    check("linux-amd64-accel");
}

#[test]
fn amd64_415ee03b() {
    check("linux-amd64-415ee03b8c4d1c4f07ae2e9d8b3d3d6d");
}

#[test]
fn amd64_61797caf() {
    check("linux-amd64-61797caf7c0b6bca1725ad7975ed4773");
}

#[test]
fn arm64_c288e077() {
    check("linux-arm64-c288e0776090cd558ef793b2a4e61939");
}
