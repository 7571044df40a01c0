//! The filesystem the scanner reads through: a small trait, [`SysFs`], with two
//! implementations, [`RealFs`] (`std::fs` under a root directory) and [`MemFs`] (an
//! in-memory tree, for tests and fuzzing).
//!
//! Paths given to a [`SysFs`] are relative to its root, `/`-separated, without a
//! leading slash (`sys/bus/pci/devices`). Every read is bounded: files by a byte cap,
//! directories by an entry cap, symbolic-link chains by a hop limit.

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

mod mem;

pub use mem::MemFs;
pub(crate) use mem::components;

/// What a path names, without following a final symbolic link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file (or anything else that is neither a directory nor a link).
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
}

/// Why a filesystem operation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// Nothing is there (or a dangling symbolic link is).
    #[error("not found")]
    NotFound,
    /// A file longer than the cap the caller set.
    #[error("larger than {limit} bytes")]
    TooLarge {
        /// The cap.
        limit: usize,
    },
    /// A directory with more entries than the cap the caller set.
    #[error("more than {limit} directory entries")]
    TooManyEntries {
        /// The cap.
        limit: usize,
    },
    /// A file whose content is not UTF-8.
    #[error("not UTF-8 text")]
    NotUtf8,
    /// A directory where a file was expected.
    #[error("is a directory")]
    IsDir,
    /// A file where a directory was expected.
    #[error("not a directory")]
    NotDir,
    /// `read_link` on something that is not a symbolic link.
    #[error("not a symbolic link")]
    NotLink,
    /// Too many levels of symbolic links (a loop).
    #[error("too many levels of symbolic links")]
    Loop,
    /// Any other I/O error, as the OS describes it.
    #[error("{0}")]
    Io(String),
}

impl From<io::Error> for FsError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::NotFound => FsError::NotFound,
            io::ErrorKind::IsADirectory => FsError::IsDir,
            io::ErrorKind::NotADirectory => FsError::NotDir,
            _ if e.raw_os_error() == Some(ELOOP) => FsError::Loop,
            _ => FsError::Io(e.to_string()),
        }
    }
}

/// A failed read of [`SysFs::read_noting_dangling`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadFailure {
    /// What went wrong.
    pub error: FsError,
    /// With [`FsError::NotFound`]: `path` names a symbolic link, whose target is
    /// missing (a dangling link). Always `false` with another error.
    pub dangling_link: bool,
}

/// Linux's `ELOOP`.
const ELOOP: i32 = 40;

/// The filesystem operations the scanner needs. Implementations must never panic.
pub trait SysFs {
    /// Reads the whole file at `path` (following symbolic links) as UTF-8.
    ///
    /// # Errors
    /// [`FsError::NotFound`] when nothing is there, [`FsError::TooLarge`] when the
    /// file holds more than `cap` bytes, [`FsError::IsDir`], [`FsError::Loop`],
    /// [`FsError::NotUtf8`] or another [`FsError`].
    fn read_to_string(&self, path: &str, cap: usize) -> Result<String, FsError>;

    /// [`SysFs::read_to_string`], telling a dangling symbolic link apart from nothing
    /// at all: when the read finds nothing ([`FsError::NotFound`]),
    /// [`ReadFailure::dangling_link`] says whether `path` itself names a symbolic link
    /// (as [`SysFs::kind`] without following reports it), whose target is then
    /// missing. The scanner warns about those. The default asks `kind` after such a
    /// read; [`MemFs`] knows from the one walk of the read.
    ///
    /// # Errors
    /// As [`SysFs::read_to_string`].
    fn read_noting_dangling(&self, path: &str, cap: usize) -> Result<String, ReadFailure> {
        self.read_to_string(path, cap).map_err(|error| ReadFailure {
            dangling_link: error == FsError::NotFound
                && self.kind(path, false) == Ok(FileKind::Symlink),
            error,
        })
    }

    /// The target of the symbolic link at `path` (the link itself, not followed).
    ///
    /// # Errors
    /// [`FsError::NotLink`] when `path` is not a symbolic link, [`FsError::NotFound`]
    /// when nothing is there, [`FsError::TooLarge`] when the target is longer than
    /// `cap` bytes, or another [`FsError`].
    fn read_link(&self, path: &str, cap: usize) -> Result<String, FsError>;

    /// The names in the directory at `path` (following symbolic links), sorted.
    ///
    /// # Errors
    /// [`FsError::NotFound`], [`FsError::NotDir`], [`FsError::TooManyEntries`] when it
    /// has more than `max_entries` entries, or another [`FsError`].
    fn read_dir(&self, path: &str, max_entries: usize) -> Result<Vec<String>, FsError>;

    /// What `path` names; with `follow`, after following symbolic links.
    ///
    /// # Errors
    /// [`FsError::NotFound`] when nothing is there (with `follow`, also a dangling
    /// link), [`FsError::Loop`], or another [`FsError`].
    fn kind(&self, path: &str, follow: bool) -> Result<FileKind, FsError>;

    /// The path as messages show it (`/sys/bus/pci/devices/0000:06:00.0/numa_node`).
    fn display(&self, path: &str) -> String;
}

