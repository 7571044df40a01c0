//! Shared by the C-program tests: what is pmix-ffi's own (its headers, its C sources,
//! its library's name and how its programs are built and run). Everything else (the
//! compile step and its flags, where cargo put the library, the peers, bounded child
//! processes, the data) is pmix-testkit's, re-exported here for the tests' `use
//! common::*`.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::Command;

#[allow(unused_imports)]
pub use pmix_testkit::CI_FORBIDS_SKIPPING;
#[allow(unused_imports)]
pub use pmix_testkit::OpenPmix;
#[allow(unused_imports)]
pub use pmix_testkit::child::{child_test, output_within, rerun_tests};
#[allow(unused_imports)]
pub use pmix_testkit::cprog::{assert_ok, cflags, openpmix_for, output, valgrind_for};

/// The name of the library these tests link (`libpmix_ffi.so`, `libpmix_ffi.a`).
pub const LIB: &str = "pmix_ffi";

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

/// A file of the repository's `testdata/hwloc-xml/`, which must exist.
pub fn xml(name: &str) -> PathBuf {
    let p = pmix_testkit::hwloc_xml(name);
    assert!(p.exists(), "test data {} is missing", p.display());
    p
}

/// The directory holding the `libpmix_ffi.so` and `.a` of this build.
pub fn lib_dir() -> PathBuf {
    pmix_testkit::cprog::lib_dir(LIB)
}

/// A fresh scratch directory under this crate's target tmp directory, unique to this
/// call (tests run in parallel).
pub fn scratch(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pmix-ffi-{name}-{}-{k}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compiles `src` into `exe` ([`pmix_testkit::cprog::compile`]) with the header
/// directories `includes` and `tests/c/` (for `check.h`), then `link`.
pub fn compile(src: &Path, exe: &Path, includes: &[&Path], link: &[String]) {
    let c = c_dir();
    let all: Vec<&Path> = includes.iter().copied().chain([c.as_path()]).collect();
    pmix_testkit::cprog::compile(src, exe, &all, link);
}

/// Compiles `src` (in `tests/c/` or absolute) into `exe`, against our headers, linked
/// with our shared library (rpath set, so it runs in place).
pub fn build_ours(src: &Path, exe: &Path) {
    let mut link = pmix_testkit::cprog::link_shared(&lib_dir(), LIB);
    link.push("-lpthread".to_owned());
    compile(src, exe, &[&include_dir()], &link);
}

/// Compiles `src` into `exe` against our headers and our static library.
pub fn build_ours_static(src: &Path, exe: &Path) {
    let archive = lib_dir().join(format!("lib{LIB}.a"));
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

/// A command running `exe` in a clean environment
/// ([`pmix_testkit::cprog::clean_command`]) with `PMIX_TOPOLOGY` set to `topology`
/// (when given).
pub fn run_cmd(exe: &Path, topology: Option<&str>) -> Command {
    let mut c = pmix_testkit::cprog::clean_command(exe);
    if let Some(t) = topology {
        c.env("PMIX_TOPOLOGY", t);
    }
    c
}
