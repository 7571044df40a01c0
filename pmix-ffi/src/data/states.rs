//! The state and flag names libpmix2 4.2.2 prints (`PMIx_Proc_state_string`,
//! `PMIx_Job_state_string`, `PMIx_Link_state_string`, `PMIx_Persistence_string`,
//! `PMIx_Alloc_directive_string`, `PMIx_IOF_channel_string`, `PMIx_Device_type_string`,
//! `PMIx_Value_comparison_string`, `PMIx_Info_directives_string`), the attribute
//! names (`PMIx_Get_attribute_string` / `_name`, from our header's keys) and
//! `PMIx_Progress`. Every text is libpmix2's: a test prints every value through both
//! libraries and compares.

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char};
use std::sync::OnceLock;

use crate::boundary::{c_strdup, export, opt_cstr};
use crate::types::*;

/// `pmix_proc_state_t`, `pmix_job_state_t`, `pmix_link_state_t`,
/// `pmix_persistence_t`, `pmix_alloc_directive_t`: one byte each.
type State = u8;

export! {
    /// `PMIx_Proc_state_string`: what process state `state` means (`"PROC EXECUTING"`),
    /// `"UNKNOWN STATE"` for another value. The string is static.
    fn PMIx_Proc_state_string(state: State) -> *const c_char [on_panic: c"UNKNOWN STATE".as_ptr()] {
        let s: &CStr = match state {
            0 => c"UNDEFINED",
            1 => c"PREPPED FOR LAUNCH",
            2 => c"LAUNCH UNDERWAY",
            3 => c"PROC READY FOR RESTART",
            4 => c"PROC MARKED FOR TERMINATION",
            5 => c"PROC EXECUTING",
            6 => c"PROC HAS CONNECTED TO LOCAL PMIX SERVER",
            15 => c"PROC HAS NOT TERMINATED",
            20 => c"PROC HAS TERMINATED",
            50 => c"PROC ERROR",
            51 => c"PROC KILLED BY CMD",
            52 => c"PROC ABNORMALLY ABORTED",
            53 => c"PROC FAILED TO START",
            54 => c"PROC ABORTED BY SIGNAL",
            55 => c"PROC TERMINATED WITHOUT CALLING PMIx_Finalize",
            56 => c"PROC LOST COMMUNICATION",
            57 => c"PROC SENSOR BOUND EXCEEDED",
            58 => c"PROC CALLED PMIx_Abort",
            59 => c"PROC FAILED TO REPORT HEARTBEAT",
            60 => c"PROC WAITING TO MIGRATE",
            61 => c"PROC CANNOT BE RESTARTED",
            62 => c"PROC TERMINATED WITH NON-ZERO STATUS",
            63 => c"PROC FAILED TO LAUNCH",
            _ => c"UNKNOWN STATE",
        };
        s.as_ptr()
    }
}

export! {
    /// `PMIx_Job_state_string`: what job state `state` means (`"RUNNING"`), `"UNKNOWN"`
    /// for another value. The string is static.
    fn PMIx_Job_state_string(state: State) -> *const c_char [on_panic: c"UNKNOWN".as_ptr()] {
        let s: &CStr = match state {
            0 => c"UNDEFINED",
            1 => c"PREPPED FOR LAUNCH",
            2 => c"LAUNCHING",
            3 => c"RUNNING",
            4 => c"SUSPENDED",
            5 => c"CONNECTED",
            15 => c"UNTERMINATED",
            20 => c"TERMINATED",
            50 => c"TERMINATED WITH ERROR",
            _ => c"UNKNOWN",
        };
        s.as_ptr()
    }
}

export! {
    /// `PMIx_Link_state_string`: `"INACTIVE"`, `"ACTIVE"`, else `"UNKNOWN"`. The string
    /// is static.
    fn PMIx_Link_state_string(state: State) -> *const c_char [on_panic: c"UNKNOWN".as_ptr()] {
        let s: &CStr = match state {
            1 => c"INACTIVE",
            2 => c"ACTIVE",
            _ => c"UNKNOWN",
        };
        s.as_ptr()
    }
}

