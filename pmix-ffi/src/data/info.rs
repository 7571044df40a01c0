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

use crate::boundary::{BAD_PARAM, c_chars, try_str};
use crate::types::{
    PMIX_DEVTYPE, PMIX_INFO_REQD, PMIX_STRING, PMIX_UINT, PMIX_UINT32, PMIX_UINT64, pmix_info_t,
};

/// The longest string value accepted (a uuid: `gpu://<255-byte host>::<255-byte name>`
/// fits with room to spare).
pub(crate) const MAX_STRING: usize = 4096;

/// `PMIX_DEVICE_DISTANCES`.
pub(crate) const KEY_DEVICE_DISTANCES: &CStr = pmix::wire::keys::c::DEVICE_DISTANCES;
/// `PMIX_DEVICE_TYPE`.
pub(crate) const KEY_DEVICE_TYPE: &CStr = pmix::wire::keys::c::DEVICE_TYPE;
/// `PMIX_DEVICE_ID`.
pub(crate) const KEY_DEVICE_ID: &CStr = pmix::wire::keys::c::DEVICE_ID;
/// `PMIX_DEVICE_DIST_ORIGIN`.
pub(crate) const KEY_DEVICE_DIST_ORIGIN: &CStr = pmix::wire::keys::c::DEVICE_DIST_ORIGIN;
/// `PMIX_HOSTNAME`.
pub(crate) const KEY_HOSTNAME: &CStr = pmix::wire::keys::c::HOSTNAME;
/// `PMIX_TOOL_DO_NOT_CONNECT`.
pub(crate) const KEY_TOOL_DO_NOT_CONNECT: &CStr = pmix::wire::keys::c::TOOL_DO_NOT_CONNECT;
/// `PMIX_SERVER_URI`.
pub(crate) const KEY_SERVER_URI: &CStr = pmix::wire::keys::c::SERVER_URI;
/// `PMIX_SERVER_PIDINFO`: a tool's target server, by its pid.
pub(crate) const KEY_SERVER_PIDINFO: &CStr = pmix::wire::keys::c::SERVER_PIDINFO;
/// `PMIX_SERVER_NSPACE`: a tool's target server, by its namespace.
pub(crate) const KEY_SERVER_NSPACE: &CStr = pmix::wire::keys::c::SERVER_NSPACE;
/// `PMIX_SYSTEM_TMPDIR`: where a tool looks for rendezvous files.
pub(crate) const KEY_SYSTEM_TMPDIR: &CStr = pmix::wire::keys::c::SYSTEM_TMPDIR;

/// The key of `i`, without its NUL.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` when its 512 bytes hold no NUL.
pub(crate) fn key(i: &pmix_info_t) -> Result<&[u8], Status> {
    let bytes = c_chars(&i.key);
    let nul = bytes.iter().position(|&b| b == 0).ok_or(BAD_PARAM)?;
    Ok(&bytes[..nul])
}

/// A string value: `PMIX_ERR_BAD_PARAM` if the type is not `PMIX_STRING` or the string
/// is NULL, empty, unterminated within [`MAX_STRING`] bytes or not UTF-8. `i` is C's
/// (the C contract).
fn string_value(i: &pmix_info_t) -> Result<&str, Status> {
    if i.value.type_ != PMIX_STRING {
        return Err(BAD_PARAM);
    }
    // SAFETY: the tag says the union holds `string`, a pointer C gave in its info.
    let s = try_str!(unsafe { i.value.data.string }, MAX_STRING)?;
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
/// `infos` are C's (the C contract); the strings borrowed from them live as long.
pub(crate) fn directives<'a>(infos: &'a [pmix_info_t]) -> Result<Directives<'a>, Status> {
    let mut d = Directives::default();
    for i in infos {
        let k = key(i)?;
        if k == KEY_DEVICE_TYPE.to_bytes() {
            let t = type_value(i)?;
            d.types = Some(d.types.map_or(t, |u| u | t));
        } else if k == KEY_DEVICE_ID.to_bytes() {
            d.ids.push(string_value(i)?);
        } else if k == KEY_DEVICE_DIST_ORIGIN.to_bytes() {
            if d.origin.is_some() {
                return Err(BAD_PARAM);
            }
            d.origin = Some(string_value(i)?);
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
/// `infos` are C's (the C contract).
pub(crate) fn init_options(infos: &[pmix_info_t]) -> Result<pmix::InitOptions, Status> {
    let mut options = pmix::InitOptions::default();
    let mut target: Option<String> = None;
    let mut dir: Option<std::path::PathBuf> = None;
    for i in infos {
        let k = key(i)?;
        if k == KEY_HOSTNAME.to_bytes() {
            options.hostname = Some(string_value(i)?.to_owned());
        } else if k == KEY_TOOL_DO_NOT_CONNECT.to_bytes() {
            // SAFETY: a PMIX_BOOL value's data is its flag (every bit pattern is a u8).
            let flag =
                i.value.type_ != crate::types::PMIX_BOOL || unsafe { i.value.data.flag } != 0;
            if flag {
                options.connect = pmix::Connect::Never;
            }
        } else if k == KEY_SERVER_URI.to_bytes() {
            let uri = string_value(i)?;
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
            target = Some(string_value(i)?.to_owned());
        } else if k == KEY_SYSTEM_TMPDIR.to_bytes() {
            dir = Some(string_value(i)?.into());
        } else if pmix::InitOptions::is_model_key(k) {
            // Read by the caller ([`pmix::InitOptions::model`]).
        } else {
            unknown(i)?;
        }
    }
    if let Some(tail) = target
        && !matches!(options.connect, pmix::Connect::To(_))
    {
        let env = pmix::ServerEnv::find_rendezvous(dir, options.hostname.as_deref(), &tail)
            .map_err(|_| Status::ERR_UNREACH)?;
        options.connect = pmix::Connect::To(env);
    }
    Ok(options)
}
