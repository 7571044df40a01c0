//! The module's constants, read from the C headers (`pmix-ffi/include/pmix_common.h`
//! and `pmix_ft.h`), so Python and C agree by construction: every object-like
//! `#define PMIX_*` / `PMIXRS_FT_*` whose value is an integer literal, a string
//! literal, `UINT8_MAX` / `UINT32_MAX` (minus a literal), or another such constant.
//! Written to `$OUT_DIR/constants.rs` as two arrays: `INTS` and `STRS`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let include = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"))
        .join("../pmix-ffi/include");
    let mut ints: BTreeMap<String, i64> = BTreeMap::new();
    let mut strs: BTreeMap<String, String> = BTreeMap::new();
    for h in ["pmix_common.h", "pmix_ft.h"] {
        let path = include.join(h);
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).expect("a header of pmix-ffi/include");
        for line in text.lines() {
            let Some(rest) = line.trim().strip_prefix("#define ") else {
                continue;
            };
            let rest = rest.trim_start();
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let (name, tail) = rest.split_at(end);
            let public = name.starts_with("PMIX_") || name.starts_with("PMIXRS_FT_");
            if !public
                || name.starts_with("PMIX_RS_")
                || name.ends_with("_H")
                || tail.starts_with('(')
            {
                continue;
            }
            let value = tail.split("/*").next().unwrap_or("").trim();
            if let Some(s) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                strs.insert(name.to_owned(), s.to_owned());
            } else if let Some(v) = int_value(value, &ints) {
                ints.insert(name.to_owned(), v);
            }
        }
    }
    let mut out = String::from(
        "/// Integer constants of the C headers.\npub(crate) const INTS: &[(&str, i64)] = &[\n",
    );
    for (k, v) in &ints {
        let _ = writeln!(out, "    ({k:?}, {v}),");
    }
    out.push_str("];\n/// String constants (keys) of the C headers.\npub(crate) const STRS: &[(&str, &str)] = &[\n");
    for (k, v) in &strs {
        let _ = writeln!(out, "    ({k:?}, {v:?}),");
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("out dir")).join("constants.rs");
    std::fs::write(dest, out).expect("writing constants.rs");
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
