//! Python values ⇄ the runtime's, in python3-pmix's shapes: info dictionaries
//! (`{'key': …, 'value': …, 'val_type': …, 'flags': …}`), process dictionaries
//! (`{'nspace': …, 'rank': …}`), values by `val_type` (a byte object as `{'bytes': …,
//! 'size': …}`, a data array as `{'type': …, 'array': […]}`, a timeval as `{'sec': …,
//! 'usec': …}`, …), queries (`{'keys': […], 'qualifiers': […]}`), applications
//! (`{'cmd': …, 'argv': […], 'env': […], 'cwd': …, 'maxprocs': …, 'info': […]}`),
//! published data (`{'key': …, 'proc': …, 'value': …, 'val_type': …}`), cpusets
//! (`{'source': 'hwloc', 'cpus': [0, 1]}`, or the cpus as `"0-1"`, or python3-pmix's
//! `"hwloc:0-1"` string), and distance entries.
//!
//! A malformed argument (a dictionary without its `'key'`, a value its `val_type`
//! cannot hold, an unknown `val_type`) is `PMIX_ERR_BAD_PARAM`, returned as the
//! call's status; an argument of the wrong Python type where a list or dictionary
//! is required is the same status, so a call never raises for its data.

use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple,
};

use pmix::wire::{
    App, ByteObject, DataArray, DataType, Envar, Info, InfoFlags, Pdata, Pid, Proc, ProcInfo,
    Query, Rank, Regex, Timeval, Value, WStr,
};
use pmix::{Directives, DistanceRequest, PmixError, Row};
use pmix_core::{CpuSet, Status};

/// `PMIX_ERR_BAD_PARAM`.
pub(crate) const BAD_PARAM: i32 = Status::ERR_BAD_PARAM.0;

/// `PMIX_INFO_REQD`.
const INFO_REQD: u32 = 0x0000_0001;

/// A conversion's result: the value, or the status the call returns.
pub(crate) type Conv<T> = Result<T, i32>;

/// `d[key]`, when present.
pub(crate) fn item<'py>(d: &Bound<'py, PyDict>, key: &str) -> Option<Bound<'py, PyAny>> {
    d.get_item(key).ok().flatten()
}

/// A Python string (or UTF-8 `bytes` / `bytearray`) as a Rust one.
pub(crate) fn text(o: &Bound<'_, PyAny>) -> Conv<String> {
    if o.is_instance_of::<PyString>() {
        return o.extract::<String>().map_err(|_| BAD_PARAM);
    }
    let bytes = if let Ok(b) = o.cast::<PyBytes>() {
        b.as_bytes().to_vec()
    } else if let Ok(b) = o.cast::<PyByteArray>() {
        b.to_vec()
    } else {
        return Err(BAD_PARAM);
    };
    String::from_utf8(bytes).map_err(|_| BAD_PARAM)
}

/// A key: [`text`], where python3-pmix's constants are `bytes` and the `str()` of
/// one (`"b'pmix.evname'"`, which python3-pmix reads as the key inside) is that key.
pub(crate) fn key_text(o: &Bound<'_, PyAny>) -> Conv<String> {
    let k = text(o)?;
    Ok(
        match k.strip_prefix("b'").and_then(|x| x.strip_suffix('\'')) {
            Some(inner) => inner.to_owned(),
            None => k,
        },
    )
}

/// An optional text argument: `None` is `None`.
pub(crate) fn opt_text(o: Option<&Bound<'_, PyAny>>) -> Conv<Option<String>> {
    o.filter(|o| !o.is_none()).map(text).transpose()
}

/// A Python `int` (not a `bool`) in `T`'s range.
pub(crate) fn int<T: TryFrom<i128>>(o: &Bound<'_, PyAny>) -> Conv<T> {
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

/// A list of processes as process dictionaries.
pub(crate) fn procs_to_py<'py>(py: Python<'py>, procs: &[Proc]) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for p in procs {
        l.append(proc_to_py(py, p)?)?;
    }
    Ok(l)
}

