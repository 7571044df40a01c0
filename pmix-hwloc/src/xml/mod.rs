//! The pure-Rust hwloc XML importer.
//!
//! One streaming pass over the document ([`quick_xml`], no DOM): every element is
//! checked as it is read and fed to the shared emitter, so memory is the input plus the
//! model, whatever the nesting. The importer knows hwloc's three formats:
//!
//! - **v1** (no `version` attribute on `<topology>`): `Socket` or `Package`, `Cache`,
//!   NUMA nodes as ordinary parents of packages or cores, I/O under any of them.
//! - **v2** (`version="2.x"`): NUMA nodes are memory children (elements listed first
//!   inside their parent), `L1Cache`…`L5Cache`, `Die`, `MemCache`; `osdev_type` is an
//!   enum (0 block, 1 gpu, 2 network, 3 openfabrics, 4 dma, 5 coproc).
//! - **v3** (`version="3.x"`): as v2, but `osdev_type` is a bitmask (1 storage,
//!   2 memory, 4 gpu, 8 coproc, 16 network, 32 openfabrics, 64 dma) mapped by docs/design.md §2's
//!   precedence, the topology's own `<info>`s (`HostName`) sit under `<topology>`, and
//!   `<memtier>` and `<pci_locality>` may follow them (the crate docs list every
//!   element of a 3.0 export and say how PCI localities apply).
//!
//! What it reads: the root `<object type="Machine">` and its `HostName` info; the
//! `cpuset` of every processor-side object; bridges (`bridge_type` `0-1` host bridge,
//! `1-1` PCI bridge), `pci_busid` and the class in `pci_type` (`"CCCC [VVVV:DDDD] …"`);
//! OS devices' `name`, `osdev_type` and `Address`, `NodeGUID`, `SysImageGUID`,
//! `NVIDIAUUID`/`AMDUUID` infos; host bridges' `bridge_pci` and `<pci_locality>`
//! statements. Distances, memory attributes, CPU kinds, memory tiers, support flags,
//! page types and user data are skipped whole. Attributes it does not use are ignored
//! (hwloc adds new ones over time), but an element or object type it does not know, an
//! attribute it uses that does not parse, or an object placed where the model cannot
//! hold it is an [`XmlError`] naming the element and its line. A document that ends
//! early is [`XmlErrorKind::Truncated`], saying where the input ends and what was
//! still open.
//!
//! This module holds the crate-facing API ([`Importer`], [`Limits`], [`Format`], the
//! free functions); its submodules own the rest: `reader`, the streaming pass and its
//! state machine; `attrs`, attribute access and hwloc's attribute values; `error`,
//! [`XmlError`], [`FileError`] and the positions in their messages.

mod attrs;
mod error;
mod reader;

use std::path::Path;

use pmix_core::Topology;
use quick_xml::events::Event;

pub use error::{FileError, XmlError, XmlErrorKind};

use attrs::Attrs;
use error::{line_at, line_of, syntax};
use reader::Parser;

/// Bounds on what the importer accepts, so hostile input costs bounded time and memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest document, in bytes (default 256 MiB; hwloc exports of the largest
    /// machines are a few MiB).
    pub max_bytes: usize,
    /// The deepest element nesting (default 256; real exports stay below 40).
    pub max_depth: usize,
    /// The longest attribute value, in bytes (default 1 MiB: a cpuset of
    /// [`CpuSet::MAX_PUS`](pmix_core::CpuSet::MAX_PUS) PUs is 360 KiB as an hwloc mask).
    pub max_attr_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 256 << 20,
            max_depth: 256,
            max_attr_len: 1 << 20,
        }
    }
}

/// The hwloc XML format of a document.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Format {
    /// hwloc 1.x (no `version` attribute).
    V1,
    /// hwloc 2.x.
    V2,
    /// hwloc 3.x.
    V3,
}

/// Imports hwloc XML with [`Limits`].
///
/// ```
/// let xml = r#"<topology version="2.0">
///   <object type="Machine" cpuset="0x3">
///     <info name="HostName" value="node1"/>
///     <object type="Package" cpuset="0x3">
///       <object type="Bridge" bridge_type="0-1">
///         <object type="PCIDev" pci_busid="0000:01:00.0" pci_type="0200 [8086:1521] [0000:0000] 01">
///           <object type="OSDev" name="eth0" osdev_type="2"/>
///         </object>
///       </object>
///     </object>
///   </object>
/// </topology>"#;
/// let topo = pmix_hwloc::Importer::new().import_str(xml).unwrap();
/// assert_eq!(topo.devices()[0].uuid(), "net://node1::eth0");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Importer {
    limits: Limits,
}

