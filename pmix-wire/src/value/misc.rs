//! The remaining composite elements: [`ProcInfo`], [`App`], [`Query`],
//! [`Envar`], [`Regattr`] and [`Regex`].
//!
//! Layouts checked against OpenPMIx's `src/mca/bfrops/base/bfrop_base_pack.c`
//! (`pmix_bfrops_base_pack_pinfo`, `_app`, `_query`, `_envar`, `_regattr`,
//! `_regex`) and, for REGEX, the `preg` components' `pack`/`unpack`
//! (`src/mca/preg/native/preg_native.c`, `preg/raw/preg_raw.c`,
//! `preg/compress/preg_compress.c`, `preg/base/preg_base_stubs.c`). APP's argc is
//! packed as an INT and its env count as an INT32: with bfrops v4.1's flex128
//! integers both are the same untagged zigzag INT32.

use alloc::vec::Vec;

use super::count::{put_vu_count, put_zz_count, vu_count, zz_count};
use super::wstr::{opt_str, put_opt_str, put_str, req_str};
use super::{Info, Pid, Proc, WStr};
use crate::buf::{Element, Reader, Writer};
use crate::error::{ErrorKind, WireError};
use crate::types::DataType;

/// PROC_INFO (`pmix_proc_info_t`): the process, its host name, its executable,
/// its pid (tagged) and its state (one byte).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProcInfo {
    /// The process.
    pub proc: Proc,
    /// Its host name (NULL if unknown).
    pub hostname: Option<WStr>,
    /// Its executable (NULL if unknown).
    pub executable: Option<WStr>,
    /// Its pid.
    pub pid: Pid,
    /// Its `pmix_proc_state_t`.
    pub state: u8,
}

impl Element for ProcInfo {
    const TYPE: DataType = DataType::ProcInfo;

    fn encode(&self, w: &mut Writer) {
        self.proc.encode(w);
        put_opt_str(w, &self.hostname);
        put_opt_str(w, &self.executable);
        self.pid.encode(w);
        w.u8(self.state);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(ProcInfo {
            proc: Proc::decode(r)?,
            hostname: opt_str(r, "proc info hostname")?,
            executable: opt_str(r, "proc info executable")?,
            pid: Pid::decode(r)?,
            state: r.u8("proc info state")?,
        })
    }
}

/// Reads `n` non-NULL strings.
fn strings(r: &mut Reader<'_>, n: usize, what: &'static str) -> Result<Vec<WStr>, WireError> {
    let mut v = Vec::with_capacity(r.capacity_for(n));
    for _ in 0..n {
        v.push(req_str(r, what)?);
    }
    Ok(v)
}

/// Reads `n` INFO elements.
fn infos(r: &mut Reader<'_>, n: usize) -> Result<Vec<Info>, WireError> {
    let mut v = Vec::with_capacity(r.capacity_for(n));
    for _ in 0..n {
        v.push(Info::decode(r)?);
    }
    Ok(v)
}

/// APP (`pmix_app_t`, one application of a spawn): the command, its argv (an INT32
/// count, then the strings), its environment (the same), the working directory,
/// maxprocs (INT32), and its INFO directives (a SIZE count, then the INFOs).
/// Strings inside argv and env are never NULL (OpenPMIx's argv arrays end at the
/// first NULL).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct App {
    /// The executable (NULL if unset).
    pub cmd: Option<WStr>,
    /// The arguments, `argv[0]` first.
    pub argv: Vec<WStr>,
    /// The environment, `NAME=value` each.
    pub env: Vec<WStr>,
    /// The working directory (NULL if unset).
    pub cwd: Option<WStr>,
    /// How many processes to start.
    pub maxprocs: i32,
    /// Directives.
    pub info: Vec<Info>,
}

