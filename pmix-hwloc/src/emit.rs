//! The one place where hwloc objects become `pmix_core` objects, shared by the XML
//! importer and the libhwloc backend so that both normalise a topology the same way.
//!
//! A backend walks its objects depth-first and calls [`Emitter::open`] / [`Emitter::close`]
//! for each, in document order. The emitter checks that every object sits where the
//! model can hold it, keeps the machine, packages, NUMA nodes and hwloc groups, and
//! keeps other processor-side objects (caches, cores, dies, PUs, memory-side caches)
//! only when I/O hangs directly under them, so that an I/O object's locality is the
//! cpuset of its nearest non-I/O ancestor, as hwloc defines it, without copying every
//! PU into the topology.
//!
//! Every object carries a [`Loc`]: the XML importer passes the byte offset of its start
//! tag, the native backend the object's position in its walk. Errors carry the `Loc` of
//! the object at fault (and of the first object, for duplicates) so each backend can say
//! where, in its own terms.
//!
//! hwloc 3.0's `<pci_locality>` statements reach the emitter through
//! [`Emitter::pci_locality`]; they are applied in [`Emitter::finish`], once every I/O
//! root (host bridge, or PCI object hanging directly under a processor object) is known,
//! by the rule the crate docs spell out ("PCI localities").

use pmix_core::{
    BuildError, CpuSet, DeviceTypes, NodeId, OsDeviceSpec, PciAddr, Topology, TopologyBuilder,
};

/// Where an object came from, in the backend's terms (XML: byte offset of the tag).
pub(crate) type Loc = u64;

/// What kind of hwloc object is being opened, as far as the model cares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Class {
    /// The root: hwloc `Machine`.
    Machine,
    /// hwloc `Package` (v1 `Socket`).
    Package,
    /// hwloc `NUMANode`.
    Numa,
    /// hwloc `Group`.
    Group,
    /// Any other processor-side object with a cpuset: caches, cores, dies, PUs,
    /// memory-side caches.
    OtherCpu,
    /// hwloc `Misc`: kept out of the model.
    Misc,
    /// A bridge whose upstream side is the host (`bridge_type="0-1"`).
    HostBridge,
    /// A PCI-to-PCI bridge (`bridge_type="1-1"`).
    PciBridge,
    /// hwloc `PCIDev`.
    PciFunction,
    /// hwloc `OSDev`.
    OsDevice,
}

impl Class {
    /// The hwloc name of the class with its article, for messages.
    pub(crate) fn hwloc_name(self) -> &'static str {
        match self {
            Class::Machine => "a Machine",
            Class::Package => "a Package",
            Class::Numa => "a NUMANode",
            Class::Group => "a Group",
            Class::OtherCpu => "a processor-side object",
            Class::Misc => "a Misc object",
            Class::HostBridge => "a host bridge",
            Class::PciBridge => "a PCI bridge",
            Class::PciFunction => "a PCIDev",
            Class::OsDevice => "an OSDev",
        }
    }
}

/// What a backend knows of an object when it opens it.
#[derive(Debug, Default)]
pub(crate) struct ObjInfo {
    /// The cpuset (processor-side objects; required there).
    pub(crate) cpus: Option<CpuSet>,
    /// The PCI address (PCI bridges and functions; required there).
    pub(crate) pci: Option<PciAddr>,
    /// The PCI class, when known.
    pub(crate) class: Option<u16>,
    /// The OS device's name and type (OS devices; required there). Identity attributes
    /// may be added later with [`Emitter::info`].
    pub(crate) spec: Option<OsDeviceSpec>,
    /// A host bridge's PCI domain and secondary bus (hwloc's `bridge_pci`), when known:
    /// the bus a PCI locality is looked up by. Without it, the bus of the host bridge's
    /// first PCI child is used.
    pub(crate) bus: Option<(u32, u8)>,
}

/// One hwloc 3.0 `<pci_locality>`: the cpus that PCI buses `bus_min..=bus_max` of
/// `domain` are local to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PciLocality {
    pub(crate) domain: u32,
    pub(crate) bus_min: u8,
    pub(crate) bus_max: u8,
    pub(crate) cpus: CpuSet,
    /// Where the statement is (XML: byte offset of its tag).
    pub(crate) loc: Loc,
}

