//! C values ⇄ the runtime's values (`pmix::wire::Value`, what travels to and from the
//! server), and C process lists and info arrays to the runtime's.
//!
//! The C types converted both ways: `PMIX_UNDEF`, `PMIX_BOOL`, `PMIX_BYTE`,
//! `PMIX_STRING`, `PMIX_SIZE`, `PMIX_PID`, the signed and unsigned integers,
//! `PMIX_FLOAT`, `PMIX_DOUBLE`, `PMIX_STATUS`, `PMIX_PROC_RANK`, `PMIX_BYTE_OBJECT`,
//! `PMIX_TIME`, the enumerations (`PMIX_PERSIST`, `PMIX_SCOPE`, `PMIX_DATA_RANGE`,
//! `PMIX_PROC_STATE`, `PMIX_ALLOC_DIRECTIVE`, `PMIX_JOB_STATE`, `PMIX_LINK_STATE`,
//! `PMIX_IOF_CHANNEL`, `PMIX_LOCTYPE`, `PMIX_INFO_DIRECTIVES`, `PMIX_DATA_TYPE`),
//! `PMIX_PROC`, and `PMIX_DATA_ARRAY`s of the scalars, strings, processes, infos and
//! values (nested up to [`MAX_NESTING`] deep); `PMIX_POINTER` goes out as
//! its type alone (no address leaves the process) and comes back NULL. Any other type is
//! `PMIX_ERR_NOT_SUPPORTED` (a value the server sends in one of them cannot be
//! returned to C yet).

use std::ffi::{c_char, c_void};

use pmix::wire::value::ByteObject;
use pmix::wire::{Info, InfoFlags, Proc, Value, WStr};
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, CbData, bounded_str, c_chars, callback};
use crate::cmem::{c_box, c_copy, c_free, c_string};
use crate::data::info::MAX_STRING;
use crate::data::value::{
    MAX_NESTING, alloc_array, array_element_size, destruct_value, free_array,
};
use crate::types::*;

/// The longest string value taken from C (bytes before the NUL): 1 MiB.
pub(crate) const MAX_VALUE_STRING: usize = 1 << 20;

/// The runtime's value of a C value: one C gave, or one the library made (the C
/// contract of `crate::boundary`).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for a string that is not NUL-terminated within
/// [`MAX_VALUE_STRING`] bytes or not UTF-8, or a byte object with a NULL pointer and a
/// size; `PMIX_ERR_NOT_SUPPORTED` for a type not listed in the module docs.
pub(crate) fn value_to_wire(v: &pmix_value_t) -> Result<Value, Status> {
    to_wire_at(v, 0)
}

