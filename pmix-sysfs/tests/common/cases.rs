//! What is known to differ between the sysfs scan and hwloc on each captured tree of
//! `testdata/hwloc-linux/`, and the comparison itself, shared by the tests against
//! hwloc 2.9's XML exports and against libhwloc (feature `native`).

#![allow(dead_code, unreachable_pub)]

use super::{assert_same, devices, from_cpus, from_devices, localities, packages, pci_objects};
use pmix_core::{CpuSet, DeviceDistance, DeviceTypes, PciAddr, Query, Topology};

/// What is known to differ between the scan and hwloc on one tree.
pub struct Case {
    pub name: &'static str,
    /// Devices hwloc reports and we do not, with the reason.
    pub only_hwloc: &'static [(&'static str, &'static str)],
    /// Devices both report but hwloc places elsewhere, with the reason.
    pub placed_differently: &'static [(&'static str, &'static str)],
    /// Why the localities differ, if they do.
    pub localities_differ: Option<&'static str>,
    /// Why the packages differ, if they do.
    pub packages_differ: Option<&'static str>,
    /// PCI objects hwloc reports too (the others it cannot see).
    pub pci_in_hwloc: fn(PciAddr) -> bool,
    /// Our documented behaviour where hwloc differs.
    pub ours: fn(&Topology, &Topology),
}

pub fn all_pci(_: PciAddr) -> bool {
    true
}

