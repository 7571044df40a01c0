//! Python values ⇄ the runtime's: info dictionaries (`{'key': …, 'value': …,
//! 'val_type': …, 'flags': …}`), process dictionaries (`{'nspace': …, 'rank': …}`),
//! values by `val_type`, cpusets (`{'source': 'hwloc', 'cpus': [0, 1]}`, or the
//! cpus as `"0-1"`, or python3-pmix's `"hwloc:0-1"` string), and distance entries.
//!
//! A malformed argument (a dictionary without its `'key'`, a value its `val_type`
//! cannot hold, an unknown `val_type`) is `PMIX_ERR_BAD_PARAM`, returned as the
//! call's status; an argument of the wrong Python type where a list or dictionary
//! is required is the same status, so a call never raises for its data.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use pmix::wire::{ByteObject, DataType, Info, InfoFlags, Proc, Value};
use pmix::{Directives, DistanceRequest, PmixError, Row};
use pmix_core::{CpuSet, Status};

/// `PMIX_ERR_BAD_PARAM`.
pub(crate) const BAD_PARAM: i32 = Status::ERR_BAD_PARAM.0;

/// `PMIX_INFO_REQD`.
const INFO_REQD: u32 = 0x0000_0001;

/// A conversion's result: the value, or the status the call returns.
pub(crate) type Conv<T> = Result<T, i32>;

fn item<'py>(d: &Bound<'py, PyDict>, key: &str) -> Option<Bound<'py, PyAny>> {
    d.get_item(key).ok().flatten()
}

/// A Python string (or UTF-8 bytes) as a Rust one.
pub(crate) fn text(o: &Bound<'_, PyAny>) -> Conv<String> {
    if o.is_instance_of::<PyString>() {
        return o.extract::<String>().map_err(|_| BAD_PARAM);
    }
    if let Ok(b) = o.cast::<PyBytes>() {
        return std::str::from_utf8(b.as_bytes())
            .map(str::to_owned)
            .map_err(|_| BAD_PARAM);
    }
    Err(BAD_PARAM)
}

fn int<T: TryFrom<i128>>(o: &Bound<'_, PyAny>) -> Conv<T> {
    if o.is_instance_of::<PyBool>() || !o.is_instance_of::<PyInt>() {
        return Err(BAD_PARAM);
    }
    let v: i128 = o.extract().map_err(|_| BAD_PARAM)?;
    T::try_from(v).map_err(|_| BAD_PARAM)
}

/// `{'nspace': str, 'rank': int}`.
pub(crate) fn proc_from_py(o: &Bound<'_, PyAny>) -> Conv<Proc> {
    let d = o.cast::<PyDict>().map_err(|_| BAD_PARAM)?;
    let nspace = text(&item(d, "nspace").ok_or(BAD_PARAM)?)?;
    if nspace.len() > 255 || nspace.contains('\0') {
        return Err(BAD_PARAM);
    }
    let rank: u32 = int(&item(d, "rank").ok_or(BAD_PARAM)?)?;
    Ok(Proc::new(nspace.as_str(), rank))
}

/// A process as `{'nspace': str, 'rank': int}`.
pub(crate) fn proc_to_py<'py>(py: Python<'py>, p: &Proc) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("nspace", p.nspace.as_str().unwrap_or_default())?;
    d.set_item("rank", p.rank.0)?;
    Ok(d)
}

/// A list (or tuple) of processes; `None` is none.
pub(crate) fn procs_from_py(o: Option<&Bound<'_, PyAny>>) -> Conv<Vec<Proc>> {
    seq(o)?.iter().map(proc_from_py).collect()
}

fn seq<'py>(o: Option<&Bound<'py, PyAny>>) -> Conv<Vec<Bound<'py, PyAny>>> {
    let Some(o) = o.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    if let Ok(l) = o.cast::<PyList>() {
        return Ok(l.iter().collect());
    }
    if let Ok(t) = o.cast::<PyTuple>() {
        return Ok(t.iter().collect());
    }
    Err(BAD_PARAM)
}

