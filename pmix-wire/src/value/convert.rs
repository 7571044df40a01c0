//! Building [`Value`]s from Rust values and reading them back: `From` impls,
//! FLOAT/DOUBLE as `printf("%f")` text, typed accessors.

use alloc::boxed::Box;
use alloc::string::String;

use super::*;

impl Value {
    /// A STRING value.
    pub fn string(s: impl Into<WStr>) -> Value {
        Value::String(Some(s.into()))
    }

    /// A FLOAT value holding `printf("%f")` of `x` (six decimals; `inf`, `-inf`,
    /// `nan` as C prints them), as OpenPMIx sends it.
    pub fn float(x: f32) -> Value {
        Value::Float(print_f(f64::from(x)))
    }

    /// A DOUBLE value holding `printf("%f")` of `x`.
    pub fn double(x: f64) -> Value {
        Value::Double(print_f(x))
    }

    /// The number of a FLOAT or DOUBLE value, parsed from its text; `None` for
    /// another type or a text that is not a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float(s) | Value::Double(s) => s.as_str()?.trim().parse().ok(),
            _ => None,
        }
    }

    /// The INFOs of a DATA_ARRAY of INFO (what `PMIX_GROUP_INFO` and
    /// `pmix.qual.val` hold), in order, or of a lone INFO value; `None` for any other
    /// value.
    pub fn infos(&self) -> Option<Vec<&super::Info>> {
        match self {
            Value::DataArray(a) => Some(
                a.items
                    .iter()
                    .filter_map(|v| match v {
                        Value::Info(i) => Some(&**i),
                        _ => None,
                    })
                    .collect(),
            ),
            Value::Info(i) => Some(alloc::vec![&**i]),
            _ => None,
        }
    }

    /// The text of a non-NULL STRING value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(Some(s)) => s.as_str(),
            _ => None,
        }
    }

    /// An unsigned integer value of any width (SIZE, UINT*, PROC_RANK, TIME, PID,
    /// …) as a `u64`.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Size(v) | Value::Uint64(v) | Value::Time(v) => Some(v),
            Value::Uint32(v) | Value::Uint(v) | Value::ProcRank(v) | Value::Pid(v) => {
                Some(v.into())
            }
            Value::Uint16(v) => Some(v.into()),
            Value::Uint8(v) | Value::Byte(v) => Some(v.into()),
            _ => None,
        }
    }

    /// A signed integer value of any width (INT*, STATUS) as an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int64(v) => Some(v),
            Value::Int(v) | Value::Int32(v) | Value::Status(v) => Some(v.into()),
            Value::Int16(v) => Some(v.into()),
            Value::Int8(v) => Some(v.into()),
            _ => None,
        }
    }

    /// The bool of a BOOL value.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }
}

/// `printf("%f", x)`.
fn print_f(x: f64) -> WStr {
    let s: String = if x.is_nan() {
        if x.is_sign_negative() { "-nan" } else { "nan" }.into()
    } else if x.is_infinite() {
        if x < 0.0 { "-inf" } else { "inf" }.into()
    } else {
        alloc::format!("{x:.6}")
    };
    WStr::from(s)
}

macro_rules! value_from {
    ($($t:ty => $v:ident $(, $conv:expr)?;)*) => {$(
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::$v(value_from!(@conv x $(, $conv)?))
            }
        }
    )*};
    (@conv $x:ident) => { $x };
    (@conv $x:ident, $conv:expr) => { $conv($x) };
}

value_from! {
    bool => Bool;
    i8 => Int8;
    i16 => Int16;
    i32 => Int32;
    i64 => Int64;
    u8 => Uint8;
    u16 => Uint16;
    u32 => Uint32;
    u64 => Uint64;
    WStr => String, Some;
    &str => String, |s: &str| Some(WStr::from(s));
    String => String, |s: String| Some(WStr::from(s));
    Proc => Proc;
    Info => Info, Box::new;
    Kval => Kval, Box::new;
    Pdata => Pdata, Box::new;
    App => App, Box::new;
    Query => Query, Box::new;
    ProcInfo => ProcInfo, Box::new;
    DataArray => DataArray;
    ByteObject => ByteObject;
    Buffer => Buffer;
    Timeval => Timeval;
    Envar => Envar;
    Coord => Coord;
    Regattr => Regattr, Box::new;
    Regex => Regex;
    Geometry => Geometry, Box::new;
    DeviceDist => DeviceDist, Box::new;
    Endpoint => Endpoint, Box::new;
    Topo => Topo;
    ProcStats => ProcStats, Box::new;
    DiskStats => DiskStats, Box::new;
    NetStats => NetStats, Box::new;
    NodeStats => NodeStats, Box::new;
    Rank => ProcRank, |r: Rank| r.0;
    Status => Status, |s: Status| s.0;
    Size => Size, |s: Size| s.0;
    Pid => Pid, |p: Pid| p.0;
    DataType => DataType;
    Command => Command;
}
