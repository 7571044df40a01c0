//! # pmix-testkit
//!
//! Test support shared by the pmix-rs crates (a dev-dependency only, never published):
//!
//! - where the fixtures are ([`data_dir`], [`tarballs`]) and how to unpack a captured
//!   tree into a temporary directory ([`unpack`], [`TempDir::tree_root`]);
//! - a canonical text form of a distance answer ([`answer`]) and the first line where
//!   two such texts differ ([`first_difference`]), so two backends can be compared
//!   line by line;
//! - running libhwloc over a captured tree: hwloc reads `HWLOC_FSROOT` when a topology
//!   is initialised, and setting the environment of a running multi-threaded test is
//!   unsound, so the test binary runs one of its own ignored tests in a child process
//!   with the variables set ([`run_child_test`], [`hwloc_env_file`]) and the child
//!   frames what it prints ([`print_framed`]);
//! - the peers a comparison needs ([`openpmix`], [`valgrind`]) and what a test does
//!   when one is absent ([`peer_absent`]: a notice, or a failure under `CI=true`);
//! - child processes with every wait bounded ([`child`]), C programs compiled and
//!   linked against a library of this build or OpenPMIx ([`cprog`]), and the race
//!   harness of the progress engine's stop rules ([`race`]).
//!
//! It depends on pmix-core only, so every backend crate can use it without a cycle.
//! It is the one place these are derived: a crate's own test support only adds what
//! is its own (pmix-ffi's headers and C sources).

pub mod child;
pub mod counting;
pub mod cprog;
pub mod nodes;
pub mod race;
pub mod timing;

/// A small seeded generator (xorshift64*) for tests that draw inputs: runs are
/// reproducible from the seed they print, and no crate is needed. A seed of 0 stays
/// 0: give a non-zero one.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn bits(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.bits() % n
    }

    /// An index below `n` (`n` > 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use pmix_core::{DeviceDistance, Query, Topology};

/// The repository's `testdata/`: the real topologies the tests and benchmarks read, each
/// folder with its licence and a `SOURCE.txt`. The one place a test finds its fixtures:
/// nothing reads outside the repository.
pub fn data_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata"))
}

/// A file of `testdata/hwloc-xml/`.
pub fn hwloc_xml(name: &str) -> PathBuf {
    data_dir().join("hwloc-xml").join(name)
}

/// Every `.xml` file of `testdata/hwloc-xml/`, sorted.
///
/// # Panics
/// When the folder cannot be read (the fixtures are missing).
pub fn hwloc_xml_files() -> Vec<PathBuf> {
    tarballs("hwloc-xml", ".xml")
        .into_iter()
        .map(|(_, path)| path)
        .collect()
}

/// A file of `testdata/hwloc-linux/` (captured trees and what hwloc 2.9 reports for
/// each).
pub fn hwloc_linux(name: &str) -> PathBuf {
    data_dir().join("hwloc-linux").join(name)
}

/// The files of `testdata/<folder>/` whose names end in `ext`, sorted, each with its
/// name less `ext`.
///
/// # Panics
/// When the folder cannot be read (the fixtures are missing).
pub fn tarballs(folder: &str, ext: &str) -> Vec<(String, PathBuf)> {
    let dir = data_dir().join(folder);
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.strip_suffix(ext)?.to_owned();
            Some((name, p))
        })
        .collect();
    v.sort();
    v
}

/// A temporary directory, removed on drop.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A fresh, empty directory named after `tag`, this process and a counter.
    ///
    /// # Panics
    /// When the directory cannot be created.
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("pmix-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    /// The root of the tree unpacked here: the directory itself when it holds `sys/`
    /// (ghw snapshots), else its one top directory (hwloc's tarballs hold `NAME/`).
    ///
    /// # Panics
    /// When neither is there.
    pub fn tree_root(&self) -> PathBuf {
        if self.0.join("sys").exists() {
            return self.0.clone();
        }
        std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.join("sys").exists())
            .unwrap_or_else(|| panic!("no sys/ under {}", self.0.display()))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Unpacks a tarball (`tar` guesses the compression) into a fresh temporary directory,
/// within [`child::COMMAND_LIMIT`].
///
/// # Panics
/// When `tar` cannot run, fails (with its output) or runs past the limit.
pub fn unpack(tarball: &Path) -> TempDir {
    let t = TempDir::new("tree");
    let out = child::output_within(
        Command::new("tar")
            .arg("xf")
            .arg(tarball)
            .arg("-C")
            .arg(&t.0),
        child::COMMAND_LIMIT,
    );
    assert!(
        out.status.success(),
        "tar failed on {}: {}",
        tarball.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    t
}

/// Runs a query and renders its answer as `osname TYPE pci min max` lines (devices
/// named in `skip` left out), or the error.
pub fn answer(topo: &Topology, q: &Query<'_>, skip: &[&str]) -> String {
    let n = match topo.distances_len(q) {
        Ok(n) => n,
        Err(e) => return format!("error {e:?}\n"),
    };
    let mut out = vec![DeviceDistance::EMPTY; n];
    let mut s = String::new();
    match topo.distances(q, &mut out) {
        Ok(n) => {
            for d in &out[..n] {
                let dev = topo.device(d.device).expect("a reported device exists");
                if skip.contains(&dev.name()) {
                    continue;
                }
                let pci = dev.pci().map_or_else(|| "-".to_owned(), |p| p.to_string());
                let ty = dev.kind().name().unwrap_or("?");
                writeln!(s, "{} {ty} {pci} {} {}", dev.name(), d.mindist, d.maxdist).unwrap();
            }
        }
        Err(e) => writeln!(s, "error {e:?}").unwrap(),
    }
    s
}

/// The first line where two texts differ, for assertion messages.
pub fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  left:  {x}\n  right: {y}", i + 1);
        }
    }
    format!(
        "one text is a prefix of the other ({} vs {} lines)",
        a.lines().count(),
        b.lines().count()
    )
}

