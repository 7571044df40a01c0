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
//!   2 memory, 4 gpu, 8 coproc, 16 network, 32 openfabrics, 64 dma) mapped by DESIGN §2's
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

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use pmix_core::{CpuSet, DeviceTypes, OsDeviceSpec, PciAddr, PmixError, Status, Topology};
use quick_xml::errors::SyntaxError;
use quick_xml::events::{BytesStart, Event};

use crate::emit::{
    Class, Emitter, Located, ModelError, ObjInfo, PciLocality, osdev_type_v2, osdev_type_v3,
};

/// Bounds on what the importer accepts, so hostile input costs bounded time and memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest document, in bytes (default 256 MiB; hwloc exports of the largest
    /// machines are a few MiB).
    pub max_bytes: usize,
    /// The deepest element nesting (default 256; real exports stay below 40).
    pub max_depth: usize,
    /// The longest attribute value, in bytes (default 1 MiB: a cpuset of
    /// [`CpuSet::MAX_PUS`] PUs is 360 KiB as an hwloc mask).
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

/// Why a document could not be imported: what was wrong, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.display())]
pub struct XmlError {
    line: u32,
    element: String,
    kind: XmlErrorKind,
}

/// What was wrong with a document.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum XmlErrorKind {
    /// The document is not well-formed XML.
    #[error("malformed XML: {0}")]
    Syntax(String),
    /// The document ends before it is complete, as a file cut short does: inside a tag,
    /// comment or declaration, before its `<topology>` element, or with elements still
    /// open (the root object closed but `</topology>` missing included).
    #[error("truncated document: the input ends {ends}")]
    Truncated {
        /// How many elements were still open.
        open: usize,
        /// Where the input ends, in words: inside what, or before what closes, with the
        /// lines where those start.
        ends: String,
    },
    /// The bytes are not UTF-8.
    #[error("the document is not UTF-8")]
    NotUtf8,
    /// A NUL byte, which XML does not allow anywhere.
    #[error("a NUL byte (XML does not allow it)")]
    NulByte,
    /// The document is larger than [`Limits::max_bytes`].
    #[error("the document has {bytes} bytes, more than the limit of {limit}")]
    TooLarge {
        /// Its size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// Elements nest deeper than [`Limits::max_depth`].
    #[error("elements nest deeper than the limit of {limit}")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// An attribute value longer than [`Limits::max_attr_len`].
    #[error("attribute {name} has {len} bytes, more than the limit of {limit}")]
    AttributeTooLong {
        /// The attribute.
        name: String,
        /// Its length.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// The root element is not `<topology>`, or another root follows it.
    #[error("the document element must be one <topology>")]
    NotATopology,
    /// A `version` this importer does not know.
    #[error("unsupported hwloc XML version {0:?} (1.x, 2.x and 3.x are supported)")]
    UnsupportedVersion(String),
    /// An element hwloc does not write.
    #[error("unknown element <{0}>")]
    UnknownElement(String),
    /// An element hwloc writes, somewhere hwloc does not put it.
    #[error("<{element}> belongs directly under <{parent}>")]
    MisplacedElement {
        /// The element.
        element: &'static str,
        /// Where it belongs.
        parent: &'static str,
    },
    /// An object type hwloc does not have (or this importer cannot hold).
    #[error("unknown object type {0:?}")]
    UnknownObjectType(String),
    /// hwloc v1's multi-machine `System` root.
    #[error(
        "a System object (hwloc v1 multi-machine topology) is not supported: import one machine at a time"
    )]
    System,
    /// A required attribute is missing.
    #[error("missing attribute {0}")]
    MissingAttribute(&'static str),
    /// An attribute that does not parse.
    #[error("attribute {name}={value:?}: {reason}")]
    BadAttribute {
        /// The attribute.
        name: &'static str,
        /// Its value (cut to 64 bytes).
        value: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The objects do not fit the topology model (misplaced object, duplicate PCI
    /// address or OS device name, cpus outside the machine, …).
    #[error("{0}")]
    Model(String),
}

impl XmlError {
    fn new(line: u32, element: impl Into<String>, kind: XmlErrorKind) -> Self {
        XmlError {
            line,
            element: element.into(),
            kind,
        }
    }

    /// The 1-based line of the element at fault (0 when the problem is the whole
    /// document, such as its size).
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The element at fault as it starts in the document (`<object type="PCIDev">`), or
    /// an empty string.
    pub fn element(&self) -> &str {
        &self.element
    }

    /// What was wrong.
    pub fn kind(&self) -> &XmlErrorKind {
        &self.kind
    }

    fn display(&self) -> String {
        match (self.line, self.element.is_empty()) {
            (0, _) => format!("hwloc XML: {}", self.kind),
            (l, true) => format!("hwloc XML line {l}: {}", self.kind),
            (l, false) => format!("hwloc XML line {l}: {}: {}", self.element, self.kind),
        }
    }
}

impl PmixError for XmlError {
    /// A document that cannot be imported is bad input: `PMIX_ERR_BAD_PARAM`.
    fn status(&self) -> Status {
        Status::ERR_BAD_PARAM
    }
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
            return Err(XmlError::new(
                0,
                "",
                XmlErrorKind::TooLarge {
                    bytes: xml.len(),
                    limit: self.limits.max_bytes,
                },
            ));
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
                error: XmlError::new(
                    0,
                    "",
                    XmlErrorKind::TooLarge {
                        bytes,
                        limit: self.limits.max_bytes,
                    },
                ),
            });
        }
        let bytes = std::fs::read(path).map_err(io)?;
        self.import_bytes(&bytes).map_err(|error| FileError::Xml {
            path: path.display().to_string(),
            error,
        })
    }
}

