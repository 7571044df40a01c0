//! The scanner: reads the tree through a [`SysFs`] and hands what it finds to a
//! [`TopologyBuilder`]. The processor side is in `cpu.rs`, the PCI tree in `pci.rs`,
//! OS devices in `osdev.rs`; this file holds the shared reading helpers and the order
//! of the passes.

use std::path::Path;

use pmix_core::{CpuSet, NodeId, Topology, TopologyBuilder};

use crate::error::{ScanError, Warning};
use crate::fs::{FileKind, FsError, ReadFailure, RealFs, SysFs, components};

/// Bounds on what one scan reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest file read, in bytes (64 KiB). sysfs attributes are at most a page;
    /// a longer file is an error (or a warning) naming it.
    pub max_file_bytes: usize,
    /// The most entries read from one directory (65 536); more is an error naming it.
    pub max_dir_entries: usize,
    /// The most PCI bridges above one function (64); a deeper link is skipped with a
    /// warning.
    pub max_pci_depth: usize,
    /// The longest symbolic-link target parsed, in bytes (4096, Linux's `PATH_MAX`).
    pub max_link_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 64 * 1024,
            max_dir_entries: 65_536,
            max_pci_depth: 64,
            max_link_len: 4096,
        }
    }
}

/// A scan's result: the topology and what was skipped on the way.
#[derive(Clone, Debug)]
pub struct Scan {
    /// The topology.
    pub topology: Topology,
    /// Everything skipped or worked around, in the order met.
    pub warnings: Vec<Warning>,
}

/// Scans a sysfs tree read through any [`SysFs`].
///
/// ```
/// use pmix_sysfs::{MemFs, Scanner};
/// let mut fs = MemFs::new();
/// fs.file("sys/devices/system/cpu/online", "0-3\n");
/// let scan = Scanner::new(&fs).scan().unwrap();
/// assert_eq!(scan.topology.machine_cpus().len(), 4);
/// assert!(scan.warnings.is_empty());
/// ```
#[derive(Clone, Debug)]
pub struct Scanner<F> {
    fs: F,
    limits: Limits,
}

impl<F: SysFs> Scanner<F> {
    /// A scanner over `fs` with the default [`Limits`].
    pub fn new(fs: F) -> Self {
        Scanner {
            fs,
            limits: Limits::default(),
        }
    }

    /// The same scanner with other limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Scans the tree.
    ///
    /// # Errors
    /// A [`ScanError`] naming the file at fault when a file the topology depends on
    /// cannot be read or makes no sense, or when the tree has no cpus; see the crate
    /// documentation for which files are errors and which are warnings.
    pub fn scan(&self) -> Result<Scan, ScanError> {
        let mut cx = Ctx {
            fs: &self.fs,
            limits: self.limits,
            warnings: Vec::new(),
        };
        let procs = cx.processors()?;
        let mut b = TopologyBuilder::new(procs.machine.clone());
        let placed = procs.place(&mut b);
        let pci = cx.pci_tree(&placed, &mut b)?;
        cx.os_devices(&placed, &pci, &mut b)?;
        if let Some(h) = cx.hostname() {
            b.hostname(h);
        }
        let topology = b.build()?;
        Ok(Scan {
            topology,
            warnings: cx.warnings,
        })
    }
}

/// Scans the Linux sysfs tree under `root` (`/` for this machine).
///
/// # Errors
/// As [`Scanner::scan`]: a [`ScanError`] naming the file at fault.
pub fn scan(root: impl AsRef<Path>) -> Result<Topology, ScanError> {
    scan_with_warnings(root).map(|s| s.topology)
}

/// Scans the Linux sysfs tree under `root`, returning the warnings too.
///
/// # Errors
/// As [`Scanner::scan`]: a [`ScanError`] naming the file at fault.
pub fn scan_with_warnings(root: impl AsRef<Path>) -> Result<Scan, ScanError> {
    Scanner::new(RealFs::new(root.as_ref())).scan()
}

/// Where the processor objects went in the builder, for attaching I/O.
pub(crate) struct Placed {
    pub(crate) machine: CpuSet,
    pub(crate) machine_node: NodeId,
    /// (cpus, node) of every package.
    pub(crate) packages: Vec<(CpuSet, NodeId)>,
    /// (OS index, cpus, node) of every NUMA node, by index.
    pub(crate) numa: Vec<(u32, CpuSet, NodeId)>,
}

impl Placed {
    /// The deepest processor object an I/O object with locality `cpus` hangs under: a
    /// NUMA node with exactly those cpus, else the package holding them, else the
    /// machine.
    pub(crate) fn attach_point(&self, cpus: Option<&CpuSet>) -> NodeId {
        let Some(cpus) = cpus else {
            return self.machine_node;
        };
        if let Some((_, _, n)) = self.numa.iter().find(|(_, c, _)| c == cpus) {
            return *n;
        }
        if let Some((_, n)) = self.packages.iter().find(|(c, _)| cpus.is_subset(c)) {
            return *n;
        }
        self.machine_node
    }