/// One info dictionary: `'key'` (a str), `'value'`, and `'val_type'` (a `PMIX_*`
/// data type; inferred from the Python type when absent: bool → `PMIX_BOOL`, int →
/// `PMIX_INT` (or `PMIX_INT64` past 32 bits), float → `PMIX_DOUBLE`, str →
/// `PMIX_STRING`, bytes → `PMIX_BYTE_OBJECT`, a process dictionary → `PMIX_PROC`),
/// with optional `'flags'` (`PMIX_INFO_REQD`, …).
pub(crate) fn info_from_py(o: &Bound<'_, PyAny>) -> Conv<Info> {
    let d = o.cast::<PyDict>().map_err(|_| BAD_PARAM)?;
    let key = text(&item(d, "key").ok_or(BAD_PARAM)?)?;
    if key.is_empty() || key.len() > 511 || key.contains('\0') {
        return Err(BAD_PARAM);
    }
    let ty = match item(d, "val_type") {
        Some(t) if !t.is_none() => Some(int::<u16>(&t)?),
        _ => None,
    };
    let value = match item(d, "value") {
        Some(v) => value_from_py(&v, ty)?,
        None if ty.is_none_or(|t| t == DataType::Bool as u16) => Value::Bool(true),
        None => return Err(BAD_PARAM),
    };
    let flags = match item(d, "flags") {
        Some(f) if !f.is_none() => int::<u32>(&f)?,
        _ => 0,
    };
    let mut info = Info::new(key.as_str(), value);
    info.flags = InfoFlags(flags);
    Ok(info)
}

/// A list (or tuple) of info dictionaries; `None` is none. A dictionary of
/// `{key: value}` (python3-pmix's `init` form) is accepted too.
pub(crate) fn infos_from_py(o: Option<&Bound<'_, PyAny>>) -> Conv<Vec<Info>> {
    if let Some(d) = o.and_then(|o| o.cast::<PyDict>().ok())
        && !d.contains("key").unwrap_or(false)
    {
        return d
            .iter()
            .map(|(k, v)| {
                let key = text(&k)?;
                Ok(Info::new(key.as_str(), value_from_py(&v, None)?))
            })
            .collect();
    }
    seq(o)?.iter().map(info_from_py).collect()
}

/// Whether an info is flagged required.
pub(crate) fn required(i: &Info) -> bool {
    i.flags.0 & INFO_REQD != 0
}

/// A Python value as the runtime's, of type `ty` (a `PMIX_*` data type) or inferred.
pub(crate) fn value_from_py(v: &Bound<'_, PyAny>, ty: Option<u16>) -> Conv<Value> {
    let Some(ty) = ty else {
        return infer(v);
    };
    let t = DataType::from_code(u64::from(ty)).ok_or(BAD_PARAM)?;
    Ok(match t {
        DataType::Undef => Value::Undef,
        DataType::Bool => Value::Bool(v.extract::<bool>().map_err(|_| BAD_PARAM)?),
        DataType::Byte => Value::Byte(int(v)?),
        DataType::String => Value::String(Some(text(v)?.as_str().into())),
        DataType::Size => Value::Size(int(v)?),
        DataType::Pid => Value::Pid(int(v)?),
        DataType::Int => Value::Int(int(v)?),
        DataType::Int8 => Value::Int8(int(v)?),
        DataType::Int16 => Value::Int16(int(v)?),
        DataType::Int32 => Value::Int32(int(v)?),
        DataType::Int64 => Value::Int64(int(v)?),
        DataType::Uint => Value::Uint(int(v)?),
        DataType::Uint8 => Value::Uint8(int(v)?),
        DataType::Uint16 => Value::Uint16(int(v)?),
        DataType::Uint32 => Value::Uint32(int(v)?),
        DataType::Uint64 => Value::Uint64(int(v)?),
        DataType::Float => Value::float(v.extract::<f32>().map_err(|_| BAD_PARAM)?),
        DataType::Double => Value::double(v.extract::<f64>().map_err(|_| BAD_PARAM)?),
        DataType::Status => Value::Status(int(v)?),
        DataType::Proc => Value::Proc(proc_from_py(v)?),
        DataType::ProcRank => Value::ProcRank(int(v)?),
        DataType::ByteObject => Value::ByteObject(ByteObject(byte_object(v)?)),
        DataType::DataRange => Value::DataRange(int(v)?),
        DataType::Scope => Value::Scope(int(v)?),
        DataType::DevType => Value::DevType(int(v)?),
        DataType::ProcNspace => Value::ProcNspace(text(v)?.as_str().into()),
        _ => return Err(BAD_PARAM),
    })
}

