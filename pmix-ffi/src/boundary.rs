//! What every exported function stands on: the panic boundary, the macros that are the
//! only way to define an `extern "C"` function in this crate ([`export!`] for the C API,
//! [`callback!`] for the trampolines handed to C), the checked conversions of C
//! arguments into Rust references, and the completion helpers of the `_nb` calls.
//!
//! # The C contract
//!
//! A C caller promises what the headers say of each pointer it passes, and of each
//! pointer inside an object it passes (a value's string, an info array's values, a
//! query's keys, a buffer's bytes): it is NULL or points to what its type names,
//! readable (and writable, for an output) for the whole call; a value's union holds
//! what its type tag says; a string ends with a NUL; a handle (an info list) is one the
//! library gave and has not released. Rust cannot check that promise. Everything else
//! it can check, and the conversions here do: NULL where the call needs an object, a
//! count that no array can have, a misaligned array, a string without a NUL within its
//! bound or not UTF-8; each is `PMIX_ERR_BAD_PARAM`.
//!
//! The promise is relied on in one place per kind of access: the unchecked reads are the
//! functions below ([`c_ref`], [`c_mut`], [`c_slice`], [`c_slice_mut`], [`c_bytes`],
//! [`bounded_str`], [`c_argv`]), and the macros ([`try_ref!`], [`try_mut!`],
//! [`opt_ref!`], [`opt_mut!`], [`try_slice!`], [`try_slice_mut!`], [`try_str!`],
//! [`opt_str!`], [`opt_cstr!`], [`try_bytes!`], [`try_argv!`]) apply them to a pointer
//! C handed over, with the promise as their one `SAFETY` argument; the data module's
//! readers of C values, infos and buffers rely on it for the pointers inside those. A
//! macro takes only a pointer C gave: an argument, or one read out of an object C gave;
//! the C memory the library makes is owned by Rust types (`crate::cmem`, `CValue`,
//! `CInfos`) until C gets it.
//!
//! An export whose arguments only go through these is a safe `extern "C" fn`, its doc
//! comment stating the promise under "C contract" (a Rust caller, as this crate's tests,
//! makes it too). An export stays `unsafe fn`, with a "Safety" section, where its body
//! hands an argument to an operation no conversion here covers: a read or write through
//! a `void *` whose type another argument names (`PMIx_Value_load`, `PMIx_Data_pack`,
//! …), or the release of memory an argument owns (`PMIx_Value_destruct`,
//! `PMIx_Device_distance_free`, …).

use std::ffi::{c_char, c_void};
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
/// A function is `unsafe fn` only when its body relies on more than the checked
/// conversions (the module docs say which exports are). Doc comments and attributes
/// before `fn` stay on the function. The one other way to write an `extern "C" fn` is [`callback!`];
/// `tests/boundaries.rs` checks that no other appears in `src/`.
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

/// The checks before `p[0..n]` becomes a slice.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for `n > 0` with a NULL `p`, a `p` not aligned for `T`, or an
/// `n` that does not [fit in a slice](fits_in_a_slice).
fn slice_checks<T>(p: *const T, n: usize) -> Res {
    if p.is_null() || !p.is_aligned() || !fits_in_a_slice(p, n) {
        return Err(BAD_PARAM);
    }
    Ok(())
}

/// The C array `p[0..n]` as a slice: the one place a slice is read from a C pointer
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
    slice_checks(p, n)?;
    // SAFETY: `p` is non-NULL and aligned, `n` elements span at most `isize::MAX` bytes
    // without wrapping (checked above), and the caller guarantees they are readable and
    // unchanged for `'a`.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// The C array `p[0..n]` as a mutable slice (an output array), checked as [`c_slice`].