    /// The cpus of NUMA node `index`, if it exists.
    pub(crate) fn numa_cpus(&self, index: u32) -> Option<&CpuSet> {
        self.numa
            .iter()
            .find(|(i, _, _)| *i == index)
            .map(|(_, c, _)| c)
    }
}

/// One scan in progress.
pub(crate) struct Ctx<'a, F: SysFs> {
    pub(crate) fs: &'a F,
    pub(crate) limits: Limits,
    pub(crate) warnings: Vec<Warning>,
}

impl<F: SysFs> Ctx<'_, F> {
    pub(crate) fn warn(&mut self, path: &str, message: impl Into<String>) {
        self.warnings.push(Warning {
            path: self.fs.display(path),
            message: message.into(),
        });
    }

    pub(crate) fn read_error(&self, path: &str, error: FsError) -> ScanError {
        ScanError::Read {
            path: self.fs.display(path),
            error,
        }
    }

    pub(crate) fn malformed(
        &self,
        path: &str,
        value: &str,
        problem: impl Into<String>,
    ) -> ScanError {
        ScanError::malformed(self.fs.display(path), value, problem)
    }

    /// Reads a file the topology depends on: `None` when it is absent (a dangling link
    /// counts as absent, with a warning), an error when it cannot be read.
    pub(crate) fn read_opt(&mut self, path: &str) -> Result<Option<String>, ScanError> {
        match self
            .fs
            .read_noting_dangling(path, self.limits.max_file_bytes)
        {
            Ok(s) => Ok(Some(s)),
            Err(ReadFailure {
                error: FsError::NotFound,
                dangling_link,
            }) => {
                if dangling_link {
                    self.warn_dangling(path);
                }
                Ok(None)
            }
            Err(f) => Err(self.read_error(path, f.error)),
        }
    }

    /// Reads an optional attribute: problems become warnings and `None`.
    pub(crate) fn read_opt_warn(&mut self, path: &str) -> Option<String> {
        match self
            .fs
            .read_noting_dangling(path, self.limits.max_file_bytes)
        {
            Ok(s) => Some(s),
            Err(ReadFailure {
                error: FsError::NotFound,
                dangling_link,
            }) => {
                if dangling_link {
                    self.warn_dangling(path);
                }
                None
            }
            Err(f) => {
                self.warn(path, format!("{}: ignored", f.error));
                None
            }
        }
    }

    fn note_dangling(&mut self, path: &str) {
        if self.fs.kind(path, false) == Ok(FileKind::Symlink) {
            self.warn_dangling(path);
        }
    }

    fn warn_dangling(&mut self, path: &str) {
        self.warn(path, "dangling symbolic link: treated as absent");
    }

    /// Lists a directory: `None` when it is absent, an error when it cannot be read.
    pub(crate) fn list(&mut self, path: &str) -> Result<Option<Vec<String>>, ScanError> {
        match self.fs.read_dir(path, self.limits.max_dir_entries) {
            Ok(v) => Ok(Some(v)),
            Err(FsError::NotFound) => {
                self.note_dangling(path);
                Ok(None)
            }
            Err(e) => Err(self.read_error(path, e)),
        }
    }

    /// Parses a decimal integer file (`numa_node`, `physical_package_id`).
    pub(crate) fn parse_int(&self, path: &str, s: &str) -> Result<i64, ScanError> {
        s.trim()
            .parse::<i64>()
            .map_err(|_| self.malformed(path, s, "is not an integer"))
    }

    /// Parses a cpu list file (`cpulist`, `local_cpulist`, `online`).
    pub(crate) fn parse_list(&self, path: &str, s: &str) -> Result<CpuSet, ScanError> {
        CpuSet::parse_list(s.trim_end_matches('\n'))
            .map_err(|e| self.malformed(path, s, format!("is not a cpu list ({e})")))
    }

    /// Parses a cpu mask file (`local_cpus`).
    pub(crate) fn parse_mask(&self, path: &str, s: &str) -> Result<CpuSet, ScanError> {
        CpuSet::parse_hex_mask(s.trim_end_matches('\n'))
            .map_err(|e| self.malformed(path, s, format!("is not a cpu mask ({e})")))
    }

    /// The host name: the last `HostName: ` line of `proc/hwloc-nofile-info` (what
    /// hwloc-gather-topology records in a captured tree, and all libhwloc reads for a
    /// host name under an `HWLOC_FSROOT` that is not `/`), else
    /// `proc/sys/kernel/hostname` (the kernel's, which is what libhwloc's `uname()`
    /// gives on the live machine, where procfs holds no `hwloc-nofile-info`). `None`
    /// when neither gives one; an unreadable file or an unusable name is a warning
    /// naming the file (so is a `hwloc-nofile-info` without a `HostName: ` line), and
    /// the next source is tried.
    fn hostname(&mut self) -> Option<String> {
        const NOFILE: &str = "proc/hwloc-nofile-info";
        const KERNEL: &str = "proc/sys/kernel/hostname";
        if let Some(text) = self.read_opt_warn(NOFILE) {
            // hwloc reads every line and keeps the last `HostName: ` one.
            let line = text
                .lines()
                .filter_map(|l| l.strip_prefix("HostName: "))
                .next_back();
            match line {
                Some(h) => {
                    if let Some(h) = self.checked_hostname(NOFILE, h, h) {
                        return Some(h);
                    }
                }
                // hwloc writes the line whenever it knows the name.
                None => self.warn(NOFILE, format!("no \"HostName: \" line: using {KERNEL}")),
            }
        }
        let raw = self.read_opt_warn(KERNEL)?;
        self.checked_hostname(KERNEL, raw.trim_end_matches('\n'), &raw)
    }

    /// `name` if it can be a host name (not empty, at most
    /// [`pmix_core::MAX_NAME_LEN`] bytes, no whitespace or control character); else a
    /// warning quoting `raw` at `path`, and `None`.
    fn checked_hostname(&mut self, path: &str, name: &str, raw: &str) -> Option<String> {
        if name.is_empty()
            || name.len() > pmix_core::MAX_NAME_LEN
            || name.chars().any(|c| c.is_control() || c.is_whitespace())
        {
            self.warn(
                path,
                format!(
                    "{:?} is not a host name: ignored",
                    crate::error::shorten(raw)
                ),
            );
            return None;
        }
        Some(name.to_owned())
    }
}

