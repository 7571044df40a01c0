//! Scalar elements: one newtype per bfrops scalar type, for top-level packs of one
//! value (`Writer::pack_one(&Status(0))`), and the `Element` impls of `bool`,
//! [`Command`] and [`DataType`].

use crate::buf::{Element, Reader, Writer};
use crate::error::{ErrorKind, WireError};
use crate::types::{Command, DataType};

/// Defines one-byte scalar newtypes.
macro_rules! byte_scalar {
    ($($(#[$doc:meta])* $name:ident($t:ty) = $code:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub $t);

        impl Element for $name {
            const TYPE: DataType = DataType::$code;

            fn encode(&self, w: &mut Writer) {
                w.u8(self.0 as u8);
            }

            fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
                Ok($name(r.u8(stringify!($name))? as $t))
            }
        }
    )*};
}

/// Defines unsigned varint scalar newtypes.
macro_rules! varint_scalar {
    ($($(#[$doc:meta])* $name:ident($t:ty) = $code:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub $t);

        impl Element for $name {
            const TYPE: DataType = DataType::$code;

            fn encode(&self, w: &mut Writer) {
                w.varint(self.0.into());
            }

            fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
                // The reader refuses a value wider than the type, so the cast is exact.
                Ok($name(r.varint(<$t>::BITS, stringify!($name))? as $t))
            }
        }
    )*};
}

/// Defines zigzag scalar newtypes.
macro_rules! zigzag_scalar {
    ($($(#[$doc:meta])* $name:ident($t:ty) = $code:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub $t);

        impl Element for $name {
            const TYPE: DataType = DataType::$code;

            fn encode(&self, w: &mut Writer) {
                w.zigzag(self.0.into());
            }

            fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
                // The reader refuses a value outside the type's range.
                Ok($name(r.zigzag(<$t>::BITS, stringify!($name))? as $t))
            }
        }
    )*};
}

byte_scalar! {
    /// BYTE: one byte.
    Byte(u8) = Byte;
    /// INT8: one byte.
    Int8(i8) = Int8;
    /// UINT8: one byte.
    Uint8(u8) = Uint8;
    /// PERSIST (`pmix_persistence_t`): one byte.
    Persist(u8) = Persist;
    /// SCOPE (`pmix_scope_t`): one byte (0 UNDEF, 1 LOCAL, 2 REMOTE, 3 GLOBAL,
    /// 4 INTERNAL).
    Scope(u8) = Scope;
    /// DATA_RANGE (`pmix_data_range_t`): one byte (0 UNDEF, 1 RM, 2 LOCAL,
    /// 3 NAMESPACE, 4 SESSION, 5 GLOBAL, 6 CUSTOM, 7 PROC_LOCAL, 255 INVALID).
    DataRange(u8) = DataRange;
    /// PROC_STATE (`pmix_proc_state_t`): one byte.
    ProcState(u8) = ProcState;
    /// ALLOC_DIRECTIVE (`pmix_alloc_directive_t`): one byte.
    AllocDirective(u8) = AllocDirective;
    /// JOB_STATE (`pmix_job_state_t`): one byte.
    JobState(u8) = JobState;
    /// LINK_STATE (`pmix_link_state_t`): one byte.
    LinkState(u8) = LinkState;
}

varint_scalar! {
    /// SIZE (`size_t`): a varint.
    Size(u64) = Size;
    /// UINT16: a varint.
    Uint16(u16) = Uint16;
    /// UINT32: a varint.
    Uint32(u32) = Uint32;
    /// UINT64: a varint.
    Uint64(u64) = Uint64;
    /// TIME (`time_t`): a varint.
    Time(u64) = Time;
    /// PROC_RANK (`pmix_rank_t`): a varint of a `u32`; see [`Rank::WILDCARD`] and
    /// the other reserved ranks.
    Rank(u32) = ProcRank;
    /// INFO_DIRECTIVES (`pmix_info_directives_t`, a `u32` bitmask): a varint.
    InfoDirectives(u32) = InfoDirectives;
    /// IOF_CHANNEL (`pmix_iof_channel_t`, a `u16` bitmask: 1 stdin, 2 stdout,
    /// 4 stderr, 8 stddiag): a varint.
    IofChannel(u16) = IofChannel;
    /// DEVTYPE (`pmix_device_type_t`, a `u64` bitmask): a varint.
    DevType(u64) = DevType;
    /// LOCTYPE (`pmix_locality_t`, a `u16`): a varint.
    LocType(u16) = LocType;
    /// STOR_MEDIUM (a `u64` bitmask): a varint.
    StorMedium(u64) = StorMedium;
    /// STOR_ACCESS (a `u64` bitmask): a varint.
    StorAccess(u64) = StorAccess;
    /// STOR_PERSIST (a `u64` bitmask): a varint.
    StorPersist(u64) = StorPersist;
    /// STOR_ACCESS_TYPE (a `u16` bitmask): a varint.
    StorAccessType(u16) = StorAccessType;
}