export! {
    /// `PMIx_Persistence_string`: what persistence `persist` means, `"UNKNOWN
    /// PERSISTENCE"` for another value. The string is static.
    fn PMIx_Persistence_string(persist: State) -> *const c_char [on_panic: c"UNKNOWN PERSISTENCE".as_ptr()] {
        let s: &CStr = match persist {
            0 => c"INDEFINITE",
            1 => c"DELETE ON FIRST ACCESS",
            2 => c"RETAIN UNTIL PUBLISHING PROCESS TERMINATES",
            3 => c"RETAIN UNTIL APPLICATION OF PUBLISHING PROCESS TERMINATES",
            4 => c"RETAIN UNTIL ALLOCATION OF PUBLISHING PROCESS TERMINATES",
            255 => c"INVALID",
            _ => c"UNKNOWN PERSISTENCE",
        };
        s.as_ptr()
    }
}

export! {
    /// `PMIx_Alloc_directive_string`: `"NEW"`, `"EXTEND"`, `"RELEASE"`, `"REACQUIRE"`,
    /// else `"UNSPECIFIED"`. The string is static.
    fn PMIx_Alloc_directive_string(directive: State) -> *const c_char [on_panic: c"UNSPECIFIED".as_ptr()] {
        let s: &CStr = match directive {
            1 => c"NEW",
            2 => c"EXTEND",
            3 => c"RELEASE",
            4 => c"REACQUIRE",
            _ => c"UNSPECIFIED",
        };
        s.as_ptr()
    }
}

/// The texts `PMIx_IOF_channel_string` gives the 16 combinations of its four bits.
fn iof_texts() -> &'static [CString; 16] {
    static TEXTS: OnceLock<[CString; 16]> = OnceLock::new();
    TEXTS.get_or_init(|| {
        std::array::from_fn(|bits| {
            let names = ["STDIN", "STDOUT", "STDERR", "STDDIAG"];
            let mut s = String::new();
            for (i, n) in names.iter().enumerate() {
                if bits & (1 << i) != 0 {
                    s.push_str(n);
                    s.push(' ');
                }
            }
            if s.is_empty() {
                s.push_str("NONE");
            }
            CString::new(s).unwrap_or_default()
        })
    })
}

export! {
    /// `PMIx_IOF_channel_string`: the channels of `channel` (`"STDOUT STDERR "`, each
    /// followed by a space, as libpmix2 writes them), `"NONE"` when none of the four is
    /// set (other bits are ignored). The string is static.
    fn PMIx_IOF_channel_string(channel: u16) -> *const c_char [on_panic: c"NONE".as_ptr()] {
        iof_texts()[usize::from(channel & 0xf)].as_ptr()
    }
}

export! {
    /// `PMIx_Device_type_string`: the name of one device type (`"GPU"`), `"UNKNOWN"` for
    /// none, a combination or another bit (as libpmix2). The string is static.
    fn PMIx_Device_type_string(type_: pmix_device_type_t) -> *const c_char [on_panic: c"UNKNOWN".as_ptr()] {
        let s: &CStr = match type_ {
            0x01 => c"BLOCK",
            0x02 => c"GPU",
            0x04 => c"NETWORK",
            0x08 => c"OPENFABRICS",
            0x10 => c"DMA",
            0x20 => c"COPROCESSOR",
            _ => c"UNKNOWN",
        };
        s.as_ptr()
    }
}

