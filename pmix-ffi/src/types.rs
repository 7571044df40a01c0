//! The C types of `include/pmix_common.h`, laid out as OpenPMIx 4.2.2 lays them out on
//! x86_64 (checked by the unit tests below and, against both C headers, by
//! `tests/abi.rs`).

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_uint, c_void};

/// Declares a C function pointer type (`typedef R (*name)(ARGS)`): an `Option`, as C may
/// pass NULL, of an `extern "C" fn` only an `unsafe` block may call, as Rust can check
/// nothing about what a C function does; each call says why it is sound (the function
/// and its data came from C under the header's contract, the arguments are valid for
/// the call).
macro_rules! c_fn {
    ($(#[$attr:meta])* pub type $name:ident = fn($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;) => {
        $(#[$attr])*
        pub type $name = Option<unsafe extern "C" fn($($arg: $ty),*) $(-> $ret)?>;
    };
}

/// The function inside a C function pointer type `T` (`Option<F>`): what a call takes
/// once NULL is ruled out.
pub(crate) type CFn<T> = <T as IntoIterator>::Item;

/// `pmix_status_t`.
pub type pmix_status_t = c_int;
/// `pmix_data_type_t`.
pub type pmix_data_type_t = u16;
/// `pmix_rank_t`.
pub type pmix_rank_t = u32;
/// `pmix_data_range_t`.
pub type pmix_data_range_t = u8;
/// `pmix_scope_t`.
pub type pmix_scope_t = u8;
/// `pmix_info_directives_t`.
pub type pmix_info_directives_t = u32;
/// `pmix_device_type_t`.
pub type pmix_device_type_t = u64;
/// `pmix_bind_envelope_t`.
pub type pmix_bind_envelope_t = u8;

/// `PMIX_MAX_NSLEN`: the core's one definition ([`pmix_core::MAX_NSLEN`]).
pub const PMIX_MAX_NSLEN: usize = pmix_core::MAX_NSLEN;
/// `PMIX_MAX_KEYLEN`.
pub const PMIX_MAX_KEYLEN: usize = pmix::wire::keys::MAX_KEYLEN;

/// `PMIX_INFO_REQD`: an unknown key so flagged is `PMIX_ERR_NOT_SUPPORTED`.
pub const PMIX_INFO_REQD: pmix_info_directives_t = 0x1;

/// `PMIX_INFO_PERSISTENT`: the info does not own its value's data.
pub const PMIX_INFO_PERSISTENT: pmix_info_directives_t = 0x10;

/// `PMIX_UNDEF`.
pub const PMIX_UNDEF: pmix_data_type_t = 0;
/// `PMIX_BOOL`.
pub const PMIX_BOOL: pmix_data_type_t = 1;
/// `PMIX_BYTE`.
pub const PMIX_BYTE: pmix_data_type_t = 2;
/// `PMIX_STRING`.
pub const PMIX_STRING: pmix_data_type_t = 3;
/// `PMIX_SIZE`.
pub const PMIX_SIZE: pmix_data_type_t = 4;
/// `PMIX_PID`.
pub const PMIX_PID: pmix_data_type_t = 5;
/// `PMIX_INT`.
pub const PMIX_INT: pmix_data_type_t = 6;
/// `PMIX_INT8`.
pub const PMIX_INT8: pmix_data_type_t = 7;
/// `PMIX_INT16`.
pub const PMIX_INT16: pmix_data_type_t = 8;
/// `PMIX_INT32`.
pub const PMIX_INT32: pmix_data_type_t = 9;
/// `PMIX_INT64`.
pub const PMIX_INT64: pmix_data_type_t = 10;
/// `PMIX_UINT`.
pub const PMIX_UINT: pmix_data_type_t = 11;
/// `PMIX_UINT8`.
pub const PMIX_UINT8: pmix_data_type_t = 12;
/// `PMIX_UINT16`.
pub const PMIX_UINT16: pmix_data_type_t = 13;
/// `PMIX_UINT32`.
pub const PMIX_UINT32: pmix_data_type_t = 14;
/// `PMIX_UINT64`.
pub const PMIX_UINT64: pmix_data_type_t = 15;
/// `PMIX_FLOAT`.
pub const PMIX_FLOAT: pmix_data_type_t = 16;
/// `PMIX_DOUBLE`.
pub const PMIX_DOUBLE: pmix_data_type_t = 17;
/// `PMIX_STATUS`.
pub const PMIX_STATUS: pmix_data_type_t = 20;
/// `PMIX_PROC`.
pub const PMIX_PROC: pmix_data_type_t = 22;
/// `PMIX_DATA_ARRAY`.
pub const PMIX_DATA_ARRAY: pmix_data_type_t = 39;
/// `PMIX_VALUE`: an element type of data arrays (`pmix_value_t`).
pub const PMIX_VALUE: pmix_data_type_t = 21;
/// `PMIX_INFO`: an element type of data arrays (`pmix_info_t`).
pub const PMIX_INFO: pmix_data_type_t = 24;
/// `PMIX_BYTE_OBJECT`.
pub const PMIX_BYTE_OBJECT: pmix_data_type_t = 27;
/// `PMIX_POINTER`.
pub const PMIX_POINTER: pmix_data_type_t = 31;
/// `PMIX_PROC_RANK`.
pub const PMIX_PROC_RANK: pmix_data_type_t = 40;
/// `PMIX_DEVICE_DIST`.
pub const PMIX_DEVICE_DIST: pmix_data_type_t = 54;
/// `PMIX_DEVTYPE`.
pub const PMIX_DEVTYPE: pmix_data_type_t = 57;
/// `PMIX_TIME` (`time_t`).
pub const PMIX_TIME: pmix_data_type_t = 19;
/// `PMIX_PERSIST` (`pmix_persistence_t`, one byte).
pub const PMIX_PERSIST: pmix_data_type_t = 30;
/// `PMIX_SCOPE` (`pmix_scope_t`, one byte).
pub const PMIX_SCOPE: pmix_data_type_t = 32;
/// `PMIX_DATA_RANGE` (`pmix_data_range_t`, one byte).
pub const PMIX_DATA_RANGE: pmix_data_type_t = 33;
/// `PMIX_INFO_DIRECTIVES` (`pmix_info_directives_t`, four bytes).
pub const PMIX_INFO_DIRECTIVES: pmix_data_type_t = 35;
/// `PMIX_DATA_TYPE` (`pmix_data_type_t`, two bytes).
pub const PMIX_DATA_TYPE: pmix_data_type_t = 36;
/// `PMIX_PROC_STATE` (`pmix_proc_state_t`, one byte).
pub const PMIX_PROC_STATE: pmix_data_type_t = 37;
/// `PMIX_ALLOC_DIRECTIVE` (one byte).
pub const PMIX_ALLOC_DIRECTIVE: pmix_data_type_t = 43;
/// `PMIX_IOF_CHANNEL` (`pmix_iof_channel_t`, two bytes).
pub const PMIX_IOF_CHANNEL: pmix_data_type_t = 45;
/// `PMIX_JOB_STATE` (one byte).
pub const PMIX_JOB_STATE: pmix_data_type_t = 50;
/// `PMIX_LINK_STATE` (one byte).
pub const PMIX_LINK_STATE: pmix_data_type_t = 51;
/// `PMIX_LOCTYPE` (`pmix_locality_t`, two bytes).
pub const PMIX_LOCTYPE: pmix_data_type_t = 58;

/// `pmix_proc_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pmix_proc_t {
    /// The namespace, NUL-terminated.
    pub nspace: [c_char; PMIX_MAX_NSLEN + 1],
    /// The rank.
    pub rank: pmix_rank_t,
}

/// `pmix_cpuset_t`: `source` is the library's [`SOURCE`](crate::client::objects::SOURCE)
/// pointer and `bitmap` a key of its cpuset registry.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pmix_cpuset_t {
    /// Who made the bitmap.
    pub source: *mut c_char,
    /// The library's cpuset object.
    pub bitmap: *mut c_void,
}

