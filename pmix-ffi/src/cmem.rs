//! C memory: the objects the library allocates for C and the one way it frees them.
//!
//! C releases what the library hands it with `free` (directly, or through the header's
//! macros and destruct calls), so each such object is `malloc`ed here; an allocation
//! that fails is `PMIX_ERR_NOMEM`, never an abort. Memory the library keeps for itself
//! (lists, results held until a `release_fn`) is Rust's.

use std::ffi::{c_char, c_void};

use pmix_core::Status;

/// A `malloc`ed copy of `items` (C frees it with `free`, or with the header's macro for
/// its type); NULL for none.
///
/// # Errors
/// `PMIX_ERR_NOMEM` (nothing is left allocated).
pub(crate) fn c_copy<T: Copy>(items: &[T]) -> Result<*mut T, Status> {
    if items.is_empty() {
        return Ok(std::ptr::null_mut());
    }
    // SAFETY: malloc may be called with any size (a slice's size fits in `isize`); the
    // result is checked for NULL.
    let p = unsafe { libc::malloc(size_of_val(items)) }.cast::<T>();
    if p.is_null() {
        return Err(Status::ERR_NOMEM);
    }
    // SAFETY: `p` is a fresh allocation with room for `items.len()` `T`s, aligned for
    // any C type (malloc's guarantee; `T` is one), not overlapping `items`.
    unsafe { std::ptr::copy_nonoverlapping(items.as_ptr(), p, items.len()) };
    Ok(p)
}

/// A `malloc`ed copy of one `item`.
///
/// # Errors
/// `PMIX_ERR_NOMEM`.
pub(crate) fn c_box<T: Copy>(item: T) -> Result<*mut T, Status> {
    c_copy(std::slice::from_ref(&item))
}

/// A `malloc`ed array of `n` copies of `item`, for a count C chose (no Rust allocation
/// of that size is made, so a count no memory holds is `PMIX_ERR_NOMEM`, not an abort);
/// NULL for none.
///
/// # Errors
/// `PMIX_ERR_NOMEM` for a size that overflows or cannot be allocated.
pub(crate) fn c_fill<T: Copy>(n: usize, item: T) -> Result<*mut T, Status> {
    if n == 0 {
        return Ok(std::ptr::null_mut());
    }
    let p = c_calloc(n, size_of::<T>())?.cast::<T>();
    for k in 0..n {
        // SAFETY: `p` holds `n` `T`s, aligned for any C type, and `k < n`.
        unsafe { p.add(k).write(item) };
    }
    Ok(p)
}

/// A `calloc`ed block of `n` zeroed elements of `size` bytes.
///
/// # Errors
/// `PMIX_ERR_NOMEM` for `n × size` overflowing or not allocated, or 0.
pub(crate) fn c_calloc(n: usize, size: usize) -> Result<*mut c_void, Status> {
    if n.checked_mul(size)
        .is_none_or(|b| b == 0 || b > isize::MAX as usize)
    {
        return Err(Status::ERR_NOMEM);
    }
    // SAFETY: calloc may be called with any sizes (it checks `n × size` itself); the
    // result is checked for NULL.
    let p = unsafe { libc::calloc(n, size) };
    if p.is_null() {
        Err(Status::ERR_NOMEM)
    } else {
        Ok(p)
    }
}

/// A `malloc`ed, NUL-terminated copy of the bytes `s` (which hold no NUL).
///
/// # Errors
/// `PMIX_ERR_NOMEM`.
pub(crate) fn c_string(s: &[u8]) -> Result<*mut c_char, Status> {
    // SAFETY: malloc may be called with any size; the result is checked for NULL.
    let p = unsafe { libc::malloc(s.len() + 1) }.cast::<u8>();
    if p.is_null() {
        return Err(Status::ERR_NOMEM);
    }
    // SAFETY: `p` holds `s.len() + 1` writable bytes that do not overlap `s`.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), p, s.len());
        p.add(s.len()).write(0);
    }
    Ok(p.cast())
}

/// A `malloc`ed, NUL-terminated copy of `s` (which holds no NUL), or NULL when memory is
/// short. Freed by the caller with `free`.
pub(crate) fn c_strdup(s: &str) -> *mut c_char {
    c_string(s.as_bytes()).unwrap_or(std::ptr::null_mut())
}

/// Frees `p` (NULL is nothing).
///
/// # Safety
/// `p` is NULL or came from `malloc` (this library's, or C's: the same allocator), and
/// nothing uses it afterwards.
pub(crate) unsafe fn c_free<T>(p: *mut T) {
    // SAFETY: `p` is NULL or came from malloc and is not used afterwards (this function's
    // contract): what free requires.
    unsafe { libc::free(p.cast()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_malloced_and_nothing_is_allocated_for_none() {
        assert_eq!(c_copy::<u32>(&[]), Ok(std::ptr::null_mut()));
        assert_eq!(c_fill(0, 7u16), Ok(std::ptr::null_mut()));
        assert_eq!(c_fill(usize::MAX, 7u16), Err(Status::ERR_NOMEM));
        assert_eq!(c_calloc(usize::MAX, 2), Err(Status::ERR_NOMEM));
        let p = c_copy(&[1u32, 2, 3]).unwrap();
        let q = c_fill(2, 9u16).unwrap();
        let s = c_strdup("abc");
        // SAFETY: three fresh allocations of the sizes read, freed once.
        unsafe {
            assert_eq!(std::slice::from_raw_parts(p, 3), [1, 2, 3]);
            assert_eq!(std::slice::from_raw_parts(q, 2), [9, 9]);
            assert_eq!(std::ffi::CStr::from_ptr(s), c"abc");
            c_free(p);
            c_free(q);
            c_free(s);
        }
    }
}
