//! The printing helpers of python3-pmix's `PMIxClient` (`proc_state_string`,
//! `scope_string`, …, `get_attribute_name` / `_string`), with libpmix2 4.2.2's texts
//! (the same tables as the C library's, `pmix-ffi/src/data/states.rs` and
//! `strings.rs`; pmix-py does not link the C library). They need no `init`, as in
//! python3-pmix.
//!
//! An attribute's name and key both ways come from the module's constants (the
//! string `#define`s of the C headers): a key several names share is named by the
//! first in alphabetical order, as libpmix2 names it; an unknown name or key is
//! given back as it came.

use std::collections::HashMap;
use std::sync::OnceLock;

/// `PMIx_Proc_state_string`.
pub(crate) fn proc_state(state: u8) -> &'static str {
    match state {
        0 => "UNDEFINED",
        1 => "PREPPED FOR LAUNCH",
        2 => "LAUNCH UNDERWAY",
        3 => "PROC READY FOR RESTART",
        4 => "PROC MARKED FOR TERMINATION",
        5 => "PROC EXECUTING",
        6 => "PROC HAS CONNECTED TO LOCAL PMIX SERVER",
        15 => "PROC HAS NOT TERMINATED",
        20 => "PROC HAS TERMINATED",
        50 => "PROC ERROR",
        51 => "PROC KILLED BY CMD",
        52 => "PROC ABNORMALLY ABORTED",
        53 => "PROC FAILED TO START",
        54 => "PROC ABORTED BY SIGNAL",
        55 => "PROC TERMINATED WITHOUT CALLING PMIx_Finalize",
        56 => "PROC LOST COMMUNICATION",
        57 => "PROC SENSOR BOUND EXCEEDED",
        58 => "PROC CALLED PMIx_Abort",
        59 => "PROC FAILED TO REPORT HEARTBEAT",
        60 => "PROC WAITING TO MIGRATE",
        61 => "PROC CANNOT BE RESTARTED",
        62 => "PROC TERMINATED WITH NON-ZERO STATUS",
        63 => "PROC FAILED TO LAUNCH",
        _ => "UNKNOWN STATE",
    }
}

/// `PMIx_Job_state_string`.
pub(crate) fn job_state(state: u8) -> &'static str {
    match state {
        0 => "UNDEFINED",
        1 => "PREPPED FOR LAUNCH",
        2 => "LAUNCHING",
        3 => "RUNNING",
        4 => "SUSPENDED",
        5 => "CONNECTED",
        15 => "UNTERMINATED",
        20 => "TERMINATED",
        50 => "TERMINATED WITH ERROR",
        _ => "UNKNOWN",
    }
}

/// `PMIx_Link_state_string`.
pub(crate) fn link_state(state: u8) -> &'static str {
    match state {
        1 => "INACTIVE",
        2 => "ACTIVE",
        _ => "UNKNOWN",
    }
}

/// `PMIx_Scope_string`.
pub(crate) fn scope(scope: u8) -> &'static str {
    match scope {
        0 => "UNDEFINED",
        1 => "SHARE ON LOCAL NODE ONLY",
        2 => "SHARE ON REMOTE NODES ONLY",
        3 => "SHARE ACROSS ALL NODES",
        4 => "STORE INTERNALLY",
        _ => "UNKNOWN SCOPE",
    }
}

/// `PMIx_Persistence_string`.
pub(crate) fn persistence(persist: u8) -> &'static str {
    match persist {
        0 => "INDEFINITE",
        1 => "DELETE ON FIRST ACCESS",
        2 => "RETAIN UNTIL PUBLISHING PROCESS TERMINATES",
        3 => "RETAIN UNTIL APPLICATION OF PUBLISHING PROCESS TERMINATES",
        4 => "RETAIN UNTIL ALLOCATION OF PUBLISHING PROCESS TERMINATES",
        255 => "INVALID",
        _ => "UNKNOWN PERSISTENCE",
    }
}

/// `PMIx_Data_range_string` (`PMIX_RANGE_INVALID`, 255, included).
pub(crate) fn data_range(range: u8) -> &'static str {
    match range {
        0 => "UNDEFINED",
        1 => "INTENDED FOR HOST RESOURCE MANAGER ONLY",
        2 => "AVAIL ON LOCAL NODE ONLY",
        3 => "AVAIL TO PROCESSES IN SAME JOB ONLY",
        4 => "AVAIL TO PROCESSES IN SAME ALLOCATION ONLY",
        5 => "AVAIL TO ANYONE WITH AUTHORIZATION",
        6 => "AVAIL AS SPECIFIED IN DIRECTIVES",
        7 => "AVAIL ON LOCAL PROC ONLY",
        255 => "INVALID",
        _ => "UNKNOWN",
    }
}

/// `PMIx_Alloc_directive_string`.
pub(crate) fn alloc_directive(directive: u8) -> &'static str {
    match directive {
        1 => "NEW",
        2 => "EXTEND",
        3 => "RELEASE",
        4 => "REACQUIRE",
        _ => "UNSPECIFIED",
    }
}

/// `PMIx_Device_type_string`: one type's name; none, a combination or another bit
/// is `"UNKNOWN"`.
pub(crate) fn device_type(t: u64) -> &'static str {
    match t {
        0x01 => "BLOCK",
        0x02 => "GPU",
        0x04 => "NETWORK",
        0x08 => "OPENFABRICS",
        0x10 => "DMA",
        0x20 => "COPROCESSOR",
        _ => "UNKNOWN",
    }
}