pub const CASES: &[Case] = &[
    Case {
        name: "2pa-pcidomain32bits",
        only_hwloc: &[
            (
                "card0",
                "a VGA function without a render node is no GPU (docs/design.md §2)",
            ),
            (
                "controlD64",
                "a VGA function without a render node is no GPU (docs/design.md §2)",
            ),
        ],
        placed_differently: &[(
            "vda",
            "its function 10000:00:04.0 is in a 32-bit PCI domain, which hwloc 2.x drops, so hwloc attaches vda to the machine",
        )],
        localities_differ: Some(
            "local_cpulist (0-1) and local_cpus (0x1) of 0000:00:00.0 disagree: we believe local_cpulist, hwloc local_cpus",
        ),
        packages_differ: None,
        pci_in_hwloc: |a| a.domain <= 0xffff,
        ours: |ours, hwloc| {
            // The capture's proc/hwloc-nofile-info names the host; hwloc's export too.
            assert_eq!(ours.hostname(), "hwloc-debian9amd64");
            assert_eq!(dev(ours, "sr0").uuid(), "blk://hwloc-debian9amd64::sr0");
            assert_eq!(dev(hwloc, "sr0").uuid(), "blk://hwloc-debian9amd64::sr0");
            let vda = dev(ours, "vda");
            assert_eq!(
                vda.pci().map(|a| a.to_string()).as_deref(),
                Some("10000:00:04.0")
            );
            assert_eq!(vda.depth(), 0);
            assert_eq!(dev(hwloc, "vda").pci(), None);
            // Two host bridges, one per domain.
            assert_eq!(host_bridges(ours), 2);
            let whole = CpuSet::parse_list("0-1").unwrap();
            for d in ours.devices() {
                assert_eq!(d.locality(), &whole, "{}", d.name());
                assert_eq!(d.package(), None, "{}", d.name());
            }
            assert_eq!(
                dev(hwloc, "sr0").locality(),
                &CpuSet::parse_list("0").unwrap()
            );
            // Whole-machine localities are remote (tier 2) from every cpu; two host
            // bridges in no package are tier 4 from each other.
            assert_tier_from_every_package(ours, 2);
            assert_eq!(dist(ours, "ens3", "vda"), 4 * 16);
            assert_eq!(dist(ours, "ens3", "sr0"), 2 * 16);
        },
    },
    Case {
        name: "32em64t-2n8c+1mic",
        only_hwloc: &[
            (
                "dax0.0",
                "DAX devices are not among docs/design.md's classes",
            ),
            (
                "dax1.3",
                "DAX devices are not among docs/design.md's classes",
            ),
        ],
        placed_differently: &[],
        localities_differ: None,
        packages_differ: None,
        // Root port 0000:00:11.0's config says secondary bus 0, which hwloc takes for
        // an invalid bridge and drops; we read no config files and keep it.
        pci_in_hwloc: |a| a.to_string() != "0000:00:11.0",
        ours: |ours, _| {
            // 0000:00:02.0 says 0-3, but the root bus's locality (0000:00:00.0: 0-7)
            // holds for the whole bus, as in hwloc.
            assert_eq!(
                dev(ours, "nvme0n1").locality(),
                &CpuSet::parse_list("0-7").unwrap()
            );
            for absent in ["scif0", "mic0", "lo", "br0", "loop0", "sda1", "nvme0n1p1"] {
                assert!(
                    ours.devices().iter().all(|d| d.name() != absent),
                    "{absent}"
                );
            }
            // pmem devices have no PCI function: placed by their NUMA node.
            let pmem = dev(ours, "pmem1");
            assert_eq!(
                (pmem.pci(), pmem.locality().to_string()),
                (None, "8-15".to_owned())
            );
        },
    },
    Case {
        name: "40intel64-2g2n4c+pci",
        only_hwloc: &[],
        placed_differently: &[],
        localities_differ: Some(
            "the .env forces PCI localities (HWLOC_PCI_LOCALITY); the tree's local_cpulist says the whole machine",
        ),
        packages_differ: None,
        pci_in_hwloc: all_pci,
        ours: |ours, hwloc| {
            let whole = CpuSet::parse_list("0-39").unwrap();
            for d in ours.devices() {
                assert_eq!((d.locality(), d.package()), (&whole, None), "{}", d.name());
            }
            assert_tier_from_every_package(ours, 2);
            // hwloc's localities are the forced ones.
            let first = CpuSet::parse_hex_mask("0x00000055,0x55555555").unwrap();
            let second = CpuSet::parse_hex_mask("0x000000aa,0xaaaaaaaa").unwrap();
            assert_eq!(dev(hwloc, "eth0").locality(), &first);
            assert_eq!(dev(hwloc, "ib0").locality(), &second);
        },
    },
    Case {
        name: "40intel64-4n10c+pci-conflicts",
        only_hwloc: &[],
        placed_differently: &[],
        localities_differ: None,
        packages_differ: Some(
            "cpu3's core_siblings (0xf) conflict with its package's: hwloc drops package 3, we group by physical_package_id",
        ),
        pci_in_hwloc: all_pci,
        ours: |ours, hwloc| {
            let p3 = CpuSet::parse_list("3,7,11,15,19,23,27,31,35,39").unwrap();
            assert!(ours.packages().contains(&p3));
            assert_eq!(ours.packages().len(), 4);
            assert_eq!(hwloc.packages().len(), 3);
            // local_cpus (0xf) and local_cpulist (0-39) conflict: both end with the
            // whole machine (we read local_cpulist, hwloc cannot place 0xf).
            assert_eq!(
                dev(ours, "sda").locality(),
                &CpuSet::parse_list("0-39").unwrap()
            );
            assert_tier_from_every_package(ours, 2);
        },
    },
    Case {
        name: "nvidiagpunumanodes",
        only_hwloc: &[],
        placed_differently: &[],
        localities_differ: None,
        packages_differ: None,
        pci_in_hwloc: all_pci,
        ours: |ours, hwloc| {
            // Host name from the capture's proc/hwloc-nofile-info, as in hwloc's export.
            assert_eq!(
                (ours.hostname(), hwloc.hostname()),
                ("c685f8n02", "c685f8n02")
            );
            // Directories, not links, in sys/bus/pci/devices: one host bridge per bus.
            assert_eq!(host_bridges(ours), 6);
            // VGA functions without drm devices are no GPUs (hwloc agrees).
            assert!(ours.devices().is_empty());
        },
    },
];

fn dev<'t>(t: &'t Topology, name: &str) -> &'t pmix_core::Device {
    t.devices()
        .iter()
        .find(|d| d.name() == name)
        .unwrap_or_else(|| panic!("no device {name}"))
}

