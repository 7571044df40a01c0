//! The streaming pass: quick-xml's events driven through a small state machine that
//! knows where each hwloc element may stand, feeding objects, infos and PCI localities
//! to the emitter as they are read.
//!
//! The state is the nesting (depth, where each open element starts, which open elements
//! are objects), whether the reader is inside a skipped element, and whether the
//! `<topology>` element has been seen and closed. Elements are checked against
//! [`Limits::max_depth`] as they open; [`SKIPPED`] elements are passed over with their
//! content; anything hwloc does not write is an error naming it.

use pmix_core::Topology;
use quick_xml::events::{BytesStart, Event};

use super::attrs::Attrs;
use super::error::{cut, line_of, model_error, read_error, unclosed};
use super::{Format, Limits, XmlError, XmlErrorKind};
use crate::emit::Emitter;

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

pub(super) struct Parser<'a> {
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
    pub(super) fn new(text: &'a str, limits: Limits) -> Self {
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

    /// An error about element `e`, which starts at `pos`.
    fn at(&self, e: &BytesStart<'_>, pos: u64, kind: XmlErrorKind) -> XmlError {
        XmlError::at_element(self.text, pos, e, kind)
    }

    /// Reads the whole document into a topology.
    pub(super) fn run(mut self) -> Result<Topology, XmlError> {
        loop {
            let pos = self.reader.buffer_position();
            let event = match self.reader.read_event() {
                Ok(ev) => ev,
                Err(e) => {
                    let at = self.reader.error_position();
                    return Err(read_error(self.text, &e, pos, self.depth, at));
                }
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
                        let name = cut(&String::from_utf8_lossy(name));
                        return Err(XmlError::new(
                            line_of(self.text, pos),
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
        if !self.open.is_empty() {
            return Err(unclosed(self.text, &self.open));
        }
        if !self.seen_root {
            if self.text.trim().is_empty() {
                return Err(XmlError::document(XmlErrorKind::NotATopology));
            }
            // A declaration, DOCTYPE or comment, and nothing after it.
            let ends = "before its <topology> element starts".to_owned();
            return Err(XmlError::new(
                line_of(self.text, self.text.len() as u64),
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
            let limit = self.limits.max_depth;
            return Err(self.at(e, pos, XmlErrorKind::TooDeep { limit }));
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
                return Err(self.at(e, pos, XmlErrorKind::NotATopology));
            }
            self.seen_root = true;
            self.format = Attrs::read(e, self.text, pos, &self.limits)?.format()?;
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
                    let kind = XmlErrorKind::MisplacedElement {
                        element: "pci_locality",
                        parent: "topology",
                    };
                    return Err(self.at(e, pos, kind));
                }
                let a = Attrs::read(e, self.text, pos, &self.limits)?;
                self.emitter.pci_locality(a.pci_locality(pos)?);
                // Its content, if any, is not hwloc's: skip it.
                self.skip_from = Some(self.depth);
                Ok(())
            }
            n if SKIPPED.contains(&n) => {
                self.skip_from = Some(self.depth);
                Ok(())
            }
            _ => {
                let kind = XmlErrorKind::UnknownElement(cut(&String::from_utf8_lossy(name)));
                Err(self.at(e, pos, kind))
            }
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

    fn object(&mut self, e: &BytesStart<'_>, pos: u64) -> Result<(), XmlError> {
        let a = Attrs::read(e, self.text, pos, &self.limits)?;
        let (class, info) = a.object(self.format)?;
        let text = self.text;
        self.emitter
            .open(class, info, pos)
            .map_err(|l| model_error(text, l, Some(&a.element())))?;
        self.object_depths.push(self.depth);
        Ok(())
    }
}