/// `PMIx_IOF_channel_string`: each channel of the low four bits followed by a space,
/// `"NONE"` for none of them.
pub(crate) fn iof_channel(channel: u16) -> String {
    let mut s = String::new();
    for (i, n) in ["STDIN", "STDOUT", "STDERR", "STDDIAG"].iter().enumerate() {
        if channel & (1 << i) != 0 {
            s.push_str(n);
            s.push(' ');
        }
    }
    if s.is_empty() {
        s.push_str("NONE");
    }
    s
}

/// `PMIx_Info_directives_string`: `"QUALIFIER"` when that bit is set, else
/// `REQUIRED` or `OPTIONAL`, then `:PROCESSED` and `:END` when set.
pub(crate) fn info_directives(directives: u32) -> String {
    const REQD: u32 = 0x1;
    const END: u32 = 0x2;
    const PROCESSED: u32 = 0x4;
    const QUALIFIER: u32 = 0x8;
    if directives & QUALIFIER != 0 {
        return "QUALIFIER".into();
    }
    let mut s = String::from(if directives & REQD != 0 {
        "REQUIRED"
    } else {
        "OPTIONAL"
    });
    if directives & PROCESSED != 0 {
        s.push_str(":PROCESSED");
    }
    if directives & END != 0 {
        s.push_str(":END");
    }
    s
}

/// Type names, indexed by `pmix_data_type_t` (libpmix2's texts; 0 is `"UNKNOWN"`).
const TYPE_NAMES: [&str; 70] = [
    "UNKNOWN",
    "PMIX_BOOL",
    "PMIX_BYTE",
    "PMIX_STRING",
    "PMIX_SIZE",
    "PMIX_PID",
    "PMIX_INT",
    "PMIX_INT8",
    "PMIX_INT16",
    "PMIX_INT32",
    "PMIX_INT64",
    "PMIX_UINT",
    "PMIX_UINT8",
    "PMIX_UINT16",
    "PMIX_UINT32",
    "PMIX_UINT64",
    "PMIX_FLOAT",
    "PMIX_DOUBLE",
    "PMIX_TIMEVAL",
    "PMIX_TIME",
    "PMIX_STATUS",
    "PMIX_VALUE",
    "PMIX_PROC",
    "PMIX_APP",
    "PMIX_INFO",
    "PMIX_PDATA",
    "PMIX_BUFFER",
    "PMIX_BYTE_OBJECT",
    "PMIX_KVAL",
    "PMIX_MODEX",
    "PMIX_PERSIST",
    "PMIX_POINTER",
    "PMIX_SCOPE",
    "PMIX_DATA_RANGE",
    "PMIX_COMMAND",
    "PMIX_INFO_DIRECTIVES",
    "PMIX_DATA_TYPE",
    "PMIX_PROC_STATE",
    "PMIX_PROC_INFO",
    "PMIX_DATA_ARRAY",
    "PMIX_PROC_RANK",
    "PMIX_QUERY",
    "PMIX_COMPRESSED_STRING",
    "PMIX_ALLOC_DIRECTIVE",
    "PMIX_INFO_ARRAY",
    "PMIX_IOF_CHANNEL",
    "PMIX_ENVAR",
    "PMIX_COORD",
    "PMIX_REGATTR",
    "PMIX_REGEX",
    "PMIX_JOB_STATE",
    "PMIX_LINK_STATE",
    "PMIX_PROC_CPUSET",
    "PMIX_GEOMETRY",
    "PMIX_DEVICE_DIST",
    "PMIX_ENDPOINT",
    "PMIX_TOPO",
    "PMIX_DEVTYPE",
    "PMIX_LOCTYPE",
    "PMIX_COMPRESSED_BYTE_OBJECT",
    "PMIX_PROC_NSPACE",
    "PMIX_PROC_STATS",
    "PMIX_DISK_STATS",
    "PMIX_NET_STATS",
    "PMIX_NODE_STATS",
    "PMIX_DATA_BUFFER",
    "PMIX_STOR_MEDIUM",
    "PMIX_STOR_ACCESS",
    "PMIX_STOR_PERSIST",
    "PMIX_STOR_ACCESS_TYPE",
];

/// `PMIx_Data_type_string`.
pub(crate) fn data_type(t: u16) -> &'static str {
    TYPE_NAMES.get(usize::from(t)).copied().unwrap_or("UNKNOWN")
}

/// Attribute names to keys, and keys to names.
type Attributes = (
    HashMap<&'static str, &'static str>,
    HashMap<&'static str, &'static str>,
);

/// The attribute names and keys both ways (module docs).
fn attributes() -> &'static Attributes {
    static MAPS: OnceLock<Attributes> = OnceLock::new();
    MAPS.get_or_init(|| {
        let mut by_name = HashMap::new();
        let mut by_key = HashMap::new();
        // STRS is in name order: the first name of a key is kept.
        for (name, key) in crate::constants::STRS {
            by_name.insert(*name, *key);
            by_key.entry(*key).or_insert(*name);
        }
        (by_name, by_key)
    })
}

/// `PMIx_Get_attribute_string`: the key of the attribute `name` (`"PMIX_JOB_SIZE"`
/// → `"pmix.job.size"`), or `name` itself.
pub(crate) fn attribute_string(name: &str) -> String {
    attributes().0.get(name).copied().unwrap_or(name).to_owned()
}

/// `PMIx_Get_attribute_name`: the name of the attribute whose key is `key`
/// (`"pmix.job.size"` → `"PMIX_JOB_SIZE"`), or `key` itself.
pub(crate) fn attribute_name(key: &str) -> String {
    attributes().1.get(key).copied().unwrap_or(key).to_owned()
}