/// A top of a PCI tree: a host bridge, or a PCI bridge or function that hangs under a
/// processor object directly (libhwloc with bridges filtered out).
#[derive(Debug)]
struct IoRoot {
    node: NodeId,
    /// The domain and bus a PCI locality is looked up by.
    key: Option<(u32, u8)>,
    /// The cpuset of the processor object it hangs under, as an index into
    /// [`Emitter::parent_sets`] (one copy per parent, however many roots it holds).
    parent: u32,
    loc: Loc,
}

/// A problem with the objects a backend handed over, with where it was.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ModelError {
    #[error("the topology has no Machine object")]
    NoMachine,
    #[error("a second root object: a topology holds exactly one Machine")]
    SecondRoot,
    #[error("{child} cannot be placed under {parent}")]
    Misplaced {
        child: &'static str,
        parent: &'static str,
    },
    #[error("{0} needs a {1}")]
    Missing(&'static str, &'static str),
    #[error("cpuset {cpus} names cpus outside the machine's {machine}")]
    CpusOutsideMachine { cpus: String, machine: String },
    #[error("PCI address {addr} is already used by the object at {first}")]
    DuplicatePci { addr: PciAddr, first: Loc },
    #[error("OS device name {name:?} is already used by the object at {first}")]
    DuplicateName { name: String, first: Loc },
    /// A PCI locality that contradicts the tree: its cpus (within the machine) are not
    /// within those of the processor object the I/O root at `root` hangs under.
    #[error(
        "PCI locality cpuset {cpus} is not within the cpus {parent} of the object that the I/O object at {root} hangs under"
    )]
    LocalityOutsideParent {
        cpus: String,
        parent: String,
        root: Loc,
    },
    #[error("{0}")]
    Build(BuildError),
}

/// A [`ModelError`] and the object it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Located {
    pub(crate) loc: Loc,
    pub(crate) error: ModelError,
}

#[derive(Debug)]
struct Frame {
    class: Class,
    /// The index of this object's cpuset in [`Emitter::parent_sets`], once an I/O root
    /// hangs under it.
    parent_set: Option<u32>,
    node: Option<NodeId>,
    cpus: Option<CpuSet>,
    spec: Option<OsDeviceSpec>,
    loc: Loc,
}

/// Turns a depth-first walk of hwloc objects into a [`TopologyBuilder`].
#[derive(Debug, Default)]
pub(crate) struct Emitter {
    b: Option<TopologyBuilder>,
    stack: Vec<Frame>,
    /// The `Loc` of every emitted node, by node id.
    locs: Vec<Loc>,
    hostname: Option<String>,
    /// Every I/O root, in document order.
    roots: Vec<IoRoot>,
    /// Every PCI locality statement, in document order.
    localities: Vec<PciLocality>,
    /// The cpusets of the processor objects I/O roots hang under.
    parent_sets: Vec<CpuSet>,
}

fn processorish(c: Class) -> bool {
    matches!(
        c,
        Class::Machine | Class::Package | Class::Numa | Class::Group | Class::OtherCpu
    )
}

impl Emitter {
    pub(crate) fn new() -> Self {
        Emitter::default()
    }