/// Why a file could not be imported.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The file could not be read.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        error: std::sync::Arc<std::io::Error>,
    },
    /// The file was read but is not an importable hwloc XML document.
    #[error("{path}: {error}")]
    Xml {
        /// The file.
        path: String,
        /// What was wrong, and where.
        error: XmlError,
    },
}

impl PmixError for FileError {
    /// A missing file is `PMIX_ERR_NOT_FOUND`; another read error `PMIX_ERROR`; a bad
    /// document `PMIX_ERR_BAD_PARAM`.
    fn status(&self) -> Status {
        match self {
            FileError::Io { error, .. } if error.kind() == std::io::ErrorKind::NotFound => {
                Status::ERR_NOT_FOUND
            }
            FileError::Io { .. } => Status::ERROR,
            FileError::Xml { error, .. } => error.status(),
        }
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
                let line = line_at(xml.as_bytes(), pos as usize);
                if e.name().as_ref() != b"topology" {
                    return Err(XmlError::new(
                        line,
                        describe(&e),
                        XmlErrorKind::NotATopology,
                    ));
                }
                return topology_format(&e, xml, pos, &Limits::default());
            }
            Ok(Event::Eof) => return Err(XmlError::new(0, "", XmlErrorKind::NotATopology)),
            Ok(_) => {}
            Err(e) => {
                return Err(XmlError::new(
                    line_at(xml.as_bytes(), pos as usize),
                    "",
                    syntax(&e),
                ));
            }
        }
    }
}

fn syntax(e: &quick_xml::Error) -> XmlErrorKind {
    XmlErrorKind::Syntax(e.to_string())
}

/// "N elements still open", singular for one.
fn still_open(n: usize) -> String {
    match n {
        1 => "1 element still open".to_owned(),
        n => format!("{n} elements still open"),
    }
}

