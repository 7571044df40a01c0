//! hwloc 3.0 exports: `<pci_locality>` deciding the locality of PCI trees, and every
//! other element a 3.0 export carries at top level or in an object (the list and its
//! sources are in the crate docs, "hwloc 3.0 documents").
//!
//! `tests/data/pci-locality.v3.xml` is a hand-written 3.0 document (its comment says how
//! it was made): package 0 (cpus 0-1) holds host bridge 0000:[00-0f] with `eth0`; host
//! bridges 0000:[2b-2f] (a root port, then `ib0`/`mlx5_0`) and 0000:[30-3b] (`nvme0n1`,
//! no bridge) hang under the Machine (cpus 0-3), and a `<pci_locality>` for buses
//! 0x2b-0x3b says they are local to cpus 0-1.

mod common;

use common::fingerprint;
use pmix_core::{CpuSet, DeviceDistance, DeviceTypes, Query, Topology};
use pmix_hwloc::{XmlError, XmlErrorKind};
use pmix_testkit::first_difference;

fn fixture() -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pci-locality.v3.xml");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The document without its `<pci_locality>` lines.
fn without_localities(doc: &str) -> String {
    doc.lines()
        .filter(|l| !l.contains("<pci_locality"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The document without its `<pci_locality>` lines, with `extra` before `</topology>`.
fn with_localities(doc: &str, extra: &str) -> String {
    without_localities(doc).replacen("</topology>", &format!("{extra}</topology>"), 1)
}

fn import(doc: &str) -> Topology {
    pmix_hwloc::from_str(doc).unwrap_or_else(|e| panic!("{e}"))
}

fn import_err(doc: &str) -> XmlError {
    match pmix_hwloc::from_str(doc) {
        Ok(t) => panic!("imported: {t:?}"),
        Err(e) => e,
    }
}

/// The 1-based line where `needle` first occurs in `doc`.
fn line_of(doc: &str, needle: &str) -> u32 {
    let at = doc
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in the document"));
    doc[..at].matches('\n').count() as u32 + 1
}

/// The min distance of device `name` from the PUs `cpus`.
fn from_cpus(topo: &Topology, cpus: &str, name: &str) -> u16 {
    let cpus = CpuSet::parse_list(cpus).unwrap();
    let q = Query::from_cpuset(&cpus).types(DeviceTypes::ALL);
    distance_of(topo, &q, name)
}

/// The distance of device `name` from device `origin`.
fn from_device(topo: &Topology, origin: &str, name: &str) -> u16 {
    let q = Query::from_device(origin).types(DeviceTypes::ALL);
    distance_of(topo, &q, name)
}

fn distance_of(topo: &Topology, q: &Query<'_>, name: &str) -> u16 {
    let mut out = vec![DeviceDistance::EMPTY; topo.distances_len(q).unwrap()];
    let n = topo.distances(q, &mut out).unwrap();
    out[..n]
        .iter()
        .find(|d| topo.device(d.device).unwrap().name() == name)
        .unwrap_or_else(|| panic!("{name} not reported"))
        .mindist
}

fn locality(topo: &Topology, name: &str) -> String {
    let d = topo.devices().iter().find(|d| d.name() == name).unwrap();
    d.locality().to_string()
}

/// docs/design.md §3.2/§3.3: `16 × tier + depth`.
fn dist(tier: u16, depth: u16) -> u16 {
    16 * tier + depth
}

#[test]
fn pci_locality_decides_a_host_bridge_locality() {
    let doc = fixture();
    let with = import(&doc);
    let without = import(&without_localities(&doc));
    assert_eq!(with.hostname(), "twosock");
    assert_eq!(with.devices().len(), 4);

    // Under the Machine alone, the two host bridges' devices span both packages.
    for name in ["ib0", "mlx5_0", "nvme0n1"] {
        assert_eq!(
            locality(&without, name),
            "0-3",
            "{name} without pci_locality"
        );
        assert_eq!(locality(&with, name), "0-1", "{name} with pci_locality");
    }
    // eth0's host bridge hangs under package 0, whose cpuset the first range repeats.
    assert_eq!(locality(&without, "eth0"), "0-1");
    assert_eq!(locality(&with, "eth0"), "0-1");

    // From a cpu of package 0: local now (tier 0), remote before (tier 2, a locality
    // spanning packages). From a cpu of package 1: remote either way.
    assert_eq!(from_cpus(&without, "0", "ib0"), dist(2, 1));
    assert_eq!(from_cpus(&with, "0", "ib0"), dist(0, 1));
    assert_eq!(from_cpus(&without, "0", "nvme0n1"), dist(2, 0));
    assert_eq!(from_cpus(&with, "0", "nvme0n1"), dist(0, 0));
    assert_eq!(from_cpus(&without, "2", "ib0"), dist(2, 1));
    assert_eq!(from_cpus(&with, "2", "ib0"), dist(2, 1));
    assert_eq!(from_cpus(&with, "2", "nvme0n1"), dist(2, 0));
    // From eth0 (host bridge 0000:[00-0f], package 0): another host bridge in the same
    // package is tier 3, in no common package tier 4; both are one bridge deep.
    assert_eq!(from_device(&without, "eth0", "ib0"), dist(4, 2));
    assert_eq!(from_device(&with, "eth0", "ib0"), dist(3, 2));
    assert_eq!(from_device(&with, "eth0", "nvme0n1"), dist(3, 1));
}

#[test]
fn pci_locality_that_repeats_the_parent_cpuset_changes_nothing() {
    let doc = fixture();
    let base = fingerprint(&import(&without_localities(&doc)));
    let same = with_localities(
        &doc,
        "  <pci_locality domain=\"0x0\" bus_min=\"0x00\" bus_max=\"0x0f\" cpuset=\"0x00000003\"/>\n\
         <pci_locality domain=\"0x0\" bus_min=\"0x2b\" bus_max=\"0x3b\" cpuset=\"0x0000000f\"/>\n",
    );
    let got = fingerprint(&import(&same));
    assert!(got == base, "{}", first_difference(&got, &base));
}

#[test]
fn pci_locality_first_range_in_document_order_wins() {
    let doc = fixture();
    let pkg0 = "  <pci_locality domain=\"0x0\" bus_min=\"0x2b\" bus_max=\"0x2f\" cpuset=\"0x00000003\"/>\n";
    let pkg1 = "  <pci_locality domain=\"0x0\" bus_min=\"0x20\" bus_max=\"0x3f\" cpuset=\"0x0000000c\"/>\n";
    let t = import(&with_localities(&doc, &format!("{pkg0}{pkg1}")));
    assert_eq!(locality(&t, "ib0"), "0-1");
    // nvme0n1's bus 0x30 is only in the second range.
    assert_eq!(locality(&t, "nvme0n1"), "2-3");
    let t = import(&with_localities(&doc, &format!("{pkg1}{pkg0}")));
    assert_eq!(locality(&t, "ib0"), "2-3");
    assert_eq!(locality(&t, "nvme0n1"), "2-3");
}

#[test]
fn pci_locality_of_another_domain_or_bus_range_does_not_apply() {
    let doc = fixture();
    for other in [
        "<pci_locality domain=\"0x1\" bus_min=\"0x2b\" bus_max=\"0x3b\" cpuset=\"0x00000003\"/>",
        "<pci_locality domain=\"0x0\" bus_min=\"0x2c\" bus_max=\"0x2f\" cpuset=\"0x00000003\"/>",
        "<pci_locality domain=\"0x0\" bus_min=\"0x3c\" bus_max=\"0xff\" cpuset=\"0x00000003\"/>",
    ] {
        let t = import(&with_localities(&doc, other));
        assert_eq!(locality(&t, "ib0"), "0-3", "{other}");
        assert_eq!(locality(&t, "nvme0n1"), "0-3", "{other}");
    }
    // The range is looked up by the host bridge's secondary bus (0x2b), not by the bus
    // of the function below its root port (0x2c).
    let t = import(&with_localities(
        &doc,
        "<pci_locality domain=\"0x0\" bus_min=\"0x2c\" bus_max=\"0x2c\" cpuset=\"0x00000003\"/>",
    ));
    assert_eq!(locality(&t, "ib0"), "0-3");
}

#[test]
fn pci_locality_without_bridge_pci_uses_the_host_bridge_first_child_bus() {
    let doc = fixture().replacen(" bridge_pci=\"0000:[2b-2f]\"", "", 1);
    assert!(!doc.contains("bridge_pci=\"0000:[2b-2f]\""));
    let t = import(&doc);
    assert_eq!(locality(&t, "ib0"), "0-1");
}

#[test]
fn pci_locality_applies_to_a_pci_tree_without_host_bridge() {
    // libhwloc with bridges filtered out attaches PCI functions to processor objects.
    let doc = fixture();
    let start = doc
        .find("    <object type=\"Bridge\" gp_index=\"40\"")
        .unwrap();
    let nvme_open = doc[start..].find('\n').unwrap() + start + 1;
    let nvme_close = doc[nvme_open..].find("      </object>\n").unwrap() + nvme_open + 15;
    let bridge_close = doc[nvme_close..].find("    </object>\n").unwrap() + nvme_close + 14;
    let unbridged = format!(
        "{}{}{}",
        &doc[..start],
        &doc[nvme_open..nvme_close],
        &doc[bridge_close..]
    );
    assert!(!unbridged.contains("bridge_pci=\"0000:[30-3b]\""));
    let t = import(&unbridged);
    assert_eq!(locality(&t, "nvme0n1"), "0-1");
    let t = import(&without_localities(&unbridged));
    assert_eq!(locality(&t, "nvme0n1"), "0-3");
}

#[test]
fn pci_locality_keeps_only_the_machine_cpus_and_is_ignored_without_any() {
    let doc = fixture();
    // cpu 4 is not in this machine (offline or disallowed PUs can appear in hwloc's
    // complete sets): it is dropped.
    let t = import(&with_localities(
        &doc,
        "<pci_locality domain=\"0x0\" bus_min=\"0x2b\" bus_max=\"0x3b\" cpuset=\"0x00000013\"/>",
    ));
    assert_eq!(locality(&t, "ib0"), "0-1");
    // Nothing left: the tree decides, as when hwloc finds no object for a locality.
    let t = import(&with_localities(
        &doc,
        "<pci_locality domain=\"0x0\" bus_min=\"0x2b\" bus_max=\"0x3b\" cpuset=\"0x00000010\"/>",
    ));
    assert_eq!(locality(&t, "ib0"), "0-3");
}

#[test]
fn pci_locality_contradicting_the_tree_is_an_error_naming_both_lines() {
    let doc = with_localities(
        &fixture(),
        "  <pci_locality domain=\"0x0\" bus_min=\"0x00\" bus_max=\"0x0f\" cpuset=\"0x0000000c\"/>\n",
    );
    let e = import_err(&doc);
    assert_eq!(e.line(), line_of(&doc, "<pci_locality domain"), "{e}");
    assert_eq!(e.element(), "<pci_locality>");
    let hb = line_of(&doc, "bridge_pci=\"0000:[00-0f]\"");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!(
            "PCI locality cpuset 2-3 is not within the cpus 0-1 of the object that <object type=\"Bridge\"> on line {hb} hangs under"
        )),
        "{msg}"
    );
    assert!(matches!(e.kind(), XmlErrorKind::Model(_)), "{e}");
}

#[test]
fn pci_locality_attributes_are_checked_and_named() {
    let doc = fixture();
    for (attrs, want) in [
        (
            "bus_min=\"0x2b\" bus_max=\"0x3b\" cpuset=\"0x3\"",
            "missing attribute domain",
        ),
        (
            "domain=\"0x0\" bus_max=\"0x3b\" cpuset=\"0x3\"",
            "missing attribute bus_min",
        ),
        (
            "domain=\"0x0\" bus_min=\"0x2b\" cpuset=\"0x3\"",
            "missing attribute bus_max",
        ),
        (
            "domain=\"0x0\" bus_min=\"0x2b\" bus_max=\"0x3b\"",
            "missing attribute cpuset",
        ),
        (
            "domain=\"0x0\" bus_min=\"0xzz\" bus_max=\"0x3b\" cpuset=\"0x3\"",
            "attribute bus_min=\"0xzz\": expected a number",
        ),
        (
            "domain=\"0x0\" bus_min=\"0x2b\" bus_max=\"0x100\" cpuset=\"0x3\"",
            "attribute bus_max=\"0x100\": more than 0xff",
        ),
        (
            "domain=\"0x100000000\" bus_min=\"0x2b\" bus_max=\"0x3b\" cpuset=\"0x3\"",
            "attribute domain=\"0x100000000\": more than 0xffffffff",
        ),
        (
            "domain=\"0x0\" bus_min=\"0x3b\" bus_max=\"0x2b\" cpuset=\"0x3\"",
            "attribute bus_max=\"0x2b\": below bus_min",
        ),
        (
            "domain=\"0x0\" bus_min=\"0x2b\" bus_max=\"0x3b\" cpuset=\"0xq\"",
            "attribute cpuset=\"0xq\"",
        ),
    ] {
        let bad = with_localities(&doc, &format!("  <pci_locality {attrs}/>\n"));
        let e = import_err(&bad);
        assert!(e.to_string().contains(want), "{attrs}: {e}");
        assert_eq!(e.line(), line_of(&bad, "<pci_locality "), "{attrs}: {e}");
        assert_eq!(e.element(), "<pci_locality>");
    }
    // Decimal numbers are read too (hwloc writes hex).
    let t = import(&with_localities(
        &doc,
        "<pci_locality domain=\"0\" bus_min=\"43\" bus_max=\"59\" cpuset=\"0x3\"/>",
    ));
    assert_eq!(locality(&t, "ib0"), "0-1");
}

#[test]
fn pci_locality_inside_an_object_is_misplaced() {
    let doc = fixture().replacen(
        "<info name=\"CPUVendor\" value=\"GenuineIntel\"/>",
        "<info name=\"CPUVendor\" value=\"GenuineIntel\"/><pci_locality domain=\"0x0\" bus_min=\"0x2b\" bus_max=\"0x3b\" cpuset=\"0x3\"/>",
        1,
    );
    let e = import_err(&doc);
    assert_eq!(
        e.kind(),
        &XmlErrorKind::MisplacedElement {
            element: "pci_locality",
            parent: "topology"
        }
    );
    // The first element in the text is the one inside package 0.
    assert_eq!(e.line(), line_of(&doc, "<pci_locality domain"));
    assert!(
        e.to_string()
            .ends_with("<pci_locality>: <pci_locality> belongs directly under <topology>"),
        "{e}"
    );
}

#[test]
fn a_bad_bridge_pci_is_an_error_naming_it() {
    for bad in [
        "0000:[2b-2f",
        "0000",
        "zz:[2b-2f]",
        "0000:[2b2f]",
        "0000:[2b-1ff]",
    ] {
        let attr = format!("bridge_pci=\"{bad}\"");
        let doc = fixture().replacen("bridge_pci=\"0000:[2b-2f]\"", &attr, 1);
        let e = import_err(&doc);
        assert!(
            e.to_string().contains(&format!(
                "attribute bridge_pci={bad:?}: expected \"DDDD:[SS-EE]\""
            )),
            "{bad}: {e}"
        );
        assert_eq!(e.line(), line_of(&doc, &attr), "{bad}: {e}");
    }
}

/// Each element an hwloc 3.0 export may carry besides objects, where 3.0's importer
/// (`hwloc_look_xml`, `hwloc__xml_import_object`) and DTD accept it, changes nothing in
/// the model.
#[test]
fn every_element_of_a_3_0_export_is_accepted_where_hwloc_writes_it() {
    let base_doc = without_localities(&fixture());
    let base = fingerprint(&import(&base_doc));
    let top = |s: &str| base_doc.replacen("</topology>", &format!("{s}\n</topology>"), 1);
    let in_package = |s: &str| {
        base_doc.replacen(
            "<info name=\"CPUVendor\" value=\"GenuineIntel\"/>",
            &format!("<info name=\"CPUVendor\" value=\"GenuineIntel\"/>{s}"),
            1,
        )
    };
    let in_numa = |s: &str| {
        base_doc.replacen(
            "id=\"obj3\" local_memory=\"8589934592\"/>",
            &format!("id=\"obj3\" local_memory=\"8589934592\">{s}</object>"),
            1,
        )
    };
    let cases: Vec<(&str, String)> = vec![
        (
            "distances2 (with an info child, which 3.0 reads)",
            top(
                "<distances2 type=\"NUMANode\" nbobjs=\"2\" kind=\"5\" name=\"NUMALatency\" indexing=\"os\">\n\
                 <indexes length=\"4\">0 1 </indexes>\n<u64values length=\"12\">10 21 21 10 </u64values>\n\
                 <info name=\"Source\" value=\"ACPI\"/>\n</distances2>",
            ),
        ),
        (
            "distances2hetero",
            top(
                "<distances2hetero nbobjs=\"2\" kind=\"9\" name=\"XGMIBandwidth\">\n\
                 <indexes length=\"20\">NUMANode:0 PU:1 </indexes>\n\
                 <u64values length=\"12\">10 20 20 10 </u64values>\n</distances2hetero>",
            ),
        ),
        (
            "support",
            top("<support name=\"discovery.pu\" value=\"1\"/>"),
        ),
        (
            "memattr with memattr_value and info children",
            top("<memattr name=\"Bandwidth\" flags=\"5\">\n\
                 <memattr_value target_obj_type=\"NUMANode\" target_obj_gp_index=\"3\" value=\"22500\" initiator_cpuset=\"0x00000003\"/>\n\
                 <info name=\"Source\" value=\"HMAT\"/>\n</memattr>"),
        ),
        (
            "cpukind with info children",
            top("<cpukind cpuset=\"0x00000003\" forced_efficiency=\"0\">\n\
                 <info name=\"FrequencyMaxMHz\" value=\"3200\"/>\n<info name=\"CoreType\" value=\"IntelCore\"/>\n</cpukind>"),
        ),
        (
            "a topology info",
            top("<info name=\"hwlocVersion\" value=\"3.0.0\"/>"),
        ),
        (
            "memtier (after the infos, as hwloc master writes it)",
            top("<memtier kinds=\"1\" nodeset=\"0x00000003\"/>"),
        ),
        (
            "page_type in a NUMA node (ignored by 3.0)",
            in_numa(
                "<page_type size=\"4096\" count=\"2097152\"/><page_type size=\"2097152\" count=\"0\"/>",
            ),
        ),
        (
            "info in an object",
            in_package("<info name=\"CPUModel\" value=\"Xeon &lt;test&gt; &amp; co\"/>"),
        ),
        (
            "userdata in an object",
            in_package("<userdata name=\"MyApp\" length=\"5\">hello</userdata>"),
        ),
        (
            "base64 userdata in an object",
            in_package(
                "<userdata name=\"MyApp\" length=\"5\" encoding=\"base64\">aGVsbG8=</userdata>",
            ),
        ),
    ];
    for (what, doc) in &cases {
        assert_ne!(doc, &base_doc, "{what}: the case changes the document");
        let got = fingerprint(&import(doc));
        assert!(got == base, "{what}: {}", first_difference(&got, &base));
    }
}

#[test]
fn an_unknown_element_in_a_3_0_document_is_an_error_naming_it_and_its_line() {
    let base = fixture();
    for (what, doc) in [
        (
            "at top level, after the root object",
            base.replacen("</topology>", "<memtiers kinds=\"1\"/>\n</topology>", 1),
        ),
        (
            "in an object",
            base.replacen(
                "<info name=\"CPUVendor\" value=\"GenuineIntel\"/>",
                "<info name=\"CPUVendor\" value=\"GenuineIntel\"/><memtiers kinds=\"1\"/>",
                1,
            ),
        ),
        (
            "in the root object, before its children",
            base.replacen(
                "<info name=\"DMIProductName\"",
                "<memtiers/><info name=\"DMIProductName\"",
                1,
            ),
        ),
    ] {
        let e = import_err(&doc);
        assert_eq!(
            e.kind(),
            &XmlErrorKind::UnknownElement("memtiers".into()),
            "{what}: {e}"
        );
        assert_eq!(e.line(), line_of(&doc, "<memtiers"), "{what}: {e}");
        assert!(
            e.to_string().contains("unknown element <memtiers>"),
            "{what}: {e}"
        );
    }
}
