//! The trait every topology backend implements (docs/conventions.md rule 4).
//!
//! A backend (`pmix-hwloc`'s XML importer and libhwloc, `pmix-sysfs`, or your own)
//! wraps whatever it reads in a value implementing [`TopologySource`]; the runtime and
//! `pmix-topo` pick one by name and only ever see this trait. Its error is one PMIx
//! status and a message saying what was wrong and where, so any backend's failure is
//! reported the same way; the backends keep their own typed errors in their own APIs.

use alloc::string::String;

use crate::status::{PmixError, Status};
use crate::topology::Topology;

/// A backend that can produce a [`Topology`].
pub trait TopologySource: Send + Sync {
    /// What the source is, for messages (`hwloc XML file /tmp/a.xml`, `sysfs tree /`).
    fn describe(&self) -> String;

    /// Reads and builds the topology.
    ///
    /// # Errors
    /// A [`SourceError`] carrying the backend's status and message (which names the
    /// file, line or path at fault).
    fn load(&self) -> Result<Topology, SourceError>;
}

/// Why a [`TopologySource`] could not produce a topology.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SourceError {
    status: Status,
    message: String,
}

impl SourceError {
    /// An error reported as `status`, with `message` saying what and where.
    pub fn new(status: Status, message: impl Into<String>) -> Self {
        SourceError {
            status,
            message: message.into(),
        }
    }

    /// The same status and text as a backend's own error.
    pub fn from_error<E: PmixError + core::fmt::Display + ?Sized>(e: &E) -> Self {
        SourceError {
            status: e.status(),
            message: alloc::format!("{e}"),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl PmixError for SourceError {
    /// The backend's status.
    fn status(&self) -> Status {
        self.status
    }
}
