//! `PMIx_Publish`, `PMIx_Lookup` and `PMIx_Unpublish`, blocking and `_nb`, over the
//! runtime's publish / lookup / unpublish.

use std::ffi::{c_char, c_void};

use pmix::{Mode, Pmix, PmixError};
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, CbData, export, op_done, try_argv, try_slice_mut};
use crate::data::convert::{from_wire, nonempty_key, try_infos, try_key};
use crate::data::value::CValue;
use crate::types::*;

/// The most keys `PMIx_Unpublish` reads from a NULL-terminated list.
const MAX_KEYS: usize = 4096;

/// The pdata a lookup found, made by the library for its callback; their values are
/// released when dropped.
struct PdataList(Vec<pmix_pdata_t>);

impl Drop for PdataList {
    fn drop(&mut self) {
        for d in &mut self.0 {
            // Moved into a value the library releases: `from_wire` filled it in.
            drop(CValue(d.value));
        }
    }
}

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
    /// # C contract
    /// `info` points to `ninfo` readable infos (or is NULL with a zero count).
    fn PMIx_Publish(info: *const pmix_info_t, ninfo: usize) -> pmix_status_t {
        let inst = admitted("PMIx_Publish")?;
        let info = try_infos!(info, ninfo)?;
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
    /// # C contract
    /// `data` points to `ndata` writable elements whose keys are NUL-terminated; `info`
    /// as for [`PMIx_Publish`].
    fn PMIx_Lookup(
        data: *mut pmix_pdata_t,
        ndata: usize,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Lookup")?;
        if ndata == 0 {
            return Err(BAD_PARAM);
        }
        let data = try_slice_mut!(data, ndata)?;
        let keys: Vec<String> = data
            .iter()
            .map(|d| key_of(&d.key).map(str::to_owned))
            .collect::<Result<_, _>>()?;
        let info = try_infos!(info, ninfo)?;
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
    /// # C contract
    /// `keys` is NULL or a NULL-terminated array of NUL-terminated strings; `info` as for
    /// [`PMIx_Publish`].
    fn PMIx_Unpublish(
        keys: *mut *mut c_char,
        info: *const pmix_info_t,
        ninfo: usize,
    ) -> pmix_status_t {
        let inst = admitted("PMIx_Unpublish")?;
        let list = key_list(keys)?;
        let info = try_infos!(info, ninfo)?;
        inst.unpublish(&list, &info).map_err(|e| e.status())
    }
}

/// The keys of a NULL-terminated C array (NULL: none), each checked as a key
/// argument; C's (the C contract).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a bad key, or more than [`MAX_KEYS`].
fn key_list<'a>(keys: *mut *mut c_char) -> Result<Vec<&'a str>, Status> {
    try_argv!(keys.cast_const(), MAX_KEYS)?
        .iter()
        .map(|&k| try_key!(k))
        .collect()
}

/// The key of a pdata (its 512 bytes hold a NUL; UTF-8, not empty).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` otherwise.
fn key_of(key: &[c_char; PMIX_MAX_KEYLEN + 1]) -> Result<&str, Status> {
    let bytes = crate::boundary::c_chars(key);
    let nul = bytes.iter().position(|&b| b == 0).ok_or(BAD_PARAM)?;
    std::str::from_utf8(&bytes[..nul])
        .map_err(|_| BAD_PARAM)
        .and_then(nonempty_key)
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
    /// # C contract
    /// As [`PMIx_Publish`] (the array only during the call); `cbfunc` must be safe to
    /// call from another thread with `cbdata`.
    fn PMIx_Publish_nb(
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = crate::boundary::admitted("PMIx_Publish_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        let info = try_infos!(info, ninfo)?;
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
    /// # C contract
    /// `keys` as for [`PMIx_Unpublish`] and `info` as for [`PMIx_Publish`], only during
    /// the call; `cbfunc` must be safe to call from another thread with `cbdata`.
    fn PMIx_Lookup_nb(
        keys: *mut *mut c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_lookup_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = crate::boundary::admitted("PMIx_Lookup_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        crate::boundary::not_null(keys)?;
        let list = key_list(keys)?;
        if list.is_empty() {
            return Err(BAD_PARAM);
        }
        let info = try_infos!(info, ninfo)?;
        let cbdata = CbData(cbdata);
        inst.lookup_nb(&list, &info, move |r| {
            let mut data = PdataList(Vec::new());
            let status = match r.map_err(|e| e.status()).and_then(|found| {
                for p in &found {
                    let mut d = pmix_pdata_t::EMPTY;
                    crate::boundary::copy_c_str(&mut d.proc_.nspace, p.proc.nspace.as_bytes());
                    d.proc_.rank = p.proc.rank.0;
                    crate::boundary::copy_c_str(&mut d.key, p.key.as_bytes());
                    let made = from_wire(&p.value, &mut d.value);
                    data.0.push(d);
                    made?;
                }
                Ok(())
            }) {
                Ok(()) => Status::SUCCESS,
                Err(s) => s,
            };
            let (ptr, n) = if status == Status::SUCCESS {
                (data.0.as_mut_ptr(), data.0.len())
            } else {
                (std::ptr::null_mut(), 0)
            };
            // SAFETY: C gave `cb` with `cbdata` for this lookup's one outcome (the C
            // contract above); `ptr` points to `n` valid elements for the call, released
            // after it when `data` drops, as the PMIx contract says.
            unsafe { cb(status.0, ptr, n, cbdata.ptr()) };
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
    /// # C contract
    /// As [`PMIx_Unpublish`] (the arrays only during the call); `cbfunc` must be safe
    /// to call from another thread with `cbdata`.
    fn PMIx_Unpublish_nb(
        keys: *mut *mut c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = crate::boundary::admitted("PMIx_Unpublish_nb", Mode::NonBlocking)?;
        let cb = cbfunc.ok_or(BAD_PARAM)?;
        let list = key_list(keys)?;
        let info = try_infos!(info, ninfo)?;
        inst.unpublish_nb(&list, &info, op_done(cb, CbData(cbdata)))
            .map_err(|e| e.status())
    }
}
