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
use pmix::{Mode, PmixError, global};
use pmix_core::Status;

use crate::boundary::{BAD_PARAM, CbData, c_slice, callback, copy_c_str, export, op_done};
use crate::convert::{from_wire, infos_to_wire, proc_nspace};
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
            // SAFETY: made by `Box::into_raw` in `call_handler` for this one call, and
            // given back here once (caller's contract).
            let reply = unsafe { Box::from_raw(notification_cbdata.cast::<Reply>()) };
            reply.0.store(status, Ordering::Release);
        }
        if let Some(cb) = cbfunc {
            // SAFETY: the handler's own completion, with its own data.
            unsafe { cb(Status::SUCCESS.0, thiscbdata) };
        }
    }
}

/// A C handler as a runtime handler.
fn c_handler(f: CHandler, object: Option<ReturnObject>) -> EventHandler {
    Arc::new(move |id, ev| call_handler(f, id, ev, object))
}

/// `PMIX_EVENT_RETURN_OBJECT`: the key of the caller's pointer a handler gets back.
const RETURN_OBJECT_KEY: &[u8] = b"pmix.evobject";

/// The caller's `PMIX_EVENT_RETURN_OBJECT` pointer, handed back to its handler as it
/// was given (never dereferenced here).
#[derive(Clone, Copy)]
struct ReturnObject(*mut c_void);

// SAFETY: the pointer is only handed back, unchanged, to the caller's own handler; the
// library never dereferences it.
unsafe impl Send for ReturnObject {}
// SAFETY: as for Send: shared copies are only handed back, never dereferenced.
unsafe impl Sync for ReturnObject {}

/// The infos of a registration without its `PMIX_EVENT_RETURN_OBJECT` (a local
/// pointer, which nothing beyond this process could use), and that pointer.
fn split_return_object(infos: &[pmix_info_t]) -> (Vec<pmix_info_t>, Option<ReturnObject>) {
    let mut object = None;
    let rest = infos
        .iter()
        .filter(|i| {
            let is_object = crate::info::key(i).is_ok_and(|k| k == RETURN_OBJECT_KEY)
                && i.value.type_ == PMIX_POINTER;
            if is_object {
                // SAFETY: the tag says the union holds a pointer.
                object = Some(ReturnObject(unsafe { i.value.data.ptr }));
            }
            !is_object
        })
        // SAFETY: a bitwise copy, only read (converted) while `infos` lives.
        .map(|i| unsafe { std::ptr::read(i) })
        .collect();
    (rest, object)
}

/// A C event handler (`pmix_notification_fn_t`, not NULL).
type CHandler = unsafe extern "C" fn(
    usize,
    pmix_status_t,
    *const pmix_proc_t,
    *mut pmix_info_t,
    usize,
    *mut pmix_info_t,
    usize,
    pmix_event_notification_cbfunc_fn_t,
    *mut c_void,
);

