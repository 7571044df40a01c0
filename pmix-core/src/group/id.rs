//! Group ids, namespaces and process ids: fixed-size, `Copy`, never allocating.

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};

use crate::status::{PmixError, Status};

/// `PMIX_MAX_NSLEN`: the longest group id or namespace, in bytes (a C `char[256]`
/// holds it with its NUL).
pub const MAX_NSLEN: usize = 255;

/// The ranks PMIx reserves (`PMIX_RANK_INVALID` = `u32::MAX - 3` and above:
/// `LOCAL_NODE`, `WILDCARD`, `UNDEF`); no process has one.
pub const FIRST_RESERVED_RANK: u32 = u32::MAX - 3;

/// Which kind of identifier an [`IdError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdKind {
    /// A group id (`PMIX_GROUP_ID`, the `grp` argument of the group calls).
    Group,
    /// A namespace (`pmix_nspace_t`).
    Namespace,
}

impl fmt::Display for IdKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IdKind::Group => "group id",
            IdKind::Namespace => "namespace",
        })
    }
}

/// Why a group id, namespace or rank was refused. Always `PMIX_ERR_BAD_PARAM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdError {
    /// The identifier is the empty string.
    #[error("{what} is empty")]
    Empty {
        /// What was being parsed.
        what: IdKind,
    },
    /// The identifier is longer than [`MAX_NSLEN`] bytes.
    #[error(
        "{what} is {len} bytes long, over the limit of {} (PMIX_MAX_NSLEN)",
        MAX_NSLEN
    )]
    TooLong {
        /// What was being parsed.
        what: IdKind,
        /// Its length in bytes.
        len: usize,
    },
    /// The identifier contains a NUL byte (C would cut it there).
    #[error("{what} has a NUL byte at byte {at}")]
    Nul {
        /// What was being parsed.
        what: IdKind,
        /// Byte offset of the first NUL.
        at: usize,
    },
    /// The rank is one PMIx reserves (`PMIX_RANK_WILDCARD`, `UNDEF`, …), not a process.
    #[error("rank {rank:#x} is reserved (PMIX_RANK_INVALID or above) and names no process")]
    ReservedRank {
        /// The rank given.
        rank: u32,
    },
}

impl PmixError for IdError {
    fn status(&self) -> Status {
        Status::ERR_BAD_PARAM
    }
}

/// Inline storage for a ≤ 255-byte, non-empty, NUL-free byte string.
#[derive(Clone, Copy)]
struct Name {
    len: u8,
    bytes: [u8; MAX_NSLEN],
}

impl Name {
    fn new(what: IdKind, s: &[u8]) -> Result<Name, IdError> {
        if s.is_empty() {
            return Err(IdError::Empty { what });
        }
        if s.len() > MAX_NSLEN {
            return Err(IdError::TooLong { what, len: s.len() });
        }
        if let Some(at) = s.iter().position(|&b| b == 0) {
            return Err(IdError::Nul { what, at });
        }
        let mut bytes = [0; MAX_NSLEN];
        bytes[..s.len()].copy_from_slice(s);
        Ok(Name {
            len: s.len() as u8,
            bytes,
        })
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// Writes the bytes as text, invalid UTF-8 as U+FFFD, without allocating.
    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.as_bytes().utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{FFFD}")?;
            }
        }
        Ok(())
    }
}

