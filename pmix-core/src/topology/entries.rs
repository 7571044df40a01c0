//! What `build()` precomputes so that a query is a few bitmap tests per device
//! (DESIGN §3.4): the localities inherited by I/O objects, each OS device's PCI
//! function, host bridge, PCI path (its bridges, top-down, in one shared pool) and
//! locality (deduplicated, with the package that contains it), and the reported
//! entries (DESIGN §2 "Device entries": GPU and COPROC aliases of one function folded,
//! in their total order), each packed with the facts a query reads.

use alloc::vec::Vec;

use super::{Node, NodeKind};
use crate::cpuset::CpuSet;
use crate::device::{Device, DeviceTypes, make_uuid};

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
        let mut loc = None;
        while let Some(pi) = p {
            let pn = &nodes[pi as usize];
            if let Some(l) = pn.locality.as_ref().or(pn.cpuset.as_ref()) {
                loc = Some(l.clone());
                break;
            }
            p = pn.parent;
        }
        nodes[i].locality = loc;
    }
}

/// The OS devices, in id order, with their PCI paths (ranges of the returned pool) and
/// the distinct localities they have; records in each OS-device node its device index.
pub(super) fn make_devices(
    nodes: &mut [Node],
    packages: &[CpuSet],
    host: &str,
) -> (Vec<Device>, Vec<u32>, Vec<Locality>) {
    let mut devices = Vec::new();
    let mut chains: Vec<u32> = Vec::new();
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
        let start = chains.len();
        let mut host_bridge = None;
        if let Some(f) = function {
            let mut p = nodes[f as usize].parent;
            while let Some(pi) = p {
                match nodes[pi as usize].kind {
                    NodeKind::PciBridge => chains.push(pi),
                    NodeKind::HostBridge => {
                        host_bridge = Some(pi);
                        break;
                    }
                    _ => break,
                }
                p = nodes[pi as usize].parent;
            }
            chains[start..].reverse();
        }
        let locality = nodes[i].locality.clone().unwrap_or_default();
        let loc = match localities
            .iter()
            .position(|l: &Locality| l.cpus == locality)
        {
            Some(k) => k as u32,
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
                (localities.len() - 1) as u32
            }
        };
        let package = localities[loc as usize].package;
        let uuid = make_uuid(&spec, host);
        nodes[i].device = Some(devices.len() as u32);
        devices.push(Device {
            spec,
            uuid,
            pci,
            function,
            host_bridge,
            chain: start as u32..chains.len() as u32,
            locality,
            loc,
            package,
            node: i as u32,
        });
    }
    (devices, chains, localities)
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

/// One reported entry: the devices it stands for (best alias first), and the facts of
/// its default device a query reads, packed together so a query scans one small array.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) members: core::ops::Range<u32>,
    /// The default device reported (`entry_members[members.start]`).
    pub(crate) rep: u32,
    /// Its type bit.
    pub(crate) kind: u64,
    /// Index of its locality in [`Topology::localities`](super::Topology::localities).
    pub(crate) loc: u32,
    /// Where it sits in the I/O tree.
    pub(crate) place: Place,
}

/// Where a device sits in the I/O tree: all a from-device distance needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    /// The PCI function's node, or the device's own node when it has no PCI: equal
    /// identities are tier 0.
    pub(crate) ident: u32,
    /// `true` when `ident` is a PCI function.
    pub(crate) pci: bool,
    /// The host bridge's node, or `u32::MAX`.
    pub(crate) host: u32,
    /// The package of its locality, or `u32::MAX`.
    pub(crate) package: u32,
    /// Its PCI bridges, top-down, as a range of the chain pool.
    pub(crate) chain_start: u32,
    /// End of that range.
    pub(crate) chain_end: u32,
}

impl Place {
    /// The number of PCI bridges above the function, saturated at 15 for distances.
    pub(crate) fn depth(&self) -> u16 {
        (self.chain_end - self.chain_start).min(15) as u16
    }
}

impl Device {
    pub(crate) fn place(&self) -> Place {
        Place {
            ident: self.function.unwrap_or(self.node),
            pci: self.function.is_some(),
            host: self.host_bridge.unwrap_or(u32::MAX),
            package: self.package.unwrap_or(u32::MAX),
            chain_start: self.chain.start,
            chain_end: self.chain.end,
        }
    }
}

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
            rep: order[i],
            kind: d.spec.kind.0,
            loc: d.loc,
            place: d.place(),
        });
        i = j;
    }
    entries.sort_by(|a, b| entry_order(&devices[a.rep as usize], &devices[b.rep as usize]));
    (entries, order)
}

/// A distinct device locality and the package that contains it.
#[derive(Clone, Debug)]
pub(crate) struct Locality {
    pub(crate) cpus: CpuSet,
    pub(crate) package: Option<u32>,
}

/// The total order of reported entries: PCI bus id (devices without PCI last), then
/// name.
pub(crate) fn entry_order(a: &Device, b: &Device) -> core::cmp::Ordering {
    (a.pci.is_none(), a.pci, &a.spec.name).cmp(&(b.pci.is_none(), b.pci, &b.spec.name))
}
