//! `PMIx_Value_load`, `PMIx_Value_destruct`, `PMIx_Info_load`: what the header's
//! `PMIX_INFO_LOAD`, `PMIX_INFO_DESTRUCT` and `PMIX_INFO_FREE` macros call.

use std::ffi::{c_char, c_int, c_void};

use pmix_core::Status;

use crate::boundary::{BAD_PARAM, Res, c_mut, export, not_null};
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
pub(crate) unsafe fn load(
    val: &mut pmix_value_t,
    data: *const c_void,
    ty: pmix_data_type_t,
) -> Res {
    // SAFETY: forwarded from the caller.
    unsafe { load_at(val, data, ty, 0) }
}

/// How deep data arrays may nest (an array of infos whose values are arrays, …):
/// deeper is `PMIX_ERR_BAD_PARAM` (a C structure that points to itself would
/// otherwise never end).
pub(crate) const MAX_NESTING: usize = 16;

/// [`load`] at nesting `depth`.
///
/// # Safety
/// As [`PMIx_Value_load`].
unsafe fn load_at(
    val: &mut pmix_value_t,
    data: *const c_void,
    ty: pmix_data_type_t,
    depth: usize,
) -> Res {
    val.type_ = PMIX_UNDEF;
    val.data = pmix_value_data { raw: [0; 3] };
    if data.is_null() {
        // No data: the type alone (a key given alone reads as "true").
        match ty {
            PMIX_BOOL => val.data.flag = 1,
            PMIX_UNDEF | PMIX_BYTE | PMIX_STRING | PMIX_SIZE | PMIX_PID | PMIX_INT | PMIX_INT8
            | PMIX_INT16 | PMIX_INT32 | PMIX_INT64 | PMIX_UINT | PMIX_UINT8 | PMIX_UINT16
            | PMIX_UINT32 | PMIX_UINT64 | PMIX_FLOAT | PMIX_DOUBLE | PMIX_STATUS
            | PMIX_PROC_RANK | PMIX_DEVTYPE | PMIX_POINTER | PMIX_TIME | PMIX_PERSIST
            | PMIX_SCOPE | PMIX_DATA_RANGE | PMIX_INFO_DIRECTIVES | PMIX_DATA_TYPE
            | PMIX_PROC_STATE | PMIX_ALLOC_DIRECTIVE | PMIX_IOF_CHANNEL | PMIX_JOB_STATE
            | PMIX_LINK_STATE | PMIX_LOCTYPE => {}
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
            PMIX_TIME => d.int64 = read::<libc::time_t>(data),
            PMIX_PERSIST | PMIX_SCOPE | PMIX_DATA_RANGE | PMIX_PROC_STATE
            | PMIX_ALLOC_DIRECTIVE | PMIX_JOB_STATE | PMIX_LINK_STATE => d.uint8 = read(data),
            PMIX_DATA_TYPE | PMIX_IOF_CHANNEL | PMIX_LOCTYPE => d.uint16 = read(data),
            PMIX_INFO_DIRECTIVES => d.uint32 = read(data),
            PMIX_POINTER => d.ptr = data.cast_mut(),
            PMIX_PROC => d.proc_ = copy_procs(data.cast::<pmix_proc_t>(), 1)?,
            PMIX_BYTE_OBJECT => {
                let bo = read::<pmix_byte_object_t>(data);
                let bytes = if bo.bytes.is_null() || bo.size == 0 {
                    std::ptr::null_mut()
                } else {
                    let b = libc::malloc(bo.size).cast::<c_char>();
                    if b.is_null() {
                        return Err(Status::ERR_NOMEM);
                    }
                    std::ptr::copy_nonoverlapping(bo.bytes, b, bo.size);
                    b
                };
                d.bo = pmix_byte_object_t {
                    bytes,
                    size: if bytes.is_null() { 0 } else { bo.size },
                };
            }
            PMIX_DATA_ARRAY => d.darray = copy_array(&read::<pmix_data_array_t>(data), depth)?,
            _ => return Err(Status::ERR_NOT_SUPPORTED),
        }
    }
    val.type_ = ty;
    Ok(())
}

