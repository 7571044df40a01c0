//! Running a job: spawn the ranks, watch them and the server, end the job by the
//! rules of `--grace`, `--keep-going` and `--timeout`, and say how it ended.
//!
//! One thread (the caller's) owns every child: it reaps them (`try_wait`), acts on the
//! server's job events, the signals pmix-run received, and the deadlines. It sleeps
//! on one channel of [`Wake`]s fed by two threads ([`super::wake`]): one passes on
//! the server's events ([`JobServer::next_event`]), the other says when a child ended
//! (SIGCHLD), registered before the first child is spawned, so no exit is missed. So
//! an ended rank is reaped as soon as it ends, not at the next [`TICK`]; the wait is
//! bounded by [`TICK`] (forwarded SIGINT/SIGTERM are polled) and by the next
//! deadline. Only children this loop has not
//! reaped are signalled or killed, each through its own process group (its pid), so a
//! pid is never reused under it; a signal or a kill reaches what the rank started in
//! its group too. Output is copied by two threads per rank ([`super::output`]); once
//! every rank has ended, they are joined as they reach end of file, waiting for
//! all of them at most [`DRAIN_LIMIT`] (each holds a sender of one channel: the wait
//! ends when the last one drops it).
//!
//! How one rank is started (its environment, process group, binding) is
//! [`super::spawn`]'s.
//!
//! **Ending a job.** A rank that calls `PMIx_Abort`, or that connected and then is
//! reported lost by the server (its connection closed, or it ended, without FINALIZE:
//! [`Event::Lost`]; a program that never connects is no PMIx client and has nothing
//! to finalize), or that ends with a non-zero status, starts the *grace period*
//! (unless `--keep-going`): the server has told the others (`PMIX_ERR_PROC_ABORTED`),
//! and the ranks still running get `--grace` seconds to finish; then they are killed
//! (SIGKILL). A forwarded SIGINT/SIGTERM starts it too.
//! `--timeout` kills every rank still running when it passes. The exit status is
//! [`super::policy::Verdict`]'s.

use std::ffi::OsString;
use std::process::Child;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pmix_core::CpuSet;
use rustix::process::{Pid, Signal};

use super::output::{self, Sink};
use super::policy::{RankEnd, Verdict, signal_name};
use super::spawn;
use super::wake::{self, Wake};

/// How long one turn of the loop waits at most when nothing happens: how quickly a
/// signal pmix-run received is forwarded (a rank's end, a server event and a deadline
/// wake the loop at once). Also how long the thread passing on server events waits
/// in one [`JobServer::next_event`] call.
pub const TICK: Duration = Duration::from_millis(20);

/// A job event the launcher acts on (the server's [`pmix::server::JobEvent`], for
/// this job's namespace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The rank completed its handshake.
    Connected(u32),
    /// The rank called `PMIx_Finalize`.
    Finalized(u32),
    /// The rank called `PMIx_Abort` with this status and message.
    Aborted {
        /// The rank.
        rank: u32,
        /// The status it gave.
        status: i32,
        /// Its message.
        message: Option<String>,
    },
    /// The rank's connection closed without FINALIZE.
    Lost(u32),
}

/// What the job loop needs from a PMIx server: the real one is
/// [`super::server::Embedded`]; tests use a fake. It is shared with the thread that
/// passes its events on to the loop, which may outlive [`run`] by one
/// [`JobServer::next_event`] call.
pub trait JobServer: Send + Sync {
    /// The variables rank `rank` must be started with (the PMIx rendezvous).
    fn client_env(&self, rank: u32) -> Vec<(String, String)>;
    /// The next event of this job, waiting at most `timeout` (`None` if none came).
    fn next_event(&self, timeout: Duration) -> Option<Event>;
    /// The launcher saw `rank` end: `status` is its exit status, or minus the signal
    /// that killed it.
    fn proc_exited(&self, rank: u32, status: i32);
}

