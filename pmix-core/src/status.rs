//! PMIx status codes (`pmix_status_t`) and their `PMIx_Error_string` texts.
//!
//! The values and texts match OpenPMIx 4.2.2 byte for byte (checked against its
//! `libpmix` by `pmix-ffi/tests/abi.rs::error_strings_match_openpmix`), including its
//! inconsistent separators (`NOT-FOUND`, `NOT_AVAILABLE`, `LOST_CONNECTION`). Every
//! code OpenPMIx 4.2.2's `PMIx_Error_string` names is here (its public names, and for
//! the few it keeps internal, its source's: `PMIX_ERR_TAKE_NEXT_OPTION` and the like);
//! codes this table does not know, positive ones included, give [`UNKNOWN_TEXT`], as
//! OpenPMIx's do.

use core::ffi::CStr;
use core::fmt;

/// The text `PMIx_Error_string` returns for a code it does not know.
pub const UNKNOWN_TEXT: &str = "ERROR STRING NOT FOUND";

/// [`UNKNOWN_TEXT`] as a C string.
pub const UNKNOWN_C_TEXT: &CStr = c"ERROR STRING NOT FOUND";

/// `text`, which ends in its one NUL, as a C string (at compile time).
const fn c_str(text: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(text.as_bytes()) {
        Ok(c) => c,
        Err(_) => panic!("a status text holds a NUL"),
    }
}

/// A PMIx status code, as `pmix_status_t` (a C `int`) carries it.
///
/// Any `i32` is a valid `Status`; the associated constants name the ones this
/// workspace produces or reports.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Status(pub i32);

/// pmix-rs's own codes, past `PMIX_EXTERNAL_ERR_BASE` (-3000), which no OpenPMIx
/// code uses: `PMIx_Error_string` gives them [`UNKNOWN_TEXT`], as OpenPMIx gives
/// any code it does not know.
impl Status {
    /// `PMIXRS_FT_ERR_SIZE` (-3001): a rank-state query's array is too short (the
    /// 2011 thread's `MPI_ERR_SIZE`; `pmix_ft.h`).
    pub const FT_ERR_SIZE: Status = Status(-3001);
    /// `PMIXRS_FT_EVENT_REVOKED` (-3002): the event a rank-state group's revoke
    /// sends to its members (`pmix_ft.h`).
    pub const FT_EVENT_REVOKED: Status = Status(-3002);
}

macro_rules! statuses {
    ($($name:ident = $value:literal, $text:literal;)*) => {
        impl Status {
            $(
                #[doc = concat!("`PMIX_", stringify!($name), "` (", stringify!($value), "), text `", $text, "`.")]
                pub const $name: Status = Status($value);
            )*
        }

        /// Every known status: its value, its C name and its `PMIx_Error_string` text,
        /// also as a C string.
        const TABLE: &[(i32, &str, &str, &CStr)] = &[
            $(($value, concat!("PMIX_", stringify!($name)), $text, c_str(concat!($text, "\0"))),)*
        ];
    };
}