/// The size of one element of a C array of `ty` that the library copies: the
/// scalars, strings (`char *`), processes, infos and values; `None` for another type.
pub(crate) fn element_size(ty: pmix_data_type_t) -> Option<usize> {
    Some(match ty {
        PMIX_BOOL | PMIX_BYTE | PMIX_INT8 | PMIX_UINT8 | PMIX_PERSIST | PMIX_SCOPE
        | PMIX_DATA_RANGE | PMIX_PROC_STATE | PMIX_ALLOC_DIRECTIVE | PMIX_JOB_STATE
        | PMIX_LINK_STATE => 1,
        PMIX_INT16 | PMIX_UINT16 | PMIX_DATA_TYPE | PMIX_IOF_CHANNEL | PMIX_LOCTYPE => 2,
        PMIX_PID | PMIX_INT | PMIX_INT32 | PMIX_UINT | PMIX_UINT32 | PMIX_FLOAT | PMIX_STATUS
        | PMIX_PROC_RANK | PMIX_INFO_DIRECTIVES => 4,
        PMIX_SIZE | PMIX_INT64 | PMIX_UINT64 | PMIX_DOUBLE | PMIX_DEVTYPE | PMIX_TIME => 8,
        PMIX_STRING => size_of::<*mut c_char>(),
        PMIX_PROC => size_of::<pmix_proc_t>(),
        PMIX_INFO => size_of::<pmix_info_t>(),
        PMIX_VALUE => size_of::<pmix_value_t>(),
        _ => return None,
    })
}

/// The pointer [`load`] takes for the value `v` holds (the datum for a scalar, the
/// string, process, array or byte object itself for the others).
pub(crate) fn data_of(v: &pmix_value_t) -> *const c_void {
    // SAFETY: reading a pointer-sized union member as a pointer is what the type tag
    // says is there for these types; nothing is dereferenced here.
    unsafe {
        match v.type_ {
            PMIX_STRING => v.data.string.cast(),
            PMIX_PROC => v.data.proc_.cast(),
            PMIX_DATA_ARRAY => v.data.darray.cast(),
            PMIX_POINTER => v.data.ptr,
            _ => (&raw const v.data).cast(),
        }
    }
}

/// A `malloc`ed deep copy of array `a` (elements of a type [`element_size`] knows;
/// strings duplicated, infos' and values' data loaded in turn), at nesting `depth`.
///
/// # Errors
/// `PMIX_ERR_NOT_SUPPORTED` for another element type; `PMIX_ERR_BAD_PARAM` for a NULL
/// array with elements, a size beyond any array or nesting deeper than
/// [`MAX_NESTING`]; the elements' errors; `PMIX_ERR_NOMEM`. Nothing is left allocated.
///
/// # Safety
/// `a.array` points to `a.size` readable elements of `a.type_`, each as
/// [`PMIx_Value_load`] requires of its data.
unsafe fn copy_array(
    a: &pmix_data_array_t,
    depth: usize,
) -> Result<*mut pmix_data_array_t, Status> {
    if depth >= MAX_NESTING {
        return Err(BAD_PARAM);
    }
    let size = element_size(a.type_).ok_or(Status::ERR_NOT_SUPPORTED)?;
    let n = a.size;
    let bytes = n
        .checked_mul(size)
        .filter(|b| *b <= isize::MAX as usize)
        .ok_or(BAD_PARAM)?;
    if n > 0 && a.array.is_null() {
        return Err(BAD_PARAM);
    }
    let copy = alloc_array(a.type_, n, size)?;
    // SAFETY: `copy` owns `n` zeroed elements of `size` bytes; what is filled in is
    // counted in its `size`, so an error frees it whole.
    unsafe {
        let array = (*copy).array;
        let fail = move |e: Status| {
            free_array(copy);
            Err(e)
        };
        match a.type_ {
            PMIX_STRING => {
                let src = a.array.cast::<*const c_char>();
                let dst = array.cast::<*mut c_char>();
                for k in 0..n {
                    let s = src.add(k).read_unaligned();
                    if !s.is_null() {
                        let d = libc::strdup(s);
                        if d.is_null() {
                            return fail(Status::ERR_NOMEM);
                        }
                        dst.add(k).write(d);
                    }
                    (*copy).size = k + 1;
                }
            }
            PMIX_INFO => {
                let src = a.array.cast::<pmix_info_t>();
                let dst = array.cast::<pmix_info_t>();
                for k in 0..n {
                    let from = src.add(k).read_unaligned();
                    let to = &mut *dst.add(k);
                    to.key = from.key;
                    to.flags = from.flags;
                    if let Err(e) = load_at(
                        &mut to.value,
                        data_of(&from.value),
                        from.value.type_,
                        depth + 1,
                    ) {
                        return fail(e);
                    }
                    (*copy).size = k + 1;
                }
            }
            PMIX_VALUE => {
                let src = a.array.cast::<pmix_value_t>();
                let dst = array.cast::<pmix_value_t>();
                for k in 0..n {
                    let from = src.add(k).read_unaligned();
                    if let Err(e) = load_at(&mut *dst.add(k), data_of(&from), from.type_, depth + 1)
                    {
                        return fail(e);
                    }
                    (*copy).size = k + 1;
                }
            }
            _ => {
                std::ptr::copy_nonoverlapping(a.array.cast::<u8>(), array.cast::<u8>(), bytes);
                (*copy).size = n;
            }
        }
        Ok(copy)
    }
}

