//! What wakes the job loop ([`super::job`]): one channel of [`Wake`]s, fed by a thread
//! passing on the server's events and a thread turning SIGCHLD into [`Wake::Child`].
//!
//! **No lost wakeup.** SIGCHLD is caught through `signal_hook`'s iterator (its handler
//! only records the signal and writes to a self-pipe; the thread reading that pipe
//! sends the [`Wake`]), registered before the first child is spawned. Signals that
//! come together may be merged into one [`Wake::Child`], which is enough: the loop
//! then polls every unreaped child (`try_wait`). One that comes while the loop is busy
//! stays in the channel, and the loop's next wait returns at once. A SIGCHLD from a
//! child that is not a rank (in tests, another test's) only wakes the loop once more.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;
use std::time::Duration;

use signal_hook::consts::signal::SIGCHLD;

use super::job::{Event, JobServer};

/// What wakes the job loop.
#[derive(Debug)]
pub enum Wake {
    /// A server event, with its job's index.
    Event((usize, Event)),
    /// A child ended (SIGCHLD): some rank may be reaped.
    Child,
}

/// The thread sending a [`Wake::Child`] on each SIGCHLD, from [`ChildWatch::start`]
/// until it is dropped (which stops and joins it).
pub struct ChildWatch {
    handle: signal_hook::iterator::Handle,
    thread: Option<JoinHandle<()>>,
}

impl ChildWatch {
    /// Catches SIGCHLD (from now on) and starts the thread that sends a
    /// [`Wake::Child`] to `to` on each one.
    ///
    /// # Errors
    /// A message saying what failed: catching SIGCHLD, or starting the thread.
    pub fn start(to: Sender<Wake>) -> Result<ChildWatch, String> {
        let mut sigs = signal_hook::iterator::Signals::new([SIGCHLD])
            .map_err(|e| format!("cannot catch SIGCHLD: {e}"))?;
        let handle = sigs.handle();
        let thread = std::thread::Builder::new()
            .name("pmix-run-sigchld".into())
            .spawn(move || {
                for _ in sigs.forever() {
                    if to.send(Wake::Child).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| format!("cannot start the SIGCHLD thread: {e}"))?;
        Ok(ChildWatch {
            handle,
            thread: Some(thread),
        })
    }
}

impl Drop for ChildWatch {
    fn drop(&mut self) {
        // Ends `forever()` at once; the handler's action is unregistered with the
        // iterator.
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Stops the thread of [`pass_on_events`] when dropped.
pub struct EventsStop(Arc<AtomicBool>);

impl Drop for EventsStop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Starts the thread that passes `server`'s events on to `to`, asking for each with
/// [`JobServer::next_event`]`(wait)`, until the returned guard is dropped or `to`'s
/// receiver is gone. The thread is not joined: it ends on its own within one `wait`
/// (an event it took after the guard was dropped is not passed on).
///
/// # Panics
/// When the thread cannot be started.
pub fn pass_on_events(server: Arc<dyn JobServer>, to: Sender<Wake>, wait: Duration) -> EventsStop {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    std::thread::Builder::new()
        .name("pmix-run-events".into())
        .spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                if let Some(ev) = server.next_event(wait)
                    && to.send(Wake::Event(ev)).is_err()
                {
                    return;
                }
            }
        })
        .expect("a thread to pass on the server's events");
    EventsStop(stop)
}
