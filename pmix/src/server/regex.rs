//! Node and process maps as OpenPMIx 4.2.2 writes them: what `PMIx_generate_regex` and
//! `PMIx_generate_ppn` give a host, and the parsing of the `PMIX_NODE_MAP` /
//! `PMIX_PROC_MAP` values a host hands to `PMIx_server_register_nspace`.
//!
//! **The forms.** A host passes a plain list: node names separated by commas
//! (`n01,n02,n10`), or for the processes one entry per node separated by semicolons,
//! each a comma-separated list of ranks or `a-b` rank ranges (`0,1,2,3;4,5,6,7`).
//! libpmix2's `preg` framework turns these into one of:
//! - the *native* form (its `pmix` module, the one that answers first in Debian's
//!   build): `pmix[n[2:1-2,10]]` for the nodes, where `n[2:1-2,10]` means the prefix
//!   `n`, numbers written with 2 digits (zero-padded), the numbers 1 to 2 and 10, then
//!   an optional suffix (`host[1:1-2]a` is `host1a,host2a`); names it cannot compress
//!   stand whole (`pmix[localhost]`). For the processes: `pmix[0-3;4-7]`;
//! - the *raw* form (its `raw` module, the fallback): `raw:` and the input unchanged,
//!   which libpmix2 picks when the native form would be empty (no names) or, for the
//!   processes, longer than the input (`0;1` gives `raw:0;1`);
//! - the *compressed* form (its `compress` module, zlib, `blob:` then binary): only
//!   for inputs of 4096 bytes or more, and Debian's libpmix2 4.2.2 never chose it in our
//!   probes (a 24 KB input still gave `raw:`), so it is neither produced nor parsed
//!   here ([`RegexError::Compressed`]).
//!
//! [`generate_node_regex`] and [`generate_ppn`] give what libpmix2's default chain gives
//! (native, else raw); [`parse_nodes`] and [`parse_procs`] read the native form, the
//! raw form and a plain list. Everything [`generate_node_regex`] / [`generate_ppn`]
//! return parses back to the input's names and ranks, in order (but for an input that
//! itself starts with `raw:` and falls back to the raw form: it is returned as it is, as
//! libpmix2 returns it).
//!
//! **Where we differ from libpmix2, on purpose.** Its native module has a few bugs that
//! lose or reorder data; where it would, we give an answer that parses back to the input
//! instead (it is identical to libpmix2's everywhere else):
//! - a name is merged only into the entry just before it, so order is kept: libpmix2
//!   merges `n1,localhost,n2` into `pmix[n[1:1-2],localhost]` (reordered), we give
//!   `pmix[n[1:1],localhost,n[1:2]]`;
//! - a name holding `[` makes libpmix2 write a native form it cannot parse
//!   (`c1n[1-4]` gives `pmix[c1n[1-4]]`); we give the raw form, `raw:c1n[1-4]`;
//! - a number above `i32::MAX` overflows libpmix2's `int` (`n99999999999` gives
//!   `n[11:1215752191]`); we keep such a name whole;
//! - empty names (`n1,,n2`) become empty entries in libpmix2's native form, which its
//!   parser refuses; we skip them, as every list split in libpmix2 does
//!   (`pmix_argv_split`);
//! - in a process list, a rank range that continues the previous one extends it by one
//!   rank in libpmix2 (`0-3,4-7,8,9,10,11` gives `pmix[0-4,8-11]`, losing 5 to 7); we
//!   extend it by the whole range (`pmix[0-11]`). An empty process input, which crashes
//!   libpmix2, gives `raw:` here;
//! - ranges in a raw or plain process list (`raw:0-3;4-7`) are expanded here; libpmix2's
//!   raw module passes `0-3` on as one rank string, which its store reads as rank 0.
//!
//! A name is split as libpmix2 splits it: the ASCII letters before its first digit are
//! the prefix, the digit run its number, the rest (letters and digits) its suffix; a
//! name with any other byte (`node-1`, `n1.ib`, non-ASCII) or no digit stands whole.
//!
//! Parsing is strict for the native form (its grammar is exact; a malformed one is an
//! error where libpmix2 would fall back to splitting the text on commas) and lenient as
//! libpmix2 for lists: empty entries are skipped. A number wider than its digit count
//! (`n[1:10]`) is written in full (`n10`), where libpmix2 corrupts the name.
//!
//! **Bounds.** No function reads more than [`MAX_LEN`] bytes, returns more than
//! [`MAX_ENTRIES`] names or ranks, or more than [`MAX_NAME_BYTES`] bytes of names; past
//! these it answers an error before allocating. No input makes any of them panic.
//!
//! ```
//! use pmix::regex::{generate_node_regex, generate_ppn, parse_nodes, parse_procs};
//!
//! let nodes = generate_node_regex("node01,node02,node03,node10")?;
//! assert_eq!(nodes, "pmix[node[2:1-3,10]]");
//! assert_eq!(parse_nodes(&nodes)?, ["node01", "node02", "node03", "node10"]);
//! let procs = generate_ppn("0,1,2,3;4,5,6,7")?;
//! assert_eq!(procs, "pmix[0-3;4-7]");
//! assert_eq!(parse_procs(&procs)?, [vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
//! # Ok::<(), pmix::regex::RegexError>(())
//! ```

use std::fmt::Write as _;

use pmix_core::{PmixError, Status};

/// The longest input any function of this module reads, and the longest string the
/// generators return: 1 MiB.
pub const MAX_LEN: usize = 1 << 20;