/// A list (or tuple) of processes; `None` is none.
pub(crate) fn procs_from_py(o: Option<&Bound<'_, PyAny>>) -> Conv<Vec<Proc>> {
    seq(o)?.iter().map(proc_from_py).collect()
}

/// A list (or tuple) of processes where none (`None` or empty) means `nspace`'s
/// whole job (`nspace:PMIX_RANK_WILDCARD`), as python3-pmix passes it.
pub(crate) fn procs_or_job(o: Option<&Bound<'_, PyAny>>, nspace: &str) -> Conv<Vec<Proc>> {
    let procs = procs_from_py(o)?;
    if procs.is_empty() {
        return Ok(vec![Proc::new(nspace, Rank::WILDCARD.0)]);
    }
    Ok(procs)
}

/// The items of a list or tuple; `None` is none.
pub(crate) fn seq<'py>(o: Option<&Bound<'py, PyAny>>) -> Conv<Vec<Bound<'py, PyAny>>> {
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

/// A list of strings (or UTF-8 bytes); `None` is none.
pub(crate) fn texts(o: Option<&Bound<'_, PyAny>>) -> Conv<Vec<String>> {
    seq(o)?.iter().map(key_text).collect()
}

/// One info dictionary: `'key'` (a str), `'value'`, and `'val_type'` (a `PMIX_*`
/// data type; inferred from the Python type when absent: bool → `PMIX_BOOL`, int →
/// `PMIX_INT` (or `PMIX_INT64` past 32 bits), float → `PMIX_DOUBLE`, str →
/// `PMIX_STRING`, bytes → `PMIX_BYTE_OBJECT`, a process dictionary → `PMIX_PROC`),
/// with optional `'flags'` (`PMIX_INFO_REQD`, …).
pub(crate) fn info_from_py(o: &Bound<'_, PyAny>) -> Conv<Info> {
    let d = o.cast::<PyDict>().map_err(|_| BAD_PARAM)?;
    let key = key_text(&item(d, "key").ok_or(BAD_PARAM)?)?;
    if !pmix_wire::keys::is_valid(&key) {
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
                let key = key_text(&k)?;
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

/// A `{'value': …, 'val_type': …}` dictionary (python3-pmix's value), or a plain
/// Python value (its type inferred).
pub(crate) fn value_arg(value: &Bound<'_, PyAny>) -> Conv<Value> {
    match value.cast::<PyDict>() {
        Ok(d) if d.contains("value").unwrap_or(false) => {
            let ty = match item(d, "val_type") {
                Some(t) if !t.is_none() => Some(int::<u16>(&t)?),
                _ => None,
            };
            value_from_py(&item(d, "value").ok_or(BAD_PARAM)?, ty)
        }
        _ => value_from_py(value, None),
    }
}

/// A boolean as python3-pmix reads one: a `bool`, `0` or `1`, or a string starting
/// with `t` / `f` (either case).
fn boolean(v: &Bound<'_, PyAny>) -> Conv<bool> {
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(b.is_true());
    }
    if v.is_instance_of::<PyString>() {
        return match text(v)?.chars().next() {
            Some('t' | 'T') => Ok(true),
            Some('f' | 'F') => Ok(false),
            _ => Err(BAD_PARAM),
        };
    }
    match int::<i64>(v)? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(BAD_PARAM),
    }
}