impl Element for App {
    const TYPE: DataType = DataType::App;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, &self.cmd);
        put_zz_count(w, self.argv.len());
        for s in &self.argv {
            put_str(w, s);
        }
        put_zz_count(w, self.env.len());
        for s in &self.env {
            put_str(w, s);
        }
        put_opt_str(w, &self.cwd);
        w.zigzag(self.maxprocs.into());
        put_vu_count(w, self.info.len());
        for i in &self.info {
            i.encode(w);
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let cmd = opt_str(r, "app cmd")?;
        let n = zz_count(r, "app argc")?;
        let argv = strings(r, n, "app argv")?;
        let n = zz_count(r, "app envc")?;
        let env = strings(r, n, "app env")?;
        let cwd = opt_str(r, "app cwd")?;
        let maxprocs = r.zigzag(32, "app maxprocs")? as i32;
        let n = vu_count(r, "app ninfo")?;
        let info = infos(r, n)?;
        Ok(App {
            cmd,
            argv,
            env,
            cwd,
            maxprocs,
            info,
        })
    }
}

/// QUERY (`pmix_query_t`): the keys (an INT32 count, then non-NULL strings) and
/// the qualifiers (a SIZE count, then INFOs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Query {
    /// The keys asked for.
    pub keys: Vec<WStr>,
    /// Qualifiers.
    pub qualifiers: Vec<Info>,
}

impl Element for Query {
    const TYPE: DataType = DataType::Query;

    fn encode(&self, w: &mut Writer) {
        put_zz_count(w, self.keys.len());
        for k in &self.keys {
            put_str(w, k);
        }
        put_vu_count(w, self.qualifiers.len());
        for i in &self.qualifiers {
            i.encode(w);
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let n = zz_count(r, "query nkeys")?;
        let keys = strings(r, n, "query key")?;
        let n = vu_count(r, "query nqual")?;
        let qualifiers = infos(r, n)?;
        Ok(Query { keys, qualifiers })
    }
}

/// ENVAR (`pmix_envar_t`): a variable's name, its value, and the separator used to
/// prepend or append (one byte).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Envar {
    /// The variable's name (NULL if unset).
    pub envar: Option<WStr>,
    /// Its value (NULL if unset).
    pub value: Option<WStr>,
    /// The separator (`:` …).
    pub separator: u8,
}

impl Element for Envar {
    const TYPE: DataType = DataType::Envar;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, &self.envar);
        put_opt_str(w, &self.value);
        w.u8(self.separator);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Envar {
            envar: opt_str(r, "envar name")?,
            value: opt_str(r, "envar value")?,
            separator: r.u8("envar separator")?,
        })
    }
}

/// REGATTR (`pmix_regattr_t`, a registered attribute): its name, its key string,
/// its type (a DATA_TYPE varint), and its description (an INT32 count of non-NULL
/// strings).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Regattr {
    /// The attribute's name (NULL if unset).
    pub name: Option<WStr>,
    /// Its key string (`pmix.…`, NULL if unset).
    pub string: Option<WStr>,
    /// The type of its value.
    pub ty: DataType,
    /// Lines of description.
    pub description: Vec<WStr>,
}

impl Element for Regattr {
    const TYPE: DataType = DataType::Regattr;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, &self.name);
        put_opt_str(w, &self.string);
        w.data_type(self.ty);
        put_zz_count(w, self.description.len());
        for s in &self.description {
            put_str(w, s);
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let name = opt_str(r, "regattr name")?;
        let string = opt_str(r, "regattr string")?;
        let ty = r.data_type("regattr type")?;
        let n = zz_count(r, "regattr ndesc")?;
        let description = strings(r, n, "regattr description")?;
        Ok(Regattr {
            name,
            string,
            ty,
            description,
        })
    }
}

/// REGEX: a regular expression of node or process names, in the form the `preg`
/// component that made it writes (OpenPMIx `src/mca/preg/{native,raw,compress}`
/// and `preg/base/preg_base_stubs.c`; docs/wire.md §5.4). Which form a value takes
/// is decided by its first bytes, as the C unpacker decides it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Regex {
    /// A string that starts with `pmix` (preg/native: `pmix[…]`) or `raw:`
    /// (preg/raw): its bytes and a NUL, with no length before them. Encoding a
    /// string without one of those prefixes, or holding a NUL, fails.
    Raw(WStr),
    /// preg/compress's zlib form, kept as the bytes the wire carries: `blob:`…NUL,
    /// `component=zlib:` NUL, a size string NUL, then more bytes. Its length is
    /// what the C unpacker computes from those strings (the size string's leading
    /// decimal number + 27 + the size string's length + 1), which in OpenPMIx 4.2
    /// does not cover the compressed data it meant to (the number is read at
    /// `size=`, so it is 0): the bytes are kept as sent, not inflated. Encoding
    /// bytes whose own prefix does not give their length fails.
    Blob(Vec<u8>),
    /// Any other string: a whole top-level pack of one STRING (count, then the
    /// STRING; in a fully described buffer with its type tags), NULL allowed.
    Packed(Option<WStr>),
}

