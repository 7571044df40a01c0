//! What can be wrong with a document or file, and where: [`XmlError`] (a line, the
//! element as it starts, an [`XmlErrorKind`]) and [`FileError`], and the helpers that
//! put positions into words.
//!
//! The importer carries byte offsets, never lines: a line is counted from the start of
//! the text only when an error is built (counting per element would make the import
//! quadratic). Values quoted in messages are cut to 64 characters, so a hostile
//! attribute cannot blow up an error. The emitter's [`Located`] errors are turned into
//! lines and elements here ([`model_error`]), and so are the reader's failures at the
//! end of its input ([`read_error`], [`unclosed`]).

use pmix_core::{PmixError, Status};
use quick_xml::errors::SyntaxError;
use quick_xml::events::{BytesStart, Event};

use crate::emit::{Located, ModelError};

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
    /// The document is larger than [`Limits::max_bytes`](super::Limits::max_bytes).
    #[error("the document has {bytes} bytes, more than the limit of {limit}")]
    TooLarge {
        /// Its size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// Elements nest deeper than [`Limits::max_depth`](super::Limits::max_depth).
    #[error("elements nest deeper than the limit of {limit}")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// An attribute value longer than
    /// [`Limits::max_attr_len`](super::Limits::max_attr_len).
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
    pub(super) fn new(line: u32, element: impl Into<String>, kind: XmlErrorKind) -> Self {
        XmlError {
            line,
            element: element.into(),
            kind,
        }
    }

    /// An error about the whole document (line 0, no element).
    pub(super) fn document(kind: XmlErrorKind) -> Self {
        XmlError::new(0, "", kind)
    }

    /// An error about element `e`, which starts at byte `pos` of `text`.
    pub(super) fn at_element(text: &str, pos: u64, e: &BytesStart<'_>, kind: XmlErrorKind) -> Self {
        XmlError::new(line_of(text, pos), describe(e), kind)
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

/// A value as messages quote it: its first 64 characters.
pub(super) fn cut(s: &str) -> String {
    s.chars().take(64).collect()
}

/// Malformed XML, as quick-xml describes it.
pub(super) fn syntax(e: &quick_xml::Error) -> XmlErrorKind {
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
pub(super) fn line_at(text: &[u8], at: usize) -> u32 {
    let at = at.min(text.len());
    let n = text[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The 1-based line of the byte offset `pos` (a reader position or [`Loc`](crate::emit::Loc)).
pub(super) fn line_of(text: &str, pos: u64) -> u32 {
    line_at(text.as_bytes(), usize::try_from(pos).unwrap_or(usize::MAX))
}

/// How an element starts, for messages: `<object type="PCIDev">`, `<info name="X">`.
pub(super) fn describe(e: &BytesStart<'_>) -> String {
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
        .map(|a| cut(&String::from_utf8_lossy(&a.value)));
    match val {
        Some(v) => format!("<{name} {}=\"{v}\">", String::from_utf8_lossy(key)),
        None => format!("<{name}>"),
    }
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

/// The emitter's error `l` in the document's terms: the line and element of the object
/// at fault (`element`, when the caller has it at hand, else read again at its `Loc`),
/// and the lines of the objects it names.
pub(super) fn model_error(text: &str, l: Located, element: Option<&str>) -> XmlError {
    let msg = match &l.error {
        ModelError::LocalityOutsideParent { cpus, parent, root } => {
            format!(
                "PCI locality cpuset {cpus} is not within the cpus {parent} of the object that {} on line {} hangs under",
                element_at(text, *root),
                line_of(text, *root)
            )
        }
        ModelError::NoMachine => {
            return XmlError::document(XmlErrorKind::Model(l.error.to_string()));
        }
        other => other
            .message_naming_first(|first| format!("the object on line {}", line_of(text, first))),
    };
    let element = match element {
        Some(e) => e.to_owned(),
        None => element_at(text, l.loc),
    };
    XmlError::new(line_of(text, l.loc), element, XmlErrorKind::Model(msg))
}

/// The error for a document whose input ends with elements still open, `open` being
/// where each starts (outermost first, not empty).
pub(super) fn unclosed(text: &str, open: &[u64]) -> XmlError {
    let innermost = open.last().copied().unwrap_or(0);
    let ends = format!(
        "before {} from line {} is closed ({})",
        element_at(text, innermost),
        line_of(text, innermost),
        still_open(open.len())
    );
    XmlError::new(
        line_of(text, text.len() as u64),
        "",
        XmlErrorKind::Truncated {
            open: open.len(),
            ends,
        },
    )
}

/// The error for a read that failed at `pos` with `depth` elements open: the input
/// ending inside markup is a truncated document; anything else is malformed XML, at
/// the reader's `error_position`.
pub(super) fn read_error(
    text: &str,
    e: &quick_xml::Error,
    pos: u64,
    depth: usize,
    error_position: u64,
) -> XmlError {
    let rest = usize::try_from(pos)
        .ok()
        .and_then(|p| text.get(p..))
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
    let Some(what) = inside else {
        return XmlError::new(line_of(text, error_position), "", syntax(e));
    };
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
        line_of(text, pos)
    );
    if depth > 0 {
        ends += ", ";
        ends += &still_open(depth);
    }
    XmlError::new(
        line_of(text, text.len() as u64),
        "",
        XmlErrorKind::Truncated { open: depth, ends },
    )
}
