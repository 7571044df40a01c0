//! What a scan reports: a [`ScanError`] when it cannot produce a topology it can vouch
//! for, and [`Warning`]s for what it skipped on the way.

use std::fmt;

use pmix_core::{BuildError, PmixError, Status};

use crate::fs::FsError;

/// Why a scan failed. Every variant names the file at fault, as the OS would show it
/// (`sysfs: /sys/bus/pci/devices/0000:06:00.0/numa_node: "abc" is not an integer`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// A file or directory the topology depends on exists but could not be read.
    #[error("sysfs: {path}: {error}")]
    Read {
        /// The full path.
        path: String,
        /// What went wrong.
        error: FsError,
    },
    /// A file the topology depends on holds something it cannot mean.
    #[error("sysfs: {path}: {value:?} {problem}")]
    Malformed {
        /// The full path.
        path: String,
        /// The offending content (trimmed, at most 64 characters).
        value: String,
        /// What is wrong with it (`is not an integer`).
        problem: String,
    },
    /// The tree has no processor information: it is not a Linux `/sys`.
    #[error("sysfs: {path}: no cpus found (is this a Linux sysfs tree?)")]
    NoCpus {
        /// The full path of the directory (or `online` file) that named none.
        path: String,
    },
    /// The objects found do not form a topology (pmix-core refused them).
    #[error("sysfs: {0}")]
    Build(#[from] BuildError),
}

impl ScanError {
    pub(crate) fn malformed(path: String, value: &str, problem: impl Into<String>) -> Self {
        ScanError::Malformed {
            path,
            value: shorten(value),
            problem: problem.into(),
        }
    }
}

/// The content of a file as messages quote it: trimmed, at most 64 characters.
pub(crate) fn shorten(value: &str) -> String {
    let v = value.trim();
    match v.char_indices().nth(64) {
        Some((i, _)) => format!("{}…", &v[..i]),
        None => v.to_owned(),
    }
}

impl PmixError for ScanError {
    /// `PMIX_ERR_NOT_FOUND` for a tree without cpus (a root that is not a sysfs tree),
    /// `PMIX_ERROR` for a file that cannot be read, `PMIX_ERR_BAD_PARAM` for content
    /// or objects that make no sense.
    fn status(&self) -> Status {
        match self {
            ScanError::NoCpus { .. } => Status::ERR_NOT_FOUND,
            ScanError::Read { .. } => Status::ERROR,
            ScanError::Malformed { .. } | ScanError::Build(_) => Status::ERR_BAD_PARAM,
        }
    }
}

/// Something the scan skipped or worked around, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The full path of the file or directory entry concerned.
    pub path: String,
    /// What happened (`not a PCI address: skipped`).
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sysfs: {}: {}", self.path, self.message)
    }
}
