//! Which client-side functions of OpenPMIx 4.2.2's `libpmix.so.2` our library
//! exports, read with `nm -D` from both shared objects (the server API,
//! `PMIx_server_*` and `PMIx_generate_*`, is not the client's).
//!
//! [`NOT_YET`] names the ones still missing. The test fails when one of libpmix2's is
//! missing from ours without being listed, and when a listed one is exported after
//! all, so the list only ever shrinks and always says exactly what is left.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use pmix_testkit::cprog::{lib_dir, openpmix_for};

/// libpmix2's client functions we do not export yet. `PMIx_Register_attributes` is
/// how a host (a server) registers the attributes it supports, for queries of
/// `PMIX_QUERY_ATTRIBUTE_SUPPORT`, which nothing here answers yet: libpmix2 answers
/// it `PMIX_SUCCESS`, which ours would only do once the registration is served.
const NOT_YET: &[&str] = &["PMIx_Register_attributes"];

/// The `PMIx_*` functions `lib` defines (`nm -D --defined-only`), client side only.
fn client_functions(lib: &Path) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib)
        .output()
        .unwrap_or_else(|e| panic!("nm {}: {e}", lib.display()));
    assert!(out.status.success(), "nm {}: {:?}", lib.display(), out);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (kind, name) = (f.nth(1)?, f.next()?);
            (kind == "T").then_some(name)
        })
        .filter(|n| n.starts_with("PMIx_"))
        .filter(|n| !n.starts_with("PMIx_server_") && !n.starts_with("PMIx_generate_"))
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

#[test]
fn every_client_function_of_libpmix2_is_exported_but_the_listed_ones() {
    let Some(theirs) = libpmix2() else { return };
    let theirs = client_functions(&theirs);
    let ours = client_functions(&lib_dir("pmix_ffi").join("libpmix_ffi.so"));
    assert!(theirs.len() > 100, "{theirs:?}");
    let missing: BTreeSet<&str> = theirs
        .iter()
        .map(String::as_str)
        .filter(|n| !ours.contains(*n))
        .collect();
    let listed: BTreeSet<&str> = NOT_YET.iter().copied().collect();
    let unlisted: Vec<&&str> = missing.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "not exported and not listed: {unlisted:?}"
    );
    let done: Vec<&&str> = listed.difference(&missing).collect();
    assert!(
        done.is_empty(),
        "exported now: take them off NOT_YET: {done:?}"
    );
    println!(
        "{} of libpmix2's {} client functions exported; {} not yet",
        theirs.len() - missing.len(),
        theirs.len(),
        missing.len()
    );
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