export! {
    /// `PMIx_Value_comparison_string`: what a `pmix_value_cmp_t` means (`"EQUAL"`),
    /// `"UNKNOWN VALUE"` for another value. The string is static.
    fn PMIx_Value_comparison_string(cmp: std::ffi::c_int) -> *const c_char [on_panic: c"UNKNOWN VALUE".as_ptr()] {
        let s: &CStr = match cmp {
            0 => c"EQUAL",
            1 => c"VALUE1 GREATER",
            2 => c"VALUE2 GREATER",
            3 => c"DIFFERENT TYPES",
            4 => c"INCOMPATIBLE OBJECTS",
            5 => c"COMPARISON NOT AVAILABLE",
            _ => c"UNKNOWN VALUE",
        };
        s.as_ptr()
    }
}

export! {
    /// `PMIx_Info_directives_string`: the flags of `directives` as libpmix2 writes them
    /// (`"REQUIRED:PROCESSED:END"`; `"QUALIFIER"` alone when that bit is set). The
    /// string is `malloc`ed: the caller frees it (NULL when out of memory).
    fn PMIx_Info_directives_string(directives: pmix_info_directives_t) -> *mut c_char [on_panic: std::ptr::null_mut()] {
        const REQD: u32 = 0x1;
        const END: u32 = 0x2;
        const PROCESSED: u32 = 0x4;
        const QUALIFIER: u32 = 0x8;
        if directives & QUALIFIER != 0 {
            return c_strdup("QUALIFIER");
        }
        let mut s = String::from(if directives & REQD != 0 { "REQUIRED" } else { "OPTIONAL" });
        if directives & PROCESSED != 0 {
            s.push_str(":PROCESSED");
        }
        if directives & END != 0 {
            s.push_str(":END");
        }
        c_strdup(&s)
    }
}

/// Our header's keys both ways, NUL-terminated and static: `"PMIX_JOB_SIZE"` →
/// `"pmix.job.size"`, and back.
fn attribute_maps() -> &'static (HashMap<String, CString>, HashMap<String, CString>) {
    static MAPS: OnceLock<(HashMap<String, CString>, HashMap<String, CString>)> = OnceLock::new();
    MAPS.get_or_init(|| {
        let mut by_name = HashMap::new();
        let mut by_key = HashMap::new();
        for (key, name) in crate::data::strings::key_names() {
            if let (Ok(k), Ok(n)) = (CString::new(*key), CString::new(*name)) {
                by_name.insert((*name).to_owned(), k);
                by_key.insert((*key).to_owned(), n);
            }
        }
        (by_name, by_key)
    })
}

export! {
    /// `PMIx_Get_attribute_string`: the key string of the attribute named `attribute`
    /// (`"PMIX_JOB_SIZE"` → `"pmix.job.size"`); an unknown name (or NULL, or one that
    /// is not UTF-8) is returned as given.
    ///
    /// # C contract
    /// `attribute` is NULL or a NUL-terminated string.
    fn PMIx_Get_attribute_string(attribute: *const c_char) -> *const c_char [on_panic: attribute] {
        lookup(attribute, opt_cstr!(attribute), &attribute_maps().0)
    }
}

export! {
    /// `PMIx_Get_attribute_name`: the name of the attribute whose key is `attrstring`
    /// (`"pmix.job.size"` → `"PMIX_JOB_SIZE"`); an unknown key (or NULL, or one that is
    /// not UTF-8) is returned as given.
    ///
    /// # C contract
    /// `attrstring` is NULL or a NUL-terminated string.
    fn PMIx_Get_attribute_name(attrstring: *const c_char) -> *const c_char [on_panic: attrstring] {
        lookup(attrstring, opt_cstr!(attrstring), &attribute_maps().1)
    }
}

/// `map`'s string for the text `s` of the pointer `p`, else `p` itself.
fn lookup(
    p: *const c_char,
    s: Option<&CStr>,
    map: &'static HashMap<String, CString>,
) -> *const c_char {
    s.and_then(|s| s.to_str().ok())
        .and_then(|s| map.get(s))
        .map_or(p, |c| c.as_ptr())
}

export! {
    /// `PMIx_Progress`: lets the library make progress. Ours has its own progress
    /// thread, always running, so there is nothing to do: it returns at once.
    fn PMIx_Progress() {}
}
