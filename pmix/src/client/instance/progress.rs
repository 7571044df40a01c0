//! The progress thread: one per instance, it runs every callback.
//!
//! The engine is one state machine, kept under one mutex:
//!
//! ```text
//!   Running ──stop──▶ Draining ──last accepted job done──▶ Stopped
//! ```
//!
//! - **Running**: [`Progress::post`] accepts jobs; the thread runs them in order.
//! - **Draining**: a stop has begun. `post` refuses ([`Error::NotAvailable`]); the thread
//!   runs every job accepted before the stop.
//! - **Stopped**: the thread has finished the last accepted job; no job will ever run
//!   again.
//!
//! Every stopper waits until Stopped, however many stop at once (the old engine let the
//! second stopper return while the first was still joining, so a callback could run
//! after `PMIx_Finalize` returned). The one exception is a stop made *on* the progress
//! thread (an instance dropped inside one of its own callbacks): waiting there would
//! wait for itself, so it only begins draining. The public calls never get that far:
//! they answer `PMIX_ERR_WOULD_BLOCK` on the progress thread (docs/design.md §6).
//!
//! **Tickets.** A request whose answer comes later (a reply from the server) takes a
//! [`Ticket`] when it is accepted ([`Progress::reserve`], refused like `post` once a
//! stop has begun). The ticket posts the request's job when the answer comes, even
//! while Draining, and the engine does not become Stopped while a ticket is
//! outstanding: an accepted request's callback still runs exactly once, before any
//! stopper returns. (Whoever holds tickets must make sure they are used or dropped:
//! the client fails its pending requests before it stops the engine.)
//!
//! **Started on first use.** The thread is not started with the engine but by the first
//! job or ticket ([`Progress::post`], [`Progress::reserve`], a [`Poster`]): a process
//! that never makes a non-blocking call nor receives an event never pays for a thread
//! (a connected `PMIx_Init` stays a few system calls). An engine stopped before any
//! job is Stopped at once.
//!
//! A [`Job`] carries its own completion: the computation's result (or
//! [`Error::Internal`] if it panicked) goes to the completion exactly once, and a panic
//! in the completion (the user's callback) is caught and reported on stderr, never
//! retried. So a callback runs exactly once for every accepted request.

use std::any::Any;
use std::cell::Cell;
use std::collections::VecDeque;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};

use crate::error::Error;

/// Gives every progress thread its own id (0 is "none").
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// On a progress thread, its id; elsewhere 0. A plain integer, so asking costs no
    /// allocation on the caller's thread (unlike `thread::current()`).
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

/// `true` on the progress thread of any instance.
pub(crate) fn on_any_progress_thread() -> bool {
    CURRENT.with(|c| c.get()) != 0
}

/// The text of a panic payload.
fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// Writes one line on stderr in one write, ignoring failure (a closed stderr must not
/// become a second panic).
fn report(line: &str) {
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// A unit of work for the progress thread. It never unwinds into the engine: whatever
/// panics inside is caught and turned into a completion or a report.
pub(crate) struct Job(Box<dyn FnOnce() + Send + 'static>);

impl Job {
    /// A request: `compute` runs on the progress thread, then `complete` gets its result
    /// exactly once. If `compute` panics, `complete` gets [`Error::Internal`] (the C
    /// ABI passes `PMIX_ERROR` to the user's callback). If `complete` itself panics, the
    /// panic is reported on stderr and `complete` is not run again.
    pub(crate) fn request<T: 'static>(
        compute: impl FnOnce() -> Result<T, Error> + Send + 'static,
        complete: impl FnOnce(Result<T, Error>) + Send + 'static,
    ) -> Job {
        Job(Box::new(move || {
            let result = catch_unwind(AssertUnwindSafe(compute)).unwrap_or_else(|p| {
                Err(Error::Internal(format!(
                    "the computation panicked on the progress thread: {}",
                    panic_text(p.as_ref())
                )))
            });
            if let Err(p) = catch_unwind(AssertUnwindSafe(move || complete(result))) {
                report(&format!(
                    "pmix-rs: a callback panicked on the progress thread ({}); it is not run again\n",
                    panic_text(p.as_ref())
                ));
            }
        }))
    }

    /// A job of the layers above, with no result to deliver: a panic in it is reported
    /// on stderr.
    pub(crate) fn plain(f: impl FnOnce() + Send + 'static) -> Job {
        Job(Box::new(move || {
            if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
                report(&format!(
                    "pmix-rs: a job panicked on the progress thread ({})\n",
                    panic_text(p.as_ref())
                ));
            }
        }))
    }

    fn run(self) {
        // `request` and `plain` catch every panic of the caller's code; this outer guard
        // only keeps the engine alive should that ever change.
        let _ = catch_unwind(AssertUnwindSafe(self.0));
    }
}

