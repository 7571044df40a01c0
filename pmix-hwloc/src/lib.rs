//! # pmix-hwloc
//!
//! Real machines' topologies for pmix-rs, from hwloc: a pure-Rust importer of hwloc XML
//! exports (the default, no system library) and, with the `native` feature, libhwloc
//! itself through `hwlocality`. Both hand the same objects to one shared emitter, so
//! both build the same [`pmix_core::Topology`] for the same machine; the core then
//! answers distance queries on it.
//!
//! **What it is.** Two backends behind pmix-core's small trait,
//! [`pmix_core::TopologySource`]: [`XmlFile`] and, with `native`, `native::Hwloc`. The
//! runtime's chooser (`pmix::topology::open_source`) picks one by name (`xml:FILE`,
//! `hwloc`), as `pmix-topo --source` does. **What it is not.** It computes no distances
//! (the core does) and does not scan sysfs (`pmix-sysfs` does).
//!
//! ```
//! use pmix_core::{CpuSet, DeviceDistance, Query};
//!
//! let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
//! <topology version="2.0">
//!   <object type="Machine" cpuset="0x0000000f">
//!     <info name="HostName" value="node7"/>
//!     <object type="Package" os_index="0" cpuset="0x00000003">
//!       <object type="NUMANode" os_index="0" cpuset="0x00000003"/>
//!       <object type="Bridge" bridge_type="0-1" depth="0">
//!         <object type="Bridge" bridge_type="1-1" depth="1" pci_busid="0000:00:01.0" pci_type="0604 [8086:3408] [0000:0000] 13">
//!           <object type="PCIDev" pci_busid="0000:04:00.0" pci_type="0200 [8086:10c9] [003c:003f] 01">
//!             <object type="OSDev" name="eth0" osdev_type="2">
//!               <info name="Address" value="78:e7:d1:21:55:30"/>
//!             </object>
//!           </object>
//!         </object>
//!       </object>
//!     </object>
//!     <object type="Package" os_index="1" cpuset="0x0000000c"/>
//!   </object>
//! </topology>"#;
//! let topo = pmix_hwloc::from_str(xml)?;
//! let mut out = [DeviceDistance::EMPTY; 4];
//! let cpu0 = CpuSet::parse_list("0").unwrap();
//! let n = topo.distances(&Query::from_cpuset(&cpu0), &mut out).unwrap();
//! assert_eq!(n, 1);
//! assert_eq!(topo.device(out[0].device).unwrap().uuid(), "ipv4://78:e7:d1:21:55:30");
//! assert_eq!(out[0].mindist, 1); // local (tier 0), one bridge (the root port) deep
//! # Ok::<(), pmix_hwloc::XmlError>(())
//! ```
//!
//! ## How hwloc objects become the model
//! - The `Machine`, `Package` (v1 `Socket`), `NUMANode` and `Group` objects are kept
//!   with their cpusets. Other processor-side objects (caches, cores, dies, PUs,
//!   memory-side caches) are kept, as groups, only when I/O hangs directly under them:
//!   an I/O object's locality is the cpuset of its nearest non-I/O ancestor.
//! - Bridges with `bridge_type="0-1"` are host bridges, `"1-1"` PCI bridges; `PCIDev`
//!   objects are PCI functions with their class; `OSDev` objects are OS devices with
//!   their PMIx type (v1/v2 enum or v3 bitmask, DESIGN §2) and identity infos.
//! - `Misc` objects, distances, memory attributes, CPU kinds and the like are not part
//!   of the model and are skipped.
//! - Anything else is an error that names the element and its line: an unknown element
//!   or object type, an unparsable attribute the model uses, an object where the model
//!   cannot hold it, a PCI address repeated under one host bridge, a repeated OS device
//!   name.
//!
//! ## Limits
//! [`Limits`] bound the document size (256 MiB), element nesting (256) and attribute
//! length (1 MiB); the importer streams, so memory is the document plus the model. A
//! PCI address may appear once per host bridge (pmix-core's rule: real exports repeat
//! one under two host bridges, see below).
//!
//! ## libhwloc (feature `native`)
//! `native::Hwloc` loads a topology with libhwloc (this machine, the sysfs tree
//! `HWLOC_FSROOT` names, an XML file) and walks it itself, parent links and child lists,
//! into the same emitter. It needs Debian's `libhwloc-dev`, `libudev-dev` and
//! `pkg-config`; the default features use no system library.
//!
//! The tests hold the two backends to the same devices, PCI tree, localities and
//! distances on every XML file libhwloc loads, on this machine, and on captured sysfs
//! trees. These are the differences libhwloc itself causes:
//! - **v3 files** (`*.v3.xml`) do not load in libhwloc 2.x, which refuses
//!   `version="3.0"`; the importer reads them.
//! - **NUMA nodes**: libhwloc 2.x always has one, so it adds a NUMA node to a v1 file
//!   that has none (`8em64t-2p2ca2co-nonodesets.v1.xml`); the importer keeps the file's
//!   objects. A machine without NUMA information is one NUMA domain either way (DESIGN
//!   §2), so no device, locality or distance changes.
//! - **PCI domains above 0xffff**: Debian's libhwloc 2.9 has 16-bit PCI domains and
//!   leaves out the functions of wider domains (the captured tree `2pa-pcidomain32bits`
//!   has `10000:00:04.0`, which its export lacks); the importer keeps the domain an XML
//!   file writes, and pmix-sysfs sees such functions.
//! - **Repeated PCI addresses**: libhwloc does not check them at all;
//!   `32em64t-2n8c2t-pci-{normal,whole}io.xml` list `0000:04:00.0` under two host
//!   bridges, which both backends accept (pmix-core refuses a repeat under one host
//!   bridge only).

#![deny(missing_docs)]

mod emit;
#[cfg(feature = "native")]
pub mod native;
pub mod source;
pub mod xml;

pub use source::XmlFile;
pub use xml::{
    FileError, Format, Importer, Limits, XmlError, XmlErrorKind, detect_format, from_path, from_str,
};