statuses! {
    SUCCESS = 0, "SUCCESS";
    ERROR = -1, "ERROR";
    ERR_PROC_ABORTED = -7, "PROC-ABORTED";
    ERR_WOULD_BLOCK = -15, "WOULD-BLOCK";
    ERR_UNKNOWN_DATA_TYPE = -16, "UNKNOWN-DATA-TYPE";
    ERR_TYPE_MISMATCH = -18, "TYPE-MISMATCH";
    ERR_UNPACK_INADEQUATE_SPACE = -19, "UNPACK-INADEQUATE-SPACE";
    ERR_UNPACK_FAILURE = -20, "UNPACK-FAILURE";
    ERR_PACK_FAILURE = -21, "PACK-FAILURE";
    ERR_TIMEOUT = -24, "TIMEOUT";
    ERR_UNREACH = -25, "UNREACHABLE";
    ERR_BAD_PARAM = -27, "BAD-PARAM";
    ERR_OUT_OF_RESOURCE = -29, "OUT-OF-RESOURCE";
    ERR_DATA_VALUE_NOT_FOUND = -30, "DATA-VALUE-NOT-FOUND";
    ERR_INIT = -31, "INIT";
    ERR_NOMEM = -32, "NO-MEM";
    ERR_NOT_FOUND = -46, "NOT-FOUND";
    ERR_NOT_SUPPORTED = -47, "NOT-SUPPORTED";
    ERR_UNPACK_READ_PAST_END_OF_BUFFER = -50, "UNPACK-PAST-END";
    ERR_PARTIAL_SUCCESS = -52, "PARTIAL SUCCESS";
    ERR_DUPLICATE_KEY = -53, "DUPLICATE KEY";
    ERR_EMPTY = -60, "EMPTY";
    ERR_LOST_CONNECTION = -61, "LOST_CONNECTION";
    ERR_NOT_AVAILABLE = -64, "NOT_AVAILABLE";
    ERR_NOT_A_MEMBER = -66, "NOT-A-MEMBER";
    OPERATION_SUCCEEDED = -157, "OPERATION-SUCCEEDED";
    EVENT_ACTION_COMPLETE = -334, "EVENT-ACTION-COMPLETE";
    GROUP_INVITED = -159, "GROUP-INVITED";
    GROUP_LEFT = -160, "GROUP-LEFT";
    GROUP_INVITE_ACCEPTED = -161, "GROUP-INVITE-ACCEPTED";
    GROUP_INVITE_DECLINED = -162, "GROUP-INVITE-DECLINED";
    GROUP_INVITE_FAILED = -163, "GROUP-INVITE-FAILED";
    GROUP_MEMBERSHIP_UPDATE = -164, "GROUP-MEMBERSHIP-UPDATE";
    GROUP_CONSTRUCT_ABORT = -165, "GROUP-CONSTRUCT-ABORT";
    GROUP_CONSTRUCT_COMPLETE = -166, "GROUP-CONSTRUCT-COMPLETE";
    GROUP_MEMBER_FAILED = -170, "GROUP-MEMBER-FAILED";
    EVENT_JOB_END = -145, "JOB ENDED";
    MODEL_DECLARED = -147, "PMIX MODEL DECLARED";
    ERR_JOB_APP_NOT_EXECUTABLE = -177, "APPLICATION NOT EXECUTABLE";
    ERR_JOB_CANCELED = -180, "JOB CANCELED";
    ERR_JOB_FAILED_TO_LAUNCH = -181, "JOB FAILED TO LAUNCH";
    ERR_JOB_EXE_NOT_FOUND = -190, "EXECUTABLE NOT FOUND";
    ERR_JOB_INSUFFICIENT_RESOURCES = -234, "INSUFFICIENT RESOURCES";
    ERR_PROC_TERM_WO_SYNC = -200, "PROC TERMINATED WITHOUT SYNC";
    EVENT_PROC_TERMINATED = -201, "PROC TERMINATED";
    // The rest of OpenPMIx 4.2.2's codes that PMIx_Error_string names, with its texts.
    ERR_TEMP_UNAVAILABLE = -1367, "PMIX TEMPORARILY UNAVAILABLE";
    ERR_TAKE_NEXT_OPTION = -1366, "TAKE-NEXT-OPTION";
    ERR_FABRIC_NOT_PARSEABLE = -1363, "FABRIC_NOT_PARSEABLE";
    LAUNCH_COMPLETE = -174, "PMIX LAUNCH COMPLETE";
    OPENMP_PARALLEL_EXITED = -153, "OPENMP-PARALLEL-EXITED";
    OPENMP_PARALLEL_ENTERED = -152, "OPENMP-PARALLEL-ENTERED";
    CONNECT_REQUESTED = -150, "CONNECT-REQUESTED";
    PROC_HAS_CONNECTED = -149, "PROC-HAS-CONNECTED";
    GDS_ACTION_COMPLETE = -148, "GDS-ACTION-COMPLETE";
    ERR_UPDATE_ENDPOINTS = -146, "UPDATE-ENDPOINTS";
    ERR_INVALID_TERMINATION = -112, "INVALID-TERMINATION";
    JCTRL_PREEMPT_ALERT = -108, "PMIX PRE-EMPTION ALERT";
    JCTRL_CHECKPOINT_COMPLETE = -107, "PMIX JOB CONTROL CHECKPOINT COMPLETE";
    JCTRL_CHECKPOINT = -106, "PMIX JOB CONTROL CHECKPOINT";
    NOTIFY_ALLOC_COMPLETE = -105, "PMIX ALLOC OPERATION COMPLETE";
    ERR_JOB_WDIR_NOT_ACCESSIBLE = -74, "WDIR NOT ACCESSIBLE";
    ERR_EXE_NOT_ACCESSIBLE = -73, "EXE NOT ACCESSIBLE";
    ERR_PIPE_SETUP_FAILURE = -72, "PIPE_SETUP_FAILURE";
    ERR_SYS_LIMITS_CHILDREN = -71, "SYS_LIMITS_CHILDREN";
    ERR_SYS_LIMITS_PIPES = -70, "SYS_LIMITS_PIPES";
    ERR_FILE_WRITE_FAILURE = -69, "FILE_WRITE_FAILURE";
    ERR_FILE_READ_FAILURE = -68, "FILE_READ_FAILURE";
    ERR_FILE_OPEN_FAILURE = -67, "FILE_OPEN_FAILURE";
    ERR_VALUE_OUT_OF_BOUNDS = -65, "VALUE_OUT_OF_BOUNDS";
    ERR_FATAL = -63, "FATAL";
    DEBUG_WAITING_FOR_NOTIFY = -58, "READY-FOR-DEBUG";
    ERR_NOT_IMPLEMENTED = -48, "NOT-IMPLEMENTED";
    ERR_SERVER_NOT_AVAIL = -45, "SERVER-NOT-AVAIL";
    ERR_INVALID_NAMESPACE = -44, "INVALID-NAMESPACE";
    ERR_INVALID_SIZE = -43, "INVALID-SIZE";
    ERR_INVALID_KEYVALP = -42, "INVALID-KEYVAL";
    ERR_INVALID_NUM_PARSED = -41, "INVALID-NUM-PARSED";
    ERR_INVALID_ARGS = -40, "INVALID-ARGS";
    ERR_INVALID_NUM_ARGS = -39, "INVALID-NUM-ARGS";
    ERR_INVALID_LENGTH = -38, "INVALID-LENGTH";
    ERR_INVALID_VAL_LENGTH = -37, "INVALID-VAL-LENGTH";
    ERR_INVALID_VAL = -36, "INVALID-VAL";
    ERR_INVALID_KEY_LENGTH = -35, "INVALID-KEY-LENGTH";
    ERR_INVALID_KEY = -34, "INVALID-KEY";
    ERR_INVALID_ARG = -33, "INVALID-ARG";
    ERR_IN_ERRNO = -26, "ERR-IN-ERRNO";
    ERR_PACK_MISMATCH = -22, "PACK-MISMATCH";
    ERR_PROC_ENTRY_NOT_FOUND = -17, "PROC-ENTRY-NOT-FOUND";
    ERR_READY_FOR_HANDSHAKE = -14, "READY-FOR-HANDSHAKE";
    ERR_HANDSHAKE_FAILED = -13, "HANDSHAKE-FAILED";
    ERR_SERVER_FAILED_REQUEST = -10, "SERVER FAILED REQUEST";
    ERR_PROC_ABORTING = -9, "PROC-ABORTING";
    ERR_DEBUGGER_RELEASE = -3, "DEBUGGER-RELEASE";
    ERR_SILENT = -2, "SILENT_ERROR";
    ERR_PROC_RESTART = -4, "PROC_RESTART";
    ERR_PROC_CHECKPOINT = -5, "PROC-CHECKPOINT-ERROR";
    ERR_PROC_MIGRATE = -6, "PROC-MIGRATE";
    ERR_EXISTS = -11, "EXISTS";
    ERR_INVALID_CRED = -12, "INVALID-CREDENTIAL";
    ERR_NO_PERMISSIONS = -23, "NO-PERMISSIONS";
    ERR_RESOURCE_BUSY = -28, "RESOURCE-BUSY";
    ERR_PARAM_VALUE_NOT_SUPPORTED = -59, "PARAM-VALUE-NOT-SUPPORTED";
    ERR_COMM_FAILURE = -49, "COMM-FAILURE";
    ERR_CONFLICTING_CLEANUP_DIRECTIVES = -51, "PMIX CONFLICTING CLEANUP DIRECTIVES";
    ERR_EXISTS_OUTSIDE_SCOPE = -62, "OUTSIDE-SCOPE";
    PROCESS_SET_DEFINE = -55, "PROCESS SET DEFINED";
    QUERY_PARTIAL_SUCCESS = -104, "QUERY-PARTIAL-SUCCESS";
    MONITOR_HEARTBEAT_ALERT = -109, "PMIX HEARTBEAT ALERT";
    MONITOR_FILE_ALERT = -110, "PMIX FILE MONITOR ALERT";
    PROC_TERMINATED = -111, "PROC-TERMINATED";
    ERR_EVENT_REGISTRATION = -144, "EVENT-REGISTRATION";
    LAUNCHER_READY = -155, "LAUNCHER-READY";
    OPERATION_IN_PROGRESS = -156, "OPERATION-IN-PROGRESS";
    ERR_INVALID_OPERATION = -158, "INVALID-OPERATION";
    GROUP_LEADER_SELECTED = -167, "GROUP-LEADER-SELECTED";
    GROUP_LEADER_FAILED = -168, "GROUP-LEADER-FAILED";
    GROUP_CONTEXT_ID_ASSIGNED = -169, "GROUP-CONTEXT-ID-ASSIGNED";
    ERR_REPEAT_ATTR_REGISTRATION = -171, "REPEAT-ATTRIBUTE-REGISTRATION";
    ERR_IOF_FAILURE = -172, "IOF FAILURE";
    ERR_IOF_COMPLETE = -173, "IOF COMPLETE";
    FABRIC_UPDATED = -175, "FABRIC-UPDATED";
    FABRIC_UPDATE_PENDING = -176, "FABRIC-UPDATE-PENDING";
    FABRIC_UPDATE_ENDPOINTS = -113, "FABRIC-UPDATE-ENDPOINTS";
    ERR_JOB_NO_EXE_SPECIFIED = -178, "NO EXECUTABLE SPECIFIED";
    ERR_JOB_FAILED_TO_MAP = -179, "JOB FAILED TO MAP";
    ERR_JOB_ABORTED = -182, "JOB ABORTED";
    ERR_JOB_KILLED_BY_CMD = -183, "KILLED BY COMMAND";
    ERR_JOB_ABORTED_BY_SIG = -184, "ABORTED BY SIGNAL";
    ERR_JOB_TERM_WO_SYNC = -185, "TERMINATED WITHOUT SYNC";
    ERR_JOB_SENSOR_BOUND_EXCEEDED = -186, "SENSOR BOUND EXCEEDED";
    ERR_JOB_NON_ZERO_TERM = -187, "NON-ZERO TERMINATION";
    ERR_JOB_ALLOC_FAILED = -188, "FAILED TO OBTAIN ALLOCATION";
    ERR_JOB_ABORTED_BY_SYS_EVENT = -189, "JOB ABORTED BY SYSTEM EVENT";
    ERR_JOB_WDIR_NOT_FOUND = -233, "WORKING DIRECTORY NOT FOUND";
    ERR_JOB_SYS_OP_FAILED = -235, "SYSTEM OPERATION FAILED";
    EVENT_JOB_START = -191, "JOB STARTED";
    EVENT_SESSION_START = -192, "SESSION STARTED";
    EVENT_SESSION_END = -193, "SESSION ENDED";
    ERR_PROC_REQUESTED_ABORT = -8, "PROC-ABORT-REQUESTED";
    ERR_PROC_KILLED_BY_CMD = -400, "PROC-KILLED-BY-CMD";
    ERR_PROC_FAILED_TO_START = -401, "PROC-FAILED-TO-START";
    ERR_PROC_ABORTED_BY_SIG = -402, "PROC-ABORTED-BY-SIG";
    ERR_PROC_SENSOR_BOUND_EXCEEDED = -403, "PROC-SENSOR-BOUND-EXCEEDED";
    ERR_EXIT_NONZERO_TERM = -404, "PROC-EXIT-NONZERO-TERM";
    EVENT_SYS_BASE = -230, "SYSTEM BASE EVENT";
    EVENT_NODE_DOWN = -231, "NODE-DOWN";
    EVENT_NODE_OFFLINE = -232, "NODE-OFFLINE";
    EVENT_SYS_OTHER = -330, "UNDEFINED-SYSTEM-EVENT";
    EVENT_NO_ACTION_TAKEN = -331, "EVENT-NO-ACTION-TAKEN";
    EVENT_PARTIAL_ACTION_TAKEN = -332, "EVENT-PARTIAL-ACTION-TAKEN";
    EVENT_ACTION_DEFERRED = -333, "EVENT-ACTION-DEFERRED";
}