/// [`value_to_wire`] at array nesting `depth` (deeper than [`MAX_NESTING`] is
/// `PMIX_ERR_BAD_PARAM`).
fn to_wire_at(v: &pmix_value_t, depth: usize) -> Result<Value, Status> {
    let d = &v.data;
    // SAFETY: the tag says which union member holds the value; only that one is read.
    // A string, process, array or byte object it points to is readable as it says (the
    // C contract, for a value C gave; `from_wire`'s and `load`'s making, for the
    // library's): strings to a NUL within their bound, byte objects over `size` bytes
    // (a size no array can have is refused first).
    Ok(unsafe {
        match v.type_ {
            PMIX_UNDEF => Value::Undef,
            PMIX_BOOL => Value::Bool(d.flag != 0),
            PMIX_BYTE => Value::Byte(d.byte),
            PMIX_STRING => {
                if d.string.is_null() {
                    Value::String(None)
                } else {
                    Value::string(bounded_str(d.string, MAX_VALUE_STRING)?)
                }
            }
            PMIX_SIZE => Value::Size(d.size as u64),
            PMIX_PID => Value::Pid(d.pid as u32),
            PMIX_INT => Value::Int(d.integer),
            PMIX_INT8 => Value::Int8(d.int8),
            PMIX_INT16 => Value::Int16(d.int16),
            PMIX_INT32 => Value::Int32(d.int32),
            PMIX_INT64 => Value::Int64(d.int64),
            PMIX_UINT => Value::Uint(d.uint),
            PMIX_UINT8 => Value::Uint8(d.uint8),
            PMIX_UINT16 => Value::Uint16(d.uint16),
            PMIX_UINT32 => Value::Uint32(d.uint32),
            PMIX_UINT64 => Value::Uint64(d.uint64),
            PMIX_FLOAT => Value::float(d.fval),
            PMIX_DOUBLE => Value::double(d.dval),
            PMIX_STATUS => Value::Status(d.status),
            PMIX_PROC_RANK => Value::ProcRank(d.rank),
            PMIX_TIME => Value::Time(d.int64 as u64),
            PMIX_PERSIST => Value::Persist(d.uint8),
            PMIX_SCOPE => Value::Scope(d.uint8),
            PMIX_DATA_RANGE => Value::DataRange(d.uint8),
            PMIX_PROC_STATE => Value::ProcState(d.uint8),
            PMIX_ALLOC_DIRECTIVE => Value::AllocDirective(d.uint8),
            PMIX_JOB_STATE => Value::JobState(d.uint8),
            PMIX_LINK_STATE => Value::LinkState(d.uint8),
            PMIX_IOF_CHANNEL => Value::IofChannel(d.uint16),
            PMIX_LOCTYPE => Value::LocType(d.uint16),
            PMIX_INFO_DIRECTIVES => Value::InfoDirectives(d.uint32),
            PMIX_DATA_TYPE => Value::DataType(
                pmix::wire::DataType::from_code(u64::from(d.uint16))
                    .ok_or(Status::ERR_NOT_SUPPORTED)?,
            ),
            // A local address means nothing elsewhere: the wire carries the type alone
            // (bfrops' sentinel byte), as OpenPMIx packs it (PMIX_MONITOR_HEARTBEAT).
            PMIX_POINTER => Value::Pointer,
            PMIX_PROC => {
                let p = d.proc_.as_ref().ok_or(BAD_PARAM)?;
                Value::Proc(Proc::new(proc_nspace(p)?, p.rank))
            }
            PMIX_DATA_ARRAY => array_to_wire(d.darray.as_ref().ok_or(BAD_PARAM)?, depth)?,
            PMIX_BYTE_OBJECT => {
                let bo = d.bo;
                if bo.size == 0 {
                    Value::ByteObject(ByteObject(Vec::new()))
                } else if bo.bytes.is_null() || !crate::boundary::fits_in_a_slice(bo.bytes, bo.size)
                {
                    return Err(BAD_PARAM);
                } else {
                    let s = std::slice::from_raw_parts(bo.bytes.cast::<u8>(), bo.size);
                    Value::ByteObject(ByteObject(s.to_vec()))
                }
            }
            _ => return Err(Status::ERR_NOT_SUPPORTED),
        }
    })
}

