//! `PMIx_Value_load`, `PMIx_Value_destruct`, `PMIx_Info_load`: what the header's
//! `PMIX_INFO_LOAD`, `PMIX_INFO_DESTRUCT` and `PMIX_INFO_FREE` macros call.

use std::ffi::{c_char, c_void};

use pmix_core::Status;

use crate::boundary::{BAD_PARAM, Res, status_boundary, value_boundary};
use crate::types::*;

/// Reads a `T` from `data` (unaligned: C may hand any address of a `T`).
///
/// # Safety
/// `data` points to a readable `T`.
unsafe fn read<T: Copy>(data: *const c_void) -> T {
    // SAFETY: caller's contract.
    unsafe { data.cast::<T>().read_unaligned() }
}

/// Loads `val` from `data` of type `ty`.
///
/// # Safety
/// As [`PMIx_Value_load`].
unsafe fn load(val: &mut pmix_value_t, data: *const c_void, ty: pmix_data_type_t) -> Res {
    val.type_ = PMIX_UNDEF;
    val.data = pmix_value_data { raw: [0; 3] };
    if data.is_null() {
        // No data: the type alone (a key given alone reads as "true").
        match ty {
            PMIX_BOOL => val.data.flag = 1,
            PMIX_UNDEF | PMIX_BYTE | PMIX_STRING | PMIX_SIZE | PMIX_PID | PMIX_INT | PMIX_INT8
            | PMIX_INT16 | PMIX_INT32 | PMIX_INT64 | PMIX_UINT | PMIX_UINT8 | PMIX_UINT16
            | PMIX_UINT32 | PMIX_UINT64 | PMIX_FLOAT | PMIX_DOUBLE | PMIX_STATUS
            | PMIX_PROC_RANK | PMIX_DEVTYPE | PMIX_POINTER => {}
            _ => return Err(Status::ERR_NOT_SUPPORTED),
        }
        val.type_ = ty;
        return Ok(());
    }
    let d = &mut val.data;
    // SAFETY: `data` points to a readable value of the C type `ty` names
    // (caller's contract); `PMIX_STRING` is the string itself, `PMIX_POINTER` the pointer
    // itself, as in OpenPMIx.
    unsafe {
        match ty {
            PMIX_UNDEF => {}
            PMIX_BOOL => d.flag = u8::from(read::<u8>(data) != 0),
            PMIX_BYTE | PMIX_UINT8 => d.byte = read(data),
            PMIX_STRING => {
                let s = libc::strdup(data.cast::<c_char>());
                if s.is_null() {
                    return Err(Status::ERR_NOMEM);
                }
                d.string = s;
            }
            PMIX_SIZE => d.size = read(data),
            PMIX_PID => d.pid = read(data),
            PMIX_INT => d.integer = read(data),
            PMIX_INT8 => d.int8 = read(data),
            PMIX_INT16 => d.int16 = read(data),
            PMIX_INT32 => d.int32 = read(data),
            PMIX_INT64 => d.int64 = read(data),
            PMIX_UINT => d.uint = read(data),
            PMIX_UINT16 => d.uint16 = read(data),
            PMIX_UINT32 => d.uint32 = read(data),
            PMIX_UINT64 => d.uint64 = read(data),
            PMIX_FLOAT => d.fval = read(data),
            PMIX_DOUBLE => d.dval = read(data),
            PMIX_STATUS => d.status = read(data),
            PMIX_PROC_RANK => d.rank = read(data),
            PMIX_DEVTYPE => d.devtype = read(data),
            PMIX_POINTER => d.ptr = data.cast_mut(),
            PMIX_PROC => d.proc_ = copy_procs(data.cast::<pmix_proc_t>(), 1)?,
            PMIX_DATA_ARRAY => {
                let a = read::<pmix_data_array_t>(data);
                if a.type_ != PMIX_PROC {
                    return Err(Status::ERR_NOT_SUPPORTED);
                }
                let copy = libc::malloc(size_of::<pmix_data_array_t>()).cast::<pmix_data_array_t>();
                if copy.is_null() {
                    return Err(Status::ERR_NOMEM);
                }
                let array = match copy_procs(a.array.cast::<pmix_proc_t>(), a.size) {
                    Ok(p) => p,
                    Err(e) => {
                        libc::free(copy.cast());
                        return Err(e);
                    }
                };
                copy.write(pmix_data_array_t {
                    type_: PMIX_PROC,
                    size: a.size,
                    array: array.cast(),
                });
                d.darray = copy;
            }
            _ => return Err(Status::ERR_NOT_SUPPORTED),
        }
    }
    val.type_ = ty;
    Ok(())
}

