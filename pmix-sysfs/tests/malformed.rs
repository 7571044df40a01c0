//! Malformed trees: every file the scanner reads, and every link it parses, replaced in
//! turn by garbage, empty content, a huge file, a dangling link, a looping link or a
//! directory. The scan must return an error naming the path, or skip with a warning
//! naming it, or take a fallback the crate docs name; it must never panic.
//!
//! The trees: a synthetic one that reaches every read path (checked first for what it
//! should give), the same without `cpu/online`, the same with hwloc's
//! `proc/hwloc-nofile-info`, and two captured trees.

mod common;

use std::cell::RefCell;
use std::collections::BTreeSet;

use pmix_core::{CpuSet, DeviceTypes, PmixError, Status};
use pmix_sysfs::{FileKind, FsError, Limits, MemFs, ScanError, Scanner, SysFs};

/// A [`SysFs`] that records what the scanner reads.
struct Recorder<'a> {
    fs: &'a MemFs,
    reads: RefCell<BTreeSet<String>>,
    links: RefCell<BTreeSet<String>>,
}

impl SysFs for Recorder<'_> {
    fn read_to_string(&self, path: &str, cap: usize) -> Result<String, FsError> {
        let r = self.fs.read_to_string(path, cap);
        if r.is_ok() {
            self.reads.borrow_mut().insert(path.to_owned());
        }
        r
    }
    fn read_link(&self, path: &str, cap: usize) -> Result<String, FsError> {
        let r = self.fs.read_link(path, cap);
        if r.is_ok() {
            self.links.borrow_mut().insert(path.to_owned());
        }
        r
    }
    fn read_dir(&self, path: &str, max: usize) -> Result<Vec<String>, FsError> {
        self.fs.read_dir(path, max)
    }
    fn kind(&self, path: &str, follow: bool) -> Result<FileKind, FsError> {
        self.fs.kind(path, follow)
    }
    fn display(&self, path: &str) -> String {
        self.fs.display(path)
    }
}

const MB: usize = 1 << 20;

