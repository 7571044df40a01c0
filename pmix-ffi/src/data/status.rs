//! `PMIx_Error_string` and `PMIx_Get_version`: each returns a static C string that C
//! never frees.
//!
//! The status texts are pmix-core's: its `statuses!` table, the one list of codes,
//! names and texts, holds each text also as a static C string
//! ([`Status::c_text`]), so nothing is built at run time.

use std::ffi::{CStr, c_char};

use pmix_core::Status;

use crate::boundary::export;
use crate::types::pmix_status_t;

/// The text of a code no table knows (`pmix_core::status::UNKNOWN_C_TEXT`).
const UNKNOWN: &CStr = pmix_core::status::UNKNOWN_C_TEXT;

/// The `PMIx_Error_string` text of `status` as a static C string: the core's text
/// byte for byte, or [`UNKNOWN`] for a code the core does not know.
fn c_text(status: Status) -> &'static CStr {
    status.c_text()
}

export! {
    /// `PMIx_Error_string`: the text of `status`, byte for byte as OpenPMIx 4.2.2's
    /// (`"NOT-FOUND"`), or `"ERROR STRING NOT FOUND"` for a code it does not know. The
    /// string is static.
    fn PMIx_Error_string(status: pmix_status_t) -> *const c_char [on_panic: UNKNOWN.as_ptr()] {
        c_text(Status(status)).as_ptr()
    }
}

/// What `PMIx_Get_version` answers should its body ever panic (it cannot: the text is
/// a constant).
const VERSION_FALLBACK: &CStr = c"pmix-rs";

/// The version text, with its NUL, fixed at compile time.
const VERSION: &CStr = match CStr::from_bytes_with_nul(
    concat!(
        "pmix-rs ",
        env!("CARGO_PKG_VERSION"),
        " (OpenPMIx 4.2.2 API subset)\0"
    )
    .as_bytes(),
) {
    Ok(text) => text,
    Err(_) => panic!("the version text holds a NUL"),
};

export! {
    /// `PMIx_Get_version`: `"pmix-rs <version> (OpenPMIx 4.2.2 API subset)"`, static.
    fn PMIx_Get_version() -> *const c_char [on_panic: VERSION_FALLBACK.as_ptr()] {
        VERSION.as_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix_core::status::UNKNOWN_TEXT;

    #[test]
    fn texts_are_the_cores() {
        for s in Status::all().chain([Status(5), Status(i32::MIN)]) {
            // SAFETY: PMIx_Error_string returns a static C string.
            let text = unsafe { CStr::from_ptr(PMIx_Error_string(s.0)) };
            assert_eq!(text.to_str().unwrap(), s.text());
        }
        assert_eq!(UNKNOWN.to_str().unwrap(), UNKNOWN_TEXT);
    }

    #[test]
    fn each_text_is_one_static_string_returned_at_the_same_address_every_time() {
        for s in Status::all().chain([Status(5)]) {
            assert_eq!(PMIx_Error_string(s.0), PMIx_Error_string(s.0), "{s:?}");
            assert_eq!(c_text(s).to_str().unwrap(), s.text(), "{s:?}");
        }
        assert_eq!(PMIx_Get_version(), PMIx_Get_version());
    }

    #[test]
    fn the_version_names_the_library_and_the_api_it_follows() {
        // SAFETY: PMIx_Get_version returns a static C string.
        let v = unsafe { CStr::from_ptr(PMIx_Get_version()) }
            .to_str()
            .unwrap();
        assert_eq!(
            v,
            format!(
                "pmix-rs {} (OpenPMIx 4.2.2 API subset)",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert!(v.starts_with(VERSION_FALLBACK.to_str().unwrap()));
    }
}
