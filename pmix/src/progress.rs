//! The progress thread: one per instance, it runs every callback.
//!
//! Jobs (closures) are queued on a channel and run in order. Stopping closes the channel
//! and joins the thread, which first runs every job already accepted, so a request that
//! was accepted always gets its callback. After a stop, [`Progress::post`] refuses new
//! jobs with [`Error::NotAvailable`].

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex, PoisonError};
use std::thread::{self, JoinHandle};

use crate::error::Error;

/// Gives every progress thread its own id (0 is "none").
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// On a progress thread, its id; elsewhere 0. A plain integer, so asking costs no
    /// allocation on the caller's thread (unlike `thread::current()`).
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

/// A unit of work for the progress thread.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// An instance's progress thread.
pub(crate) struct Progress {
    sender: Mutex<Option<Sender<Job>>>,
    handle: Mutex<Option<JoinHandle<()>>>,
    id: u64,
    stopped: AtomicBool,
}

impl Progress {
    /// Starts the thread.
    pub(crate) fn start() -> Result<Progress, Error> {
        let (tx, rx) = channel::<Job>();
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let handle = thread::Builder::new()
            .name("pmix-progress".into())
            .spawn(move || {
                CURRENT.with(|c| c.set(id));
                for job in rx {
                    // A panicking job must not take the thread (and every later
                    // callback) with it.
                    if catch_unwind(AssertUnwindSafe(job)).is_err() {
                        eprintln!("pmix-rs: a callback panicked on the progress thread");
                    }
                }
            })
            .map_err(|e| Error::Os(format!("cannot start the progress thread: {e}")))?;
        Ok(Progress {
            id,
            sender: Mutex::new(Some(tx)),
            handle: Mutex::new(Some(handle)),
            stopped: AtomicBool::new(false),
        })
    }

    /// `true` when called on this progress thread.
    pub(crate) fn is_current(&self) -> bool {
        CURRENT.with(|c| c.get()) == self.id
    }

    /// `true` once [`Progress::stop`] has begun.
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Queues `job`.
    ///
    /// # Errors
    /// [`Error::NotAvailable`] once the thread is stopped (the job is dropped unrun).
    pub(crate) fn post(&self, job: Job) -> Result<(), Error> {
        let guard = self.sender.lock().unwrap_or_else(PoisonError::into_inner);
        match guard.as_ref() {
            Some(tx) if !self.is_stopped() => tx.send(job).map_err(|_| Error::NotAvailable),
            _ => Err(Error::NotAvailable),
        }
    }

    /// Stops the thread after it has run every job already queued, and joins it. Called
    /// on the progress thread itself, it only closes the queue (the thread ends after
    /// the current job); callers that must not do that check [`Progress::is_current`]
    /// first. Idempotent.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        drop(
            self.sender
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        if self.is_current() {
            return;
        }
        let handle = self
            .handle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(h) = handle {
            // The thread catches job panics, so join only fails if it was killed.
            let _ = h.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn jobs_run_in_order_on_the_thread_and_stop_drains() {
        let p = Arc::new(Progress::start().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        for i in 0..50 {
            let (p2, log2) = (Arc::clone(&p), Arc::clone(&log));
            p.post(Box::new(move || {
                assert!(p2.is_current());
                log2.lock().unwrap().push(i);
            }))
            .unwrap();
        }
        assert!(!p.is_current());
        p.stop();
        assert_eq!(*log.lock().unwrap(), (0..50).collect::<Vec<_>>());
        assert!(p.is_stopped());
        assert!(matches!(p.post(Box::new(|| ())), Err(Error::NotAvailable)));
        p.stop(); // idempotent
    }

    #[test]
    fn a_panicking_job_does_not_kill_the_thread() {
        let p = Progress::start().unwrap();
        let n = Arc::new(AtomicUsize::new(0));
        p.post(Box::new(|| panic!("boom"))).unwrap();
        let n2 = Arc::clone(&n);
        p.post(Box::new(move || {
            n2.fetch_add(1, Ordering::SeqCst);
        }))
        .unwrap();
        p.stop();
        assert_eq!(n.load(Ordering::SeqCst), 1);
    }
}
