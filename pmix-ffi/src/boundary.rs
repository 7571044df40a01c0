//! The panic boundary every exported function runs its body in, and the C-memory
//! helpers (`malloc`'ed strings the caller frees with `free`).

use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use pmix_core::Status;

use crate::types::pmix_status_t;

/// The result of an exported function's body: success or the status to return.
pub(crate) type Res = Result<(), Status>;

/// Runs `body`, turning its error into its status and a panic into `PMIX_ERROR`: no
/// panic crosses the ABI.
pub(crate) fn status_boundary(body: impl FnOnce() -> Res) -> pmix_status_t {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => Status::SUCCESS.0,
        Ok(Err(s)) => s.0,
        Err(_) => Status::ERROR.0,
    }
}

/// Runs `body` for a function that returns a value: `fallback` if it panics.
pub(crate) fn value_boundary<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// `PMIX_ERR_BAD_PARAM`.
pub(crate) const BAD_PARAM: Status = Status::ERR_BAD_PARAM;

/// Reads a NUL-terminated string of at most `max` bytes (NUL excluded) without reading
/// past its NUL or past `max + 1` bytes.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for NULL, no NUL within `max + 1` bytes, or bytes that are not
/// UTF-8.
///
/// # Safety
/// `p`, when not NULL, must be readable up to its NUL or for `max + 1` bytes, whichever
/// comes first, and stay unchanged while the returned borrow lives.
pub(crate) unsafe fn bounded_str<'a>(p: *const c_char, max: usize) -> Result<&'a str, Status> {
    if p.is_null() {
        return Err(BAD_PARAM);
    }
    let mut len = 0;
    loop {
        if len > max {
            return Err(BAD_PARAM);
        }
        // SAFETY: the caller guarantees `p` is readable up to its NUL or `max + 1`
        // bytes; `len <= max` and no NUL was seen before `len`.
        if unsafe { *p.add(len) } == 0 {
            break;
        }
        len += 1;
    }
    // SAFETY: the `len + 1` bytes from `p` were just read and end with the NUL.
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|_| BAD_PARAM)
}

/// A `malloc`ed, NUL-terminated copy of `s` (which holds no NUL), or NULL when memory is
/// short. Freed by the caller with `free`.
pub(crate) fn c_strdup(s: &str) -> *mut c_char {
    // SAFETY: malloc may be called with any size; the result is checked for NULL.
    let p = unsafe { libc::malloc(s.len() + 1) }.cast::<u8>();
    if !p.is_null() {
        // SAFETY: `p` holds `s.len() + 1` writable bytes that do not overlap `s`.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), p, s.len());
            *p.add(s.len()) = 0;
        }
    }
    p.cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_pmix_error() {
        assert_eq!(status_boundary(|| panic!("x")), -1);
        assert_eq!(status_boundary(|| Err(Status::ERR_NOT_FOUND)), -46);
        assert_eq!(status_boundary(|| Ok(())), 0);
        assert_eq!(value_boundary(7, || panic!("x")), 7);
    }

    #[test]
    fn bounded_strings() {
        let ok = c"eth0";
        // SAFETY: a valid C string.
        assert_eq!(unsafe { bounded_str(ok.as_ptr(), 4) }, Ok("eth0"));
        // SAFETY: readable for 4 + 1 bytes at least (it is 5 bytes with its NUL).
        assert_eq!(unsafe { bounded_str(ok.as_ptr(), 3) }, Err(BAD_PARAM));
        // SAFETY: NULL is handled.
        assert_eq!(unsafe { bounded_str(std::ptr::null(), 3) }, Err(BAD_PARAM));
        let bad = [0xffu8 as c_char, 0];
        // SAFETY: a NUL-terminated array.
        assert_eq!(unsafe { bounded_str(bad.as_ptr(), 8) }, Err(BAD_PARAM));
        let p = c_strdup("abc");
        // SAFETY: c_strdup returns a malloc'ed C string (or NULL).
        unsafe {
            assert_eq!(CStr::from_ptr(p).to_str(), Ok("abc"));
            libc::free(p.cast());
        }
    }
}