/// A `malloc`ed C data array of `n` zeroed elements of `size` bytes of type `ty`,
/// counting none yet (its `size` is 0: the caller counts what it fills in, and
/// [`free_array`] frees that much).
///
/// # Errors
/// `PMIX_ERR_NOMEM` (nothing is left allocated).
pub(crate) fn alloc_array(
    ty: pmix_data_type_t,
    n: usize,
    size: usize,
) -> Result<*mut pmix_data_array_t, Status> {
    // SAFETY: calloc checks n × size for overflow; each result is checked for NULL
    // before use.
    unsafe {
        let array = if n == 0 {
            std::ptr::null_mut()
        } else {
            libc::calloc(n, size)
        };
        if n > 0 && array.is_null() {
            return Err(Status::ERR_NOMEM);
        }
        let a = libc::malloc(size_of::<pmix_data_array_t>()).cast::<pmix_data_array_t>();
        if a.is_null() {
            libc::free(array);
            return Err(Status::ERR_NOMEM);
        }
        a.write(pmix_data_array_t {
            type_: ty,
            size: 0,
            array,
        });
        Ok(a)
    }
}

/// Frees an array [`copy_array`] made (its first `size` elements' contents, the
/// elements, the array itself); NULL is nothing.
///
/// # Safety
/// `a` came from [`copy_array`] (or the C helpers of `pmix_common.h`, which allocate
/// alike) and is freed once.
pub(crate) unsafe fn free_array(a: *mut pmix_data_array_t) {
    // SAFETY: forwarded from the caller; the struct itself was malloc'ed.
    unsafe {
        if let Some(arr) = a.as_mut() {
            destruct_array(arr);
            libc::free(a.cast());
        }
    }
}