fn call_handler(
    f: CHandler,
    id: usize,
    ev: &EventInfo,
    object: Option<ReturnObject>,
) -> EventAction {
    let mut source = pmix_proc_t {
        nspace: [0; PMIX_MAX_NSLEN + 1],
        rank: ev.source.rank.0,
    };
    copy_c_str(&mut source.nspace, ev.source.nspace.as_bytes());
    // The information, as C infos; a value of a type C cannot hold yet is UNDEF.
    let mut infos: Vec<pmix_info_t> = ev
        .info
        .iter()
        .map(|i| {
            let mut c = pmix_info_t {
                key: [0; PMIX_MAX_KEYLEN + 1],
                flags: i.flags.0,
                value: pmix_value_t {
                    type_: PMIX_UNDEF,
                    data: pmix_value_data { raw: [0; 3] },
                },
            };
            copy_c_str(&mut c.key, i.key.as_bytes());
            let _ = from_wire(&i.value, &mut c.value);
            c
        })
        .collect();
    if let Some(ReturnObject(ptr)) = object {
        let mut c = pmix_info_t {
            key: [0; PMIX_MAX_KEYLEN + 1],
            flags: 0,
            value: pmix_value_t {
                type_: PMIX_POINTER,
                data: pmix_value_data { ptr },
            },
        };
        copy_c_str(&mut c.key, RETURN_OBJECT_KEY);
        infos.push(c);
    }
    let reply = Arc::new(AtomicI32::new(NOT_CALLED));
    let record = Box::into_raw(Box::new(Reply(Arc::clone(&reply))));
    // Never NULL, even with no infos: libpmix2 hands every handler an array (it keeps
    // room for the handler's name and return object), and Open MPI 4.1's handler
    // (ext3x) relies on it: given NULL it keeps no list, and releasing that list
    // when no handler of its own matches the code dereferences NULL (mpirun
    // crashed so when our server reported a rank's lost connection).
    infos.reserve(1);
    let ptr = infos.as_mut_ptr();
    // SAFETY: the user's handler with valid pointers for the call: `source` and
    // `infos` live until it returns; `record` is freed by `handler_done`.
    unsafe {
        f(
            id,
            ev.status,
            &source,
            ptr,
            infos.len(),
            std::ptr::null_mut(),
            0,
            Some(handler_done),
            record.cast(),
        )
    };
    for i in &mut infos {
        // SAFETY: each value holds what `from_wire` allocated, released once.
        unsafe { crate::value::PMIx_Value_destruct(&mut i.value) };
    }
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
    /// # Safety
    /// `codes` is NULL or points to `ncodes` codes; `info` to `ninfo` infos (values as
    /// `PMIx_Put` requires), only during the call; `evhdlr` and `cbfunc` must be safe to
    /// call from another thread.
    unsafe fn PMIx_Register_event_handler(
        codes: *mut pmix_status_t,
        ncodes: usize,
        info: *mut pmix_info_t,
        ninfo: usize,
        evhdlr: pmix_notification_fn_t,
        cbfunc: pmix_hdlr_reg_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t [on_panic: Status::ERROR.0] {
        // SAFETY: forwarded from the caller.
        match unsafe { register(codes, ncodes, info, ninfo, evhdlr, cbfunc, cbdata) } {
            // OpenPMIx returns the id of a blocking registration as the status.
            Ok(Some(id)) => pmix_status_t::try_from(id).unwrap_or(Status::ERROR.0),
            Ok(None) => Status::SUCCESS.0,
            Err(s) => s.0,
        }
    }
}

/// [`PMIx_Register_event_handler`]'s body: the id of a blocking registration, `None`
/// for an accepted non-blocking one.
///
/// # Safety
/// As [`PMIx_Register_event_handler`].
unsafe fn register(
    codes: *mut pmix_status_t,
    ncodes: usize,
    info: *mut pmix_info_t,
    ninfo: usize,
    evhdlr: pmix_notification_fn_t,
    cbfunc: pmix_hdlr_reg_cbfunc_t,
    cbdata: *mut c_void,
) -> Result<Option<usize>, Status> {
    let inst = global::get().map_err(|e| e.status())?;
    let mode = if cbfunc.is_none() {
        Mode::Blocking
    } else {
        Mode::NonBlocking
    };
    inst.admit("PMIx_Register_event_handler", mode)
        .map_err(|e| e.status())?;
    let f = evhdlr.ok_or(BAD_PARAM)?;
    // SAFETY: forwarded from the caller.
    let codes = unsafe { c_slice(codes, ncodes) }?.to_vec();
    // SAFETY: forwarded from the caller.
    let (rest, object) = split_return_object(unsafe { c_slice(info, ninfo) }?);
    // SAFETY: the copies of the caller's infos, read during the call.
    let info = unsafe { infos_to_wire(&rest) }?;
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
        // SAFETY: the caller's callback with its own data, once.
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
    /// # Safety
    /// `cbfunc`, if given, must be safe to call from another thread with `cbdata`.
    unsafe fn PMIx_Deregister_event_handler(
        evhdlr_ref: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = global::get().map_err(|e| e.status())?;
        inst.deregister_event_handler(evhdlr_ref)
            .map_err(|e| e.status())?;
        if let Some(cb) = cbfunc {
            let cbdata = CbData(cbdata);
            inst.post(move || {
                // SAFETY: the caller's callback with its own data, once.
                unsafe { cb(Status::SUCCESS.0, cbdata.ptr()) };
            })
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
    /// # Safety
    /// `source` is NULL or readable; `info` as for [`PMIx_Register_event_handler`];
    /// `cbfunc`, if given, must be safe to call from another thread with `cbdata`.
    unsafe fn PMIx_Notify_event(
        status: pmix_status_t,
        source: *const pmix_proc_t,
        range: pmix_data_range_t,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        let inst = global::get().map_err(|e| e.status())?;
        // SAFETY: a non-NULL `source` is readable (caller's contract).
        let source = match unsafe { source.as_ref() } {
            None => None,
            Some(p) => Some(pmix::wire::Proc::new(proc_nspace(p)?, p.rank)),
        };
        // SAFETY: forwarded from the caller.
        let info = unsafe { infos_to_wire(c_slice(info, ninfo)?) }?;
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
