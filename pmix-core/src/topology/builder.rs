//! [`TopologyBuilder`]: collects the objects a backend describes. Its
//! [`build`](TopologyBuilder::build) runs the checks of `validate`, finds the packages,
//! has `entries` precompute the per-device facts, and freezes everything into a
//! [`Topology`].

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::validate::{self, BuildError};
use super::{EMPTY, Node, NodeId, NodeKind, Topology, entries};
use crate::cpuset::CpuSet;
use crate::device::OsDeviceSpec;
use crate::pci::PciAddr;

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

    /// Sets the host name the uuids use (docs/design.md §2: `HostName` info, sysfs hostname).
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
        if let Some(n) = self.nodes.get_mut(node.0 as usize)
            && !n.kind.is_processor()
        {
            n.locality = Some(cpus);
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
    /// queries report (docs/design.md §2 "Device entries").
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
        if u32::try_from(nodes.len()).is_err() {
            return Err(BuildError::TooLarge);
        }
        validate::check_structure(&nodes)?;
        let machine = nodes[0].cpuset.clone().unwrap_or_default();
        validate::check_cpus(&nodes, &machine)?;
        validate::check_names(&nodes, hostname.as_deref())?;
        let (packages, package_nodes) = packages(&nodes, &machine)?;

        entries::inherit_localities(&mut nodes);
        let hostname = hostname.unwrap_or_else(|| String::from(super::DEFAULT_HOSTNAME));
        let entries::Devices {
            devices,
            pci_paths,
            localities,
        } = entries::make_devices(&mut nodes, &packages, &hostname);
        let (entries, entry_members) = entries::make_entries(&devices);
        let mut type_counts = [0u32; 6];
        for e in &entries {
            type_counts[e.kind.0.trailing_zeros() as usize] += 1;
        }
        let (child_start, child_list) = make_children(&nodes);
        Ok(Topology {
            nodes,
            devices,
            pci_paths,
            packages,
            package_nodes,
            entries,
            entry_members,
            type_counts,
            localities,
            child_start,
            child_list,
            hostname,
        })
    }
}

/// The packages' cpusets and objects: every Package object, in id order; a machine
/// without any is one package, the machine itself (object 0).
fn packages(nodes: &[Node], machine: &CpuSet) -> Result<(Vec<CpuSet>, Vec<u32>), BuildError> {
    let mut package_nodes: Vec<u32> = (0..nodes.len() as u32)
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
    validate::check_packages(&packages, &package_nodes)?;
    if package_nodes.is_empty() {
        package_nodes.push(0);
    }
    Ok((packages, package_nodes))
}

/// Every object's children, in id order, as (start offsets by object, flat list).
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