/// Writes `v` into `out` as the C value of its type, allocating what it owns
/// (strings and byte objects, with `malloc`: `PMIx_Value_destruct` frees them).
///
/// # Errors
/// `PMIX_ERR_NOT_SUPPORTED` for a type not listed in the module docs (`out` is left
/// `PMIX_UNDEF`); `PMIX_ERR_NOMEM`.
pub(crate) fn from_wire(v: &Value, out: &mut pmix_value_t) -> Result<(), Status> {
    let mut d = pmix_value_data { raw: [0; 3] };
    let ty = match v {
        Value::Undef => PMIX_UNDEF,
        Value::Pointer => PMIX_POINTER,
        Value::Bool(b) => {
            d.flag = u8::from(*b);
            PMIX_BOOL
        }
        Value::Byte(b) => {
            d.byte = *b;
            PMIX_BYTE
        }
        Value::String(s) => {
            d.string = match s {
                None => std::ptr::null_mut(),
                Some(s) => c_string(s.as_bytes())?,
            };
            PMIX_STRING
        }
        Value::Size(x) => {
            d.size = usize::try_from(*x).map_err(|_| Status::ERR_NOT_SUPPORTED)?;
            PMIX_SIZE
        }
        Value::Pid(x) => {
            d.pid = *x as libc::pid_t;
            PMIX_PID
        }
        Value::Int(x) => {
            d.integer = *x;
            PMIX_INT
        }
        Value::Int8(x) => {
            d.int8 = *x;
            PMIX_INT8
        }
        Value::Int16(x) => {
            d.int16 = *x;
            PMIX_INT16
        }
        Value::Int32(x) => {
            d.int32 = *x;
            PMIX_INT32
        }
        Value::Int64(x) => {
            d.int64 = *x;
            PMIX_INT64
        }
        Value::Uint(x) => {
            d.uint = *x;
            PMIX_UINT
        }
        Value::Uint8(x) => {
            d.uint8 = *x;
            PMIX_UINT8
        }
        Value::Uint16(x) => {
            d.uint16 = *x;
            PMIX_UINT16
        }
        Value::Uint32(x) => {
            d.uint32 = *x;
            PMIX_UINT32
        }
        Value::Uint64(x) => {
            d.uint64 = *x;
            PMIX_UINT64
        }
        Value::Float(_) => {
            d.fval = v.as_f64().ok_or(Status::ERR_NOT_SUPPORTED)? as f32;
            PMIX_FLOAT
        }
        Value::Double(_) => {
            d.dval = v.as_f64().ok_or(Status::ERR_NOT_SUPPORTED)?;
            PMIX_DOUBLE
        }
        Value::Status(x) => {
            d.status = *x;
            PMIX_STATUS
        }
        Value::ProcRank(x) => {
            d.rank = *x;
            PMIX_PROC_RANK
        }
        Value::ByteObject(ByteObject(b)) => {
            d.bo = pmix_byte_object_t {
                bytes: if b.is_empty() {
                    std::ptr::null_mut()
                } else {
                    c_copy(b)?.cast()
                },
                size: b.len(),
            };
            PMIX_BYTE_OBJECT
        }
        Value::Proc(p) => {
            let nspace = p.nspace.as_bytes();
            if nspace.len() > PMIX_MAX_NSLEN {
                return Err(Status::ERR_NOT_SUPPORTED);
            }
            let mut c = pmix_proc_t::EMPTY;
            crate::boundary::copy_c_str(&mut c.nspace, nspace);
            c.rank = p.rank.0;
            let cp = c_box(c)?;
            d.proc_ = cp;
            PMIX_PROC
        }
        Value::DataArray(a) => {
            d.darray = array_from_wire(a, 0)?;
            PMIX_DATA_ARRAY
        }
        Value::Time(t) => {
            d.int64 = *t as i64;
            PMIX_TIME
        }
        Value::Persist(x) => one_byte(&mut d, *x, PMIX_PERSIST),
        Value::Scope(x) => one_byte(&mut d, *x, PMIX_SCOPE),
        Value::DataRange(x) => one_byte(&mut d, *x, PMIX_DATA_RANGE),
        Value::ProcState(x) => one_byte(&mut d, *x, PMIX_PROC_STATE),
        Value::AllocDirective(x) => one_byte(&mut d, *x, PMIX_ALLOC_DIRECTIVE),
        Value::JobState(x) => one_byte(&mut d, *x, PMIX_JOB_STATE),
        Value::LinkState(x) => one_byte(&mut d, *x, PMIX_LINK_STATE),
        Value::IofChannel(x) => {
            d.uint16 = *x;
            PMIX_IOF_CHANNEL
        }
        Value::LocType(x) => {
            d.uint16 = *x;
            PMIX_LOCTYPE
        }
        Value::InfoDirectives(x) => {
            d.uint32 = *x;
            PMIX_INFO_DIRECTIVES
        }
        Value::DataType(t) => {
            d.uint16 = *t as u16;
            PMIX_DATA_TYPE
        }
        _ => return Err(Status::ERR_NOT_SUPPORTED),
    };
    out.type_ = ty;
    out.data = d;
    Ok(())
}