/// A Python value as the runtime's, of type `ty` (a `PMIX_*` data type) or inferred.
pub(crate) fn value_from_py(v: &Bound<'_, PyAny>, ty: Option<u16>) -> Conv<Value> {
    let Some(ty) = ty else {
        return infer(v);
    };
    let t = DataType::from_code(u64::from(ty)).ok_or(BAD_PARAM)?;
    let field = |name: &str| -> Conv<Bound<'_, PyAny>> {
        let d = v.cast::<PyDict>().map_err(|_| BAD_PARAM)?;
        item(d, name).ok_or(BAD_PARAM)
    };
    let opt_string = |name: &str| -> Conv<Option<WStr>> {
        let d = v.cast::<PyDict>().map_err(|_| BAD_PARAM)?;
        Ok(opt_text(item(d, name).as_ref())?.map(WStr::from))
    };
    Ok(match t {
        DataType::Undef => Value::Undef,
        DataType::Bool => Value::Bool(boolean(v)?),
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
        DataType::Timeval => Value::Timeval(Timeval {
            sec: int(&field("sec")?)?,
            usec: int(&field("usec")?)?,
        }),
        DataType::Time => Value::Time(int(v)?),
        DataType::Status => Value::Status(int(v)?),
        DataType::Proc => Value::Proc(proc_from_py(v)?),
        DataType::ProcRank => Value::ProcRank(int(v)?),
        DataType::ByteObject => Value::ByteObject(ByteObject(byte_object(v)?)),
        DataType::Persist => Value::Persist(int(v)?),
        DataType::Scope => Value::Scope(int(v)?),
        DataType::DataRange => Value::DataRange(int(v)?),
        DataType::InfoDirectives => Value::InfoDirectives(int(v)?),
        DataType::ProcState => Value::ProcState(int(v)?),
        DataType::ProcInfo => Value::ProcInfo(Box::new(ProcInfo {
            proc: proc_from_py(&field("proc")?)?,
            hostname: opt_string("hostname")?,
            executable: opt_string("executable")?,
            pid: Pid(int(&field("pid")?)?),
            state: int(&field("state")?)?,
        })),
        DataType::DataArray => Value::DataArray(data_array(v)?),
        DataType::AllocDirective => Value::AllocDirective(int(v)?),
        DataType::IofChannel => Value::IofChannel(int(v)?),
        DataType::Envar => {
            let sep = field("separator")?;
            let separator = match text(&sep) {
                Ok(s) if s.len() == 1 => s.as_bytes()[0],
                _ => int(&sep)?,
            };
            Value::Envar(Envar {
                envar: opt_string("envar")?,
                value: opt_string("value")?,
                separator,
            })
        }
        DataType::Regex => {
            let bytes = byte_object(v)?;
            if bytes.starts_with(b"pmix") || bytes.starts_with(b"raw:") {
                Value::Regex(Regex::Raw(bytes.into()))
            } else {
                Value::Regex(Regex::Packed(Some(bytes.into())))
            }
        }
        DataType::JobState => Value::JobState(int(v)?),
        DataType::LinkState => Value::LinkState(int(v)?),
        DataType::DevType => Value::DevType(int(v)?),
        DataType::LocType => Value::LocType(int(v)?),
        DataType::ProcNspace => Value::ProcNspace(text(v)?.as_str().into()),
        _ => return Err(BAD_PARAM),
    })
}

/// A data array: python3-pmix's `{'type': PMIX_*, 'array': [...]}`, each element a
/// value of that type (an info dictionary for `PMIX_INFO`).
fn data_array(v: &Bound<'_, PyAny>) -> Conv<DataArray> {
    let d = v.cast::<PyDict>().map_err(|_| BAD_PARAM)?;
    let code: u16 = int(&item(d, "type").ok_or(BAD_PARAM)?)?;
    let ty = DataType::from_code(u64::from(code)).ok_or(BAD_PARAM)?;
    let items = seq(item(d, "array").as_ref())?
        .iter()
        .map(|x| match ty {
            DataType::Info => Ok(Value::Info(Box::new(info_from_py(x)?))),
            _ => value_from_py(x, Some(code)),
        })
        .collect::<Conv<Vec<Value>>>()?;
    DataArray::new(ty, items).ok_or(BAD_PARAM)
}

