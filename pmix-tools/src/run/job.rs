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

use pmix_core::{CpuSet, Status};
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

/// A job event the launcher acts on (the server's [`pmix::server::JobEvent`]); it
/// comes with the index of the job it is about ([`JobServer::next_event`]).
#[derive(Clone, Debug, PartialEq)]
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
    /// A rank of the job asked for new processes (`PMIx_Spawn`).
    Spawn(SpawnRequest),
}

/// A client's `PMIx_Spawn`, as the server passed it on.
#[derive(Clone, Debug, PartialEq)]
pub struct SpawnRequest {
    /// The request, for [`JobServer::spawn_done`].
    pub id: u64,
    /// Who asked.
    pub parent: (String, u32),
    /// The job-level directives.
    pub info: Vec<pmix::wire::Info>,
    /// The applications (each with a program and at least one process).
    pub apps: Vec<pmix::wire::App>,
}

/// One process to start: what [`super::spawn::spawn_proc`] runs.
#[derive(Clone, Debug, Default)]
pub struct Launch {
    /// The program (searched in `PATH` when it has no `/`).
    pub program: OsString,
    /// Its `argv[0]`, when not the program.
    pub argv0: Option<OsString>,
    /// Its arguments after `argv[0]`.
    pub args: Vec<OsString>,
    /// Variables set after pmix-run's own (less the scrubbed ones).
    pub env: Vec<(OsString, OsString)>,
    /// Its working directory (pmix-run's when `None`).
    pub cwd: Option<std::path::PathBuf>,
    /// Its binding (`None`: unbound).
    pub cpus: Option<CpuSet>,
}

/// A job registered for a spawn ([`JobServer::start_job`]).
#[derive(Clone, Debug)]
pub struct NewJob {
    /// Its index (the next one: the first job is 0, each spawn's the next).
    pub job: usize,
    /// Its namespace.
    pub nspace: String,
    /// Its processes, rank by rank.
    pub procs: Vec<Launch>,
}

/// `PMIX_ERR_NOT_SUPPORTED`: what a server that cannot spawn answers.
pub const ERR_NOT_SUPPORTED: i32 = Status::ERR_NOT_SUPPORTED.0;
/// `PMIX_ERR_JOB_FAILED_TO_LAUNCH`: a spawned process ended before it connected.
pub const ERR_JOB_FAILED_TO_LAUNCH: i32 = Status::ERR_JOB_FAILED_TO_LAUNCH.0;
/// `PMIX_ERR_JOB_EXE_NOT_FOUND`: a spawned program does not exist.
pub const ERR_JOB_EXE_NOT_FOUND: i32 = Status::ERR_JOB_EXE_NOT_FOUND.0;
/// `PMIX_ERR_JOB_APP_NOT_EXECUTABLE`: a spawned program cannot be run.
pub const ERR_JOB_APP_NOT_EXECUTABLE: i32 = Status::ERR_JOB_APP_NOT_EXECUTABLE.0;
/// `PMIX_ERR_JOB_CANCELED`: a spawn asked for while the job is ending.
pub const ERR_JOB_CANCELED: i32 = Status::ERR_JOB_CANCELED.0;

/// What the job loop needs from a PMIx server: the real one is
/// [`super::server::Embedded`]; tests use a fake. It is shared with the thread that
/// passes its events on to the loop, which may outlive [`run`] by one
/// [`JobServer::next_event`] call. Jobs are numbered: the first is 0, each spawned
/// one the next number.
pub trait JobServer: Send + Sync {
    /// The variables rank `rank` of the first job must be started with (the PMIx
    /// rendezvous).
    fn client_env(&self, rank: u32) -> Vec<(String, String)>;
    /// The next event of any job, with its job's index, waiting at most `timeout`
    /// (`None` if none came).
    fn next_event(&self, timeout: Duration) -> Option<(usize, Event)>;
    /// The launcher saw `rank` of job `job` end: `status` is its exit status, or
    /// minus the signal that killed it.
    fn proc_exited(&self, job: usize, rank: u32, status: i32);
    /// Registers the job `req` asks for and says how to start its processes.
    ///
    /// # Errors
    /// The PMIx status the parent gets (by default `PMIX_ERR_NOT_SUPPORTED`).
    fn start_job(&self, req: &SpawnRequest) -> Result<NewJob, i32> {
        let _ = req;
        Err(ERR_NOT_SUPPORTED)
    }
    /// Answers spawn `id`: the new namespace, or the status the parent gets.
    fn spawn_done(&self, id: u64, result: Result<String, i32>) {
        let _ = (id, result);
    }
    /// Every process of spawned job `job` has ended; `status` is the first
    /// non-zero exit status among them (minus a signal), or 0.
    fn job_ended(&self, job: usize, status: i32) {
        let _ = (job, status);
    }
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
    /// How it ended, once reaped.
    end: Option<RankEnd>,
}