/// Stores a one-byte enumeration `x` in `d`; returns its C type `ty`.
fn one_byte(d: &mut pmix_value_data, x: u8, ty: pmix_data_type_t) -> pmix_data_type_t {
    d.uint8 = x;
    ty
}

/// A `malloc`ed C data array of the runtime's `a` (what `PMIx_Value_destruct` frees):
/// elements of the types [`array_element_size`] knows, at nesting `depth`.
///
/// # Errors
/// `PMIX_ERR_NOT_SUPPORTED` for another element type (or an element [`from_wire`]
/// does not convert), nesting deeper than [`MAX_NESTING`];
/// `PMIX_ERR_NOMEM`. Nothing is left allocated.
fn array_from_wire(
    a: &pmix::wire::DataArray,
    depth: usize,
) -> Result<*mut pmix_data_array_t, Status> {
    if depth >= MAX_NESTING {
        return Err(Status::ERR_NOT_SUPPORTED);
    }
    let ty: pmix_data_type_t = a.ty as u16;
    let size = array_element_size(ty).ok_or(Status::ERR_NOT_SUPPORTED)?;
    let n = a.items.len();
    let c = alloc_array(ty, n, size)?;
    // SAFETY: `c` owns `n` zeroed elements of `size` bytes; on an error `free_array`
    // releases the elements counted in its `size` so far.
    unsafe {
        let array = (*c).array;
        for (k, item) in a.items.iter().enumerate() {
            let at = array.cast::<u8>().add(k * size);
            let r = match (ty, item) {
                (PMIX_PROC, Value::Proc(p)) if p.nspace.as_bytes().len() <= PMIX_MAX_NSLEN => {
                    let e = &mut *at.cast::<pmix_proc_t>();
                    crate::boundary::copy_c_str(&mut e.nspace, p.nspace.as_bytes());
                    e.rank = p.rank.0;
                    Ok(())
                }
                (PMIX_INFO, Value::Info(i)) => {
                    let e = &mut *at.cast::<pmix_info_t>();
                    crate::boundary::copy_c_str(&mut e.key, i.key.as_bytes());
                    e.flags = i.flags.0;
                    element_from_wire(&i.value, &mut e.value, depth)
                }
                (PMIX_VALUE, Value::Value(v)) => {
                    element_from_wire(v, &mut *at.cast::<pmix_value_t>(), depth)
                }
                (PMIX_DEVICE_DIST, Value::DeviceDist(d)) => {
                    // Counted in the array's size before its strings are made, so
                    // that a failure frees the one that was.
                    let e = &mut *at.cast::<pmix_device_distance_t>();
                    e.type_ = d.ty;
                    e.mindist = d.mindist;
                    e.maxdist = d.maxdist;
                    (*c).size = k + 1;
                    let text = |s: &Option<pmix::wire::WStr>| match s {
                        None => Ok(std::ptr::null_mut()),
                        Some(s) => crate::cmem::c_string(s.as_bytes()),
                    };
                    text(&d.uuid).and_then(|u| {
                        e.uuid = u;
                        text(&d.osname).map(|o| e.osname = o)
                    })
                }
                (_, v) if v.data_type() as u16 == ty => {
                    let mut tmp = pmix_value_t {
                        type_: PMIX_UNDEF,
                        data: pmix_value_data { raw: [0; 3] },
                    };
                    from_wire(v, &mut tmp).map(|()| {
                        // A scalar's bytes, or a string's pointer: owned by the array now.
                        std::ptr::copy_nonoverlapping((&raw const tmp.data).cast::<u8>(), at, size);
                    })
                }
                _ => Err(Status::ERR_NOT_SUPPORTED),
            };
            if let Err(e) = r {
                // The element that failed holds nothing allocated: count it out.
                free_array(c);
                return Err(e);
            }
            (*c).size = k + 1;
        }
        Ok(c)
    }
}

