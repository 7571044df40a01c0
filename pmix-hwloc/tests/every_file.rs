//! Every hwloc XML file of `testdata/hwloc-xml/` imports, with exactly the OS
//! devices, packages and host name the file holds (counted from its text, not by the
//! importer), NUMA-only files with zero devices.

mod common;

#[test]
fn every_file_imports_with_the_devices_it_lists() {
    let (mut ok, mut with_io) = (0, 0);
    for f in pmix_testkit::hwloc_xml_files() {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&f).unwrap();
        let result = pmix_hwloc::from_path(&f);
        let topo = result.unwrap_or_else(|e| panic!("{name}: {e}"));
        let osdevs = text.matches("<object type=\"OSDev\"").count();
        assert_eq!(
            topo.devices().len(),
            osdevs,
            "{name}: every OSDev element is a device"
        );
        let packages = (text.matches("<object type=\"Package\"").count()
            + text.matches("<object type=\"Socket\"").count())
        .max(1);
        assert_eq!(topo.packages().len(), packages, "{name}: packages");
        let host = text
            .split("<info name=\"HostName\" value=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or("localhost");
        assert_eq!(topo.hostname(), host, "{name}: host name");
        ok += 1;
        with_io += usize::from(osdevs > 0);
    }
    assert_eq!(ok, 21, "files imported");
    assert_eq!(with_io, 12, "files with devices");
}

#[test]
fn formats_are_detected() {
    use pmix_hwloc::{Format, detect_format};
    let read = |n: &str| std::fs::read_to_string(pmix_testkit::hwloc_xml(n)).unwrap();
    assert_eq!(
        detect_format(&read("8em64t-2p2ca2co-nonodesets.v1.xml")).unwrap(),
        Format::V1
    );
    assert_eq!(
        detect_format(&read("8em64t-2p2ca2co-nonodesets.v1tov2.xml")).unwrap(),
        Format::V2
    );
    assert_eq!(
        detect_format(&read("cxlmem+dax.v3.xml")).unwrap(),
        Format::V3
    );
    assert!(detect_format("<html/>").is_err());
}
