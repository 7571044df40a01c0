//! bfrops v4.1 elements: the Rust types of every value a client and a server
//! exchange (docs/wire.md §5.4–5.5), each an [`Element`] that encodes and decodes
//! itself without any type tag (a [`Value`] and the value inside an [`Info`],
//! [`Kval`] or [`Pdata`] carry their tag).
//!
//! **Names.** A scalar bfrops type `PMIX_X_Y` is the newtype `XY` over the Rust
//! integer of its width, for top-level packs of one value (`w.pack_one(&Status(0))`,
//! `r.unpack_one::<Size>(…)`): [`Byte`], [`Int8`], [`Int16`], [`Int32`], [`Int64`],
//! [`Int`], [`Uint`], [`Uint8`], [`Uint16`], [`Uint32`], [`Uint64`], [`Size`],
//! [`Time`], [`Status`], [`Pid`], [`Timeval`], [`Persist`], [`Pointer`], [`Scope`],
//! [`DataRange`], [`ProcState`], [`AllocDirective`], [`JobState`], [`LinkState`],
//! [`InfoDirectives`], [`IofChannel`], [`DevType`], [`LocType`] and the storage
//! types; the one exception is PROC_RANK, [`Rank`]. `bool` (BOOL),
//! [`Command`] (COMMAND), [`DataType`] (DATA_TYPE), [`WStr`] (a
//! STRING that must not be NULL) and `Option<WStr>` (a STRING that may be) are
//! elements themselves. A composite type `PMIX_X_Y` is the struct `XY` ([`Proc`],
//! [`Info`], [`DataArray`], …). A [`Value`] has one variant per type, named like
//! its type, holding the plain Rust value for scalars.
//!
//! **Exactness.** Decoding accepts only what encoding writes: a bool other than 0
//! or 1, a NULL where the layout needs a string, a PID not tagged UINT32, an
//! unknown type tag are errors, so every accepted input re-encodes to the same
//! bytes. FLOAT and DOUBLE travel as the `printf("%f")` text of the number, and are
//! kept as that text ([`Value::as_f64`] parses it). COMPRESSED_STRING and
//! COMPRESSED_BYTE_OBJECT are kept as their zlib bytes: this `no_std` codec has no
//! zlib, so inflating them is the caller's business.
//!
//! **Bounds.** Every count and length is checked against [`crate::Limits`] before
//! anything is allocated, and no vector is reserved up front beyond the bytes left
//! in the input or [`crate::buf::MAX_PREALLOC`] elements (so arrays nested in arrays
//! do not multiply reservations); a [`Value`] inside a [`DataArray`] or inside a value goes one level deeper
//! ([`Reader::descend`]), so nesting stops at [`crate::Limits::max_depth`].

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::buf::{Element, Reader, Writer};
use crate::error::WireError;
use crate::types::{Command, DataType};

mod composite;
mod convert;
mod count;
mod fabric;
mod misc;
mod scalar;
mod stats;
mod wstr;

pub use composite::{Buffer, ByteObject, DataArray, Info, InfoFlags, Kval, Pdata, Proc};
pub use fabric::{Coord, DeviceDist, Endpoint, Geometry, Topo};
pub use misc::{App, Envar, ProcInfo, Query, Regattr, Regex};
pub use scalar::{
    AllocDirective, Byte, DataRange, DevType, InfoDirectives, Int, Int8, Int16, Int32, Int64,
    IofChannel, JobState, LinkState, LocType, Persist, Pid, Pointer, ProcState, Rank, Scope, Size,
    Status, StorAccess, StorAccessType, StorMedium, StorPersist, Time, Timeval, Uint, Uint8,
    Uint16, Uint32, Uint64,
};
pub use stats::{DiskStats, NetStats, NodeStats, ProcStats};
pub use wstr::WStr;
pub(crate) use wstr::req_bytes;

