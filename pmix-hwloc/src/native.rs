//! The libhwloc backend (feature `native`), through `hwlocality`.
//!
//! [`Hwloc`] loads a topology with libhwloc (this machine, a sysfs tree named by
//! `HWLOC_FSROOT`, an XML file named by `HWLOC_XMLFILE` or given to
//! [`Hwloc::xml_file`]) and walks it depth-first, following hwloc's child lists and
//! parent links itself (no common-ancestor helper on I/O objects), handing every object
//! to the same emitter the XML importer uses. The children of an object are visited in
//! the order hwloc exports them to XML: memory children, normal children, I/O children,
//! Misc children.
//!
//! It needs Debian's `libhwloc-dev`, `libudev-dev` and `pkg-config` (hwloc 2.8 or later).
//! The I/O filter keeps hwloc's "important" objects on a live machine (every I/O object
//! with [`Hwloc::whole_io`]) and every I/O object of an XML file, so a file loads as
//! it was written.
//!
//! Where libhwloc's view differs from the importer's, and why, is listed in the crate
//! documentation.

use std::ffi::CStr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use hwlocality::object::TopologyObject;
use hwlocality::object::attributes::{ObjectAttributes, UpstreamAttributes};
use hwlocality::object::types::{BridgeType, OSDeviceType, ObjectType};
use hwlocality::topology::Topology as HwlocTopology;
use hwlocality::topology::builder::TypeFilter;
use hwlocality::topology::export::xml::XMLExportFlags;
use pmix_core::{CpuSet, DeviceTypes, OsDeviceSpec, PciAddr, PmixError, Status, Topology};

use crate::emit::{Class, Emitter, Located, ObjInfo};
use pmix_core::{SourceError, TopologySource};

/// Why libhwloc could not produce a topology.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NativeError {
    /// libhwloc itself failed (cannot read the XML file, cannot discover the machine).
    #[error("libhwloc: {0}")]
    Hwloc(String),
    /// libhwloc's topology does not fit the model: the object, and what is wrong.
    #[error("libhwloc object {object}: {problem}")]
    Model {
        /// The object (type, PCI address or name, position in the walk).
        object: String,
        /// What is wrong with it.
        problem: String,
    },
}

impl PmixError for NativeError {
    /// `PMIX_ERROR` when libhwloc fails, `PMIX_ERR_BAD_PARAM` when its topology does
    /// not fit the model.
    fn status(&self) -> Status {
        match self {
            NativeError::Hwloc(_) => Status::ERROR,
            NativeError::Model { .. } => Status::ERR_BAD_PARAM,
        }
    }
}

#[derive(Clone, Debug)]
enum Input {
    ThisMachine,
    XmlFile(PathBuf),
}

/// A topology source backed by libhwloc.
#[derive(Clone, Debug)]
pub struct Hwloc {
    input: Input,
    whole_io: bool,
}

impl Hwloc {
    /// This machine, as libhwloc discovers it (or the tree `HWLOC_FSROOT` names, or the
    /// file `HWLOC_XMLFILE` names: libhwloc reads both variables itself).
    pub fn this_machine() -> Self {
        Hwloc {
            input: Input::ThisMachine,
            whole_io: false,
        }
    }

    /// An hwloc XML file, loaded by libhwloc with every I/O object kept.
    pub fn xml_file(path: impl Into<PathBuf>) -> Self {
        Hwloc {
            input: Input::XmlFile(path.into()),
            whole_io: true,
        }
    }

    /// Keep every I/O object (`lstopo --whole-io`) instead of hwloc's important ones.
    pub fn whole_io(mut self, all: bool) -> Self {
        self.whole_io = all;
        self
    }

    /// Loads the topology in libhwloc, and converts it.
    ///
    /// # Errors
    /// [`NativeError::Hwloc`] when libhwloc fails, [`NativeError::Model`] when its
    /// topology does not fit the model (a duplicate PCI address, say).
    pub fn load_topology(&self) -> Result<Topology, NativeError> {
        let topo = self.load_hwloc()?;
        convert(&topo)
    }

