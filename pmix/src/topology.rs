//! Where a topology comes from.
//!
//! The instance loads its topology once, lazily, from one *source name* chosen at init:
//! [`InitOptions::topology_source`](crate::InitOptions::topology_source) if given, else
//! the environment ([`source_name_from_env`]). Every name goes through
//! [`open_source`], the one place that maps names to backends; `pmix-topo --source`
//! uses it too.

use std::env;

use pmix_core::{PmixError, SourceError, Status, Topology, TopologySource};
use pmix_hwloc::XmlFile;
use pmix_sysfs::SysfsRoot;

use crate::error::LoadError;

/// The environment variable naming the topology source: `sysfs` (the default),
/// `sysfs:DIR`, `xml:FILE` or `hwloc`.
pub const ENV_SOURCE: &str = "PMIX_TOPOLOGY";

/// OpenPMIx's MCA parameter naming an hwloc XML file, honoured so that existing
/// set-ups keep working: it means `xml:FILE` when [`ENV_SOURCE`] is not set.
pub const ENV_OPENPMIX_TOPO_FILE: &str = "PMIX_MCA_pmix_hwloc_topo_file";

/// The source used when neither variable is set: the live machine through sysfs.
pub const DEFAULT_SOURCE: &str = "sysfs";

/// Why a source name does not give a backend.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// No backend answers to the name (`PMIX_ERR_BAD_PARAM`).
    #[error("unknown topology source {0:?}: expected sysfs, sysfs:DIR, xml:FILE or hwloc")]
    UnknownSource(String),
    /// The backend exists but not in this build (`PMIX_ERR_NOT_SUPPORTED`).
    #[error("topology source {name:?} is not available: {reason}")]
    NotAvailable {
        /// The name asked for.
        name: String,
        /// Why, and what to use instead.
        reason: &'static str,
    },
}

impl PmixError for OpenError {
    fn status(&self) -> Status {
        match self {
            OpenError::UnknownSource(_) => Status::ERR_BAD_PARAM,
            OpenError::NotAvailable { .. } => Status::ERR_NOT_SUPPORTED,
        }
    }
}

/// Chooses the backend for a source name. Nothing is read until
/// [`TopologySource::load`].
///
/// | name | source |
/// | --- | --- |
/// | `sysfs` | this machine's `/sys` (pmix-sysfs) |
/// | `sysfs:DIR` | the sysfs tree rooted at DIR (a captured tree) |
/// | `xml:FILE` | an hwloc XML export, pure-Rust importer (pmix-hwloc) |
/// | `hwloc` | libhwloc on this machine (honours `HWLOC_XMLFILE`, `HWLOC_FSROOT`); feature `native` |
///
/// # Errors
/// [`OpenError::UnknownSource`] for any other name (an empty DIR or FILE included);
/// [`OpenError::NotAvailable`] for `hwloc` in a build without the `native` feature.
pub fn open_source(name: &str) -> Result<Box<dyn TopologySource>, OpenError> {
    let unknown = || OpenError::UnknownSource(name.to_owned());
    if name == "sysfs" {
        return Ok(Box::new(SysfsRoot::this_machine()));
    }
    if let Some(dir) = name.strip_prefix("sysfs:") {
        return if dir.is_empty() {
            Err(unknown())
        } else {
            Ok(Box::new(SysfsRoot::new(dir)))
        };
    }
    if let Some(file) = name.strip_prefix("xml:") {
        return if file.is_empty() {
            Err(unknown())
        } else {
            Ok(Box::new(XmlFile::new(file)))
        };
    }
    if name == "hwloc" {
        #[cfg(feature = "native")]
        return Ok(Box::new(pmix_hwloc::native::Hwloc::this_machine()));
        #[cfg(not(feature = "native"))]
        return Err(OpenError::NotAvailable {
            name: name.to_owned(),
            reason: "this build has no libhwloc backend: rebuild with the `native` feature, or use sysfs or xml:FILE",
        });
    }
    Err(unknown())
}

/// The source name the environment asks for: `$PMIX_TOPOLOGY` if set and non-empty,
/// else `xml:$PMIX_MCA_pmix_hwloc_topo_file` if that is set and non-empty, else
/// [`DEFAULT_SOURCE`]. Never fails: a bad name is reported when the topology is loaded.
pub fn source_name_from_env() -> String {
    if let Some(name) = env::var_os(ENV_SOURCE).filter(|v| !v.is_empty()) {
        return name.to_string_lossy().into_owned();
    }
    if let Some(file) = env::var_os(ENV_OPENPMIX_TOPO_FILE).filter(|v| !v.is_empty()) {
        return format!("xml:{}", file.to_string_lossy());
    }
    DEFAULT_SOURCE.to_owned()
}

/// Loads the topology `name` designates and, when `hostname` is given, rebuilds its
/// device uuids with that host name (`PMIX_HOSTNAME`).
///
/// # Errors
/// [`LoadError::Source`] when the source cannot be chosen or read;
/// [`LoadError::Hostname`] for a host name the topology refuses (empty, longer than
/// 255 bytes, holding a NUL).
pub fn load(name: &str, hostname: Option<&str>) -> Result<Topology, LoadError> {
    let source_err = |error| LoadError::Source {
        name: name.to_owned(),
        error,
    };
    let topo = open_source(name)
        .map_err(|e| source_err(SourceError::from_error(&e)))?
        .load()
        .map_err(source_err)?;
    match hostname {
        Some(h) => topo.with_hostname(h).map_err(LoadError::Hostname),
        None => Ok(topo),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_source_knows_every_name() {
        for bad in ["bogus", "xml:", "sysfs:", "", "XML:/a"] {
            let e = open_source(bad).err().unwrap();
            assert_eq!(e, OpenError::UnknownSource(bad.to_owned()));
            assert_eq!(e.status(), Status::ERR_BAD_PARAM);
        }
        assert_eq!(open_source("sysfs").unwrap().describe(), "sysfs tree /");
        assert_eq!(
            open_source("sysfs:/tmp/t").unwrap().describe(),
            "sysfs tree /tmp/t"
        );
        assert_eq!(
            open_source("xml:/some/file.xml").unwrap().describe(),
            "hwloc XML file /some/file.xml"
        );
        #[cfg(not(feature = "native"))]
        assert_eq!(
            open_source("hwloc").err().unwrap().status(),
            Status::ERR_NOT_SUPPORTED
        );
        #[cfg(feature = "native")]
        assert!(open_source("hwloc").is_ok());
    }

    #[test]
    fn load_reports_the_source_and_its_status() {
        let e = load("xml:/nonexistent/topo.xml", None).unwrap_err();
        assert!(e.to_string().contains("xml:/nonexistent/topo.xml"), "{e}");
        match e {
            LoadError::Source { error, .. } => assert_eq!(error.status(), Status::ERR_NOT_FOUND),
            other => panic!("{other:?}"),
        }
    }
}
