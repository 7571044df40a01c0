//! What [`TopologyBuilder::build`](super::TopologyBuilder::build) refuses, and the
//! checks that find it: [`BuildError`]; the structure check (dangling parents,
//! misplaced objects, cycles); cpus outside the machine; overlapping packages; bad OS
//! names, identities, hostnames and device types; duplicate OS names and PCI addresses.
//!
//! The checks run on the raw objects before anything is precomputed, so the rest of
//! `build()` may assume an acyclic tree whose objects sit under parents that can hold
//! them.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{Node, NodeKind};
use crate::cpuset::CpuSet;
use crate::device::MAX_NAME_LEN;
use crate::pci::PciAddr;
use crate::status::{PmixError, Status};

/// Why [`TopologyBuilder::build`](super::TopologyBuilder::build) refused the objects it was given.
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

/// Dangling parents, misplaced objects and cycles.
pub(super) fn check_structure(nodes: &[Node]) -> Result<(), BuildError> {
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

/// Cpusets and localities must lie within the machine.
pub(super) fn check_cpus(nodes: &[Node], machine: &CpuSet) -> Result<(), BuildError> {
    for (i, node) in nodes.iter().enumerate().skip(1) {
        for set in [&node.cpuset, &node.locality].into_iter().flatten() {
            if !set.is_subset(machine) {
                return Err(BuildError::CpusOutsideMachine { node: i as u32 });
            }
        }
    }
    Ok(())
}

/// A name the topology accepts: non-empty, at most [`MAX_NAME_LEN`] bytes, no NUL.
pub(super) fn name_ok(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_NAME_LEN && !s.contains('\0')
}

/// No two packages share a PU (`package_nodes[i]` is the object of `packages[i]`).
pub(super) fn check_packages(packages: &[CpuSet], package_nodes: &[u32]) -> Result<(), BuildError> {
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
    Ok(())
}

/// OS device types and names, identities and the hostname; duplicate OS names, and
/// duplicate PCI addresses under one host bridge.
pub(super) fn check_names(nodes: &[Node], hostname: Option<&str>) -> Result<(), BuildError> {
    if hostname.is_some_and(|h| !name_ok(h)) {
        return Err(BuildError::BadName {
            node: 0,
            what: "hostname",
        });
    }
    let mut names: Vec<(&str, u32)> = Vec::new();
    // (address, no host bridge, host bridge, node): objects under no host bridge sort
    // after those under one, for each address.
    let mut addrs: Vec<(PciAddr, bool, Option<u32>, u32)> = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        if let Some(a) = node.pci {
            let hb = host_bridge_of(nodes, i);
            addrs.push((a, hb.is_none(), hb, i as u32));
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
        .find(|w| (w[0].0, w[0].2) == (w[1].0, w[1].2))
    {
        return Err(BuildError::DuplicatePciAddress {
            addr: w[0].0,
            first: w[0].3,
            second: w[1].3,
        });
    }
    Ok(())
}

/// The host bridge above PCI object `i`, or `None` when it hangs under a processor
/// object directly. The tree is known to be acyclic.
fn host_bridge_of(nodes: &[Node], i: usize) -> Option<u32> {
    let mut p = nodes[i].parent;
    while let Some(pi) = p {
        match nodes[pi as usize].kind {
            NodeKind::HostBridge => return Some(pi),
            NodeKind::PciBridge => p = nodes[pi as usize].parent,
            _ => break,
        }
    }
    None
}
