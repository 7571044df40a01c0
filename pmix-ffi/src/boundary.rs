//! The panic boundary every exported function runs its body in, the macros that are
//! the only way to define an `extern "C"` function in this crate ([`export!`] for the
//! C API, [`callback!`] for the trampolines handed to C), the checks on C pointer
//! arguments, and the C-memory helpers (`malloc`'ed strings the caller frees with
//! `free`).

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

/// Defines an exported C function (`#[unsafe(no_mangle)] pub [unsafe] extern "C" fn`)
/// whose body runs inside the panic boundary, so that no export can skip it. Three
/// forms, by return type:
///
/// - `fn NAME(ARGS) -> pmix_status_t { BODY }`: `BODY` is a block of type [`Res`],
///   run by [`status_boundary`] (`Ok(())` → `PMIX_SUCCESS`, `Err(s)` → `s`, a panic →
///   `PMIX_ERROR`), so `?` returns a status;
/// - `fn NAME(ARGS) -> T [on_panic: FALLBACK] { BODY }`: `BODY` is a block of type `T`,
///   run by [`value_boundary`], which answers `FALLBACK` should it panic;
/// - `fn NAME(ARGS) { BODY }` (a `void` function): `BODY` runs by [`value_boundary`]
///   and a panic ends it.
///
/// Each may be `unsafe fn` (the C caller has a contract: its doc comment says it under
/// `# Safety`). Doc comments and attributes before `fn` stay on the function. The one
/// other way to write an `extern "C" fn` is [`callback!`]; `tests/boundaries.rs`
/// checks that no other appears in `src/`.
macro_rules! export {
    ($(#[$attr:meta])* unsafe fn $($rest:tt)*) => {
        $crate::boundary::extern_fn! {
            [$(#[$attr])* #[unsafe(no_mangle)]] [pub unsafe] $($rest)*
        }
    };
    ($(#[$attr:meta])* fn $($rest:tt)*) => {
        $crate::boundary::extern_fn! { [$(#[$attr])* #[unsafe(no_mangle)]] [pub] $($rest)* }
    };
}
pub(crate) use export;

/// Defines an `extern "C" fn` the library hands to C as a function pointer (a
/// `release_fn`, a handler's `cbfunc`), not exported by name: the same forms as
/// [`export!`], with the visibility written before `unsafe fn` / `fn`, and the same
/// panic boundary, since C calls it as it calls an export.
macro_rules! callback {
    ($(#[$attr:meta])* $vis:vis unsafe fn $($rest:tt)*) => {
        $crate::boundary::extern_fn! { [$(#[$attr])*] [$vis unsafe] $($rest)* }
    };
    ($(#[$attr:meta])* $vis:vis fn $($rest:tt)*) => {
        $crate::boundary::extern_fn! { [$(#[$attr])*] [$vis] $($rest)* }
    };
}
pub(crate) use callback;

/// What [`export!`] and [`callback!`] expand to: `[ATTRIBUTES] [QUALIFIERS]` then the
/// function in one of the three forms. The only `extern "C" fn` definitions of the
/// crate are these three.
macro_rules! extern_fn {
    (
        [$($attr:tt)*] [$($qual:tt)*]
        $name:ident($($arg:ident: $ty:ty),* $(,)?) -> pmix_status_t { $($body:tt)* }
    ) => {
        $($attr)*
        $($qual)* extern "C" fn $name($($arg: $ty),*) -> $crate::types::pmix_status_t {
            $crate::boundary::status_boundary(|| -> $crate::boundary::Res { $($body)* })
        }
    };
    (
        [$($attr:tt)*] [$($qual:tt)*]
        $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty [on_panic: $fallback:expr]
        { $($body:tt)* }
    ) => {
        $($attr)*
        $($qual)* extern "C" fn $name($($arg: $ty),*) -> $ret {
            $crate::boundary::value_boundary($fallback, || -> $ret { $($body)* })
        }
    };
    ([$($attr:tt)*] [$($qual:tt)*] $name:ident($($arg:ident: $ty:ty),* $(,)?) { $($body:tt)* }) => {
        $($attr)*
        $($qual)* extern "C" fn $name($($arg: $ty),*) {
            $crate::boundary::value_boundary((), || { $($body)* })
        }
    };
}
pub(crate) use extern_fn;

/// `PMIX_ERR_BAD_PARAM`.
pub(crate) const BAD_PARAM: Status = Status::ERR_BAD_PARAM;

/// The check on a pointer argument the call requires (an output, a value to load):
/// `PMIX_ERR_BAD_PARAM` for NULL, so every export refuses NULL the same way.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` when `p` is NULL.
pub(crate) fn not_null<T>(p: *const T) -> Res {
    if p.is_null() { Err(BAD_PARAM) } else { Ok(()) }
}

/// The required C pointer argument `p` (an output or in-out argument) as a reference,
/// after [`not_null`].
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` when `p` is NULL.
///
/// # Safety
/// A non-NULL `p` must be valid for reads and writes of a `T`, and not accessed by other
/// means while the returned borrow lives.
pub(crate) unsafe fn c_mut<'a, T>(p: *mut T) -> Result<&'a mut T, Status> {
    not_null(p)?;
    // SAFETY: non-NULL (checked) and valid for reads and writes (caller's contract).
    Ok(unsafe { &mut *p })
}

/// The required C pointer argument `p` (an input) as a reference, after [`not_null`].
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` when `p` is NULL.
///
/// # Safety
/// A non-NULL `p` must be valid for reads of a `T`, unchanged while the returned borrow
/// lives.
pub(crate) unsafe fn c_ref<'a, T>(p: *const T) -> Result<&'a T, Status> {
    not_null(p)?;
    // SAFETY: non-NULL (checked) and valid for reads (caller's contract).
    Ok(unsafe { &*p })
}

/// `true` when `n` elements of `T` from `p` can be one Rust slice: `n × size_of::<T>()`
/// is at most `isize::MAX` bytes and the range does not wrap around the address space.
/// A C count beyond that cannot describe real memory; forming the slice anyway would be
/// undefined behaviour, so callers refuse it.
pub(crate) fn fits_in_a_slice<T>(p: *const T, n: usize) -> bool {
    n.checked_mul(size_of::<T>())
        .filter(|&bytes| bytes <= isize::MAX as usize)
        .and_then(|bytes| (p as usize).checked_add(bytes))
        .is_some()
}

/// The C array `p[0..n]` as a slice: the one place a slice is formed from a C pointer
/// and a C count.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for `n > 0` with a NULL `p`, a `p` not aligned for `T`, or an
/// `n` that does not [fit in a slice](fits_in_a_slice). `n == 0` is an empty slice
/// whatever `p` is.
///
/// # Safety
/// A non-NULL `p` with `n > 0` must point to `n` readable, initialised elements that
/// stay unchanged while the returned borrow lives.
pub(crate) unsafe fn c_slice<'a, T>(p: *const T, n: usize) -> Result<&'a [T], Status> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() || !p.is_aligned() || !fits_in_a_slice(p, n) {
        return Err(BAD_PARAM);
    }
    // SAFETY: `p` is non-NULL and aligned, `n` elements span at most `isize::MAX` bytes
    // without wrapping (checked above), and the caller guarantees they are readable and
    // unchanged for `'a`.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

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

/// The caller's opaque `cbdata`, carried to the progress thread.
pub(crate) struct CbData(pub(crate) *mut std::ffi::c_void);

// SAFETY: the pointer is never dereferenced by the library; it is handed back, unchanged,
// to the caller's own callback. The C API contract (the callback runs on the library's
// progress thread) makes whatever it points to the caller's responsibility.
unsafe impl Send for CbData {}

impl CbData {
    /// The pointer (a method, so a closure captures the whole `CbData`, which is
    /// `Send`, not its field).
    pub(crate) fn ptr(&self) -> *mut std::ffi::c_void {
        self.0
    }
}

/// A `pmix_op_cbfunc_t` without its `Option`.
pub(crate) type OpCb = unsafe extern "C" fn(crate::types::pmix_status_t, *mut std::ffi::c_void);

/// The completion of an operation whose C callback is `cb`: calls `cb(status,
/// cbdata)` once with its outcome (`PMIX_SUCCESS` or the error's status).
pub(crate) fn op_done(
    cb: OpCb,
    cbdata: CbData,
) -> impl FnOnce(Result<(), pmix::Error>) + Send + 'static {
    move |r| {
        use pmix::PmixError;
        let status = match r {
            Ok(()) => pmix_core::Status::SUCCESS.0,
            Err(e) => e.status().0,
        };
        // SAFETY: the caller's callback with its own data, once, as the PMIx contract
        // says.
        unsafe { cb(status, cbdata.ptr()) };
    }
}

/// The process-wide instance, admitted for `call` in `mode` (`PMIX_ERR_INIT`, then
/// `PMIX_ERR_WOULD_BLOCK` with its diagnostic, then `PMIX_ERR_NOT_AVAILABLE`).
///
/// # Errors
/// As listed.
pub(crate) fn admitted(call: &'static str, mode: pmix::Mode) -> Result<pmix::Pmix, Status> {
    use pmix::PmixError;
    let inst = pmix::global::get().map_err(|e| e.status())?;
    inst.admit(call, mode).map_err(|e| e.status())?;
    Ok(inst)
}

/// Copies `src` into the C character array `dst` (a key or a namespace): at most
/// `dst.len() - 1` bytes, the rest NUL, so `dst` is always NUL-terminated.
pub(crate) fn copy_c_str(dst: &mut [c_char], src: &[u8]) {
    let n = src.len().min(dst.len().saturating_sub(1));
    for (d, s) in dst.iter_mut().zip(src.iter().take(n)) {
        *d = *s as c_char;
    }
    for d in dst.iter_mut().skip(n) {
        *d = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_c_str_truncates_and_always_terminates() {
        let mut a = [1 as c_char; 4];
        copy_c_str(&mut a, b"abcdef");
        assert_eq!(a, [b'a' as c_char, b'b' as c_char, b'c' as c_char, 0]);
        copy_c_str(&mut a, b"x");
        assert_eq!(a, [b'x' as c_char, 0, 0, 0]);
    }

    #[test]
    fn panics_become_pmix_error() {
        assert_eq!(status_boundary(|| panic!("x")), -1);
        assert_eq!(status_boundary(|| Err(Status::ERR_NOT_FOUND)), -46);
        assert_eq!(status_boundary(|| Ok(())), 0);
        assert_eq!(value_boundary(7, || panic!("x")), 7);
    }

    callback! {
        /// The status form: the error's status, a panic `PMIX_ERROR`.
        fn status_form(what: i32) -> pmix_status_t {
            match what {
                0 => Ok(()),
                1 => Err(Status::ERR_NOT_FOUND),
                _ => panic!("status_form"),
            }
        }
    }

    callback! {
        /// The value form: a panic answers the fallback.
        unsafe fn value_form(what: i32) -> *const c_char [on_panic: c"fallback".as_ptr()] {
            if what == 0 { c"value".as_ptr() } else { panic!("value_form") }
        }
    }

    static VOID_RAN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    callback! {
        /// The void form: a panic ends the call.
        fn void_form(what: i32) {
            if what != 0 {
                panic!("void_form");
            }
            VOID_RAN.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[test]
    fn the_macros_put_each_form_inside_the_boundary() {
        assert_eq!(status_form(0), 0);
        assert_eq!(status_form(1), -46);
        assert_eq!(status_form(2), -1);
        // SAFETY: `value_form` has no contract; it is `unsafe` to test that form.
        let (value, fallback) = unsafe { (CStr::from_ptr(value_form(0)), value_form(1)) };
        assert_eq!(value, c"value");
        // SAFETY: the fallback is a static C string.
        assert_eq!(unsafe { CStr::from_ptr(fallback) }, c"fallback");
        void_form(1);
        assert!(!VOID_RAN.load(std::sync::atomic::Ordering::Relaxed));
        void_form(0);
        assert!(VOID_RAN.load(std::sync::atomic::Ordering::Relaxed));
    }

    #[test]
    fn counts_beyond_isize_max_bytes_never_form_a_slice() {
        use crate::types::pmix_info_t;
        // pmix_info_t: 552 bytes, so the limit is isize::MAX / 552 elements.
        let info = std::ptr::NonNull::<pmix_info_t>::dangling()
            .as_ptr()
            .cast_const();
        let at_limit = isize::MAX as usize / size_of::<pmix_info_t>();
        assert!(fits_in_a_slice(info, at_limit));
        assert!(!fits_in_a_slice(info, at_limit + 1));
        assert!(!fits_in_a_slice(info, usize::MAX));
        // Within isize::MAX bytes, but wrapping past the top of the address space.
        let high = (usize::MAX - 100) as *const u8;
        assert!(!fits_in_a_slice(high, 200));
        let words = [1u64, 2, 3, 4];
        let p = words.as_ptr();
        // SAFETY: every call but the last is refused before a slice is formed (n == 0
        // forms an empty one without reading); the last reads `words`.
        unsafe {
            assert_eq!(c_slice(info, at_limit + 1).map(<[_]>::len), Err(BAD_PARAM));
            assert_eq!(c_slice(info, usize::MAX).map(<[_]>::len), Err(BAD_PARAM));
            let u64_limit = isize::MAX as usize / size_of::<u64>();
            assert_eq!(c_slice(p, u64_limit + 1), Err(BAD_PARAM));
            assert_eq!(c_slice(std::ptr::null::<u64>(), 1), Err(BAD_PARAM));
            assert_eq!(c_slice(std::ptr::null::<u64>(), 0), Ok(&[][..]));
            let misaligned = p.cast::<u8>().add(1).cast::<u64>();
            assert_eq!(c_slice(misaligned, 1), Err(BAD_PARAM));
            assert_eq!(c_slice(p, 4), Ok(&words[..]));
        }
    }

    #[test]
    fn required_pointers_refuse_null_alone() {
        let mut x = 5u32;
        assert_eq!(not_null(&raw const x), Ok(()));
        assert_eq!(not_null(std::ptr::null::<u32>()), Err(BAD_PARAM));
        // SAFETY: `x` is valid for reads and writes; NULL is refused before any access.
        unsafe {
            *c_mut(&raw mut x).unwrap() = 6;
            assert_eq!(c_ref(&raw const x), Ok(&6));
            assert_eq!(c_mut(std::ptr::null_mut::<u32>()), Err(BAD_PARAM));
            assert_eq!(c_ref(std::ptr::null::<u32>()), Err(BAD_PARAM));
        }
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
