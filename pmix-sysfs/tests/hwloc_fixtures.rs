//! The sysfs scan of every captured tree in `testdata/hwloc-linux/` agrees with what
//! hwloc 2.9 reported for the same tree (`*.hwloc-2.9-wholeio.xml`, read by pmix-hwloc's
//! importer): the same host name, devices (osname, type, PCI function, PCI path, uuid),
//! PCI objects, localities, and distance tables from every package's first cpu and from
//! every device. Where hwloc behaves differently on purpose or by limitation (crate
//! docs, "Where this backend and hwloc differ"), the case says why and asserts our
//! documented behaviour instead.

mod common;

use common::cases::{CASES, case, check};
use pmix_core::Topology;
use pmix_testkit::{tarballs, unpack};

fn load(name: &str) -> (Topology, Topology) {
    let dir = pmix_testkit::data_dir().join("hwloc-linux");
    let tree = unpack(&dir.join(format!("{name}.tar.bz2")));
    let scan =
        pmix_sysfs::scan_with_warnings(tree.0.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    for w in &scan.warnings {
        eprintln!("{name}: {w}");
    }
    let hwloc = pmix_hwloc::from_path(dir.join(format!("{name}.hwloc-2.9-wholeio.xml")))
        .unwrap_or_else(|e| panic!("{name}: the importer refuses hwloc's export: {e}"));
    // The host names are compared as they are: both read the capture's
    // proc/hwloc-nofile-info, and without one both say localhost.
    (scan.topology, hwloc)
}

fn run(name: &str) {
    let (ours, hwloc) = load(name);
    check(case(name), &ours, &hwloc);
}

#[test]
fn every_hwloc_tarball_has_a_case() {
    let names: Vec<String> = tarballs("hwloc-linux", ".tar.bz2")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let cases: Vec<&str> = CASES.iter().map(|c| c.name).collect();
    assert_eq!(
        names, cases,
        "add a Case for every tarball in testdata/hwloc-linux"
    );
}

#[test]
fn pcidomain32bits() {
    run(CASES[0].name);
}

#[test]
fn em64t_2n8c_1mic() {
    run(CASES[1].name);
}

#[test]
fn intel64_2g2n4c_pci_forced_localities() {
    run(CASES[2].name);
}

#[test]
fn intel64_4n10c_pci_conflicts() {
    run(CASES[3].name);
}

#[test]
fn nvidiagpunumanodes() {
    run(CASES[4].name);
}