/// The most names or ranks a parse returns (and a process list given to
/// [`generate_ppn`] may hold): 1 Mi entries.
pub const MAX_ENTRIES: usize = 1 << 20;

/// The most bytes of node names [`parse_nodes`] returns, all names together: 64 MiB.
pub const MAX_NAME_BYTES: usize = 1 << 26;

/// The native form's tag and opening bracket.
const NATIVE: &str = "pmix[";
/// The raw form's tag.
const RAW: &str = "raw:";
/// The compressed form's tag.
const BLOB: &str = "blob:";

/// Why a node or process map could not be generated or parsed. Every variant is `Copy`
/// and names the byte where the problem is, where there is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegexError {
    /// The input, or the string a generator would return, is longer than [`MAX_LEN`]
    /// (`PMIX_ERR_BAD_PARAM`).
    #[error("{what} is {len} bytes, more than the limit of {MAX_LEN}")]
    TooLong {
        /// `"the input"` or `"the regex generated"`.
        what: &'static str,
        /// Its length in bytes.
        len: usize,
    },
    /// The map expands to more than [`MAX_ENTRIES`] names or ranks
    /// (`PMIX_ERR_OUT_OF_RESOURCE`).
    #[error("the map expands to more than {MAX_ENTRIES} entries (at byte {at})")]
    TooManyEntries {
        /// The byte of the input where the limit was reached.
        at: usize,
    },
    /// The node names expand to more than [`MAX_NAME_BYTES`] bytes
    /// (`PMIX_ERR_OUT_OF_RESOURCE`).
    #[error("the node names expand to more than {MAX_NAME_BYTES} bytes (at byte {at})")]
    TooLarge {
        /// The byte of the input where the limit was reached.
        at: usize,
    },
    /// The input does not follow the form it claims (`PMIX_ERR_BAD_PARAM`).
    #[error("malformed map at byte {at}: {what}")]
    Malformed {
        /// The byte of the input where the problem is.
        at: usize,
        /// What is wrong there.
        what: &'static str,
    },
    /// The input is libpmix2's zlib-compressed form (`blob:`), which is not supported
    /// (`PMIX_ERR_NOT_SUPPORTED`).
    #[error("the zlib-compressed \"blob:\" form of a map is not supported")]
    Compressed,
}

impl PmixError for RegexError {
    fn status(&self) -> Status {
        match self {
            RegexError::TooLong { .. } | RegexError::Malformed { .. } => Status::ERR_BAD_PARAM,
            RegexError::TooManyEntries { .. } | RegexError::TooLarge { .. } => {
                Status::ERR_OUT_OF_RESOURCE
            }
            RegexError::Compressed => Status::ERR_NOT_SUPPORTED,
        }
    }
}

fn malformed(at: usize, what: &'static str) -> RegexError {
    RegexError::Malformed { at, what }
}

fn check_input(input: &str) -> Result<(), RegexError> {
    if input.len() > MAX_LEN {
        return Err(RegexError::TooLong {
            what: "the input",
            len: input.len(),
        });
    }
    Ok(())
}

fn check_output(out: String) -> Result<String, RegexError> {
    if out.len() > MAX_LEN {
        return Err(RegexError::TooLong {
            what: "the regex generated",
            len: out.len(),
        });
    }
    Ok(out)
}

/// The raw form of `input`: `raw:` and the input, unless it already starts so.
fn raw_form(input: &str) -> String {
    if input.starts_with(RAW) {
        input.to_owned()
    } else {
        format!("{RAW}{input}")
    }
}

/// The pieces of `s` between `sep`, each with its byte offset in the whole input
/// (`base` is the offset of `s`), empty pieces left out.
fn pieces(s: &str, sep: char, base: usize) -> impl Iterator<Item = (usize, &str)> {
    split_all(s, sep, base).filter(|(_, p)| !p.is_empty())
}

/// Every piece of `s` between `sep`, empty ones included, each with its byte offset.
fn split_all(s: &str, sep: char, base: usize) -> impl Iterator<Item = (usize, &str)> {
    let mut at = base;
    s.split(sep).map(move |p| {
        let here = at;
        at += p.len() + sep.len_utf8();
        (here, p)
    })
}

// ---------------------------------------------------------------------------------------
// Node names.

/// One entry of the native node form.
enum NodeEntry<'a> {
    /// A name written whole.
    Whole(&'a str),
    /// `prefix[width:ranges]suffix`.
    Numbered {
        prefix: &'a str,
        width: usize,
        suffix: &'a str,
        /// `(first, count)` runs of consecutive numbers, in input order.
        runs: Vec<(u64, u64)>,
    },
}