/// A tree that reaches every read path of the scanner.
fn rich_tree() -> MemFs {
    let mut fs = MemFs::new();
    let cpu = "sys/devices/system/cpu";
    fs.file(&format!("{cpu}/online"), "0-3\n");
    for c in 0..4 {
        fs.file(
            &format!("{cpu}/cpu{c}/topology/physical_package_id"),
            format!("{}\n", c / 2),
        );
    }
    let node = "sys/devices/system/node";
    fs.file(&format!("{node}/node0/cpulist"), "0-1\n");
    fs.file(&format!("{node}/node1/cpulist"), "2-3\n");
    fs.file(&format!("{node}/node2/cpulist"), "\n"); // memory only
    fs.file(&format!("{node}/possible"), "0-2\n");

    let mut pci = |path: &str, class: &str| {
        let bdf = path.rsplit('/').next().unwrap().to_owned();
        fs.file(&format!("sys/devices/{path}/class"), format!("{class}\n"));
        fs.symlink(
            &format!("sys/bus/pci/devices/{bdf}"),
            &format!("../../../devices/{path}"),
        );
    };
    // Root bus 0000:00: locality from the root port's local_cpulist.
    pci("pci0000:00/0000:00:01.0", "0x060400");
    pci("pci0000:00/0000:00:01.0/0000:01:00.0", "0x020700");
    pci("pci0000:00/0000:00:02.0", "0x010802");
    pci("pci0000:00/0000:00:03.0", "0x088000");
    pci("pci0000:00/0000:00:04.0", "0x0b4000");
    // Root bus 0000:40: from local_cpus. Root bus 0000:80: from numa_node.
    pci("pci0000:40/0000:40:00.0", "0x060000");
    pci("pci0000:40/0000:40:02.0", "0x030000");
    pci("pci0000:80/0000:80:00.0", "0x060000");
    pci("pci0000:80/0000:80:01.0", "0x030200");
    pci("pci0000:80/0000:80:02.0", "0x120000");
    fs.file("sys/devices/pci0000:00/0000:00:01.0/local_cpulist", "0-1\n");
    fs.file(
        "sys/devices/pci0000:40/0000:40:00.0/local_cpus",
        "0000000c\n",
    );
    fs.file("sys/devices/pci0000:80/0000:80:00.0/numa_node", "1\n");

    let nic = "devices/pci0000:00/0000:00:01.0/0000:01:00.0";
    fs.symlink("sys/class/net/eth0", &format!("../../{nic}/net/eth0"));
    fs.file(
        &format!("sys/{nic}/net/eth0/address"),
        "00:11:22:33:44:55\n",
    );
    fs.symlink("sys/class/net/ib0", &format!("../../{nic}/net/ib0"));
    fs.file(
        &format!("sys/{nic}/net/ib0/address"),
        "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:8b:c1\n",
    );
    fs.symlink("sys/class/net/lo", "../../devices/virtual/net/lo");
    fs.file("sys/devices/virtual/net/lo/address", "00:00:00:00:00:00\n");
    fs.symlink(
        "sys/class/infiniband/mlx5_0",
        &format!("../../{nic}/infiniband/mlx5_0"),
    );
    fs.file(
        &format!("sys/{nic}/infiniband/mlx5_0/node_guid"),
        "0002:c903:000a:8bc0\n",
    );
    fs.file(
        &format!("sys/{nic}/infiniband/mlx5_0/sys_image_guid"),
        "0002:c903:000a:8bc3\n",
    );
    // A platform NIC without PCI, placed by its device's local_cpus.
    fs.symlink(
        "sys/class/net/wlan0",
        "../../devices/platform/soc/wifi/net/wlan0",
    );
    fs.symlink(
        "sys/devices/platform/soc/wifi/net/wlan0/device",
        "../../../wifi",
    );
    fs.file("sys/devices/platform/soc/wifi/local_cpus", "8\n");

    let nvme = "devices/pci0000:00/0000:00:02.0";
    fs.symlink(
        "sys/class/block/nvme0n1",
        &format!("../../{nvme}/nvme/nvme0/nvme0n1"),
    );
    fs.symlink(
        "sys/class/block/nvme0n1p1",
        &format!("../../{nvme}/nvme/nvme0/nvme0n1/nvme0n1p1"),
    );
    fs.file(
        &format!("sys/{nvme}/nvme/nvme0/nvme0n1/nvme0n1p1/partition"),
        "1\n",
    );
    // A persistent-memory disk without PCI, placed by its device's numa_node.
    fs.symlink(
        "sys/class/block/pmem0",
        "../../devices/platform/nd/ns0/block/pmem0",
    );
    fs.symlink(
        "sys/devices/platform/nd/ns0/block/pmem0/device",
        "../../../ns0",
    );
    fs.file("sys/devices/platform/nd/ns0/numa_node", "0\n");
    fs.symlink("sys/class/block/loop0", "../../devices/virtual/block/loop0");

    fs.symlink(
        "sys/class/dma/dma0chan0",
        "../../devices/pci0000:00/0000:00:03.0/dma/dma0chan0",
    );
    fs.symlink(
        "sys/class/ve/ve0",
        "../../devices/pci0000:00/0000:00:04.0/ve/ve0",
    );
    let vga = "devices/pci0000:40/0000:40:02.0";
    fs.symlink("sys/class/drm/card0", &format!("../../{vga}/drm/card0"));
    fs.symlink(
        "sys/class/drm/renderD128",
        &format!("../../{vga}/drm/renderD128"),
    );
    fs.symlink(
        "sys/class/drm/card0-HDMI-A-1",
        &format!("../../{vga}/drm/card0/card0-HDMI-A-1"),
    );
    fs.file("sys/class/drm/version", "drm 1.1.0 20060810\n");
    fs.file(
        "proc/driver/nvidia/gpus/0000:80:01.0/information",
        "Model: \t\t NVIDIA H100\nIRQ:   \t\t 42\nGPU UUID: \t GPU-1a2b3c4d-0000-1111-2222-333344445555\nDevice Minor: \t 3\n",
    );
    fs.file("proc/sys/kernel/hostname", "node7\n");
    fs
}