/// Resolves a symbolic-link target against the directory holding the link, inside the
/// root: `..` never climbs above it, an absolute target starts at it. The components
/// of `dir` are taken as they are; those of `target` are interpreted (`.`, `..`).
pub(crate) fn resolve_link(dir: &str, target: &str) -> String {
    let mut out = String::with_capacity(dir.len() + target.len() + 1);
    let push = |out: &mut String, c: &str| {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(c);
    };
    if !target.starts_with('/') {
        for c in components(dir) {
            push(&mut out, c);
        }
    }
    for c in components(target) {
        match c {
            "." => {}
            ".." => {
                // Drop the last component (never empty: components are not).
                let cut = out.rfind('/').unwrap_or(0);
                out.truncate(cut);
            }
            c => push(&mut out, c),
        }
    }
    out
}

/// `dir/name`, for the paths the scanner asks about.
pub(crate) fn join(dir: &str, name: &str) -> String {
    let mut p = String::with_capacity(dir.len() + 1 + name.len());
    p.push_str(dir);
    p.push('/');
    p.push_str(name);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_resolve_inside_the_root() {
        assert_eq!(
            resolve_link(
                "sys/bus/pci/devices",
                "../../../devices/pci0000:00/0000:00:01.0"
            ),
            "sys/devices/pci0000:00/0000:00:01.0"
        );
        assert_eq!(resolve_link("sys/block", "../../../../../../x"), "x");
        assert_eq!(
            resolve_link("sys/class/net", "/sys/devices/virtual/net/lo"),
            "sys/devices/virtual/net/lo"
        );
        assert_eq!(resolve_link("a", "./b//c/"), "a/b/c");
        assert_eq!(resolve_link("a/../b", ".."), "a/..");
    }

    /// `resolve_link` as it was: components collected, then joined.
    fn resolve_link_by_joining(dir: &str, target: &str) -> String {
        let mut out: Vec<&str> = if target.starts_with('/') {
            Vec::new()
        } else {
            dir.split('/').filter(|c| !c.is_empty()).collect()
        };
        for c in target.split('/') {
            match c {
                "" | "." => {}
                ".." => {
                    out.pop();
                }
                c => out.push(c),
            }
        }
        out.join("/")
    }

    #[test]
    fn links_resolve_as_they_did() {
        const PARTS: [&str; 8] = ["", ".", "..", "a", "bc", "...", "é", ".a"];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut path = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let n = (state % 7) as usize;
            (0..n)
                .map(|i| PARTS[((state >> (8 + 3 * i)) % 8) as usize])
                .collect::<Vec<_>>()
                .join("/")
        };
        for _ in 0..50_000 {
            let (dir, target) = (path(), path());
            for target in [target.clone(), format!("/{target}")] {
                assert_eq!(
                    resolve_link(&dir, &target),
                    resolve_link_by_joining(&dir, &target),
                    "{dir:?} {target:?}"
                );
            }
        }
    }
}
