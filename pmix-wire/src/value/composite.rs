//! The composite elements every message uses: [`Proc`], [`Info`], [`Kval`],
//! [`Pdata`], [`ByteObject`], [`Buffer`] and [`DataArray`].
//!
//! Layouts checked against OpenPMIx's `src/mca/bfrops/base/bfrop_base_pack.c`
//! (`pmix_bfrops_base_pack_proc`, `_info`, `_pdata`, `_kval`, `_buf`, `_bo`,
//! `_darray`), the functions bfrops v4.1 registers for these types
//! (`src/mca/bfrops/v41/bfrop_pmix41.c`).

use alloc::vec::Vec;

use super::wstr::{put_str, req_str};
use super::{Value, WStr};
use crate::buf::{Element, Reader, Writer};
use crate::error::{ErrorKind, WireError};
use crate::types::{BufferType, DataType};
use crate::value::scalar::Rank;

/// PROC (`pmix_proc_t`): the namespace (a STRING, never NULL) and the rank (a
/// PROC_RANK varint).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Proc {
    /// The namespace.
    pub nspace: WStr,
    /// The rank.
    pub rank: Rank,
}

impl Proc {
    /// The process `rank` of `nspace`.
    pub fn new(nspace: impl Into<WStr>, rank: u32) -> Self {
        Proc {
            nspace: nspace.into(),
            rank: Rank(rank),
        }
    }
}

/// The wire form of a process identity.
impl From<pmix_core::group::ProcId> for Proc {
    fn from(p: pmix_core::group::ProcId) -> Proc {
        Proc::new(p.nspace.as_bytes(), p.rank)
    }
}

/// The wire form of a process identity.
impl From<&pmix_core::group::ProcId> for Proc {
    fn from(p: &pmix_core::group::ProcId) -> Proc {
        Proc::new(p.nspace.as_bytes(), p.rank)
    }
}

/// A PROC that names one process (a valid namespace and a rank that is not
/// reserved: not `WILDCARD`, `LOCAL_NODE`, `UNDEF` or `INVALID`).
impl TryFrom<&Proc> for pmix_core::group::ProcId {
    type Error = pmix_core::group::IdError;

    fn try_from(p: &Proc) -> Result<Self, Self::Error> {
        let nspace = pmix_core::group::Nspace::from_bytes(p.nspace.as_bytes())?;
        pmix_core::group::ProcId::new(nspace, p.rank.0)
    }
}

impl Element for Proc {
    const TYPE: DataType = DataType::Proc;

    fn encode(&self, w: &mut Writer) {
        put_str(w, &self.nspace);
        self.rank.encode(w);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Proc {
            nspace: req_str(r, "proc namespace")?,
            rank: Rank(r.varint(32, "proc rank")? as u32),
        })
    }
}

/// The flags of an INFO (`pmix_info_directives_t`, a `u32` varint on the wire).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InfoFlags(pub u32);

impl InfoFlags {
    /// `PMIX_INFO_REQD`: the receiver must honour the directive.
    pub const REQD: InfoFlags = InfoFlags(0x1);
    /// `PMIX_INFO_ARRAY_END`: set on the last element of an array made with
    /// `PMIX_INFO_CREATE`.
    pub const ARRAY_END: InfoFlags = InfoFlags(0x2);
    /// `PMIX_INFO_REQD_PROCESSED`.
    pub const REQD_PROCESSED: InfoFlags = InfoFlags(0x4);
    /// `PMIX_INFO_QUALIFIER`.
    pub const QUALIFIER: InfoFlags = InfoFlags(0x8);
    /// `PMIX_INFO_PERSISTENT`.
    pub const PERSISTENT: InfoFlags = InfoFlags(0x10);

    /// Whether every flag of `other` is set.
    pub fn contains(self, other: InfoFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for InfoFlags {
    type Output = InfoFlags;

    fn bitor(self, rhs: InfoFlags) -> InfoFlags {
        InfoFlags(self.0 | rhs.0)
    }
}

/// INFO (`pmix_info_t`): a key (never NULL), the flags, and a tagged value.
#[derive(Clone, Debug, PartialEq)]
pub struct Info {
    /// The key (`pmix.collect`, …).
    pub key: WStr,
    /// The flags.
    pub flags: InfoFlags,
    /// The value.
    pub value: Value,
}

impl Info {
    /// An INFO of `key` and `value`, without flags.
    pub fn new(key: impl Into<WStr>, value: impl Into<Value>) -> Self {
        Info {
            key: key.into(),
            flags: InfoFlags::default(),
            value: value.into(),
        }
    }

    /// The same INFO with `flags`.
    pub fn with_flags(mut self, flags: InfoFlags) -> Self {
        self.flags = flags;
        self
    }
}

impl Element for Info {
    const TYPE: DataType = DataType::Info;

    fn encode(&self, w: &mut Writer) {
        put_str(w, &self.key);
        w.varint(self.flags.0.into());
        self.value.encode(w);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Info {
            key: req_str(r, "info key")?,
            flags: InfoFlags(r.varint(32, "info flags")? as u32),
            value: Value::decode(r)?,
        })
    }
}

/// KVAL (`pmix_kval_t`): a key (never NULL) and a tagged value.
#[derive(Clone, Debug, PartialEq)]
pub struct Kval {
    /// The key.
    pub key: WStr,
    /// The value.
    pub value: Value,
}

impl Kval {
    /// A KVAL of `key` and `value`.
    pub fn new(key: impl Into<WStr>, value: impl Into<Value>) -> Self {
        Kval {
            key: key.into(),
            value: value.into(),
        }
    }
}

impl Element for Kval {
    const TYPE: DataType = DataType::Kval;

