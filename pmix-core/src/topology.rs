//! The topology tree: a [`TopologyBuilder`] collects objects, [`TopologyBuilder::build`]
//! validates them and precomputes what queries need, and the resulting [`Topology`]
//! is immutable.
//!
//! The tree has a processor side (machine → packages → NUMA domains, with groups or
//! other cpuset-carrying containers anywhere) and an I/O side (host bridges → PCI
//! bridges → PCI functions → OS devices) that hangs under processor objects. An I/O
//! object's *locality* is the cpuset of its nearest processor ancestor, unless the
//! backend set one explicitly with [`TopologyBuilder::set_locality`] on the object or
//! an I/O ancestor (sysfs `local_cpulist`, for instance).
//!
//! Node ids are handed out in insertion order and parents are given by id, so a
//! backend (or a fuzzer) can name any id: dangling parents, cycles and misplaced
//! objects are found by `build()` and reported as [`BuildError`]s, never panics.
//!
//! PCI addresses must be unique under each host bridge (and among PCI objects that hang
//! under processor objects directly), not across the whole machine: real hwloc exports
//! exist that list one address under two host bridges (hwloc's own
//! `32em64t-2n8c2t-pci-wholeio.xml` has `0000:04:00.0` twice), and hwloc loads them. A
//! device id naming such an address selects both functions; as a distance origin it is
//! ambiguous (`PMIX_ERR_BAD_PARAM`).

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::cpuset::CpuSet;
use crate::device::{Device, DeviceTypes, MAX_NAME_LEN, OsDeviceSpec, make_uuid};
use crate::pci::PciAddr;
use crate::status::{PmixError, Status};

/// The id of an object in a topology (its insertion index).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct NodeId(pub u32);

/// The id of an OS device in a built topology: an index into [`Topology::devices`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct DeviceId(pub u32);

/// What an object of the tree is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum NodeKind {
    /// The root: every PU of the node.
    Machine,
    /// A processor package (socket).
    Package,
    /// A NUMA domain.
    Numa,
    /// Any other processor-side container with a cpuset (hwloc groups, caches, cores,
    /// dies): it plays no part in distances except as an I/O attachment point.
    Group,
    /// A host bridge (PCI root bus / root complex).
    HostBridge,
    /// A PCI bridge: a root port, or a switch's upstream or downstream port.
    PciBridge,
    /// A PCI function.
    PciFunction,
    /// An OS device.
    OsDevice,
}

impl NodeKind {
    /// `true` for the processor side (machine, package, NUMA, group).
    pub fn is_processor(self) -> bool {
        matches!(
            self,
            NodeKind::Machine | NodeKind::Package | NodeKind::Numa | NodeKind::Group
        )
    }
}

/// An object of a built topology.
#[derive(Clone, Debug)]
pub struct Node {
    kind: NodeKind,
    parent: Option<u32>,
    cpuset: Option<CpuSet>,
    locality: Option<CpuSet>,
    pci: Option<PciAddr>,
    class: Option<u16>,
    device: Option<u32>,
    spec: Option<OsDeviceSpec>,
}

impl Node {
    /// The object's kind.
    pub fn kind(&self) -> NodeKind {
        self.kind
    }

    /// The parent, or `None` for the machine.
    pub fn parent(&self) -> Option<NodeId> {
        self.parent.map(NodeId)
    }

    /// The cpuset of a processor object; the locality of an I/O object.
    pub fn cpuset(&self) -> Option<&CpuSet> {
        self.cpuset.as_ref().or(self.locality.as_ref())
    }

    /// The PCI address of a PCI bridge or function.
    pub fn pci(&self) -> Option<PciAddr> {
        self.pci
    }

    /// The 16-bit PCI class (`0x0302` for a 3D controller) of a PCI bridge or
    /// function, when the backend knows it.
    pub fn pci_class(&self) -> Option<u16> {
        self.class
    }