    /// Opens an object under the innermost open one.
    pub(crate) fn open(&mut self, class: Class, info: ObjInfo, loc: Loc) -> Result<(), Located> {
        let at = |error| Located { loc, error };
        let parent = self.stack.last().map(|f| f.class);
        // A Misc with a cpuset among processor objects (hwloc v1) is a plain container.
        let class =
            if class == Class::Misc && info.cpus.is_some() && parent.is_some_and(processorish) {
                Class::OtherCpu
            } else {
                class
            };
        let allowed = match (parent, class) {
            (None, Class::Machine) => true,
            (None, _) => false,
            (Some(_), Class::Machine) => false,
            (Some(_), Class::Misc) => true,
            (
                Some(p),
                Class::Package | Class::Numa | Class::Group | Class::OtherCpu | Class::HostBridge,
            ) => processorish(p),
            (Some(p), Class::PciBridge | Class::PciFunction) => {
                processorish(p) || matches!(p, Class::HostBridge | Class::PciBridge)
            }
            (Some(p), Class::OsDevice) => processorish(p) || p == Class::PciFunction,
        };
        if !allowed {
            return Err(at(match parent {
                None => ModelError::Misplaced {
                    child: class.hwloc_name(),
                    parent: "the topology root",
                },
                Some(_) if class == Class::Machine => ModelError::SecondRoot,
                Some(p) => ModelError::Misplaced {
                    child: class.hwloc_name(),
                    parent: p.hwloc_name(),
                },
            }));
        }
        if class == Class::Machine && self.b.is_some() {
            return Err(at(ModelError::SecondRoot));
        }
        let needs_cpus = processorish(class);
        if needs_cpus && info.cpus.is_none() {
            return Err(at(ModelError::Missing(class.hwloc_name(), "cpuset")));
        }
        if let (Some(cpus), Some(b)) = (&info.cpus, &self.b) {
            if needs_cpus && !cpus.is_subset(b.machine_cpus()) {
                return Err(at(ModelError::CpusOutsideMachine {
                    cpus: cpus.to_string(),
                    machine: b.machine_cpus().to_string(),
                }));
            }
        }
        if matches!(class, Class::PciBridge | Class::PciFunction) && info.pci.is_none() {
            return Err(at(ModelError::Missing(class.hwloc_name(), "PCI address")));
        }
        if class == Class::OsDevice && info.spec.is_none() {
            return Err(at(ModelError::Missing("an OSDev", "name and type")));
        }

        // I/O hangs under the nearest processor object: make sure it is in the model.
        if matches!(
            class,
            Class::HostBridge | Class::PciBridge | Class::PciFunction | Class::OsDevice
        ) {
            self.emit_top_container();
        }
        let node = match class {
            Class::Machine => {
                let b = TopologyBuilder::new(info.cpus.clone().unwrap_or_default());
                let id = b.machine();
                self.b = Some(b);
                self.locs.push(loc);
                Some(id)
            }
            Class::Package | Class::Numa | Class::Group => {
                let parent = self.nearest_emitted();
                let cpus = info.cpus.clone().unwrap_or_default();
                let b = self.builder();
                let id = match class {
                    Class::Package => b.package(parent, cpus),
                    Class::Numa => b.numa(parent, cpus),
                    _ => b.group(parent, cpus),
                };
                self.locs.push(loc);
                Some(id)
            }
            Class::HostBridge => {
                let parent = self.nearest_emitted();
                let id = self.builder().host_bridge(parent);
                self.locs.push(loc);
                let parent = self.parent_set();
                self.roots.push(IoRoot {
                    node: id,
                    key: info.bus,
                    parent,
                    loc,
                });
                Some(id)
            }
            Class::PciBridge | Class::PciFunction => {
                let parent = self.nearest_emitted();
                let addr = info.pci.unwrap_or(PciAddr {
                    domain: 0,
                    bus: 0,
                    device: 0,
                    function: 0,
                });
                let b = self.builder();
                let id = if class == Class::PciBridge {
                    b.pci_bridge(parent, addr, info.class)
                } else {
                    b.pci_function(parent, addr, info.class)
                };
                self.locs.push(loc);
                self.note_pci_bus(id, addr, loc);
                Some(id)
            }
            // Emitted lazily (other processor objects) or on close (OS devices), or never.
            Class::OtherCpu | Class::Misc | Class::OsDevice => None,
        };
        self.stack.push(Frame {
            class,
            parent_set: None,
            node,
            cpus: info.cpus,
            spec: info.spec,
            loc,
        });
        Ok(())
    }

    /// Records a PCI locality statement (hwloc 3.0 `<pci_locality>`), applied when the
    /// walk finishes.
    pub(crate) fn pci_locality(&mut self, locality: PciLocality) {
        self.localities.push(locality);
    }

    /// The index in `parent_sets` of the innermost open object's cpuset (a processor
    /// object when an I/O root opens under it), copied there the first time.
    fn parent_set(&mut self) -> u32 {
        let Some(top) = self.stack.last_mut() else {
            return 0;
        };
        if let Some(i) = top.parent_set {
            return i;
        }
        let i = u32::try_from(self.parent_sets.len()).unwrap_or(u32::MAX);
        self.parent_sets.push(top.cpus.clone().unwrap_or_default());
        top.parent_set = Some(i);
        i
    }

