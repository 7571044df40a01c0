//! Which functions of OpenPMIx 4.2.2's `libpmix.so.2` our library exports, read with
//! `nm -D` from both shared objects: all of them, client and server API, so that the
//! drop-in (`pmix-dropin`, `libpmix.so.2`) satisfies every program and plugin linked
//! with OpenPMIx; and the `PMIx_*` symbols the engines that host a server import
//! (Open MPI 4.1's `mca_pmix_ext3x.so`, Slurm 22.05's `mpi_pmix_v4.so`) among them.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use pmix_testkit::cprog::{lib_dir, openpmix_for};

/// The `PMIx_*` symbols `lib` defines (`nm -D --defined-only`), or, with
/// `undefined`, the ones it imports.
fn functions(lib: &Path, undefined: bool) -> BTreeSet<String> {
    let which = if undefined {
        "--undefined-only"
    } else {
        "--defined-only"
    };
    let out = Command::new("nm")
        .args(["-D", which])
        .arg(lib)
        .output()
        .unwrap_or_else(|e| panic!("nm {}: {e}", lib.display()));
    assert!(out.status.success(), "nm {}: {:?}", lib.display(), out);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [_, "T", name] if !undefined => Some(*name),
                ["U", name] if undefined => Some(*name),
                _ => None,
            }
        })
        .filter(|n| n.starts_with("PMIx_"))
        .map(str::to_owned)
        .collect()
}

/// libpmix2's shared object: `pkg-config --variable=libdir pmix`.
fn libpmix2() -> Option<std::path::PathBuf> {
    openpmix_for("the exports of libpmix.so.2")?;
    let out = Command::new("pkg-config")
        .args(["--variable=libdir", "pmix"])
        .output()
        .ok()?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let lib = Path::new(&dir).join("libpmix.so.2");
    assert!(lib.exists(), "{} is missing", lib.display());
    Some(lib)
}

fn ours() -> BTreeSet<String> {
    functions(&lib_dir("pmix_ffi").join("libpmix_ffi.so"), false)
}

#[test]
fn every_function_of_libpmix2_is_exported_client_and_server() {
    let Some(theirs) = libpmix2() else { return };
    let theirs = functions(&theirs, false);
    let ours = ours();
    assert!(theirs.len() > 140, "{theirs:?}");
    let missing: Vec<&String> = theirs.iter().filter(|n| !ours.contains(*n)).collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
    let server = theirs
        .iter()
        .filter(|n| n.starts_with("PMIx_server_") || n.starts_with("PMIx_generate_"))
        .count();
    println!(
        "all {} of libpmix2's functions exported ({server} of them the server API)",
        theirs.len()
    );
}

#[test]
fn every_pmix_symbol_open_mpi_and_slurm_import_is_exported() {
    let plugins = [
        "/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_pmix_ext3x.so",
        "/usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix_v4.so",
    ];
    let ours = ours();
    for p in plugins {
        let path = Path::new(p);
        if !path.exists() {
            pmix_testkit::peer_absent(
                &format!("the PMIx imports of {p}"),
                "apt-get install libopenmpi-dev slurm-wlm-basic-plugins",
            );
            continue;
        }
        let wanted = functions(path, true);
        assert!(wanted.len() > 10, "{p}: {wanted:?}");
        let missing: Vec<&String> = wanted.iter().filter(|n| !ours.contains(*n)).collect();
        assert!(
            missing.is_empty(),
            "{p} imports what we do not export: {missing:?}"
        );
        println!("{p}: all {} PMIx imports exported", wanted.len());
    }
}

/// The `#define PMIX_NAME "string"` lines of `text`: name → string.
fn string_defines(text: &str) -> std::collections::BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.strip_prefix("#define ")?.split_whitespace();
            let name = it.next().filter(|n| n.starts_with("PMIX_"))?;
            let value = it
                .next()
                .filter(|v| v.starts_with('"') && v.ends_with('"'))?;
            Some((name.to_owned(), value.to_owned()))
        })
        .collect()
}

#[test]
fn every_attribute_key_of_openpmix_is_in_our_headers_with_the_same_string() {
    let Some(openpmix) = openpmix_for("the attribute keys of OpenPMIx's pmix_common.h") else {
        return;
    };
    let theirs = string_defines(
        &std::fs::read_to_string(openpmix.include_dir.join("pmix_common.h")).unwrap(),
    );
    let include = pmix_testkit::cprog::our_include();
    let ours = string_defines(
        &["pmix_common.h", "pmix.h", "pmix_tool.h"]
            .iter()
            .map(|h| std::fs::read_to_string(include.join(h)).unwrap())
            .collect::<String>(),
    );
    assert!(theirs.len() > 400, "{}", theirs.len());
    let wrong: Vec<_> = theirs
        .iter()
        .filter(|(n, v)| ours.get(*n) != Some(v))
        .map(|(n, v)| format!("{n} {v} (ours: {:?})", ours.get(n)))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} keys differ or are missing: {wrong:?}",
        wrong.len()
    );
    println!(
        "all {} attribute keys of OpenPMIx 4.2.2 defined alike",
        theirs.len()
    );
}
