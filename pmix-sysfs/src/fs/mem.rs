//! [`MemFs`]: an in-memory filesystem tree, for tests and fuzzing.

use std::cmp::Ordering;
use std::fmt;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use super::{FileKind, FsError, ReadFailure, SysFs};

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
///
/// Directories are shared between clones until one of them changes (copy on write),
/// so a clone costs one reference count, and an edit copies the directories on its
/// path only.
#[derive(Clone, Debug, Default)]
pub struct MemFs {
    root: Arc<Dir>,
}

#[derive(Clone, Debug)]
enum Entry {
    File(Vec<u8>),
    Dir(Arc<Dir>),
    Link(String),
}

/// A directory's entries, sorted by name as `str` orders them (byte by byte).
///
/// A sorted vector rather than a map: directories are small, a lookup is a binary
/// search, a listing is already sorted.
#[derive(Clone, Default)]
struct Dir(Vec<(String, Entry)>);

// Names and paths are compared and searched eight bytes at a time (big-endian words
// order as their bytes do). The fuzzer is why: `str`'s `Ord` calls `memcmp`, which
// libFuzzer intercepts, recording the operands of every call that differs (a fifth of
// the sysfs target's time when lookups went through a `BTreeMap<String, _>`), and it
// counts every turn of a loop compiled in this crate, so a loop over bytes costs it
// a counter update per byte.

/// The eight bytes of `b` from `i` as a word (`i + 8 <= b.len()`), in the order
/// `from` reads them.
fn word(b: &[u8], i: usize, from: fn([u8; 8]) -> u64) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&b[i..i + 8]);
    from(w)
}

/// `a.cmp(b)`, eight bytes at a time.
fn cmp_names(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len().min(b.len());
    if n < 8 {
        return a.iter().cmp(b.iter());
    }
    let mut i = 0;
    loop {
        // The last word overlaps the one before: its first bytes are equal, so the
        // words still order as the bytes after them do.
        let at = i.min(n - 8);
        let (x, y) = (
            word(a, at, u64::from_be_bytes),
            word(b, at, u64::from_be_bytes),
        );
        if x != y {
            return x.cmp(&y);
        }
        if at == n - 8 {
            return a.len().cmp(&b.len());
        }
        i += 8;
    }
}

/// The index of the first `/` in `b`, eight bytes at a time.
fn find_slash(b: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const SLASHES: u64 = u64::from_ne_bytes([b'/'; 8]);
    if b.len() < 8 {
        return b.iter().position(|&c| c == b'/');
    }
    let mut i = 0;
    loop {
        let at = i.min(b.len() - 8);
        // A zero byte of `w` is a slash of `b`; the lowest byte flagged in `z` is
        // the first zero byte (flags above it may be false, from the borrow).
        let w = word(b, at, u64::from_le_bytes) ^ SLASHES;
        let z = w.wrapping_sub(ONES) & !w & HIGHS;
        if z != 0 {
            return Some(at + (z.trailing_zeros() / 8) as usize);
        }
        if at == b.len() - 8 {
            return None;
        }
        i += 8;
    }
}

impl Dir {
    /// The index of `name`, or where it would go.
    fn find(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| cmp_names(k, name))
    }

    fn get(&self, name: &str) -> Option<&Entry> {
        self.find(name).ok().map(|i| &self.0[i].1)
    }

    fn get_mut(&mut self, name: &str) -> Option<&mut Entry> {
        self.find(name).ok().map(|i| &mut self.0[i].1)
    }

    /// The directory `name`, created (replacing whatever else is there) if need be,
    /// and unshared.
    fn subdir(&mut self, name: &str) -> &mut Dir {
        let i = match self.find(name) {
            Ok(i) => {
                if !matches!(self.0[i].1, Entry::Dir(_)) {
                    self.0[i].1 = Entry::Dir(Arc::default());
                }
                i
            }
            Err(i) => {
                self.0
                    .insert(i, (name.to_owned(), Entry::Dir(Arc::default())));
                i
            }
        };
        match &mut self.0[i].1 {
            Entry::Dir(d) => Arc::make_mut(d),
            _ => unreachable!("made a directory above"),
        }
    }

    /// Puts `e` at `name`, replacing whatever is there.
    fn insert(&mut self, name: &str, e: Entry) {
        match self.find(name) {
            Ok(i) => self.0[i].1 = e,
            Err(i) => self.0.insert(i, (name.to_owned(), e)),
        }
    }

    /// Removes `name`; `true` if it was there.
    fn remove(&mut self, name: &str) -> bool {
        self.find(name).map(|i| self.0.remove(i)).is_ok()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }
}

