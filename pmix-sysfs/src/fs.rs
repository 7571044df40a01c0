//! The filesystem the scanner reads through: a small trait, [`SysFs`], with two
//! implementations, [`RealFs`] (`std::fs` under a root directory) and [`MemFs`] (an
//! in-memory tree, for tests and fuzzing).
//!
//! Paths given to a [`SysFs`] are relative to its root, `/`-separated, without a
//! leading slash (`sys/bus/pci/devices`). Every read is bounded: files by a byte cap,
//! directories by an entry cap, symbolic-link chains by a hop limit.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

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

/// An in-memory filesystem tree: files, directories and symbolic links.
///
/// Links are resolved inside the tree (an absolute target starts at its root, `..` at
/// the root stays there) with at most [`MemFs::MAX_HOPS`] links per lookup, so loops
/// are reported as [`FsError::Loop`].
///
/// ```
/// use pmix_sysfs::{MemFs, SysFs};
/// let mut fs = MemFs::new();
/// fs.file("sys/devices/pci0000:00/0000:00:01.0/class", "0x020000\n");
/// fs.symlink("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
/// assert_eq!(fs.read_to_string("sys/bus/pci/devices/0000:00:01.0/class", 64).unwrap(), "0x020000\n");
/// ```
#[derive(Clone, Debug, Default)]
pub struct MemFs {
    root: BTreeMap<String, Entry>,
}

#[derive(Clone, Debug)]
enum Entry {
    File(Vec<u8>),
    Dir(BTreeMap<String, Entry>),
    Link(String),
}

impl MemFs {
    /// The most symbolic links one lookup follows before reporting a loop.
    pub const MAX_HOPS: usize = 40;

    /// An empty tree.
    pub fn new() -> Self {
        MemFs::default()
    }

    /// Creates (or replaces) a file, creating its parent directories; an entry in the
    /// way that is not a directory is replaced by one.
    pub fn file(&mut self, path: &str, content: impl AsRef<[u8]>) -> &mut Self {
        self.put(path, Entry::File(content.as_ref().to_vec()));
        self
    }

    /// Creates (or replaces) a directory, creating its parents.
    pub fn dir(&mut self, path: &str) -> &mut Self {
        self.put(path, Entry::Dir(BTreeMap::new()));
        self
    }

    /// Creates (or replaces) a symbolic link to `target`, creating its parents.
    pub fn symlink(&mut self, path: &str, target: &str) -> &mut Self {
        self.put(path, Entry::Link(target.to_owned()));
        self
    }

    /// The canonical path of `path` (every symbolic link followed, the final one
    /// too), or `None` when it does not resolve.
    pub fn canonical(&self, path: &str) -> Option<String> {
        self.resolve(path, true).ok().map(|(c, _)| c.join("/"))
    }

    /// Copies the real directory tree under `root/sub` for each of `subs` into a new
    /// tree (files, directories and links as they are; files above `max_file` bytes
    /// are truncated to it), for tests that corrupt captured trees.
    ///
    /// # Errors
    /// The first I/O error met, other than a missing `sub`.
    pub fn load_dir(root: &Path, subs: &[&str], max_file: usize) -> io::Result<MemFs> {
        let mut fs = MemFs::new();
        let mut stack: Vec<String> = subs.iter().map(|s| (*s).to_owned()).collect();
        while let Some(rel) = stack.pop() {
            let full = root.join(&rel);
            let md = match std::fs::symlink_metadata(&full) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            if md.file_type().is_symlink() {
                let t = std::fs::read_link(&full)?;
                fs.symlink(&rel, &t.to_string_lossy());
            } else if md.is_dir() {
                fs.dir(&rel);
                for e in std::fs::read_dir(&full)? {
                    let name = e?.file_name().to_string_lossy().into_owned();
                    stack.push(format!("{rel}/{name}"));
                }
            } else {
                let mut buf = Vec::new();
                std::fs::File::open(&full)?
                    .take(max_file as u64)
                    .read_to_end(&mut buf)?;
                fs.file(&rel, buf);
            }
        }
        Ok(fs)
    }

    /// Removes whatever is at `path` (without following a final link); `true` if
    /// something was there.
    pub fn remove(&mut self, path: &str) -> bool {
        let comps = components(path);
        let Some((last, dirs)) = comps.split_last() else {
            return false;
        };
        let mut cur = &mut self.root;
        for c in dirs {
            match cur.get_mut(*c) {
                Some(Entry::Dir(d)) => cur = d,
                _ => return false,
            }
        }
        cur.remove(*last).is_some()
    }

    fn put(&mut self, path: &str, e: Entry) {
        let comps = components(path);
        let Some((last, dirs)) = comps.split_last() else {
            return;
        };
        let mut cur = &mut self.root;
        for c in dirs {
            let slot = cur
                .entry((*c).to_owned())
                .or_insert_with(|| Entry::Dir(BTreeMap::new()));
            if !matches!(slot, Entry::Dir(_)) {
                *slot = Entry::Dir(BTreeMap::new());
            }
            let Entry::Dir(d) = slot else { return };
            cur = d;
        }
        cur.insert((*last).to_owned(), e);
    }