///
/// # Errors
/// As [`c_slice`].
///
/// # Safety
/// A non-NULL `p` with `n > 0` must point to `n` initialised elements, readable and
/// writable and not accessed by other means while the returned borrow lives.
pub(crate) unsafe fn c_slice_mut<'a, T>(p: *mut T, n: usize) -> Result<&'a mut [T], Status> {
    if n == 0 {
        return Ok(&mut []);
    }
    slice_checks(p, n)?;
    // SAFETY: as in `c_slice`, and the elements are writable and unaliased for `'a`
    // (caller's contract).
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// The bytes of the C string `p` before its NUL, reading at most `max` of them: the
/// first `max` bytes when no NUL comes sooner. Nothing past the NUL or past `max`
/// bytes is read.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for NULL.
///
/// # Safety
/// `p`, when not NULL, must be readable up to its NUL or for `max` bytes, whichever
/// comes first, and stay unchanged while the returned borrow lives.
pub(crate) unsafe fn c_bytes<'a>(p: *const c_char, max: usize) -> Result<&'a [u8], Status> {
    not_null(p)?;
    let p = p.cast::<u8>();
    let mut len = 0;
    // SAFETY: `len < max` and no NUL was seen before `len`, so byte `len` is within
    // what the caller guarantees readable.
    while len < max && unsafe { *p.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: the `len` bytes from `p` were just read (none is past a NUL or `max`).
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
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
    // SAFETY: `p` is NULL or readable to its NUL or for `max + 1` bytes (this function's
    // contract), which is all `c_bytes` reads with that bound.
    let bytes = unsafe { c_bytes(p, max.saturating_add(1)) }?;
    if bytes.len() > max {
        return Err(BAD_PARAM);
    }
    std::str::from_utf8(bytes).map_err(|_| BAD_PARAM)
}

/// The entries of the NULL-terminated C array of strings `argv` (a query's keys, an
/// app's `argv` and `env`, keys to unpublish) before its NULL; empty for a NULL array.
///
/// # Errors
/// `PMIX_ERR_BAD_PARAM` for more than `max` entries (none past entry `max` is read).
///
/// # Safety
/// `argv`, when not NULL, must be readable up to its NULL entry or for `max + 1`
/// entries, whichever comes first, and stay unchanged while the returned borrow lives.
pub(crate) unsafe fn c_argv<'a>(
    argv: *const *mut c_char,
    max: usize,
) -> Result<&'a [*mut c_char], Status> {
    if argv.is_null() {
        return Ok(&[]);
    }
    let mut n = 0;
    // SAFETY: `n <= max` and no NULL entry was seen before `n`, so entry `n` is within
    // what the caller guarantees readable.
    while !unsafe { *argv.add(n) }.is_null() {
        if n == max {
            return Err(BAD_PARAM);
        }
        n += 1;
    }
    // SAFETY: the `n` entries before the NULL were just read.
    Ok(unsafe { std::slice::from_raw_parts(argv, n) })
}

/// `s` (C characters, as a key or namespace array holds them) as bytes.
pub(crate) fn c_chars(s: &[c_char]) -> &[u8] {
    // SAFETY: `c_char` is `i8` or `u8`, of the size and alignment of `u8`, and every
    // bit pattern is a valid `u8`; the bytes are borrowed from `s` for as long as it.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), s.len()) }
}

/// A required C pointer `$p` as `Result<&T, Status>` ([`c_ref`]): `PMIX_ERR_BAD_PARAM`
/// for NULL. `$p` is a pointer C gave (the module docs).
macro_rules! try_ref {
    ($p:expr) => {{
        let p = $p;
        // SAFETY: `p` came from C, which promises it NULL or valid for reads for the
        // whole call (the C contract); NULL is refused.
        unsafe { $crate::boundary::c_ref(p) }
    }};
}
pub(crate) use try_ref;

/// A required C output or in-out pointer `$p` as `Result<&mut T, Status>`
/// ([`c_mut`]): `PMIX_ERR_BAD_PARAM` for NULL. `$p` is a pointer C gave.
macro_rules! try_mut {
    ($p:expr) => {{
        let p = $p;
        // SAFETY: `p` came from C, which promises it NULL or valid for reads and writes,
        // and not touched by anyone else, for the whole call (the C contract); NULL is
        // refused.
        unsafe { $crate::boundary::c_mut(p) }
    }};
}
pub(crate) use try_mut;

/// An optional C pointer `$p` as `Option<&T>` (NULL: `None`). `$p` is a pointer C gave.
macro_rules! opt_ref {
    ($p:expr) => {{
        let p = $p;
        // SAFETY: `p` came from C, which promises it NULL or valid for reads for the
        // whole call (the C contract); `as_ref` checks NULL.
        unsafe { p.as_ref() }
    }};
}
pub(crate) use opt_ref;

