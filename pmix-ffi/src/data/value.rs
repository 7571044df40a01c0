//! Loading and releasing C values: `PMIx_Value_load`, `PMIx_Value_destruct`,
//! `PMIx_Info_load` (what the header's `PMIX_INFO_LOAD`, `PMIX_INFO_DESTRUCT` and
//! `PMIX_INFO_FREE` macros call) and `PMIx_Value_compare`; the data arrays values hold;
//! `CValue`, a value the library made and releases itself.

use std::ffi::{c_char, c_int, c_void};

use pmix_core::Status;

use crate::boundary::{
    BAD_PARAM, Res, export, fits_in_a_slice, opt_mut, opt_ref, try_bytes, try_mut,
};
use crate::cmem::{c_box, c_calloc, c_copy, c_free};
use crate::types::*;

/// Loads `val` from `data` of type `ty` (`PMIx_Value_load`).
///
/// # Errors
/// As [`PMIx_Value_load`].
///
/// # Safety
/// `data` is NULL or points to a readable datum of the C type `ty` names (for
/// `PMIX_STRING`, a NUL-terminated string; for `PMIX_POINTER`, any pointer), at any
/// alignment, whose strings, bytes and array elements are readable as they say.
pub(crate) unsafe fn load(
    val: &mut pmix_value_t,
    data: *const c_void,
    ty: pmix_data_type_t,
) -> Res {
    // SAFETY: `data` is what `load_at` requires (this function's contract is the same);
    // a value given to load is at the top, nesting 0.
    unsafe { load_at(val, data, ty, 0) }
}

/// How deep data arrays may nest (an array of infos whose values are arrays, …):
/// deeper is `PMIX_ERR_BAD_PARAM` (a C structure that points to itself would
/// otherwise never end).
pub(crate) const MAX_NESTING: usize = 16;

