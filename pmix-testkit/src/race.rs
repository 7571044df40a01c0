//! The race harness: many iterations of `PMIx_Progress_thread_stop` ∥ `PMIx_Finalize` ∥
//! `_nb` requests on one engine, with delays injected so that the windows are really
//! hit. It checks the two promises of docs/design.md §6 and `Progress`:
//!
//! 1. every accepted request's callback runs exactly once (and a refused one never);
//! 2. no callback runs, or is still running, once a stopper (stop or finalize) has
//!    returned.
//!
//! Each iteration: a poster thread submits requests (a burst, then a trickle) until one
//! is refused; the first
//! callback signals that it started and then sleeps (a job that sleeps), and the two
//! stoppers start *during* it (a stop that starts mid-callback), one after the other
//! with a gap, or both at once; which goes first varies. The harness is generic over
//! [`Engine`], so the same checks run against the real engine and against a faithful
//! copy of the old one (`pmix/tests/races.rs`), where they must find a violation, and
//! through the process-wide instance (`pmix/tests/global_races.rs`) and the C ABI
//! (`pmix-ffi/tests/races.rs`).
//!
//! Every wait is bounded: a hung stopper fails the run instead of hanging the suite.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What the harness drives.
pub trait Engine: Send + Sync + 'static {
    /// Submits one request whose completion runs `callback` on the engine's thread;
    /// `true` when accepted (the callback must then run exactly once), `false` when
    /// refused (it must never run).
    fn submit(&self, callback: Box<dyn FnOnce() + Send>) -> bool;
    /// `PMIx_Progress_thread_stop`.
    fn stop(&self);
    /// `PMIx_Finalize`.
    fn finalize(&self);
}

/// How long any one wait of the harness may take before the run fails.
const BOUND: Duration = Duration::from_secs(20);

/// The most requests one iteration submits.
const MAX_REQUESTS: usize = 256;

/// A one-shot signal many threads can wait for, with a bound.
#[derive(Default)]
struct Latch {
    set: Mutex<bool>,
    cond: Condvar,
}

impl Latch {
    fn open(&self) {
        *self.set.lock().unwrap() = true;
        self.cond.notify_all();
    }

    /// `false` if the bound passed first.
    fn wait(&self) -> bool {
        let guard = self.set.lock().unwrap();
        let (guard, _) = self
            .cond
            .wait_timeout_while(guard, BOUND, |set| !*set)
            .unwrap();
        *guard
    }
}

/// One iteration's record.
struct Tracker {
    runs: Vec<AtomicU32>,
    /// Set by each stopper right after its call returned.
    stopper_returned: AtomicBool,
    violations: Mutex<Vec<String>>,
    first_started: Latch,
}

impl Tracker {
    fn violation(&self, what: String) {
        self.violations.lock().unwrap().push(what);
    }
}

/// A small deterministic generator (xorshift64*), so a failing iteration can be
/// replayed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// Which stopper starts first.
#[derive(Clone, Copy, Debug)]
enum Order {
    StopThenFinalize,
    FinalizeThenStop,
    Together,
}

/// What a clean run saw, to show the windows were really exercised.
#[derive(Debug, Default)]
pub struct Stats {
    /// Iterations run.
    pub iterations: usize,
    /// Requests accepted (each called back exactly once).
    pub accepted: usize,
    /// Requests refused because a stop or finalize had begun.
    pub refused: usize,
}

/// Runs `iterations` iterations, each on a fresh engine from `make`. Returns the
/// statistics, or the first iteration's violations (with its parameters).
pub fn run<E: Engine>(iterations: usize, make: impl Fn() -> E) -> Result<Stats, String> {
    let mut stats = Stats::default();
    for i in 0..iterations {
        let mut rng = Rng::new(i as u64);
        let order = match rng.below(3) {
            0 => Order::StopThenFinalize,
            1 => Order::FinalizeThenStop,
            _ => Order::Together,
        };
        let sleep = Duration::from_micros(100 + rng.below(500));
        let gap = Duration::from_micros(rng.below(300));
        let (accepted, refused, violations) = iteration(make(), order, sleep, gap);
        if !violations.is_empty() {
            let more = match violations.len() {
                0..=3 => String::new(),
                n => format!("; and {} more", n - 3),
            };
            return Err(format!(
                "iteration {i} ({order:?}, first callback sleeps {sleep:?}, second stopper \
                 {gap:?} after the first): {}{more}",
                violations[..violations.len().min(3)].join("; ")
            ));
        }
        stats.iterations += 1;
        stats.accepted += accepted;
        stats.refused += refused;
    }
    Ok(stats)
}

