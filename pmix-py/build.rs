//! The module's constants, read from the C headers (`pmix-ffi/include/pmix_common.h`,
//! `pmix_tool.h`, `pmix_server.h` and `pmix_ft.h`), so Python and C agree by
//! construction, then from `openpmix_constants.h` (what python3-pmix 4.2.2 defines
//! that those headers do not): every object-like `#define PMIX_*` / `PMIXRS_FT_*`
//! whose value is an integer literal, a string literal, `UINT8_MAX` / `UINT32_MAX`
//! (minus a literal), or another such constant, and every enumerator of a
//! `typedef enum { ... }` (numbered from 0, or from its `= value`). Written to
//! `$OUT_DIR/constants.rs` as two arrays: `INTS` and `STRS`.
//!
//! A name `openpmix_constants.h` defines again must have the value the C headers give
//! it: the build fails otherwise, and warns when they agree (the line can go).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What the headers define.
#[derive(Default)]
struct Constants {
    ints: BTreeMap<String, i64>,
    strs: BTreeMap<String, String>,
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let include = here.join("../pmix-ffi/include");
    let mut c = Constants::default();
    for h in ["pmix_common.h", "pmix_tool.h", "pmix_server.h", "pmix_ft.h"] {
        read_header(&include.join(h), &mut c, false);
    }
    read_header(&here.join("openpmix_constants.h"), &mut c, true);
    let mut out = String::from(
        "/// Integer constants of the C headers.\npub(crate) const INTS: &[(&str, i64)] = &[\n",
    );
    for (k, v) in &c.ints {
        let _ = writeln!(out, "    ({k:?}, {v}),");
    }
    out.push_str("];\n/// String constants (keys) of the C headers.\npub(crate) const STRS: &[(&str, &str)] = &[\n");
    for (k, v) in &c.strs {
        let _ = writeln!(out, "    ({k:?}, {v:?}),");
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("out dir")).join("constants.rs");
    std::fs::write(dest, out).expect("writing constants.rs");
}

/// Whether `name` is one the module exports.
fn public(name: &str) -> bool {
    (name.starts_with("PMIX_") || name.starts_with("PMIXRS_FT_"))
        && !name.starts_with("PMIX_RS_")
        && !name.ends_with("_H")
}

/// Reads the `#define`s and enumerators of `path` into `c`; `extra`: the file of
/// python3-pmix's constants (module docs).
fn read_header(path: &Path, c: &mut Constants, extra: bool) {
    println!("cargo:rerun-if-changed={}", path.display());
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut enumerator: Option<i64> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("typedef enum") {
            enumerator = Some(0);
            continue;
        }
        if let Some(next) = enumerator {
            if line.starts_with('}') {
                enumerator = None;
            } else if let Some((name, value)) = enum_entry(line, next, &c.ints) {
                enumerator = Some(value + 1);
                if public(&name) {
                    c.ints.insert(name, value);
                }
            }
            continue;
        }
        let Some(rest) = line.strip_prefix("#define ") else {
            continue;
        };
        let rest = rest.trim_start();
        let end = rest
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .unwrap_or(rest.len());
        let (name, tail) = rest.split_at(end);
        if !public(name) || tail.starts_with('(') {
            continue;
        }
        let value = tail.split("/*").next().unwrap_or("").trim();
        if let Some(s) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            c.strs.insert(name.to_owned(), s.to_owned());
        } else if let Some(v) = int_value(value, &c.ints) {
            if extra && let Some(&old) = c.ints.get(name) {
                assert!(
                    old == v,
                    "{}: {name} is {v} here but {old} in pmix-ffi/include",
                    path.display()
                );
                println!(
                    "cargo:warning={name} is in pmix-ffi/include now: its line in {} can go",
                    path.display()
                );
            }
            c.ints.insert(name.to_owned(), v);
        }
    }
}

/// One line of an enum's body (`NAME,` or `NAME = value,`): its name and value, the
/// value `next` when none is written. Comment and blank lines are `None`.
fn enum_entry(line: &str, next: i64, known: &BTreeMap<String, i64>) -> Option<(String, i64)> {
    let line = line.split("/*").next().unwrap_or("").split("//").next()?;
    let line = line.trim().trim_end_matches(',').trim();
    if line.is_empty() || line.starts_with('*') {
        return None;
    }
    let (name, value) = match line.split_once('=') {
        Some((n, v)) => (n.trim(), int_value(v, known)?),
        None => (line, next),
    };
    name.chars()
        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        .then(|| (name.to_owned(), value))
}

/// An integer literal (decimal or hex, maybe negative, maybe in parentheses),
/// `UINT8_MAX`, `UINT32_MAX`, `(UINT32_MAX - n)`, or a constant already read.
fn int_value(v: &str, known: &BTreeMap<String, i64>) -> Option<i64> {
    let v = v.trim();
    let v = v
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .unwrap_or(v)
        .trim();
    if let Some((a, b)) = v.split_once(" - ") {
        return Some(int_value(a, known)? - int_value(b, known)?);
    }
    match v {
        "UINT8_MAX" => return Some(i64::from(u8::MAX)),
        "UINT32_MAX" => return Some(i64::from(u32::MAX)),
        _ => {}
    }
    if let Some(x) = known.get(v) {
        return Some(*x);
    }
    let (neg, digits) = match v.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, v),
    };
    let digits = digits.trim_end_matches(['u', 'U', 'l', 'L']);
    let n = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => digits.parse::<i64>().ok()?,
    };
    Some(if neg { -n } else { n })
}