/// A tagged value (`pmix_value_t`, and any element a DATA_ARRAY can hold): one
/// variant per bfrops type. As an [`Element`] (type VALUE) it is the type tag and
/// then the element of that type ([`Value::encode_payload`]); UNDEF has nothing
/// after its tag.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// UNDEF: no value.
    Undef,
    /// BOOL.
    Bool(bool),
    /// BYTE.
    Byte(u8),
    /// STRING (NULL is `None`).
    String(Option<WStr>),
    /// SIZE.
    Size(u64),
    /// PID (tagged UINT32 on the wire).
    Pid(u32),
    /// INT.
    Int(i32),
    /// INT8.
    Int8(i8),
    /// INT16.
    Int16(i16),
    /// INT32.
    Int32(i32),
    /// INT64.
    Int64(i64),
    /// UINT (a zigzag INT32 of the same bits on the wire).
    Uint(u32),
    /// UINT8.
    Uint8(u8),
    /// UINT16.
    Uint16(u16),
    /// UINT32.
    Uint32(u32),
    /// UINT64.
    Uint64(u64),
    /// FLOAT, as the `printf("%f")` text the wire carries (see [`Value::float`],
    /// [`Value::as_f64`]).
    Float(WStr),
    /// DOUBLE, as the `printf("%f")` text the wire carries.
    Double(WStr),
    /// TIMEVAL.
    Timeval(Timeval),
    /// TIME.
    Time(u64),
    /// STATUS.
    Status(i32),
    /// VALUE: a value inside a value (an element of a DATA_ARRAY of VALUE).
    Value(Box<Value>),
    /// PROC.
    Proc(Proc),
    /// APP.
    App(Box<App>),
    /// INFO (an element of a DATA_ARRAY of INFO).
    Info(Box<Info>),
    /// PDATA.
    Pdata(Box<Pdata>),
    /// BUFFER.
    Buffer(Buffer),
    /// BYTE_OBJECT.
    ByteObject(ByteObject),
    /// KVAL.
    Kval(Box<Kval>),
    /// PERSIST.
    Persist(u8),
    /// POINTER (the sentinel byte; no pointer is ever sent).
    Pointer,
    /// SCOPE.
    Scope(u8),
    /// DATA_RANGE.
    DataRange(u8),
    /// COMMAND.
    Command(Command),
    /// INFO_DIRECTIVES.
    InfoDirectives(u32),
    /// DATA_TYPE.
    DataType(DataType),
    /// PROC_STATE.
    ProcState(u8),
    /// PROC_INFO.
    ProcInfo(Box<ProcInfo>),
    /// DATA_ARRAY.
    DataArray(DataArray),
    /// PROC_RANK.
    ProcRank(u32),
    /// QUERY.
    Query(Box<Query>),
    /// COMPRESSED_STRING: the zlib bytes, not inflated.
    CompressedString(Vec<u8>),
    /// ALLOC_DIRECTIVE.
    AllocDirective(u8),
    /// IOF_CHANNEL.
    IofChannel(u16),
    /// ENVAR.
    Envar(Envar),
    /// COORD.
    Coord(Coord),
    /// REGATTR.
    Regattr(Box<Regattr>),
    /// REGEX.
    Regex(Regex),
    /// JOB_STATE.
    JobState(u8),
    /// LINK_STATE.
    LinkState(u8),
    /// PROC_CPUSET: hwloc's list syntax (`0-3,8`), NULL if unbound.
    ProcCpuset(Option<WStr>),
    /// GEOMETRY.
    Geometry(Box<Geometry>),
    /// DEVICE_DIST.
    DeviceDist(Box<DeviceDist>),
    /// ENDPOINT.
    Endpoint(Box<Endpoint>),
    /// TOPO.
    Topo(Topo),
    /// DEVTYPE.
    DevType(u64),
    /// LOCTYPE.
    LocType(u16),
    /// COMPRESSED_BYTE_OBJECT: the zlib bytes, not inflated.
    CompressedByteObject(Vec<u8>),
    /// PROC_NSPACE (never NULL).
    ProcNspace(WStr),
    /// PROC_STATS.
    ProcStats(Box<ProcStats>),
    /// DISK_STATS.
    DiskStats(Box<DiskStats>),
    /// NET_STATS.
    NetStats(Box<NetStats>),
    /// NODE_STATS.
    NodeStats(Box<NodeStats>),
    /// DATA_BUFFER (a `pmix_data_buffer_t`'s packed bytes).
    DataBuffer(Vec<u8>),
    /// STOR_MEDIUM.
    StorMedium(u64),
    /// STOR_ACCESS.
    StorAccess(u64),
    /// STOR_PERSIST.
    StorPersist(u64),
    /// STOR_ACCESS_TYPE.
    StorAccessType(u16),
}

