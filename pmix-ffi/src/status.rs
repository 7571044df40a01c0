//! `PMIx_Error_string` and `PMIx_Get_version`.

use std::ffi::{CString, c_char};
use std::sync::LazyLock;

use pmix_core::Status;

use crate::boundary::value_boundary;
use crate::types::pmix_status_t;

/// Every known status's text as a C string, built once and never freed.
static TEXTS: LazyLock<Vec<(i32, CString)>> = LazyLock::new(|| {
    Status::all()
        .map(|s| (s.0, CString::new(s.text()).unwrap_or_default()))
        .collect()
});

const UNKNOWN: &std::ffi::CStr = c"ERROR STRING NOT FOUND";

/// `PMIx_Error_string`: the text of `status`, byte for byte as OpenPMIx 4.2.2's
/// (`"NOT-FOUND"`), or `"ERROR STRING NOT FOUND"` for a code it does not know. The
/// string is static.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Error_string(status: pmix_status_t) -> *const c_char {
    value_boundary(UNKNOWN.as_ptr(), || {
        TEXTS
            .iter()
            .find(|(code, _)| *code == status)
            .map_or(UNKNOWN.as_ptr(), |(_, text)| text.as_ptr())
    })
}

/// What `PMIx_Get_version` answers should building its text ever fail.
const VERSION_FALLBACK: &std::ffi::CStr = c"pmix-rs";

/// The version text, built once and never freed.
static VERSION: LazyLock<CString> = LazyLock::new(|| {
    CString::new(format!(
        "pmix-rs {} (OpenPMIx 4.2.2 API subset)",
        env!("CARGO_PKG_VERSION")
    ))
    .unwrap_or_default()
});

/// `PMIx_Get_version`: `"pmix-rs <version> (OpenPMIx 4.2.2 API subset)"`, static (or
/// `"pmix-rs"` should building that text ever panic).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Get_version() -> *const c_char {
    value_boundary(VERSION_FALLBACK.as_ptr(), || VERSION.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix_core::status::UNKNOWN_TEXT;
    use std::ffi::CStr;

    #[test]
    fn texts_are_the_cores() {
        for s in Status::all().chain([Status(5), Status(-9999)]) {
            // SAFETY: PMIx_Error_string returns a static C string.
            let text = unsafe { CStr::from_ptr(PMIx_Error_string(s.0)) };
            assert_eq!(text.to_str().unwrap(), s.text());
        }
        assert_eq!(UNKNOWN.to_str().unwrap(), UNKNOWN_TEXT);
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