impl Status {
    /// The `PMIx_Error_string` text of this code, or [`UNKNOWN_TEXT`] for a code the
    /// table does not know.
    ///
    /// `PMIX_ERR_NOT_A_MEMBER` (−66) is newer than OpenPMIx 4.2.2, whose
    /// `PMIx_Error_string` answers [`UNKNOWN_TEXT`] for it; we give it a text in the
    /// style of its neighbours.
    pub fn text(self) -> &'static str {
        self.entry().map_or(UNKNOWN_TEXT, |e| e.2)
    }

    /// The `PMIx_Error_string` text of this code as a static C string (what the C ABI
    /// returns), or [`UNKNOWN_C_TEXT`] for a code the table does not know.
    pub fn c_text(self) -> &'static CStr {
        self.entry().map_or(UNKNOWN_C_TEXT, |e| e.3)
    }

    /// The C name of this code (`"PMIX_ERR_NOT_FOUND"`), or `None` for an unknown code.
    pub fn name(self) -> Option<&'static str> {
        self.entry().map(|e| e.1)
    }

    /// `true` for `PMIX_SUCCESS`.
    pub fn is_success(self) -> bool {
        self == Status::SUCCESS
    }

    /// Every status this module names, in table order (for tests and tools).
    pub fn all() -> impl Iterator<Item = Status> {
        TABLE.iter().map(|e| Status(e.0))
    }

    fn entry(self) -> Option<&'static (i32, &'static str, &'static str, &'static CStr)> {
        TABLE.iter().find(|e| e.0 == self.0)
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name}({})", self.0),
            None => write!(f, "Status({})", self.0),
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl From<Status> for i32 {
    fn from(s: Status) -> i32 {
        s.0
    }
}

