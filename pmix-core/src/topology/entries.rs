//! What `build()` precomputes so that a query is a few bitmap tests per device
//! (docs/design.md §3.4): the localities inherited by I/O objects, each OS device's PCI
//! function, host bridge, PCI path (its bridges, top-down, in one shared pool) and
//! locality (deduplicated, with the package that contains it), and the reported
//! entries (docs/design.md §2 "Device entries": GPU and COPROC aliases of one function folded,
//! in their total order), each packed with the facts a query reads.

use alloc::vec::Vec;
use core::fmt;
use core::num::NonZeroU32;
use core::ops::Range;

use super::{DeviceId, Node, NodeId, NodeKind};
use crate::cpuset::CpuSet;
use crate::device::{Device, DeviceTypes, LocalityId, make_uuid};

/// Gives every I/O object without an explicit locality the one of its nearest ancestor
/// that has one (an I/O ancestor's explicit locality, or a processor's cpuset).
pub(super) fn inherit_localities(nodes: &mut [Node]) {
    // Localities of I/O objects, top-down (parents may come after children in id
    // order, so resolve each by walking up; depths are bounded by the acyclic check).
    for i in 0..nodes.len() {
        if nodes[i].kind.is_processor() || nodes[i].locality.is_some() {
            continue;
        }
        let mut p = nodes[i].parent;
        let mut inherited = None;
        while let Some(pi) = p {
            let pn = &nodes[pi as usize];
            if let Some(l) = pn.locality.as_ref().or(pn.cpuset.as_ref()) {
                inherited = Some(l.clone());
                break;
            }
            p = pn.parent;
        }
        nodes[i].locality = inherited;
    }
}

/// The OS devices and what they share, as `build()` hands them to the [`Topology`].
///
/// [`Topology`]: super::Topology
pub(super) struct Devices {
    /// Every OS device, in node id order.
    pub(super) devices: Vec<Device>,
    /// The PCI paths of all devices, end to end: each device's bridges (node ids,
    /// top-down) are the range [`Device::pci_path`] of this pool.
    pub(super) pci_paths: Vec<u32>,
    /// The distinct device localities.
    pub(super) localities: Vec<Locality>,
}

/// The OS devices, in node id order, with their PCI paths and the distinct localities
/// they have; records in each OS-device node its device index.
pub(super) fn make_devices(nodes: &mut [Node], packages: &[CpuSet], host: &str) -> Devices {
    let mut devices = Vec::new();
    let mut pci_paths: Vec<u32> = Vec::new();
    let mut localities: Vec<Locality> = Vec::new();
    for i in 0..nodes.len() {
        if nodes[i].kind != NodeKind::OsDevice {
            continue;
        }
        let Some(spec) = nodes[i].spec.clone() else {
            continue;
        };
        let parent = nodes[i].parent.unwrap_or(0);
        let (function, pci) = if nodes[parent as usize].kind == NodeKind::PciFunction {
            (Some(parent), nodes[parent as usize].pci)
        } else {
            (None, None)
        };
        // PCI bridges between the top of the I/O tree and the function.
        let path_start = pci_paths.len();
        let mut host_bridge = None;
        if let Some(f) = function {
            let mut p = nodes[f as usize].parent;
            while let Some(pi) = p {
                match nodes[pi as usize].kind {
                    NodeKind::PciBridge => pci_paths.push(pi),
                    NodeKind::HostBridge => {
                        host_bridge = Some(pi);
                        break;
                    }
                    _ => break,
                }
                p = nodes[pi as usize].parent;
            }
            pci_paths[path_start..].reverse();
        }
        let locality = nodes[i].locality.clone().unwrap_or_default();
        let locality_id = match localities.iter().position(|l| l.cpus == locality) {
            Some(k) => LocalityId::new(k),
            None => {
                let package = if locality.is_empty() {
                    None
                } else {
                    packages
                        .iter()
                        .position(|pk| locality.is_subset(pk))
                        .map(|p| p as u32)
                };
                localities.push(Locality {
                    cpus: locality.clone(),
                    package,
                });
                LocalityId::new(localities.len() - 1)
            }
        };
        let package = localities[locality_id.index()].package;
        let uuid = make_uuid(&spec, host);
        nodes[i].device = Some(devices.len() as u32);
        devices.push(Device {
            spec,
            uuid,
            pci,
            function,
            host_bridge,
            pci_path: path_start as u32..pci_paths.len() as u32,
            locality,
            locality_id,
            package,
            node: i as u32,
        });
    }
    Devices {
        devices,
        pci_paths,
        localities,
    }
}

/// Preference rank of an alias name within a GPU or COPROC entry (lower wins).
fn alias_rank(kind: DeviceTypes, name: &str) -> u8 {
    match kind {
        DeviceTypes::GPU => {
            if name.starts_with("nvml") || name.starts_with("rsmi") {
                0
            } else if name.starts_with("renderD") {
                1
            } else if name.starts_with("card") {
                2
            } else {
                3
            }
        }
        _ => {
            if name.starts_with("cuda") {
                0
            } else if name.starts_with("opencl") {
                2
            } else {
                1
            }
        }
    }
}

/// A distinct device locality and the package that contains it.
#[derive(Clone, Debug)]
pub(crate) struct Locality {
    pub(crate) cpus: CpuSet,
    /// Index of the package whose PUs contain all of `cpus`; `None` when it spans
    /// packages (or is empty).
    pub(crate) package: Option<u32>,
}