/// How a name compresses: `None` to write it whole, else its prefix (the letters
/// before the first digit), the digit run's value and width, and the rest (its suffix).
fn split_name(name: &str) -> Option<(&str, u64, usize, &str)> {
    if !name.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let start = name.find(|c: char| c.is_ascii_digit())?;
    let digits = name[start..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(name.len() - start, |n| n);
    let run = &name[start..start + digits];
    // Leading zeros do not count toward the value; an `int` holds it in libpmix2.
    let value = run.bytes().try_fold(0u64, |v, b| {
        let v = v * 10 + u64::from(b - b'0');
        (v <= i32::MAX as u64).then_some(v)
    })?;
    Some((&name[..start], value, digits, &name[start + digits..]))
}

/// The node map libpmix2 4.2.2's `PMIx_generate_regex` gives for `input`, a
/// comma-separated list of node names (`n01,n02,n10` gives `pmix[n[2:1-2,10]]`): its
/// native form, or its raw form (`raw:` and the input) for an empty list or a name
/// holding `[` (see the module docs for where we differ from libpmix2, and why).
/// Empty names are skipped.
///
/// # Errors
/// [`RegexError::TooLong`] when `input`, or the answer, is longer than [`MAX_LEN`].
#[doc(alias = "PMIx_generate_regex")]
pub fn generate_node_regex(input: &str) -> Result<String, RegexError> {
    check_input(input)?;
    let mut entries: Vec<NodeEntry<'_>> = Vec::new();
    for (_, name) in pieces(input, ',', 0) {
        if name.contains('[') {
            // The native form cannot hold it: libpmix2's parser would read a range.
            return check_output(raw_form(input));
        }
        let Some((prefix, value, width, suffix)) = split_name(name) else {
            entries.push(NodeEntry::Whole(name));
            continue;
        };
        if let Some(NodeEntry::Numbered {
            prefix: p,
            width: w,
            suffix: s,
            runs,
        }) = entries.last_mut()
            && *p == prefix
            && *w == width
            && *s == suffix
        {
            // Only the entry just before: merging further back would reorder the names.
            match runs.last_mut() {
                Some((first, count)) if *first + *count == value => *count += 1,
                _ => runs.push((value, 1)),
            }
            continue;
        }
        entries.push(NodeEntry::Numbered {
            prefix,
            width,
            suffix,
            runs: vec![(value, 1)],
        });
    }
    if entries.is_empty() {
        return check_output(raw_form(input));
    }
    let mut out = String::from(NATIVE);
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match entry {
            NodeEntry::Whole(name) => out.push_str(name),
            NodeEntry::Numbered {
                prefix,
                width,
                suffix,
                runs,
            } => {
                let _ = write!(out, "{prefix}[{width}:");
                write_runs(&mut out, runs, ',');
                out.push(']');
                out.push_str(suffix);
            }
        }
    }
    out.push(']');
    check_output(out)
}

/// Appends `runs` as `a` or `a-b`, separated by `sep`.
fn write_runs(out: &mut String, runs: &[(u64, u64)], sep: char) {
    for (i, &(first, count)) in runs.iter().enumerate() {
        if i > 0 {
            out.push(sep);
        }
        if count == 1 {
            let _ = write!(out, "{first}");
        } else {
            let _ = write!(out, "{first}-{}", first + count - 1);
        }
    }
}

/// The node names of a node map, in order: the native form (`pmix[n[2:1-2,10]]`), the
/// raw form (`raw:n01,n02`) or a plain comma-separated list. In the raw form and a plain
/// list, empty names are skipped, as libpmix2 does.
///
/// # Errors
/// [`RegexError::TooLong`] for an input longer than [`MAX_LEN`];
/// [`RegexError::Malformed`] for a native form that breaks its grammar (no closing `]`,
/// a range without its digit count, a bad number, an empty name…);
/// [`RegexError::TooManyEntries`] / [`RegexError::TooLarge`] past [`MAX_ENTRIES`] names
/// or [`MAX_NAME_BYTES`] bytes of them; [`RegexError::Compressed`] for the `blob:` form.
pub fn parse_nodes(regex: &str) -> Result<Vec<String>, RegexError> {
    check_input(regex)?;
    if let Some(inner) = native_inner(regex)? {
        return parse_native_nodes(inner, NATIVE.len());
    }
    if regex.starts_with(BLOB) {
        return Err(RegexError::Compressed);
    }
    let (list, base) = match regex.strip_prefix(RAW) {
        Some(rest) => (rest, RAW.len()),
        None => (regex, 0),
    };
    // At most one name per two bytes: within both limits.
    Ok(pieces(list, ',', base).map(|(_, n)| n.to_owned()).collect())
}

/// The text inside `pmix[…]`, or `None` when `regex` is not in the native form.
fn native_inner(regex: &str) -> Result<Option<&str>, RegexError> {
    let Some(rest) = regex.strip_prefix(NATIVE) else {
        return Ok(None);
    };
    match rest.strip_suffix(']') {
        Some(inner) => Ok(Some(inner)),
        None => Err(malformed(regex.len(), "the native form has no closing ']'")),
    }
}

/// What a parse has produced so far, against the limits.
struct Budget {
    entries: usize,
    bytes: usize,
}

impl Budget {
    fn new() -> Budget {
        Budget {
            entries: 0,
            bytes: 0,
        }
    }

    /// Takes `count` entries of `bytes` bytes each, or the error for byte `at`.
    fn take(&mut self, count: u64, bytes: usize, at: usize) -> Result<(), RegexError> {
        let entries = usize::try_from(count)
            .ok()
            .and_then(|c| self.entries.checked_add(c))
            .filter(|&e| e <= MAX_ENTRIES)
            .ok_or(RegexError::TooManyEntries { at })?;
        let total = bytes
            .checked_mul(entries - self.entries)
            .and_then(|b| self.bytes.checked_add(b))
            .filter(|&b| b <= MAX_NAME_BYTES)
            .ok_or(RegexError::TooLarge { at })?;
        self.entries = entries;
        self.bytes = total;
        Ok(())
    }
}

/// Parses a decimal number of at most `u64`, refusing anything else.
fn number(s: &str, at: usize) -> Result<u64, RegexError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(malformed(at, "expected a decimal number"));
    }
    s.parse().map_err(|_| malformed(at, "number too large"))
}

