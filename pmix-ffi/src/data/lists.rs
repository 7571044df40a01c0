//! Copying values and infos (`PMIx_Value_xfer`, `PMIx_Info_xfer`), reading a value's
//! datum out (`PMIx_Value_unload`), releasing a data
//! array's contents (`PMIx_Data_array_destruct`), and the info lists OpenPMIx 4.2
//! programs build directive arrays with (`PMIx_Info_list_start`, `_add`, `_insert`,
//! `_xfer`, `_convert`, `_release`).
//!
//! An info list is an opaque pointer to a Rust `Vec` of C infos. `_add` and `_xfer`
//! copy into it; `_insert` keeps the given info's data without owning it, marked
//! `PMIX_INFO_PERSISTENT` (the caller still owns and destructs it); `_convert` makes a
//! `PMIX_INFO` data array of deep copies (a persistent info is copied as it is, still
//! persistent); `_release` destructs every info the list owns, then the list. All as
//! libpmix2 does (`tests/c/lists.c` compares).

use std::ffi::{c_char, c_void};

use pmix_core::Status;

use crate::boundary::{BAD_PARAM, Res, export, opt_mut, try_mut, try_ref};
use crate::data::value::{
    PMIx_Info_load, alloc_array, data_of, destruct_array, destruct_value, element_size, free_array,
    value_xfer,
};
use crate::types::*;

/// A copy of `src` into `dst`: key, flags and the value, deeply (a persistent info's
/// value is copied as it is: it owns nothing).
///
/// # Errors
/// As [`value_xfer`].
fn info_xfer(dst: &mut pmix_info_t, src: &pmix_info_t) -> Res {
    dst.key = src.key;
    dst.flags = src.flags;
    if src.flags & PMIX_INFO_PERSISTENT != 0 {
        dst.value = src.value;
        return Ok(());
    }
    value_xfer(&mut dst.value, &src.value)
}

export! {
    /// `PMIx_Value_xfer`: copies `src` into `dest`, deeply (strings, byte objects,
    /// processes and data arrays are duplicated); `dest` is overwritten.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `dest` or `src`); as `PMIx_Value_load` for `src`'s
    /// type (`PMIX_ERR_NOT_SUPPORTED`, `PMIX_ERR_NOMEM`).
    ///
    /// # C contract
    /// `dest` is NULL or writable; `src` is NULL or a readable value whose union holds
    /// what its type says.
    fn PMIx_Value_xfer(dest: *mut pmix_value_t, src: *const pmix_value_t) -> pmix_status_t {
        value_xfer(try_mut!(dest)?, try_ref!(src)?)
    }
}

export! {
    /// `PMIx_Value_unload`: the value's datum, as libpmix2 gives it: a string is
    /// copied into a `malloc`ed `*data` (`*sz` its length; a NULL string leaves both
    /// alone); a byte object's bytes are handed out as they are (`*data` points into
    /// the value, `*sz` their count); a scalar or a process is copied into the memory
    /// `*data` points to (`*sz` its size).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `val`, `data` or `sz`; a scalar, process or
    /// `PMIX_UNDEF` value with a NULL `*data`); `PMIX_ERR_UNKNOWN_DATA_TYPE` for
    /// `PMIX_UNDEF` otherwise (as libpmix2); `PMIX_ERR_NOT_SUPPORTED` for another type;
    /// `PMIX_ERR_NOMEM`.
    ///
    /// # Safety
    /// `val` is NULL or a readable value whose union holds what its type says; `data`
    /// and `sz` are NULL or writable; a non-NULL `*data` has room for the datum.
    unsafe fn PMIx_Value_unload(
        val: *mut pmix_value_t,
        data: *mut *mut c_void,
        sz: *mut usize,
    ) -> pmix_status_t {
        let (v, d, n) = (try_ref!(val)?, try_mut!(data)?, try_mut!(sz)?);
        // SAFETY: the tag says what the union holds, and a string it points to is
        // NUL-terminated; a non-NULL `*d` has room for the datum (this function's contract).
        unsafe {
            match v.type_ {
                PMIX_UNDEF if d.is_null() => Err(BAD_PARAM),
                PMIX_UNDEF => Err(Status::ERR_UNKNOWN_DATA_TYPE),
                PMIX_STRING => {
                    if !v.data.string.is_null() {
                        let s = libc::strdup(v.data.string);
                        if s.is_null() {
                            return Err(Status::ERR_NOMEM);
                        }
                        *d = s.cast();
                        *n = libc::strlen(s);
                    }
                    Ok(())
                }
                PMIX_BYTE_OBJECT => {
                    *d = v.data.bo.bytes.cast();
                    *n = v.data.bo.size;
                    Ok(())
                }
                PMIX_INFO | PMIX_VALUE => Err(Status::ERR_NOT_SUPPORTED),
                ty => {
                    let size = element_size(ty).ok_or(Status::ERR_NOT_SUPPORTED)?;
                    if d.is_null() {
                        return Err(BAD_PARAM);
                    }
                    let src: *const u8 = if ty == PMIX_PROC {
                        if v.data.proc_.is_null() {
                            return Err(BAD_PARAM);
                        }
                        v.data.proc_.cast()
                    } else {
                        data_of(v).cast()
                    };
                    std::ptr::copy_nonoverlapping(src, (*d).cast::<u8>(), size);
                    *n = size;
                    Ok(())
                }
            }
        }
    }
}