/// Where the engine is (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Running,
    Draining,
    Stopped,
}

/// The state and the accepted jobs, under one lock.
struct Engine {
    state: State,
    queue: VecDeque<Job>,
    /// Tickets taken and not yet used or dropped.
    tickets: usize,
}

/// What the thread and the stoppers share.
struct Shared {
    engine: Mutex<Engine>,
    /// The thread, once started; `None` before the first job or ticket.
    thread: Mutex<Option<JoinHandle<()>>>,
    /// This engine's id (what [`CURRENT`] holds on its thread).
    id: u64,
    /// Wakes the thread: a job was queued, or a stop began.
    work: Condvar,
    /// Wakes the stoppers: the state became Stopped.
    stopped: Condvar,
    /// `false` once the state has left Running: a lock-free mirror for
    /// [`Progress::is_stopped`], read on every call (written under the lock).
    accepting: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Engine> {
        // No user code runs under this lock, so it cannot be poisoned by a callback.
        self.engine.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts the thread unless it was started already. Called with the engine's lock
    /// held and the engine Running, so a stop cannot begin in between.
    ///
    /// # Errors
    /// [`Error::Os`] when the OS refuses a thread.
    fn ensure_thread(self: &Arc<Self>) -> Result<(), Error> {
        let mut thread = self.thread.lock().unwrap_or_else(PoisonError::into_inner);
        if thread.is_some() {
            return Ok(());
        }
        let (shared, id) = (Arc::clone(self), self.id);
        let handle = thread::Builder::new()
            .name("pmix-progress".into())
            .spawn(move || {
                CURRENT.with(|c| c.set(id));
                run_engine(&shared);
            })
            .map_err(|e| Error::Os(format!("cannot start the progress thread: {e}")))?;
        *thread = Some(handle);
        Ok(())
    }

    /// `true` once the thread was started.
    fn started(&self) -> bool {
        self.thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

/// Marks the engine Stopped when the thread's loop ends, however it ends, so stoppers
/// are never left waiting.
struct StopOnExit<'a>(&'a Shared);

impl Drop for StopOnExit<'_> {
    fn drop(&mut self) {
        let mut engine = self.0.lock();
        engine.state = State::Stopped;
        self.0.accepting.store(false, Ordering::Release);
        self.0.stopped.notify_all();
    }
}

/// The thread's loop: run queued jobs in order; once draining and the queue is empty,
/// become Stopped.
fn run_engine(shared: &Shared) {
    let _stopped = StopOnExit(shared);
    let mut engine = shared.lock();
    loop {
        if let Some(job) = engine.queue.pop_front() {
            drop(engine);
            job.run();
            engine = shared.lock();
            continue;
        }
        if engine.state != State::Running && engine.tickets == 0 {
            // Draining with nothing left: `StopOnExit` marks Stopped and wakes stoppers.
            return;
        }
        engine = shared
            .work
            .wait(engine)
            .unwrap_or_else(PoisonError::into_inner);
    }
}

/// An instance's progress thread (started by its first job: module docs).
pub(crate) struct Progress {
    shared: Arc<Shared>,
}

impl Progress {
    /// A Running engine; its thread starts with the first job or ticket.
    ///
    /// # Errors
    /// None today (the thread starts later: [`Progress::post`] and
    /// [`Progress::reserve`] report a refused thread); kept fallible for callers.
    pub(crate) fn start() -> Result<Progress, Error> {
        let shared = Arc::new(Shared {
            engine: Mutex::new(Engine {
                state: State::Running,
                queue: VecDeque::new(),
                tickets: 0,
            }),
            thread: Mutex::new(None),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            work: Condvar::new(),
            stopped: Condvar::new(),
            accepting: AtomicBool::new(true),
        });
        Ok(Progress { shared })
    }