    /// Loads the topology in libhwloc and exports it as hwloc XML (the v2 format
    /// libhwloc 2.x writes), for tests and conversions.
    ///
    /// # Errors
    /// [`NativeError::Hwloc`] when libhwloc fails to load or export.
    pub fn export_xml(&self) -> Result<String, NativeError> {
        let topo = self.load_hwloc()?;
        let xml = topo
            .export_xml(XMLExportFlags::empty())
            .map_err(|e| NativeError::Hwloc(format!("export: {e}")))?;
        Ok(xml.as_str().to_owned())
    }

    /// Loads the topology in libhwloc only (what the benchmark compares with).
    ///
    /// # Errors
    /// [`NativeError::Hwloc`] when libhwloc fails.
    pub fn load_hwloc(&self) -> Result<HwlocTopology, NativeError> {
        // hwlocality panics on errno values it does not expect; keep that inside.
        catch_unwind(AssertUnwindSafe(|| self.load_hwloc_inner())).unwrap_or_else(|_| {
            Err(NativeError::Hwloc(
                "hwlocality panicked while loading".into(),
            ))
        })
    }

    fn load_hwloc_inner(&self) -> Result<HwlocTopology, NativeError> {
        let err =
            |what: &str, e: &dyn std::fmt::Display| NativeError::Hwloc(format!("{what}: {e}"));
        let mut b = HwlocTopology::builder();
        if let Input::XmlFile(path) = &self.input {
            b = b
                .from_xml_file(path)
                .map_err(|e| err(&format!("cannot load {}", path.display()), &e))?;
        }
        let filter = if self.whole_io {
            TypeFilter::KeepAll
        } else {
            TypeFilter::KeepImportant
        };
        b = b
            .with_io_type_filter(filter)
            .map_err(|e| err("I/O filter", &e))?;
        b.build().map_err(|e| err("load", &e))
    }
}

impl TopologySource for Hwloc {
    fn describe(&self) -> String {
        match &self.input {
            Input::ThisMachine => "libhwloc (this machine)".to_owned(),
            Input::XmlFile(p) => format!("libhwloc XML file {}", p.display()),
        }
    }

    fn load(&self) -> Result<Topology, SourceError> {
        self.load_topology()
            .map_err(|e| SourceError::from_error(&e))
    }
}

/// Converts a loaded libhwloc topology.
///
/// # Errors
/// [`NativeError::Model`] when it does not fit the model.
pub fn convert(topo: &HwlocTopology) -> Result<Topology, NativeError> {
    let mut walk = Walk {
        emitter: Emitter::new(),
        objects: Vec::new(),
    };
    walk.visit(topo.root_object())?;
    // hwloc 2.x keeps the topology's infos on the root object, but be lenient.
    let Walk { emitter, objects } = walk;
    emitter.finish().map_err(|l| walk_error(&objects, l))
}

struct Walk {
    emitter: Emitter,
    /// A description of every object visited, by walk position (the emitter's `Loc`).
    objects: Vec<String>,
}

fn cstr(s: &CStr) -> String {
    s.to_string_lossy().into_owned()
}

fn walk_error(objects: &[String], l: Located) -> NativeError {
    let name = |loc: u64| {
        objects
            .get(usize::try_from(loc).unwrap_or(usize::MAX))
            .cloned()
            .unwrap_or_default()
    };
    NativeError::Model {
        object: name(l.loc),
        problem: l.error.message_naming_first(name),
    }
}

impl Walk {
    fn visit(&mut self, obj: &TopologyObject) -> Result<(), NativeError> {
        let loc = self.objects.len() as u64;
        let (class, info, label) = classify(obj)?;
        self.objects.push(format!("{label} (#{loc})"));
        let objects = &self.objects;
        self.emitter
            .open(class, info, loc)
            .map_err(|l| walk_error(objects, l))?;
        for i in obj.infos() {
            let (k, v) = (cstr(i.name()), cstr(i.value()));
            self.emitter.info(&k, &v);
        }
        for child in obj
            .memory_children()
            .chain(obj.normal_children())
            .chain(obj.io_children())
        {
            self.visit(child)?;
        }
        for child in obj.misc_children() {
            self.visit(child)?;
        }
        self.emitter.close();
        Ok(())
    }
}

