//! `PMIx_Publish`, `PMIx_Lookup` and `PMIx_Unpublish`, blocking and `_nb`, over the
//! runtime's publish / lookup / unpublish.

use std::ffi::{c_char, c_void};

use pmix::{Mode, Pmix, PmixError};
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, CbData, c_slice, export, op_done};
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
        // SAFETY: forwarded from the caller.
        let list = unsafe { key_list(keys) }?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        inst.unpublish(&list, &info).map_err(|e| e.status())
    }
}

/// The keys of a NULL-terminated list (NULL: none).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a bad key or a list of more than [`MAX_KEYS`] keys.
///
/// # Safety
/// `keys` is NULL or a NULL-terminated array of NUL-terminated strings that stay
/// unchanged while the result lives.
unsafe fn key_list<'a>(keys: *mut *mut c_char) -> Result<Vec<&'a str>, Status> {
    let mut list: Vec<&str> = Vec::new();
    if keys.is_null() {
        return Ok(list);
    }
    for k in 0..=MAX_KEYS {
        // SAFETY: the array is NULL-terminated (caller's contract) and the loop stops
        // at its NULL, reading no further.
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
    Ok(list)
}

export! {
    /// `PMIx_Publish_nb`: as [`PMIx_Publish`], with the server's answer passed to
    /// `cbfunc(status, cbdata)` on the progress thread.
    ///
    /// # Errors
    /// Returned (and `cbfunc` never runs): `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`,
    /// `PMIX_ERR_BAD_PARAM` (a NULL `cbfunc`, a count with a NULL array, a bad info),
    /// `PMIX_ERR_UNREACH`. The server's status goes to `cbfunc`.
    ///
    /// # Safety
    /// As [`PMIx_Publish`] (the array only during the call); `cbfunc` must be safe to
    /// call from another thread with `cbdata`.
    unsafe fn PMIx_Publish_nb(
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = crate::boundary::admitted("PMIx_Publish_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        inst.publish_nb(&info, op_done(cb, CbData(cbdata)))
            .map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_Lookup_nb`: looks `keys` (a NULL-terminated list) up; `cbfunc(status,
    /// data, ndata, cbdata)` gets, on the progress thread, what was found: `data` is
    /// the library's, released when `cbfunc` returns (NULL with `ndata` 0 on error).
    ///
    /// # Errors
    /// Returned (and `cbfunc` never runs): `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`,
    /// `PMIX_ERR_BAD_PARAM` (NULL `keys` or `cbfunc`, a bad key or info, no key),
    /// `PMIX_ERR_UNREACH`. To `cbfunc`: `PMIX_ERR_NOT_FOUND` when nothing was found,
    /// the server's status, `PMIX_ERR_NOMEM`.
    ///
    /// # Safety
    /// `keys` as for [`PMIx_Unpublish`] and `info` as for [`PMIx_Publish`], only during
    /// the call; `cbfunc` must be safe to call from another thread with `cbdata`.
    unsafe fn PMIx_Lookup_nb(
        keys: *mut *mut c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_lookup_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = crate::boundary::admitted("PMIx_Lookup_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        crate::boundary::not_null(keys)?;
        // SAFETY: forwarded from the caller.
        let list = unsafe { key_list(keys) }?;
        if list.is_empty() {
            return Err(BAD_PARAM);
        }
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        let cbdata = CbData(cbdata);
        inst.lookup_nb(&list, &info, move |r| {
            let mut data: Vec<pmix_pdata_t> = Vec::new();
            let status = match r.map_err(|e| e.status()).and_then(|found| {
                for p in &found {
                    // SAFETY: all-zero bytes are a valid empty pdata (what
                    // PMIX_PDATA_CONSTRUCT makes).
                    let mut d: pmix_pdata_t = unsafe { std::mem::zeroed() };
                    crate::boundary::copy_c_str(&mut d.proc_.nspace, p.proc.nspace.as_bytes());
                    d.proc_.rank = p.proc.rank.0;
                    crate::boundary::copy_c_str(&mut d.key, p.key.as_bytes());
                    from_wire(&p.value, &mut d.value)?;
                    data.push(d);
                }
                Ok(())
            }) {
                Ok(()) => Status::SUCCESS,
                Err(s) => s,
            };
            let (ptr, n) = if status == Status::SUCCESS {
                (data.as_mut_ptr(), data.len())
            } else {
                (std::ptr::null_mut(), 0)
            };
            // SAFETY: the caller's callback with the caller's `cbdata`, once; `ptr`
            // points to `n` valid elements for the call.
            unsafe { cb(status.0, ptr, n, cbdata.ptr()) };
            for d in &mut data {
                // SAFETY: each value owns what `from_wire` allocated: released here,
                // after the callback, as the PMIx contract says.
                unsafe { crate::value::PMIx_Value_destruct(&mut d.value) };
            }
        })
        .map_err(|e| e.status())
    }
}

export! {
    /// `PMIx_Unpublish_nb`: as [`PMIx_Unpublish`], with the server's answer passed to
    /// `cbfunc(status, cbdata)` on the progress thread.
    ///
    /// # Errors
    /// Returned (and `cbfunc` never runs): `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`,
    /// `PMIX_ERR_BAD_PARAM` (a NULL `cbfunc`, a bad key or info), `PMIX_ERR_UNREACH`.
    /// The server's status goes to `cbfunc`.
    ///
    /// # Safety
    /// As [`PMIx_Unpublish`] (the arrays only during the call); `cbfunc` must be safe
    /// to call from another thread with `cbdata`.
    unsafe fn PMIx_Unpublish_nb(
        keys: *mut *mut c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = crate::boundary::admitted("PMIx_Unpublish_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        // SAFETY: forwarded from the caller.
        let list = unsafe { key_list(keys) }?;
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
        inst.unpublish_nb(&list, &info, op_done(cb, CbData(cbdata)))
            .map_err(|e| e.status())
    }
}