zigzag_scalar! {
    /// INT16: zigzag.
    Int16(i16) = Int16;
    /// INT32: zigzag.
    Int32(i32) = Int32;
    /// INT64: zigzag.
    Int64(i64) = Int64;
    /// INT (`int`): zigzag, as an INT32.
    Int(i32) = Int;
}

/// STATUS (`pmix_status_t`): zigzag, as an INT32. The workspace's one status type,
/// with every named code ([`pmix_core::Status`]).
pub use pmix_core::Status;

impl Element for Status {
    const TYPE: DataType = DataType::Status;

    fn encode(&self, w: &mut Writer) {
        w.zigzag(self.0.into());
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        // The reader refuses a value outside the type's range.
        Ok(Status(r.zigzag(i32::BITS, "Status")? as i32))
    }
}

impl Rank {
    /// `PMIX_RANK_WILDCARD`: every rank of a namespace (`fe ff ff ff 0f`).
    pub const WILDCARD: Rank = Rank(0xffff_fffe);
    /// `PMIX_RANK_UNDEF`: no rank (`ff ff ff ff 0f`).
    pub const UNDEF: Rank = Rank(0xffff_ffff);
    /// `PMIX_RANK_LOCAL_NODE`: every rank of the namespace on this node.
    pub const LOCAL_NODE: Rank = Rank(0xffff_fffd);
    /// `PMIX_RANK_LOCAL_PEERS`: the local peers.
    pub const LOCAL_PEERS: Rank = Rank(0xffff_fffc);
    /// `PMIX_RANK_INVALID`.
    pub const INVALID: Rank = Rank(0xffff_fffb);
    /// The largest rank that names one process (`PMIX_RANK_VALID`).
    pub const VALID: Rank = Rank(0xffff_fff0);
}

impl Scope {
    /// `PMIX_SCOPE_UNDEF`.
    pub const UNDEF: Scope = Scope(0);
    /// `PMIX_LOCAL`: processes on the same node.
    pub const LOCAL: Scope = Scope(1);
    /// `PMIX_REMOTE`: processes on other nodes.
    pub const REMOTE: Scope = Scope(2);
    /// `PMIX_GLOBAL`: every process.
    pub const GLOBAL: Scope = Scope(3);
    /// `PMIX_INTERNAL`: the process itself.
    pub const INTERNAL: Scope = Scope(4);
}

impl DataRange {
    /// `PMIX_RANGE_UNDEF`.
    pub const UNDEF: DataRange = DataRange(0);
    /// `PMIX_RANGE_RM`: the resource manager.
    pub const RM: DataRange = DataRange(1);
    /// `PMIX_RANGE_LOCAL`: this node.
    pub const LOCAL: DataRange = DataRange(2);
    /// `PMIX_RANGE_NAMESPACE`: the caller's namespace.
    pub const NAMESPACE: DataRange = DataRange(3);
    /// `PMIX_RANGE_SESSION`: the caller's session.
    pub const SESSION: DataRange = DataRange(4);
    /// `PMIX_RANGE_GLOBAL`: everyone.
    pub const GLOBAL: DataRange = DataRange(5);
    /// `PMIX_RANGE_CUSTOM`: the processes named alongside.
    pub const CUSTOM: DataRange = DataRange(6);
    /// `PMIX_RANGE_PROC_LOCAL`: the caller only.
    pub const PROC_LOCAL: DataRange = DataRange(7);
    /// `PMIX_RANGE_INVALID`.
    pub const INVALID: DataRange = DataRange(255);
}