/// `pmix_topology_t`: `source` is the library's pointer, `topology` the library's
/// topology.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pmix_topology_t {
    /// Who made the topology.
    pub source: *mut c_char,
    /// The library's topology object.
    pub topology: *mut c_void,
}

/// `pmix_device_distance_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pmix_device_distance_t {
    /// The system-wide uuid (malloc'ed).
    pub uuid: *mut c_char,
    /// The OS name (malloc'ed).
    pub osname: *mut c_char,
    /// The device type (one bit).
    pub type_: pmix_device_type_t,
    /// The minimum distance.
    pub mindist: u16,
    /// The maximum distance.
    pub maxdist: u16,
}

/// `pmix_byte_object_t`: `size` bytes at `bytes` (malloc'ed when the library made
/// it).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pmix_byte_object_t {
    /// The bytes.
    pub bytes: *mut c_char,
    /// How many.
    pub size: usize,
}

/// `pmix_data_buffer_t`: packed bytes (`PMIx_Data_pack` / `_unpack`).
#[repr(C)]
#[derive(Debug)]
pub struct pmix_data_buffer_t {
    /// The memory (`malloc`ed), or NULL.
    pub base_ptr: *mut c_char,
    /// Where the next pack goes.
    pub pack_ptr: *mut c_char,
    /// Where the next unpack reads (NULL: from the start).
    pub unpack_ptr: *mut c_char,
    /// How many bytes are allocated at `base_ptr`.
    pub bytes_allocated: usize,
    /// How many of them hold packed data.
    pub bytes_used: usize,
}

