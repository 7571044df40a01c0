//! The printing helpers OpenPMIx programs call (`PMIx_Data_type_string`,
//! `PMIx_Scope_string`, `PMIx_Data_range_string`, `PMIx_Value_string`,
//! `PMIx_Info_string`, `PMIx_Data_print`), with libpmix2 4.2.2's texts: a test prints
//! the same values through both libraries and compares.
//!
//! What differs, by choice: `PMIx_Info_string` names a key by the `#define` of our
//! header that has it (libpmix2 uses its whole attribute dictionary; a key our header
//! does not define is printed as it is), and a value type our C conversion does not
//! hold (an array, a topology, …) prints its type and no value.

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_void};
use std::fmt::Write;
use std::sync::OnceLock;

use pmix_core::Status;

use crate::boundary::{BAD_PARAM, c_chars, c_strdup, export, opt_cstr, opt_ref, try_mut};
use crate::data::value::{CValue, load};
use crate::types::*;

/// Type names, indexed by `pmix_data_type_t` (libpmix2's texts).
const TYPE_NAMES: [&CStr; 70] = [
    c"UNKNOWN",
    c"PMIX_BOOL",
    c"PMIX_BYTE",
    c"PMIX_STRING",
    c"PMIX_SIZE",
    c"PMIX_PID",
    c"PMIX_INT",
    c"PMIX_INT8",
    c"PMIX_INT16",
    c"PMIX_INT32",
    c"PMIX_INT64",
    c"PMIX_UINT",
    c"PMIX_UINT8",
    c"PMIX_UINT16",
    c"PMIX_UINT32",
    c"PMIX_UINT64",
    c"PMIX_FLOAT",
    c"PMIX_DOUBLE",
    c"PMIX_TIMEVAL",
    c"PMIX_TIME",
    c"PMIX_STATUS",
    c"PMIX_VALUE",
    c"PMIX_PROC",
    c"PMIX_APP",
    c"PMIX_INFO",
    c"PMIX_PDATA",
    c"PMIX_BUFFER",
    c"PMIX_BYTE_OBJECT",
    c"PMIX_KVAL",
    c"PMIX_MODEX",
    c"PMIX_PERSIST",
    c"PMIX_POINTER",
    c"PMIX_SCOPE",
    c"PMIX_DATA_RANGE",
    c"PMIX_COMMAND",
    c"PMIX_INFO_DIRECTIVES",
    c"PMIX_DATA_TYPE",
    c"PMIX_PROC_STATE",
    c"PMIX_PROC_INFO",
    c"PMIX_DATA_ARRAY",
    c"PMIX_PROC_RANK",
    c"PMIX_QUERY",
    c"PMIX_COMPRESSED_STRING",
    c"PMIX_ALLOC_DIRECTIVE",
    c"PMIX_INFO_ARRAY",
    c"PMIX_IOF_CHANNEL",
    c"PMIX_ENVAR",
    c"PMIX_COORD",
    c"PMIX_REGATTR",
    c"PMIX_REGEX",
    c"PMIX_JOB_STATE",
    c"PMIX_LINK_STATE",
    c"PMIX_PROC_CPUSET",
    c"PMIX_GEOMETRY",
    c"PMIX_DEVICE_DIST",
    c"PMIX_ENDPOINT",
    c"PMIX_TOPO",
    c"PMIX_DEVTYPE",
    c"PMIX_LOCTYPE",
    c"PMIX_COMPRESSED_BYTE_OBJECT",
    c"PMIX_PROC_NSPACE",
    c"PMIX_PROC_STATS",
    c"PMIX_DISK_STATS",
    c"PMIX_NET_STATS",
    c"PMIX_NODE_STATS",
    c"PMIX_DATA_BUFFER",
    c"PMIX_STOR_MEDIUM",
    c"PMIX_STOR_ACCESS",
    c"PMIX_STOR_PERSIST",
    c"PMIX_STOR_ACCESS_TYPE",
];

fn type_name(t: pmix_data_type_t) -> &'static CStr {
    TYPE_NAMES
        .get(usize::from(t))
        .filter(|_| t != PMIX_UNDEF)
        .copied()
        .unwrap_or(c"UNKNOWN")
}

export! {
    /// `PMIx_Data_type_string`: the name of data type `type_` (`"PMIX_UINT32"`),
    /// `"UNKNOWN"` for one it does not know. The string is static.
    fn PMIx_Data_type_string(
        type_: pmix_data_type_t,
    ) -> *const c_char [on_panic: c"UNKNOWN".as_ptr()] {
        type_name(type_).as_ptr()
    }
}

