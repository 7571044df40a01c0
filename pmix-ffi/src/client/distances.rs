//! `PMIx_Compute_distances`, `PMIx_Compute_distances_nb` and the device-distance memory
//! calls.

use std::ffi::c_void;
use std::sync::Arc;

use pmix::{DistanceRequest, Mode, Pmix, PmixError, global};
use pmix_core::{CpuSet, Status};

use crate::boundary::{
    BAD_PARAM, CbData, c_strdup, callback, export, fits_in_a_slice, mode_of, nb_or_blocking,
    opt_mut, opt_ref, try_slice,
};
use crate::client::objects::{check_topology, lookup_cpuset};
use crate::cmem::{c_calloc, c_copy, c_fill, c_free};
use crate::data::info::{Directives, directives};
use crate::types::{
    pmix_cpuset_t, pmix_device_dist_cbfunc_t, pmix_device_distance_t, pmix_info_t, pmix_topology_t,
};

const CALL: &str = "PMIx_Compute_distances";
const CALL_NB: &str = "PMIx_Compute_distances_nb";

/// The decoded arguments of a distance call.
struct Args<'a> {
    cpuset: Option<Arc<CpuSet>>,
    dirs: Directives<'a>,
}

impl Args<'_> {
    fn request(&self) -> DistanceRequest<'_> {
        DistanceRequest {
            // `decode` checked that a given topology is the instance's own.
            topology: None,
            cpuset: self.cpuset.as_deref(),
            types: self.dirs.types,
            ids: &self.dirs.ids,
            origin: self.dirs.origin,
        }
    }
}

/// Decodes the arguments, as C passed them: the directives first, then the topology,
/// then the cpuset (ignored, even if foreign, when an origin is given).
fn decode<'a>(
    inst: &Pmix,
    topo: *const pmix_topology_t,
    cpuset: *const pmix_cpuset_t,
    info: *const pmix_info_t,
    ninfo: usize,
) -> Result<Args<'a>, Status> {
    let dirs = directives(try_slice!(info, ninfo)?)?;
    if let Some(t) = opt_ref!(topo) {
        check_topology(inst, t)?;
    }
    let cpuset = match dirs.origin {
        Some(_) => None,
        None => match opt_ref!(cpuset) {
            Some(c) => Some(lookup_cpuset(c)?),
            None => None,
        },
    };
    Ok(Args { cpuset, dirs })
}

/// Frees `n` entries' strings and the array (NULL-safe). An `n` no array can have
/// (`n × 32` bytes beyond `isize::MAX`, or wrapping the address space) or a misaligned
/// `d` is refused: nothing is freed, rather than walking memory that cannot be an array.
///
/// # Safety
/// `d` is NULL or a `malloc`ed array of at least `n` entries whose strings are NULL or
/// `malloc`ed, not used afterwards.
unsafe fn free_array(d: *mut pmix_device_distance_t, n: usize) {
    if d.is_null() || !d.is_aligned() || !fits_in_a_slice(d, n) {
        return;
    }
    // SAFETY: `d` holds at least `n` writable entries whose strings are malloc'ed or
    // NULL, and `d` itself is malloc'ed (the caller's contract); each is freed once.
    unsafe {
        for k in 0..n {
            destruct_entry(&mut *d.add(k));
        }
        c_free(d);
    }
}

/// Frees one entry's strings and clears them.
///
/// # Safety
/// The entry's strings are NULL or `malloc`ed, not used afterwards.
unsafe fn destruct_entry(e: &mut pmix_device_distance_t) {
    // SAFETY: both strings are NULL or malloc'ed (the caller's contract); free(NULL) is a
    // no-op.
    unsafe {
        c_free(e.uuid);
        c_free(e.osname);
    }
    e.uuid = std::ptr::null_mut();
    e.osname = std::ptr::null_mut();
}

/// Entries the library made (their strings `malloc`ed for them), freed when dropped
/// unless handed to C.
struct Entries(Vec<pmix_device_distance_t>);

impl Drop for Entries {
    fn drop(&mut self) {
        for e in &mut self.0 {
            // SAFETY: `to_c_array` made each string with `c_strdup` (or left it NULL) for
            // this entry alone; released once here (`into_c` empties the list).
            unsafe { destruct_entry(e) };
        }
    }
}