/// What to run and how.
#[derive(Clone, Debug)]
pub struct JobSpec {
    /// The program and its arguments.
    pub command: Vec<OsString>,
    /// Each rank's binding (`None`: unbound); its length is the number of ranks.
    pub cpusets: Vec<Option<CpuSet>>,
    /// Prefix each forwarded line with `[rank] `.
    pub tag_output: bool,
    /// Kill the job after this long.
    pub timeout: Option<Duration>,
    /// How long the others have after a failure.
    pub grace: Duration,
    /// Do not end the job on a failure.
    pub keep_going: bool,
    /// Variables added to every rank's environment after the server's.
    pub extra_env: Vec<(OsString, OsString)>,
}

/// Where a job's output and pmix-run's own lines go.
#[derive(Clone)]
pub struct Sinks {
    /// The ranks' standard output.
    pub stdout: Sink,
    /// The ranks' standard error, and pmix-run's own lines (`pmix-run: …`).
    pub stderr: Sink,
}

struct Rank {
    /// `None` once reaped.
    child: Option<Child>,
    /// It completed its PMIx handshake.
    connected: bool,
    killed_by_us: bool,
}

/// Runs `spec` with `server`, printing to `sinks`; `signals` is asked each turn (at
/// least every [`TICK`]) for the signals pmix-run received since (to forward).
/// Returns pmix-run's exit status.
pub fn run(
    spec: &JobSpec,
    server: Arc<dyn JobServer>,
    sinks: &Sinks,
    signals: &mut dyn FnMut() -> Vec<i32>,
) -> i32 {
    run_paced(spec, server, sinks, signals, TICK)
}

/// [`run`], with `tick` for the longest wait of one turn when nothing wakes the loop
/// (tests make it long, to see that a rank's end wakes it).
fn run_paced(
    spec: &JobSpec,
    server: Arc<dyn JobServer>,
    sinks: &Sinks,
    signals: &mut dyn FnMut() -> Vec<i32>,
    tick: Duration,
) -> i32 {
    let started = Instant::now();
    let (wake_tx, wakes) = mpsc::channel::<Wake>();
    // Before the first child exists, so no SIGCHLD is missed.
    let child_watch = match wake::ChildWatch::start(wake_tx.clone()) {
        Ok(w) => Some(w),
        Err(e) => {
            say(sinks, &format!("{e} (ended ranks are seen late)"));
            None
        }
    };
    let events = wake::pass_on_events(Arc::clone(&server), wake_tx, TICK);
    let code = run_job(spec, &*server, sinks, signals, tick, &wakes, started);
    drop(events);
    drop(child_watch);
    code
}