/// An optional C output pointer `$p` as `Option<&mut T>` (NULL: `None`). `$p` is a
/// pointer C gave.
macro_rules! opt_mut {
    ($p:expr) => {{
        let p = $p;
        // SAFETY: `p` came from C, which promises it NULL or valid for reads and writes,
        // and not touched by anyone else, for the whole call (the C contract); `as_mut`
        // checks NULL.
        unsafe { p.as_mut() }
    }};
}
pub(crate) use opt_mut;

/// The C array `$p` of `$n` elements as `Result<&[T], Status>` ([`c_slice`]): NULL with
/// a count, misalignment or a count no array can have is `PMIX_ERR_BAD_PARAM`. `$p` is
/// a pointer C gave, with its count.
macro_rules! try_slice {
    ($p:expr, $n:expr) => {{
        let (p, n) = ($p, $n);
        // SAFETY: `p` came from C with its count `n`: it promises `n` readable elements
        // for the whole call (the C contract); the rest is checked.
        unsafe { $crate::boundary::c_slice(p, n) }
    }};
}
pub(crate) use try_slice;

/// The C output array `$p` of `$n` elements as `Result<&mut [T], Status>`
/// ([`c_slice_mut`]), checked as [`try_slice!`]. `$p` is a pointer C gave, with its
/// count.
macro_rules! try_slice_mut {
    ($p:expr, $n:expr) => {{
        let (p, n) = ($p, $n);
        // SAFETY: `p` came from C with its count `n`: it promises `n` writable elements
        // nobody else touches for the whole call (the C contract); the rest is checked.
        unsafe { $crate::boundary::c_slice_mut(p, n) }
    }};
}
pub(crate) use try_slice_mut;

/// The C string `$p` as `Result<&str, Status>` ([`bounded_str`]): NULL, no NUL within
/// `$max + 1` bytes, or not UTF-8 is `PMIX_ERR_BAD_PARAM`. `$p` is a pointer C gave.
macro_rules! try_str {
    ($p:expr, $max:expr) => {{
        let (p, max) = ($p, $max);
        // SAFETY: `p` came from C, which promises it NULL or NUL-terminated for the whole
        // call (the C contract); no more than `max + 1` bytes are read.
        unsafe { $crate::boundary::bounded_str(p, max) }
    }};
}
pub(crate) use try_str;

/// An optional C string `$p` as `Result<Option<&str>, Status>`: `None` for NULL, else
/// as [`try_str!`].
macro_rules! opt_str {
    ($p:expr, $max:expr) => {{
        let (p, max): (*const ::std::ffi::c_char, usize) = ($p, $max);
        if p.is_null() {
            Ok(None)
        } else {
            $crate::boundary::try_str!(p, max).map(Some)
        }
    }};
}
pub(crate) use opt_str;

/// The C string `$p` as `Option<&CStr>` (NULL: `None`), read to its NUL however far:
/// for the texts libpmix2 also reads whole (printing, comparing, copying a datum).
/// `$p` is a pointer C gave.
macro_rules! opt_cstr {
    ($p:expr) => {{
        let p: *const ::std::ffi::c_char = $p;
        if p.is_null() {
            None
        } else {
            // SAFETY: `p` came from C, which promises a NUL-terminated string for the
            // whole call (the C contract); it is not NULL (checked).
            Some(unsafe { ::std::ffi::CStr::from_ptr(p) })
        }
    }};
}
pub(crate) use opt_cstr;

/// The bytes of the C string `$p` before its NUL, at most `$max` of them, as
/// `Result<&[u8], Status>` ([`c_bytes`]; NULL is `PMIX_ERR_BAD_PARAM`). `$p` is a
/// pointer C gave.
macro_rules! try_bytes {
    ($p:expr, $max:expr) => {{
        let (p, max) = ($p, $max);
        // SAFETY: `p` came from C, which promises it NULL or NUL-terminated for the whole
        // call (the C contract); no more than `max` bytes are read.
        unsafe { $crate::boundary::c_bytes(p, max) }
    }};
}
pub(crate) use try_bytes;

/// The NULL-terminated C array of strings `$argv` as `Result<&[*mut c_char], Status>`
/// ([`c_argv`]; NULL is empty, more than `$max` entries `PMIX_ERR_BAD_PARAM`). `$argv`
/// is a pointer C gave; its entries are too.
macro_rules! try_argv {
    ($argv:expr, $max:expr) => {{
        let (argv, max) = ($argv, $max);
        // SAFETY: `argv` came from C, which promises it NULL or NULL-terminated for the
        // whole call (the C contract); no more than `max + 1` entries are read.
        unsafe { $crate::boundary::c_argv(argv, max) }
    }};
}
pub(crate) use try_argv;

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

