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
//!   their PMIx type (v1/v2 enum or v3 bitmask, docs/design.md §2) and identity infos.
//! - hwloc 3.0's `<pci_locality>` elements may give a PCI tree a narrower locality than
//!   the object it hangs under (below, "PCI localities").
//! - `Misc` objects, distances, memory attributes, CPU kinds and the like are not part
//!   of the model and are skipped.
//! - Anything else is an error that names the element and its line: an unknown element
//!   or object type, an unparsable attribute the model uses, an object where the model
//!   cannot hold it, a PCI address repeated under one host bridge, a repeated OS device
//!   name. A document cut short says it is truncated, where the input ends, and what
//!   was still open (`truncated document: the input ends before <topology> from line 3
//!   is closed (1 element still open)`), never a complaint about its objects.
//!
//! ## hwloc 3.0 documents
//! A 3.0 export (`version="3.0"`) is read like a 2.x one, with `osdev_type` as a bitmask
//! (docs/design.md §2) and with what 3.0 adds. What a 3.0 file may hold was checked against
//! hwloc's own 3.0 importer (`hwloc/topology-xml.c` of the 3.0 development branch,
//! commit 015b20a7: `hwloc_look_xml`, `hwloc__xml_import_object` and the per-element
//! importers), its DTD (`hwloc/hwloc2.dtd` at 02139ddc, shared by 2.x and 3.0, which
//! marks `page_type` as ignored since 3.0), hwloc's 3.0 test exports
//! (`tests/hwloc/xml/cxlmem+dax.v3.xml`; `64intel64-heteromem.xml` of master 3b37b024,
//! here `64intel64-heteromem.v3.xml`, which adds `<memtier>`), and hwloc pull requests
//! #789 and #800 for `<pci_locality>`. Accepted:
//! - directly under `<topology>`, after the root object: `distances2` and
//!   `distances2hetero` (with `indexes`, `u64values` and, since 3.0, `info` children),
//!   `support`, `memattr` (`memattr_value` and `info` children), `cpukind` (`info`
//!   children), the topology's `info`s (`HostName` names the host), `memtier` and
//!   `pci_locality`. All but the infos and `pci_locality` are skipped whole;
//! - in an object: `info`, `page_type`, `userdata` and child `object`s;
//! - new attributes (`id="objN"`, the prog-if byte that ends `pci_type`) are ignored or
//!   read like any other.
//!
//! Any other element is an error naming it and its line (hwloc itself stops reading at
//! an unknown element after the root object and keeps what it read; the importer never
//! half-reads a file), and so is a `<pci_locality>` anywhere but directly under
//! `<topology>`.
//!
//! ## PCI localities
//! **What hwloc does.** When libhwloc attaches a PCI tree, it records a *PCI locality*:
//! the PCI domain and bus range of the tree's top (a host bridge's secondary to
//! subordinate bus, or a PCI object's own bus when bridges are filtered out) and the
//! cpuset the buses are local to, merging consecutive buses with one locality into one
//! range (`hwloc_pcidisc_tree_attach`, `hwloc/pci-common.c`). The tree itself hangs
//! under an object that covers that cpuset: one with exactly that cpuset, else an
//! inserted I/O group, else, when groups are filtered out, the smallest object covering
//! it, the Machine if need be (`hwloc_find_insert_io_parent_by_complete_cpuset`,
//! `hwloc/topology.c`). To place an object by its bus id, hwloc takes the first
//! locality whose domain matches and whose range holds the bus
//! (`hwloc_pci_find_by_busid`). A 2.x export keeps only the tree; a 3.0 export also
//! writes the localities, as `<pci_locality domain="0x0" bus_min="0x2b" bus_max="0x3b"
//! cpuset="0x00000003"/>` after the topology's infos, and 3.0 rebuilds them from each
//! top's parent cpuset when it reads a 2.x document (PR #800). Its DTD requires
//! `domain`, `bus_min` and `bus_max` (PR #789).
//!
//! **What the importer does with them**, in this order:
//! 1. The tops of PCI trees are host bridges, and PCI bridges or functions hanging
//!    directly under a processor object. A host bridge is looked up by the domain and
//!    secondary bus of its `bridge_pci="DDDD:[SS-EE]"` (without one, by its first PCI
//!    child's address), a PCI object by its own address.
//! 2. The first `<pci_locality>` in document order whose `domain` is the top's and whose
//!    `bus_min..=bus_max` holds its bus applies; without one, the object the tree hangs
//!    under decides, as in a 2.x document.
//! 3. Its cpuset is restricted to the machine's cpus (hwloc's complete sets may name
//!    offline or disallowed PUs). If nothing is left, it is ignored (hwloc attaches a
//!    tree with no usable locality to the root). If it equals the cpuset of the object
//!    the tree hangs under, nothing changes: that is what hwloc writes whenever an
//!    object had exactly the locality.
//! 4. Otherwise it must lie within that object's cpuset, since hwloc hangs a tree under
//!    an object covering its locality, and it becomes the locality of the top and of
//!    everything below it (pmix-core's `TopologyBuilder::set_locality`), so of the
//!    devices' distances (docs/design.md §3): a host bridge under the Machine whose buses a
//!    locality gives one package's cpus is local to that package. A cpuset outside the
//!    object's contradicts the tree: an error naming the `<pci_locality>` line and the
//!    line of the host bridge or PCI object.
//!
//! `domain`, `bus_min`, `bus_max` (hex with `0x`, as hwloc writes them, or decimal) and
//! `cpuset` are required; a range with `bus_min` above `bus_max` is refused. Localities
//! apply whatever version a document declares. The hwloc sources we could consult
//! predate the 3.0 `<pci_locality>` importer itself: rules 1 and 2 follow the runtime
//! list the element serialises, rules 3 and 4 are how the importer reconciles it with
//! the tree, so a hwloc 3.0 release should be checked against them (`tests/v3.rs` pins
//! each).
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
//!   objects. A machine without NUMA information is one NUMA domain either way (docs/design.md
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
