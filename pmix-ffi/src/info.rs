//! Decoding `pmix_info_t` arrays (docs/design.md §3.1).
//!
//! - A key must be NUL-terminated within its 512 bytes.
//! - Known keys with a value of the wrong type, empty strings, strings without a NUL
//!   within [`MAX_STRING`] bytes, zero or unknown type masks: `PMIX_ERR_BAD_PARAM`.
//! - Unknown keys are ignored unless flagged `PMIX_INFO_REQD`
//!   (`PMIX_ERR_NOT_SUPPORTED`).
//! - `ninfo > 0` with a NULL array, or an `ninfo` whose array would exceed `isize::MAX`
//!   bytes: `PMIX_ERR_BAD_PARAM`; a NULL array with `ninfo == 0` is an empty one.

use std::ffi::CStr;

use pmix_core::{DeviceTypes, Status};

use crate::boundary::{BAD_PARAM, bounded_str, c_slice};
use crate::types::{
    PMIX_DEVTYPE, PMIX_INFO_REQD, PMIX_MAX_KEYLEN, PMIX_STRING, PMIX_UINT, PMIX_UINT32,
    PMIX_UINT64, pmix_info_t,
};

/// The longest string value accepted (a uuid: `gpu://<255-byte host>::<255-byte name>`
/// fits with room to spare).
pub(crate) const MAX_STRING: usize = 4096;

/// `PMIX_DEVICE_DISTANCES`.
pub(crate) const KEY_DEVICE_DISTANCES: &CStr = c"pmix.dev.dist";
/// `PMIX_DEVICE_TYPE`.
pub(crate) const KEY_DEVICE_TYPE: &CStr = c"pmix.dev.type";
/// `PMIX_DEVICE_ID`.
pub(crate) const KEY_DEVICE_ID: &CStr = c"pmix.dev.id";
/// `PMIX_DEVICE_DIST_ORIGIN`.
pub(crate) const KEY_DEVICE_DIST_ORIGIN: &CStr = c"pmix.dev.dist.origin";
/// `PMIX_HOSTNAME`.
pub(crate) const KEY_HOSTNAME: &CStr = c"pmix.hname";
/// `PMIX_TOOL_DO_NOT_CONNECT`.
pub(crate) const KEY_TOOL_DO_NOT_CONNECT: &CStr = c"pmix.tool.nocon";
/// `PMIX_SERVER_URI`.
pub(crate) const KEY_SERVER_URI: &CStr = c"pmix.srvr.uri";
/// `PMIX_SERVER_PIDINFO`: a tool's target server, by its pid.
pub(crate) const KEY_SERVER_PIDINFO: &CStr = c"pmix.srvr.pidinfo";
/// `PMIX_SERVER_NSPACE`: a tool's target server, by its namespace.
pub(crate) const KEY_SERVER_NSPACE: &CStr = c"pmix.srv.nspace";
/// `PMIX_SYSTEM_TMPDIR`: where a tool looks for rendezvous files.
pub(crate) const KEY_SYSTEM_TMPDIR: &CStr = c"pmix.sys.tmpdir";

/// The info array as a slice.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for `ninfo > 0` with a NULL or misaligned `info`, or an `ninfo`
/// so large that `ninfo × sizeof(pmix_info_t)` exceeds `isize::MAX` (no real array is
/// that long; forming the slice would be undefined behaviour).
///
/// # Safety
/// A non-NULL `info` must point to `ninfo` readable elements that outlive `'a`.
pub(crate) unsafe fn info_slice<'a>(
    info: *const pmix_info_t,
    ninfo: usize,
) -> Result<&'a [pmix_info_t], Status> {
    // SAFETY: forwarded from the caller.
    unsafe { c_slice(info, ninfo) }
}

/// The key of `i`, without its NUL.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` when its 512 bytes hold no NUL.
pub(crate) fn key(i: &pmix_info_t) -> Result<&[u8], Status> {
    // SAFETY: `c_char` and `u8` have the same size and alignment; the array is
    // borrowed from `i` for the result's lifetime.
    let bytes: &[u8; PMIX_MAX_KEYLEN + 1] = unsafe { &*(&raw const i.key).cast() };
    let nul = bytes.iter().position(|&b| b == 0).ok_or(BAD_PARAM)?;
    Ok(&bytes[..nul])
}