/// The length of the `blob:` form at the start of `bytes`: `Ok(None)` when the
/// bytes are not that form (the C unpacker then tries the other forms),
/// `Err(why)` when they claim it and are malformed.
fn blob_len(bytes: &[u8]) -> Result<Option<usize>, &'static str> {
    if !bytes.starts_with(b"blob") {
        return Ok(None);
    }
    let Some(first) = bytes.iter().position(|&b| b == 0) else {
        return Err("a blob regex without its NUL");
    };
    let rest = bytes.get(first + 1..).unwrap_or_default();
    const COMPONENT: &[u8] = b"component=zlib:";
    if !rest.starts_with(COMPONENT) {
        return Ok(None);
    }
    // The C unpacker steps over the component string and one byte more.
    let size_at = first + 1 + COMPONENT.len() + 1;
    let size = bytes.get(size_at..).unwrap_or_default();
    let Some(slen) = size.iter().position(|&b| b == 0) else {
        return Err("a blob regex without its size string's NUL");
    };
    let digits = size.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0
        && size
            .first()
            .is_some_and(|&b| b == b'+' || b == b'-' || b.is_ascii_whitespace())
    {
        return Err("a blob regex size this codec does not read");
    }
    let mut n: usize = 0;
    for &d in size.iter().take(digits) {
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(usize::from(d - b'0')))
            .ok_or("a blob regex size too large")?;
    }
    let total = n
        .checked_add(27 + slen + 1)
        .ok_or("a blob regex size too large")?;
    if total < size_at + slen + 1 {
        return Err("a blob regex shorter than its own prefix");
    }
    Ok(Some(total))
}

/// The REGEX forms whose strings start with these prefixes are written raw.
fn is_raw_prefix(bytes: &[u8]) -> bool {
    bytes.starts_with(b"pmix") || bytes.starts_with(b"raw:")
}

impl Element for Regex {
    const TYPE: DataType = DataType::Regex;

    fn encode(&self, w: &mut Writer) {
        match self {
            Regex::Raw(s) => {
                if !is_raw_prefix(s.as_bytes()) || s.as_bytes().contains(&0) {
                    w.fail("a raw regex without its pmix or raw: prefix, or with a NUL");
                }
                w.raw(s.as_bytes());
                w.u8(0);
            }
            Regex::Blob(b) => {
                if blob_len(b) != Ok(Some(b.len())) {
                    w.fail("a blob regex whose prefix does not give its length");
                }
                w.raw(b);
            }
            Regex::Packed(s) => w.pack_one(s),
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let at = r.offset();
        let rest = r.rest();
        let bad = |why| ErrorKind::BadValue { what: "regex", why };
        match blob_len(rest) {
            Err(why) => return Err(r.error_at(bad(why), at)),
            Ok(Some(n)) => {
                let n = r.bounded(n as u64, r.limits().max_bytes, "regex", at)?;
                return Ok(Regex::Blob(r.take(n, "regex")?.to_vec()));
            }
            Ok(None) => {}
        }
        if is_raw_prefix(rest) {
            let Some(n) = rest.iter().position(|&b| b == 0) else {
                return Err(r.error(ErrorKind::Truncated { what: "regex" }));
            };
            r.bounded(n as u64, r.limits().max_bytes, "regex", at)?;
            let s = WStr::from(r.take(n, "regex")?);
            r.u8("regex")?;
            Ok(Regex::Raw(s))
        } else {
            Ok(Regex::Packed(r.unpack_one("regex")?))
        }
    }
}