fn host_bridges(t: &Topology) -> usize {
    t.nodes()
        .iter()
        .filter(|n| n.kind() == pmix_core::NodeKind::HostBridge)
        .count()
}

fn dist(t: &Topology, from: &str, to: &str) -> u16 {
    let ids = [to];
    let q = Query::from_device(from).ids(&ids);
    let mut out = [DeviceDistance::EMPTY; 1];
    t.distances(&q, &mut out).unwrap();
    out[0].mindist
}

/// Every device is at `tier` from the first cpu of every package.
fn assert_tier_from_every_package(t: &Topology, tier: u16) {
    let mut out = vec![DeviceDistance::EMPTY; t.devices().len()];
    for p in t.packages() {
        let cpu = CpuSet::from_pus(p.first());
        let n = t
            .distances(&Query::from_cpuset(&cpu).types(DeviceTypes::ALL), &mut out)
            .unwrap();
        for d in &out[..n] {
            let dev = t.device(d.device).unwrap();
            let want = 16 * tier + dev.depth().min(15) as u16;
            assert_eq!(
                (d.mindist, d.maxdist),
                (want, want),
                "{} from cpu {cpu}",
                dev.name()
            );
        }
    }
}

/// Compares the scan (`ours`) with hwloc's view (`hwloc`) of the tree `case` names,
/// host name included (hwloc's capture format, `proc/hwloc-nofile-info`, gives it).
pub fn check(case: &Case, ours: &Topology, hwloc: &Topology) {
    let (ours, hwloc) = (ours.clone(), hwloc.clone());
    let name = case.name;
    assert_eq!(ours.hostname(), hwloc.hostname(), "{name}: host name");
    let mut skip: Vec<&str> = Vec::new();
    for (dev_name, why) in case.only_hwloc {
        assert!(
            hwloc.devices().iter().any(|d| d.name() == *dev_name),
            "{name}: hwloc lacks {dev_name}"
        );
        assert!(
            ours.devices().iter().all(|d| d.name() != *dev_name),
            "{name}: we report {dev_name}, but should not: {why}"
        );
        skip.push(dev_name);
    }
    for (dev_name, _why) in case.placed_differently {
        skip.push(dev_name);
    }
    let compared = ours
        .devices()
        .iter()
        .filter(|d| !skip.contains(&d.name()))
        .count();
    assert!(
        compared > 0 || name == "nvidiagpunumanodes",
        "{name}: nothing left to compare"
    );

    assert_same(
        &format!("{name}: devices"),
        &devices(&ours, &skip),
        &devices(&hwloc, &skip),
    );
    let same_loc = case.localities_differ.is_none();
    assert_same(
        &format!("{name}: PCI objects"),
        &pci_objects(&ours, same_loc, case.pci_in_hwloc),
        &pci_objects(&hwloc, same_loc, all_pci),
    );
    if case.packages_differ.is_none() {
        assert_eq!(packages(&ours), packages(&hwloc), "{name}: packages");
    }
    if same_loc {
        assert_same(
            &format!("{name}: localities"),
            &localities(&ours, &skip),
            &localities(&hwloc, &skip),
        );
        let theirs = packages(&hwloc);
        let firsts: Vec<u32> = packages(&ours)
            .iter()
            .filter(|p| theirs.contains(p))
            .filter_map(CpuSet::first)
            .collect();
        assert!(!firsts.is_empty(), "{name}: no package in common");
        assert_same(
            &format!("{name}: from cpus"),
            &from_cpus(&ours, &firsts, &skip),
            &from_cpus(&hwloc, &firsts, &skip),
        );
        assert_same(
            &format!("{name}: from devices"),
            &from_devices(&ours, &skip),
            &from_devices(&hwloc, &skip),
        );
    }
    (case.ours)(&ours, &hwloc);
}

/// The case of the tree `name`.
pub fn case(name: &str) -> &'static Case {
    CASES
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no Case for {name}"))
}
