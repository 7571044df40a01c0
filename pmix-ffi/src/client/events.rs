//! `PMIx_Register_event_handler`, `PMIx_Deregister_event_handler` and
//! `PMIx_Notify_event` over the runtime's event handlers (`pmix::events`).
//!
//! A C handler is called on the progress thread with the event's code, source and
//! information (a C array the library owns for the call), no results, and a
//! `cbfunc` the handler calls when it is done: `PMIX_EVENT_ACTION_COMPLETE` ends the
//! chain (later handlers, and the default ones, do not see the event). A handler that
//! has not called `cbfunc` by the time it returns lets the chain go on (OpenPMIx would
//! wait for the call); a later call is still safe.

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use pmix::events::{EventAction, EventHandler, EventInfo};
use pmix::{PmixError, global};
use pmix_core::Status;

use crate::boundary::{
    BAD_PARAM, CbData, call_op, callback, copy_c_str, export, mode_of, op_done, opt_ref, try_slice,
};
use crate::data::convert::{CInfos, infos_from_c, proc_nspace, try_infos};
use crate::types::*;

/// What a handler's `cbfunc` reports back: its status (`i32::MAX` until called).
struct Reply(Arc<AtomicI32>);

const NOT_CALLED: i32 = i32::MAX;

callback! {
    /// The `cbfunc` handed to C handlers: records `status` for the chain and frees the
    /// record (`notification_cbdata`, made for this one call).
    ///
    /// # Safety
    /// `notification_cbdata` is the pointer the handler was given, passed once.
    unsafe fn handler_done(
        status: pmix_status_t,
        _results: *mut pmix_info_t,
        _nresults: usize,
        cbfunc: pmix_op_cbfunc_t,
        thiscbdata: *mut c_void,
        notification_cbdata: *mut c_void,
    ) {
        if !notification_cbdata.is_null() {
            // SAFETY: the `Box<Reply>` `call_handler` leaked for this one call, which the
            // handler gives back once (this function's contract).
            let reply = unsafe { Box::from_raw(notification_cbdata.cast::<Reply>()) };
            reply.0.store(status, Ordering::Release);
        }
        if let Some(cb) = cbfunc {
            call_op(cb, Status::SUCCESS, &CbData(thiscbdata));
        }
    }
}

/// A C handler as a runtime handler.
fn c_handler(f: CHandler, object: Option<ReturnObject>) -> EventHandler {
    Arc::new(move |id, ev| call_handler(f, id, ev, object))
}

/// `PMIX_EVENT_RETURN_OBJECT`: the key of the caller's pointer a handler gets back.
const RETURN_OBJECT_KEY: &[u8] = pmix::wire::keys::EVENT_RETURN_OBJECT.as_bytes();

/// The caller's `PMIX_EVENT_RETURN_OBJECT` pointer, handed back to its handler as it
/// was given: kept as its address (exposed, so the pointer made from it again is the
/// caller's), since the library never dereferences it.
#[derive(Clone, Copy)]
struct ReturnObject(usize);

impl ReturnObject {
    /// The object of the caller's pointer `p`.
    fn new(p: *mut c_void) -> Self {
        Self(p.expose_provenance())
    }

    /// The caller's pointer, as given.
    fn ptr(self) -> *mut c_void {
        std::ptr::with_exposed_provenance_mut(self.0)
    }
}

/// The infos of a registration without its `PMIX_EVENT_RETURN_OBJECT` (a local
/// pointer, which nothing beyond this process could use), and that pointer.
fn split_return_object(infos: &[pmix_info_t]) -> (Vec<pmix_info_t>, Option<ReturnObject>) {
    let mut object = None;
    let rest = infos
        .iter()
        .filter(|i| {
            let is_object = crate::data::info::key(i).is_ok_and(|k| k == RETURN_OBJECT_KEY)
                && i.value.type_ == PMIX_POINTER;
            if is_object {
                // SAFETY: the tag says the union holds a pointer (read, never followed).
                object = Some(ReturnObject::new(unsafe { i.value.data.ptr }));
            }
            !is_object
        })
        .copied()
        .collect();
    (rest, object)
}