/// A byte object: `bytes`, `bytearray` or `str` (its UTF-8 bytes), or python3-pmix's
/// `{'bytes': …, 'size': int}` (the first `size` bytes).
pub(crate) fn byte_object(v: &Bound<'_, PyAny>) -> Conv<Vec<u8>> {
    let (v, size) = match v.cast::<PyDict>() {
        Ok(d) => {
            let size = match item(d, "size") {
                Some(s) if !s.is_none() => Some(int::<usize>(&s)?),
                _ => None,
            };
            (item(d, "bytes").ok_or(BAD_PARAM)?, size)
        }
        Err(_) => (v.clone(), None),
    };
    let mut bytes = if let Ok(b) = v.cast::<PyBytes>() {
        b.as_bytes().to_vec()
    } else if let Ok(b) = v.cast::<PyByteArray>() {
        b.to_vec()
    } else if v.is_instance_of::<PyString>() {
        text(&v)?.into_bytes()
    } else {
        return Err(BAD_PARAM);
    };
    if let Some(n) = size {
        if n > bytes.len() {
            return Err(BAD_PARAM);
        }
        bytes.truncate(n);
    }
    Ok(bytes)
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
    if v.is_instance_of::<PyBytes>() || v.is_instance_of::<PyByteArray>() {
        return Ok(Value::ByteObject(ByteObject(byte_object(v)?)));
    }
    if v.is_instance_of::<PyDict>() {
        return Ok(Value::Proc(proc_from_py(v)?));
    }
    Err(BAD_PARAM)
}

/// A text of the runtime as `str` (NULL as `None`).
fn opt_str<'py>(py: Python<'py>, s: Option<&WStr>) -> Bound<'py, PyAny> {
    match s {
        Some(s) => PyString::new(py, &String::from_utf8_lossy(s.as_bytes())).into_any(),
        None => py.None().into_bound(py),
    }
}

