//! The libhwloc backend (feature `native`) agrees with the XML importer: on every XML
//! file libhwloc can load, on this machine, and on captured sysfs trees
//! (`HWLOC_FSROOT`) against hwloc 2.9's own export of them.

#![cfg(feature = "native")]

mod common;

use common::fingerprint;
use pmix_hwloc::native::{Hwloc, NativeError, convert};
use pmix_testkit::first_difference;
use pmix_testkit::hwloc_xml as xml;

#[test]
fn native_and_importer_agree_on_every_loadable_xml_file() {
    let mut compared = 0;
    for f in pmix_testkit::hwloc_xml_files() {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let ours = pmix_hwloc::from_path(&f);
        let native = Hwloc::xml_file(&f).load_topology();
        if name.ends_with(".v3.xml") {
            // libhwloc 2.x refuses the v3 format (crate docs): it must say so, not
            // produce something else.
            assert!(
                matches!(native, Err(NativeError::Hwloc(_))),
                "{name}: libhwloc 2.x loaded a v3 file"
            );
            assert!(ours.is_ok(), "{name}: {:?}", ours.err());
            continue;
        }
        match (ours, native) {
            (Ok(a), Ok(b)) => {
                let (fa, fb) = (fingerprint(&a), fingerprint(&b));
                assert!(
                    fa == fb,
                    "{name}: importer and libhwloc differ at {}",
                    first_difference(&fa, &fb)
                );
                compared += 1;
            }
            (a, b) => panic!("{name}: importer {:?}, libhwloc {:?}", a.err(), b.err()),
        }
    }
    assert!(compared >= 19, "only {compared} files compared");
}

#[test]
fn native_and_importer_agree_on_this_machine() {
    for whole in [false, true] {
        let h = Hwloc::this_machine().whole_io(whole);
        let topo = h.load_hwloc().expect("libhwloc loads this machine");
        let native = convert(&topo).expect("this machine fits the model");
        let xml = h.export_xml().expect("libhwloc exports this machine");
        let ours = pmix_hwloc::from_str(&xml).expect("the importer reads libhwloc's export");
        let (fa, fb) = (fingerprint(&ours), fingerprint(&native));
        assert!(fa == fb, "whole_io={whole}: {}", first_difference(&fa, &fb));
        assert!(!native.packages().is_empty());
    }
}

#[test]
fn v1_v1tov2_and_a_libhwloc_v2_export_give_identical_answers() {
    let v1 = xml("8em64t-2p2ca2co-nonodesets.v1.xml");
    let v2_export = Hwloc::xml_file(&v1)
        .export_xml()
        .expect("libhwloc re-exports the v1 file");
    assert!(
        v2_export.contains("version=\"2.0\""),
        "libhwloc 2.x writes the v2 format"
    );
    let from_export = pmix_hwloc::from_str(&v2_export).expect("v2 export imports");
    let from_v1 = pmix_hwloc::from_path(&v1).unwrap();
    let from_v1tov2 = pmix_hwloc::from_path(xml("8em64t-2p2ca2co-nonodesets.v1tov2.xml")).unwrap();
    let (a, b, c) = (
        fingerprint(&from_v1),
        fingerprint(&from_v1tov2),
        fingerprint(&from_export),
    );
    assert!(a == b, "{}", first_difference(&a, &b));
    assert!(a == c, "{}", first_difference(&a, &c));
    assert!(a.contains("device eth1 "), "{a}");
    assert!(
        a.contains(
            "io PciBridge 0000:06:00.0 class=Some(1540) locality=0-7 under PciBridge 0000:05:00.0"
        ),
        "{a}"
    );
}

/// Run by [`native_on_captured_sysfs_trees_matches_hwloc_2_9s_export`] in a child
/// process, with `HWLOC_FSROOT` set: prints the fingerprint of what libhwloc sees.
#[test]
#[ignore = "helper: run in a child process with HWLOC_FSROOT set"]
fn child_dump_for_fsroot() {
    assert!(
        std::env::var_os("HWLOC_FSROOT").is_some(),
        "run me with HWLOC_FSROOT set"
    );
    let t = Hwloc::this_machine()
        .whole_io(true)
        .load_topology()
        .expect("libhwloc reads the tree");
    pmix_testkit::print_framed("FP", &fingerprint(&t));
}

#[test]
fn native_on_captured_sysfs_trees_matches_hwloc_2_9s_export() {
    let (mut compared, mut with_devices) = (0, 0);
    for (name, tarball) in pmix_testkit::tarballs("hwloc-linux", ".tar.bz2") {
        let expected_xml = pmix_testkit::hwloc_linux(&format!("{name}.hwloc-2.9-wholeio.xml"));
        let expected = match pmix_hwloc::from_path(&expected_xml) {
            Ok(t) => fingerprint(&t),
            Err(e) => panic!("{name}: the importer refuses hwloc 2.9's export: {e}"),
        };
        let tree = pmix_testkit::unpack(&tarball);
        let env = pmix_testkit::hwloc_env_file(&pmix_testkit::hwloc_linux(&format!("{name}.env")));
        let got =
            pmix_testkit::run_child_test("child_dump_for_fsroot", &tree.tree_root(), &env, "FP");
        assert!(
            got == expected,
            "{name}: {}",
            first_difference(&got, &expected)
        );
        compared += 1;
        with_devices += usize::from(got.contains("\ndevice "));
    }
    assert!(compared >= 5, "only {compared} trees compared");
    assert!(with_devices >= 3, "only {with_devices} trees had devices");
}