impl Value {
    /// The bfrops type of this value (the tag it is written with).
    pub fn data_type(&self) -> DataType {
        use DataType as T;
        match self {
            Value::Undef => T::Undef,
            Value::Bool(_) => T::Bool,
            Value::Byte(_) => T::Byte,
            Value::String(_) => T::String,
            Value::Size(_) => T::Size,
            Value::Pid(_) => T::Pid,
            Value::Int(_) => T::Int,
            Value::Int8(_) => T::Int8,
            Value::Int16(_) => T::Int16,
            Value::Int32(_) => T::Int32,
            Value::Int64(_) => T::Int64,
            Value::Uint(_) => T::Uint,
            Value::Uint8(_) => T::Uint8,
            Value::Uint16(_) => T::Uint16,
            Value::Uint32(_) => T::Uint32,
            Value::Uint64(_) => T::Uint64,
            Value::Float(_) => T::Float,
            Value::Double(_) => T::Double,
            Value::Timeval(_) => T::Timeval,
            Value::Time(_) => T::Time,
            Value::Status(_) => T::Status,
            Value::Value(_) => T::Value,
            Value::Proc(_) => T::Proc,
            Value::App(_) => T::App,
            Value::Info(_) => T::Info,
            Value::Pdata(_) => T::Pdata,
            Value::Buffer(_) => T::Buffer,
            Value::ByteObject(_) => T::ByteObject,
            Value::Kval(_) => T::Kval,
            Value::Persist(_) => T::Persist,
            Value::Pointer => T::Pointer,
            Value::Scope(_) => T::Scope,
            Value::DataRange(_) => T::DataRange,
            Value::Command(_) => T::Command,
            Value::InfoDirectives(_) => T::InfoDirectives,
            Value::DataType(_) => T::DataType,
            Value::ProcState(_) => T::ProcState,
            Value::ProcInfo(_) => T::ProcInfo,
            Value::DataArray(_) => T::DataArray,
            Value::ProcRank(_) => T::ProcRank,
            Value::Query(_) => T::Query,
            Value::CompressedString(_) => T::CompressedString,
            Value::AllocDirective(_) => T::AllocDirective,
            Value::IofChannel(_) => T::IofChannel,
            Value::Envar(_) => T::Envar,
            Value::Coord(_) => T::Coord,
            Value::Regattr(_) => T::Regattr,
            Value::Regex(_) => T::Regex,
            Value::JobState(_) => T::JobState,
            Value::LinkState(_) => T::LinkState,
            Value::ProcCpuset(_) => T::ProcCpuset,
            Value::Geometry(_) => T::Geometry,
            Value::DeviceDist(_) => T::DeviceDist,
            Value::Endpoint(_) => T::Endpoint,
            Value::Topo(_) => T::Topo,
            Value::DevType(_) => T::DevType,
            Value::LocType(_) => T::LocType,
            Value::CompressedByteObject(_) => T::CompressedByteObject,
            Value::ProcNspace(_) => T::ProcNspace,
            Value::ProcStats(_) => T::ProcStats,
            Value::DiskStats(_) => T::DiskStats,
            Value::NetStats(_) => T::NetStats,
            Value::NodeStats(_) => T::NodeStats,
            Value::DataBuffer(_) => T::DataBuffer,
            Value::StorMedium(_) => T::StorMedium,
            Value::StorAccess(_) => T::StorAccess,
            Value::StorPersist(_) => T::StorPersist,
            Value::StorAccessType(_) => T::StorAccessType,
        }
    }