/// A C event handler (`pmix_notification_fn_t`, not NULL).
type CHandler = CFn<pmix_notification_fn_t>;

fn call_handler(
    f: CHandler,
    id: usize,
    ev: &EventInfo,
    object: Option<ReturnObject>,
) -> EventAction {
    let mut source = pmix_proc_t {
        rank: ev.source.rank.0,
        ..pmix_proc_t::EMPTY
    };
    copy_c_str(&mut source.nspace, ev.source.nspace.as_bytes());
    // The information, as C infos; a value of a type C cannot hold yet is UNDEF.
    let mut infos = CInfos::lossy(&ev.info);
    if let Some(object) = object {
        infos.push_pointer(RETURN_OBJECT_KEY, object.ptr());
    }
    let reply = Arc::new(AtomicI32::new(NOT_CALLED));
    let record = Box::into_raw(Box::new(Reply(Arc::clone(&reply))));
    // Never NULL, even with no infos: libpmix2 hands every handler an array (it keeps
    // room for the handler's name and return object), and Open MPI 4.1's handler
    // (ext3x) relies on it: given NULL it keeps no list, and releasing that list
    // when no handler of its own matches the code dereferences NULL (mpirun
    // crashed so when our server reported a rank's lost connection).
    let (ptr, n) = (infos.as_mut_ptr(), infos.len());
    // SAFETY: C registered `f` to be called with each event from the library's threads
    // (the C contract of `PMIx_Register_event_handler`); `source` and the `n` infos at
    // `ptr` stay valid until it returns (`infos` is released after), and `record` is
    // freed by `handler_done` when the handler gives it back.
    unsafe {
        f(
            id,
            ev.status,
            &source,
            ptr,
            n,
            std::ptr::null_mut(),
            0,
            Some(handler_done),
            record.cast(),
        )
    };
    drop(infos);
    if reply.load(Ordering::Acquire) == Status::EVENT_ACTION_COMPLETE.0 {
        EventAction::Complete
    } else {
        EventAction::Continue
    }
}

