//! Running a job: spawn the ranks, watch them and the server, end the job by the
//! rules of `--grace`, `--keep-going` and `--timeout`, and say how it ended.
//!
//! One thread (the caller's) owns every child: it reaps them (`try_wait`), acts on the
//! server's job events, the signals pmix-run received, and the deadlines. It sleeps
//! on one channel of [`Wake`]s ([`super::wake`]), fed by the server's progress thread
//! (its host passes on the ranks' upcalls as they come, [`super::server::RunHost`])
//! and by a thread that says when a child ended (SIGCHLD), registered before the
//! first child is spawned, so no exit is missed. So
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

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pmix_core::CpuSet;
use rustix::process::Signal;

pub use super::jobserver::{
    ERR_JOB_APP_NOT_EXECUTABLE, ERR_JOB_CANCELED, ERR_JOB_EXE_NOT_FOUND, ERR_JOB_FAILED_TO_LAUNCH,
    ERR_NOT_SUPPORTED, Event, JobServer, Launch, NewJob, SpawnRequest,
};
pub use super::output::{Sinks, say};
use super::policy::{RankEnd, Verdict, signal_name};
use super::procs::{Job, Pumps, kill_all, list, live_ranks, on_event, signal_rank, start_spawned};
use super::spawn;
use super::wake::{self, Wake};

/// How long one turn of the loop waits at most when nothing happens: how quickly a
/// signal pmix-run received is forwarded (a rank's end, a server event and a deadline
/// wake the loop at once).
pub const TICK: Duration = Duration::from_millis(20);

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

/// Runs `spec` with `server`, printing to `sinks`; `wakes` is the loop's channel
/// (its sender is the one the server's events come on: the loop gives a clone to
/// the SIGCHLD thread and drops it); `signals` is asked each turn (at least every
/// [`TICK`]) for the signals pmix-run received since (to forward). Returns
/// pmix-run's exit status.
pub fn run(
    spec: &JobSpec,
    server: &dyn JobServer,
    wakes: (Sender<Wake>, Receiver<Wake>),
    sinks: &Sinks,
    signals: &mut dyn FnMut() -> Vec<i32>,
) -> i32 {
    run_paced(spec, server, wakes, sinks, signals, TICK)
}

/// [`run`], with `tick` for the longest wait of one turn when nothing wakes the loop
/// (tests make it long, to see that a rank's end wakes it).
fn run_paced(
    spec: &JobSpec,
    server: &dyn JobServer,
    wakes: (Sender<Wake>, Receiver<Wake>),
    sinks: &Sinks,
    signals: &mut dyn FnMut() -> Vec<i32>,
    tick: Duration,
) -> i32 {
    let started = Instant::now();
    let (wake_tx, wakes) = wakes;
    // Before the first child exists, so no SIGCHLD is missed.
    let child_watch = match wake::ChildWatch::start(wake_tx) {
        Ok(w) => Some(w),
        Err(e) => {
            say(sinks, &format!("{e} (ended ranks are seen late)"));
            None
        }
    };
    let code = run_job(spec, server, sinks, signals, tick, &wakes, started);
    drop(child_watch);
    code
}

