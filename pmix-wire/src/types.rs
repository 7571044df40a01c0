//! The bfrops data type codes (`pmix_data_type_t`) and the buffer types.

/// How a buffer is packed: whether each top-level pack carries type tags
/// (docs/wire.md §5.1–5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BufferType {
    /// Type 1: a top-level pack is its count and its elements (the default).
    #[default]
    NonDescribed,
    /// Type 2: a top-level pack is `tag(INT32) count tag(T)` and its elements.
    FullyDescribed,
}

impl BufferType {
    /// The byte the handshake and a `BUFFER` element carry (1 or 2).
    pub fn code(self) -> u8 {
        match self {
            BufferType::NonDescribed => 1,
            BufferType::FullyDescribed => 2,
        }
    }

    /// The buffer type of a handshake or `BUFFER` byte; `None` for any other byte.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(BufferType::NonDescribed),
            2 => Some(BufferType::FullyDescribed),
            _ => None,
        }
    }
}

macro_rules! data_types {
    ($($(#[$doc:meta])* $name:ident = $code:literal,)*) => {
        /// A bfrops data type code (`pmix_data_type_t`, docs/wire.md §5.4): a `u16`
        /// on the wire as a varint. Codes this enum does not name are refused by the
        /// decoder ([`crate::ErrorKind::UnknownType`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        #[non_exhaustive]
        pub enum DataType {
            $($(#[$doc])* $name = $code,)*
        }

        impl DataType {
            /// The type of a code; `None` for a code this codec does not know.
            #[inline]
            pub fn from_code(code: u64) -> Option<Self> {
                match code {
                    $($code => Some(DataType::$name),)*
                    _ => None,
                }
            }

            /// Every type this codec knows, by code.
            pub const ALL: &'static [DataType] = &[$(DataType::$name,)*];
        }
    };
}

data_types! {
    /// No type (a value that holds nothing).
    Undef = 0,
    /// One byte, 0 or 1.
    Bool = 1,
    /// One byte.
    Byte = 2,
    /// A NUL-terminated string with its length.
    String = 3,
    /// `size_t`, a varint.
    Size = 4,
    /// `pid_t`, with its own type tag (UINT32).
    Pid = 5,
    /// `int`, as a zigzag int32.
    Int = 6,
    /// One byte.
    Int8 = 7,
    /// Zigzag.
    Int16 = 8,
    /// Zigzag.
    Int32 = 9,
    /// Zigzag.
    Int64 = 10,
    /// `unsigned int`, packed as a zigzag *int32* (an OpenPMIx quirk).
    Uint = 11,
    /// One byte.
    Uint8 = 12,
    /// Varint.
    Uint16 = 13,
    /// Varint.
    Uint32 = 14,
    /// Varint.
    Uint64 = 15,
    /// A string holding `printf("%f")` of the value.
    Float = 16,
    /// A string holding `printf("%f")` of the value.
    Double = 17,
    /// Two zigzag int64: seconds, microseconds.
    Timeval = 18,
    /// `time_t`, a varint.
    Time = 19,
    /// `pmix_status_t`, zigzag.
    Status = 20,
    /// A type tag and one element of that type.
    Value = 21,
    /// Namespace and rank.
    Proc = 22,
    /// An application (spawn).
    App = 23,
    /// Key, flags, value.
    Info = 24,
    /// Proc, key, value.
    Pdata = 25,
    /// A nested packed buffer with its own buffer type.
    Buffer = 26,
    /// Size and bytes.
    ByteObject = 27,
    /// Key and value.
    Kval = 28,
    /// One byte.
    Persist = 30,
    /// One sentinel byte (pointers are never sent).
    Pointer = 31,
    /// One byte.
    Scope = 32,
    /// One byte.
    DataRange = 33,
    /// One byte.
    Command = 34,
    /// Varint.
    InfoDirectives = 35,
    /// Varint.
    DataType = 36,
    /// One byte.
    ProcState = 37,
    /// Proc, host name, executable, pid, state.
    ProcInfo = 38,
    /// Element type, count, elements.
    DataArray = 39,
    /// Varint.
    ProcRank = 40,
    /// Keys and qualifiers.
    Query = 41,
    /// Size and zlib bytes.
    CompressedString = 42,
    /// One byte.
    AllocDirective = 43,
    /// Varint.
    IofChannel = 45,
    /// Name, value, separator.
    Envar = 46,
    /// View, dimensions.
    Coord = 47,
    /// A registered attribute.
    Regattr = 48,
    /// A regular expression (several forms).
    Regex = 49,
    /// One byte.
    JobState = 50,
    /// One byte.
    LinkState = 51,
    /// A string in hwloc's list syntax, or NULL.
    ProcCpuset = 52,
    /// Fabric geometry.
    Geometry = 53,
    /// A device distance.
    DeviceDist = 54,
    /// A fabric endpoint.
    Endpoint = 55,
    /// An hwloc XML string and hwloc's support structures.
    Topo = 56,
    /// Varint (a bitmask).
    DevType = 57,
    /// Varint.
    LocType = 58,
    /// Size and zlib bytes.
    CompressedByteObject = 59,
    /// A namespace string.
    ProcNspace = 60,
    /// Process statistics.
    ProcStats = 61,
    /// Disk statistics.
    DiskStats = 62,
    /// Network statistics.
    NetStats = 63,
    /// Node statistics.
    NodeStats = 64,
    /// Size and bytes.
    DataBuffer = 65,
    /// Varint (uint64).
    StorMedium = 66,
    /// Varint (uint64).
    StorAccess = 67,
    /// Varint (uint64).
    StorPersist = 68,
    /// Varint (uint16).
    StorAccessType = 69,
}

impl DataType {
    /// The code on the wire.
    pub fn code(self) -> u16 {
        self as u16
    }
}

macro_rules! commands {
    ($($(#[$doc:meta])* $name:ident = $code:literal,)*) => {
        /// A command (`pmix_cmd_t`, docs/wire.md §6): the first pack of every client
        /// request, one byte. Ids 0–33 are 4.2's; 34–38 are sent by 5.x/6.x clients
        /// (a 4.2 server answers them NOT_SUPPORTED).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        #[non_exhaustive]
        pub enum Command {
            $($(#[$doc])* $name = $code,)*
        }

        impl Command {
            /// The command of a byte; `None` for a byte no version uses.
            pub fn from_code(code: u8) -> Option<Self> {
                match code {
                    $($code => Some(Command::$name),)*
                    _ => None,
                }
            }

            /// Every command, by id.
            pub const ALL: &'static [Command] = &[$(Command::$name,)*];
        }
    };
}

commands! {
    /// PMIx_Init's job-info request.
    Req = 0,
    /// PMIx_Abort.
    Abort = 1,
    /// PMIx_Commit.
    Commit = 2,
    /// PMIx_Fence(_nb).
    FenceNb = 3,
    /// PMIx_Get(_nb).
    GetNb = 4,
    /// PMIx_Finalize.
    Finalize = 5,
    /// PMIx_Publish(_nb).
    PublishNb = 6,
    /// PMIx_Lookup(_nb).
    LookupNb = 7,
    /// PMIx_Unpublish(_nb).
    UnpublishNb = 8,
    /// PMIx_Spawn(_nb).
    SpawnNb = 9,
    /// PMIx_Connect(_nb).
    ConnectNb = 10,
    /// PMIx_Disconnect(_nb).
    DisconnectNb = 11,
    /// PMIx_Notify_event (request), and the event a server delivers (tag 0).
    Notify = 12,
    /// PMIx_Register_event_handler.
    RegEvents = 13,
    /// PMIx_Deregister_event_handler (one-way).
    DeregEvents = 14,
    /// PMIx_Query_info(_nb).
    Query = 15,
    /// PMIx_Log(_nb).
    Log = 16,
    /// PMIx_Allocation_request(_nb).
    Alloc = 17,
    /// PMIx_Job_control(_nb).
    JobControl = 18,
    /// PMIx_Process_monitor(_nb).
    Monitor = 19,
    /// PMIx_Get_credential(_nb).
    GetCredential = 20,
    /// PMIx_Validate_credential(_nb).
    ValidateCred = 21,
    /// PMIx_IOF_pull.
    IofPull = 22,
    /// PMIx_IOF_push.
    IofPush = 23,
    /// PMIx_Group_construct(_nb).
    GroupConstruct = 24,
    /// Never sent by 4.2.
    GroupJoin = 25,
    /// Never sent by 4.2.
    GroupInvite = 26,
    /// PMIx_Group_leave(_nb).
    GroupLeave = 27,
    /// PMIx_Group_destruct(_nb).
    GroupDestruct = 28,
    /// PMIx_IOF_deregister.
    IofDereg = 29,
    /// PMIx_Fabric_register.
    FabricRegister = 30,
    /// PMIx_Fabric_update.
    FabricUpdate = 31,
    /// PMIx_Compute_distances relayed to the server.
    ComputeDeviceDistances = 32,
    /// A client's `PMIx_Get` with `PMIX_GET_REFRESH_CACHE` asks the server to resend
    /// a proc's data (defined by 4.2's sources; not in docs/wire.md's table).
    RefreshCache = 33,
    /// 6.x: resource blocks.
    Resblk = 34,
    /// 6.x: session control.
    SessionCtrl = 35,
    /// 6.x: system information.
    ReqSysinfo = 36,
    /// 5.x: resolve peers.
    ResolvePeers = 37,
    /// 5.x: resolve node.
    ResolveNode = 38,
}

impl Command {
    /// The byte on the wire.
    pub fn code(self) -> u8 {
        self as u8
    }
}