macro_rules! name_type {
    ($(#[$doc:meta])* $ty:ident, $kind:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $ty(Name);

        impl $ty {
            #[doc = concat!("Checks `s` and stores it inline (no allocation).\n\n",
                "# Errors\n[`IdError`] (`PMIX_ERR_BAD_PARAM`) when `s` is empty, longer than ",
                "[`MAX_NSLEN`] bytes or contains a NUL.")]
            pub fn new(s: &str) -> Result<Self, IdError> {
                Self::from_bytes(s.as_bytes())
            }

            #[doc = concat!("Like [`", stringify!($ty), "::new`], for bytes that need not be UTF-8 ",
                "(a C string without its NUL).\n\n# Errors\nAs [`", stringify!($ty), "::new`].")]
            pub fn from_bytes(s: &[u8]) -> Result<Self, IdError> {
                Name::new($kind, s).map($ty)
            }

            /// The identifier's bytes (without a NUL).
            pub fn as_bytes(&self) -> &[u8] {
                self.0.as_bytes()
            }

            /// The identifier as text, or `None` if it is not UTF-8.
            pub fn as_str(&self) -> Option<&str> {
                core::str::from_utf8(self.as_bytes()).ok()
            }
        }

        impl PartialEq for $ty {
            fn eq(&self, other: &Self) -> bool {
                self.as_bytes() == other.as_bytes()
            }
        }

        impl Eq for $ty {}

        /// Equal when the bytes are `other`'s.
        impl PartialEq<str> for $ty {
            fn eq(&self, other: &str) -> bool {
                self.as_bytes() == other.as_bytes()
            }
        }

        /// Equal when the bytes are `other`'s.
        impl PartialEq<&str> for $ty {
            fn eq(&self, other: &&str) -> bool {
                self.as_bytes() == other.as_bytes()
            }
        }

        /// Equal when `self`'s bytes are `other`'s.
        impl PartialEq<$ty> for str {
            fn eq(&self, other: &$ty) -> bool {
                self.as_bytes() == other.as_bytes()
            }
        }

        /// Equal when `self`'s bytes are `other`'s.
        impl PartialEq<$ty> for &str {
            fn eq(&self, other: &$ty) -> bool {
                self.as_bytes() == other.as_bytes()
            }
        }

        impl PartialOrd for $ty {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }

        /// Byte-wise order, as `strcmp` would give.
        impl Ord for $ty {
            fn cmp(&self, other: &Self) -> Ordering {
                self.as_bytes().cmp(other.as_bytes())
            }
        }

        impl Hash for $ty {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.as_bytes().hash(state);
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.write(f)
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}(\"{}\")", stringify!($ty), self)
            }
        }

        impl core::str::FromStr for $ty {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, IdError> {
                Self::new(s)
            }
        }
    };
}

name_type!(
    /// A group identifier: 1 to [`MAX_NSLEN`] bytes, no NUL.
    ///
    /// Stored inline (256 bytes), so it is `Copy` and never allocates.
    ///
    /// ```
    /// use pmix_core::group::GroupId;
    /// use pmix_core::{PmixError, Status};
    /// assert_eq!(GroupId::new("ocean").unwrap().as_str(), Some("ocean"));
    /// assert_eq!(GroupId::new("").unwrap_err().status(), Status::ERR_BAD_PARAM);
    /// assert!(GroupId::new(&"x".repeat(256)).is_err());
    /// assert!(GroupId::new("a\0b").is_err());
    /// ```
    GroupId,
    IdKind::Group
);

name_type!(
    /// A namespace (`pmix_nspace_t`): 1 to [`MAX_NSLEN`] bytes, no NUL. Stored inline.
    Nspace,
    IdKind::Namespace
);

/// A process: namespace and rank (`pmix_proc_t`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProcId {
    /// The namespace (job) of the process.
    pub nspace: Nspace,
    /// The rank of the process within its namespace.
    pub rank: u32,
}

impl ProcId {
    /// The process `rank` of `nspace`.
    ///
    /// # Errors
    /// [`IdError::ReservedRank`] for ranks PMIx reserves (`PMIX_RANK_WILDCARD` and the
    /// like, [`FIRST_RESERVED_RANK`] and above): they name sets of processes, not one.
    pub fn new(nspace: Nspace, rank: u32) -> Result<ProcId, IdError> {
        if rank >= FIRST_RESERVED_RANK {
            return Err(IdError::ReservedRank { rank });
        }
        Ok(ProcId { nspace, rank })
    }
}

impl fmt::Display for ProcId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.nspace, self.rank)
    }
}

impl fmt::Debug for ProcId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProcId({self})")
    }
}
