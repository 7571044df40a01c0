//! [`WStr`]: the bytes of a PMIx string.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::buf::{Element, Reader, Writer};
use crate::error::{ErrorKind, WireError};
use crate::types::DataType;

/// The bytes of a PMIx string without its NUL (a STRING element, PROTOCOL.md §5.4).
///
/// The wire does not promise UTF-8, so the bytes are kept as they came:
/// [`WStr::as_str`] gives them as text when they are UTF-8. A NULL string is
/// `Option<WStr>::None` where the protocol allows one; a layout that needs a string
/// (keys, namespaces) refuses NULL with [`ErrorKind::BadValue`].
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WStr(pub Vec<u8>);

impl WStr {
    /// A string of `bytes`.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        WStr(bytes.into())
    }

    /// The bytes, without the NUL.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The bytes as text; `None` when they are not UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        core::str::from_utf8(&self.0).ok()
    }

    /// The bytes, by value.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// The number of bytes (without the NUL).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the string is empty (`""`, which is not NULL on the wire).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<&str> for WStr {
    fn from(s: &str) -> Self {
        WStr(s.as_bytes().to_vec())
    }
}

impl From<String> for WStr {
    fn from(s: String) -> Self {
        WStr(s.into_bytes())
    }
}

impl From<&[u8]> for WStr {
    fn from(s: &[u8]) -> Self {
        WStr(s.to_vec())
    }
}

impl From<Vec<u8>> for WStr {
    fn from(s: Vec<u8>) -> Self {
        WStr(s)
    }
}

impl PartialEq<&str> for WStr {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<str> for WStr {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl fmt::Display for WStr {
    /// The text, with U+FFFD for bytes that are not UTF-8.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.0.utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{fffd}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for WStr {
    /// A quoted string; UTF-8 text as it is, other bytes as `\xNN`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Some(s) => fmt::Debug::fmt(s, f),
            None => write!(f, "\"{}\"", self.0.escape_ascii()),
        }
    }
}

/// Reads a STRING element that may be NULL.
pub(crate) fn opt_str(r: &mut Reader<'_>, what: &'static str) -> Result<Option<WStr>, WireError> {
    Ok(r.string(what)?.map(WStr::from))
}

/// Reads a STRING element that must not be NULL.
pub(crate) fn req_str(r: &mut Reader<'_>, what: &'static str) -> Result<WStr, WireError> {
    let at = r.offset();
    match r.string(what)? {
        Some(s) => Ok(WStr::from(s)),
        None => Err(r.error_at(
            ErrorKind::BadValue {
                what,
                why: "a NULL string where the layout needs one",
            },
            at,
        )),
    }
}

/// Writes a STRING element that may be NULL.
pub(crate) fn put_opt_str(w: &mut Writer, s: &Option<WStr>) {
    w.string(s.as_ref().map(WStr::as_bytes));
}

/// Writes a STRING element.
pub(crate) fn put_str(w: &mut Writer, s: &WStr) {
    w.string(Some(s.as_bytes()));
}

/// A STRING that must not be NULL (keys, namespaces): decoding a NULL string is
/// [`ErrorKind::BadValue`].
impl Element for WStr {
    const TYPE: DataType = DataType::String;

    fn encode(&self, w: &mut Writer) {
        put_str(w, self);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        req_str(r, "string")
    }
}

/// A STRING that may be NULL (`None`, length 0 with no bytes).
impl Element for Option<WStr> {
    const TYPE: DataType = DataType::String;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, self);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        opt_str(r, "string")
    }
}