/// [`load`] at nesting `depth`.
///
/// # Safety
/// As [`load`].
unsafe fn load_at(
    val: &mut pmix_value_t,
    data: *const c_void,
    ty: pmix_data_type_t,
    depth: usize,
) -> Res {
    *val = pmix_value_t::UNDEF;
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
    // SAFETY: `data` points to a readable datum of the C type `ty` names, at any
    // alignment (the caller's contract): each arm reads it unaligned as that type, a
    // string to its NUL, a byte object's `size` bytes, an array's elements (as
    // `copy_array` requires); `PMIX_POINTER` is the pointer itself, as in OpenPMIx.
    unsafe {
        match ty {
            PMIX_UNDEF => {}
            PMIX_BOOL => d.flag = u8::from(data.cast::<u8>().read_unaligned() != 0),
            PMIX_BYTE | PMIX_UINT8 => d.byte = data.cast::<u8>().read_unaligned(),
            PMIX_STRING => {
                let s = libc::strdup(data.cast::<c_char>());
                if s.is_null() {
                    return Err(Status::ERR_NOMEM);
                }
                d.string = s;
            }
            PMIX_SIZE => d.size = data.cast::<usize>().read_unaligned(),
            PMIX_PID => d.pid = data.cast::<libc::pid_t>().read_unaligned(),
            PMIX_INT => d.integer = data.cast::<c_int>().read_unaligned(),
            PMIX_INT8 => d.int8 = data.cast::<i8>().read_unaligned(),
            PMIX_INT16 => d.int16 = data.cast::<i16>().read_unaligned(),
            PMIX_INT32 => d.int32 = data.cast::<i32>().read_unaligned(),
            PMIX_INT64 => d.int64 = data.cast::<i64>().read_unaligned(),
            PMIX_UINT => d.uint = data.cast::<std::ffi::c_uint>().read_unaligned(),
            PMIX_UINT16 => d.uint16 = data.cast::<u16>().read_unaligned(),
            PMIX_UINT32 => d.uint32 = data.cast::<u32>().read_unaligned(),
            PMIX_UINT64 => d.uint64 = data.cast::<u64>().read_unaligned(),
            PMIX_FLOAT => d.fval = data.cast::<f32>().read_unaligned(),
            PMIX_DOUBLE => d.dval = data.cast::<f64>().read_unaligned(),
            PMIX_STATUS => d.status = data.cast::<pmix_status_t>().read_unaligned(),
            PMIX_PROC_RANK => d.rank = data.cast::<pmix_rank_t>().read_unaligned(),
            PMIX_DEVTYPE => d.devtype = data.cast::<pmix_device_type_t>().read_unaligned(),
            PMIX_TIME => d.int64 = data.cast::<libc::time_t>().read_unaligned(),
            PMIX_PERSIST | PMIX_SCOPE | PMIX_DATA_RANGE | PMIX_PROC_STATE
            | PMIX_ALLOC_DIRECTIVE | PMIX_JOB_STATE | PMIX_LINK_STATE => {
                d.uint8 = data.cast::<u8>().read_unaligned();
            }
            PMIX_DATA_TYPE | PMIX_IOF_CHANNEL | PMIX_LOCTYPE => {
                d.uint16 = data.cast::<u16>().read_unaligned();
            }
            PMIX_INFO_DIRECTIVES => d.uint32 = data.cast::<u32>().read_unaligned(),
            PMIX_POINTER => d.ptr = data.cast_mut(),
            PMIX_PROC => {
                let p = data.cast::<pmix_proc_t>();
                if !p.is_aligned() {
                    return Err(BAD_PARAM);
                }
                d.proc_ = c_box(p.read())?;
            }
            PMIX_BYTE_OBJECT => {
                let bo = data.cast::<pmix_byte_object_t>().read_unaligned();
                let bytes = if bo.bytes.is_null() || bo.size == 0 {
                    std::ptr::null_mut()
                } else if !fits_in_a_slice(bo.bytes, bo.size) {
                    return Err(Status::ERR_NOMEM);
                } else {
                    c_copy(std::slice::from_raw_parts(bo.bytes, bo.size))?
                };
                d.bo = pmix_byte_object_t {
                    bytes,
                    size: if bytes.is_null() { 0 } else { bo.size },
                };
            }
            PMIX_DATA_ARRAY => {
                let a = data.cast::<pmix_data_array_t>().read_unaligned();
                d.darray = copy_array(&a, depth)?;
            }
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

/// The size of one element of a C data array of `ty`: [`element_size`]'s, and
/// `PMIX_DEVICE_DIST` (`pmix_device_distance_t`: what `PMIX_DEVICE_DISTANCES` holds),
/// which is an array's element only, never a value's datum here. `None` for another.
pub(crate) fn array_element_size(ty: pmix_data_type_t) -> Option<usize> {
    match ty {
        PMIX_DEVICE_DIST => Some(size_of::<pmix_device_distance_t>()),
        _ => element_size(ty),
    }
}

/// The pointer [`load`] takes for the value `v` holds (the datum for a scalar, the
/// string, process, array or byte object itself for the others; NULL for
/// `PMIX_UNDEF`), so that `load(dst, data_of(src), src.type_)` copies `src`.
pub(crate) fn data_of(v: &pmix_value_t) -> *const c_void {
    // SAFETY: reading a pointer-sized union member as a pointer is what the type tag
    // says is there for these types; nothing is dereferenced here.
    unsafe {
        match v.type_ {
            PMIX_UNDEF => std::ptr::null(),
            PMIX_STRING => v.data.string.cast(),
            PMIX_PROC => v.data.proc_.cast(),
            PMIX_DATA_ARRAY => v.data.darray.cast(),
            PMIX_POINTER => v.data.ptr,
            _ => (&raw const v.data).cast(),
        }
    }
}

/// A deep copy of `src` into `dst` (which is overwritten, not destructed).
///
/// # Errors
/// As [`PMIx_Value_load`] for `src`'s type.
pub(crate) fn value_xfer(dst: &mut pmix_value_t, src: &pmix_value_t) -> Res {
    // SAFETY: `src` is a C value (one C gave, or one the library made), whose union
    // holds what its tag says; `data_of` points at that datum as `load` reads it.
    unsafe { load(dst, data_of(src), src.type_) }
}

/// A `malloc`ed deep copy of array `a` (elements of a type [`array_element_size`] knows;
/// strings duplicated, infos' and values' data loaded in turn), at nesting `depth`.
///
/// # Errors
/// `PMIX_ERR_NOT_SUPPORTED` for another element type; `PMIX_ERR_BAD_PARAM` for a NULL
/// array with elements, a size beyond any array or nesting deeper than
/// [`MAX_NESTING`]; the elements' errors; `PMIX_ERR_NOMEM`. Nothing is left allocated.
///
/// # Safety
/// `a.array` points to `a.size` readable elements of `a.type_`, each as [`load`]
/// requires of its data.
unsafe fn copy_array(
    a: &pmix_data_array_t,
    depth: usize,
) -> Result<*mut pmix_data_array_t, Status> {
    if depth >= MAX_NESTING {
        return Err(BAD_PARAM);
    }
    let size = array_element_size(a.type_).ok_or(Status::ERR_NOT_SUPPORTED)?;
    let n = a.size;
    let bytes = n
        .checked_mul(size)
        .filter(|b| *b <= isize::MAX as usize)
        .ok_or(BAD_PARAM)?;
    if n > 0 && a.array.is_null() {
        return Err(BAD_PARAM);
    }
    let copy = alloc_array(a.type_, n, size)?;
    // SAFETY: `a`'s elements are readable (the caller's contract), read unaligned;
    // `copy` owns `n` zeroed elements of `size` bytes; what is filled in is counted in
    // its `size`, so an error frees it whole.
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
            PMIX_DEVICE_DIST => {
                let src = a.array.cast::<pmix_device_distance_t>();
                let dst = array.cast::<pmix_device_distance_t>();
                for k in 0..n {
                    let from = src.add(k).read_unaligned();
                    let to = &mut *dst.add(k);
                    *to = from;
                    to.uuid = std::ptr::null_mut();
                    to.osname = std::ptr::null_mut();
                    (*copy).size = k + 1;
                    for (s, d) in [(from.uuid, &mut to.uuid), (from.osname, &mut to.osname)] {
                        if !s.is_null() {
                            *d = libc::strdup(s);
                            if d.is_null() {
                                return fail(Status::ERR_NOMEM);
                            }
                        }
                    }
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
    let array = if n == 0 {
        std::ptr::null_mut()
    } else {
        c_calloc(n, size)?
    };
    c_box(pmix_data_array_t {
        type_: ty,
        size: 0,
        array,
    })
    .inspect_err(|_| {
        // SAFETY: `array` was allocated just above (or is NULL) and nothing holds it.
        unsafe { c_free(array) };
    })
}

/// Frees an array [`copy_array`] made (its first `size` elements' contents, the
/// elements, the array itself); NULL is nothing.
///
/// # Safety
/// `a` is NULL or a `malloc`ed array whose contents are as [`destruct_array`]
/// requires (as the library and the C helpers of `pmix_common.h` make them), freed
/// once.
pub(crate) unsafe fn free_array(a: *mut pmix_data_array_t) {
    // SAFETY: the caller's contract: `a` is NULL or a malloc'ed array, its contents
    // the library's kind, freed once.
    unsafe {
        if let Some(arr) = a.as_mut() {
            destruct_array(arr);
            c_free(a);
        }
    }
}

/// Frees what the array `arr` holds (its elements' data, the element block) and
/// leaves it empty; the struct itself stays (`PMIx_Data_array_destruct`).
///
/// # Safety
/// The element block is NULL or `malloc`ed; its elements up to `size` hold what
/// their type says, allocated with `malloc` (a persistent info's value excepted: it
/// owns nothing); all freed once.
pub(crate) unsafe fn destruct_array(arr: &mut pmix_data_array_t) {
    // SAFETY: the caller's contract: the elements up to `size` hold what their type
    // says, malloc'ed, and the block itself is malloc'ed.
    unsafe {
        if !arr.array.is_null() {
            match arr.type_ {
                PMIX_STRING => {
                    for k in 0..arr.size {
                        c_free(arr.array.cast::<*mut c_char>().add(k).read());
                    }
                }
                PMIX_INFO => {
                    for k in 0..arr.size {
                        let info = &mut *arr.array.cast::<pmix_info_t>().add(k);
                        // A persistent info (PMIX_INFO_PERSISTENT) owns nothing.
                        if info.flags & PMIX_INFO_PERSISTENT == 0 {
                            destruct_value(&mut info.value);
                        }
                    }
                }
                PMIX_VALUE => {
                    for k in 0..arr.size {
                        destruct_value(&mut *arr.array.cast::<pmix_value_t>().add(k));
                    }
                }
                PMIX_DEVICE_DIST => {
                    for k in 0..arr.size {
                        let d = &mut *arr.array.cast::<pmix_device_distance_t>().add(k);
                        c_free(d.uuid);
                        c_free(d.osname);
                    }
                }
                _ => {}
            }
        }
        c_free(arr.array);
    }
    arr.array = std::ptr::null_mut();
    arr.size = 0;
}

/// Frees what `v` owns (a `PMIX_STRING`'s string, a `PMIX_BYTE_OBJECT`'s bytes, a
/// `PMIX_PROC`'s process, a `PMIX_DATA_ARRAY`'s array) and makes it `PMIX_UNDEF`.
///
/// # Safety
/// What `v` owns, by its type, is NULL or `malloc`ed (an array as [`free_array`]
/// requires), and freed once.
pub(crate) unsafe fn destruct_value(v: &mut pmix_value_t) {
    // SAFETY: the tag says which member holds what the value owns, malloc'ed or NULL
    // (the caller's contract); `free(NULL)` and `free_array(NULL)` do nothing.
    unsafe {
        match v.type_ {
            PMIX_STRING => c_free(v.data.string),
            PMIX_BYTE_OBJECT => c_free(v.data.bo.bytes),
            PMIX_PROC => c_free(v.data.proc_),
            PMIX_DATA_ARRAY => free_array(v.data.darray),
            _ => {}
        }
    }
    *v = pmix_value_t::UNDEF;
}

/// A C value the library made (with `from_wire` or [`load`]) for C to read during a
/// call, released when dropped.
pub(crate) struct CValue(pub(crate) pmix_value_t);

impl CValue {
    /// A `PMIX_UNDEF` value, to be filled in.
    pub(crate) fn undef() -> Self {
        Self(pmix_value_t::UNDEF)
    }
}

impl Drop for CValue {
    fn drop(&mut self) {
        // SAFETY: the library filled the value in, so what it owns was `malloc`ed for it
        // alone, and this is its one release.
        unsafe { destruct_value(&mut self.0) };
    }
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
        let v = try_mut!(val)?;
        // SAFETY: `data` came from C with `ty`: this function's contract is `load`'s.
        unsafe { load(v, data, ty) }
    }
}

export! {
    /// `PMIx_Value_destruct`: frees what the value owns (a `PMIX_STRING`'s string, a
    /// `PMIX_BYTE_OBJECT`'s bytes, a `PMIX_PROC`'s process, a `PMIX_DATA_ARRAY`'s array)
    /// and makes it `PMIX_UNDEF`. Values of types the library does not load are only
    /// reset.
    ///
    /// # Safety
    /// `val` is NULL or writable; a `PMIX_STRING` value's string, a
    /// `PMIX_BYTE_OBJECT`'s bytes and a `PMIX_PROC`'s process are NULL or `malloc`ed
    /// (an array as `PMIx_Data_array_destruct` requires), not used afterwards.
    unsafe fn PMIx_Value_destruct(val: *mut pmix_value_t) {
        if let Some(v) = opt_mut!(val) {
            // SAFETY: what the value owns is malloc'ed and released here once (the C
            // contract above).
            unsafe { destruct_value(v) };
        }
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
        let i = try_mut!(info)?;
        let key = try_bytes!(key, PMIX_MAX_KEYLEN)?;
        i.flags = 0;
        i.key = [0; PMIX_MAX_KEYLEN + 1];
        crate::boundary::copy_c_str(&mut i.key, key);
        // SAFETY: `data` came from C with `ty`: this function's contract is `load`'s.
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
    /// # C contract
    /// `v1` and `v2` are NULL or readable values whose data is what their types say.
    fn PMIx_Value_compare(
        v1: *mut pmix_value_t,
        v2: *mut pmix_value_t,
    ) -> c_int [on_panic: CMP_NOT_AVAIL] {
        let (Some(a), Some(b)) = (opt_ref!(v1), opt_ref!(v2)) else {
            return CMP_INCOMPATIBLE;
        };
        if a.type_ != b.type_ {
            return CMP_TYPE_DIFFERENT;
        }
        let (x, y) = (&a.data, &b.data);
        // SAFETY: both unions hold what the (same) type tag says, and a string, process
        // or byte object they point to is readable as it says (the C contract above).
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