/// A string value: `PMIX_ERR_BAD_PARAM` if the type is not `PMIX_STRING` or the string
/// is NULL, empty, unterminated within [`MAX_STRING`] bytes or not UTF-8.
///
/// # Safety
/// A `PMIX_STRING` value's pointer must be NULL or readable up to its NUL or
/// [`MAX_STRING`] + 1 bytes.
unsafe fn string_value(i: &pmix_info_t) -> Result<&str, Status> {
    if i.value.type_ != PMIX_STRING {
        return Err(BAD_PARAM);
    }
    // SAFETY: the tag says the union holds `string`.
    let p = unsafe { i.value.data.string };
    // SAFETY: forwarded from the caller.
    let s = unsafe { bounded_str(p, MAX_STRING) }?;
    if s.is_empty() {
        return Err(BAD_PARAM);
    }
    Ok(s)
}

/// A device type mask given as DEVTYPE, UINT64, UINT32 or UINT.
fn type_value(i: &pmix_info_t) -> Result<DeviceTypes, Status> {
    // SAFETY: the tag says which union member holds the value, and only that member
    // is read; every one of them is a plain integer, valid for any bit pattern.
    let mask = unsafe {
        match i.value.type_ {
            PMIX_DEVTYPE => i.value.data.devtype,
            PMIX_UINT64 => i.value.data.uint64,
            PMIX_UINT32 => u64::from(i.value.data.uint32),
            PMIX_UINT => u64::from(i.value.data.uint),
            _ => return Err(BAD_PARAM),
        }
    };
    let t = DeviceTypes(mask);
    if t.is_valid_selection() {
        Ok(t)
    } else {
        Err(BAD_PARAM)
    }
}

/// The directives of a distance request, borrowing the caller's strings.
#[derive(Debug, Default)]
pub(crate) struct Directives<'a> {
    /// The union of the `PMIX_DEVICE_TYPE`s.
    pub(crate) types: Option<DeviceTypes>,
    /// The `PMIX_DEVICE_ID`s.
    pub(crate) ids: Vec<&'a str>,
    /// The `PMIX_DEVICE_DIST_ORIGIN`.
    pub(crate) origin: Option<&'a str>,
}

/// Reports an unknown key: ignored, unless required.
fn unknown(i: &pmix_info_t) -> Result<(), Status> {
    if i.flags & PMIX_INFO_REQD != 0 {
        Err(Status::ERR_NOT_SUPPORTED)
    } else {
        Ok(())
    }
}

/// Decodes the directives of `PMIx_Compute_distances`.
///
/// # Errors
/// As the module says; the first bad element decides.
///
/// # Safety
/// String values must be readable as [`string_value`] requires, and outlive `'a`.
pub(crate) unsafe fn directives<'a>(infos: &'a [pmix_info_t]) -> Result<Directives<'a>, Status> {
    let mut d = Directives::default();
    for i in infos {
        let k = key(i)?;
        if k == KEY_DEVICE_TYPE.to_bytes() {
            let t = type_value(i)?;
            d.types = Some(d.types.map_or(t, |u| u | t));
        } else if k == KEY_DEVICE_ID.to_bytes() {
            // SAFETY: forwarded from the caller.
            d.ids.push(unsafe { string_value(i) }?);
        } else if k == KEY_DEVICE_DIST_ORIGIN.to_bytes() {
            if d.origin.is_some() {
                return Err(BAD_PARAM);
            }
            // SAFETY: forwarded from the caller.
            d.origin = Some(unsafe { string_value(i) }?);
        } else if k == KEY_DEVICE_DISTANCES.to_bytes() {
            // Names the array in queries of stored data; changes nothing here.
        } else {
            unknown(i)?;
        }
    }
    Ok(d)
}