/// The runtime's value as python3-pmix unloads it: numbers as `int` / `float`,
/// strings as `str`, a byte object as `{'bytes': bytes, 'size': int}`, a process as
/// its dictionary, a timeval as `{'sec', 'usec'}`, a process info as `{'proc',
/// 'hostname', 'executable', 'pid', 'exitcode', 'state'}`, an environment variable
/// as `{'envar', 'value', 'separator'}`, a regex as `bytes`, a data array as
/// `{'type': PMIX_*, 'array': [...]}` (infos as info dictionaries); any other type
/// as its text.
pub(crate) fn value_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    let dict = |pairs: &[(&str, Bound<'py, PyAny>)]| -> PyResult<Bound<'py, PyAny>> {
        let d = PyDict::new(py);
        for (k, x) in pairs {
            d.set_item(*k, x)?;
        }
        Ok(d.into_any())
    };
    Ok(match v {
        Value::Undef => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Byte(x) | Value::Uint8(x) => x.into_pyobject(py)?.into_any(),
        Value::String(s) => opt_str(py, s.as_ref()),
        Value::Size(x) | Value::Uint64(x) | Value::Time(x) | Value::DevType(x) => {
            x.into_pyobject(py)?.into_any()
        }
        Value::StorMedium(x) => x.into_pyobject(py)?.into_any(),
        Value::Pid(x) | Value::Uint(x) | Value::Uint32(x) | Value::ProcRank(x) => {
            x.into_pyobject(py)?.into_any()
        }
        Value::InfoDirectives(x) => x.into_pyobject(py)?.into_any(),
        Value::Int(x) | Value::Int32(x) | Value::Status(x) => x.into_pyobject(py)?.into_any(),
        Value::Int8(x) => x.into_pyobject(py)?.into_any(),
        Value::Int16(x) => x.into_pyobject(py)?.into_any(),
        Value::Int64(x) => x.into_pyobject(py)?.into_any(),
        Value::Uint16(x) | Value::IofChannel(x) | Value::LocType(x) => {
            x.into_pyobject(py)?.into_any()
        }
        Value::Float(_) | Value::Double(_) => {
            PyFloat::new(py, v.as_f64().unwrap_or(f64::NAN)).into_any()
        }
        Value::Timeval(t) => dict(&[
            ("sec", t.sec.into_pyobject(py)?.into_any()),
            ("usec", t.usec.into_pyobject(py)?.into_any()),
        ])?,
        Value::Proc(p) => proc_to_py(py, p)?.into_any(),
        Value::ByteObject(b) => dict(&[
            ("bytes", PyBytes::new(py, &b.0).into_any()),
            ("size", b.0.len().into_pyobject(py)?.into_any()),
        ])?,
        Value::ProcInfo(p) => dict(&[
            ("proc", proc_to_py(py, &p.proc)?.into_any()),
            ("hostname", opt_str(py, p.hostname.as_ref())),
            ("executable", opt_str(py, p.executable.as_ref())),
            ("pid", p.pid.0.into_pyobject(py)?.into_any()),
            ("exitcode", 0i32.into_pyobject(py)?.into_any()),
            ("state", p.state.into_pyobject(py)?.into_any()),
        ])?,
        Value::Envar(e) => dict(&[
            ("envar", opt_str(py, e.envar.as_ref())),
            ("value", opt_str(py, e.value.as_ref())),
            ("separator", e.separator.into_pyobject(py)?.into_any()),
        ])?,
        Value::Regex(r) => {
            let bytes: &[u8] = match r {
                Regex::Raw(s) => s.as_bytes(),
                Regex::Blob(b) => b,
                Regex::Packed(s) => s.as_ref().map_or(&[][..], |s| s.as_bytes()),
            };
            PyBytes::new(py, bytes).into_any()
        }
        Value::DataArray(a) => {
            let l = PyList::empty(py);
            for x in &a.items {
                l.append(value_to_py(py, x)?)?;
            }
            dict(&[
                ("type", a.ty.code().into_pyobject(py)?.into_any()),
                ("array", l.into_any()),
            ])?
        }
        Value::Info(i) => info_to_py(py, i)?.into_any(),
        Value::Value(x) => value_to_py(py, x)?,
        Value::ProcNspace(s) => PyString::new(py, s.as_str().unwrap_or_default()).into_any(),
        Value::ProcCpuset(s) => opt_str(py, s.as_ref()),
        Value::Scope(x)
        | Value::DataRange(x)
        | Value::Persist(x)
        | Value::ProcState(x)
        | Value::AllocDirective(x)
        | Value::JobState(x)
        | Value::LinkState(x) => x.into_pyobject(py)?.into_any(),
        Value::DataType(t) => t.code().into_pyobject(py)?.into_any(),
        other => PyString::new(py, &format!("{other:?}")).into_any(),
    })
}

/// `{'value': …, 'val_type': int}`: a value as python3-pmix's `get` answers it.
pub(crate) fn value_dict<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("value", value_to_py(py, v)?)?;
    d.set_item("val_type", type_code(v))?;
    Ok(d)
}

/// The `PMIX_*` data type code of a value.
pub(crate) fn type_code(v: &Value) -> u16 {
    v.data_type().code()
}

/// An info as `{'key': str, 'flags': int, 'value': …, 'val_type': int}`.
pub(crate) fn info_to_py<'py>(py: Python<'py>, i: &Info) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("key", String::from_utf8_lossy(i.key.as_bytes()))?;
    d.set_item("flags", i.flags.0)?;
    d.set_item("value", value_to_py(py, &i.value)?)?;
    d.set_item("val_type", type_code(&i.value))?;
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

