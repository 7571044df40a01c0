//! What wakes the job loop ([`super::job`]): one channel of [`Wake`]s, fed by the
//! server's host ([`super::server::RunHost`], on the server's progress thread: the
//! ranks' upcalls and spawns, as they come) and by a thread turning SIGCHLD into
//! [`Wake::Child`].
//!
//! **No lost wakeup.** SIGCHLD is caught through `signal_hook`'s iterator (its handler
//! only records the signal and writes to a self-pipe; the thread reading that pipe
//! sends the [`Wake`]), registered before the first child is spawned. Signals that
//! come together may be merged into one [`Wake::Child`], which is enough: the loop
//! then polls every unreaped child (`try_wait`). One that comes while the loop is busy
//! stays in the channel, and the loop's next wait returns at once. A SIGCHLD from a
//! child that is not a rank (in tests, another test's) only wakes the loop once more.

use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

use signal_hook::consts::signal::SIGCHLD;

use super::jobserver::Event;

/// What wakes the job loop.
#[derive(Debug)]
pub enum Wake {
    /// A server event, with its job's index (sent by the server's host).
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