impl fmt::Debug for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, e)| (k, e)))
            .finish()
    }
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
        self.put(path, Entry::Dir(Arc::default()));
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
        let mut done = Chain::default();
        self.walk(path, true, &mut done).ok()?;
        let names: Vec<&str> = done.names().collect();
        Some(names.join("/"))
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
        let comps: Vec<&str> = components(path).collect();
        let Some((last, dirs)) = comps.split_last() else {
            return false;
        };
        let mut cur = Arc::make_mut(&mut self.root);
        for c in dirs {
            match cur.get_mut(c) {
                Some(Entry::Dir(d)) => cur = Arc::make_mut(d),
                _ => return false,
            }
        }
        cur.remove(last)
    }

    fn put(&mut self, path: &str, e: Entry) {
        let comps: Vec<&str> = components(path).collect();
        let Some((last, dirs)) = comps.split_last() else {
            return;
        };
        let mut cur = Arc::make_mut(&mut self.root);
        for c in dirs {
            cur = cur.subdir(c);
        }
        cur.insert(last, e);
    }

    /// Walks `path` from the root, following symbolic links in every component (and
    /// in the last one if `follow`), and returns what it ends at. `done` receives the
    /// canonical path walked, each component with its entry, from the root down (it
    /// is cleared first).
    ///
    /// Each component is looked up in the directory of the one before it, which
    /// `done` holds: a link restarts the walk at its target's first component (at the
    /// root for an absolute target), `..` steps back to the entry before (the root
    /// stays the root) and `.` stays. Component names are borrowed from `path` and the
    /// link targets, so the walk allocates nothing (but `done` past
    /// [`Chain::INLINE`] components).
    fn walk<'a>(
        &'a self,
        path: &'a str,
        follow: bool,
        done: &mut Chain<'a>,
    ) -> Result<Node<'a>, Miss> {
        done.clear();
        let mut hops = 0;
        // The path suffix being walked, and the suffixes a link interrupted (each
        // with a component left), innermost last: at most one a link followed.
        let mut rest = path;
        let mut pending: [&'a str; Self::MAX_HOPS] = [""; Self::MAX_HOPS];
        let mut npending = 0;
        // Whether the walk followed a link as the last component of `path` (a miss
        // after that is the target's: the link dangles).
        let mut through_last_link = false;
        loop {
            let Some(c) = next_component(&mut rest) else {
                if npending == 0 {
                    break;
                }
                npending -= 1;
                rest = pending[npending];
                continue;
            };
            if c == "." {
                continue;
            }
            if c == ".." {
                done.pop();
                continue;
            }
            let dir = match done.last() {
                None => &self.root,
                Some((_, Entry::Dir(d))) => d,
                Some(_) => return Err(Miss::new(FsError::NotDir, through_last_link)),
            };
            let Some(entry) = dir.get(c) else {
                return Err(Miss::new(FsError::NotFound, through_last_link));
            };
            let last = npending == 0 && !has_component(rest);
            match entry {
                Entry::Link(target) if follow || !last => {
                    hops += 1;
                    if hops > Self::MAX_HOPS {
                        return Err(Miss::new(FsError::Loop, through_last_link));
                    }
                    if last {
                        through_last_link = true;
                    } else if has_component(rest) {
                        // `hops` links followed so far, each pushing at most one.
                        pending[npending] = rest;
                        npending += 1;
                    }
                    if target.starts_with('/') {
                        done.clear();
                    }
                    rest = target;
                }
                _ => done.push((c, entry)),
            }
        }
        Ok(match done.last() {
            None => Node::Dir(&self.root),
            Some((_, e)) => Node::of(e),
        })
    }

    /// [`MemFs::walk`] when the path walked is not wanted.
    fn resolve<'a>(&'a self, path: &'a str, follow: bool) -> Result<Node<'a>, Miss> {
        self.walk(path, follow, &mut Chain::default())
    }
}

/// The canonical path a walk has taken, each component with its entry, from the
/// root down: the first [`Chain::INLINE`] in place (sysfs paths are rarely deeper,
/// and a walk then allocates nothing), any deeper ones on the heap.
#[derive(Default)]
struct Chain<'a> {
    inline: [Option<(&'a str, &'a Entry)>; Chain::INLINE],
    len: usize,
    deeper: Vec<(&'a str, &'a Entry)>,
}