    /// `true` when called on this progress thread.
    pub(crate) fn is_current(&self) -> bool {
        CURRENT.with(|c| c.get()) == self.shared.id
    }

    /// `true` once a stop has begun (Draining or Stopped).
    pub(crate) fn is_stopped(&self) -> bool {
        !self.shared.accepting.load(Ordering::Acquire)
    }

    /// Queues `job` if the engine is Running, starting the thread if it was not.
    ///
    /// # Errors
    /// [`Error::NotAvailable`] once a stop has begun; [`Error::Os`] when the thread
    /// cannot be started (the job is dropped unrun either way).
    pub(crate) fn post(&self, job: Job) -> Result<(), Error> {
        post(&self.shared, job)
    }

    /// A handle that posts jobs to this engine from anywhere (the client's reader
    /// thread, for the server's events), as [`Progress::post`].
    pub(crate) fn poster(&self) -> Poster {
        Poster(Arc::clone(&self.shared))
    }

    /// Takes a [`Ticket`]: the right to post one job later, even once a stop has
    /// begun; the engine does not stop while it is outstanding. Starts the thread if
    /// it was not running.
    ///
    /// # Errors
    /// [`Error::NotAvailable`] once a stop has begun; [`Error::Os`] when the thread
    /// cannot be started.
    pub(crate) fn reserve(&self) -> Result<Ticket, Error> {
        let mut engine = self.shared.lock();
        if engine.state != State::Running {
            return Err(Error::NotAvailable);
        }
        self.shared.ensure_thread()?;
        engine.tickets += 1;
        Ok(Ticket {
            shared: Some(Arc::clone(&self.shared)),
        })
    }