fn run_job(
    spec: &JobSpec,
    server: &dyn JobServer,
    sinks: &Sinks,
    signals: &mut dyn FnMut() -> Vec<i32>,
    tick: Duration,
    wakes: &Receiver<Wake>,
    started: Instant,
) -> i32 {
    let n = spec.cpusets.len();
    let mut ranks: Vec<Rank> = Vec::with_capacity(n);
    let mut pumps: Vec<JoinHandle<()>> = Vec::with_capacity(2 * n);
    // Every output thread holds a clone; the last one to end disconnects it.
    let (drained_tx, drained) = mpsc::channel::<()>();
    for (r, cpus) in spec.cpusets.iter().enumerate() {
        let r = r as u32;
        match spawn::spawn_rank(spec, server, r, cpus.as_ref()) {
            Ok(mut child) => {
                let out = child.stdout.take().expect("piped stdout");
                let err = child.stderr.take().expect("piped stderr");
                pumps.push(output::forward(
                    out,
                    sinks.stdout.clone(),
                    r,
                    spec.tag_output,
                    drained_tx.clone(),
                ));
                pumps.push(output::forward(
                    err,
                    sinks.stderr.clone(),
                    r,
                    spec.tag_output,
                    drained_tx.clone(),
                ));
                ranks.push(Rank {
                    child: Some(child),
                    connected: false,
                    killed_by_us: false,
                });
            }
            Err(e) => {
                let prog = spec.command[0].to_string_lossy();
                say(sinks, &format!("cannot start rank {r} ({prog}): {e}"));
                let code = if e.kind() == std::io::ErrorKind::NotFound {
                    spawn::EXIT_NOT_FOUND
                } else {
                    spawn::EXIT_CANNOT_EXEC
                };
                for rank in &mut ranks {
                    if let Some(mut c) = rank.child.take() {
                        signal_rank(&c, Signal::KILL);
                        let _ = c.wait();
                    }
                }
                drop(drained_tx);
                join(pumps, &drained);
                return code;
            }
        }
    }

    let mut verdict = Verdict::default();
    let timeout_at = spec.timeout.map(|t| started + t);
    let mut grace_until: Option<Instant> = None;
    let ending = |grace_until: &mut Option<Instant>, sinks: &Sinks, why: &str| {
        if grace_until.is_none() {
            *grace_until = Some(Instant::now() + spec.grace);
            say(
                sinks,
                &format!(
                    "{why}: ending the job; the other ranks have {} s to finish",
                    secs(spec.grace)
                ),
            );
        }
    };

    loop {
        for sig in signals() {
            let live: Vec<u32> = live_ranks(&ranks);
            say(
                sinks,
                &format!(
                    "received {}: forwarding it to {} rank(s)",
                    signal_name(sig).unwrap_or("a signal"),
                    live.len()
                ),
            );
            for &r in &live {
                if let (Some(c), Some(sig)) =
                    (&ranks[r as usize].child, Signal::from_named_raw(sig))
                {
                    signal_rank(c, sig);
                }
            }
            grace_until.get_or_insert_with(|| Instant::now() + spec.grace);
        }

        for (r, rank) in ranks.iter_mut().enumerate() {
            let Some(child) = rank.child.as_mut() else {
                continue;
            };
            let end = match child.try_wait() {
                Ok(Some(s)) => RankEnd::of(s),
                Ok(None) => continue,
                Err(e) => {
                    // Not expected for a child we own; counted as a failed rank rather
                    // than polled forever.
                    say(sinks, &format!("cannot wait for rank {r}: {e}"));
                    RankEnd::Exited(1)
                }
            };
            rank.child = None;
            server.proc_exited(
                r as u32,
                match end {
                    RankEnd::Exited(c) => c,
                    RankEnd::Signaled(s) => -s,
                },
            );
            verdict.rank_ended(end, rank.killed_by_us);
            // An exit without finalizing is the server's to tell (Event::Lost): only it
            // knows whether the FINALIZE came first.
            if !rank.killed_by_us && end.code() != 0 {
                say(sinks, &format!("rank {r} {}", end.describe()));
                if !spec.keep_going {
                    ending(&mut grace_until, sinks, &format!("rank {r} failed"));
                }
            }
        }
        if ranks.iter().all(|k| k.child.is_none()) {
            break;
        }

        let wait = [timeout_at, grace_until]
            .into_iter()
            .flatten()
            .map(|t| t.saturating_duration_since(Instant::now()))
            .fold(tick, Duration::min);
        let woke = match wakes.recv_timeout(wait) {
            Ok(w) => Some(w),
            // The loop holds no sender: the threads feeding it are gone (one of them
            // panicked); pace the loop as a tick would.
            Err(RecvTimeoutError::Disconnected) => {
                std::thread::sleep(wait);
                None
            }
            Err(RecvTimeoutError::Timeout) => None,
        };
        if let Some(Wake::Event(ev)) = woke {
            match ev {
                Event::Connected(r) => {
                    if let Some(k) = ranks.get_mut(r as usize) {
                        k.connected = true;
                    }
                }
                Event::Finalized(_) => {}
                Event::Aborted {
                    rank,
                    status,
                    message,
                } => {
                    verdict.aborted(status);
                    let msg = message.map(|m| format!(": {m}")).unwrap_or_default();
                    say(
                        sinks,
                        &format!("rank {rank} called PMIx_Abort with status {status}{msg}"),
                    );
                    if !spec.keep_going {
                        ending(&mut grace_until, sinks, &format!("rank {rank} aborted"));
                    }
                }
                Event::Lost(r) => {
                    // A rank that never connected (a program that is no PMIx client)
                    // is not lost when it ends: it had nothing to finalize.
                    if let Some(k) = ranks
                        .get(r as usize)
                        .filter(|k| k.connected && !k.killed_by_us)
                    {
                        if k.child.is_some() {
                            say(
                                sinks,
                                &format!("rank {r} closed its PMIx connection without finalizing"),
                            );
                        } else {
                            say(sinks, &format!("rank {r} ended without finalizing"));
                        }
                        if !spec.keep_going {
                            ending(&mut grace_until, sinks, &format!("rank {r} was lost"));
                        }
                    }
                }
            }
        }

        let now = Instant::now();
        if timeout_at.is_some_and(|t| now >= t) && !verdict.is_timed_out() {
            verdict.timed_out();
            let live = live_ranks(&ranks);
            say(
                sinks,
                &format!(
                    "the job ran past --timeout {} s: killing rank(s) {}",
                    secs(spec.timeout.unwrap_or_default()),
                    list(&live)
                ),
            );
            kill_all(&mut ranks);
        }
        if grace_until.is_some_and(|t| now >= t) {
            let live: Vec<u32> = live_ranks(&ranks)
                .into_iter()
                .filter(|&r| !ranks[r as usize].killed_by_us)
                .collect();
            if !live.is_empty() {
                say(
                    sinks,
                    &format!(
                        "killing rank(s) {}: still running {} s after the job began to end",
                        list(&live),
                        secs(spec.grace)
                    ),
                );
                kill_all(&mut ranks);
            }
        }
    }
    drop(drained_tx);
    join(pumps, &drained);
    verdict.code()
}

