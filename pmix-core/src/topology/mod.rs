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
//!
//! The module is split along the life of a topology: [`TopologyBuilder`] (builder.rs)
//! collects objects; `validate` refuses bad ones ([`BuildError`]); `entries` precomputes
//! per device what distance queries read; this file holds the model ([`Node`],
//! [`Topology`]) and its read-only accessors. The queries themselves live in
//! [`distance`](crate::distance).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::cpuset::CpuSet;
use crate::device::{Device, OsDeviceSpec, make_uuid};
use crate::pci::PciAddr;

mod builder;
mod entries;
mod validate;

pub use builder::TopologyBuilder;
pub(crate) use entries::{Entry, Locality, PackedIndex, Place, entry_order};
pub use validate::BuildError;

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

static EMPTY: CpuSet = CpuSet::new();

/// An immutable, validated topology: the tree, its devices, and what distance queries
/// need precomputed. Built by [`TopologyBuilder::build`].
#[derive(Clone)]
pub struct Topology {
    nodes: Vec<Node>,
    pub(crate) devices: Vec<Device>,
    /// Every device's PCI path (bridge node ids, top-down), end to end; a device's
    /// path is the range [`Device::pci_path`] of it.
    pub(crate) pci_paths: Vec<u32>,
    pub(crate) packages: Vec<CpuSet>,
    package_nodes: Vec<u32>,
    /// The reported entries, in their total order.
    pub(crate) entries: Vec<Entry>,
    /// The device indexes of every entry, best alias first, end to end; an entry's
    /// devices are the range [`Entry::members`] of it.
    pub(crate) entry_members: Vec<u32>,
    /// Number of entries of each type, by bit position.
    pub(crate) type_counts: [u32; 6],
    /// The distinct device localities.
    pub(crate) localities: Vec<Locality>,
    child_start: Vec<u32>,
    child_list: Vec<u32>,
    hostname: String,
}

/// The host name device uuids carry when neither the caller nor the topology names one.
pub const DEFAULT_HOSTNAME: &str = "localhost";

/// Checks a host name a caller gives (`PMIX_HOSTNAME`, `--hostname`), so a front end can
/// refuse a bad one when it is given, before any topology is loaded: the same test
/// [`Topology::with_hostname`] makes.
///
/// # Errors
/// [`BuildError::BadName`] when it is empty, longer than [`MAX_NAME_LEN`] bytes or
/// holds a NUL.
///
/// [`MAX_NAME_LEN`]: crate::MAX_NAME_LEN
pub fn check_hostname(host: &str) -> Result<(), BuildError> {
    if validate::name_ok(host) {
        Ok(())
    } else {
        Err(BuildError::BadName {
            node: 0,
            what: "hostname",
        })
    }
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

    /// The host name in the uuids (the backend's, or [`DEFAULT_HOSTNAME`]).
    pub fn hostname(&self) -> &str {
        &self.hostname
    }

    /// The host name rule of docs/design.md §2, in one place: the host name a topology's device
    /// uuids carry is the caller's (`PMIX_HOSTNAME` at init, `pmix-topo --hostname`)
    /// when given, else the topology's own (what its backend found: hwloc's `HostName`
    /// info, a sysfs tree's host name), else [`DEFAULT_HOSTNAME`] (put in at build when
    /// the backend found none). Every front end applies it through this call.
    ///
    /// # Errors
    /// [`BuildError::BadName`] for a caller's name that [`check_hostname`] refuses.
    pub fn with_caller_hostname(self, caller: Option<&str>) -> Result<Self, BuildError> {
        match caller {
            Some(host) => self.with_hostname(host),
            None => Ok(self),
        }
    }

    /// The same topology with uuids built from another host name (the caller's
    /// `PMIX_HOSTNAME`, `--hostname`).
    ///
    /// # Errors
    /// [`BuildError::BadName`] for an empty, over-long or NUL-holding name.
    pub fn with_hostname(mut self, host: &str) -> Result<Self, BuildError> {
        check_hostname(host)?;
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
            &self.pci_paths[d.pci_path.start as usize..d.pci_path.end as usize]
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