fn scan(fs: &MemFs) -> Result<pmix_sysfs::Scan, ScanError> {
    Scanner::new(fs).scan()
}

#[test]
fn the_rich_tree_gives_what_it_says() {
    let fs = rich_tree();
    let s = scan(&fs).unwrap();
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let t = &s.topology;
    assert_eq!(t.hostname(), "node7");
    assert_eq!(
        t.packages(),
        &[
            CpuSet::parse_list("0-1").unwrap(),
            CpuSet::parse_list("2-3").unwrap()
        ]
    );
    let got: BTreeSet<String> = t
        .devices()
        .iter()
        .map(|d| {
            format!(
                "{} {:?} {} {} {} {:?}",
                d.name(),
                d.kind(),
                d.pci().map_or_else(|| "-".to_owned(), |p| p.to_string()),
                d.locality(),
                d.uuid(),
                d.vendor_id()
            )
        })
        .collect();
    let want: BTreeSet<String> = [
        "eth0 NETWORK 0000:01:00.0 0-1 ipv4://00:11:22:33:44:55 None",
        "ib0 NETWORK 0000:01:00.0 0-1 ipv6://80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:8b:c1 None",
        "mlx5_0 OPENFABRICS 0000:01:00.0 0-1 fab://0002:c903:000a:8bc0::0002:c903:000a:8bc3 None",
        "wlan0 NETWORK - 3 net://node7::wlan0 None",
        "nvme0n1 BLOCK 0000:00:02.0 0-1 blk://node7::nvme0n1 None",
        "pmem0 BLOCK - 0-1 blk://node7::pmem0 None",
        "dma0chan0 DMA 0000:00:03.0 0-1 dma://node7::dma0chan0 None",
        "ve0 COPROC 0000:00:04.0 0-1 gpu://node7::ve0 None",
        "card0 GPU 0000:40:02.0 2-3 gpu://node7::card0 None",
        "renderD128 GPU 0000:40:02.0 2-3 gpu://node7::renderD128 None",
        "nvidia3 GPU 0000:80:01.0 2-3 gpu://node7::nvidia3 Some(\"GPU-1a2b3c4d-0000-1111-2222-333344445555\")",
        "0000:80:02.0 GPU 0000:80:02.0 2-3 gpu://node7::0000:80:02.0 None",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(got, want);
    let nic = t.devices().iter().find(|d| d.name() == "eth0").unwrap();
    assert_eq!(nic.depth(), 1);
}

#[test]
fn a_vga_function_without_a_render_node_is_no_gpu() {
    let mut fs = rich_tree();
    assert!(fs.remove("sys/class/drm/renderD128"));
    let t = scan(&fs).unwrap().topology;
    assert!(t.devices().iter().all(|d| d.kind() != DeviceTypes::GPU || d.pci().unwrap().to_string() != "0000:40:02.0"));
    // A 3D controller with a drm device gets no synthetic entry.
    let mut fs = rich_tree();
    fs.symlink(
        "sys/class/drm/card1",
        "../../devices/pci0000:80/0000:80:01.0/drm/card1",
    );
    let t = scan(&fs).unwrap().topology;
    let names: Vec<&str> = t.devices().iter().map(|d| d.name()).collect();
    assert!(
        names.contains(&"card1") && !names.contains(&"nvidia3"),
        "{names:?}"
    );
}

#[test]
fn messages_name_the_file() {
    let mut fs = rich_tree();
    fs.file("sys/devices/pci0000:80/0000:80:00.0/numa_node", "abc\n");
    let e = scan(&fs).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sysfs: /sys/bus/pci/devices/0000:80:00.0/numa_node: \"abc\" is not an integer"
    );
    assert_eq!(e.status(), Status::ERR_BAD_PARAM);
    let e = scan(&MemFs::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sysfs: /sys/devices/system/cpu: no cpus found (is this a Linux sysfs tree?)"
    );
    assert_eq!(e.status(), Status::ERR_NOT_FOUND);
    let mut fs = rich_tree();
    fs.dir("sys/devices/system/cpu/cpu2/topology/physical_package_id");
    let e = scan(&fs).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sysfs: /sys/devices/system/cpu/cpu2/topology/physical_package_id: is a directory"
    );
    assert_eq!(e.status(), Status::ERROR);
}

