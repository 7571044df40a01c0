//! [`SysfsRoot`]: a sysfs tree as a [`TopologySource`] (the runtime's chooser maps
//! `sysfs` and `sysfs:DIR` to it).

use std::path::PathBuf;

use pmix_core::{SourceError, Topology, TopologySource};

/// The Linux sysfs tree under a root directory (`/` for the live machine).
///
/// Warnings of the scan (devices skipped, see the crate docs) are not reported through
/// the trait; call [`crate::scan_with_warnings`] to see them.
#[derive(Clone, Debug)]
pub struct SysfsRoot {
    root: PathBuf,
}

impl SysfsRoot {
    /// The tree rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        SysfsRoot { root: root.into() }
    }

    /// The live machine: the tree rooted at `/`.
    pub fn this_machine() -> Self {
        SysfsRoot::new("/")
    }
}

impl TopologySource for SysfsRoot {
    fn describe(&self) -> String {
        format!("sysfs tree {}", self.root.display())
    }

    fn load(&self) -> Result<Topology, SourceError> {
        crate::scan(&self.root).map_err(|e| SourceError::from_error(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix_core::PmixError;

    #[test]
    fn an_empty_root_is_an_error_with_the_scanners_status() {
        let dir = std::env::temp_dir().join(format!("pmix-sysfs-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = SysfsRoot::new(&dir);
        assert!(src.describe().starts_with("sysfs tree "));
        let e = src.load().unwrap_err();
        let direct = crate::scan(&dir).unwrap_err();
        assert_eq!(e.status(), direct.status());
        assert_eq!(e.message(), direct.to_string());
        std::fs::remove_dir_all(&dir).ok();
    }
}
