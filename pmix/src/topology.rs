//! Where an instance's topology comes from.
//!
//! The instance loads its topology once, lazily, from one *source name* chosen at init:
//! [`InitOptions::topology_source`](crate::InitOptions::topology_source) if given, else
//! the environment ([`source_name_from_env`]). Every name goes through
//! [`open_source`], the one place that maps names to backends, so a new backend
//! (sysfs) is a change in `pmix_hwloc::open` (or here), not in the runtime.

use std::env;

use pmix_core::Topology;
use pmix_hwloc::{SourceError, TopologySource};

use crate::error::LoadError;

/// The environment variable naming the topology source: `sysfs` (the default),
/// `sysfs:DIR`, `xml:FILE` or `hwloc`.
pub const ENV_SOURCE: &str = "PMIX_TOPOLOGY";

/// OpenPMIx's MCA parameter naming an hwloc XML file, honoured so that existing
/// set-ups keep working: it means `xml:FILE` when [`ENV_SOURCE`] is not set.
pub const ENV_OPENPMIX_TOPO_FILE: &str = "PMIX_MCA_pmix_hwloc_topo_file";

/// The source used when neither variable is set: the live machine through sysfs.
pub const DEFAULT_SOURCE: &str = "sysfs";

/// Chooses the backend for a source name (`xml:FILE`, `hwloc`, `sysfs`, `sysfs:DIR`).
///
/// This is the runtime's only door to the backends; it delegates to
/// [`pmix_hwloc::open`], which knows every name.
///
/// # Errors
/// [`SourceError::UnknownSource`] for a name no backend answers to;
/// [`SourceError::NotAvailable`] for a backend this build lacks (`sysfs` until the sysfs
/// backend exists, `hwloc` without the `native` feature).
pub fn open_source(name: &str) -> Result<Box<dyn TopologySource>, SourceError> {
    pmix_hwloc::open(name)
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
        error: Box::new(error),
    };
    let topo = open_source(name)
        .map_err(source_err)?
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
    use pmix_core::{PmixError, Status};

    #[test]
    fn open_source_delegates_to_the_backends() {
        assert!(matches!(
            open_source("bogus"),
            Err(SourceError::UnknownSource(_))
        ));
        assert!(open_source("xml:/some/file.xml").is_ok());
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