/// One job: the first, or one a spawn started.
struct Job {
    nspace: String,
    ranks: Vec<Rank>,
    /// A spawn waiting to be answered: its id (until every process connected, or
    /// ended with status 0 without being a PMIx client).
    pending: Option<u64>,
    /// [`JobServer::job_ended`] was called (or the spawn failed: nobody is told).
    ended: bool,
}

impl Job {
    /// How a rank of this job is named in pmix-run's lines.
    fn name(&self, j: usize, r: usize) -> String {
        if j == 0 {
            r.to_string()
        } else {
            format!("{}:{r}", self.nspace)
        }
    }
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

/// Where the output threads of the processes go, and what they hold.
struct Pumps<'a> {
    sinks: &'a Sinks,
    tag: bool,
    threads: Vec<JoinHandle<()>>,
    /// Every output thread holds a clone; the last one to end disconnects it.
    drained_tx: mpsc::Sender<()>,
}

impl Pumps<'_> {
    /// Starts `l` as rank `r` of job `j`, its output forwarded (tagged `[r]` for the
    /// first job, `[j:r]` for a spawned one).
    fn start(&mut self, l: &Launch, j: usize, r: u32) -> std::io::Result<Rank> {
        let label = if j == 0 {
            r.to_string()
        } else {
            format!("{j}:{r}")
        };
        let mut child = spawn::spawn_proc(l)?;
        let out = child.stdout.take().expect("piped stdout");
        let err = child.stderr.take().expect("piped stderr");
        self.threads.push(output::forward(
            out,
            self.sinks.stdout.clone(),
            &label,
            self.tag,
            self.drained_tx.clone(),
        ));
        self.threads.push(output::forward(
            err,
            self.sinks.stderr.clone(),
            &label,
            self.tag,
            self.drained_tx.clone(),
        ));
        Ok(Rank {
            child: Some(child),
            connected: false,
            killed_by_us: false,
            end: None,
        })
    }
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

/// The PMIx status of a spawned program that could not be started.
fn start_error_status(e: &std::io::Error) -> i32 {
    match e.kind() {
        std::io::ErrorKind::NotFound => ERR_JOB_EXE_NOT_FOUND,
        std::io::ErrorKind::PermissionDenied => ERR_JOB_APP_NOT_EXECUTABLE,
        _ => ERR_JOB_FAILED_TO_LAUNCH,
    }
}