    /// Appends the element without its tag (as inside a DATA_ARRAY).
    pub fn encode_payload(&self, w: &mut Writer) {
        match self {
            Value::Undef | Value::Pointer => {
                if let Value::Pointer = self {
                    Pointer.encode(w);
                }
            }
            Value::Bool(v) => v.encode(w),
            Value::Byte(v) | Value::Uint8(v) => w.u8(*v),
            Value::Persist(v)
            | Value::Scope(v)
            | Value::DataRange(v)
            | Value::ProcState(v)
            | Value::AllocDirective(v)
            | Value::JobState(v)
            | Value::LinkState(v) => w.u8(*v),
            Value::Int8(v) => w.u8(*v as u8),
            Value::String(s) | Value::ProcCpuset(s) => wstr::put_opt_str(w, s),
            Value::Float(s) | Value::Double(s) | Value::ProcNspace(s) => wstr::put_str(w, s),
            Value::Size(v)
            | Value::Time(v)
            | Value::Uint64(v)
            | Value::DevType(v)
            | Value::StorMedium(v)
            | Value::StorAccess(v)
            | Value::StorPersist(v) => w.varint(*v),
            Value::Uint16(v)
            | Value::IofChannel(v)
            | Value::LocType(v)
            | Value::StorAccessType(v) => w.varint((*v).into()),
            Value::Uint32(v) | Value::ProcRank(v) | Value::InfoDirectives(v) => {
                w.varint((*v).into())
            }
            Value::Pid(v) => Pid(*v).encode(w),
            Value::Int(v) | Value::Int32(v) | Value::Status(v) => w.zigzag((*v).into()),
            Value::Int16(v) => w.zigzag((*v).into()),
            Value::Int64(v) => w.zigzag(*v),
            Value::Uint(v) => Uint(*v).encode(w),
            Value::Timeval(v) => v.encode(w),
            Value::Value(v) => v.encode(w),
            Value::Proc(v) => v.encode(w),
            Value::App(v) => v.encode(w),
            Value::Info(v) => v.encode(w),
            Value::Pdata(v) => v.encode(w),
            Value::Buffer(v) => v.encode(w),
            Value::ByteObject(v) => v.encode(w),
            Value::Kval(v) => v.encode(w),
            Value::Command(v) => v.encode(w),
            Value::DataType(v) => v.encode(w),
            Value::ProcInfo(v) => v.encode(w),
            Value::DataArray(v) => v.encode(w),
            Value::Query(v) => v.encode(w),
            Value::CompressedString(b) | Value::CompressedByteObject(b) | Value::DataBuffer(b) => {
                composite::put_sized_bytes(w, b)
            }
            Value::Envar(v) => v.encode(w),
            Value::Coord(v) => v.encode(w),
            Value::Regattr(v) => v.encode(w),
            Value::Regex(v) => v.encode(w),
            Value::Geometry(v) => v.encode(w),
            Value::DeviceDist(v) => v.encode(w),
            Value::Endpoint(v) => v.encode(w),
            Value::Topo(v) => v.encode(w),
            Value::ProcStats(v) => v.encode(w),
            Value::DiskStats(v) => v.encode(w),
            Value::NetStats(v) => v.encode(w),
            Value::NodeStats(v) => v.encode(w),
        }
    }

    /// Reads one element of type `ty` without a tag (as inside a DATA_ARRAY).
    ///
    /// # Errors
    /// Whatever the element of `ty` can give; [`crate::ErrorKind::TooDeep`] past
    /// [`crate::Limits::max_depth`].
    #[inline]
    pub fn decode_payload(ty: DataType, r: &mut Reader<'_>) -> Result<Value, WireError> {
        use DataType as T;
        // The numbers and strings, inline; the composite types out of line.
        Ok(match ty {
            T::Undef => Value::Undef,
            T::Bool => Value::Bool(bool::decode(r)?),
            T::Byte => Value::Byte(r.u8("byte")?),
            T::String => Value::String(wstr::opt_str(r, "string")?),
            T::Size => Value::Size(r.varint(64, "size")?),
            T::Pid => Value::Pid(Pid::decode(r)?.0),
            T::Int => Value::Int(Int::decode(r)?.0),
            T::Int8 => Value::Int8(r.u8("int8")? as i8),
            T::Int16 => Value::Int16(Int16::decode(r)?.0),
            T::Int32 => Value::Int32(Int32::decode(r)?.0),
            T::Int64 => Value::Int64(r.zigzag(64, "int64")?),
            T::Uint => Value::Uint(Uint::decode(r)?.0),
            T::Uint8 => Value::Uint8(r.u8("uint8")?),
            T::Uint16 => Value::Uint16(Uint16::decode(r)?.0),
            T::Uint32 => Value::Uint32(Uint32::decode(r)?.0),
            T::Uint64 => Value::Uint64(r.varint(64, "uint64")?),
            T::Time => Value::Time(r.varint(64, "time")?),
            T::Status => Value::Status(Status::decode(r)?.0),
            T::Persist => Value::Persist(r.u8("persist")?),
            T::Scope => Value::Scope(r.u8("scope")?),
            T::DataRange => Value::DataRange(r.u8("data range")?),
            T::DataType => Value::DataType(DataType::decode(r)?),
            T::ProcState => Value::ProcState(r.u8("proc state")?),
            T::ProcRank => Value::ProcRank(Rank::decode(r)?.0),
            T::AllocDirective => Value::AllocDirective(r.u8("alloc directive")?),
            T::JobState => Value::JobState(r.u8("job state")?),
            T::LinkState => Value::LinkState(r.u8("link state")?),
            _ => return Value::decode_composite(ty, r),
        })
    }