impl Entries {
    /// The entries as a `malloc`ed C array (never NULL: an empty one still gets an
    /// allocation, as C may free it), which owns their strings from now on.
    ///
    /// # Errors
    /// `PMIX_ERR_NOMEM` (nothing is left allocated).
    fn into_c(mut self) -> Result<(*mut pmix_device_distance_t, usize), Status> {
        let n = self.0.len();
        let arr = if n == 0 {
            c_calloc(1, 1)?.cast()
        } else {
            c_copy(&self.0)?
        };
        self.0.clear();
        Ok((arr, n))
    }
}

/// The entries as a `malloc`ed C array with `malloc`ed strings, which C frees with
/// `PMIx_Device_distance_free` or `PMIX_DEVICE_DIST_FREE`.
///
/// # Errors
/// `PMIX_ERR_NOMEM` (nothing is left allocated); `PMIX_ERROR` for an entry naming no
/// device (never).
fn to_c_array(answer: pmix::Answer<'_>) -> Result<(*mut pmix_device_distance_t, usize), Status> {
    let n = answer.len();
    let mut entries = Entries(Vec::with_capacity(n));
    for row in answer.rows().take(n) {
        let entry = pmix_device_distance_t {
            uuid: c_strdup(row.uuid),
            osname: c_strdup(row.osname),
            type_: row.kind.0,
            mindist: row.mindist,
            maxdist: row.maxdist,
        };
        let short = entry.uuid.is_null() || entry.osname.is_null();
        entries.0.push(entry);
        if short {
            return Err(Status::ERR_NOMEM);
        }
    }
    if entries.0.len() != n {
        // An entry naming no device (never).
        return Err(Status::ERROR);
    }
    entries.into_c()
}

export! {
    /// `PMIx_Compute_distances`: the blocking form, answered on the calling thread. Sets
    /// `*distances = NULL`, `*ndist = 0` on entry; on success a `malloc`ed array.
    ///
    /// # Errors
    /// In this order: `PMIX_ERR_INIT` (not initialised), `PMIX_ERR_WOULD_BLOCK` (on the
    /// progress thread, with its diagnostic), `PMIX_ERR_NOT_AVAILABLE` (progress stopped);
    /// `PMIX_ERR_BAD_PARAM` (NULL `distances`/`ndist`, `ninfo > 0` with NULL `info`, an
    /// `ninfo` beyond any array (`ninfo × sizeof(pmix_info_t) > isize::MAX`), a malformed
    /// directive, a foreign or stale `topo`/`cpuset`, an ambiguous origin, an empty cpuset
    /// or one outside the topology, a bad type mask);
    /// `PMIX_ERR_NOT_SUPPORTED` (an unknown key flagged `PMIX_INFO_REQD`);
    /// `PMIX_ERR_NOT_FOUND` (no such origin, nothing selected); with no local topology or
    /// cpuset, a connected client relays the request and returns the server's status (or
    /// `PMIX_ERR_NOT_SUPPORTED` for an origin the server does not advertise); `PMIX_ERR_UNREACH` (no local
    /// topology or cpuset, no server); `PMIX_ERR_NOMEM`; `PMIX_ERROR` (an internal panic).
    ///
    /// # C contract
    /// Every non-NULL pointer must be valid for its C type: `topo` and `cpuset` readable
    /// structs, `info` an array of `ninfo` readable elements whose string values are NULL or
    /// readable up to their NUL (or 4097 bytes), `distances` and `ndist` writable.
    fn PMIx_Compute_distances(
        topo: *mut pmix_topology_t,
        cpuset: *mut pmix_cpuset_t,
        info: *mut pmix_info_t,
        ninfo: usize,
        distances: *mut *mut pmix_device_distance_t,
        ndist: *mut usize,
    ) -> pmix_status_t {
        let (mut d_out, mut n_out) = (opt_mut!(distances), opt_mut!(ndist));
        if let Some(d) = d_out.as_deref_mut() {
            *d = std::ptr::null_mut();
        }
        if let Some(n) = n_out.as_deref_mut() {
            *n = 0;
        }
        let inst = global::get().map_err(|e| e.status())?;
        inst.admit(CALL, Mode::Blocking).map_err(|e| e.status())?;
        let (d_out, n_out) = (d_out.ok_or(BAD_PARAM)?, n_out.ok_or(BAD_PARAM)?);
        let args = decode(&inst, topo, cpuset, info, ninfo)?;
        (*d_out, *n_out) = inst
            .compute_distances_with(&args.request(), to_c_array)
            .map_err(|e| e.status())??;
        Ok(())
    }
}