/// The 1-based line of byte `at`.
fn line_at(text: &[u8], at: usize) -> u32 {
    let at = at.min(text.len());
    let n = text[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// How an element starts, for messages: `<object type="PCIDev">`, `<info name="X">`.
fn describe(e: &BytesStart<'_>) -> String {
    let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    let key: &[u8] = match e.name().as_ref() {
        b"object" => b"type",
        b"info" => b"name",
        _ => return format!("<{name}>"),
    };
    let val = e
        .attributes()
        .with_checks(false)
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .map(|a| {
            String::from_utf8_lossy(&a.value)
                .chars()
                .take(64)
                .collect::<String>()
        });
    match val {
        Some(v) => format!("<{name} {}=\"{v}\">", String::from_utf8_lossy(key)),
        None => format!("<{name}>"),
    }
}

fn topology_format(
    e: &BytesStart<'_>,
    text: &str,
    pos: u64,
    limits: &Limits,
) -> Result<Format, XmlError> {
    let attrs = Attrs::read(e, text, pos, limits)?;
    match attrs.get("version") {
        None => Ok(Format::V1),
        Some(v) => match v.split('.').next() {
            Some("1") => Ok(Format::V1),
            Some("2") => Ok(Format::V2),
            Some("3") => Ok(Format::V3),
            _ => Err(attrs.err(XmlErrorKind::UnsupportedVersion(
                v.chars().take(64).collect(),
            ))),
        },
    }
}

/// Elements hwloc writes that carry nothing the model needs: skipped with their content.
const SKIPPED: &[&[u8]] = &[
    b"page_type",
    b"distances",
    b"latency",
    b"distances2",
    b"distances2hetero",
    b"indexes",
    b"u64values",
    b"memattr",
    b"memattr_value",
    b"cpukind",
    b"support",
    b"userdata",
    b"memtier",
];

/// The attributes of one element, unescaped. Where the element is (its line, how it
/// starts) is worked out only for an error: counting lines per element would make the
/// import quadratic.
struct Attrs<'a> {
    pairs: Vec<(&'a [u8], Cow<'a, str>)>,
    start: &'a BytesStart<'a>,
    text: &'a str,
    pos: u64,
}

impl<'a> Attrs<'a> {
    fn read(
        e: &'a BytesStart<'a>,
        text: &'a str,
        pos: u64,
        limits: &Limits,
    ) -> Result<Self, XmlError> {
        let mut pairs = Vec::with_capacity(8);
        let err = |kind| XmlError::new(line_at(text.as_bytes(), pos as usize), describe(e), kind);
        for a in e.attributes().with_checks(true) {
            let a = a.map_err(|x| err(XmlErrorKind::Syntax(x.to_string())))?;
            if a.value.len() > limits.max_attr_len {
                return Err(err(XmlErrorKind::AttributeTooLong {
                    name: String::from_utf8_lossy(a.key.as_ref())
                        .chars()
                        .take(64)
                        .collect(),
                    len: a.value.len(),
                    limit: limits.max_attr_len,
                }));
            }
            let key = a.key.into_inner();
            let value = a.unescape_value().map_err(|x| err(syntax(&x)))?;
            if value.contains('\0') {
                return Err(err(XmlErrorKind::NulByte));
            }
            pairs.push((key, value));
        }
        Ok(Attrs {
            pairs,
            start: e,
            text,
            pos,
        })
    }

    fn line(&self) -> u32 {
        line_at(
            self.text.as_bytes(),
            usize::try_from(self.pos).unwrap_or(usize::MAX),
        )
    }

    fn element(&self) -> String {
        describe(self.start)
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| *k == key.as_bytes())
            .map(|(_, v)| v.as_ref())
    }

    fn err(&self, kind: XmlErrorKind) -> XmlError {
        XmlError::new(self.line(), self.element(), kind)
    }

    fn required(&self, key: &'static str) -> Result<&str, XmlError> {
        self.get(key)
            .ok_or_else(|| self.err(XmlErrorKind::MissingAttribute(key)))
    }

    fn bad(&self, name: &'static str, value: &str, reason: impl fmt::Display) -> XmlError {
        self.err(XmlErrorKind::BadAttribute {
            name,
            value: value.chars().take(64).collect(),
            reason: reason.to_string(),
        })
    }

    fn cpuset(&self, key: &'static str) -> Result<Option<CpuSet>, XmlError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => CpuSet::parse_hex_mask(v)
                .map(Some)
                .map_err(|e| self.bad(key, v, e)),
        }
    }

    fn pci_addr(&self) -> Result<PciAddr, XmlError> {
        let v = self.required("pci_busid")?;
        v.parse::<PciAddr>()
            .map_err(|e| self.bad("pci_busid", v, e))
    }

    /// A number no larger than `max`, written as hwloc does (`0x2b`) or in decimal.
    fn number(&self, key: &'static str, max: u64) -> Result<u64, XmlError> {
        let v = self.required(key)?;
        let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
            Some(hex) if !hex.is_empty() && hex.len() <= 16 => u64::from_str_radix(hex, 16).ok(),
            Some(_) => None,
            None if !v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit()) => {
                v.parse().ok()
            }
            None => None,
        };
        match parsed {
            Some(n) if n <= max => Ok(n),
            Some(_) => Err(self.bad(key, v, format_args!("more than {max:#x}"))),
            None => Err(self.bad(
                key,
                v,
                "expected a number, in hex with 0x (as hwloc writes it) or in decimal",
            )),
        }
    }

    /// A host bridge's domain and secondary bus from `bridge_pci="DDDD:[SS-EE]"`, if
    /// present.
    fn bridge_bus(&self) -> Result<Option<(u32, u8)>, XmlError> {
        let Some(v) = self.get("bridge_pci") else {
            return Ok(None);
        };
        let bad = || {
            self.bad(
                "bridge_pci",
                v,
                "expected \"DDDD:[SS-EE]\" (domain and bus range in hex)",
            )
        };
        let (domain, range) = v.split_once(':').ok_or_else(bad)?;
        let (first, last) = range
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .and_then(|r| r.split_once('-'))
            .ok_or_else(bad)?;
        let hex = |s: &str, n: usize| {
            if s.is_empty() || s.len() > n || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
                None
            } else {
                u32::from_str_radix(s, 16).ok()
            }
        };
        let domain = hex(domain, 8).ok_or_else(bad)?;
        let first = hex(first, 2).ok_or_else(bad)?;
        hex(last, 2).ok_or_else(bad)?;
        Ok(Some((domain, u8::try_from(first).map_err(|_| bad())?)))
    }

    /// The class from `pci_type="CCCC [VVVV:DDDD] [SSSS:SSSS] RR"`.
    fn pci_class(&self) -> Result<Option<u16>, XmlError> {
        let Some(v) = self.get("pci_type") else {
            return Ok(None);
        };
        let bad = || {
            self.bad(
                "pci_type",
                v,
                "expected \"CCCC [VVVV:DDDD] …\" (class, vendor and device in hex)",
            )
        };
        let mut words = v.split(' ');
        let class = words.next().filter(|c| is_hex(c, 4)).ok_or_else(bad)?;
        let ids = words.next().ok_or_else(bad)?;
        let b = ids.as_bytes();
        let ok = b.len() == 11
            && b[0] == b'['
            && b[5] == b':'
            && b[10] == b']'
            && b[1..5].iter().chain(&b[6..10]).all(u8::is_ascii_hexdigit);
        if !ok {
            return Err(bad());
        }
        u16::from_str_radix(class, 16).map(Some).map_err(|_| bad())
    }
}