    /// [`Value::decode_payload`] of the types it does not read inline.
    #[inline(never)]
    fn decode_composite(ty: DataType, r: &mut Reader<'_>) -> Result<Value, WireError> {
        use DataType as T;
        Ok(match ty {
            T::Float => Value::Float(wstr::req_str(r, "float")?),
            T::Double => Value::Double(wstr::req_str(r, "double")?),
            T::Timeval => Value::Timeval(Timeval::decode(r)?),
            T::Value => Value::Value(Box::new(Value::decode(r)?)),
            T::Proc => Value::Proc(Proc::decode(r)?),
            T::App => Value::App(Box::new(App::decode(r)?)),
            T::Info => Value::Info(Box::new(Info::decode(r)?)),
            T::Pdata => Value::Pdata(Box::new(Pdata::decode(r)?)),
            T::Buffer => Value::Buffer(Buffer::decode(r)?),
            T::ByteObject => Value::ByteObject(ByteObject::decode(r)?),
            T::Kval => Value::Kval(Box::new(Kval::decode(r)?)),
            T::Pointer => {
                Pointer::decode(r)?;
                Value::Pointer
            }
            T::Command => Value::Command(Command::decode(r)?),
            T::InfoDirectives => Value::InfoDirectives(InfoDirectives::decode(r)?.0),
            T::ProcInfo => Value::ProcInfo(Box::new(ProcInfo::decode(r)?)),
            T::DataArray => Value::DataArray(DataArray::decode(r)?),
            T::Query => Value::Query(Box::new(Query::decode(r)?)),
            T::CompressedString => {
                Value::CompressedString(composite::sized_bytes(r, "compressed string")?)
            }
            T::IofChannel => Value::IofChannel(IofChannel::decode(r)?.0),
            T::Envar => Value::Envar(Envar::decode(r)?),
            T::Coord => Value::Coord(Coord::decode(r)?),
            T::Regattr => Value::Regattr(Box::new(Regattr::decode(r)?)),
            T::Regex => Value::Regex(Regex::decode(r)?),
            T::ProcCpuset => Value::ProcCpuset(wstr::opt_str(r, "proc cpuset")?),
            T::Geometry => Value::Geometry(Box::new(Geometry::decode(r)?)),
            T::DeviceDist => Value::DeviceDist(Box::new(DeviceDist::decode(r)?)),
            T::Endpoint => Value::Endpoint(Box::new(Endpoint::decode(r)?)),
            T::Topo => Value::Topo(Topo::decode(r)?),
            T::DevType => Value::DevType(r.varint(64, "devtype")?),
            T::LocType => Value::LocType(LocType::decode(r)?.0),
            T::CompressedByteObject => {
                Value::CompressedByteObject(composite::sized_bytes(r, "compressed byte object")?)
            }
            T::ProcNspace => Value::ProcNspace(wstr::req_str(r, "proc nspace")?),
            T::ProcStats => Value::ProcStats(Box::new(ProcStats::decode(r)?)),
            T::DiskStats => Value::DiskStats(Box::new(DiskStats::decode(r)?)),
            T::NetStats => Value::NetStats(Box::new(NetStats::decode(r)?)),
            T::NodeStats => Value::NodeStats(Box::new(NodeStats::decode(r)?)),
            T::DataBuffer => Value::DataBuffer(composite::sized_bytes(r, "data buffer")?),
            T::StorMedium => Value::StorMedium(r.varint(64, "storage medium")?),
            T::StorAccess => Value::StorAccess(r.varint(64, "storage access")?),
            T::StorPersist => Value::StorPersist(r.varint(64, "storage persistence")?),
            T::StorAccessType => Value::StorAccessType(StorAccessType::decode(r)?.0),
            // The types `decode_payload` reads itself (it never sends them here).
            _ => return Value::decode_payload(ty, r),
        })
    }
}

/// VALUE: the type tag, then the element of that type (nothing for UNDEF). Decoding
/// goes one level deeper ([`Reader::descend`]).
impl Element for Value {
    const TYPE: DataType = DataType::Value;

    fn encode(&self, w: &mut Writer) {
        w.data_type(self.data_type());
        self.encode_payload(w);
    }

    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.descend(|r| {
            let ty = r.data_type("value type")?;
            Value::decode_payload(ty, r)
        })
    }
}

#[cfg(test)]
mod tests;