impl Importer {
    /// An importer with the default [`Limits`].
    pub fn new() -> Self {
        Importer::default()
    }

    /// The same importer with other limits.
    pub fn with_limits(limits: Limits) -> Self {
        Importer { limits }
    }

    /// Imports a document held in a string.
    ///
    /// # Errors
    /// An [`XmlError`] naming the first problem, its element and line.
    pub fn import_str(&self, xml: &str) -> Result<Topology, XmlError> {
        self.import_bytes(xml.as_bytes())
    }

    /// Imports a document from bytes (UTF-8, as hwloc writes it).
    ///
    /// # Errors
    /// An [`XmlError`] naming the first problem, its element and line: bytes that are
    /// not UTF-8, a NUL byte, a document over the limits, malformed XML, or content the
    /// topology model cannot hold.
    pub fn import_bytes(&self, xml: &[u8]) -> Result<Topology, XmlError> {
        if xml.len() > self.limits.max_bytes {
            return Err(self.too_large(xml.len()));
        }
        if let Some(at) = xml.iter().position(|&b| b == 0) {
            return Err(XmlError::new(line_at(xml, at), "", XmlErrorKind::NulByte));
        }
        let text = match std::str::from_utf8(xml) {
            Ok(t) => t,
            Err(e) => {
                return Err(XmlError::new(
                    line_at(xml, e.valid_up_to()),
                    "",
                    XmlErrorKind::NotUtf8,
                ));
            }
        };
        Parser::new(text, self.limits).run()
    }

    /// Reads and imports a file. The file's size is checked against
    /// [`Limits::max_bytes`] before it is read.
    ///
    /// # Errors
    /// [`FileError::Io`] if the file cannot be read, [`FileError::Xml`] if it cannot
    /// be imported.
    pub fn import_file(&self, path: impl AsRef<Path>) -> Result<Topology, FileError> {
        let path = path.as_ref();
        let io = |error| FileError::Io {
            path: path.display().to_string(),
            error: std::sync::Arc::new(error),
        };
        let meta = std::fs::metadata(path).map_err(io)?;
        if meta.len() > self.limits.max_bytes as u64 {
            let bytes = usize::try_from(meta.len()).unwrap_or(usize::MAX);
            return Err(FileError::Xml {
                path: path.display().to_string(),
                error: self.too_large(bytes),
            });
        }
        let bytes = std::fs::read(path).map_err(io)?;
        self.import_bytes(&bytes).map_err(|error| FileError::Xml {
            path: path.display().to_string(),
            error,
        })
    }

    /// A document of `bytes` bytes is over [`Limits::max_bytes`].
    fn too_large(&self, bytes: usize) -> XmlError {
        XmlError::document(XmlErrorKind::TooLarge {
            bytes,
            limit: self.limits.max_bytes,
        })
    }
}

/// Imports a document held in a string, with the default [`Limits`].
///
/// # Errors
/// See [`Importer::import_bytes`].
pub fn from_str(xml: &str) -> Result<Topology, XmlError> {
    Importer::new().import_str(xml)
}

/// Reads and imports a file, with the default [`Limits`].
///
/// # Errors
/// See [`Importer::import_file`].
pub fn from_path(path: impl AsRef<Path>) -> Result<Topology, FileError> {
    Importer::new().import_file(path)
}

/// The hwloc XML format a document declares, read from its `<topology>` element only.
///
/// # Errors
/// [`XmlError`] if the document does not start with a `<topology>` element, or
/// declares an unknown version.
pub fn detect_format(xml: &str) -> Result<Format, XmlError> {
    let mut r = quick_xml::Reader::from_str(xml);
    loop {
        let pos = r.buffer_position();
        match r.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) => {
                if e.name().as_ref() != b"topology" {
                    return Err(XmlError::at_element(
                        xml,
                        pos,
                        &e,
                        XmlErrorKind::NotATopology,
                    ));
                }
                return Attrs::read(&e, xml, pos, &Limits::default())?.format();
            }
            Ok(Event::Eof) => return Err(XmlError::document(XmlErrorKind::NotATopology)),
            Ok(_) => {}
            Err(e) => return Err(XmlError::new(line_of(xml, pos), "", syntax(&e))),
        }
    }
}