export! {
    /// `PMIx_Register_event_handler`: registers `evhdlr` for `codes` (NULL or none: a
    /// default handler, for every code). With `cbfunc`, returns `PMIX_SUCCESS` and
    /// `cbfunc(status, id, cbdata)` runs once on the progress thread; without, it
    /// blocks and returns the registration's id (a positive number) or an error.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK` (blocking form on the progress thread),
    /// `PMIX_ERR_NOT_AVAILABLE`; `PMIX_ERR_BAD_PARAM` (NULL `evhdlr`, a count with a NULL
    /// array, a bad info); the server's refusal; `PMIX_ERR_UNREACH`.
    ///
    /// # C contract
    /// `codes` is NULL or points to `ncodes` codes; `info` to `ninfo` infos (values as
    /// `PMIx_Put` requires), only during the call; `evhdlr` and `cbfunc` must be safe to
    /// call from another thread.
    fn PMIx_Register_event_handler(
        codes: *mut pmix_status_t,
        ncodes: usize,
        info: *mut pmix_info_t,
        ninfo: usize,
        evhdlr: pmix_notification_fn_t,
        cbfunc: pmix_hdlr_reg_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t [on_panic: Status::ERROR.0] {
        match register(codes, ncodes, info, ninfo, evhdlr, cbfunc, cbdata) {
            // OpenPMIx returns the id of a blocking registration as the status.
            Ok(Some(id)) => pmix_status_t::try_from(id).unwrap_or(Status::ERROR.0),
            Ok(None) => Status::SUCCESS.0,
            Err(s) => s.0,
        }
    }
}

/// [`PMIx_Register_event_handler`]'s body, on its C arguments: the id of a blocking
/// registration, `None` for an accepted non-blocking one.
fn register(
    codes: *mut pmix_status_t,
    ncodes: usize,
    info: *mut pmix_info_t,
    ninfo: usize,
    evhdlr: pmix_notification_fn_t,
    cbfunc: pmix_hdlr_reg_cbfunc_t,
    cbdata: *mut c_void,
) -> Result<Option<usize>, Status> {
    let inst = crate::boundary::admitted("PMIx_Register_event_handler", mode_of(&cbfunc))?;
    let f = evhdlr.ok_or(BAD_PARAM)?;
    let codes = try_slice!(codes, ncodes)?.to_vec();
    let (rest, object) = split_return_object(try_slice!(info, ninfo)?);
    let info = infos_from_c(&rest)?;
    let handler = c_handler(f, object);
    let Some(cb) = cbfunc else {
        return inst
            .register_event_handler(&codes, &info, handler)
            .map(Some)
            .map_err(|e| e.status());
    };
    let cbdata = CbData(cbdata);
    inst.register_event_handler_nb(&codes, &info, handler, move |r| {
        let (status, id) = match r {
            Ok(id) => (Status::SUCCESS.0, id),
            Err(e) => (e.status().0, 0),
        };
        // SAFETY: C gave `cb` with `cbdata` for this registration's one outcome (the C
        // contract of `PMIx_Register_event_handler`).
        unsafe { cb(status, id, cbdata.ptr()) };
    })
    .map(|()| None)
    .map_err(|e| e.status())
}

export! {
    /// `PMIx_Deregister_event_handler`: removes registration `evhdlr_ref`; `cbfunc`, if
    /// given, then runs once on the progress thread with `PMIX_SUCCESS`.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`, `PMIX_ERR_BAD_PARAM` (an id that is not
    /// registered).
    ///
    /// # C contract
    /// `cbfunc`, if given, must be safe to call from another thread with `cbdata`.
    fn PMIx_Deregister_event_handler(
        evhdlr_ref: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = global::get().map_err(|e| e.status())?;
        inst.deregister_event_handler(evhdlr_ref)
            .map_err(|e| e.status())?;
        if let Some(cb) = cbfunc {
            let cbdata = CbData(cbdata);
            inst.post(move || call_op(cb, Status::SUCCESS, &cbdata))
            .map_err(|e| e.status())?;
        }
        Ok(())
    }
}

export! {
    /// `PMIx_Notify_event`: raises `status` from `source` (NULL: this process) in
    /// `range` with `info` (`PMIX_EVENT_CUSTOM_RANGE`, `PMIX_EVENT_NON_DEFAULT`, …).
    /// This process's handlers get it too (unless a custom range leaves it out); the
    /// server gets it unless the range is `PMIX_RANGE_PROC_LOCAL`. `cbfunc`, if given,
    /// runs once on the progress thread with the server's answer.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_NOT_AVAILABLE`; `PMIX_ERR_BAD_PARAM` (a bad source,
    /// info, or count with a NULL array); `PMIX_ERR_UNREACH`.
    ///
    /// # C contract
    /// `source` is NULL or readable; `info` as for [`PMIx_Register_event_handler`];
    /// `cbfunc`, if given, must be safe to call from another thread with `cbdata`.
    fn PMIx_Notify_event(
        status: pmix_status_t,
        source: *const pmix_proc_t,
        range: pmix_data_range_t,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = global::get().map_err(|e| e.status())?;
        let source = match opt_ref!(source) {
            None => None,
            Some(p) => Some(pmix::wire::Proc::new(proc_nspace(p)?, p.rank)),
        };
        let info = try_infos!(info, ninfo)?;
        let cbdata = CbData(cbdata);
        inst.notify_event(
            status,
            source,
            pmix::wire::DataRange(range),
            &info,
            move |r| {
                if let Some(cb) = cbfunc {
                    op_done(cb, cbdata)(r);
                }
            },
        )
        .map_err(|e| e.status())
    }
}