/// An index below `u32::MAX` kept plus one in a `NonZeroU32`, so that
/// `Option<PackedIndex>` is four bytes, `None` being 0. It replaces a `u32::MAX`
/// sentinel in the packed per-entry array at no cost: comparing two
/// `Option<PackedIndex>` is one `u32` comparison, and "is there one" is a test for 0.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct PackedIndex(NonZeroU32);

impl PackedIndex {
    /// Packs `index`; `None` for `u32::MAX`, which does not fit (node ids and package
    /// indexes never reach it: `build()` refuses that many objects).
    pub(crate) fn new(index: u32) -> Option<PackedIndex> {
        index
            .checked_add(1)
            .and_then(NonZeroU32::new)
            .map(PackedIndex)
    }

    /// The index.
    pub(crate) fn get(self) -> u32 {
        self.0.get() - 1
    }

    /// `true` if both are the same index; `false` if either is `None`. One `u32`
    /// comparison and a test for 0, as the `u32::MAX` sentinel cost.
    #[inline]
    pub(crate) fn same(a: Option<PackedIndex>, b: Option<PackedIndex>) -> bool {
        let raw = |x: Option<PackedIndex>| x.map_or(0, |p| p.0.get());
        raw(a) != 0 && raw(a) == raw(b)
    }
}

impl fmt::Debug for PackedIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// One reported entry: the devices it stands for (best alias first), and the facts of
/// its default device a query reads, packed together so a query scans one small array.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// Its devices, best alias first, as a range of
    /// [`Topology::entry_members`](super::Topology::entry_members).
    pub(crate) members: Range<u32>,
    /// The device reported unless the query names another alias (the first member).
    pub(crate) default_device: DeviceId,
    /// Its type (one bit).
    pub(crate) kind: DeviceTypes,
    /// Its locality.
    pub(crate) locality: LocalityId,
    /// Where it sits in the I/O tree.
    pub(crate) place: Place,
}

/// Where a device sits in the I/O tree: all a from-device distance needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    /// What a from-device distance compares for tier 0: the node of its PCI function,
    /// or its own node when it has no PCI. Nodes are distinct objects, so equal
    /// endpoints mean one PCI function (two of its OS devices are at 0) or one non-PCI
    /// device.
    pub(crate) endpoint: NodeId,
    /// The node of the host bridge above its function, if there is one.
    pub(crate) host_bridge: Option<PackedIndex>,
    /// The package containing its locality, if one does.
    pub(crate) package: Option<PackedIndex>,
    /// Its PCI bridges, top-down: the range `pci_path_start..pci_path_end` of
    /// [`Topology::pci_paths`](super::Topology::pci_paths).
    pub(crate) pci_path_start: u32,
    /// End of that range.
    pub(crate) pci_path_end: u32,
}

impl Place {
    /// The number of PCI bridges above the function, saturated at 15 for distances.
    pub(crate) fn depth(&self) -> u16 {
        (self.pci_path_end - self.pci_path_start).min(15) as u16
    }
}

impl Device {
    /// Where the device sits in the I/O tree.
    pub(crate) fn place(&self) -> Place {
        Place {
            endpoint: NodeId(self.function.unwrap_or(self.node)),
            host_bridge: self.host_bridge.and_then(PackedIndex::new),
            package: self.package.and_then(PackedIndex::new),
            pci_path_start: self.pci_path.start,
            pci_path_end: self.pci_path.end,
        }
    }
}

/// The reported entries in their total order, and the pool of their members (device
/// indexes) that [`Entry::members`] ranges over.
pub(super) fn make_entries(devices: &[Device]) -> (Vec<Entry>, Vec<u32>) {
    // Group GPU and COPROC devices by (PCI function, type); everything else stands alone.
    let mut order: Vec<u32> = (0..devices.len() as u32).collect();
    let folds = |d: &Device| {
        d.function.is_some() && matches!(d.spec.kind, DeviceTypes::GPU | DeviceTypes::COPROC)
    };
    order.sort_by(|&a, &b| {
        let (da, db) = (&devices[a as usize], &devices[b as usize]);
        let key = |d: &Device| {
            (
                folds(d).then_some((d.function, d.spec.kind.0)),
                alias_rank(d.spec.kind, &d.spec.name),
            )
        };
        key(da)
            .cmp(&key(db))
            .then_with(|| da.spec.name.cmp(&db.spec.name))
    });
    let mut entries = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let d = &devices[order[i] as usize];
        let mut j = i + 1;
        if folds(d) {
            while j < order.len() {
                let e = &devices[order[j] as usize];
                if !(folds(e) && e.function == d.function && e.spec.kind == d.spec.kind) {
                    break;
                }
                j += 1;
            }
        }
        entries.push(Entry {
            members: i as u32..j as u32,
            default_device: DeviceId(order[i]),
            kind: d.spec.kind,
            locality: d.locality_id,
            place: d.place(),
        });
        i = j;
    }
    entries.sort_by(|a, b| {
        entry_order(
            &devices[a.default_device.0 as usize],
            &devices[b.default_device.0 as usize],
        )
    });
    (entries, order)
}

/// The total order of reported entries: PCI bus id (devices without PCI last), then
/// name.
pub(crate) fn entry_order(a: &Device, b: &Device) -> core::cmp::Ordering {
    (a.pci.is_none(), a.pci, &a.spec.name).cmp(&(b.pci.is_none(), b.pci, &b.spec.name))
}
