//! `PMIx_Publish`, `PMIx_Lookup` and `PMIx_Unpublish` (blocking forms) over the
//! runtime's publish / lookup / unpublish.

use std::ffi::c_char;

use pmix::{Mode, Pmix, PmixError};
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, c_slice, export};
use crate::convert::{from_wire, infos_to_wire, key_arg};
use crate::types::*;

/// The most keys `PMIx_Unpublish` reads from a NULL-terminated list.
const MAX_KEYS: usize = 4096;

/// The instance, admitted for the blocking call `call`.
fn admitted(call: &'static str) -> Result<Pmix, Status> {
    crate::boundary::admitted(call, Mode::Blocking)
}

export! {
    /// `PMIx_Publish`: publishes each info's key and value, blocking until the server
    /// answered.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (a count with a NULL array, a bad info);
    /// `PMIX_ERR_UNREACH` (no server); the server's status.
    ///
    /// # Safety
    /// `info` points to `ninfo` readable infos (or is NULL with a zero count).
    unsafe fn PMIx_Publish(info: *const pmix_info_t, ninfo: usize) -> pmix_status_t {
        let inst = admitted("PMIx_Publish")?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        inst.publish(&info).map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_Lookup`: fills each `data[i]` whose key was published with its publisher
    /// and value (the value's memory is the caller's: `PMIX_PDATA_DESTRUCT`).
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (no data, a bad key or info); `PMIX_ERR_NOT_FOUND` when no
    /// key was found; `PMIX_ERR_UNREACH`; the server's status.
    ///
    /// # Safety
    /// `data` points to `ndata` writable elements whose keys are NUL-terminated; `info`
    /// as for [`PMIx_Publish`].
    unsafe fn PMIx_Lookup(
        data: *mut pmix_pdata_t,
        ndata: usize,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Lookup")?;
        if ndata == 0 || data.is_null() || !data.is_aligned() {
            return Err(BAD_PARAM);
        }
        if !crate::boundary::fits_in_a_slice(data, ndata) {
            return Err(BAD_PARAM);
        }
        // SAFETY: `data` is non-NULL, aligned, and `ndata` elements fit (checked); they
        // are writable and not aliased during the call (caller's contract).
        let data = unsafe { std::slice::from_raw_parts_mut(data, ndata) };
        let keys: Vec<String> = data
            .iter()
            .map(|d| {
                // SAFETY: the key array is within the element; NUL-terminated within
                // its 512 bytes (checked by `key_arg`'s bound).
                unsafe { key_arg(d.key.as_ptr()) }.map(str::to_owned)
            })
            .collect::<Result<_, _>>()?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let found = inst.lookup(&refs, &info).map_err(|e| e.status())?;
        let mut any = false;
        for (d, key) in data.iter_mut().zip(&keys) {
            let Some(p) = found.iter().find(|p| p.key.as_bytes() == key.as_bytes()) else {
                continue;
            };
            from_wire(&p.value, &mut d.value)?;
            crate::boundary::copy_c_str(&mut d.proc_.nspace, p.proc.nspace.as_bytes());
            d.proc_.rank = p.proc.rank.0;
            any = true;
        }
        if any {
            Ok(())
        } else {
            Err(Status::ERR_NOT_FOUND)
        }
    }
}

export! {
    /// `PMIx_Unpublish`: withdraws this process's `keys` (a NULL-terminated list; NULL:
    /// everything it published), blocking until the server answered.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (a bad key or info, a list of more than 4,096 keys);
    /// `PMIX_ERR_UNREACH`; the server's status.
    ///
    /// # Safety
    /// `keys` is NULL or a NULL-terminated array of NUL-terminated strings; `info` as for
    /// [`PMIx_Publish`].
    unsafe fn PMIx_Unpublish(
        keys: *mut *mut c_char,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Unpublish")?;
        let mut list: Vec<&str> = Vec::new();
        if !keys.is_null() {
            for k in 0..=MAX_KEYS {
                // SAFETY: the array is NULL-terminated (caller's contract) and the loop
                // stops at its NULL, reading no further.
                let p = unsafe { *keys.add(k) };
                if p.is_null() {
                    break;
                }
                if k == MAX_KEYS {
                    return Err(BAD_PARAM);
                }
                // SAFETY: forwarded from the caller.
                list.push(unsafe { key_arg(p) }?);
            }
        }
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        inst.unpublish(&list, &info).map_err(|e| e.status())
    }
}