/// An error that stands for exactly one PMIx status code.
///
/// Every error type of this crate that a PMIx call can return implements it, so the
/// runtime and the C ABI translate errors without tables of their own.
pub trait PmixError {
    /// The status this error is reported as.
    fn status(&self) -> Status;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_match_openpmix_separators() {
        assert_eq!(Status::ERR_NOT_FOUND.text(), "NOT-FOUND");
        assert_eq!(Status::ERR_NOT_AVAILABLE.text(), "NOT_AVAILABLE");
        assert_eq!(Status::ERR_LOST_CONNECTION.text(), "LOST_CONNECTION");
        assert_eq!(Status::ERR_PARTIAL_SUCCESS.text(), "PARTIAL SUCCESS");
        assert_eq!(Status::ERR_UNREACH.text(), "UNREACHABLE");
    }

    #[test]
    fn unknown_codes_positive_and_negative_have_the_fallback_text() {
        for code in [1, 5, 12345, -9999, i32::MIN, i32::MAX] {
            assert_eq!(Status(code).text(), UNKNOWN_TEXT);
            assert_eq!(Status(code).name(), None);
        }
    }

    #[test]
    fn c_texts_are_the_texts_with_their_nul() {
        for s in Status::all().chain([Status(5), Status(-9999)]) {
            assert_eq!(s.c_text().to_bytes(), s.text().as_bytes(), "{s:?}");
        }
        assert_eq!(UNKNOWN_C_TEXT.to_bytes(), UNKNOWN_TEXT.as_bytes());
    }

    #[test]
    fn names_and_values_are_unique() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert_ne!(a.0, b.0);
                assert_ne!(a.1, b.1);
            }
        }
        assert_eq!(Status::ERR_NOT_FOUND.name(), Some("PMIX_ERR_NOT_FOUND"));
        assert_eq!(Status::ERR_NOT_FOUND.0, -46);
    }
}