    /// A PCI object `id` at `addr` just opened: it is an I/O root if it hangs under a
    /// processor object, and it gives a host bridge without a known bus its bus.
    fn note_pci_bus(&mut self, id: NodeId, addr: PciAddr, loc: Loc) {
        let Some(parent) = self.stack.last() else {
            return;
        };
        if processorish(parent.class) {
            let parent = self.parent_set();
            self.roots.push(IoRoot {
                node: id,
                key: Some((addr.domain, addr.bus)),
                parent,
                loc,
            });
        } else if parent.class == Class::HostBridge {
            // The host bridge is the last root registered: nothing below it registers one.
            let hb = parent.node;
            if let Some(root) = self.roots.last_mut() {
                if Some(root.node) == hb && root.key.is_none() {
                    root.key = Some((addr.domain, addr.bus));
                }
            }
        }
    }

    /// Gives each I/O root the cpus of the first PCI locality (in document order) whose
    /// domain is the root's and whose bus range holds the root's bus, restricted to the
    /// machine's cpus, when that is not empty and differs from the cpus of the object the
    /// root hangs under.
    fn apply_pci_localities(&mut self) -> Result<(), Located> {
        if self.localities.is_empty() {
            return Ok(());
        }
        let first = first_covering(&self.localities, &self.roots);
        let Some(b) = self.b.as_mut() else {
            return Ok(());
        };
        let machine = b.machine_cpus().clone();
        for (root, found) in self.roots.iter().zip(first) {
            let Some(l) = found.map(|i| &self.localities[i]) else {
                continue;
            };
            let parent = self
                .parent_sets
                .get(root.parent as usize)
                .unwrap_or(&machine);
            let mut cpus = l.cpus.clone();
            cpus.intersect_with(&machine);
            if cpus.is_empty() || cpus == *parent {
                continue;
            }
            if !cpus.is_subset(parent) {
                return Err(Located {
                    loc: l.loc,
                    error: ModelError::LocalityOutsideParent {
                        cpus: cpus.to_string(),
                        parent: parent.to_string(),
                        root: root.loc,
                    },
                });
            }
            b.set_locality(root.node, cpus);
        }
        Ok(())
    }

    /// Records an `<info name=… value=…>` of the innermost open object (or of the
    /// topology itself when none is open, as hwloc v3 writes them).
    pub(crate) fn info(&mut self, name: &str, value: &str) {
        let root_only = self.stack.len() == 1;
        match self.stack.last_mut() {
            None => {
                if name == "HostName" {
                    self.hostname = Some(value.to_owned());
                }
            }
            Some(f) if f.class == Class::Machine && root_only => {
                if name == "HostName" {
                    self.hostname = Some(value.to_owned());
                }
            }
            Some(f) => {
                let Some(spec) = f.spec.as_mut() else { return };
                let slot = match name {
                    "Address" => &mut spec.address,
                    "NodeGUID" => &mut spec.node_guid,
                    "SysImageGUID" => &mut spec.sys_image_guid,
                    "NVIDIAUUID" | "AMDUUID" => &mut spec.vendor_id,
                    _ => return,
                };
                *slot = Some(value.to_owned());
            }
        }
    }

