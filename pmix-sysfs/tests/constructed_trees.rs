//! Trees written by hand (`common::constructed`), scanned from memory ([`MemFs`]) and
//! from disk ([`pmix_sysfs::RealFs`] over a temporary directory): a capture whose
//! `sys/bus/pci/devices` lacks some directories of the device paths, and the host
//! name of a captured tree. With the `native` feature, `tests/native.rs` holds the
//! same pruned tree against libhwloc itself.

mod common;

use common::constructed::{Tree, pruned_capture, unpruned};
use pmix_core::{CpuSet, DeviceDistance, NodeKind, Query, Topology};
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

/// The PCI addresses of the bridges above a device, top-down.
fn bridges_above(t: &Topology, name: &str) -> Vec<String> {
    let i = t.devices().iter().position(|d| d.name() == name).unwrap();
    let path = t.pci_path(pmix_core::DeviceId(i as u32));
    let nodes = t.nodes();
    path.iter()
        .map(|&n| &nodes[n as usize])
        .filter(|n| n.kind() == NodeKind::PciBridge)
        .map(|n| n.pci().unwrap().to_string())
        .collect()
}

fn dist(t: &Topology, from: &str, to: &str) -> u16 {
    let ids = [to];
    let q = Query::from_device(from).ids(&ids);
    let mut out = [DeviceDistance::EMPTY; 1];
    t.distances(&q, &mut out).unwrap();
    out[0].mindist
}

fn from_cpu(t: &Topology, cpu: u32, to: &str) -> u16 {
    let set = CpuSet::from_pus([cpu]);
    let ids = [to];
    let q = Query::from_cpuset(&set).ids(&ids);
    let mut out = [DeviceDistance::EMPTY; 1];
    t.distances(&q, &mut out).unwrap();
    out[0].mindist
}

fn host_bridges(t: &Topology) -> usize {
    t.nodes()
        .iter()
        .filter(|n| n.kind() == NodeKind::HostBridge)
        .count()
}

fn has_pci_node(t: &Topology, addr: &str) -> bool {
    t.nodes()
        .iter()
        .any(|n| n.pci().is_some_and(|a| a.to_string() == addr))
}

#[test]
fn a_path_directory_that_is_not_a_listed_device_is_not_a_bridge() {
    let s = scan_both(&pruned_capture());
    let t = &s.topology;
    // eth0's link goes through 0000:02:00.0, which sys/bus/pci/devices does not list:
    // the NIC hangs off the switch's upstream port, two bridges below the host bridge,
    // as hwloc (which builds the tree from the listing and the bus ranges) sees it.
    assert_eq!(dev(t, "eth0").depth(), 2);
    assert_eq!(bridges_above(t, "eth0"), ["0000:00:01.0", "0000:01:00.0"]);
    assert!(!has_pci_node(t, "0000:02:00.0"));
    assert_eq!(from_cpu(t, 0, "eth0"), 2);
    // From eth1 (below the downstream port 0000:02:01.0) the lowest common ancestor
    // is the upstream port: one bridge below it on eth1's side, none on eth0's.
    assert_eq!(dist(t, "eth0", "eth1"), 16 + 1);
    assert_eq!(dist(t, "eth0", "card0"), 2 * 16 + 2);
    assert!(
        s.warnings
            .iter()
            .any(|w| w.path == "/sys/bus/pci/devices/0000:03:00.0"
                && w.message.contains("0000:02:00.0")
                && w.message.contains("not counted as a bridge")),
        "{:?}",
        s.warnings
    );
}

#[test]
fn listing_the_directory_makes_it_a_bridge() {
    let s = scan_both(&unpruned());
    let t = &s.topology;
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(dev(t, "eth0").depth(), 3);
    assert_eq!(
        bridges_above(t, "eth0"),
        ["0000:00:01.0", "0000:01:00.0", "0000:02:00.0"]
    );
    assert_eq!(dist(t, "eth0", "eth1"), 16 + 2);
}

#[test]
fn a_function_below_only_unlisted_directories_gets_the_host_bridge_of_its_own_bus() {
    let s = scan_both(&pruned_capture());
    let t = &s.topology;
    // 0000:00:03.0 is not listed: eth2's function 0000:05:00.0 is a topmost object of
    // bus 0000:05, which hwloc gives a host bridge of its own, placed by that
    // function's locality (2-3, the second package).
    assert_eq!(host_bridges(t), 2);
    let eth2 = dev(t, "eth2");
    assert_eq!(eth2.depth(), 0);
    assert_eq!(eth2.locality(), &CpuSet::parse_list("2-3").unwrap());
    assert!(!has_pci_node(t, "0000:00:03.0"));
    // Different host bridges in different packages: tier 4.
    assert_eq!(dist(t, "eth0", "eth2"), 4 * 16 + 2);
    assert_eq!(from_cpu(t, 2, "eth2"), 0);

    // Listed, 0000:00:03.0 is a root port on bus 0000:00, and eth2 shares that bus's
    // locality (that of its first object, 0000:00:01.0: cpus 0-1).
    let t = scan_both(&unpruned()).topology;
    assert_eq!(host_bridges(&t), 1);
    let eth2 = dev(&t, "eth2");
    assert_eq!(
        (eth2.depth(), eth2.locality()),
        (1, &CpuSet::parse_list("0-1").unwrap())
    );
    assert_eq!(dist(&t, "eth0", "eth2"), 2 * 16 + 3 + 1);
}

#[test]
fn an_os_device_of_an_unlisted_function_is_skipped_with_a_warning() {
    // The device belongs to the function whose directory holds it; that function is
    // not listed, and the listed device above it is a bridge, which holds no devices.
    let mut tree = pruned_capture();
    tree.file(
        &format!("sys/devices/{}/net/eth9/mtu", common::constructed::UNLISTED),
        "1500\n",
    )
    .link(
        "sys/class/net/eth9",
        &format!("../../devices/{}/net/eth9", common::constructed::UNLISTED),
    );
    let s = scan_both(&tree);
    assert!(s.topology.devices().iter().all(|d| d.name() != "eth9"));
    assert!(
        s.warnings.iter().any(|w| w.path == "/sys/class/net/eth9"
            && w.message
                == "belongs to PCI function 0000:02:00.0, which sys/bus/pci/devices does not list: skipped"),
        "{:?}",
        s.warnings
    );

    // A listed function whose own entry is skipped: its devices say so.
    let mut tree = pruned_capture();
    tree.remove("sys/bus/pci/devices/0000:04:00.0").link(
        "sys/bus/pci/devices/0000:04:00.0",
        "../../../devices/nowhere",
    );
    let s = scan_both(&tree);
    assert!(s.topology.devices().iter().all(|d| d.name() != "eth1"));
    assert!(
        s.warnings.iter().any(|w| w.path == "/sys/class/net/eth1"
            && w.message
                == "belongs to PCI function 0000:04:00.0, whose sys/bus/pci/devices entry was skipped: skipped"),
        "{:?}",
        s.warnings
    );
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
