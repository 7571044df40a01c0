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
//! This module owns the walk (the [`Emitter`] and what a backend hands it, [`ObjInfo`]);
//! its submodules own the rest:
//! - `classify`: the object classes, where each may sit, and `osdev_type` mapping;
//! - `pci_locality`: hwloc 3.0's `<pci_locality>` statements, which reach the emitter
//!   through [`Emitter::pci_locality`] and are applied in [`Emitter::finish`], once every
//!   I/O root is known, by the rule the crate docs spell out ("PCI localities");
//! - `error`: [`ModelError`] and [`Located`], and pmix-core's build errors in `Loc`s.

mod classify;
mod error;
mod pci_locality;

use pmix_core::{CpuSet, NodeId, OsDeviceSpec, PciAddr, Topology, TopologyBuilder};

pub(crate) use classify::{Class, osdev_type_v2, osdev_type_v3};
pub(crate) use error::{Located, ModelError};
pub(crate) use pci_locality::PciLocality;

use pci_locality::IoRoot;

/// Where an object came from, in the backend's terms (XML: byte offset of the tag).
pub(crate) type Loc = u64;

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

impl Emitter {
    pub(crate) fn new() -> Self {
        Emitter::default()
    }

    /// Opens an object under the innermost open one.
    pub(crate) fn open(&mut self, class: Class, info: ObjInfo, loc: Loc) -> Result<(), Located> {
        let at = |error| Located { loc, error };
        let parent = self.stack.last().map(|f| f.class);
        let class = classify::normalise(class, info.cpus.is_some(), parent);
        classify::placement(parent, class).map_err(at)?;
        if class == Class::Machine && self.b.is_some() {
            return Err(at(ModelError::SecondRoot));
        }
        let needs_cpus = class.is_processor();
        if needs_cpus && info.cpus.is_none() {
            return Err(at(ModelError::Missing(class.hwloc_name(), "cpuset")));
        }
        if let (Some(cpus), Some(b)) = (&info.cpus, &self.b)
            && needs_cpus
            && !cpus.is_subset(b.machine_cpus())
        {
            return Err(at(ModelError::CpusOutsideMachine {
                cpus: cpus.to_string(),
                machine: b.machine_cpus().to_string(),
            }));
        }
        if class.is_pci() && info.pci.is_none() {
            return Err(at(ModelError::Missing(class.hwloc_name(), "PCI address")));
        }
        if class == Class::OsDevice && info.spec.is_none() {
            return Err(at(ModelError::Missing("an OSDev", "name and type")));
        }

        // I/O hangs under the nearest processor object: make sure it is in the model.
        if class.is_io() {
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
                self.note_io_root(id, info.bus, loc);
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

    /// Records an `<info name=… value=…>` of the innermost open object (or of the
    /// topology itself when none is open, as hwloc v3 writes them).
    pub(crate) fn info(&mut self, name: &str, value: &str) {
        // The topology's own infos, and the Machine's, name the host.
        let of_topology = match self.stack.as_slice() {
            [] => true,
            [root] => root.class == Class::Machine,
            _ => false,
        };
        if of_topology {
            if name == "HostName" {
                self.hostname = Some(value.to_owned());
            }
            return;
        }
        let Some(spec) = self.stack.last_mut().and_then(|f| f.spec.as_mut()) else {
            return;
        };
        let slot = match name {
            "Address" => &mut spec.address,
            "NodeGUID" => &mut spec.node_guid,
            "SysImageGUID" => &mut spec.sys_image_guid,
            "NVIDIAUUID" | "AMDUUID" => &mut spec.vendor_id,
            _ => return,
        };
        *slot = Some(value.to_owned());
    }

    /// Closes the innermost open object (an OS device is added to the model now, with
    /// everything its `info`s said).
    pub(crate) fn close(&mut self) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        if frame.class == Class::OsDevice
            && let Some(spec) = frame.spec
        {
            let parent = self.nearest_emitted();
            self.builder().os_device(parent, spec);
            self.locs.push(frame.loc);
        }
    }

    /// Freezes the model.
    pub(crate) fn finish(mut self) -> Result<Topology, Located> {
        // Objects still open (a truncated walk) are the caller's to report; close them.
        while !self.stack.is_empty() {
            self.close();
        }
        let no_machine = Located {
            loc: 0,
            error: ModelError::NoMachine,
        };
        if self.b.is_none() {
            return Err(no_machine);
        }
        self.apply_pci_localities()?;
        let Some(mut b) = self.b.take() else {
            return Err(no_machine);
        };
        if let Some(h) = self.hostname.take() {
            b.hostname(h);
        }
        let locs = self.locs;
        b.build().map_err(|e| error::located_build_error(e, &locs))
    }

    fn builder(&mut self) -> &mut TopologyBuilder {
        // open() creates the builder with the Machine, which must come first.
        self.b
            .get_or_insert_with(|| TopologyBuilder::new(CpuSet::new()))
    }

    fn nearest_emitted(&self) -> NodeId {
        nearest_emitted(&self.stack)
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
        let parent = nearest_emitted(&self.stack[..top]);
        let cpus = self.stack[top].cpus.clone().unwrap_or_default();
        let id = self.builder().group(parent, cpus);
        self.locs.push(self.stack[top].loc);
        self.stack[top].node = Some(id);
    }
}

/// The innermost object of `frames` that is in the model (the Machine if none is).
fn nearest_emitted(frames: &[Frame]) -> NodeId {
    frames
        .iter()
        .rev()
        .find_map(|f| f.node)
        .unwrap_or(NodeId(0))
}

#[cfg(test)]
mod tests {
    use pmix_core::DeviceTypes;

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