impl<T: SysFs + ?Sized> SysFs for &T {
    fn read_to_string(&self, path: &str, cap: usize) -> Result<String, FsError> {
        (**self).read_to_string(path, cap)
    }
    fn read_noting_dangling(&self, path: &str, cap: usize) -> Result<String, ReadFailure> {
        (**self).read_noting_dangling(path, cap)
    }
    fn read_link(&self, path: &str, cap: usize) -> Result<String, FsError> {
        (**self).read_link(path, cap)
    }
    fn read_dir(&self, path: &str, max_entries: usize) -> Result<Vec<String>, FsError> {
        (**self).read_dir(path, max_entries)
    }
    fn kind(&self, path: &str, follow: bool) -> Result<FileKind, FsError> {
        (**self).kind(path, follow)
    }
    fn display(&self, path: &str) -> String {
        (**self).display(path)
    }
}

/// The real filesystem under a root directory (`/` for the live machine).
///
/// Symbolic links are followed by the OS, which reports loops (`ELOOP`); the scanner
/// itself resolves the links it parses (PCI and class entries) inside the root. An
/// absolute link inside a captured tree is followed by the OS to the live system's
/// path (captured sysfs trees use relative links, as the kernel does).
#[derive(Clone, Debug)]
pub struct RealFs {
    root: PathBuf,
}

impl RealFs {
    /// The tree rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        RealFs { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn full(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }
}

impl SysFs for RealFs {
    fn read_to_string(&self, path: &str, cap: usize) -> Result<String, FsError> {
        let f = std::fs::File::open(self.full(path))?;
        // sysfs attributes are small: one read usually does it.
        let mut buf = Vec::with_capacity(cap.min(4096) + 1);
        f.take(cap as u64 + 1).read_to_end(&mut buf)?;
        if buf.len() > cap {
            return Err(FsError::TooLarge { limit: cap });
        }
        String::from_utf8(buf).map_err(|_| FsError::NotUtf8)
    }

    fn read_link(&self, path: &str, cap: usize) -> Result<String, FsError> {
        match std::fs::read_link(self.full(path)) {
            Ok(t) if t.as_os_str().len() > cap => Err(FsError::TooLarge { limit: cap }),
            Ok(t) => t
                .into_os_string()
                .into_string()
                .map_err(|_| FsError::NotUtf8),
            // EINVAL: not a link.
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => Err(FsError::NotLink),
            Err(e) => Err(e.into()),
        }
    }

    fn read_dir(&self, path: &str, max_entries: usize) -> Result<Vec<String>, FsError> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(self.full(path))? {
            let entry = entry?;
            if names.len() >= max_entries {
                return Err(FsError::TooManyEntries { limit: max_entries });
            }
            // Names that are not UTF-8 cannot be sysfs objects we know: skip them.
            if let Ok(n) = entry.file_name().into_string() {
                names.push(n);
            }
        }
        names.sort_unstable();
        Ok(names)
    }

    fn kind(&self, path: &str, follow: bool) -> Result<FileKind, FsError> {
        let full = self.full(path);
        let md = if follow {
            std::fs::metadata(full)?
        } else {
            std::fs::symlink_metadata(full)?
        };
        let t = md.file_type();
        Ok(if t.is_symlink() {
            FileKind::Symlink
        } else if t.is_dir() {
            FileKind::Dir
        } else {
            FileKind::File
        })
    }

    fn display(&self, path: &str) -> String {
        self.full(path).display().to_string()
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::File => "file",
            FileKind::Dir => "directory",
            FileKind::Symlink => "symbolic link",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn realfs_reports_what_it_finds() {
        let dir = std::env::temp_dir().join(format!("pmix-sysfs-fs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("d")).unwrap();
        std::fs::write(dir.join("d/f"), "hello").unwrap();
        std::os::unix::fs::symlink("d/f", dir.join("l")).unwrap();
        std::os::unix::fs::symlink("self", dir.join("self")).unwrap();
        let fs = RealFs::new(&dir);
        assert_eq!(fs.read_to_string("l", 5).unwrap(), "hello");
        assert_eq!(
            fs.read_to_string("l", 4),
            Err(FsError::TooLarge { limit: 4 })
        );
        assert_eq!(fs.read_to_string("d", 4), Err(FsError::IsDir));
        assert_eq!(fs.read_to_string("self", 4), Err(FsError::Loop));
        assert_eq!(fs.read_to_string("none", 4), Err(FsError::NotFound));
        assert_eq!(fs.read_link("l", 8).unwrap(), "d/f");
        assert_eq!(fs.read_link("l", 2), Err(FsError::TooLarge { limit: 2 }));
        assert_eq!(fs.read_link("d", 8), Err(FsError::NotLink));
        assert_eq!(fs.read_dir("", 10).unwrap(), vec!["d", "l", "self"]);
        assert_eq!(
            fs.read_dir("", 2),
            Err(FsError::TooManyEntries { limit: 2 })
        );
        assert_eq!(fs.kind("l", false), Ok(FileKind::Symlink));
        assert_eq!(fs.kind("l", true), Ok(FileKind::File));
        assert_eq!(fs.kind("d", true), Ok(FileKind::Dir));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