/// [`from_wire`] for an element of an array at nesting `depth` (a nested array goes
/// one deeper).
fn element_from_wire(v: &Value, out: &mut pmix_value_t, depth: usize) -> Result<(), Status> {
    match v {
        Value::DataArray(a) => {
            let d = array_from_wire(a, depth + 1)?;
            out.type_ = PMIX_DATA_ARRAY;
            out.data = pmix_value_data { darray: d };
            Ok(())
        }
        other => from_wire(other, out),
    }
}

/// The key of a C info, checked. An empty key is kept (an info made by
/// `PMIX_INFO_CREATE` and never loaded): libpmix2 sends it as it is, and nobody
/// matches it (OpenPMIx's alloc example sends one).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` when its 512 bytes hold no NUL, or it is not UTF-8.
pub(crate) fn info_key(i: &pmix_info_t) -> Result<&str, Status> {
    std::str::from_utf8(crate::data::info::key(i)?).map_err(|_| BAD_PARAM)
}

/// A C data array as the runtime's: elements of the types
/// [`array_element_size`] knows, each converted as a value of that type.
///
/// # Errors
/// `PMIX_ERR_NOT_SUPPORTED` for another element type; `PMIX_ERR_BAD_PARAM` for a NULL
/// array with elements, a size beyond any array, nesting deeper than
/// [`MAX_NESTING`]; the elements' errors.
/// `a` is a C array (the C contract): `a.array` points to `a.size` readable elements of
/// `a.type_`, each a C datum of that type.
fn array_to_wire(a: &pmix_data_array_t, depth: usize) -> Result<Value, Status> {
    if depth >= MAX_NESTING {
        return Err(BAD_PARAM);
    }
    let size = array_element_size(a.type_).ok_or(Status::ERR_NOT_SUPPORTED)?;
    if a.size > 0
        && (a.array.is_null()
            || !crate::boundary::fits_in_a_slice(a.array.cast::<u8>(), a.size.saturating_mul(size)))
    {
        return Err(BAD_PARAM);
    }
    let mut items = Vec::with_capacity(a.size.min(1 << 16));
    for k in 0..a.size {
        // SAFETY: element `k` is within the array (`k < a.size`, and the C contract says
        // the array holds `a.size` elements); it is read unaligned into a value of its
        // type, whose union then holds it.
        let item = unsafe {
            let at = a.array.cast::<u8>().add(k * size);
            match a.type_ {
                PMIX_PROC => {
                    let p = at.cast::<pmix_proc_t>().read_unaligned();
                    Value::Proc(Proc::new(proc_nspace(&p)?, p.rank))
                }
                PMIX_VALUE => Value::Value(Box::new(to_wire_at(
                    &at.cast::<pmix_value_t>().read_unaligned(),
                    depth + 1,
                )?)),
                PMIX_INFO => {
                    let i = at.cast::<pmix_info_t>().read_unaligned();
                    Value::Info(Box::new(Info {
                        key: info_key(&i)?.into(),
                        flags: InfoFlags(i.flags),
                        value: to_wire_at(&i.value, depth + 1)?,
                    }))
                }
                PMIX_DEVICE_DIST => {
                    let d = at.cast::<pmix_device_distance_t>().read_unaligned();
                    let text = |p: *mut c_char| -> Result<Option<WStr>, Status> {
                        if p.is_null() {
                            Ok(None)
                        } else {
                            bounded_str(p, MAX_VALUE_STRING).map(|s| Some(WStr::from(s)))
                        }
                    };
                    Value::from(pmix::wire::DeviceDist {
                        uuid: text(d.uuid)?,
                        osname: text(d.osname)?,
                        ty: d.type_,
                        mindist: d.mindist,
                        maxdist: d.maxdist,
                    })
                }
                // A scalar, or a string's pointer: one pointer-sized datum at most
                // (element_size's other types), read into a value's union.
                ty => {
                    let mut v = pmix_value_t {
                        type_: ty,
                        data: pmix_value_data { raw: [0; 3] },
                    };
                    std::ptr::copy_nonoverlapping(at, (&raw mut v.data).cast::<u8>(), size);
                    to_wire_at(&v, depth + 1)?
                }
            }
        };
        items.push(item);
    }
    let ty =
        pmix::wire::DataType::from_code(u64::from(a.type_)).ok_or(Status::ERR_NOT_SUPPORTED)?;
    Ok(Value::DataArray(
        pmix::wire::DataArray::new(ty, items).ok_or(BAD_PARAM)?,
    ))
}