/// Queries: `[{'keys': [str], 'qualifiers': [info]}]`.
pub(crate) fn queries_from_py(o: Option<&Bound<'_, PyAny>>) -> Conv<Vec<Query>> {
    seq(o)?
        .iter()
        .map(|q| {
            let d = q.cast::<PyDict>().map_err(|_| BAD_PARAM)?;
            let keys = texts(item(d, "keys").as_ref())?;
            Ok(Query {
                keys: keys.iter().map(|k| WStr::from(k.as_str())).collect(),
                qualifiers: infos_from_py(item(d, "qualifiers").as_ref())?,
            })
        })
        .collect()
}

/// Applications as python3-pmix loads them: `[{'cmd': str, 'argv': [str] (absent
/// or `None`: `[cmd]`), 'env': [str], 'cwd': str (absent: this process's), 'maxprocs':
/// int (absent: 1), 'info': [info]}]`.
pub(crate) fn apps_from_py(o: Option<&Bound<'_, PyAny>>) -> Conv<Vec<App>> {
    seq(o)?
        .iter()
        .map(|a| {
            let d = a.cast::<PyDict>().map_err(|_| BAD_PARAM)?;
            let cmd = text(&item(d, "cmd").ok_or(BAD_PARAM)?)?;
            let mut argv = texts(item(d, "argv").as_ref())?;
            if argv.is_empty() {
                argv.push(cmd.clone());
            }
            let env = texts(item(d, "env").as_ref())?;
            let cwd = match opt_text(item(d, "cwd").as_ref())? {
                Some(c) => c,
                None => std::env::current_dir()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            };
            let maxprocs = match item(d, "maxprocs") {
                Some(m) if !m.is_none() => int(&m)?,
                _ => 1,
            };
            Ok(App {
                cmd: Some(cmd.as_str().into()),
                argv: argv.iter().map(|s| WStr::from(s.as_str())).collect(),
                env: env.iter().map(|s| WStr::from(s.as_str())).collect(),
                cwd: Some(cwd.as_str().into()),
                maxprocs,
                info: infos_from_py(item(d, "info").as_ref())?,
            })
        })
        .collect()
}

/// Applications as python3-pmix hands them to a server's `spawn` upcall: `[{'cmd',
/// 'argv', 'env', 'maxprocs', 'info'}]`.
pub(crate) fn apps_to_py<'py>(py: Python<'py>, apps: &[App]) -> PyResult<Bound<'py, PyList>> {
    let strs = |v: &[WStr]| -> Vec<String> {
        v.iter()
            .map(|s| String::from_utf8_lossy(s.as_bytes()).into_owned())
            .collect()
    };
    let l = PyList::empty(py);
    for a in apps {
        let d = PyDict::new(py);
        d.set_item("cmd", opt_str(py, a.cmd.as_ref()))?;
        d.set_item("argv", strs(&a.argv))?;
        d.set_item("env", strs(&a.env))?;
        d.set_item("cwd", opt_str(py, a.cwd.as_ref()))?;
        d.set_item("maxprocs", a.maxprocs)?;
        d.set_item("info", infos_to_py(py, &a.info)?)?;
        l.append(d)?;
    }
    Ok(l)
}

/// Published data a host's `lookup` found: `{'key', 'value', 'val_type'}` each, and
/// `'proc'` (the publisher; absent: `requester`, as python3-pmix fills it).
pub(crate) fn pdata_from_py(o: &Bound<'_, PyAny>, requester: &Proc) -> Conv<Pdata> {
    let d = o.cast::<PyDict>().map_err(|_| BAD_PARAM)?;
    let key = key_text(&item(d, "key").ok_or(BAD_PARAM)?)?;
    let ty = match item(d, "val_type") {
        Some(t) if !t.is_none() => Some(int::<u16>(&t)?),
        _ => None,
    };
    let value = value_from_py(&item(d, "value").ok_or(BAD_PARAM)?, ty)?;
    let proc = match item(d, "proc") {
        Some(p) if !p.is_none() => proc_from_py(&p)?,
        _ => requester.clone(),
    };
    Ok(Pdata {
        proc,
        key: key.as_str().into(),
        value,
    })
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