    /// The device of an OS-device node.
    pub fn device(&self) -> Option<DeviceId> {
        self.device.map(DeviceId)
    }
}

/// Why [`TopologyBuilder::build`] refused the objects it was given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// An object names a parent id that does not exist.
    #[error("object {node} names parent {parent}, which does not exist")]
    DanglingParent {
        /// The object.
        node: u32,
        /// The missing parent id.
        parent: u32,
    },
    /// Following parents from an object comes back to it.
    #[error("object {node} is its own ancestor")]
    Cycle {
        /// An object on the cycle.
        node: u32,
    },
    /// An object is placed under a parent that cannot hold it.
    #[error("a {kind:?} (object {node}) cannot be placed under a {parent_kind:?}")]
    Misplaced {
        /// The object.
        node: u32,
        /// Its kind.
        kind: NodeKind,
        /// Its parent's kind.
        parent_kind: NodeKind,
    },
    /// Two PCI objects under one host bridge (or two without any) share an address.
    #[error(
        "PCI address {addr} appears twice under one host bridge (objects {first} and {second})"
    )]
    DuplicatePciAddress {
        /// The address.
        addr: PciAddr,
        /// The object that had it first.
        first: u32,
        /// The object that has it again.
        second: u32,
    },
    /// Two OS devices share a name.
    #[error("OS device name {name:?} appears twice (objects {first} and {second})")]
    DuplicateOsName {
        /// The name.
        name: String,
        /// The object that had it first.
        first: u32,
        /// The object that has it again.
        second: u32,
    },
    /// A cpuset or locality names PUs the machine does not have.
    #[error("object {node} names cpus outside the machine")]
    CpusOutsideMachine {
        /// The object.
        node: u32,
    },
    /// Two packages share PUs.
    #[error("packages (objects {a} and {b}) share cpus")]
    OverlappingPackages {
        /// One package.
        a: u32,
        /// The other.
        b: u32,
    },
    /// An OS device name, identity or hostname that is empty, too long or holds a NUL.
    #[error(
        "object {node}: bad {what} (empty, longer than {MAX_NAME_LEN} bytes, or containing NUL)"
    )]
    BadName {
        /// The object (0 for the hostname).
        node: u32,
        /// Which string.
        what: &'static str,
    },
    /// An OS device whose type is not exactly one known PMIx type.
    #[error("OS device {node} has type mask {mask:#x}, not exactly one known type")]
    BadDeviceType {
        /// The object.
        node: u32,
        /// The mask given.
        mask: u64,
    },
    /// More objects than ids can name.
    #[error("too many objects")]
    TooLarge,
}

impl PmixError for BuildError {
    /// A topology that cannot be built is bad input: `PMIX_ERR_BAD_PARAM`.
    fn status(&self) -> Status {
        Status::ERR_BAD_PARAM
    }
}

/// Collects the objects of a topology; [`build`](TopologyBuilder::build) checks and
/// freezes them.
///
/// ```
/// use pmix_core::{CpuSet, DeviceTypes, OsDeviceSpec, TopologyBuilder};
/// let mut b = TopologyBuilder::new(CpuSet::first_n(8));
/// let pkg = b.package(b.machine(), CpuSet::first_n(8));
/// let hb = b.host_bridge(pkg);
/// let f = b.pci_function(hb, "0000:01:00.0".parse().unwrap(), Some(0x0200));
/// b.os_device(f, OsDeviceSpec { name: "eth0".into(), kind: DeviceTypes::NETWORK, ..Default::default() });
/// let topo = b.build().unwrap();
/// assert_eq!(topo.devices().len(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct TopologyBuilder {
    nodes: Vec<Node>,
    hostname: Option<String>,
}

