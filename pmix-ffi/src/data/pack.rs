//! Packing data as OpenPMIx 4.2 does (`PMIx_Data_pack`, `_unpack`, `_load`,
//! `_unload`, `_embed`, `_copy_payload`, `_copy`, `_compress`, `_decompress`): the
//! bytes are pmix-wire's bfrops v4.1 encoding, the same libpmix2 writes (a count, then
//! each element; in the server's buffer type: non-described unless
//! `PMIX_BFROP_BUFFER_TYPE` says fully described), so a buffer packed by one library
//! unpacks in the other (`tests/c/data.c` compares the bytes; a mixed job passes them
//! both ways).
//!
//! Element types: the scalars, `PMIX_STRING`, `PMIX_PROC`, `PMIX_BYTE_OBJECT`,
//! `PMIX_VALUE` and `PMIX_INFO`; another is `PMIX_ERR_NOT_SUPPORTED`. Compression is
//! not offered (`PMIx_Data_compress` is `false`, as libpmix2 built without its zlib
//! plugin, Debian's).

use std::ffi::{c_char, c_void};

use pmix::wire::buf::{Reader, Writer};
use pmix::wire::{BufferType, DataType, Limits, Value};
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, Res, export, opt_cstr, opt_mut, try_mut, try_ref, try_slice};
use crate::cmem::{c_calloc, c_copy, c_free, c_string};
use crate::data::convert::{CInfos, from_wire, infos_from_c, value_to_wire};
use crate::data::value::{CValue, data_of, element_size, load};
use crate::types::*;

/// The buffer type packed data uses: the server's (a connected client's), else
/// non-described (libpmix2's default).
fn buffer_type() -> BufferType {
    pmix::global::get()
        .ok()
        .and_then(|p| p.client().map(pmix::Client::buffer_type))
        .unwrap_or(BufferType::NonDescribed)
}

/// The size of one element of `ty` in a C array.
fn size_of_element(ty: pmix_data_type_t) -> Result<usize, Status> {
    if ty == PMIX_BYTE_OBJECT {
        return Ok(size_of::<pmix_byte_object_t>());
    }
    element_size(ty).ok_or(Status::ERR_NOT_SUPPORTED)
}

/// The element of type `ty` at `ep` as pmix-wire's value of that type.
///
/// # Errors
/// `PMIX_ERR_NOT_SUPPORTED` for a type not listed in the module docs; as
/// `PMIx_Value_load`.
///
/// # Safety
/// `ep` points to a readable element of the C type `ty` names (at its alignment for a
/// value or an info), a C datum as `load` requires.
unsafe fn element_to_wire(ep: *const u8, ty: pmix_data_type_t) -> Result<Value, Status> {
    // SAFETY: `ep` is an element of `ty` (the caller's contract): a value or an info is
    // read in place, anything else loaded from it as a datum of its type.
    unsafe {
        match ty {
            PMIX_VALUE => Ok(Value::Value(Box::new(value_to_wire(
                &*ep.cast::<pmix_value_t>(),
            )?))),
            PMIX_INFO => {
                let info = std::slice::from_ref(&*ep.cast::<pmix_info_t>());
                let mut v = infos_from_c(info)?;
                Ok(Value::Info(Box::new(v.remove(0))))
            }
            _ => {
                size_of_element(ty)?;
                let data: *const c_void = if ty == PMIX_STRING {
                    ep.cast::<*const c_char>().read_unaligned().cast()
                } else {
                    ep.cast()
                };
                let mut v = CValue::undef();
                load(&mut v.0, data, ty)?;
                value_to_wire(&v.0)
            }
        }
    }
}

