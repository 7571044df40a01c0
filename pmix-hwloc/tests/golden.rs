//! Golden distance tables: for real machines' hwloc XML exports, the distances from the
//! first cpu of each package and from two devices, written as data files in
//! `tests/golden/*.golden` and derived by hand from docs/design.md §3.
//!
//! How each table was derived (each file's comments repeat it for its machine): the
//! devices were read off the XML — their PCI function, the PCI bridges between their
//! host bridge and the function (counted by following the nested `Bridge
//! bridge_type="1-1"` elements: a root port is one, a PCIe switch two), their host
//! bridge, and the package whose cpuset holds the locality (the cpuset of the processor
//! object the host bridge hangs under; none when it spans packages). The tables then
//! follow docs/design.md §3 line by line: from a cpu, tier 0 when the cpu is in that package,
//! else 2, plus the depth; from a device, 0 on the same function, 16 plus the bridges
//! below the lowest common bridge, else 32 / 48 / 64 (same host bridge / same package /
//! otherwise) plus both depths. Entries are in PCI bus id order, then name, devices
//! without PCI last; GPU and COPROC OS devices of one function fold into one entry per
//! type (cuda* before opencl*, nvml* for GPUs).
//!
//! Format: `file NAME` (each listed file must give the same answers), `host NAME`,
//! `uuid OSNAME UUID`, then `query cpus LIST` or `query origin NAME` blocks of
//! `osname TYPE pci|- mindist maxdist` lines closed by `end`. Queries select every type.

mod common;

use std::path::Path;

use common::answer;
use pmix_core::{CpuSet, DeviceTypes, Query, Topology};
use pmix_testkit::hwloc_xml as xml;

struct Golden {
    files: Vec<String>,
    host: Option<String>,
    uuids: Vec<(String, String)>,
    /// (query line, expected answer)
    queries: Vec<(String, String)>,
}

fn read_golden(name: &str) -> Golden {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.golden"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut g = Golden {
        files: Vec::new(),
        host: None,
        uuids: Vec::new(),
        queries: Vec::new(),
    };
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some((q, body)) = current.as_mut() {
            if line == "end" {
                g.queries.push((q.clone(), std::mem::take(body)));
                current = None;
            } else {
                body.push_str(line);
                body.push('\n');
            }
            continue;
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "file" => g.files.push(rest.to_owned()),
            "host" => g.host = Some(rest.to_owned()),
            "uuid" => {
                let (n, u) = rest.split_once(' ').expect("uuid OSNAME UUID");
                g.uuids.push((n.to_owned(), u.to_owned()));
            }
            "query" => current = Some((rest.to_owned(), String::new())),
            other => panic!("{name}: unknown golden line {other:?}"),
        }
    }
    assert!(current.is_none(), "{name}: a query block is not closed");
    assert!(
        !g.files.is_empty() && !g.queries.is_empty(),
        "{name}: empty golden file"
    );
    g
}

fn run_query(topo: &Topology, q: &str) -> String {
    let (kind, arg) = q
        .split_once(' ')
        .expect("query cpus LIST | query origin NAME");
    match kind {
        "cpus" => {
            let cpus = CpuSet::parse_list(arg).expect("a cpu list");
            answer(
                topo,
                &Query::from_cpuset(&cpus).types(DeviceTypes::ALL),
                &[],
            )
        }
        "origin" => answer(topo, &Query::from_device(arg).types(DeviceTypes::ALL), &[]),
        other => panic!("unknown query kind {other}"),
    }
}

/// Checks every file a golden table names against it; returns how many queries ran.
fn check(name: &str) -> usize {
    let g = read_golden(name);
    let mut ran = 0;
    for file in &g.files {
        let topo = pmix_hwloc::from_path(xml(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        if let Some(h) = &g.host {
            assert_eq!(topo.hostname(), h, "{file}: host name");
        }
        for (osname, uuid) in &g.uuids {
            let d = topo.devices().iter().find(|d| d.name() == osname);
            assert_eq!(
                d.map(|d| d.uuid()),
                Some(uuid.as_str()),
                "{file}: uuid of {osname}"
            );
        }
        for (q, expected) in &g.queries {
            let got = run_query(&topo, q);
            assert!(
                got == *expected,
                "{file}: query {q}:\nexpected:\n{expected}got:\n{got}"
            );
            ran += 1;
        }
        // Every package's first cpu has a table.
        for p in topo.packages() {
            let first = p.first().expect("a package has cpus");
            let has = g
                .queries
                .iter()
                .any(|(q, _)| q.split_whitespace().nth(1) == Some(&first.to_string()));
            assert!(
                has,
                "{file}: no table from cpu {first}, the first of package {p}"
            );
        }
    }
    ran
}

#[test]
fn golden_24em64t_2n6c2t_pci() {
    assert_eq!(check("24em64t-2n6c2t-pci"), 4);
}

#[test]
fn golden_16intel64_many_vfs() {
    assert_eq!(check("16intel64-manyVFs"), 4);
}

#[test]
fn golden_96em64t_4n4d3ca2co_pci() {
    assert_eq!(check("96em64t-4n4d3ca2co-pci"), 18);
}

#[test]
fn golden_power8gpudistances() {
    assert_eq!(check("power8gpudistances"), 4);
}

#[test]
fn golden_192em64t_12gr2n8c2t() {
    assert_eq!(check("192em64t-12gr2n8c2t"), 26);
}

#[test]
fn golden_28intel64_2p2g7c_cod() {
    assert_eq!(check("28intel64-2p2g7c-CoD"), 4);
}

/// The v1 export and its v1tov2 conversion answer the same table (with the `native`
/// feature, `tests/native.rs` adds libhwloc's own v2 export of the v1 file).
#[test]
fn golden_8em64t_v1_and_v1tov2() {
    assert_eq!(check("8em64t-2p2ca2co-nonodesets"), 8);
}

/// The v2 and v3 exports (enum vs bitmask `osdev_type`, HostName placement) answer the
/// same table.
#[test]
fn golden_cxlmem_dax_v2_and_v3() {
    assert_eq!(check("cxlmem+dax"), 6);
}

/// `32em64t-2n8c2t-pci-wholeio.xml` lists PCI address 0000:04:00.0 twice (a RAID
/// function under package 0, a ConnectX-4 under package 1's root port 80:03.0, whose
/// bus range is [84-84]). pmix-core accepts an address repeated under another host
/// bridge (hwloc loads such files too), so the file imports and answers its table.
#[test]
fn golden_32em64t_2n8c2t_pci_wholeio() {
    assert_eq!(check("32em64t-2n8c2t-pci-wholeio"), 4);
}