/// `pmix_data_array_t`: `size` elements of `type_` at `array`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pmix_data_array_t {
    /// The elements' type.
    pub type_: pmix_data_type_t,
    /// How many.
    pub size: usize,
    /// The elements.
    pub array: *mut c_void,
}

/// The union of `pmix_value_t`: the members the library reads or writes, and room for
/// the others (24 bytes, 8-aligned, as OpenPMIx's). `flag` is read as a byte so that a
/// C `bool` holding neither 0 nor 1 cannot be an invalid Rust `bool`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union pmix_value_data {
    /// `bool flag`.
    pub flag: u8,
    /// `uint8_t byte`.
    pub byte: u8,
    /// `char *string`.
    pub string: *mut c_char,
    /// `size_t size`.
    pub size: usize,
    /// `pid_t pid`.
    pub pid: libc::pid_t,
    /// `int integer`.
    pub integer: c_int,
    /// `int8_t int8`.
    pub int8: i8,
    /// `int16_t int16`.
    pub int16: i16,
    /// `int32_t int32`.
    pub int32: i32,
    /// `int64_t int64`.
    pub int64: i64,
    /// `unsigned int uint`.
    pub uint: c_uint,
    /// `uint8_t uint8`.
    pub uint8: u8,
    /// `uint16_t uint16`.
    pub uint16: u16,
    /// `uint32_t uint32`.
    pub uint32: u32,
    /// `uint64_t uint64`.
    pub uint64: u64,
    /// `float fval`.
    pub fval: f32,
    /// `double dval`.
    pub dval: f64,
    /// `pmix_status_t status`.
    pub status: pmix_status_t,
    /// `pmix_rank_t rank`.
    pub rank: pmix_rank_t,
    /// `void *ptr`.
    pub ptr: *mut c_void,
    /// `pmix_device_type_t devtype`.
    pub devtype: pmix_device_type_t,
    /// `pmix_byte_object_t bo`.
    pub bo: pmix_byte_object_t,
    /// `pmix_proc_t *proc`.
    pub proc_: *mut pmix_proc_t,
    /// `pmix_data_array_t *darray`.
    pub darray: *mut pmix_data_array_t,
    /// The whole union, as bytes.
    pub raw: [u64; 3],
}

