//! Where a topology comes from: the [`TopologySource`] trait every backend implements,
//! and [`open`], which picks a backend by name (`xml:FILE`, `hwloc`, `sysfs`,
//! `sysfs:DIR`) for the command line and the runtime.

use std::path::PathBuf;

use pmix_core::{PmixError, Status, Topology};

use crate::xml::{FileError, Importer};

/// A backend that can produce a [`Topology`]: an hwloc XML file, libhwloc, a sysfs tree.
///
/// Its error is a [`SourceError`], which maps to exactly one PMIx status
/// ([`PmixError::status`]), so a caller reports any backend's failure the same way.
/// Sources are `Send + Sync` so a runtime can keep one and load from any thread.
pub trait TopologySource: Send + Sync {
    /// What the source is, for messages (`hwloc XML file /tmp/a.xml`).
    fn describe(&self) -> String;

    /// Builds the topology.
    ///
    /// # Errors
    /// A [`SourceError`] saying what could not be read or modelled, and where.
    fn load(&self) -> Result<Topology, SourceError>;
}

/// Why a topology source could not be chosen or loaded.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The name given to [`open`] is not a source (`PMIX_ERR_BAD_PARAM`).
    #[error("unknown topology source {0:?}: expected xml:FILE, hwloc, sysfs or sysfs:DIR")]
    UnknownSource(String),
    /// The source exists in the design but not in this build (`PMIX_ERR_NOT_SUPPORTED`).
    #[error("topology source {source_name:?} is not available: {reason}")]
    NotAvailable {
        /// The source asked for.
        source_name: String,
        /// Why, and what to use instead.
        reason: &'static str,
    },
    /// An hwloc XML file could not be read or imported.
    #[error(transparent)]
    Xml(#[from] FileError),
    /// libhwloc failed.
    #[cfg(feature = "native")]
    #[error(transparent)]
    Native(#[from] crate::native::NativeError),
}

impl PmixError for SourceError {
    /// `PMIX_ERR_BAD_PARAM` for an unknown source, `PMIX_ERR_NOT_SUPPORTED` for one
    /// this build lacks, and the backend's own status otherwise.
    fn status(&self) -> Status {
        match self {
            SourceError::UnknownSource(_) => Status::ERR_BAD_PARAM,
            SourceError::NotAvailable { .. } => Status::ERR_NOT_SUPPORTED,
            SourceError::Xml(e) => e.status(),
            #[cfg(feature = "native")]
            SourceError::Native(e) => e.status(),
        }
    }
}

/// An hwloc XML file, imported by the pure-Rust importer.
#[derive(Clone, Debug)]
pub struct XmlFile {
    path: PathBuf,
    importer: Importer,
}

impl XmlFile {
    /// The file at `path`, imported with the default limits.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        XmlFile {
            path: path.into(),
            importer: Importer::new(),
        }
    }

    /// The same file imported by `importer` (other limits).
    pub fn with_importer(mut self, importer: Importer) -> Self {
        self.importer = importer;
        self
    }
}

impl TopologySource for XmlFile {
    fn describe(&self) -> String {
        format!("hwloc XML file {}", self.path.display())
    }

    fn load(&self) -> Result<Topology, SourceError> {
        Ok(self.importer.import_file(&self.path)?)
    }
}

/// What the sysfs backend's absence says, until it exists.
const SYSFS_MISSING: &str = "the sysfs backend is not built yet: pass --source xml:FILE (an hwloc XML export, e.g. from `lstopo file.xml`)";

/// Chooses a source by name:
///
/// | name | source |
/// | --- | --- |
/// | `xml:FILE` | the hwloc XML file FILE, pure-Rust importer |
/// | `hwloc` | libhwloc on this machine (honours `HWLOC_XMLFILE` and `HWLOC_FSROOT`); feature `native` |
/// | `sysfs`, `sysfs:DIR` | the sysfs backend (not built yet) |
///
/// Nothing is read until [`TopologySource::load`].
///
/// # Errors
/// [`SourceError::UnknownSource`] for any other name (an empty file name included);
/// [`SourceError::NotAvailable`] for `sysfs` (not built yet) and for `hwloc` in a build
/// without the `native` feature.
pub fn open(name: &str) -> Result<Box<dyn TopologySource>, SourceError> {
    if let Some(path) = name.strip_prefix("xml:") {
        if path.is_empty() {
            return Err(SourceError::UnknownSource(name.to_owned()));
        }
        return Ok(Box::new(XmlFile::new(path)));
    }
    if name == "sysfs" || name.starts_with("sysfs:") {
        return Err(SourceError::NotAvailable {
            source_name: name.to_owned(),
            reason: SYSFS_MISSING,
        });
    }
    if name == "hwloc" {
        #[cfg(feature = "native")]
        return Ok(Box::new(crate::native::Hwloc::this_machine()));
        #[cfg(not(feature = "native"))]
        return Err(SourceError::NotAvailable {
            source_name: name.to_owned(),
            reason: "this build has no libhwloc backend: rebuild with the `native` feature, or pass --source xml:FILE",
        });
    }
    Err(SourceError::UnknownSource(name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chooser_names() {
        assert!(matches!(open("bogus"), Err(SourceError::UnknownSource(_))));
        assert!(matches!(open("xml:"), Err(SourceError::UnknownSource(_))));
        let e = open("sysfs").err().unwrap();
        assert_eq!(e.status(), Status::ERR_NOT_SUPPORTED);
        assert!(e.to_string().contains("--source xml:FILE"), "{e}");
        assert!(matches!(
            open("sysfs:/tmp"),
            Err(SourceError::NotAvailable { .. })
        ));
        let s = open("xml:/nonexistent/file.xml").unwrap();
        assert_eq!(s.describe(), "hwloc XML file /nonexistent/file.xml");
        let e = s.load().unwrap_err();
        assert_eq!(e.status(), Status::ERR_NOT_FOUND);
        assert!(e.to_string().starts_with("/nonexistent/file.xml: "), "{e}");
        #[cfg(not(feature = "native"))]
        assert!(matches!(
            open("hwloc"),
            Err(SourceError::NotAvailable { .. })
        ));
        #[cfg(feature = "native")]
        assert!(open("hwloc").is_ok());
    }
}