impl TopologyBuilder {
    /// Starts a topology whose machine (node 0) has the PUs `machine_cpus`.
    pub fn new(machine_cpus: CpuSet) -> Self {
        let machine = Node {
            kind: NodeKind::Machine,
            parent: None,
            cpuset: Some(machine_cpus),
            locality: None,
            pci: None,
            class: None,
            device: None,
            spec: None,
        };
        TopologyBuilder {
            nodes: vec![machine],
            hostname: None,
        }
    }

    /// The machine's id (always `NodeId(0)`).
    pub fn machine(&self) -> NodeId {
        NodeId(0)
    }

    /// The machine's PUs.
    pub fn machine_cpus(&self) -> &CpuSet {
        self.nodes[0].cpuset.as_ref().unwrap_or(&EMPTY)
    }

    /// Sets the host name the uuids use (DESIGN §2: `HostName` info, sysfs hostname).
    pub fn hostname(&mut self, name: impl Into<String>) -> &mut Self {
        self.hostname = Some(name.into());
        self
    }

    fn push(&mut self, kind: NodeKind, parent: NodeId) -> NodeId {
        let id = NodeId(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        self.nodes.push(Node {
            kind,
            parent: Some(parent.0),
            cpuset: None,
            locality: None,
            pci: None,
            class: None,
            device: None,
            spec: None,
        });
        id
    }

    fn processor(&mut self, kind: NodeKind, parent: NodeId, cpus: CpuSet) -> NodeId {
        let id = self.push(kind, parent);
        self.nodes[id.0 as usize].cpuset = Some(cpus);
        id
    }

    /// Adds a package under `parent` (normally the machine).
    pub fn package(&mut self, parent: NodeId, cpus: CpuSet) -> NodeId {
        self.processor(NodeKind::Package, parent, cpus)
    }

    /// Adds a NUMA domain under `parent`.
    pub fn numa(&mut self, parent: NodeId, cpus: CpuSet) -> NodeId {
        self.processor(NodeKind::Numa, parent, cpus)
    }

    /// Adds another processor-side container (group, cache, core, die) under `parent`.
    pub fn group(&mut self, parent: NodeId, cpus: CpuSet) -> NodeId {
        self.processor(NodeKind::Group, parent, cpus)
    }

    /// Adds a host bridge under a processor object.
    pub fn host_bridge(&mut self, parent: NodeId) -> NodeId {
        self.push(NodeKind::HostBridge, parent)
    }

    /// Adds a PCI bridge (root port or switch port) under a host bridge, another PCI
    /// bridge, or a processor object.
    pub fn pci_bridge(&mut self, parent: NodeId, addr: PciAddr, class: Option<u16>) -> NodeId {
        let id = self.push(NodeKind::PciBridge, parent);
        let n = &mut self.nodes[id.0 as usize];
        n.pci = Some(addr);
        n.class = class;
        id
    }

    /// Adds a PCI function under a host bridge, a PCI bridge or a processor object.
    pub fn pci_function(&mut self, parent: NodeId, addr: PciAddr, class: Option<u16>) -> NodeId {
        let id = self.push(NodeKind::PciFunction, parent);
        let n = &mut self.nodes[id.0 as usize];
        n.pci = Some(addr);
        n.class = class;
        id
    }

    /// Adds an OS device under a PCI function or a processor object (a device without
    /// PCI).
    pub fn os_device(&mut self, parent: NodeId, spec: OsDeviceSpec) -> NodeId {
        let id = self.push(NodeKind::OsDevice, parent);
        self.nodes[id.0 as usize].spec = Some(spec);
        id
    }

    /// Sets the locality of an I/O object explicitly; it then holds for the object and
    /// every I/O object below it that has none of its own. Ignored (left to `build` to
    /// report nothing) on processor objects, whose cpuset is their locality.
    pub fn set_locality(&mut self, node: NodeId, cpus: CpuSet) -> &mut Self {
        if let Some(n) = self.nodes.get_mut(node.0 as usize) {
            if !n.kind.is_processor() {
                n.locality = Some(cpus);
            }
        }
        self
    }

    /// The number of objects added so far, the machine included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// `true` if only the machine exists.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1
    }