impl<'a> Chain<'a> {
    const INLINE: usize = 16;

    fn clear(&mut self) {
        self.len = 0;
        self.deeper.clear();
    }

    fn push(&mut self, step: (&'a str, &'a Entry)) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = Some(step),
            None => self.deeper.push(step),
        }
        self.len += 1;
    }

    fn pop(&mut self) {
        if self.len > Self::INLINE {
            self.deeper.pop();
        }
        self.len = self.len.saturating_sub(1);
    }

    fn last(&self) -> Option<(&'a str, &'a Entry)> {
        let i = self.len.checked_sub(1)?;
        match self.inline.get(i) {
            Some(step) => *step,
            None => self.deeper.last().copied(),
        }
    }

    fn names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.inline
            .iter()
            .take(self.len)
            .flatten()
            .chain(&self.deeper)
            .map(|(c, _)| *c)
    }
}

/// What a walk ended at: the root or an entry.
enum Node<'a> {
    Dir(&'a Dir),
    File(&'a [u8]),
    Link(&'a str),
}

impl<'a> Node<'a> {
    fn of(e: &'a Entry) -> Self {
        match e {
            Entry::Dir(d) => Node::Dir(d),
            Entry::File(b) => Node::File(b),
            Entry::Link(t) => Node::Link(t),
        }
    }
}

/// Why a walk failed, and whether it had followed the link `path` names.
struct Miss {
    error: FsError,
    dangling: bool,
}

impl Miss {
    fn new(error: FsError, through_last_link: bool) -> Self {
        Miss {
            error,
            dangling: through_last_link,
        }
    }
}

/// Takes the next non-empty component off the front of `rest`.
fn next_component<'a>(rest: &mut &'a str) -> Option<&'a str> {
    let mut r = *rest;
    while r.as_bytes().first() == Some(&b'/') {
        r = &r[1..];
    }
    if r.is_empty() {
        *rest = r;
        return None;
    }
    let (c, tail) = r.split_at(find_slash(r.as_bytes()).unwrap_or(r.len()));
    *rest = tail;
    Some(c)
}

/// The non-empty components of `path`.
pub(crate) fn components(path: &str) -> impl Iterator<Item = &str> {
    let mut rest = path;
    std::iter::from_fn(move || next_component(&mut rest))
}

/// Whether `rest` holds another non-empty component.
fn has_component(rest: &str) -> bool {
    rest.bytes().any(|b| b != b'/')
}

impl SysFs for MemFs {
    fn read_to_string(&self, path: &str, cap: usize) -> Result<String, FsError> {
        self.read_noting_dangling(path, cap).map_err(|f| f.error)
    }

    fn read_noting_dangling(&self, path: &str, cap: usize) -> Result<String, ReadFailure> {
        let fail = |error| ReadFailure {
            error,
            dangling_link: false,
        };
        match self.resolve(path, true) {
            Ok(Node::File(b)) if b.len() > cap => Err(fail(FsError::TooLarge { limit: cap })),
            Ok(Node::File(b)) => String::from_utf8(b.to_vec()).map_err(|_| fail(FsError::NotUtf8)),
            Ok(Node::Dir(_)) => Err(fail(FsError::IsDir)),
            Ok(Node::Link(_)) => Err(fail(FsError::Loop)),
            Err(m) => Err(ReadFailure {
                dangling_link: m.dangling && m.error == FsError::NotFound,
                error: m.error,
            }),
        }
    }

    fn read_link(&self, path: &str, cap: usize) -> Result<String, FsError> {
        match self.resolve(path, false).map_err(|m| m.error)? {
            Node::Link(t) if t.len() > cap => Err(FsError::TooLarge { limit: cap }),
            Node::Link(t) => Ok(t.to_owned()),
            _ => Err(FsError::NotLink),
        }
    }

    fn read_dir(&self, path: &str, max_entries: usize) -> Result<Vec<String>, FsError> {
        let Node::Dir(d) = self.resolve(path, true).map_err(|m| m.error)? else {
            return Err(FsError::NotDir);
        };
        if d.len() > max_entries {
            return Err(FsError::TooManyEntries { limit: max_entries });
        }
        Ok(d.names().map(str::to_owned).collect())
    }