/// A C array of entries made on the progress thread for the callback: `malloc`ed
/// memory owned by whoever holds this, so it may move between threads.
struct CArray {
    arr: *mut pmix_device_distance_t,
    n: usize,
}

// SAFETY: the array and its strings are `malloc`ed memory that nothing else references
// until the callback receives them; moving that ownership to another thread is sound.
unsafe impl Send for CArray {}

callback! {
    /// The `release_fn` handed to a distance callback: frees the array it was given.
    ///
    /// # Safety
    /// `cbdata` is the `release_cbdata` of the same callback (or NULL), passed once.
    unsafe fn release_distances(cbdata: *mut c_void) {
        if cbdata.is_null() {
            return;
        }
        // SAFETY: `cbdata` is the `Box<CArray>` `deliver` leaked for this one release (this
        // function's contract); its array is the malloc'ed one of `n` entries `to_c_array`
        // made, freed once here.
        unsafe {
            let r = Box::from_raw(cbdata.cast::<CArray>());
            free_array(r.arr, r.n);
        }
    }
}

/// The C callback's type, without the `Option`.
type DistCallback = crate::types::CFn<pmix_device_dist_cbfunc_t>;

/// Calls the C callback, on the progress thread, exactly once: with the array (and
/// `release_fn`) on success, else with the status (`PMIX_ERROR` when the computation
/// panicked) and no array.
fn deliver(cb: DistCallback, cbdata: CbData, result: Result<Result<CArray, Status>, pmix::Error>) {
    let (status, arr, n, release, rel): (_, _, _, crate::types::pmix_release_cbfunc_t, _) =
        match result.map_err(|e| e.status()).and_then(|r| r) {
            Ok(array) => {
                let (arr, n) = (array.arr, array.n);
                let rel = Box::into_raw(Box::new(array));
                (Status::SUCCESS, arr, n, Some(release_distances), rel.cast())
            }
            Err(s) => (s, std::ptr::null_mut(), 0, None, std::ptr::null_mut()),
        };
    // SAFETY: C gave `cb` with `cbdata` for this request's one outcome (the C contract of
    // `PMIx_Compute_distances_nb`); `arr` holds `n` entries that stay valid until it
    // calls `release(rel)`, and there is no `release` without an array.
    unsafe { cb(status.0, arr, n, cbdata.0, release, rel) };
}

export! {
    /// `PMIx_Compute_distances_nb`: only *accepts* the request. The library's state is
    /// checked, and the arguments (`info`, `topo`, `cpuset`) are checked and copied, before
    /// it returns; loading the topology on first use, resolving the
    /// caller's own cpuset and the query happen on the progress thread, and `cbfunc` then
    /// runs there exactly once with the final status. `PMIX_SUCCESS` means accepted. A
    /// NULL `cbfunc` behaves as the blocking form (results discarded).
    ///
    /// # Errors
    /// Returned at once (no callback): `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`
    /// (`PMIX_ERR_WOULD_BLOCK` only with a NULL `cbfunc`), and the argument errors of
    /// [`PMIx_Compute_distances`]: `PMIX_ERR_BAD_PARAM` (`ninfo > 0` with NULL `info`, an
    /// `ninfo` beyond any array, a malformed directive, a foreign or stale
    /// `topo`/`cpuset`), `PMIX_ERR_NOT_SUPPORTED`.
    /// Everything found after acceptance reaches `cbfunc` instead: `PMIX_ERR_UNREACH` (no
    /// local topology or cpuset, no server), the relay's statuses, the query's own `PMIX_ERR_NOT_FOUND` and
    /// `PMIX_ERR_BAD_PARAM` (ambiguous origin, a cpuset outside the topology, …),
    /// `PMIX_ERR_NOMEM`, and `PMIX_ERROR` if the computation panicked. With a NULL
    /// `cbfunc` all of them are returned.
    ///
    /// # Safety
    /// As [`PMIx_Compute_distances`] for `topo`, `cpuset` and `info` (only during the call);
    /// `cbfunc`, if given, must be safe to call from another thread with `cbdata`.
    fn PMIx_Compute_distances_nb(
        topo: *mut pmix_topology_t,
        cpuset: *mut pmix_cpuset_t,
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_device_dist_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = crate::boundary::admitted(CALL_NB, mode_of(&cbfunc))?;
        let args = decode(&inst, topo, cpuset, info, ninfo)?;
        let req = args.request();
        let cbdata = CbData(cbdata);
        // The conversion to C memory is part of the computation: if it panics, the
        // callback still runs, with PMIX_ERROR.
        let convert =
            |answer: pmix::Answer<'_>| to_c_array(answer).map(|(arr, n)| CArray { arr, n });
        nb_or_blocking(
            cbfunc,
            || inst.compute_distances_nb(&req, None),
            |cb| {
                inst.compute_distances_nb_with(&req, convert, move |result| {
                    deliver(cb, cbdata, result)
                })
            },
        )
    }
}