/// `pmix_value_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_value_t {
    /// The data type tag.
    pub type_: pmix_data_type_t,
    /// The data.
    pub data: pmix_value_data,
}

/// `pmix_info_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_info_t {
    /// The key, NUL-terminated within its 512 bytes.
    pub key: [c_char; PMIX_MAX_KEYLEN + 1],
    /// `PMIX_INFO_REQD` and friends.
    pub flags: pmix_info_directives_t,
    /// The value.
    pub value: pmix_value_t,
}

c_fn! {
    /// `pmix_op_cbfunc_t`.
    pub type pmix_op_cbfunc_t = fn(status: pmix_status_t, cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_modex_cbfunc_t`: a host's answer to a fence or direct-modex upcall; `data`
    /// stays the host's until `release_fn(release_cbdata)`.
    pub type pmix_modex_cbfunc_t = fn(status: pmix_status_t, data: *const c_char, ndata: usize, cbdata: *mut c_void, release_fn: pmix_release_cbfunc_t, release_cbdata: *mut c_void);
}

c_fn! {
    /// An upcall of [`pmix_server_module_t`] the library never makes: only its place in
    /// the struct matters.
    pub type pmix_server_unused_fn_t = fn();
}

c_fn! {
    /// `pmix_server_client_connected_fn_t`.
    pub type pmix_server_client_connected_fn_t = fn(proc_: *const pmix_proc_t, server_object: *mut c_void, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t;
}

c_fn! {
    /// `pmix_server_client_connected2_fn_t`.
    pub type pmix_server_client_connected2_fn_t = fn(proc_: *const pmix_proc_t, server_object: *mut c_void, info: *mut pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t;
}

c_fn! {
    /// `pmix_server_abort_fn_t`.
    pub type pmix_server_abort_fn_t = fn(proc_: *const pmix_proc_t, server_object: *mut c_void, status: c_int, msg: *const c_char, procs: *mut pmix_proc_t, nprocs: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t;
}

c_fn! {
    /// `pmix_server_fencenb_fn_t`.
    pub type pmix_server_fencenb_fn_t = fn(procs: *const pmix_proc_t, nprocs: usize, info: *const pmix_info_t, ninfo: usize, data: *mut c_char, ndata: usize, cbfunc: pmix_modex_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t;
}

c_fn! {
    /// `pmix_server_notify_event_fn_t`.
    pub type pmix_server_notify_event_fn_t = fn(code: pmix_status_t, source: *const pmix_proc_t, range: pmix_data_range_t, info: *mut pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t;
}

c_fn! {
    /// `pmix_server_publish_fn_t`.
    pub type pmix_server_publish_fn_t = fn(proc_: *const pmix_proc_t, info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t;
}

c_fn! {
    /// `pmix_server_lookup_fn_t`.
    pub type pmix_server_lookup_fn_t = fn(proc_: *const pmix_proc_t, keys: *mut *mut c_char, info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_lookup_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t;
}

c_fn! {
    /// `pmix_server_unpublish_fn_t`.
    pub type pmix_server_unpublish_fn_t = fn(proc_: *const pmix_proc_t, keys: *mut *mut c_char, info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t;
}

c_fn! {
    /// `pmix_server_log_fn_t`.
    pub type pmix_server_log_fn_t = fn(client: *const pmix_proc_t, data: *const pmix_info_t, ndata: usize, directives: *const pmix_info_t, ndirs: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_server_dmodex_req_fn_t`.
    pub type pmix_server_dmodex_req_fn_t = fn(proc_: *const pmix_proc_t, info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_modex_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t;
}

/// `pmix_server_module_t` (OpenPMIx 4.2.2's `pmix_server_module_4_0_0_t`): the host's
/// upcalls, in their order. The library calls `client_connected2` (else
/// `client_connected`), `client_finalized`, `abort`, `fence_nb`, `direct_modex`,
/// `publish`, `lookup`, `unpublish`, `notify_event` and `log`; the others are kept
/// for their places.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct pmix_server_module_t {
    /// A client completed its handshake.
    pub client_connected: pmix_server_client_connected_fn_t,
    /// A client called `PMIx_Finalize` (same signature as `client_connected`).
    pub client_finalized: pmix_server_client_connected_fn_t,
    /// A client called `PMIx_Abort`.
    pub abort: pmix_server_abort_fn_t,
    /// A fence across nodes: gather every node's data.
    pub fence_nb: pmix_server_fencenb_fn_t,
    /// A process's data from its node.
    pub direct_modex: pmix_server_dmodex_req_fn_t,
    /// A client's `PMIx_Publish`.
    pub publish: pmix_server_publish_fn_t,
    /// A client's `PMIx_Lookup`.
    pub lookup: pmix_server_lookup_fn_t,
    /// A client's `PMIx_Unpublish`.
    pub unpublish: pmix_server_unpublish_fn_t,
    /// `spawn`.
    pub spawn: pmix_server_unused_fn_t,
    /// `connect`.
    pub connect: pmix_server_unused_fn_t,
    /// `disconnect`.
    pub disconnect: pmix_server_unused_fn_t,
    /// `register_events`.
    pub register_events: pmix_server_unused_fn_t,
    /// `deregister_events`.
    pub deregister_events: pmix_server_unused_fn_t,
    /// `listener`.
    pub listener: pmix_server_unused_fn_t,
    /// An event for the other nodes.
    pub notify_event: pmix_server_notify_event_fn_t,
    /// `query`.
    pub query: pmix_server_unused_fn_t,
    /// `tool_connected`.
    pub tool_connected: pmix_server_unused_fn_t,
    /// A client's `PMIx_Log`.
    pub log: pmix_server_log_fn_t,
    /// `allocate`.
    pub allocate: pmix_server_unused_fn_t,
    /// `job_control`.
    pub job_control: pmix_server_unused_fn_t,
    /// `monitor`.
    pub monitor: pmix_server_unused_fn_t,
    /// `get_credential`.
    pub get_credential: pmix_server_unused_fn_t,
    /// `validate_credential`.
    pub validate_credential: pmix_server_unused_fn_t,
    /// `iof_pull`.
    pub iof_pull: pmix_server_unused_fn_t,
    /// `push_stdin`.
    pub push_stdin: pmix_server_unused_fn_t,
    /// `group`.
    pub group: pmix_server_unused_fn_t,
    /// `fabric`.
    pub fabric: pmix_server_unused_fn_t,
    /// A client completed its handshake (with infos; preferred when set).
    pub client_connected2: pmix_server_client_connected2_fn_t,
}

c_fn! {
    /// `pmix_dmodex_response_fn_t`.
    pub type pmix_dmodex_response_fn_t = fn(status: pmix_status_t, data: *mut c_char, sz: usize, cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_setup_application_cbfunc_t`.
    pub type pmix_setup_application_cbfunc_t = fn(status: pmix_status_t, info: *mut pmix_info_t, ninfo: usize, provided_cbdata: *mut c_void, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_value_cbfunc_t`: `kv` belongs to the library, released when it returns.
    pub type pmix_value_cbfunc_t = fn(status: pmix_status_t, kv: *mut pmix_value_t, cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_lookup_cbfunc_t`: `data` is the library's for the call.
    pub type pmix_lookup_cbfunc_t = fn(status: pmix_status_t, data: *mut pmix_pdata_t, ndata: usize, cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_credential_cbfunc_t`: a credential (the library's for the call) and infos.
    pub type pmix_credential_cbfunc_t = fn(status: pmix_status_t, credential: *mut pmix_byte_object_t, info: *mut pmix_info_t, ninfo: usize, cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_validation_cbfunc_t`: whether a credential is valid, and infos.
    pub type pmix_validation_cbfunc_t = fn(status: pmix_status_t, info: *mut pmix_info_t, ninfo: usize, cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_iof_cbfunc_t`: forwarded output (never called here: no server of ours
    /// forwards I/O).
    pub type pmix_iof_cbfunc_t = fn(iofhdlr: usize, channel: u16, source: *mut pmix_proc_t, payload: *mut pmix_byte_object_t, info: *mut pmix_info_t, ninfo: usize);
}

/// `pmix_fabric_t`: a fabric registration.
#[repr(C)]
#[derive(Debug)]
pub struct pmix_fabric_t {
    /// The caller's name for the fabric.
    pub name: *mut c_char,
    /// The library's index of the registration.
    pub index: usize,
    /// What the library knows of the fabric.
    pub info: *mut pmix_info_t,
    /// How many infos.
    pub ninfo: usize,
    /// The library's object.
    pub module: *mut c_void,
}

c_fn! {
    /// `pmix_info_cbfunc_t`: `info` is the library's until `release_fn(release_cbdata)`.
    pub type pmix_info_cbfunc_t = fn(status: pmix_status_t, info: *mut pmix_info_t, ninfo: usize, cbdata: *mut c_void, release_fn: pmix_release_cbfunc_t, release_cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_hdlr_reg_cbfunc_t`.
    pub type pmix_hdlr_reg_cbfunc_t = fn(status: pmix_status_t, refid: usize, cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_event_notification_cbfunc_fn_t`: what an event handler calls when it is done.
    pub type pmix_event_notification_cbfunc_fn_t = fn(status: pmix_status_t, results: *mut pmix_info_t, nresults: usize, cbfunc: pmix_op_cbfunc_t, thiscbdata: *mut c_void, notification_cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_notification_fn_t`: an event handler.
    pub type pmix_notification_fn_t = fn(evhdlr_registration_id: usize, status: pmix_status_t, source: *const pmix_proc_t, info: *mut pmix_info_t, ninfo: usize, results: *mut pmix_info_t, nresults: usize, cbfunc: pmix_event_notification_cbfunc_fn_t, cbdata: *mut c_void);
}

/// `pmix_group_opt_t`: a join's answer (a C enum: `int`).
pub type pmix_group_opt_t = c_int;
/// `PMIX_GROUP_DECLINE`.
pub const PMIX_GROUP_DECLINE: pmix_group_opt_t = 0;
/// `PMIX_GROUP_ACCEPT`.
pub const PMIX_GROUP_ACCEPT: pmix_group_opt_t = 1;

/// `pmix_app_t`: one application of `PMIx_Spawn`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_app_t {
    /// The executable.
    pub cmd: *mut c_char,
    /// The arguments, `argv[0]` first, NULL-terminated.
    pub argv: *mut *mut c_char,
    /// Environment additions (`NAME=value`), NULL-terminated.
    pub env: *mut *mut c_char,
    /// The working directory (NULL: the server's choice).
    pub cwd: *mut c_char,
    /// How many processes.
    pub maxprocs: c_int,
    /// Directives.
    pub info: *mut pmix_info_t,
    /// How many directives.
    pub ninfo: usize,
}

c_fn! {
    /// `pmix_spawn_cbfunc_t`: the new job's namespace (the library's for the call).
    pub type pmix_spawn_cbfunc_t = fn(status: pmix_status_t, nspace: *mut c_char, cbdata: *mut c_void);
}

/// `pmix_query_t`: one query of `PMIx_Query_info`: a NULL-terminated array of keys and
/// `nqual` qualifiers.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_query_t {
    /// The keys asked for, NULL-terminated.
    pub keys: *mut *mut c_char,
    /// The qualifiers (`PMIX_NSPACE`, `PMIX_RANK`, `PMIX_QUERY_REFRESH_CACHE`, …).
    pub qualifiers: *mut pmix_info_t,
    /// The number of qualifiers.
    pub nqual: usize,
}

/// `pmix_pdata_t`: a published value and its publisher.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pmix_pdata_t {
    /// The publisher.
    pub proc_: pmix_proc_t,
    /// The key, NUL-terminated within its 512 bytes.
    pub key: [c_char; PMIX_MAX_KEYLEN + 1],
    /// The value.
    pub value: pmix_value_t,
}

impl pmix_proc_t {
    /// An empty process: no namespace, rank 0 (what `PMIX_PROC_CONSTRUCT` makes).
    pub const EMPTY: Self = Self {
        nspace: [0; PMIX_MAX_NSLEN + 1],
        rank: 0,
    };
}

impl pmix_value_t {
    /// A `PMIX_UNDEF` value holding nothing (what `PMIX_VALUE_CONSTRUCT` makes).
    pub const UNDEF: Self = Self {
        type_: PMIX_UNDEF,
        data: pmix_value_data { raw: [0; 3] },
    };
}

impl pmix_info_t {
    /// An empty info: no key, no flags, `PMIX_UNDEF` (what `PMIX_INFO_CONSTRUCT` makes).
    pub const EMPTY: Self = Self {
        key: [0; PMIX_MAX_KEYLEN + 1],
        flags: 0,
        value: pmix_value_t::UNDEF,
    };
}

impl pmix_pdata_t {
    /// An empty pdata (what `PMIX_PDATA_CONSTRUCT` makes).
    pub const EMPTY: Self = Self {
        proc_: pmix_proc_t::EMPTY,
        key: [0; PMIX_MAX_KEYLEN + 1],
        value: pmix_value_t::UNDEF,
    };
}

c_fn! {
    /// `pmix_release_cbfunc_t`.
    pub type pmix_release_cbfunc_t = fn(cbdata: *mut c_void);
}

c_fn! {
    /// `pmix_device_dist_cbfunc_t`.
    pub type pmix_device_dist_cbfunc_t = fn(status: pmix_status_t, dist: *mut pmix_device_distance_t, ndist: usize, cbdata: *mut c_void, release_fn: pmix_release_cbfunc_t, release_cbdata: *mut c_void);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn layouts_match_abi_md() {
        assert_eq!(size_of::<pmix_proc_t>(), 260);
        assert_eq!(offset_of!(pmix_proc_t, rank), 256);
        assert_eq!(size_of::<pmix_cpuset_t>(), 16);
        assert_eq!(size_of::<pmix_topology_t>(), 16);
        assert_eq!(size_of::<pmix_device_distance_t>(), 32);
        assert_eq!(offset_of!(pmix_device_distance_t, osname), 8);
        assert_eq!(offset_of!(pmix_device_distance_t, type_), 16);
        assert_eq!(offset_of!(pmix_device_distance_t, mindist), 24);
        assert_eq!(offset_of!(pmix_device_distance_t, maxdist), 26);
        assert_eq!(size_of::<pmix_value_data>(), 24);
        assert_eq!(align_of::<pmix_value_data>(), 8);
        assert_eq!(size_of::<pmix_value_t>(), 32);
        assert_eq!(offset_of!(pmix_value_t, data), 8);
        assert_eq!(size_of::<pmix_info_t>(), 552);
        assert_eq!(offset_of!(pmix_info_t, flags), 512);
        assert_eq!(offset_of!(pmix_info_t, value), 520);
        assert_eq!(size_of::<pmix_server_module_t>(), 28 * 8);
        assert_eq!(offset_of!(pmix_server_module_t, client_connected2), 27 * 8);
    }
}