    /// Closes the innermost open object (an OS device is added to the model now, with
    /// everything its `info`s said).
    pub(crate) fn close(&mut self) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        if frame.class == Class::OsDevice {
            if let Some(spec) = frame.spec {
                let parent = self.nearest_emitted();
                self.builder().os_device(parent, spec);
                self.locs.push(frame.loc);
            }
        }
    }

    /// Freezes the model.
    pub(crate) fn finish(mut self) -> Result<Topology, Located> {
        // Objects still open (a truncated walk) are the caller's to report; close them.
        while !self.stack.is_empty() {
            self.close();
        }
        if self.b.is_none() {
            return Err(Located {
                loc: 0,
                error: ModelError::NoMachine,
            });
        }
        self.apply_pci_localities()?;
        let Some(mut b) = self.b.take() else {
            return Err(Located {
                loc: 0,
                error: ModelError::NoMachine,
            });
        };
        if let Some(h) = self.hostname.take() {
            b.hostname(h);
        }
        let locs = self.locs;
        b.build().map_err(|e| {
            let loc_of = |n: u32| locs.get(n as usize).copied().unwrap_or(0);
            match &e {
                BuildError::DuplicatePciAddress {
                    addr,
                    first,
                    second,
                } => {
                    return Located {
                        loc: loc_of(*second),
                        error: ModelError::DuplicatePci {
                            addr: *addr,
                            first: loc_of(*first),
                        },
                    };
                }
                BuildError::DuplicateOsName {
                    name,
                    first,
                    second,
                } => {
                    return Located {
                        loc: loc_of(*second),
                        error: ModelError::DuplicateName {
                            name: name.clone(),
                            first: loc_of(*first),
                        },
                    };
                }
                _ => {}
            }
            let node = match &e {
                BuildError::DanglingParent { node, .. }
                | BuildError::Cycle { node }
                | BuildError::Misplaced { node, .. }
                | BuildError::CpusOutsideMachine { node }
                | BuildError::BadName { node, .. }
                | BuildError::BadDeviceType { node, .. } => Some(*node),
                BuildError::OverlappingPackages { b, .. } => Some(*b),
                _ => None,
            };
            let loc = node
                .and_then(|n| locs.get(n as usize).copied())
                .unwrap_or(0);
            Located {
                loc,
                error: ModelError::Build(e),
            }
        })
    }

    fn builder(&mut self) -> &mut TopologyBuilder {
        // open() creates the builder with the Machine, which must come first.
        self.b
            .get_or_insert_with(|| TopologyBuilder::new(CpuSet::new()))
    }

    fn nearest_emitted(&self) -> NodeId {
        self.stack
            .iter()
            .rev()
            .find_map(|f| f.node)
            .unwrap_or(NodeId(0))
    }

    /// Makes the innermost open object part of the model if it is a processor-side
    /// object that was left out so far.
    fn emit_top_container(&mut self) {
        let Some(top) = self.stack.len().checked_sub(1) else {
            return;
        };
        if self.stack[top].class != Class::OtherCpu || self.stack[top].node.is_some() {
            return;
        }
        let parent = self.stack[..top]
            .iter()
            .rev()
            .find_map(|f| f.node)
            .unwrap_or(NodeId(0));
        let cpus = self.stack[top].cpus.clone().unwrap_or_default();
        let id = self.builder().group(parent, cpus);
        self.locs.push(self.stack[top].loc);
        self.stack[top].node = Some(id);
    }
}

/// For each root, the index of the first locality (in `localities` order) whose domain
/// is the root's and whose bus range holds the root's bus.
///
/// Linear in roots and localities (plus a sort): the distinct (domain, bus) keys are
/// sorted, and each locality claims the still unclaimed keys of its range, skipping
/// claimed runs through a "next unclaimed" table, so hostile documents with many
/// overlapping ranges cost no more than the keys they can claim.
fn first_covering(localities: &[PciLocality], roots: &[IoRoot]) -> Vec<Option<usize>> {
    let mut keys: Vec<(u32, u8)> = roots.iter().filter_map(|r| r.key).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut claimed: Vec<Option<usize>> = vec![None; keys.len()];
    // next[i]: a candidate for the first unclaimed key at or after i.
    let mut next: Vec<usize> = (0..=keys.len()).collect();
    for (li, l) in localities.iter().enumerate() {
        let lo = keys.partition_point(|&k| k < (l.domain, l.bus_min));
        let hi = keys.partition_point(|&k| k <= (l.domain, l.bus_max));
        let mut j = first_unclaimed(&mut next, lo);
        while j < hi {
            claimed[j] = Some(li);
            next[j] = j + 1;
            j = first_unclaimed(&mut next, j + 1);
        }
    }
    roots
        .iter()
        .map(|r| {
            let k = r.key?;
            let i = keys.binary_search(&k).ok()?;
            claimed[i]
        })
        .collect()
}

/// The first unclaimed key index at or after `i` (`next.len() - 1` when none), halving
/// the paths it walks so later calls are short.
fn first_unclaimed(next: &mut [usize], mut i: usize) -> usize {
    while next[i] != i {
        next[i] = next[next[i]];
        i = next[i];
    }
    i
}