/// Kills and reaps the processes of a job that could not be started whole.
fn kill_and_reap(ranks: &mut [Rank], server: &dyn JobServer, j: usize) {
    for (r, rank) in ranks.iter_mut().enumerate() {
        if let Some(mut c) = rank.child.take() {
            signal_rank(&c, Signal::KILL);
            let end = c.wait().map(RankEnd::of).unwrap_or(RankEnd::Exited(1));
            rank.end = Some(end);
            rank.killed_by_us = true;
            server.proc_exited(j, r as u32, end.status());
        }
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
                let Pumps {
                    threads,
                    drained_tx,
                    ..
                } = pumps;
                drop(drained_tx);
                join(threads, &drained);
                return code;
            }
        }
    }
    let mut jobs = vec![Job {
        nspace: String::new(),
        ranks: first,
        pending: None,
        ended: true,
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
                server.proc_exited(j, r as u32, end.status());
                if job.pending.is_some() && !rank.connected && end.code() != 0 {
                    // A spawned process that died before it connected: the spawn
                    // fails, the parent is told, the job does not end.
                    say(
                        sinks,
                        &format!("spawned rank {name} {} before it connected", end.describe()),
                    );
                    launch_failed = true;
                    continue;
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
            // The loop holds no sender: the threads feeding it are gone (one of them
            // panicked); pace the loop as a tick would.
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
    let Pumps {
        threads,
        drained_tx,
        ..
    } = pumps;
    drop(drained_tx);
    join(threads, &drained);
    verdict.code()
}

/// A server event about rank `r` of job `j` (not a spawn).
fn on_event(
    j: usize,
    ev: Event,
    jobs: &mut [Job],
    verdict: &mut Verdict,
    end_job: &mut dyn FnMut(&str),
    sinks: &Sinks,
) {
    let Some(job) = jobs.get_mut(j) else {
        return;
    };
    match ev {
        Event::Connected(r) => {
            if let Some(k) = job.ranks.get_mut(r as usize) {
                k.connected = true;
            }
        }
        Event::Finalized(_) | Event::Spawn(_) => {}
        Event::Aborted {
            rank,
            status,
            message,
        } => {
            let name = job.name(j, rank as usize);
            verdict.aborted(status);
            let msg = message.map(|m| format!(": {m}")).unwrap_or_default();
            say(
                sinks,
                &format!("rank {name} called PMIx_Abort with status {status}{msg}"),
            );
            end_job(&format!("rank {name} aborted"));
        }
        Event::Lost(r) => {
            // A rank that never connected (a program that is no PMIx client) is not
            // lost when it ends: it had nothing to finalize.
            let name = job.name(j, r as usize);
            if let Some(k) = job
                .ranks
                .get(r as usize)
                .filter(|k| k.connected && !k.killed_by_us)
            {
                if k.child.is_some() {
                    say(
                        sinks,
                        &format!("rank {name} closed its PMIx connection without finalizing"),
                    );
                } else {
                    say(sinks, &format!("rank {name} ended without finalizing"));
                }
                end_job(&format!("rank {name} was lost"));
            }
        }
    }
}

/// Registers and starts the job `req` asks for; a process that cannot be started
/// fails the spawn (the ones started are killed), and so does a job the server
/// refuses.
fn start_spawned(
    req: &SpawnRequest,
    server: &dyn JobServer,
    sinks: &Sinks,
    pumps: &mut Pumps<'_>,
    jobs: &mut Vec<Job>,
) {
    let new = match server.start_job(req) {
        Ok(n) if n.job == jobs.len() => n,
        Ok(n) => {
            say(
                sinks,
                &format!("spawn: the server numbered job {} out of turn", n.job),
            );
            return server.spawn_done(req.id, Err(ERR_JOB_FAILED_TO_LAUNCH));
        }
        Err(s) => return server.spawn_done(req.id, Err(s)),
    };
    let j = new.job;
    let mut ranks = Vec::with_capacity(new.procs.len());
    let mut failed = None;
    for (r, l) in new.procs.iter().enumerate() {
        match pumps.start(l, j, r as u32) {
            Ok(rank) => ranks.push(rank),
            Err(e) => {
                say(
                    sinks,
                    &format!(
                        "cannot start spawned rank {}:{r} ({}): {e}",
                        new.nspace,
                        l.program.to_string_lossy()
                    ),
                );
                failed = Some(start_error_status(&e));
                break;
            }
        }
    }
    let mut job = Job {
        nspace: new.nspace,
        ranks,
        pending: Some(req.id),
        ended: false,
    };
    if let Some(status) = failed {
        kill_and_reap(&mut job.ranks, server, j);
        // The ranks never started are gone as well.
        for r in job.ranks.len()..new.procs.len() {
            server.proc_exited(j, r as u32, 127);
        }
        job.pending = None;
        job.ended = true;
        server.spawn_done(req.id, Err(status));
    }
    jobs.push(job);
}

/// The ranks not reaped yet, as (job, rank).
fn live_ranks(jobs: &[Job]) -> Vec<(usize, usize)> {
    jobs.iter()
        .enumerate()
        .flat_map(|(j, job)| {
            job.ranks
                .iter()
                .enumerate()
                .filter(|(_, k)| k.child.is_some())
                .map(move |(r, _)| (j, r))
        })
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

fn kill_all(jobs: &mut [Job]) {
    for k in jobs.iter_mut().flat_map(|j| j.ranks.iter_mut()) {
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

fn list(jobs: &[Job], ranks: &[(usize, usize)]) -> String {
    ranks
        .iter()
        .map(|&(j, r)| jobs[j].name(j, r))
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