export! {
    /// `PMIx_Scope_string`: what scope `scope` means (`"SHARE ACROSS ALL NODES"`),
    /// `"UNKNOWN SCOPE"` for another value. The string is static.
    fn PMIx_Scope_string(
        scope: pmix_scope_t,
    ) -> *const c_char [on_panic: c"UNKNOWN SCOPE".as_ptr()] {
        let s: &CStr = match scope {
            0 => c"UNDEFINED",
            1 => c"SHARE ON LOCAL NODE ONLY",
            2 => c"SHARE ON REMOTE NODES ONLY",
            3 => c"SHARE ACROSS ALL NODES",
            4 => c"STORE INTERNALLY",
            _ => c"UNKNOWN SCOPE",
        };
        s.as_ptr()
    }
}

export! {
    /// `PMIx_Data_range_string`: what range `range` means (`"AVAIL ON LOCAL NODE ONLY"`),
    /// `"UNKNOWN"` for another value. The string is static.
    fn PMIx_Data_range_string(
        range: pmix_data_range_t,
    ) -> *const c_char [on_panic: c"UNKNOWN".as_ptr()] {
        let s: &CStr = match range {
            0 => c"UNDEFINED",
            1 => c"INTENDED FOR HOST RESOURCE MANAGER ONLY",
            2 => c"AVAIL ON LOCAL NODE ONLY",
            3 => c"AVAIL TO PROCESSES IN SAME JOB ONLY",
            4 => c"AVAIL TO PROCESSES IN SAME ALLOCATION ONLY",
            5 => c"AVAIL TO ANYONE WITH AUTHORIZATION",
            6 => c"AVAIL AS SPECIFIED IN DIRECTIVES",
            7 => c"AVAIL ON LOCAL PROC ONLY",
            _ => c"UNKNOWN",
        };
        s.as_ptr()
    }
}

/// A rank as libpmix2 prints it: the name of a special rank, else the number.
fn rank_text(r: pmix_rank_t) -> String {
    match r {
        u32::MAX => "PMIX_RANK_UNDEF".into(),
        0xffff_fffe => "PMIX_RANK_WILDCARD".into(),
        0xffff_fffd => "PMIX_RANK_LOCAL_NODE".into(),
        0xffff_fffc => "PMIX_RANK_INVALID".into(),
        0xffff_fffb => "PMIX_RANK_LOCAL_PEERS".into(),
        r => r.to_string(),
    }
}

/// A C string's text (`"NULL"` for none).
fn text(s: Option<&CStr>) -> String {
    s.map_or_else(|| "NULL".into(), |s| s.to_string_lossy().into_owned())
}

/// The text of a namespace array: its bytes up to the NUL (all of them without one).
fn nspace_text(nspace: &[c_char]) -> String {
    let bytes = c_chars(nspace);
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// `Data type: T\tValue: V` (or what libpmix2 prints instead for its type), without
/// any prefix, of a C value (one C gave: the C contract; or one the library made).
fn value_body(v: &pmix_value_t) -> String {
    let t = type_name(v.type_).to_string_lossy();
    // SAFETY: each arm reads the union member the type tag names; a string or process
    // it points to is readable as it says (the C contract, or the library's making).
    let value = unsafe {
        let text = |p: *const c_char| text((!p.is_null()).then(|| CStr::from_ptr(p)));
        let d = &v.data;
        match v.type_ {
            PMIX_UNDEF => return "Data type: PMIX_UNDEF".into(),
            PMIX_BOOL => (if d.flag != 0 { "TRUE" } else { "FALSE" }).into(),
            PMIX_BYTE | PMIX_UINT8 => d.uint8.to_string(),
            PMIX_STRING => text(d.string),
            PMIX_SIZE => d.size.to_string(),
            PMIX_PID => d.pid.to_string(),
            PMIX_INT => d.integer.to_string(),
            PMIX_INT8 => d.int8.to_string(),
            PMIX_INT16 => d.int16.to_string(),
            PMIX_INT32 => d.int32.to_string(),
            PMIX_INT64 => d.int64.to_string(),
            PMIX_UINT => d.uint.to_string(),
            PMIX_UINT16 => d.uint16.to_string(),
            PMIX_UINT32 => d.uint32.to_string(),
            PMIX_UINT64 => d.uint64.to_string(),
            PMIX_FLOAT => format!("{:.6}", d.fval),
            PMIX_DOUBLE => format!("{:.6}", d.dval),
            PMIX_STATUS => Status(d.status).c_text().to_string_lossy().into_owned(),
            PMIX_PROC_RANK => rank_text(d.rank),
            PMIX_PROC => {
                return match d.proc_.as_ref() {
                    Some(p) => format!("PROC: {}:{}", nspace_text(&p.nspace), rank_text(p.rank)),
                    None => "PROC: NULL".into(),
                };
            }
            PMIX_BYTE_OBJECT => return format!("Data type: {t}\tSize: {}", d.bo.size),
            PMIX_POINTER => format!("{:p}", d.ptr),
            _ => return format!("Data type: {t}"),
        }
    };
    format!("Data type: {t}\tValue: {value}")
}

/// The names our header gives keys: `"pmix.job.size"` → `"PMIX_JOB_SIZE"` (read once
/// from the `#define NAME "key"` lines of `pmix_common.h`).
pub(crate) fn key_names() -> &'static HashMap<&'static str, &'static str> {
    static NAMES: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        include_str!("../../include/pmix_common.h")
            .lines()
            .filter_map(|l| {
                let mut it = l.strip_prefix("#define ")?.split_whitespace();
                let name = it.next()?;
                let key = it.next()?.strip_prefix('"')?.strip_suffix('"')?;
                Some((key, name))
            })
            .collect()
    })
}