fn is_hex(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit())
}

struct Parser<'a> {
    text: &'a str,
    limits: Limits,
    reader: quick_xml::Reader<&'a [u8]>,
    emitter: Emitter,
    format: Format,
    /// Open elements, all kinds.
    depth: usize,
    /// Where each open element starts (byte offsets), outermost first, for the message
    /// of a truncated document.
    open: Vec<u64>,
    /// The open elements that are `<object>`s, as depths: when one closes, the emitter
    /// closes its object.
    object_depths: Vec<usize>,
    /// Inside a skipped element: the depth at which it opened.
    skip_from: Option<usize>,
    seen_root: bool,
    /// The `<topology>` element has closed.
    done: bool,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, limits: Limits) -> Self {
        let mut reader = quick_xml::Reader::from_str(text);
        let config = reader.config_mut();
        config.check_end_names = true;
        config.expand_empty_elements = false;
        config.trim_text(false);
        Parser {
            text,
            limits,
            reader,
            emitter: Emitter::new(),
            format: Format::V2,
            depth: 0,
            open: Vec::new(),
            object_depths: Vec::new(),
            skip_from: None,
            seen_root: false,
            done: false,
        }
    }

    fn line(&self, pos: u64) -> u32 {
        line_at(
            self.text.as_bytes(),
            usize::try_from(pos).unwrap_or(usize::MAX),
        )
    }

    fn run(mut self) -> Result<Topology, XmlError> {
        loop {
            let pos = self.reader.buffer_position();
            let event = match self.reader.read_event() {
                Ok(ev) => ev,
                Err(e) => return Err(self.read_error(&e, pos)),
            };
            match event {
                Event::Start(e) => self.start(&e, pos, false)?,
                Event::Empty(e) => self.start(&e, pos, true)?,
                Event::End(_) => self.end(),
                Event::Eof => break,
                Event::GeneralRef(r) => {
                    // Character references and the five predefined entities are fine
                    // (and text carries nothing anyway); the DTD declares no others.
                    let name: &[u8] = &r;
                    if !name.starts_with(b"#")
                        && !matches!(name, b"lt" | b"gt" | b"amp" | b"apos" | b"quot")
                    {
                        let name = String::from_utf8_lossy(name)
                            .chars()
                            .take(64)
                            .collect::<String>();
                        return Err(XmlError::new(
                            self.line(pos),
                            "",
                            XmlErrorKind::Syntax(format!("undeclared entity &{name};")),
                        ));
                    }
                }
                // Text (hwloc writes only whitespace and user data), comments, the
                // declaration, the DOCTYPE and processing instructions carry nothing.
                Event::Text(_)
                | Event::CData(_)
                | Event::Comment(_)
                | Event::Decl(_)
                | Event::PI(_)
                | Event::DocType(_) => {}
            }
        }
        let end = self.line(self.text.len() as u64);
        if let Some(&innermost) = self.open.last() {
            let ends = format!(
                "before {} from line {} is closed ({})",
                element_at(self.text, innermost),
                self.line(innermost),
                still_open(self.depth)
            );
            let open = self.depth;
            return Err(XmlError::new(
                end,
                "",
                XmlErrorKind::Truncated { open, ends },
            ));
        }
        if !self.seen_root {
            if self.text.trim().is_empty() {
                return Err(XmlError::new(0, "", XmlErrorKind::NotATopology));
            }
            // A declaration, DOCTYPE or comment, and nothing after it.
            let ends = "before its <topology> element starts".to_owned();
            return Err(XmlError::new(
                end,
                "",
                XmlErrorKind::Truncated { open: 0, ends },
            ));
        }
        let text = self.text;
        self.emitter
            .finish()
            .map_err(|l| model_error(text, l, None))
    }

    fn start(&mut self, e: &BytesStart<'_>, pos: u64, empty: bool) -> Result<(), XmlError> {
        if self.depth >= self.limits.max_depth {
            return Err(XmlError::new(
                self.line(pos),
                describe(e),
                XmlErrorKind::TooDeep {
                    limit: self.limits.max_depth,
                },
            ));
        }
        self.depth += 1;
        self.open.push(pos);
        let result = self.element(e, pos);
        if empty {
            self.end();
        }
        result
    }

    fn element(&mut self, e: &BytesStart<'_>, pos: u64) -> Result<(), XmlError> {
        if self.skip_from.is_some() {
            return Ok(());
        }
        let name = e.name();
        let name = name.as_ref();
        if self.depth == 1 {
            if name != b"topology" || self.seen_root || self.done {
                return Err(XmlError::new(
                    self.line(pos),
                    describe(e),
                    XmlErrorKind::NotATopology,
                ));
            }
            self.seen_root = true;
            self.format = topology_format(e, self.text, pos, &self.limits)?;
            return Ok(());
        }
        match name {
            b"object" => self.object(e, pos),
            b"info" => {
                let a = Attrs::read(e, self.text, pos, &self.limits)?;
                let key = a.required("name")?;
                let value = a.get("value").unwrap_or("");
                // An info directly under <topology> belongs to the topology (v3); one
                // inside a skipped element was never seen; others belong to the
                // innermost object.
                if self.object_depths.last() == Some(&(self.depth - 1)) || self.depth == 2 {
                    self.emitter.info(key, value);
                }
                // Its content, if any, is not hwloc's: skip it.
                self.skip_from = Some(self.depth);
                Ok(())
            }
            b"pci_locality" => {
                if self.depth != 2 {
                    return Err(XmlError::new(
                        self.line(pos),
                        describe(e),
                        XmlErrorKind::MisplacedElement {
                            element: "pci_locality",
                            parent: "topology",
                        },
                    ));
                }
                let a = Attrs::read(e, self.text, pos, &self.limits)?;
                let domain = a.number("domain", u64::from(u32::MAX))?;
                let bus_min = a.number("bus_min", 0xff)?;
                let bus_max = a.number("bus_max", 0xff)?;
                if bus_min > bus_max {
                    let v = a.required("bus_max")?;
                    return Err(a.bad("bus_max", v, "below bus_min"));
                }
                let cpus = a
                    .cpuset("cpuset")?
                    .ok_or_else(|| a.err(XmlErrorKind::MissingAttribute("cpuset")))?;
                self.emitter.pci_locality(PciLocality {
                    domain: u32::try_from(domain).unwrap_or(u32::MAX),
                    bus_min: u8::try_from(bus_min).unwrap_or(u8::MAX),
                    bus_max: u8::try_from(bus_max).unwrap_or(u8::MAX),
                    cpus,
                    loc: pos,
                });
                // Its content, if any, is not hwloc's: skip it.
                self.skip_from = Some(self.depth);
                Ok(())
            }
            n if SKIPPED.contains(&n) => {
                self.skip_from = Some(self.depth);
                Ok(())
            }
            _ => Err(XmlError::new(
                self.line(pos),
                describe(e),
                XmlErrorKind::UnknownElement(
                    String::from_utf8_lossy(name).chars().take(64).collect(),
                ),
            )),
        }
    }

    fn end(&mut self) {
        if self.skip_from == Some(self.depth) {
            self.skip_from = None;
        } else if self.skip_from.is_none() && self.object_depths.last() == Some(&self.depth) {
            self.object_depths.pop();
            self.emitter.close();
        }
        if self.depth == 1 {
            self.done = true;
        }
        self.depth = self.depth.saturating_sub(1);
        self.open.pop();
    }

    /// The error for a read that failed at `pos`: the input ending inside markup is a
    /// truncated document; anything else is malformed XML.
    fn read_error(&self, e: &quick_xml::Error, pos: u64) -> XmlError {
        let rest = usize::try_from(pos)
            .ok()
            .and_then(|p| self.text.get(p..))
            .unwrap_or("");
        let inside = match e {
            quick_xml::Error::Syntax(s) => match s {
                SyntaxError::UnclosedTag => Some("a tag"),
                SyntaxError::UnclosedComment => Some("a comment"),
                SyntaxError::UnclosedPIOrXmlDecl => {
                    Some("the XML declaration or a processing instruction")
                }
                SyntaxError::UnclosedDoctype => Some("the DOCTYPE declaration"),
                SyntaxError::UnclosedCData => Some("a CDATA section"),
                // `<!` and too little after it to say what it opens.
                SyntaxError::InvalidBangMarkup if !rest.contains('>') => Some("markup"),
                SyntaxError::InvalidBangMarkup => None,
            },
            _ => None,
        };
        match inside {
            Some(what) => {
                let snippet: String = rest
                    .chars()
                    .take(48)
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                let more = if rest.chars().nth(48).is_some() {
                    "…"
                } else {
                    ""
                };
                let mut ends = format!(
                    "inside {what} that starts on line {} (`{snippet}{more}`)",
                    self.line(pos)
                );
                if self.depth > 0 {
                    ends += ", ";
                    ends += &still_open(self.depth);
                }
                XmlError::new(
                    self.line(self.text.len() as u64),
                    "",
                    XmlErrorKind::Truncated {
                        open: self.depth,
                        ends,
                    },
                )
            }
            None => {
                let at = self.reader.error_position();
                XmlError::new(self.line(at), "", syntax(e))
            }
        }
    }

    fn object(&mut self, e: &BytesStart<'_>, pos: u64) -> Result<(), XmlError> {
        let a = Attrs::read(e, self.text, pos, &self.limits)?;
        let ty = a.required("type")?;
        let mut info = ObjInfo::default();
        let class = match ty {
            "Machine" => Class::Machine,
            "Package" | "Socket" => Class::Package,
            "NUMANode" => Class::Numa,
            "Group" => Class::Group,
            "Die" | "Core" | "PU" | "Cache" | "L1Cache" | "L2Cache" | "L3Cache" | "L4Cache"
            | "L5Cache" | "L1iCache" | "L2iCache" | "L3iCache" | "MemCache" => Class::OtherCpu,
            "Misc" => Class::Misc,
            "Bridge" => {
                let bt = a.required("bridge_type")?;
                match bt {
                    "0-1" => Class::HostBridge,
                    "1-1" => Class::PciBridge,
                    _ => {
                        return Err(a.bad(
                            "bridge_type",
                            bt,
                            "expected \"0-1\" (host bridge) or \"1-1\" (PCI bridge)",
                        ));
                    }
                }
            }
            "PCIDev" => Class::PciFunction,
            "OSDev" => Class::OsDevice,
            "System" => return Err(a.err(XmlErrorKind::System)),
            other => {
                return Err(a.err(XmlErrorKind::UnknownObjectType(
                    other.chars().take(64).collect(),
                )));
            }
        };
        match class {
            Class::PciBridge | Class::PciFunction => {
                info.pci = Some(a.pci_addr()?);
                info.class = a.pci_class()?;
            }
            Class::OsDevice => {
                let name = a.required("name")?;
                let t = a.required("osdev_type")?;
                let v: u32 = t
                    .parse()
                    .map_err(|_| a.bad("osdev_type", t, "not a decimal integer"))?;
                let kind: Option<DeviceTypes> = match self.format {
                    Format::V3 => osdev_type_v3(v),
                    Format::V1 | Format::V2 => osdev_type_v2(v),
                };
                let kind = kind.ok_or_else(|| {
                    let expected = match self.format {
                        Format::V3 => "not a known hwloc 3 type bitmask (bits 1 to 64)",
                        _ => "not a known hwloc type (0 to 5)",
                    };
                    a.bad("osdev_type", t, expected)
                })?;
                info.spec = Some(OsDeviceSpec {
                    name: name.to_owned(),
                    kind,
                    ..Default::default()
                });
            }
            Class::HostBridge => info.bus = a.bridge_bus()?,
            _ => info.cpus = a.cpuset("cpuset")?,
        }
        let text = self.text;
        self.emitter
            .open(class, info, pos)
            .map_err(|l| model_error(text, l, Some(&a.element())))?;
        self.object_depths.push(self.depth);
        Ok(())
    }
}