/// One iteration: returns (accepted, refused, violations).
fn iteration<E: Engine>(
    engine: E,
    order: Order,
    sleep: Duration,
    gap: Duration,
) -> (usize, usize, Vec<String>) {
    let engine = Arc::new(engine);
    let t = Arc::new(Tracker {
        runs: (0..MAX_REQUESTS).map(|_| AtomicU32::new(0)).collect(),
        stopper_returned: AtomicBool::new(false),
        violations: Mutex::new(Vec::new()),
        first_started: Latch::default(),
    });
    let (done_tx, done_rx) = channel::<&'static str>();

    // The poster: submits until refused (or MAX_REQUESTS).
    let poster = {
        let (engine, t, done) = (Arc::clone(&engine), Arc::clone(&t), done_tx.clone());
        thread::spawn(move || {
            let mut accepted = 0;
            for id in 0..MAX_REQUESTS {
                let t2 = Arc::clone(&t);
                let callback = Box::new(move || {
                    if t2.stopper_returned.load(Ordering::SeqCst) {
                        t2.violation(format!(
                            "request {id}: callback started after a stopper returned"
                        ));
                    }
                    if id == 0 {
                        t2.first_started.open();
                        thread::sleep(sleep);
                    }
                    t2.runs[id].fetch_add(1, Ordering::SeqCst);
                    if t2.stopper_returned.load(Ordering::SeqCst) {
                        t2.violation(format!(
                            "request {id}: callback still running when a stopper returned"
                        ));
                    }
                });
                if !engine.submit(callback) {
                    break;
                }
                accepted += 1;
                // A burst first (a deep queue to drain), then a trickle, so that posts
                // are still arriving when the stops begin.
                if id < MAX_REQUESTS / 8 {
                    thread::yield_now();
                } else {
                    thread::sleep(Duration::from_micros(10));
                }
            }
            done.send("poster").unwrap();
            accepted
        })
    };

    // The stoppers: both start during the first callback.
    let first_entered = Arc::new(Latch::default());
    let stopper = |is_finalize: bool, goes_first: bool| {
        let (engine, t, done) = (Arc::clone(&engine), Arc::clone(&t), done_tx.clone());
        let first_entered = Arc::clone(&first_entered);
        thread::spawn(move || {
            if !t.first_started.wait() {
                t.violation("the first callback never started".into());
            } else if goes_first {
                first_entered.open();
            } else {
                if !first_entered.wait() {
                    t.violation("the first stopper never started".into());
                }
                thread::sleep(gap);
            }
            if is_finalize {
                engine.finalize();
            } else {
                engine.stop();
            }
            t.stopper_returned.store(true, Ordering::SeqCst);
            done.send(if is_finalize { "finalize" } else { "stop" })
                .unwrap();
        })
    };
    let (stop_first, finalize_first) = match order {
        Order::StopThenFinalize => (true, false),
        Order::FinalizeThenStop => (false, true),
        Order::Together => (true, true),
    };
    let stop = stopper(false, stop_first);
    let finalize = stopper(true, finalize_first);
    drop(done_tx);

    let deadline = Instant::now() + BOUND;
    for _ in 0..3 {
        let left = deadline.saturating_duration_since(Instant::now());
        if let Err(e) = done_rx.recv_timeout(left) {
            panic!("a harness thread hung ({e}): a stopper never returned ({order:?})");
        }
    }
    let accepted = poster.join().unwrap();
    stop.join().unwrap();
    finalize.join().unwrap();

    // Both stoppers have returned: every accepted callback has run, exactly once.
    for (id, runs) in t.runs.iter().enumerate() {
        let n = runs.load(Ordering::SeqCst);
        let want = u32::from(id < accepted);
        if n != want {
            t.violation(format!(
                "request {id} ({}) ran {n} times when both stoppers had returned",
                if id < accepted { "accepted" } else { "refused" }
            ));
        }
    }
    let refused = usize::from(accepted < MAX_REQUESTS);
    let violations = std::mem::take(&mut *t.violations.lock().unwrap());
    (accepted, refused, violations)
}