/// A `malloc`ed copy of `n` processes at `p` (NULL for none).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a NULL `p` with `n > 0` or an `n` beyond any array;
/// `PMIX_ERR_NOMEM`.
///
/// # Safety
/// `p` points to `n` readable processes.
unsafe fn copy_procs(p: *const pmix_proc_t, n: usize) -> Result<*mut pmix_proc_t, Status> {
    // SAFETY: forwarded from the caller.
    let src = unsafe { crate::boundary::c_slice(p, n) }?;
    if src.is_empty() {
        return Ok(std::ptr::null_mut());
    }
    // SAFETY: calloc checks n × size for overflow; checked before use.
    let dst = unsafe { libc::calloc(n, size_of::<pmix_proc_t>()) }.cast::<pmix_proc_t>();
    if dst.is_null() {
        return Err(Status::ERR_NOMEM);
    }
    // SAFETY: `dst` has room for `n` processes and does not overlap `src`.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, n) };
    Ok(dst)
}

/// `PMIx_Value_load`: copies `data` of type `ty` into `val` (see `pmix_common.h`).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` (NULL `val`); `PMIX_ERR_NOT_SUPPORTED` (a type other than the
/// scalars, `PMIX_STRING`, `PMIX_POINTER`, `PMIX_UNDEF`: `val` is left `PMIX_UNDEF`);
/// `PMIX_ERR_NOMEM`.
///
/// # Safety
/// `val` is NULL or writable; `data` is NULL or points to a readable value of the C type
/// `ty` names (for `PMIX_STRING`, a NUL-terminated string; for `PMIX_POINTER`, any
/// pointer).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Value_load(
    val: *mut pmix_value_t,
    data: *const c_void,
    ty: pmix_data_type_t,
) -> pmix_status_t {
    status_boundary(|| {
        // SAFETY: a non-NULL `val` is writable (caller's contract).
        let v = unsafe { val.as_mut() }.ok_or(BAD_PARAM)?;
        // SAFETY: forwarded from the caller.
        unsafe { load(v, data, ty) }
    })
}

/// `PMIx_Value_destruct`: frees what the value owns (a `PMIX_STRING`'s string, a
/// `PMIX_BYTE_OBJECT`'s bytes, a `PMIX_PROC`'s process) and makes it `PMIX_UNDEF`. Values of types the library does not load are only reset.
///
/// # Safety
/// `val` is NULL or writable; a `PMIX_STRING` value's string, a
/// `PMIX_BYTE_OBJECT`'s bytes and a `PMIX_PROC`'s process are NULL or `malloc`ed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Value_destruct(val: *mut pmix_value_t) {
    value_boundary((), || {
        // SAFETY: a non-NULL `val` is writable (caller's contract).
        let Some(v) = (unsafe { val.as_mut() }) else {
            return;
        };
        if v.type_ == PMIX_STRING {
            // SAFETY: the tag says the union holds a malloc'ed string (or NULL).
            unsafe { libc::free(v.data.string.cast()) };
        } else if v.type_ == PMIX_BYTE_OBJECT {
            // SAFETY: the tag says the union holds a byte object whose bytes are
            // malloc'ed (or NULL).
            unsafe { libc::free(v.data.bo.bytes.cast()) };
        } else if v.type_ == PMIX_PROC {
            // SAFETY: the tag says the union holds a malloc'ed pmix_proc_t (or NULL).
            unsafe { libc::free(v.data.proc_.cast()) };
        } else if v.type_ == PMIX_DATA_ARRAY {
            // SAFETY: the tag says the union holds a malloc'ed array of PMIX_PROC
            // elements (the only kind the library makes), or NULL.
            unsafe {
                if let Some(a) = v.data.darray.as_ref() {
                    libc::free(a.array);
                }
                libc::free(v.data.darray.cast());
            }
        }
        v.type_ = PMIX_UNDEF;
        v.data = pmix_value_data { raw: [0; 3] };
    })
}

/// `PMIx_Info_load`: copies `key` (at most 511 bytes, NUL-padded) and loads the value
/// as [`PMIx_Value_load`]; `flags` are left alone.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` (NULL `info` or `key`), then as [`PMIx_Value_load`].
///
/// # Safety
/// `info` is NULL or writable; `key` is NULL or a NUL-terminated string; `data` as for
/// [`PMIx_Value_load`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_load(
    info: *mut pmix_info_t,
    key: *const c_char,
    data: *const c_void,
    ty: pmix_data_type_t,
) -> pmix_status_t {
    status_boundary(|| {
        // SAFETY: a non-NULL `info` is writable (caller's contract).
        let i = unsafe { info.as_mut() }.ok_or(BAD_PARAM)?;
        if key.is_null() {
            return Err(BAD_PARAM);
        }
        i.key = [0; PMIX_MAX_KEYLEN + 1];
        for (k, slot) in i.key.iter_mut().take(PMIX_MAX_KEYLEN).enumerate() {
            // SAFETY: `key` is NUL-terminated (caller's contract) and the loop stops at
            // its NUL, so every byte read is within it.
            let c = unsafe { *key.add(k) };
            if c == 0 {
                break;
            }
            *slot = c;
        }
        // SAFETY: forwarded from the caller.
        unsafe { load(&mut i.value, data, ty) }
    })
}