    /// Validates the objects and freezes them into a [`Topology`], precomputing per
    /// device its locality, package, host bridge, PCI path and uuid, and the entries
    /// queries report (DESIGN §2 "Device entries").
    ///
    /// # Errors
    /// A [`BuildError`] for the first problem found: dangling parents, cycles,
    /// misplaced objects, duplicate PCI addresses or OS names, cpus outside the
    /// machine, overlapping packages, bad names or device types.
    pub fn build(self) -> Result<Topology, BuildError> {
        let TopologyBuilder {
            mut nodes,
            hostname,
        } = self;
        let n = nodes.len();
        if u32::try_from(n).is_err() {
            return Err(BuildError::TooLarge);
        }
        check_structure(&nodes)?;
        let machine = nodes[0].cpuset.clone().unwrap_or_default();
        check_cpus(&nodes, &machine)?;
        check_names(&nodes, hostname.as_deref())?;

        // Packages: every Package object, in id order; a machine without any is one.
        let mut package_nodes: Vec<u32> = (0..n as u32)
            .filter(|&i| nodes[i as usize].kind == NodeKind::Package)
            .collect();
        let packages: Vec<CpuSet> = if package_nodes.is_empty() {
            vec![machine.clone()]
        } else {
            package_nodes
                .iter()
                .map(|&i| nodes[i as usize].cpuset.clone().unwrap_or_default())
                .collect()
        };
        for (i, a) in packages.iter().enumerate() {
            for (j, b) in packages.iter().enumerate().skip(i + 1) {
                if a.intersects(b) {
                    return Err(BuildError::OverlappingPackages {
                        a: package_nodes[i],
                        b: package_nodes[j],
                    });
                }
            }
        }
        if package_nodes.is_empty() {
            package_nodes.push(0);
        }

        // Localities of I/O objects, top-down (parents may come after children in id
        // order, so resolve each by walking up; depths are bounded by the acyclic check).
        for i in 0..n {
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

        let host = hostname.unwrap_or_else(|| String::from("localhost"));
        let mut devices = Vec::new();
        let mut chains: Vec<u32> = Vec::new();
        let mut localities: Vec<Locality> = Vec::new();
        for i in 0..n {
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
            let uuid = make_uuid(&spec, &host);
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

        let (entries, entry_members) = make_entries(&devices);
        let mut type_counts = [0u32; 6];
        for e in &entries {
            type_counts[e.kind.trailing_zeros() as usize] += 1;
        }
        let (child_start, child_list) = make_children(&nodes);
        let hostname_given = host;
        Ok(Topology {
            nodes,
            devices,
            chains,
            packages,
            package_nodes,
            entries,
            entry_members,
            type_counts,
            localities,
            child_start,
            child_list,
            hostname: hostname_given,
        })
    }
}

static EMPTY: CpuSet = CpuSet::new();

fn check_structure(nodes: &[Node]) -> Result<(), BuildError> {
    let n = nodes.len();
    for (i, node) in nodes.iter().enumerate() {
        let Some(p) = node.parent else { continue };
        let Some(parent) = nodes.get(p as usize) else {
            return Err(BuildError::DanglingParent {
                node: i as u32,
                parent: p,
            });
        };
        let ok = match node.kind {
            NodeKind::Machine => false,
            NodeKind::Package | NodeKind::Numa | NodeKind::Group | NodeKind::HostBridge => {
                parent.kind.is_processor()
            }
            NodeKind::PciBridge | NodeKind::PciFunction => {
                parent.kind.is_processor()
                    || matches!(parent.kind, NodeKind::HostBridge | NodeKind::PciBridge)
            }
            NodeKind::OsDevice => {
                parent.kind.is_processor() || parent.kind == NodeKind::PciFunction
            }
        };
        if !ok {
            return Err(BuildError::Misplaced {
                node: i as u32,
                kind: node.kind,
                parent_kind: parent.kind,
            });
        }
    }
    // Cycles: every chain of parents must reach the root. 0 = unvisited, 1 = on the
    // current path, 2 = known to reach the root.
    let mut state = vec![0u8; n];
    state[0] = 2;
    let mut path = Vec::new();
    for start in 0..n {
        let mut i = start;
        while state[i] == 0 {
            state[i] = 1;
            path.push(i);
            match nodes[i].parent {
                Some(p) => i = p as usize,
                // Only node 0 has no parent, and it is marked reached.
                None => return Err(BuildError::Cycle { node: i as u32 }),
            }
        }
        if state[i] == 1 {
            return Err(BuildError::Cycle { node: i as u32 });
        }
        for &j in &path {
            state[j] = 2;
        }
        path.clear();
    }
    Ok(())
}

fn check_cpus(nodes: &[Node], machine: &CpuSet) -> Result<(), BuildError> {
    for (i, node) in nodes.iter().enumerate().skip(1) {
        for set in [&node.cpuset, &node.locality].into_iter().flatten() {
            if !set.is_subset(machine) {
                return Err(BuildError::CpusOutsideMachine { node: i as u32 });
            }
        }
    }
    Ok(())
}

fn name_ok(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_NAME_LEN && !s.contains('\0')
}

fn check_names(nodes: &[Node], hostname: Option<&str>) -> Result<(), BuildError> {
    if hostname.is_some_and(|h| !name_ok(h)) {
        return Err(BuildError::BadName {
            node: 0,
            what: "hostname",
        });
    }
    let mut names: Vec<(&str, u32)> = Vec::new();
    // (address, host bridge or u32::MAX, node)
    let mut addrs: Vec<(PciAddr, u32, u32)> = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        if let Some(a) = node.pci {
            addrs.push((a, host_bridge_of(nodes, i), i as u32));
        }
        let Some(spec) = &node.spec else { continue };
        let node_id = i as u32;
        if !spec.kind.is_single() {
            return Err(BuildError::BadDeviceType {
                node: node_id,
                mask: spec.kind.0,
            });
        }
        if !name_ok(&spec.name) {
            return Err(BuildError::BadName {
                node: node_id,
                what: "OS name",
            });
        }
        for (what, v) in [
            ("vendor identity", &spec.vendor_id),
            ("address", &spec.address),
            ("NodeGUID", &spec.node_guid),
            ("SysImageGUID", &spec.sys_image_guid),
        ] {
            if v.as_deref().is_some_and(|s| !name_ok(s)) {
                return Err(BuildError::BadName {
                    node: node_id,
                    what,
                });
            }
        }
        names.push((&spec.name, node_id));
    }
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(BuildError::DuplicateOsName {
            name: String::from(w[0].0),
            first: w[0].1,
            second: w[1].1,
        });
    }
    addrs.sort_unstable();
    if let Some(w) = addrs
        .windows(2)
        .find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
    {
        return Err(BuildError::DuplicatePciAddress {
            addr: w[0].0,
            first: w[0].2,
            second: w[1].2,
        });
    }
    Ok(())
}