#[test]
fn limits_are_enforced() {
    let fs = rich_tree();
    let small = Limits {
        max_dir_entries: 3,
        ..Limits::default()
    };
    let e = Scanner::new(&fs).with_limits(small).scan().unwrap_err();
    assert!(
        e.to_string().contains("more than 3 directory entries"),
        "{e}"
    );
    let tiny = Limits {
        max_file_bytes: 2,
        ..Limits::default()
    };
    let e = Scanner::new(&fs).with_limits(tiny).scan().unwrap_err();
    assert!(e.to_string().contains("larger than 2 bytes"), "{e}");
    let shallow = Limits {
        max_pci_depth: 0,
        ..Limits::default()
    };
    let s = Scanner::new(&fs).with_limits(shallow).scan().unwrap();
    assert!(
        s.warnings
            .iter()
            .any(|w| w.path.ends_with("0000:01:00.0") && w.message.contains("bridges deep"))
    );
    // Link targets longer than the cap: the PCI entries and the OS devices they hold are
    // skipped with a warning naming the link.
    let short_links = Limits {
        max_link_len: 8,
        ..Limits::default()
    };
    let s = Scanner::new(&fs).with_limits(short_links).scan().unwrap();
    assert!(s.topology.devices().is_empty());
    assert!(
        s.warnings
            .iter()
            .any(|w| w.path.contains("sys/bus/pci/devices/")
                && w.message == "larger than 8 bytes: skipped"),
        "{:?}",
        s.warnings
    );
    assert!(
        s.warnings
            .iter()
            .any(|w| w.path.contains("sys/class/") && w.message == "larger than 8 bytes: skipped"),
        "{:?}",
        s.warnings
    );
}

/// What replaces a file or link.
#[derive(Clone, Copy, Debug)]
enum Corruption {
    Garbage,
    Empty,
    Huge,
    Dangling,
    Loop,
    Directory,
}

const ALL: [Corruption; 6] = [
    Corruption::Garbage,
    Corruption::Empty,
    Corruption::Huge,
    Corruption::Dangling,
    Corruption::Loop,
    Corruption::Directory,
];

fn corrupt(fs: &MemFs, canonical: &str, c: Corruption) -> MemFs {
    let mut fs = fs.clone();
    let base = canonical.rsplit('/').next().unwrap();
    match c {
        Corruption::Garbage => fs.file(canonical, "\u{1}gar bage\0!#\n"),
        Corruption::Empty => fs.file(canonical, ""),
        Corruption::Huge => fs.file(canonical, vec![b'7'; MB]),
        Corruption::Dangling => fs.symlink(canonical, "no-such-target"),
        Corruption::Loop => fs.symlink(canonical, base),
        Corruption::Directory => fs.dir(canonical),
    };
    fs
}

/// Files whose empty content is a valid value with a documented fallback (an empty
/// cpu set: a memory-only node, an unknown locality).
fn empty_is_valid(path: &str) -> bool {
    ["/cpulist", "/local_cpulist", "/local_cpus"]
        .iter()
        .any(|s| path.ends_with(s))
}

