//! C programs in tests and benchmarks: the flags and the compile step (`cc`), where
//! the library cargo built for this run lies and how to link against it, the peers a
//! C comparison needs (OpenPMIx through `pkg-config`, valgrind) with their notice or
//! failure when absent, and running the programs with every wait bounded in a clean
//! environment.
//!
//! **Where the library is.** Cargo builds a package's library with all its crate types
//! (cdylib and staticlib included) before its integration tests and benchmarks, into
//! the `deps/` directory the test or bench executable runs from; only `cargo build`
//! copies them up to the profile directory, so a copy there may be stale: [`lib_dir`]
//! searches `deps/` first. That holds for any `CARGO_TARGET_DIR` and for the default
//! `target/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use crate::child::COMMAND_LIMIT;
use crate::child::output_within;
use crate::{OpenPmix, peer_absent};

/// How to install OpenPMIx, for the notice (or failure) when it is absent.
pub const INSTALL_OPENPMIX: &str = "apt-get install libpmix-dev pkg-config";

/// How to install valgrind.
pub const INSTALL_VALGRIND: &str = "apt-get install valgrind";

/// Runs `cmd` within [`COMMAND_LIMIT`], capturing its output.
///
/// # Panics
/// When it fails to start, or is still running then (it is killed).
pub fn output(cmd: &mut Command) -> Output {
    output_within(cmd, COMMAND_LIMIT)
}

/// Checks that a command succeeded.
///
/// # Panics
/// Unless it did, with the command's output.
pub fn assert_ok(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The flags every C compile of the tests gets: C11 with GNU extensions, warnings as
/// errors, debug information for valgrind.
pub fn cflags() -> Vec<String> {
    ["-std=gnu11", "-O1", "-g", "-Wall", "-Wextra", "-Werror"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

/// Compiles `src` into `exe` with [`cflags`], the header directories `includes`, then
/// `link` (libraries and linker flags), within [`COMMAND_LIMIT`].
///
/// # Panics
/// When `cc` fails, with its output.
pub fn compile(src: &Path, exe: &Path, includes: &[&Path], link: &[String]) {
    compile_with(&cflags(), src, exe, includes, link);
}

/// [`compile`] with the compile flags `flags` instead of [`cflags`] (a benchmark's
/// `-O2`).
///
/// # Panics
/// When `cc` fails, with its output.
pub fn compile_with(flags: &[String], src: &Path, exe: &Path, includes: &[&Path], link: &[String]) {
    let mut cmd = Command::new("cc");
    cmd.args(flags);
    for dir in includes {
        cmd.arg("-I").arg(dir);
    }
    let out = output(cmd.arg(src).arg("-o").arg(exe).args(link));
    assert_ok(&format!("cc {} -o {}", src.display(), exe.display()), &out);
}

/// The directory holding `lib<name>.so` as cargo built it for this test or benchmark
/// run: `deps/` next to the running executable, else the profile directory above it.
///
/// # Panics
/// When neither holds it (the package was not built with a `cdylib` crate type).
pub fn lib_dir(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps dir");
    let profile = deps.parent().expect("profile dir");
    let file = format!("lib{name}.so");
    for dir in [deps, profile] {
        if dir.join(&file).exists() {
            return dir.to_path_buf();
        }
    }
    panic!(
        "{file} not found next to {} (build it with `cargo build`)",
        exe.display()
    );
}

/// The linker flags for the shared library `lib<name>.so` in `dir`, with an rpath so
/// the program runs in place (`DT_RPATH`, which `LD_LIBRARY_PATH` does not override).
pub fn link_shared(dir: &Path, name: &str) -> Vec<String> {
    vec![
        format!("-L{}", dir.display()),
        format!("-l{name}"),
        format!("-Wl,-rpath,{}", dir.display()),
        "-Wl,--disable-new-dtags".to_owned(),
    ]
}

/// `pmix-ffi/include`, our `pmix.h`.
pub fn our_include() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../pmix-ffi/include"))
}

/// Compiles `<src_dir>/<name>.c` (which may include headers of `src_dir`) against our
/// headers and links it with `libpmix_ffi` (the copy cargo built for this test run):
/// `<dir>/<name>.ffi`.
///
/// # Panics
/// As [`compile`] and [`lib_dir`].
pub fn build_ours(src_dir: &Path, name: &str, dir: &Path) -> PathBuf {
    let exe = dir.join(format!("{name}.ffi"));
    compile(
        &src_dir.join(format!("{name}.c")),
        &exe,
        &[&our_include(), src_dir],
        &link_shared(&lib_dir("pmix_ffi"), "pmix_ffi"),
    );
    exe
}

/// Compiles `<src_dir>/<name>.c` against OpenPMIx's headers and `libpmix2`:
/// `<dir>/<name>.libpmix2`; `None` (after [`openpmix_for`]'s notice, for the
/// comparison named `what`) when OpenPMIx is absent.
///
/// # Panics
/// As [`compile`] and [`openpmix_for`].
pub fn build_openpmix(src_dir: &Path, name: &str, dir: &Path, what: &str) -> Option<PathBuf> {
    let pmix = openpmix_for(what)?;
    let exe = dir.join(format!("{name}.libpmix2"));
    compile(
        &src_dir.join(format!("{name}.c")),
        &exe,
        &[&pmix.include_dir, src_dir],
        &pmix.link,
    );
    Some(exe)
}

/// OpenPMIx as `pkg-config pmix` finds it ([`crate::openpmix`]), for the comparison
/// named `what`. When it is absent: under `CI=true` the test fails here, naming the
/// comparison ([`peer_absent`]); elsewhere a `NOTICE:` line is printed and `None` tells
/// the caller to skip that half.
///
/// # Panics
/// Under `CI=true` when OpenPMIx is absent.
pub fn openpmix_for(what: &str) -> Option<OpenPmix> {
    let found = crate::openpmix();
    if found.is_none() {
        peer_absent(
            &format!("{what}: OpenPMIx (pkg-config pmix) not found"),
            INSTALL_OPENPMIX,
        );
    }
    found
}

/// `valgrind`, for the run named `what`; absent: as [`openpmix_for`].
///
/// # Panics
/// Under `CI=true` when valgrind is absent.
pub fn valgrind_for(what: &str) -> Option<PathBuf> {
    let found = crate::valgrind();
    if found.is_none() {
        peer_absent(&format!("{what}: valgrind not found"), INSTALL_VALGRIND);
    }
    found
}

/// A command running `exe` with the PMIx variables of the caller's environment removed
/// (`PMIX_*`), and `LD_LIBRARY_PATH` too: cargo sets it for tests (the profile
/// directory included, where a stale copy of a library may lie), and it would
/// override the rpath the programs are linked with.
pub fn clean_command(exe: &Path) -> Command {
    let mut c = Command::new(exe);
    c.env_remove("LD_LIBRARY_PATH");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("PMIX_") {
            c.env_remove(k);
        }
    }
    c
}