/// The runtime's infos of a C info array (keys, flags and values): one C gave (the C
/// contract) or the library made.
///
/// # Errors
/// As [`info_key`] and [`value_to_wire`].
pub(crate) fn infos_from_c(infos: &[pmix_info_t]) -> Result<Vec<Info>, Status> {
    infos
        .iter()
        .map(|i| {
            Ok(Info {
                key: info_key(i)?.into(),
                flags: InfoFlags(i.flags),
                value: value_to_wire(&i.value)?,
            })
        })
        .collect()
}

/// The C info array `$info` of `$ninfo` elements as the runtime's infos
/// (`Result<Vec<Info>, Status>`): [`try_slice!`] then [`infos_from_c`]. `$info` is a
/// pointer C gave, with its count.
macro_rules! try_infos {
    ($info:expr, $ninfo:expr) => {
        $crate::boundary::try_slice!($info, $ninfo).and_then($crate::data::convert::infos_from_c)
    };
}
pub(crate) use try_infos;

/// C infos the library made from the runtime's (keys, flags, values copied with
/// [`from_wire`]; a value of a type C cannot hold yet is UNDEF), in Rust memory for C to
/// read during a call, or until it calls a `release_fn`; released when dropped.
pub(crate) struct CInfos(Vec<pmix_info_t>);

impl CInfos {
    /// The C infos of `infos`.
    ///
    /// # Errors
    /// `PMIX_ERR_NOMEM` (nothing is left allocated).
    pub(crate) fn from_wire(infos: &[Info]) -> Result<Self, Status> {
        let mut out = Self(Vec::with_capacity(infos.len()));
        for i in infos {
            if out.push_from_wire(i) == Err(Status::ERR_NOMEM) {
                return Err(Status::ERR_NOMEM);
            }
        }
        Ok(out)
    }

    /// The C infos of `infos`, a value that cannot be made (its type, or memory short)
    /// left UNDEF.
    pub(crate) fn lossy(infos: &[Info]) -> Self {
        let mut out = Self(Vec::with_capacity(infos.len()));
        for i in infos {
            let _ = out.push_from_wire(i);
        }
        out
    }

    /// Appends the C info of `i`, its value UNDEF when [`from_wire`] fails.
    fn push_from_wire(&mut self, i: &Info) -> Result<(), Status> {
        let mut c = pmix_info_t::EMPTY;
        crate::boundary::copy_c_str(&mut c.key, i.key.as_bytes());
        c.flags = i.flags.0;
        // Pushed whatever the outcome: a value `from_wire` failed on holds nothing.
        let r = from_wire(&i.value, &mut c.value);
        self.0.push(c);
        r
    }

    /// Appends a `PMIX_POINTER` info (which owns nothing) with `key` and `ptr`.
    pub(crate) fn push_pointer(&mut self, key: &[u8], ptr: *mut c_void) {
        let mut c = pmix_info_t::EMPTY;
        crate::boundary::copy_c_str(&mut c.key, key);
        c.value.type_ = PMIX_POINTER;
        c.value.data.ptr = ptr;
        self.0.push(c);
    }

    /// How many infos there are.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Where the infos are, for C: never NULL, even with none (there is room for one).
    pub(crate) fn as_mut_ptr(&mut self) -> *mut pmix_info_t {
        self.0.reserve(1);
        self.0.as_mut_ptr()
    }

    /// The infos, whose values' memory the caller owns from now on.
    pub(crate) fn into_parts(mut self) -> Vec<pmix_info_t> {
        std::mem::take(&mut self.0)
    }