/// Writes `value` (of type `ty`) into the element at `ep`, which then owns what it
/// points to.
///
/// # Errors
/// `PMIX_ERR_UNPACK_FAILURE` when `value` is not of `ty`; as `from_wire`.
///
/// # Safety
/// `ep` points to a writable element of the C type `ty` names (at its alignment for a
/// value or an info).
unsafe fn wire_to_element(value: &Value, ep: *mut u8, ty: pmix_data_type_t) -> Res {
    // SAFETY: `ep` is a writable element of `ty` (the caller's contract): a value or an
    // info is written in place; another datum is copied in as its `size` bytes, from the
    // union of `v` (a string's pointer, a byte object, a scalar) or from the process
    // `from_wire` boxed. What the element points to then is its own (`v` forgets a
    // string or byte object; the made info's value moves whole).
    unsafe {
        match (ty, value) {
            (PMIX_VALUE, Value::Value(inner)) => {
                let slot = &mut *ep.cast::<pmix_value_t>();
                *slot = pmix_value_t::UNDEF;
                from_wire(inner, slot)
            }
            (PMIX_INFO, Value::Info(info)) => {
                let made = CInfos::from_wire(std::slice::from_ref(&**info))?.into_parts();
                ep.cast::<pmix_info_t>().write(made[0]);
                Ok(())
            }
            _ => {
                let size = size_of_element(ty)?;
                let mut v = CValue::undef();
                from_wire(value, &mut v.0)?;
                if v.0.type_ != ty {
                    return Err(Status::ERR_UNPACK_FAILURE);
                }
                match ty {
                    PMIX_PROC => ep.cast::<pmix_proc_t>().write(v.0.data.proc_.read()),
                    PMIX_STRING | PMIX_BYTE_OBJECT => {
                        std::ptr::copy_nonoverlapping((&raw const v.0.data).cast::<u8>(), ep, size);
                        v.0 = pmix_value_t::UNDEF;
                    }
                    _ => std::ptr::copy_nonoverlapping(data_of(&v.0).cast::<u8>(), ep, size),
                }
                Ok(())
            }
        }
    }
}

/// The bytes of the buffer `b` (C's: the C contract) not unpacked yet, and how many
/// were before them.
fn unread(b: &pmix_data_buffer_t) -> (&[u8], usize) {
    if b.base_ptr.is_null() || b.bytes_used == 0 {
        return (&[], 0);
    }
    let at = if b.unpack_ptr.is_null() {
        0
    } else {
        (b.unpack_ptr as usize)
            .saturating_sub(b.base_ptr as usize)
            .min(b.bytes_used)
    };
    // SAFETY: a buffer's `base_ptr` holds `bytes_used` bytes (the C contract: the buffer
    // is this library's or `pmix_common.h`'s macros', which keep its pointers so), and
    // `at` is within them.
    let all = unsafe { std::slice::from_raw_parts(b.base_ptr.cast::<u8>(), b.bytes_used) };
    (&all[at..], at)
}

/// Frees what the buffer `b` (C's) holds and leaves it empty.
fn release(b: &mut pmix_data_buffer_t) {
    // SAFETY: a buffer's `base_ptr` is NULL or malloc'ed, the buffer's own (the C
    // contract, as for `unread`), and is dropped from it here.
    unsafe { c_free(b.base_ptr) };
    *b = pmix_data_buffer_t {
        base_ptr: std::ptr::null_mut(),
        pack_ptr: std::ptr::null_mut(),
        unpack_ptr: std::ptr::null_mut(),
        bytes_allocated: 0,
        bytes_used: 0,
    };
}

/// Appends `bytes` to the buffer `b` (C's; grown with `realloc`), keeping where
/// unpacking is.
///
/// # Errors
/// `PMIX_ERR_NOMEM`.
fn append(b: &mut pmix_data_buffer_t, bytes: &[u8]) -> Res {
    let read_at = if b.unpack_ptr.is_null() || b.base_ptr.is_null() {
        0
    } else {
        (b.unpack_ptr as usize).saturating_sub(b.base_ptr as usize)
    };
    let need = b
        .bytes_used
        .checked_add(bytes.len())
        .ok_or(Status::ERR_NOMEM)?;
    // SAFETY: a buffer's `base_ptr` is NULL or malloc'ed with `bytes_allocated` bytes
    // (the C contract, as for `unread`); realloc's result is checked before use, and the
    // bytes go to `bytes_used..need`, within the allocation of at least `need` bytes.
    unsafe {
        if need > b.bytes_allocated || b.base_ptr.is_null() {
            let grown = libc::realloc(b.base_ptr.cast(), need.max(1)).cast::<c_char>();
            if grown.is_null() {
                return Err(Status::ERR_NOMEM);
            }
            b.base_ptr = grown;
            b.bytes_allocated = need.max(1);
        }
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            b.base_ptr.add(b.bytes_used).cast(),
            bytes.len(),
        );
    }
    b.bytes_used = need;
    b.pack_ptr = b.base_ptr.wrapping_add(need);
    b.unpack_ptr = b.base_ptr.wrapping_add(read_at.min(need));
    Ok(())
}