export! {
    /// `PMIx_Device_distance_create`: `n` constructed entries, `malloc`ed (NULL for `n == 0`,
    /// for an `n` whose array would exceed `isize::MAX` bytes, or when memory is short).
    fn PMIx_Device_distance_create(
        n: usize,
    ) -> *mut pmix_device_distance_t [on_panic: std::ptr::null_mut()] {
        if !fits_in_a_slice(std::ptr::null::<pmix_device_distance_t>(), n) {
            return std::ptr::null_mut();
        }
        c_fill(n, CONSTRUCTED).unwrap_or(std::ptr::null_mut())
    }
}

/// An entry as `PMIx_Device_distance_construct` makes it.
const CONSTRUCTED: pmix_device_distance_t = pmix_device_distance_t {
    uuid: std::ptr::null_mut(),
    osname: std::ptr::null_mut(),
    type_: 0,
    mindist: u16::MAX,
    maxdist: u16::MAX,
};

export! {
    /// `PMIx_Device_distance_free`: frees each entry's `uuid` and `osname`, then the array.
    /// NULL: nothing happens. An `n` no array can have (`n × sizeof(pmix_device_distance_t)`
    /// beyond `PTRDIFF_MAX`): nothing is freed.
    ///
    /// # Safety
    /// `d` is NULL or a `malloc`ed array (from this library, `PMIx_Device_distance_create`
    /// or `PMIX_DEVICE_DIST_CREATE`) of at least `n` entries whose strings are NULL or
    /// `malloc`ed; it is not used afterwards.
    unsafe fn PMIx_Device_distance_free(d: *mut pmix_device_distance_t, n: usize) {
        // SAFETY: `d` is NULL or a malloc'ed array of `n` entries with malloc'ed strings,
        // not used afterwards (this function's contract); `free_array` checks the rest.
        unsafe { free_array(d, n) }
    }
}

export! {
    /// `PMIx_Device_distance_construct`: zeroes the entry and sets `mindist = maxdist =
    /// UINT16_MAX`. NULL: nothing happens.
    ///
    /// # C contract
    /// `d` is NULL or points to a writable entry (whose strings, if any, are abandoned).
    fn PMIx_Device_distance_construct(d: *mut pmix_device_distance_t) {
        if let Some(e) = opt_mut!(d) {
            *e = CONSTRUCTED;
        }
    }
}

export! {
    /// `PMIx_Device_distance_destruct`: frees the entry's strings and clears them. NULL:
    /// nothing happens.
    ///
    /// # Safety
    /// `d` is NULL or points to a writable entry whose strings are NULL or `malloc`ed.
    unsafe fn PMIx_Device_distance_destruct(d: *mut pmix_device_distance_t) {
        if let Some(e) = opt_mut!(d) {
            // SAFETY: the entry's strings are NULL or malloc'ed, not used afterwards (this
            // function's contract).
            unsafe { destruct_entry(e) };
        }
    }
}