/// A byte object: `bytes`, or python3-pmix's `{'bytes': bytes, 'size': int}`.
fn byte_object(v: &Bound<'_, PyAny>) -> Conv<Vec<u8>> {
    let v = match v.cast::<PyDict>() {
        Ok(d) => item(d, "bytes").ok_or(BAD_PARAM)?,
        Err(_) => v.clone(),
    };
    Ok(v.cast::<PyBytes>()
        .map_err(|_| BAD_PARAM)?
        .as_bytes()
        .to_vec())
}

fn infer(v: &Bound<'_, PyAny>) -> Conv<Value> {
    if v.is_none() {
        return Ok(Value::Undef);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(match int::<i32>(v) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::Int64(int(v)?),
        });
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        return Ok(Value::double(f.value()));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(Value::String(Some(text(v)?.as_str().into())));
    }
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(Value::ByteObject(ByteObject(b.as_bytes().to_vec())));
    }
    if v.is_instance_of::<PyDict>() {
        return Ok(Value::Proc(proc_from_py(v)?));
    }
    Err(BAD_PARAM)
}

/// The runtime's value as Python's: numbers as `int` / `float`, strings as `str`,
/// byte objects as python3-pmix's `{'bytes': bytes, 'size': int}`, a process as its
/// dictionary, arrays as lists, infos as
/// info dictionaries; anything else as its text.
pub(crate) fn value_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Undef => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Byte(x) | Value::Uint8(x) => x.into_pyobject(py)?.into_any(),
        Value::String(s) => match s {
            Some(s) => PyString::new(py, s.as_str().unwrap_or_default()).into_any(),
            None => py.None().into_bound(py),
        },
        Value::Size(x) | Value::Uint64(x) | Value::Time(x) | Value::DevType(x) => {
            x.into_pyobject(py)?.into_any()
        }
        Value::Pid(x) | Value::Uint(x) | Value::Uint32(x) | Value::ProcRank(x) => {
            x.into_pyobject(py)?.into_any()
        }
        Value::Int(x) | Value::Int32(x) | Value::Status(x) => x.into_pyobject(py)?.into_any(),
        Value::Int8(x) => x.into_pyobject(py)?.into_any(),
        Value::Int16(x) => x.into_pyobject(py)?.into_any(),
        Value::Int64(x) => x.into_pyobject(py)?.into_any(),
        Value::Uint16(x) => x.into_pyobject(py)?.into_any(),
        Value::Float(_) | Value::Double(_) => {
            PyFloat::new(py, v.as_f64().unwrap_or(f64::NAN)).into_any()
        }
        Value::Proc(p) => proc_to_py(py, p)?.into_any(),
        Value::ByteObject(b) => {
            // python3-pmix's form.
            let d = PyDict::new(py);
            d.set_item("bytes", PyBytes::new(py, &b.0))?;
            d.set_item("size", b.0.len())?;
            d.into_any()
        }
        Value::DataArray(a) => {
            let l = PyList::empty(py);
            for x in &a.items {
                l.append(value_to_py(py, x)?)?;
            }
            l.into_any()
        }
        Value::Info(i) => info_to_py(py, i)?.into_any(),
        Value::Value(x) => value_to_py(py, x)?,
        Value::ProcNspace(s) => PyString::new(py, s.as_str().unwrap_or_default()).into_any(),
        Value::Scope(x) | Value::DataRange(x) | Value::Persist(x) | Value::ProcState(x) => {
            x.into_pyobject(py)?.into_any()
        }
        other => PyString::new(py, &format!("{other:?}")).into_any(),
    })
}

/// The `PMIX_*` data type code of a value.
pub(crate) fn type_code(v: &Value) -> u16 {
    v.data_type().code()
}