/// The PMIx type of an hwloc v1/v2 `osdev_type` (an enum).
pub(crate) fn osdev_type_v2(v: u32) -> Option<DeviceTypes> {
    Some(match v {
        0 => DeviceTypes::BLOCK,
        1 => DeviceTypes::GPU,
        2 => DeviceTypes::NETWORK,
        3 => DeviceTypes::OPENFABRICS,
        4 => DeviceTypes::DMA,
        5 => DeviceTypes::COPROC,
        _ => return None,
    })
}

/// The PMIx type of an hwloc v3 `osdev_type` (a bitmask: 1 storage, 2 memory, 4 gpu,
/// 8 coproc, 16 network, 32 openfabrics, 64 dma), by DESIGN §2's precedence:
/// OPENFABRICS, then NETWORK, COPROC, GPU, DMA, and BLOCK for storage or memory.
pub(crate) fn osdev_type_v3(v: u32) -> Option<DeviceTypes> {
    if v == 0 || v & !0x7f != 0 {
        return None;
    }
    Some(if v & 32 != 0 {
        DeviceTypes::OPENFABRICS
    } else if v & 16 != 0 {
        DeviceTypes::NETWORK
    } else if v & 8 != 0 {
        DeviceTypes::COPROC
    } else if v & 4 != 0 {
        DeviceTypes::GPU
    } else if v & 64 != 0 {
        DeviceTypes::DMA
    } else {
        DeviceTypes::BLOCK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpus_info(cpus: Option<CpuSet>) -> ObjInfo {
        ObjInfo {
            cpus,
            ..Default::default()
        }
    }

    fn pci_info(addr: PciAddr) -> ObjInfo {
        ObjInfo {
            pci: Some(addr),
            ..Default::default()
        }
    }

    fn spec_info(spec: OsDeviceSpec) -> ObjInfo {
        ObjInfo {
            spec: Some(spec),
            ..Default::default()
        }
    }

    fn locality(domain: u32, bus_min: u8, bus_max: u8) -> PciLocality {
        PciLocality {
            domain,
            bus_min,
            bus_max,
            cpus: CpuSet::new(),
            loc: 0,
        }
    }

    fn root(key: Option<(u32, u8)>) -> IoRoot {
        IoRoot {
            node: NodeId(0),
            key,
            parent: 0,
            loc: 0,
        }
    }

    #[test]
    fn first_covering_takes_the_first_range_in_document_order() {
        let roots = [
            root(Some((0, 0x2b))),
            root(Some((0, 0x30))),
            root(Some((1, 0x2b))),
            root(None),
            root(Some((0, 0x40))),
            root(Some((0, 0x2b))),
        ];
        let localities = [
            locality(0, 0x30, 0x3b),
            locality(0, 0x00, 0x3f),
            locality(1, 0x2b, 0x2b),
            locality(0, 0x2b, 0x2b),
        ];
        assert_eq!(
            first_covering(&localities, &roots),
            [Some(1), Some(0), Some(2), None, None, Some(1)]
        );
    }

    #[test]
    fn first_covering_matches_a_plain_scan() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..200 {
            let roots: Vec<IoRoot> = (0..rnd(12))
                .map(|_| root(Some((rnd(3) as u32, rnd(64) as u8))))
                .collect();
            let localities: Vec<PciLocality> = (0..rnd(12))
                .map(|_| {
                    let a = rnd(64) as u8;
                    let b = rnd(64) as u8;
                    locality(rnd(3) as u32, a.min(b), a.max(b))
                })
                .collect();
            let plain: Vec<Option<usize>> = roots
                .iter()
                .map(|r| {
                    let (d, bus) = r.key?;
                    localities
                        .iter()
                        .position(|l| l.domain == d && l.bus_min <= bus && bus <= l.bus_max)
                })
                .collect();
            assert_eq!(first_covering(&localities, &roots), plain);
        }
    }

    #[test]
    fn v3_bitmask_precedence_follows_design() {
        assert_eq!(osdev_type_v3(1), Some(DeviceTypes::BLOCK));
        assert_eq!(osdev_type_v3(2), Some(DeviceTypes::BLOCK));
        assert_eq!(osdev_type_v3(3), Some(DeviceTypes::BLOCK));
        assert_eq!(osdev_type_v3(4), Some(DeviceTypes::GPU));
        assert_eq!(osdev_type_v3(4 | 8), Some(DeviceTypes::COPROC));
        assert_eq!(osdev_type_v3(16 | 32), Some(DeviceTypes::OPENFABRICS));
        assert_eq!(osdev_type_v3(16 | 1), Some(DeviceTypes::NETWORK));
        assert_eq!(osdev_type_v3(64), Some(DeviceTypes::DMA));
        assert_eq!(osdev_type_v3(64 | 4), Some(DeviceTypes::GPU));
        assert_eq!(osdev_type_v3(0), None);
        assert_eq!(osdev_type_v3(128), None);
        assert_eq!(osdev_type_v3(128 | 16), None);
    }

    #[test]
    fn v2_enum() {
        let all: Vec<_> = (0..6).map(|v| osdev_type_v2(v).unwrap()).collect();
        assert_eq!(
            all,
            [
                DeviceTypes::BLOCK,
                DeviceTypes::GPU,
                DeviceTypes::NETWORK,
                DeviceTypes::OPENFABRICS,
                DeviceTypes::DMA,
                DeviceTypes::COPROC
            ]
        );
        assert_eq!(osdev_type_v2(6), None);
    }

    fn cpus(s: &str) -> Option<CpuSet> {
        Some(CpuSet::parse_list(s).unwrap())
    }

    #[test]
    fn io_under_a_cache_gets_the_cache_as_locality() {
        let mut e = Emitter::new();
        e.open(Class::Machine, cpus_info(cpus("0-7")), 1).unwrap();
        e.open(Class::Package, cpus_info(cpus("0-7")), 2).unwrap();
        e.open(Class::OtherCpu, cpus_info(cpus("0-3")), 3).unwrap();
        e.open(Class::OtherCpu, cpus_info(cpus("0-1")), 4).unwrap();
        e.close();
        e.open(Class::HostBridge, ObjInfo::default(), 5).unwrap();
        let spec = OsDeviceSpec {
            name: "eth0".into(),
            kind: DeviceTypes::NETWORK,
            ..Default::default()
        };
        e.open(
            Class::PciFunction,
            ObjInfo {
                pci: Some("0000:01:00.0".parse().unwrap()),
                ..Default::default()
            },
            6,
        )
        .unwrap();
        e.open(Class::OsDevice, spec_info(spec), 7).unwrap();
        e.info("Address", "00:11:22:33:44:55");
        for _ in 0..5 {
            e.close();
        }
        let t = e.finish().unwrap();
        // machine, package, the cache (only the one holding I/O), host bridge, function, device
        assert_eq!(t.nodes().len(), 6);
        let d = &t.devices()[0];
        assert_eq!(d.locality().to_string(), "0-3");
        assert_eq!(d.uuid(), "ipv4://00:11:22:33:44:55");
    }

    #[test]
    fn misplacements_and_duplicates_are_reported_with_their_loc() {
        let mut e = Emitter::new();
        let err = e.open(Class::Package, cpus_info(cpus("0")), 9).unwrap_err();
        assert_eq!(err.loc, 9);
        e.open(Class::Machine, cpus_info(cpus("0-3")), 1).unwrap();
        let err = e
            .open(Class::Machine, cpus_info(cpus("0-3")), 2)
            .unwrap_err();
        assert_eq!(err.error, ModelError::SecondRoot);
        let err = e
            .open(Class::Package, cpus_info(cpus("0-4")), 3)
            .unwrap_err();
        assert!(matches!(err.error, ModelError::CpusOutsideMachine { .. }));
        let addr: PciAddr = "0000:01:00.0".parse().unwrap();
        e.open(Class::PciFunction, pci_info(addr), 4).unwrap();
        let err = e.open(Class::PciFunction, pci_info(addr), 5).unwrap_err();
        assert_eq!(
            err.error,
            ModelError::Misplaced {
                child: "a PCIDev",
                parent: "a PCIDev"
            }
        );
        e.close();
        // Duplicates are the core's to find (per host bridge); reported with both places.
        e.open(Class::PciFunction, pci_info(addr), 6).unwrap();
        e.close();
        e.close();
        let err = e.finish().unwrap_err();
        assert_eq!(
            err,
            Located {
                loc: 6,
                error: ModelError::DuplicatePci { addr, first: 4 }
            }
        );
    }
}