/// Decodes the info of `PMIx_Init` / `PMIx_tool_init` / `PMIx_Finalize`: the hostname
/// (`PMIX_HOSTNAME`) and the connection: `PMIX_SERVER_URI` (a tool connects to that
/// server), `PMIX_SERVER_PIDINFO` / `PMIX_SERVER_NSPACE` (to the server whose
/// rendezvous file `pmix.<host>.tool.<pid or nspace>` is under `PMIX_SYSTEM_TMPDIR`,
/// else `$TMPDIR`, else `/tmp`: pmix-run's, or an OpenPMIx server's),
/// `PMIX_TOOL_DO_NOT_CONNECT` (true, or any non-boolean value as OpenPMIx's flag:
/// never connect).
///
/// # Errors
/// As the module says; `PMIX_ERR_BAD_PARAM` for a `PMIX_SERVER_URI` that is not a
/// `name;tcp4://…` or `name;tcp6://…` URI; `PMIX_ERR_UNREACH` when no rendezvous
/// file names the server asked for by pid or namespace.
///
/// # Safety
/// As [`directives`].
pub(crate) unsafe fn init_options(infos: &[pmix_info_t]) -> Result<pmix::InitOptions, Status> {
    let mut options = pmix::InitOptions::default();
    let mut target: Option<String> = None;
    let mut dir: Option<std::path::PathBuf> = None;
    for i in infos {
        let k = key(i)?;
        if k == KEY_HOSTNAME.to_bytes() {
            // SAFETY: forwarded from the caller.
            options.hostname = Some(unsafe { string_value(i) }?.to_owned());
        } else if k == KEY_TOOL_DO_NOT_CONNECT.to_bytes() {
            // SAFETY: a PMIX_BOOL value's data is its flag (every bit pattern is a u8).
            let flag =
                i.value.type_ != crate::types::PMIX_BOOL || unsafe { i.value.data.flag } != 0;
            if flag {
                options.connect = pmix::Connect::Never;
            }
        } else if k == KEY_SERVER_URI.to_bytes() {
            // SAFETY: forwarded from the caller.
            let uri = unsafe { string_value(i) }?;
            let env = pmix::ServerEnv::from_uri(uri, "PMIX_SERVER_URI")
                .map_err(|_| BAD_PARAM)?
                .with_launch_identity(|k| std::env::var(k).ok());
            options.connect = pmix::Connect::To(env);
        } else if k == KEY_SERVER_PIDINFO.to_bytes() {
            // SAFETY: the tag says which union member holds the pid.
            let pid = unsafe {
                match i.value.type_ {
                    crate::types::PMIX_PID => i64::from(i.value.data.pid),
                    crate::types::PMIX_INT | crate::types::PMIX_INT32 => {
                        i64::from(i.value.data.int32)
                    }
                    crate::types::PMIX_UINT | crate::types::PMIX_UINT32 => {
                        i64::from(i.value.data.uint32)
                    }
                    _ => return Err(BAD_PARAM),
                }
            };
            target = Some(pid.to_string());
        } else if k == KEY_SERVER_NSPACE.to_bytes() {
            // SAFETY: forwarded from the caller.
            target = Some(unsafe { string_value(i) }?.to_owned());
        } else if k == KEY_SYSTEM_TMPDIR.to_bytes() {
            // SAFETY: forwarded from the caller.
            dir = Some(unsafe { string_value(i) }?.into());
        } else {
            unknown(i)?;
        }
    }
    if let Some(tail) = target
        && !matches!(options.connect, pmix::Connect::To(_))
    {
        let host = options
            .hostname
            .clone()
            .unwrap_or_else(pmix::server::net::short_hostname);
        let dir = dir
            .or_else(|| std::env::var_os("PMIX_SYSTEM_TMPDIR").map(Into::into))
            .unwrap_or_else(std::env::temp_dir);
        let env = pmix::ServerEnv::from_rendezvous(&dir, &host, &tail)
            .map_err(|_| Status::ERR_UNREACH)?;
        options.connect = pmix::Connect::To(env);
    }
    Ok(options)
}