fn live_ranks(ranks: &[Rank]) -> Vec<u32> {
    ranks
        .iter()
        .enumerate()
        .filter(|(_, k)| k.child.is_some())
        .map(|(r, _)| r as u32)
        .collect()
}

/// Sends `sig` to rank `child`'s process group (the rank and what it started, as a
/// terminal would), else to the rank alone. The child is not reaped yet, so its pid,
/// which is also its group's id ([`spawn`]), is still ours.
fn signal_rank(child: &Child, sig: Signal) {
    let pid = Pid::from_child(child);
    if rustix::process::kill_process_group(pid, sig).is_err() {
        let _ = rustix::process::kill_process(pid, sig);
    }
}

fn kill_all(ranks: &mut [Rank]) {
    for k in ranks.iter_mut() {
        if let Some(c) = k.child.as_ref() {
            signal_rank(c, Signal::KILL);
            k.killed_by_us = true;
        }
    }
}

/// How long the output of ranks that have all ended may take to drain: a process a
/// rank left behind outside its group can hold a pipe open for ever, and pmix-run does
/// not wait for it.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(5);

/// Joins the output threads once each has reached end of file: `drained`
/// disconnects when the last one ends (the caller dropped its own sender). Waits
/// [`DRAIN_LIMIT`] at most; a thread still running then is left behind.
fn join(pumps: Vec<JoinHandle<()>>, drained: &Receiver<()>) {
    let deadline = Instant::now() + DRAIN_LIMIT;
    // Nothing is ever sent: this returns when every sender is dropped, or at the
    // deadline.
    let all_ended = loop {
        match drained.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(()) => {}
            Err(RecvTimeoutError::Disconnected) => break true,
            Err(RecvTimeoutError::Timeout) => break false,
        }
    };
    for p in pumps {
        // A thread that dropped its sender is returning: joining it does not wait.
        if all_ended || p.is_finished() {
            let _ = p.join();
        }
    }
}

fn list(ranks: &[u32]) -> String {
    ranks
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s}")
    }
}

/// Prints one `pmix-run: …` line on the stderr sink.
pub fn say(sinks: &Sinks, line: &str) {
    let mut err = sinks.stderr.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(err, "pmix-run: {line}");
    let _ = err.flush();
}

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