/// How rank `r` of the first job is started.
fn first_job_launch(spec: &JobSpec, server: &dyn JobServer, r: u32) -> Launch {
    let mut env: Vec<(OsString, OsString)> = server
        .client_env(r)
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    env.extend(spec.extra_env.iter().cloned());
    Launch {
        program: spec.command[0].clone(),
        argv0: None,
        args: spec.command[1..].to_vec(),
        env,
        cwd: None,
        cpus: spec.cpusets[r as usize].clone(),
    }
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
    let (drained_tx, drained) = mpsc::channel::<()>();
    let mut pumps = Pumps {
        sinks,
        server,
        tag: spec.tag_output,
        threads: Vec::with_capacity(2 * n),
        drained_tx,
    };
    let mut first = Vec::with_capacity(n);
    for r in 0..n as u32 {
        match pumps.start(&first_job_launch(spec, server, r), 0, r) {
            Ok(rank) => first.push(rank),
            Err(e) => {
                let prog = spec.command[0].to_string_lossy();
                say(sinks, &format!("cannot start rank {r} ({prog}): {e}"));
                let code = if e.kind() == std::io::ErrorKind::NotFound {
                    spawn::EXIT_NOT_FOUND
                } else {
                    spawn::EXIT_CANNOT_EXEC
                };
                for rank in &mut first {
                    if let Some(mut c) = rank.child.take() {
                        signal_rank(&c, Signal::KILL);
                        let _ = c.wait();
                    }
                }
                drain(pumps, &drained);
                return code;
            }
        }
    }
    let mut jobs = vec![Job {
        nspace: String::new(),
        ranks: first,
        pending: None,
        ended: true,
        failed: false,
    }];

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
            let live = live_ranks(&jobs);
            say(
                sinks,
                &format!(
                    "received {}: forwarding it to {} rank(s)",
                    signal_name(sig).unwrap_or("a signal"),
                    live.len()
                ),
            );
            for &(j, r) in &live {
                if let (Some(c), Some(sig)) = (&jobs[j].ranks[r].child, Signal::from_named_raw(sig))
                {
                    signal_rank(c, sig);
                }
            }
            grace_until.get_or_insert_with(|| Instant::now() + spec.grace);
        }

        for (j, job) in jobs.iter_mut().enumerate() {
            let mut launch_failed = false;
            for r in 0..job.ranks.len() {
                let name = job.name(j, r);
                let rank = &mut job.ranks[r];
                let Some(child) = rank.child.as_mut() else {
                    continue;
                };
                let end = match child.try_wait() {
                    Ok(Some(s)) => RankEnd::of(s),
                    Ok(None) => continue,
                    Err(e) => {
                        // Not expected for a child we own; counted as a failed rank
                        // rather than polled forever.
                        say(sinks, &format!("cannot wait for rank {name}: {e}"));
                        RankEnd::Exited(1)
                    }
                };
                rank.child = None;
                rank.end = Some(end);
                if job.pending.is_some() && !rank.connected && end.code() != 0 {
                    // A spawned process that died before it connected: the spawn
                    // fails, the parent is told, the job does not end, and the
                    // server forgets the spawned job (`job_failed`) rather than
                    // hearing of each of its processes.
                    say(
                        sinks,
                        &format!("spawned rank {name} {} before it connected", end.describe()),
                    );
                    launch_failed = true;
                    continue;
                }
                if !job.failed {
                    server.proc_exited(j, r as u32, end.status());
                }
                verdict.rank_ended(end, rank.killed_by_us);
                // An exit without finalizing is the server's to tell (Event::Lost):
                // only it knows whether the FINALIZE came first.
                if !rank.killed_by_us && end.code() != 0 {
                    say(sinks, &format!("rank {name} {}", end.describe()));
                    if !spec.keep_going {
                        ending(&mut grace_until, sinks, &format!("rank {name} failed"));
                    }
                }
            }
            if launch_failed && let Some(id) = job.pending.take() {
                for k in job.ranks.iter_mut() {
                    if let Some(c) = k.child.as_ref() {
                        signal_rank(c, Signal::KILL);
                        k.killed_by_us = true;
                    }
                }
                job.ended = true;
                job.failed = true;
                server.job_failed(j);
                server.spawn_done(id, Err(ERR_JOB_FAILED_TO_LAUNCH));
            }
            if let Some(id) = job.pending
                && job
                    .ranks
                    .iter()
                    .all(|k| k.connected || k.end.is_some_and(|e| e.code() == 0))
            {
                job.pending = None;
                server.spawn_done(id, Ok(job.nspace.clone()));
            }
            if !job.ended && job.pending.is_none() && job.ranks.iter().all(|k| k.child.is_none()) {
                job.ended = true;
                let status = job
                    .ranks
                    .iter()
                    .filter_map(|k| k.end.map(|e| e.status()))
                    .find(|&s| s != 0)
                    .unwrap_or(0);
                server.job_ended(j, status);
            }
        }
        if jobs
            .iter()
            .all(|job| job.ranks.iter().all(|k| k.child.is_none()))
        {
            break;
        }

        let wait = [timeout_at, grace_until]
            .into_iter()
            .flatten()
            .map(|t| t.saturating_duration_since(Instant::now()))
            .fold(tick, Duration::min);
        let woke = match wakes.recv_timeout(wait) {
            Ok(w) => Some(w),
            // The loop holds no sender: whoever fed it is gone (the SIGCHLD thread
            // panicked, the server stopped); pace the loop as a tick would.
            Err(RecvTimeoutError::Disconnected) => {
                std::thread::sleep(wait);
                None
            }
            Err(RecvTimeoutError::Timeout) => None,
        };
        if let Some(Wake::Event((j, ev))) = woke {
            match ev {
                Event::Spawn(req) => {
                    if grace_until.is_some() {
                        server.spawn_done(req.id, Err(ERR_JOB_CANCELED));
                    } else {
                        start_spawned(&req, server, sinks, &mut pumps, &mut jobs);
                    }
                }
                ev => on_event(
                    j,
                    ev,
                    &mut jobs,
                    &mut verdict,
                    &mut |why: &str| {
                        if !spec.keep_going {
                            ending(&mut grace_until, sinks, why);
                        }
                    },
                    sinks,
                ),
            }
        }

        let now = Instant::now();
        if timeout_at.is_some_and(|t| now >= t) && !verdict.is_timed_out() {
            verdict.timed_out();
            let live = live_ranks(&jobs);
            say(
                sinks,
                &format!(
                    "the job ran past --timeout {} s: killing rank(s) {}",
                    secs(spec.timeout.unwrap_or_default()),
                    list(&jobs, &live)
                ),
            );
            kill_all(&mut jobs);
        }
        if grace_until.is_some_and(|t| now >= t) {
            let live: Vec<(usize, usize)> = live_ranks(&jobs)
                .into_iter()
                .filter(|&(j, r)| !jobs[j].ranks[r].killed_by_us)
                .collect();
            if !live.is_empty() {
                say(
                    sinks,
                    &format!(
                        "killing rank(s) {}: still running {} s after the job began to end",
                        list(&jobs, &live),
                        secs(spec.grace)
                    ),
                );
                kill_all(&mut jobs);
            }
        }
    }
    for job in &jobs {
        if let Some(id) = job.pending {
            server.spawn_done(id, Err(ERR_JOB_CANCELED));
        }
    }
    drain(pumps, &drained);
    verdict.code()
}

/// Waits for the output threads of `pumps` as [`join`] does, once the loop's own
/// sender of `drained` is dropped.
fn drain(pumps: Pumps<'_>, drained: &Receiver<()>) {
    let Pumps {
        threads,
        drained_tx,
        ..
    } = pumps;
    drop(drained_tx);
    join(threads, drained);
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

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s}")
    }
}

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