    /// Resolves `path` to a canonical list of components, following links in every
    /// component (and in the last one if `follow`).
    fn resolve(&self, path: &str, follow: bool) -> Result<(Vec<String>, &Entry), FsError> {
        let mut hops = 0;
        let mut done: Vec<String> = Vec::new();
        let mut todo: Vec<String> = components(path)
            .iter()
            .rev()
            .map(|s| (*s).to_owned())
            .collect();
        let root = RootEntry(&self.root);
        while let Some(c) = todo.pop() {
            if c == "." {
                continue;
            }
            if c == ".." {
                done.pop();
                continue;
            }
            let parent = self.lookup(&done).ok_or(FsError::NotFound)?;
            let dir = match parent {
                Lookup::Root => root.0,
                Lookup::Entry(Entry::Dir(d)) => d,
                Lookup::Entry(_) => return Err(FsError::NotDir),
            };
            let Some(entry) = dir.get(&c) else {
                return Err(FsError::NotFound);
            };
            match entry {
                Entry::Link(target) if follow || !todo.is_empty() => {
                    hops += 1;
                    if hops > Self::MAX_HOPS {
                        return Err(FsError::Loop);
                    }
                    if target.starts_with('/') {
                        done.clear();
                    }
                    for t in components(target).iter().rev() {
                        todo.push((*t).to_owned());
                    }
                }
                _ => done.push(c),
            }
        }
        match self.lookup(&done) {
            Some(Lookup::Entry(e)) => Ok((done, e)),
            Some(Lookup::Root) => Ok((done, &ROOT_DIR)),
            None => Err(FsError::NotFound),
        }
    }

    fn lookup(&self, comps: &[String]) -> Option<Lookup<'_>> {
        let mut cur = &self.root;
        let Some((last, dirs)) = comps.split_last() else {
            return Some(Lookup::Root);
        };
        for c in dirs {
            match cur.get(c)? {
                Entry::Dir(d) => cur = d,
                _ => return None,
            }
        }
        cur.get(last).map(Lookup::Entry)
    }
}

/// The root as a directory entry, for [`MemFs::resolve`]'s result on `""`.
static ROOT_DIR: Entry = Entry::Dir(BTreeMap::new());

struct RootEntry<'a>(&'a BTreeMap<String, Entry>);

enum Lookup<'a> {
    Root,
    Entry(&'a Entry),
}

fn components(path: &str) -> Vec<&str> {
    path.split('/').filter(|c| !c.is_empty()).collect()
}

impl SysFs for MemFs {
    fn read_to_string(&self, path: &str, cap: usize) -> Result<String, FsError> {
        match self.resolve(path, true)?.1 {
            Entry::File(b) if b.len() > cap => Err(FsError::TooLarge { limit: cap }),
            Entry::File(b) => String::from_utf8(b.clone()).map_err(|_| FsError::NotUtf8),
            Entry::Dir(_) => Err(FsError::IsDir),
            Entry::Link(_) => Err(FsError::Loop),
        }
    }

    fn read_link(&self, path: &str, cap: usize) -> Result<String, FsError> {
        match self.resolve(path, false)?.1 {
            Entry::Link(t) if t.len() > cap => Err(FsError::TooLarge { limit: cap }),
            Entry::Link(t) => Ok(t.clone()),
            _ => Err(FsError::NotLink),
        }
    }

    fn read_dir(&self, path: &str, max_entries: usize) -> Result<Vec<String>, FsError> {
        let (comps, e) = self.resolve(path, true)?;
        let d = match (comps.is_empty(), e) {
            (true, _) => &self.root,
            (false, Entry::Dir(d)) => d,
            _ => return Err(FsError::NotDir),
        };
        if d.len() > max_entries {
            return Err(FsError::TooManyEntries { limit: max_entries });
        }
        Ok(d.keys().cloned().collect())
    }

    fn kind(&self, path: &str, follow: bool) -> Result<FileKind, FsError> {
        Ok(match self.resolve(path, follow)?.1 {
            Entry::File(_) => FileKind::File,
            Entry::Dir(_) => FileKind::Dir,
            Entry::Link(_) => FileKind::Symlink,
        })
    }

    fn display(&self, path: &str) -> String {
        format!("/{}", components(path).join("/"))
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
    fn memfs_follows_links_and_reports_loops() {
        let mut fs = MemFs::new();
        fs.file("a/b/f", "x");
        fs.symlink("l", "a/b");
        fs.symlink("abs", "/a/b/f");
        fs.symlink("up", "../../../a/b/f");
        fs.symlink("loop1", "loop2");
        fs.symlink("loop2", "loop1");
        fs.symlink("dangling", "nowhere");
        assert_eq!(fs.read_to_string("l/f", 8).unwrap(), "x");
        assert_eq!(fs.read_to_string("abs", 8).unwrap(), "x");
        assert_eq!(fs.read_to_string("up", 8).unwrap(), "x");
        assert_eq!(fs.read_to_string("loop1", 8), Err(FsError::Loop));
        assert_eq!(fs.read_to_string("dangling", 8), Err(FsError::NotFound));
        assert_eq!(fs.kind("dangling", false), Ok(FileKind::Symlink));
        assert_eq!(fs.read_to_string("a", 8), Err(FsError::IsDir));
        assert_eq!(fs.read_to_string("a/b/f/g", 8), Err(FsError::NotDir));
        assert_eq!(fs.read_link("l", 8).unwrap(), "a/b");
        assert_eq!(fs.read_link("l", 2), Err(FsError::TooLarge { limit: 2 }));
        assert_eq!(fs.read_link("a", 8), Err(FsError::NotLink));
        assert_eq!(fs.read_dir("l", 8).unwrap(), vec!["f".to_owned()]);
        assert_eq!(fs.read_dir("", 10).unwrap().len(), 7);
        assert_eq!(
            fs.read_dir("", 3),
            Err(FsError::TooManyEntries { limit: 3 })
        );
        fs.file("big", vec![b'x'; 100]);
        assert_eq!(
            fs.read_to_string("big", 99),
            Err(FsError::TooLarge { limit: 99 })
        );
        assert!(fs.remove("big"));
        assert_eq!(fs.display("sys/x"), "/sys/x");
    }

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