/// The variables hwloc's own test suite sets for a captured tree (`NAME.env`:
/// `KEY="value"` and `export KEY` lines); none when the file does not exist.
pub fn hwloc_env_file(path: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().trim_matches('"').to_owned()))
        .collect()
}

/// Prints `text` framed by `marker`, for [`run_child_test`] to find.
pub fn print_framed(marker: &str, text: &str) {
    println!("<<<{marker}\n{text}{marker}>>>");
}

/// Runs the ignored test `test` of the current test binary in a child process with
/// libhwloc reading the captured tree at `root` (`HWLOC_FSROOT`, the Linux component
/// only, no version info) plus `env`, and returns what it printed with
/// [`print_framed`] under `marker`. The child runs within [`child::COMMAND_LIMIT`].
///
/// # Panics
/// When the child fails, runs past the limit or prints no framed text.
pub fn run_child_test(test: &str, root: &Path, env: &[(String, String)], marker: &str) -> String {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args([
        "--exact",
        test,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("HWLOC_FSROOT", root)
    .env("HWLOC_COMPONENTS", "linux,stop")
    .env("HWLOC_DONT_ADD_VERSION_INFO", "1")
    .envs(env.iter().map(|(k, v)| (k, v)));
    let out = child::output_within(&mut cmd, child::COMMAND_LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{test} under {}: {stdout}{}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .split(&format!("<<<{marker}\n"))
        .nth(1)
        .and_then(|r| r.split(&format!("{marker}>>>")).next())
        .unwrap_or_else(|| panic!("{test}: nothing framed by {marker}: {stdout}"))
        .to_owned()
}

/// The calling thread's binding as the kernel reports it (`Cpus_allowed_list` of
/// `/proc/self/status`, a cpu list such as `0-1`): what tests compare the runtime's
/// answer with.
///
/// # Panics
/// When `/proc/self/status` cannot be read or has no such line (not Linux).
pub fn kernel_cpus_allowed_list() -> String {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("a Cpus_allowed_list line")
        .trim()
        .to_owned()
}

/// `true` when this run must not skip a comparison with a peer (OpenPMIx, libhwloc,
/// valgrind): the environment has `CI=true` (or `CI=1`), as `.ci/run` and every CI
/// service set it.
pub fn peers_required() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// What a test does when a peer it compares with is absent: under [`peers_required`]
/// it fails loudly (a skipped comparison in CI is a hidden failure); elsewhere it
/// prints one `NOTICE:` line naming the peer and how to install it, and the caller
/// skips that half of the test.
///
/// `what` names the comparison and the peer; `install` the command that provides it.
///
/// # Panics
/// Under `CI=true`, always: that is its purpose, with a message holding
/// [`CI_FORBIDS_SKIPPING`].
pub fn peer_absent(what: &str, install: &str) {
    if peers_required() {
        panic!("{what}: {CI_FORBIDS_SKIPPING} ({install})");
    }
    println!("NOTICE: {what}: the peer is absent, skipping ({install})");
}

/// What [`peer_absent`]'s failure under `CI=true` says, for tests that prove it fails.
pub const CI_FORBIDS_SKIPPING: &str = "the peer is absent and CI=true forbids skipping";

/// OpenPMIx as `pkg-config` describes it (Debian's `libpmix-dev` installs `pmix.pc`):
/// its header directory and the flags to link a program against it.
#[derive(Clone, Debug)]
pub struct OpenPmix {
    /// The directory holding OpenPMIx's `pmix.h`.
    pub include_dir: PathBuf,
    /// The link flags (`-L…`, `-lpmix`, and an rpath to the library directory).
    pub link: Vec<String>,
}

/// Finds OpenPMIx with `pkg-config pmix`; `None` when `pkg-config` or the package is
/// absent or its header directory holds no `pmix.h`. Callers that compare with it
/// pass `None` on to [`peer_absent`].
pub fn openpmix() -> Option<OpenPmix> {
    let query = |args: &[&str]| -> Option<String> {
        let out = Command::new("pkg-config").args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let include_dir = PathBuf::from(query(&["--variable=includedir", "pmix"])?);
    if !include_dir.join("pmix.h").exists() {
        return None;
    }
    let libdir = query(&["--variable=libdir", "pmix"])?;
    let mut link: Vec<String> = query(&["--libs", "pmix"])?
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    link.push(format!("-Wl,-rpath,{libdir}"));
    Some(OpenPmix { include_dir, link })
}

/// `valgrind` on the `PATH`, if it runs (`valgrind --version` succeeds).
pub fn valgrind() -> Option<PathBuf> {
    let ok = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then(|| PathBuf::from("valgrind"))
}