export! {
    /// `PMIx_Data_pack`: appends `num_vals` elements of type `type_` from `src` to
    /// `buffer`, as OpenPMIx 4.2 packs them (the count, then each element). `target`
    /// is not needed: every peer of this library speaks bfrops v4.1.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `buffer`, a negative count, NULL `src` with a count);
    /// `PMIX_ERR_NOT_SUPPORTED` (a type not listed in the module docs); as
    /// `PMIx_Value_load` for the elements; `PMIX_ERR_NOMEM`. Nothing is appended then.
    ///
    /// # Safety
    /// `buffer` is NULL or a buffer this library or `pmix_common.h`'s macros made;
    /// `src` points to `num_vals` readable elements of the C type `type_` names.
    unsafe fn PMIx_Data_pack(
        target: *const pmix_proc_t,
        buffer: *mut pmix_data_buffer_t,
        src: *mut c_void,
        num_vals: i32,
        type_: pmix_data_type_t,
    ) -> pmix_status_t {
        let _ = target;
        let b = try_mut!(buffer)?;
        let n = usize::try_from(num_vals).map_err(|_| BAD_PARAM)?;
        let size = size_of_element(type_)?;
        if n > 0 && src.is_null() {
            return Err(BAD_PARAM);
        }
        let dt = DataType::from_code(u64::from(type_)).ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut w = Writer::new(buffer_type());
        w.pack_header(dt, n);
        for k in 0..n {
            let ep = src.cast::<u8>().wrapping_add(k * size);
            // SAFETY: `src` holds `n` elements of `size` bytes of `type_` (the C contract
            // above), and `ep` is element `k < n`.
            let v = unsafe { element_to_wire(ep, type_) }?;
            v.encode_payload(&mut w);
        }
        let bytes = w.finish().map_err(|_| Status::ERR_PACK_FAILURE)?;
        append(b, &bytes)
    }
}

