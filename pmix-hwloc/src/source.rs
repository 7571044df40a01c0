//! [`XmlFile`]: an hwloc XML file as a [`TopologySource`] (the trait lives in
//! pmix-core; the runtime's chooser, `pmix::topology::open_source`, maps source names
//! such as `xml:FILE` to it).

use std::path::PathBuf;

use pmix_core::{SourceError, Topology, TopologySource};

use crate::xml::Importer;

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
        self.importer
            .import_file(&self.path)
            .map_err(|e| SourceError::from_error(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix_core::{PmixError, Status};

    #[test]
    fn a_missing_file_is_not_found_and_named() {
        let s = XmlFile::new("/nonexistent/file.xml");
        assert_eq!(s.describe(), "hwloc XML file /nonexistent/file.xml");
        let e = s.load().unwrap_err();
        assert_eq!(e.status(), Status::ERR_NOT_FOUND);
        assert!(e.to_string().starts_with("/nonexistent/file.xml: "), "{e}");
    }
}
