//! The libhwloc backend (feature `native`) agrees with the XML importer: on every XML
//! file libhwloc can load, on this machine, and on captured sysfs trees
//! (`HWLOC_FSROOT`) against hwloc 2.9's own export of them.

#![cfg(feature = "native")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fingerprint, first_difference, linux_dir, xml, xml_files};
use pmix_hwloc::native::{Hwloc, NativeError, convert};

#[test]
fn native_and_importer_agree_on_every_loadable_xml_file() {
    let mut compared = 0;
    for f in xml_files() {
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

/// The variables hwloc's own test sets for a captured tree (`NAME.env`: `KEY="value"`
/// lines and `export KEY` lines).
fn env_file(path: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().trim_matches('"').to_owned()))
        .collect()
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
    println!("<<<FP\n{}FP>>>", fingerprint(&t));
}

#[test]
fn native_on_captured_sysfs_trees_matches_hwloc_2_9s_export() {
    let (mut compared, mut with_devices) = (0, 0);
    let tmp = std::env::temp_dir().join(format!("pmix-hwloc-fsroot-{}", std::process::id()));
    for entry in std::fs::read_dir(linux_dir()).unwrap() {
        let tarball = entry.unwrap().path();
        let Some(name) = tarball
            .file_name()
            .unwrap()
            .to_str()
            .and_then(|n| n.strip_suffix(".tar.bz2"))
        else {
            continue;
        };
        let name = name.to_owned();
        let expected_xml = linux_dir().join(format!("{name}.hwloc-2.9-wholeio.xml"));
        let expected = match pmix_hwloc::from_path(&expected_xml) {
            Ok(t) => fingerprint(&t),
            Err(e) => panic!("{name}: the importer refuses hwloc 2.9's export: {e}"),
        };
        std::fs::create_dir_all(&tmp).unwrap();
        let ok = Command::new("tar")
            .arg("xjf")
            .arg(&tarball)
            .arg("-C")
            .arg(&tmp)
            .status()
            .unwrap();
        assert!(ok.success(), "{name}: tar failed");
        let root: PathBuf = tmp.join(&name);
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "--exact",
            "child_dump_for_fsroot",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HWLOC_FSROOT", &root)
        .env("HWLOC_COMPONENTS", "linux,stop")
        .env("HWLOC_DONT_ADD_VERSION_INFO", "1");
        for (k, v) in env_file(&linux_dir().join(format!("{name}.env"))) {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: child failed: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = stdout
            .split("<<<FP\n")
            .nth(1)
            .and_then(|r| r.split("FP>>>").next())
            .expect("a fingerprint");
        assert!(
            got == expected,
            "{name}: {}",
            first_difference(got, &expected)
        );
        compared += 1;
        with_devices += usize::from(got.contains("\ndevice "));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(compared >= 5, "only {compared} trees compared");
    assert!(with_devices >= 3, "only {with_devices} trees had devices");
}