pub(crate) use crate::cmem::c_strdup;

/// The caller's opaque `cbdata`, carried to the progress thread.
pub(crate) struct CbData(pub(crate) *mut c_void);

// SAFETY: the pointer is never dereferenced by the library; it is handed back, unchanged,
// to the caller's own callback. The C API contract (the callback runs on the library's
// progress thread) makes whatever it points to the caller's responsibility.
unsafe impl Send for CbData {}

impl CbData {
    /// The pointer (a method, so a closure captures the whole `CbData`, which is
    /// `Send`, not its field).
    pub(crate) fn ptr(&self) -> *mut c_void {
        self.0
    }
}

/// A `pmix_op_cbfunc_t` without its `Option`.
pub(crate) type OpCb = crate::types::CFn<crate::types::pmix_op_cbfunc_t>;

/// Calls the operation callback `cb` C gave with `status` and its `cbdata`.
pub(crate) fn call_op(cb: OpCb, status: Status, cbdata: &CbData) {
    // SAFETY: C gave `cb` with `cbdata` to be called once with an outcome, from the
    // library's threads (the C contract of every call that takes a `pmix_op_cbfunc_t`);
    // the arguments are a status and that `cbdata`, unchanged.
    unsafe { cb(status.0, cbdata.ptr()) };
}

/// The completion of an operation whose C callback is `cb`: calls `cb(status,
/// cbdata)` once with its outcome (`PMIX_SUCCESS` or the error's status).
pub(crate) fn op_done<T>(
    cb: OpCb,
    cbdata: CbData,
) -> impl FnOnce(Result<T, pmix::Error>) + Send + 'static {
    move |r| call_op(cb, status_of(r), &cbdata)
}

/// The status of an operation's outcome: `PMIX_SUCCESS` or the error's.
pub(crate) fn status_of<T>(r: Result<T, pmix::Error>) -> Status {
    use pmix::PmixError;
    match r {
        Ok(_) => Status::SUCCESS,
        Err(e) => e.status(),
    }
}

/// The outcome of a call made to its end here: `Ok` or the error's status.
///
/// # Errors
/// The error's status.
pub(crate) fn done<T>(r: Result<T, pmix::Error>) -> Res {
    use pmix::PmixError;
    r.map(drop).map_err(|e| e.status())
}

/// How a `_nb` call is admitted: `Blocking` when C gave no callback (it then runs as the
/// blocking call, see [`nb_or_blocking`]), else `NonBlocking`.
pub(crate) fn mode_of<F>(cbfunc: &Option<F>) -> pmix::Mode {
    if cbfunc.is_some() {
        pmix::Mode::NonBlocking
    } else {
        pmix::Mode::Blocking
    }
}

