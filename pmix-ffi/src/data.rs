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

use crate::boundary::{BAD_PARAM, Res, c_mut, c_ref, export};
use crate::convert::{from_wire, infos_to_c, infos_to_wire, to_wire};
use crate::types::*;
use crate::value::{PMIx_Value_destruct, data_of, element_size, load};

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

/// An all-zero value (`PMIX_UNDEF`).
fn undef() -> pmix_value_t {
    pmix_value_t {
        type_: PMIX_UNDEF,
        data: pmix_value_data { raw: [0; 3] },
    }
}

/// The element of type `ty` at `ep` as pmix-wire's value of that type.
///
/// # Errors
/// `PMIX_ERR_NOT_SUPPORTED` for a type not listed in the module docs; as
/// `PMIx_Value_load`.
///
/// # Safety
/// `ep` points to a readable element of the C type `ty` names.
unsafe fn element_to_wire(ep: *const u8, ty: pmix_data_type_t) -> Result<Value, Status> {
    // SAFETY: `ep` is an element of `ty` (caller's contract).
    unsafe {
        match ty {
            PMIX_VALUE => Ok(Value::Value(Box::new(to_wire(
                &*ep.cast::<pmix_value_t>(),
            )?))),
            PMIX_INFO => {
                let info = std::slice::from_ref(&*ep.cast::<pmix_info_t>());
                let mut v = infos_to_wire(info)?;
                Ok(Value::Info(Box::new(v.remove(0))))
            }
            _ => {
                size_of_element(ty)?;
                let data: *const c_void = if ty == PMIX_STRING {
                    ep.cast::<*const c_char>().read_unaligned().cast()
                } else {
                    ep.cast()
                };
                let mut v = undef();
                load(&mut v, data, ty)?;
                let w = to_wire(&v);
                PMIx_Value_destruct(&mut v);
                w
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
/// `ep` points to a writable element of the C type `ty` names.
unsafe fn wire_to_element(value: &Value, ep: *mut u8, ty: pmix_data_type_t) -> Res {
    // SAFETY: `ep` is a writable element of `ty` (caller's contract); what `from_wire`
    // allocated moves into it.
    unsafe {
        match (ty, value) {
            (PMIX_VALUE, Value::Value(inner)) => {
                let slot = &mut *ep.cast::<pmix_value_t>();
                *slot = undef();
                from_wire(inner, slot)
            }
            (PMIX_INFO, Value::Info(info)) => {
                let (arr, _) = infos_to_c(std::slice::from_ref(&**info))?;
                ep.cast::<pmix_info_t>().write(arr.read());
                libc::free(arr.cast());
                Ok(())
            }
            _ => {
                let size = size_of_element(ty)?;
                let mut v = undef();
                from_wire(value, &mut v)?;
                if v.type_ != ty {
                    PMIx_Value_destruct(&mut v);
                    return Err(Status::ERR_UNPACK_FAILURE);
                }
                match ty {
                    PMIX_PROC => {
                        ep.cast::<pmix_proc_t>().write(v.data.proc_.read());
                        libc::free(v.data.proc_.cast());
                    }
                    PMIX_STRING | PMIX_BYTE_OBJECT => {
                        std::ptr::copy_nonoverlapping(data_ptr(&v), ep, size);
                    }
                    _ => std::ptr::copy_nonoverlapping(data_of(&v).cast::<u8>(), ep, size),
                }
                Ok(())
            }
        }
    }
}

/// Where the union of `v` starts (a string's pointer, a byte object's struct).
fn data_ptr(v: &pmix_value_t) -> *const u8 {
    (&raw const v.data).cast()
}

/// The bytes not unpacked yet, and how many were before them.
///
/// # Safety
/// `b`'s pointers describe its memory (as this library and `pmix_common.h`'s macros
/// keep them).
unsafe fn unread(b: &pmix_data_buffer_t) -> (&[u8], usize) {
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
    // SAFETY: `base_ptr` holds `bytes_used` bytes (caller's contract) and `at` is
    // within them.
    let all = unsafe { std::slice::from_raw_parts(b.base_ptr.cast::<u8>(), b.bytes_used) };
    (&all[at..], at)
}

/// Frees what `b` holds and leaves it empty.
///
/// # Safety
/// `base_ptr` is NULL or `malloc`ed, and freed once.
unsafe fn release(b: &mut pmix_data_buffer_t) {
    // SAFETY: caller's contract.
    unsafe { libc::free(b.base_ptr.cast()) };
    *b = pmix_data_buffer_t {
        base_ptr: std::ptr::null_mut(),
        pack_ptr: std::ptr::null_mut(),
        unpack_ptr: std::ptr::null_mut(),
        bytes_allocated: 0,
        bytes_used: 0,
    };
}

/// Appends `bytes` to `b` (grown with `realloc`), keeping where unpacking is.
///
/// # Errors
/// `PMIX_ERR_NOMEM`.
///
/// # Safety
/// As [`unread`]; `base_ptr` is NULL or `malloc`ed.
unsafe fn append(b: &mut pmix_data_buffer_t, bytes: &[u8]) -> Res {
    let read_at = if b.unpack_ptr.is_null() || b.base_ptr.is_null() {
        0
    } else {
        (b.unpack_ptr as usize).saturating_sub(b.base_ptr as usize)
    };
    let need = b
        .bytes_used
        .checked_add(bytes.len())
        .ok_or(Status::ERR_NOMEM)?;
    if need > b.bytes_allocated || b.base_ptr.is_null() {
        // SAFETY: `base_ptr` is NULL or malloc'ed (caller's contract); the result is
        // checked before use.
        let grown = unsafe { libc::realloc(b.base_ptr.cast(), need.max(1)) }.cast::<c_char>();
        if grown.is_null() {
            return Err(Status::ERR_NOMEM);
        }
        b.base_ptr = grown;
        b.bytes_allocated = need.max(1);
    }
    // SAFETY: `base_ptr` has room for `need` bytes (just ensured).
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            b.base_ptr.add(b.bytes_used).cast(),
            bytes.len(),
        );
        b.bytes_used = need;
        b.pack_ptr = b.base_ptr.add(need);
        b.unpack_ptr = b.base_ptr.add(read_at.min(need));
    }
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
        // SAFETY: a non-NULL `buffer` is writable (caller's contract).
        let b = unsafe { c_mut(buffer) }?;
        let n = usize::try_from(num_vals).map_err(|_| BAD_PARAM)?;
        let size = size_of_element(type_)?;
        if n > 0 && src.is_null() {
            return Err(BAD_PARAM);
        }
        let dt = DataType::from_code(u64::from(type_)).ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut w = Writer::new(buffer_type());
        w.pack_header(dt, n);
        for k in 0..n {
            // SAFETY: `src` holds `n` elements of `size` bytes (caller's contract).
            let v = unsafe { element_to_wire(src.cast::<u8>().add(k * size), type_) }?;
            v.encode_payload(&mut w);
        }
        let bytes = w.finish().map_err(|_| Status::ERR_PACK_FAILURE)?;
        // SAFETY: `b` is this library's kind of buffer (caller's contract).
        unsafe { append(b, &bytes) }
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
        // SAFETY: non-NULL pointers are valid (caller's contract).
        let (b, max) = unsafe { (c_mut(buffer)?, c_mut(max_num_values)?) };
        crate::boundary::not_null(dest)?;
        let size = size_of_element(type_)?;
        let dt = DataType::from_code(u64::from(type_)).ok_or(Status::ERR_NOT_SUPPORTED)?;
        // SAFETY: `b` is this library's kind of buffer (caller's contract).
        let (rest, at) = unsafe { unread(b) };
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
            // SAFETY: `dest` has room for `n <= *max` elements (caller's contract).
            unsafe { wire_to_element(v, dest.cast::<u8>().add(k * size), type_) }?;
        }
        let used = r.offset();
        // SAFETY: `at + used` is within the buffer's used bytes.
        b.unpack_ptr = unsafe { b.base_ptr.add(at + used) };
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
    /// # Safety
    /// `buffer` as for [`PMIx_Data_pack`] (what it held is freed); `payload` is NULL or
    /// a writable byte object whose bytes are NULL or `malloc`ed.
    unsafe fn PMIx_Data_load(
        buffer: *mut pmix_data_buffer_t,
        payload: *mut pmix_byte_object_t,
    ) -> pmix_status_t {
        // SAFETY: non-NULL pointers are valid (caller's contract).
        let (b, p) = unsafe { (c_mut(buffer)?, c_mut(payload)?) };
        // SAFETY: what the buffer held was malloc'ed (caller's contract).
        unsafe { release(b) };
        b.base_ptr = p.bytes;
        b.bytes_used = if p.bytes.is_null() { 0 } else { p.size };
        b.bytes_allocated = b.bytes_used;
        b.unpack_ptr = b.base_ptr;
        // SAFETY: within the bytes just taken over.
        b.pack_ptr = if b.base_ptr.is_null() { b.base_ptr } else { unsafe { b.base_ptr.add(b.bytes_used) } };
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
    /// # Safety
    /// `buffer` as for [`PMIx_Data_load`]; `payload` is NULL or a readable byte object.
    unsafe fn PMIx_Data_embed(
        buffer: *mut pmix_data_buffer_t,
        payload: *const pmix_byte_object_t,
    ) -> pmix_status_t {
        // SAFETY: non-NULL pointers are valid (caller's contract).
        let (b, p) = unsafe { (c_mut(buffer)?, c_ref(payload)?) };
        // SAFETY: the payload's bytes are readable (caller's contract).
        let bytes = unsafe { crate::boundary::c_slice(p.bytes.cast::<u8>(), p.size) }?;
        // SAFETY: what the buffer held was malloc'ed (caller's contract).
        unsafe { release(b) };
        // SAFETY: `b` is now empty.
        unsafe { append(b, bytes) }
    }
}

export! {
    /// `PMIx_Data_unload`: hands the bytes not unpacked yet to `payload` (`malloc`ed,
    /// the caller's; NULL and 0 when none are left) and empties the buffer.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `buffer` or `payload`); `PMIX_ERR_NOMEM`.
    ///
    /// # Safety
    /// `buffer` as for [`PMIx_Data_pack`]; `payload` is NULL or writable.
    unsafe fn PMIx_Data_unload(
        buffer: *mut pmix_data_buffer_t,
        payload: *mut pmix_byte_object_t,
    ) -> pmix_status_t {
        // SAFETY: non-NULL pointers are valid (caller's contract).
        let (b, p) = unsafe { (c_mut(buffer)?, c_mut(payload)?) };
        // SAFETY: `b` is this library's kind of buffer (caller's contract).
        let (rest, _) = unsafe { unread(b) };
        let copy = if rest.is_empty() {
            std::ptr::null_mut()
        } else {
            // SAFETY: checked for NULL below.
            let c = unsafe { libc::malloc(rest.len()) }.cast::<c_char>();
            if c.is_null() {
                return Err(Status::ERR_NOMEM);
            }
            // SAFETY: `c` has room for `rest.len()` bytes.
            unsafe { std::ptr::copy_nonoverlapping(rest.as_ptr(), c.cast(), rest.len()) };
            c
        };
        p.bytes = copy;
        p.size = rest.len();
        // SAFETY: the buffer's memory was malloc'ed (caller's contract).
        unsafe { release(b) };
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
    /// # Safety
    /// Both are NULL or buffers as for [`PMIx_Data_pack`], not the same one.
    unsafe fn PMIx_Data_copy_payload(
        dest: *mut pmix_data_buffer_t,
        src: *mut pmix_data_buffer_t,
    ) -> pmix_status_t {
        if std::ptr::eq(dest, src) {
            return Err(BAD_PARAM);
        }
        // SAFETY: non-NULL, distinct buffers (caller's contract, checked).
        let (d, s) = unsafe { (c_mut(dest)?, c_ref(src)?) };
        // SAFETY: `s` is this library's kind of buffer (caller's contract).
        let (rest, _) = unsafe { unread(s) };
        let bytes = rest.to_vec();
        // SAFETY: as above, for `d`.
        unsafe { append(d, &bytes) }
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
        // SAFETY: a non-NULL `dest` is writable (caller's contract).
        let d = unsafe { c_mut(dest) }?;
        crate::boundary::not_null(src)?;
        if type_ == PMIX_STRING {
            // SAFETY: `src` is a NUL-terminated string (caller's contract).
            let s = unsafe { libc::strdup(src.cast()) };
            if s.is_null() {
                return Err(Status::ERR_NOMEM);
            }
            *d = s.cast();
            return Ok(());
        }
        let size = size_of_element(type_)?;
        // SAFETY: `src` is a readable datum of `type_` (caller's contract).
        let v = unsafe { element_to_wire(src.cast::<u8>(), type_) }?;
        // SAFETY: checked for NULL below.
        let out = unsafe { libc::calloc(1, size) };
        if out.is_null() {
            return Err(Status::ERR_NOMEM);
        }
        // SAFETY: `out` has room for one element of `type_`.
        if let Err(e) = unsafe { wire_to_element(&v, out.cast::<u8>(), type_) } {
            // SAFETY: `out` was calloc'ed above and holds nothing owned.
            unsafe { libc::free(out) };
            return Err(e);
        }
        *d = out;
        Ok(())
    }
}

/// Sets the outputs of a (de)compression to nothing: NULL, 0.
///
/// # Safety
/// `outbytes` and `nbytes` are NULL or writable.
unsafe fn nothing_out(outbytes: *mut *mut u8, nbytes: *mut usize) {
    // SAFETY: non-NULL outputs are writable (caller's contract).
    unsafe {
        if let Some(o) = outbytes.as_mut() {
            *o = std::ptr::null_mut();
        }
        if let Some(n) = nbytes.as_mut() {
            *n = 0;
        }
    }
}

export! {
    /// `PMIx_Data_compress`: compression is not offered: `false`, `*outbytes` NULL and
    /// `*nbytes` 0 (as libpmix2 without its compression plugin).
    ///
    /// # Safety
    /// `outbytes` and `nbytes` are NULL or writable.
    unsafe fn PMIx_Data_compress(
        inbytes: *const u8,
        size: usize,
        outbytes: *mut *mut u8,
        nbytes: *mut usize,
    ) -> bool [on_panic: false] {
        let _ = (inbytes, size);
        // SAFETY: forwarded from the caller.
        unsafe { nothing_out(outbytes, nbytes) };
        false
    }
}

export! {
    /// `PMIx_Data_decompress`: nothing here was compressed: `false`, `*outbytes` NULL
    /// and `*nbytes` 0.
    ///
    /// # Safety
    /// `outbytes` and `nbytes` are NULL or writable.
    unsafe fn PMIx_Data_decompress(
        inbytes: *const u8,
        size: usize,
        outbytes: *mut *mut u8,
        nbytes: *mut usize,
    ) -> bool [on_panic: false] {
        let _ = (inbytes, size);
        // SAFETY: forwarded from the caller.
        unsafe { nothing_out(outbytes, nbytes) };
        false
    }
}