    fn kind(&self, path: &str, follow: bool) -> Result<FileKind, FsError> {
        Ok(match self.resolve(path, follow).map_err(|m| m.error)? {
            Node::File(_) => FileKind::File,
            Node::Dir(_) => FileKind::Dir,
            Node::Link(_) => FileKind::Symlink,
        })
    }

    fn display(&self, path: &str) -> String {
        let mut out = String::with_capacity(path.len() + 1);
        for c in path.split('/').filter(|c| !c.is_empty()) {
            out.push('/');
            out.push_str(c);
        }
        if out.is_empty() {
            out.push('/');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

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

    /// The walk as it was before it kept the entries it had walked: every component
    /// looked up again from the root through the canonical path so far, as owned
    /// strings. [`walk_agrees_with_the_walk_from_the_root`] checks the two agree.
    fn resolve_from_root<'a>(
        fs: &'a MemFs,
        path: &str,
        follow: bool,
    ) -> Result<(Vec<String>, Option<&'a Entry>), FsError> {
        fn lookup<'a>(fs: &'a MemFs, comps: &[String]) -> Option<Option<&'a Entry>> {
            let Some((last, dirs)) = comps.split_last() else {
                return Some(None);
            };
            let mut cur = &fs.root;
            for c in dirs {
                match cur.get(c)? {
                    Entry::Dir(d) => cur = d,
                    _ => return None,
                }
            }
            cur.get(last).map(Some)
        }
        let mut hops = 0;
        let mut done: Vec<String> = Vec::new();
        let split = |p: &str| -> Vec<String> {
            p.split('/')
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let mut todo: Vec<String> = split(path).into_iter().rev().collect();
        while let Some(c) = todo.pop() {
            if c == "." {
                continue;
            }
            if c == ".." {
                done.pop();
                continue;
            }
            let dir = match lookup(fs, &done).ok_or(FsError::NotFound)? {
                None => &fs.root,
                Some(Entry::Dir(d)) => d,
                Some(_) => return Err(FsError::NotDir),
            };
            let Some(entry) = dir.get(&c) else {
                return Err(FsError::NotFound);
            };
            match entry {
                Entry::Link(target) if follow || !todo.is_empty() => {
                    hops += 1;
                    if hops > MemFs::MAX_HOPS {
                        return Err(FsError::Loop);
                    }
                    if target.starts_with('/') {
                        done.clear();
                    }
                    for t in split(target).into_iter().rev() {
                        todo.push(t);
                    }
                }
                _ => done.push(c),
            }
        }
        let e = lookup(fs, &done).ok_or(FsError::NotFound)?;
        Ok((done, e))
    }

    #[test]
    fn names_compare_and_split_as_strs_do() {
        // Names of up to 30 bytes (around the word size and its multiples), from
        // pieces that share prefixes, hold slashes, zero bytes and wide characters.
        const PARTS: [&str; 9] = [
            "", "a", "b", "/", "0000:00:", "\u{0}", "é", "zzzzzzz", "\u{ff}",
        ];
        let mut rng = Rng(7);
        let mut name = || {
            (0..rng.below(7))
                .map(|_| PARTS[rng.below(PARTS.len())])
                .collect::<String>()
        };
        for _ in 0..100_000 {
            let (a, b) = (name(), name());
            assert_eq!(cmp_names(&a, &b), a.cmp(&b), "{a:?} {b:?}");
            assert_eq!(cmp_names(&a, &a), Ordering::Equal);
            assert_eq!(find_slash(a.as_bytes()), a.find('/'), "{a:?}");
            let mut rest = a.as_str();
            let parts: Vec<&str> = std::iter::from_fn(|| next_component(&mut rest)).collect();
            let want: Vec<&str> = a.split('/').filter(|c| !c.is_empty()).collect();
            assert_eq!(parts, want, "{a:?}");
        }
    }