/// Parses `a` or `a-b` (with `a <= b`) into `(a, b)`.
fn range(s: &str, at: usize) -> Result<(u64, u64), RegexError> {
    match s.split_once('-') {
        None => number(s, at).map(|n| (n, n)),
        Some((a, b)) => {
            let first = number(a, at)?;
            let last = number(b, at + a.len() + 1)?;
            if last < first {
                return Err(malformed(at, "range ends before it starts"));
            }
            Ok((first, last))
        }
    }
}

/// The names of the native form's inner text `s`, which starts at byte `base`.
fn parse_native_nodes(s: &str, base: usize) -> Result<Vec<String>, RegexError> {
    let mut names = Vec::new();
    let mut budget = Budget::new();
    let mut rest = s;
    let mut at = base;
    loop {
        let stop = rest.find([',', '[']).unwrap_or(rest.len());
        if rest[stop..].starts_with('[') {
            let prefix = &rest[..stop];
            let open = at + stop;
            let body = &rest[stop + 1..];
            let close = body
                .find(']')
                .ok_or(malformed(open, "'[' has no closing ']'"))?;
            let (width_text, ranges) = body[..close].split_once(':').ok_or(malformed(
                open + 1,
                "expected the digit count and ':' after '['",
            ))?;
            let width = usize::try_from(number(width_text, open + 1)?)
                .ok()
                .filter(|&w| w <= MAX_NAME_BYTES)
                .ok_or(RegexError::TooLarge { at: open + 1 })?;
            let after = &body[close + 1..];
            let end = after.find(',').unwrap_or(after.len());
            let suffix = &after[..end];
            if let Some(i) = suffix.find(['[', ']']) {
                return Err(malformed(open + close + 2 + i, "bracket in a suffix"));
            }
            let ranges_at = open + 1 + width_text.len() + 1;
            for (r_at, r) in split_all(ranges, ',', ranges_at) {
                if r.is_empty() {
                    return Err(malformed(r_at, "empty range"));
                }
                let (first, last) = range(r, r_at)?;
                // The widest name of the range: its last number, padded to `width`.
                let digits = last.checked_ilog10().map_or(1, |l| l as usize + 1);
                let len = prefix.len() + width.max(digits) + suffix.len();
                let count = (last - first)
                    .checked_add(1)
                    .ok_or(RegexError::TooManyEntries { at: r_at })?;
                budget.take(count, len, r_at)?;
                for n in first..=last {
                    names.push(format!("{prefix}{n:0width$}{suffix}"));
                }
            }
            let consumed = stop + 1 + close + 1 + end;
            if consumed == rest.len() {
                return Ok(names);
            }
            rest = &rest[consumed + 1..];
            at += consumed + 1;
        } else {
            let name = &rest[..stop];
            if name.is_empty() {
                return Err(malformed(at, "empty node name"));
            }
            budget.take(1, name.len(), at)?;
            names.push(name.to_owned());
            if stop == rest.len() {
                return Ok(names);
            }
            rest = &rest[stop + 1..];
            at += stop + 1;
        }
    }
}

// ---------------------------------------------------------------------------------------
// Ranks per node.

/// Reads a process list (`0,1,2,3;4-7`) into runs of consecutive ranks per node,
/// skipping empty nodes and elements; `base` is the byte offset of `s`.
fn rank_runs(s: &str, base: usize) -> Result<Vec<Vec<(u64, u64)>>, RegexError> {
    let mut nodes = Vec::new();
    let mut budget = Budget::new();
    for (n_at, node) in pieces(s, ';', base) {
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for (r_at, r) in pieces(node, ',', n_at) {
            let (first, last) = range(r, r_at)?;
            if last > u64::from(u32::MAX) {
                return Err(malformed(r_at, "rank above 4294967295"));
            }
            let count = last - first + 1;
            budget.take(count, 0, r_at)?;
            match runs.last_mut() {
                Some((f, c)) if *f + *c == first => *c += count,
                _ => runs.push((first, count)),
            }
        }
        if !runs.is_empty() {
            nodes.push(runs);
        }
    }
    Ok(nodes)
}

/// The process map libpmix2 4.2.2's `PMIx_generate_ppn` gives for `input`, one entry per
/// node separated by `;`, each a comma-separated list of ranks or `a-b` ranges
/// (`0,1,2,3;4,5,6,7` gives `pmix[0-3;4-7]`): its native form, or its raw form (`raw:`
/// and the input) when the native form would be longer than the input (`0;1` gives
/// `raw:0;1`) or hold no rank. Empty nodes and elements are skipped, as libpmix2 does.
///
/// # Errors
/// [`RegexError::TooLong`] when `input`, or the answer, is longer than [`MAX_LEN`];
/// [`RegexError::Malformed`] for an element that is not a rank (a decimal number up to
/// `u32::MAX`) or a range `a-b` with `a <= b`; [`RegexError::TooManyEntries`] for more
/// than [`MAX_ENTRIES`] ranks in all.
#[doc(alias = "PMIx_generate_ppn")]
pub fn generate_ppn(input: &str) -> Result<String, RegexError> {
    check_input(input)?;
    let nodes = rank_runs(input, 0)?;
    if nodes.is_empty() {
        return check_output(raw_form(input));
    }
    let mut out = String::from(NATIVE);
    for (i, runs) in nodes.iter().enumerate() {
        if i > 0 {
            out.push(';');
        }
        write_runs(&mut out, runs, ',');
    }
    out.push(']');
    if out.len() > input.len() {
        return check_output(raw_form(input));
    }
    Ok(out)
}