/// Frees what the array `arr` holds (its elements' data, the element block) and
/// leaves it empty; the struct itself stays (`PMIx_Data_array_destruct`).
///
/// # Safety
/// The elements up to `size` hold what their type says, allocated with malloc, and
/// are freed once.
pub(crate) unsafe fn destruct_array(arr: &mut pmix_data_array_t) {
    // SAFETY: caller's contract: the elements up to `size` hold what their type says,
    // allocated with malloc.
    unsafe {
        if !arr.array.is_null() {
            match arr.type_ {
                PMIX_STRING => {
                    for k in 0..arr.size {
                        libc::free(arr.array.cast::<*mut c_char>().add(k).read().cast());
                    }
                }
                PMIX_INFO => {
                    for k in 0..arr.size {
                        let info = &mut *arr.array.cast::<pmix_info_t>().add(k);
                        // A persistent info (PMIX_INFO_PERSISTENT) owns nothing.
                        if info.flags & 0x10 == 0 {
                            PMIx_Value_destruct(&mut info.value);
                        }
                    }
                }
                PMIX_VALUE => {
                    for k in 0..arr.size {
                        PMIx_Value_destruct(arr.array.cast::<pmix_value_t>().add(k));
                    }
                }
                _ => {}
            }
        }
        libc::free(arr.array);
        arr.array = std::ptr::null_mut();
        arr.size = 0;
    }
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

export! {
    /// `PMIx_Value_load`: copies `data` of type `ty` into `val` (see `pmix_common.h`).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `val`); `PMIX_ERR_NOT_SUPPORTED` (a type other than the
    /// scalars, `PMIX_STRING`, `PMIX_POINTER`, `PMIX_PROC`, `PMIX_BYTE_OBJECT` (its bytes
    /// copied), a `PMIX_DATA_ARRAY` (deep copy) of those scalars, strings, processes or
    /// infos, and `PMIX_UNDEF`: `val` is left `PMIX_UNDEF`); `PMIX_ERR_BAD_PARAM` for
    /// arrays nested deeper than 16;
    /// `PMIX_ERR_NOMEM`.
    ///
    /// # Safety
    /// `val` is NULL or writable; `data` is NULL or points to a readable value of the C type
    /// `ty` names (for `PMIX_STRING`, a NUL-terminated string; for `PMIX_POINTER`, any
    /// pointer).
    unsafe fn PMIx_Value_load(
        val: *mut pmix_value_t,
        data: *const c_void,
        ty: pmix_data_type_t,
    ) -> pmix_status_t {
        // SAFETY: a non-NULL `val` is writable (caller's contract).
        let v = unsafe { c_mut(val) }?;
        // SAFETY: forwarded from the caller.
        unsafe { load(v, data, ty) }
    }
}

export! {
    /// `PMIx_Value_destruct`: frees what the value owns (a `PMIX_STRING`'s string, a
    /// `PMIX_BYTE_OBJECT`'s bytes, a `PMIX_PROC`'s process) and makes it `PMIX_UNDEF`. Values of types the library does not load are only reset.
    ///
    /// # Safety
    /// `val` is NULL or writable; a `PMIX_STRING` value's string, a
    /// `PMIX_BYTE_OBJECT`'s bytes and a `PMIX_PROC`'s process are NULL or `malloc`ed.
    unsafe fn PMIx_Value_destruct(val: *mut pmix_value_t) {
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
            // SAFETY: the tag says the union holds a malloc'ed array, made by
            // `copy_array` or the header's helpers (or NULL).
            unsafe { free_array(v.data.darray) };
        }
        v.type_ = PMIX_UNDEF;
        v.data = pmix_value_data { raw: [0; 3] };
    }
}

export! {
    /// `PMIx_Info_load`: copies `key` (at most 511 bytes, NUL-padded) and loads the value
    /// as [`PMIx_Value_load`]; `flags` become none, as libpmix2's (`tests/c/lists.c`
    /// compares).
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (NULL `info` or `key`), then as [`PMIx_Value_load`].
    ///
    /// # Safety
    /// `info` is NULL or writable; `key` is NULL or a NUL-terminated string; `data` as for
    /// [`PMIx_Value_load`].
    unsafe fn PMIx_Info_load(
        info: *mut pmix_info_t,
        key: *const c_char,
        data: *const c_void,
        ty: pmix_data_type_t,
    ) -> pmix_status_t {
        // SAFETY: a non-NULL `info` is writable (caller's contract).
        let i = unsafe { c_mut(info) }?;
        not_null(key)?;
        i.flags = 0;
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
    }
}

/// `PMIX_EQUAL` and the other answers of `PMIx_Value_compare` (`pmix_value_cmp_t`).
const CMP_EQUAL: c_int = 0;
const CMP_VALUE1_GREATER: c_int = 1;
const CMP_VALUE2_GREATER: c_int = 2;
const CMP_TYPE_DIFFERENT: c_int = 3;
const CMP_INCOMPATIBLE: c_int = 4;
const CMP_NOT_AVAIL: c_int = 5;

fn ordering(o: Option<std::cmp::Ordering>) -> c_int {
    match o {
        Some(std::cmp::Ordering::Equal) => CMP_EQUAL,
        Some(std::cmp::Ordering::Greater) => CMP_VALUE1_GREATER,
        Some(std::cmp::Ordering::Less) => CMP_VALUE2_GREATER,
        None => CMP_NOT_AVAIL,
    }
}