/// An info as `{'key': str, 'value': …, 'val_type': int, 'flags': int}`.
pub(crate) fn info_to_py<'py>(py: Python<'py>, i: &Info) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("key", i.key.as_str().unwrap_or_default())?;
    d.set_item("value", value_to_py(py, &i.value)?)?;
    d.set_item("val_type", type_code(&i.value))?;
    d.set_item("flags", i.flags.0)?;
    Ok(d)
}

/// A list of infos as info dictionaries.
pub(crate) fn infos_to_py<'py>(py: Python<'py>, infos: &[Info]) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for i in infos {
        l.append(info_to_py(py, i)?)?;
    }
    Ok(l)
}

/// A process location: `None` (the caller's own), a dictionary with `'cpus'` (a list
/// of PU numbers, or a list string such as `"0-3,8"`) and an optional `'source'`
/// (`"hwloc"`), or python3-pmix's string `"hwloc:0-3"`.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM`: another source, PUs that are not numbers or past
/// [`CpuSet::MAX_PUS`], a malformed list, an empty set.
pub(crate) fn cpuset_from_py(o: Option<&Bound<'_, PyAny>>) -> Conv<Option<CpuSet>> {
    let Some(o) = o.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    let set = if let Ok(d) = o.cast::<PyDict>() {
        if let Some(src) = item(d, "source").filter(|s| !s.is_none()) {
            let src = text(&src)?;
            if !src.eq_ignore_ascii_case("hwloc") {
                return Err(BAD_PARAM);
            }
        }
        let cpus = item(d, "cpus")
            .or_else(|| item(d, "bitmap"))
            .ok_or(BAD_PARAM)?;
        if let Ok(l) = cpus.cast::<PyList>() {
            let mut s = CpuSet::new();
            for p in l.iter() {
                if !s.insert(int::<u32>(&p)?) {
                    return Err(BAD_PARAM);
                }
            }
            s
        } else {
            CpuSet::parse_pmix(&text(&cpus)?).map_err(|_| BAD_PARAM)?
        }
    } else {
        CpuSet::parse_pmix(&text(o)?).map_err(|_| BAD_PARAM)?
    };
    if set.is_empty() {
        return Err(BAD_PARAM);
    }
    Ok(Some(set))
}

/// A cpuset as `{'source': 'hwloc', 'cpus': [...]}`.
pub(crate) fn cpuset_to_py<'py>(py: Python<'py>, s: &CpuSet) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("source", "hwloc")?;
    d.set_item("cpus", PyList::new(py, s.iter().collect::<Vec<_>>())?)?;
    Ok(d)
}

/// Reads a distance request's arguments (a cpuset, the directives, as
/// [`pmix::Directives::from_infos`] reads them) and runs `f` on the request they
/// make.
///
/// # Errors
/// As [`cpuset_from_py`] and [`infos_from_py`]; the directives' status
/// (`PMIX_ERR_BAD_PARAM`, `PMIX_ERR_NOT_SUPPORTED`); then `f` does not run.
pub(crate) fn with_request<R>(
    pycpus: Option<&Bound<'_, PyAny>>,
    pydirs: Option<&Bound<'_, PyAny>>,
    f: impl FnOnce(&DistanceRequest<'_>) -> R,
) -> Conv<R> {
    let cpus = cpuset_from_py(pycpus)?;
    let d = Directives::from_infos(&infos_from_py(pydirs)?).map_err(|e| e.status().0)?;
    Ok(d.request(None, cpus.as_ref(), f))
}

/// Distance entries as dictionaries: `uuid`, `osname` (str), `type` (the
/// `PMIX_DEVTYPE_*` bit), `mindist`, `maxdist`.
pub(crate) fn rows_to_py<'a, 'py>(
    py: Python<'py>,
    rows: impl Iterator<Item = Row<'a>>,
) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for r in rows {
        let d = PyDict::new(py);
        d.set_item(pyo3::intern!(py, "uuid"), r.uuid)?;
        d.set_item(pyo3::intern!(py, "osname"), r.osname)?;
        d.set_item(pyo3::intern!(py, "type"), r.kind.0)?;
        d.set_item(pyo3::intern!(py, "mindist"), r.mindist)?;
        d.set_item(pyo3::intern!(py, "maxdist"), r.maxdist)?;
        l.append(d)?;
    }
    Ok(l)
}