    fn encode(&self, w: &mut Writer) {
        put_str(w, &self.key);
        self.value.encode(w);
    }

    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Kval {
            key: req_str(r, "kval key")?,
            value: Value::decode(r)?,
        })
    }
}

/// PDATA (`pmix_pdata_t`, published data): the publisher, a key (never NULL) and a
/// tagged value.
#[derive(Clone, Debug, PartialEq)]
pub struct Pdata {
    /// The publisher.
    pub proc: Proc,
    /// The key.
    pub key: WStr,
    /// The value.
    pub value: Value,
}

impl Element for Pdata {
    const TYPE: DataType = DataType::Pdata;

    fn encode(&self, w: &mut Writer) {
        self.proc.encode(w);
        put_str(w, &self.key);
        self.value.encode(w);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Pdata {
            proc: Proc::decode(r)?,
            key: req_str(r, "pdata key")?,
            value: Value::decode(r)?,
        })
    }
}

/// Reads a SIZE-prefixed run of bytes (BYTE_OBJECT, DATA_BUFFER, the compressed
/// types, an ENDPOINT's bytes), bounded by [`crate::Limits::max_bytes`].
pub(crate) fn sized_bytes(r: &mut Reader<'_>, what: &'static str) -> Result<Vec<u8>, WireError> {
    let at = r.offset();
    let n = r.varint(64, what)?;
    let n = r.bounded(n, r.limits().max_bytes, what, at)?;
    Ok(r.take(n, what)?.to_vec())
}

/// Writes a SIZE-prefixed run of bytes.
pub(crate) fn put_sized_bytes(w: &mut Writer, bytes: &[u8]) {
    w.varint(bytes.len() as u64);
    w.raw(bytes);
}

/// BYTE_OBJECT (`pmix_byte_object_t`): a SIZE varint and the bytes. Byte objects
/// that hold packed data (`pmix.pblob`, Get replies) follow the connection's
/// buffer type; decoding them is the message layer's business.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ByteObject(pub Vec<u8>);

impl Element for ByteObject {
    const TYPE: DataType = DataType::ByteObject;

    fn encode(&self, w: &mut Writer) {
        put_sized_bytes(w, &self.0);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(ByteObject(sized_bytes(r, "byte object")?))
    }
}

/// BUFFER (`pmix_buffer_t`): a nested packed buffer with its own buffer type: one
/// byte (1 or 2), a SIZE varint, the bytes. A type byte other than 1 or 2 is
/// [`ErrorKind::BadValue`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Buffer {
    /// How the nested bytes are packed.
    pub ty: BufferType,
    /// The packed bytes.
    pub bytes: Vec<u8>,
}

impl Element for Buffer {
    const TYPE: DataType = DataType::Buffer;

    fn encode(&self, w: &mut Writer) {
        w.u8(self.ty.code());
        put_sized_bytes(w, &self.bytes);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let at = r.offset();
        let code = r.u8("buffer type")?;
        let ty = BufferType::from_code(code).ok_or_else(|| {
            r.error_at(
                ErrorKind::BadValue {
                    what: "buffer type",
                    why: "a buffer type other than 1 or 2",
                },
                at,
            )
        })?;
        Ok(Buffer {
            ty,
            bytes: sized_bytes(r, "buffer")?,
        })
    }
}

/// DATA_ARRAY (`pmix_data_array_t`): the element type (a tag), a SIZE count, and
/// the elements of that type with no tag of their own (an array of INFO still
/// carries each element's value tag, which is part of INFO).
///
/// `items` are [`Value`]s whose [`Value::data_type`] must be `ty`: encoding an
/// item of another type makes [`Writer::finish`] fail. An UNDEF array is always
/// empty (OpenPMIx writes no elements for it, so a count would not round-trip).
#[derive(Clone, Debug, PartialEq)]
pub struct DataArray {
    /// The element type.
    pub ty: DataType,
    /// The elements, each of type `ty`.
    pub items: Vec<Value>,
}

impl DataArray {
    /// An array of `ty` holding `items`; `None` if an item is of another type.
    pub fn new(ty: DataType, items: Vec<Value>) -> Option<Self> {
        let ok = (items.is_empty() || ty != DataType::Undef)
            && items.iter().all(|v| v.data_type() == ty);
        ok.then_some(DataArray { ty, items })
    }

    /// An array of INFO.
    pub fn infos(items: impl IntoIterator<Item = super::Info>) -> Self {
        DataArray {
            ty: DataType::Info,
            items: items.into_iter().map(Value::from).collect(),
        }
    }
}

impl Element for DataArray {
    const TYPE: DataType = DataType::DataArray;

    fn encode(&self, w: &mut Writer) {
        w.data_type(self.ty);
        w.varint(self.items.len() as u64);
        if self.ty == DataType::Undef && !self.items.is_empty() {
            w.fail("an UNDEF data array with elements");
        }
        for v in &self.items {
            if v.data_type() != self.ty {
                w.fail("a data array element of another type than the array");
            }
            v.encode_payload(w);
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.descend(|r| {
            let ty = r.data_type("data array type")?;
            let at = r.offset();
            let n = r.varint(64, "data array count")?;
            let n = r.bounded(n, r.limits().max_count, "data array count", at)?;
            if ty == DataType::Undef && n != 0 {
                return Err(r.error_at(
                    ErrorKind::BadValue {
                        what: "data array count",
                        why: "an UNDEF data array with elements",
                    },
                    at,
                ));
            }
            // Every element of a type other than UNDEF takes at least one byte.
            let mut items = Vec::with_capacity(r.capacity_for(n));
            for _ in 0..n {
                items.push(Value::decode_payload(ty, r)?);
            }
            Ok(DataArray { ty, items })
        })
    }
}