export! {
    /// `PMIx_Info_xfer`: copies `src` (key, flags and value, deeply) into `dest`.
    ///
    /// # Errors
    /// As [`PMIx_Value_xfer`].
    ///
    /// # C contract
    /// As [`PMIx_Value_xfer`], for infos.
    fn PMIx_Info_xfer(dest: *mut pmix_info_t, src: *const pmix_info_t) -> pmix_status_t {
        info_xfer(try_mut!(dest)?, try_ref!(src)?)
    }
}

export! {
    /// `PMIx_Data_array_destruct`: frees what the array holds (its elements' data and
    /// the element block) and leaves it empty; the struct itself is the caller's.
    ///
    /// # Safety
    /// `d` is NULL or a writable array whose elements (up to `size`) hold what its type
    /// says, allocated with malloc (as the library and `pmix_common.h`'s helpers make
    /// them), not used afterwards.
    unsafe fn PMIx_Data_array_destruct(d: *mut pmix_data_array_t) {
        if let Some(d) = opt_mut!(d) {
            // SAFETY: its elements and block are malloc'ed, the library's kind, and
            // released here once (this function's contract).
            unsafe { destruct_array(d) };
        }
    }
}

/// The list behind an info-list pointer.
type InfoList = Vec<pmix_info_t>;

/// The list the handle `ptr` names, which C got from `PMIx_Info_list_start` and has
/// not released (the C contract of every call taking one).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for NULL.
fn list<'a>(ptr: *mut c_void) -> Result<&'a mut InfoList, Status> {
    // SAFETY: a non-NULL handle is the `Box<InfoList>` `PMIx_Info_list_start` leaked,
    // still live, used by one call at a time (the C contract).
    unsafe { ptr.cast::<InfoList>().as_mut() }.ok_or(BAD_PARAM)
}

export! {
    /// `PMIx_Info_list_start`: a new, empty info list (release it with
    /// `PMIx_Info_list_release`).
    fn PMIx_Info_list_start() -> *mut c_void [on_panic: std::ptr::null_mut()] {
        Box::into_raw(Box::new(InfoList::new())).cast()
    }
}

export! {
    /// `PMIx_Info_list_add`: appends an info with `key` and the data at `value` of
    /// type `type_` (as `PMIx_Info_load`).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL list or key); as `PMIx_Info_load`.
    ///
    /// # Safety
    /// `ptr` is NULL or a live list from `PMIx_Info_list_start`; `key` and `value` as
    /// for `PMIx_Info_load`.
    unsafe fn PMIx_Info_list_add(
        ptr: *mut c_void,
        key: *const c_char,
        value: *const c_void,
        type_: pmix_data_type_t,
    ) -> pmix_status_t {
        let l = list(ptr)?;
        crate::boundary::not_null(key)?;
        let mut info = pmix_info_t::EMPTY;
        // SAFETY: `key` and `value` are as `PMIx_Info_load` requires (this function's
        // contract); `info` is a local.
        let rc = unsafe { PMIx_Info_load(&mut info, key, value, type_) };
        if rc != Status::SUCCESS.0 {
            return Err(Status(rc));
        }
        l.push(info);
        Ok(())
    }
}