export! {
    /// `PMIx_Value_string`: the value as libpmix2 prints it
    /// (`" PMIX_VALUE:  Data type: PMIX_UINT32\tValue: 42"`), `malloc`ed (free with
    /// `free`); NULL for a NULL value or when out of memory.
    ///
    /// # C contract
    /// `value` is NULL or a readable value whose data is what its type says.
    fn PMIx_Value_string(
        value: *const pmix_value_t,
    ) -> *mut c_char [on_panic: std::ptr::null_mut()] {
        let Some(v) = opt_ref!(value) else {
            return std::ptr::null_mut();
        };
        c_strdup(&format!(" PMIX_VALUE:  {}", value_body(v)))
    }
}

export! {
    /// `PMIx_Info_string`: the info as libpmix2 prints it (its key's name, its
    /// directives, its value, one per line), `malloc`ed (free with `free`); NULL for a
    /// NULL info or when out of memory.
    ///
    /// # C contract
    /// `info` is NULL or a readable info whose value's data is what its type says.
    fn PMIx_Info_string(
        info: *const pmix_info_t,
    ) -> *mut c_char [on_panic: std::ptr::null_mut()] {
        let Some(i) = opt_ref!(info) else {
            return std::ptr::null_mut();
        };
        let key = crate::data::info::key(i)
            .ok()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .unwrap_or_default();
        let name = key_names().get(key.as_str()).copied().unwrap_or(&key);
        let directives = if i.flags & PMIX_INFO_REQD != 0 {
            "REQUIRED"
        } else {
            "OPTIONAL"
        };
        let mut s = String::new();
        let _ = write!(
            s,
            " KEY: {name}\n \t Data type: PMIX_INFO_DIRECTIVES\tValue: {directives}\n \t PMIX_VALUE:  {}",
            value_body(&i.value)
        );
        c_strdup(&s)
    }
}

export! {
    /// `PMIx_Data_print`: `*output` = `prefix` (none when NULL: a space) followed by the
    /// data at `src` of type `type_` as libpmix2 prints it, `malloc`ed.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` for a NULL `output` or `src`; `PMIX_ERR_NOMEM`.
    ///
    /// # Safety
    /// `output` is NULL or writable; `src` is NULL or points to a readable datum of type
    /// `type_` (for `PMIX_STRING`, the string itself); `prefix` is NULL or a string.
    unsafe fn PMIx_Data_print(
        output: *mut *mut c_char,
        prefix: *const c_char,
        src: *mut c_void,
        type_: pmix_data_type_t,
    ) -> pmix_status_t {
        let out = try_mut!(output)?;
        *out = std::ptr::null_mut();
        if src.is_null() {
            return Err(BAD_PARAM);
        }
        let mut v = CValue::undef();
        // SAFETY: `src` holds a datum of `type_` (this function's contract), as `load` reads
        // it; the copy is released when `v` drops.
        let loaded = unsafe { load(&mut v.0, src, type_) };
        let body = if loaded.is_ok() {
            value_body(&v.0)
        } else {
            format!("Data type: {}", type_name(type_).to_string_lossy())
        };
        let prefix = match opt_cstr!(prefix) {
            None => " ".to_owned(),
            Some(p) => text(Some(p)),
        };
        let s = c_strdup(&format!("{prefix}{body}"));
        if s.is_null() {
            return Err(Status::ERR_NOMEM);
        }
        *out = s;
        Ok(())
    }
}