    /// A small deterministic generator (xorshift64*), so the test needs no crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        /// A path over a small vocabulary, with `.`, `..`, empty components, and
        /// leading and trailing slashes, so that walks meet one another's entries.
        fn path(&mut self) -> String {
            const NAMES: [&str; 8] = ["a", "b", "c", "l", "m", ".", "..", ""];
            let mut p = String::new();
            if self.below(5) == 0 {
                p.push('/');
            }
            // Now and then a deep one, deeper than a walk keeps in place.
            let n = if self.below(20) == 0 {
                Chain::INLINE + self.below(24)
            } else {
                self.below(6)
            };
            for i in 0..n {
                if i > 0 {
                    p.push('/');
                }
                p.push_str(NAMES[self.below(NAMES.len())]);
            }
            if self.below(6) == 0 {
                p.push('/');
            }
            p
        }
    }

    #[test]
    fn walk_agrees_with_the_walk_from_the_root() {
        // More trees with PMIX_SYSFS_WALK_TREES=N (the default runs in well under a
        // second in debug builds).
        let trees: usize = std::env::var("PMIX_SYSFS_WALK_TREES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(3000);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut found, mut deep, mut dangling, mut errors) = (0, 0, 0, 0);
        let mut by_error: BTreeMap<String, usize> = BTreeMap::new();
        for _ in 0..trees {
            let mut fs = MemFs::new();
            for _ in 0..rng.below(14) {
                let p = rng.path();
                match rng.below(4) {
                    0 => fs.file(&p, "x"),
                    1 => fs.dir(&p),
                    _ => {
                        let t = rng.path();
                        fs.symlink(&p, &t)
                    }
                };
            }
            // Now and then a deep directory chain, deeper than a walk keeps in
            // place, with a link into it, and walks through it.
            let spine = if rng.below(4) == 0 {
                let n = Chain::INLINE - 2 + rng.below(8);
                let spine: Vec<&str> = (0..n).map(|_| ["a", "b", "l"][rng.below(3)]).collect();
                let spine = spine.join("/");
                let t = rng.path();
                fs.symlink(&format!("{spine}/m"), &t);
                spine
            } else {
                String::new()
            };
            for _ in 0..40 {
                let path = if spine.is_empty() || rng.below(2) == 0 {
                    rng.path()
                } else {
                    format!("{spine}/{}", rng.path())
                };
                for follow in [false, true] {
                    let old = resolve_from_root(&fs, &path, follow);
                    let mut done = Chain::default();
                    let new = fs.walk(&path, follow, &mut done);
                    let ctx = || format!("{fs:?} {path:?} follow={follow}");
                    match (&old, &new) {
                        (Ok((names, e)), Ok(node)) => {
                            found += 1;
                            deep += usize::from(names.len() > Chain::INLINE);
                            let new_names: Vec<&str> = done.names().collect();
                            assert_eq!(names, &new_names, "{}", ctx());
                            let same = match (e, node) {
                                (None, Node::Dir(d)) => std::ptr::eq(*d, &*fs.root),
                                (Some(Entry::Dir(a)), Node::Dir(b)) => std::ptr::eq(&**a, *b),
                                (Some(Entry::File(a)), Node::File(b)) => {
                                    std::ptr::eq(a.as_slice(), *b)
                                }
                                (Some(Entry::Link(a)), Node::Link(b)) => {
                                    std::ptr::eq(a.as_str(), *b)
                                }
                                _ => false,
                            };
                            assert!(same, "{}", ctx());
                        }
                        (Err(a), Err(m)) => {
                            errors += 1;
                            *by_error.entry(format!("{a:?}")).or_default() += 1;
                            assert_eq!(a, &m.error, "{}", ctx());
                            // The read's "dangling" is what `kind` without following
                            // says of the path.
                            let link = matches!(
                                resolve_from_root(&fs, &path, false),
                                Ok((_, Some(Entry::Link(_))))
                            );
                            let read = fs.read_noting_dangling(&path, 8);
                            if follow && m.error == FsError::NotFound {
                                dangling += usize::from(link);
                                assert_eq!(m.dangling, link, "{}", ctx());
                                assert_eq!(
                                    read,
                                    Err(ReadFailure {
                                        error: FsError::NotFound,
                                        dangling_link: link
                                    }),
                                    "{}",
                                    ctx()
                                );
                            }
                        }
                        _ => panic!(
                            "{}: {old:?} / {:?}",
                            ctx(),
                            new.as_ref().err().map(|m| &m.error)
                        ),
                    }
                }
            }
        }
        eprintln!(
            "walks: {found} found ({deep} deep), {errors} failed {by_error:?}, {dangling} dangling"
        );
        // The generator reaches every outcome.
        assert!(
            found > trees && deep > trees / 100 && dangling > trees / 50,
            "{found} {deep} {dangling}"
        );
        for e in ["NotFound", "NotDir", "Loop"] {
            assert!(
                by_error.get(e).is_some_and(|&n| n > trees / 50),
                "{by_error:?}"
            );
        }
    }
}