fn cpuset_of(obj: &TopologyObject) -> Option<CpuSet> {
    let set = obj.cpuset()?;
    Some(CpuSet::from_pus(
        set.iter_set()
            .map(|i| u32::try_from(usize::from(i)).unwrap_or(u32::MAX)),
    ))
}

fn pci_of(obj: &TopologyObject) -> Option<(PciAddr, u16)> {
    let pci = match obj.attributes()? {
        ObjectAttributes::PCIDevice(p) => p,
        ObjectAttributes::Bridge(b) => match b.upstream_attributes()? {
            UpstreamAttributes::PCI(p) => p,
        },
        _ => return None,
    };
    let addr = PciAddr::new(
        u32::from(pci.domain()),
        pci.bus_id(),
        pci.bus_device(),
        pci.function(),
    )
    .ok()?;
    Some((addr, pci.class_id()))
}

/// What the emitter needs of a libhwloc object, and a label for messages.
fn classify(obj: &TopologyObject) -> Result<(Class, ObjInfo, String), NativeError> {
    let ty = obj.object_type();
    let mut info = ObjInfo::default();
    let bad = |problem: String| NativeError::Model {
        object: format!("{ty}"),
        problem,
    };
    let class = match ty {
        ObjectType::Machine => Class::Machine,
        ObjectType::Package => Class::Package,
        ObjectType::NUMANode => Class::Numa,
        ObjectType::Group => Class::Group,
        ObjectType::Misc => Class::Misc,
        ObjectType::Bridge => match obj.attributes() {
            Some(ObjectAttributes::Bridge(b)) => match b.upstream_type() {
                BridgeType::Host => Class::HostBridge,
                BridgeType::PCI => Class::PciBridge,
                other => return Err(bad(format!("unknown bridge upstream type {other:?}"))),
            },
            _ => return Err(bad("bridge without bridge attributes".into())),
        },
        ObjectType::PCIDevice => Class::PciFunction,
        ObjectType::OSDevice => Class::OsDevice,
        _ => Class::OtherCpu,
    };
    let mut label = format!("{ty}");
    match class {
        Class::PciBridge | Class::PciFunction => {
            let (addr, pci_class) =
                pci_of(obj).ok_or_else(|| bad("PCI object without a valid PCI address".into()))?;
            info.pci = Some(addr);
            info.class = Some(pci_class);
            label = format!("{ty} {addr}");
        }
        Class::OsDevice => {
            let name = obj
                .name()
                .map(cstr)
                .ok_or_else(|| bad("OS device without a name".into()))?;
            let kind = match obj.attributes() {
                Some(ObjectAttributes::OSDevice(o)) => match o.device_type() {
                    OSDeviceType::Storage => DeviceTypes::BLOCK,
                    OSDeviceType::GPU => DeviceTypes::GPU,
                    OSDeviceType::Network => DeviceTypes::NETWORK,
                    OSDeviceType::OpenFabrics => DeviceTypes::OPENFABRICS,
                    OSDeviceType::DMA => DeviceTypes::DMA,
                    OSDeviceType::CoProcessor => DeviceTypes::COPROC,
                    other => {
                        return Err(bad(format!(
                            "OS device {name:?} has unknown type {other:?}"
                        )));
                    }
                },
                _ => {
                    return Err(bad(format!(
                        "OS device {name:?} without OS device attributes"
                    )));
                }
            };
            label = format!("{ty} {name}");
            info.spec = Some(OsDeviceSpec {
                name,
                kind,
                ..Default::default()
            });
        }
        Class::HostBridge => {}
        _ => info.cpus = cpuset_of(obj),
    }
    Ok((class, info, label))
}