/// The host bridge above PCI object `i`, or `u32::MAX` when it hangs under a processor
/// object directly. The tree is known to be acyclic.
fn host_bridge_of(nodes: &[Node], i: usize) -> u32 {
    let mut p = nodes[i].parent;
    while let Some(pi) = p {
        match nodes[pi as usize].kind {
            NodeKind::HostBridge => return pi,
            NodeKind::PciBridge => p = nodes[pi as usize].parent,
            _ => break,
        }
    }
    u32::MAX
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
    /// Index of its locality in [`Topology::localities`].
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

fn make_entries(devices: &[Device]) -> (Vec<Entry>, Vec<u32>) {
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

fn make_children(nodes: &[Node]) -> (Vec<u32>, Vec<u32>) {
    let n = nodes.len();
    let mut count = vec![0u32; n + 1];
    for node in nodes {
        if let Some(p) = node.parent {
            count[p as usize + 1] += 1;
        }
    }
    for i in 0..n {
        count[i + 1] += count[i];
    }
    let mut fill = count.clone();
    let mut list = vec![0u32; count[n] as usize];
    for (i, node) in nodes.iter().enumerate() {
        if let Some(p) = node.parent {
            list[fill[p as usize] as usize] = i as u32;
            fill[p as usize] += 1;
        }
    }
    (count, list)
}

/// An immutable, validated topology: the tree, its devices, and what distance queries
/// need precomputed. Built by [`TopologyBuilder::build`].
#[derive(Clone)]
pub struct Topology {
    nodes: Vec<Node>,
    pub(crate) devices: Vec<Device>,
    pub(crate) chains: Vec<u32>,
    pub(crate) packages: Vec<CpuSet>,
    package_nodes: Vec<u32>,
    pub(crate) entries: Vec<Entry>,
    pub(crate) entry_members: Vec<u32>,
    /// Number of entries of each type, by bit position.
    pub(crate) type_counts: [u32; 6],
    /// The distinct device localities.
    pub(crate) localities: Vec<Locality>,
    child_start: Vec<u32>,
    child_list: Vec<u32>,
    hostname: String,
}

impl Topology {
    /// Every object, indexed by [`NodeId`].
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The object `id`, or `None` if there is none.
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.0 as usize)
    }

    /// The children of `id`, in insertion order (empty for an unknown id).
    pub fn children(&self, id: NodeId) -> &[u32] {
        let i = id.0 as usize;
        match (self.child_start.get(i), self.child_start.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.child_list[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The machine's PUs.
    pub fn machine_cpus(&self) -> &CpuSet {
        self.nodes[0].cpuset.as_ref().unwrap_or(&EMPTY)
    }

    /// The packages' PUs, in package order (one package equal to the machine when the
    /// backend gave none).
    pub fn packages(&self) -> &[CpuSet] {
        &self.packages
    }

    /// The node of each package (the machine's when the backend gave none).
    pub fn package_nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.package_nodes.iter().map(|&i| NodeId(i))
    }

    /// Every OS device, in insertion order, indexed by [`DeviceId`].
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The device `id`, or `None` if there is none.
    pub fn device(&self, id: DeviceId) -> Option<&Device> {
        self.devices.get(id.0 as usize)
    }

    /// The host name in the uuids (the backend's, or `localhost`).
    pub fn hostname(&self) -> &str {
        &self.hostname
    }

    /// The same topology with uuids built from another host name (the caller's
    /// `PMIX_HOSTNAME`, `--hostname`).
    ///
    /// # Errors
    /// [`BuildError::BadName`] for an empty, over-long or NUL-holding name.
    pub fn with_hostname(mut self, host: &str) -> Result<Self, BuildError> {
        if !name_ok(host) {
            return Err(BuildError::BadName {
                node: 0,
                what: "hostname",
            });
        }
        self.hostname = String::from(host);
        for d in &mut self.devices {
            d.uuid = make_uuid(&d.spec, host);
        }
        Ok(self)
    }

    /// The number of entries a query selecting every device reports (GPU and COPROC
    /// aliases folded).
    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }

    /// The PCI bridges from the top of a device's I/O tree down to its function.
    pub fn pci_path(&self, id: DeviceId) -> &[u32] {
        self.device(id).map_or(&[], |d| {
            &self.chains[d.chain.start as usize..d.chain.end as usize]
        })
    }
}

impl fmt::Debug for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Topology")
            .field("hostname", &self.hostname)
            .field("machine", self.machine_cpus())
            .field("packages", &self.packages)
            .field("nodes", &self.nodes.len())
            .field("devices", &self.devices.len())
            .finish()
    }
}
