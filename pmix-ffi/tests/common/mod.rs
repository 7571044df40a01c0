//! Shared by the C-program tests: where the library, the headers and the data are, and
//! how to compile and run C against them.
//!
//! The library is the `libpmix_ffi.so` cargo built for this test run: cargo builds the
//! package's library with all its crate types (cdylib and staticlib included) before the
//! integration tests, into the `deps/` directory this test executable runs from (only
//! `cargo build` copies them up to the profile directory, so a copy there may be stale:
//! `deps/` is searched first). That holds for any `CARGO_TARGET_DIR` and for the
//! default `target/`.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `pmix-ffi/`.
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `pmix-ffi/include/`: our headers.
pub fn include_dir() -> PathBuf {
    crate_dir().join("include")
}

/// `pmix-ffi/tests/c/`: the C programs.
pub fn c_dir() -> PathBuf {
    crate_dir().join("tests/c")
}

pub use pmix_testkit::OpenPmix;

/// How to install OpenPMIx, for the notice (or failure) when it is absent.
pub const INSTALL_OPENPMIX: &str = "apt-get install libpmix-dev pkg-config";

/// How to install valgrind.
pub const INSTALL_VALGRIND: &str = "apt-get install valgrind";

/// OpenPMIx as `pkg-config pmix` finds it, for the comparison named `what`. When it is
/// absent: under `CI=true` the test fails here, naming the comparison
/// ([`pmix_testkit::peer_absent`]); elsewhere a `NOTICE:` line is printed and `None`
/// tells the caller to skip that half.
pub fn openpmix_for(what: &str) -> Option<OpenPmix> {
    let found = pmix_testkit::openpmix();
    if found.is_none() {
        pmix_testkit::peer_absent(
            &format!("{what}: OpenPMIx (pkg-config pmix) not found"),
            INSTALL_OPENPMIX,
        );
    }
    found
}

/// `valgrind`, for the run named `what`; absent: as [`openpmix_for`].
pub fn valgrind_for(what: &str) -> Option<PathBuf> {
    let found = pmix_testkit::valgrind();
    if found.is_none() {
        pmix_testkit::peer_absent(&format!("{what}: valgrind not found"), INSTALL_VALGRIND);
    }
    found
}

/// A file of the repository's `testdata/hwloc-xml/`.
pub fn xml(name: &str) -> PathBuf {
    let p = pmix_testkit::hwloc_xml(name);
    assert!(p.exists(), "test data {} is missing", p.display());
    p
}

/// The directory holding the `libpmix_ffi.so` and `.a` of this build.
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps dir");
    let profile = deps.parent().expect("profile dir");
    for dir in [deps, profile] {
        if dir.join("libpmix_ffi.so").exists() {
            return dir.to_path_buf();
        }
    }
    panic!(
        "libpmix_ffi.so not found next to {} (build it with `cargo build -p pmix-ffi`)",
        exe.display()
    );
}

/// A fresh scratch directory, unique to this call (tests run in parallel).
pub fn scratch(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pmix-ffi-{name}-{}-{k}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[path = "../../../pmix/tests/common/child.rs"]
mod child;

#[allow(unused_imports)]
pub use child::{child_test, output_within};

/// The longest any one command of these tests may run (a C program under valgrind
/// takes seconds; a hang fails the test instead of the suite).
pub const COMMAND_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

/// Runs `cmd` within [`COMMAND_LIMIT`], panicking if it fails to start or is still
/// running then (it is killed).
pub fn output(cmd: &mut Command) -> Output {
    output_within(cmd, COMMAND_LIMIT)
}

/// Panics with the command's output unless it succeeded.
pub fn assert_ok(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The flags every C compile gets.
pub fn cflags() -> Vec<String> {
    ["-std=gnu11", "-O1", "-g", "-Wall", "-Wextra", "-Werror"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Compiles `src` into `exe` with [`cflags`], the header directories `includes` (and
/// `tests/c/`), then `link` (libraries and linker flags); panics with cc's output on
/// failure.
pub fn compile(src: &Path, exe: &Path, includes: &[&Path], link: &[String]) {
    let mut cmd = Command::new("cc");
    cmd.args(cflags());
    for dir in includes.iter().copied().chain([c_dir().as_path()]) {
        cmd.arg("-I").arg(dir);
    }
    let out = output(cmd.arg(src).arg("-o").arg(exe).args(link));
    assert_ok(&format!("cc {} -o {}", src.display(), exe.display()), &out);
}

/// Compiles `src` (in `tests/c/` or absolute) into `exe`, against our headers, linked
/// with our shared library (rpath set, so it runs in place).
pub fn build_ours(src: &Path, exe: &Path) {
    let lib = lib_dir();
    let link = [
        format!("-L{}", lib.display()),
        "-lpmix_ffi".to_owned(),
        format!("-Wl,-rpath,{}", lib.display()),
        "-Wl,--disable-new-dtags".to_owned(),
        "-lpthread".to_owned(),
    ];
    compile(src, exe, &[&include_dir()], &link);
}

/// Compiles `src` into `exe` against our headers and our static library.
pub fn build_ours_static(src: &Path, exe: &Path) {
    let archive = lib_dir().join("libpmix_ffi.a");
    let link = [
        archive.display().to_string(),
        "-lpthread".into(),
        "-ldl".into(),
        "-lm".into(),
    ];
    compile(src, exe, &[&include_dir()], &link);
}

/// Compiles `src` into `exe` against OpenPMIx's headers and `libpmix`, as `pkg-config`
/// describes them.
pub fn build_openpmix(openpmix: &OpenPmix, src: &Path, exe: &Path) {
    compile(src, exe, &[&openpmix.include_dir], &openpmix.link);
}

/// A command running `exe` with the PMIx variables of the caller's environment removed
/// and `PMIX_TOPOLOGY` set to `topology` (when given). `LD_LIBRARY_PATH` is removed too:
/// cargo sets it for tests (the profile directory included, where a stale copy of the
/// library may lie), and it would override the rpath the programs are linked with.
pub fn run_cmd(exe: &Path, topology: Option<&str>) -> Command {
    let mut c = Command::new(exe);
    c.env_remove("LD_LIBRARY_PATH");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("PMIX_") {
            c.env_remove(k);
        }
    }
    if let Some(t) = topology {
        c.env("PMIX_TOPOLOGY", t);
    }
    c
}

/// A command running the tests `names` of this test binary (exactly those) in a child
/// process with `env` set and `remove` removed, printing what they print.
pub fn rerun_tests(names: &[&str], env: &[(&str, &std::ffi::OsStr)], remove: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args(names)
        .args(["--exact", "--nocapture", "--test-threads=1"]);
    for k in remove {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// What a peer-comparison test prints when its peer is absent under `CI=true` (the
/// panic of [`pmix_testkit::peer_absent`]).
pub const CI_FORBIDS_SKIPPING: &str = "the peer is absent and CI=true forbids skipping";