export! {
    /// `PMIx_Value_compare`: how `v1` compares with `v2`, as libpmix2 answers:
    /// `PMIX_VALUE_TYPE_DIFFERENT` for values of different types; for the same type,
    /// `PMIX_EQUAL`, `PMIX_VALUE1_GREATER` or `PMIX_VALUE2_GREATER` (numbers by value,
    /// `true` above `false`, strings byte by byte, processes by namespace then rank, byte
    /// objects by size then bytes); `PMIX_VALUE_INCOMPATIBLE_OBJECTS` for a NULL value or
    /// string or process; `PMIX_VALUE_COMPARISON_NOT_AVAIL` for another type or a NaN.
    ///
    /// # Safety
    /// `v1` and `v2` are NULL or readable values whose data is what their types say.
    unsafe fn PMIx_Value_compare(
        v1: *mut pmix_value_t,
        v2: *mut pmix_value_t,
    ) -> c_int [on_panic: CMP_NOT_AVAIL] {
        // SAFETY: NULL or readable (caller's contract).
        let (Some(a), Some(b)) = (unsafe { v1.as_ref() }, unsafe { v2.as_ref() }) else {
            return CMP_INCOMPATIBLE;
        };
        if a.type_ != b.type_ {
            return CMP_TYPE_DIFFERENT;
        }
        let (x, y) = (&a.data, &b.data);
        // SAFETY: both unions hold what the (same) type tag says.
        unsafe {
            match a.type_ {
                PMIX_UNDEF => CMP_EQUAL,
                PMIX_BOOL => ordering(Some((x.flag != 0).cmp(&(y.flag != 0)))),
                PMIX_BYTE | PMIX_UINT8 => ordering(Some(x.uint8.cmp(&y.uint8))),
                PMIX_SIZE => ordering(Some(x.size.cmp(&y.size))),
                PMIX_PID => ordering(Some(x.pid.cmp(&y.pid))),
                PMIX_INT => ordering(Some(x.integer.cmp(&y.integer))),
                PMIX_INT8 => ordering(Some(x.int8.cmp(&y.int8))),
                PMIX_INT16 => ordering(Some(x.int16.cmp(&y.int16))),
                PMIX_INT32 => ordering(Some(x.int32.cmp(&y.int32))),
                PMIX_INT64 => ordering(Some(x.int64.cmp(&y.int64))),
                PMIX_UINT => ordering(Some(x.uint.cmp(&y.uint))),
                PMIX_UINT16 => ordering(Some(x.uint16.cmp(&y.uint16))),
                PMIX_UINT32 => ordering(Some(x.uint32.cmp(&y.uint32))),
                PMIX_UINT64 | PMIX_DEVTYPE => ordering(Some(x.uint64.cmp(&y.uint64))),
                PMIX_STATUS => ordering(Some(x.status.cmp(&y.status))),
                PMIX_PROC_RANK => ordering(Some(x.rank.cmp(&y.rank))),
                PMIX_FLOAT => ordering(x.fval.partial_cmp(&y.fval)),
                PMIX_DOUBLE => ordering(x.dval.partial_cmp(&y.dval)),
                PMIX_STRING => {
                    if x.string.is_null() || y.string.is_null() {
                        return CMP_INCOMPATIBLE;
                    }
                    let (s, t) = (
                        std::ffi::CStr::from_ptr(x.string),
                        std::ffi::CStr::from_ptr(y.string),
                    );
                    ordering(Some(s.cmp(t)))
                }
                PMIX_PROC => {
                    let (Some(p), Some(q)) = (x.proc_.as_ref(), y.proc_.as_ref()) else {
                        return CMP_INCOMPATIBLE;
                    };
                    let ns = |n: &[c_char; PMIX_MAX_NSLEN + 1]| -> Vec<u8> {
                        n.iter()
                            .take_while(|c| **c != 0)
                            .map(|c| *c as u8)
                            .collect()
                    };
                    ordering(Some(
                        ns(&p.nspace).cmp(&ns(&q.nspace)).then(p.rank.cmp(&q.rank)),
                    ))
                }
                PMIX_BYTE_OBJECT => {
                    let (p, q) = (x.bo, y.bo);
                    let bytes = |b: pmix_byte_object_t| -> &[u8] {
                        if b.bytes.is_null() || b.size == 0 {
                            &[]
                        } else {
                            std::slice::from_raw_parts(b.bytes.cast::<u8>(), b.size)
                        }
                    };
                    ordering(Some(
                        p.size.cmp(&q.size).then_with(|| bytes(p).cmp(bytes(q))),
                    ))
                }
                _ => CMP_NOT_AVAIL,
            }
        }
    }
}