/// Runs every corruption of every file read and link parsed in `fs`; returns how many
/// scans ran.
fn corrupt_everything(label: &str, fs: &MemFs) -> usize {
    let rec = Recorder {
        fs,
        reads: RefCell::default(),
        links: RefCell::default(),
    };
    Scanner::new(&rec)
        .scan()
        .unwrap_or_else(|e| panic!("{label}: the clean tree fails: {e}"));
    let reads = rec.reads.into_inner();
    let links = rec.links.into_inner();
    assert!(
        reads.len() >= 5 && !links.is_empty(),
        "{label}: {reads:?} {links:?}"
    );
    let mut runs = 0;
    for (path, is_link) in reads
        .iter()
        .map(|p| (p, false))
        .chain(links.iter().map(|p| (p, true)))
    {
        // Corrupt the object itself: for a link, the link; for a file, the file the
        // path leads to.
        let target = if is_link {
            path.clone()
        } else {
            fs.canonical(path).expect("a read path resolves")
        };
        let shown = fs.display(path);
        for c in ALL {
            let bad = corrupt(fs, &target, c);
            let result = std::panic::catch_unwind(|| scan(&bad));
            let Ok(result) = result else {
                panic!("{label}: {c:?} at {path}: the scan panicked");
            };
            runs += 1;
            let named = match &result {
                Err(e) => e.to_string().contains(&shown),
                Ok(s) => s.warnings.iter().any(|w| w.path.starts_with(&shown)),
            };
            if named {
                continue;
            }
            let fallback = match c {
                Corruption::Empty => empty_is_valid(path),
                // A directory in place of a PCI entry link is how some captured trees
                // look: the function sits under the host bridge of its own bus.
                Corruption::Directory => is_link && path.starts_with("sys/bus/pci/devices/"),
                _ => false,
            };
            assert!(
                fallback && result.is_ok(),
                "{label}: {c:?} at {path}: neither an error nor a warning names it: {:?}",
                result.map(|s| s.warnings)
            );
        }
    }
    runs
}

#[test]
fn every_corruption_of_the_rich_tree_is_named() {
    let fs = rich_tree();
    let runs = corrupt_everything("rich", &fs);
    assert!(runs > 150, "{runs}");
}

#[test]
fn every_corruption_without_an_online_list_is_named() {
    let mut fs = rich_tree();
    assert!(fs.remove("sys/devices/system/cpu/online"));
    for c in 0..4 {
        fs.file(&format!("sys/devices/system/cpu/cpu{c}/online"), "1\n");
    }
    let s = scan(&fs).unwrap();
    assert_eq!(
        s.topology.machine_cpus(),
        &CpuSet::parse_list("0-3").unwrap()
    );
    corrupt_everything("rich-without-online", &fs);
}

#[test]
fn every_corruption_of_a_captured_host_name_is_named() {
    let mut fs = rich_tree();
    fs.file(
        "proc/hwloc-nofile-info",
        "OSName: Linux\nHostName: capnode\nPageSize: 4096\n",
    );
    let s = scan(&fs).unwrap();
    assert_eq!(s.topology.hostname(), "capnode");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    corrupt_everything("rich-with-nofile-info", &fs);
}

#[test]
fn every_corruption_of_captured_trees_is_named() {
    for (folder, ext, name) in [
        ("ghw-snapshots", ".tar.gz", "linux-amd64-accel"),
        ("hwloc-linux", ".tar.bz2", "32em64t-2n8c+1mic"),
    ] {
        let tarball = pmix_testkit::data_dir()
            .join(folder)
            .join(format!("{name}{ext}"));
        let tree = pmix_testkit::unpack(&tarball);
        let root = tree.tree_root();
        // Only what the scanner can reach (memory blocks and the like are not needed).
        let subs = [
            "sys/devices/system/cpu",
            "sys/devices/system/node",
            "sys/bus/pci/devices",
            "sys/class",
            "sys/block",
            "sys/devices/pci0000:00",
            "sys/devices/pci0000:80",
            "sys/devices/LNXSYSTM:00",
            "sys/devices/virtual/net",
            "proc/sys",
            "proc/driver",
        ];
        let fs = MemFs::load_dir(&root, &subs, 1 << 16).unwrap();
        corrupt_everything(name, &fs);
    }
}
