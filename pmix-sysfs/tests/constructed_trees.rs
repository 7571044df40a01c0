//! Trees written by hand (`common::constructed`), scanned from memory ([`MemFs`]) and
//! from disk ([`pmix_sysfs::RealFs`] over a temporary directory): the host name of a
//! captured tree.

mod common;

use common::constructed::{Tree, pruned_capture};
use pmix_core::Topology;
use pmix_sysfs::{Limits, MemFs, Scan, Scanner};
use pmix_testkit::TempDir;

/// The tree scanned from memory and from a temporary directory; both scans must agree,
/// the first is returned.
fn scan_both(tree: &Tree) -> Scan {
    let mem = Scanner::new(tree.memfs())
        .scan()
        .expect("the MemFs tree scans");
    let dir = TempDir::new("sysfs-constructed");
    tree.write_to(&dir.0);
    let disk = pmix_sysfs::scan_with_warnings(&dir.0).expect("the tree on disk scans");
    assert_eq!(
        common::devices(&mem.topology, &[]),
        common::devices(&disk.topology, &[]),
        "MemFs and RealFs disagree"
    );
    // Warning paths differ only by the root they are shown under.
    let root = dir.0.display().to_string();
    let on_disk: Vec<(String, String)> = disk
        .warnings
        .iter()
        .map(|w| (w.path.replacen(&root, "", 1), w.message.clone()))
        .collect();
    let in_mem: Vec<(String, String)> = mem
        .warnings
        .iter()
        .map(|w| (w.path.clone(), w.message.clone()))
        .collect();
    assert_eq!(in_mem, on_disk);
    mem
}

fn dev<'t>(t: &'t Topology, name: &str) -> &'t pmix_core::Device {
    t.devices()
        .iter()
        .find(|d| d.name() == name)
        .unwrap_or_else(|| panic!("no device {name}"))
}

#[test]
fn the_host_name_of_a_captured_tree_comes_from_hwloc_nofile_info() {
    // hwloc-nofile-info says capnode, the kernel file kernelnode: libhwloc over a
    // captured tree reads only the first, and so do we.
    let s = scan_both(&pruned_capture());
    let t = &s.topology;
    assert_eq!(t.hostname(), "capnode");
    let uuids: Vec<(&str, &str)> = t.devices().iter().map(|d| (d.name(), d.uuid())).collect();
    for want in [
        ("eth0", "ipv4://00:11:22:33:44:55"),
        ("eth1", "net://capnode::eth1"),
        ("card0", "gpu://capnode::card0"),
        ("renderD128", "gpu://capnode::renderD128"),
        ("eth2", "ipv4://00:11:22:33:44:66"),
    ] {
        assert!(uuids.contains(&want), "{want:?} not in {uuids:?}");
    }
    assert_eq!(uuids.len(), 5, "{uuids:?}");
}

#[test]
fn without_hwloc_nofile_info_the_kernel_host_name_is_used() {
    let mut tree = pruned_capture();
    tree.remove("proc/hwloc-nofile-info");
    let s = scan_both(&tree);
    assert_eq!(s.topology.hostname(), "kernelnode");
    assert_eq!(dev(&s.topology, "eth1").uuid(), "net://kernelnode::eth1");
    assert!(s.warnings.iter().all(|w| !w.path.starts_with("/proc")));
}

#[test]
fn the_last_host_name_line_of_hwloc_nofile_info_counts_as_in_hwloc() {
    let mut tree = pruned_capture();
    tree.remove("proc/hwloc-nofile-info").file(
        "proc/hwloc-nofile-info",
        "HostName: first\nOSName: Linux\nHostName: second\nHostName:third\n",
    );
    let s = scan_both(&tree);
    assert_eq!(s.topology.hostname(), "second");
}

/// The host name and the warnings about `proc/` of the pruned tree with
/// `hwloc-nofile-info` (and the kernel file, when given) replaced.
fn host_with(nofile: Option<&[u8]>, kernel: Option<&[u8]>) -> (String, Vec<String>) {
    let mut fs: MemFs = {
        let mut t = pruned_capture();
        t.remove("proc");
        t.memfs()
    };
    if let Some(n) = nofile {
        fs.file("proc/hwloc-nofile-info", n);
    }
    if let Some(k) = kernel {
        fs.file("proc/sys/kernel/hostname", k);
    }
    let s = Scanner::new(&fs)
        .with_limits(Limits {
            max_file_bytes: 4096,
            ..Limits::default()
        })
        .scan()
        .unwrap();
    let warnings = s
        .warnings
        .iter()
        .filter(|w| w.path.starts_with("/proc"))
        .map(ToString::to_string)
        .collect();
    (s.topology.hostname().to_owned(), warnings)
}

#[test]
fn a_malformed_hwloc_nofile_info_is_a_warning_naming_it_and_the_kernel_name_is_used() {
    let long = format!("HostName: {}\n", "h".repeat(pmix_core::MAX_NAME_LEN + 1));
    let huge = "OSName: Linux\n".repeat(1000);
    let cases: [(&[u8], &str); 7] = [
        (
            b"HostName: two words\n",
            "\"two words\" is not a host name: ignored",
        ),
        (b"HostName: \n", "\"\" is not a host name: ignored"),
        (b"HostName: tab\there\n", "is not a host name: ignored"),
        (long.as_bytes(), "is not a host name: ignored"),
        (
            b"OSName: Linux\nhostname: lower\n",
            "no \"HostName: \" line",
        ),
        (b"HostName: \xff\xfe\n", "not UTF-8 text: ignored"),
        (huge.as_bytes(), "larger than 4096 bytes: ignored"),
    ];
    for (content, message) in cases {
        let (host, warnings) = host_with(Some(content), Some(b"kernelnode\n"));
        assert_eq!(host, "kernelnode", "{content:?}");
        assert!(
            warnings.len() == 1
                && warnings[0].starts_with("sysfs: /proc/hwloc-nofile-info: ")
                && warnings[0].contains(message),
            "{content:?}: {warnings:?}"
        );
    }
    // Both unusable: localhost, and each file named.
    let (host, warnings) = host_with(Some(b"HostName: a b\n"), Some(b"\n"));
    assert_eq!(host, "localhost");
    assert_eq!(
        warnings,
        [
            "sysfs: /proc/hwloc-nofile-info: \"a b\" is not a host name: ignored",
            "sysfs: /proc/sys/kernel/hostname: \"\" is not a host name: ignored",
        ]
    );
    // Neither file: localhost, nothing to say.
    assert_eq!(host_with(None, None), ("localhost".to_owned(), Vec::new()));
}
