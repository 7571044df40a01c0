//! Decoding errors: what went wrong, and at which byte.

use alloc::string::String;
use core::fmt;

/// Why bytes could not be decoded (or, rarely, a value could not be encoded).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended inside `what` (a whole message was promised by its length,
    /// so this is a malformed message, not "need more").
    Truncated {
        /// What was being read.
        what: &'static str,
    },
    /// A count or length is larger than the limit in force.
    TooLarge {
        /// What was being read.
        what: &'static str,
        /// The count or length found.
        len: u64,
        /// The limit in force (see [`crate::Limits`]).
        limit: u64,
    },
    /// A varint is longer than its minimal encoding, or wider than its type. The
    /// codec accepts only what it would write itself, so every accepted message
    /// re-encodes to its bytes.
    BadVarint {
        /// What was being read.
        what: &'static str,
    },
    /// A type tag other than the one the layout requires.
    UnexpectedType {
        /// What was being read.
        what: &'static str,
        /// The type code the layout requires.
        expected: u16,
        /// The type code found.
        found: u64,
    },
    /// A type code this codec does not know.
    UnknownType {
        /// The code found.
        code: u64,
    },
    /// A top-level pack holds another number of elements than the layout requires.
    BadCount {
        /// What was being read.
        what: &'static str,
        /// The count found.
        found: i64,
    },
    /// A field holds a value its type does not allow (a bool other than 0 or 1, a
    /// string without its NUL, a NULL where one is not allowed, …).
    BadValue {
        /// What was being read.
        what: &'static str,
        /// Why it is refused.
        why: &'static str,
    },
    /// Bytes are left over after a complete message.
    TrailingBytes {
        /// How many.
        len: usize,
    },
    /// Nesting (a buffer inside a value inside a buffer …) deeper than the limit.
    TooDeep {
        /// The limit in force.
        limit: usize,
    },
    /// The peer speaks a protocol this codec does not.
    UnsupportedVersion {
        /// The peer's version string.
        peer: String,
        /// What this codec speaks.
        ours: &'static str,
    },
    /// A value cannot be encoded (a count that does not fit the wire's integer).
    Unencodable {
        /// What was being written.
        what: &'static str,
    },
}

/// A decoding error: its [`ErrorKind`] and the byte offset, from the start of the
/// input given to the decoder, where the offending field starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// The byte offset of the offending field.
    pub offset: usize,
}

impl WireError {
    /// An error of `kind` at `offset`.
    pub fn new(kind: ErrorKind, offset: usize) -> Self {
        WireError { kind, offset }
    }

    /// The same error with its offset moved by `base` (for an error found inside a
    /// nested buffer, reported from the start of the outer input).
    pub fn shifted(mut self, base: usize) -> Self {
        self.offset += base;
        self
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Truncated { what } => write!(f, "the input ends inside {what}"),
            ErrorKind::TooLarge { what, len, limit } => {
                write!(f, "{what} of {len} is over the limit of {limit}")
            }
            ErrorKind::BadVarint { what } => {
                write!(
                    f,
                    "{what}: a varint that is not minimal or too wide for its type"
                )
            }
            ErrorKind::UnexpectedType {
                what,
                expected,
                found,
            } => write!(
                f,
                "{what}: type {found} where the layout needs type {expected}"
            ),
            ErrorKind::UnknownType { code } => write!(f, "unknown data type {code}"),
            ErrorKind::BadCount { what, found } => {
                write!(
                    f,
                    "{what}: a pack of {found} elements where the layout needs another count"
                )
            }
            ErrorKind::BadValue { what, why } => write!(f, "{what}: {why}"),
            ErrorKind::TrailingBytes { len } => {
                write!(f, "{len} bytes left over after a complete message")
            }
            ErrorKind::TooDeep { limit } => write!(f, "nested deeper than {limit} levels"),
            ErrorKind::UnsupportedVersion { peer, ours } => write!(
                f,
                "the peer speaks PMIx {peer:?}, which this codec does not (it speaks {ours})"
            ),
            ErrorKind::Unencodable { what } => write!(f, "{what} cannot be encoded"),
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.kind)
    }
}

impl core::error::Error for WireError {}