/// A `_nb` call with the callback C gave, or none: with a callback, `start` begins the
/// operation (its outcome reaches the callback later, on the progress thread) and the
/// call returns `PMIX_SUCCESS` once it is accepted; without one, `block` runs it to
/// its end here and its status is returned, as the blocking call's would be (OpenPMIx's
/// rule for a NULL callback). Admit the call with [`mode_of`] first.
///
/// # Errors
/// `start`'s refusal, or `block`'s outcome.
pub(crate) fn nb_or_blocking<F, T>(
    cbfunc: Option<F>,
    block: impl FnOnce() -> Result<T, pmix::Error>,
    start: impl FnOnce(F) -> Result<(), pmix::Error>,
) -> Res {
    match cbfunc {
        None => done(block()),
        Some(cb) => done(start(cb)),
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
        assert_eq!(c_chars(&a[..2]), b"x\0");
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
        /// The value form, as an `unsafe fn`: a panic answers the fallback.
        unsafe fn value_form(what: i32) -> usize [on_panic: 7] {
            if what == 0 { 5 } else { panic!("value_form") }
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
        let (value, fallback) = unsafe { (value_form(0), value_form(1)) };
        assert_eq!((value, fallback), (5, 7));
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
        let mut words = [1u64, 2, 3, 4];
        let p = words.as_mut_ptr();
        let u64_limit = isize::MAX as usize / size_of::<u64>();
        // Every call but the last two is refused before a slice is formed (n == 0 forms
        // an empty one without reading); the last two read and write `words`.
        assert_eq!(
            try_slice!(info, at_limit + 1).map(<[_]>::len),
            Err(BAD_PARAM)
        );
        assert_eq!(try_slice!(info, usize::MAX).map(<[_]>::len), Err(BAD_PARAM));
        assert_eq!(try_slice!(p, u64_limit + 1), Err(BAD_PARAM));
        assert_eq!(try_slice!(std::ptr::null::<u64>(), 1), Err(BAD_PARAM));
        assert_eq!(try_slice!(std::ptr::null::<u64>(), 0), Ok(&[][..]));
        let misaligned = p.cast::<u8>().wrapping_add(1).cast::<u64>();
        assert_eq!(try_slice!(misaligned, 1), Err(BAD_PARAM));
        assert_eq!(
            try_slice_mut!(misaligned, 1).map(|s| s.len()),
            Err(BAD_PARAM)
        );
        try_slice_mut!(p, 4).unwrap()[3] = 5;
        assert_eq!(try_slice!(p, 4), Ok(&[1, 2, 3, 5][..]));
    }

    #[test]
    fn required_pointers_refuse_null_alone() {
        let mut x = 5u32;
        assert_eq!(not_null(&raw const x), Ok(()));
        assert_eq!(not_null(std::ptr::null::<u32>()), Err(BAD_PARAM));
        *try_mut!(&raw mut x).unwrap() = 6;
        assert_eq!(try_ref!(&raw const x), Ok(&6));
        assert_eq!(try_mut!(std::ptr::null_mut::<u32>()), Err(BAD_PARAM));
        assert_eq!(try_ref!(std::ptr::null::<u32>()), Err(BAD_PARAM));
        assert_eq!(opt_ref!(std::ptr::null::<u32>()), None);
        assert_eq!(opt_mut!(&raw mut x).copied(), Some(6));
    }

    #[test]
    fn strings_are_read_within_their_bound() {
        let ok = c"eth0";
        assert_eq!(try_str!(ok.as_ptr(), 4), Ok("eth0"));
        // Readable for 4 + 1 bytes at least (it is 5 bytes with its NUL).
        assert_eq!(try_str!(ok.as_ptr(), 3), Err(BAD_PARAM));
        assert_eq!(try_str!(std::ptr::null(), 3), Err(BAD_PARAM));
        assert_eq!(opt_str!(std::ptr::null(), 3), Ok(None));
        assert_eq!(opt_str!(ok.as_ptr(), 4), Ok(Some("eth0")));
        let bad = [0xffu8 as c_char, 0];
        assert_eq!(try_str!(bad.as_ptr(), 8), Err(BAD_PARAM));
        // No NUL among the first two bytes: two bytes, nothing further read.
        let unterminated = [b'a' as c_char, b'b' as c_char];
        assert_eq!(try_bytes!(unterminated.as_ptr(), 2), Ok(&b"ab"[..]));
        assert_eq!(try_bytes!(ok.as_ptr(), 100), Ok(&b"eth0"[..]));
        assert_eq!(opt_cstr!(ok.as_ptr()), Some(ok));
        assert_eq!(opt_cstr!(std::ptr::null()), None);
    }

    #[test]
    fn argv_stops_at_its_null_or_its_bound() {
        let (a, b) = (c"a".as_ptr().cast_mut(), c"b".as_ptr().cast_mut());
        let argv = [a, b, std::ptr::null_mut()];
        assert_eq!(try_argv!(argv.as_ptr(), 2), Ok(&argv[..2]));
        assert_eq!(try_argv!(argv.as_ptr(), 1), Err(BAD_PARAM));
        assert_eq!(try_argv!(std::ptr::null(), 1), Ok(&[][..]));
    }

    #[test]
    fn a_missing_callback_runs_the_call_blocking() {
        let blocked = nb_or_blocking(None::<OpCb>, || Ok::<_, pmix::Error>(7), |_| Ok(()));
        assert_eq!(blocked, Ok(()));
        assert_eq!(mode_of(&None::<OpCb>), pmix::Mode::Blocking);
        assert_eq!(status_of(Ok::<_, pmix::Error>(())), Status::SUCCESS);
    }
}
