//! `PMIx_Error_string` and `PMIx_Get_version`: each returns a static C string that C
//! never frees.
//!
//! The status texts are pmix-core's (its `statuses!` table, the one list of codes,
//! names and texts), as C strings through `c_text`. The core's table holds them as
//! Rust strings, without the NUL C needs, so until it also holds them as C-string
//! literals (`Status::c_text() -> &'static CStr`, a change of pmix-core's macro), the
//! `interim` table NUL-terminates each text once, on first use; with that change,
//! `c_text`'s one line becomes `status.c_text()` and `interim` goes.

use std::ffi::{CStr, c_char};

use pmix_core::Status;

use crate::boundary::value_boundary;
use crate::types::pmix_status_t;

/// The text of a code no table knows (`pmix_core::status::UNKNOWN_TEXT`, with its NUL).
const UNKNOWN: &CStr = c"ERROR STRING NOT FOUND";

/// The `PMIx_Error_string` text of `status` as a static C string: the core's text
/// byte for byte, or [`UNKNOWN`] for a code the core does not know.
fn c_text(status: Status) -> &'static CStr {
    interim::c_text(status)
}

/// The status texts NUL-terminated once, until pmix-core's table holds them as C
/// strings (see the module docs).
mod interim {
    use std::ffi::{CStr, CString};
    use std::sync::LazyLock;

    use pmix_core::Status;

    /// Every known status's text as a C string, built on first use and never freed.
    static TEXTS: LazyLock<Vec<(Status, CString)>> = LazyLock::new(|| {
        Status::all()
            .filter_map(|s| Some((s, CString::new(s.text()).ok()?)))
            .collect()
    });

    /// The text of `status`, or [`super::UNKNOWN`].
    pub(super) fn c_text(status: Status) -> &'static CStr {
        TEXTS
            .iter()
            .find(|(s, _)| *s == status)
            .map_or(super::UNKNOWN, |(_, text)| text.as_c_str())
    }
}

/// `PMIx_Error_string`: the text of `status`, byte for byte as OpenPMIx 4.2.2's
/// (`"NOT-FOUND"`), or `"ERROR STRING NOT FOUND"` for a code it does not know. The
/// string is static.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Error_string(status: pmix_status_t) -> *const c_char {
    value_boundary(UNKNOWN.as_ptr(), || c_text(Status(status)).as_ptr())
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

/// `PMIx_Get_version`: `"pmix-rs <version> (OpenPMIx 4.2.2 API subset)"`, static.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Get_version() -> *const c_char {
    value_boundary(VERSION_FALLBACK.as_ptr(), || VERSION.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix_core::status::UNKNOWN_TEXT;

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
