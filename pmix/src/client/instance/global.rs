//! The process-wide instance behind the C ABI's `PMIx_Init` / `PMIx_Finalize`.
//!
//! C callers have no handle: the library holds one instance per process. Init is
//! reference-counted as in OpenPMIx: every successful init needs a finalize, and the
//! instance ends (its progress thread stopped) at the last one. An init while an
//! instance exists keeps that instance and its role, whatever role it asks for. After
//! the last finalize a new init starts a fresh instance.
//!
//! **Stoppers wait.** The last finalize takes the instance out of the process-wide slot
//! at once (later calls get `PMIX_ERR_INIT`), then waits, outside the lock, while the
//! progress thread runs the callbacks it had accepted (they may call in and get
//! `PMIX_ERR_INIT`). Meanwhile the instance is *ending*: a [`stop_progress`] or
//! [`finalize`] on another thread waits for it too, so none of them returns while a
//! callback still runs. Nothing waits on a progress thread (a callback cannot wait for
//! its own thread, and a rule with no exception cannot deadlock two instances).
//!
//! **Init does not hold the slot's lock while it connects** (a connect may take
//! [`crate::client::CONNECT_WAIT`]): initialisers queue on a lock of their own, so
//! two first inits make one instance, while every other call goes on (and gets
//! `PMIX_ERR_INIT` until the instance is in the slot, as before any init).

use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::client::instance::progress;
use crate::client::instance::{InitOptions, Pmix, Role, would_block};
use crate::error::Error;

struct Live {
    instance: Pmix,
    refs: usize,
}

struct Global {
    /// The instance between its first init and its last finalize.
    live: Option<Live>,
    /// Instances whose last finalize is still running their accepted callbacks.
    ending: Vec<Pmix>,
}

static GLOBAL: RwLock<Global> = RwLock::new(Global {
    live: None,
    ending: Vec::new(),
});

/// Held by the one init that is making a new instance (outside [`GLOBAL`]'s lock).
static MAKING: Mutex<()> = Mutex::new(());

fn read() -> RwLockReadGuard<'static, Global> {
    GLOBAL.read().unwrap_or_else(PoisonError::into_inner)
}

fn write() -> RwLockWriteGuard<'static, Global> {
    GLOBAL.write().unwrap_or_else(PoisonError::into_inner)
}

/// Initialises the process-wide instance, or adds a reference to the existing one.
///
/// # Errors
/// [`Error::WouldBlock`] (diagnostic naming `call`) on the instance's progress thread;
/// [`Pmix::init`]'s errors for a new instance.
pub fn init(role: Role, options: InitOptions, call: &'static str) -> Result<Pmix, Error> {
    // A repeated init declares its model too, as OpenPMIx's does.
    if let Some(existing) = add_reference(call)? {
        existing.declare_model(&options.model);
        return Ok(existing);
    }
    let _making = MAKING.lock().unwrap_or_else(PoisonError::into_inner);
    // Another init may have made it while this one waited.
    if let Some(existing) = add_reference(call)? {
        existing.declare_model(&options.model);
        return Ok(existing);
    }
    let instance = Pmix::init(role, options)?;
    write().live = Some(Live {
        instance: instance.clone(),
        refs: 1,
    });
    Ok(instance)
}

/// One more reference to the live instance, if there is one.
///
/// # Errors
/// [`Error::WouldBlock`] on its progress thread.
fn add_reference(call: &'static str) -> Result<Option<Pmix>, Error> {
    let mut g = write();
    match g.live.as_mut() {
        Some(live) if live.instance.on_progress_thread() => Err(would_block(call)),
        Some(live) => {
            live.refs += 1;
            Ok(Some(live.instance.clone()))
        }
        None => Ok(None),
    }
}

/// The process-wide instance.
///
/// # Errors
/// [`Error::Init`] before init or after the last finalize began.
pub fn get() -> Result<Pmix, Error> {
    read()
        .live
        .as_ref()
        .map(|l| l.instance.clone())
        .ok_or(Error::Init)
}

/// `true` between an init and the last finalize.
pub fn is_initialized() -> bool {
    read().live.is_some()
}

/// Waits until every instance whose last finalize is still running its accepted
/// callbacks has stopped. Returns at once on any progress thread. For callers that
/// found no instance ([`get`] said [`Error::Init`]) and must not return while a
/// finalize on another thread still runs callbacks (`PMIx_Finalize` called twice at
/// once).
pub fn wait_for_ending() {
    if progress::on_any_progress_thread() {
        return;
    }
    let ending = read().ending.clone();
    for instance in &ending {
        instance.wait_stopped();
    }
}

/// Drops one reference; the last one finalises the instance: it returns once the
/// progress thread has run every accepted callback and stopped.
///
/// # Errors
/// [`Error::Init`] when not initialised (after [`wait_for_ending`], so a finalize racing
/// the last one returns no earlier than it); [`Error::WouldBlock`] (diagnostic naming
/// `call`) on the instance's progress thread, where nothing changes.
pub fn finalize(call: &'static str) -> Result<(), Error> {
    let last = {
        let mut g = write();
        let Some(live) = g.live.as_mut() else {
            drop(g);
            wait_for_ending();
            return Err(Error::Init);
        };
        if live.instance.on_progress_thread() {
            return Err(would_block(call));
        }
        live.refs -= 1;
        if live.refs > 0 {
            return Ok(());
        }
        let instance = g.live.take().map(|l| l.instance);
        if let Some(i) = &instance {
            g.ending.push(i.clone());
        }
        instance
    };
    // Drained outside the lock: callbacks still running may call in (and get INIT).
    let Some(instance) = last else {
        return Ok(());
    };
    let result = instance.finalize_as(call);
    write().ending.retain(|p| !p.same_instance(&instance));
    result
}

/// `PMIx_Progress_thread_stop` on the process-wide instance: refuses new requests at
/// once, then returns when every accepted callback has run (also those of an instance
/// whose last finalize is still running them).
///
/// # Errors
/// [`Error::Init`] before init or after the last finalize began (after
/// [`wait_for_ending`]); [`Error::WouldBlock`] (diagnostic naming `call`) on the
/// instance's progress thread, where nothing changes.
pub fn stop_progress(call: &'static str) -> Result<(), Error> {
    let live = read().live.as_ref().map(|l| l.instance.clone());
    if live.as_ref().is_some_and(Pmix::on_progress_thread) {
        return Err(would_block(call));
    }
    wait_for_ending();
    match live {
        Some(instance) => instance.stop_progress_as(call),
        None => Err(Error::Init),
    }
}