export! {
    /// `PMIx_Data_unpack`: reads the next pack of `buffer` (of type `type_`) into
    /// `dest`, at most `*max_num_values` elements; `*max_num_values` becomes how many
    /// were read. The elements own what they point to (strings, byte objects' bytes,
    /// values' and infos' data: the caller frees them).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `buffer`, `dest` or `max_num_values`);
    /// `PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER` when nothing is left
    /// (`*max_num_values` 0); `PMIX_ERR_UNPACK_INADEQUATE_SPACE` when the pack holds
    /// more than `*max_num_values` (nothing is read); `PMIX_ERR_NOT_SUPPORTED` (a type
    /// not listed in the module docs); `PMIX_ERR_UNPACK_FAILURE` for bytes that are
    /// not such a pack (nothing is read).
    ///
    /// # Safety
    /// `buffer` as for [`PMIx_Data_pack`]; `dest` has room for `*max_num_values`
    /// elements of the C type `type_` names.
    unsafe fn PMIx_Data_unpack(
        source: *const pmix_proc_t,
        buffer: *mut pmix_data_buffer_t,
        dest: *mut c_void,
        max_num_values: *mut i32,
        type_: pmix_data_type_t,
    ) -> pmix_status_t {
        let _ = source;
        let (b, max) = (try_mut!(buffer)?, try_mut!(max_num_values)?);
        crate::boundary::not_null(dest)?;
        let size = size_of_element(type_)?;
        let dt = DataType::from_code(u64::from(type_)).ok_or(Status::ERR_NOT_SUPPORTED)?;
        let (rest, at) = unread(b);
        if rest.is_empty() {
            *max = 0;
            return Err(Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        }
        let mut r = Reader::new(rest, buffer_type(), Limits::DEFAULT);
        let n = r.pack_header(dt, "a data pack").map_err(|_| Status::ERR_UNPACK_FAILURE)?;
        if n > usize::try_from(*max).unwrap_or(0) {
            return Err(Status::ERR_UNPACK_INADEQUATE_SPACE);
        }
        let mut values = Vec::with_capacity(n);
        for _ in 0..n {
            values.push(Value::decode_payload(dt, &mut r).map_err(|_| Status::ERR_UNPACK_FAILURE)?);
        }
        for (k, v) in values.iter().enumerate() {
            let ep = dest.cast::<u8>().wrapping_add(k * size);
            // SAFETY: `dest` has room for `*max >= n` elements of `type_` (the C contract
            // above), and `ep` is element `k < n`.
            unsafe { wire_to_element(v, ep, type_) }?;
        }
        b.unpack_ptr = b.base_ptr.wrapping_add(at + r.offset());
        *max = i32::try_from(n).unwrap_or(i32::MAX);
        Ok(())
    }
}

export! {
    /// `PMIx_Data_load`: makes `payload`'s bytes the buffer's contents (the buffer
    /// takes them over: `payload` is left empty), to be unpacked from the start.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `buffer` or `payload`).
    ///
    /// # C contract
    /// `buffer` as for [`PMIx_Data_pack`] (what it held is freed); `payload` is NULL or
    /// a writable byte object whose bytes are NULL or `malloc`ed.
    fn PMIx_Data_load(
        buffer: *mut pmix_data_buffer_t,
        payload: *mut pmix_byte_object_t,
    ) -> pmix_status_t {
        let (b, p) = (try_mut!(buffer)?, try_mut!(payload)?);
        release(b);
        b.base_ptr = p.bytes;
        b.bytes_used = if p.bytes.is_null() { 0 } else { p.size };
        b.bytes_allocated = b.bytes_used;
        b.unpack_ptr = b.base_ptr;
        b.pack_ptr = b.base_ptr.wrapping_add(b.bytes_used);
        p.bytes = std::ptr::null_mut();
        p.size = 0;
        Ok(())
    }
}

export! {
    /// `PMIx_Data_embed`: as [`PMIx_Data_load`], with a copy of `payload`'s bytes
    /// (`payload` stays the caller's, unchanged).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `buffer` or `payload`, NULL bytes with a size);
    /// `PMIX_ERR_NOMEM`.
    ///
    /// # C contract
    /// `buffer` as for [`PMIx_Data_load`]; `payload` is NULL or a readable byte object.
    fn PMIx_Data_embed(
        buffer: *mut pmix_data_buffer_t,
        payload: *const pmix_byte_object_t,
    ) -> pmix_status_t {
        let (b, p) = (try_mut!(buffer)?, try_ref!(payload)?);
        let bytes = try_slice!(p.bytes.cast::<u8>().cast_const(), p.size)?;
        release(b);
        append(b, bytes)
    }
}

export! {
    /// `PMIx_Data_unload`: hands the bytes not unpacked yet to `payload` (`malloc`ed,
    /// the caller's; NULL and 0 when none are left) and empties the buffer.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `buffer` or `payload`); `PMIX_ERR_NOMEM`.
    ///
    /// # C contract
    /// `buffer` as for [`PMIx_Data_pack`]; `payload` is NULL or writable.
    fn PMIx_Data_unload(
        buffer: *mut pmix_data_buffer_t,
        payload: *mut pmix_byte_object_t,
    ) -> pmix_status_t {
        let (b, p) = (try_mut!(buffer)?, try_mut!(payload)?);
        let (rest, _) = unread(b);
        p.bytes = c_copy(rest)?.cast();
        p.size = rest.len();
        release(b);
        Ok(())
    }
}

export! {
    /// `PMIx_Data_copy_payload`: appends the bytes of `src` not unpacked yet to `dest`
    /// (`src` is unchanged).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `dest` or `src`); `PMIX_ERR_NOMEM`.
    ///
    /// # C contract
    /// Both are NULL or buffers as for [`PMIx_Data_pack`], not the same one.
    fn PMIx_Data_copy_payload(
        dest: *mut pmix_data_buffer_t,
        src: *mut pmix_data_buffer_t,
    ) -> pmix_status_t {
        if std::ptr::eq(dest, src) {
            return Err(BAD_PARAM);
        }
        let (d, s) = (try_mut!(dest)?, try_ref!(src)?);
        let bytes = unread(s).0.to_vec();
        append(d, &bytes)
    }
}

export! {
    /// `PMIx_Data_copy`: a `malloc`ed deep copy of the one datum of type `type_` at
    /// `src` (for `PMIX_STRING`, `src` is the string), in `*dest` (the caller frees it;
    /// a value's or info's data with `PMIX_VALUE_DESTRUCT` / `PMIX_INFO_DESTRUCT` first).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `dest` or `src`); `PMIX_ERR_NOT_SUPPORTED` (a type not
    /// listed in the module docs); as `PMIx_Value_load`; `PMIX_ERR_NOMEM`.
    ///
    /// # Safety
    /// `dest` is NULL or writable; `src` is NULL or a readable datum of the C type
    /// `type_` names.
    unsafe fn PMIx_Data_copy(
        dest: *mut *mut c_void,
        src: *mut c_void,
        type_: pmix_data_type_t,
    ) -> pmix_status_t {
        let d = try_mut!(dest)?;
        crate::boundary::not_null(src)?;
        if type_ == PMIX_STRING {
            let s = opt_cstr!(src.cast::<c_char>().cast_const()).ok_or(BAD_PARAM)?;
            *d = c_string(s.to_bytes())?.cast();
            return Ok(());
        }
        let size = size_of_element(type_)?;
        // SAFETY: `src` is a readable datum of `type_` (this function's contract).
        let v = unsafe { element_to_wire(src.cast::<u8>(), type_) }?;
        let out = c_calloc(1, size)?;
        // SAFETY: `out` is a fresh zeroed allocation with room for one element of
        // `type_` (malloc's alignment suits it), freed here if filling it fails.
        unsafe { wire_to_element(&v, out.cast::<u8>(), type_).inspect_err(|_| c_free(out)) }?;
        *d = out;
        Ok(())
    }
}

/// Sets the outputs of a (de)compression to nothing: NULL, 0.
fn nothing_out(outbytes: Option<&mut *mut u8>, nbytes: Option<&mut usize>) {
    if let Some(o) = outbytes {
        *o = std::ptr::null_mut();
    }
    if let Some(n) = nbytes {
        *n = 0;
    }
}

export! {
    /// `PMIx_Data_compress`: compression is not offered: `false`, `*outbytes` NULL and
    /// `*nbytes` 0 (as libpmix2 without its compression plugin).
    ///
    /// # C contract
    /// `outbytes` and `nbytes` are NULL or writable.
    fn PMIx_Data_compress(
        inbytes: *const u8,
        size: usize,
        outbytes: *mut *mut u8,
        nbytes: *mut usize,
    ) -> bool [on_panic: false] {
        let _ = (inbytes, size);
        nothing_out(opt_mut!(outbytes), opt_mut!(nbytes));
        false
    }
}

export! {
    /// `PMIx_Data_decompress`: nothing here was compressed: `false`, `*outbytes` NULL
    /// and `*nbytes` 0.
    ///
    /// # C contract
    /// `outbytes` and `nbytes` are NULL or writable.
    fn PMIx_Data_decompress(
        inbytes: *const u8,
        size: usize,
        outbytes: *mut *mut u8,
        nbytes: *mut usize,
    ) -> bool [on_panic: false] {
        let _ = (inbytes, size);
        nothing_out(opt_mut!(outbytes), opt_mut!(nbytes));
        false
    }
}