/// The ranks on each node of a process map, in node order: the native form
/// (`pmix[0-3;4-7]`), the raw form (`raw:0,1;2,3`) or a plain list (`0,1;2-3`), ranges
/// expanded in all three. Empty nodes and elements are skipped, as libpmix2 does.
///
/// # Errors
/// [`RegexError::TooLong`] for an input longer than [`MAX_LEN`];
/// [`RegexError::Malformed`] for a native form without its closing `]`, or an element
/// that is not a rank (a decimal number up to `u32::MAX`) or a range `a-b` with
/// `a <= b`; [`RegexError::TooManyEntries`] past [`MAX_ENTRIES`] ranks in all;
/// [`RegexError::Compressed`] for the `blob:` form.
pub fn parse_procs(regex: &str) -> Result<Vec<Vec<u32>>, RegexError> {
    check_input(regex)?;
    let (list, base) = if let Some(inner) = native_inner(regex)? {
        (inner, NATIVE.len())
    } else if regex.starts_with(BLOB) {
        return Err(RegexError::Compressed);
    } else if let Some(rest) = regex.strip_prefix(RAW) {
        (rest, RAW.len())
    } else {
        (regex, 0)
    };
    let nodes = rank_runs(list, base)?;
    Ok(nodes
        .into_iter()
        .map(|runs| {
            runs.into_iter()
                // Every rank was checked to fit a u32 (`rank_runs`): none is dropped.
                .flat_map(|(first, count)| {
                    (first..first + count).filter_map(|r| u32::try_from(r).ok())
                })
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny deterministic generator for the round-trip and no-panic tests.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % n
        }
    }

    fn names(list: &str) -> Vec<String> {
        list.split(',')
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .collect()
    }

    fn ranks(list: &str) -> Vec<Vec<u32>> {
        list.split(';')
            .filter(|n| !n.is_empty())
            .map(|n| {
                n.split(',')
                    .filter(|r| !r.is_empty())
                    .map(|r| r.parse().unwrap())
                    .collect()
            })
            .collect()
    }

    fn seq(prefix: &str, from: u32, to: u32, sep: &str) -> String {
        (from..=to)
            .map(|i| format!("{prefix}{i}"))
            .collect::<Vec<_>>()
            .join(sep)
    }

    // Measured: each expected string below is what Debian's libpmix2 4.2.2 returned from
    // PMIx_generate_regex (after PMIx_server_init, default MCA settings) for the input.
    const LIBPMIX2_NODE_REGEXES: &[(&str, &str)] = &[
        ("n1,n2", "pmix[n[1:1-2]]"),
        ("node01,node02,node03,node10", "pmix[node[2:1-3,10]]"),
        ("localhost", "pmix[localhost]"),
        ("n01,n02,n10", "pmix[n[2:1-2,10]]"),
        ("n1,n1,n2", "pmix[n[1:1,1-2]]"),
        ("n2,n1", "pmix[n[1:2,1]]"),
        ("1,2,3", "pmix[[1:1-3]]"),
        ("1n,2n,3n", "pmix[[1:1-3]n]"),
        ("c1n1,c1n2,c2n1", "pmix[c[1:1]n1,c[1:1]n2,c[1:2]n1]"),
        ("node-1,node-2", "pmix[node-1,node-2]"),
        ("n1.ib,n2.ib", "pmix[n1.ib,n2.ib]"),
        ("n1,n2,", "pmix[n[1:1-2]]"),
        ("a,b,c", "pmix[a,b,c]"),
        ("n007", "pmix[n[3:7]]"),
        ("n0,n1,n2,n3", "pmix[n[1:0-3]]"),
        ("N1,n2", "pmix[N[1:1],n[1:2]]"),
        ("host1a,host2a,host3b", "pmix[host[1:1-2]a,host[1:3]b]"),
        ("n9,n10,n11", "pmix[n[1:9],n[2:10-11]]"),
        ("a1,b1,a2", "pmix[a[1:1],b[1:1],a[1:2]]"),
        ("n1,n10,n2", "pmix[n[1:1],n[2:10],n[1:2]]"),
        ("localhost,n1,n2", "pmix[localhost,n[1:1-2]]"),
        ("n1,localhost", "pmix[n[1:1],localhost]"),
        ("x1,x2,1,2", "pmix[x[1:1-2],[1:1-2]]"),
        ("ab1cd,ab2cd", "pmix[ab[1:1-2]cd]"),
        ("n1a1,n1a2,n2a1", "pmix[n[1:1]a1,n[1:1]a2,n[1:2]a1]"),
        ("", "raw:"),
    ];

    // Measured the same way, from PMIx_generate_ppn.
    const LIBPMIX2_PPNS: &[(&str, &str)] = &[
        ("0,1,2,3;4,5,6,7", "pmix[0-3;4-7]"),
        ("0-3;4-7", "raw:0-3;4-7"),
        ("0-3,4-7", "raw:0-3,4-7"),
        ("0;1", "raw:0;1"),
        ("0,1,2,3,4,5,6,7;8,9,10,11,12,13,14,15", "pmix[0-7;8-15]"),
        ("0,2,4,6,8,10;1,3,5,7,9,11", "raw:0,2,4,6,8,10;1,3,5,7,9,11"),
        ("0,1,2,3,7,8,9,10,11,12", "pmix[0-3,7-12]"),
        ("3,2,1,0,4,5,6,7", "raw:3,2,1,0,4,5,6,7"),
        ("0,1,2,3;;4,5,6,7", "pmix[0-3;4-7]"),
        ("0,1,2,3,;4,5,6,7;", "pmix[0-3;4-7]"),
    ];

    #[test]
    fn node_regex_of_numbered_hosts_matches_libpmix2_form() {
        for (input, expected) in LIBPMIX2_NODE_REGEXES {
            assert_eq!(
                generate_node_regex(input).unwrap(),
                *expected,
                "input {input:?}"
            );
        }
    }

    #[test]
    fn node_regex_of_a_thousand_hosts_matches_libpmix2_form() {
        // Measured from libpmix2 for n1,...,n1000 (4892 bytes: native, not compressed).
        let input = seq("n", 1, 1000, ",");
        assert_eq!(
            generate_node_regex(&input).unwrap(),
            "pmix[n[1:1-9],n[2:10-99],n[3:100-999],n[4:1000]]"
        );
    }

    #[test]
    fn ppn_of_rank_lists_matches_libpmix2_form() {
        for (input, expected) in LIBPMIX2_PPNS {
            assert_eq!(generate_ppn(input).unwrap(), *expected, "input {input:?}");
        }
        // Measured from libpmix2 for 0,...,1500 (6394 bytes).
        assert_eq!(
            generate_ppn(&seq("", 0, 1500, ",")).unwrap(),
            "pmix[0-1500]"
        );
    }

    #[test]
    fn node_regex_keeps_order_where_libpmix2_reorders() {
        // libpmix2 gives "pmix[n[1:1-2],localhost]" and "pmix[n[1:1-2],[1:1]]" (measured):
        // n2 is merged into the first entry, ahead of the names between.
        assert_eq!(
            generate_node_regex("n1,localhost,n2").unwrap(),
            "pmix[n[1:1],localhost,n[1:2]]"
        );
        assert_eq!(
            generate_node_regex("n1,1,n2").unwrap(),
            "pmix[n[1:1],[1:1],n[1:2]]"
        );
    }

    #[test]
    fn node_regex_falls_back_to_raw_where_libpmix2_writes_what_it_cannot_parse() {
        // libpmix2: "pmix[c1n[1-4]]" (measured), which its own parser refuses.
        assert_eq!(generate_node_regex("c1n[1-4]").unwrap(), "raw:c1n[1-4]");
        assert_eq!(parse_nodes("raw:c1n[1-4]").unwrap(), ["c1n[1-4]"]);
    }

    #[test]
    fn node_regex_keeps_numbers_past_i32_whole() {
        // libpmix2: "pmix[n[11:1215752191],n[1:1]]" (measured): its int overflowed.
        let regex = generate_node_regex("n99999999999,n1").unwrap();
        assert_eq!(regex, "pmix[n99999999999,n[1:1]]");
        assert_eq!(parse_nodes(&regex).unwrap(), ["n99999999999", "n1"]);
    }

    #[test]
    fn node_regex_skips_empty_names() {
        // libpmix2: "pmix[n[1:1-2],]" and "pmix[,n[1:1]]" (measured), both refused by
        // its parser.
        assert_eq!(generate_node_regex("n1,,n2").unwrap(), "pmix[n[1:1-2]]");
        assert_eq!(generate_node_regex(",n1").unwrap(), "pmix[n[1:1]]");
        assert_eq!(generate_node_regex(",,").unwrap(), "raw:,,");
        assert_eq!(parse_nodes("raw:,,").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn ppn_extends_a_run_by_a_whole_continuing_range() {
        // libpmix2: "pmix[0-4,8-11]" (measured): the range 4-7 added one rank only.
        assert_eq!(generate_ppn("0-3,4-7,8,9,10,11").unwrap(), "pmix[0-11]");
        assert_eq!(
            generate_ppn("0-3,4-7,8,9,10,11;12,13").unwrap(),
            "pmix[0-11;12-13]"
        );
    }

    #[test]
    fn ppn_of_nothing_is_the_raw_form() {
        // libpmix2 crashes on "" (measured: SIGSEGV).
        assert_eq!(generate_ppn("").unwrap(), "raw:");
        assert_eq!(generate_ppn(";,;").unwrap(), "raw:;,;");
        assert_eq!(parse_procs("raw:;,;").unwrap(), Vec::<Vec<u32>>::new());
    }

    #[test]
    fn raw_input_stays_as_given() {
        // A rank list is numbers only: its raw form is not an input.
        assert_eq!(malformed_at(generate_ppn("raw:0;1")), 0);
        assert_eq!(generate_node_regex("raw:x[1]").unwrap(), "raw:x[1]");
    }

    #[test]
    fn node_regexes_round_trip() {
        let inputs = [
            "localhost",
            "a,b,c",
            "n1",
            "n01,n02,n10",
            "n1,n2,n3,n10,n11,n100",
            "n2,n1,n3,n3",
            "node-1,node-2,node3",
            "1,2,3,10",
            "001,002,1",
            "1n,2n,3m",
            "host1a,host2a,host3b,host4b",
            "c1n1,c1n2,c2n1,c2n2",
            "n1,localhost,n2,n1.ib,n3",
            "a1,b1,a2,b2",
            "N1,n1,N2,n2",
            "n0,n00,n000,n0000",
            "n99999999999,n2147483647,n2147483648,n2147483646",
            "x:1,x:2,y]1",
            "ünï1,ünï2",
            "abc123def456,abc124def456",
        ];
        for input in inputs {
            let regex = generate_node_regex(input).unwrap();
            assert_eq!(
                parse_nodes(&regex).unwrap(),
                names(input),
                "{input:?} -> {regex:?}"
            );
        }
        let long = seq("nid", 0, 20000, ",");
        let regex = generate_node_regex(&long).unwrap();
        assert_eq!(parse_nodes(&regex).unwrap(), names(&long));
    }

    #[test]
    fn random_node_lists_round_trip() {
        let mut rng = Lcg(7);
        let parts = ["n", "node", "c", "", "a", "-", ".ib", "x"];
        for _ in 0..2000 {
            let count = 1 + rng.below(12);
            let list: Vec<String> = (0..count)
                .map(|_| {
                    let mut name = parts[rng.below(parts.len())].to_owned();
                    if rng.below(4) > 0 {
                        let width = rng.below(4);
                        let _ = write!(name, "{:0width$}", rng.below(30));
                    }
                    if rng.below(3) == 0 {
                        name.push_str(parts[rng.below(parts.len())]);
                    }
                    if name.is_empty() {
                        name.push('z');
                    }
                    name
                })
                .collect();
            let input = list.join(",");
            let regex = generate_node_regex(&input).unwrap();
            assert_eq!(parse_nodes(&regex).unwrap(), list, "{input:?} -> {regex:?}");
        }
    }

    #[test]
    fn ppns_round_trip() {
        let inputs = [
            "0",
            "0,1,2,3;4,5,6,7",
            "0;1;2;3",
            "0,2,4;1,3,5",
            "3,2,1,0",
            "7,7,7",
            "0,1,2,3,8,9,10;4,5,6,7,11",
            "4294967295,4294967294",
        ];
        for input in inputs {
            let regex = generate_ppn(input).unwrap();
            assert_eq!(
                parse_procs(&regex).unwrap(),
                ranks(input),
                "{input:?} -> {regex:?}"
            );
        }
        let mut rng = Lcg(11);
        for _ in 0..2000 {
            let nodes: Vec<Vec<u32>> = (0..1 + rng.below(6))
                .map(|_| {
                    (0..1 + rng.below(8))
                        .map(|_| rng.below(20) as u32)
                        .collect()
                })
                .collect();
            let input = nodes
                .iter()
                .map(|n| n.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
                .collect::<Vec<_>>()
                .join(";");
            let regex = generate_ppn(&input).unwrap();
            assert_eq!(
                parse_procs(&regex).unwrap(),
                nodes,
                "{input:?} -> {regex:?}"
            );
        }
    }

    #[test]
    fn ppn_ranges_in_the_input_round_trip() {
        let regex = generate_ppn("0-3,4-7,8;9-9,10-12,20").unwrap();
        assert_eq!(regex, "pmix[0-8;9-12,20]");
        assert_eq!(
            parse_procs(&regex).unwrap(),
            [(0..=8).collect::<Vec<u32>>(), vec![9, 10, 11, 12, 20]]
        );
    }

    #[test]
    fn plain_and_raw_node_lists_parse_as_lists() {
        assert_eq!(parse_nodes("n1,n2").unwrap(), ["n1", "n2"]);
        assert_eq!(parse_nodes("raw:n1,,n2,").unwrap(), ["n1", "n2"]);
        assert_eq!(parse_nodes("c1n[1-4],x").unwrap(), ["c1n[1-4]", "x"]);
        assert_eq!(parse_nodes("").unwrap(), Vec::<String>::new());
        assert_eq!(parse_nodes("raw:").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn plain_and_raw_rank_lists_expand_ranges() {
        assert_eq!(parse_procs("0,1;2,3").unwrap(), [vec![0, 1], vec![2, 3]]);
        assert_eq!(
            parse_procs("raw:0-3;4-7").unwrap(),
            [vec![0, 1, 2, 3], vec![4, 5, 6, 7]]
        );
        assert_eq!(parse_procs("raw:0,,1;;2;").unwrap(), [vec![0, 1], vec![2]]);
    }

    #[test]
    fn native_node_form_parses_suffixes_widths_and_singletons() {
        assert_eq!(
            parse_nodes("pmix[host[1:1-2]a,localhost,[3:7,9]x,n[2:98-101]]").unwrap(),
            [
                "host1a",
                "host2a",
                "localhost",
                "007x",
                "009x",
                "n98",
                "n99",
                "n100",
                "n101"
            ]
        );
        // A number wider than its digit count is written whole.
        assert_eq!(parse_nodes("pmix[n[1:9-10]]").unwrap(), ["n9", "n10"]);
        assert_eq!(parse_nodes("pmix[n[0:0]]").unwrap(), ["n0"]);
    }

    fn malformed_at(r: Result<impl std::fmt::Debug, RegexError>) -> usize {
        match r {
            Err(RegexError::Malformed { at, .. }) => at,
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    #[test]
    fn malformed_native_node_forms_are_errors() {
        assert_eq!(malformed_at(parse_nodes("pmix[n[1:1-2]")), 5 + 1);
        assert_eq!(malformed_at(parse_nodes("pmix[n[1:1-2],x")), 15);
        assert_eq!(malformed_at(parse_nodes("pmix[")), 5);
        assert_eq!(malformed_at(parse_nodes("pmix[n[1-2]]")), 7);
        assert_eq!(malformed_at(parse_nodes("pmix[n[:1-2]]")), 7);
        assert_eq!(malformed_at(parse_nodes("pmix[n[1:2-1]]")), 9);
        assert_eq!(malformed_at(parse_nodes("pmix[n[1:x]]")), 9);
        assert_eq!(malformed_at(parse_nodes("pmix[n[1:1-]]")), 11);
        assert_eq!(malformed_at(parse_nodes("pmix[n[1:1,,2]]")), 11);
        assert_eq!(malformed_at(parse_nodes("pmix[n[1:]]")), 9);
        assert_eq!(malformed_at(parse_nodes("pmix[n[1:1]a[b]]")), 12);
        assert_eq!(malformed_at(parse_nodes("pmix[n[1:1]a]b]")), 12);
        assert_eq!(malformed_at(parse_nodes("pmix[n1,,n2]")), 8);
        assert_eq!(malformed_at(parse_nodes("pmix[n1,]")), 8);
        assert_eq!(malformed_at(parse_nodes("pmix[]")), 5);
        assert_eq!(
            malformed_at(parse_nodes("pmix[n[1:99999999999999999999]]")),
            9
        );
    }

    #[test]
    fn malformed_rank_lists_are_errors() {
        assert_eq!(malformed_at(parse_procs("pmix[0-3")), 8);
        assert_eq!(malformed_at(parse_procs("pmix[0-3;x]")), 9);
        assert_eq!(malformed_at(parse_procs("0,3-1")), 2);
        assert_eq!(malformed_at(parse_procs("0,-1")), 2);
        assert_eq!(malformed_at(parse_procs("0, 1")), 2);
        assert_eq!(malformed_at(parse_procs("4294967296")), 0);
        assert_eq!(malformed_at(parse_procs("raw:1;0-4294967296")), 6);
        assert_eq!(malformed_at(generate_ppn("0,1;a")), 4);
        assert_eq!(malformed_at(generate_ppn("5-2")), 0);
    }

    #[test]
    fn huge_ranges_are_refused_before_expanding() {
        assert_eq!(
            parse_nodes("pmix[n[1:0-1048576]]"),
            Err(RegexError::TooManyEntries { at: 9 })
        );
        assert!(parse_nodes("pmix[n[1:0-1048575]]").is_ok());
        assert_eq!(
            parse_nodes("pmix[n[1:0-18446744073709551615]]"),
            Err(RegexError::TooManyEntries { at: 9 })
        );
        assert_eq!(
            parse_nodes("pmix[n[1:0-600000],m[1:0-600000]]"),
            Err(RegexError::TooManyEntries { at: 23 })
        );
        assert_eq!(
            parse_nodes("pmix[n[67108865:1]]"),
            Err(RegexError::TooLarge { at: 7 })
        );
        assert_eq!(
            parse_nodes("pmix[n[67108864:1]]"),
            Err(RegexError::TooLarge { at: 16 })
        );
        assert_eq!(
            parse_nodes("pmix[n[1000:0-100000]]"),
            Err(RegexError::TooLarge { at: 12 })
        );
        assert_eq!(
            parse_procs("pmix[0-4294967295]"),
            Err(RegexError::TooManyEntries { at: 5 })
        );
        assert_eq!(
            generate_ppn("0-1048576"),
            Err(RegexError::TooManyEntries { at: 0 })
        );
        assert_eq!(generate_ppn("0-1048575").unwrap(), "raw:0-1048575");
    }

    #[test]
    fn inputs_past_the_length_limit_are_refused() {
        let long = "n".repeat(MAX_LEN + 1);
        let too_long = Err(RegexError::TooLong {
            what: "the input",
            len: MAX_LEN + 1,
        });
        assert_eq!(generate_node_regex(&long), too_long);
        assert_eq!(parse_nodes(&long), too_long.clone().map(|_: String| vec![]));
        assert_eq!(generate_ppn(&long).map(|_| ()), too_long.map(|_| ()));
        assert!(matches!(
            parse_procs(&long),
            Err(RegexError::TooLong { .. })
        ));
        // An answer past the limit is refused too: 1 MiB of "a1,b1,…" grows.
        let mut grows = String::new();
        while grows.len() < MAX_LEN - 6 {
            grows.push_str("a1,b1,");
        }
        assert!(matches!(
            generate_node_regex(&grows),
            Err(RegexError::TooLong {
                what: "the regex generated",
                ..
            })
        ));
    }

    #[test]
    fn compressed_form_is_refused() {
        let blob = "blob:\0component=zlib:\0size=12:\0xxxx";
        assert_eq!(parse_nodes(blob), Err(RegexError::Compressed));
        assert_eq!(parse_procs(blob), Err(RegexError::Compressed));
    }

    #[test]
    fn errors_say_where_and_map_to_one_status() {
        let e = parse_nodes("pmix[n[1-2]]").unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed map at byte 7: expected the digit count and ':' after '['"
        );
        assert_eq!(e.status(), Status::ERR_BAD_PARAM);
        let e = parse_procs("pmix[0-4294967295]").unwrap_err();
        assert_eq!(e.status(), Status::ERR_OUT_OF_RESOURCE);
        assert!(e.to_string().contains("at byte 5"), "{e}");
        assert_eq!(RegexError::Compressed.status(), Status::ERR_NOT_SUPPORTED);
    }

    #[test]
    fn no_input_makes_a_parser_panic() {
        let alphabet = b"pmix[]:,-;0123456789ab\xc3\xbc";
        let mut rng = Lcg(3);
        for _ in 0..20000 {
            let len = rng.below(24);
            let mut bytes: Vec<u8> = if rng.below(2) == 0 {
                b"pmix[".to_vec()
            } else {
                Vec::new()
            };
            bytes.extend((0..len).map(|_| alphabet[rng.below(alphabet.len())]));
            let s = String::from_utf8_lossy(&bytes);
            let _ = parse_nodes(&s);
            let _ = parse_procs(&s);
            let _ = generate_ppn(&s);
            if let Ok(regex) = generate_node_regex(&s) {
                assert_eq!(
                    parse_nodes(&regex).unwrap(),
                    names(&s),
                    "{s:?} -> {regex:?}"
                );
            }
        }
    }
}