    /// The infos as a `malloc`ed C array, which C frees with `PMIX_INFO_FREE` (and
    /// [`release_infos`] when a callback was handed it); NULL and 0 for none.
    ///
    /// # Errors
    /// `PMIX_ERR_NOMEM` (nothing is left allocated).
    pub(crate) fn into_c(mut self) -> Result<(*mut pmix_info_t, usize), Status> {
        let p = c_copy(&self.0)?;
        let n = self.0.len();
        // The array owns what the values point to now.
        self.0.clear();
        Ok((p, n))
    }
}

impl Drop for CInfos {
    fn drop(&mut self) {
        for i in &mut self.0 {
            // SAFETY: `from_wire` filled each value in, so what it owns was malloc'ed for
            // it alone; this is its one release (`into_c` empties the list).
            unsafe { destruct_value(&mut i.value) };
        }
    }
}

/// The infos as a `malloc`ed C array (keys, flags, values copied with [`from_wire`]; a
/// value of a type C cannot hold yet is UNDEF), which C frees with `PMIX_INFO_FREE` (and
/// [`release_infos`] when a callback was handed it); NULL and 0 for none.
///
/// # Errors
/// `PMIX_ERR_NOMEM` (nothing is left allocated).
pub(crate) fn infos_to_c(infos: &[Info]) -> Result<(*mut pmix_info_t, usize), Status> {
    CInfos::from_wire(infos)?.into_c()
}

callback! {
    /// The `release_fn` handed to a `pmix_info_cbfunc_t` with infos from
    /// [`deliver_infos`]: frees them. NULL is nothing.
    ///
    /// # Safety
    /// `cbdata` is the `release_cbdata` of the same callback, passed once.
    unsafe fn release_infos(cbdata: *mut c_void) {
        if cbdata.is_null() {
            return;
        }
        // SAFETY: `cbdata` is the box `deliver_infos` leaked for this one release (this
        // function's contract), holding the array `infos_to_c` made and its length, so
        // both are taken back once: the array's `n` infos, whose values `from_wire`
        // filled in, are each released once, then the `malloc`ed array itself.
        unsafe {
            let (arr, n) = *Box::from_raw(cbdata.cast::<(*mut pmix_info_t, usize)>());
            if !arr.is_null() {
                for k in 0..n {
                    destruct_value(&mut (*arr.add(k)).value);
                }
                c_free(arr);
            }
        }
    }
}

/// A `pmix_info_cbfunc_t` without its `Option`.
pub(crate) type InfoCb = CFn<pmix_info_cbfunc_t>;

/// Calls `cb` once with outcome `r`: the infos as C infos (the library's until
/// `release_fn`), or the status (`PMIX_ERR_NOMEM` when they cannot be made) and none.
pub(crate) fn deliver_infos(cb: InfoCb, cbdata: &CbData, r: Result<Vec<Info>, Status>) {
    let (status, p, n) = match r.and_then(|a| infos_to_c(&a)) {
        Ok((p, n)) => (Status::SUCCESS, p, n),
        Err(s) => (s, std::ptr::null_mut(), 0),
    };
    let (release, rel): (pmix_release_cbfunc_t, *mut c_void) = if p.is_null() {
        (None, std::ptr::null_mut())
    } else {
        (Some(release_infos), Box::into_raw(Box::new((p, n))).cast())
    };
    // SAFETY: C gave `cb` with `cbdata` for this call's one outcome (the C contract of
    // every call taking a `pmix_info_cbfunc_t`); `p` holds `n` infos that stay valid
    // until `cb` calls `release(rel)`.
    unsafe { cb(status.0, p, n, cbdata.ptr(), release, rel) };
}

/// The namespace of a C process, checked.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` when its 256 bytes hold no NUL, or it is not UTF-8.
pub(crate) fn proc_nspace(p: &pmix_proc_t) -> Result<&str, Status> {
    let bytes = c_chars(&p.nspace);
    let nul = bytes.iter().position(|&b| b == 0).ok_or(BAD_PARAM)?;
    std::str::from_utf8(&bytes[..nul]).map_err(|_| BAD_PARAM)
}

