//! The process-wide instance behind the C ABI's `PMIx_Init` / `PMIx_Finalize`.
//!
//! C callers have no handle: the library holds one instance per process. Init is
//! reference-counted as in OpenPMIx: every successful init needs a finalize, and the
//! instance ends (its progress thread stopped) at the last one. An init while an
//! instance exists keeps that instance and its role, whatever role it asks for. After
//! the last finalize a new init starts a fresh instance.

use std::sync::{PoisonError, RwLock};

use crate::error::Error;
use crate::instance::{InitOptions, Pmix, Role, would_block};

struct Global {
    instance: Pmix,
    refs: usize,
}

static GLOBAL: RwLock<Option<Global>> = RwLock::new(None);

/// Initialises the process-wide instance, or adds a reference to the existing one.
///
/// # Errors
/// [`Error::WouldBlock`] (diagnostic naming `call`) on the instance's progress thread;
/// [`Pmix::init`]'s errors for a new instance.
pub fn init(role: Role, options: InitOptions, call: &'static str) -> Result<Pmix, Error> {
    let mut g = GLOBAL.write().unwrap_or_else(PoisonError::into_inner);
    if let Some(g) = g.as_mut() {
        if g.instance.on_progress_thread() {
            return Err(would_block(call));
        }
        g.refs += 1;
        return Ok(g.instance.clone());
    }
    let instance = Pmix::init(role, options)?;
    *g = Some(Global {
        instance: instance.clone(),
        refs: 1,
    });
    Ok(instance)
}

/// The process-wide instance.
///
/// # Errors
/// [`Error::Init`] before init or after the last finalize.
pub fn get() -> Result<Pmix, Error> {
    GLOBAL
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .map(|g| g.instance.clone())
        .ok_or(Error::Init)
}

/// `true` between an init and the last finalize.
pub fn is_initialized() -> bool {
    GLOBAL
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .is_some()
}

/// Drops one reference; the last one finalises the instance (its progress thread runs
/// every accepted callback, then stops).
///
/// # Errors
/// [`Error::Init`] when not initialised; [`Error::WouldBlock`] (diagnostic naming
/// `call`) on the instance's progress thread, where nothing changes.
pub fn finalize(call: &'static str) -> Result<(), Error> {
    let last = {
        let mut g = GLOBAL.write().unwrap_or_else(PoisonError::into_inner);
        let Some(state) = g.as_mut() else {
            return Err(Error::Init);
        };
        if state.instance.on_progress_thread() {
            return Err(would_block(call));
        }
        state.refs -= 1;
        if state.refs > 0 {
            return Ok(());
        }
        g.take().map(|s| s.instance)
    };
    // Joined outside the lock: callbacks still running may call in (and get INIT).
    match last {
        Some(instance) => instance.finalize_as(call),
        None => Ok(()),
    }
}