    /// Stops the engine: refuses new jobs at once, then waits until the thread has run
    /// every job accepted before, and reaps it. Any number of threads may stop at once;
    /// each returns only when no job will run again. Called on the progress thread itself
    /// it only begins draining (the thread ends after the current job and the rest of the
    /// queue): it cannot wait for itself. Idempotent.
    pub(crate) fn stop(&self) {
        let mut engine = self.shared.lock();
        if engine.state == State::Running {
            engine.state = State::Draining;
            self.shared.accepting.store(false, Ordering::Release);
            self.shared.work.notify_one();
        }
        if self.is_current() {
            return;
        }
        if !self.shared.started() {
            // No job or ticket was ever accepted: nothing can run, nothing to reap.
            engine.state = State::Stopped;
            return;
        }
        while engine.state != State::Stopped {
            engine = self
                .shared
                .stopped
                .wait(engine)
                .unwrap_or_else(PoisonError::into_inner);
        }
        drop(engine);
        // Stopped is set as the thread's last act, so every stopper may return now;
        // whoever finds the handle also reaps the thread.
        let handle = self
            .shared
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(h) = handle {
            // Jobs never unwind into the loop, so the thread ends normally.
            let _ = h.join();
        }
    }
}

/// Queues `job` if the engine is Running, starting the thread if it was not.
fn post(shared: &Arc<Shared>, job: Job) -> Result<(), Error> {
    let mut engine = shared.lock();
    if engine.state != State::Running {
        return Err(Error::NotAvailable);
    }
    shared.ensure_thread()?;
    engine.queue.push_back(job);
    drop(engine);
    shared.work.notify_one();
    Ok(())
}

/// Posts jobs to one engine ([`Progress::poster`]).
#[derive(Clone)]
pub(crate) struct Poster(Arc<Shared>);

impl Poster {
    /// As [`Progress::post`].
    ///
    /// # Errors
    /// As [`Progress::post`].
    pub(crate) fn post(&self, job: Job) -> Result<(), Error> {
        post(&self.0, job)
    }
}

/// The right to post one job, taken when a request was accepted
/// ([`Progress::reserve`]). Posting or dropping it gives it back.
pub(crate) struct Ticket {
    shared: Option<Arc<Shared>>,
}

impl Ticket {
    /// Queues `job`, whatever the engine's state short of Stopped (which it cannot
    /// reach while this ticket is out).
    pub(crate) fn post(mut self, job: Job) {
        if let Some(shared) = self.shared.take() {
            let mut engine = shared.lock();
            engine.queue.push_back(job);
            engine.tickets -= 1;
            drop(engine);
            shared.work.notify_one();
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            shared.lock().tickets -= 1;
            shared.work.notify_one();
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
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    fn plain(f: impl FnOnce() + Send + 'static) -> Job {
        Job::plain(f)
    }

    #[test]
    fn the_thread_starts_with_the_first_job_and_an_unused_engine_stops_at_once() {
        let p = Progress::start().unwrap();
        assert!(!p.shared.started(), "no thread before a job");
        p.stop();
        assert!(p.is_stopped());
        assert!(p.post(plain(|| {})).is_err(), "stopped: refused");
        assert!(!p.shared.started(), "a stop starts nothing");

        let p = Progress::start().unwrap();
        let (tx, rx) = channel();
        p.post(plain(move || {
            let _ = tx.send(on_any_progress_thread());
        }))
        .unwrap();
        assert!(p.shared.started());
        assert!(
            rx.recv_timeout(Duration::from_secs(5)).unwrap(),
            "ran on the thread"
        );
        let t = Progress::start().unwrap();
        let ticket = t.reserve().unwrap();
        assert!(t.shared.started(), "a ticket starts the thread");
        drop(ticket);
        p.stop();
        t.stop();
    }

    #[test]
    fn jobs_run_in_order_on_the_thread_and_stop_drains() {
        let p = Arc::new(Progress::start().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        for i in 0..50 {
            let (p2, log2) = (Arc::clone(&p), Arc::clone(&log));
            p.post(plain(move || {
                assert!(p2.is_current());
                log2.lock().unwrap().push(i);
            }))
            .unwrap();
        }
        assert!(!p.is_current());
        p.stop();
        assert_eq!(*log.lock().unwrap(), (0..50).collect::<Vec<_>>());
        assert!(p.is_stopped());
        assert!(matches!(p.post(plain(|| ())), Err(Error::NotAvailable)));
        p.stop(); // idempotent
    }

    #[test]
    fn a_ticket_posts_while_draining_and_holds_the_stop_until_used() {
        let p = Arc::new(Progress::start().unwrap());
        let ticket = p.reserve().unwrap();
        let unused = p.reserve().unwrap();
        let stopper = {
            let p = Arc::clone(&p);
            std::thread::spawn(move || p.stop())
        };
        while !p.is_stopped() {
            std::thread::yield_now();
        }
        // Draining: new jobs and tickets are refused, the tickets out still count.
        assert!(matches!(p.post(plain(|| ())), Err(Error::NotAvailable)));
        assert!(matches!(p.reserve(), Err(Error::NotAvailable)));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!stopper.is_finished(), "the stop waits for the tickets");
        let (tx, rx) = channel();
        ticket.post(plain(move || tx.send(()).unwrap()));
        drop(unused);
        stopper.join().unwrap();
        rx.try_recv()
            .expect("the ticket's job ran before the stop returned");
    }

    #[test]
    fn a_panicking_job_does_not_kill_the_thread() {
        let p = Progress::start().unwrap();
        let n = Arc::new(AtomicUsize::new(0));
        p.post(plain(|| panic!("boom"))).unwrap();
        let n2 = Arc::clone(&n);
        p.post(plain(move || {
            n2.fetch_add(1, Ordering::SeqCst);
        }))
        .unwrap();
        p.stop();
        assert_eq!(n.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_panicking_computation_completes_with_an_internal_error_exactly_once() {
        let p = Progress::start().unwrap();
        let (tx, rx) = channel();
        p.post(Job::request(
            || -> Result<u32, Error> { panic!("injected") },
            move |r| tx.send(r).unwrap(),
        ))
        .unwrap();
        p.stop();
        let r = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        match r {
            Err(Error::Internal(text)) => assert!(text.contains("injected"), "{text}"),
            other => panic!("{other:?}"),
        }
        assert!(rx.try_recv().is_err(), "completed twice");
    }

    #[test]
    fn a_panicking_completion_runs_once_and_later_jobs_still_run() {
        let p = Progress::start().unwrap();
        let runs = Arc::new(AtomicUsize::new(0));
        let r2 = Arc::clone(&runs);
        p.post(Job::request(
            || Ok(7),
            move |r: Result<i32, Error>| {
                assert_eq!(r.unwrap(), 7);
                r2.fetch_add(1, Ordering::SeqCst);
                panic!("the user's callback panics");
            },
        ))
        .unwrap();
        let after = Arc::new(AtomicUsize::new(0));
        let a2 = Arc::clone(&after);
        p.post(plain(move || {
            a2.fetch_add(1, Ordering::SeqCst);
        }))
        .unwrap();
        p.stop();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert_eq!(after.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn every_stopper_waits_for_the_running_job() {
        // A job that sleeps; two stoppers start while it runs. Neither may return
        // before the job has finished.
        let p = Arc::new(Progress::start().unwrap());
        let (started_tx, started_rx) = channel();
        let finished = Arc::new(AtomicBool::new(false));
        let f2 = Arc::clone(&finished);
        p.post(plain(move || {
            started_tx.send(()).unwrap();
            thread::sleep(Duration::from_millis(30));
            f2.store(true, Ordering::SeqCst);
        }))
        .unwrap();
        started_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let (done_tx, done_rx) = channel();
        for _ in 0..2 {
            let (p, finished, done) = (Arc::clone(&p), Arc::clone(&finished), done_tx.clone());
            thread::spawn(move || {
                p.stop();
                done.send(finished.load(Ordering::SeqCst)).unwrap();
            });
        }
        for _ in 0..2 {
            let saw_finished = done_rx.recv_timeout(Duration::from_secs(10)).unwrap();
            assert!(saw_finished, "a stopper returned while the job still ran");
        }
    }

    #[test]
    fn a_stop_on_the_progress_thread_drains_without_waiting_for_itself() {
        let p = Arc::new(Progress::start().unwrap());
        let (tx, rx) = channel();
        let (go_tx, go_rx) = channel::<()>();
        let p2 = Arc::clone(&p);
        let tx2 = tx.clone();
        p.post(plain(move || {
            go_rx.recv_timeout(Duration::from_secs(10)).unwrap();
            p2.stop(); // must return: it cannot wait for its own thread
            tx2.send("stopper returned").unwrap();
        }))
        .unwrap();
        // Accepted before the stop began: it still runs, after the stopping job.
        p.post(plain(move || tx.send("queued job ran").unwrap()))
            .unwrap();
        go_tx.send(()).unwrap();
        let got: Vec<_> = (0..2)
            .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
            .collect();
        assert_eq!(got, ["stopper returned", "queued job ran"]);
        assert!(p.is_stopped());
        assert!(matches!(p.post(plain(|| ())), Err(Error::NotAvailable)));
        p.stop();
    }
}