fn model_error(text: &str, l: Located, element: Option<&str>) -> XmlError {
    let bytes = text.as_bytes();
    let line_of = |loc: u64| line_at(bytes, usize::try_from(loc).unwrap_or(usize::MAX));
    let msg = match &l.error {
        ModelError::LocalityOutsideParent { cpus, parent, root } => {
            format!(
                "PCI locality cpuset {cpus} is not within the cpus {parent} of the object that {} on line {} hangs under",
                element_at(text, *root),
                line_of(*root)
            )
        }
        ModelError::NoMachine => {
            return XmlError::new(0, "", XmlErrorKind::Model(l.error.to_string()));
        }
        other => {
            other.message_naming_first(|first| format!("the object on line {}", line_of(first)))
        }
    };
    let element = match element {
        Some(e) => e.to_owned(),
        None => element_at(text, l.loc),
    };
    XmlError::new(line_of(l.loc), element, XmlErrorKind::Model(msg))
}

/// The description of the element starting at byte `loc`, for errors found after it
/// was read.
fn element_at(text: &str, loc: u64) -> String {
    let Some(rest) = usize::try_from(loc).ok().and_then(|l| text.get(l..)) else {
        return String::new();
    };
    let mut r = quick_xml::Reader::from_str(rest);
    match r.read_event() {
        Ok(Event::Start(e) | Event::Empty(e)) => describe(&e),
        _ => String::new(),
    }
}