impl IofChannel {
    /// `PMIX_FWD_STDIN_CHANNEL`.
    pub const STDIN: IofChannel = IofChannel(0x01);
    /// `PMIX_FWD_STDOUT_CHANNEL`.
    pub const STDOUT: IofChannel = IofChannel(0x02);
    /// `PMIX_FWD_STDERR_CHANNEL`.
    pub const STDERR: IofChannel = IofChannel(0x04);
    /// `PMIX_FWD_STDDIAG_CHANNEL`.
    pub const STDDIAG: IofChannel = IofChannel(0x08);
}

/// UINT (`unsigned int`): packed as a zigzag *INT32* of the same bits (an OpenPMIx
/// quirk, docs/wire.md §5.3), so `u32::MAX` is `-1` on the wire (`01`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uint(pub u32);

impl Element for Uint {
    const TYPE: DataType = DataType::Uint;

    fn encode(&self, w: &mut Writer) {
        w.zigzag((self.0 as i32).into());
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Uint(r.zigzag(32, "Uint")? as i32 as u32))
    }
}

/// PID (`pid_t`): its own type tag, always UINT32 (`0e`), then a varint — the one
/// scalar that carries a tag even in non-described buffers. Another tag is
/// [`ErrorKind::UnexpectedType`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pid(pub u32);

impl Element for Pid {
    const TYPE: DataType = DataType::Pid;

    fn encode(&self, w: &mut Writer) {
        w.data_type(DataType::Uint32);
        w.varint(self.0.into());
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.expect_type(DataType::Uint32, "pid")?;
        Ok(Pid(r.varint(32, "pid")? as u32))
    }
}

/// TIMEVAL (`struct timeval`): two zigzag INT64, seconds then microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timeval {
    /// Seconds.
    pub sec: i64,
    /// Microseconds.
    pub usec: i64,
}

impl Element for Timeval {
    const TYPE: DataType = DataType::Timeval;

    fn encode(&self, w: &mut Writer) {
        w.zigzag(self.sec);
        w.zigzag(self.usec);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Timeval {
            sec: r.zigzag(64, "timeval seconds")?,
            usec: r.zigzag(64, "timeval microseconds")?,
        })
    }
}

/// POINTER: one sentinel byte `01` (pointers are never transmitted); another byte
/// is [`ErrorKind::BadValue`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pointer;

impl Element for Pointer {
    const TYPE: DataType = DataType::Pointer;

    fn encode(&self, w: &mut Writer) {
        w.u8(1);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let at = r.offset();
        match r.u8("pointer")? {
            1 => Ok(Pointer),
            _ => Err(r.error_at(
                ErrorKind::BadValue {
                    what: "pointer",
                    why: "a pointer sentinel other than 1",
                },
                at,
            )),
        }
    }
}

/// BOOL: one byte, 0 or 1; another byte is [`ErrorKind::BadValue`].
impl Element for bool {
    const TYPE: DataType = DataType::Bool;

    fn encode(&self, w: &mut Writer) {
        w.u8((*self).into());
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let at = r.offset();
        match r.u8("bool")? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(r.error_at(
                ErrorKind::BadValue {
                    what: "bool",
                    why: "a bool other than 0 or 1",
                },
                at,
            )),
        }
    }
}

/// COMMAND: one byte; a byte no version uses is [`ErrorKind::BadValue`].
impl Element for Command {
    const TYPE: DataType = DataType::Command;

    fn encode(&self, w: &mut Writer) {
        w.u8(self.code());
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let at = r.offset();
        let b = r.u8("command")?;
        Command::from_code(b).ok_or_else(|| {
            r.error_at(
                ErrorKind::BadValue {
                    what: "command",
                    why: "an unknown command id",
                },
                at,
            )
        })
    }
}

/// DATA_TYPE: a varint of a `u16` type code; a code this codec does not know is
/// [`ErrorKind::UnknownType`].
impl Element for DataType {
    const TYPE: DataType = DataType::DataType;

    fn encode(&self, w: &mut Writer) {
        w.data_type(*self);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.data_type("data type")
    }
}