export! {
    /// `PMIx_Info_list_insert`: appends `info` without copying its data, marked
    /// `PMIX_INFO_PERSISTENT`: the caller keeps owning it (and destructs it once the
    /// list and what was converted from it are done with it).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL list or info).
    ///
    /// # C contract
    /// `ptr` is NULL or a live list from `PMIx_Info_list_start`; `info` is NULL or a
    /// readable info whose data outlives the list's use of it.
    fn PMIx_Info_list_insert(ptr: *mut c_void, info: *mut pmix_info_t) -> pmix_status_t {
        let l = list(ptr)?;
        let mut kept = *try_ref!(info)?;
        kept.flags |= PMIX_INFO_PERSISTENT;
        l.push(kept);
        Ok(())
    }
}

export! {
    /// `PMIx_Info_list_xfer`: appends a deep copy of `info`.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL list or info); as `PMIx_Info_xfer`.
    ///
    /// # C contract
    /// `ptr` is NULL or a live list from `PMIx_Info_list_start`; `info` as for
    /// `PMIx_Info_xfer`'s `src`.
    fn PMIx_Info_list_xfer(ptr: *mut c_void, info: *const pmix_info_t) -> pmix_status_t {
        let l = list(ptr)?;
        let src = try_ref!(info)?;
        let mut copy = pmix_info_t::EMPTY;
        info_xfer(&mut copy, src)?;
        l.push(copy);
        Ok(())
    }
}

export! {
    /// `PMIx_Info_list_convert`: fills `par` with a `PMIX_INFO` data array holding a
    /// deep copy of the list's infos, in order (the array's memory is the caller's:
    /// `PMIx_Data_array_destruct`).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL list or `par`); `PMIX_ERR_EMPTY` for an empty list;
    /// as `PMIx_Info_xfer` (nothing is left allocated).
    ///
    /// # C contract
    /// `ptr` is NULL or a live list from `PMIx_Info_list_start`; `par` is NULL or
    /// writable.
    fn PMIx_Info_list_convert(ptr: *mut c_void, par: *mut pmix_data_array_t) -> pmix_status_t {
        let l = list(ptr)?;
        let out = try_mut!(par)?;
        if l.is_empty() {
            return Err(Status::ERR_EMPTY);
        }
        let arr = alloc_array(PMIX_INFO, l.len(), size_of::<pmix_info_t>())?;
        // SAFETY: `arr` is a fresh array owning `l.len()` zeroed infos: each is written
        // once and counted in its `size`, so on an error `free_array` releases exactly
        // the ones filled; on success its struct moves to `out` and its own block is
        // freed, the elements now `out`'s.
        unsafe {
            let dst = (*arr).array.cast::<pmix_info_t>();
            for (k, src) in l.iter().enumerate() {
                if let Err(e) = info_xfer(&mut *dst.add(k), src) {
                    free_array(arr);
                    return Err(e);
                }
                (*arr).size = k + 1;
            }
            *out = arr.read();
            crate::cmem::c_free(arr);
        }
        Ok(())
    }
}

export! {
    /// `PMIx_Info_list_release`: destructs every info of the list, then the list.
    ///
    /// # Safety
    /// `ptr` is NULL or came from `PMIx_Info_list_start` and is released once.
    unsafe fn PMIx_Info_list_release(ptr: *mut c_void) {
        if ptr.is_null() {
            return;
        }
        // SAFETY: the list is the `Box<InfoList>` `PMIx_Info_list_start` leaked,
        // released once (this function's contract); each info not persistent owns its value,
        // loaded or copied by the library, released once with it.
        unsafe {
            let mut l = Box::from_raw(ptr.cast::<InfoList>());
            for i in l.iter_mut().filter(|i| i.flags & PMIX_INFO_PERSISTENT == 0) {
                destruct_value(&mut i.value);
            }
        }
    }
}
