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

use crate::error::{Error, LoadError};

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

/// Loads the topology `name` designates, with the host name rule applied
/// ([`apply_hostname`]: `hostname` when given, else the topology's own, else
/// `localhost`).
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
    apply_hostname(topo, hostname)
}

/// Applies the host name rule (the core's [`Topology::with_caller_hostname`]: the
/// caller's name, else the topology's own, else `localhost`) to a topology the runtime
/// loaded. Every topology the runtime loads goes through here ([`load`]).
///
/// # Errors
/// [`LoadError::Hostname`] for a caller's host name that is empty, longer than 255
/// bytes or holds a NUL.
pub fn apply_hostname(topo: Topology, caller: Option<&str>) -> Result<Topology, LoadError> {
    topo.with_caller_hostname(caller)
        .map_err(LoadError::Hostname)
}

/// Checks a caller's host name before anything is loaded, so a bad one is refused when
/// it is given (at init) rather than at the first query: the core's
/// [`check_hostname`](pmix_core::topology::check_hostname), as a runtime error.
///
/// # Errors
/// [`Error::BadParam`] naming the host name when it is empty, longer than
/// [`MAX_NAME_LEN`](pmix_core::MAX_NAME_LEN) bytes or holds a NUL.
pub fn check_hostname(host: &str) -> Result<(), Error> {
    pmix_core::topology::check_hostname(host).map_err(|_| {
        Error::BadParam(
            format!(
                "host name {host:?}: empty, longer than {} bytes, or holding NUL",
                pmix_core::MAX_NAME_LEN
            )
            .into(),
        )
    })
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

    fn xml(name: &str) -> String {
        format!(
            "xml:{}/../testdata/hwloc-xml/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    fn uuid_of(topo: &Topology, osname: &str) -> String {
        let d = topo.devices().iter().find(|d| d.name() == osname).unwrap();
        d.uuid().to_owned()
    }

    #[test]
    fn the_callers_hostname_beats_the_topologys_own_which_beats_localhost() {
        // mirage004 is the HostName the export carries.
        let own = load(&xml("24em64t-2n6c2t-pci.xml"), None).unwrap();
        assert_eq!(own.hostname(), "mirage004");
        assert_eq!(uuid_of(&own, "sda"), "blk://mirage004::sda");
        let caller = load(&xml("24em64t-2n6c2t-pci.xml"), Some("nodeA")).unwrap();
        assert_eq!(caller.hostname(), "nodeA");
        assert_eq!(uuid_of(&caller, "sda"), "blk://nodeA::sda");
        // An export without a HostName: localhost, unless the caller names one.
        let none = load(&xml("16intel64-manyVFs.xml"), None).unwrap();
        assert_eq!(none.hostname(), "localhost");
        let named = apply_hostname(none, Some("n1")).unwrap();
        assert_eq!(named.hostname(), "n1");
    }

    #[test]
    fn a_bad_callers_hostname_is_refused_by_check_and_apply_alike() {
        let long = "h".repeat(pmix_core::MAX_NAME_LEN + 1);
        for bad in ["", "a\0b", long.as_str()] {
            let e = check_hostname(bad).unwrap_err();
            assert_eq!(e.status(), Status::ERR_BAD_PARAM, "{bad:?}");
            let e = load(&xml("24em64t-2n6c2t-pci.xml"), Some(bad)).unwrap_err();
            assert!(matches!(e, LoadError::Hostname(_)), "{bad:?}: {e:?}");
            assert_eq!(e.status(), Status::ERR_BAD_PARAM, "{bad:?}");
        }
        let longest = "h".repeat(pmix_core::MAX_NAME_LEN);
        assert!(check_hostname(&longest).is_ok());
        assert!(load(&xml("24em64t-2n6c2t-pci.xml"), Some(&longest)).is_ok());
    }
}