/// The runtime's processes of a C process array.
///
/// # Errors
/// As [`proc_nspace`].
pub(crate) fn procs_to_wire(procs: &[pmix_proc_t]) -> Result<Vec<Proc>, Status> {
    procs
        .iter()
        .map(|p| Ok(Proc::new(proc_nspace(p)?, p.rank)))
        .collect()
}

/// The most strings a NULL-terminated C array may hold here (a bound on walking it).
pub(crate) const MAX_ARGV: usize = 4096;

/// The strings of a NULL-terminated C array (`char **`, as query keys and an app's
/// `argv` / `env`: C's, the C contract), each read by `item`; an empty list for a NULL
/// array.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for more than [`MAX_ARGV`] strings; `item`'s errors.
pub(crate) fn argv_to_wire(
    argv: *const *mut c_char,
    item: impl Fn(*const c_char) -> Result<WStr, Status>,
) -> Result<Vec<WStr>, Status> {
    crate::boundary::try_argv!(argv, MAX_ARGV)?
        .iter()
        .map(|&p| item(p))
        .collect()
}

/// A key argument: not empty (`PMIX_ERR_BAD_PARAM` otherwise).
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for an empty key.
pub(crate) fn nonempty_key(k: &str) -> Result<&str, Status> {
    if k.is_empty() { Err(BAD_PARAM) } else { Ok(k) }
}

/// The C key `$key` as `Result<&str, Status>`: NUL-terminated within 512 bytes, not
/// empty, UTF-8 (else `PMIX_ERR_BAD_PARAM`). `$key` is a pointer C gave.
macro_rules! try_key {
    ($key:expr) => {
        $crate::boundary::try_str!($key, $crate::types::PMIX_MAX_KEYLEN)
            .and_then($crate::data::convert::nonempty_key)
    };
}
pub(crate) use try_key;

// `MAX_STRING` bounds the strings of distance directives; a stored value may be longer.
const _: () = assert!(MAX_VALUE_STRING > MAX_STRING);

#[cfg(test)]
mod tests {
    use super::*;
    use pmix::wire::{DataArray, DataType, DeviceDist};

    fn dist(uuid: Option<&str>, name: &str, ty: u64, d: u16) -> Value {
        Value::from(DeviceDist {
            uuid: uuid.map(WStr::from),
            osname: Some(WStr::from(name)),
            ty,
            mindist: d,
            maxdist: d + 1,
        })
    }

    #[test]
    fn a_device_distance_array_converts_to_c_copies_and_comes_back_the_same() {
        let array = Value::DataArray(
            DataArray::new(
                DataType::DeviceDist,
                vec![
                    dist(Some("ipv4://02:fc:00:00:00:01-a-long-uuid"), "eth0", 4, 1),
                    dist(None, "mlx5_0", 8, 33),
                ],
            )
            .unwrap(),
        );
        let mut c = pmix_value_t::UNDEF;
        from_wire(&array, &mut c).unwrap();
        assert_eq!(c.type_, PMIX_DATA_ARRAY);
        // SAFETY: `c` holds the array `from_wire` made: PMIX_DEVICE_DIST elements.
        let first = unsafe {
            let a = &*c.data.darray;
            assert_eq!((a.type_, a.size), (PMIX_DEVICE_DIST, 2));
            *a.array.cast::<pmix_device_distance_t>()
        };
        assert_eq!((first.type_, first.mindist, first.maxdist), (4, 1, 2));
        let mut copy = pmix_value_t::UNDEF;
        crate::data::value::value_xfer(&mut copy, &c).unwrap();
        assert_eq!(value_to_wire(&copy).unwrap(), array);
        assert_eq!(value_to_wire(&c).unwrap(), array);
        // SAFETY: both hold what the library made, freed once each.
        unsafe {
            destruct_value(&mut c);
            destruct_value(&mut copy);
        }
    }
}
